/** The message shown when the daemon cannot start, with buttons that lead to the fix. */

import * as vscode from 'vscode';
import type { StartFailure } from './switchmanClient';

const OPEN_SETTINGS = 'Open Settings';
const SHOW_OUTPUT = 'Show Output';
const RETRY = 'Retry';

export async function reportStartFailure(failure: StartFailure, output: vscode.OutputChannel): Promise<void> {
  const tried = failure.command ? ` Command: ${failure.command}` : '';
  const choice = await vscode.window.showErrorMessage(`${failure.message}${tried}`, OPEN_SETTINGS, SHOW_OUTPUT, RETRY);
  if (choice === OPEN_SETTINGS) await vscode.commands.executeCommand('workbench.action.openSettings', failure.setting);
  else if (choice === SHOW_OUTPUT) output.show(true);
  else if (choice === RETRY) await vscode.commands.executeCommand('switchman.restartServer');
}
