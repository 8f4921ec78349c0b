/** Choosing the agent profile of a folder's current session (its status bar item, a command). */

import * as vscode from 'vscode';
import type { Folder, SwitchmanConnection } from '../common/host';
import { requestFailure } from '../protocol/errors';
import { Requests } from '../protocol/methods';
import { profilesParams, setProfileParams } from '../protocol/params';
import type { ProfilesResult, SetProfileResult } from '../protocol/types';
import { profilePickItems, type ProfilePickItem } from './profileItems';

type PickItem = vscode.QuickPickItem & { profile: string | null };

export class ProfileCommands {
  constructor(private readonly connection: SwitchmanConnection) {}

  /** Show the workspace's profiles (`switchman/profiles`) and set the chosen one. */
  async pick(folder: Folder): Promise<void> {
    const quickPick = vscode.window.createQuickPick<PickItem>();
    quickPick.title = `Switchman agent profile for ${folder.name}`;
    quickPick.placeholder = 'The profile this chat runs with: its prompt, tools, model policy and approval';
    quickPick.matchOnDescription = true;
    quickPick.busy = true;
    quickPick.show();
    try {
      const result = await this.connection.request<ProfilesResult>(Requests.profiles, profilesParams(folder.uri));
      const items = profilePickItems(result).map(toQuickPickItem);
      quickPick.items = items;
      quickPick.activeItems = items.filter((i) => i.picked);
      quickPick.busy = false;
      const choice = await new Promise<PickItem | undefined>((resolve) => {
        quickPick.onDidAccept(() => resolve(quickPick.selectedItems[0]));
        quickPick.onDidHide(() => resolve(undefined));
      });
      quickPick.hide();
      if (choice) await this.set(folder, choice.profile);
    } catch (error) {
      quickPick.hide();
      void vscode.window.showErrorMessage(`Switchman: ${requestFailure(error).message}`);
    } finally {
      quickPick.dispose();
    }
  }

  /** Set (`profile` name) or clear (`null`) the profile of the folder's current session. */
  async set(folder: Folder, profile: string | null): Promise<void> {
    try {
      const result = await this.connection.request<SetProfileResult>(Requests.setProfile, setProfileParams(folder.uri, profile));
      vscode.window.setStatusBarMessage(`Switchman: ${result.message}`, 5000);
    } catch (error) {
      void vscode.window.showErrorMessage(`Switchman: ${requestFailure(error).message}`);
    }
  }
}

function toQuickPickItem(item: ProfilePickItem): PickItem {
  return { label: item.label, description: item.description, detail: item.detail, profile: item.profile, picked: item.current };
}
