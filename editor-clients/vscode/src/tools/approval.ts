/**
 * Answering `switchman/approve`: before a tool changes a file or runs a command, the user sees
 * what will happen (a file change in VS Code's diff editor, a command as text) and picks
 * Allow once / Always allow / Deny (with an optional reason the model sees).
 */

import type { ApprovalAnswer, ApprovalRequest } from '../protocol/types';

export const ALLOW_ONCE = 'Allow once';
export const DENY = 'Deny';

export function alwaysLabel(request: ApprovalRequest): string {
  return `Always allow ${request.tool} here`;
}

/** What the approval flow needs from VS Code (stubbed in unit tests). */
export interface ApprovalHost {
  /** Open the proposed change beside the current text. */
  showDiff(request: ApprovalRequest): Promise<void>;
  /** Close what {@link showDiff} opened. */
  closeDiff(request: ApprovalRequest): Promise<void>;
  /** Ask with buttons; undefined when dismissed or withdrawn. */
  choose(message: string, detail: string, choices: string[], signal: AbortSignal): Promise<string | undefined>;
  /** An optional reason for a denial (undefined: none). */
  reason(signal: AbortSignal): Promise<string | undefined>;
}

/** The question shown for `request`. */
export function approvalMessage(request: ApprovalRequest): { message: string; detail: string } {
  if (request.command) {
    return { message: `Switchman wants to run: ${request.command}`, detail: `in ${request.cwd ?? 'the workspace'}` };
  }
  return { message: `Switchman wants to: ${request.title}`, detail: 'The change is shown in the diff editor.' };
}

/** Ask the user about `request`; a dismissed question or a withdrawn request is a denial. */
export async function answerApproval(host: ApprovalHost, request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
  const showsDiff = request.tool_class === 'write' && request.uri !== null && request.uri !== undefined;
  if (showsDiff) await host.showDiff(request);
  try {
    const { message, detail } = approvalMessage(request);
    const always = alwaysLabel(request);
    const picked = await host.choose(message, detail, [ALLOW_ONCE, always, DENY], signal);
    if (picked === ALLOW_ONCE) return { decision: 'allow_once' };
    if (picked === always) return { decision: 'allow_always' };
    if (picked !== DENY) return { decision: 'deny', reason: signal.aborted ? undefined : 'the user dismissed the question' };
    const reason = await host.reason(signal);
    return reason ? { decision: 'deny', reason } : { decision: 'deny' };
  } finally {
    if (showsDiff) await host.closeDiff(request);
  }
}
