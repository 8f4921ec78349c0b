// The chat's layout as the user changes it (the transcript scrolled, the panel resized) and as answers fill it.
import { log, until } from './support.mjs';

/** Whether the bottom of the transcript's last entry is in the transcript's view. */
async function lastEntryInView(chat) {
  return chat.locator('#transcript').evaluate((transcript) => {
    const last = transcript.querySelector('.entry:last-child');
    if (!last) return false;
    const view = transcript.getBoundingClientRect();
    const entry = last.getBoundingClientRect();
    return entry.bottom <= view.bottom + 1 && entry.bottom > view.top;
  });
}

/**
 * A message sent while the user is scrolled up to read an earlier answer brings the chat to its end:
 * the message, its answer and any approval card were added out of sight.
 */
export async function aMessageSentWhileScrolledUpIsInView(ui, chat, fake) {
  await chat.locator('#transcript').evaluate((transcript) => { transcript.scrollTop = 0; });
  await fake.script([{ kind: 'text', chunks: ['An answer the user sees come in.'] }]);
  await chat.locator('#input').fill('one more question, asked while scrolled up');
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'An answer the user sees come in.' }).waitFor();
  await until('the answer in view', () => lastEntryInView(chat), { timeoutMs: 5000 });
  await ui.shot('chat-sent-while-scrolled-up');
  log('a message sent while scrolled up brought the chat to its end, with the answer in view');
}

/** Drag the top edge of the panel (its sash) by `dy` pixels (down: smaller). */
async function dragPanelEdge(ui, dy) {
  const panel = await ui.page.locator('.part.panel').boundingBox();
  const x = panel.x + panel.width / 2;
  await ui.page.mouse.move(x, panel.y + 1);
  await ui.page.mouse.down();
  await ui.page.mouse.move(x, panel.y + 1 + dy / 2, { steps: 4 });
  await ui.page.mouse.move(x, panel.y + 1 + dy, { steps: 4 });
  await ui.page.mouse.up();
  await until('the panel resized', async () => Math.abs((await ui.page.locator('.part.panel').boundingBox()).y - panel.y - dy) <= 2);
}

/**
 * The user reading the end of the chat drags the panel smaller: the end stays in view, and the next
 * answer keeps following as it streams. The end slid out of view by what the panel lost, and the
 * chat, no longer at its end, stopped following answers.
 */
export async function theEndStaysInViewWhenThePanelIsMadeSmaller(ui, chat, fake) {
  await dragPanelEdge(ui, -150);
  await chat.locator('#transcript').evaluate((transcript) => { transcript.scrollTop = transcript.scrollHeight; });
  await until('the end of the chat in view', () => lastEntryInView(chat));
  await dragPanelEdge(ui, 150);
  await until('the end of the chat in view after the panel was made smaller', () => lastEntryInView(chat), { timeoutMs: 5000 });
  await fake.script([{ kind: 'text', chunks: ['A long answer\n\n', 'that keeps coming\n\n', 'and coming.'] }]);
  await chat.locator('#input').fill('an answer that follows');
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'and coming.' }).waitFor();
  await until('the streamed answer in view', () => lastEntryInView(chat), { timeoutMs: 5000 });
  await ui.shot('chat-panel-made-smaller');
  log('the end of the chat stayed in view when the panel was made smaller, and the next answer followed');
}

/** The computed background of `locator` under the mouse, and the primary button's hover colour, in the chat. */
async function hoveredBackground(ui, chat, locator) {
  await locator.hover();
  return locator.evaluate((element) => {
    const probe = document.createElement('div');
    probe.style.background = 'var(--vscode-button-hoverBackground)';
    document.body.append(probe);
    const primaryHover = getComputedStyle(probe).backgroundColor;
    probe.remove();
    return { background: getComputedStyle(element).backgroundColor, primaryHover };
  });
}

/**
 * A delegation card's toggle (its title and live line) under the mouse is not painted as a primary
 * button: it turned the theme's primary blue with the text's own colour (dark on blue in a light theme).
 */
export async function aHoveredCardKeepsItsColours(ui, chat) {
  const toggle = chat.locator('.delegation-toggle').first();
  const { background, primaryHover } = await hoveredBackground(ui, chat, toggle);
  if (background === primaryHover) throw new Error(`a hovered card toggle is painted as a primary button (${background})`);
  await ui.page.mouse.move(1, 1);
  log('a hovered delegation card keeps its colours:', background);
}

/**
 * A table whose cell holds a long path keeps its header's words whole: the path took the width and
 * the other column's header was cut mid-word ("valu" / "e"), as any text in an answer may be.
 */
