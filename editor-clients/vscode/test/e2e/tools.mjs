// The assistant changing the workspace, in the real UI: approval cards in the chat, Apply through
// the daemon, and the selection as context. Each step leaves src/login.py as it found it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inputHasKeyboard, log, until } from './support.mjs';

const LOGIN = 'src/login.py';
const ORIGINAL_LINE = 'return user == "admin"';

export async function toolSteps(ui, chat, fake, workspace) {
  await editApprovedInTheCardReachesTheBuffer(ui, chat, fake, workspace);
  await editOfAFileChangedMeanwhileIsNotApplied(ui, chat, fake);
  await toolsWorkOnTheUnsavedBuffer(ui, chat, fake, workspace);
  await deniedCommandTellsTheModelWhy(ui, chat, fake);
  await writeDelegationShowsItsTaskAndTools(ui, chat, fake);
  await tokensTakeTheirTextFromTheEditor(ui, chat, fake);
  await selectionGoesWithTheMessage(ui, chat, fake);
  await applyAsksThroughTheDaemon(ui, chat, workspace);
  await alwaysAllowedToolsCanBeRevoked(ui);
  await twoAlwaysAllowedEditsOfOneFileBothLand(ui, chat, fake, workspace);
}

/** Wait until login.py on disk has (or, with `has` false, has not) `text`. */
async function onDisk(workspace, text, has = true) {
  await until(`login.py on disk ${has ? 'with' : 'without'} ${text}`,
    async () => readFileSync(join(workspace, LOGIN), 'utf8').includes(text) === has);
}

/** Open `path` from Quick Open and wait for its text. */
async function openFile(ui, path, text) {
  await ui.page.keyboard.press('Control+P');
  const input = ui.page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible' });
  await input.fill(path);
  await ui.page.locator('.quick-input-list .monaco-list-row', { hasText: path.split('/').pop() }).first().waitFor();
  await ui.page.keyboard.press('Enter');
  await ui.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  await editorLine(ui, text).waitFor();
}

function editorLine(ui, text) {
  return ui.page.locator('.part.editor .monaco-editor:not(.original-in-monaco-diff-editor) .view-line', { hasText: text }).first();
}

/**
 * Undo in the editor of login.py until `changed` is gone and the original line is back; the change was
 * saved, so the buffer differs from the disk now: saving puts the disk back as the next step expects.
 */
async function undoInLogin(ui, changed) {
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await editorLine(ui, 'def login').click();
  await until('the original line of login.py back after undo', async () => {
    if (await editorLine(ui, ORIGINAL_LINE).count() && !(await editorLine(ui, changed).count())) return true;
    await ui.page.keyboard.press('Control+Z');
    return false;
  }, { intervalMs: 500 });
  await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).waitFor();
  await ui.page.keyboard.press('Control+S'); // (the palette's first match for "File: Save" can be a compare command)
  await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).waitFor({ state: 'detached' });
}

async function send(chat, text) {
  await chat.locator('#input').fill(text);
  await chat.locator('#input').press('Enter');
}

async function editApprovedInTheCardReachesTheBuffer(ui, chat, fake, workspace) {
  await openFile(ui, LOGIN, ORIGINAL_LINE);
  await fake.script([
    { kind: 'tool_call', name: 'edit_file', id: 'toolu_e2e_edit',
      input: { path: LOGIN, old_text: ORIGINAL_LINE, new_text: 'return check(user, password)' } },
    { kind: 'text', chunks: ['login() now checks the password.'] },
  ]);
  await send(chat, 'make login check the password');
  const card = chat.locator('.approval[data-tool="edit_file"][data-outcome="pending"]');
  await card.locator('.approval-title', { hasText: `Edit ${LOGIN}` }).waitFor();
  await card.locator('.approval-diff .diff-add', { hasText: 'return check(user, password)' }).waitFor();
  await card.locator('.approval-diff .diff-del', { hasText: ORIGINAL_LINE }).waitFor();
  await ui.shot('chat-approval-edit', card);
  // The full diff in VS Code's diff editor, from the card.
  await card.locator('.approval-open-diff').click();
  await ui.page.locator('.monaco-diff-editor').first().waitFor();
  await ui.page.locator('.tab', { hasText: '(proposed)' }).first().waitFor();
  log('the edit card shows the diff; "Open diff" opened the diff editor');
  await card.locator('.approval-button.allow-once').click();
  const done = chat.locator('.approval[data-tool="edit_file"][data-outcome="allowed_once"]');
  await done.locator('.approval-outcome', { hasText: 'Allowed once.' }).waitFor();
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'now checks the password' }).waitFor();
  // The answered card stays in its turn, above the answer written after it (it was below, like a new exchange).
  const turn = chat.locator('.entry.turn[data-status="completed"]', { hasText: 'now checks the password' });
  await turn.locator('.approval[data-outcome="allowed_once"] + .body, .approval[data-outcome="allowed_once"] ~ .body').first().waitFor();
  // The diff editor closes with the answer; the change is in the buffer, and saved (commands see it).
  await ui.page.locator('.tab', { hasText: '(proposed)' }).waitFor({ state: 'detached' });
  await editorLine(ui, 'return check(user, password)').waitFor();
  await onDisk(workspace, 'return check(user, password)');
  if (await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).count()) throw new Error('the edited file is not saved');
  log('allowed edit applied to the open buffer and saved:', JSON.stringify(await done.locator('.approval-outcome').innerText()));
  await undoInLogin(ui, 'check(user, password)');
  log('undo took the change back');
}

