/**
 * Delegation cards (pure): each `delegate` call of a planner's turn is a card inside its answer —
 * tier, model, task, live status and cost — that expands to the worker's transcript.
 * Live cards fold `switchman/delegation` notifications; a reloaded transcript rebuilds them from
 * the stored `delegate` tool calls, the session's recorded delegations and its per-worker costs.
 * A card shows the tier the worker runs on: when the tier floor capped the tier asked for, both.
 */

import { costParts, formatCost, plural, shortModelName, type UsdValue } from '../common/format';
import { handoffLines, type HandoffLine } from './handoff';
import { OUTPUT_FOLDED_LINES, terminalText } from './longMessage';
import type {
  DelegationParams, DelegationRecord, DelegationStatus, Message, QueuePlace, SessionDetail, TurnStatus, WorkerCost,
} from '../protocol/types';

/** The tool a planner calls to hand a sub-task to a worker. */
export const DELEGATE_TOOL = 'delegate';
/** The failure of a delegation that was stopped (by Stop, or by cancelling the planner). */
const CANCELLED_BY_USER = 'cancelled_by_user';
/** The failure of a delegation whose daemon stopped while it ran. */
const INTERRUPTED = 'interrupted';
/** What the daemon stores for a tool call its cancelled turn did not wait for: no outcome of the call's own. */
export const UNANSWERED_CALL = 'Cancelled.';

export interface WorkerMessage {
  who: 'task' | 'worker' | 'tool';
  /** Markdown for the worker's own text; plain text otherwise. */
  text: string;
}

export interface WorkerTranscript {
  loading: boolean;
  messages: WorkerMessage[];
  error: string | null;
  /** The handoff envelope: who handed over what, with which tools, models and limits. */
  handoff?: HandoffLine[];
}

export interface DelegationCard {
  toolUseId: string;
  workerSessionId: string | null;
  workerTurnId: string | null;
  /** The tier the worker runs on (the one asked for until the worker is routed). */
  tier: string;
  /** The tier the planner (or the user) asked for. */
  requestedTier: string;
  /** The tier floor lowered `requestedTier` to `tier` (the planner's own tier). */
  floorApplied: boolean;
  /** What chose the model when the tier did not (a rule matching the task), as the route badge says it. */
  routedBy: string | null;
  model: string | null;
  task: string;
  status: DelegationStatus;
  turns: number;
  costUsd: string;
  /** The part of `costUsd` that is Switchman's estimate (absent: none). */
  estimatedUsd?: string;
  elapsedSeconds: number | null;
  /** When `elapsedSeconds` was reported (ms since the epoch, this page's clock): a running worker's time goes on from it. */
  elapsedAt?: number;
  activity: string | null;
  error: string | null;
  detail: string | null;
  droppedTools: string[];
  /** Its place in line while it waits for a free worker slot (`queued`). */
  queue: QueuePlace | null;
  /** Expanded to show the worker's transcript. */
  open: boolean;
  transcript: WorkerTranscript | null;
  /** Stop was pressed; the worker has not ended yet. */
  stopping: boolean;
  /** Why its Stop did not stop it (another window's daemon runs it...), until it ends. */
  stopRefused?: string;
  /**
   * Drawn from the session while another window's turn runs: that window asks for its approval, or starts its
   * worker (nothing is recorded of it yet). It waits to start there, not "choosing a model".
   */
  elsewhere?: true;
}

/**
 * Fold one `switchman/delegation` notification into a turn's cards. A new card goes where its call is
 * in `callOrder` (the turn's tool call ids, as the model made them), else last: the calls beyond
 * `max_concurrent_workers` are announced `queued` at once, before the first ones are routed and
 * announced `started`, and showed above them.
 */
