import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChatController, DROPPED_ATTACHMENTS } from '../../src/chat/chatController';
import { ApprovalCenter, outcomeText, recordedApprovalCard } from '../../src/tools/approval';
import { initialChatState, sessionTitle, type ToWebview } from '../../src/chat/messages';
import { reduce, refusedDraft } from '../../src/chat/reducer';
import { Notifications, Requests } from '../../src/protocol/methods';
import type { ApprovalRecord, ChatResult, SessionDetail } from '../../src/protocol/types';
import { FakeConnection, FakeFolders, FakeStatuses, status, until } from './fakes';

const WS = 'file:///home/me/app';
const route = { session_id: 'S1', turn_id: 'T1', model: 'anthropic:claude-haiku-4-5', summary: 'rule: fast for commits', banners: [], decision: null };
const result: ChatResult = { kind: 'turn', session_id: 'S1', turn_id: 'T1', status: 'completed', model: route.model, text: 'Hello',
  usage: null, cost_usd: '0.001', error: null, summary: route.summary, banners: [] };

function setup() {
  const connection = new FakeConnection();
  const statuses = new FakeStatuses();
  const posted: ToWebview[] = [];
  const controller = new ChatController(connection, new FakeFolders([{ uri: WS, name: 'app' }]), statuses,
    () => ({ routePreview: true, previewDelayMs: 0 }), { openSettings: () => undefined, restartServer: () => undefined });
  controller.attach((m) => posted.push(m));
  connection.answer(Requests.sessions, () => ({ current_session_id: 'S1', sessions: [] }));
  const events = () => posted.flatMap((m) => (m.type === 'event' ? [m.event.type] : []));
  return { connection, statuses, posted, controller, events };
}

/** A controller whose active editor has `return 42` selected (line 2 of src/app.py). */
function withEditor(connection: FakeConnection, posted: ToWebview[]) {
  const editor = { uri: `${WS}/src/app.py`, text: 'def main():\n    return 42\n',
    selection: { text: 'return 42', startLine: 2, endLine: 2 } };
  const controller = new ChatController(connection, new FakeFolders([{ uri: WS, name: 'app' }]), new FakeStatuses(),
    () => ({ routePreview: true, previewDelayMs: 0 }),
    { openSettings: () => undefined, restartServer: () => undefined, activeEditor: () => editor });
  controller.attach((m) => posted.push(m));
  return { editor, controller };
}

/** The webview's state after `posted`, and the text it would put back into the input (a refused message). */
function replayInWebview(posted: ToWebview[]) {
  let state = initialChatState();
  let draft: string | null = null;
  for (const message of posted) {
    draft = refusedDraft(state.pending, message) ?? draft;
    state = reduce(state, message);
  }
  return { state, draft };
}