/**
 * The user types in the file while the edit's card waits: approving it then must not apply the edit at
 * its old positions (it replaced part of the wrong line); the card says why and the file keeps the text.
 */
async function editOfAFileChangedMeanwhileIsNotApplied(ui, chat, fake) {
  await fake.script([
    { kind: 'tool_call', name: 'edit_file', id: 'toolu_e2e_stale',
      input: { path: LOGIN, old_text: ORIGINAL_LINE, new_text: 'return check(user, password)' } },
    { kind: 'text', chunks: ['The file had changed; I will read it again.'] },
  ]);
  await send(chat, 'make login check the password, again');
  const card = chat.locator('.approval[data-tool="edit_file"][data-outcome="pending"]');
  await card.waitFor();
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await editorLine(ui, 'def login').click();
  await ui.page.keyboard.press('Home');
  await ui.page.keyboard.type('import os\n');
  await editorLine(ui, 'import os').waitFor();
  await card.locator('.approval-button.allow-once').click();
  const outcome = chat.locator('.approval[data-tool="edit_file"][data-outcome="denied"] .approval-outcome',
    { hasText: `Not applied: ${LOGIN} changed in the editor` });
  await outcome.waitFor();
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'read it again' }).waitFor();
  // The user's line and the file as it was: nothing landed in the wrong place.
  await editorLine(ui, 'def login(user, password):').waitFor();
  await editorLine(ui, ORIGINAL_LINE).waitFor();
  if (await editorLine(ui, 'check(user, password)').count()) throw new Error('the stale edit was applied');
  log('an edit whose file changed meanwhile was not applied:', JSON.stringify(await outcome.innerText()));
  // The user's own line goes too (the next steps start from the saved file).
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await ui.command('File: Revert File');
  await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).waitFor({ state: 'detached' });
}

/**
 * The model reads and edits what the user sees: a line typed and not saved is in read_file's answer,
 * and edit_file changes that line in the buffer (it was refused with "save it first", the daemon having
 * made it from the disk). The buffer holds the user's unsaved line, so it is not saved for them.
 */
async function toolsWorkOnTheUnsavedBuffer(ui, chat, fake, workspace) {
  const before = (await fake.requests()).length;
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await editorLine(ui, 'def login').click();
  await ui.page.keyboard.press('Home');
  await ui.page.keyboard.type('# typed, not saved\n');
  await editorLine(ui, '# typed, not saved').waitFor();
  await fake.script([
    { kind: 'tool_call', name: 'read_file', id: 'toolu_e2e_read_unsaved', input: { path: LOGIN } },
    { kind: 'tool_call', name: 'edit_file', id: 'toolu_e2e_edit_unsaved',
      input: { path: LOGIN, old_text: '# typed, not saved', new_text: '# typed, then edited' } },
    { kind: 'text', chunks: ['Edited the line you typed.'] },
  ]);
  await send(chat, 'edit the line I just typed');
  const card = chat.locator('.approval[data-tool="edit_file"][data-outcome="pending"]');
  await card.locator('.approval-diff .diff-del', { hasText: '# typed, not saved' }).waitFor();
  await card.locator('.approval-button.allow-once').click();
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'Edited the line you typed.' }).waitFor();
  const results = (await fake.requests()).slice(before).map((r) => JSON.stringify(r.body.messages.at(-1)));
  if (!results.some((r) => r.includes('# typed, not saved\\ndef login(user, password):'))) {
    throw new Error(`read_file did not return the unsaved buffer: ${results.join('\n').slice(0, 1200)}`);
  }
  if (!results.some((r) => r.includes('Edited src/login.py'))) throw new Error(`the edit was not applied: ${results.join('\n').slice(0, 1200)}`);
  await editorLine(ui, '# typed, then edited').waitFor();
  await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).waitFor();
  await onDisk(workspace, '# typed', false);
  log('read_file saw the unsaved line and edit_file changed it in the buffer, left unsaved');
  await ui.command('File: Revert File');
  await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).waitFor({ state: 'detached' });
}

