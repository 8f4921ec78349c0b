/**
 * The Copy / Insert / Apply buttons over code blocks in answers. Apply does not touch the buffer
 * itself: it asks the daemon (`switchman/applyCode`), which shows the same approval card as the
 * model's own edits (the diff, Allow once / Always / Deny) and applies the change through
 * `workspace/applyEdit` — saved and undoable, like every Switchman edit.
 */

import * as vscode from 'vscode';
import type { SwitchmanConnection } from '../common/host';
import type { CodeAction } from '../chat/messages';
import { requestFailure } from '../protocol/errors';
import { Requests } from '../protocol/methods';
import { applyCodeParams } from '../protocol/params';
import type { ApplyCodeResult } from '../protocol/types';
import { applyOutcome } from './approval';
import { withApplyBase } from './unsavedEdits';

export async function codeAction(connection: SwitchmanConnection, action: CodeAction, code: string, turnId?: string): Promise<void> {
  if (action === 'copy') {
    await vscode.env.clipboard.writeText(code);
    vscode.window.setStatusBarMessage('Switchman: code copied', 3000);
    return;
  }
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Switchman: open the file the code is for, then try again.');
    return;
  }
  if (action === 'insert') {
    await editor.edit((edit) => edit.replace(editor.selection, code));
    return;
  }
  const document = editor.document;
  const folder = vscode.workspace.getWorkspaceFolder(document.uri);
  if (!folder || document.uri.scheme !== 'file') {
    void vscode.window.showInformationMessage('Switchman: Apply works on files of a workspace folder; use Insert or Copy here.');
    return;
  }
  const selection = editor.selection;
  const range = selection.isEmpty ? undefined : {
    start: { line: selection.start.line, character: selection.start.character },
    end: { line: selection.end.line, character: selection.end.character },
  };
  try {
    const text = document.getText();
    const uri = document.uri.toString();
    const result = await withApplyBase(uri, text, () => connection.request<ApplyCodeResult>(Requests.applyCode,
      applyCodeParams({ workspace: folder.uri.toString(), uri, text, code, range, turnId })));
    const outcome = applyOutcome(result);
    if (outcome.warn) void vscode.window.showWarningMessage(outcome.text);
    else if (outcome.notice) void vscode.window.showInformationMessage(outcome.text);
    else vscode.window.setStatusBarMessage(outcome.text, 5000);
  } catch (error) {
    void vscode.window.showWarningMessage(`Switchman: ${requestFailure(error).message}`);
  }
}
