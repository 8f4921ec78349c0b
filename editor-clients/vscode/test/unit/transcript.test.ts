import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transcriptEntries, transcriptMarkdown } from '../../src/chat/transcript';
import { approvalsInTurns } from '../../src/chat/reducer';
import type { ApprovalRecord, SessionDetail, WorkerCost } from '../../src/protocol/types';
import { outcomeText, workerLine } from '../../src/tools/approval';
import { QueuedDelegations, queuedItemView, relativeTime, sessionItemView, transcriptFileName } from '../../src/sessions/sessionItems';

const session = {
  id: 'S1', workspace: 'file:///w', title: 'write a commit message', created_at: '2026-05-08T14:20:00Z',
  updated_at: '2026-05-08T14:23:19Z', sticky_model: null, pending_swap: null, last_model: 'anthropic:claude-haiku-4-5',
  turn_count: 2, cost_usd: '0.0412', is_worker: false, parent_session_id: null, parent_tool_use_id: null, workers: [],
};
const turn = (id: string, index: number, extra = {}) => ({
  id, session_id: 'S1', index, status: 'completed' as const, model: 'anthropic:claude-haiku-4-5', started_at: '', ended_at: '',
  usage: { input_tokens: 10, output_tokens: 3, cache_read_tokens: 0, cache_write_tokens: 0 }, cost_usd: '0.0029',
  llm_calls: 1, tool_calls: 0, error: null, summary: 'rule: fast for commits', decision: null, ...extra,
});
const detail: SessionDetail = {
  session,
  turns: [turn('T2', 2, { status: 'failed', error: { code: 'provider_error', message: 'server error (500)' } }), turn('T1', 1)],
  messages: [
    { id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'user', created_at: '', model: null, content: [{ type: 'text', text: 'commit msg' }] },
    { id: 'M2', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: 'anthropic:claude-haiku-4-5',
      content: [{ type: 'text', text: 'Reading.' }, { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.py' } }] },
    { id: 'M3', session_id: 'S1', turn_id: 'T1', role: 'tool', created_at: '', model: null,
      content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'boom', is_error: true }] },
    { id: 'M4', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: 'anthropic:claude-haiku-4-5', content: [{ type: 'text', text: 'Fix: typo' }] },
    { id: 'M5', session_id: 'S1', turn_id: 'T2', role: 'user', created_at: '', model: null, content: [{ type: 'text', text: 'again' }] },
  ],
  cost: { total_usd: '0.0412', by_model: [{ model: 'anthropic:claude-haiku-4-5', cost_usd: '0.0058', turns: 2, input_tokens: 20, output_tokens: 6 }],
    planner_usd: '0.0412', workers_usd: '0', workers: [] },
};

describe('transcriptEntries', () => {
  it('rebuilds the chat in turn order with answers, tools and failures', () => {
    const entries = transcriptEntries(detail);
    assert.deepEqual(entries.map((e) => `${e.kind}:${e.id}`), ['user:M1', 'turn:T1', 'user:M5', 'turn:T2']);
    const first = entries[1];
    assert.ok(first.kind === 'turn');
    assert.equal(first.text, 'Reading.\n\nFix: typo');
    assert.deepEqual(first.tools.map((t) => [t.name, t.status, t.summary]), [['read_file', 'error', 'boom']],
      'a failed tool says why, as it did live');
    const second = entries[3];
    assert.ok(second.kind === 'turn' && second.status === 'failed' && second.error?.message === 'server error (500)');
  });

  it('a tool result shows the line the chat showed live, kept with it; one stored before, as before', () => {
    const results = (...blocks: object[]) => transcriptEntries({ ...detail, turns: [turn('T1', 1)], messages: [
      detail.messages[0], { ...detail.messages[1], content: [
        { type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'a.py' } },
        { type: 'tool_use', id: 'toolu_2', name: 'read_file', input: { path: '../b.py' } }] },
      { ...detail.messages[2], content: blocks }] } as SessionDetail).flatMap((e) => (e.kind === 'turn' ? e.tools : []))
      .map((t) => [t.status, t.summary]);
    assert.deepEqual(results(
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'line 1\nline 2', is_error: false, summary: 'a.py: 2 lines' },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: "'../b.py' is outside the workspace; only files under /w can be used.",
        is_error: true, summary: "'../b.py' is outside the workspace; only files under…" },
    ), [['done', 'a.py: 2 lines'], ['error', "'../b.py' is outside the workspace; only files under…"]]);
    assert.deepEqual(results(
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'line 1\nline 2', is_error: false, summary: null },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: 'boom\nmore', is_error: true },
    ), [['done', undefined], ['error', 'boom']], 'results stored before the line was kept');
  });

  it('a command that ran shows its output as it did live; its refusal and other tools show none', () => {
    const tools = transcriptEntries({ ...detail, turns: [turn('T1', 1)], messages: [
      detail.messages[0], { ...detail.messages[1], content: [
        { type: 'tool_use', id: 'toolu_1', name: 'run_command', input: { command: 'make' } },
        { type: 'tool_use', id: 'toolu_2', name: 'run_command', input: { command: 'make' } },
        { type: 'tool_use', id: 'toolu_3', name: 'run_command', input: { command: 'true' } },
        { type: 'tool_use', id: 'toolu_4', name: 'read_file', input: { path: 'a.py' } }] },
      { ...detail.messages[2], content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Exit status 3.\nbroke\n', is_error: true, summary: 'exit 3', output_shown: true },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'The user denied this command.', is_error: true, summary: 'denied', output_shown: false },
        { type: 'tool_result', tool_use_id: 'toolu_3', content: 'Exit status 0.\n', is_error: false, summary: 'exit 0', output_shown: true },
        { type: 'tool_result', tool_use_id: 'toolu_4', content: 'line 1', is_error: false, summary: 'a.py: 1 line' }] },
    ] } as SessionDetail).flatMap((e) => (e.kind === 'turn' ? e.tools : []));
    assert.deepEqual(tools.map((t) => [t.summary, t.output]), [
      ['exit 3', 'Exit status 3.\nbroke\n'], ['denied', undefined], ['exit 0', 'Exit status 0.\n'], ['a.py: 1 line', undefined]]);
  });

  it('a tool call with no recorded result is running while its turn runs, and did not run as far as anyone knows once cut off', () => {
    const asked = (status: string) => transcriptEntries({ ...detail, turns: [turn('T1', 1, { status })],
      messages: [detail.messages[0], detail.messages[1]] }).flatMap((e) => (e.kind === 'turn' ? e.tools : []))
      .map((t) => [t.status, t.summary]);
    assert.deepEqual(asked('running'), [['running', undefined]], 'a reload while its approval card waits');
    assert.deepEqual(asked('interrupted'), [['error', 'no result: Switchman stopped before it was recorded']],
      'the daemon died (its approval card withdrawn): it said done');
  });

  it('puts back the questions a turn\'s calls asked, answered as they were (a card each, inside the turn)', () => {
    const use = (id: string, name: string, input: object) => ({ type: 'tool_use' as const, id, name, input });
    const result = (id: string, approval: ApprovalRecord | null, is_error = false) =>
      ({ type: 'tool_result' as const, tool_use_id: id, content: 'x', is_error, approval });
    const record = (id: string, outcome: ApprovalRecord['outcome'], extra: Partial<ApprovalRecord> = {}): ApprovalRecord =>
      ({ id, title: 'Edit src/app.py', outcome, reason: null, command: null, cwd: null, path: 'src/app.py', ...extra });
    const messages = [detail.messages[0],
      { ...detail.messages[1], content: [use('toolu_e', 'edit_file', {}), use('toolu_c', 'run_command', {}),
        use('toolu_s', 'edit_file', {}), use('toolu_r', 'read_file', {}), use('toolu_a', 'create_file', {}),
        use('toolu_x', 'run_command', {}), use('toolu_d', 'delegate', { tier: 'fast', task: 'Rename f' })] },
      { ...detail.messages[2], content: [result('toolu_e', record('A1', 'denied', { reason: 'use a constant' }), true),
        result('toolu_c', record('A2', 'allowed_once', { title: 'Run `make test`', command: 'make test', cwd: '/w', path: null })),
        result('toolu_s', record('A3', 'not_applied', { reason: 'src/app.py changed in the editor' }), true),
        result('toolu_r', null), result('toolu_a', record('A4', 'allowed_always', { title: 'Create b.py' })),
        result('toolu_x', record('A5', 'stopped', { title: 'Run `sleep 9`', command: 'sleep 9', path: null }), true),
        result('toolu_d', record('A6', 'stopped', { title: 'Delegate to a fast worker that may change files', path: null,
          reason: 'the user stopped it before it started' }), true)] }];
    const applied = record('A7', 'denied', { title: 'Apply the code block to src/app.py (replacing the selection)', reason: 'not there' });
    const entries = transcriptEntries({ ...detail, turns: [turn('T1', 1)], messages,
      applies: [{ turn_id: 'T1', approval: applied }, { turn_id: 'T9', approval: { ...applied, id: 'A8' } }] });
    const cards = entries.flatMap((e) => (e.kind === 'approval' ? [e.card] : []));
    assert.deepEqual(cards.map((c) => [c.id, c.turnId, c.kind, c.tool, outcomeText(c)]), [
      ['A1', 'T1', 'edit', 'edit_file', 'Denied: use a constant'],
      ['A2', 'T1', 'command', 'run_command', 'Allowed once.'],
      ['A3', 'T1', 'edit', 'edit_file', 'Not applied: src/app.py changed in the editor'],
      ['A4', 'T1', 'edit', 'create_file', 'Allowed; create_file is always allowed here now.'],
      ['A5', 'T1', 'command', 'run_command', 'Not answered: the turn was stopped; nothing happened.'],
      ['A6', 'T1', 'delegation', 'delegate', 'Not answered: the user stopped it before it started; nothing happened.'],
      ['A7', 'T1', 'edit', 'apply_code', 'Denied: not there'],
    ], 'a read asks nothing: no card; an Apply is in the turn of its code block');
    assert.equal(cards[1].command, 'make test');
    assert.deepEqual([cards[5].task, cards[5].tier], ['Rename f', null], "a delegation's task from its call; no tier line");
    const { shown, byTurn } = approvalsInTurns(entries);
    assert.deepEqual(shown.map((e) => e.kind), ['user', 'turn', 'approval'],
      'shown inside their turn, as they were; an Apply\'s card (a click on a code block) right after the turn');
    assert.equal(byTurn.get('T1')?.length, 6);
  });

  it('puts back the questions a planner\'s workers asked, answered, in the planner\'s turn after its own', () => {
    const question = (id: string, outcome: ApprovalRecord['outcome'], extra: Partial<ApprovalRecord> = {}): ApprovalRecord =>
      ({ id, title: 'Edit src/app.py', outcome, reason: null, command: null, cwd: null, path: 'src/app.py', ...extra });
    const messages = [detail.messages[0],
      { ...detail.messages[1], content: [{ type: 'tool_use' as const, id: 'toolu_d', name: 'delegate', input: { task: 'Bump' } }] },
      { ...detail.messages[2], content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_d', content: 'bumped', is_error: false,
        approval: question('A1', 'allowed_once', { title: 'Delegate to a fast worker that may change files', path: null }) }] }];
    const delegation = { tool_use_id: 'toolu_d', worker_session_id: 'W1', source: 'planner' as const, started_at: '', task: 'Bump',
      tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false, model: null, status: 'completed' as const,
      error: null, detail: null, approvals: [question('A2', 'denied', { reason: 'not now' }),
        question('A3', 'stopped', { title: 'Run `make`', command: 'make', cwd: '/w', path: null })] };
    const entries = transcriptEntries({ ...detail, turns: [turn('T1', 1)], messages, delegations: [delegation] });
    const cards = entries.flatMap((e) => (e.kind === 'approval' ? [e.card] : []));
    assert.deepEqual(cards.map((c) => [c.id, c.turnId, c.kind, outcomeText(c), c.alwaysLabel === null]), [
      ['A1', 'T1', 'delegation', 'Allowed once.', false],
      ['A2', 'T1', 'edit', 'Denied: not now', true],
      ['A3', 'T1', 'command', 'Not answered: the worker was stopped; nothing happened.', true],
    ], 'as the live cards ended: the worker\'s own stop, no "always" for a worker');
    assert.equal(approvalsInTurns(entries).byTurn.get('T1')?.length, 3, 'inside the planner\'s turn');
    assert.deepEqual(cards.map((c) => c.toolUseId), ['toolu_d', undefined, undefined],
      "the start's question names its delegation: it shows above that card");
  });

  it('rebuilds an edit\'s card with the diff its question showed, and a delegation\'s with its worker\'s tier and tools', () => {
    const diff = '--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n';
    const question = (id: string, outcome: ApprovalRecord['outcome'], extra: Partial<ApprovalRecord> = {}): ApprovalRecord =>
      ({ id, title: 'Edit src/app.py', outcome, reason: null, command: null, cwd: null, path: 'src/app.py', ...extra });
    const start = question('A1', 'allowed_once', { title: 'Delegate to a fast worker that may change files', path: null,
      tier: 'fast', worker_tools: ['edit_file', 'run_command'] });
    const messages = [detail.messages[0],
      { ...detail.messages[1], content: [{ type: 'tool_use' as const, id: 'toolu_e', name: 'edit_file', input: {} },
        { type: 'tool_use' as const, id: 'toolu_d', name: 'delegate', input: { task: 'Bump' } }] },
      { ...detail.messages[2], content: [
        { type: 'tool_result' as const, tool_use_id: 'toolu_e', content: 'done', is_error: false, approval: question('A0', 'allowed_once', { diff }) },
        { type: 'tool_result' as const, tool_use_id: 'toolu_d', content: 'bumped', is_error: false, approval: start }] }];
    const delegation = { tool_use_id: 'toolu_d', worker_session_id: 'W1', source: 'planner' as const, started_at: '', task: 'Bump',
      tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false, model: null, status: 'completed' as const,
      error: null, detail: null, approvals: [question('A2', 'denied', { reason: 'not now', diff }), question('A3', 'allowed_once')] };
    const cards = transcriptEntries({ ...detail, turns: [turn('T1', 1)], messages, delegations: [delegation] })
      .flatMap((e) => (e.kind === 'approval' ? [e.card] : []));
    const lines = ['--- a/src/app.py', '+++ b/src/app.py', '@@ -1 +1 @@', '-x = 1', '+x = 2'];
    assert.deepEqual(cards.map((c) => [c.id, c.diff, c.canOpenDiff]), [['A0', lines, false], ['A1', [], false],
      ['A2', lines, false], ['A3', [], false]], "the planner's and the worker's edit as they were asked; an older record: none");
    assert.deepEqual([cards[1].task, cards[1].tier, cards[1].workerTools], ['Bump', 'fast', ['edit_file', 'run_command']],
      'the "Worker on fast tier · may use …" line the live card had');
  });

  it('rebuilds a delegation\'s card whose tier the tier floor capped as the question said it', () => {
    const start: ApprovalRecord = { id: 'A1', title: 'Delegate to a balanced worker (deep, capped by the tier floor) that may change files',
      outcome: 'allowed_once', reason: null, command: null, cwd: null, path: null, tier: 'balanced', requested_tier: 'deep',
      model: 'anthropic:claude-sonnet-4-6', routed_by: null, worker_tools: ['edit_file'] };
    const messages = [detail.messages[0],
      { ...detail.messages[1], content: [{ type: 'tool_use' as const, id: 'toolu_d', name: 'delegate', input: { task: 'Bump', tier: 'deep' } }] },
      { ...detail.messages[2], content: [{ type: 'tool_result' as const, tool_use_id: 'toolu_d', content: 'bumped', is_error: false,
        approval: start }] }];
    const [card] = transcriptEntries({ ...detail, turns: [turn('T1', 1)], messages })
      .flatMap((e) => (e.kind === 'approval' ? [e.card] : []));
    assert.equal(workerLine(card), 'Worker on balanced tier · claude-sonnet-4-6 · may use edit_file',
      'the tier and model the worker ran on, not the deep the planner asked for (its title says once that the floor capped it)');
  });

  it('shows the user\'s message as the daemon recorded it, as typed: the @alias once, /route override as sent', () => {
    const chain = (reason: string) => ({ decision: { type: 'route.decided', timestamp: '', session_id: 'S1',
      turn_id: 'T1', winner_index: 0, chosen_model: null, banners: [],
      chain: [{ policy: 'PER_MESSAGE_OVERRIDE', verdict: 'chose', candidate_model: null, reason, rule_name: null,
        validation_failure: null, outage_scope: null }] } });
    const shown = (typed: string, extra: object) => transcriptEntries({ ...detail, turns: [turn('T1', 1, extra)],
      messages: [{ ...detail.messages[0], content: [{ type: 'text', text: typed }] }] })
      .flatMap((e) => (e.kind === 'user' ? [e.text] : []));
    assert.deepEqual(shown('@haiku commit msg', chain('override "@haiku"')), ['@haiku commit msg']);
    assert.deepEqual(shown('@haiku   @haiku commit msg', chain('override "@haiku"')), ['@haiku   @haiku commit msg']);
    assert.deepEqual(shown('/route override', chain("/route override (the pattern store's suggestion)")), ['/route override']);
  });

  it('lists a message\'s attachments under it, as it was shown when sent', () => {
    const attached = { ...detail, turns: [turn('T1', 1)], messages: [{ ...detail.messages[0], content: [
      { type: 'text' as const, text: 'explain this' },
      { type: 'attachment' as const, kind: 'selection' as const, path: 'src/login.py', text: 'def login():', start_line: 1, end_line: 2,
        truncated: false },
      { type: 'attachment' as const, kind: 'file' as const, path: 'README.md', text: '# Demo', start_line: null, end_line: null,
        truncated: false }] }] };
    const shown = transcriptEntries(attached).flatMap((e) => (e.kind === 'user' ? [e.text] : []));
    assert.deepEqual(shown, ['explain this\nAttached: src/login.py (lines 1–2)\nAttached: README.md']);
    assert.match(transcriptMarkdown(attached), /explain this\n\n_Attached: src\/login\.py \(lines 1–2\)_\n\n_Attached: README\.md_/);
  });

  it('shows the ratings the daemon kept as pressed buttons', () => {
    const entries = transcriptEntries({ ...detail, ratings: { T2: 'down' } });
    assert.deepEqual(entries.flatMap((e) => (e.kind === 'turn' ? [[e.id, e.rating]] : [])), [['T1', undefined], ['T2', 'down']]);
  });

  it('leaves out the turns being replayed live', () => {
    assert.deepEqual(transcriptEntries(detail, new Set(['T2'])).map((e) => e.id), ['M1', 'T1']);
  });
});

