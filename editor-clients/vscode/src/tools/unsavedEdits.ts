/**
 * A guard on the daemon's edits (`workspace/applyEdit`; the part without the `vscode` module). A change
 * is applied only to the text it was made from. The daemon makes it from the editor's text of a document
 * it is sent (the workspace's files, see sharedDocuments.ts), unsaved changes included, and names that
 * text's `version`: a buffer whose version moved since (the user typed after the daemon's last look) is
 * refused. A file it is not sent (larger than the sharing limit) is read from the disk: applied to a
 * buffer whose text is not the disk's, its positions would point elsewhere and the file be garbled, so
 * such an edit is refused too. An approval card catches both when Allow is pressed (`staleChange`); an
 * always-allowed tool has no card, so the edit itself is checked here and refused with the reason.
 *
 * An edit that is applied to a file whose editor text was the disk's is saved right after (`toSave`),
 * so the disk and the editor agree again: the model's next edit of the file, its commands and its
 * reads all see the change. Undo still takes it back in the editor.
 */

/** One document a workspace edit changes, as the editor has it. */
export interface EditTarget {
  /** How the user knows the file (relative to its workspace folder). */
  path: string;
  /** The open document's text, when it is open. */
  text?: string;
  /** The daemon reads the editor's text of this document (it is sent the document). */
  shared: boolean;
  /** The open document's version. */
  version?: number;
  /** The version of the document the daemon made the change from, when it names one. */
  editVersion?: number | null;
  /** The file on disk, when it could be read. */
  disk?: string;
  /** The open document has unsaved changes. */
  dirty?: boolean;
  /**
   * The editor text the daemon made this change from, when it was given it: an Apply of a code
   * block sends the document's text with `switchman/applyCode` (see `applyBases`).
   */
  base?: string;
}

/**
 * The texts sent with `switchman/applyCode` requests still running, by document URI: their edits are
 * made from the editor's text, not the disk's, so unsaved changes in the buffer are no reason to refuse
 * them — as long as the buffer still holds that text.
 */
export const applyBases = new Map<string, string>();

/** Run `work` (an Apply's request) with `text` recorded as the base of the edits it brings for `uri`. */
export async function withApplyBase<T>(uri: string, text: string, work: () => Promise<T>): Promise<T> {
  applyBases.set(uri, text);
  try {
    return await work();
  } finally {
    if (applyBases.get(uri) === text) applyBases.delete(uri);
  }
}

/** Why the edit must not be applied (the editor's text of a target is not what it was made from), or null. */
export function unsavedEditRefusal(targets: readonly EditTarget[]): string | null {
  const moved = targets.find((t) => t.shared && typeof t.editVersion === 'number' && t.version !== undefined
    && t.version !== t.editVersion);
  if (moved) {
    return `${moved.path} changed in the editor after this change was made from its text: applied now it would `
      + 'have landed in the wrong place, so nothing was changed. Read the file again and make the change anew.';
  }
  const stale = targets.find((t) => !t.shared && t.text !== undefined && t.disk !== undefined && t.text !== t.disk
    && t.text !== t.base);
  if (!stale) return null;
  return `${stale.path} has unsaved changes and is too large to be shared with Switchman: save it (or revert it), `
    + 'then ask again. This change was made from '
    + 'the file on disk: applied to the editor\'s text it would have landed in the wrong place, so nothing was changed.';
}

/** The targets to save once the edit is applied: those whose editor text was the disk's (not open, saved, or the same text). */
export function toSave<T extends EditTarget>(targets: readonly T[]): T[] {
  return targets.filter((t) => t.text === undefined || !t.dirty || (t.disk !== undefined && t.text === t.disk));
}

/** What the daemon is told when an applied edit could not be saved (`failureReason` with `applied: true`). */
export function unsavedNote(failures: readonly { path: string; reason: string }[]): string | undefined {
  if (failures.length === 0) return undefined;
  const which = failures.map((f) => `${f.path} (${f.reason})`).join(', ');
  return `The change is in the editor but was not saved: ${which}. The file on disk still has the old text.`;
}