/** A chat answer the test releases when it wants. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('ChatController', () => {
  it('sends the message as typed and forwards the stream of its turn', async () => {
    const { connection, controller, events } = setup();
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('@haiku write a commit message');
    await until(() => connection.sent(Requests.chat).length === 1);
    assert.deepEqual(connection.sent(Requests.chat)[0], { workspace: WS, message: '@haiku write a commit message', session_id: 'S1' });
    connection.notify(Notifications.routeDecided, route);
    connection.notify(Notifications.chatDelta, { session_id: 'S1', turn_id: 'T1', kind: 'text', text: 'Hel' });
    connection.notify(Notifications.chatDelta, { session_id: 'S9', turn_id: 'T9', kind: 'text', text: 'other session' });
    answer.resolve(result);
    await sending;
    assert.deepEqual(events(), ['userSent', 'routeDecided', 'delta', 'result']);
    assert.equal(controller.busy, false);
  });

  it('keeps a message sent while the panel was still loading its transcript', async () => {
    // The panel just opened (`ready`: the transcript is asked for) and the user sends at once: the
    // transcript's answer, which predates the message, must not wipe it.
    const { connection, controller, posted } = setup();
    const transcript = deferred<SessionDetail>();
    connection.answer(Requests.session, () => transcript.promise);
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const reloading = controller.handle({ type: 'ready' });
    await until(() => connection.sent(Requests.session).length === 1);
    const sending = controller.send('@haiku hello there');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    transcript.resolve({ session: { id: 'S1', workspace: WS, title: '', created_at: '', updated_at: '', sticky_model: null,
      pending_swap: null, last_model: null, turn_count: 0, cost_usd: '0', is_worker: false, parent_session_id: null,
      parent_tool_use_id: null }, turns: [], messages: [], cost: { total_usd: '0', by_model: [], planner_usd: '0', workers_usd: '0',
      workers: [] } });
    await reloading;
    answer.resolve(result);
    await sending;
    const state = posted.reduce(reduce, initialChatState());
    assert.deepEqual(state.entries.map((e) => [e.kind, e.kind === 'user' ? e.text : e.id]),
      [['user', '@haiku hello there'], ['turn', 'T1']]);
    assert.equal(sessionTitle(state), 'hello there', 'titled as the daemon titles it: without the @alias');
  });

  it('sends 👍/👎 with switchman/feedback and shows it once taken', async () => {
    const { connection, controller, posted, events } = setup();
    connection.answer(Requests.feedback, () => ({ turn_id: 'T1', rating: 'up', success: 1 }));
    await controller.handle({ type: 'feedback', turnId: 'T1', rating: 'up' });
    assert.deepEqual(connection.sent(Requests.feedback)[0], { turn_id: 'T1', rating: 'up' });
    assert.deepEqual(posted.at(-1), { type: 'rated', turnId: 'T1', rating: 'up' });
    connection.answer(Requests.feedback, () => { throw Object.assign(new Error('No turn'), { data: { code: 'unknown_turn' } }); });
    await controller.handle({ type: 'feedback', turnId: 'T9', rating: 'down' });
    // A refusal is about that turn: it goes to the turn, not to the end of the chat (no `failed` event).
    assert.deepEqual(posted.at(-1), { type: 'ratingFailed', turnId: 'T9', failure: { code: 'unknown_turn', message: 'No turn' } });
    assert.deepEqual(events(), []);
  });

  it('shows the ratings given in this window again when the chat is reloaded or reopened', async () => {
    const { connection, controller, posted } = setup();
    const detail: SessionDetail = { session: {} as never, turns: [{ id: 'T1', index: 1, status: 'completed' } as never,
      { id: 'T2', index: 2, status: 'completed' } as never], messages: [], cost: {} as never };
    connection.answer(Requests.session, () => detail);
    connection.answer(Requests.feedback, (p) => ({ turn_id: p.turn_id, rating: p.rating, success: 1 }));
    await controller.handle({ type: 'feedback', turnId: 'T1', rating: 'up' });
    await controller.handle({ type: 'feedback', turnId: 'T1', rating: 'down' }); // changed its mind
    await controller.handle({ type: 'feedback', turnId: 'T7', rating: 'up' }); // a turn of another session
    posted.length = 0;
    await controller.handle({ type: 'ready' });
    const reset = posted.findIndex((m) => m.type === 'reset');
    assert.ok(reset >= 0);
    assert.deepEqual(posted.slice(reset + 1).filter((m) => m.type === 'rated'), [{ type: 'rated', turnId: 'T1', rating: 'down' }]);
  });

  it("shows a rating given or changed in another window once the chat is redrawn for it, this window's last answer too", async () => {
    const { connection, controller, posted } = setup();
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('hello'); // T1: this window's last exchange, replayed live after a redraw
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    answer.resolve(result);
    await sending;
    connection.answer(Requests.feedback, (p) => ({ turn_id: p.turn_id, rating: p.rating, success: 1 }));
    await controller.handle({ type: 'feedback', turnId: 'T0', rating: 'up' });
    const message = (id: string, turn: string, role: 'user' | 'assistant') => ({ id, session_id: 'S1', turn_id: turn, role,
      created_at: '', model: null, content: [{ type: 'text' as const, text: id }] });
    const detail = (ratings: Record<string, 'up' | 'down'>): SessionDetail => ({ session: {} as never,
      turns: [{ id: 'T0', index: 1, status: 'completed' } as never, { id: 'T1', index: 2, status: 'completed' } as never],
      messages: [message('M1', 'T0', 'user'), message('M2', 'T0', 'assistant'), message('M3', 'T1', 'user'),
        message('M4', 'T1', 'assistant')], cost: { workers: [] } as never, ratings });
    const ratings = () => {
      const turns = replayInWebview(posted).state.entries.flatMap((e) => (e.kind === 'turn' ? [[e.id, e.rating ?? null]] : []));
      return Object.fromEntries(turns);
    };
    // The other window took back this window's 👍 on T0 and gave 👎 to T1.
    connection.answer(Requests.session, () => detail({ T1: 'down' }));
    const resets = () => posted.filter((m) => m.type === 'reset').length;
    const before = resets();
    connection.notify(Notifications.sessionChanged, { workspace: WS, session_id: 'S1' });
    await until(() => resets() === before + 1);
    assert.deepEqual(ratings(), { T0: null, T1: 'down' },
      "this window's own 👍 was shown again over the session's, and the other window's on the live answer not at all");
    // An older daemon sends no ratings: the ones given here are shown again, as before.
    connection.answer(Requests.session, () => ({ ...detail({}), ratings: undefined }));
    await controller.handle({ type: 'ready' });
    assert.deepEqual(ratings(), { T0: 'up', T1: null });
  });

  it('tells a delegation card its Stop was refused (another window runs it, or it was starting), not an ended one', async () => {
    const { connection, posted, controller } = setup();
    const refusals = () => posted.filter((m) => m.type === 'stopRefused');
    connection.answer(Requests.cancel, () => {
      throw Object.assign(new Error('This turn is running in another editor window: stop it there.'),
        { data: { code: 'turn_elsewhere' } });
    });
    await controller.handle({ type: 'stopDelegation', turnId: 'T1', toolUseId: 'toolu_2' });
    await controller.handle({ type: 'stopWorker', workerTurnId: 'WT1', turnId: 'T1', toolUseId: 'toolu_1' });
    assert.deepEqual(refusals(), [
      { type: 'stopRefused', turnId: 'T1', toolUseId: 'toolu_2', message: 'This turn is running in another editor window: stop it there.' },
      { type: 'stopRefused', turnId: 'T1', toolUseId: 'toolu_1', message: 'This turn is running in another editor window: stop it there.' }]);
    connection.answer(Requests.cancel, () => ({ cancelled: false, status: 'starting' }));
    await controller.handle({ type: 'stopDelegation', turnId: 'T1', toolUseId: 'toolu_3' });
    assert.deepEqual(refusals().at(-1), { type: 'stopRefused', turnId: 'T1', toolUseId: 'toolu_3',
      message: 'its worker is starting; press Stop again in a moment.' });
    posted.length = 0;
    connection.answer(Requests.cancel, () => ({ cancelled: false, status: 'ended' }));
    await controller.handle({ type: 'stopDelegation', turnId: 'T1', toolUseId: 'toolu_3' });
    connection.answer(Requests.cancel, () => { throw Object.assign(new Error('No turn'), { data: { code: 'unknown_turn' } }); });
    await controller.handle({ type: 'stopWorker', workerTurnId: 'WT9', turnId: 'T1', toolUseId: 'toolu_9' });
    assert.deepEqual(refusals(), [], 'an ended one: its card shows how it ended');
  });

  it('creates a session first when the workspace has none', async () => {
    const { connection, controller } = setup();
    connection.answer(Requests.sessions, () => ({ current_session_id: null, sessions: [] }));
    connection.answer(Requests.newSession, () => ({ session: { id: 'S7' } }));
    connection.answer(Requests.chat, () => ({ ...result, session_id: 'S7' }));
    await controller.send('hi');
    assert.equal(connection.sent(Requests.chat)[0].session_id, 'S7');
  });

  it('reports a JSON-RPC error as a failed event with its data.code', async () => {
    const { connection, controller, posted } = setup();
    connection.answer(Requests.chat, () => {
      throw Object.assign(new Error('No model available for this turn.'), { data: { code: 'no_model_available' } });
    });
    await controller.send('hi');
    const last = posted.at(-1);
    assert.ok(last?.type === 'event' && last.event.type === 'failed');
    assert.deepEqual(last.event.failure, { code: 'no_model_available', message: 'No model available for this turn.' });
  });

  /** A message sent and still being answered; `aborted()`: whether its request was aborted. */
  async function answering() {
    const { connection, controller } = setup();
    const answer = deferred<ChatResult>();
    let aborted = false;
    connection.answer(Requests.chat, (_p, signal) => {
      signal?.addEventListener('abort', () => (aborted = true));
      return answer.promise;
    });
    connection.answer(Requests.cancel, () => ({ cancelled: true, status: 'cancelled' }));
    const sending = controller.send('long answer please');
    await until(() => connection.sent(Requests.chat).length === 1);
    const end = async () => {
      answer.resolve({ ...result, status: 'cancelled' });
      await sending;
    };
    return { connection, controller, aborted: () => aborted, end };
  }

  it('cancels with switchman/cancel once the turn is known, else by aborting the request', async () => {
    const { connection, controller, aborted, end } = await answering();
    await controller.cancel();
    assert.ok(aborted(), 'request not aborted before the turn was known');
    connection.notify(Notifications.routeDecided, route);
    await controller.cancel();
    assert.deepEqual(connection.sent(Requests.cancel), [{ turn_id: 'T1' }]);
    await end();
  });

  it('leaves a running answer to the daemon when the extension goes away: no Stop is sent', async () => {
    const { connection, controller, aborted, end } = await answering();
    connection.notify(Notifications.routeDecided, route);
    controller.dispose(); // the window reloads mid-answer
    assert.equal(aborted(), false, 'the request was aborted: the daemon takes that for the user\'s Stop');
    assert.deepEqual(connection.sent(Requests.cancel), []);
    await end();
  });

  it('reloads the transcript for a restarted webview and replays the running turn', async () => {
    const { connection, controller, posted } = setup();
    const detail: SessionDetail = { session: {} as never, turns: [{ id: 'T0', index: 1, status: 'completed' } as never,
      { id: 'T1', index: 2, status: 'running' } as never], messages: [], cost: {} as never };
    connection.answer(Requests.session, () => detail);
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('hi');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    posted.length = 0;
    await controller.handle({ type: 'ready' });
    const reset = posted.find((m) => m.type === 'reset');
    assert.ok(reset?.type === 'reset');
    assert.deepEqual(reset.entries.map((e) => e.id), ['T0'], 'the live turn comes from the replay, not the transcript');
    assert.deepEqual(posted.slice(posted.indexOf(reset) + 1).map((m) => (m.type === 'event' ? m.event.type : m.type)),
      ['userSent', 'routeDecided']);
    answer.resolve(result);
    await sending;
  });

  it('draws the chat from the restarted daemon, not from the exchange its predecessor was answering', async () => {
    const { connection, controller, posted } = setup();
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('count sheep');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    // The daemon is killed mid-answer: its pending request is rejected, then the client starts a new one.
    connection.setState('stopped');
    answer.reject(Object.assign(new Error('Pending response rejected since connection got disposed'), { code: -32097 }));
    await sending;
    const failed = posted.flatMap((m) => (m.type === 'event' && m.event.type === 'failed' ? [m.event.failure] : []));
    assert.equal(failed[0]?.code, 'daemon_stopped');
    const interrupted = { id: 'T1', index: 1, status: 'interrupted', model: route.model } as never;
    connection.answer(Requests.session, () => ({ session: {} as never, turns: [interrupted], messages: [], cost: {} as never }));
    posted.length = 0;
    connection.setState('running');
    await until(() => posted.some((m) => m.type === 'reset'));
    const reset = posted.find((m) => m.type === 'reset');
    assert.ok(reset?.type === 'reset');
    assert.deepEqual(reset.entries.map((e) => [e.id, e.kind === 'turn' ? e.status : '']), [['T1', 'interrupted']]);
    assert.deepEqual(posted.filter((m) => m.type === 'event'), [], 'nothing of the old exchange is replayed');
  });

  it('previews drafts and drops answers to older drafts', async () => {
    const { connection, controller, posted } = setup();
    const first = deferred<unknown>();
    connection.answer(Requests.preview, (p) => (p.message === 'old' ? first.promise
      : { model: 'anthropic:claude-haiku-4-5', summary: 'rule: fast for commits', message: p.message, decision: null, text: null, error: null, command: null }));
    const old = controller.preview('old');
    await controller.preview('new draft');
    first.resolve({ model: 'x:y', summary: 'stale', message: 'old', decision: null, text: null, error: null, command: null });
    await old;
    const previews = posted.flatMap((m) => (m.type === 'preview' && m.preview ? [m.preview.text] : []));
    assert.deepEqual(previews, ['→ claude-haiku-4-5 · rule: fast for commits']);
  });

  it('previews a draft as it would be sent: without its tokens, with what they and Send Selection attach', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    connection.answer(Requests.preview, (p) => ({ model: 'anthropic:claude-opus-4-7', summary: 'rule: big', message: p.message,
      decision: null, text: null, error: null, command: null }));
    await controller.preview('summarise #file\nbriefly');
    assert.deepEqual(connection.sent(Requests.preview)[0], { workspace: WS, message: 'summarise\nbriefly', has_images: false,
      attachments: [{ kind: 'file', uri: editor.uri, text: editor.text }] });
    await controller.attachSelection(); // checked with the daemon first: the preview's [1]
    await controller.preview('what does this do?');
    assert.deepEqual(connection.sent(Requests.preview)[2].attachments,
      [{ kind: 'selection', uri: editor.uri, text: 'return 42', start_line: 2, end_line: 2 }]);
    editor.selection.text = '';
    await controller.preview('explain #selection');
    assert.equal(connection.sent(Requests.preview).length, 3, 'nothing selected: no route to preview');
    const last = posted.filter((m) => m.type === 'preview').at(-1);
    assert.ok(last?.type === 'preview' && last.preview);
    assert.deepEqual([last.preview.tone, last.preview.draft], ['error', 'explain #selection']);
    assert.match(last.preview.text, /^Nothing is selected in the active editor/);
  });

  it('Send Selection refuses what the daemon could not send, with its reason, and attaches nothing', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    editor.selection.text = '';
    editor.text = 'PK\u0003\u0004\u0000\u0000';
    const reason = 'app.py is a binary file; only text files can be attached.';
    connection.answer(Requests.preview, (p) => {
      if (p.attachments?.[0]?.text?.includes('\u0000')) throw Object.assign(new Error(reason), { data: { code: 'invalid_attachment' } });
      return { model: 'x:y', summary: 'default', message: p.message, decision: null, text: null, error: null, command: null };
    });
    assert.deepEqual(await controller.attachSelection(), { refused: reason });
    assert.deepEqual(connection.sent(Requests.preview)[0], { workspace: WS, message: '', has_images: false,
      attachments: [{ kind: 'file', uri: editor.uri, text: editor.text }] });
    await controller.preview('what is this?');
    assert.equal(connection.sent(Requests.preview)[1].attachments, undefined, 'nothing goes with the next message');
    editor.text = 'def main():\n    return 42\n';
    assert.deepEqual(await controller.attachSelection(), { label: 'Attached: src/app.py' });
    await controller.preview('what is this?');
    assert.deepEqual(connection.sent(Requests.preview)[3].attachments, [{ kind: 'file', uri: editor.uri, text: editor.text }]);
  });

  it('Send Selection of what is already attached attaches it once, with its text of now (it went twice)', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    connection.answer(Requests.preview, () => ({ model: 'x:y', summary: 'default', message: '', decision: null, text: null,
      error: null, command: null }));
    connection.answer(Requests.chat, () => result);
    editor.selection.text = '';
    assert.deepEqual(await controller.attachSelection(), { label: 'Attached: src/app.py' });
    editor.text = 'def main():\n    return 43\n';
    assert.deepEqual(await controller.attachSelection(), { label: 'Attached: src/app.py', again: true });
    editor.selection.text = 'return 43';  // the same lines again: once; other lines are another attachment
    await controller.attachSelection();
    await controller.attachSelection();
    await controller.send('what does this do?');
    assert.deepEqual(connection.sent(Requests.chat)[0].attachments, [{ kind: 'file', uri: editor.uri, text: editor.text },
      { kind: 'selection', uri: editor.uri, text: 'return 43', start_line: 2, end_line: 2 }]);
    editor.selection.text = '';  // and `#file` of the file Send Selection attached: once, with its text of now
    await controller.attachSelection();
    editor.text = 'def main():\n    return 44\n';
    await controller.preview('explain #file');
    await controller.send('explain #file');
    for (const sent of [connection.sent(Requests.preview).at(-1), connection.sent(Requests.chat)[1]]) {
      assert.deepEqual(sent?.attachments, [{ kind: 'file', uri: editor.uri, text: editor.text }]);
    }
  });

  it('Send Selection attaches at once: a message sent while the daemon checks it goes with it', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    const check = deferred<unknown>();
    connection.answer(Requests.preview, () => check.promise);
    connection.answer(Requests.chat, () => result);
    const attaching = controller.attachSelection();
    await controller.send('what does this do?');  // sent before the check answers
    assert.deepEqual(connection.sent(Requests.chat)[0].attachments,
      [{ kind: 'selection', uri: editor.uri, text: 'return 42', start_line: 2, end_line: 2 }]);
    check.resolve({ model: 'x:y', summary: 'default', message: '', decision: null, text: null, error: null, command: null });
    assert.deepEqual(await attaching, { label: 'Attached: src/app.py (lines 2–2)' });
    await controller.send('and now?');
    assert.equal(connection.sent(Requests.chat)[1].attachments, undefined, 'it went with one message only');

    const refusal = deferred<unknown>();  // refused by the check: taken off before the next message
    connection.answer(Requests.preview, (p) => (p.message === '' ? refusal.promise
      : { model: 'x:y', summary: 'default', message: p.message, decision: null, text: null, error: null, command: null }));
    const refused = controller.attachSelection();
    await controller.preview('draft');
    assert.equal(connection.sent(Requests.preview).at(-1)?.attachments?.length, 1, 'attached while it is checked');
    refusal.reject(Object.assign(new Error('binary'), { data: { code: 'invalid_attachment' } }));
    assert.deepEqual(await refused, { refused: 'binary' });
    await controller.send('third');
    assert.equal(connection.sent(Requests.chat)[2].attachments, undefined, 'the refused one was taken off');
  });

  it('keeps talking to the folder it shows, whatever editor becomes active', async () => {
    const connection = new FakeConnection();
    const folders = new FakeFolders([{ uri: WS, name: 'app' }, { uri: 'file:///home/me/lib', name: 'lib' }]);
    const controller = new ChatController(connection, folders, new FakeStatuses(),
      () => ({ routePreview: true, previewDelayMs: 0 }), { openSettings: () => undefined, restartServer: () => undefined });
    connection.answer(Requests.sessions, () => ({ current_session_id: null, sessions: [] }));
    await controller.handle({ type: 'ready' });
    folders.active = () => folders.folders[1];
    assert.equal(controller.currentFolder?.name, 'app');
    await controller.handle({ type: 'selectWorkspace', uri: 'file:///home/me/lib' });
    assert.equal(controller.currentFolder?.name, 'lib');
  });

  it('while one folder\'s answer runs, another folder\'s chat neither loses a message sent nor shows that answer', async () => {
    const connection = new FakeConnection();
    const folders = new FakeFolders([{ uri: WS, name: 'app' }, { uri: 'file:///home/me/lib', name: 'lib' }]);
    const controller = new ChatController(connection, folders, new FakeStatuses(),
      () => ({ routePreview: true, previewDelayMs: 0 }), { openSettings: () => undefined, restartServer: () => undefined });
    const posted: ToWebview[] = [];
    controller.attach((m) => posted.push(m));
    connection.answer(Requests.sessions, (p) => ({ current_session_id: p.workspace === WS ? 'S1' : 'S2', sessions: [] }));
    connection.answer(Requests.session, () => ({ session: {}, turns: [], messages: [], cost: {} }));
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    await controller.handle({ type: 'ready' });
    const sending = controller.send('explain app');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    await controller.handle({ type: 'selectWorkspace', uri: 'file:///home/me/lib' }); // the user looks at lib's chat
    const inLib = posted.length;
    connection.notify(Notifications.chatDelta, { session_id: 'S1', turn_id: 'T1', kind: 'text', text: 'Hel' });
    await controller.send('explain lib'); // sent from lib's chat (its webview shows no answer running)
    await controller.newChat();
    answer.resolve(result);
    await sending;
    const { state, draft } = replayInWebview(posted.slice(inLib));
    assert.equal(connection.sent(Requests.chat).length, 1, 'one answer at a time');
    assert.equal(draft, 'explain lib', 'the message was dropped: the input had been cleared');
    const errors = state.entries.flatMap((e) => (e.kind === 'error' ? [e.message] : []));
    assert.deepEqual(errors.map((m) => m.split(':')[0]), ['Not sent', 'No new chat'], JSON.stringify(state.entries));
    assert.match(errors[0], /still being written in app's chat/);
    assert.equal(connection.sent(Requests.newSession).length, 0);
    assert.equal(state.entries.some((e) => e.kind === 'turn'), false, 'app\'s answer showed in lib\'s chat');
    // back in app's chat, its exchange is replayed, answer included
    posted.length = 0;
    await controller.handle({ type: 'selectWorkspace', uri: WS });
    assert.equal(replayInWebview(posted).state.entries.some((e) => e.kind === 'turn' && e.text === 'Hello'), true);
  });

  it('starts a new chat with an empty transcript', async () => {
    const { connection, controller, posted } = setup();
    connection.answer(Requests.newSession, () => ({ session: { id: 'S2' } }));
    await controller.newChat();
    assert.deepEqual(connection.sent(Requests.newSession), [{ workspace: WS }]);
    assert.deepEqual(posted.at(-1), { type: 'reset', folders: [{ uri: WS, name: 'app' }], workspace: WS, sessionId: 'S2',
      sessionTitle: null, entries: [] });
  });

  it('continues an older session: the daemon makes it current, and the chat shows its conversation', async () => {
    const { connection, controller, posted } = setup();
    const older = { session: { id: 'S0', title: 'an older chat' }, cost: {},
      turns: [{ id: 'T0', session_id: 'S0', index: 1, status: 'completed', model: route.model, started_at: '', ended_at: '' }],
      messages: [{ id: 'M0', session_id: 'S0', turn_id: 'T0', role: 'user', created_at: '', model: null,
        content: [{ type: 'text', text: 'an older question' }] }] } as unknown as SessionDetail;
    connection.answer(Requests.session, (p: { session_id: string }) => (p.session_id === 'S0' ? older
      : { session: {}, turns: [], messages: [], cost: {} }));
    await controller.handle({ type: 'ready' });
    connection.answer(Requests.resumeSession, () => ({ session: { id: 'S0' } }));
    posted.length = 0;
    assert.equal(await controller.resume(WS, 'S0'), true);
    assert.deepEqual(connection.sent(Requests.resumeSession), [{ workspace: WS, session_id: 'S0' }]);
    const reset = posted.find((m) => m.type === 'reset');
    assert.equal(reset?.type === 'reset' && reset.sessionId, 'S0');
    assert.equal(connection.sent(Requests.session).at(-1).session_id, 'S0');
    assert.match(JSON.stringify(replayInWebview(posted).state.entries), /an older question/);
    // the next message goes to it
    connection.answer(Requests.chat, () => ({ ...result, session_id: 'S0' }));
    await controller.send('and now?');
    assert.equal(connection.sent(Requests.chat).at(-1).session_id, 'S0');
  });

  it("continues a transcript's session in its own folder, which the daemon names", async () => {
    const { connection, controller, posted } = setup();
    connection.answer(Requests.session, () => ({ session: { id: 'S0', workspace: WS }, turns: [], messages: [], cost: {} }));
    connection.answer(Requests.resumeSession, () => ({ session: { id: 'S0' } }));
    assert.equal(await controller.resume(undefined, 'S0'), true);
    assert.deepEqual(connection.sent(Requests.resumeSession), [{ workspace: WS, session_id: 'S0' }]);
    const reset = posted.filter((m) => m.type === 'reset').at(-1);
    assert.equal(reset?.type === 'reset' && reset.sessionId, 'S0');
  });

  it('does not continue another session while an answer is being written', async () => {
    const { connection, controller } = setup();
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('hello');
    await until(() => connection.sent(Requests.chat).length === 1);
    assert.equal(await controller.resume(WS, 'S0'), false);
    assert.equal(connection.sent(Requests.resumeSession).length, 0);
    answer.resolve(result);
    await sending;
  });

  it("shows another window's turns after this window's last exchange, in the session's order", async () => {
    // This window sent T1 and it ended; the other window then sent T2 in the shared session. The
    // redraw put T2 above T1: the last exchange of this window was replayed after the transcript.
    const { connection, controller, posted } = setup();
    connection.answer(Requests.session, () => ({ session: {}, turns: [], messages: [], cost: {} }));
    await controller.handle({ type: 'ready' });
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('hello');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    answer.resolve(result);
    await sending;
    const message = (id: string, turn: string, role: string, text: string) => ({ id, session_id: 'S1', turn_id: turn, role,
      created_at: '', model: null, content: [{ type: 'text', text }] });
    const turn = (id: string, index: number) => ({ ...result, id, index, status: 'completed', decision: null }) as never;
    connection.answer(Requests.session, () => ({ session: {}, turns: [turn('T1', 1), turn('T2', 2)], cost: {},
      messages: [message('M1', 'T1', 'user', 'hello'), message('M2', 'T1', 'assistant', 'Hello'),
        message('M3', 'T2', 'user', 'sent over there'), message('M4', 'T2', 'assistant', 'answered over there')] }));
    const before = posted.filter((m) => m.type === 'reset').length;
    connection.notify(Notifications.sessionChanged, { workspace: WS, session_id: 'S1' });
    await until(() => posted.filter((m) => m.type === 'reset').length === before + 1);
    const { state } = replayInWebview(posted);
    assert.deepEqual(state.entries.map((e) => (e.kind === 'user' ? e.text : e.kind === 'turn' ? e.id : e.kind)),
      ['hello', 'T1', 'sent over there', 'T2']);
  });

  it('follows the current session when it changes elsewhere', async () => {
    const { connection, controller, statuses, posted } = setup();
    connection.answer(Requests.session, () => ({ session: {}, turns: [], messages: [], cost: {} }));
    await controller.handle({ type: 'ready' });
    posted.length = 0;
    statuses.push(status({ workspace: WS, session_id: 'S5' }));
    await until(() => posted.some((m) => m.type === 'reset'));
    assert.equal(connection.sent(Requests.session).at(-1).session_id, 'S5');
  });

  it("redraws from the daemon when another window changes the session, after its own turn", async () => {
    const { connection, controller, posted } = setup();
    const stored: SessionDetail = { session: {} as never, turns: [], messages: [], cost: {} as never };
    connection.answer(Requests.session, () => stored);
    await controller.handle({ type: 'ready' });
    const resets = () => posted.filter((m) => m.type === 'reset').length;
    const before = resets();

    // Idle: the other window's turn is fetched at once.
    connection.notify(Notifications.sessionChanged, { workspace: WS, session_id: 'S1' });
    await until(() => resets() === before + 1);
    assert.equal(connection.sent(Requests.session).at(-1).session_id, 'S1');

    // Another workspace's session: not this chat's.
    connection.notify(Notifications.sessionChanged, { workspace: 'file:///elsewhere', session_id: 'S8' });

    // During this chat's turn: nothing is redrawn until the turn has ended.
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('hello');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.sessionChanged, { workspace: WS, session_id: 'S1' });
    assert.equal(resets(), before + 1, 'not while the turn runs');
    answer.resolve(result);
    await sending;
    assert.equal(resets(), before + 2, 'redrawn once the turn ended');

    // The other window started a new session: this chat shows it.
    connection.notify(Notifications.sessionChanged, { workspace: WS, session_id: 'S7' });
    await until(() => resets() === before + 3);
    assert.equal(connection.sent(Requests.session).at(-1).session_id, 'S7');
  });

  it('forwards the delegations of its turn, fetches a worker transcript and stops one worker by its turn id', async () => {
    const { connection, controller, posted, events } = setup();
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('plan the refactor');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.routeDecided, route);
    const delegation = { phase: 'started', session_id: 'S1', turn_id: 'T1', tool_use_id: 'toolu_1', worker_session_id: 'W1',
      worker_turn_id: 'WT1', tier: 'fast', model: null, task: 't', status: 'running', turns: 1, llm_calls: 0, tool_calls: 0,
      input_tokens: 0, output_tokens: 0, cost_usd: '0', elapsed_seconds: 0, activity: null, error: null, detail: null, dropped_tools: [] };
    connection.notify(Notifications.delegation, delegation);
    connection.notify(Notifications.delegation, { ...delegation, turn_id: 'T9' }); // another turn: not ours
    connection.notify(Notifications.delegation, { ...delegation, phase: 'progress', cost_usd: '0.001' });
    // A reloaded webview gets the latest state of each delegation once.
    posted.length = 0;
    await controller.reload();
    const replayed = posted.flatMap((m) => (m.type === 'event' && m.event.type === 'delegation' ? [m.event.params.cost_usd] : []));
    assert.deepEqual(replayed, ['0.001']);
    connection.answer(Requests.session, () => ({ session: {}, turns: [], cost: {},
      messages: [{ id: 'A', session_id: 'W1', turn_id: 'WT1', role: 'assistant', created_at: '', model: null,
        content: [{ type: 'text', text: 'found main()' }] }] }));
    await controller.handle({ type: 'workerTranscript', turnId: 'T1', toolUseId: 'toolu_1', workerSessionId: 'W1' });
    assert.deepEqual(connection.sent(Requests.session).at(-1), { session_id: 'W1' });
    const loaded = posted.find((m) => m.type === 'workerTranscript');
    assert.deepEqual(loaded, { type: 'workerTranscript', turnId: 'T1', toolUseId: 'toolu_1',
      transcript: { loading: false, messages: [{ who: 'worker', text: 'found main()' }], error: null } });
    connection.answer(Requests.cancel, () => ({ cancelled: true, status: 'cancelled' }));
    await controller.handle({ type: 'stopWorker', workerTurnId: 'WT1' });
    assert.deepEqual(connection.sent(Requests.cancel), [{ turn_id: 'WT1' }]);
    // a delegation still queued for a worker slot has no worker turn: named by its planner's turn and call
    await controller.handle({ type: 'stopDelegation', turnId: 'T1', toolUseId: 'toolu_2' });
    assert.deepEqual(connection.sent(Requests.cancel).at(-1), { turn_id: 'T1', tool_use_id: 'toolu_2' });
    assert.equal(controller.busy, true, 'the planner turn carries on');
    answer.resolve(result);
    await sending;
    assert.deepEqual(events(), ['userSent', 'routeDecided', 'delegation', 'result'], 'the replay, then the answer');
  });

  it('"Delegate Selection" sends /delegate with the selection attached and shows the user\'s worker', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.delegateSelection(' fast explain this ');
    await until(() => connection.sent(Requests.chat).length === 1);
    assert.deepEqual(connection.sent(Requests.chat)[0], { workspace: WS, message: '/delegate fast explain this', session_id: 'S1',
      attachments: [{ kind: 'selection', uri: `${WS}/src/app.py`, text: 'return 42', start_line: 2, end_line: 2 }] });
    const delegation = { phase: 'started', session_id: 'S1', turn_id: null, tool_use_id: 'user_1', worker_session_id: 'W1',
      worker_turn_id: 'WT1', tier: 'fast', model: null, task: 'explain this', status: 'running', turns: 1, llm_calls: 0,
      tool_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: '0', elapsed_seconds: 0, activity: null, error: null,
      detail: null, dropped_tools: [], source: 'user' };
    connection.notify(Notifications.delegation, delegation);
    connection.notify(Notifications.delegation, { ...delegation, session_id: 'S9', tool_use_id: 'user_9' }); // not this chat
    answer.resolve({ ...result, kind: 'command', turn_id: null, text: 'It returns 42.' });
    assert.equal(await sending, true);
    const shown = posted.flatMap((m) => (m.type === 'event' && m.event.type === 'delegation' ? [m.event.params.tool_use_id] : []));
    assert.deepEqual(shown, ['user_1']);
    editor.selection.text = '';
    assert.equal(await controller.delegateSelection(''), false, 'nothing selected: nothing sent');
    assert.equal(connection.sent(Requests.chat).length, 1);
  });
});

