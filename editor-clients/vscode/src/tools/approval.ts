/**
 * Answering `switchman/approve` with a card in the chat panel. Before a tool changes a file or runs
 * a command the user sees what will happen — the diff of an edit (with a button for VS Code's diff
 * editor), the command line and folder, or a delegation's task, tier and worker tools — and picks
 * Allow once / Always allow / Deny (with an optional reason the model sees). The card stays in the
 * chat with its outcome, including "no answer in time" when the daemon withdrew the question.
 */

import type { ConnectionState, Disposable } from '../common/host';
import { Emitter } from '../common/host';
import { shortModelName } from '../common/format';
import type { ApplyCodeResult, ApprovalAnswer, ApprovalRecord, ApprovalRequest } from '../protocol/types';

export type ApprovalOutcome = 'pending' | 'allowed_once' | 'allowed_always' | 'denied' | 'withdrawn';

/** What the chat panel shows for one question (plain data: it crosses into the webview). */
export interface ApprovalCard {
  id: string;
  turnId: string;
  tool: string;
  kind: 'edit' | 'command' | 'delegation';
  title: string;
  /** For an edit: the unified diff, line by line. */
  diff: string[];
  canOpenDiff: boolean;
  command: string | null;
  cwd: string | null;
  task: string | null;
  /** A delegation's: the tier its worker runs on (after the tier floor; the title says when the floor capped it). */
  tier: string | null;
  /** A delegation's: the model its worker will run on (absent from older daemons and records). */
  model: string | null;
  /** A delegation's: what chose `model` when its tier did not (`rule: docs`). */
  routedBy: string | null;
  workerTools: string[];
  /**
   * The "always" button's label; null for a worker's question: the daemon remembers no answer to
   * a worker, so "always" would only repeat "Allow once".
   */
  alwaysLabel: string | null;
  note: string | null;
  outcome: ApprovalOutcome;
  reason: string | null;
  /** Allowed, but not applied: the file had changed in the editor since the change was proposed. */
  stale?: boolean;
  /** Withdrawn because its turn was stopped (known from the session's record: a rebuilt chat). */
  stopped?: boolean;
  /** A delegation's question answered, then asked again about another model: why (a rebuilt chat). */
  superseded?: string;
  /** A delegation's question allowed always, its worker's model then changed, nothing asked again: why. */
  modelChanged?: string;
  /** A delegation's question: its delegation's id (its card's `toolUseId`), shown right above that card. */
  toolUseId?: string;
}

export function alwaysLabel(request: ApprovalRequest): string | null {
  return request.is_worker ? null : `Always allow ${request.tool} in this workspace`;
}

/** The card for `request`, still waiting for an answer. */
export function approvalCard(request: ApprovalRequest): ApprovalCard {
  const kind = request.tool === 'delegate' ? 'delegation' : request.command ? 'command' : 'edit';
  let note: string | null = null;
  if (request.is_worker) note = 'Asked by a worker: an answer to a worker is never remembered, so it may ask again.';
  // the earlier card is marked superseded only with the call's result: this one says why it is here meanwhile
  if (request.asked_again) note = `Asked again: ${request.asked_again}.`;
  if (kind === 'edit' && request.proposed === null && request.original !== null) note = 'The file will be deleted.';
  return {
    id: request.id, turnId: request.turn_id, tool: request.tool, kind, title: request.title,
    diff: kind === 'edit' ? diffLines(request.diff) : [],
    canOpenDiff: kind === 'edit' && !!request.uri,
    command: request.command ?? null, cwd: request.cwd ?? null,
    task: request.task ?? null, tier: request.tier ?? null, model: request.model ?? null,
    routedBy: request.routed_by ?? null, workerTools: request.worker_tools ?? [],
    alwaysLabel: alwaysLabel(request), note, outcome: 'pending', reason: null,
    ...(kind === 'delegation' && request.tool_use_id ? { toolUseId: request.tool_use_id } : {}),
  };
}

