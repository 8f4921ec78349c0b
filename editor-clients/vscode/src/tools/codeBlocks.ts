/**
 * The Copy / Insert / Apply buttons over code blocks in answers. Apply shows the change in the
 * diff editor first and changes the buffer only when the user confirms (it stays unsaved and
 * undoable), like the changes the model's own tools make.
 */

import * as vscode from 'vscode';
import type { CodeAction } from '../chat/messages';
import type { ApprovalRequest } from '../protocol/types';
import type { ApprovalHost } from './approval';

export const APPLY = 'Apply';

/** `text` with `[start, end)` replaced by `code` (the whole text when nothing is selected). */
export function applied(text: string, start: number, end: number, code: string): string {
  return start === end ? code : text.slice(0, start) + code + text.slice(end);
}

let applySeq = 0;

export async function codeAction(host: ApprovalHost, action: CodeAction, code: string): Promise<void> {
  if (action === 'copy') {
    await vscode.env.clipboard.writeText(code);
    vscode.window.setStatusBarMessage('Switchman: code copied', 3000);
    return;
  }
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showInformationMessage('Switchman: open the file the code is for, then try again.');
    return;
  }
  if (action === 'insert') {
    await editor.edit((edit) => edit.replace(editor.selection, code));
    return;
  }
  const document = editor.document;
  const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
  const target = editor.selection.isEmpty ? whole : editor.selection;
  const original = document.getText();
  const proposed = applied(original, document.offsetAt(target.start), document.offsetAt(target.end), code);
  const request: ApprovalRequest = {
    id: `apply-${++applySeq}`, workspace: '', session_id: '', turn_id: '', tool: 'apply', tool_class: 'write',
    title: `Apply the code to ${vscode.workspace.asRelativePath(document.uri)}`, path: vscode.workspace.asRelativePath(document.uri),
    uri: document.uri.toString(), original, proposed,
  };
  await host.showDiff(request);
  try {
    const picked = await host.choose(`Switchman: ${request.title}?`, editor.selection.isEmpty
      ? 'It replaces the whole file.' : 'It replaces the selection.', [APPLY], new AbortController().signal);
    if (picked === APPLY) await editor.edit((edit) => edit.replace(target, code));
  } finally {
    await host.closeDiff(request);
  }
}