describe('ChatController: #selection with nothing selected', () => {
  it('sends nothing, says why and gives the text back, instead of dropping the token', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    editor.selection.text = '';
    await controller.send('explain #selection\nbriefly');
    assert.equal(connection.sent(Requests.chat).length, 0, 'the model would have answered about code it never saw');
    const { state, draft } = replayInWebview(posted);
    const error = state.entries.find((e) => e.kind === 'error');
    assert.ok(error && error.kind === 'error');
    assert.equal(error.code, 'missing_context');
    assert.match(error.message, /Nothing is selected in the active editor/);
    assert.equal(draft, 'explain #selection\nbriefly', 'the text comes back to the input');
    assert.equal(state.pending, null);
    editor.selection.text = 'return 42';
    connection.answer(Requests.chat, () => result);
    await controller.send('explain #selection\nbriefly');
    assert.deepEqual(connection.sent(Requests.chat)[0].message, 'explain\nbriefly');
  });
});

describe('ChatController: a window with no folder open', () => {
  it('says why nothing was sent and gives the text back (the input was already cleared)', async () => {
    const connection = new FakeConnection();
    const posted: ToWebview[] = [];
    const controller = new ChatController(connection, new FakeFolders([]), new FakeStatuses(),
      () => ({ routePreview: true, previewDelayMs: 0 }), { openSettings: () => undefined, restartServer: () => undefined });
    controller.attach((m) => posted.push(m));
    await controller.send('hello there');
    assert.equal(connection.sent(Requests.chat).length, 0);
    const { state, draft } = replayInWebview(posted);
    const error = state.entries.find((e) => e.kind === 'error');
    assert.ok(error && error.kind === 'error', 'the message was dropped without a word');
    assert.equal(error.code, 'no_workspace_folder');
    assert.match(error.message, /^No folder is open in this window/);
    assert.equal(draft, 'hello there');
  });
});