async function deniedCommandTellsTheModelWhy(ui, chat, fake) {
  const before = (await fake.requests()).length;
  await fake.script([
    { kind: 'tool_call', name: 'run_command', id: 'toolu_e2e_rm', input: { command: 'rm -rf build' } },
    { kind: 'text', chunks: ['Understood, I left the build folder alone.'] },
  ]);
  await send(chat, 'clean the build folder');
  const card = chat.locator('.approval[data-tool="run_command"][data-outcome="pending"]');
  await card.locator('.approval-command', { hasText: 'rm -rf build' }).waitFor();
  await card.locator('.approval-cwd', { hasText: 'in ' }).waitFor();
  // The daemon's title "Run `rm -rf build`": the command as code, no backticks on screen.
  await card.locator('.approval-title code', { hasText: 'rm -rf build' }).waitFor();
  if ((await card.locator('.approval-title').innerText()).includes('`')) throw new Error('the card title shows backticks');
  // Enter in the empty reason field (where Shift+Tab from the chat's input lands) must not deny:
  // the reason typed after it is the one the model gets (a denial here would have none).
  await card.locator('.approval-reason').press('Enter');
  await card.locator('.approval-reason').fill('keep the build cache');
  await ui.shot('chat-approval-command', card);
  await card.locator('.approval-reason').press('Enter');
  await chat.locator('.approval[data-tool="run_command"][data-outcome="denied"] .approval-outcome',
    { hasText: 'Denied: keep the build cache' }).waitFor();
  // The question answered from the keyboard, the keyboard is back in the message input (it was on nothing).
  await until('the keyboard back in the message input', () => inputHasKeyboard(chat));
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'left the build folder alone' }).waitFor();
  // The model's next request carried the denial and the reason as the tool's result.
  const seen = await until('the denial in a provider request', async () => {
    const requests = (await fake.requests()).slice(before);
    return requests.find((r) => JSON.stringify(r.body).includes('keep the build cache'));
  });
  const body = JSON.stringify(seen.body);
  if (!body.includes('The user denied this command')) throw new Error(`the model was not told of the denial: ${body.slice(0, 400)}`);
  log('the denial and its reason reached the model');
}

async function writeDelegationShowsItsTaskAndTools(ui, chat, fake) {
  await fake.script([
    { kind: 'tool_call', name: 'delegate', id: 'toolu_e2e_write_worker',
      input: { tier: 'fast', task: 'Rename login to sign_in in src/login.py', context: { mode: 'minimal' },
              allowed_tools: ['read_file', 'edit_file'] } },  // may write: asked before the worker starts
    { kind: 'text', chunks: ['Then I will leave the name as it is.'] },
  ]);
  await send(chat, 'rename login, with a worker');
  const card = chat.locator('.approval[data-tool="delegate"][data-outcome="pending"]');
  await card.locator('.approval-task', { hasText: 'Rename login to sign_in in src/login.py' }).waitFor();
  // the model the worker will run on is named too, routed before the question (what is approved is what runs)
  await card.locator('.approval-worker', { hasText: 'Worker on fast tier · claude-haiku-4-5 · may use edit_file' }).waitFor();
  await ui.shot('chat-approval-delegation', card);
  await card.locator('.approval-button.deny').click();
  await chat.locator('.approval[data-tool="delegate"][data-outcome="denied"]').waitFor();
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'leave the name as it is' }).waitFor();
  // asked before its worker would start: the question stays right above its delegation's card (it was drawn under it)
  await chat.locator('.approval[data-tool="delegate"][data-outcome="denied"] + .delegation[data-tool-use="toolu_e2e_write_worker"]')
    .waitFor();
  log('a write-capable delegation asked first, showing its task, tier and tools; denied, no worker ran');
}

