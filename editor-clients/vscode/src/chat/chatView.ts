/** The chat panel: a webview view whose messages go to the {@link ChatController}. */

import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import type { ChatController } from './chatController';
import { chatHtml } from './html';
import { parseFromWebview } from './messages';

export class ChatViewProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  static readonly viewId = 'switchman.chat';
  private view: vscode.WebviewView | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(private readonly extensionUri: vscode.Uri, private readonly controller: ChatController) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = chatHtml({
      cspSource: view.webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      scriptUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js')).toString(),
      styleUri: view.webview.asWebviewUri(vscode.Uri.joinPath(dist, 'chat.css')).toString(),
    });
    this.controller.attach((message) => void view.webview.postMessage(message));
    this.subscriptions.push(
      view.webview.onDidReceiveMessage((raw: unknown) => {
        const message = parseFromWebview(raw);
        if (message) void this.controller.handle(message);
      }),
      view.onDidDispose(() => {
        if (this.view === view) {
          this.view = undefined;
          this.controller.detach();
        }
      }),
    );
  }

  /** Whether the chat panel is on screen. */
  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  /**
   * Show the panel (creating the webview if needed); with `focus`, move the keyboard there (the
   * page then puts it in the message input) so the user can type at once.
   */
  async reveal(focus = false): Promise<void> {
    if (this.view) this.view.show(!focus);
    else await vscode.commands.executeCommand(`${ChatViewProvider.viewId}.focus`);
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
  }
}
