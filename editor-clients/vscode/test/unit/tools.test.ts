import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  attachmentLabel, fileAttachment, MAX_ATTACHMENT_CHARS, missingContextMessage, resolveTokens, selectionAttachment,
  type EditorContext,
} from '../../src/chat/attachments';
import { parseFromWebview } from '../../src/chat/messages';
import { applyCodeParams, chatParams, revokeTrustParams } from '../../src/protocol/params';
import type { ApprovalRequest } from '../../src/protocol/types';
import {
  answered, applyOutcome, ApprovalCenter, approvalCard, outcomeText, reasonKeyAnswer, shownCommand, titleParts, workerLine,
  type ApprovalHost,
} from '../../src/tools/approval';
import { emptyTrustMessage, trustItems } from '../../src/tools/trust';
import { approvalsInTurns, turnCards } from '../../src/chat/reducer';
import type { Entry } from '../../src/chat/messages';
import type { DelegationCard } from '../../src/chat/delegations';
import { applyBases, toSave, unsavedEditRefusal, unsavedNote, withApplyBase } from '../../src/tools/unsavedEdits';
import { MAX_SHARED_CHARS, SharedDocuments, sharedOnOpen } from '../../src/server/sharedDocuments';
import { FakeConnection } from './fakes';

const EDIT: ApprovalRequest = {
  id: 'A1', workspace: 'file:///w', session_id: 'S1', turn_id: 'T1', tool: 'edit_file', tool_class: 'write',
  title: 'Edit src/app.py', path: 'src/app.py', uri: 'file:///w/src/app.py', original: 'a\n', proposed: 'b\n',
};
const COMMAND: ApprovalRequest = {
  id: 'A2', workspace: 'file:///w', session_id: 'S1', turn_id: 'T1', tool: 'run_command', tool_class: 'execute',
  title: 'Run `make test`', command: 'make test', cwd: '/w',
};

const DELEGATE: ApprovalRequest = {
  id: 'A3', workspace: 'file:///w', session_id: 'S1', turn_id: 'T1', tool: 'delegate', tool_class: 'execute',
  title: 'Delegate to a fast worker', tier: 'fast', task: 'run the tests', worker_tools: ['edit_file', 'run_command'],
};

function host(visible = true) {
  const calls: string[] = [];
  const stub: ApprovalHost = {
    chatVisible: () => visible,
    notify: (card) => void calls.push(`notify ${card.id}`),
    showDiff: async (r) => void calls.push(`diff ${r.id}`),
    closeDiff: async (r) => void calls.push(`close ${r.id}`),
  };
  return { stub, calls };
}