/**
 * `#selection` with nothing selected is refused in the panel (it was dropped, and the model answered
 * about code it never saw); `#file` leaves the rest of the message as typed (its line breaks and
 * indentation were collapsed into one line).
 */
async function tokensTakeTheirTextFromTheEditor(ui, chat, fake) {
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await editorLine(ui, ORIGINAL_LINE).click();
  await ui.page.keyboard.press('End'); // a cursor, nothing selected
  const before = (await fake.requests()).length;
  await send(chat, 'explain #selection');
  const error = chat.locator('.entry.error', { hasText: 'missing_context' }).last();
  await error.filter({ hasText: 'Nothing is selected in the active editor' }).waitFor();
  await until('the refused text back in the input', async () => (await chat.locator('#input').inputValue()) === 'explain #selection');
  if ((await fake.requests()).length !== before) throw new Error('#selection with nothing selected reached the provider');
  log('#selection with nothing selected:', JSON.stringify(await error.innerText()));
  const typed = '#file why does this pass?\n\n    login("admin", "x")\n        -> True';
  await fake.script([{ kind: 'text', chunks: ['It never looks at the password.'] }]);
  await send(chat, typed);
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'never looks at the password' }).waitFor();
  const sent = (await fake.requests()).slice(before).find((r) => JSON.stringify(r.body).includes('why does this pass?'));
  const expected = typed.slice('#file '.length);
  if (!sent || !JSON.stringify(sent.body).includes(JSON.stringify(expected).slice(1, -1))) {
    throw new Error(`#file changed the rest of the message: ${JSON.stringify(sent?.body.messages ?? sent).slice(0, 600)}`);
  }
  log('#file attached the file and left the message as typed');
}