describe('ChatController: Retry on a turn that failed at its provider', () => {
  const failed: ChatResult = { ...result, status: 'failed', text: '', cost_usd: '0',
    error: { code: 'provider_error', message: 'anthropic: server error (500). Your message is saved; send it again to retry.' } };

  it('sends the same message again, with its @alias, the attachments it was sent with and the text as typed', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    let answer: ChatResult = failed;
    connection.answer(Requests.chat, () => answer);
    await controller.send('@haiku explain #selection');
    const first = connection.sent(Requests.chat)[0];
    assert.deepEqual(first, { workspace: WS, message: '@haiku explain', session_id: 'S1',
      attachments: [{ kind: 'selection', uri: `${WS}/src/app.py`, text: 'return 42', start_line: 2, end_line: 2 }],
      typed: '@haiku explain #selection' }, 'the daemon keeps the text as typed, for a reloaded chat and the title');
    editor.selection.text = 'something else'; // what was sent is sent again, not the editor's text of now
    answer = { ...result, turn_id: 'T2' };
    await controller.handle({ type: 'retry', turnId: 'T1' });
    assert.equal(connection.sent(Requests.chat).length, 2);
    assert.deepEqual(connection.sent(Requests.chat)[1], first);
    const shown = posted.flatMap((m) => (m.type === 'event' && m.event.type === 'userSent' ? [m.event.text] : []));
    assert.deepEqual(shown, ['@haiku explain #selection\nAttached: src/app.py (lines 2–2)',
      '@haiku explain #selection\nAttached: src/app.py (lines 2–2)'], 'shown as typed, both times');
    await controller.handle({ type: 'retry', turnId: 'T1' });
    assert.equal(connection.sent(Requests.chat).length, 2, 'sent again once: the new turn answered');
  });

  it('offers no Retry for other failures, and keeps it across a reload of the chat', async () => {
    const { connection, controller, posted } = setup();
    connection.answer(Requests.chat, () => ({ ...failed, error: { code: 'internal_error', message: 'Switchman failed' } }));
    await controller.send('hello');
    await controller.handle({ type: 'retry', turnId: 'T1' });
    assert.equal(connection.sent(Requests.chat).length, 1, 'not a provider failure: nothing to retry');
    connection.answer(Requests.chat, () => failed);
    await controller.send('hello');
    const detail: SessionDetail = { session: {} as never, messages: [], cost: {} as never,
      turns: [{ id: 'T1', index: 1, status: 'failed', model: route.model, error: failed.error } as never] };
    connection.answer(Requests.session, () => detail);
    posted.length = 0;
    await controller.reload();
    const reset = posted.find((m) => m.type === 'reset');
    assert.ok(reset && reset.type === 'reset');
    const shown = reset.entries.find((e) => e.kind === 'turn' && e.id === 'T1');
    assert.equal(shown?.kind === 'turn' && shown.retryable, true);
  });
});

