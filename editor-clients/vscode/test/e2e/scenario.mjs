// What a user does in VS Code with the extension, step by step, checked in the real UI.
import { chromium } from 'playwright-core';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { inputHasKeyboard, log, until } from './support.mjs';
import { toolSteps } from './tools.mjs';
import { ratingsReachThePatternStore } from './feedback.mjs';
import { anotherWindowsTurnShowsInThePanel } from './windows.mjs';
import {
  aHoveredCardKeepsItsColours, aMessageSentWhileScrolledUpIsInView, aTableHeaderKeepsItsWords, theEndStaysInViewWhenThePanelIsMadeSmaller,
  theInputGrowsWithTheMessage, aLongMessageIsFolded, theInputShowsItsWholePlaceholderWhenNarrow,
} from './layout.mjs';
import { daemonKilledMidAnswer, patternSuggestionIsOneClickAway, windowReloadedMidAnswer } from './resilience.mjs';

const STATUS_ITEM = '[id="switchman.switchman.switchman.status.0"]';
const PROFILE_ITEM = '[id="switchman.switchman.switchman.profile.0"]';
const TIMEOUT = 30000;
const FOCUS_CHAT = 'Control+Shift+Alt+S';

export async function runScenario({ url, workspace, fake, artifacts, chromium: executablePath, env, store, daemon }) {
  const browser = await chromium.launch({
    executablePath,
    headless: true,
    env,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking',
      '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-default-apps', '--disable-extensions',
      '--no-default-browser-check', '--metrics-recording-only',
      // no DNS at all: chromium would otherwise look up Google's update and autofill hosts
      '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost'],
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(TIMEOUT);
  const external = [];
  page.on('request', (request) => {
    // Webview resources use *.vscode-resource.vscode-cdn.net URLs that VS Code's service worker answers locally.
    const local = /^(http|ws):\/\/127\.0\.0\.1[:/]|^(data|blob|vscode-[a-z-]+):|^https:\/\/[^/]+\.vscode-resource\.vscode-cdn\.net\//;
    if (!local.test(request.url())) external.push(request.url());
  });
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push({ text: message.text(), url: message.location().url ?? '' });
  });
  const ui = new Workbench(page, artifacts);
  try {
    await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator('.monaco-workbench').waitFor();
    log('workbench visible');
    await statusBarShowsDaemon(ui);
    await brokenRoutingFileIsFlagged(ui);
    await savedFixTurnsTheStatusBack(ui, workspace);
    await aSkillBelowABlocksFolderClearsItsWarning(ui, workspace, daemon.env.SWITCHMAN_CONFIG_DIR);
    const chat = await openChat(ui);
    await draftPreviewShowsRoute(ui, chat);
    await answerStreamsIntoThePanel(ui, chat, fake);
    await badgeExplainsTheChoice(ui, chat);
    await refusedMessageIsShownPlainly(ui, chat);
    await stopCancelsTheAnswer(ui, chat, fake);
    await aMessageSentWhileScrolledUpIsInView(ui, chat, fake);
    await theEndStaysInViewWhenThePanelIsMadeSmaller(ui, chat, fake);
    await aTableHeaderKeepsItsWords(ui, chat, fake);
    await theInputGrowsWithTheMessage(ui, chat, fake);
    await aLongMessageIsFolded(ui, chat, fake);
    await theInputShowsItsWholePlaceholderWhenNarrow(ui, chat);
    await delegationShowsAsALiveCard(ui, chat, fake);
    await aHoveredCardKeepsItsColours(ui, chat);
    await delegateSelectionFromTheEditorMenu(ui, chat, fake);
    await toolSteps(ui, chat, fake, workspace);
    await commandsAnswer(ui, chat);
    await aReloadedWindowShowsWhatWasTyped(await ratingsReachThePatternStore(ui, chat, fake, store));
    await transcriptSurvivesAReload(ui);
    await anotherWindowsTurnShowsInThePanel(ui, fake, workspace, daemon);
    await statusBarPickerSetsTheModel(ui);
    await profileItemChoosesTheProfile(ui);
    await sessionsViewOpensTheTranscript(ui);
    await workerSessionsShowOnlyWhenAskedFor(ui);
    await theChatKeyWorksInTheTerminal(ui);
    await newChatStartsEmpty(ui);
    await patternSuggestionIsOneClickAway(ui, ui.chatFrame(), fake, daemon.env.SWITCHMAN_CONFIG_DIR);
    await daemonKilledMidAnswer(ui, ui.chatFrame(), fake, daemon.switchman);
    await windowReloadedMidAnswer(ui, ui.chatFrame(), fake);
    await providerFailuresAreShownPlainly(ui, fake);
    await daemonThatCannotStartSaysHowToFix(ui);
    // CSP violations anywhere, or errors raised by the chat webview's script, fail the run.
    const ours = consoleErrors.filter((e) => /Content Security Policy/.test(e.text) || /switchman\.switchman|webview\.js/.test(e.url));
    if (ours.length > 0) throw new Error(`console errors from the extension:\n${ours.map((e) => `${e.text} (${e.url})`).join('\n')}`);
    log(`console errors: ${consoleErrors.length}, none from the extension's webview`);
    if (external.length > 0) throw new Error(`the page tried to reach other hosts: ${external.slice(0, 5).join(', ')}`);
  } catch (error) {
    await ui.shot('failure').catch(() => undefined);
    throw error;
  } finally {
    await browser.close();
  }
}

class Workbench {
  constructor(page, artifacts) {
    this.page = page;
    this.artifacts = artifacts;
    this.count = 0;
  }

  /** A screenshot kept with the run's artifacts: the page, one element (a locator) or a `{ clip }`. */
  async shot(name, target = {}) {
    const file = join(this.artifacts, `${String(++this.count).padStart(2, '0')}-${name}.png`);
    if (typeof target.screenshot === 'function') await target.screenshot({ path: file });
    else await this.page.screenshot({ path: file, ...target });
    log('screenshot', file);
  }

