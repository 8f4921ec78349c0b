import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { explanationMessage, explanationView } from '../../src/chat/chain';
import type { ExplainResult, PolicyEvaluation } from '../../src/protocol/types';

function step(policy: string, verdict: PolicyEvaluation['verdict'], extra: Partial<PolicyEvaluation> = {}): PolicyEvaluation {
  return { policy, verdict, candidate_model: null, reason: `${policy} reason`, rule_name: null, validation_failure: null,
    outage_scope: null, ...extra };
}

const decided: ExplainResult = {
  turn_id: 'T1', summary: 'rule: fast for commits', text: 'Turn T1 …\nChain:\n  [1] …',
  decision: { type: 'route.decided', timestamp: '2026-05-08T14:23:11Z', session_id: 'S1', turn_id: 'T1', banners: [],
    winner_index: 3, chosen_model: 'anthropic:claude-haiku-4-5', chain: [
      step('PER_MESSAGE_OVERRIDE', 'not_applicable', { reason: 'no @model token in message' }),
      step('MANUAL_STICKY', 'not_applicable'),
      step('CONFIGURED_RULES', 'rejected', { rule_name: 'deep', candidate_model: 'anthropic:claude-opus-4-7',
        reason: 'provider currently unavailable' }),
      step('CONFIGURED_RULES', 'chose', { rule_name: 'fast for commits', candidate_model: 'anthropic:claude-haiku-4-5' }),
    ] },
};

describe('the routing chain as a table', () => {
  it('shows a learned pattern\'s other scored models in its row, as the full text does', () => {
    const learned: ExplainResult = { ...decided, decision: { ...decided.decision!, winner_index: 0, chain: [
      step('PATTERN_RECOMMENDATION', 'chose', { candidate_model: 'anthropic:claude-haiku-4-5',
        reason: 'suggested anthropic:claude-haiku-4-5 (score 0.665, confidence 1.00, 5 samples)',
        pattern_alternatives: [{ model: 'anthropic:claude-opus-4-7', score: 0, sample_size: 5 },
          { model: 'openai:gpt-5', score: 0.25, sample_size: 2 }, { model: 'openai:gpt-5-mini', score: 0.81, sample_size: 1 }] }),
      step('GLOBAL_DEFAULT', 'not_applicable', { pattern_alternatives: null })] } };
    const [slot4, global] = explanationView(learned).rows;
    // The badge's word for it (the daemon's summary "pattern recommendation", docs/routing.md's table).
    assert.equal(slot4.policy, 'Pattern recommendation');
    assert.equal(slot4.reason, 'suggested anthropic:claude-haiku-4-5 (score 0.665, confidence 1.00, 5 samples); '
      + 'also scored: claude-opus-4-7 0.000 (5 samples) · gpt-5 0.250 (2 samples) · gpt-5-mini 0.810 (1 sample)');
    assert.equal(global.reason, 'GLOBAL_DEFAULT reason');
  });

  it('has one row per policy in words, with the winner marked', () => {
    const view = explanationView(decided);
    assert.equal(view.headline, 'Chose claude-haiku-4-5 · rule: fast for commits');
    assert.deepEqual(view.rows.map((r) => [r.policy, r.verdictLabel, r.model, r.winner]), [
      ['@alias in the message', 'skipped', null, false],
      ['Sticky model', 'skipped', null, false],
      ['Configured rule "deep"', 'rejected', 'claude-opus-4-7', false],
      ['Configured rule "fast for commits"', 'chose', 'claude-haiku-4-5', true],
    ]);
    assert.equal(view.rows[2].reason, 'provider currently unavailable');
    assert.equal(view.text, decided.text);
  });

  it('says so when no model could be chosen, and keeps plain messages as they are', () => {
    const failed = explanationView({ ...decided, decision: { ...decided.decision!, winner_index: null, chosen_model: null } });
    assert.equal(failed.headline, 'No model could take this turn');
    assert.ok(failed.rows.every((r) => !r.winner));
    assert.deepEqual(explanationView({ turn_id: null, decision: null, summary: null, text: null }).rows, []);
    assert.deepEqual(explanationMessage('the daemon is not running'),
      { headline: 'the daemon is not running', rows: [], text: 'the daemon is not running' });
  });
});
