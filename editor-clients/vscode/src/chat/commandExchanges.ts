/**
 * Slash-command exchanges (`/model opus` and its answer) kept by the panel across reloads (pure).
 *
 * The daemon answers a slash command without a model and keeps nothing of it in the session (only
 * a `/delegate` that ran a worker is history), so `switchman/session` cannot bring it back. The
 * panel keeps each exchange in its webview state — which VS Code saves across a hidden panel and
 * a Reload Window — with the session it belongs to and the daemon entry it followed, and puts it
 * back there when the chat is rebuilt from the daemon.
 */

import type { ChatResult } from '../protocol/types';
import type { CommandEntry, Entry, UserEntry } from './messages';
import { keptInHistory } from './transcript';

/** One command and its answer, as shown, after the daemon entry `after` (null: at the start). */
export interface CommandExchange {
  sessionId: string;
  after: string | null;
  user: UserEntry;
  answer: CommandEntry;
}

/** At most this many are kept (the oldest go first): the webview's state stays small. */
export const KEPT_EXCHANGES = 200;

/** Ids the panel makes for what it shows before the daemon names it (`local-…`, `local-…:command`). */
function panelOnly(entry: Entry): boolean {
  return entry.id.startsWith('local-') || entry.kind === 'approval' || entry.kind === 'error';
}

/**
 * The exchanges with the one just answered, if the daemon does not keep it: the command shown as
 * `userId` (the last entry of that id in `entries`) and `answer`.
 */
export function withExchange(kept: readonly CommandExchange[], entries: readonly Entry[], userId: string,
  result: ChatResult, answer: CommandEntry): CommandExchange[] {
  const index = entries.findIndex((e) => e.kind === 'user' && e.id === userId);
  const user = entries[index];
  if (index < 0 || user.kind !== 'user' || keptInHistory(result)) return [...kept];
  const before = entries.slice(0, index).reverse().find((e) => !panelOnly(e));
  const exchange = { sessionId: result.session_id, after: before?.id ?? null, user, answer };
  return [...kept.filter((k) => k.user.id !== userId), exchange].slice(-KEPT_EXCHANGES);
}

/**
 * `entries` (the daemon's transcript of `sessionId`) with that session's kept exchanges back in
 * place: each after the entry it followed, in the order they happened; one whose entry is not
 * there (a turn being replayed live, a transcript that could not be read) goes at the end.
 */
export function withExchanges(entries: readonly Entry[], kept: readonly CommandExchange[], sessionId: string | null): Entry[] {
  const mine = kept.filter((k) => k.sessionId === sessionId);
  if (mine.length === 0) return [...entries];
  const ids = new Set(entries.map((e) => e.id));
  const placed = (after: string | null) => mine.filter((k) => k.after === after).flatMap((k) => [k.user, k.answer]);
  const lost = mine.filter((k) => k.after !== null && !ids.has(k.after)).flatMap((k) => [k.user, k.answer]);
  return [...placed(null), ...entries.flatMap((e) => [e, ...placed(e.id)]), ...lost];
}
