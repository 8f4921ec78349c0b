import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

// `npm test` runs from the extension folder.
const manifest = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8'));
const contributes = manifest.contributes;

describe('package.json contributions', () => {
  it('puts the chat in a view container of the panel, leaving the primary side bar (Explorer) alone', () => {
    const containers = contributes.viewsContainers;
    assert.deepEqual(Object.keys(containers), ['panel']);
    const views = contributes.views[containers.panel[0].id];
    assert.deepEqual(views.map((v: { id: string }) => v.id), ['switchman.chat', 'switchman.sessions']);
  });

  it('binds a key to focus the chat', () => {
    const binding = contributes.keybindings.find((k: { command: string }) => k.command === 'switchman.openChat');
    assert.deepEqual([binding.key, binding.mac], ['ctrl+shift+alt+s', 'cmd+shift+alt+s']);
    // In the terminal the key went to the shell: only the commands of commandsToSkipShell reach VS Code there.
    assert.deepEqual(contributes.configurationDefaults['terminal.integrated.commandsToSkipShell'], ['switchman.openChat']);
  });

  it('offers Continue in Chat on a top-level session of the Sessions view (inline and in its menu), not on a worker', () => {
    const items = contributes.menus['view/item/context'].filter((m: { command: string }) => m.command === 'switchman.continueSession');
    assert.deepEqual(items.map((m: { group: string }) => m.group).sort(), ['inline', 'navigation@1']);
    for (const item of items) assert.equal(item.when, 'view == switchman.sessions && viewItem == switchman.session');
    const title = contributes.menus['editor/title'].find((m: { command: string }) => m.command === 'switchman.continueSession');
    const transcript = new RegExp(title.when.split('=~ ')[1].slice(1, -1));
    assert.ok(transcript.test('/transcript/fix it.md'), 'a transcript\'s title bar has it');
    assert.ok(!transcript.test('/transcript/worker/fix it.md'), 'a worker\'s has not (it only got the worker_session error)');
  });
});
