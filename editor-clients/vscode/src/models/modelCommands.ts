/** Choosing and clearing the sticky model (status bar click, commands). */

import * as vscode from 'vscode';
import type { Folder, SwitchmanConnection } from '../common/host';
import { requestFailure } from '../protocol/errors';
import { Requests } from '../protocol/methods';
import { setModelParams } from '../protocol/params';
import type { SetModelResult } from '../protocol/types';
import type { ModelCatalog } from './modelCatalog';
import { modelPickItems, type ModelPickItem } from './modelItems';

type PickItem = vscode.QuickPickItem & { model?: string | null };

export class ModelCommands {
  constructor(private readonly connection: SwitchmanConnection, private readonly catalog: ModelCatalog) {}

  /** Show the models (configured / availability state) and set the chosen one as sticky. */
  async pick(folder: Folder): Promise<void> {
    const quickPick = vscode.window.createQuickPick<PickItem>();
    quickPick.title = `Switchman model for ${folder.name}`;
    quickPick.placeholder = 'Pin a model for this workspace\'s chat, or follow your routing rules';
    quickPick.matchOnDescription = true;
    quickPick.matchOnDetail = true;
    quickPick.busy = true;
    quickPick.show();
    try {
      const items = modelPickItems(await this.catalog.fetch(folder.uri)).map(toQuickPickItem);
      quickPick.items = items;
      quickPick.activeItems = items.filter((i) => i.picked);
      quickPick.busy = false;
      const choice = await new Promise<PickItem | undefined>((resolve) => {
        quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
        quickPick.onDidHide(() => resolve(undefined));
      });
      quickPick.hide();
      if (choice && choice.model !== undefined) await this.set(folder, choice.model);
    } catch (error) {
      quickPick.hide();
      void vscode.window.showErrorMessage(`Switchman: ${requestFailure(error).message}`);
    } finally {
      quickPick.dispose();
    }
  }

  /** Set (`model` id or alias) or clear (`null`) the sticky model of the folder's current session. */
  async set(folder: Folder, model: string | null): Promise<void> {
    try {
      const result = await this.connection.request<SetModelResult>(Requests.setModel, setModelParams(folder.uri, model));
      if (result.outcome === 'queued') void vscode.window.showInformationMessage(`Switchman: ${result.message}`);
      else vscode.window.setStatusBarMessage(`Switchman: ${result.message}`, 5000);
    } catch (error) {
      void vscode.window.showErrorMessage(`Switchman: ${requestFailure(error).message}`);
    }
  }
}

function toQuickPickItem(item: ModelPickItem): PickItem {
  if (item.kind === 'separator') return { label: item.label, kind: vscode.QuickPickItemKind.Separator };
  return { label: item.label, description: item.description, detail: item.detail, model: item.model, picked: item.current };
}
