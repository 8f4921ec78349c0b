/**
 * Context from the editor for a chat message: `#file` and `#selection` in the message, and
 * selections sent with "Send Selection to Switchman". The text comes from the editor (unsaved
 * changes included); the daemon counts it for routing and shows it in the transcript.
 */

import type { Attachment } from '../protocol/types';

/** The active editor as the chat sees it. */
export interface EditorContext {
  uri: string;
  text: string;
  selection?: { text: string; startLine: number; endLine: number };
}

const TOKEN = /(^|\s)#(file|selection)\b/g;

/** The file of the editor, with its text. */
export function fileAttachment(editor: EditorContext): Attachment {
  return { kind: 'file', uri: editor.uri, text: editor.text };
}

/** The editor's selection (1-based lines), or undefined when nothing is selected. */
export function selectionAttachment(editor: EditorContext): Attachment | undefined {
  const selection = editor.selection;
  if (!selection || !selection.text) return undefined;
  return { kind: 'selection', uri: editor.uri, text: selection.text, start_line: selection.startLine, end_line: selection.endLine };
}

/** The message without its `#file` / `#selection` tokens, and what they attach. */
export function resolveTokens(message: string, editor: EditorContext | undefined): { message: string; attachments: Attachment[] } {
  const attachments: Attachment[] = [];
  const found = new Set<string>();
  for (const match of message.matchAll(TOKEN)) found.add(match[2]);
  if (!editor || found.size === 0) return { message, attachments };
  if (found.has('selection')) {
    const selection = selectionAttachment(editor);
    if (selection) attachments.push(selection);
  }
  if (found.has('file')) attachments.push(fileAttachment(editor));
  return { message: message.replace(TOKEN, '$1').replace(/\s{2,}/g, ' ').trim(), attachments };
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
