/** The chat view's state and the `{type: ...}` messages between the extension and the webview. */

import type { Folder } from '../common/host';
import type { RequestFailure } from '../protocol/errors';
import type { Rating, RatingChange } from '../protocol/params';
import type {
  ChatDeltaParams, ChatResult, DelegationParams, ErrorInfo, RouteDecidedParams, ToolActivity, TurnStatus,
} from '../protocol/types';
import type { CommandExchange } from './commandExchanges';
import type { DelegationCard, WorkerTranscript } from './delegations';
import type { Explanation } from './chain';
import type { ApprovalCard } from '../tools/approval';
import type { ApprovalAnswer } from '../protocol/types';

export type Entry = UserEntry | TurnEntry | CommandEntry | ErrorEntry | DelegationEntry | ApprovalEntry;

export interface UserEntry {
  kind: 'user';
  id: string;
  text: string;
}

export interface TurnEntry {
  kind: 'turn';
  /** The turn id. */
  id: string;
  model: string | null;
  summary: string | null;
  banners: string[];
  /** Markdown, as streamed; the text of each model call after a tool call starts a paragraph of its own. */
  text: string;
  /** The text deltas as the daemon sent them, back to back (`text` without the paragraph breaks added). */
  streamed?: string;
  /** A tool call came after some text: the next text delta starts a new paragraph. */
  textBreak?: boolean;
  status: TurnStatus;
  error: ErrorInfo | null;
  costUsd: string | null;
  /** The part of `costUsd` that is Switchman's estimate (absent or null: none). */
  estimatedUsd?: string | null;
  tools: ToolActivity[];
  /** Notices that came before any of the answer (a retry): shown above it. */
  notices: string[];
  /** Notices that came after some of the answer (it was cut off at the output limit): shown below it. */
  lateNotices?: string[];
  /** "Why this model?" (the routing chain), once asked for. */
  explanation: Explanation | null;
  explanationOpen: boolean;
  /** The turn's `delegate` calls, as cards (see delegations.ts). */
  delegations?: DelegationCard[];
  /** The user's 👍 / 👎 on this answer, once the daemon has taken it. */
  rating?: Rating;
  /** Why the daemon refused the last 👍 / 👎 on this answer (cleared when the user tries again). */
  ratingError?: RequestFailure;
  /** Failed at its provider, sent from this window: the extension can send the same message again. */
  retryable?: boolean;
}

export interface CommandEntry {
  kind: 'command';
  id: string;
  text: string;
  /** The command was refused (a mistyped /command, a usage error): shown as an error. */
  failed?: boolean;
}

/** A worker the user started with `/delegate` (it belongs to no turn): its card alone. */
export interface DelegationEntry {
  kind: 'delegation';
  /** The delegation's id (`tool_use_id`, `user_…`). */
  id: string;
  card: DelegationCard;
}

/** A `switchman/approve` question, answered in the chat (see tools/approval.ts). */
export interface ApprovalEntry {
  kind: 'approval';
  id: string;
  card: ApprovalCard;
}

export interface ErrorEntry {
  kind: 'error';
  id: string;
  code: string;
  message: string;
}

export interface PreviewView {
  /** The draft this preview is for (older answers are dropped). */
  draft: string;
  /** `→ claude-haiku-4-5 · rule: fast for commits`, `command /model`, an error, or why Enter sent nothing. */
  text: string;
  tone: 'route' | 'command' | 'error' | 'busy';
  /** The full explanation, for the tooltip. */
  detail: string | null;
}

export interface ChatState {
  folders: Folder[];
  workspace: string | null;
  sessionId: string | null;
  /** The session's title (the start of its first message), when the daemon gave one. */
  sessionTitle: string | null;
  entries: Entry[];
  /** The message being answered, if any. */
  /** `text` as shown (with the attachments' labels); `draft` as typed, to give back if it is refused. */
  pending: { localId: string; text: string; draft?: string; turnId: string | null } | null;
  preview: PreviewView | null;
  /** The delegation cards the user expanded (tool use ids): still expanded when the chat is rebuilt. */
  openCards: string[];
  /** The turns whose routing chain ("Why this model?") the user opened: still open when the chat is rebuilt. */
  openExplanations: string[];
  /** Slash commands and their answers, which the daemon does not keep: put back when the chat is rebuilt. */
  commandExchanges: CommandExchange[];
  connected: boolean;
  routePreview: boolean;
  previewDelayMs: number;
}

/** What happens in a chat, in order; the extension forwards these and replays them after a reload. */
export type ChatEvent =
  /** `draft`: the text as typed, when `text` adds the attachments' labels. */
  | { type: 'userSent'; localId: string; text: string; draft?: string }
  | { type: 'routeDecided'; params: RouteDecidedParams }
  | { type: 'delta'; params: ChatDeltaParams }
  | { type: 'result'; localId: string; result: ChatResult }
  | { type: 'failed'; localId: string; failure: RequestFailure }
  | { type: 'delegation'; params: DelegationParams };

export type ToWebview =
  | { type: 'reset'; folders: Folder[]; workspace: string | null; sessionId: string | null; sessionTitle: string | null;
      entries: Entry[] }
  | { type: 'event'; event: ChatEvent }
  | { type: 'preview'; preview: PreviewView | null }
  | { type: 'explanation'; turnId: string; explanation: Explanation }
  | { type: 'rated'; turnId: string; rating: RatingChange }
  | { type: 'ratingFailed'; turnId: string; failure: RequestFailure }
  | { type: 'connection'; connected: boolean }
  | { type: 'settings'; routePreview: boolean; previewDelayMs: number }
  | { type: 'workerTranscript'; turnId: string; toolUseId: string; transcript: WorkerTranscript }
  | { type: 'approval'; card: ApprovalCard }
  /** A card's Stop did not stop it (another window's daemon runs it, it was starting): say why, offer Stop again. */
  | { type: 'stopRefused'; turnId: string; toolUseId: string; message: string };

