/** The chat view's state machine: every message from the extension folds into a new state (pure). */

import { NOT_SENT, PROVIDER_ERROR } from '../protocol/errors';
import type { ChatDeltaParams, ChatResult, DelegationParams, RouteDecidedParams } from '../protocol/types';
import { applyDelegation, toggleCard, UNANSWERED_CALL, updateCard, type DelegationCard } from './delegations';
import type { ApprovalCard } from '../tools/approval';
import { withExchange, withExchanges } from './commandExchanges';
import type { ApprovalEntry, ChatEvent, ChatState, CommandEntry, DelegationEntry, Entry, ToWebview, TurnEntry } from './messages';

/** The daemon's tool for Apply on a code block (engine/tools/apply_code.py). */
const APPLY_TOOL = 'apply_code';

export function reduce(state: ChatState, message: ToWebview): ChatState {
  switch (message.type) {
    case 'reset':
      return { ...state, folders: message.folders, workspace: message.workspace, sessionId: message.sessionId,
        sessionTitle: message.sessionTitle, pending: null, preview: null,
        entries: withExchanges(message.entries.map((e) => keepRatingError(reopenExplanation(reopen(e, state.openCards), state), state)),
          state.commandExchanges, message.sessionId) };
    case 'event':
      return applyEvent(state, message.event);
    case 'preview':
      // the route preview of a draft Enter could not send comes after the hint saying so: the hint stays
      if (state.preview?.tone === 'busy' && message.preview?.draft === state.preview.draft) return state;
      return { ...state, preview: message.preview };
    case 'explanation':
      return withOpenExplanation(updateTurn(state, message.turnId,
        (t) => ({ ...t, explanation: message.explanation, explanationOpen: true })), message.turnId, true);
    case 'rated':
      return updateTurn(state, message.turnId, ({ ratingError: _, rating: __, ...t }) =>
        (message.rating === 'none' ? t : { ...t, rating: message.rating }));
    case 'ratingFailed':
      return updateTurn(state, message.turnId, (t) => ({ ...t, ratingError: message.failure }));
    case 'connection':
      return message.connected ? { ...state, connected: true } : { ...interruptRunning(state), connected: false, pending: null };
    case 'settings':
      return { ...state, routePreview: message.routePreview, previewDelayMs: message.previewDelayMs,
        preview: message.routePreview ? state.preview : null };
    case 'approval':
      return upsertApproval(state, message.card);
    case 'workerTranscript':
      return changeCard(state, message.turnId, message.toolUseId, (c) => ({ ...c, transcript: message.transcript }));
    case 'stopRefused':
      return changeCard(state, message.turnId, message.toolUseId,
        (c) => ({ ...c, stopping: false, stopRefused: message.message }));
  }
}

/**
 * The text to give back to the input after `message`, if it refused the message `before` was
 * waiting for: nothing was sent or done (an unknown @alias, a mistyped /command, /delegate to an
 * unknown tier), so the user will want to fix it and send it again.
 */
export function refusedDraft(before: ChatState['pending'], message: ToWebview): string | null {
  if (!before || message.type !== 'event' || !('localId' in message.event) || message.event.localId !== before.localId) {
    return null;
  }
  return wasRefused(message.event) ? before.draft ?? before.text : null;
}

/** Whether this end of a message means it was refused: nothing was sent or done. */
export function wasRefused(event: ChatEvent): boolean {
  if (event.type === 'failed') return NOT_SENT.has(event.failure.code);
  return event.type === 'result' && event.result.kind === 'command' && event.result.status === 'failed';
}

/**
 * A turn that failed at its provider (after the daemon's own retries): the message was fine, so the
 * panel offers to send it again as it was (the Retry button).
 */
export function retryableFailure(result: ChatResult): boolean {
  return result.kind === 'turn' && result.status === 'failed' && result.error?.code === PROVIDER_ERROR;
}

/**
 * A failure's message as shown beside its Retry button: the daemon's advice to "send it again to retry" (or
 * "send your message again to continue") is what the button does, so it names the button (the user looked for
 * how to send it again while a button under the words did it).
 */
export function withRetryButton(message: string): string {
  return message.replace(/send (?:it|your message) again to (?:retry|continue)\./, 'press Retry to send it again.');
}