describe('approval cards', () => {
  it('go inside the turn whose tool call they are about; a question of no turn of the chat stays on its own', () => {
    const turn = { kind: 'turn', id: 'T1', model: null, summary: null, banners: [], text: 'Done.', status: 'completed', error: null,
      costUsd: null, tools: [], notices: [], explanation: null, explanationOpen: false } as Entry;
    const own = { kind: 'approval', id: 'A1', card: approvalCard(EDIT) } as Entry;
    const worker = { kind: 'approval', id: 'A9', card: approvalCard({ ...COMMAND, id: 'A9', turn_id: 'W1', is_worker: true }) } as Entry;
    const user = { kind: 'user', id: 'L2', text: 'next' } as Entry;
    const apply = { kind: 'approval', id: 'A7', card: approvalCard({ ...EDIT, id: 'A7', tool: 'apply_code' }) } as Entry;
    const { shown, byTurn } = approvalsInTurns([turn, own, worker, user, apply]);
    assert.deepEqual(shown.map((e) => e.id), ['T1', 'A9', 'L2', 'A7'], 'Apply on an answer\'s code block stays at the end');
    assert.deepEqual(byTurn.get('T1')?.map((c) => c.id), ['A1']);
  });

  it('a question of a planner\'s worker goes inside the planner\'s turn, under its workers\' cards', () => {
    const card = { toolUseId: 'toolu_1', workerTurnId: 'W2' } as DelegationCard;
    const planner = { kind: 'turn', id: 'T2', model: null, summary: null, banners: [], text: 'The worker added it.', status: 'completed',
      error: null, costUsd: null, tools: [], notices: [], explanation: null, explanationOpen: false, delegations: [card] } as Entry;
    const worker = { kind: 'approval', id: 'A8', card: approvalCard({ ...EDIT, id: 'A8', turn_id: 'W2', is_worker: true }) } as Entry;
    const other = { kind: 'approval', id: 'A9', card: approvalCard({ ...COMMAND, id: 'A9', turn_id: 'W9', is_worker: true }) } as Entry;
    const { shown, byTurn } = approvalsInTurns([planner, worker, other]);
    assert.deepEqual(shown.map((e) => e.id), ['T2', 'A9'], 'a worker of no turn of this chat (a /delegate) stays on its own');
    assert.deepEqual(byTurn.get('T2')?.map((c) => c.id), ['A8']);
  });

  it("a delegation's start question shows right above its card (asked before its worker started), others after the cards", () => {
    const first = { toolUseId: 'toolu_1', workerTurnId: 'W1' } as DelegationCard;
    const second = { toolUseId: 'toolu_2', workerTurnId: 'W2' } as DelegationCard;
    const start = (id: string, toolUseId: string) => approvalCard({ ...DELEGATE, id, tool_use_id: toolUseId });
    const worker = approvalCard({ ...EDIT, id: 'A8', turn_id: 'W1', is_worker: true });
    // asked about toolu_2 twice (its model changed while it waited), toolu_3's still asked: it has no card yet
    const approvals = [start('S1', 'toolu_1'), worker, start('S2a', 'toolu_2'), start('S2b', 'toolu_2'), start('S3', 'toolu_3'),
      approvalCard(EDIT)];
    const order = turnCards([first, second], approvals).map((c) => (c.kind === 'delegation' ? c.card.toolUseId : c.card.id));
    assert.deepEqual(order, ['S1', 'toolu_1', 'S2a', 'S2b', 'toolu_2', 'A8', 'S3', 'A1']);
    // a daemon that does not name the delegation: after the cards, as before
    assert.deepEqual(turnCards([first], [approvalCard(DELEGATE)]).map((c) => c.kind), ['delegation', 'approval']);
    assert.equal(approvalCard({ ...EDIT, tool_use_id: 'toolu_9' }).toolUseId, undefined, "only a delegation's question");
  });

  it('deny on Enter in the reason field only once a reason is typed (Shift+Tab from the chat lands there)', () => {
    const key = (k: string, more: { shiftKey?: boolean; isComposing?: boolean } = {}) =>
      ({ key: k, shiftKey: false, isComposing: false, ...more });
    assert.equal(reasonKeyAnswer(key('Enter'), ''), undefined, 'an empty field: Enter does nothing');
    assert.equal(reasonKeyAnswer(key('Enter'), '  \t'), undefined, 'spaces are no reason');
    assert.deepEqual(reasonKeyAnswer(key('Enter'), ' keep the cache '), { decision: 'deny', reason: 'keep the cache' });
    assert.equal(reasonKeyAnswer(key('Enter', { isComposing: true }), 'keep'), undefined, 'an IME composing');
    assert.equal(reasonKeyAnswer(key('Enter', { shiftKey: true }), 'keep'), undefined);
    assert.equal(reasonKeyAnswer(key('a'), 'keep'), undefined);
  });

  it('shows what a command would hide from the eye: control characters, bidi controls, runs of empty lines', () => {
    // A `\r` drawn as nothing joined `touch x #` and `ls -la`; a right-to-left override showed the
    // rest of the line backwards (`ls‮; touch x` read `ls x hcuot ;`); forty empty lines put the
    // end of a command below the card's box, seen only by scrolling inside it.
    assert.equal(shownCommand('touch x #\rls -la'), 'touch x #␍ls -la');
    assert.equal(shownCommand('echo \u001b[2Jok\u0007'), 'echo ␛[2Jok␇');
    assert.equal(shownCommand('ls\u202e; touch x\u202c'), 'ls⟨U+202E⟩; touch x⟨U+202C⟩');
    assert.equal(shownCommand('a\u2066b\u2069\u200fc'), 'a⟨U+2066⟩b⟨U+2069⟩⟨U+200F⟩c');
    assert.equal(shownCommand(`echo checking${'\n'.repeat(41)}touch x`), 'echo checking\n[40 empty lines]\ntouch x');
    assert.equal(shownCommand('a\n\n\nb'), 'a\n\n\nb', 'two empty lines are shown as they are');
    assert.equal(shownCommand('for f in *.py; do\n\tblack "$f"\ndone'), 'for f in *.py; do\n\tblack "$f"\ndone', 'tabs and line breaks stay');
    assert.equal(shownCommand('echo héllo 😀 — ok'), 'echo héllo 😀 — ok');
  });

  it('shows the daemon\'s title with its `code` as code, never the backticks', () => {
    assert.deepEqual(titleParts('Run `rm -rf build`'), { parts: [{ text: 'Run ', code: false }, { text: 'rm -rf build', code: true }],
      plain: 'Run rm -rf build' });
    assert.deepEqual(titleParts('Edit src/app.py'), { parts: [{ text: 'Edit src/app.py', code: false }], plain: 'Edit src/app.py' });
    assert.equal(titleParts('Run `echo a` then `b`').plain, 'Run echo a then b');
    assert.equal(titleParts('Run `echo `a`').plain, 'Run `echo `a`', 'an unclosed backtick stays text');
  });

  it('show an edit as its diff, a command with its folder, a delegation with its task and tools', () => {
    const edit = approvalCard({ ...EDIT, diff: '--- a/src/app.py\n+++ b/src/app.py\n@@ -1 +1 @@\n-a\n+b\n' });
    assert.deepEqual([edit.kind, edit.diff, edit.canOpenDiff], ['edit', ['--- a/src/app.py', '+++ b/src/app.py', '@@ -1 +1 @@', '-a', '+b'], true]);
    assert.equal(edit.alwaysLabel, 'Always allow edit_file in this workspace');
    const command = approvalCard(COMMAND);
    assert.deepEqual([command.kind, command.command, command.cwd, command.canOpenDiff], ['command', 'make test', '/w', false]);
    const delegation = approvalCard(DELEGATE);
    assert.deepEqual([delegation.kind, delegation.task, delegation.tier, delegation.workerTools],
      ['delegation', 'run the tests', 'fast', ['edit_file', 'run_command']]);
    const worker = approvalCard({ ...COMMAND, is_worker: true });
    // No second "Allow" that would do exactly what "Allow once" does: a worker's answers are never kept.
    assert.equal(worker.alwaysLabel, null);
    assert.match(worker.note ?? '', /never remembered/);
  });

  it('say why a delegation\'s question is asked again as it is shown (its model changed while the first waited)', () => {
    const why = 'the model changed from anthropic:claude-haiku-4-5 to anthropic:claude-sonnet-4-6 while the question waited';
    assert.equal(approvalCard({ ...DELEGATE, asked_again: why }).note, `Asked again: ${why}.`);
    assert.equal(approvalCard({ ...DELEGATE, asked_again: null }).note, null, 'asked once: no note');
    assert.equal(approvalCard(DELEGATE).note, null, 'nor from an older daemon');
  });

  it('name a delegation\'s worker tier as it will run, said capped once when the tier floor lowered the planner\'s', () => {
    assert.equal(workerLine(approvalCard(DELEGATE)), 'Worker on fast tier · may use edit_file, run_command');
    const capped = approvalCard({ ...DELEGATE, title: 'Delegate to a balanced worker (deep, capped by the tier floor) that may '
      + 'change files and run commands', tier: 'balanced', requested_tier: 'deep' });
    assert.equal(workerLine(capped), 'Worker on balanced tier · may use edit_file, run_command',
      'the tier it runs on, as its chain says: not "deep", the one asked for');
    assert.equal(`${capped.title}\n${workerLine(capped)}`.split('capped by the tier floor').length - 1, 1,
      'the card says the floor capped it once: its title says it, its worker line no longer repeats it');
    assert.equal(workerLine(approvalCard(EDIT)), null);
  });

  it('name the model a delegation\'s worker will run on, and what chose it when its tier did not', () => {
    const routed = approvalCard({ ...DELEGATE, model: 'anthropic:claude-haiku-4-5', routed_by: null });
    assert.equal(workerLine(routed), 'Worker on fast tier · claude-haiku-4-5 · may use edit_file, run_command',
      'what will actually run, not only the tier');
    const ruled = approvalCard({ ...DELEGATE, model: 'anthropic:claude-opus-4-7', routed_by: 'rule: docs' });
    assert.equal(workerLine(ruled), 'Worker on fast tier · claude-opus-4-7 (rule: docs) · may use edit_file, run_command',
      'a rule matching the task chose a model the fast tier does not have: said so');
    const capped = approvalCard({ ...DELEGATE, title: 'Delegate to a balanced worker (deep, capped by the tier floor) that may '
      + 'change files and run commands', tier: 'balanced', requested_tier: 'deep', model: 'anthropic:claude-sonnet-4-6' });
    assert.equal(workerLine(capped), 'Worker on balanced tier · claude-sonnet-4-6 · may use edit_file, run_command');
  });

  it('say how the question ended', () => {
    const card = approvalCard(COMMAND);
    assert.equal(outcomeText(answered(card, { decision: 'deny', reason: 'not now' })), 'Denied: not now');
    assert.equal(outcomeText(answered(card, { decision: 'allow_always' })), 'Allowed; run_command is always allowed here now.');
    assert.match(outcomeText(answered(card, 'withdrawn')), /No answer in time/);
  });

  it('drop the note about the question once it is answered: a denied deletion does not say the file will be deleted', () => {
    const deletion = approvalCard({ ...EDIT, tool: 'delete_file', proposed: null });
    assert.equal(deletion.note, 'The file will be deleted.');
    const worker = approvalCard({ ...COMMAND, is_worker: true });
    for (const answer of [{ decision: 'deny' as const, reason: 'keep it' }, { decision: 'allow_once' as const }, 'withdrawn' as const]) {
      assert.deepEqual([answered(deletion, answer).note, answered(worker, answer).note], [null, null]);
    }
  });
});

