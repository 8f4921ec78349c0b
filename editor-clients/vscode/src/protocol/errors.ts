/** Turning a JSON-RPC error from the daemon into something to show the user. */

export interface RequestFailure {
  /** `data.code` (e.g. `no_model_available`), or `error` when the daemon gave none. */
  code: string;
  /** Written for the user by the daemon; shown as is. */
  message: string;
}

/** Read `{code, message, data: {code}}` off whatever the language client rejected with. */
export function requestFailure(error: unknown): RequestFailure {
  if (typeof error === 'object' && error !== null) {
    const record = error as { message?: unknown; data?: unknown };
    const data = record.data as { code?: unknown } | undefined;
    const code = typeof data?.code === 'string' ? data.code : 'error';
    const message = typeof record.message === 'string' && record.message ? record.message : String(error);
    return { code, message };
  }
  return { code: 'error', message: String(error) };
}

/** Errors after which the draft was not sent and the user will want it back to edit. */
export const NOT_SENT = new Set(['unknown_alias', 'unknown_model', 'empty_message', 'no_model_available', 'turn_in_progress',
  'unknown_profile', 'unknown_command', 'unknown_tier', 'command_usage', 'invalid_attachment', 'invalid_text',
  'data_folder_unusable', 'override_unusable', 'delegation_disabled']);
