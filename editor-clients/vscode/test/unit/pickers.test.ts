import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PickerEntry, PickerOptions, PickerUi } from '../../src/common/picker';
import { ModelCatalog } from '../../src/models/modelCatalog';
import { ModelCommands } from '../../src/models/modelCommands';
import { ProfileCommands } from '../../src/profiles/profileCommands';
import { Requests } from '../../src/protocol/methods';
import type { ModelInfo, ProfilesResult } from '../../src/protocol/types';
import { FakeConnection, FakeStatuses, status } from './fakes';

const folder = { uri: 'file:///home/me/app', name: 'app' };
const opus: ModelInfo = { id: 'anthropic:claude-opus-4-7', display_name: 'Claude Opus 4.7', provider: 'anthropic',
  aliases: ['opus'], tier: 'deep', can_delegate: true, configured: true, availability: 'healthy', pricing: null };
const profiles: ProfilesResult = {
  profiles: [{ name: 'default', description: '', source: 'builtin', tools: [], model_policy: { model: null, tier: null },
    approval: 'ask' }],
  active: { name: 'default', resolved_from: 'session' },
};

/** A picker the test answers: the label of the row to accept, or undefined to dismiss it. */
class FakePickerUi implements PickerUi {
  readonly shown: { options: PickerOptions; entries: PickerEntry<unknown>[] }[] = [];
  readonly messages: string[] = [];

  constructor(private readonly accept: (entries: PickerEntry<unknown>[]) => PickerEntry<unknown> | undefined) {}

  async pick<T>(options: PickerOptions, entries: Promise<PickerEntry<T>[]>): Promise<PickerEntry<T> | undefined> {
    const loaded = await entries;
    this.shown.push({ options, entries: loaded });
    return this.accept(loaded) as PickerEntry<T> | undefined;
  }

  showError(message: string): void { this.messages.push(`error: ${message}`); }
  showInfo(message: string): void { this.messages.push(`info: ${message}`); }
  showStatus(message: string): void { this.messages.push(`status: ${message}`); }
  /** The answer to the next offer: whether its button is clicked. */
  clicks = false;
  async offer(message: string, action: string): Promise<boolean> {
    this.messages.push(`offer: ${message} [${action}]`);
    return this.clicks;
  }
}

const byLabel = (text: string) => (entries: PickerEntry<unknown>[]) => entries.find((e) => e.label.includes(text));

describe('the model and profile pickers', () => {
  it('pins the model the user accepts and says so in the status bar, or in a notification when queued', async () => {
    const connection = new FakeConnection()
      .answer(Requests.models, () => ({ sticky_model: null, models: [opus] }))
      .answer(Requests.setModel, (p) => ({ outcome: p.model ? 'queued' : 'set', message: `model ${p.model}` }));
    const ui = new FakePickerUi(byLabel('Claude Opus'));
    const models = new ModelCommands(connection, new ModelCatalog(connection), ui);
    await models.pick(folder);
    assert.equal(ui.shown[0].options.title, 'Switchman model for app');
    assert.equal(ui.shown[0].options.matchOnDetail, true);
    assert.deepEqual(ui.shown[0].entries.map((e) => e.kind), ['choice', 'separator', 'choice']);
    assert.deepEqual(connection.sent(Requests.setModel), [{ workspace: folder.uri, model: opus.id }]);
    await models.set(folder, null);
    assert.deepEqual(ui.messages, [`info: Switchman: model ${opus.id}`, 'status: Switchman: model null']);
  });

  it('names the change queued behind the running turn, from the folder\'s status', async () => {
    const connection = new FakeConnection().answer(Requests.models, () => ({ sticky_model: null, models: [opus] }));
    const statuses = new FakeStatuses();
    statuses.push(status({ workspace: folder.uri, turn_in_flight: true, pending_swap: { model: opus.id } }));
    const ui = new FakePickerUi(() => undefined);
    await new ModelCommands(connection, new ModelCatalog(connection), ui, statuses).pick(folder);
    const row = ui.shown[0].entries.find((e) => e.kind === 'choice' && e.value === opus.id);
    assert.ok(row && row.kind === 'choice');
    assert.match(row.description ?? '', /pending: applies when the running turn ends/);
  });

  it('says how to undo a model chosen in the picker in terms of the picker, not of /model alone, in full', async () => {
    const connection = new FakeConnection()
      .answer(Requests.models, () => ({ sticky_model: null, models: [opus] }))
      .answer(Requests.setModel, (p) => (p.model ? { outcome: 'applied', sticky_model: p.model, pending_swap: null,
        message: `Sticky model set: ${p.model}. Your rules are skipped until you clear the sticky model.` }
        : { outcome: 'cleared', sticky_model: null, pending_swap: null, message: 'Sticky model cleared.' }));
    const ui = new FakePickerUi(byLabel('Claude Opus'));
    const models = new ModelCommands(connection, new ModelCatalog(connection), ui);
    await models.pick(folder);
    const said = `offer: Switchman: Sticky model set: ${opus.id}. Your rules are skipped until you choose `
      + '"Follow my routing rules" in the model picker (click Switchman in the status bar) or run /model - in the chat. '
      + '[Follow my routing rules]';
    assert.deepEqual(ui.messages, [said]);
    assert.ok(ui.shown[0].entries[0].label.endsWith('Follow my routing rules'), 'the row the message names');
    // its button does what it says
    ui.clicks = true;
    await models.pick(folder);
    assert.deepEqual(connection.sent(Requests.setModel).map((p) => p.model), [opus.id, opus.id, null]);
  });

  it('sets the profile accepted, clears with the "default" row, and does nothing when dismissed', async () => {
    const connection = new FakeConnection()
      .answer(Requests.profiles, () => profiles)
      .answer(Requests.setProfile, (p) => ({ message: `profile ${p.profile}` }));
    let accept = byLabel('Use the default profile');
    const ui = new FakePickerUi((entries) => accept(entries));
    const commands = new ProfileCommands(connection, ui);
    await commands.pick(folder);
    accept = () => undefined;
    await commands.pick(folder);
    assert.deepEqual(connection.sent(Requests.setProfile), [{ workspace: folder.uri, profile: null }]);
    assert.deepEqual(ui.messages, ['status: Switchman: profile null']);
  });

  it('shows a daemon that cannot answer as an error and sets nothing', async () => {
    const connection = new FakeConnection().answer(Requests.profiles, () => {
      throw Object.assign(new Error('Unknown workspace'), { data: { code: 'unknown_workspace' } });
    });
    const ui = new FakePickerUi(() => assert.fail('nothing to pick'));
    await new ProfileCommands(connection, ui).pick(folder);
    assert.deepEqual(ui.messages, ['error: Switchman: Unknown workspace']);
    assert.deepEqual(connection.sent(Requests.setProfile), []);
  });
});
