/** Choosing and clearing the sticky model (status bar click, commands). */

import type { Folder, StatusSource, SwitchmanConnection } from '../common/host';
import { announce, pickChoice, type PickerUi } from '../common/picker';
import { Requests } from '../protocol/methods';
import { setModelParams } from '../protocol/params';
import type { SetModelResult } from '../protocol/types';
import type { ModelCatalog } from './modelCatalog';
import { FOLLOW_RULES, modelPickItems, stickySetMessage } from './modelItems';

export class ModelCommands {
  constructor(private readonly connection: SwitchmanConnection, private readonly catalog: ModelCatalog,
    private readonly ui: PickerUi,
    /** The folders' status: a change queued behind a running turn is named in the picker. */
    private readonly statuses?: StatusSource) {}

  /** Show the models (configured / availability state) and set the chosen one as sticky. */
  async pick(folder: Folder): Promise<void> {
    const choice = await pickChoice(this.ui, {
      title: `Switchman model for ${folder.name}`,
      placeholder: 'Pin a model for this workspace\'s chat, or follow your routing rules',
      matchOnDetail: true,
    }, async () => modelPickItems(await this.catalog.fetch(folder.uri), this.statuses?.get(folder.uri)?.pending_swap ?? null));
    if (choice) await this.set(folder, choice.value);
  }

  /** Set (`model` id or alias) or clear (`null`) the sticky model of the folder's current session. */
  async set(folder: Folder, model: string | null): Promise<void> {
    // A change queued behind a running turn is worth a notification; a clear one is not.
    const result = await announce(this.ui,
      () => this.connection.request<SetModelResult>(Requests.setModel, setModelParams(folder.uri, model)),
      (r) => r.outcome === 'queued', (r) => r.outcome !== 'applied' || !r.sticky_model);
    if (result?.outcome !== 'applied' || !result.sticky_model) return;
    // Pinned here, not with /model: say how to undo it here (the daemon's words are for any editor), and offer to.
    if (await this.ui.offer(`Switchman: ${stickySetMessage(result.sticky_model)}`, FOLLOW_RULES)) await this.set(folder, null);
  }
}
