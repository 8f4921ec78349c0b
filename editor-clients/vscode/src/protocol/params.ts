/** Builders of the params of every custom request: the only code that shapes them. */

import type { Attachment, WorkspaceUri } from './types';

/** `typed`: the message as typed, sent when it differs from `message` (the daemon shows it, never sends it). */
export function chatParams(workspace: WorkspaceUri, message: string, sessionId?: string | null, attachments: Attachment[] = [],
  typed?: string) {
  return {
    workspace, message, ...(sessionId ? { session_id: sessionId } : {}),
    ...(attachments.length ? { attachments } : {}),
    ...(typed !== undefined && typed !== message ? { typed } : {}),
  };
}

export type Rating = 'up' | 'down';
/** A rating given, or `none`: the one given before taken back (its button pressed again). */
export type RatingChange = Rating | 'none';

/** 👍 / 👎 on a finished turn, for the pattern store (`none` takes it back). */
export function feedbackParams(turnId: string, rating: RatingChange) {
  return { turn_id: turnId, rating };
}

export function cancelParams(turnId: string) {
  return { turn_id: turnId };
}

/** Stop one delegation of a planner's turn, also one still waiting for a worker slot (it has no worker turn yet). */
export function cancelDelegationParams(plannerTurnId: string, toolUseId: string) {
  return { turn_id: plannerTurnId, tool_use_id: toolUseId };
}

/** `model: null` clears the sticky model. */
export function setModelParams(workspace: WorkspaceUri, model: string | null, sessionId?: string | null) {
  return { workspace, model, ...(sessionId ? { session_id: sessionId } : {}) };
}

export function profilesParams(workspace: WorkspaceUri) {
  return { workspace };
}

/** `profile: null` clears the session's choice (the workspace's or the global default applies). */
export function setProfileParams(workspace: WorkspaceUri, profile: string | null) {
  return { workspace, profile };
}

export function modelsParams(workspace: WorkspaceUri) {
  return { workspace };
}

export function explainParams(target: { workspace?: WorkspaceUri; sessionId?: string | null; turnId?: string | null }) {
  if (!target.workspace && !target.sessionId) {
    throw new Error('explain needs a workspace or a session');
  }
  return {
    ...(target.workspace ? { workspace: target.workspace } : {}),
    ...(target.sessionId ? { session_id: target.sessionId } : {}),
    ...(target.turnId ? { turn_id: target.turnId } : {}),
  };
}

export function previewParams(workspace: WorkspaceUri, message: string, sessionId?: string | null, attachments: Attachment[] = []) {
  return { workspace, message, has_images: false, ...(sessionId ? { session_id: sessionId } : {}),
    ...(attachments.length ? { attachments } : {}) };
}

export function sessionsParams(workspace: WorkspaceUri, includeWorkers = true) {
  return { workspace, include_workers: includeWorkers };
}

export function sessionParams(sessionId: string) {
  return { session_id: sessionId };
}

export function newSessionParams(workspace: WorkspaceUri) {
  return { workspace };
}

export function resumeSessionParams(workspace: WorkspaceUri, sessionId: string) {
  return { workspace, session_id: sessionId };
}

export function initializationOptions(diagnosticsDebounceMs: number) {
  return { diagnostics_debounce_ms: diagnosticsDebounceMs };
}

export function trustParams(workspace?: WorkspaceUri) {
  return workspace ? { workspace } : {};
}

export function revokeTrustParams(workspace: WorkspaceUri, tool?: string) {
  return { workspace, ...(tool ? { tool } : {}) };
}

/** A span of a document in LSP positions (0-based line, UTF-16 character). */
export interface LspRange {
  start: { line: number; character: number };
  end: { line: number; character: number };
}

/** Put `code` into the document `uri` (whose current text is `text`) in place of `range`, or all of it. */
export function applyCodeParams(target: { workspace: WorkspaceUri; uri: string; text: string; code: string;
  range?: LspRange; turnId?: string }) {
  return {
    workspace: target.workspace, uri: target.uri, text: target.text, code: target.code,
    ...(target.range ? { range: target.range } : {}),
    ...(target.turnId ? { turn_id: target.turnId } : {}),
  };
}
