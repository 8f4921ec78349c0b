import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chatHtml } from '../../src/chat/html';
import { previewView } from '../../src/chat/preview';
import { formatUsd, formatUsds, shortModelName } from '../../src/common/format';
import { normalizeUri, sameWorkspace } from '../../src/common/host';
import { requestFailure } from '../../src/protocol/errors';
import { Notifications, Requests } from '../../src/protocol/methods';
import * as params from '../../src/protocol/params';

describe('param builders', () => {
  it('shape chat params, leaving out an unknown session', () => {
    assert.deepEqual(params.chatParams('file:///w', '@haiku hi'), { workspace: 'file:///w', message: '@haiku hi' });
    assert.deepEqual(params.chatParams('file:///w', 'hi', 'S1'), { workspace: 'file:///w', message: 'hi', session_id: 'S1' });
  });

  it('send model: null to clear the sticky model', () => {
    assert.deepEqual(params.setModelParams('file:///w', null), { workspace: 'file:///w', model: null });
    assert.deepEqual(params.setModelParams('file:///w', 'opus', 'S1'), { workspace: 'file:///w', model: 'opus', session_id: 'S1' });
  });

  it('need a workspace or a session to explain', () => {
    assert.deepEqual(params.explainParams({ workspace: 'file:///w', turnId: 'T1' }), { workspace: 'file:///w', turn_id: 'T1' });
    assert.deepEqual(params.explainParams({ sessionId: 'S1' }), { session_id: 'S1' });
    assert.throws(() => params.explainParams({ turnId: 'T1' }));
  });

  it('ask for workers in the Sessions view and say there are no images in a preview', () => {
    assert.deepEqual(params.sessionsParams('file:///w'), { workspace: 'file:///w', include_workers: true });
    assert.deepEqual(params.previewParams('file:///w', 'draft'), { workspace: 'file:///w', message: 'draft', has_images: false });
    assert.deepEqual(params.cancelParams('T1'), { turn_id: 'T1' });
    assert.deepEqual(params.initializationOptions(150), { diagnostics_debounce_ms: 150 });
  });

  it('use the documented wire names', () => {
    assert.equal(Requests.setModel, 'switchman/setModel');
    assert.equal(Requests.newSession, 'switchman/newSession');
    assert.equal(Notifications.routeDecided, 'switchman/routeDecided');
  });
});

describe('requestFailure', () => {
  it('reads data.code and the user-facing message of a JSON-RPC error', () => {
    const error = Object.assign(new Error('No model available for this turn.'), { code: 1006, data: { code: 'no_model_available' } });
    assert.deepEqual(requestFailure(error), { code: 'no_model_available', message: 'No model available for this turn.' });
    assert.deepEqual(requestFailure(new Error('connection closed')), { code: 'error', message: 'connection closed' });
    assert.deepEqual(requestFailure('boom'), { code: 'error', message: 'boom' });
  });

  it('says the daemon stopped, in words, when the request lost its connection', () => {
    // What vscode-jsonrpc rejects a pending request with when the daemon's process dies.
    const lost = Object.assign(new Error('Pending response rejected since connection got disposed'), { code: -32097 });
    const failure = requestFailure(lost);
    assert.equal(failure.code, 'daemon_stopped');
    assert.match(failure.message, /^The Switchman daemon stopped before it answered/);
    assert.doesNotMatch(failure.message, /disposed/);
    assert.equal(requestFailure(Object.assign(new Error('Connection is closed.'), { code: -32096 })).code, 'daemon_stopped');
  });
});

describe('previewView', () => {
  const base = { model: null, summary: null, message: 'x', decision: null, text: null, error: null, command: null };
  it('says where a draft goes, that a command calls no model, or why routing would fail', () => {
    assert.equal(previewView('x', { ...base, model: 'anthropic:claude-haiku-4-5', summary: 'rule: fast for commits' }).text,
      '→ claude-haiku-4-5 · rule: fast for commits');
    assert.equal(previewView('/model show', { ...base, command: '/model' }).tone, 'command');
    const failed = previewView('@x hi', { ...base, error: { code: 'unknown_alias', message: 'Unknown model alias \'@x\'.' } });
    assert.deepEqual([failed.tone, failed.text], ['error', 'Unknown model alias \'@x\'.']);
  });
});

describe('formatting', () => {
  it('formats money strings', () => {
    assert.equal(formatUsd('0'), '$0.00');
    assert.equal(formatUsd('0.000075'), '$0.000075');
    assert.equal(formatUsd('0.0412'), '$0.041');
    assert.equal(formatUsd('12.5'), '$12.50');
    // Dollars and cents from a dime up: a turn that cost 60 cents read "$0.6".
    assert.equal(formatUsd('0.6'), '$0.60');
    assert.equal(formatUsd('0.1'), '$0.10');
    assert.equal(formatUsd('0.0996'), '$0.10');
    assert.equal(formatUsd('0.62'), '$0.62');
    assert.equal(formatUsd('0.095'), '$0.095');
    assert.equal(formatUsd(null), '$0.00');
  });

  it('shows amounts side by side with the same decimals, as /cost does', () => {
    // alone, a zero read `$0.00` beside `$0.00004`, as if the other amount had been rounded away
    assert.deepEqual(formatUsds(['0', '0.00004']), ['$0.00000', '$0.00004']);
    assert.deepEqual(formatUsds(['0.01', '0.25']), ['$0.01', '$0.25']);
    assert.deepEqual(formatUsds([12.5, '0.0412', null]), ['$12.500', '$0.041', '$0.000']);
    assert.deepEqual(formatUsds([]), []);
  });

  it('shortens model ids', () => {
    assert.equal(shortModelName('anthropic:claude-haiku-4-5'), 'claude-haiku-4-5');
    assert.equal(shortModelName('local'), 'local');
  });

  it('compares workspace URIs across encodings', () => {
    assert.ok(sameWorkspace('file:///home/me/my%20app', 'file:///home/me/my app/'));
    assert.ok(sameWorkspace('file:///c%3A/work', 'file:///C:/work'));
    assert.equal(normalizeUri('file:///a/'), 'file:///a');
  });
});

describe('chatHtml', () => {
  it('allows only the nonce-carrying script', () => {
    const html = chatHtml({ cspSource: 'vscode-resource:', nonce: 'abc123', scriptUri: 'x.js', styleUri: 'x.css' });
    assert.match(html, /script-src 'nonce-abc123'/);
    assert.match(html, /default-src 'none'/);
    assert.match(html, /<script nonce="abc123" src="x.js">/);
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval/);
  });
});