  /** Run a command from the palette by its title. */
  async command(title) {
    await this.page.keyboard.press('F1');
    const input = this.page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible' });
    await input.fill(`>${title}`);
    await this.page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
    await this.page.keyboard.press('Enter');
    await this.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
  }

  statusItem() {
    return this.page.locator(STATUS_ITEM);
  }

  chatFrame() {
    return this.page.frameLocator('iframe.webview.ready').frameLocator('iframe#active-frame');
  }
}

/**
 * Hover `target` until `hover` is visible: move away and back between attempts (a hover that
 * started before layout or before the language server answered is not re-requested by
 * itself), and with `keyboard` end with the editor's own Show Hover command on the word.
 */
async function showHover(ui, target, hover, { attempts = 4, keyboard = false } = {}) {
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    await ui.page.mouse.move(1, 1);
    await target.hover();
    try {
      await hover.first().waitFor({ timeout: 8000 });
      return;
    } catch {
      log(`hover not shown yet (attempt ${attempt})`);
    }
  }
  if (!keyboard) {
    await hover.first().waitFor();
    return;
  }
  await target.click();
  await ui.page.keyboard.press('Control+K');
  await ui.page.keyboard.press('Control+I');
  await hover.first().waitFor();
}

async function statusBarShowsDaemon(ui) {
  // The workspace's routing.yaml is broken: the item names the model ("auto") and warns.
  await ui.statusItem().filter({ hasText: 'auto' }).waitFor();
  const label = await ui.statusItem().getAttribute('aria-label');
  log('status bar item:', JSON.stringify(await ui.statusItem().innerText()), 'aria-label:', label);
  await ui.statusItem().locator('.codicon-warning').waitFor();
}

async function brokenRoutingFileIsFlagged(ui) {
  await ui.page.keyboard.press('F1');
  const input = ui.page.locator('.quick-input-widget input.input');
  await input.fill('.switchman/routing.yaml');
  await ui.page.locator('.quick-input-list .monaco-list-row', { hasText: 'routing.yaml' }).first().waitFor();
  await ui.page.keyboard.press('Enter');
  const squiggle = ui.page.locator('.monaco-editor .squiggly-error').first();
  await squiggle.waitFor();
  log('error squiggle in .switchman/routing.yaml');
  // The squiggle sits under the text layer: hover the misspelled word itself. On a loaded
  // machine the first hover can land before the editor's layout settles, so hover again
  // (and in the end ask for the hover from the keyboard) until it shows.
  const word = ui.page.locator('.monaco-editor .view-lines span span', { hasText: 'opsu' }).last();
  const hover = ui.page.locator('.monaco-hover', { hasText: "Unknown model 'opsu'" });
  await showHover(ui, word, hover, { keyboard: true });
  log('hover:', (await hover.first().innerText()).split('\n')[0]);
  await ui.shot('routing-yaml-diagnostic');
  const editor = await ui.page.locator('.part.editor').boundingBox();
  await ui.shot('routing-yaml-hover', { clip: { x: editor.x, y: editor.y, width: Math.min(editor.width, 920), height: 200 } });
  await ui.page.keyboard.press('Escape');
}

async function savedFixTurnsTheStatusBack(ui, workspace) {
  // VS Code watches the file for the daemon (workspace/didChangeWatchedFiles): no chat turn needed.
  const file = join(workspace, '.switchman/routing.yaml');
  const broken = readFileSync(file, 'utf8');
  writeFileSync(file, broken.replace('use: opsu', 'use: opus'));
  await ui.statusItem().locator('.codicon-warning').waitFor({ state: 'detached' });
  log('status bar after saving the fix:', JSON.stringify(await ui.statusItem().innerText()));
  writeFileSync(file, broken);
  await ui.statusItem().locator('.codicon-warning').waitFor();
  log('status bar after saving the broken file again:', JSON.stringify(await ui.statusItem().innerText()));
}

/**
 * A `workspaces:` block of your routing.yaml keyed on a folder of repositories (none open) may name the
 * skills of those below it: a skill added there outside VS Code clears the block's unknown-skill warning.
 * VS Code watches the open folder only; the daemon polls those skills while routing.yaml is open.
 */
async function aSkillBelowABlocksFolderClearsItsWarning(ui, workspace, configDir) {
  const code = join(dirname(workspace), 'code');
  const skills = join(code, 'ledgers/.switchman/skills');
  mkdirSync(skills, { recursive: true });
  const routing = join(configDir, 'routing.yaml');
  writeFileSync(routing, `workspaces:\n  ${JSON.stringify(code)}:\n    rules:\n      - name: ledger work\n`
    + '        when: {skills_matching_message_includes: [ledger]}\n        use: haiku\n');
  try {
    // outside the open folder: Quick Open takes its absolute path
    await ui.page.keyboard.press('Control+P');
    const input = ui.page.locator('.quick-input-widget input.input');
    await input.waitFor({ state: 'visible' });
    await input.fill(routing);
    await ui.page.locator('.quick-input-list .monaco-list-row', { hasText: basename(configDir) }).first().click();
    await ui.page.locator('.quick-input-widget').waitFor({ state: 'hidden' });
    await ui.page.locator('.part.editor .view-line', { hasText: 'ledger work' }).first().waitFor();
    const squiggle = ui.page.locator('.part.editor .monaco-editor .squiggly-warning').first();
    await squiggle.waitFor();
    log('unknown-skill warning in your routing.yaml, for a skill of', code);
    writeFileSync(join(skills, 'ledger.md'), '---\nname: ledger\ndescription: Ledgers\n---\n');
    await squiggle.waitFor({ state: 'detached' });
    log('the warning cleared once', join(skills, 'ledger.md'), 'was written outside VS Code');
    await ui.command('View: Close Editor');
  } finally {
    rmSync(routing, { force: true });
  }
}

