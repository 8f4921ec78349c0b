/** Read-only virtual documents: session transcripts and "why this model?" explanations. */

import * as vscode from 'vscode';
import type { SwitchmanConnection } from '../common/host';
import { transcriptMarkdown } from '../chat/transcript';
import { requestFailure } from '../protocol/errors';
import { Requests } from '../protocol/methods';
import { explainParams, sessionParams } from '../protocol/params';
import type { ExplainResult, SessionDetail } from '../protocol/types';

import { DOCUMENT_SCHEME } from './sessionNodes';

export { DOCUMENT_SCHEME };

export class SwitchmanDocuments implements vscode.TextDocumentContentProvider {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  constructor(private readonly connection: SwitchmanConnection) {}

  /**
   * `switchman:/transcript/<title>.md?session=<id>`; a worker's is under `/transcript/worker/` (no Continue in Chat
   * in its title bar: a worker takes no messages). A title has no slash (`transcriptFileName`).
   */
  static transcriptUri(sessionId: string, fileName: string, isWorker = false): vscode.Uri {
    return vscode.Uri.from({ scheme: DOCUMENT_SCHEME, path: `/transcript/${isWorker ? 'worker/' : ''}${fileName}`,
      query: new URLSearchParams({ session: sessionId }).toString() });
  }

  /** `switchman:/why/Why this model.txt?workspace=<uri>&turn=<id>`. */
  static explanationUri(workspace: string, turnId?: string): vscode.Uri {
    const query = new URLSearchParams({ workspace, ...(turnId ? { turn: turnId } : {}), at: Date.now().toString() });
    return vscode.Uri.from({ scheme: DOCUMENT_SCHEME, path: '/why/Why this model.txt', query: query.toString() });
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const query = new URLSearchParams(uri.query);
    try {
      if (uri.path.startsWith('/transcript/')) {
        const detail = await this.connection.request<SessionDetail>(Requests.session, sessionParams(query.get('session') ?? ''));
        return transcriptMarkdown(detail);
      }
      const result = await this.connection.request<ExplainResult>(Requests.explain, explainParams({
        workspace: query.get('workspace') ?? undefined, turnId: query.get('turn') }));
      return result.text ?? 'No turn yet in this workspace\'s chat: send a message first.';
    } catch (error) {
      return `Switchman could not load this: ${requestFailure(error).message}`;
    }
  }

  refresh(uri: vscode.Uri): void {
    this.changed.fire(uri);
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export async function showDocument(uri: vscode.Uri): Promise<void> {
  const document = await vscode.workspace.openTextDocument(uri);
  await vscode.window.showTextDocument(document, { preview: true });
}