async function selectionGoesWithTheMessage(ui, chat, fake) {
  const before = (await fake.requests()).length;
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await editorLine(ui, ORIGINAL_LINE).click();
  await ui.page.keyboard.press('Home');
  await ui.page.keyboard.press('Shift+End');
  await ui.command('Switchman: Send Selection to Switchman');
  // The selection is attached once the daemon has checked it (a preview request): typed before
  // that, the message would go without it. The status bar says when it is attached.
  await ui.page.locator('.part.statusbar', { hasText: 'goes with your next message' }).first().waitFor();
  await fake.script([{ kind: 'text', chunks: ['It only compares the user name. Check the password too:\n\n',
    '```python\nreturn user == "admin" and check(password)\n```\n'] }]);
  await send(chat, 'what does this line do?');
  await chat.locator('.entry.user', { hasText: `Attached: ${LOGIN} (lines 2–2)` }).waitFor();
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'compares the user name' }).waitFor();
  const seen = await until('the selection in a provider request', async () => {
    const requests = (await fake.requests()).slice(before);
    return requests.find((r) => JSON.stringify(r.body).includes('what does this line do?'));
  });
  if (!JSON.stringify(seen.body).includes(ORIGINAL_LINE.replace(/"/g, '\\"'))) {
    throw new Error(`the selection did not reach the provider: ${JSON.stringify(seen.body).slice(0, 400)}`);
  }
  log('the selected line went to the provider with the message');
}

async function applyAsksThroughTheDaemon(ui, chat, workspace) {
  // Line 2 of login.py is still selected: Apply replaces it, after the same approval card.
  const turn = chat.locator('.entry.turn[data-status="completed"]', { hasText: 'compares the user name' }).last();
  await turn.locator('[data-code-action="apply"]').click();
  const card = chat.locator('.approval[data-tool="apply_code"][data-outcome="pending"]');
  const toast = ui.page.locator('.notifications-toasts .notification-toast', { hasText: 'Switchman' });
  await until('the Apply card (or a message saying why not)', async () => {
    if (await toast.count()) throw new Error(`Apply answered with a message: ${await toast.first().innerText()}`);
    return (await card.count()) > 0;
  });
  await card.locator('.approval-title', { hasText: `Apply the code block to ${LOGIN} (replacing the selection)` }).waitFor();
  await card.locator('.approval-diff .diff-add', { hasText: 'check(password)' }).waitFor();
  // "Always" for Apply: kept as the tool apply_code (revoked in the next step).
  await card.locator('.approval-button.allow-always', { hasText: 'Always allow apply_code in this workspace' }).click();
  await chat.locator('.approval[data-tool="apply_code"][data-outcome="allowed_always"] .approval-outcome',
    { hasText: 'apply_code is always allowed here now' }).waitFor();
  await editorLine(ui, 'return user == "admin" and check(password)').waitFor();
  await onDisk(workspace, 'and check(password)');
  log('Apply went through the approval card and changed the buffer (saved)');
  await undoInLogin(ui, 'check(password)');
}

async function alwaysAllowedToolsCanBeRevoked(ui) {
  // Not ui.command(): the QuickPick of the command takes the palette's place at once.
  await ui.page.keyboard.press('F1');
  const input = ui.page.locator('.quick-input-widget input.input');
  await input.waitFor({ state: 'visible' });
  await input.fill('>Switchman: Manage Always-Allowed Tools');
  await ui.page.locator('.quick-input-list .monaco-list-row', { hasText: 'Manage Always-Allowed Tools' }).first().waitFor();
  await ui.page.keyboard.press('Enter');
  const row = ui.page.locator('.quick-input-list .monaco-list-row', { hasText: 'apply_code' }).first();
  await row.waitFor();
  await ui.shot('trust-quick-pick', ui.page.locator('.quick-input-widget'));
  await row.locator('.quick-input-list-checkbox, input[type="checkbox"], .monaco-custom-toggle').first().click();
  await ui.page.locator('.quick-input-widget .monaco-button', { hasText: 'OK' }).first().click();
  await ui.page.locator('.notifications-toasts .notification-toast', { hasText: 'Switchman will ask again before: apply_code' }).waitFor();
  log('"Manage Always-Allowed Tools" listed apply_code and revoked it');
}

/**
 * An always-allowed edit_file twice on one file in a turn: the first is saved, so the second (made
 * from the disk) is not refused as "unsaved changes"; the disk has both, and undo takes back the last.
 */
async function twoAlwaysAllowedEditsOfOneFileBothLand(ui, chat, fake, workspace) {
  const before = (await fake.requests()).length;
  await fake.script([
    { kind: 'tool_call', name: 'edit_file', id: 'toolu_e2e_twice_1',
      input: { path: LOGIN, old_text: ORIGINAL_LINE, new_text: 'return check(user, password)' } },
    { kind: 'tool_call', name: 'edit_file', id: 'toolu_e2e_twice_2',
      input: { path: LOGIN, old_text: 'def login(user, password):', new_text: 'def login(user, password):  # checked' } },
    { kind: 'text', chunks: ['Both edits made.'] },
  ]);
  await send(chat, 'make login check the password and mark it');
  const card = chat.locator('.approval[data-tool="edit_file"][data-outcome="pending"]');
  await card.locator('.approval-button.allow-always').click();
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'Both edits made.' }).waitFor();
  const results = (await fake.requests()).slice(before).map((r) => JSON.stringify(r.body.messages.at(-1)));
  if (results.filter((r) => r.includes('Edited src/login.py')).length !== 2) {
    throw new Error(`both edits were not applied: ${results.join('\n').slice(0, 1200)}`);
  }
  await editorLine(ui, '# checked').waitFor();
  await editorLine(ui, 'return check(user, password)').waitFor();
  await onDisk(workspace, 'def login(user, password):  # checked\n    return check(user, password)');
  if (await ui.page.locator('.tab.dirty', { hasText: 'login.py' }).count()) throw new Error('the edited file is not saved');
  log('two always-allowed edits of login.py both landed and were saved');
  await ui.page.locator('.tab', { hasText: 'login.py' }).first().click();
  await editorLine(ui, 'def login').click();
  await until('the second edit undone', async () => {
    if (!(await editorLine(ui, '# checked').count())) return true;
    await ui.page.keyboard.press('Control+Z');
    return false;
  }, { intervalMs: 500 });
  await editorLine(ui, 'return check(user, password)').waitFor();
  log('undo took back the last edit only');
  await undoInLogin(ui, 'check(user, password)');
}
