// The chat's layout as the user changes it: the transcript scrolled.
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
