import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { explanationMessage } from '../../src/chat/chain';
import { initialChatState, parseFromWebview, sessionTitle, type ChatState, type Entry, type ToWebview, type TurnEntry } from '../../src/chat/messages';
import { busyPreview } from '../../src/chat/preview';
import { actionableTurn, rateable, ratingAsked, reduce, refusedDraft, toggleExplanation, unexplained, withRetryButton } from '../../src/chat/reducer';
import type { ChatResult } from '../../src/protocol/types';

const route = { session_id: 'S1', turn_id: 'T1', model: 'anthropic:claude-haiku-4-5', summary: 'rule: fast for commits',
  banners: [], decision: null };
const text = (t: string): ToWebview => ({ type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: 'T1', kind: 'text', text: t } } });
const finished: ChatResult = { kind: 'turn', session_id: 'S1', turn_id: 'T1', status: 'completed', model: 'anthropic:claude-haiku-4-5',
  text: 'Hello **there**', usage: null, cost_usd: '0.0029', error: null, summary: 'rule: fast for commits', banners: [] };

function run(...messages: ToWebview[]): ChatState {
  return messages.reduce(reduce, { ...initialChatState(), connected: true });
}

function turn(state: ChatState): TurnEntry {
  const found = state.entries.find((e): e is TurnEntry => e.kind === 'turn');
  assert.ok(found, 'no turn entry');
  return found;
}

