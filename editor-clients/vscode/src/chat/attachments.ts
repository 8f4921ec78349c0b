/**
 * Context from the editor for a chat message: `#file` and `#selection` in the message, and
 * selections sent with "Send Selection to Switchman". The text comes from the editor (unsaved
 * changes included); the daemon counts it for routing and shows it in the transcript.
 */

import type { Attachment } from '../protocol/types';
import { LEADING_ALIAS } from './messages';

/** The active editor as the chat sees it. */
export interface EditorContext {
  uri: string;
  text: string;
  selection?: { text: string; startLine: number; endLine: number };
}

const TOKEN = /(^|\s)#(file|selection)\b/g;
/** A token with the spaces and tabs around it (not line breaks): what is taken out of the message. */
const TOKEN_WITH_SPACES = /[ \t]*(?<=^|\s)#(?:file|selection)\b[ \t]*/g;

/** The tokens a message uses: `file`, `selection`. */
export type Token = 'file' | 'selection';

/** The daemon keeps an attachment's first 200,000 characters and marks the rest as cut. */
export const MAX_ATTACHMENT_CHARS = 200_000;

/**
 * `text` as sent: cut where the daemon would cut it anyway, keeping enough past that for the
 * daemon to tell that it was cut. A whole 40 MB file would make a message bigger than the
 * largest the daemon reads (32 MB), which it cannot answer. The cut is in UTF-16 units (twice
 * the limit, so at least the limit plus one character remains) and never halves a character.
 */
export function attachmentText(text: string): string {
  const limit = 2 * MAX_ATTACHMENT_CHARS + 2;
  if (text.length <= limit) return text;
  const last = text.charCodeAt(limit - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? limit - 1 : limit);
}

/** Whether `a` and `b` attach the same file, or the same lines of it (their text may differ). */
export function sameAttachment(a: Attachment, b: Attachment): boolean {
  return a.uri === b.uri && a.kind === b.kind && a.start_line === b.start_line && a.end_line === b.end_line;
}

/** `attached` then `more`, without those of `attached` that `more` attaches again (with its text of now). */
export function attachedOnce(attached: Attachment[], more: Attachment[]): Attachment[] {
  return [...attached.filter((a) => !more.some((b) => sameAttachment(a, b))), ...more];
}

/** The file of the editor, with its text. */
export function fileAttachment(editor: EditorContext): Attachment {
  return { kind: 'file', uri: editor.uri, text: attachmentText(editor.text) };
}

/** The editor's selection (1-based lines), or undefined when nothing is selected. */
export function selectionAttachment(editor: EditorContext): Attachment | undefined {
  const selection = editor.selection;
  if (!selection || !selection.text) return undefined;
  return {
    kind: 'selection', uri: editor.uri, text: attachmentText(selection.text),
    start_line: selection.startLine, end_line: selection.endLine,
  };
}

/**
 * The message without its `#file` / `#selection` tokens, what they attach, and the tokens that had
 * nothing to attach (`#selection` with nothing selected, either with no editor open). Only the
 * tokens and the spaces around them are taken out: the rest of the message keeps its line breaks
 * and indentation (code pasted into it stays code).
 */
export function resolveTokens(message: string, editor: EditorContext | undefined):
  { message: string; attachments: Attachment[]; missing: Token[] } {
  const attachments: Attachment[] = [];
  const found = new Set<Token>();
  for (const match of message.matchAll(TOKEN)) found.add(match[2] as Token);
  if (found.size === 0) return { message, attachments, missing: [] };
  const missing: Token[] = [];
  if (found.has('selection')) {
    const selection = editor ? selectionAttachment(editor) : undefined;
    if (selection) attachments.push(selection);
    else missing.push('selection');
  }
  if (found.has('file')) {
    if (editor) attachments.push(fileAttachment(editor));
    else missing.push('file');
  }
  return { message: withoutTokens(message), attachments, missing };
}

/**
 * The message as sent: without its `#file` / `#selection` tokens and the spaces and tabs around
 * them (a token mid-line leaves one space), without the blank lines that leaves at its start.
 * A message that is nothing but its tokens (and perhaps an `@alias`: `@opus #file`) is sent as
 * typed, so that it still asks something, of the model its alias names.
 */
export function withoutTokens(message: string): string {
  const stripped = message.replace(TOKEN_WITH_SPACES, (token, offset: number, whole: string) => {
    const end = offset + token.length;
    const midLine = offset > 0 && whole[offset - 1] !== '\n' && end < whole.length && whole[end] !== '\n';
    return midLine ? ' ' : '';
  }).replace(/^(?:[ \t]*\n)+/, '').trimEnd();
  return stripped.replace(LEADING_ALIAS, '').trim() ? stripped : message.trim();
}

/** Why a message with `#selection` / `#file` is not sent when the editor has nothing for them. */
export function missingContextMessage(missing: readonly Token[], editorOpen: boolean): string {
  if (!editorOpen) {
    return `No editor is active, so ${missing.map((t) => `#${t}`).join(' and ')} has nothing to attach. `
      + 'Click into the file you mean, then send again (or remove the token).';
  }
  return 'Nothing is selected in the active editor, so #selection has nothing to attach. '
    + 'Select the code you mean, then send again (or use #file for the whole file).';
}

/** `Attached: src/app.py (lines 3–9)`, shown under the user's message (in words: 📎 needs an emoji font). */
export function attachmentLabel(attachment: Attachment, workspace: string): string {
  const base = workspace.replace(/\/+$/, '') + '/';
  let path = attachment.uri.startsWith(base) ? attachment.uri.slice(base.length) : attachment.uri;
  try {
    path = decodeURIComponent(path);
  } catch {
    // keep it encoded
  }
  return attachedLine(path, attachment.start_line, attachment.end_line);
}

/** The line under a message for one attachment, live and in a reloaded chat (the daemon's stored path). */
export function attachedLine(path: string, startLine?: number | null, endLine?: number | null): string {
  const lines = startLine ? ` (lines ${startLine}–${endLine})` : '';
  return `Attached: ${path}${lines}`;
}