describe('approval center', () => {
  it('waits for the card\'s answer, then shows the outcome and closes an opened diff', async () => {
    const { stub, calls } = host();
    const center = new ApprovalCenter(stub);
    const seen: string[] = [];
    center.onDidChange((card) => seen.push(`${card.id} ${card.outcome}`));
    const asked = center.ask(EDIT, new AbortController().signal);
    assert.equal(center.waiting, true);
    await center.openDiff('A1');
    center.answer('A1', { decision: 'deny', reason: 'use the helper' });
    center.answer('A1', { decision: 'allow_once' }); // a second click changes nothing
    assert.deepEqual(await asked, { decision: 'deny', reason: 'use the helper' });
    assert.deepEqual(seen, ['A1 pending', 'A1 denied']);
    assert.deepEqual(calls, ['diff A1', 'close A1']);
    assert.deepEqual(center.all().map((c) => [c.outcome, c.reason]), [['denied', 'use the helper']]);
  });

  it('turns an approved edit down when its file changed in the editor since it was proposed', async () => {
    const texts = new Map<string, string>();
    const { stub } = host();
    const center = new ApprovalCenter({ ...stub, currentText: (uri) => texts.get(uri) });
    // The user typed a line above while reading the diff: the edit's positions now point elsewhere.
    texts.set('file:///w/src/app.py', 'import os\na\n');
    const asked = center.ask({ ...EDIT, original: 'a\n' }, new AbortController().signal);
    center.answer('A1', { decision: 'allow_once' });
    const answer = await asked;
    assert.equal(answer.decision, 'deny');
    assert.equal(answer.refused_by, 'editor', 'the user allowed it: the model must not hear they refused it');
    assert.match(answer.reason ?? '', /^src\/app.py changed in the editor since this change was proposed/);
    assert.match(outcomeText(center.all()[0]), /^Not applied: src\/app.py changed in the editor/);
    // The card says it once ("Not applied: … so it was not applied: …" read twice).
    assert.doesNotMatch(outcomeText(center.all()[0]), /Not applied:.*not applied/is);
    // ... and keeps the model's advice to read the file again for the model: the user has nothing to read again.
    assert.match(answer.reason ?? '', /Read the file again to make the change\.$/);
    assert.match(outcomeText(center.all()[0]), /so nothing was changed\.$/);
    // Unchanged (or not open in the editor): the answer goes through as given.
    texts.set('file:///w/src/app.py', 'a\n');
    const again = center.ask({ ...EDIT, id: 'A5', original: 'a\n' }, new AbortController().signal);
    center.answer('A5', { decision: 'allow_once' });
    assert.deepEqual(await again, { decision: 'allow_once' });
    const closed = center.ask({ ...EDIT, id: 'A6', uri: 'file:///w/closed.py', original: 'a\n' }, new AbortController().signal);
    center.answer('A6', { decision: 'allow_always' });
    assert.deepEqual(await closed, { decision: 'allow_always' });
  });

  it('withdraws the open questions when the daemon stops: their turn is gone, nothing can answer them', () => {
    // After "Switchman: Restart Server" during a question, its card kept live Allow / Deny buttons
    // while its turn showed cancelled.
    const connection = new FakeConnection();
    connection.setState('running');
    const center = new ApprovalCenter(host().stub, connection);
    const seen: string[] = [];
    center.onDidChange((card) => seen.push(`${card.id} ${card.outcome}`));
    void center.ask(COMMAND, new AbortController().signal); // never answered: nobody to answer
    connection.setState('running'); // (again: nothing happened to the daemon)
    assert.equal(center.waiting, true);
    connection.setState('stopped');
    assert.equal(center.waiting, false);
    assert.deepEqual(seen, ['A2 pending', 'A2 withdrawn']);
    assert.equal(center.all()[0].outcome, 'withdrawn');
    assert.match(outcomeText(center.all()[0]), /the daemon was stopped/);
    center.dispose();
  });

  it('notifies when the chat is hidden; the daemon withdrawing the question is a denial on the card', async () => {
    const { stub, calls } = host(false);
    const center = new ApprovalCenter(stub);
    const withdraw = new AbortController();
    const asked = center.ask(COMMAND, withdraw.signal);
    assert.deepEqual(calls, ['notify A2']);
    withdraw.abort();
    assert.deepEqual(await asked, { decision: 'deny' });
    assert.equal(center.all()[0].outcome, 'withdrawn');
    assert.equal(center.waiting, false);
  });
});