/** Expand or collapse a delegation card (the webview's own toggle). */
export function toggleDelegation(state: ChatState, turnId: string, toolUseId: string): ChatState {
  const next = changeCard(state, turnId, toolUseId, toggleCard);
  const open = allCards(next).some((c) => c.turnId === turnId && c.card.toolUseId === toolUseId && c.card.open);
  const others = state.openCards.filter((id) => id !== toolUseId);
  return { ...next, openCards: open ? [...others, toolUseId] : others };
}

/**
 * An entry rebuilt (the panel reopened or reloaded, a running turn replayed) with the cards the
 * user had expanded expanded again; their transcripts are fetched anew.
 */
function reopen<E extends Entry>(entry: E, openCards: readonly string[]): E {
  if (openCards.length === 0) return entry;
  const again = (card: DelegationCard) => (!card.open && openCards.includes(card.toolUseId) ? toggleCard(card) : card);
  if (entry.kind === 'delegation') return { ...entry, card: again((entry as DelegationEntry).card) };
  if (entry.kind === 'turn' && (entry as TurnEntry).delegations) {
    return { ...entry, delegations: (entry as TurnEntry).delegations?.map(again) };
  }
  return entry;
}

/** Stop was pressed on a card: show it as stopping until the worker ends. */
export function markStopping(state: ChatState, turnId: string, toolUseId: string): ChatState {
  return changeCard(state, turnId, toolUseId, (c) => ({ ...c, stopping: true }));
}

/**
 * Change one card: a planner's (in its turn) or a user's delegation (its own entry, whose cards
 * use the delegation id as their turn id).
 */
function changeCard(state: ChatState, turnId: string, toolUseId: string,
  change: (card: DelegationCard) => DelegationCard): ChatState {
  const own = state.entries.some((e) => e.kind === 'delegation' && e.id === toolUseId);
  if (own && turnId === toolUseId) {
    return { ...state, entries: state.entries.map((e) => (e.kind === 'delegation' && e.id === toolUseId
      ? { ...e, card: change(e.card) } : e)) };
  }
  return updateTurn(state, turnId, (t) => ({ ...t, delegations: updateCard(t.delegations ?? [], toolUseId, change) }));
}

/** Every delegation card of the chat, with the id its actions use as the turn id. */
export function allCards(state: ChatState): { turnId: string; card: DelegationCard }[] {
  return state.entries.flatMap((e) => {
    if (e.kind === 'delegation') return [{ turnId: e.id, card: e.card }];
    if (e.kind === 'turn') return (e.delegations ?? []).map((card) => ({ turnId: e.id, card }));
    return [];
  });
}

/** A delegation the user started: its entry is added when first seen and kept up to date. */
function userDelegation(state: ChatState, params: DelegationParams): ChatState {
  const index = state.entries.findIndex((e) => e.kind === 'delegation' && e.id === params.tool_use_id);
  const previous = index >= 0 ? (state.entries[index] as DelegationEntry).card : undefined;
  const [card] = applyDelegation(previous ? [previous] : [], params);
  const entry = reopen<DelegationEntry>({ kind: 'delegation', id: params.tool_use_id, card }, state.openCards);
  if (index < 0) return { ...state, entries: [...state.entries, entry] };
  return { ...state, entries: state.entries.map((e, i) => (i === index ? entry : e)) };
}

/** Open or close a turn's explanation (the webview's own toggle). */
export function toggleExplanation(state: ChatState, turnId: string): ChatState {
  const next = updateTurn(state, turnId, (t) => ({ ...t, explanationOpen: !t.explanationOpen }));
  return withOpenExplanation(next, turnId, findTurn(next.entries, turnId)?.explanationOpen === true);
}

function withOpenExplanation(state: ChatState, turnId: string, open: boolean): ChatState {
  const others = state.openExplanations.filter((id) => id !== turnId);
  return { ...state, openExplanations: open ? [...others, turnId] : others };
}

/**
 * A turn rebuilt (the daemon announced a change: another window's rating, `switchman patterns
 * forget`) with the refusal of a rating shown at it before: the rebuild would wipe it the moment
 * after it was shown, since the change that made the daemon refuse is what it announces. Cleared,
 * as before, when the turn is rated again.
 */
function keepRatingError<E extends Entry>(entry: E, before: ChatState): E {
  if (entry.kind !== 'turn') return entry;
  const refused = findTurn(before.entries, entry.id)?.ratingError;
  return refused ? { ...entry, ratingError: refused } : entry;
}

/**
 * A turn rebuilt (the panel reopened or reloaded, a running turn replayed) with the routing chain
 * the user had opened open again: the one shown before, else fetched anew (see {@link unexplained}).
 */
