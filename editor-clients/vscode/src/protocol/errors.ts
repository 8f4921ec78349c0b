/** Turning a JSON-RPC error from the daemon into something to show the user. */

export interface RequestFailure {
  /** `data.code` (e.g. `no_model_available`), or `error` when the daemon gave none. */
  code: string;
  /** Written for the user by the daemon; shown as is. */
  message: string;
}

/**
 * vscode-jsonrpc's own codes for a request that lost its connection: the daemon exited (or was
 * killed, or restarted) before it answered (MessageWriteError, PendingResponseRejected, ConnectionInactive).
 */
const CONNECTION_LOST = new Set([-32099, -32097, -32096]);

/** What the user reads when the daemon went away before it answered (not vscode-jsonrpc's wording). */
export const DAEMON_STOPPED: RequestFailure = {
  code: 'daemon_stopped',
  message: 'The Switchman daemon stopped before it answered (it exited, was killed or restarted). '
    + 'It is started again by itself; what it had recorded comes back in the chat.',
};

/** Read `{code, message, data: {code}}` off whatever the language client rejected with. */
export function requestFailure(error: unknown): RequestFailure {
  if (typeof error === 'object' && error !== null) {
    const record = error as { message?: unknown; data?: unknown; code?: unknown };
    if (typeof record.code === 'number' && CONNECTION_LOST.has(record.code)) return DAEMON_STOPPED;
    const data = record.data as { code?: unknown } | undefined;
    const code = typeof data?.code === 'string' ? data.code : 'error';
    const message = typeof record.message === 'string' && record.message ? record.message : String(error);
    return { code, message };
  }
  return { code: 'error', message: String(error) };
}

/** A turn that failed at its provider after the daemon's own retries: the message can be sent again as it was. */
export const PROVIDER_ERROR = 'provider_error';

/**
 * The panel's own refusal, before the daemon is asked: `#selection` with nothing selected, or
 * `#selection` / `#file` with no editor to take them from.
 */
export const MISSING_CONTEXT = 'missing_context';

/** The panel's own refusal in a window with no folder open: sessions belong to a workspace folder. */
export const NO_FOLDER = 'no_workspace_folder';
export const NO_FOLDER_MESSAGE = 'No folder is open in this window. Switchman keeps each folder\'s chats with it: '
  + 'open a folder (File → Open Folder…), then send again.';

/** A message sent while another answer is written (the daemon's code, and the panel's for a message it refuses itself). */
export const TURN_IN_PROGRESS = 'turn_in_progress';

/**
 * Errors after which the draft was not sent and the user will want it back to edit. The daemon's
 * codes are written out: tests/test_layers_and_names.py reads them here, to match Neovim's.
 */
export const NOT_SENT = new Set([MISSING_CONTEXT, NO_FOLDER, 'unknown_alias', 'unknown_model', 'empty_message', 'no_model_available', 'turn_in_progress',
  'unknown_profile', 'unknown_command', 'unknown_tier', 'command_usage', 'invalid_attachment', 'invalid_text',
  'data_folder_unusable', 'override_unusable', 'delegation_disabled']);