export function applyDelegation(cards: readonly DelegationCard[], update: DelegationParams,
  callOrder: readonly string[] = [], now: number = Date.now()): DelegationCard[] {
  const index = cards.findIndex((c) => c.toolUseId === update.tool_use_id);
  const previous = index >= 0 ? cards[index] : undefined;
  const card: DelegationCard = {
    toolUseId: update.tool_use_id,
    workerSessionId: update.worker_session_id || previous?.workerSessionId || null,
    workerTurnId: update.worker_turn_id ?? previous?.workerTurnId ?? null,
    tier: update.worker_tier ?? previous?.tier ?? update.tier,
    requestedTier: update.tier,
    floorApplied: update.floor_applied ?? previous?.floorApplied ?? false,
    routedBy: update.routed_by !== undefined ? update.routed_by : previous?.routedBy ?? null,
    model: update.model ?? previous?.model ?? null,
    task: update.task,
    status: update.status,
    turns: update.turns,
    costUsd: update.cost_usd,
    ...(update.estimated_usd !== undefined ? { estimatedUsd: update.estimated_usd } : {}),
    elapsedSeconds: update.elapsed_seconds,
    elapsedAt: now,
    activity: update.activity,
    error: update.error,
    detail: update.detail,
    droppedTools: update.dropped_tools,
    queue: update.status === 'queued' ? update.queue ?? null : null,
    open: previous?.open ?? false,
    // An open transcript is fetched again when the worker ends (the extension asks for it).
    transcript: previous?.transcript ?? null,
    stopping: (update.status === 'running' || waitsToStart(update.status)) && (previous?.stopping ?? false),
    ...((update.status === 'running' || waitsToStart(update.status)) && previous?.stopRefused
      ? { stopRefused: previous.stopRefused } : {}),
  };
  if (index >= 0) return cards.map((c, i) => (i === index ? card : c));
  const place = callOrder.indexOf(card.toolUseId);
  const before = place < 0 ? -1 : cards.findIndex((c) => callOrder.indexOf(c.toolUseId) > place);
  return before < 0 ? [...cards, card] : [...cards.slice(0, before), card, ...cards.slice(before)];
}

/**
 * Whether a delegation waits to start: for a free worker slot (`queued`), then, if its worker may change things, for
 * the user's approval (`awaiting_approval`). It has no worker turn yet: Stop names its planner's turn and call.
 */
export function waitsToStart(status: DelegationStatus): boolean {
  return status === 'queued' || status === 'awaiting_approval';
}

/** Change one card of a list (no change when it is not there). */
export function updateCard(cards: readonly DelegationCard[], toolUseId: string,
  change: (card: DelegationCard) => DelegationCard): DelegationCard[] {
  return cards.map((c) => (c.toolUseId === toolUseId ? change(c) : c));
}

/** Expand or collapse a card; expanding one whose transcript is not loaded marks it loading. */
export function toggleCard(card: DelegationCard): DelegationCard {
  if (card.open) return { ...card, open: false };
  const transcript = card.transcript ?? { loading: true, messages: [], error: null };
  return { ...card, open: true, transcript };
}

/** Whether opening this card (or its worker ending while open) needs the transcript fetched. */
export function needsTranscript(card: DelegationCard): boolean {
  return card.open && card.workerSessionId !== null && (card.transcript === null || card.transcript.loading);
}

/**
 * The cards of a stored turn: its `delegate` calls, with what the session recorded of each (the tier
 * after the floor, the model) and the workers' cost.
 */
