import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyDelegation, cardView, recordedDelegation, storedDelegations, toggleCard, transcriptEnd, turnCostLabel, waitsToStart, workerTranscript, type DelegationCard } from '../../src/chat/delegations';
import { initialChatState, parseFromWebview, type ChatState, type ToWebview, type TurnEntry } from '../../src/chat/messages';
import { allCards, markStopping, reduce, toggleDelegation } from '../../src/chat/reducer';
import { transcriptEntries } from '../../src/chat/transcript';
import type { DelegationParams, Message, SessionDetail } from '../../src/protocol/types';
import { readShowWorkerSessions } from '../../src/server/settings';

const route = { session_id: 'S1', turn_id: 'T1', model: 'anthropic:claude-opus-4-7', summary: 'global default', banners: [], decision: null };
const update = (extra: Partial<DelegationParams> = {}): DelegationParams => ({
  phase: 'started', session_id: 'S1', turn_id: 'T1', tool_use_id: 'toolu_1', worker_session_id: 'W1', worker_turn_id: 'WT1',
  tier: 'fast', model: 'anthropic:claude-haiku-4-5', task: 'List the functions in app.py', status: 'running', turns: 1,
  llm_calls: 0, tool_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: '0', elapsed_seconds: 0.01, activity: null,
  error: null, detail: null, dropped_tools: [], ...extra,
});
const event = (params: DelegationParams): ToWebview => ({ type: 'event', event: { type: 'delegation', params } });

function run(...messages: ToWebview[]): ChatState {
  return messages.reduce(reduce, { ...initialChatState(), connected: true });
}

function cards(state: ChatState): DelegationCard[] {
  const turn = state.entries.find((e): e is TurnEntry => e.kind === 'turn');
  assert.ok(turn, 'no turn');
  return turn.delegations ?? [];
}