async function openChat(ui) {
  await ui.page.keyboard.press(FOCUS_CHAT); // the keybinding focuses the chat
  const chat = ui.chatFrame();
  await chat.locator('#input').waitFor();
  await chat.locator('#send:not([disabled])').waitFor();
  // The keyboard is in the message input: the user can type at once.
  await until('the keyboard in the message input', () => inputHasKeyboard(chat));
  await ui.page.keyboard.type('hello');
  await until('the typed text in the input', async () => (await chat.locator('#input').inputValue()) === 'hello');
  await chat.locator('#input').fill('');
  // In the panel: the Explorer keeps the primary side bar.
  await ui.page.locator('.part.panel .pane-header', { hasText: 'Chat' }).first().waitFor();
  await ui.page.locator('.part.sidebar .composite.title', { hasText: 'Explorer' }).waitFor();
  await chat.locator('#session', { hasText: 'New chat' }).waitFor();
  log('chat open in the panel:', await chat.locator('#session').innerText());
  return chat;
}

async function draftPreviewShowsRoute(ui, chat) {
  await chat.locator('#input').fill('write a commit message for the login fix');
  await chat.locator('#preview', { hasText: '→ claude-haiku-4-5 · rule: fast for commits' }).waitFor();
  log('preview:', await chat.locator('#preview').innerText());
}

async function answerStreamsIntoThePanel(ui, chat, fake) {
  await fake.script([{ kind: 'stall', after_chunks: 2,
    chunks: ['**Fix login check**\n\n', 'Compare the password too, not only the user name:\n\n```python\nreturn check(user, password)\n```\n\nThen ',
      'run the tests', ' and commit:\n\n', '```sh\ngit commit -am "Fix login check"\n```\n', 'Done.'] }]);
  await chat.locator('#input').press('Enter');
  const turn = chat.locator('.entry.turn').last();
  await turn.locator('.route-badge', { hasText: 'claude-haiku-4-5 · rule: fast for commits' }).waitFor();
  await fake.waitForStalls(1);
  // Half an answer is on screen, rendered as Markdown, while the turn is still running.
  await chat.locator('.entry.turn[data-status="running"] .markdown strong', { hasText: 'Fix login check' }).waitFor();
  await chat.locator('#stop').waitFor({ state: 'visible' });
  log('partial answer streamed:', JSON.stringify(await turn.locator('.markdown').innerText()));
  await ui.shot('chat-streaming');
  // The first paragraph and the code block are finished: the user selects the paragraph's text
  // while the answer streams on; the later deltas and the turn's end leave the paragraph's node,
  // the selection in it and the code block's Copy button alone (before: rebuilt on every delta).
  const body = turn.locator('.markdown');
  await body.locator('pre', { hasText: 'return check(user, password)' }).waitFor();
  const copyWhileStreaming = await body.evaluate((element) => {
    element.querySelector('p').e2eKept = true;
    const copy = element.querySelector('[data-code-action="copy"]');
    if (copy) copy.e2eKept = true;
    return copy !== null;
  });
  await body.locator('p').first().click({ clickCount: 3 });
  await until('the first paragraph selected', async () => (await selectedText(chat)).includes('Fix login check'));
  await fake.release();
  await chat.locator('.entry.turn[data-status="completed"] .markdown code', { hasText: 'git commit -am' }).waitFor();
  const kept = await body.evaluate((element) => ({
    paragraph: element.querySelector('p').e2eKept === true,
    copy: element.querySelector('[data-code-action="copy"]')?.e2eKept === true,
    selectionInParagraph: element.querySelector('p').contains(window.getSelection().anchorNode),
  }));
  const selected = await selectedText(chat);
  if (!copyWhileStreaming || !kept.paragraph || !kept.copy || !kept.selectionInParagraph || !selected.includes('Fix login check')) {
    throw new Error(`the streamed answer rebuilt its finished blocks: ${JSON.stringify({ copyWhileStreaming, ...kept, selected })}`);
  }
  log('the selection in the first paragraph, its node and the Copy button survived the later deltas:', JSON.stringify(selected.trim()));
  streamedAnswerHtml = await body.evaluate((element) => element.innerHTML);
  await chat.locator('.entry.turn[data-status="completed"] .markdown code', { hasText: 'return check(user, password)' }).waitFor();
  await chat.locator('#send').waitFor({ state: 'visible' });
  await chat.locator('#session', { hasText: 'write a commit message for the login fix' }).waitFor();
  log('answer complete; the header shows the session title');
}

/** The answer's HTML once it had streamed in block by block: a rebuilt chat renders it whole, the same. */
let streamedAnswerHtml = '';

async function badgeExplainsTheChoice(ui, chat) {
  await chat.locator('.entry.turn').last().locator('.route-badge').click();
  const explanation = chat.locator('.entry.turn').last().locator('.explanation');
  await explanation.locator('table.chain tr.winner', { hasText: 'Configured rule "fast for commits"' }).waitFor();
  await explanation.locator('.explanation-head', { hasText: 'Chose claude-haiku-4-5' }).waitFor();
  log('explanation:', (await explanation.locator('.explanation-head').innerText()),
    `(${await explanation.locator('table.chain tbody tr').count()} rows)`);
  await ui.shot('chat-why-this-model');
  // At a sidebar's ~300 px the table wraps inside the view instead of overflowing it.
  const fits = await explanation.evaluate((element) => {
    document.body.style.width = '300px';
    const table = element.querySelector('table.chain');
    const result = { table: table.scrollWidth, width: element.clientWidth };
    return result;
  });
  await ui.shot('chat-why-this-model-300px', explanation);
  await explanation.evaluate(() => { document.body.style.width = ''; });
  if (fits.table > fits.width) throw new Error(`the chain table overflows at 300 px: ${JSON.stringify(fits)}`);
  log('the chain table fits 300 px:', JSON.stringify(fits));
  // The chat is rebuilt (as when the panel is reopened): the chain the user opened is open again.
  const reloaded = (await reloadChat(ui)).locator('.entry.turn').last();
  await reloaded.locator('.route-badge[aria-expanded="true"]', { hasText: 'fast for commits' }).waitFor();
  await reloaded.locator('.explanation table.chain tr.winner', { hasText: 'Configured rule "fast for commits"' }).waitFor();
  log('the routing chain is still open after the chat was rebuilt');
  const rebuiltHtml = await reloaded.locator('.markdown').evaluate((element) => element.innerHTML);
  if (rebuiltHtml !== streamedAnswerHtml) {
    throw new Error(`the streamed answer differs from its full render:\n${streamedAnswerHtml}\n---\n${rebuiltHtml}`);
  }
  log('the streamed answer\'s final HTML is its full render\'s');
}