export function storedDelegations(messages: readonly Message[], workers: readonly WorkerCost[],
  turnStatus: TurnStatus, records: readonly DelegationRecord[] = []): DelegationCard[] {
  const results = new Map<string, { content: string; isError: boolean }>();
  for (const block of messages.flatMap((m) => m.content)) {
    if (block.type === 'tool_result') results.set(block.tool_use_id, { content: block.content, isError: block.is_error });
  }
  const cards: DelegationCard[] = [];
  for (const block of messages.flatMap((m) => m.content)) {
    if (block.type !== 'tool_use' || block.name !== DELEGATE_TOOL) continue;
    const input = (typeof block.input === 'object' && block.input !== null ? block.input : {}) as Record<string, unknown>;
    const worker = workers.find((w) => w.parent_tool_use_id === block.id);
    const record = records.find((r) => r.tool_use_id === block.id);
    // A planner's turn cancelled while the worker ran stores a placeholder, not the delegation's
    // result: how it ended is the record's (`cancelled_by_user`), or the turn's.
    const stored = results.get(block.id);
    const result = stored?.isError && stored.content === UNANSWERED_CALL ? undefined : stored;
    const failure = result?.isError ? failureOf(result.content) : null;
    const requested = typeof input.tier === 'string' ? input.tier : '?';
    cards.push({
      ...blankCard(block.id, requested, typeof input.task === 'string' ? input.task : ''),
      ...(record ? recordedTier(record) : {}),
      elapsedSeconds: record ? recordedSeconds(record) : null,
      // (`""` for a delegation that ended before it had a worker session)
      workerSessionId: worker?.session_id || record?.worker_session_id || null,
      model: worker?.model ?? record?.model ?? null,
      // With no result of its own, the delegation's record says how it stands: still waiting for a
      // worker slot, or then for the user's approval, while its planner's turn runs (a reload
      // mid-turn); how it ended, when it did (`failed` / `interrupted` when a gone daemon never
      // recorded its end, though its planner's turn was cancelled), as Neovim and `/delegate` cards say.
      status: !result && record && (waitsToStart(record.status) && turnStatus === 'running' || isEnded(record.status))
        ? record.status : storedStatus(result, turnStatus, failure),
      // Nothing of it stored yet in a turn still running: the window running that turn asks for its approval or
      // starts its worker (as Neovim's line says: `waiting to start · in another window`).
      ...(!result && !worker && !record && turnStatus === 'running' ? { elsewhere: true as const } : {}),
      turns: worker?.turns ?? 0,
      costUsd: worker?.cost_usd ?? '0',
      ...(worker?.estimated_usd !== undefined ? { estimatedUsd: worker.estimated_usd } : {}),
      // No result when the daemon died while the worker ran: the record says `interrupted` (the
      // turn's own failure, just below the card, says the rest).
      error: failure ?? (result ? null : record?.error ?? null),
      // Why it ended as it did (the reason typed with a denial, "cancelled before this worker
      // started"), as the live card said it; an interrupted worker's is its interrupted turn's own
      // failure, shown below (a planner's turn that was not interrupted has none: the record's says why).
      detail: record?.error === INTERRUPTED && !result && turnStatus === 'interrupted' ? null : record?.detail ?? null,
    });
  }
  return cards;
}

/** The card of a delegation the user started (`/delegate`), rebuilt from the session's record of it. */
export function recordedDelegation(record: DelegationRecord, workers: readonly WorkerCost[]): DelegationCard {
  const worker = workers.find((w) => w.parent_tool_use_id === record.tool_use_id);
  return {
    ...blankCard(record.tool_use_id, record.tier, record.task),
    ...recordedTier(record),
    elapsedSeconds: recordedSeconds(record),
    workerSessionId: record.worker_session_id || null,
    model: worker?.model ?? record.model,
    status: record.status,
    turns: worker?.turns ?? 0,
    costUsd: worker?.cost_usd ?? '0',
    ...(worker?.estimated_usd !== undefined ? { estimatedUsd: worker.estimated_usd } : {}),
    error: record.error,
    detail: record.detail,
  };
}

function recordedTier(record: DelegationRecord): Pick<DelegationCard, 'tier' | 'floorApplied' | 'routedBy'> {
  return { tier: record.worker_tier ?? record.tier, floorApplied: record.floor_applied, routedBy: record.routed_by ?? null };
}