/** A unified diff's lines (none for no diff). */
function diffLines(diff: string | null | undefined): string[] {
  const lines = (diff ?? '').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

const RECORDED_OUTCOMES: Record<ApprovalRecord['outcome'], ApprovalOutcome> = {
  allowed_once: 'allowed_once', allowed_always: 'allowed_always', denied: 'denied', not_applied: 'denied', unanswered: 'withdrawn',
  stopped: 'withdrawn',
};

/**
 * The card of a question answered in an earlier window, rebuilt from what the session kept with the call's result
 * (read-only: answered): an edit's diff (capped) and a delegation's tier and worker tools as the question showed them,
 * none in records kept before they were (the call's line and the answer say what it was). The diff editor is not
 * offered: the file's text is not kept.
 */
export function recordedApprovalCard(record: ApprovalRecord, turnId: string, tool: string, input?: unknown): ApprovalCard {
  const kind = tool === 'delegate' ? 'delegation' : record.command ? 'command' : 'edit';
  const task = kind === 'delegation' && input && typeof (input as { task?: unknown }).task === 'string'
    ? (input as { task: string }).task : null; // the call's input, as the transcript keeps it
  return {
    id: record.id, turnId, tool, kind, title: record.title, diff: kind === 'edit' ? diffLines(record.diff) : [],
    canOpenDiff: false, command: record.command, cwd: record.cwd, task,
    tier: kind === 'delegation' ? record.tier ?? null : null, model: kind === 'delegation' ? record.model ?? null : null,
    routedBy: kind === 'delegation' ? record.routed_by ?? null : null, workerTools: record.worker_tools ?? [],
    alwaysLabel: `Always allow ${tool} in this workspace`, note: null, outcome: RECORDED_OUTCOMES[record.outcome],
    reason: record.reason, ...(record.outcome === 'not_applied' ? { stale: true } : {}),
    ...(record.outcome === 'stopped' ? { stopped: true } : {}),
    ...(record.superseded ? { superseded: record.superseded } : {}),
    ...(record.model_changed ? { modelChanged: record.model_changed } : {}),
  };
}

/**
 * The card of a question a worker asked, rebuilt from its delegation's record: as the live card ended, with no
 * "always" (an answer to a worker is never remembered) and a stop that cut it short said to be the worker's.
 */
export function recordedWorkerCard(record: ApprovalRecord, turnId: string): ApprovalCard {
  const card = recordedApprovalCard(record, turnId, record.command ? 'run_command' : 'edit_file');
  return { ...card, alwaysLabel: null, ...(card.stopped && !card.reason ? { reason: 'the worker was stopped' } : {}) };
}

/**
 * A delegation card's line under its task: the tier its worker runs on, the model it will run on (and what chose it
 * when its tier did not: "claude-opus-4-7 (rule: docs)") and its write and execute tools; null when the card has no
 * tier (rebuilt from a record kept before it was: its title names the tier). That the tier floor lowered the planner's
 * tier is said once, by the title above it ("… balanced worker (deep, capped by the tier floor) …").
 */
export function workerLine(card: ApprovalCard): string | null {
  if (card.tier === null) return null;
  const model = card.model === null ? '' : ` · ${shortModelName(card.model)}${card.routedBy ? ` (${card.routedBy})` : ''}`;
  return `Worker on ${card.tier} tier${model} · may use ${card.workerTools.join(', ') || 'no write tools'}`;
}

/** Runs of more empty lines than this in a command are shown as one line saying how many. */
const MAX_EMPTY_LINES = 2;

/**
 * `text` with what would hide part of it from the eye made visible: control characters other than
 * line breaks and tabs as their Unicode pictures (`␍`, `␛`), and bidirectional-text controls by
 * name (`⟨U+202E⟩`), which would show the rest of the line backwards.
 */
export function visibleControls(text: string): string {
  return text
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, (c) => String.fromCharCode(c === '\u007f' ? 0x2421 : 0x2400 + c.charCodeAt(0)))
    .replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
      (c) => `⟨U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}⟩`);
}

/**
 * A command as its approval card shows it: its control characters visible (a `\r` drawn as nothing
 * joined `touch x #` to `ls -la`), and a run of more than two empty lines as one line saying how
 * many, so the end of a command is not pushed out of the card's box.
 */
export function shownCommand(command: string): string {
  const out: string[] = [];
  let empty = 0;
  const flush = (): void => {
    if (empty > MAX_EMPTY_LINES) out.push(`[${empty} empty lines]`);
    else for (let i = 0; i < empty; i++) out.push('');
    empty = 0;
  };
  for (const line of visibleControls(command).split('\n')) {
    if (line.trim() === '') empty++;
    else {
      flush();
      out.push(line);
    }
  }
  flush();
  return out.join('\n');
}

