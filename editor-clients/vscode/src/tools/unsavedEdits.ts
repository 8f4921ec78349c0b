/**
 * A guard on the daemon's edits (`workspace/applyEdit`, pure part). The daemon computes a change of a
 * file it does not share with the editor (anything but Switchman's own configuration files) from the
 * file on disk; applied to an editor buffer whose text is not the disk's — unsaved changes, such as
 * an earlier change of Switchman's that is not saved yet — its positions point elsewhere and the file
 * is garbled. An approval card catches that when Allow is pressed (`staleChange`); an always-allowed
 * tool has no card, so the edit itself is checked here and refused with the reason instead.
 */

/** One document a workspace edit changes, as the editor has it. */
export interface EditTarget {
  /** How the user knows the file (relative to its workspace folder). */
  path: string;
  /** The open document's text, when it is open. */
  text?: string;
  /** The daemon reads the editor's text of this document (a configuration file it is sent). */
  shared: boolean;
  /** The file on disk, when it could be read. */
  disk?: string;
}

/** Why the edit must not be applied (the editor's text of a target is not what it was made from), or null. */
export function unsavedEditRefusal(targets: readonly EditTarget[]): string | null {
  const stale = targets.find((t) => !t.shared && t.text !== undefined && t.disk !== undefined && t.text !== t.disk);
  if (!stale) return null;
  return `${stale.path} has unsaved changes: save it (or revert it), then ask again. This change was made from `
    + 'the file on disk: applied to the editor\'s text it would have landed in the wrong place, so nothing was changed.';
}