/** How long a recorded delegation's worker ran: known once the session dated its end (null: not known). */
function recordedSeconds(record: DelegationRecord): number | null {
  // a worker's time is its run: one that never started a worker (no worker session) has none
  if (record.worker_session_id === '') return null;
  const ms = record.ended_at ? Date.parse(record.ended_at) - Date.parse(record.started_at) : NaN;
  return Number.isFinite(ms) && ms >= 0 ? ms / 1000 : null;
}

function blankCard(toolUseId: string, tier: string, task: string): DelegationCard {
  return {
    toolUseId, workerSessionId: null, workerTurnId: null, tier, requestedTier: tier, floorApplied: false, routedBy: null,
    model: null,
    task, status: 'completed', turns: 0, costUsd: '0', elapsedSeconds: null, activity: null, error: null, detail: null,
    droppedTools: [], queue: null, open: false, transcript: null, stopping: false,
  };
}

/** The planner is told `delegate failed: <error>` (then the partial output): keep the error. */
function failureOf(content: string): string {
  const line = firstLine(content);
  const match = /^delegate failed: (.+)$/.exec(line);
  return match ? match[1] : line;
}

/** Whether a card's time goes on while nothing is reported (its worker runs and has reported a time). */
export function ticks(card: DelegationCard): boolean {
  return card.status === 'running' && card.elapsedSeconds !== null && card.elapsedAt !== undefined;
}

function elapsedSeconds(card: DelegationCard, now: number | undefined): number | null {
  if (card.elapsedSeconds === null) return null;
  if (now === undefined || !ticks(card) || card.elapsedAt === undefined) return card.elapsedSeconds;
  return card.elapsedSeconds + Math.max(0, now - card.elapsedAt) / 1000;
}

function isEnded(status: DelegationStatus): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

function storedStatus(result: { isError: boolean } | undefined, turnStatus: TurnStatus,
  failure: string | null): DelegationStatus {
  if (failure === CANCELLED_BY_USER) return 'cancelled';
  if (result) return result.isError ? 'failed' : 'completed';
  return turnStatus === 'cancelled' ? 'cancelled' : turnStatus === 'running' ? 'running' : 'failed';
}

/** A worker session (`switchman/session`) as the card shows it: task, the worker's text, tools. */
export function workerTranscript(detail: SessionDetail): WorkerTranscript {
  const messages: WorkerMessage[] = [];
  for (const message of detail.messages) {
    for (const block of message.content) {
      if (block.type === 'text' && block.text.trim()) {
        messages.push({ who: message.role === 'user' ? 'task' : 'worker', text: block.text });
      } else if (block.type === 'tool_use') {
        messages.push({ who: 'tool', text: `${block.name} ${clip(JSON.stringify(block.input), 160)}` });
      } else if (block.type === 'tool_result') {
        const shown = block.output_shown ? commandOutput(block.content) : firstLine(block.content);
        messages.push({ who: 'tool', text: `${block.is_error ? '✗' : '✓'} ${shown}` });
      }
    }
  }
  return { loading: false, messages, error: null, ...(detail.handoff ? { handoff: handoffLines(detail.handoff) } : {}) };
}

export interface CardView {
  /** `fast · haiku`; `balanced (capped from deep) · sonnet` when the tier floor lowered the tier. */
  title: string;
  /** Why the tier differs from the one asked for (a tooltip), when the floor capped it. */
  tierNote: string | null;
  /** `running · 2 turns · $0.0012 · 3.4s` */
  meta: string;
  statusLabel: string;
  task: string;
  /** The latest activity while running; the error (and why) once failed. */
  note: string | null;
  noteTone: 'activity' | 'error' | null;
  /** The user denied it (its approval question): not a failure to show in red; its card is `denied`. */
  denied: boolean;
  canStop: boolean;
  toggleLabel: string;
}

/** The error of a delegation the user denied when asked to start it. */
const DENIED = 'approval_denied';
/** Its detail when the user gave no reason. */
const NO_REASON = 'the user denied it';