export type FromWebview =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  /** A failed turn's Retry button: send the message of turn `turnId` again. */
  | { type: 'retry'; turnId: string }
  | { type: 'cancel' }
  | { type: 'draft'; text: string }
  | { type: 'explain'; turnId: string }
  | { type: 'toggleExplanation'; turnId: string }
  | { type: 'feedback'; turnId: string; rating: RatingChange }
  | { type: 'newChat' }
  | { type: 'selectWorkspace'; uri: string }
  | { type: 'openSettings' }
  | { type: 'restartServer' }
  | { type: 'workerTranscript'; turnId: string; toolUseId: string; workerSessionId: string }
  /** `turnId` / `toolUseId`: the card, told if the stop is refused. */
  | { type: 'stopWorker'; workerTurnId: string; turnId?: string; toolUseId?: string }
  | { type: 'stopDelegation'; turnId: string; toolUseId: string }
  | { type: 'codeAction'; action: CodeAction; text: string; turnId?: string }
  | { type: 'approvalAnswer'; id: string; decision: ApprovalAnswer['decision']; reason?: string }
  | { type: 'approvalDiff'; id: string }
  /** A file location in a command's answer (`/rules check`) was clicked: open the file there (1-based). */
  | { type: 'openLocation'; path: string; line: number; column: number };

/** What the buttons over a code block in an answer do. */
export type CodeAction = 'copy' | 'insert' | 'apply';

export function initialChatState(): ChatState {
  return {
    folders: [],
    workspace: null,
    sessionId: null,
    sessionTitle: null,
    entries: [],
    pending: null,
    preview: null,
    openCards: [],
    openExplanations: [],
    commandExchanges: [],
    connected: false,
    routePreview: true,
    previewDelayMs: 250,
  };
}

const FROM_WEBVIEW_TYPES = new Set<FromWebview['type']>([
  'ready', 'send', 'retry', 'cancel', 'draft', 'explain', 'toggleExplanation', 'newChat', 'selectWorkspace',
  'openSettings', 'restartServer', 'workerTranscript', 'stopWorker', 'stopDelegation', 'feedback', 'codeAction', 'approvalAnswer',
  'approvalDiff', 'openLocation',
]);
const DECISIONS = new Set(['allow_once', 'allow_always', 'deny']);

/** Messages from the webview are untrusted input: accept only the known shapes. */
export function parseFromWebview(value: unknown): FromWebview | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const message = value as Record<string, unknown>;
  if (!FROM_WEBVIEW_TYPES.has(message.type as FromWebview['type'])) return undefined;
  for (const key of ['text', 'turnId', 'uri', 'toolUseId', 'workerSessionId', 'workerTurnId', 'id', 'reason']) {
    if (key in message && typeof message[key] !== 'string') return undefined;
  }
  if (message.type === 'codeAction' && !['copy', 'insert', 'apply'].includes(message.action as string)) return undefined;
  const needs: Partial<Record<FromWebview['type'], string[]>> = {
    send: ['text'], retry: ['turnId'], draft: ['text'], explain: ['turnId'], toggleExplanation: ['turnId'], selectWorkspace: ['uri'],
    workerTranscript: ['turnId', 'toolUseId', 'workerSessionId'], stopWorker: ['workerTurnId'], stopDelegation: ['turnId', 'toolUseId'],
    feedback: ['turnId'], codeAction: ['text'], approvalAnswer: ['id'], approvalDiff: ['id'],
  };
  if (message.type === 'approvalAnswer' && !DECISIONS.has(message.decision as string)) return undefined;
  if (message.type === 'openLocation' && !(typeof message.path === 'string' && isAbsolutePath(message.path)
    && [message.line, message.column].every((n) => Number.isInteger(n) && (n as number) >= 1))) return undefined;
  if (message.type === 'feedback' && message.rating !== 'up' && message.rating !== 'down' && message.rating !== 'none') return undefined;
  for (const required of needs[message.type as FromWebview['type']] ?? []) {
    if (typeof message[required] !== 'string') return undefined;
  }
  return message as unknown as FromWebview;
}

/** A POSIX or Windows absolute path: the only files a location in the chat may name. */
function isAbsolutePath(path: string): boolean {
  return /^(\/|[A-Za-z]:[\\/])/.test(path) && !path.includes('\n');
}

const TITLE_LENGTH = 60;

/** A leading `@alias` and the spaces after it (the daemon's override token, engine/routing/overrides.py). */
export const LEADING_ALIAS = /^@[\w.:/+-]+(?:\s+|$)/;

/**
 * What the chat's header calls the session: its title, else its first message that started a turn
 * (as the daemon titles it: not a slash command's, nor one refused, without its `@alias`), else "New chat".
 */
export function sessionTitle(state: Pick<ChatState, 'sessionId' | 'sessionTitle' | 'entries'>): string {
  const { entries } = state;
  const firstMessage = entries.find((e, i): e is UserEntry => e.kind === 'user'
    && entries[i + 1]?.kind !== 'command' && entries[i + 1]?.kind !== 'error')?.text.trim();
  const words = firstMessage?.startsWith('\\@') ? firstMessage.slice(1) : firstMessage?.replace(LEADING_ALIAS, '');
  const title = (state.sessionTitle || words || '').trim().split('\n')[0].trim();
  if (!title) return 'New chat';
  return title.length > TITLE_LENGTH ? `${title.slice(0, TITLE_LENGTH - 1).trimEnd()}…` : title;
}