function reopenExplanation<E extends Entry>(entry: E, before: ChatState): E {
  if (entry.kind !== 'turn' || !before.openExplanations.includes(entry.id)) return entry;
  const explanation = (entry as TurnEntry).explanation ?? findTurn(before.entries, entry.id)?.explanation ?? null;
  return { ...entry, explanationOpen: true, explanation };
}

/** The turns whose routing chain is open but not loaded (after a rebuild): the webview asks for them. */
export function unexplained(state: ChatState): string[] {
  return state.entries.flatMap((e) => (e.kind === 'turn' && e.explanationOpen && !e.explanation ? [e.id] : []));
}

/** 👍 / 👎 pressed: an earlier refusal is cleared while the daemon answers (it shows again if it refuses again). */
export function ratingAsked(state: ChatState, turnId: string): ChatState {
  return updateTurn(state, turnId, ({ ratingError: _, ...t }) => t);
}

export function applyEvent(state: ChatState, event: ChatEvent): ChatState {
  switch (event.type) {
    case 'userSent':
      return { ...state, preview: null, pending: { localId: event.localId, text: event.text, turnId: null,
        ...(event.draft !== undefined ? { draft: event.draft } : {}) },
        // A replayed exchange the rebuilt chat already has (a slash command it kept) is not shown twice.
        entries: state.entries.some((e) => e.kind === 'user' && e.id === event.localId) ? state.entries
          : [...state.entries, { kind: 'user', id: event.localId, text: event.text }] };
    case 'routeDecided':
      return routeDecided(state, event.params);
    case 'delta':
      return delta(state, event.params);
    case 'result':
      return result(state, event.localId, event.result);
    case 'failed':
      return { ...state, pending: state.pending?.localId === event.localId ? null : state.pending,
        entries: [...state.entries, { kind: 'error', id: `${event.localId}:error`, ...event.failure }] };
    case 'delegation': {
      const turnId = event.params.turn_id;
      if (turnId === null) return userDelegation(state, event.params);
      return updateTurn(state, turnId, (t) => reopen({ ...t, delegations: applyDelegation(t.delegations ?? [], event.params,
        t.tools.map((tool) => tool.id)) },
        state.openCards));
    }
  }
}

function routeDecided(state: ChatState, params: RouteDecidedParams): ChatState {
  const pending = state.pending ? { ...state.pending, turnId: params.turn_id } : null;
  const existing = findTurn(state.entries, params.turn_id);
  if (existing) {
    return { ...updateTurn(state, params.turn_id, (t) => ({ ...t, model: params.model, summary: params.summary,
      banners: params.banners })), pending, sessionId: params.session_id };
  }
  const turn: TurnEntry = {
    kind: 'turn', id: params.turn_id, model: params.model, summary: params.summary, banners: params.banners,
    text: '', status: 'running', error: null, costUsd: null, tools: [], notices: [], explanation: null,
    explanationOpen: false,
  };
  return { ...state, pending, sessionId: params.session_id, entries: [...state.entries, reopenExplanation(turn, state)] };
}

function delta(state: ChatState, params: ChatDeltaParams): ChatState {
  if (!params.turn_id) return state; // command output arrives again in the chat result
  return updateTurn(state, params.turn_id, (turn) => {
    switch (params.kind) {
      case 'text': {
        // The daemon streams each model call's text right after the last: a call that follows a
        // tool call starts a new paragraph, as the chat rebuilt from the stored messages shows it.
        const piece = params.text ?? '';
        const gap = turn.textBreak && piece ? '\n\n' : '';
        return { ...turn, text: turn.text + gap + piece, streamed: (turn.streamed ?? turn.text) + piece,
          textBreak: turn.textBreak && !piece };
      }
      case 'notice':
        return turn.text
          ? { ...turn, lateNotices: [...(turn.lateNotices ?? []), params.text ?? ''] }
          : { ...turn, notices: [...turn.notices, params.text ?? ''] };
      case 'tool_call':
      case 'tool_result': {
        const textBreak = turn.textBreak || (params.kind === 'tool_call' && turn.text.trim() !== '');
        return params.tool ? { ...turn, tools: upsertTool(turn.tools, params.tool), textBreak } : turn;
      }
      default:
        return turn;
    }
  });
}