/** A delegation's status in words (`cancelled` is "stopped": by the user, or with its planner's turn). */
export const DELEGATION_LABELS: Record<DelegationStatus, string> = {
  queued: 'queued', awaiting_approval: 'awaiting approval', running: 'running', completed: 'done', failed: 'failed', cancelled: 'stopped',
};

/**
 * What a card shows (the webview turns this into DOM). With `now` (ms since the epoch), a running
 * worker's time counts on from its last update: the daemon reports it only with the worker's output,
 * and a worker waiting on its model showed the same `0.3s` for minutes. `alongside`: the costs of the cards shown
 * with it (its turn's), whose decimals its cost shares (`$0.00000` beside `$0.00004`, not `$0.00`).
 */
export function cardView(card: DelegationCard, now?: number, alongside: readonly UsdValue[] = []): CardView {
  // Denied by the user when asked to start it: nothing ran, so no turns, cost or time, and not "failed" in red
  // (the user's own answer, which the approval card beside it shows too).
  const denied = card.status === 'failed' && card.error === DENIED;
  const elsewhere = card.elsewhere && card.status === 'running';
  const statusLabel = card.stopping ? 'stopping…' : denied ? 'denied' : elsewhere ? 'in another window'
    : DELEGATION_LABELS[card.status];
  const meta = [statusLabel];
  if (!denied) meta.push(plural(card.turns, 'turn'), formatCost(card.costUsd, card.estimatedUsd, { alongside }));
  const elapsed = denied ? null : elapsedSeconds(card, now);
  if (elapsed !== null) meta.push(`${elapsed.toFixed(1)}s`);
  let note: string | null = null;
  let noteTone: CardView['noteTone'] = null;
  if (denied) {  // the daemon's detail is the user's reason, its own words for none, or why nobody could be asked
    note = card.detail && card.detail !== NO_REASON ? `Denied: ${card.detail}` : 'Denied; no worker was started.';
  } else if ((card.status === 'running' || waitsToStart(card.status)) && card.stopRefused && !card.stopping) {
    note = `Not stopped: ${card.stopRefused}`;
    noteTone = 'error';
  } else if (card.status === 'running' && card.activity) {
    note = clip(card.activity, 160);
    noteTone = 'activity';
  } else if (card.status === 'queued') {
    // Why the planner seems to hang: the worker waits for a slot (and where it stands in line).
    note = card.detail ?? (card.queue ? queueReason(card.queue) : 'waiting for a free worker');
    noteTone = 'activity';
  } else if (card.status === 'awaiting_approval') {
    // Its slot came, but its worker may change things: the approval question (in this panel) asks first.
    note = card.detail ?? 'waiting for your approval to start';
    noteTone = 'activity';
  } else if (card.error) {
    note = errorNote(card.error, card.detail);
    noteTone = 'error';
  }
  const capped = card.floorApplied && card.tier !== card.requestedTier;
  const tier = capped ? `${card.tier} (capped from ${card.requestedTier})` : card.tier;
  // A worker that ended without a model never started (denied, stopped while it waited, no model
  // for its tier): it is not still choosing one.
  const model = card.model ? shortModelName(card.model) : elsewhere ? 'waiting to start'
    : card.status === 'running' ? 'choosing a model' : card.status === 'queued' ? 'waiting for a worker slot'
      : card.status === 'awaiting_approval' ? 'waiting for approval'
      : card.status === 'completed' ? null : 'not started';
  // Your rules come before the tier: one that matched the task chose the model, not the tier.
  const routed = card.routedBy && card.model ? ` (${card.routedBy})` : '';
  const notes = [];
  if (capped) notes.push(`Asked for ${card.requestedTier}; the tier floor keeps a worker at or below its planner's tier, ${card.tier}.`);
  if (routed) {
    notes.push(`${card.routedBy} chose ${model} for this worker's task: your routing rules apply to a worker's task `
      + `before its tier, so the ${card.tier} tier's model was not used.`);
  }
  return {
    title: model ? `${tier} · ${model}${routed}` : tier,
    tierNote: notes.length > 0 ? notes.join(' ') : null,
    meta: meta.join(' · '),
    statusLabel,
    task: card.task,
    note,
    noteTone,
    denied,
    // One waiting to start has no worker turn yet: it is stopped by its planner's turn and call id.
    canStop: ((card.status === 'running' && card.workerTurnId !== null) || waitsToStart(card.status)) && !card.stopping,
    toggleLabel: card.open ? 'Hide worker transcript' : 'Show worker transcript',
  };
}