describe('the user\'s own delegations in a reloaded chat', () => {
  const at = (seconds: number) => `2026-05-08T14:2${seconds}:00Z`;
  const message = (id: string, role: 'user' | 'assistant', text: string, time: string, turnId: string | null = null) => ({
    id, session_id: 'S1', turn_id: turnId, role, created_at: time, model: null, content: [{ type: 'text' as const, text }] });
  const record = (id: string, started: string, extra = {}) => ({
    tool_use_id: id, worker_session_id: `W-${id}`, source: 'user' as const, started_at: started, task: 'explain this',
    tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false, model: 'anthropic:claude-haiku-4-5',
    status: 'completed' as const, error: null, detail: null, ...extra });
  const delegated: SessionDetail = {
    ...detail,
    turns: [turn('T1', 1)],
    messages: [
      message('M1', 'user', 'commit msg', at(1), 'T1'), message('M2', 'assistant', 'Fix: typo', at(1), 'T1'),
      // the command and the answer are stored when the worker ends; the worker was recorded when it started
      message('M3', 'user', '/delegate fast explain this', at(3)), message('M4', 'assistant', 'main returns 42.', at(3)),
      message('M5', 'user', '/delegate deep review', at(5)), message('M6', 'assistant', 'No worker was started: the delegation was not approved.', at(5)),
    ],
    delegations: [record('user_1', at(2)), record('user_2', at(6), { status: 'running', task: 'still going' }),
      { ...record('toolu_9', at(1)), source: 'planner' as const }],
    cost: { ...detail.cost, workers: [{ session_id: 'W-user_1', parent_tool_use_id: 'user_1', model: 'anthropic:claude-haiku-4-5',
      cost_usd: '0.0004', turns: 1 }] },
  };

  it('comes back as it was shown live: the command, the worker\'s card, its answer', () => {
    const entries = transcriptEntries(delegated);
    assert.deepEqual(entries.map((e) => `${e.kind}:${e.id}`), ['user:M1', 'turn:T1', 'user:M3', 'delegation:user_1',
      'command:M4', 'user:M5', 'command:M6', 'delegation:user_2']);
    const card = entries[3];
    assert.ok(card.kind === 'delegation');
    assert.deepEqual([card.card.task, card.card.status, card.card.workerSessionId, card.card.costUsd, card.card.turns],
      ['explain this', 'completed', 'W-user_1', '0.0004', 1]);
    assert.equal(entries[7].kind === 'delegation' && entries[7].card.status, 'running', 'not answered yet: the card alone, last');
  });

  it('puts back the question its start asked, before its card, as it was asked live', () => {
    const asked = (id: string, outcome: ApprovalRecord['outcome'], extra: Partial<ApprovalRecord> = {}): ApprovalRecord => ({
      id, title: 'Delegate to a fast worker that may change files', outcome, reason: null, command: null, cwd: null, path: null,
      tier: 'fast', worker_tools: ['edit_file'], ...extra });
    const entries = transcriptEntries({ ...delegated, delegations: [
      record('user_1', at(2), { approval: asked('A1', 'allowed_once'),
        approvals: [{ ...asked('A2', 'allowed_once'), title: 'Edit src/app.py', path: 'src/app.py', tier: null, worker_tools: null }] }),
      record('user_2', at(6), { status: 'running', task: 'still going', approval: asked('A3', 'allowed_once') }),
      { ...record('toolu_9', at(1)), source: 'planner' as const, approval: asked('A4', 'allowed_once') }] });
    assert.deepEqual(entries.map((e) => `${e.kind}:${e.id}`), ['user:M1', 'turn:T1', 'user:M3', 'approval:A1', 'delegation:user_1',
      'approval:A2', 'command:M4', 'user:M5', 'command:M6', 'approval:A3', 'delegation:user_2'],
    "a planner's start question comes with its call's result, not from its record");
    const start = entries[3];
    assert.ok(start.kind === 'approval');
    assert.deepEqual([start.card.kind, start.card.task, start.card.tier, start.card.workerTools, outcomeText(start.card)],
      ['delegation', 'explain this', 'fast', ['edit_file'], 'Allowed once.']);
  });

  it('puts back a start question asked again after the model changed, the first marked as superseded', () => {
    const asked = (id: string, model: string, superseded: string | null = null): ApprovalRecord => ({
      id, title: 'Delegate to a fast worker that may change files', outcome: 'allowed_once', reason: null, command: null,
      cwd: null, path: null, tier: 'fast', model, worker_tools: ['edit_file'], superseded });
    const why = 'the model changed from anthropic:claude-haiku-4-5 to anthropic:claude-sonnet-4-6 while the question waited';
    // the user's /delegate: from its record; a planner's call: from its result, as its question is
    const planner = { ...detail.messages[1], id: 'M2', turn_id: 'T1', content: [
      { type: 'tool_use' as const, id: 'toolu_9', name: 'delegate', input: { tier: 'fast', task: 'rename f' } }] };
    const result = { ...detail.messages[2], id: 'M2b', turn_id: 'T1', content: [{ type: 'tool_result' as const,
      tool_use_id: 'toolu_9', content: 'renamed', is_error: false, approval: asked('P2', 'anthropic:claude-sonnet-4-6'),
      superseded_approvals: [asked('P1', 'anthropic:claude-haiku-4-5', why)] }] };
    const entries = transcriptEntries({ ...delegated, messages: [delegated.messages[0], planner, result,
      ...delegated.messages.slice(2, 4)], delegations: [
      record('user_1', at(2), { approval: asked('A2', 'anthropic:claude-sonnet-4-6'),
        superseded_approvals: [asked('A1', 'anthropic:claude-haiku-4-5', why)] }),
      { ...record('toolu_9', at(1)), source: 'planner' as const }] });
    assert.deepEqual(entries.map((e) => `${e.kind}:${e.id}`), ['user:M1', 'turn:T1', 'approval:P1', 'approval:P2',
      'user:M3', 'approval:A1', 'approval:A2', 'delegation:user_1', 'command:M4'], 'both questions, as they were asked');
    const cards = entries.flatMap((e) => (e.kind === 'approval' ? [e.card] : []));
    assert.deepEqual(cards.map((c) => [c.model, outcomeText(c)]), [
      ['anthropic:claude-haiku-4-5', `Allowed once. Superseded, asked again: ${why}.`],
      ['anthropic:claude-sonnet-4-6', 'Allowed once.'],
      ['anthropic:claude-haiku-4-5', `Allowed once. Superseded, asked again: ${why}.`],
      ['anthropic:claude-sonnet-4-6', 'Allowed once.']]);
  });

  it('reads the newer order too: the command stored before its worker started, the answer after', () => {
    const stored: SessionDetail = {
      ...delegated,
      turns: [],
      messages: [
        message('M1', 'user', '/delegate fast explain this', at(1)), message('M2', 'assistant', 'main returns 42.', at(3)),
        message('M3', 'user', '/delegate deep review', at(5)), // the daemon stopped before its worker answered
      ],
      delegations: [record('user_1', at(2)), record('user_2', at(6), { status: 'failed', error: 'interrupted' })],
    };
    assert.deepEqual(transcriptEntries(stored).map((e) => `${e.kind}:${e.id}`), ['user:M1', 'delegation:user_1',
      'command:M2', 'user:M3', 'delegation:user_2']);
  });

  it('leaves out a delegation being replayed live', () => {
    assert.deepEqual(transcriptEntries(delegated, new Set(['user_2'])).map((e) => e.id).slice(-2), ['M5', 'M6']);
  });

  it('are in the read-only transcript too, each worker with its tier, model, cost and outcome', () => {
    const text = transcriptMarkdown(delegated);
    const turn1 = text.indexOf('## Turn 1');
    const command = text.indexOf('## You delegated\n\n**You:**\n\n/delegate fast explain this');
    const worker = text.indexOf('_Worker · fast · claude-haiku-4-5 · done · 1 turn · $0.0004_');
    const answer = text.indexOf('**Worker:**\n\nmain returns 42.');
    assert.ok(turn1 >= 0 && turn1 < command && command < worker && worker < answer, text);
    assert.match(text, /_Worker · fast · claude-haiku-4-5 · running · 0 turns · \$0\.00_\n$/);
  });
});

