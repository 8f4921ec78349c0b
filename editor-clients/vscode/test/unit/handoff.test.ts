import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { workerTranscript } from '../../src/chat/delegations';
import { handoffLines } from '../../src/chat/handoff';
import { transcriptMarkdown } from '../../src/chat/transcript';
import type { HandoffEnvelope, SessionDetail } from '../../src/protocol/types';

const envelope: HandoffEnvelope = {
  id: 'H1', reason: 'user_delegate', intent: 'explain this',
  source: { session_id: 'S1', model: 'anthropic:claude-opus-4-7', profile: { name: 'default', resolved_from: 'global' } },
  target: { session_id: 'W1', tier: 'fast', profile: { name: 'reviewer', resolved_from: 'session' } },
  capability_scope: { tools: ['grep', 'read_file'], dropped_tools: [], approval: 'read_only', approval_required: false },
  model_policy: { tier: 'fast', profile_model: 'anthropic:claude-haiku-4-5',
    tiers: { fast: 'anthropic:claude-haiku-4-5', deep: 'anthropic:claude-opus-4-7' } },
  budget: { max_tokens: null, timeout_seconds: 600, planner_session_cost_usd: '0.01', cost_today_usd: '0.25' },
  input: { context: { mode: 'explicit', include: [{ type: 'inline' }] }, output_schema: null },
};

describe('handoff envelope in the worker view', () => {
  it('says who handed what to whom, with which tools, models and limits', () => {
    assert.deepEqual(handoffLines(envelope), [
      { label: 'From', value: 'you (/delegate), profile default (global default)' },
      { label: 'To', value: 'fast worker, profile reviewer (chosen)' },
      { label: 'Tools', value: 'grep, read_file (read-only)' },
      { label: 'Models', value: 'claude-haiku-4-5 first; fast: claude-haiku-4-5, deep: claude-opus-4-7' },
      { label: 'Context', value: '1 reference' },
      { label: 'Limits', value: 'timeout 600s' },
      { label: 'Spent', value: '$0.01 in the session, $0.25 today, before the handoff' },
    ]);
    const planner = handoffLines({ ...envelope, reason: 'planner_delegate',
      capability_scope: { ...envelope.capability_scope, approval: 'ask', approval_required: true, dropped_tools: ['memory_add'] } });
    assert.equal(planner[0].value, 'planner on claude-opus-4-7, profile default (global default)');
    assert.equal(planner[2].value, 'grep, read_file · approved by you');
    assert.deepEqual(planner.at(-1), { label: 'Dropped', value: 'memory_add' });
    // /delegate in a new session: nothing spent in it yet, a little today (it read `$0.00` beside `$0.00004`)
    const fresh = handoffLines({ ...envelope, budget: { ...envelope.budget, planner_session_cost_usd: '0', cost_today_usd: '0.00004' } });
    assert.deepEqual(fresh.find((l) => l.label === 'Spent'),
      { label: 'Spent', value: '$0.00000 in the session, $0.00004 today, before the handoff' });
    const withheld = handoffLines({ ...envelope, capability_scope: { ...envelope.capability_scope,
      withheld_tools: { run_command: 'you do not have it', edit_file: "the worker's profile 'reader' does not permit it" } } });
    assert.deepEqual(withheld.at(-1), { label: 'Withheld',
      value: "run_command (you do not have it); edit_file (the worker's profile 'reader' does not permit it)" });
  });

  it('a worker session with an envelope brings it into the transcript; older ones do not', () => {
    const detail = { session: {}, turns: [], cost: {}, messages: [], handoff: envelope } as unknown as SessionDetail;
    assert.equal(workerTranscript(detail).handoff?.[1].value, 'fast worker, profile reviewer (chosen)');
    assert.equal(workerTranscript({ ...detail, handoff: null }).handoff, undefined);
  });

  it('a worker the tier floor capped is handed over as the tier it runs on (it read "deep worker")', () => {
    const capped = { ...envelope, target: { ...envelope.target, tier: 'deep', worker_tier: 'balanced' } };
    const to = 'balanced worker (deep, capped by the tier floor), profile reviewer (chosen)';
    assert.equal(handoffLines(capped)[1].value, to);
    const detail = { session: {}, turns: [], cost: {}, messages: [], handoff: capped } as unknown as SessionDetail;
    assert.equal(workerTranscript(detail).handoff?.[1].value, to);
    const sessions = { ...detail, session: { id: 'W1', title: 'x', is_worker: true, created_at: '2026-05-08T14:20:00.000Z',
      turn_count: 0 }, cost: { total_usd: '0', estimated_usd: '0', planner_usd: '0', workers_usd: '0', by_model: [], workers: [] } };
    assert.ok(transcriptMarkdown(sessions as unknown as SessionDetail).includes(`\n- **To:** ${to}\n`));
    // not capped, or a record from before `worker_tier`: as before
    const same = { ...envelope.target, worker_tier: 'fast' };
    assert.equal(handoffLines({ ...envelope, target: same })[1].value, 'fast worker, profile reviewer (chosen)');
    assert.equal(handoffLines({ ...envelope, target: { ...same, worker_tier: null } })[1].value,
      'fast worker, profile reviewer (chosen)');
  });

  it("the Sessions view's transcript of a worker heads it with its handoff too (it had none)", () => {
    const detail = {
      session: { id: 'W1', title: 'explain this', is_worker: true, created_at: '2026-05-08T14:20:00.000Z', turn_count: 0 },
      turns: [], messages: [], handoff: envelope,
      cost: { total_usd: '0', estimated_usd: '0', planner_usd: '0', workers_usd: '0', by_model: [], workers: [] },
    } as unknown as SessionDetail;
    const text = transcriptMarkdown(detail);
    assert.match(text, /\n## Handoff\n\n- \*\*From:\*\* you \(\/delegate\), profile default \(global default\)\n/);
    assert.match(text, /\n- \*\*To:\*\* fast worker, profile reviewer \(chosen\)\n/);
    assert.doesNotMatch(transcriptMarkdown({ ...detail, handoff: null }), /Handoff/);
  });
});
