/** The Sessions view: the workspace's sessions, workers (and delegations queued for a worker slot) nested under their planner. */

import * as vscode from 'vscode';
import type { Disposable, Folder, StatusSource, SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { Notifications, Requests } from '../protocol/methods';
import { sessionsParams } from '../protocol/params';
import type { DelegationParams, Session, SessionsResult } from '../protocol/types';
import { QueuedDelegations, queuedItemView, sessionItemView, transcriptFileName } from './sessionItems';

export type SessionNode =
  | { kind: 'folder'; folder: Folder }
  | { kind: 'session'; folder: Folder; session: Session; current: boolean }
  | { kind: 'queued'; delegation: DelegationParams }
  | { kind: 'message'; text: string };

export class SessionsTree implements vscode.TreeDataProvider<SessionNode>, Disposable {
  private readonly changed = new vscode.EventEmitter<SessionNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscriptions: Disposable[];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly queued = new QueuedDelegations();

  constructor(
    private readonly connection: SwitchmanConnection,
    private readonly folders: WorkspaceFolders,
    statuses: StatusSource,
    /** The `switchman.showWorkerSessions` setting: workers are hidden unless it is on. */
    private readonly showWorkers: () => boolean = () => false,
  ) {
    this.subscriptions = [
      statuses.onDidChange(() => this.refreshSoon()),
      connection.onDidChangeState(() => {
        this.queued.clear();
        this.refresh();
      }),
      connection.onNotification<DelegationParams>(Notifications.delegation, (update) => {
        if (this.queued.apply(update) && this.showWorkers()) this.refreshSoon();
      }),
      folders.onDidChange(() => this.refresh()),
    ];
  }

  refresh(): void {
    this.changed.fire(undefined);
  }

  /** Status notifications come in bursts (turn start, end, swap): refresh once per burst. */
  refreshSoon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.refresh(), 300);
  }

  getTreeItem(node: SessionNode): vscode.TreeItem {
    if (node.kind === 'folder') {
      const item = new vscode.TreeItem(node.folder.name, vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = new vscode.ThemeIcon('root-folder');
      return item;
    }
    if (node.kind === 'message') return new vscode.TreeItem(node.text);
    if (node.kind === 'queued') {
      const queued = queuedItemView(node.delegation);
      const item = new vscode.TreeItem(queued.label);
      item.description = queued.description;
      item.tooltip = queued.tooltip;
      item.iconPath = new vscode.ThemeIcon('watch');
      item.contextValue = 'switchman.queuedWorker';
      return item;
    }
    const view = sessionItemView(node.session, node.current);
    const waiting = this.showWorkers() && this.queued.of(node.session.id).length > 0;
    const item = new vscode.TreeItem(view.label, view.hasChildren || waiting
      ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.description = view.description;
    item.tooltip = view.tooltip;
    item.iconPath = new vscode.ThemeIcon(view.icon);
    item.contextValue = node.session.is_worker ? 'switchman.worker' : 'switchman.session';
    item.command = { command: 'switchman.openSession', title: 'Open Transcript',
      arguments: [node.session.id, transcriptFileName(node.session)] };
    return item;
  }

  async getChildren(node?: SessionNode): Promise<SessionNode[]> {
    if (this.connection.state !== 'running') return [{ kind: 'message', text: 'Switchman is not running.' }];
    if (!node) {
      const folders = this.folders.all();
      if (folders.length === 1) return this.sessionsOf(folders[0]);
      return folders.map((folder) => ({ kind: 'folder', folder }));
    }
    if (node.kind === 'folder') return this.sessionsOf(node.folder);
    if (node.kind === 'session') {
      const workers: SessionNode[] = (node.session.workers ?? []).map((worker) => ({
        kind: 'session', folder: node.folder, session: worker, current: false }));
      const waiting: SessionNode[] = this.showWorkers()
        ? this.queued.of(node.session.id).map((delegation) => ({ kind: 'queued', delegation })) : [];
      return [...workers, ...waiting];
    }
    return [];
  }

  private async sessionsOf(folder: Folder): Promise<SessionNode[]> {
    try {
      const result = await this.connection.request<SessionsResult>(Requests.sessions, sessionsParams(folder.uri, this.showWorkers()));
      return result.sessions.map((session) => ({
        kind: 'session', folder, session, current: session.id === result.current_session_id }));
    } catch (error) {
      return [{ kind: 'message', text: error instanceof Error ? error.message : String(error) }];
    }
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const subscription of this.subscriptions) subscription.dispose();
    this.changed.dispose();
  }
}
