--- Wire names of the Switchman protocol (docs/protocol.md), kept in one place.
local M = {}

--- The LSP client name; also the server's `serverInfo.name`.
M.client_name = 'switchman'

--- Requests (client → server).
M.request = {
  chat = 'switchman/chat',
  cancel = 'switchman/cancel',
  set_model = 'switchman/setModel',
  models = 'switchman/models',
  explain = 'switchman/explain',
  preview = 'switchman/preview',
  sessions = 'switchman/sessions',
  session = 'switchman/session',
  new_session = 'switchman/newSession',
  resume_session = 'switchman/resumeSession',
  feedback = 'switchman/feedback',
  trust = 'switchman/trust',
  revoke_trust = 'switchman/revokeTrust',
  apply_code = 'switchman/applyCode',
  profiles = 'switchman/profiles',
  set_profile = 'switchman/setProfile',
}

--- Requests (server → client).
M.server_request = {
  approve = 'switchman/approve',
}

--- The server withdraws a request it sent (an approval nobody needs any more).
M.cancel_request = '$/cancelRequest'

--- Notifications (server → client).
M.notification = {
  route_decided = 'switchman/routeDecided',
  chat_delta = 'switchman/chatDelta',
  status = 'switchman/status',
  delegation = 'switchman/delegation',
  session_changed = 'switchman/sessionChanged',
}

--- `data.code` of the JSON-RPC errors the daemon answers with.
M.error = {
  invalid_params = 'invalid_params',
  unknown_workspace = 'unknown_workspace',
  unknown_session = 'unknown_session',
  unknown_alias = 'unknown_alias',
  unknown_model = 'unknown_model',
  empty_message = 'empty_message',
  no_model_available = 'no_model_available',
  turn_in_progress = 'turn_in_progress',
  unknown_turn = 'unknown_turn',
  unknown_profile = 'unknown_profile',
  unknown_command = 'unknown_command',
  unknown_tier = 'unknown_tier',
  command_usage = 'command_usage',
  invalid_attachment = 'invalid_attachment',
  invalid_text = 'invalid_text',
  data_folder_unusable = 'data_folder_unusable',
  override_unusable = 'override_unusable',
  delegation_disabled = 'delegation_disabled',
}

--- Errors after which nothing was sent or done: the message goes back to the input to fix.
M.not_sent = {
  [M.error.unknown_alias] = true,
  [M.error.unknown_model] = true,
  [M.error.empty_message] = true,
  [M.error.no_model_available] = true,
  [M.error.turn_in_progress] = true,
  [M.error.unknown_profile] = true,
  [M.error.unknown_command] = true,
  [M.error.unknown_tier] = true,
  [M.error.command_usage] = true,
  [M.error.invalid_attachment] = true,
  [M.error.invalid_text] = true,
  [M.error.data_folder_unusable] = true,
  [M.error.override_unusable] = true,
  [M.error.delegation_disabled] = true,
}

--- Chat delta kinds.
M.delta = {
  text = 'text',
  tool_call = 'tool_call',
  tool_result = 'tool_result',
  command_output = 'command_output',
  notice = 'notice',
}

--- Slash commands the daemon answers itself (for completion in the chat input).
M.slash_commands = {
  '/model', '/model -', '/model show', '/profile', '/profile clear', '/rules check', '/rules show', '/rules reload', '/cost',
  '/route override', '/route ignore', '/route retry', '/patterns', '/trust', '/trust revoke', '/delegate', '/help',
}

return M