/**
 * A delegation's error and why, as its card says them: `timeout: …`. A stop's code (`cancelled_by_user`,
 * also when Switchman stopped with the window and the worker's planner) is said in words: it read as if
 * the user had stopped it.
 */
function errorNote(error: string, detail: string | null): string {
  const words = error === CANCELLED_BY_USER ? 'stopped' : error;
  return detail ? `${words}: ${detail}` : words;
}

/**
 * How a worker that failed (or was stopped) ended, as the last line of its expanded transcript: the
 * transcript stops at its last tool result, and the failure was only in the card's head. Null for one
 * that did its task, still runs or waits, or was denied (nothing ran).
 */
export function transcriptEnd(card: DelegationCard): { label: string; text: string } | null {
  if (card.status !== 'failed' && card.status !== 'cancelled') return null;
  if (card.error === DENIED) return null;
  const label = card.status === 'failed' ? 'Failed' : 'Stopped';
  // (a stop's label says it was stopped: its why is enough)
  const why = card.status === 'cancelled' && card.detail ? card.detail : card.error ? errorNote(card.error, card.detail) : null;
  return { label, text: why ?? card.detail ?? DELEGATION_LABELS[card.status] };
}

/** `waiting for a free worker: 2 of 2 running; 1 ahead of it` (as the daemon words it). */
export function queueReason(queue: QueuePlace): string {
  const ahead = queue.position > 1 ? `; ${queue.position - 1} ahead of it` : '';
  return `waiting for a free worker: ${queue.running} of ${queue.limit} running${ahead}`;
}

/**
 * A command's result in a worker's card (`output_shown`): its exit status line, then the last lines it printed, as the
 * planner's chat folds them (that card has no room for a toggle).
 */
function commandOutput(content: string): string {
  const [status = '', ...printed] = terminalText(content).replace(/\n$/, '').split('\n');
  const shown = printed.slice(-OUTPUT_FOLDED_LINES).map((line) => clip(line, 200));
  const earlier = printed.length - shown.length;
  return [clip(status, 200), ...(earlier > 0 ? [`… ${plural(earlier, 'earlier line')}`] : []), ...shown].join('\n');
}

function firstLine(text: string): string {
  return clip(text.split('\n', 1)[0], 200);
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A finished turn's cost as the chat shows it: its own calls plus its workers' (rolled up, as the
 * session's totals are), naming the workers' share: `$0.01 incl. workers $0.0027`, and the part
 * Switchman estimated for calls cut short before the provider reported usage:
 * `$0.01 (~$0.0019 estimated)`, or `~$0.0019 (estimated)` when all of it is.
 */
export function turnCostLabel(costUsd: string | null, cards: readonly DelegationCard[] | undefined,
  estimatedUsd?: string | null): string | null {
  if (costUsd === null) return null;
  const workers = (cards ?? []).reduce((sum, card) => sum + (Number(card.costUsd) || 0), 0);
  const estimated = (Number(estimatedUsd) || 0)
    + (cards ?? []).reduce((sum, card) => sum + (Number(card.estimatedUsd) || 0), 0);
  if (workers === 0) {
    const { amount, note } = costParts(costUsd, estimated);
    return amount + note;
  }
  const { amount, note, others } = costParts(Number(costUsd) + workers, estimated, { alongside: [workers] });
  return `${amount} incl. workers ${others[0]}${note}`;
}
