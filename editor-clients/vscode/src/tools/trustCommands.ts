/**
 * "Switchman: Manage Always-Allowed Tools": lists what runs without asking (`switchman/trust`) and
 * revokes the picked entries (`switchman/revokeTrust`), so Switchman asks again before they run.
 */

import * as vscode from 'vscode';
import type { SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { requestFailure } from '../protocol/errors';
import { Requests } from '../protocol/methods';
import { revokeTrustParams, trustParams } from '../protocol/params';
import type { RevokeTrustResult, TrustResult } from '../protocol/types';
import { emptyTrustMessage, trustItems } from './trust';

export class TrustCommands {
  constructor(private readonly connection: SwitchmanConnection, private readonly folders: WorkspaceFolders) {}

  async manage(): Promise<void> {
    let result: TrustResult;
    try {
      result = await this.connection.request<TrustResult>(Requests.trust, trustParams());
    } catch (error) {
      void vscode.window.showWarningMessage(`Switchman: ${requestFailure(error).message}`);
      return;
    }
    const items = trustItems(result, this.folders.all());
    if (items.length === 0) {
      const { text, warn } = emptyTrustMessage(result);
      void (warn ? vscode.window.showWarningMessage(text) : vscode.window.showInformationMessage(text));
      return;
    }
    if (result.problem) void vscode.window.showWarningMessage(`Switchman: ${result.problem}`);
    const picked = await vscode.window.showQuickPick(items, {
      canPickMany: true, title: 'Switchman: tools that run without asking',
      placeHolder: 'Pick the ones to revoke (Switchman will ask again before they run)',
    });
    if (!picked || picked.length === 0) return;
    const revoked: string[] = [];
    try {
      for (const item of picked) {
        const done = await this.connection.request<RevokeTrustResult>(Requests.revokeTrust, revokeTrustParams(item.workspace, item.tool));
        revoked.push(...done.revoked);
      }
    } catch (error) {
      void vscode.window.showWarningMessage(`Switchman: ${requestFailure(error).message}`);
    }
    if (revoked.length > 0) void vscode.window.showInformationMessage(`Switchman will ask again before: ${revoked.join(', ')}`);
  }
}