describe('ChatController: Retry in a new window', () => {
  const failedTurn = { id: 'T1', session_id: 'S1', index: 1, status: 'failed' as const, model: route.model, started_at: '',
    ended_at: '', usage: null, cost_usd: '0', llm_calls: 1, tool_calls: 0, summary: 'override @haiku', decision: null,
    error: { code: 'provider_error', message: 'server error (500). Your message is saved; send it again to retry.' } };
  const detail = (content: SessionDetail['messages'][number]['content'], turn = failedTurn): SessionDetail => ({
    session: { id: 'S1', workspace: WS, title: '', created_at: '', updated_at: '', sticky_model: null, pending_swap: null,
      last_model: null, turn_count: 1, cost_usd: '0', is_worker: false, parent_session_id: null, parent_tool_use_id: null },
    turns: [turn], messages: [{ id: 'M1', session_id: 'S1', turn_id: 'T1', role: 'user', created_at: '', model: null, content }],
    cost: { total_usd: '0', by_model: [], planner_usd: '0', workers_usd: '0', workers: [] } });

  /** The chat drawn from `stored` (a reloaded window: the daemon's record is all there is), then its Retry pressed. */
  async function retriedAfterReload(stored: SessionDetail) {
    const { connection, controller, posted } = setup();
    connection.answer(Requests.session, () => stored);
    connection.answer(Requests.chat, () => ({ ...result, turn_id: 'T2' }));
    await controller.reload();
    const reset = posted.find((m) => m.type === 'reset');
    assert.ok(reset?.type === 'reset');
    assert.equal(reset.entries.some((e) => e.kind === 'turn' && e.id === 'T1' && e.retryable), true, 'Retry offered');
    await controller.handle({ type: 'retry', turnId: 'T1' });
    return { connection, reset };
  }

  it('sends the message the daemon kept again, as typed and with its attachments', async () => {
    const { connection, reset } = await retriedAfterReload(detail([{ type: 'text', text: '@haiku explain #selection in #file' },
      { type: 'attachment', kind: 'selection', path: 'src/my app.py', text: 'return 42', start_line: 2, end_line: 2 },
      { type: 'attachment', kind: 'file', path: '/etc/hosts', text: '127.0.0.1 localhost', start_line: null, end_line: null }]));
    const user = reset.entries.find((e) => e.kind === 'user');
    assert.equal(user?.kind === 'user' && user.text,
      '@haiku explain #selection in #file\nAttached: src/my app.py (lines 2–2)\nAttached: /etc/hosts', 'shown as typed');
    assert.deepEqual(connection.sent(Requests.chat), [{ workspace: WS, message: '@haiku explain in', session_id: 'S1', attachments: [
      { kind: 'selection', uri: `${WS}/src/my%20app.py`, text: 'return 42', start_line: 2, end_line: 2 },
      { kind: 'file', uri: 'file:///etc/hosts', text: '127.0.0.1 localhost' }], typed: '@haiku explain #selection in #file' }],
    'the tokens are not sent as words: what they attached is sent again');
  });

  it('offers it for an answer the daemon\'s end cut off (killed, or the window reloaded mid-answer)', async () => {
    const { connection } = await retriedAfterReload(detail([{ type: 'text', text: 'explain login' }], { ...failedTurn,
      status: 'interrupted' as never, error: { code: 'interrupted', message: 'Switchman stopped while this turn was running' } }));
    assert.deepEqual(connection.sent(Requests.chat).map((p) => p.message), ['explain login']);
  });

  it('offers none for another failure, an image, or /route override\'s re-run', async () => {
    for (const [content, turn] of [
      [[{ type: 'text', text: 'hello' }], { ...failedTurn, error: { code: 'internal_error', message: 'Switchman failed' } }],
      [[{ type: 'text', text: 'what is this' }, { type: 'image', media_type: 'image/png' }], failedTurn],
      [[{ type: 'text', text: '/route override' }], failedTurn],
    ] as const) {
      const { connection, controller, posted } = setup();
      connection.answer(Requests.session, () => detail([...content], turn));
      await controller.reload();
      const reset = posted.find((m) => m.type === 'reset');
      assert.ok(reset?.type === 'reset');
      assert.equal(reset.entries.some((e) => e.kind === 'turn' && e.retryable), false, JSON.stringify(content));
    }
  });
});

