import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { profilePickItems } from '../../src/profiles/profileItems';
import type { ProfilesResult } from '../../src/protocol/types';
import { profileStatusView } from '../../src/status/profileText';
import { status } from './fakes';

const single = { folderName: 'app', multiRoot: false, connection: 'running' as const };
const listing: ProfilesResult = {
  profiles: [
    { name: 'default', description: 'The general coding assistant', source: 'builtin', tools: ['edit_file', 'read_file'],
      model_policy: { model: null, tier: null }, approval: 'ask' },
    { name: 'reviewer', description: 'Reviews code without changing it', source: 'user', tools: ['grep', 'read_file'],
      model_policy: { model: 'anthropic:claude-haiku-4-5', tier: null }, approval: 'read_only' },
  ],
  active: { name: 'reviewer', resolved_from: 'session' },
};

describe('agent profiles', () => {
  it('the status item names the profile in force and where it was chosen', () => {
    const view = profileStatusView(status({ profile: { name: 'reviewer', resolved_from: 'session' } }), single);
    assert.equal(view.text, '$(person-filled) reviewer');
    assert.equal(view.command, 'switchman.setProfile');
    assert.match(view.tooltip, /reviewer — chosen for this session/);
    const fallback = profileStatusView(status({ profile: { name: 'default', resolved_from: 'global' } }), single);
    assert.deepEqual([fallback.text, /the global default/.test(fallback.tooltip)], ['$(person) default', true]);
  });

  it('the status item is hidden without a profile (older daemon) or without a daemon', () => {
    assert.equal(profileStatusView(status(), single).text, '');
    assert.equal(profileStatusView(undefined, single).text, '');
    const stopped = profileStatusView(status({ profile: { name: 'default', resolved_from: 'global' } }),
      { ...single, connection: 'stopped' });
    assert.equal(stopped.text, '');
  });

  it('the picker lists every profile, marks the active one and offers to go back to the default', () => {
    const items = profilePickItems(listing);
    assert.deepEqual(items.map((i) => [i.label, i.value, i.current]), [
      ['$(discard) Use the default profile', null, false],
      ['default', 'default', false],
      ['$(check) reviewer', 'reviewer', true],
    ]);
    assert.equal(items[2].description, 'user · Reviews code without changing it');
    assert.equal(items[2].detail, 'model: anthropic:claude-haiku-4-5 · tools: grep, read_file · read-only');
    assert.equal(items[1].detail, 'model: your routing rules · tools: edit_file, read_file');
    // A profile's reasoning effort is part of how it works (docs/profiles.md): the picker said nothing of it.
    const architect = profilePickItems({ ...listing, profiles: [{ name: 'architect', description: 'Plans', source: 'user',
      tools: ['read_file'], model_policy: { model: null, tier: 'deep', effort: 'high' }, approval: 'ask' }] });
    assert.equal(architect[1].detail, 'model: tier deep · effort high · tools: read_file');
    const defaulted = profilePickItems({ ...listing, active: { name: 'default', resolved_from: 'workspace' } });
    assert.equal(defaulted[0].value, 'default', 'nothing to clear when the session chose none');
  });

  it('a workspace default bounded by your default shows what it is left, in the picker and the status item', () => {
    // `default: default` in a repository, your own default a read-only reviewer: the picker listed
    // every tool and the status item named `default` alone, while the session had two read-only tools.
    const bound = { bounded_by: 'reviewer', tools: ['grep', 'read_file'], approval: 'read_only' as const,
      tools_left_out: ['edit_file', 'run_command'] };
    const active = { name: 'default', resolved_from: 'workspace' as const, ...bound };
    const items = profilePickItems({
      profiles: [{ ...listing.profiles[0], ...bound }, listing.profiles[1]],
      active,
    });
    assert.equal(items[0].label, '$(check) default');
    assert.equal(items[0].detail,
      "$(shield) bounded by your default 'reviewer' · model: your routing rules · tools: grep, read_file · read-only");
    assert.equal(items[1].detail, 'model: anthropic:claude-haiku-4-5 · tools: grep, read_file · read-only');
    // its own description ("every tool, your routing rules") would contradict the bound under it
    assert.equal(items[0].description, 'builtin · bounded: the tools and approval your default leaves it');
    assert.equal(items[1].description, 'user · Reviews code without changing it', 'an unbounded one keeps its own');
    const view = profileStatusView(status({ profile: active }), single);
    assert.equal(view.text, '$(shield) default');
    assert.match(view.tooltip, /default — the workspace's default, bounded by your default 'reviewer'/);
    assert.match(view.tooltip, /Tools: grep, read_file · read-only {2}\nLeft out: edit_file, run_command/);
    assert.match(view.accessibilityLabel, /: default, bounded by your default 'reviewer'$/);
    // the same profile chosen in the session is not bounded: no mark
    const chosen = profileStatusView(status({ profile: { name: 'default', resolved_from: 'session' } }), single);
    assert.deepEqual([chosen.text, /bounded/.test(chosen.tooltip)], ['$(person-filled) default', false]);
  });
});
