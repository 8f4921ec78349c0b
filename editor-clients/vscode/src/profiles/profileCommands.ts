/** Choosing the agent profile of a folder's current session (its status bar item, a command). */

import type { Folder, SwitchmanConnection } from '../common/host';
import { announce, pickChoice, type PickerUi } from '../common/picker';
import { Requests } from '../protocol/methods';
import { profilesParams, setProfileParams } from '../protocol/params';
import type { ProfilesResult, SetProfileResult } from '../protocol/types';
import { profilePickItems } from './profileItems';

export class ProfileCommands {
  constructor(private readonly connection: SwitchmanConnection, private readonly ui: PickerUi) {}

  /** Show the workspace's profiles (`switchman/profiles`) and set the chosen one. */
  async pick(folder: Folder): Promise<void> {
    const choice = await pickChoice(this.ui, {
      title: `Switchman agent profile for ${folder.name}`,
      placeholder: 'The profile this chat runs with: its prompt, tools, model policy and approval',
    }, async () => profilePickItems(
      await this.connection.request<ProfilesResult>(Requests.profiles, profilesParams(folder.uri))));
    if (choice) await this.set(folder, choice.value);
  }

  /** Set (`profile` name) or clear (`null`) the profile of the folder's current session. */
  async set(folder: Folder, profile: string | null): Promise<void> {
    await announce(this.ui, () => this.connection.request<SetProfileResult>(Requests.setProfile,
      setProfileParams(folder.uri, profile)));
  }
}
