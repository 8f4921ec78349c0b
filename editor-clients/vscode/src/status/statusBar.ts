/** One status bar item per workspace folder, updated from `switchman/status` notifications. */

import type { Disposable, Folder, StatusSource, SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { normalizeUri } from '../common/host';
import type { ModelCatalog } from '../models/modelCatalog';
import type { StatusParams } from '../protocol/types';
import { statusView, type StatusContext, type StatusView } from './statusText';

/** A status bar item as this module needs it (VS Code's, or a stub in tests). */
export interface StatusItem extends Disposable {
  update(view: StatusView, folder: Folder): void;
}

export type StatusItemFactory = (folder: Folder, index: number) => StatusItem;

/** What an item shows for a folder's status (the model item's by default). */
export type StatusViewOf = (status: StatusParams | undefined, context: StatusContext) => StatusView;

export class StatusBar implements Disposable {
  private readonly items = new Map<string, { folder: Folder; item: StatusItem }>();
  private readonly subscriptions: Disposable[];

  constructor(
    private readonly folders: WorkspaceFolders,
    private readonly statuses: StatusSource,
    private readonly connection: SwitchmanConnection,
    private readonly catalog: ModelCatalog,
    private readonly createItem: StatusItemFactory,
    private readonly viewOf: StatusViewOf = statusView,
  ) {
    this.subscriptions = [
      folders.onDidChange(() => this.syncFolders()),
      statuses.onDidChange(() => this.render()),
      connection.onDidChangeState(() => this.render()),
      catalog.onDidChange(() => this.render()),
    ];
    this.syncFolders();
  }

  /** Create items for new folders, drop items of removed ones. */
  syncFolders(): void {
    const folders = this.folders.all();
    const keys = new Set(folders.map((f) => normalizeUri(f.uri)));
    for (const [key, entry] of this.items) {
      if (!keys.has(key)) {
        entry.item.dispose();
        this.items.delete(key);
      }
    }
    folders.forEach((folder, index) => {
      const key = normalizeUri(folder.uri);
      if (!this.items.has(key)) this.items.set(key, { folder, item: this.createItem(folder, index) });
    });
    this.render();
  }

  render(): void {
    const multiRoot = this.items.size > 1;
    for (const { folder, item } of this.items.values()) {
      const view = this.viewOf(this.statuses.get(folder.uri), {
        folderName: folder.name, multiRoot, connection: this.connection.state, models: this.catalog.index });
      item.update(view, folder);
    }
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    for (const { item } of this.items.values()) item.dispose();
    this.items.clear();
  }
}
