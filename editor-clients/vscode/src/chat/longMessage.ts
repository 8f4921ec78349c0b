/**
 * A long message of the user's folded in the chat: a pasted log of thousands of lines was shown in
 * full, and the answer to it was far below. Folded, the message shows its first lines and a
 * "Show all (N lines)" toggle, as a delegation card shows the first lines of a long task. Its
 * `Attached: …` lines (at its end) stay in view; one very long line (no breaks) is folded too.
 */

/** A message of more lines than this is folded. */
export const FOLD_OVER_LINES = 30;
/** How many of its lines a folded message shows. */
export const FOLDED_LINES = 10;
/** A message of more characters than this is folded, whatever its lines (one pasted line of 50,000). */
export const FOLD_OVER_CHARS = 3000;
/** How many of its characters a folded message shows at most. */
export const FOLDED_CHARS = 1000;

export interface FoldedMessage {
  /** What is shown while folded: the first lines (at most `FOLDED_CHARS`), `…`, then its `Attached: …` lines. */
  head: string;
  /** All of its lines (its attachments' lines left out). */
  lines: number;
  /** All of its characters (likewise). */
  chars: number;
}

const ATTACHED = /^Attached: /;

/** The folded form of `text`; undefined for a message short enough to show whole. */
export function foldedMessage(text: string): FoldedMessage | undefined {
  const all = text.split('\n');
  let end = all.length;
  while (end > 1 && ATTACHED.test(all[end - 1] ?? '')) end -= 1;
  const lines = all.slice(0, end);
  const body = lines.join('\n');
  if (lines.length <= FOLD_OVER_LINES && body.length <= FOLD_OVER_CHARS) return undefined;
  const first = lines.slice(0, FOLDED_LINES).join('\n');
  const shown = first.length > FOLDED_CHARS ? first.slice(0, FOLDED_CHARS) : first;
  return { head: [shown, '…', ...all.slice(end)].join('\n'), lines: lines.length, chars: body.length };
}

/** The toggle's label: what pressing it does (a message of few but very long lines counts its characters). */
export function foldLabel(fold: FoldedMessage, open: boolean): string {
  if (open) return 'Show less';
  return fold.lines > FOLD_OVER_LINES ? `Show all (${fold.lines} lines)` : `Show all (${fold.chars.toLocaleString('en-US')} characters)`;
}

/** A command's output of more lines than this is folded under its tool line. */
export const OUTPUT_FOLD_OVER_LINES = 12;
/** How many of its last lines a folded output shows (where a failure's message usually is). */
export const OUTPUT_FOLDED_LINES = 8;

export interface FoldedOutput {
  /** What is shown while folded: `…`, then its last lines (at most `FOLDED_CHARS`). */
  tail: string;
  lines: number;
  chars: number;
}

/** The folded form of a command's output (`run_command`'s card); undefined when short enough to show whole. */
export function foldedOutput(text: string): FoldedOutput | undefined {
  const lines = text.replace(/\n$/, '').split('\n');
  if (lines.length <= OUTPUT_FOLD_OVER_LINES && text.length <= FOLD_OVER_CHARS) return undefined;
  const last = lines.slice(-OUTPUT_FOLDED_LINES).join('\n');
  return { tail: `…\n${last.length > FOLDED_CHARS ? last.slice(-FOLDED_CHARS) : last}`, lines: lines.length, chars: text.length };
}

/** A folded output's toggle label. */
export function outputFoldLabel(fold: FoldedOutput, open: boolean): string {
  if (open) return 'Show less';
  return fold.lines > OUTPUT_FOLD_OVER_LINES ? `Show all (${fold.lines} lines)` : `Show all (${fold.chars.toLocaleString('en-US')} characters)`;
}

/** Escape sequences a command may print (colours, cursor moves, window titles): a terminal acts on them. */
const ESCAPES = /\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)?|[@-Z\\-_])/g;
/** Other control characters but tab and newline (a bell, a backspace). */
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/**
 * A command's output as a terminal would show it: without its escape sequences (`\x1b[31m`, shown as a box and
 * `[31m`) and other control characters, each line as its last carriage return left it (a progress counter's last
 * value).
 */
export function terminalText(text: string): string {
  return text.replace(ESCAPES, '').split('\n').map((line) => {
    const kept = line.replace(/\r+$/, '');
    return kept.slice(kept.lastIndexOf('\r') + 1).replace(CONTROLS, '');
  }).join('\n');
}
