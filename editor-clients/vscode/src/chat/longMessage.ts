/**
 * A long message of the user's folded in the chat: a pasted log of thousands of lines was shown in
 * full, and the answer to it was far below. Folded, the message shows its first lines and a
 * "Show all (N lines)" toggle, as a delegation card shows the first lines of a long task.
 */

/** A message of more lines than this is folded. */
export const FOLD_OVER_LINES = 30;
/** How many of its lines a folded message shows. */
export const FOLDED_LINES = 10;

export interface FoldedMessage {
  /** The first lines, shown while folded. */
  head: string;
  /** All of its lines. */
  lines: number;
}

/** The folded form of `text`; undefined for a message short enough to show whole. */
export function foldedMessage(text: string): FoldedMessage | undefined {
  const lines = text.split('\n');
  if (lines.length <= FOLD_OVER_LINES) return undefined;
  return { head: lines.slice(0, FOLDED_LINES).join('\n'), lines: lines.length };
}

/** The toggle's label: what pressing it does. */
export function foldLabel(fold: FoldedMessage, open: boolean): string {
  return open ? 'Show less' : `Show all (${fold.lines} lines)`;
}