describe('apply and trust', () => {
  it('say what became of an Apply', () => {
    assert.deepEqual(applyOutcome({ applied: true, decision: 'allow_once', path: 'a.py', reason: null }),
      { text: 'Switchman: applied to a.py and saved (undo takes it back)', warn: false });
    assert.deepEqual(applyOutcome({ applied: true, decision: 'allow_once', path: 'a.py', reason: 'not saved: read-only' }),
      { text: 'Switchman: applied to a.py, but: not saved: read-only', warn: true }, 'applied, not saved');
    assert.deepEqual(applyOutcome({ applied: false, decision: 'deny', path: 'a.py', reason: 'no' }),
      { text: 'Switchman: not applied to a.py (no)', warn: false });
    assert.equal(applyOutcome({ applied: false, decision: 'allow_once', path: 'a.py', reason: 'read-only' }).warn, true);
    assert.deepEqual(applyOutcome({ applied: false, unchanged: true, decision: 'deny', path: 'a.py',
      reason: 'a.py already has this code: there is nothing to change.' }),
    { text: 'Switchman: a.py already has this code: there is nothing to change.', warn: false, notice: true },
    'the file already had the code: nothing was asked, and it is not called a denial');
  });

  it('list always-allowed tools per folder, open folders first', () => {
    const items = trustItems({ trusted: [
      { workspace: 'file:///old', tools: ['run_command'] },
      { workspace: 'file:///w', tools: ['apply_code', 'edit_file'] },
    ] }, [{ uri: 'file:///w', name: 'w' }]);
    assert.deepEqual(items.map((i) => [i.label, i.description]), [
      ['apply_code', 'w'], ['edit_file', 'w'], ['run_command', '/old (not open)']]);
    assert.deepEqual(revokeTrustParams('file:///w', 'edit_file'), { workspace: 'file:///w', tool: 'edit_file' });
  });

  it('say why nothing is listed when trust.json could not be read', () => {
    const problem = 'trust.json could not be read (not valid JSON at line 1, column 3).';
    assert.deepEqual(emptyTrustMessage({ trusted: [], problem }), { text: `Switchman: ${problem}`, warn: true });
    assert.deepEqual(emptyTrustMessage({ trusted: [] }),
      { text: 'Switchman: no tool is always allowed. Switchman asks before every change and command.', warn: false });
  });

  it('send Apply with the selection as an LSP range and the answer\'s turn', () => {
    const range = { start: { line: 1, character: 0 }, end: { line: 2, character: 4 } };
    assert.deepEqual(applyCodeParams({ workspace: 'file:///w', uri: 'file:///w/a.py', text: 'x', code: 'y', range, turnId: 'T1' }),
      { workspace: 'file:///w', uri: 'file:///w/a.py', text: 'x', code: 'y', range, turn_id: 'T1' });
    assert.deepEqual(applyCodeParams({ workspace: 'file:///w', uri: 'file:///w/a.py', text: 'x', code: 'y' }),
      { workspace: 'file:///w', uri: 'file:///w/a.py', text: 'x', code: 'y' });
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
    assert.deepEqual(resolveTokens('issue #123 and a#file', editor), { message: 'issue #123 and a#file', attachments: [], missing: [] });
  });

  it('send a huge file or selection cut where the daemon cuts it, never halving a character', () => {
    const huge = 'x'.repeat(40_000_000);
    const file = fileAttachment({ uri: editor.uri, text: huge });
    assert.equal(file.text?.length, 2 * MAX_ATTACHMENT_CHARS + 2);
    const astral = '😋'.repeat(MAX_ATTACHMENT_CHARS) + 'a' + '😋'.repeat(10);
    const cut = selectionAttachment({ uri: editor.uri, text: '', selection: { text: astral, startLine: 1, endLine: 1 } });
    const text = cut?.text ?? '';
    assert.equal([...text].length, MAX_ATTACHMENT_CHARS + 1); // the emojis, 'a': one past the limit
    assert.ok(!text.endsWith('\ud83d'));
    assert.equal(fileAttachment(editor).text, editor.text); // a normal file is sent whole
  });

  it('take out only the tokens: the message keeps its line breaks and indentation', () => {
    const typed = '#file why does this fail:\n\n    login("admin", "x")\n        -> True\nthanks';
    assert.equal(resolveTokens(typed, editor).message, 'why does this fail:\n\n    login("admin", "x")\n        -> True\nthanks');
    assert.equal(resolveTokens('look at #file\n  then  this', editor).message, 'look at\n  then  this');
    assert.equal(resolveTokens('explain\t#selection  here', editor).message, 'explain here');
  });

  it('send a message of nothing but tokens (after an @alias, too) as typed, so it still asks something', () => {
    assert.equal(resolveTokens('#file', editor).message, '#file');
    assert.equal(resolveTokens('@opus #file', editor).message, '@opus #file');
    assert.equal(resolveTokens('@opus  #selection\n', editor).message, '@opus  #selection');
    assert.equal(resolveTokens('@opus explain #file', editor).message, '@opus explain');
    assert.deepEqual(resolveTokens('@opus #file', editor).attachments, [{ kind: 'file', uri: editor.uri, text: editor.text }]);
  });

  it('name the tokens that have nothing to attach', () => {
    const unselected: EditorContext = { uri: editor.uri, text: editor.text };
    assert.deepEqual(resolveTokens('explain #selection', unselected),
      { message: 'explain', attachments: [], missing: ['selection'] });
    assert.deepEqual(resolveTokens('#file and #selection', undefined).missing, ['selection', 'file']);
    assert.deepEqual(resolveTokens('explain #file', unselected).missing, []);
    assert.match(missingContextMessage(['selection'], true), /^Nothing is selected in the active editor/);
    assert.match(missingContextMessage(['file'], false), /^No editor is active, so #file has nothing to attach/);
  });

  it('label attachments with the workspace-relative path and the lines', () => {
    assert.equal(attachmentLabel(selectionAttachment(editor)!, 'file:///w'), 'Attached: src/app x.py (lines 2–2)');
    assert.equal(attachmentLabel({ kind: 'file', uri: 'file:///elsewhere/b.ts' }, 'file:///w'), 'Attached: file:///elsewhere/b.ts');
  });

  it('put attachments in the chat params only when there are some', () => {
    assert.deepEqual(chatParams('file:///w', 'hi'), { workspace: 'file:///w', message: 'hi' });
    assert.deepEqual(chatParams('file:///w', 'hi', 'S1', [{ kind: 'file', uri: 'file:///w/a' }]),
      { workspace: 'file:///w', message: 'hi', session_id: 'S1', attachments: [{ kind: 'file', uri: 'file:///w/a' }] });
    assert.deepEqual(chatParams('file:///w', 'hi', null, [], 'hi'), { workspace: 'file:///w', message: 'hi' }, 'typed as sent');
    assert.deepEqual(chatParams('file:///w', 'hi', null, [], 'hi #file'), { workspace: 'file:///w', message: 'hi', typed: 'hi #file' });
  });
});

describe('code blocks', () => {
  it('accept a code action from the webview only with a known action and text', () => {
    assert.deepEqual(parseFromWebview({ type: 'codeAction', action: 'insert', text: 'x = 1' }),
      { type: 'codeAction', action: 'insert', text: 'x = 1' });
    assert.equal(parseFromWebview({ type: 'codeAction', action: 'run', text: 'rm -rf /' }), undefined);
    assert.equal(parseFromWebview({ type: 'codeAction', action: 'copy' }), undefined);
  });

  it('accept an approval answer only with a known decision', () => {
    assert.deepEqual(parseFromWebview({ type: 'approvalAnswer', id: 'A1', decision: 'deny', reason: 'no' }),
      { type: 'approvalAnswer', id: 'A1', decision: 'deny', reason: 'no' });
    assert.equal(parseFromWebview({ type: 'approvalAnswer', id: 'A1', decision: 'yes' }), undefined);
    assert.equal(parseFromWebview({ type: 'approvalAnswer', decision: 'deny' }), undefined);
  });
});

describe('the daemon\'s edits', () => {
  const disk = 'def login(user, password):\n    return user == "admin"\n';
  const unsaved = `# Login.\n${disk}`;
  it('of a buffer the daemon is sent go ahead on its unsaved text, in the version they were made from', () => {
    assert.equal(unsavedEditRefusal([{ path: 'src/login.py', text: unsaved, shared: true, disk, dirty: true,
      version: 7, editVersion: 7 }]), null);
    assert.equal(unsavedEditRefusal([{ path: '.switchman/routing.yaml', text: 'rules: []\n', shared: true, disk: '' }]), null,
      'no version named (a client without versioned edits): nothing to compare');
  });

  it('of a buffer the daemon is sent are refused when it changed after they were made (a keystroke still on its way)', () => {
    const refusal = unsavedEditRefusal([{ path: 'src/login.py', text: `${unsaved}x`, shared: true, disk, dirty: true,
      version: 8, editVersion: 7 }]);
    assert.match(refusal ?? '', /^src\/login\.py changed in the editor after this change was made from its text: .* Read the file again/);
  });

  it('of a file too large to share are refused when the editor has unsaved text they were not made from', () => {
    const refusal = unsavedEditRefusal([{ path: 'src/login.py', text: unsaved, shared: false, disk }]);
    assert.match(refusal ?? '', /^src\/login\.py has unsaved changes and is too large to be shared with Switchman: save it \(or revert it\), then ask again\. .* nothing was changed\.$/);
  });

  it('go ahead on a saved or closed file', () => {
    assert.equal(unsavedEditRefusal([{ path: 'src/login.py', text: disk, shared: false, disk }]), null, 'saved');
    assert.equal(unsavedEditRefusal([{ path: 'src/login.py', shared: false }]), null, 'not open: the editor reads the disk too');
    assert.equal(unsavedEditRefusal([]), null);
  });

  it('go ahead when made from the editor\'s own unsaved text (Apply of a code block), not when it changed since', async () => {
    assert.equal(unsavedEditRefusal([{ path: 'src/login.py', text: unsaved, shared: false, disk, base: unsaved }]), null);
    assert.notEqual(unsavedEditRefusal([{ path: 'src/login.py', text: `${unsaved}x`, shared: false, disk, base: unsaved }]), null,
      'typed in since the Apply was asked for');
    const uri = 'file:///w/src/login.py';
    const seen = await withApplyBase(uri, unsaved, async () => applyBases.get(uri));
    assert.equal(seen, unsaved, 'the base is known while the Apply request runs');
    assert.equal(applyBases.has(uri), false, 'and forgotten after it');
    await assert.rejects(withApplyBase(uri, unsaved, async () => { throw new Error('refused'); }));
    assert.equal(applyBases.has(uri), false, 'also after a failed request');
  });

  it('are saved once applied where the editor had the disk\'s text (so the next edit, commands and reads see them)', () => {
    const closed = { path: 'src/closed.py', shared: false };
    const saved = { path: 'src/saved.py', text: disk, shared: false, dirty: false };
    const sameText = { path: 'src/same.py', text: disk, shared: false, dirty: true, disk };
    const userEdits = { path: 'src/typed.py', text: unsaved, shared: true, dirty: true, disk };
    assert.deepEqual(toSave([closed, saved, sameText, userEdits]), [closed, saved, sameText],
      'a buffer with the user\'s unsaved text is edited, and left for the user to save');
  });

  it('that could not be saved are reported as applied but only in the editor', () => {
    assert.equal(unsavedNote([]), undefined);
    assert.equal(unsavedNote([{ path: 'src/login.py', reason: 'EACCES: permission denied' }]),
      'The change is in the editor but was not saved: src/login.py (EACCES: permission denied). '
      + 'The file on disk still has the old text.');
  });
});

describe('the documents the daemon is sent', () => {
  const file = (path: string, more: Partial<Parameters<typeof sharedOnOpen>[0]> = {}) => ({
    uri: `file:///w/${path}`, scheme: 'file', length: 100, inWorkspace: true, isConfig: false, ...more });

  it('are the workspace\'s files up to the limit, and the configuration files wherever they are', () => {
    assert.equal(sharedOnOpen(file('src/login.py')), true);
    assert.equal(sharedOnOpen(file('src/big.log', { length: MAX_SHARED_CHARS })), true);
    assert.equal(sharedOnOpen(file('src/huge.log', { length: MAX_SHARED_CHARS + 1 })), false, 'too large');
    assert.equal(sharedOnOpen(file('elsewhere.py', { inWorkspace: false })), false, 'outside the workspace folders');
    assert.equal(sharedOnOpen(file('Untitled-1', { scheme: 'untitled' })), false, 'not a file');
    assert.equal(sharedOnOpen(file('routing.yaml', { inWorkspace: false, isConfig: true })), true);
  });

  it('keep the decision made at open until closed: a withheld document\'s changes and close are not sent', () => {
    const shared = new SharedDocuments();
    const big = file('src/huge.log', { length: MAX_SHARED_CHARS + 1 });
    assert.equal(shared.opened(big), false);
    assert.equal(shared.isShared(big.uri), false);
    assert.equal(shared.closed(big.uri), false, 'its didOpen was not sent, so neither is its didClose');
    assert.equal(shared.isShared(big.uri), true, 'forgotten once closed');
    const login = file('src/login.py');
    assert.equal(shared.opened(login), true);
    assert.equal(shared.isShared(login.uri), true);
    assert.equal(shared.closed(login.uri), true);
  });
});