async function refusedMessageIsShownPlainly(ui, chat) {
  await chat.locator('#input').fill('@nosuch hello');
  await chat.locator('#preview.error', { hasText: 'Unknown model alias' }).waitFor();
  await chat.locator('#input').press('Enter');
  const error = chat.locator('.entry.error').last();
  await error.filter({ hasText: 'unknown_alias' }).waitFor();
  await error.filter({ hasText: "Unknown model alias '@nosuch'" }).waitFor();
  // Nothing was sent: the text comes back to the input to be fixed.
  await until('the refused text back in the input', async () => (await chat.locator('#input').inputValue()) === '@nosuch hello');
  await chat.locator('#input').fill('');
  log('refused message shown:', (await error.innerText()).replace(/\s+/g, ' '));
}

async function stopCancelsTheAnswer(ui, chat, fake) {
  await fake.script([{ kind: 'stall', chunks: ['Once upon a time', ' there was a very long story'], after_chunks: 1 }]);
  await chat.locator('#input').fill('tell me a long story');
  await chat.locator('#input').press('Enter');
  await fake.waitForStalls(2);
  await chat.locator('.entry.turn[data-status="running"]', { hasText: 'Once upon a time' }).waitFor();
  // No new session while an answer is being written: New chat says so instead of ignoring the click.
  await chat.locator('#new-chat[disabled]', { hasText: 'New chat' }).waitFor();
  // Enter while the answer is written sends nothing: the line under the input says so (it said nothing).
  await chat.locator('#input').fill('and a short one');
  await chat.locator('#input').press('Enter');
  await chat.locator('#preview.busy', { hasText: 'Not sent: an answer is still being written' }).waitFor();
  if ((await chat.locator('#input').inputValue()) !== 'and a short one') throw new Error('the unsent message left the input');
  await chat.locator('#stop').click();
  const stopped = chat.locator('.entry.turn[data-status="cancelled"]', { hasText: 'Once upon a time' });
  await stopped.waitFor();
  // Stopped before the provider reported usage: all of its cost is an estimate, said once.
  const cost = await stopped.locator('.turn-status', { hasText: '(estimated)' }).innerText();
  if (!/^cancelled · ~\$[0-9.]+ \(estimated\)$/.test(cost)) throw new Error(`a stopped turn's cost reads ${JSON.stringify(cost)}`);
  await ui.shot('stopped-turn-cost-estimated', stopped);
  await chat.locator('#new-chat:not([disabled])').waitFor();
  await chat.locator('#preview.busy').waitFor({ state: 'detached' });
  await chat.locator('#input').fill('');
  await fake.release();
  log('Stop cancelled the running answer');
}

async function delegationShowsAsALiveCard(ui, chat, fake) {
  // The planner (sonnet, the global default, may delegate) calls `delegate`; the worker's answer
  // stalls half-way so the card is seen running; then the planner answers with the result.
  await fake.script([
    { kind: 'tool_call', name: 'delegate', id: 'toolu_e2e_delegate',
      input: { tier: 'fast', task: 'List the functions in src/login.py', context: { mode: 'minimal' },
              allowed_tools: ['read_file'] } },  // read-only: no approval asked
    { kind: 'stall', after_chunks: 1, chunks: ['Reading src/login.py. ', 'It defines **login()** only.'] },
    { kind: 'text', chunks: ['The worker found one function: `login()`.'] },
  ]);
  await chat.locator('#input').fill('plan the cleanup of src/login.py');
  await chat.locator('#input').press('Enter');
  const card = chat.locator('.entry.turn').last().locator('.delegation[data-tool-use="toolu_e2e_delegate"]');
  await card.locator('.delegation-title', { hasText: 'Worker · fast · claude-haiku-4-5' }).waitFor();
  await card.locator('.delegation-task', { hasText: 'List the functions in src/login.py' }).waitFor();
  await fake.waitForStalls(3);
  await chat.locator('.delegation[data-status="running"] .delegation-meta', { hasText: 'running · 1 turn' }).waitFor();
  await card.locator('.delegation-stop').waitFor();
  log('delegation card running:', JSON.stringify(await card.locator('.delegation-head').innerText()));
  await ui.shot('chat-delegation-running', card);
  // The user selects the task while the worker runs: its progress, its end and the planner's answer
  // update the card in place, so the selection (and the focusable toggle) stay.
  await markKept(card);
  await card.locator('.delegation-task').click({ clickCount: 3 });
  await until('the task selected', async () => (await selectedText(chat)).includes('List the functions in src/login.py'));
  await fake.release();
  await chat.locator('.delegation[data-status="completed"] .delegation-meta', { hasText: 'done · 1 turn · $' }).waitFor();
  await chat.locator('.entry.turn[data-status="completed"] .markdown code', { hasText: 'login()' }).waitFor();
  // The turn's cost includes its worker's (it showed the planner's calls only, beside the card's own cost).
  await chat.locator('.entry.turn[data-status="completed"]:has(.delegation[data-tool-use="toolu_e2e_delegate"]) .turn-status',
    { hasText: 'incl. workers $' }).waitFor();
  await stillKept(card, 'the delegation card');
  const selected = await selectedText(chat);
  if (!selected.includes('List the functions in src/login.py')) {
    throw new Error(`the selection in the card was lost while the worker ran: ${JSON.stringify(selected)}`);
  }
  log('the selection in the card survived the worker\'s progress and end:', JSON.stringify(selected.trim()));
  if ((await card.locator('.delegation-stop').count()) !== 0) throw new Error('a finished worker still offers Stop');
  // Expanding the card fetches the worker's own transcript (switchman/session of the worker session).
  // Folded, the task shows three lines at most (the whole of it once opened).
  if ((await card.locator('.delegation-task').evaluate((e) => getComputedStyle(e).webkitLineClamp)) !== '3') {
    throw new Error('a folded card\'s task is not cut to three lines');
  }
  await card.locator('.delegation-toggle').click();
  await card.locator('.delegation-transcript .worker-message.task', { hasText: 'List the functions in src/login.py' }).waitFor();
  if ((await card.locator('.delegation-task').evaluate((e) => getComputedStyle(e).webkitLineClamp)) !== 'none') {
    throw new Error('an opened card\'s task is still cut');
  }
  await card.locator('.delegation-transcript .worker-message.worker strong', { hasText: 'login()' }).waitFor();
  log('worker transcript in the card:', JSON.stringify(await card.locator('.delegation-transcript').innerText()));
  await ui.shot('chat-delegation-transcript', chat.locator('.entry.turn').last());
  await stopOnACardStopsOnlyThatWorker(ui, chat, fake);
}