describe('ChatController when the daemon refuses a message', () => {
  it('keeps what was attached for the corrected message, and gives back the text as typed', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    connection.answer(Requests.chat, (p) => {
      if (String(p.message).startsWith('/delegate fsat')) {
        throw Object.assign(new Error("No tier 'fsat': did you mean fast?"), { data: { code: 'unknown_tier' } });
      }
      return { ...result, kind: 'command', turn_id: null, text: 'It returns 42.' };
    });
    assert.equal(await controller.delegateSelection('fsat explain this'), true);
    const sent = posted.find((m) => m.type === 'event' && m.event.type === 'userSent');
    assert.deepEqual(sent, { type: 'event', event: { type: 'userSent', localId: (sent as never as { event: { localId: string } }).event.localId,
      text: '/delegate fsat explain this\nAttached: src/app.py (lines 2–2)', draft: '/delegate fsat explain this' } });
    editor.selection.text = ''; // the user clicked elsewhere before fixing the typo in the chat input
    await controller.send('/delegate fast explain this');
    const attachment = { kind: 'selection', uri: `${WS}/src/app.py`, text: 'return 42', start_line: 2, end_line: 2 };
    assert.deepEqual(connection.sent(Requests.chat).map((p) => p.attachments), [[attachment], [attachment]]);
    await controller.send('thanks');
    assert.equal(connection.sent(Requests.chat)[2].attachments, undefined, 'sent once it was answered');
  });
});

describe('ChatController when the daemon refuses an attachment', () => {
  it('takes off what Send Selection attached, says so, and sends the next message without it', async () => {
    const { connection, posted } = setup();
    const { editor, controller } = withEditor(connection, posted);
    editor.selection.text = '';
    connection.answer(Requests.preview, () => ({ model: 'x:y', summary: 'default', message: '', decision: null, text: null,
      error: null, command: null }));
    assert.deepEqual(await controller.attachSelection(), { label: 'Attached: src/app.py' });
    const reason = 'app.py is a binary file; only text files can be attached.'; // it changed on disk since
    connection.answer(Requests.chat, (p) => {
      if (p.attachments) throw Object.assign(new Error(reason), { data: { code: 'invalid_attachment' } });
      return { ...result, kind: 'command', turn_id: null, text: 'ok' };
    });
    await controller.send('what is this?');
    const failed = posted.find((m) => m.type === 'event' && m.event.type === 'failed');
    assert.ok(failed?.type === 'event' && failed.event.type === 'failed');
    assert.equal(failed.event.failure.message, `${reason} ${DROPPED_ATTACHMENTS}`);
    await controller.send('what is this?');
    assert.deepEqual(connection.sent(Requests.chat).map((p) => p.attachments?.length), [1, undefined]);
  });
});