/**
 * The daemon's one-line title ("Run `make test`") in pieces: the `code` spans shown as code, the
 * rest as text, never the backticks themselves. `plain` is the same line without them (for
 * notifications and screen readers).
 */
export function titleParts(title: string): { parts: { text: string; code: boolean }[]; plain: string } {
  const pieces = title.split('`');
  // An odd backtick (no closing one) is text, as Markdown would show it.
  if (pieces.length % 2 === 0) return { parts: [{ text: title, code: false }], plain: title };
  const parts = pieces.map((text, i) => ({ text, code: i % 2 === 1 })).filter((p) => p.text !== '');
  return { parts, plain: pieces.join('') };
}

/**
 * The card once answered (or withdrawn by the daemon). Its note goes: it spoke of the question ("The
 * file will be deleted.", a worker's "it may ask again"), and under "Denied" it told what did not happen.
 */
export function answered(card: ApprovalCard, answer: ApprovalAnswer | 'withdrawn'): ApprovalCard {
  if (answer === 'withdrawn') return { ...card, outcome: 'withdrawn', reason: null, note: null };
  const outcome = answer.decision === 'allow_once' ? 'allowed_once' : answer.decision === 'allow_always' ? 'allowed_always' : 'denied';
  return { ...card, outcome, reason: answer.reason ?? null, note: null };
}

/**
 * What a key pressed in a card's reason field does: Enter with a reason typed denies with it; Enter in
 * an empty field does nothing (Shift+Tab from the chat's input lands there first, so an Enter meant
 * for the chat must not deny a question). Shift+Enter and Enter while an IME composes do nothing.
 */
export function reasonKeyAnswer(key: { key: string; shiftKey: boolean; isComposing: boolean }, reason: string)
  : ApprovalAnswer | undefined {
  if (key.key !== 'Enter' || key.shiftKey || key.isComposing) return undefined;
  const text = reason.trim();
  return text ? { decision: 'deny', reason: text } : undefined;
}

/** The reason's last sentence when it is advice to the model ("Read the file again to make the change."): not for the user's card. */
const MODEL_ADVICE = /\s*Read the file again\b[^.]*\.\s*$/;

/** One line saying how a question ended, for the card. */
export function outcomeText(card: ApprovalCard): string {
  const outcome = answerText(card);
  // its answer did not start the worker: the question was asked again, about the model that would run
  if (card.superseded) return `${outcome} Superseded, asked again: ${card.superseded}.`;
  // its answer started the worker on another model than it named: nothing was asked again ("always")
  return card.modelChanged ? `${outcome} Not asked again: ${card.modelChanged}.` : outcome;
}

function answerText(card: ApprovalCard): string {
  switch (card.outcome) {
    case 'pending': return 'Waiting for your answer…';
    case 'allowed_once': return 'Allowed once.';
    case 'allowed_always': return card.alwaysLabel ? `Allowed; ${card.tool} is always allowed here now.` : 'Allowed.';
    case 'denied':
      if (card.stale) return `Not applied: ${card.reason?.replace(MODEL_ADVICE, '') || 'the file changed in the editor'}`;
      return card.reason ? `Denied: ${card.reason}` : 'Denied.';
    case 'withdrawn':
      if (card.stopped) return `Not answered: ${card.reason ?? 'the turn was stopped'}; nothing happened.`;
      return 'No answer in time (or the turn or the daemon was stopped): denied, nothing happened.';
  }
}

/**
 * Apply's outcome as a message (the card showed the question; this says what became of it). `notice`:
 * no card was shown (the file already had the code), so the message is a notification, not the status bar's.
 */
export function applyOutcome(result: ApplyCodeResult): { text: string; warn: boolean; notice?: boolean } {
  if (result.unchanged) return { text: `Switchman: ${result.reason ?? `${result.path} already has this code.`}`, warn: false, notice: true };
  if (result.applied && result.reason) return { text: `Switchman: applied to ${result.path}, but: ${result.reason}`, warn: true };
  if (result.applied) return { text: `Switchman: applied to ${result.path} and saved (undo takes it back)`, warn: false };
  if (result.decision === 'deny') return { text: `Switchman: not applied to ${result.path}${result.reason ? ` (${result.reason})` : ''}`, warn: false };
  return { text: `Switchman: the editor did not apply the change to ${result.path}: ${result.reason ?? 'no reason given'}`, warn: true };
}