async function stopOnACardStopsOnlyThatWorker(ui, chat, fake) {
  await fake.script([
    // The planner runs on sonnet (balanced): the tier floor caps this "deep" worker at balanced.
    { kind: 'tool_call', name: 'delegate', id: 'toolu_e2e_stopped',
      input: { tier: 'deep', task: 'Count the lines of src/login.py', context: { mode: 'minimal' },
              allowed_tools: ['read_file'] } },  // read-only: no approval asked
    { kind: 'stall', after_chunks: 1, chunks: ['Counting', ' lines: 2'] },
    { kind: 'text', chunks: ['The worker was stopped; I will count them myself.'] },
  ]);
  await chat.locator('#input').fill('count the lines of src/login.py, via a worker');
  await chat.locator('#input').press('Enter');
  const card = chat.locator('.delegation[data-tool-use="toolu_e2e_stopped"]');
  await fake.waitForStalls(4);
  await card.locator('.delegation-title[data-tier="balanced"]', { hasText: 'Worker · balanced (capped from deep) · claude-sonnet-4-6' })
    .waitFor();
  // From the keyboard: once Stop goes away, the keyboard stays on the card (it was left on nothing).
  await card.locator('.delegation-stop').focus();
  await ui.page.keyboard.press('Enter');
  await until('the keyboard on the stopped card\'s toggle', () => card.locator('.delegation-toggle')
    .evaluate((toggle) => document.activeElement === toggle));
  await card.locator('.delegation-meta', { hasText: 'stopped' }).waitFor();
  await card.locator('.delegation-note.error', { hasText: 'stopped: ' }).waitFor();
  // Only the worker stopped: the planner's turn goes on and completes with its own answer.
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'I will count them myself' }).waitFor();
  await fake.release();
  log('Stop on the card stopped only the worker:', JSON.stringify(await card.innerText()));
  await ui.shot('chat-delegation-stopped', card);
}

/**
 * Reload the chat's webview and wait until the new page has loaded the chat from the daemon (the
 * old page, or the new one showing only its saved state, would pass checks meant for the rebuild).
 */
async function reloadChat(ui) {
  await ui.chatFrame().locator('body').evaluate((body) => { body.e2eOld = true; });
  await ui.command('Developer: Reload Webviews');
  await until('the reloaded chat', () => ui.chatFrame().locator('body').evaluate((body) => body.e2eOld !== true));
  await ui.chatFrame().locator('#transcript[aria-busy="false"]').waitFor();
  return ui.chatFrame();
}

/** Mark a card and its toggle (a property the page never sets) to tell later whether they were rebuilt. */
async function markKept(card) {
  await card.evaluate((element) => {
    element.e2eKept = true;
    element.querySelector('.delegation-toggle').e2eKept = true;
  });
}

/** Throw unless the card and toggle marked by {@link markKept} are still the same nodes. */
async function stillKept(card, what) {
  const kept = await card.evaluate((element) => element.e2eKept === true
    && element.querySelector('.delegation-toggle').e2eKept === true);
  if (!kept) throw new Error(`${what} was rebuilt instead of updated in place`);
}

async function selectedText(chat) {
  return chat.locator('body').evaluate(() => String(window.getSelection()));
}

/**
 * Select all of the editor's text, right-click on the selected text and choose an item of the
 * context menu, until `chosen` shows what the item does (a right-click outside the selection would
 * move the cursor; a click landing while the menu still lays out is lost).
 */
async function selectAllAndChoose(ui, editor, word, label, chosen) {
  const item = ui.page.locator('.monaco-menu .action-item:not(.disabled) .action-label', { hasText: label }).first();
  const token = editor.locator('.view-lines span span', { hasText: word }).first();
  await until(`"${label}" chosen in the editor context menu`, async () => {
    if (await chosen.isVisible()) return true;
    if (!(await item.isVisible())) {
      await ui.page.keyboard.press('Escape');
      await token.click();
      await ui.page.keyboard.press('Control+A');
      await editor.locator('.selected-text').first().waitFor({ timeout: 3000 });
      await token.click({ button: 'right' });
      await item.waitFor({ timeout: 3000 });
    }
    await item.click();
    await chosen.waitFor({ timeout: 3000 });
    return true;
  });
}

