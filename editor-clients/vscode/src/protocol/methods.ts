/** Wire names of Switchman's custom LSP methods (docs/protocol.md). The only place they are spelled. */

export const Requests = {
  chat: 'switchman/chat',
  cancel: 'switchman/cancel',
  setModel: 'switchman/setModel',
  models: 'switchman/models',
  explain: 'switchman/explain',
  preview: 'switchman/preview',
  sessions: 'switchman/sessions',
  session: 'switchman/session',
  newSession: 'switchman/newSession',
  resumeSession: 'switchman/resumeSession',
  feedback: 'switchman/feedback',
  trust: 'switchman/trust',
  revokeTrust: 'switchman/revokeTrust',
  applyCode: 'switchman/applyCode',
  profiles: 'switchman/profiles',
  setProfile: 'switchman/setProfile',
} as const;

/** Requests the daemon sends to the editor. */
export const ServerRequests = {
  approve: 'switchman/approve',
} as const;

export const Notifications = {
  routeDecided: 'switchman/routeDecided',
  chatDelta: 'switchman/chatDelta',
  status: 'switchman/status',
  delegation: 'switchman/delegation',
  sessionChanged: 'switchman/sessionChanged',
} as const;

/** `data.code` of the JSON-RPC errors the daemon answers with. */
export const ErrorCodes = {
  invalidParams: 'invalid_params',
  unknownWorkspace: 'unknown_workspace',
  unknownSession: 'unknown_session',
  unknownAlias: 'unknown_alias',
  unknownModel: 'unknown_model',
  emptyMessage: 'empty_message',
  noModelAvailable: 'no_model_available',
  turnInProgress: 'turn_in_progress',
  unknownTurn: 'unknown_turn',
  invalidAttachment: 'invalid_attachment',
  invalidApply: 'invalid_apply',
  unknownProfile: 'unknown_profile',
} as const;

/** Slash commands the extension sends on the user's behalf. */
export const SlashCommands = {
  rulesCheck: '/rules check',
  delegate: '/delegate',
  routeOverride: '/route override',
  routeIgnore: '/route ignore',
} as const;