describe('chat reducer', () => {
  it('marks a turn that failed at its provider as one to retry, and no other failure', () => {
    const failed = (code: string): ChatResult => ({ ...finished, status: 'failed', text: '',
      error: { code, message: 'anthropic: server error (500). Your message is saved; send it again to retry.' } });
    const sent = { type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } } as const;
    const end = (r: ChatResult): ToWebview => ({ type: 'event', event: { type: 'result', localId: 'L1', result: r } });
    assert.equal(turn(run(sent, end(failed('provider_error')))).retryable, true);
    assert.equal(turn(run(sent, end(failed('internal_error')))).retryable, undefined);
    assert.equal(turn(run(sent, end(finished))).retryable, undefined);
    assert.deepEqual(parseFromWebview({ type: 'retry', turnId: 'T1' }), { type: 'retry', turnId: 'T1' });
    // Beside its Retry button the daemon's "send it again" names the button.
    assert.equal(withRetryButton(failed('provider_error').error?.message ?? ''),
      'anthropic: server error (500). Your message is saved; press Retry to send it again.');
    assert.equal(withRetryButton('Switchman stopped while this turn was running (…). Your message and the answer written by then '
      + 'are kept; send your message again to continue.'), 'Switchman stopped while this turn was running (…). Your message and '
      + 'the answer written by then are kept; press Retry to send it again.');
    assert.equal(withRetryButton('the API key was refused'), 'the API key was refused');
    assert.equal(parseFromWebview({ type: 'retry' }), undefined);
  });

  it('streams a turn: user message, badge, text deltas, final result', () => {
    const sent = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'commit msg' } });
    assert.deepEqual(sent.pending, { localId: 'L1', text: 'commit msg', turnId: null });
    const routed = reduce(sent, { type: 'event', event: { type: 'routeDecided', params: route } });
    assert.equal(turn(routed).status, 'running');
    assert.equal(routed.pending?.turnId, 'T1');
    assert.equal(routed.sessionId, 'S1');
    const streaming = [text('Hello '), text('**there**')].reduce(reduce, routed);
    assert.equal(turn(streaming).text, 'Hello **there**');
    const done = reduce(streaming, { type: 'event', event: { type: 'result', localId: 'L1', result: finished } });
    assert.equal(done.pending, null);
    assert.equal(turn(done).status, 'completed');
    assert.equal(turn(done).costUsd, '0.0029');
    assert.deepEqual(done.entries.map((e) => e.kind), ['user', 'turn']);
  });

  it('keeps a failed turn\'s error message', () => {
    const failed = run(
      { type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } },
      { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, status: 'failed', text: '',
        error: { code: 'provider_error', message: 'anthropic: server error (500)' } } } },
    );
    assert.equal(turn(failed).status, 'failed');
    assert.equal(turn(failed).error?.message, 'anthropic: server error (500)');
  });

  it('shows a JSON-RPC error plainly and frees the input', () => {
    const state = run(
      { type: 'event', event: { type: 'userSent', localId: 'L1', text: '@nosuch hi' } },
      { type: 'event', event: { type: 'failed', localId: 'L1', failure: { code: 'unknown_alias', message: 'Unknown model alias \'@nosuch\'.' } } },
    );
    assert.equal(state.pending, null);
    assert.deepEqual(state.entries.at(-1), { kind: 'error', id: 'L1:error', code: 'unknown_alias', message: 'Unknown model alias \'@nosuch\'.' });
  });

  it('titles the chat by its first message that started a turn, as the daemon does: not a command, not a refused one', () => {
    const events: ToWebview[] = [
      { type: 'event', event: { type: 'userSent', localId: 'L1', text: '/help' } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, kind: 'command', turn_id: null, model: null, text: 'Commands: …' } } },
      { type: 'event', event: { type: 'userSent', localId: 'L2', text: '@nosuch hello' } },
      { type: 'event', event: { type: 'failed', localId: 'L2', failure: { code: 'unknown_alias', message: 'Unknown model alias.' } } },
    ];
    let state = events.reduce(reduce, initialChatState());
    assert.equal(sessionTitle(state), 'New chat', 'no turn yet: the daemon has no title for it either');
    state = reduce(state, { type: 'event', event: { type: 'userSent', localId: 'L3', text: 'fix the login check' } });
    assert.equal(sessionTitle(state), 'fix the login check');
    const aliased = reduce(initialChatState(), { type: 'event', event: { type: 'userSent', localId: 'L1', text: '@opus  explain #file\nAttached: a.py' } });
    assert.equal(sessionTitle(aliased), 'explain #file', 'the @alias chose a model: no title word, as the daemon titles it');
    const literal = reduce(initialChatState(), { type: 'event', event: { type: 'userSent', localId: 'L1', text: '\\@opus is slow' } });
    assert.equal(sessionTitle(literal), '@opus is slow');
  });

  it('shows a refused slash command as an error and gives its text back to the input', () => {
    const sent = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: '/modle opus' } });
    const answer: ToWebview = { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, kind: 'command',
      turn_id: null, model: null, status: 'failed', text: 'Unknown command /modle — did you mean /model?',
      error: { code: 'unknown_command', message: 'Unknown command /modle — did you mean /model?' } } } };
    const state = reduce(sent, answer);
    assert.deepEqual(state.entries.at(-1), { kind: 'command', id: 'L1:command', text: 'Unknown command /modle — did you mean /model?', failed: true });
    assert.equal(refusedDraft(sent.pending, answer), '/modle opus');
    const ok: ToWebview = { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, kind: 'command', turn_id: null, model: null, text: 'ok' } } };
    assert.equal(refusedDraft(sent.pending, ok), null, 'a command that ran keeps the input empty');
    const refused: ToWebview = { type: 'event', event: { type: 'failed', localId: 'L1', failure: { code: 'unknown_tier', message: 'No tier ultra.' } } };
    assert.equal(refusedDraft(sent.pending, refused), '/modle opus');
    const broken: ToWebview = { type: 'event', event: { type: 'failed', localId: 'L1', failure: { code: 'provider_error', message: 'down' } } };
    assert.equal(refusedDraft(sent.pending, broken), null, 'a message that was sent is in the transcript already');
    const attached = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: '/modle opus\nAttached: a.py', draft: '/modle opus' } });
    assert.equal(refusedDraft(attached.pending, refused), '/modle opus', 'as typed, without the attachment labels');
    const other: ToWebview = { type: 'event', event: { type: 'failed', localId: 'L2', failure: { code: 'unknown_alias', message: 'x' } } };
    assert.equal(refusedDraft(sent.pending, other), null, 'another message\'s refusal');
  });

  for (const code of ['override_unusable', 'delegation_disabled', 'invalid_text', 'data_folder_unusable']) {
    it(`gives back a message refused with ${code}: nothing was sent or done`, () => {
      const sent = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: '/route override' } });
      const refused: ToWebview = { type: 'event', event: { type: 'failed', localId: 'L1', failure: { code, message: 'Not sent.' } } };
      assert.equal(refusedDraft(sent.pending, refused), '/route override');
    });
  }

  it('shows a refused /route override in red and gives the command back', () => {
    const sent = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: '/route override' } });
    const text = 'Cannot run the last message again on openai:gpt-5: no API key. Nothing was sent or recorded; …';
    const answer: ToWebview = { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, kind: 'command',
      turn_id: null, model: null, status: 'failed', text, error: { code: 'override_unusable', message: text }, summary: '/route' } } };
    assert.deepEqual(reduce(sent, answer).entries.at(-1), { kind: 'command', id: 'L1:command', text, failed: true });
    assert.equal(refusedDraft(sent.pending, answer), '/route override');
  });

  it('records a slash command\'s answer from the chat result, ignoring its duplicate delta', () => {
    const state = run(
      { type: 'event', event: { type: 'userSent', localId: 'L1', text: '/rules check' } },
      { type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: null, kind: 'command_output', text: 'ok' } } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, kind: 'command', turn_id: null, model: null, text: 'ok: routing.yaml' } } },
    );
    assert.deepEqual(state.entries.map((e) => e.kind), ['user', 'command']);
    assert.equal(state.entries[1].kind === 'command' && state.entries[1].text, 'ok: routing.yaml');
  });

  it('tracks tool calls and notices', () => {
    const delta = (params: object): ToWebview => ({ type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: 'T1', ...params } as never } });
    const state = run(
      { type: 'event', event: { type: 'routeDecided', params: route } },
      delta({ kind: 'tool_call', tool: { id: 'toolu_1', name: 'read_file', input: { path: 'a.py' }, status: 'running' } }),
      delta({ kind: 'tool_result', tool: { id: 'toolu_1', name: 'read_file', status: 'done', summary: '120 lines' } }),
      delta({ kind: 'notice', text: 'Retrying after a rate limit…' }),
    );
    assert.deepEqual(turn(state).tools, [{ id: 'toolu_1', name: 'read_file', input: { path: 'a.py' }, status: 'done', summary: '120 lines' }]);
    assert.deepEqual(turn(state).notices, ['Retrying after a rate limit…']);
  });

  it('a tool call still running when its turn ends (stopped, failed, cut off) no longer says running', () => {
    const call: ToWebview = { type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: 'T1', kind: 'tool_call',
      tool: { id: 'toolu_1', name: 'run_command', input: { command: 'make deploy' }, status: 'running' } } } };
    const routed: ToWebview = { type: 'event', event: { type: 'routeDecided', params: route } };
    for (const end of [{ type: 'event', event: { type: 'result', localId: 'l1', result: { ...finished, status: 'cancelled' } } },
      { type: 'connection', connected: false }] as ToWebview[]) {
      const state = run({ type: 'event', event: { type: 'userSent', localId: 'l1', text: 'deploy' } }, routed, call, end);
      assert.deepEqual(turn(state).tools.map((t) => [t.status, t.summary]), [['error', 'Cancelled.']], JSON.stringify(end));
    }
    const done = run(routed, call, { type: 'event', event: { type: 'result', localId: 'l1', result: finished } });
    assert.equal(turn(done).tools[0].status, 'running', 'a completed turn\'s tools are as the daemon said');
  });

  it('the last turn keeps its actions (Retry, the suggestion\'s buttons) below an answered Apply card, not below a message', () => {
    const applied = { kind: 'approval', id: 'A1', card: { outcome: 'allowed_once' } } as unknown as Entry;
    const asked = { ...applied, id: 'A2', card: { outcome: 'pending' } } as unknown as Entry;
    const t1 = { kind: 'turn', id: 'T1' } as Entry;
    const user = { kind: 'user', id: 'U2', text: 'next' } as Entry;
    assert.equal(actionableTurn([t1, applied]), 'T1');
    assert.equal(actionableTurn([t1, applied, asked]), 'T1');
    assert.equal(actionableTurn([t1, user]), undefined);
    assert.equal(actionableTurn([applied]), undefined);
  });

  it('keeps a notice that came after some of the answer for below it', () => {
    // The daemon's "cut off at the output limit" notice ends the answer: above it, it read as if
    // it came first (as a retry's notice does).
    const delta = (params: object): ToWebview => ({ type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: 'T1', ...params } as never } });
    const state = run(
      { type: 'event', event: { type: 'routeDecided', params: route } },
      delta({ kind: 'notice', text: 'Retrying (1/2)…' }),
      delta({ kind: 'text', text: 'half of the answer' }),
      delta({ kind: 'notice', text: 'The answer reached the model\'s output limit and was cut off here.' }),
    );
    assert.deepEqual(turn(state).notices, ['Retrying (1/2)…']);
    assert.deepEqual(turn(state).lateNotices, ['The answer reached the model\'s output limit and was cut off here.']);
  });

  it('separates the text written after a tool call from the text before it, live and once the turn ends', () => {
    // Each model call of a turn writes its own paragraph ("Reading the file." → read_file → "It
    // says hi."); the daemon streams them back to back and its result joins them with nothing
    // between, so the answer read "Reading the file.It says hi." (a reloaded chat, drawn from the
    // stored messages, has a paragraph break there).
    const delta = (params: object): ToWebview => ({ type: 'event', event: { type: 'delta', params: { session_id: 'S1', turn_id: 'T1', ...params } as never } });
    const call = (id: string) => delta({ kind: 'tool_call', tool: { id, name: 'read_file', input: { path: 'a.txt' }, status: 'running' } });
    const sent: ToWebview = { type: 'event', event: { type: 'userSent', localId: 'L1', text: 'read' } };
    const live = run(sent, { type: 'event', event: { type: 'routeDecided', params: route } },
      call('toolu_0'), text('Reading '), text('the file.'), call('toolu_1'), text('It says '), text('hi.'), call('toolu_2'), call('toolu_3'),
      text('Done.'));
    assert.equal(turn(live).text, 'Reading the file.\n\nIt says hi.\n\nDone.');
    const end = (t: string): ToWebview => ({ type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, text: t } } });
    assert.equal(turn(reduce(live, end('Reading the file.It says hi.Done.'))).text, 'Reading the file.\n\nIt says hi.\n\nDone.');
    // text the deltas had not brought yet is added; a result that is another text altogether wins
    assert.equal(turn(reduce(live, end('Reading the file.It says hi.Done. More.'))).text, 'Reading the file.\n\nIt says hi.\n\nDone. More.');
    assert.equal(turn(reduce(live, end('Something else.'))).text, 'Something else.');
    // a turn streamed with no tool call between its texts is shown as the daemon sent it
    assert.equal(turn(run(sent, { type: 'event', event: { type: 'routeDecided', params: route } }, text('Hello '), text('**there**'),
      end('Hello **there**'))).text, 'Hello **there**');
  });

  it('creates the turn from the result when no routeDecided was seen', () => {
    const state = run({ type: 'event', event: { type: 'result', localId: 'L9', result: finished } });
    assert.equal(turn(state).text, 'Hello **there**');
    assert.equal(turn(state).model, 'anthropic:claude-haiku-4-5');
  });

  it('opens the explanation when it arrives and toggles it after', () => {
    const routed = run({ type: 'event', event: { type: 'routeDecided', params: route } });
    const explained = reduce(routed, { type: 'explanation', turnId: 'T1', explanation: explanationMessage('Chain:\n  [1] …') });
    assert.equal(turn(explained).explanationOpen, true);
    assert.equal(turn(explained).explanation?.text, 'Chain:\n  [1] …');
    assert.equal(turn(toggleExplanation(explained, 'T1')).explanationOpen, false);
  });

  it('a routing chain the user opened is open again when the chat is rebuilt; a closed one stays closed', () => {
    const done = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } },
      { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: finished } });
    const chain = explanationMessage('Chain:\n  [1] …');
    const explained = reduce(done, { type: 'explanation', turnId: 'T1', explanation: chain });
    const stored = { ...turn(done), explanation: null, explanationOpen: false };
    const rebuild = (state: ChatState) => reduce(state, { type: 'reset', folders: [], workspace: 'file:///w', sessionId: 'S1',
      sessionTitle: null, entries: [stored] });
    // Reopened: the chain shown before comes back with it, nothing to fetch.
    const reopened = rebuild(explained);
    assert.deepEqual([turn(reopened).explanationOpen, turn(reopened).explanation], [true, chain]);
    assert.deepEqual(unexplained(reopened), []);
    // Rebuilt with no chain at hand (the webview's state was lost, a running turn replayed): it is fetched again.
    const fresh = rebuild({ ...initialChatState(), openExplanations: ['T1'] });
    assert.deepEqual([turn(fresh).explanationOpen, unexplained(fresh)], [true, ['T1']]);
    const replayed = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } });
    assert.deepEqual(unexplained(reduce({ ...replayed, openExplanations: ['T1'] },
      { type: 'event', event: { type: 'routeDecided', params: route } })), ['T1']);
    // Closed by the user: stays closed.
    const closed = rebuild(toggleExplanation(explained, 'T1'));
    assert.deepEqual([turn(closed).explanationOpen, closed.openExplanations], [false, []]);
  });

  it('replaces everything on reset and clears a pending message when the daemon goes away', () => {
    const sent = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } });
    assert.equal(reduce(sent, { type: 'connection', connected: false }).pending, null);
    const reset = reduce(sent, { type: 'reset', folders: [], workspace: 'file:///w', sessionId: 'S2', sessionTitle: 'Fix login',
      entries: [] });
    assert.deepEqual([reset.entries, reset.sessionId, reset.sessionTitle, reset.pending], [[], 'S2', 'Fix login', null]);
  });

  it('shows a turn that was answering when the daemon went away as interrupted, not still answering', () => {
    const running = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'count sheep' } },
      { type: 'event', event: { type: 'routeDecided', params: route } }, text('one, '));
    const gone = reduce(running, { type: 'connection', connected: false });
    assert.deepEqual([turn(gone).status, turn(gone).text, gone.pending, gone.connected], ['interrupted', 'one, ', null, false]);
    const done = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } },
      { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: finished } });
    assert.equal(turn(reduce(done, { type: 'connection', connected: false })).status, 'completed', 'an ended turn keeps its status');
  });

  it('shows a turn the daemon ended as it stopped (Restart Server) as interrupted, not as the user\'s Stop', () => {
    // the daemon answers it `cancelled` with the `interrupted` error the session keeps
    const stopped: ChatResult = { ...finished, status: 'cancelled', text: 'one, ',
      error: { code: 'interrupted', message: 'Switchman stopped while this turn was running (the editor closed, reloaded or restarted it).' } };
    const ended = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'count sheep' } },
      { type: 'event', event: { type: 'routeDecided', params: route } }, text('one, '),
      { type: 'event', event: { type: 'result', localId: 'L1', result: stopped } });
    assert.deepEqual([turn(ended).status, turn(ended).error?.code], ['interrupted', 'interrupted']);
    const cancelled = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } },
      { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: { ...finished, status: 'cancelled' } } });
    assert.equal(turn(cancelled).status, 'cancelled', "the user's Stop stays cancelled");
  });

  it('titles the session by its title, else its first message, else "New chat"', () => {
    const base = { sessionId: 'S1', sessionTitle: null, entries: [] };
    assert.equal(sessionTitle(base), 'New chat');
    assert.equal(sessionTitle({ ...base, sessionTitle: 'Refactor the login handler' }), 'Refactor the login handler');
    const first = { kind: 'user' as const, id: 'L1', text: 'write a commit message\nfor the login fix' };
    assert.equal(sessionTitle({ ...base, entries: [first] }), 'write a commit message');
    const long = sessionTitle({ ...base, sessionTitle: 'x'.repeat(100) });
    assert.equal(long.length, 60);
    assert.ok(long.endsWith('…'));
  });

  it('marks a turn rated once the daemon took the feedback', () => {
    const done = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } },
      { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: finished } });
    assert.equal(turn(done).rating, undefined);
    assert.equal(turn(reduce(done, { type: 'rated', turnId: 'T1', rating: 'down' })).rating, 'down');
  });

  it('shows a refused rating at its turn: cleared when asked again, replaced or cleared by the answer', () => {
    const done = run({ type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } },
      { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'L1', result: finished } });
    const refusal = (message: string): ToWebview => ({ type: 'ratingFailed', turnId: 'T1',
      failure: { code: 'unknown_turn', message } });
    const refused = reduce(done, refusal('cannot be rated'));
    assert.deepEqual(turn(refused).ratingError, { code: 'unknown_turn', message: 'cannot be rated' });
    assert.deepEqual(refused.entries.map((e) => e.kind), ['user', 'turn'], 'nothing added at the end of the chat');
    const retried = ratingAsked(refused, 'T1');
    assert.equal(turn(retried).ratingError, undefined);
    assert.equal(turn(reduce(retried, refusal('still not'))).ratingError?.message, 'still not');
    // The daemon announces what made it refuse (the turn forgotten by `switchman patterns forget`):
    // the chat rebuilt from the session the moment after keeps the refusal at its turn.
    const rebuilt = reduce(refused, { type: 'reset', folders: [], workspace: 'file:///w', sessionId: 'S1',
      sessionTitle: null, entries: [{ ...turn(done) }] });
    assert.deepEqual(turn(rebuilt).ratingError, { code: 'unknown_turn', message: 'cannot be rated' });
    assert.equal(turn(ratingAsked(rebuilt, 'T1')).ratingError, undefined);
    const taken = reduce(reduce(refused, refusal('still not')), { type: 'rated', turnId: 'T1', rating: 'up' });
    assert.deepEqual([turn(taken).rating, turn(taken).ratingError], ['up', undefined]);
    // Pressed again, the button takes the rating back: the turn is unrated (nothing pressed).
    const back = reduce(taken, { type: 'rated', turnId: 'T1', rating: 'none' });
    assert.equal(turn(back).rating, undefined);
    assert.ok(!('rating' in turn(back)));
    assert.deepEqual(parseFromWebview({ type: 'feedback', turnId: 'T1', rating: 'none' }), { type: 'feedback', turnId: 'T1', rating: 'none' });
    assert.equal(parseFromWebview({ type: 'feedback', turnId: 'T1', rating: 'meh' }), undefined);
  });

  it('offers 👍 / 👎 on an answer, not on a turn that failed or stopped before answering anything', () => {
    const sent = { type: 'event', event: { type: 'userSent', localId: 'L1', text: 'hi' } } as const;
    const answered = turn(run(sent, { type: 'event', event: { type: 'result', localId: 'L1', result: finished } }));
    assert.ok(rateable(answered));
    assert.ok(!rateable({ ...answered, status: 'running' }), 'not while it runs');
    const failed: TurnEntry = { ...answered, status: 'failed', text: '', error: { code: 'provider_error', message: '400' } };
    assert.ok(!rateable(failed), 'a provider refused the request: no answer to rate');
    assert.ok(!rateable({ ...failed, status: 'interrupted' }) && !rateable({ ...failed, status: 'cancelled' }));
    assert.ok(rateable({ ...failed, text: 'Half an answer' }), 'a partial answer can be rated');
    assert.ok(rateable({ ...failed, tools: [{ id: 'c1', name: 'edit_file', status: 'done', summary: 'edited a.py' }] }));
    assert.ok(rateable({ ...failed, rating: 'down' }), 'a rating given stays shown');
    assert.ok(rateable({ ...answered, text: '' }), 'completed with no text (tools only): rated as before');
  });

  it("keeps the 'Not sent' hint when the route preview of the same draft comes after it", () => {
    // Enter right after typing: the draft's preview was asked for and answers after the hint (it replaced it)
    const busy = { ...run(), preview: busyPreview('/cost') };
    const late = reduce(busy, { type: 'preview', preview: { draft: '/cost', text: 'command /cost', tone: 'command', detail: null } });
    assert.equal(late.preview?.tone, 'busy', 'Enter did nothing, and nothing said why');
    const edited = reduce(busy, { type: 'preview', preview: { draft: '/cost now', text: 'command /cost', tone: 'command', detail: null } });
    assert.equal(edited.preview?.draft, '/cost now', 'a draft typed since has its preview');
  });

  it('drops the preview when route preview is turned off', () => {
    const withPreview = run({ type: 'preview', preview: { draft: 'x', text: '→ haiku', tone: 'route', detail: null } });
    assert.equal(reduce(withPreview, { type: 'settings', routePreview: false, previewDelayMs: 250 }).preview, null);
  });
});