async function delegateSelectionFromTheEditorMenu(ui, chat, fake) {
  // The user selects code, chooses "Delegate Selection" in the editor's context menu and says what to do;
  // the worker may edit files, so the delegation is approved first; its card and answer show in the chat.
  await fake.script([{ kind: 'text', chunks: ['login() compares the user name ', 'with **admin** only.'] }]);
  await ui.page.keyboard.press('F1');
  const quickOpen = ui.page.locator('.quick-input-widget input.input');
  await quickOpen.fill('src/login.py');
  await ui.page.locator('.quick-input-list .monaco-list-row', { hasText: 'login.py' }).first().waitFor();
  await ui.page.keyboard.press('Enter');
  const editor = ui.page.locator('.monaco-editor', { has: ui.page.locator('.view-lines', { hasText: 'def login(user, password):' }) }).first();
  await editor.waitFor();
  const asked = ui.page.locator('.quick-input-widget', { hasText: 'What should the worker do with the selection?' });
  await selectAllAndChoose(ui, editor, 'login', 'Delegate Selection', asked);
  const input = asked.locator('input.input');
  await input.fill('fast explain this');
  await input.press('Enter');
  const approval = chat.locator('.approval[data-tool="delegate"][data-outcome="pending"]');
  await approval.locator('.approval-title', { hasText: 'Delegate to a fast worker' }).waitFor();
  // the model the worker will run on, routed before the question: what the user approves is what runs
  await approval.locator('.approval-worker', { hasText: 'Worker on fast tier · claude-haiku-4-5 · may use' }).waitFor();
  await ui.shot('delegate-selection-approval', approval);
  await approval.locator('.approval-button.allow-once').click();
  await chat.locator('.approval[data-tool="delegate"][data-outcome="allowed_once"]').waitFor();
  const card = chat.locator('.entry.delegated .delegation[data-status="completed"]');
  await card.locator('.delegation-title', { hasText: 'Worker · fast · claude-haiku-4-5' }).waitFor();
  await card.locator('.delegation-task', { hasText: 'explain this' }).waitFor();
  // The worker's view starts with its handoff envelope: from you, to a fast subagent worker.
  await card.locator('.delegation-toggle').click();
  await card.locator('.handoff dd', { hasText: 'you (/delegate)' }).waitFor();
  await card.locator('.handoff dd', { hasText: 'fast worker, profile subagent' }).waitFor();
  await chat.locator('.entry.command', { hasText: 'login() compares the user name with **admin** only.' }).waitFor();
  await chat.locator('.entry.user', { hasText: '/delegate fast explain this' }).filter({ hasText: 'src/login.py' }).waitFor();
  const sent = (await fake.requests()).at(-1);
  const first = sent.body.messages[0].content[0].text;
  if (!first.startsWith('explain this\n\nAttached selection src/login.py (lines 1-2)')) {
    throw new Error(`the worker was not given the selection: ${JSON.stringify(first.slice(0, 120))}`);
  }
  log('Delegate Selection: the worker answered', JSON.stringify(await chat.locator('.entry.command').last().innerText()));
  await ui.shot('chat-delegate-selection', chat.locator('.entry.delegated').last());
}

async function commandsAnswer(ui, chat) {
  await ui.command('Switchman: Check Rules');
  const output = chat.locator('.entry.command').last();
  await output.waitFor();
  log('/rules check answered in the panel:', JSON.stringify((await output.innerText()).split('\n')[0]));
  await ui.command('Switchman: Why This Model?');
  await ui.page.locator('.monaco-editor .view-lines', { hasText: 'Chain:' }).first().waitFor();
  await ui.page.locator('.tab', { hasText: 'Why this model' }).first().waitFor();
  log('"Why This Model?" opened the explanation of the last turn');
}

/**
 * After Reload Window (a new extension host: the chat comes from the daemon and the webview's saved
 * state), a message shows as typed, its `#file` token included, and a slash command the daemon keeps
 * no history of (`/rules check`, from Check Rules) is still there with its answer.
 */
async function aReloadedWindowShowsWhatWasTyped(chat) {
  await chat.locator('.entry.user', { hasText: '#file why does this pass?' }).waitFor();
  await chat.locator('.entry.user', { hasText: '/rules check' })
    .locator('xpath=following-sibling::*[1][contains(@class, "command")]').waitFor();
  log('a reloaded window shows #file as typed, and the /rules check exchange with its answer');
}

async function transcriptSurvivesAReload(ui) {
  await ui.command('Developer: Reload Webviews');
  const chat = ui.chatFrame();
  await chat.locator('.entry.turn[data-status="completed"] .route-badge', { hasText: 'fast for commits' }).waitFor();
  await chat.locator('.entry.turn[data-status="cancelled"]').waitFor();
  // The worker the user started with "Delegate Selection" (no turn of its own) is rebuilt from the history too,
  // between its command and its answer, after the question its start asked (answered); the planner's capped
  // worker still says so.
  const typed = chat.locator('.entry.user', { hasText: '/delegate fast explain this' });
  await typed.locator('xpath=following-sibling::*[1][contains(@class, "approval")]')
    .filter({ hasText: 'Delegate to a fast worker' }).filter({ hasText: 'Allowed once' })
    .filter({ hasText: 'Worker on fast tier · claude-haiku-4-5' }).waitFor();
  const delegated = typed.locator('xpath=following-sibling::*[2][contains(@class, "delegated")]');
  await delegated.locator('.delegation[data-status="completed"] .delegation-title', { hasText: 'Worker · fast · claude-haiku-4-5' }).waitFor();
  await delegated.locator('xpath=following-sibling::*[1][contains(@class, "command")]')
    .filter({ hasText: 'login() compares the user name' }).waitFor();
  await chat.locator('.delegation[data-tool-use="toolu_e2e_stopped"] .delegation-title', { hasText: 'balanced (capped from deep)' }).waitFor();
  // The worker transcript the user expanded is still expanded, fetched again from the daemon.
  await chat.locator('.delegation[data-tool-use="toolu_e2e_delegate"] .delegation-transcript .worker-message.worker strong',
    { hasText: 'login()' }).waitFor();
  log('transcript restored after reloading the webview, with the user\'s own delegation card and the expanded worker');
}

