import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { attachmentLabel, resolveTokens, selectionAttachment, type EditorContext } from '../../src/chat/attachments';
import { parseFromWebview } from '../../src/chat/messages';
import { chatParams } from '../../src/protocol/params';
import type { ApprovalRequest } from '../../src/protocol/types';
import { ALLOW_ONCE, alwaysLabel, answerApproval, DENY, type ApprovalHost } from '../../src/tools/approval';

const EDIT: ApprovalRequest = {
  id: 'A1', workspace: 'file:///w', session_id: 'S1', turn_id: 'T1', tool: 'edit_file', tool_class: 'write',
  title: 'Edit src/app.py', path: 'src/app.py', uri: 'file:///w/src/app.py', original: 'a\n', proposed: 'b\n',
};
const COMMAND: ApprovalRequest = {
  id: 'A2', workspace: 'file:///w', session_id: 'S1', turn_id: 'T1', tool: 'run_command', tool_class: 'execute',
  title: 'Run `make test`', command: 'make test', cwd: '/w',
};

function host(pick: (choices: string[]) => string | undefined, reason?: string) {
  const calls: string[] = [];
  const stub: ApprovalHost = {
    showDiff: async (r) => void calls.push(`diff ${r.id}`),
    closeDiff: async (r) => void calls.push(`close ${r.id}`),
    choose: async (message, _detail, choices) => {
      calls.push(`ask ${message} [${choices.join('|')}]`);
      return pick(choices);
    },
    reason: async () => reason,
  };
  return { stub, calls };
}

describe('approval', () => {
  it('shows an edit as a diff, offers three answers and closes the diff after', async () => {
    const { stub, calls } = host(() => ALLOW_ONCE);
    assert.deepEqual(await answerApproval(stub, EDIT, new AbortController().signal), { decision: 'allow_once' });
    assert.deepEqual(calls, [
      'diff A1', 'ask Switchman wants to: Edit src/app.py [Allow once|Always allow edit_file here|Deny]', 'close A1']);
  });

  it('asks about a command without a diff; always is its own answer', async () => {
    const { stub, calls } = host((choices) => choices[1]);
    assert.deepEqual(await answerApproval(stub, COMMAND, new AbortController().signal), { decision: 'allow_always' });
    assert.deepEqual(calls, ['ask Switchman wants to run: make test [Allow once|Always allow run_command here|Deny]']);
    assert.equal(alwaysLabel(COMMAND), 'Always allow run_command here');
  });

  it('a denial carries the reason; a dismissed question is a denial too', async () => {
    assert.deepEqual(await answerApproval(host(() => DENY, 'use the helper').stub, EDIT, new AbortController().signal),
      { decision: 'deny', reason: 'use the helper' });
    assert.deepEqual(await answerApproval(host(() => DENY).stub, EDIT, new AbortController().signal), { decision: 'deny' });
    assert.deepEqual(await answerApproval(host(() => undefined).stub, COMMAND, new AbortController().signal),
      { decision: 'deny', reason: 'the user dismissed the question' });
  });
});

describe('attachments', () => {
  const editor: EditorContext = {
    uri: 'file:///w/src/app%20x.py', text: 'def main():\n    return 42\n',
    selection: { text: '    return 42', startLine: 2, endLine: 2 },
  };

  it('#selection and #file attach from the active editor and leave the message', () => {
    const { message, attachments } = resolveTokens('explain #selection in #file please', editor);
    assert.equal(message, 'explain in please');
    assert.deepEqual(attachments, [
      { kind: 'selection', uri: editor.uri, text: '    return 42', start_line: 2, end_line: 2 },
      { kind: 'file', uri: editor.uri, text: editor.text },
    ]);
    assert.deepEqual(resolveTokens('issue #123 and a#file', editor), { message: 'issue #123 and a#file', attachments: [] });
  });

  it('label attachments with the workspace-relative path and the lines', () => {
    assert.equal(attachmentLabel(selectionAttachment(editor)!, 'file:///w'), '📎 src/app x.py (lines 2–2)');
    assert.equal(attachmentLabel({ kind: 'file', uri: 'file:///elsewhere/b.ts' }, 'file:///w'), '📎 file:///elsewhere/b.ts');
  });

  it('put attachments in the chat params only when there are some', () => {
    assert.deepEqual(chatParams('file:///w', 'hi'), { workspace: 'file:///w', message: 'hi' });
    assert.deepEqual(chatParams('file:///w', 'hi', 'S1', [{ kind: 'file', uri: 'file:///w/a' }]),
      { workspace: 'file:///w', message: 'hi', session_id: 'S1', attachments: [{ kind: 'file', uri: 'file:///w/a' }] });
  });
});

describe('code blocks', () => {
  it('accept a code action from the webview only with a known action and text', () => {
    assert.deepEqual(parseFromWebview({ type: 'codeAction', action: 'insert', text: 'x = 1' }),
      { type: 'codeAction', action: 'insert', text: 'x = 1' });
    assert.equal(parseFromWebview({ type: 'codeAction', action: 'run', text: 'rm -rf /' }), undefined);
    assert.equal(parseFromWebview({ type: 'codeAction', action: 'copy' }), undefined);
  });
});
