/** The VS Code side of approvals: the diff editor for proposed changes, and a notification that leads
 * to the chat's card when the chat panel is hidden. */

import * as vscode from 'vscode';
import type { ApprovalRequest } from '../protocol/types';
import { titleParts, type ApprovalCard, type ApprovalHost } from './approval';

export const PROPOSAL_SCHEME = 'switchman-proposal';
export const SHOW_IN_CHAT = 'Show in Chat';

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
  constructor(private readonly documents: ProposalDocuments,
    private readonly chat: { visible(): boolean; reveal(focus?: boolean): Promise<void> }) {}

  chatVisible(): boolean {
    return this.chat.visible();
  }

  notify(card: ApprovalCard): void {
    // The card in the chat is where the question is answered; this only leads there.
    void vscode.window.showInformationMessage(`Switchman asks: ${titleParts(card.title).plain}`, SHOW_IN_CHAT).then((picked) => {
      if (picked === SHOW_IN_CHAT) void this.chat.reveal(true);
    });
  }

  async showDiff(request: ApprovalRequest): Promise<void> {
    const left = sideUri(request, 'current');
    const right = sideUri(request, 'proposed');
    this.documents.put(left, request.original ?? '');
    this.documents.put(right, request.proposed ?? '');
    await vscode.commands.executeCommand('vscode.diff', left, right, `Switchman: ${titleParts(request.title).plain} (proposed)`,
      { preview: false }); // a preview tab would replace the user's own preview tab (often the very file)
  }

  currentText(uri: string): string | undefined {
    return vscode.workspace.textDocuments.find((d) => d.uri.toString() === vscode.Uri.parse(uri).toString())?.getText();
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
}
