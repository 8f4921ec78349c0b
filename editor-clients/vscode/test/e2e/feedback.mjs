// 👍 / 👎 under an answer, in the real UI: the daemon stores the rating in the workspace's pattern
// store (read back with `switchman patterns export`, as a user would), the button shows as pressed,
// a changed mind replaces the rating, and the pressed buttons are still there after the chat (or the
// whole window) reloads; a rating the daemon refuses says why under that answer.
import { spawnSync } from 'node:child_process';
import { log, until } from './support.mjs';

/**
 * The pattern store's rows by turn id, from `switchman patterns export` on the daemon's data
 * folder (one JSON object a line; only hashes and evidence, never the message text).
 */
function exportedRows(store) {
  const done = spawnSync(store.switchman, ['patterns', 'export'], {
    env: { ...store.env, SWITCHMAN_DATA_DIR: store.data }, encoding: 'utf8', timeout: 60000,
  });
  if (done.status !== 0) throw new Error(`switchman patterns export exited with ${done.status}:\n${done.stdout}\n${done.stderr}`);
  const rows = new Map();
  for (const line of done.stdout.split('\n').filter((l) => l.trim())) {
    const row = JSON.parse(line);
    rows.set(row.turn_id, row);
  }
  return rows;
}

/** Wait until the store holds `feedback` (+1 / -1) and the matching success for `turnId`. */
async function storedRating(store, turnId, feedback) {
  return until(`feedback ${feedback} for turn ${turnId} in the pattern store`, () => {
    const row = exportedRows(store).get(turnId);
    return row && row.evidence.feedback === feedback && row.success === (feedback > 0 ? 1 : 0) ? row : undefined;
  }, { intervalMs: 500 });
}

async function answeredTurn(chat, fake, message, answer) {
  await fake.script([{ kind: 'text', chunks: [answer] }]);
  await chat.locator('#input').fill(message);
  await chat.locator('#input').press('Enter');
  const turn = chat.locator('.entry.turn[data-status="completed"]', { hasText: answer });
  await turn.waitFor();
  return { turn, id: await turn.getAttribute('data-turn') };
}

/** Press a rating button of `turn` and wait until the daemon took it (the button shows pressed). */
async function rate(turn, rating) {
  await turn.locator(`.rating .rate.${rating}`).click();
  await pressed(turn, rating);
}

async function pressed(turn, rating) {
  const other = rating === 'up' ? 'down' : 'up';
  await turn.locator(`.rating .rate.${rating}[aria-pressed="true"]`).waitFor();
  await turn.locator(`.rating .rate.${other}[aria-pressed="false"]`).waitFor();
}