describe('transcriptMarkdown', () => {
  it("shows each question a turn's calls asked, answered, under its call's result, as Neovim's transcript does", () => {
    const q = (id: string, title: string, outcome: ApprovalRecord['outcome'], extra: Partial<ApprovalRecord> = {}): ApprovalRecord =>
      ({ id, title, outcome, reason: null, command: null, cwd: null, path: null, ...extra });
    const start = 'Delegate to a fast worker that may change files';
    const messages = [detail.messages[0],
      { ...detail.messages[1], content: [{ type: 'tool_use' as const, id: 'toolu_e', name: 'edit_file', input: {} },
        { type: 'tool_use' as const, id: 'toolu_d', name: 'delegate', input: { tier: 'fast', task: 'Bump' } }] },
      { ...detail.messages[2], content: [
        { type: 'tool_result' as const, tool_use_id: 'toolu_e', content: 'no', is_error: true,
          approval: q('A1', 'Edit src/app.py', 'denied', { reason: 'use a constant' }) },
        { type: 'tool_result' as const, tool_use_id: 'toolu_d', content: 'bumped', is_error: false,
          superseded_approvals: [q('A2', start, 'allowed_once', { superseded: 'the model changed from a to b while the question waited' })],
          approval: q('A3', start, 'allowed_once') }] }];
    const delegation = { tool_use_id: 'toolu_d', worker_session_id: 'W1', source: 'planner' as const, started_at: '', task: 'Bump',
      tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false, model: null, status: 'completed' as const,
      error: null, detail: null, approvals: [q('A4', 'Run `make`', 'allowed_once', { command: 'make', cwd: '/w' })] };
    const text = transcriptMarkdown({ ...detail, turns: [turn('T1', 1)], messages, delegations: [delegation],
      applies: [{ turn_id: 'T1', approval: q('A5', 'Apply the code block to src/app.py', 'allowed_once', { path: 'src/app.py' }) }] });
    const lines = [
      '⚠ `result`: no', '? Edit src/app.py — Denied: use a constant',
      '`result`: bumped', `? ${start} — Allowed once. Superseded, asked again: the model changed from a to b while the question waited.`,
      `? ${start} — Allowed once.`, '? Run `make` — Allowed once. (asked by the worker)',
      '? Apply the code block to src/app.py — Allowed once.'];
    let at = 0;
    for (const line of lines) {
      const found = text.indexOf(`\n${line}\n`, at);
      assert.ok(found >= at, `${line} (in order), in:\n${text}`);
      at = found;
    }
    // a user's own delegation: its start's question before its line, its worker's after
    const own = transcriptMarkdown({ ...detail, turns: [], messages: [
      { ...detail.messages[0], turn_id: null, content: [{ type: 'text', text: '/delegate fast Bump' }] }],
    delegations: [{ ...delegation, tool_use_id: 'user_1', source: 'user' as const, started_at: '2026-05-08T14:20:00Z',
      approval: q('A6', start, 'allowed_once') }] });
    assert.match(own, /\? Delegate to a fast worker that may change files — Allowed once\.\n\n_Worker · fast · [^\n]*_\n\n\? Run `make` — Allowed once\. \(asked by the worker\)\n/);
  });

  it('lists every turn with its model, cost and reason', () => {
    const text = transcriptMarkdown(detail);
    assert.match(text, /^# write a commit message/);
    // when it started, as people read it (it was the record's 2026-05-08T14:20:00Z)
    assert.match(text, /· started 2026-05-08 14:20 UTC · 2 turns ·/);
    assert.equal(transcriptMarkdown({ ...detail, session: { ...session, created_at: '2026-11-24T23:38:17.383000Z' } })
      .split('\n')[2].split(' · ')[1], 'started 2026-11-24 23:38 UTC');
    assert.match(text, /## Turn 1 · anthropic:claude-haiku-4-5 · \$0\.0029 · completed/);
    assert.match(text, /_Why: rule: fast for commits_/);
    assert.match(text, /## Turn 2 .* failed[\s\S]*server error \(500\)/);
    assert.match(text, /\| `anthropic:claude-haiku-4-5` \| 2 \| \$0\.0058 \| 20 \| 6 \|/);
    assert.ok(text.indexOf('Turn 1') < text.indexOf('Turn 2'));
    assert.match(text, /\*\*You:\*\*\n\ncommit msg/);
  });

  it('names a worker\'s task as its task, not as something you wrote', () => {
    // A worker's first message is the task its planner (or your /delegate) handed it; its card says "Task" too.
    const worker = { ...detail, session: { ...session, is_worker: true, parent_session_id: 'S0', parent_tool_use_id: 'toolu_9' } };
    const text = transcriptMarkdown(worker);
    assert.match(text, /\*\*Task:\*\*\n\ncommit msg/);
    assert.doesNotMatch(text, /\*\*You:\*\*/);
  });

  it("names the estimated part of a turn's cost, not the whole cost as estimated", () => {
    const turns = detail.turns.map((t) => (t.index === 1 ? { ...t, estimated_usd: '0.0009' } : { ...t, estimated_usd: '0.000000' }));
    const text = transcriptMarkdown({ ...detail, turns });
    assert.match(text, /## Turn 1 · anthropic:claude-haiku-4-5 · \$0\.0029 \(~\$0\.0009 estimated\) · completed/);
    assert.doesNotMatch(text, /## Turn 2 [^\n]*estimated/);
    // a turn whose whole cost is an estimate says it once
    const all = transcriptMarkdown({ ...detail, turns: turns.map((t) => (t.index === 1 ? { ...t, estimated_usd: t.cost_usd } : t)),
      cost: { ...detail.cost, estimated_usd: detail.cost.total_usd } });
    assert.match(all, /## Turn 1 · anthropic:claude-haiku-4-5 · ~\$0\.0029 \(estimated\) · completed/);
    assert.match(all, /total ~\$0\.041 \(estimated: calls cut short before the provider reported usage\)/);
  });

  it("heads a turn with its cost and its workers', as the chat's badge for it does, estimates named", () => {
    const worker = (id: string, cost_usd: string, estimated_usd: string) =>
      ({ session_id: id, parent_tool_use_id: `toolu_${id}`, model: 'anthropic:claude-haiku-4-5', cost_usd, turns: 1,
        estimated_usd, title: `task ${id}`, status: 'completed' as const, error: null });
    const delegate = (id: string) => ({ type: 'tool_use' as const, id: `toolu_${id}`, name: 'delegate', input: { tier: 'fast', task: `task ${id}` } });
    const planned = (workers: WorkerCost[]) => transcriptMarkdown({ ...detail, turns: [turn('T1', 1, { estimated_usd: '0' })],
      messages: [detail.messages[0], { ...detail.messages[1], content: [delegate('W1'), delegate('W2')] }],
      cost: { ...detail.cost, workers } } as SessionDetail);
    // it read $0.0029, the planner's own calls only
    assert.match(planned([worker('W1', '0.0027', '0'), worker('W2', '0.0001', '0.0001')]),
      /## Turn 1 · anthropic:claude-haiku-4-5 · \$0\.0057 incl\. workers \$0\.0028 \(~\$0\.0001 estimated\) · completed/);
    assert.match(planned([worker('W1', '0', '0'), worker('W2', '0', '0')]), /## Turn 1 · anthropic:claude-haiku-4-5 · \$0\.0029 · completed/,
      'workers that cost nothing');
  });

  it("shows what a command printed, as the chat does, not only its exit status line", () => {
    const text = transcriptMarkdown({ ...detail, turns: [turn('T1', 1)], messages: [
      detail.messages[0], { ...detail.messages[1], content: [
        { type: 'tool_use', id: 'toolu_1', name: 'run_command', input: { command: 'make' } },
        { type: 'tool_use', id: 'toolu_2', name: 'run_command', input: { command: 'rm -rf /' } },
        { type: 'tool_use', id: 'toolu_3', name: 'run_command', input: { command: 'true' } }] },
      { ...detail.messages[2], content: [
        { type: 'tool_result', tool_use_id: 'toolu_1', is_error: true, summary: 'exit 3', output_shown: true,
          content: 'Exit status 3.\n\x1b[31mFAILED\x1b[0m test_login\nsee ```x```\n' },
        { type: 'tool_result', tool_use_id: 'toolu_2', content: 'The user denied this command.\nMore for the model.', is_error: true,
          summary: 'denied', output_shown: false },
        { type: 'tool_result', tool_use_id: 'toolu_3', content: 'Exit status 0.\n', is_error: false, summary: 'exit 0', output_shown: true }] },
    ] } as SessionDetail);
    // its output whole, as a terminal showed it (no colour codes), in a fence its own backticks cannot close
    assert.match(text, /⚠ `result`: Exit status 3\.\n\n````text\nFAILED test_login\nsee ```x```\n````\n/);
    assert.match(text, /⚠ `result`: The user denied this command\.\n/, 'a refusal is no output: its first line, as before');
    assert.match(text, /`result`: Exit status 0\.(\n|$)/, 'nothing printed: no empty block');
    assert.doesNotMatch(text, /Exit status 0\.\n\n```/);
  });

  it('counts the workers in the cost table, by the model each ran on, so that its rows add up to the total', () => {
    const worker = (id: string, model: string | null, cost_usd: string, turns: number) =>
      ({ session_id: id, parent_tool_use_id: `toolu_${id}`, model, cost_usd, turns });
    const text = transcriptMarkdown({ ...detail, cost: { ...detail.cost, total_usd: '0.0158', planner_usd: '0.0058',
      workers_usd: '0.01', workers: [worker('W1', 'anthropic:claude-sonnet-4-6', '0.003', 1),
        worker('W2', 'anthropic:claude-opus-4-7', '0.006', 2), worker('W3', 'anthropic:claude-sonnet-4-6', '0.001', 3)] } });
    const rows = text.split('\n').filter((line) => /^\| (`|no model)/.test(line));
    assert.deepEqual(rows, [
      '| `anthropic:claude-haiku-4-5` | 2 | $0.0058 | 20 | 6 |',
      '| `anthropic:claude-opus-4-7` (workers) | 2 | $0.0060 | – | – |', // the column's decimals
      '| `anthropic:claude-sonnet-4-6` (workers) | 4 | $0.0040 | – | – |',
    ]);
    const sum = rows.reduce((total, row) => total + Number(row.split('|')[3].trim().slice(1)), 0);
    assert.equal(sum.toFixed(4), '0.0158');
    assert.match(text, /total \$0\.016\b/);
  });

  it('lists each worker with how its delegation ended, which the cost rows by model do not say', () => {
    const worker = (id: string, title: string, status: WorkerCost['status'], error: string | null, estimated = '0') =>
      ({ session_id: id, parent_tool_use_id: `toolu_${id}`, model: 'anthropic:claude-haiku-4-5', cost_usd: '0.0005', turns: 1,
        estimated_usd: estimated, title, status, error });
    const text = transcriptMarkdown({ ...detail, cost: { ...detail.cost, workers: [
      worker('W1', 'Convert the date', 'completed', null),
      worker('W2', 'Fix a | b', 'failed', 'worker_error: anthropic:claude-haiku-4-5: the provider rejected the request', '0.0005'),
      worker('W3', 'Wait', 'cancelled', 'cancelled_by_user'), worker('W4', '', null, null)] } });
    const table = text.slice(text.indexOf('## Workers')).split('\n').filter((line) => line.startsWith('| '));
    assert.deepEqual(table, [
      '| worker | model | turns | cost | ended |',
      '| Convert the date | `anthropic:claude-haiku-4-5` | 1 | $0.0005 | done |',
      '| Fix a \\| b | `anthropic:claude-haiku-4-5` | 1 | ~$0.0005 (estimated) | failed: worker_error |',
      '| Wait | `anthropic:claude-haiku-4-5` | 1 | $0.0005 | stopped |',
      '| toolu_W4 | `anthropic:claude-haiku-4-5` | 1 | $0.0005 | – |',
    ]);
    assert.doesNotMatch(transcriptMarkdown(detail), /## Workers/, 'no workers, no table');
  });

  it("gives the Workers table's cost column the same decimals, as the cost table above it has", () => {
    const worker = (id: string, cost_usd: string, status: WorkerCost['status']) =>
      ({ session_id: id, parent_tool_use_id: `toolu_${id}`, model: 'anthropic:claude-haiku-4-5', cost_usd, turns: 1,
        estimated_usd: '0', title: `task ${id}`, status, error: status === 'failed' ? 'worker_error: rejected' : null });
    const text = transcriptMarkdown({ ...detail, cost: { ...detail.cost, workers: [
      worker('W1', '0.00004', 'completed'), worker('W2', '0.000045', 'completed'), worker('W3', '0', 'failed')] } });
    const costs = text.slice(text.indexOf('## Workers')).split('\n').filter((line) => line.startsWith('| task'))
      .map((line) => line.split('|')[4].trim());
    assert.deepEqual(costs, ['$0.000040', '$0.000045', '$0.000000'], 'it read $0.00004, $0.000045 and $0.00');
  });
});

describe('session items', () => {
  it('describe a session with its model, cost and age', () => {
    const view = sessionItemView(session, true, new Date('2026-05-08T14:33:19Z'));
    assert.equal(view.label, 'write a commit message');
    assert.equal(view.description, 'current · claude-haiku-4-5 · $0.041 · 10 min ago');
    assert.equal(view.icon, 'star-full');
    assert.match(view.tooltip, /\nUpdated 2026-05-08 14:23 UTC\n/, 'as people read a time, not the record\'s ISO string');
    assert.equal(view.hasChildren, false);
    const planner = sessionItemView({ ...session, workers: [{ ...session, id: 'W1', is_worker: true }] }, false);
    assert.ok(planner.hasChildren);
    assert.equal(sessionItemView({ ...session, title: '', last_model: null }, false).label, 'New chat');
    // a worker says how its delegation went when it did not go well (a failed one looked like a done one)
    const worker = { ...session, is_worker: true, parent_session_id: 'S1', parent_tool_use_id: 'toolu_1' };
    const now = new Date('2026-05-08T14:33:19Z');
    const failed = sessionItemView({ ...worker, delegation_status: 'failed' }, false, now);
    assert.deepEqual([failed.description, failed.icon], ['failed · claude-haiku-4-5 · $0.041 · 10 min ago', 'error']);
    assert.match(failed.tooltip, /^write a commit message\nDelegation failed\n/);
    assert.equal(sessionItemView({ ...worker, delegation_status: 'cancelled' }, false, now).description,
      'stopped · claude-haiku-4-5 · $0.041 · 10 min ago');
    assert.equal(sessionItemView({ ...worker, delegation_status: 'running' }, false, now).description,
      'running · claude-haiku-4-5 · $0.041 · 10 min ago');
    const done = sessionItemView({ ...worker, delegation_status: 'completed' }, false, now);
    assert.deepEqual([done.description, done.icon], ['claude-haiku-4-5 · $0.041 · 10 min ago', 'person']);
    assert.match(done.tooltip, /^write a commit message\nDelegation done\n/, 'its tooltip says how it ended, done too');
    assert.doesNotMatch(sessionItemView({ ...worker, delegation_status: null }, false, now).tooltip, /Delegation/);
    // a cost that is partly Switchman's estimate (a call stopped before the provider reported usage) says so
    const estimated = sessionItemView({ ...session, estimated_usd: '0.0019' }, true, new Date('2026-05-08T14:33:19Z'));
    assert.equal(estimated.description, 'current · claude-haiku-4-5 · $0.0412 (~$0.0019 estimated) · 10 min ago');
    assert.match(estimated.tooltip, /\(~\$0\.0019 estimated\)/);
    const all = sessionItemView({ ...session, estimated_usd: session.cost_usd }, false, new Date('2026-05-08T14:33:19Z'));
    assert.equal(all.description, 'claude-haiku-4-5 · ~$0.041 (estimated) · 10 min ago', 'all of it estimated: said once');
    assert.match(all.tooltip, / · ~\$0\.041 \(estimated\)/);
  });

  it('give the costs of one level of the view the same decimals, each keeping its value', () => {
    const now = new Date('2026-05-08T14:33:19Z');
    const listed = [{ ...session, cost_usd: '0.000000' }, { ...session, id: 'S2', cost_usd: '0.000040' }];
    const alongside = listed.map((s) => s.cost_usd);
    assert.deepEqual(listed.map((s) => sessionItemView(s, false, now, alongside).description),
      ['claude-haiku-4-5 · $0.00000 · 10 min ago', 'claude-haiku-4-5 · $0.00004 · 10 min ago'], 'it read $0.00 beside $0.00004');
    assert.equal(sessionItemView(session, false, now, ['0.000040']).description, 'claude-haiku-4-5 · $0.04120 · 10 min ago',
      '$0.041 keeps its digits');
    assert.equal(sessionItemView(session, false, now).description, 'claude-haiku-4-5 · $0.041 · 10 min ago', 'alone: as before');
  });

  it('list a planner\'s delegations waiting for a worker slot (then for approval) under it, until they start or end', () => {
    const waiting = (tool_use_id: string, position: number) => ({
      phase: 'queued' as const, session_id: 'S1', turn_id: 'T1', tool_use_id, worker_session_id: '', worker_turn_id: null,
      tier: 'fast', model: null, task: `task ${tool_use_id}\nmore`, status: 'queued' as const, turns: 0, llm_calls: 0,
      tool_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: '0', elapsed_seconds: 0.5, activity: null, error: null,
      detail: 'waiting for a free worker: 1 of 1 running', dropped_tools: [], queue: { position, running: 1, limit: 1 } });
    const queued = new QueuedDelegations();
    assert.ok(queued.apply(waiting('toolu_3', 2)));
    assert.ok(queued.apply(waiting('toolu_2', 1)));
    assert.deepEqual(queued.of('S1').map((d) => d.tool_use_id), ['toolu_2', 'toolu_3'], 'next to start first');
    const view = queuedItemView(queued.of('S1')[0]);
    assert.deepEqual([view.label, view.description], ['task toolu_2', 'fast · queued · #1 in line']);
    assert.match(view.tooltip, /waiting for a free worker: 1 of 1 running/);
    // Its slot came and its start waits for the user's answer: still listed, saying so, until it starts.
    const asking = { ...waiting('toolu_2', 1), phase: 'awaiting_approval' as const, status: 'awaiting_approval' as const,
      queue: null, detail: 'waiting for your approval to start' };
    assert.ok(queued.apply(asking));
    assert.deepEqual(queued.of('S1').map((d) => d.tool_use_id), ['toolu_2', 'toolu_3']);
    const asked = queuedItemView(queued.of('S1')[0]);
    assert.deepEqual([asked.description, asked.tooltip.split('\n')[2]], ['fast · awaiting approval', 'waiting for your approval to start']);
    assert.ok(queued.apply({ ...waiting('toolu_2', 1), phase: 'started', status: 'running', queue: null }));
    assert.ok(queued.apply({ ...waiting('toolu_3', 1), phase: 'ended', status: 'cancelled', queue: null }));
    assert.deepEqual(queued.of('S1'), []);
    assert.equal(queued.apply({ ...waiting('toolu_9', 1), phase: 'progress', status: 'running' }), false, 'never queued');
  });

  it('name transcript tabs safely', () => {
    assert.equal(transcriptFileName({ ...session, title: 'fix a/b: "x"' }), 'fix a b x.md');
    // A title ending in a Markdown file's name is not given a second extension ("Summarise README.md.md").
    assert.equal(transcriptFileName({ ...session, title: 'Summarise README.md' }), 'Summarise README.md');
    assert.equal(transcriptFileName({ ...session, title: 'explain NOTES.MD' }), 'explain NOTES.MD');
    assert.equal(relativeTime('2026-05-08T12:00:00Z', new Date('2026-05-09T12:00:00Z')), '1 d ago');
  });
});
