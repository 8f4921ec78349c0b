import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Requests } from '../../src/protocol/methods';
import type { Session } from '../../src/protocol/types';
import { QueuedDelegations } from '../../src/sessions/sessionItems';
import { continuable, SessionNodes } from '../../src/sessions/sessionNodes';
import { FakeConnection, FakeFolders } from './fakes';

const folder = { uri: 'file:///home/me/app', name: 'app' };
const session = { id: 'S1', workspace: folder.uri, title: 'write a commit message', created_at: '2026-05-08T14:20:00Z',
  updated_at: '2026-05-08T14:23:19Z', last_model: 'anthropic:claude-haiku-4-5', sticky_model: null, turn_count: 1,
  cost_usd: '0.01', is_worker: false, parent_session_id: null, parent_tool_use_id: null, workers: [] } as unknown as Session;

/** The Sessions view's nodes over a fake daemon; `inProgress` is whether the view shows its progress bar. */
function view(connection: FakeConnection) {
  const shown = { inProgress: false, progressRuns: 0 };
  const nodes = new SessionNodes(connection, new FakeFolders([folder]), new QueuedDelegations(), () => false,
    async (task) => {
      shown.inProgress = true;
      shown.progressRuns += 1;
      try {
        return await task();
      } finally {
        shown.inProgress = false;
      }
    });
  return { nodes, shown };
}

describe('the Sessions view', () => {
  it('says the daemon is starting with a loading line, and asks it nothing yet', async () => {
    const connection = new FakeConnection();
    connection.state = 'starting';
    const { nodes } = view(connection);
    assert.deepEqual(await nodes.children(), [{ kind: 'message', text: 'Starting Switchman…', tone: 'loading' }]);
    assert.deepEqual(connection.sent(Requests.sessions), []);
    connection.state = 'failed';
    const [failed] = await nodes.children();
    assert.deepEqual([failed.kind === 'message' && failed.text, failed.kind === 'message' && failed.action],
      ['Switchman did not start.', 'restart']);
  });

  it('shows its progress while the first listing is answered, not on every refresh after it', async () => {
    const connection = new FakeConnection();
    const { nodes, shown } = view(connection);
    const seenInProgress: boolean[] = [];
    connection.answer(Requests.sessions, () => {
      seenInProgress.push(shown.inProgress);
      return { sessions: [session], current_session_id: 'S1' };
    });
    const listed = await nodes.children();
    assert.deepEqual(listed.map((n) => n.kind === 'session' && n.session.id), ['S1']);
    await nodes.children();  // a status burst's refresh: no progress bar flashing at every turn
    nodes.forget();          // Refresh asked for, or the daemon restarted
    await nodes.children();
    assert.deepEqual(seenInProgress, [true, false, true]);
  });

  it('gives each session the costs of its level of the view, whose decimals its cost shares', async () => {
    const worker = (id: string, cost_usd: string) => ({ ...session, id, cost_usd, is_worker: true }) as Session;
    const planner = { ...session, cost_usd: '0.000040', workers: [worker('W1', '0.000000'), worker('W2', '0.001000')] } as Session;
    const connection = new FakeConnection().answer(Requests.sessions, () => ({
      sessions: [planner, { ...session, id: 'S2', cost_usd: '0.010000' }], current_session_id: 'S1' }));
    const { nodes } = view(connection);
    const listed = await nodes.children();
    assert.deepEqual(listed.map((n) => n.kind === 'session' && n.alongside), [['0.000040', '0.010000'], ['0.000040', '0.010000']]);
    const workers = await nodes.children(listed[0]);
    assert.deepEqual(workers.map((n) => n.kind === 'session' && n.alongside), [['0.000000', '0.001000'], ['0.000000', '0.001000']],
      "a planner's workers are a list of their own");
  });

  it('says a listing that failed, with the reason and a retry, and shows progress on the retry', async () => {
    const connection = new FakeConnection().answer(Requests.sessions, () => {
      throw Object.assign(new Error('Unknown workspace'), { data: { code: 'unknown_workspace' } });
    });
    const { nodes, shown } = view(connection);
    const [failed] = await nodes.children();
    assert.deepEqual(failed, { kind: 'message', text: 'Could not list the sessions: Unknown workspace', tone: 'failed',
      action: 'retry', tooltip: 'Unknown workspace\nClick to try again.' });
    connection.answer(Requests.sessions, () => ({ sessions: [], current_session_id: null }));
    assert.deepEqual(await nodes.children(), []);
    assert.equal(shown.progressRuns, 2, 'the retry shows progress too');
  });
});

describe('Continue in Chat', () => {
  it('continues a top-level session of its folder, never a worker, or the session of a transcript', () => {
    assert.deepEqual(continuable({ kind: 'session', folder, session, current: false }), { workspace: folder.uri, sessionId: 'S1' });
    const worker = { ...session, id: 'W1', is_worker: true } as Session;
    assert.equal(continuable({ kind: 'session', folder, session: worker, current: false }), undefined);
    assert.equal(continuable({ kind: 'folder', folder }), undefined);
    assert.equal(continuable(undefined), undefined);
    // a transcript's title bar: the session of its URI (its folder is the daemon's to say)
    assert.deepEqual(continuable({ scheme: 'switchman', path: '/transcript/fix it.md', query: 'session=S9' }), { sessionId: 'S9' });
    assert.equal(continuable({ scheme: 'switchman', path: '/why/Why this model.txt', query: 'turn=T1' }), undefined);
    assert.equal(continuable({ scheme: 'file', path: '/transcript/a.md', query: 'session=S9' }), undefined);
    assert.equal(continuable({ scheme: 'switchman', path: '/transcript/worker/fix it.md', query: 'session=W1' }), undefined,
      'a worker\'s transcript: a worker takes no messages');
  });
});