describe('delegation cards', () => {
  it('roll the workers\' cost up into their turn\'s, naming their share', () => {
    const worker = { costUsd: '0.002725' } as DelegationCard;
    // both amounts with the same decimals (the total read `$0.01` beside `$0.0027`)
    assert.equal(turnCostLabel('0.007575', [worker]), '$0.0103 incl. workers $0.0027');
    assert.equal(turnCostLabel('0.007575', [worker, { costUsd: '0' } as DelegationCard]), '$0.0103 incl. workers $0.0027');
    assert.equal(turnCostLabel('0', [{ costUsd: '0.00004' } as DelegationCard]), '$0.00004 incl. workers $0.00004');
    assert.equal(turnCostLabel('0.007575', []), '$0.0076');
    assert.equal(turnCostLabel('0.007575', undefined), '$0.0076');
    assert.equal(turnCostLabel(null, [worker]), null);
    // Calls cut short before the provider reported usage are charged an estimate, and say so:
    // once when all of the cost is estimated, naming the estimated part when only part is.
    assert.equal(turnCostLabel('0.001902', [], '0.001902'), '~$0.0019 (estimated)');
    assert.equal(turnCostLabel('0.007575', [{ ...worker, estimatedUsd: '0.0027' }], '0'),
      '$0.0103 incl. workers $0.0027 (~$0.0027 estimated)');
    assert.equal(turnCostLabel('0.004850', [{ ...worker, estimatedUsd: '0.002725' }], '0.004850'),
      '~$0.0076 incl. workers $0.0027 (estimated)');
    assert.equal(turnCostLabel('0.007575', [], '0'), '$0.0076');
  });

  const routed: ToWebview = { type: 'event', event: { type: 'routeDecided', params: route } };

  it('a card appears inside the planner turn and follows the worker live until it ends', () => {
    const started = run(routed, event(update()));
    assert.equal(cards(started).length, 1);
    assert.equal(cards(started)[0].status, 'running');
    const progressed = reduce(started, event(update({ phase: 'progress', llm_calls: 1, cost_usd: '0.00042', elapsed_seconds: 1.24,
      activity: 'calling read_file' })));
    const view = cardView(cards(progressed)[0]);
    assert.equal(view.title, 'fast · claude-haiku-4-5');
    assert.equal(view.meta, 'running · 1 turn · $0.00042 · 1.2s');
    assert.equal(view.note, 'calling read_file');
    assert.equal(view.canStop, true);
    const ended = reduce(progressed, event(update({ phase: 'ended', status: 'completed', cost_usd: '0.0009', elapsed_seconds: 2 })));
    assert.equal(cards(ended).length, 1, 'the same card, updated in place');
    assert.deepEqual([cardView(cards(ended)[0]).meta, cardView(cards(ended)[0]).canStop], ['done · 1 turn · $0.0009 · 2.0s', false]);
    const stopped = reduce(ended, event(update({ phase: 'ended', status: 'cancelled', cost_usd: '0.0009', estimated_usd: '0.0009',
      elapsed_seconds: 2 })));
    assert.equal(cardView(cards(stopped)[0]).meta, 'stopped · 1 turn · ~$0.0009 (estimated) · 2.0s',
      'a worker stopped before the provider reported usage: its cost is an estimate, and says so');
  });

  it("a turn's cards give their costs the same decimals, each keeping its value", () => {
    const [failed] = applyDelegation([], update({ phase: 'ended', status: 'failed', cost_usd: '0', elapsed_seconds: 0.2,
      error: 'worker_error' }), []);
    const [done] = applyDelegation([], update({ tool_use_id: 'toolu_2', phase: 'ended', status: 'completed', cost_usd: '0.00012',
      elapsed_seconds: 4.9 }), []);
    const costs = [failed.costUsd, done.costUsd];
    assert.deepEqual([cardView(failed, undefined, costs).meta, cardView(done, undefined, costs).meta],
      ['failed · 1 turn · $0.00000 · 0.2s', 'done · 1 turn · $0.00012 · 4.9s'], 'it read $0.00 beside $0.00012');
    assert.equal(cardView(failed).meta, 'failed · 1 turn · $0.00 · 0.2s', 'alone: as before');
  });

  it('a running worker\'s time counts on between the daemon\'s updates, and stops with the worker', () => {
    // The daemon reports the time with the worker's output only: one waiting on its model showed 0.3s for minutes.
    const [running] = applyDelegation([], update({ elapsed_seconds: 0.3 }), [], 1_000_000);
    assert.equal(cardView(running).meta, 'running · 1 turn · $0.00 · 0.3s', 'as reported, without a clock');
    assert.equal(cardView(running, 1_000_000).meta, 'running · 1 turn · $0.00 · 0.3s');
    assert.equal(cardView(running, 1_041_000).meta, 'running · 1 turn · $0.00 · 41.3s', '41 s later');
    const [ended] = applyDelegation([running], update({ phase: 'ended', status: 'completed', elapsed_seconds: 41.5 }), [], 1_041_200);
    assert.equal(cardView(ended, 1_100_000).meta, 'done · 1 turn · $0.00 · 41.5s', 'an ended worker\'s time is its own');
  });

  it('several delegate calls are several cards, in the order they started; other turns are untouched', () => {
    const state = run(routed, event(update()), event(update({ tool_use_id: 'toolu_2', worker_session_id: 'W2', tier: 'deep' })),
      event(update({ turn_id: 'T9', tool_use_id: 'toolu_3' })), event(update({ phase: 'progress', cost_usd: '0.01' })));
    assert.deepEqual(cards(state).map((c) => [c.toolUseId, c.tier, c.costUsd]), [['toolu_1', 'fast', '0.01'], ['toolu_2', 'deep', '0']]);
  });

  it('a worker the user started with /delegate is an entry of its own, toggled and stopped like any card', () => {
    const user = update({ turn_id: null, tool_use_id: 'user_1', source: 'user', task: 'explain this' });
    let state = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: '/delegate fast explain this' } }, event(user));
    const entry = state.entries[1];
    assert.ok(entry.kind === 'delegation');
    assert.deepEqual([entry.id, entry.card.task, entry.card.status], ['user_1', 'explain this', 'running']);
    state = toggleDelegation(state, 'user_1', 'user_1');
    state = reduce(state, { type: 'workerTranscript', turnId: 'user_1', toolUseId: 'user_1',
      transcript: { loading: false, messages: [{ who: 'worker', text: 'it returns 42' }], error: null } });
    state = markStopping(state, 'user_1', 'user_1');
    state = reduce(state, event({ ...user, phase: 'progress', cost_usd: '0.002' }));
    const card = state.entries.flatMap((e) => (e.kind === 'delegation' ? [e.card] : []));
    assert.equal(card.length, 1, 'updated in place');
    assert.deepEqual([card[0].open, card[0].transcript?.messages[0].text, card[0].stopping, card[0].costUsd],
      [true, 'it returns 42', true, '0.002']);
    assert.deepEqual(allCards(state).map((c) => [c.turnId, c.card.toolUseId]), [['user_1', 'user_1']]);
  });

  it('expanding loads the worker transcript; Stop shows stopping until the worker ends cancelled', () => {
    let state = run(routed, event(update()));
    state = toggleDelegation(state, 'T1', 'toolu_1');
    assert.deepEqual([cards(state)[0].open, cards(state)[0].transcript?.loading], [true, true]);
    state = reduce(state, { type: 'workerTranscript', turnId: 'T1', toolUseId: 'toolu_1',
      transcript: { loading: false, messages: [{ who: 'worker', text: 'found main()' }], error: null } });
    assert.equal(cards(state)[0].transcript?.messages[0].text, 'found main()');
    state = markStopping(state, 'T1', 'toolu_1');
    assert.deepEqual([cardView(cards(state)[0]).statusLabel, cardView(cards(state)[0]).canStop], ['stopping…', false]);
    state = reduce(state, event(update({ phase: 'ended', status: 'cancelled', error: 'cancelled_by_user',
      detail: 'the user stopped this worker' })));
    const view = cardView(cards(state)[0]);
    assert.deepEqual([view.statusLabel, view.note, view.noteTone], ['stopped', 'stopped: the user stopped this worker', 'error']);
    assert.equal(cards(state)[0].open, true, 'stays open');
    assert.equal(toggleCard(cards(state)[0]).open, false);
  });

  it('a Stop that was refused gives the card its Stop back and says why, until the worker ends', () => {
    let state = markStopping(run(routed, event(update())), 'T1', 'toolu_1');
    state = reduce(state, { type: 'stopRefused', turnId: 'T1', toolUseId: 'toolu_1',
      message: 'This turn is running in another editor window: stop it there.' });
    let view = cardView(cards(state)[0]);
    assert.deepEqual([view.statusLabel, view.canStop, view.note, view.noteTone], ['running', true,
      'Not stopped: This turn is running in another editor window: stop it there.', 'error']);
    state = reduce(state, event(update({ phase: 'progress', activity: 'reading app.py' })));
    assert.equal(cardView(cards(state)[0]).note, 'Not stopped: This turn is running in another editor window: stop it there.');
    state = markStopping(state, 'T1', 'toolu_1');
    assert.deepEqual([cardView(cards(state)[0]).statusLabel, cardView(cards(state)[0]).note], ['stopping…', 'reading app.py']);
    state = reduce(state, event(update({ phase: 'ended', status: 'completed' })));
    view = cardView(cards(state)[0]);
    assert.deepEqual([view.statusLabel, view.note], ['done', null]);
  });

  it('a delegation waiting for a worker slot shows queued, why and its place, can be stopped, then runs', () => {
    const waiting = update({ phase: 'queued', status: 'queued', worker_session_id: '', worker_turn_id: null, model: null, turns: 0,
      detail: 'waiting for a free worker: 2 of 2 running; 1 ahead of it', queue: { position: 2, running: 2, limit: 2 } });
    let state = run(routed, event(waiting));
    let view = cardView(cards(state)[0]);
    assert.deepEqual([cards(state)[0].status, view.statusLabel, view.title, view.note, view.noteTone, view.canStop],
      ['queued', 'queued', 'fast · waiting for a worker slot', 'waiting for a free worker: 2 of 2 running; 1 ahead of it', 'activity', true]);
    assert.ok(view.meta.startsWith('queued · 0 turns'));
    // the line moves: the same card, its new place
    state = reduce(state, event({ ...waiting, detail: 'waiting for a free worker: 2 of 2 running', queue: { position: 1, running: 2, limit: 2 } }));
    assert.deepEqual([cards(state).length, cards(state)[0].queue?.position, cardView(cards(state)[0]).note],
      [1, 1, 'waiting for a free worker: 2 of 2 running']);
    // Stop on a queued card: stopping until it ends (the webview names it by its planner turn and call)
    const stopping = markStopping(state, 'T1', 'toolu_1');
    assert.deepEqual([cardView(cards(stopping)[0]).statusLabel, cardView(cards(stopping)[0]).canStop], ['stopping…', false]);
    const stopped = reduce(stopping, event({ ...waiting, phase: 'ended', status: 'cancelled', error: 'cancelled_by_user',
      detail: 'the user stopped it before it started', queue: null }));
    assert.deepEqual([cardView(cards(stopped)[0]).statusLabel, cardView(cards(stopped)[0]).title],
      ['stopped', 'fast · not started']);
    // or it starts: running, on its model, no longer in line
    state = reduce(state, event(update()));
    view = cardView(cards(state)[0]);
    assert.deepEqual([cards(state)[0].status, cards(state)[0].queue, view.title, view.canStop],
      ['running', null, 'fast · claude-haiku-4-5', true]);
    assert.deepEqual(parseFromWebview({ type: 'stopDelegation', turnId: 'T1', toolUseId: 'toolu_1' }),
      { type: 'stopDelegation', turnId: 'T1', toolUseId: 'toolu_1' });
    assert.equal(parseFromWebview({ type: 'stopDelegation', turnId: 'T1' }), undefined);
  });

  it('calls beyond the worker limit, announced queued before the first ones start, show in the order of the calls', () => {
    const call = (id: string): ToWebview => ({ type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: 'T1',
      kind: 'tool_call', tool: { id, name: 'delegate', status: 'running' } } } });
    const queued = update({ phase: 'queued', status: 'queued', tool_use_id: 'toolu_3', worker_session_id: '', worker_turn_id: null,
      model: null, turns: 0, queue: { position: 1, running: 1, limit: 1 } });
    const state = run(routed, call('toolu_1'), call('toolu_2'), call('toolu_3'),
      event({ ...queued, tool_use_id: 'toolu_2' }), event({ ...queued, queue: { position: 2, running: 1, limit: 1 } }),
      event(update()), event(update({ phase: 'ended', status: 'completed' })), event(update({ tool_use_id: 'toolu_2' })));
    assert.deepEqual(cards(state).map((c) => [c.toolUseId, c.status]),
      [['toolu_1', 'completed'], ['toolu_2', 'running'], ['toolu_3', 'queued']]);
    // a call the turn's tools do not name (an older daemon) goes last, as before
    assert.deepEqual(applyDelegation(cards(state), update({ tool_use_id: 'toolu_9' }), ['toolu_1']).map((c) => c.toolUseId),
      ['toolu_1', 'toolu_2', 'toolu_3', 'toolu_9']);
  });

  it('a queued delegation whose start then waits for approval says so, and can still be stopped', () => {
    const waiting = update({ phase: 'queued', status: 'queued', worker_session_id: '', worker_turn_id: null, model: null, turns: 0,
      detail: 'waiting for a free worker: 1 of 1 running', queue: { position: 1, running: 1, limit: 1 } });
    const asking = { ...waiting, phase: 'awaiting_approval' as const, status: 'awaiting_approval' as const,
      detail: 'waiting for your approval to start', queue: null };
    const state = run(routed, event(waiting), event(asking));
    const view = cardView(cards(state)[0]);
    // it said 'queued · waiting for a free worker' while the approval question was on screen
    assert.deepEqual([cards(state).length, cards(state)[0].queue, view.statusLabel, view.title, view.note, view.noteTone, view.canStop],
      [1, null, 'awaiting approval', 'fast · waiting for approval', 'waiting for your approval to start', 'activity', true]);
    assert.ok(view.meta.startsWith('awaiting approval · 0 turns'));
    assert.ok(waitsToStart('awaiting_approval') && waitsToStart('queued') && !waitsToStart('running'));
    const stopping = markStopping(state, 'T1', 'toolu_1');
    assert.deepEqual([cardView(cards(stopping)[0]).statusLabel, cardView(cards(stopping)[0]).canStop], ['stopping…', false]);
  });

  it('a reload while a delegation still waits shows it queued; once its turn is over, as it ended', () => {
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_q', name: 'delegate', input: { tier: 'fast', task: 'tidy' } }] }];
    const record = { tool_use_id: 'toolu_q', worker_session_id: '', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z',
      task: 'tidy', tier: 'fast', worker_tier: null, tier_floor: null, floor_applied: false, model: null, status: 'queued' as const,
      error: null, detail: 'waiting for a free worker (2 may run at once)', queued_at: '2026-01-01T00:00:00Z' };
    const [queued] = storedDelegations(messages, [], 'running', [record]);
    assert.deepEqual([queued.status, cardView(queued).note, cardView(queued).canStop],
      ['queued', 'waiting for a free worker (2 may run at once)', true]);
    const [after] = storedDelegations(messages, [], 'cancelled', [record]);
    assert.equal(after.status, 'cancelled');
    // Its slot came and its start waits for the user's answer: reloaded then, it says so, still stoppable.
    const asking = { ...record, status: 'awaiting_approval' as const, detail: 'waiting for your approval to start' };
    const [asked] = storedDelegations(messages, [], 'running', [asking]);
    assert.deepEqual([asked.status, cardView(asked).statusLabel, cardView(asked).note, cardView(asked).canStop],
      ['awaiting_approval', 'awaiting approval', 'waiting for your approval to start', true]);
  });

  it("another window's delegation not started yet (its approval asked there) waits to start in another window", () => {
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_w', name: 'delegate', input: { tier: 'fast', task: 'rename it' } }] }];
    // No result, no worker, no record yet, in a turn still running: that window asks or starts it (Neovim says the same).
    const [waiting] = storedDelegations(messages, [], 'running');
    const view = cardView(waiting);
    assert.deepEqual([view.title, view.statusLabel, view.meta, view.canStop],
      ['fast · waiting to start', 'in another window', 'in another window · 0 turns · $0.00', false],
      'it read "fast · choosing a model" · "running"');
    // Once its worker started (the worker's cost row), it runs.
    const worker = { session_id: 'W1', parent_tool_use_id: 'toolu_w', title: 'rename it', model: 'anthropic:claude-haiku-4-5',
      turns: 0, cost_usd: '0' };
    const [started] = storedDelegations(messages, [worker], 'running');
    assert.deepEqual([started.status, cardView(started).statusLabel], ['running', 'running']);
  });

  it('a card the user expanded is still expanded when the panel is reopened, its transcript fetched again', () => {
    let state = toggleDelegation(run(routed, event(update())), 'T1', 'toolu_1');
    state = reduce(state, { type: 'workerTranscript', turnId: 'T1', toolUseId: 'toolu_1',
      transcript: { loading: false, messages: [{ who: 'worker', text: 'found main()' }], error: null } });
    // Reopened while the planner is still answering: the reset leaves the running turn out, the replay rebuilds it.
    state = reduce(state, { type: 'reset', folders: [], workspace: 'file:///w', sessionId: 'S1', sessionTitle: null, entries: [] });
    state = [routed, event(update({ phase: 'progress', activity: 'calling read_file' }))].reduce(reduce, state);
    assert.deepEqual([cards(state)[0].open, cards(state)[0].transcript?.loading], [true, true]);
    // Reloaded once it is stored: the card comes back from the transcript, expanded.
    const stored = { ...cards(state)[0], open: false, transcript: null };
    const turnEntry = state.entries.find((e): e is TurnEntry => e.kind === 'turn');
    assert.ok(turnEntry);
    state = reduce(state, { type: 'reset', folders: [], workspace: 'file:///w', sessionId: 'S1', sessionTitle: null,
      entries: [{ ...turnEntry, delegations: [stored] }] });
    assert.deepEqual([cards(state)[0].open, cards(state)[0].transcript?.loading], [true, true]);
    state = toggleDelegation(state, 'T1', 'toolu_1');
    state = reduce(state, { type: 'reset', folders: [], workspace: 'file:///w', sessionId: 'S1', sessionTitle: null,
      entries: [{ ...turnEntry, delegations: [stored] }] });
    assert.equal(cards(state)[0].open, false, 'collapsed by the user: stays collapsed');
  });

  it('a failed worker names its failure; a card without a model says so', () => {
    const failed = applyDelegation([], update({ phase: 'ended', status: 'failed', model: null, worker_turn_id: null, turns: 0,
      error: 'no_model_available_for_tier' }));
    const view = cardView(failed[0]);
    assert.equal(view.title, 'fast · not started', 'it ended: no longer choosing a model');
    assert.equal(view.note, 'no_model_available_for_tier');
    assert.equal(view.canStop, false);
    const stopped = applyDelegation([], update({ phase: 'ended', status: 'cancelled', model: null, worker_session_id: '',
      worker_turn_id: null, error: 'cancelled_by_user', detail: 'cancelled while waiting for approval' }));
    assert.deepEqual([cardView(stopped[0]).title, cardView(stopped[0]).statusLabel], ['fast · not started', 'stopped']);
  });

  it('a failed worker\'s transcript ends with its failure, live and rebuilt; a worker that did its task or was denied, not', () => {
    const failed = applyDelegation([], update({ phase: 'ended', status: 'failed', error: 'provider_error',
      detail: 'anthropic answered 400: prompt is too long' }))[0];
    assert.deepEqual(transcriptEnd(failed), { label: 'Failed', text: 'provider_error: anthropic answered 400: prompt is too long' });
    const use: Message = { id: 'M2', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'Count' } },
        { type: 'tool_use', id: 'toolu_2', name: 'delegate', input: { tier: 'fast', task: 'Sum' } }] };
    const results: Message = { ...use, id: 'M3', role: 'tool', content: [
      { type: 'tool_result', tool_use_id: 'toolu_1', content: 'delegate failed: timeout\nwhat it did', is_error: true },
      { type: 'tool_result', tool_use_id: 'toolu_2', content: '42', is_error: false }] };
    const [rebuilt, done] = storedDelegations([use, results], [], 'completed');
    assert.deepEqual(transcriptEnd(rebuilt), { label: 'Failed', text: 'timeout' });
    assert.equal(transcriptEnd(done), null);
    assert.equal(transcriptEnd(applyDelegation([], update({ phase: 'ended', status: 'failed', error: 'approval_denied',
      detail: 'not now' }))[0]), null, 'denied: nothing ran, its card says so');
  });

  it('a planner\'s delegation that ended before its worker was routed comes back as it ended, its reason included', () => {
    // As switchman/session lists them: no model, no worker tier, worker session "" (approval denied, stopped while queued).
    const messages: Message[] = [
      { id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null, content: [
        { type: 'tool_use', id: 'toolu_no', name: 'delegate', input: { tier: 'fast', task: 'rewrite main' } },
        { type: 'tool_use', id: 'toolu_q', name: 'delegate', input: { tier: 'fast', task: 'sub-task' } }] },
      { id: 'M2', session_id: 'S1', turn_id: 'T1', role: 'tool', created_at: '', model: null, content: [
        { type: 'tool_result', tool_use_id: 'toolu_no', content: 'delegate failed: approval_denied\n\nThe user denied this delegation', is_error: true },
        { type: 'tool_result', tool_use_id: 'toolu_q', content: 'delegate failed: cancelled_by_user', is_error: true }] },
    ];
    const never = (tool_use_id: string, status: 'failed' | 'cancelled', error: string, detail: string) => ({ tool_use_id,
      worker_session_id: '', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z', task: 'rewrite main', tier: 'fast',
      worker_tier: null, tier_floor: null, floor_applied: false, model: null, status, error, detail });
    const [denied, queued] = storedDelegations(messages, [], 'completed', [
      never('toolu_no', 'failed', 'approval_denied', 'not that one'),
      never('toolu_q', 'cancelled', 'cancelled_by_user', "the planner's turn was cancelled before this worker started")]);
    // The user's own Deny: not a failure in red, and nothing ran (no "0 turns · $0.00 · 0.3s").
    assert.deepEqual([denied.workerSessionId, cardView(denied).title, cardView(denied).statusLabel, cardView(denied).note,
      cardView(denied).noteTone, cardView(denied).meta, cardView(denied).denied],
      [null, 'fast · not started', 'denied', 'Denied: not that one', null, 'denied', true]);
    assert.equal(cardView({ ...denied, detail: 'the user denied it' }).note, 'Denied; no worker was started.', 'no reason given');
    assert.equal(cardView({ ...denied, detail: 'the editor could not be asked' }).note, 'Denied: the editor could not be asked');
    assert.equal(cardView(queued).denied, false);
    assert.deepEqual([cardView(queued).title, cardView(queued).statusLabel, cardView(queued).note],
      ['fast · not started', 'stopped', "stopped: the planner's turn was cancelled before this worker started"]);
    // The planner's turn was cancelled before the call had a result: the record still says why.
    const [unanswered] = storedDelegations(messages.slice(0, 1), [], 'cancelled', [
      never('toolu_no', 'cancelled', 'cancelled_by_user', "the planner's turn was cancelled before this worker started")]);
    assert.deepEqual([cardView(unanswered).statusLabel, cardView(unanswered).note],
      ['stopped', "stopped: the planner's turn was cancelled before this worker started"]);
    // The turn stored its placeholder for the call it stopped waiting for: that is not how the
    // delegation ended (it showed "failed", with the note "Cancelled.").
    const placeholder: Message = { ...messages[1], content: [{ type: 'tool_result', tool_use_id: 'toolu_no', content: 'Cancelled.', is_error: true }] };
    const [stopped] = storedDelegations([messages[0], placeholder], [], 'cancelled', [
      never('toolu_no', 'cancelled', 'cancelled_by_user', 'the planner was stopped')]);
    assert.deepEqual([cardView(stopped).statusLabel, cardView(stopped).note], ['stopped', 'stopped: the planner was stopped']);
    assert.equal(storedDelegations([messages[0], placeholder], [], 'cancelled')[0].status, 'cancelled', 'no record: the turn says');
  });

  it('rebuilds cards from a stored transcript: delegate calls, worker cost and model, outcome', () => {
    const message = (id: string, role: Message['role'], content: Message['content']): Message => ({
      id, session_id: 'S1', turn_id: 'T1', role, created_at: '', model: null, content });
    const detail: SessionDetail = {
      session: { id: 'S1', workspace: 'file:///w', title: 'plan', created_at: '', updated_at: '', sticky_model: null, pending_swap: null,
        last_model: null, turn_count: 1, cost_usd: '0.01', is_worker: false, parent_session_id: null, parent_tool_use_id: null },
      turns: [{ id: 'T1', session_id: 'S1', index: 1, status: 'completed', model: 'anthropic:claude-opus-4-7', started_at: '',
        ended_at: '', usage: null, cost_usd: '0.01', llm_calls: 2, tool_calls: 2, error: null, summary: null, decision: null }],
      messages: [
        message('M1', 'user', [{ type: 'text', text: 'plan' }]),
        message('M2', 'assistant', [
          { type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'List functions', context: { mode: 'minimal' } } },
          { type: 'tool_use', id: 'toolu_2', name: 'delegate', input: { tier: 'deep', task: 'Review' } },
          { type: 'tool_use', id: 'toolu_3', name: 'delegate', input: { tier: 'fast', task: 'Count' } }]),
        message('M3', 'tool', [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'main()', is_error: false },
          { type: 'tool_result', tool_use_id: 'toolu_2', content: 'delegate failed: timeout\nmore', is_error: true },
          { type: 'tool_result', tool_use_id: 'toolu_3', content: 'delegate failed: cancelled_by_user', is_error: true }]),
        message('M4', 'assistant', [{ type: 'text', text: 'Done.' }]),
      ],
      cost: { total_usd: '0.01', by_model: [], planner_usd: '0.008', workers_usd: '0.002',
        workers: [{ session_id: 'W1', parent_tool_use_id: 'toolu_1', model: 'anthropic:claude-haiku-4-5', cost_usd: '0.002', turns: 1 }] },
    };
    const turn = transcriptEntries(detail).find((e): e is TurnEntry => e.kind === 'turn');
    assert.ok(turn);
    assert.deepEqual(turn.delegations?.map((c) => [c.toolUseId, c.tier, c.task, c.status, c.workerSessionId, c.model, c.costUsd, c.error]), [
      ['toolu_1', 'fast', 'List functions', 'completed', 'W1', 'anthropic:claude-haiku-4-5', '0.002', null],
      ['toolu_2', 'deep', 'Review', 'failed', null, null, '0', 'timeout'],
      ['toolu_3', 'fast', 'Count', 'cancelled', null, null, '0', 'cancelled_by_user'],
    ]);
    assert.equal(storedDelegations(detail.messages.slice(0, 2), [], 'cancelled')[0].status, 'cancelled');
  });

  it('a reloaded card keeps the part of its worker\'s cost that was estimated, and so does its turn\'s cost', () => {
    // The worker's call was cut short (the daemon was killed): its cost is Switchman's estimate.
    const use: Message = { id: 'M2', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'Count' } }] };
    const worker = { session_id: 'W1', parent_tool_use_id: 'toolu_1', model: 'anthropic:claude-haiku-4-5', cost_usd: '0.00028',
      turns: 1, estimated_usd: '0.00028' };
    const cards = storedDelegations([use], [worker], 'interrupted');
    assert.equal(cardView(cards[0]).meta, 'failed · 1 turn · ~$0.00028 (estimated)');
    assert.equal(turnCostLabel('0.00008', cards, '0'), '$0.00036 incl. workers $0.00028 (~$0.00028 estimated)');
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', tier: 'fast', task: 'Count', status: 'failed' as const,
      model: worker.model, error: 'interrupted', detail: null };
    assert.equal(recordedDelegation(record as never, [worker]).estimatedUsd, '0.00028');
  });

  it('a worker running when Switchman stopped with the window comes back stopped in words, not as the user\'s cancelled_by_user', () => {
    const ran = 'Switchman stopped while this worker ran (the editor closed, reloaded or restarted it)';
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', source: 'planner' as const, started_at: '', task: 'Count',
      tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false, model: 'anthropic:claude-haiku-4-5',
      status: 'cancelled' as const, error: 'cancelled_by_user', detail: ran };
    const card = recordedDelegation(record, []);
    assert.deepEqual([cardView(card).meta.split(' · ')[0], cardView(card).note], ['stopped', `stopped: ${ran}`]);
    assert.deepEqual(transcriptEnd(card), { label: 'Stopped', text: ran });
  });

  it('shows the tier the worker runs on, and that the tier floor capped the one asked for', () => {
    const asked = run(routed, event(update({ tier: 'deep', model: null, status: 'running' })));
    assert.equal(cardView(cards(asked)[0]).title, 'deep · choosing a model', 'not routed yet: the tier asked for');
    const capped = reduce(asked, event(update({ tier: 'deep', worker_tier: 'balanced', tier_floor: 'balanced', floor_applied: true,
      model: 'anthropic:claude-sonnet-4-6' })));
    const view = cardView(cards(capped)[0]);
    assert.equal(view.title, 'balanced (capped from deep) · claude-sonnet-4-6');
    assert.match(view.tierNote ?? '', /Asked for deep; the tier floor .* balanced/);
    const progressed = reduce(capped, event(update({ phase: 'progress', tier: 'deep', model: 'anthropic:claude-sonnet-4-6' })));
    assert.equal(cardView(cards(progressed)[0]).title, 'balanced (capped from deep) · claude-sonnet-4-6',
      'an update without the tier fields keeps what the worker was routed with');
    const uncapped = run(routed, event(update({ worker_tier: 'fast', tier_floor: 'deep', floor_applied: false })));
    assert.deepEqual([cardView(cards(uncapped)[0]).title, cardView(cards(uncapped)[0]).tierNote], ['fast · claude-haiku-4-5', null]);
  });

  it('a worker cut off by the daemon\'s death says interrupted on its reloaded card', () => {
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'Count lines' } }] }];
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z',
      task: 'Count lines', tier: 'fast', worker_tier: 'fast', tier_floor: 'balanced', floor_applied: false,
      model: 'anthropic:claude-haiku-4-5', status: 'failed' as const, error: 'interrupted', detail: 'Switchman stopped while…' };
    const [card] = storedDelegations(messages, [], 'interrupted', [record]);
    assert.deepEqual([card.status, cardView(card).note], ['failed', 'interrupted']);
  });

  it('a card rebuilt after a reload shows how long its worker ran, when the session dated its end', () => {
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'Count lines' } },
        { type: 'tool_result', tool_use_id: 'toolu_1', content: '42 lines', is_error: false }] }];
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z',
      task: 'Count lines', tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false,
      model: 'anthropic:claude-haiku-4-5', status: 'completed' as const, error: null, detail: null,
      ended_at: '2026-01-01T00:00:02.350Z' };
    const [card] = storedDelegations(messages, [], 'completed', [record]);
    assert.equal(cardView(card).meta, 'done · 0 turns · $0.00 · 2.4s');
    assert.equal(cardView(recordedDelegation({ ...record, source: 'user' }, [])).meta, 'done · 0 turns · $0.00 · 2.4s');
    // no end recorded (the daemon died; or an older daemon): no time rather than a wrong one
    const [unknown] = storedDelegations(messages, [], 'completed', [{ ...record, ended_at: null }]);
    assert.equal(cardView(unknown).meta, 'done · 0 turns · $0.00');
    // one that never started a worker (stopped while it waited) ran for no time: none is shown
    const stopped = { ...record, worker_session_id: '', status: 'cancelled' as const, error: 'cancelled_by_user' };
    assert.equal(cardView(recordedDelegation(stopped, [])).meta, 'stopped · 0 turns · $0.00');
  });

  it('a delegation whose end a gone daemon never recorded says failed — interrupted, though its planner\'s turn was cancelled', () => {
    // As switchman/session lists it (4445c33): its worker's turn ended, its own end was never written.
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'Count lines' } }] }];
    const lost = 'Switchman stopped (the daemon exited or was killed) before this delegation\'s end was recorded; '
      + 'what its worker did is kept in its transcript.';
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z',
      task: 'Count lines', tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false,
      model: 'anthropic:claude-haiku-4-5', status: 'failed' as const, error: 'interrupted', detail: lost };
    const [card] = storedDelegations(messages, [], 'cancelled', [record]);
    assert.deepEqual([card.status, cardView(card).statusLabel, cardView(card).note], ['failed', 'failed', `interrupted: ${lost}`]);
    // as the user's own delegation's card shows the same record
    const mine = recordedDelegation({ ...record, source: 'user' }, []);
    assert.deepEqual([cardView(mine).statusLabel, cardView(mine).note], [cardView(card).statusLabel, cardView(card).note]);
  });

  it('names the rule that chose the worker\'s model instead of its tier, live and after a reload', () => {
    const ruled = run(routed, event(update({ model: 'anthropic:claude-opus-4-7', routed_by: 'rule: docs questions' })));
    const view = cardView(cards(ruled)[0]);
    assert.equal(view.title, 'fast · claude-opus-4-7 (rule: docs questions)');
    assert.match(view.tierNote ?? '', /rule: docs questions chose claude-opus-4-7 .* the fast tier's model was not used/);
    const later = reduce(ruled, event(update({ phase: 'progress', model: 'anthropic:claude-opus-4-7' })));
    assert.equal(cardView(cards(later)[0]).title, 'fast · claude-opus-4-7 (rule: docs questions)', 'kept by later updates');
    assert.equal(cardView(cards(run(routed, event(update({ routed_by: null }))))[0]).title, 'fast · claude-haiku-4-5');
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'fast', task: 'Summarise README.md' } }] }];
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z',
      task: 'Summarise README.md', tier: 'fast', worker_tier: null, tier_floor: 'deep', floor_applied: false,
      model: 'anthropic:claude-opus-4-7', routed_by: 'rule: docs questions', status: 'completed' as const, error: null, detail: null };
    assert.equal(cardView(storedDelegations(messages, [], 'completed', [record])[0]).title,
      'fast · claude-opus-4-7 (rule: docs questions)');
  });

  it('a reloaded card keeps the capped tier from the session\'s record of the delegation', () => {
    const messages: Message[] = [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'assistant', created_at: '', model: null,
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'delegate', input: { tier: 'deep', task: 'Prove it' } }] }];
    const record = { tool_use_id: 'toolu_1', worker_session_id: 'W1', source: 'planner' as const, started_at: '2026-01-01T00:00:00Z',
      task: 'Prove it', tier: 'deep', worker_tier: 'balanced', tier_floor: 'balanced', floor_applied: true,
      model: 'anthropic:claude-sonnet-4-6', status: 'completed' as const, error: null, detail: null };
    const [card] = storedDelegations(messages, [], 'completed', [record]);
    assert.deepEqual([cardView(card).title, card.workerSessionId], ['balanced (capped from deep) · claude-sonnet-4-6', 'W1']);
    const [old] = storedDelegations(messages, [], 'completed');
    assert.equal(cardView(old).title, 'deep · not started', 'an older daemon without records: the call\'s own tier');
  });

  it('a worker session becomes the card transcript: task, worker text, tools', () => {
    const detail = {
      session: {} as SessionDetail['session'], turns: [], cost: {} as SessionDetail['cost'],
      messages: [
        { id: 'A', session_id: 'W1', turn_id: 'WT1', role: 'user', created_at: '', model: null, content: [{ type: 'text', text: 'List functions' }] },
        { id: 'B', session_id: 'W1', turn_id: 'WT1', role: 'assistant', created_at: '', model: null,
          content: [{ type: 'tool_use', id: 't', name: 'read_file', input: { path: 'app.py' } }] },
        { id: 'C', session_id: 'W1', turn_id: 'WT1', role: 'tool', created_at: '', model: null,
          content: [{ type: 'tool_result', tool_use_id: 't', content: 'def main()\n...', is_error: false }] },
        { id: 'D', session_id: 'W1', turn_id: 'WT1', role: 'assistant', created_at: '', model: null, content: [{ type: 'text', text: '**main**' }] },
      ],
    } as SessionDetail;
    assert.deepEqual(workerTranscript(detail).messages, [
      { who: 'task', text: 'List functions' },
      { who: 'tool', text: 'read_file {"path":"app.py"}' },
      { who: 'tool', text: '✓ def main()' },
      { who: 'worker', text: '**main**' },
    ]);
  });

  it("a worker's command shows its exit status and last lines in the card transcript, as the planner's chat does", () => {
    const printed = Array.from({ length: 20 }, (_, i) => `ok ${i + 1}`);
    const result = (id: string, content: string, is_error: boolean, output_shown?: boolean) => ({
      id, session_id: 'W1', turn_id: 'WT1', role: 'tool', created_at: '', model: null,
      content: [{ type: 'tool_result', tool_use_id: id, content, is_error, ...(output_shown === undefined ? {} : { output_shown }) }] });
    const detail = {
      session: {} as SessionDetail['session'], turns: [], cost: {} as SessionDetail['cost'],
      messages: [
        result('t1', `Exit status 3.\n${printed.join('\n')}\nFAILED test_login\n`, true, true),
        result('t2', 'Exit status 0.\n\x1b[32mhello\x1b[0m\n', false, true),
        result('t3', 'Exit status 0.\n', false, true),
        result('t4', 'def main()\n...', false),
      ],
    } as SessionDetail;
    assert.deepEqual(workerTranscript(detail).messages.map((m) => m.text), [
      ['✗ Exit status 3.', '… 13 earlier lines', 'ok 14', 'ok 15', 'ok 16', 'ok 17', 'ok 18', 'ok 19', 'ok 20', 'FAILED test_login'].join('\n'),
      '✓ Exit status 0.\nhello',
      '✓ Exit status 0.',
      '✓ def main()',
    ]);
  });

  it('accepts only well-formed worker messages from the webview', () => {
    assert.deepEqual(parseFromWebview({ type: 'stopWorker', workerTurnId: 'WT1' }), { type: 'stopWorker', workerTurnId: 'WT1' });
    assert.equal(parseFromWebview({ type: 'stopWorker' }), undefined);
    assert.equal(parseFromWebview({ type: 'workerTranscript', turnId: 'T1', toolUseId: 'toolu_1' }), undefined);
    assert.equal(parseFromWebview({ type: 'workerTranscript', turnId: 'T1', toolUseId: 3, workerSessionId: 'W1' }), undefined);
    assert.ok(parseFromWebview({ type: 'workerTranscript', turnId: 'T1', toolUseId: 'toolu_1', workerSessionId: 'W1' }));
  });

  it('worker sessions are hidden from the Sessions view unless the setting is on', () => {
    assert.equal(readShowWorkerSessions({ get: <T>(_key: string, fallback: T) => fallback }), false);
    assert.equal(readShowWorkerSessions({ get: <T>() => true as T }), true);
  });
});