export async function ratingsReachThePatternStore(ui, chat, fake, store) {
  const good = await answeredTurn(chat, fake, 'how do I run the tests?', 'Run make test from the repository root.');
  const bad = await answeredTurn(chat, fake, 'and how do I lint?', 'Linting is not possible here.');
  // Named in words for screen readers (the emoji alone reads "thumbs up sign"), in a labelled group.
  await good.turn.locator('.rating[role="group"][aria-label="Rate this answer"] .rate.up[aria-label="Good answer"]').waitFor();
  await good.turn.locator('.rating .rate.down[aria-label="Bad answer"]').waitFor();
  if ((await good.turn.locator('.rating .rate[aria-pressed="true"]').count()) !== 0) {
    throw new Error('an answer nobody rated shows a pressed rating button');
  }
  await rate(good.turn, 'up');
  await rate(bad.turn, 'down');
  await ui.shot('chat-ratings', chat.locator('.entry.turn').last());
  const up = await storedRating(store, good.id, 1);
  await storedRating(store, bad.id, -1);
  if (JSON.stringify(up).includes('run the tests')) throw new Error('the pattern store holds the message text');
  log('👍 and 👎 stored: success 1.0 and 0.0 for turns', good.id, bad.id);
  // A changed mind: the second click replaces the rating in the store and in the buttons.
  await rate(bad.turn, 'up');
  await storedRating(store, bad.id, 1);
  log('the changed rating replaced the stored one');
  // Pressed again, the pressed button takes the rating back: nothing pressed, nothing stored.
  await bad.turn.locator('.rating .rate.up').click();
  await bad.turn.locator('.rating .rate.up[aria-pressed="false"]').waitFor();
  await until(`no feedback for turn ${bad.id} in the pattern store`, () => {
    const row = exportedRows(store).get(bad.id);
    return row && row.evidence.feedback == null;
  }, { intervalMs: 500 });
  await rate(bad.turn, 'up');
  await storedRating(store, bad.id, 1);
  log('a rating taken back (its button pressed again), then given again');
  // The chat is rebuilt from the daemon's transcript: the pressed buttons come back with it.
  await ui.command('Developer: Reload Webviews');
  const reloaded = ui.chatFrame();
  await pressed(reloaded.locator(`.entry.turn[data-turn="${good.id}"]`), 'up');
  await pressed(reloaded.locator(`.entry.turn[data-turn="${bad.id}"]`), 'up');
  log('ratings still shown after reloading the chat');
  // A new window (a new extension host, a new daemon) knows them only from the daemon's store.
  await ui.command('Developer: Reload Window');
  await ui.page.locator('.monaco-workbench').waitFor();
  await ui.statusItem().waitFor();
  await ui.page.keyboard.press('Control+Shift+Alt+S'); // focus the chat
  const reopened = ui.chatFrame();
  await pressed(reopened.locator(`.entry.turn[data-turn="${good.id}"]`), 'up');
  await pressed(reopened.locator(`.entry.turn[data-turn="${bad.id}"]`), 'up');
  log('ratings still shown in a reloaded window, from the daemon');
  // The questions answered before the reload are back in their turns, answered, without buttons
  // (the new window's extension never saw them: the daemon's session keeps them with the calls).
  const denied = reopened.locator('.entry.turn .approval[data-tool="run_command"][data-outcome="denied"]',
    { hasText: 'Denied: keep the build cache' });
  await denied.waitFor();
  await reopened.locator('.entry.turn .approval[data-tool="edit_file"][data-outcome="allowed_once"]').first().waitFor();
  await reopened.locator('.entry.turn .approval[data-tool="edit_file"][data-outcome="denied"]', { hasText: 'Not applied:' }).waitFor();
  if ((await reopened.locator('.approval .approval-buttons').count()) !== 0) throw new Error('a rebuilt question has buttons');
  await denied.scrollIntoViewIfNeeded();
  await ui.shot('reloaded-window-answered-question', denied.locator('xpath=ancestor::*[contains(@class, "entry")][1]'));
  log('answered questions still shown in a reloaded window, from the daemon');
  await refusedRatingShowsAtItsTurn(ui, reopened, store, good.id);
  return reopened;
}

/**
 * The daemon refuses a rating (the pattern store forgot the turn): the error shows under that
 * turn's buttons, not at the end of the chat, and rating again replaces it rather than adding one.
 */
async function refusedRatingShowsAtItsTurn(ui, chat, store, turnId) {
  const done = spawnSync(store.switchman, ['patterns', 'forget'], {
    env: { ...store.env, SWITCHMAN_DATA_DIR: store.data }, encoding: 'utf8', timeout: 60000,
  });
  if (done.status !== 0) throw new Error(`switchman patterns forget exited with ${done.status}:\n${done.stdout}\n${done.stderr}`);
  // Rebuilt from the daemon, which no longer keeps the rating: nothing pressed (and no rebuild of the
  // freshly reloaded window still on its way to clear what follows).
  await ui.command('Developer: Reload Webviews');
  const turn = ui.chatFrame().locator(`.entry.turn[data-turn="${turnId}"]`);
  await turn.locator('.rating .rate.up').waitFor();
  await until('the forgotten rating shown unpressed', async () => (await turn.locator('.rate[aria-pressed="true"]').count()) === 0);
  const refused = turn.locator('.rating-error', { hasText: 'cannot be rated' });
  await turn.locator('.rating .rate.down').click();
  await refused.waitFor();
  await refused.evaluate((element) => { element.e2eFirst = true; });
  await turn.locator('.rating .rate.down').click();
  await until('the refusal of the second try', () => refused.evaluate((element) => element.e2eFirst !== true));
  const count = await turn.locator('.rating-error').count();
  const atTheEnd = await chat.locator('.entry.error', { hasText: 'cannot be rated' }).count();
  if (count !== 1 || atTheEnd !== 0) {
    throw new Error(`a refused rating shows ${count} error(s) at its turn and ${atTheEnd} at the end of the chat`);
  }
  if ((await turn.locator('.rate[aria-pressed="true"]').count()) !== 0) throw new Error('a refused rating shows as pressed');
  log('a refused rating is shown at its turn:', JSON.stringify(await refused.innerText()));
  await ui.shot('chat-rating-refused', turn);
}