function upsertTool(tools: TurnEntry['tools'], tool: NonNullable<ChatDeltaParams['tool']>): TurnEntry['tools'] {
  const index = tools.findIndex((t) => t.id === tool.id);
  if (index < 0) return [...tools, tool];
  return tools.map((t, i) => (i === index ? { ...t, ...tool, input: tool.input ?? t.input } : t));
}

/**
 * A finished turn's text: the result's (the daemon's deltas back to back), with the paragraph breaks
 * the live turn put between its model calls' texts kept; a result that is not what was streamed
 * (plus what had not arrived yet) is shown as it is.
 */
function answerText(turn: TurnEntry, text: string): string {
  const streamed = turn.streamed ?? turn.text;
  if (turn.text === streamed || !text.startsWith(streamed)) return text;
  return turn.text + text.slice(streamed.length);
}

function result(state: ChatState, localId: string, outcome: ChatResult): ChatState {
  const pending = state.pending?.localId === localId ? null : state.pending;
  const base = { ...state, pending, sessionId: outcome.session_id };
  if (outcome.kind === 'command' || !outcome.turn_id) {
    const answer: CommandEntry = { kind: 'command', id: `${localId}:command`, text: outcome.text,
      ...(outcome.status === 'failed' ? { failed: true } : {}) };
    const shown = state.entries.some((e) => e.id === answer.id); // a replay of an exchange the chat kept
    const entries = shown ? state.entries.map((e) => (e.id === answer.id ? answer : e)) : [...state.entries, answer];
    return { ...base, entries, commandExchanges: withExchange(state.commandExchanges, entries, localId, outcome, answer) };
  }
  // A turn the daemon ended as it stopped (Restart Server) is answered `cancelled` with the
  // `interrupted` error the session keeps: shown as that, not as the user's Stop.
  const status = outcome.status === 'cancelled' && outcome.error?.code === 'interrupted' ? 'interrupted' : outcome.status;
  const finished = (turn: TurnEntry): TurnEntry => ({
    ...turn, status, text: answerText(turn, outcome.text), error: outcome.error, costUsd: outcome.cost_usd,
    tools: outcome.status === 'completed' ? turn.tools : unfinishedTools(turn.tools),
    estimatedUsd: outcome.estimated_usd ?? null,
    model: outcome.model ?? turn.model, summary: outcome.summary ?? turn.summary,
    banners: outcome.banners.length > 0 ? outcome.banners : turn.banners,
    ...(retryableFailure(outcome) ? { retryable: true } : {}),
  });
  if (findTurn(state.entries, outcome.turn_id)) return { ...updateTurn(base, outcome.turn_id, finished) };
  const blank: TurnEntry = {
    kind: 'turn', id: outcome.turn_id, model: null, summary: null, banners: [], text: '', status: 'running',
    error: null, costUsd: null, tools: [], notices: [], explanation: null, explanationOpen: false,
  };
  return { ...base, entries: [...state.entries, finished(blank)] };
}

/**
 * The daemon went away (it exited, was killed or is restarting): nothing it ran goes on, so a turn
 * still answering stops showing "answering…" and shows `interrupted` (the restarted daemon's
 * transcript, loaded when it is back, says the same).
 */
function interruptRunning(state: ChatState): ChatState {
  if (!state.entries.some((e) => e.kind === 'turn' && e.status === 'running')) return state;
  return { ...state, entries: state.entries.map((e) => (e.kind === 'turn' && e.status === 'running'
    ? { ...e, status: 'interrupted' as const, tools: unfinishedTools(e.tools) } : e)) };
}

/**
 * A turn stopped, failed or cut off with a tool call still running (its question was withdrawn, say):
 * the call's line no longer says `running`. It reads as the daemon's record of such a call reads once
 * the chat is rebuilt (`error: Cancelled.`).
 */
function unfinishedTools(tools: TurnEntry['tools']): TurnEntry['tools'] {
  return tools.map((t) => (t.status === 'running' ? { ...t, status: 'error', summary: UNANSWERED_CALL } : t));
}

/**
 * Whether a turn offers 👍 / 👎: once it ended, with an answer to rate — some text, a tool call or a worker, or
 * simply completed. A turn that failed (or was stopped) before any of that has nothing to rate, and a 👍 there
 * taught the pattern store that the model did well on a turn it never answered. A rating given stays shown.
 */
export function rateable(turn: TurnEntry): boolean {
  if (turn.rating) return true;
  if (turn.status === 'running') return false;
  return turn.status === 'completed' || turn.text.trim() !== '' || turn.tools.length > 0 || (turn.delegations?.length ?? 0) > 0;
}

