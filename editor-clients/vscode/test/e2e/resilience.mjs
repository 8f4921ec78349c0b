// The pattern store's suggestion taken from its buttons, and a daemon killed in the middle of an answer.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { log, until } from './support.mjs';

/** Send `message`, wait for its answer, and rate it. */
async function ratedTurn(chat, fake, message, rating) {
  const before = await chat.locator('.entry.turn').count();
  await fake.script([{ kind: 'text', chunks: [`Answer to: ${message}`] }]);
  await chat.locator('#input').fill(message);
  await chat.locator('#input').press('Enter');
  await until(`the answer to ${message}`, async () => (await chat.locator('.entry.turn').count()) > before
    && (await chat.locator('.entry.turn').last().getAttribute('data-status')) === 'completed');
  const turn = chat.locator('.entry.turn').last();
  await turn.locator(`.rating .rate.${rating}`).click();
  await turn.locator(`.rating .rate.${rating}[aria-pressed="true"]`).waitFor();
}

/**
 * With pattern_disagreement.surface on, a rule's choice the pattern store disagrees with shows the
 * suggestion line by line with two buttons; "Use … for this turn" runs the message again on the
 * suggested model, and that turn says "/route override", not an @alias the user never typed.
 */
export async function patternSuggestionIsOneClickAway(ui, chat, fake, configDir) {
  const routing = join(configDir, 'routing.yaml');
  writeFileSync(routing, 'pattern:\n  min_sample_size: 2\npattern_disagreement:\n  surface: true\n'
    + '  min_confidence: 0.1\n  min_sample_size: 2\n');
  try {
    for (let i = 0; i < 3; i += 1) {
      await ratedTurn(chat, fake, `@sonnet write a commit message for the regex fix ${i}`, 'up');
      await ratedTurn(chat, fake, `@haiku write a commit message for the regex fix ${i}`, 'down');
    }
    await fake.script([{ kind: 'text', chunks: ['fix: regex'] }]);
    await chat.locator('#input').fill('write a commit message for the regex fix');
    await chat.locator('#input').press('Enter');
    const turn = chat.locator('.entry.turn[data-status="completed"]', { hasText: 'fix: regex' });
    const banner = turn.locator('.banner', { hasText: 'Pattern store suggests anthropic:claude-sonnet-4-6' });
    await banner.waitFor();
    // One notice a line (they ran together into one sentence), and buttons instead of "/route …" to type.
    const lines = await banner.locator('.banner-line').allInnerTexts();
    if (lines.length !== 2 || !lines[0].includes('per rule "fast for commits"') || lines.some((l) => l.includes('/route'))) {
      throw new Error(`the suggestion's lines: ${JSON.stringify(lines)}`);
    }
    await ui.shot('chat-pattern-suggestion', turn);
    await fake.script([{ kind: 'text', chunks: ['fix(regex): anchor the e-mail pattern'] }]);
    await banner.locator('button.banner-action', { hasText: 'Use claude-sonnet-4-6 for this turn' }).click();
    const rerun = chat.locator('.entry.turn[data-status="completed"]', { hasText: 'anchor the e-mail pattern' });
    await rerun.locator('.route-badge', { hasText: 'claude-sonnet-4-6 · /route override' }).waitFor();
    // The suggestion was taken: its buttons are gone from the earlier turn.
    await banner.locator('button.banner-action').first().waitFor({ state: 'detached' });
    log('the suggestion\'s button ran the message again:', JSON.stringify(await rerun.locator('.route-badge').innerText()));
  } finally {
    rmSync(routing, { force: true });
  }
}