async function statusBarPickerSetsTheModel(ui) {
  await ui.statusItem().click();
  const rows = ui.page.locator('.quick-input-list .monaco-list-row');
  await rows.filter({ hasText: 'Follow my routing rules' }).first().waitFor();
  await rows.filter({ hasText: 'Claude Opus 4.7' }).first().waitFor();
  await rows.filter({ hasText: 'available' }).first().waitFor();
  await ui.shot('status-bar-model-picker');
  await ui.shot('model-picker', ui.page.locator('.quick-input-widget'));
  await ui.page.locator('.quick-input-widget input.input').fill('opus');
  await rows.filter({ hasText: 'Claude Opus 4.7' }).first().click();
  // A notification says how to undo it where it was done (the picker), not only with /model.
  const said = ui.page.locator('.notification-toast', { hasText: 'Sticky model set' }).first();
  await said.locator('.monaco-button', { hasText: 'Follow my routing rules' }).waitFor();  // a button that undoes it
  await ui.page.mouse.move(700, 300);  // no status bar tooltip over it
  await until('the status bar tooltip gone', async () => (await ui.page.locator('.workbench-hover:visible, .monaco-hover:visible').count()) === 0);
  await ui.shot('sticky-model-notification', said);
  const message = await said.innerText();
  if (!message.includes('until you choose "Follow my routing rules" in the model picker')) {
    throw new Error(`after picking a model the notification says ${JSON.stringify(message)}`);
  }
  await ui.command('Notifications: Clear All Notifications');
  await ui.statusItem().filter({ hasText: 'opus' }).waitFor();
  await ui.statusItem().locator('.codicon-pinned').waitFor();
  log('status bar after picking Opus:', JSON.stringify(await ui.statusItem().innerText()));
  await ui.shot('status-bar-sticky-model');
  await ui.command('Switchman: Clear Sticky Model');
  await ui.statusItem().locator('.codicon-hubot').waitFor();
  log('status bar after clearing:', JSON.stringify(await ui.statusItem().innerText()));
}

async function profileItemChoosesTheProfile(ui) {
  // Next to the model: the agent profile in force (the built-in default until one is chosen).
  const item = ui.page.locator(PROFILE_ITEM);
  await item.filter({ hasText: 'default' }).waitFor();
  await item.click();
  const rows = ui.page.locator('.quick-input-list .monaco-list-row');
  await rows.filter({ hasText: 'subagent' }).first().waitFor();
  await ui.shot('profile-picker', ui.page.locator('.quick-input-widget'));
  await rows.filter({ hasText: 'subagent' }).first().click();
  await item.filter({ hasText: 'subagent' }).waitFor();
  log('profile item after choosing subagent:', JSON.stringify(await item.innerText()));
  await ui.shot('status-bar-profile', { clip: await statusBarClip(ui) });
  await item.click();
  await rows.filter({ hasText: 'Use the default profile' }).first().click();
  await item.filter({ hasText: 'default' }).waitFor();
  log('profile item after going back to the default:', JSON.stringify(await item.innerText()));
}

/** The right half of the status bar, for a screenshot. */
async function statusBarClip(ui) {
  const bar = await ui.page.locator('.part.statusbar').boundingBox();
  return { x: bar.x + bar.width / 2, y: bar.y, width: bar.width / 2, height: bar.height };
}

async function sessionsViewOpensTheTranscript(ui) {
  const sessions = ui.page.locator('.pane', { has: ui.page.locator('.pane-header', { hasText: 'Sessions' }) });
  const header = sessions.locator('.pane-header');
  if ((await header.getAttribute('aria-expanded')) === 'false') await header.click();
  const row = sessions.locator('.monaco-list-row', { hasText: 'write a commit message for the login fix' });
  await row.first().waitFor();
  await row.first().click();
  const editor = ui.page.locator('.monaco-editor .view-lines', { hasText: 'Turn 1 · anthropic:claude-haiku-4-5' });
  await editor.first().waitFor();
  log('transcript opened from the Sessions view');
  await ui.shot('sessions-transcript');
}

async function workerSessionsShowOnlyWhenAskedFor(ui) {
  const sessions = ui.page.locator('.pane', { has: ui.page.locator('.pane-header', { hasText: 'Sessions' }) });
  // The chat so far is one session (titled by its first message) whose planner delegated twice.
  const planner = sessions.locator('.monaco-list-row', { hasText: 'write a commit message for the login fix' }).first();
  await planner.waitFor();
  const workers = sessions.locator('.monaco-list-row', { has: ui.page.locator('.codicon-person') });
  if ((await workers.count()) !== 0 || (await planner.getAttribute('aria-expanded')) !== null) {
    throw new Error('worker sessions are listed although switchman.showWorkerSessions is off');
  }
  await ui.command('Preferences: Open User Settings');
  await ui.page.locator('.settings-editor').waitFor();
  await ui.page.keyboard.type('switchman.showWorkerSessions');
  const setting = ui.page.locator('.settings-editor .setting-item-contents', { hasText: 'Show Worker Sessions' }).first();
  await setting.locator('.setting-value-checkbox').click();
  await ui.command('View: Close Editor');
  // The view refreshes on the setting: the planner now has its workers nested under it.
  await until('the planner session to have children', async () => (await planner.getAttribute('aria-expanded')) !== null);
  if ((await planner.getAttribute('aria-expanded')) === 'false') await planner.locator('.monaco-tl-twistie').click();
  await workers.first().waitFor();
  log('worker sessions under the planner:', await workers.count());
  await ui.shot('sessions-workers', sessions);
  await workers.first().click();
  await ui.page.locator('.monaco-editor .view-lines', { hasText: '(worker)' }).first().waitFor();
  log('a worker session opened its own transcript');
}

