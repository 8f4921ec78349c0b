/** The Sessions view: the workspace's sessions, workers (and delegations queued for a worker slot) nested under their planner. */

import * as vscode from 'vscode';
import type { Disposable, StatusSource, SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { Notifications } from '../protocol/methods';
import type { DelegationParams } from '../protocol/types';
import { QueuedDelegations, queuedItemView, sessionItemView, transcriptFileName } from './sessionItems';
import { type MessageNode, type SessionNode, SessionNodes } from './sessionNodes';

const VIEW_ID = 'switchman.sessions';

const MESSAGE_ICONS: Record<MessageNode['tone'], vscode.ThemeIcon> = {
  loading: new vscode.ThemeIcon('loading~spin'),
  failed: new vscode.ThemeIcon('error', new vscode.ThemeColor('list.errorForeground')),
  info: new vscode.ThemeIcon('info'),
};

const MESSAGE_ACTIONS: Record<NonNullable<MessageNode['action']>, vscode.Command> = {
  retry: { command: 'switchman.refreshSessions', title: 'Try Again' },
  restart: { command: 'switchman.restartServer', title: 'Restart Server' },
};

export class SessionsTree implements vscode.TreeDataProvider<SessionNode>, Disposable {
  private readonly changed = new vscode.EventEmitter<SessionNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly subscriptions: Disposable[];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly queued = new QueuedDelegations();
  private readonly nodes: SessionNodes;

  constructor(
    connection: SwitchmanConnection,
    folders: WorkspaceFolders,
    statuses: StatusSource,
    /** The `switchman.showWorkerSessions` setting: workers are hidden unless it is on. */
    private readonly showWorkers: () => boolean = () => false,
  ) {
    this.nodes = new SessionNodes(connection, folders, this.queued, showWorkers,
      (task) => Promise.resolve(vscode.window.withProgress({ location: { viewId: VIEW_ID } }, task)));
    this.subscriptions = [
      statuses.onDidChange(() => this.refreshSoon()),
      connection.onDidChangeState(() => {
        this.queued.clear();
        this.nodes.forget();
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

  /** Refresh asked for by the user: the view shows its progress while the daemon answers. */
  reload(): void {
    this.nodes.forget();
    this.refresh();
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
    if (node.kind === 'message') {
      const item = new vscode.TreeItem(node.text);
      item.iconPath = MESSAGE_ICONS[node.tone];
      if (node.tooltip) item.tooltip = node.tooltip;
      if (node.action) item.command = MESSAGE_ACTIONS[node.action];
      return item;
    }
    if (node.kind === 'queued') {
      const queued = queuedItemView(node.delegation);
      const item = new vscode.TreeItem(queued.label);
      item.description = queued.description;
      item.tooltip = queued.tooltip;
      item.iconPath = new vscode.ThemeIcon('watch');
      item.contextValue = 'switchman.queuedWorker';
      return item;
    }
    const view = sessionItemView(node.session, node.current, undefined, node.alongside);
    const waiting = this.showWorkers() && this.queued.of(node.session.id).length > 0;
    const item = new vscode.TreeItem(view.label, view.hasChildren || waiting
      ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.description = view.description;
    item.tooltip = view.tooltip;
    item.iconPath = view.icon === 'error' ? MESSAGE_ICONS.failed : new vscode.ThemeIcon(view.icon);
    item.contextValue = node.session.is_worker ? 'switchman.worker' : 'switchman.session';
    item.command = { command: 'switchman.openSession', title: 'Open Transcript',
      arguments: [node.session.id, transcriptFileName(node.session), node.session.is_worker] };
    return item;
  }

  getChildren(node?: SessionNode): Promise<SessionNode[]> {
    return this.nodes.children(node);
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const subscription of this.subscriptions) subscription.dispose();
    this.changed.dispose();
  }
}
