/**
 * Which documents the daemon is sent (`didOpen`/`didChange`/`didClose`; the part without the `vscode`
 * module). Switchman's configuration files, for their diagnostics, and every file of the workspace
 * folders, so that the model's tools read and edit what the user sees, unsaved changes included.
 *
 * The language client's selector takes every `file` document; the decision is made here when a document
 * is opened: a file outside the workspace folders, or larger than {@link MAX_SHARED_CHARS}, is not sent
 * (its changes and its close are not either), and the daemon reads it from the disk. A document keeps
 * its decision until it is closed (one that grows past the limit stays shared).
 */

/**
 * The largest document shared when it is opened: the daemon's `edit_file` limit (2 MB). The daemon
 * applies each change to its whole copy, about 7 ms a keystroke at this size; VS Code itself never
 * gives extensions documents over 50 MB.
 */
export const MAX_SHARED_CHARS = 2 * 1024 * 1024;

/** A document being opened, as the decision needs it. */
export interface OpeningDocument {
  uri: string;
  scheme: string;
  /** Its length in characters (UTF-16 code units). */
  length: number;
  /** It lies inside one of the window's workspace folders. */
  inWorkspace: boolean;
  /** It is one of Switchman's configuration files (always shared: the daemon checks them). */
  isConfig: boolean;
}

/** Whether a document opened now is sent to the daemon. */
export function sharedOnOpen(document: OpeningDocument): boolean {
  if (document.isConfig) return true;
  return document.scheme === 'file' && document.inWorkspace && document.length <= MAX_SHARED_CHARS;
}

/** The documents of one language client that are not sent to the daemon, by URI, while they are open. */
export class SharedDocuments {
  private readonly withheld = new Set<string>();

  /** A document is opened: whether its `didOpen` is sent. */
  opened(document: OpeningDocument): boolean {
    if (sharedOnOpen(document)) {
      this.withheld.delete(document.uri);
      return true;
    }
    this.withheld.add(document.uri);
    return false;
  }

  /** Whether the daemon has the text of the open document at `uri` (its changes are sent). */
  isShared(uri: string): boolean {
    return !this.withheld.has(uri);
  }

  /** A document is closed: whether its `didClose` is sent. */
  closed(uri: string): boolean {
    return !this.withheld.delete(uri);
  }
}
