import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bannerView } from '../../src/chat/banners';

// As the daemon writes it (engine/routing/chain.py, the pattern_disagreement notice).
const SUGGESTION = '→ Routing to anthropic:claude-haiku-4-5 per rule "fast regex"\n'
  + 'Pattern store suggests anthropic:claude-sonnet-4-6 (confidence 0.64, 4 samples)\n'
  + '/route override to use anthropic:claude-sonnet-4-6 for this turn\n'
  + '/route ignore to dismiss';

describe('bannerView', () => {
  it('keeps the lines of a suggestion apart and turns its /route lines into buttons', () => {
    const view = bannerView(SUGGESTION, true);
    assert.deepEqual(view.lines, ['→ Routing to anthropic:claude-haiku-4-5 per rule "fast regex"',
      'Pattern store suggests anthropic:claude-sonnet-4-6 (confidence 0.64, 4 samples)']);
    assert.deepEqual(view.actions.map((a) => [a.label, a.command]),
      [['Use claude-sonnet-4-6 for this turn', '/route override'], ['Dismiss', '/route ignore']]);
  });

  it('offers no buttons for a suggestion that can no longer be taken (not the last turn)', () => {
    const view = bannerView(SUGGESTION, false);
    assert.deepEqual(view.actions, []);
    assert.equal(view.lines.length, 2);
    assert.ok(view.lines.every((line) => !line.includes('/route')));
  });

  it('shows any other banner as its lines', () => {
    const outage = 'anthropic:claude-opus-4-7 is currently unavailable.\nRouting fell through to anthropic:claude-sonnet-4-6.';
    assert.deepEqual(bannerView(outage, true), { lines: outage.split('\n'), actions: [] });
  });
});
