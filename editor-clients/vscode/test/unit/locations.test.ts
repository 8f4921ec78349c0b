import { strict as assert } from 'node:assert';
import { describe, it } from 'node:test';
import { splitLocations } from '../../src/chat/locations';
import { parseFromWebview } from '../../src/chat/messages';
import { ChatController } from '../../src/chat/chatController';
import { FakeConnection, FakeFolders, FakeStatuses } from './fakes';

describe('file locations in a command\'s answer', () => {
  it('finds /rules check\'s path:line:column at the start of each line, the rest kept as text', () => {
    const text = '/home/me/.config/switchman/routing.yaml:5:10: error [unknown-model] Unknown model \'opuss\'.\n'
      + '/home/me/app/.switchman/routing.yaml:8:24: error [invalid-regex] Invalid regular expression: missing ]: [a-z.\n'
      + '2 errors, 0 warnings in /home/me/.config/switchman/models.yaml';
    assert.deepEqual(splitLocations(text), [
      { text: '/home/me/.config/switchman/routing.yaml:5:10', path: '/home/me/.config/switchman/routing.yaml', line: 5, column: 10 },
      ': error [unknown-model] Unknown model \'opuss\'.\n',
      { text: '/home/me/app/.switchman/routing.yaml:8:24', path: '/home/me/app/.switchman/routing.yaml', line: 8, column: 24 },
      ': error [invalid-regex] Invalid regular expression: missing ]: [a-z.\n2 errors, 0 warnings in /home/me/.config/switchman/models.yaml',
    ]);
  });

  it('takes a Windows path and a path with a colon in a folder\'s name', () => {
    assert.deepEqual(splitLocations('C:\\Users\\me\\routing.yaml:3:1: warning x')[0],
      { text: 'C:\\Users\\me\\routing.yaml:3:1', path: 'C:\\Users\\me\\routing.yaml', line: 3, column: 1 });
    assert.deepEqual(splitLocations('/srv/a:b/routing.yaml:2:7: error y')[0],
      { text: '/srv/a:b/routing.yaml:2:7', path: '/srv/a:b/routing.yaml', line: 2, column: 7 });
  });

  it('leaves text without locations (relative paths, a line that only mentions one, line 0) as it is', () => {
    for (const text of ['ok', 'Sticky model set: anthropic:claude-haiku-4-5.', 'routing.yaml:5:10: error', 'see /a/b.yaml:5:10: x',
      '/a/b.yaml:0:3: error', '/a/b.yaml:5:10 no colon after']) {
      assert.deepEqual(splitLocations(text), [text], text);
    }
  });
});

describe('a clicked file location', () => {
  it('is accepted from the webview only as an absolute path with a line and column from 1', () => {
    assert.deepEqual(parseFromWebview({ type: 'openLocation', path: '/home/me/routing.yaml', line: 5, column: 10 }),
      { type: 'openLocation', path: '/home/me/routing.yaml', line: 5, column: 10 });
    for (const bad of [{ path: 'routing.yaml', line: 5, column: 1 }, { path: '/a.yaml', line: 0, column: 1 },
      { path: '/a.yaml', line: 2.5, column: 1 }, { path: '/a.yaml', line: '5', column: 1 }, { path: 7, line: 1, column: 1 },
      { path: '/a.yaml', line: 1 }]) {
      assert.equal(parseFromWebview({ type: 'openLocation', ...bad }), undefined, JSON.stringify(bad));
    }
  });

  it('opens the file there', async () => {
    const opened: [string, number, number][] = [];
    const controller = new ChatController(new FakeConnection(), new FakeFolders([{ uri: 'file:///w', name: 'w' }]),
      new FakeStatuses(), () => ({ routePreview: true, previewDelayMs: 0 }), {
        openSettings: () => undefined, restartServer: () => undefined,
        openLocation: (path, line, column) => { opened.push([path, line, column]); },
      });
    await controller.handle({ type: 'openLocation', path: '/home/me/routing.yaml', line: 5, column: 10 });
    assert.deepEqual(opened, [['/home/me/routing.yaml', 5, 10]]);
  });
});