/**
 * With the keyboard in the terminal, the chat's keybinding opens the chat: the terminal sent it to the
 * shell (an extension's keybinding goes to the shell unless its command is in commandsToSkipShell).
 */
async function theChatKeyWorksInTheTerminal(ui) {
  await ui.command('Terminal: Focus Terminal');
  const terminal = ui.page.locator('.part.panel .terminal-wrapper.active .xterm, .part.panel .xterm').first();
  await terminal.waitFor();
  await until('the keyboard in the terminal', () => ui.page.evaluate(() => document.activeElement?.closest('.xterm') != null));
  await ui.page.keyboard.press(FOCUS_CHAT);
  const chat = ui.chatFrame();
  await until('the keyboard in the chat\'s message input', () => inputHasKeyboard(chat), { timeoutMs: 10000 });
  log('the chat\'s keybinding opened the chat from the terminal');
}

async function newChatStartsEmpty(ui) {
  await ui.page.keyboard.press(FOCUS_CHAT);
  const chat = ui.chatFrame();
  // Reopened from the Sessions view's transcript: the keybinding puts the keyboard in the input again
  // (it showed the panel and left the keyboard in the editor).
  await until('the keyboard in the message input', () => inputHasKeyboard(chat));
  await ui.page.keyboard.type('a draft');
  await until('the typed text in the input', async () => (await chat.locator('#input').inputValue()) === 'a draft');
  await chat.locator('#input').fill('');
  await chat.locator('#new-chat').click();
  await chat.locator('#empty').waitFor({ state: 'visible' });
  await chat.locator('#session', { hasText: 'New chat' }).waitFor();
  await until('an empty transcript', async () => (await chat.locator('.entry').count()) === 0);
  log('New chat started an empty session');
}

async function providerFailuresAreShownPlainly(ui, fake) {
  const chat = ui.chatFrame();
  // A server error (after the daemon's own retries): the failed turn offers Retry, which sends the
  // same message again from the keyboard (the input is empty by then).
  const serverError = { kind: 'error', status: 500, message: 'upstream exploded' };
  await fake.script([serverError, serverError, serverError, { kind: 'text', chunks: ['Second time lucky'] }]);
  await chat.locator('#input').fill('hello retry');
  await chat.locator('#input').press('Enter');
  const failedTurn = chat.locator('.entry.turn[data-status="failed"]').last();
  // The daemon's "send it again to retry" names the button beside it.
  await failedTurn.locator('.failure', { hasText: 'Your message is saved; press Retry to send it again.' }).waitFor();
  const retry = failedTurn.locator('button.retry[aria-label="Retry: send this message again"]');
  await retry.focus();
  await ui.shot('chat-retry');
  await chat.locator('#input').page().keyboard.press('Enter');
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'Second time lucky' }).waitFor();
  await until('the same message sent again', async () => (await chat.locator('.entry.user', { hasText: 'hello retry' }).count()) === 2);
  await retry.waitFor({ state: 'detached' }); // the retried turn is no longer the last: no Retry on it
  // The keyboard was on Retry, which went: it is back in the message input (it was left on nothing).
  await until('the keyboard back in the message input after Retry', () => inputHasKeyboard(chat));
  log('failed turn retried from its Retry button');
  await fake.script([{ kind: 'error', status: 401, message: 'bad key' }]);
  await chat.locator('#input').fill('hello');
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.turn[data-status="failed"] .failure', { hasText: 'the API key was refused' }).waitFor();
  // Nothing was answered: no 👍 / 👎 (a 👍 there taught the pattern store the model did well on it).
  const unanswered = chat.locator('.entry.turn[data-status="failed"]', { hasText: 'the API key was refused' }).last();
  if ((await unanswered.locator('.rating').count()) !== 0) throw new Error('a turn that answered nothing offers 👍 / 👎');
  // The provider is now marked down: the next message cannot be routed at all (JSON-RPC error 1006).
  await chat.locator('#input').fill('hello again');
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.error', { hasText: 'no_model_available' }).filter({ hasText: 'No model available' }).waitFor();
  // The outage banner is in the status bar item's tooltip.
  await showHover(ui, ui.statusItem(), ui.page.locator('.monaco-hover', { hasText: 'currently unavailable' }));
  log('failed turn and no_model_available shown:', (await chat.locator('.entry.error').last().innerText()).split('\n').slice(0, 2).join(' | '));
  await ui.shot('chat-failures');
}

async function daemonThatCannotStartSaysHowToFix(ui) {
  // Changing a server setting restarts the daemon; a wrong command must say how to fix it.
  await ui.command('Preferences: Open User Settings');
  await ui.page.locator('.settings-editor').waitFor();
  await ui.page.keyboard.type('switchman.serverCommand');
  const setting = ui.page.locator('.settings-editor .setting-item-contents', { hasText: 'Server Command' }).first();
  await setting.locator('input').fill('/nonexistent/switchman');
  const toast = ui.page.locator('.notifications-toasts .notification-toast', { hasText: '"/nonexistent/switchman" was not found' });
  await toast.waitFor();
  await ui.statusItem().locator('.codicon-error').waitFor();
  // The Sessions view says so too (it said "not running" at best, or showed nothing).
  const sessions = ui.page.locator('.pane', { has: ui.page.locator('.pane-header', { hasText: 'Sessions' }) });
  await sessions.locator('.monaco-list-row', { hasText: 'Switchman did not start.' }).locator('.codicon-error').waitFor();
  await ui.shot('daemon-start-failure');
  await toast.locator('.monaco-button', { hasText: 'Open Settings' }).click();
  await ui.page.locator('.settings-editor .setting-item-contents', { hasText: 'Server Command' }).first().waitFor();
  await toast.waitFor({ state: 'hidden' });
  await ui.shot('sessions-daemon-did-not-start', sessions);
  log('start failure explained; "Open Settings" shows switchman.serverCommand');
}