/** What the approval flow needs from VS Code (stubbed in unit tests). */
export interface ApprovalHost {
  /** Whether the chat panel is on screen (its card can be seen). */
  chatVisible(): boolean;
  /** Tell the user a question waits in the chat (a notification that reveals it). */
  notify(card: ApprovalCard): void;
  /** Open the proposed change in VS Code's diff editor. */
  showDiff(request: ApprovalRequest): Promise<void>;
  /** Close what {@link showDiff} opened. */
  closeDiff(request: ApprovalRequest): Promise<void>;
  /** The text of the document at `uri` as the editor has it (unsaved changes included), if it is open. */
  currentText?(uri: string): string | undefined;
}

/**
 * Why an approved change is not applied after all: the file in the editor is no longer the text the
 * change was computed from (the user typed meanwhile, or had unsaved changes the daemon read past),
 * so its positions point elsewhere and applying it would garble the file. Null when it still fits.
 */
export function staleChange(request: ApprovalRequest, current: string | undefined): string | null {
  if (!request.uri || request.original === null || request.original === undefined || current === undefined) return null;
  if (request.proposed === null || current === request.original) return null; // a deletion has no positions
  return `${request.path ?? 'The file'} changed in the editor since this change was proposed (or has unsaved changes `
    + 'it was not made from): applied to that text it would have landed in the wrong place, so nothing was changed. '
    + 'Read the file again to make the change.';
}

interface Open {
  request: ApprovalRequest;
  card: ApprovalCard;
  resolve?: (answer: ApprovalAnswer) => void;
}

const KEEP_ANSWERED = 50;

/** The questions of this window: open ones wait for a card's buttons, answered ones keep their outcome. */
export class ApprovalCenter implements Disposable {
  private readonly cards = new Map<string, Open>();
  private readonly changed = new Emitter<ApprovalCard>();
  readonly onDidChange = this.changed.event;

  private readonly following: Disposable | undefined;

  /**
   * `connection`: the daemon's; when it stops (restarted, crashed), its open questions can no longer
   * be answered — the turn that asked is gone — so their cards end as withdrawn instead of keeping
   * live buttons that answer nothing.
   */
  constructor(private readonly host: ApprovalHost,
    connection?: { onDidChangeState(listener: (state: ConnectionState) => void): Disposable }) {
    this.following = connection?.onDidChangeState((state) => {
      if (state !== 'running') this.withdrawAll(false);
    });
  }

  /** Show `request` as a card and wait for the answer; the daemon withdrawing it (`signal`) is a denial. */
  ask(request: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    const entry: Open = { request, card: approvalCard(request) };
    this.cards.set(request.id, entry);
    this.trim();
    return new Promise<ApprovalAnswer>((resolve) => {
      entry.resolve = resolve;
      signal.addEventListener('abort', () => this.settle(request.id, 'withdrawn'));
      this.changed.fire(entry.card);
      if (!this.host.chatVisible()) this.host.notify(entry.card);
    });
  }

  /**
   * The user's answer from a card's buttons (ignored once the question is closed). An approved edit
   * whose file changed in the editor since it was proposed is turned down instead, saying why.
   */
  answer(id: string, answer: ApprovalAnswer): void {
    const entry = this.cards.get(id);
    if (entry && answer.decision !== 'deny' && entry.card.kind === 'edit' && entry.request.uri) {
      const stale = staleChange(entry.request, this.host.currentText?.(entry.request.uri));
      if (stale) {
        this.settle(id, { decision: 'deny', reason: stale, refused_by: 'editor' }, true);
        return;
      }
    }
    this.settle(id, answer);
  }

  /** Open an edit's full diff in VS Code's diff editor. */
  async openDiff(id: string): Promise<void> {
    const entry = this.cards.get(id);
    if (entry?.card.canOpenDiff) await this.host.showDiff(entry.request);
  }

  /** Every card (open and answered), oldest first: the chat shows them again after a reload. */
  all(): ApprovalCard[] {
    return [...this.cards.values()].map((e) => e.card);
  }

