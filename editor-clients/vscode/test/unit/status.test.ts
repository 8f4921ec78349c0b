import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modelIndex } from '../../src/common/format';
import { StatusBar, type StatusItem } from '../../src/status/statusBar';
import { statusView, type StatusView } from '../../src/status/statusText';
import { StatusStore } from '../../src/status/statusStore';
import { ModelCatalog } from '../../src/models/modelCatalog';
import { Notifications } from '../../src/protocol/methods';
import { FakeConnection, FakeFolders, status } from './fakes';

const single = { folderName: 'app', multiRoot: false, connection: 'running' as const };

describe('statusView', () => {
  it('shows "auto" when routing follows the rules and nothing ran yet', () => {
    const view = statusView(status(), single);
    assert.equal(view.text, '$(hubot) auto');
    assert.equal(view.background, undefined);
    assert.equal(view.command, 'switchman.setModel');
    assert.match(view.tooltip, /routing follows your rules/);
  });

  it('shows the last turn\'s model by its alias when the registry is known', () => {
    const models = modelIndex([{ id: 'anthropic:claude-haiku-4-5', display_name: 'Claude Haiku 4.5', provider: 'anthropic',
      aliases: ['haiku'], tier: 'fast', can_delegate: false, configured: true, availability: 'healthy' }]);
    const view = statusView(status({ active_model: 'anthropic:claude-haiku-4-5' }), { ...single, models });
    assert.equal(view.text, '$(hubot) haiku');
    assert.match(view.tooltip, /Last turn: `anthropic:claude-haiku-4-5`/);
  });

  it('pins the sticky model and shows a pending swap', () => {
    const view = statusView(status({ sticky_model: 'anthropic:claude-sonnet-4-6', active_model: 'openai:gpt-5',
      pending_swap: { model: 'anthropic:claude-opus-4-7' } }), single);
    assert.equal(view.text, '$(pinned) claude-sonnet-4-6 → claude-opus-4-7');
    assert.match(view.tooltip, /Pending: switches to `anthropic:claude-opus-4-7`/);
  });

  it('shows a pending clear as "→ auto" and a running turn with a spinner', () => {
    const view = statusView(status({ sticky_model: 'openai:gpt-5', turn_in_flight: true, pending_swap: { model: null } }), single);
    assert.equal(view.text, '$(loading~spin) gpt-5 → auto');
    assert.match(view.tooltip, /switches to your rules/);
  });

  it('makes banners and configuration errors visible', () => {
    const outage = statusView(status({ banners: ['anthropic provider currently unavailable.'] }), single);
    assert.equal(outage.background, 'warning');
    assert.ok(outage.text.endsWith('$(warning)'));
    assert.match(outage.tooltip, /anthropic provider currently unavailable/);
    const broken = statusView(status({ config_errors: 2, banners: ['routing.yaml has errors'] }), single);
    assert.equal(broken.background, 'error');
    assert.match(broken.tooltip, /2 errors in the configuration files: \*\*Switchman: Check Rules\*\* lists them/);
    assert.equal(broken.tooltip.match(/last valid version/g), null, 'the daemon\'s notice says it; not said twice');
  });

  it('tells a screen reader what the icon and colour show', () => {
    assert.equal(statusView(status(), single).accessibilityLabel, 'Switchman model for app: auto');
    const broken = statusView(status({ config_errors: 1, banners: ['routing.yaml has errors'] }), single);
    assert.equal(broken.accessibilityLabel, 'Switchman model for app: auto; 1 error in the configuration files; 1 notice');
    const busy = statusView(status({ sticky_model: 'anthropic:claude-opus-4-7', turn_in_flight: true,
      pending_swap: { model: null } as never }), single);
    assert.equal(busy.accessibilityLabel,
      'Switchman model for app: claude-opus-4-7 (sticky); a turn is running; switches to auto when it ends');
  });

  it('prefixes the folder name in a multi-root workspace', () => {
    assert.equal(statusView(status(), { ...single, multiRoot: true }).text, '$(hubot) app: auto');
  });

  it('offers a restart when the daemon is down, and says when it is starting', () => {
    const down = statusView(undefined, { ...single, connection: 'failed' });
    assert.equal(down.command, 'switchman.restartServer');
    assert.equal(down.background, 'error');
    assert.equal(statusView(undefined, single).text, '$(loading~spin) Switchman');
  });

  it('formats today\'s spend', () => {
    assert.match(statusView(status({ cost_today_usd: '0.4100' }), single).tooltip, /Spent today: \$0\.41  \n/);
    // the part estimated for calls cut short is named, as /cost names it (none: nothing added)
    assert.match(statusView(status({ cost_today_usd: '0.4100', estimated_today_usd: '0.020000' }), single).tooltip,
      /Spent today: \$0\.41 \(of which ~\$0\.02 estimated: calls cut short\)  \n/);
    assert.match(statusView(status({ cost_today_usd: '0.020000', estimated_today_usd: '0.020000' }), single).tooltip,
      /Spent today: ~\$0\.02 \(estimated: calls cut short\)  \n/);
    assert.match(statusView(status({ cost_today_usd: '0.4100', estimated_today_usd: '0.000000' }), single).tooltip,
      /Spent today: \$0\.41  \n/);
  });
});

describe('StatusBar', () => {
  function setup(folders = [{ uri: 'file:///home/me/app', name: 'app' }, { uri: 'file:///home/me/lib', name: 'lib' }]) {
    const connection = new FakeConnection();
    const fakeFolders = new FakeFolders(folders);
    const store = new StatusStore(connection);
    const views = new Map<string, StatusView>();
    const disposed: string[] = [];
    const bar = new StatusBar(fakeFolders, store, connection, new ModelCatalog(connection), (folder): StatusItem => ({
      update: (view) => views.set(folder.name, view),
      dispose: () => disposed.push(folder.name),
    }));
    return { connection, fakeFolders, views, disposed, bar };
  }

  it('keeps one item per workspace folder, updated from status notifications', () => {
    const { connection, views } = setup();
    assert.deepEqual([...views.keys()], ['app', 'lib']);
    connection.notify(Notifications.status, status({ workspace: 'file:///home/me/lib', sticky_model: 'openai:gpt-5' }));
    assert.equal(views.get('lib')?.text, '$(pinned) lib: gpt-5');
    assert.equal(views.get('app')?.text, '$(loading~spin) app: Switchman');
  });

  it('matches the daemon\'s spelling of a workspace URI to VS Code\'s', () => {
    const { connection, views } = setup([{ uri: 'file:///home/me/my%20app', name: 'my app' }]);
    connection.notify(Notifications.status, status({ workspace: 'file:///home/me/my app', active_model: 'openai:gpt-5' }));
    assert.equal(views.get('my app')?.text, '$(hubot) gpt-5');
  });

  it('drops the item of a removed folder', () => {
    const { fakeFolders, views, disposed } = setup();
    fakeFolders.set([{ uri: 'file:///home/me/app', name: 'app' }]);
    assert.deepEqual(disposed, ['lib']);
    assert.equal(views.get('app')?.text, '$(loading~spin) Switchman');
  });

  it('shows the daemon as stopped on every item', () => {
    const { connection, views } = setup();
    connection.setState('failed');
    assert.equal(views.get('app')?.command, 'switchman.restartServer');
    assert.equal(views.get('lib')?.command, 'switchman.restartServer');
  });
});