describe('ChatController reloading a chat with the user\'s own delegations', () => {
  const delegation = { phase: 'started', session_id: 'S1', turn_id: null, tool_use_id: 'user_1', worker_session_id: 'W1',
    worker_turn_id: 'WT1', tier: 'fast', model: null, task: 'explain this', status: 'running', turns: 1, llm_calls: 0,
    tool_calls: 0, input_tokens: 0, output_tokens: 0, cost_usd: '0', elapsed_seconds: 0, activity: null, error: null,
    detail: null, dropped_tools: [], source: 'user' };
  const stored = { tool_use_id: 'user_1', worker_session_id: 'W1', source: 'user', started_at: '2026-05-08T14:20:00Z',
    task: 'explain this', tier: 'fast', worker_tier: 'fast', tier_floor: null, floor_applied: false,
    model: 'anthropic:claude-haiku-4-5', status: 'running', error: null, detail: null };
  const message = (id: string, role: 'user' | 'assistant', text: string) => ({ id, session_id: 'S1', turn_id: null, role,
    created_at: '2026-05-08T14:21:00Z', model: null, content: [{ type: 'text', text }] });

  it('replays a running /delegate instead of its recorded card, and rebuilds a finished one from the history', async () => {
    const { connection, controller, posted } = setup();
    let detail = { session: {}, turns: [], messages: [] as unknown[], cost: { workers: [] }, delegations: [stored] };
    connection.answer(Requests.session, () => detail);
    const answer = deferred<ChatResult>();
    connection.answer(Requests.chat, () => answer.promise);
    const sending = controller.send('/delegate fast explain this');
    await until(() => connection.sent(Requests.chat).length === 1);
    connection.notify(Notifications.delegation, delegation);
    posted.length = 0;
    await controller.handle({ type: 'ready' });
    const running = posted.find((m) => m.type === 'reset');
    assert.ok(running?.type === 'reset');
    assert.deepEqual(running.entries, [], 'the running worker comes from the replay, once');
    assert.deepEqual(posted.flatMap((m) => (m.type === 'event' ? [m.event.type] : [])), ['userSent', 'delegation']);
    answer.resolve({ ...result, kind: 'command', turn_id: null, model: 'anthropic:claude-haiku-4-5', text: 'It returns 42.',
      summary: '/delegate' });
    await sending;
    detail = { ...detail, messages: [message('M1', 'user', '/delegate fast explain this'), message('M2', 'assistant', 'It returns 42.')],
      delegations: [{ ...stored, status: 'completed' }] };
    posted.length = 0;
    await controller.handle({ type: 'ready' });
    const finished = posted.find((m) => m.type === 'reset');
    assert.ok(finished?.type === 'reset');
    assert.deepEqual(finished.entries.map((e) => `${e.kind}:${e.id}`), ['user:M1', 'delegation:user_1', 'command:M2']);
    assert.deepEqual(posted.filter((m) => m.type === 'event'), [], 'nothing replayed twice');
  });

  const refusals = [
    ['unknown_tier', '/delegate ultra', "'ultra' is not a tier or profile. Tiers: fast, balanced, deep; profiles: default, subagent."],
    ['delegation_disabled', '/delegate fast list the files',
      'Delegation is turned off: `delegation: {enabled: false}` in /home/u/.config/switchman/routing.yaml. Nothing was delegated; …'],
  ] as const;
  for (const [code, command, refusal] of refusals) {
    it(`replays a refused /delegate (${code}) after a reload: the daemon keeps nothing of it`, async () => {
      const { connection, controller, posted } = setup();
      connection.answer(Requests.session, () => ({ session: {}, turns: [], messages: [], cost: { workers: [] }, delegations: [] }));
      connection.answer(Requests.chat, () => ({ ...result, kind: 'command', turn_id: null, model: null, status: 'failed',
        text: refusal, error: { code, message: refusal }, summary: '/delegate' }));
      await controller.send(command);
      posted.length = 0;
      await controller.handle({ type: 'ready' });
      assert.deepEqual(posted.flatMap((m) => (m.type === 'event' ? [m.event.type] : [])), ['userSent', 'result'],
        'the command and its refusal are replayed, not lost');
    });
  }
});

/** A chat whose approval questions are cards of a real ApprovalCenter; what it posts to the webview. */
function approvalChat() {
  const connection = new FakeConnection();
  const center = new ApprovalCenter({ chatVisible: () => true, notify: () => undefined,
    showDiff: async () => undefined, closeDiff: async () => undefined });
  const posted: ToWebview[] = [];
  const controller = new ChatController(connection, new FakeFolders([{ uri: WS, name: 'app' }]), new FakeStatuses(),
    () => ({ routePreview: true, previewDelayMs: 0 }),
    { openSettings: () => undefined, restartServer: () => undefined, approvals: center });
  controller.attach((m) => posted.push(m));
  return { connection, center, posted, controller };
}