/** A process's parent pid (0 once it is gone). */
function parentOf(pid) {
  return Number(spawnSync('ps', ['-o', 'ppid=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim()) || 0;
}

/**
 * The pids of this window's daemon: started by the extension host of this run's code-server (a
 * descendant of this process, not its child: the scenario's own second-window daemon is excluded).
 * Another end-to-end run on the machine, using the same `switchman`, has daemons of its own: counted,
 * they made "expected one daemon" fail, and one of them could have been the one killed.
 */
function extensionDaemons(switchman) {
  const found = spawnSync('pgrep', ['-f', `${switchman} serve`], { encoding: 'utf8' }).stdout.trim().split('\n').filter(Boolean);
  return found.map(Number).filter((pid) => {
    const parent = parentOf(pid);
    if (parent === process.pid) return false;
    for (let ancestor = parent; ancestor > 1; ancestor = parentOf(ancestor)) if (ancestor === process.pid) return true;
    return false;
  });
}

/**
 * The daemon dies (kill -9) while an answer streams: the answer shows `interrupted` at once (it
 * stayed "answering…" for good), the error says so in words, and once VS Code has started the daemon
 * again the chat is drawn from its record: the message, the partial answer and why it stopped.
 */
export async function daemonKilledMidAnswer(ui, chat, fake, switchman) {
  await fake.script([{ kind: 'stall', chunks: ['Counting sheep: one, ', 'two, three'], after_chunks: 1 }]);
  await chat.locator('#input').fill('count sheep slowly');
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.turn[data-status="running"]', { hasText: 'Counting sheep' }).waitFor();
  const pids = extensionDaemons(switchman);
  if (pids.length !== 1) throw new Error(`expected one daemon of this window, found ${JSON.stringify(pids)}`);
  process.kill(pids[0], 'SIGKILL');
  try {
    await until('a new daemon', () => extensionDaemons(switchman).some((pid) => pid !== pids[0]), { timeoutMs: 30000 });
  } finally {
    await fake.release();
  }
  const turn = chat.locator('.entry.turn', { hasText: 'Counting sheep' });
  await turn.locator('.failure', { hasText: 'Switchman stopped while this turn was running' }).waitFor();
  if ((await turn.getAttribute('data-status')) !== 'interrupted') throw new Error('the cut-off turn is not shown interrupted');
  await chat.locator('.entry.user', { hasText: 'count sheep slowly' }).waitFor();
  if (await chat.locator('.entry.turn[data-status="running"]').count()) throw new Error('a turn still shows as answering');
  if (await chat.locator('.entry.error', { hasText: 'connection got disposed' }).count()) {
    throw new Error('vscode-jsonrpc\'s message is shown');
  }
  await turn.locator('button.retry').waitFor(); // the message can be sent again in one click
  await ui.shot('chat-daemon-killed', turn);
  log('the answer cut off by the daemon\'s death:', JSON.stringify(await turn.innerText()));
}

/**
 * The window is reloaded while an answer streams: the reopened chat shows the answer `interrupted`,
 * saying the editor stopped Switchman, with Retry (it showed `cancelled`, as if the user had pressed
 * Stop: the extension aborted the request as it was disposed), and Retry sends the message again.
 */
export async function windowReloadedMidAnswer(ui, chat, fake) {
  await fake.script([{ kind: 'stall', chunks: ['Counting goats: one, ', 'two'], after_chunks: 1 },
    { kind: 'text', chunks: ['Counting goats: one, two, three.'] }]);
  await chat.locator('#input').fill('count goats slowly');
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.turn[data-status="running"]', { hasText: 'Counting goats' }).waitFor();
  const reopened = ui.chatFrame();
  const turn = reopened.locator('.entry.turn', { hasText: 'Counting goats: one,' }).last();
  try {
    // The answer stalls until the old window's daemon has ended it (released earlier, it would finish).
    await ui.page.evaluate(() => { window.e2eOldPage = true; });
    await ui.command('Developer: Reload Window');
    await until('the reloaded window', () => ui.page.evaluate(() => window.e2eOldPage !== true).catch(() => false));
    await ui.page.locator('.monaco-workbench').waitFor();
    await ui.statusItem().waitFor();
    await ui.page.keyboard.press('Control+Shift+Alt+S'); // focus the chat
    await turn.locator('.failure', { hasText: 'the editor closed, reloaded or restarted it' }).waitFor();
  } finally {
    await fake.release();
  }
  if ((await turn.getAttribute('data-status')) !== 'interrupted') throw new Error('the answer cut off by the reload is not interrupted');
  await ui.shot('chat-window-reloaded-mid-answer', turn);
  await turn.locator('button.retry').click();
  await reopened.locator('.entry.turn[data-status="completed"]', { hasText: 'one, two, three' }).waitFor();
  log('an answer cut off by Reload Window says so and is sent again by Retry');
  return reopened;
}
