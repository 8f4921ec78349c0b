import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modelDetail, modelPickItems } from '../../src/models/modelItems';
import type { ModelInfo } from '../../src/protocol/types';

function model(overrides: Partial<ModelInfo>): ModelInfo {
  return { id: 'anthropic:claude-opus-4-7', display_name: 'Claude Opus 4.7', provider: 'anthropic', aliases: ['opus'],
    tier: 'deep', can_delegate: true, configured: true, availability: 'healthy',
    pricing: { input: '5.00', output: '25.00', cache_read: '0.50', cache_write: '6.25' }, ...overrides };
}

describe('modelPickItems', () => {
  const models = [
    model({}),
    model({ id: 'anthropic:claude-haiku-4-5', display_name: 'Claude Haiku 4.5', aliases: ['haiku'], availability: 'degraded' }),
    model({ id: 'openai:gpt-5', display_name: 'GPT-5', provider: 'openai', aliases: ['gpt-5', 'gpt5'], configured: false }),
  ];

  it('starts with the entry that clears the sticky model, then models grouped by provider', () => {
    const items = modelPickItems({ sticky_model: null, models });
    assert.deepEqual(items.map((i) => (i.kind === 'separator' ? `--${i.label}` : i.value)),
      [null, '--anthropic', 'anthropic:claude-opus-4-7', 'anthropic:claude-haiku-4-5', '--openai', 'openai:gpt-5']);
    const clear = items[0];
    assert.ok(clear.kind === 'choice' && clear.current && clear.description === 'current');
  });

  it('marks the sticky model and offers to clear it', () => {
    const items = modelPickItems({ sticky_model: 'anthropic:claude-haiku-4-5', models });
    const haiku = items.find((i) => i.kind === 'choice' && i.value === 'anthropic:claude-haiku-4-5');
    assert.ok(haiku && haiku.kind === 'choice');
    assert.equal(haiku.label, '$(pinned) Claude Haiku 4.5');
    assert.match(haiku.description ?? '', /@haiku/);
    assert.ok(haiku.current);
    const clear = items[0];
    assert.ok(clear.kind === 'choice' && !clear.current && clear.description === 'clear the sticky model');
  });

  it('names the change queued behind a running turn (the picker marked only what is in force)', () => {
    const items = modelPickItems({ sticky_model: null, models }, { model: 'anthropic:claude-opus-4-7' });
    const opus = items.find((i) => i.kind === 'choice' && i.value === 'anthropic:claude-opus-4-7');
    assert.ok(opus && opus.kind === 'choice' && !opus.current);
    assert.match(opus.description ?? '', /pending: applies when the running turn ends$/);
    const clear = items[0];
    assert.ok(clear.kind === 'choice' && clear.current);
    assert.equal(clear.description, 'current · choose it to drop the pending change');
    const clearing = modelPickItems({ sticky_model: 'anthropic:claude-haiku-4-5', models }, { model: null });
    const first = clearing[0];
    assert.ok(first.kind === 'choice' && first.description === 'pending: applies when the running turn ends');
  });

  it('shows configured and availability state with prices', () => {
    assert.equal(modelDetail(models[0]), '$(check) available · tier deep · $5.00 in / $25.00 out per 1M tokens');
    assert.match(modelDetail(models[1]), /^\$\(warning\) degraded/);
    assert.match(modelDetail(models[2]), /^\$\(key\) not configured/);
    assert.match(modelDetail(model({ availability: 'unavailable' })), /unavailable right now/);
  });
});
