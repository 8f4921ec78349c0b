/**
 * What the Sessions view lists (pure: the tree maps these nodes to VS Code's items): the workspace's
 * sessions, workers (and delegations queued for a worker slot) nested under their planner, and a
 * line saying why there is nothing yet (the daemon starting, a request that failed).
 */

import type { UsdValue } from '../common/format';
import type { Folder, SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { requestFailure } from '../protocol/errors';
import { Requests } from '../protocol/methods';
import { sessionsParams } from '../protocol/params';
import type { DelegationParams, Session, SessionsResult } from '../protocol/types';
import type { QueuedDelegations } from './sessionItems';

/** A line of the view that is not a session; a click on it does `action`. */
export interface MessageNode {
  kind: 'message';
  text: string;
  tone: 'loading' | 'failed' | 'info';
  tooltip?: string;
  action?: 'retry' | 'restart';
}

export type SessionNode =
  | { kind: 'folder'; folder: Folder }
  /** `alongside`: the costs of the sessions listed with it (its level of the tree), whose decimals its cost shares. */
  | { kind: 'session'; folder: Folder; session: Session; current: boolean; alongside?: readonly UsdValue[] }
  | { kind: 'queued'; delegation: DelegationParams }
  | MessageNode;

/** The scheme of Switchman's read-only documents (transcripts, explanations). */
export const DOCUMENT_SCHEME = 'switchman';

/**
 * The session "Continue in Chat" continues: on a node of the Sessions view, a top-level session's (a worker takes
 * no messages); in a transcript's title bar, the session of its URI (`switchman:/transcript/…?session=<id>`),
 * whose folder the daemon knows, but not a worker's (`switchman:/transcript/worker/…`).
 */
export function continuable(target: unknown): { workspace?: string; sessionId: string } | undefined {
  const picked = target as SessionNode | undefined;
  if (picked?.kind === 'session') return picked.session.is_worker ? undefined : { workspace: picked.folder.uri, sessionId: picked.session.id };
  const uri = target as { scheme?: unknown; path?: unknown; query?: unknown } | undefined;
  if (uri?.scheme !== DOCUMENT_SCHEME || typeof uri.path !== 'string' || !/^\/transcript\/[^/]+$/.test(uri.path)) return undefined;
  const sessionId = new URLSearchParams(typeof uri.query === 'string' ? uri.query : '').get('session');
  return sessionId ? { sessionId } : undefined;
}

/** Runs a request with VS Code's progress bar on the view (the view looks empty while it is answered). */
export type ViewProgress = <T>(task: () => Promise<T>) => Promise<T>;

export class SessionNodes {
  /** Folders listed since the daemon (re)started: only the first listing, or one asked for, shows progress. */
  private readonly listed = new Set<string>();

  constructor(
    private readonly connection: SwitchmanConnection,
    private readonly folders: WorkspaceFolders,
    private readonly queued: QueuedDelegations,
    private readonly showWorkers: () => boolean,
    private readonly progress: ViewProgress,
  ) {}

  /** The next listing shows progress again (the daemon restarted, or Refresh was asked for). */
  forget(): void {
    this.listed.clear();
  }

  async children(node?: SessionNode): Promise<SessionNode[]> {
    if (this.connection.state === 'starting') return [{ kind: 'message', text: 'Starting Switchman…', tone: 'loading' }];
    if (this.connection.state === 'failed') {
      return [{ kind: 'message', text: 'Switchman did not start.', tone: 'failed', action: 'restart',
        tooltip: 'The Switchman output says why. Click to start it again.' }];
    }
    if (this.connection.state !== 'running') {
      return [{ kind: 'message', text: 'Switchman is not running.', tone: 'info', action: 'restart',
        tooltip: 'Click to start it.' }];
    }
    if (!node) {
      const folders = this.folders.all();
      if (folders.length === 1) return this.sessionsOf(folders[0]);
      return folders.map((folder) => ({ kind: 'folder', folder }));
    }
    if (node.kind === 'folder') return this.sessionsOf(node.folder);
    if (node.kind === 'session') {
      const listed = node.session.workers ?? [];
      const alongside = listed.map((worker) => worker.cost_usd);
      const workers: SessionNode[] = listed.map((worker) => ({
        kind: 'session', folder: node.folder, session: worker, current: false, alongside }));
      const waiting: SessionNode[] = this.showWorkers()
        ? this.queued.of(node.session.id).map((delegation) => ({ kind: 'queued', delegation })) : [];
      return [...workers, ...waiting];
    }
    return [];
  }

  private async sessionsOf(folder: Folder): Promise<SessionNode[]> {
    const ask = () => this.connection.request<SessionsResult>(Requests.sessions, sessionsParams(folder.uri, this.showWorkers()));
    try {
      const first = !this.listed.has(folder.uri);
      const result = first ? await this.progress(ask) : await ask();
      this.listed.add(folder.uri);
      // one list: its costs share their decimals ($0.00 beside $0.00004 read as two kinds of number)
      const alongside = result.sessions.map((session) => session.cost_usd);
      return result.sessions.map((session) => ({
        kind: 'session', folder, session, current: session.id === result.current_session_id, alongside }));
    } catch (error) {
      this.listed.delete(folder.uri);
      const { message } = requestFailure(error);
      return [{ kind: 'message', text: `Could not list the sessions: ${message}`, tone: 'failed', action: 'retry',
        tooltip: `${message}\nClick to try again.` }];
    }
  }
}