/**
 * The turn whose actions (Retry, the pattern suggestion's buttons) are offered: the last entry, when it is a
 * turn, the cards of its own (Apply's, a worker's) after it aside: applying a code block of the last answer,
 * or the restarted chat putting that answered card at the end, took them away.
 */
export function actionableTurn(shown: readonly Entry[]): string | undefined {
  const last = [...shown].reverse().find((e) => e.kind !== 'approval');
  return last?.kind === 'turn' ? last.id : undefined;
}

/**
 * The chat as shown: a question about a turn's own tool call goes inside that turn, with its tool
 * lines (above the answer the turn writes after it, not below it), and so does a question of one of
 * its workers, under the workers' cards (it stood on its own at the end of the chat, and once the
 * planner had answered, below that answer, as if asked after it); a question of the user's own
 * `/delegate` (no turn of this chat) or of Apply on a code block stays an entry of its own, where it
 * was asked.
 */
export function approvalsInTurns(entries: Entry[]): { shown: Entry[]; byTurn: Map<string, ApprovalCard[]> } {
  const owners = new Map<string, string>(); // a turn of this chat, or a worker turn of one: the chat's turn
  for (const e of entries) {
    if (e.kind !== 'turn') continue;
    owners.set(e.id, e.id);
    for (const card of e.delegations ?? []) if (card.workerTurnId) owners.set(card.workerTurnId, e.id);
  }
  const byTurn = new Map<string, ApprovalCard[]>();
  const shown = entries.filter((e) => {
    // Apply's question is about a code block the user clicked, maybe in an old answer: it stays
    // where it was asked, at the end of the chat.
    const owner = e.kind === 'approval' && e.card.tool !== APPLY_TOOL ? owners.get(e.card.turnId) : undefined;
    if (e.kind !== 'approval' || owner === undefined) return true;
    byTurn.set(owner, [...(byTurn.get(owner) ?? []), e.card]);
    return false;
  });
  return { shown, byTurn };
}

/** One of a turn's delegation cards or question cards, in the order the turn shows them. */
export type TurnCard = { kind: 'delegation'; card: DelegationCard } | { kind: 'approval'; card: ApprovalCard };

/**
 * A turn's delegation cards and the questions shown in it, in order: the question a delegation's start asked (its
 * worker may change things; asked again, each one) right above its card, as it was asked before its worker started
 * (it stood under every card, below the worker's and its end); the others (a tool call's, a worker's, one whose
 * delegation has no card yet: still asked, or from a daemon that does not name it) after the cards, as before.
 */
export function turnCards(cards: readonly DelegationCard[], approvals: readonly ApprovalCard[]): TurnCard[] {
  const placed = new Set(cards.map((c) => c.toolUseId));
  const startOf = (a: ApprovalCard) => (a.kind === 'delegation' && a.toolUseId && placed.has(a.toolUseId) ? a.toolUseId : null);
  return [
    ...cards.flatMap((card): TurnCard[] => [
      ...approvals.filter((a) => startOf(a) === card.toolUseId).map((a): TurnCard => ({ kind: 'approval', card: a })),
      { kind: 'delegation', card }]),
    ...approvals.filter((a) => startOf(a) === null).map((a): TurnCard => ({ kind: 'approval', card: a })),
  ];
}

/** A new question goes at the end of the chat; an answered one keeps its place and shows its outcome. */
function upsertApproval(state: ChatState, card: ApprovalCard): ChatState {
  const known = state.entries.some((e) => e.kind === 'approval' && e.id === card.id);
  const entry: ApprovalEntry = { kind: 'approval', id: card.id, card };
  return { ...state, entries: known ? state.entries.map((e) => (e.kind === 'approval' && e.id === card.id ? entry : e))
    : [...state.entries, entry] };
}

function findTurn(entries: Entry[], turnId: string): TurnEntry | undefined {
  return entries.find((e): e is TurnEntry => e.kind === 'turn' && e.id === turnId);
}

function updateTurn(state: ChatState, turnId: string, change: (turn: TurnEntry) => TurnEntry): ChatState {
  let changed = false;
  const entries = state.entries.map((e) => {
    if (e.kind !== 'turn' || e.id !== turnId) return e;
    changed = true;
    return change(e);
  });
  return changed ? { ...state, entries } : state;
}
