/** The VS Code side of approvals: the diff editor for proposed changes, buttons for the answer. */

import * as vscode from 'vscode';
import type { ApprovalRequest } from '../protocol/types';
import type { ApprovalHost } from './approval';

export const PROPOSAL_SCHEME = 'switchman-proposal';

/** Serves the two sides of a proposed change to the diff editor. */
export class ProposalDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  put(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
  }

  forget(prefix: string): void {
    for (const key of [...this.texts.keys()]) if (key.startsWith(prefix)) this.texts.delete(key);
  }
}

function sideUri(request: ApprovalRequest, side: 'current' | 'proposed'): vscode.Uri {
  return vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${request.id}/${side}/${request.path ?? 'file'}` });
}

export class VscodeApprovalHost implements ApprovalHost {
  constructor(private readonly documents: ProposalDocuments) {}

  async showDiff(request: ApprovalRequest): Promise<void> {
    const left = sideUri(request, 'current');
    const right = sideUri(request, 'proposed');
    this.documents.put(left, request.original ?? '');
    this.documents.put(right, request.proposed ?? '');
    await vscode.commands.executeCommand('vscode.diff', left, right, `Switchman: ${request.title} (proposed)`,
      { preview: true, preserveFocus: true });
  }

  async closeDiff(request: ApprovalRequest): Promise<void> {
    const prefix = vscode.Uri.from({ scheme: PROPOSAL_SCHEME, path: `/${request.id}/` }).toString();
    for (const group of vscode.window.tabGroups.all) {
      for (const tab of group.tabs) {
        const input = tab.input;
        if (input instanceof vscode.TabInputTextDiff && input.modified.toString().startsWith(prefix)) {
          await vscode.window.tabGroups.close(tab);
        }
      }
    }
    this.documents.forget(prefix);
  }

  async choose(message: string, detail: string, choices: string[], signal: AbortSignal): Promise<string | undefined> {
    const withdrawn = new Promise<undefined>((resolve) => signal.addEventListener('abort', () => resolve(undefined)));
    const asked = vscode.window.showWarningMessage(message, { modal: false, detail }, ...choices);
    return Promise.race([asked, withdrawn]);
  }

  async reason(signal: AbortSignal): Promise<string | undefined> {
    const source = new vscode.CancellationTokenSource();
    signal.addEventListener('abort', () => source.cancel());
    try {
      const text = await vscode.window.showInputBox({
        title: 'Switchman: why not? (optional)',
        prompt: 'The model sees your reason. Leave empty to just deny.',
        ignoreFocusOut: true,
      }, source.token);
      return text?.trim() || undefined;
    } finally {
      source.dispose();
    }
  }
}