  /**
   * What the session kept of a question, from its call's result (a `tool_result` delta): one the turn's
   * Stop cut short ends as its rebuilt card does, "Not answered: the turn was stopped", not as a question
   * nobody answered in time (the daemon withdrawing it does not say why); an allowed change the daemon did not
   * apply says "Not applied".
   */
  recorded(record: ApprovalRecord): void {
    if (record.outcome === 'stopped') this.stopped(record.id, record.reason);
    if (record.outcome === 'not_applied') this.notApplied(record.id, record.reason);
    if (record.superseded) this.annotate(record.id, { superseded: record.superseded });
    if (record.model_changed) this.annotate(record.id, { modelChanged: record.model_changed });
  }

  /**
   * A worker stopped (its card's Stop, its planner's turn stopped): a question it had open ends as "Not answered:
   * the worker was stopped", not as one nobody answered in time (the daemon withdrawing it does not say why, and
   * the worker's own calls are not in the planner's turn, whose results tell {@link recorded}).
   */
  workerStopped(workerSessionId: string): void {
    for (const entry of this.cards.values()) {
      const open = entry.card.outcome === 'pending' || (entry.card.outcome === 'withdrawn' && !entry.card.stopped);
      if (open && entry.request.is_worker && entry.request.session_id === workerSessionId) {
        this.stopped(entry.card.id, 'the worker was stopped');
      }
    }
  }

  /** Whether a question is open. */
  get waiting(): boolean {
    return [...this.cards.values()].some((e) => e.card.outcome === 'pending');
  }

  /**
   * End every open question as withdrawn: a denial, sent to the daemon when `answer` (a daemon that
   * stopped has nobody to send it to; the language client would log the failed send as an error).
   */
  withdrawAll(answer = true): void {
    for (const id of this.cards.keys()) this.settle(id, 'withdrawn', false, answer);
  }

  dispose(): void {
    this.following?.dispose();
    this.withdrawAll();
    this.changed.dispose();
  }

  private settle(id: string, answer: ApprovalAnswer | 'withdrawn', stale = false, reply = true): void {
    const entry = this.cards.get(id);
    if (!entry || entry.card.outcome !== 'pending' || !entry.resolve) return;
    entry.card = { ...answered(entry.card, answer), ...(stale ? { stale: true } : {}) };
    if (reply) entry.resolve(answer === 'withdrawn' ? { decision: 'deny' } : answer);
    this.changed.fire(entry.card);
    if (entry.card.canOpenDiff) void this.host.closeDiff(entry.request);
  }

  /**
   * A delegation's question answered, then asked again about another model (`superseded`), or its worker run on
   * another model with nothing asked again (`modelChanged`): its card says so and why.
   */
  private annotate(id: string, note: Pick<ApprovalCard, 'superseded' | 'modelChanged'>): void {
    const entry = this.cards.get(id);
    if (!entry || entry.card.outcome === 'pending') return;
    if (entry.card.superseded === note.superseded && entry.card.modelChanged === note.modelChanged) return;
    entry.card = { ...entry.card, ...note };
    this.changed.fire(entry.card);
  }

  /** The question `id` cut short by a stop: withdrawn (when still open), its card saying why. */
  private stopped(id: string, reason: string | null): void {
    const entry = this.cards.get(id);
    if (!entry) return;
    if (entry.card.outcome === 'pending') this.settle(id, 'withdrawn');
    entry.card = { ...entry.card, outcome: 'withdrawn', stopped: true, reason, note: null };
    this.changed.fire(entry.card);
  }

  /**
   * An allowed change the daemon then did not apply (its file changed on disk or by another tool while it was
   * asked): the card says "Not applied" and why, as its rebuilt card does, instead of "Allowed once.".
   */
  private notApplied(id: string, reason: string | null): void {
    const entry = this.cards.get(id);
    if (!entry || entry.card.outcome === 'pending' || entry.card.stale) return;
    entry.card = { ...entry.card, outcome: 'denied', stale: true, reason, note: null };
    this.changed.fire(entry.card);
  }

  private trim(): void {
    const answeredIds = [...this.cards.values()].filter((e) => e.card.outcome !== 'pending').map((e) => e.card.id);
    for (const id of answeredIds.slice(0, Math.max(0, answeredIds.length - KEEP_ANSWERED))) this.cards.delete(id);
  }
}
