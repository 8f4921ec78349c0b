/**
 * The small interfaces through which feature code reaches VS Code and the daemon.
 * Feature classes depend on these, not on `vscode`, so unit tests pass stubs.
 */

import type { StatusParams } from '../protocol/types';

export interface Disposable {
  dispose(): void;
}

/** A workspace folder, named by its URI string as the daemon expects. */
export interface Folder {
  uri: string;
  name: string;
}

/** The running daemon, as feature code sees it. */
export interface SwitchmanConnection {
  readonly state: ConnectionState;
  request<R>(method: string, params: unknown, signal?: AbortSignal): Promise<R>;
  onNotification<P>(method: string, handler: (params: P) => void): Disposable;
  onDidChangeState(listener: (state: ConnectionState) => void): Disposable;
}

export type ConnectionState = 'starting' | 'running' | 'stopped' | 'failed';

export interface WorkspaceFolders {
  all(): Folder[];
  /** The folder of the active editor, else the first folder. */
  active(): Folder | undefined;
  onDidChange(listener: () => void): Disposable;
}

/** Latest `switchman/status` per workspace, shared by the status bar and the chat view. */
export interface StatusSource {
  get(workspace: string): StatusParams | undefined;
  onDidChange(listener: (status: StatusParams) => void): Disposable;
}

/** Two spellings of one workspace URI (VS Code percent-encodes; the daemon echoes what it got). */
export function sameWorkspace(a: string, b: string): boolean {
  return normalizeUri(a) === normalizeUri(b);
}

export function normalizeUri(uri: string): string {
  let decoded = uri;
  try {
    decoded = decodeURIComponent(uri);
  } catch {
    // keep it as is: not valid percent-encoding
  }
  return decoded.replace(/\/+$/, '').replace(/^file:\/\/\/([a-zA-Z]):/, (_m, d: string) => `file:///${d.toLowerCase()}:`);
}

/** A tiny synchronous event emitter (vscode.EventEmitter without the import). */
export class Emitter<T> {
  private listeners = new Set<(value: T) => void>();

  event = (listener: (value: T) => void): Disposable => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }

  dispose(): void {
    this.listeners.clear();
  }
}