export async function aTableHeaderKeepsItsWords(ui, chat, fake) {
  const path = `src/${'a_long_folder_name/'.repeat(16)}file_name.py`;
  await fake.script([{ kind: 'text', chunks: [`| file | value |\n|---|---|\n| \`${path}\` | 1 |\n`] }]);
  await chat.locator('#input').fill('a table with a long path');
  await chat.locator('#input').press('Enter');
  const table = chat.locator('.entry.turn[data-status="completed"] .markdown table', { hasText: 'file_name.py' }).last();
  await table.waitFor();
  const headers = await table.locator('th').evaluateAll((cells) => cells.map((cell) => {
    const range = document.createRange();
    range.selectNodeContents(cell);
    return { text: cell.textContent, lines: range.getClientRects().length };
  }));
  await ui.shot('chat-table-long-path');
  if (headers.some((h) => h.lines > 1)) throw new Error(`a table header was split across lines: ${JSON.stringify(headers)}`);
  log('a table with a long path keeps its headers whole:', JSON.stringify(headers));
}

/**
 * A message of several lines typed with Shift+Enter is all in sight: the input grows with it (it
 * scrolled inside two rows, its first lines out of sight), and is two rows again once sent.
 */
export async function theInputGrowsWithTheMessage(ui, chat, fake) {
  const input = chat.locator('#input');
  await input.fill('');
  const empty = await input.evaluate((element) => element.offsetHeight);
  await input.focus();
  for (const [i, line] of ['first line', 'second line', 'third line', 'fourth line'].entries()) {
    if (i > 0) await ui.page.keyboard.press('Shift+Enter');
    await ui.page.keyboard.type(line);
  }
  const sizes = await input.evaluate((element) => ({ scroll: element.scrollHeight, client: element.clientHeight }));
  await ui.shot('chat-input-four-lines');
  if (sizes.scroll > sizes.client + 1) throw new Error(`a four-line message scrolls inside the input: ${JSON.stringify(sizes)}`);
  await fake.script([{ kind: 'text', chunks: ['Four lines read.'] }]);
  await ui.page.keyboard.press('Enter');
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'Four lines read.' }).waitFor();
  await until('the input back to its size', async () => (await input.evaluate((element) => element.offsetHeight)) === empty);
  log('the input grew to a four-line message and went back once it was sent');
}

/**
 * A long message (a pasted log) shows its first lines and "Show all (N lines)", which shows the rest and
 * then folds it again: thousands of pasted lines filled the chat, the answer far below them.
 */
export async function aLongMessageIsFolded(ui, chat, fake) {
  const pasted = Array.from({ length: 400 }, (_, i) => `log line ${i + 1}`).join('\n');
  await fake.script([{ kind: 'text', chunks: ['Read the log.'] }]);
  await chat.locator('#input').fill(pasted);
  await chat.locator('#input').press('Enter');
  await chat.locator('.entry.turn[data-status="completed"]', { hasText: 'Read the log.' }).waitFor();
  const message = chat.locator('.entry.user', { hasText: 'log line 1' }).last();
  const toggle = message.locator('button.message-fold', { hasText: 'Show all (400 lines)' });
  await toggle.waitFor();
  const folded = await message.locator('.body').innerText();
  if (!folded.includes('log line 10') || folded.includes('log line 11')) throw new Error(`folded, it shows ${JSON.stringify(folded.slice(0, 300))}`);
  await ui.shot('chat-long-message-folded', message);
  await toggle.click();
  await message.locator('.body', { hasText: 'log line 400' }).waitFor();
  await message.locator('button.message-fold[aria-expanded="true"]', { hasText: 'Show less' }).click();
  await until('folded again', async () => !(await message.locator('.body').innerText()).includes('log line 400'));
  log('a 400-line message showed 10 lines and Show all (400 lines), which showed the rest and folded it again');
}

/** In a narrow view the empty input shows its whole placeholder (its first line was cut off). */
export async function theInputShowsItsWholePlaceholderWhenNarrow(ui, chat) {
  const wide = ui.page.viewportSize();
  await ui.page.setViewportSize({ width: 620, height: wide.height });
  try {
    const input = chat.locator('#input');
    await input.fill('');
    await until('the whole placeholder in sight', () => input.evaluate((element) => element.scrollHeight <= element.clientHeight + 1),
      { timeoutMs: 5000 });
    await ui.shot('chat-narrow-placeholder');
  } finally {
    await ui.page.setViewportSize(wide);
  }
  log('a narrow chat shows the input\'s whole placeholder');
}
