/**
 * Places in files named by a command's answer (`/rules check`'s `/home/me/.config/switchman/routing.yaml:5:10: error …`),
 * for the chat to show as links that open the file there (pure).
 */

export interface FileLocation {
  /** The text shown for it, as the answer wrote it. */
  text: string;
  /** An absolute path (POSIX, or a Windows drive's). */
  path: string;
  /** 1-based, as written. */
  line: number;
  column: number;
}

/** `<absolute path>:<line>:<column>:` at the start of a line, as compilers and `switchman rules check` write them. */
const LOCATION = /^((?:\/|[A-Za-z]:[\\/])[^\n:]*(?::(?![0-9]+:[0-9]+:)[^\n:]*)*):([0-9]+):([0-9]+)(?=:)/gm;

/** `text` in pieces: plain text, and the file locations it starts lines with. */
export function splitLocations(text: string): (string | FileLocation)[] {
  const pieces: (string | FileLocation)[] = [];
  let last = 0;
  for (const match of text.matchAll(LOCATION)) {
    const line = Number(match[2]);
    const column = Number(match[3]);
    if (line < 1 || column < 1) continue;
    if (match.index > last) pieces.push(text.slice(last, match.index));
    pieces.push({ text: match[0], path: match[1], line, column });
    last = match.index + match[0].length;
  }
  if (last < text.length) pieces.push(text.slice(last));
  return pieces;
}