describe('ChatController approvals', () => {
  it('shows a question as a card, passes the card\'s answer on and shows open cards again after a reload', async () => {
    const { connection, center, posted, controller } = approvalChat();
    connection.answer(Requests.sessions, () => ({ current_session_id: null, sessions: [] }));
    const asked = center.ask({ id: 'A1', workspace: WS, session_id: 'S1', turn_id: 'T9', tool: 'run_command',
      tool_class: 'execute', title: 'Run `ls`', command: 'ls', cwd: '/w' }, new AbortController().signal);
    const cards = () => posted.flatMap((m) => (m.type === 'approval' ? [m.card.outcome] : []));
    assert.deepEqual(cards(), ['pending']);
    await controller.handle({ type: 'ready' });
    assert.deepEqual(cards(), ['pending', 'pending']); // the reset would have lost it
    await controller.handle({ type: 'approvalAnswer', id: 'A1', decision: 'deny', reason: 'not now' });
    assert.deepEqual(await asked, { decision: 'deny', reason: 'not now' });
    assert.deepEqual(cards(), ['pending', 'pending', 'denied']);
  });

  it('ends a question the turn\'s Stop cut short as its rebuilt card does, from the call\'s result', async () => {
    const { connection, center, posted } = approvalChat();
    const withdraw = new AbortController();
    const asked = center.ask({ id: 'A1', workspace: WS, session_id: 'S1', turn_id: 'T9', tool: 'run_command',
      tool_class: 'execute', title: 'Run `ls`', command: 'ls', cwd: '/w' }, withdraw.signal);
    withdraw.abort(); // the daemon withdraws it: it does not say why
    assert.deepEqual(await asked, { decision: 'deny' });
    const record: ApprovalRecord = { id: 'A1', title: 'Run `ls`', outcome: 'stopped', reason: null, command: 'ls', cwd: '/w',
      path: null };
    connection.notify(Notifications.chatDelta, { session_id: 'S1', turn_id: 'T9', kind: 'tool_result',
      tool: { id: 'c1', name: 'run_command', status: 'error', summary: 'stopped', approval: record } });
    const live = center.all()[0];
    const rebuilt = recordedApprovalCard(record, 'T9', 'run_command');
    assert.deepEqual([live.outcome, live.stopped, live.reason, live.note], [rebuilt.outcome, rebuilt.stopped, rebuilt.reason,
      rebuilt.note]);
    assert.equal(outcomeText(live), 'Not answered: the turn was stopped; nothing happened.');
    assert.equal(outcomeText(live), outcomeText(rebuilt));
    const shown = posted.flatMap((m) => (m.type === 'approval' ? [m.card] : []));
    assert.equal(outcomeText(shown[shown.length - 1]), outcomeText(rebuilt), 'the chat shows it');
  });

  it('ends an allowed change the daemon did not apply (its file changed meanwhile) as its rebuilt card does', async () => {
    const { connection, center, posted } = approvalChat();
    const asked = center.ask({ id: 'A2', workspace: WS, session_id: 'S1', turn_id: 'T9', tool: 'edit_file',
      tool_class: 'write', title: 'Edit src/util.py', path: 'src/util.py' }, new AbortController().signal);
    center.answer('A2', { decision: 'allow_once' });
    assert.deepEqual(await asked, { decision: 'allow_once' });
    const reason = 'src/util.py changed since this change was proposed (on disk or by another tool): applied to that '
      + 'text it would have landed in the wrong place, so nothing was changed.';
    const record: ApprovalRecord = { id: 'A2', title: 'Edit src/util.py', outcome: 'not_applied', reason, command: null,
      cwd: null, path: 'src/util.py' };
    connection.notify(Notifications.chatDelta, { session_id: 'S1', turn_id: 'T9', kind: 'tool_result',
      tool: { id: 'c2', name: 'edit_file', status: 'error', summary: 'src/util.py changed meanwhile', approval: record } });
    const live = center.all()[0];
    const rebuilt = recordedApprovalCard(record, 'T9', 'edit_file');
    assert.equal(outcomeText(live), `Not applied: ${reason}`); // it said "Allowed once."
    assert.equal(outcomeText(live), outcomeText(rebuilt));
    const shown = posted.flatMap((m) => (m.type === 'approval' ? [m.card] : []));
    assert.equal(outcomeText(shown[shown.length - 1]), outcomeText(rebuilt), 'the chat shows it');
  });

  it('marks a delegation\'s question asked again (the model changed) as superseded, as its rebuilt card does', async () => {
    const { connection, center, posted } = approvalChat();
    const question = (id: string, model: string) => ({ id, workspace: WS, session_id: 'S1', turn_id: 'T9', tool: 'delegate',
      tool_class: 'write' as const, title: 'Delegate to a fast worker that may change files', tier: 'fast', model,
      worker_tools: ['edit_file'] });
    for (const [id, model] of [['A5', 'anthropic:claude-haiku-4-5'], ['A6', 'anthropic:claude-sonnet-4-6']]) {
      const asked = center.ask(question(id, model), new AbortController().signal);
      center.answer(id, { decision: 'allow_once' });
      assert.deepEqual(await asked, { decision: 'allow_once' });
    }
    const why = 'the model changed from anthropic:claude-haiku-4-5 to anthropic:claude-sonnet-4-6 while the question waited';
    const record = (id: string, model: string, superseded: string | null = null): ApprovalRecord => ({ id,
      title: 'Delegate to a fast worker that may change files', outcome: 'allowed_once', reason: null, command: null, cwd: null,
      path: null, tier: 'fast', model, worker_tools: ['edit_file'], superseded });
    const first = record('A5', 'anthropic:claude-haiku-4-5', why);
    connection.notify(Notifications.chatDelta, { session_id: 'S1', turn_id: 'T9', kind: 'tool_result', tool: { id: 'toolu_1',
      name: 'delegate', status: 'done', summary: 'fast worker done', approval: record('A6', 'anthropic:claude-sonnet-4-6'),
      superseded_approvals: [first] } });
    const [live, last] = center.all();
    assert.equal(outcomeText(live), `Allowed once. Superseded, asked again: ${why}.`); // it said "Allowed once."
    assert.equal(outcomeText(live), outcomeText(recordedApprovalCard(first, 'T9', 'delegate')));
    assert.equal(outcomeText(last), 'Allowed once.');
    const shown = posted.flatMap((m) => (m.type === 'approval' ? [m.card] : []));
    assert.equal(outcomeText(shown[shown.length - 1]), outcomeText(live), 'the chat shows it');
  });

  it('says an "always" answer\'s worker ran on another model, the model having changed while its card waited', async () => {
    // nothing was asked again (always allowed): the only card named haiku while the worker ran on sonnet
    const { connection, center, posted } = approvalChat();
    const asked = center.ask({ id: 'A7', workspace: WS, session_id: 'S1', turn_id: 'T9', tool: 'delegate', tool_class: 'write',
      title: 'Delegate to a fast worker that may change files', tier: 'fast', model: 'anthropic:claude-haiku-4-5',
      worker_tools: ['edit_file'] }, new AbortController().signal);
    center.answer('A7', { decision: 'allow_always' });
    await asked;
    const why = 'the model changed from haiku to sonnet while the question waited';
    const record: ApprovalRecord = { id: 'A7', title: 'Delegate to a fast worker that may change files',
      outcome: 'allowed_always', reason: null, command: null, cwd: null, path: null, tier: 'fast',
      model: 'anthropic:claude-haiku-4-5', worker_tools: ['edit_file'], superseded: null, model_changed: why };
    connection.notify(Notifications.chatDelta, { session_id: 'S1', turn_id: 'T9', kind: 'tool_result', tool: { id: 'toolu_1',
      name: 'delegate', status: 'done', summary: 'fast worker done', approval: record } });
    const live = center.all()[0];
    const rebuilt = recordedApprovalCard(record, 'T9', 'delegate');
    assert.equal(outcomeText(live), `Allowed; delegate is always allowed here now. Not asked again: ${why}.`);
    assert.equal(outcomeText(live), outcomeText(rebuilt));
    const shown = posted.flatMap((m) => (m.type === 'approval' ? [m.card] : []));
    assert.equal(outcomeText(shown[shown.length - 1]), outcomeText(live), 'the chat shows it');
  });

  it('ends a worker\'s allowed change the daemon did not apply as its rebuilt card does (from the delegation\'s progress)', async () => {
    const { connection, center } = approvalChat();
    const asked = center.ask({ id: 'A4', workspace: WS, session_id: 'W1', turn_id: 'WT1', tool: 'edit_file',
      tool_class: 'write', title: 'Edit src/util.py', path: 'src/util.py', is_worker: true }, new AbortController().signal);
    center.answer('A4', { decision: 'allow_once' });
    assert.deepEqual(await asked, { decision: 'allow_once' });
    const record: ApprovalRecord = { id: 'A4', title: 'Edit src/util.py', outcome: 'not_applied',
      reason: 'src/util.py changed since this change was proposed', command: null, cwd: null, path: 'src/util.py' };
    connection.notify(Notifications.delegation, { phase: 'progress', session_id: 'S1', turn_id: 'T1', tool_use_id: 'toolu_1',
      worker_session_id: 'W1', worker_turn_id: 'WT1', tier: 'fast', model: 'anthropic:claude-haiku-4-5', task: 't',
      status: 'running', turns: 1, llm_calls: 1, tool_calls: 1, input_tokens: 0, output_tokens: 0, cost_usd: '0',
      elapsed_seconds: 1, activity: 'edit_file: src/util.py changed meanwhile', error: null, detail: null, dropped_tools: [],
      approval: record });
    assert.equal(outcomeText(center.all()[0]), outcomeText(recordedApprovalCard(record, 'T1', 'edit_file'))); // said "Allowed once."
  });

  it('ends a worker\'s question as stopped when the worker is stopped, withdrawn first or still open', async () => {
    const { connection, center, posted } = approvalChat();
    const withdraw = new AbortController();
    const edit = { workspace: WS, turn_id: 'WT1', tool: 'edit_file', tool_class: 'write', title: 'Edit `a.py`',
      is_worker: true } as const;
    const withdrawn = center.ask({ ...edit, id: 'A1', session_id: 'W1' }, withdraw.signal);
    const open = center.ask({ ...edit, id: 'A2', session_id: 'W1' }, new AbortController().signal);
    const otherWorker = center.ask({ ...edit, id: 'A3', session_id: 'W2' }, new AbortController().signal);
    withdraw.abort(); // the daemon withdraws it as the worker stops: it does not say why
    assert.deepEqual(await withdrawn, { decision: 'deny' });
    const ended = { phase: 'ended', session_id: 'S1', turn_id: 'T1', tool_use_id: 'toolu_1', worker_session_id: 'W1',
      worker_turn_id: 'WT1', tier: 'fast', model: 'anthropic:claude-haiku-4-5', task: 't', status: 'cancelled', turns: 1,
      llm_calls: 1, tool_calls: 1, input_tokens: 0, output_tokens: 0, cost_usd: '0', elapsed_seconds: 1, activity: null,
      error: 'cancelled_by_user: the user stopped this worker', detail: null, dropped_tools: [] };
    connection.notify(Notifications.delegation, ended);
    assert.deepEqual(await open, { decision: 'deny' });
    const texts = center.all().map(outcomeText);
    assert.deepEqual(texts.slice(0, 2), Array(2).fill('Not answered: the worker was stopped; nothing happened.'));
    assert.equal(texts[2], 'Waiting for your answer…', 'another worker\'s question stays open');
    const shown = posted.flatMap((m) => (m.type === 'approval' && m.card.id === 'A1' ? [m.card] : []));
    assert.equal(outcomeText(shown[shown.length - 1]), texts[0], 'the chat shows it');
    center.answer('A3', { decision: 'allow_once' });
    assert.deepEqual(await otherWorker, { decision: 'allow_once' });
  });
});