describe('slash commands across a rebuilt chat', () => {
  const sent = (localId: string, text: string): ToWebview => ({ type: 'event', event: { type: 'userSent', localId, text } });
  const answered = (localId: string, text: string, more: Partial<ChatResult> = {}): ToWebview => ({ type: 'event', event: {
    type: 'result', localId, result: { ...finished, kind: 'command', turn_id: null, model: null, text, summary: null, ...more } } });
  const stored = (sessionId: string | null, ...ids: string[]): ToWebview => ({ type: 'reset', folders: [], workspace: 'file:///w', sessionId,
    sessionTitle: null, entries: ids.map((id) => (id.startsWith('T')
      ? { ...turn(run(sent('x', 'x'), { type: 'event', event: { type: 'routeDecided', params: { ...route, turn_id: id } } })), id }
      : { kind: 'user' as const, id, text: `message ${id}` })) });
  const shown = (state: ChatState) => state.entries.map((e) => (e.kind === 'user' || e.kind === 'command' ? `${e.id}: ${e.text}` : e.id));

  it('come back after the daemon\'s entry they followed (the daemon keeps no slash command), in order', () => {
    const live = run(sent('local-1', '/model opus'), answered('local-1', 'Sticky model: opus'),
      sent('local-2', 'hi'), { type: 'event', event: { type: 'routeDecided', params: route } },
      { type: 'event', event: { type: 'result', localId: 'local-2', result: finished } },
      sent('local-3', '/cost'), answered('local-3', 'Today: $0.01'), sent('local-4', '/help'), answered('local-4', 'Commands: …'));
    const rebuilt = reduce(live, stored('S1', 'M1', 'T1'));
    assert.deepEqual(shown(rebuilt), ['local-1: /model opus', 'local-1:command: Sticky model: opus', 'M1: message M1', 'T1',
      'local-3: /cost', 'local-3:command: Today: $0.01', 'local-4: /help', 'local-4:command: Commands: …']);
    assert.deepEqual(shown(reduce(rebuilt, stored('S1', 'M1', 'T1'))), shown(rebuilt), 'the same after another rebuild');
    // The extension replays the last exchange after the rebuild: it is not shown twice.
    const replayed = [sent('local-4', '/help'), answered('local-4', 'Commands: …')].reduce(reduce, rebuilt);
    assert.deepEqual(shown(replayed), shown(rebuilt));
    assert.equal(replayed.pending, null);
    assert.equal(sessionTitle(rebuilt), 'message M1', 'a command is no title');
  });

  it('belong to their session: another session\'s chat does not show them, coming back to it does', () => {
    const live = run(sent('local-1', '/model opus'), answered('local-1', 'Sticky model: opus', { session_id: 'S1' }));
    const other = reduce(live, stored('S2', 'M7'));
    assert.deepEqual(shown(other), ['M7: message M7']);
    assert.deepEqual(shown(reduce(other, stored('S1', 'M1'))), ['local-1: /model opus', 'local-1:command: Sticky model: opus', 'M1: message M1']);
    assert.deepEqual(shown(reduce(other, stored(null))), [], 'no session (no folder, no daemon): nothing');
  });

  it('leave out a /delegate that ran a worker: the session\'s history has it', () => {
    const live = run(sent('local-1', '/delegate fix it'), answered('local-1', 'Fixed.', { summary: '/delegate', model: 'anthropic:claude-haiku-4-5' }),
      sent('local-2', '/delegate'), answered('local-2', 'What should the worker do?', { summary: '/delegate' }));
    assert.deepEqual(live.commandExchanges.map((k) => k.user.id), ['local-2'], 'a question back is not in the history: kept here');
  });
});

describe('parseFromWebview', () => {
  it('accepts known messages and rejects anything else', () => {
    assert.deepEqual(parseFromWebview({ type: 'send', text: 'hi' }), { type: 'send', text: 'hi' });
    assert.deepEqual(parseFromWebview({ type: 'ready' }), { type: 'ready' });
    assert.equal(parseFromWebview({ type: 'send' }), undefined);
    assert.equal(parseFromWebview({ type: 'send', text: 42 }), undefined);
    assert.equal(parseFromWebview({ type: 'eval', code: 'x' }), undefined);
    assert.equal(parseFromWebview('ready'), undefined);
    assert.equal(parseFromWebview(null), undefined);
    assert.deepEqual(parseFromWebview({ type: 'feedback', turnId: 'T1', rating: 'up' }),
      { type: 'feedback', turnId: 'T1', rating: 'up' });
    assert.equal(parseFromWebview({ type: 'feedback', turnId: 'T1', rating: 'meh' }), undefined);
    assert.equal(parseFromWebview({ type: 'feedback', rating: 'up' }), undefined);
  });
});
