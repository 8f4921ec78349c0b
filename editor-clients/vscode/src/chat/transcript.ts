/** A stored session (`switchman/session`) as chat entries and as a read-only Markdown transcript. */

import { costParts, formatCost, formatUsds, plural, readableTime } from '../common/format';
import { NOT_SENT } from '../protocol/errors';
import { SlashCommands } from '../protocol/methods';
import type {
  Attachment, ChatResult, ContentBlock, DelegationRecord, Message, SessionDetail, ToolActivity, Turn, TurnStatus, WorkerCost,
} from '../protocol/types';
import { attachedLine, withoutTokens } from './attachments';
import {
  cardView, DELEGATE_TOOL, DELEGATION_LABELS, recordedDelegation, storedDelegations, turnCostLabel,
} from './delegations';
import { handoffLines } from './handoff';
import { terminalText } from './longMessage';
import type { Entry, TurnEntry } from './messages';
import { outcomeText, recordedApprovalCard, recordedWorkerCard, type ApprovalCard } from '../tools/approval';

/** One step of a stored session, in the order it happened. */
type Step =
  | { kind: 'turn'; turn: Turn }
  /** A message outside any turn: the user's `/delegate` (with the workers it started) or the answer. */
  | { kind: 'exchange'; message: Message; started: DelegationRecord[] }
  /** A user's delegation with no stored exchange yet: still running, or the daemon stopped first. */
  | { kind: 'unanswered'; record: DelegationRecord };

/**
 * The session's turns and the user's own delegations (`/delegate`) in order, leaving out the turns
 * and delegations in `skip`. A user's delegation goes with its command (a message outside any
 * turn): its worker started after the previous exchange and no later than the message after the
 * command (its answer, or whatever came next). The command is stored before the worker starts;
 * older daemons stored it with the answer, when the worker ended: both read the same way.
 */
function timeline(detail: SessionDetail, skip: ReadonlySet<string>): Step[] {
  const steps: Step[] = [];
  const turns = new Map(detail.turns.map((t) => [t.id, t]));
  const seen = new Set<string>();
  const addTurn = (turn: Turn) => {
    seen.add(turn.id);
    if (!skip.has(turn.id)) steps.push({ kind: 'turn', turn });
  };
  const delegations = (detail.delegations ?? []).filter((d) => d.source === 'user' && !skip.has(d.tool_use_id));
  detail.messages.forEach((message, i) => {
    const turn = message.turn_id !== null ? turns.get(message.turn_id) : undefined;
    if (turn && !seen.has(turn.id)) addTurn(turn);
    if (message.turn_id !== null) return;
    const started = message.role === 'user'
      ? takeStartedBefore(delegations, detail.messages[i + 1]?.created_at) : [];
    steps.push({ kind: 'exchange', message, started });
  });
  for (const turn of sortedTurns(detail)) if (!seen.has(turn.id)) addTurn(turn);
  return [...steps, ...delegations.map((record): Step => ({ kind: 'unanswered', record }))];
}

/**
 * Chat entries for a session, in the order they happened, leaving out the turns and delegations
 * (`skip`, by turn id or delegation id) the extension is replaying live. The user's own
 * delegations come back as they were shown live: the command, the worker's card, its answer.
 */
export function transcriptEntries(detail: SessionDetail, skip: ReadonlySet<string> = new Set()): Entry[] {
  const workers = detail.cost?.workers ?? [];
  const card = (record: DelegationRecord): Entry => ({ kind: 'delegation', id: record.tool_use_id,
    card: recordedDelegation(record, workers) });
  return timeline(detail, skip).flatMap((step): Entry[] => {
    switch (step.kind) {
      case 'turn': return turnEntries(detail, step.turn);
      // (a question of the user's own worker is asked in no turn: it stays an entry of its own; so does its start's)
      case 'exchange': return [exchangeEntry(step.message), ...step.started.flatMap((r) => userDelegation(r, card(r)))];
      case 'unanswered': return userDelegation(step.record, card(step.record));
    }
  });
}

function turnEntries(detail: SessionDetail, turn: Turn): Entry[] {
  const messages = detail.messages.filter((m) => m.turn_id === turn.id);
  const entries: Entry[] = messages.filter((m) => m.role === 'user')
    .map((m): Entry => ({ kind: 'user', id: m.id, text: userText(m.content) }));
  const rating = detail.ratings?.[turn.id];
  entries.push({ ...turnEntry(turn, messages), ...(rating ? { rating } : {}),
    delegations: storedDelegations(messages, detail.cost.workers, turn.status, detail.delegations) });
  const applies = (detail.applies ?? []).filter((a) => a.turn_id === turn.id)
    .map((a): Entry => ({ kind: 'approval', id: a.approval.id, card: recordedApprovalCard(a.approval, turn.id, 'apply_code') }));
  return [...entries, ...answeredQuestions(turn.id, messages, detail.delegations ?? []), ...applies];
}

/** A question a stored call asked and how it was answered; `byWorker`: asked by the call's worker (a delegation's). */
interface Asked { card: ApprovalCard; byWorker: boolean }

/**
 * The questions a turn's tool calls asked, answered, as the session kept them (the chat puts them in the turn),
 * each delegation's followed by its worker's, as the live chat had them.
 */
function answeredQuestions(turnId: string, messages: Message[], delegations: readonly DelegationRecord[]): Entry[] {
  return [...questionsByCall(turnId, messages, delegations).values()].flat().map(approvalEntry);
}

/**
 * The questions each of a turn's tool calls asked (by call id, in the calls' order): a delegation's asked again
 * (its worker's model changed while it waited) the earlier ones first, then its worker's questions.
 */
function questionsByCall(turnId: string, messages: Message[], delegations: readonly DelegationRecord[])
  : Map<string, Asked[]> {
  const blocks = messages.flatMap((m) => m.content);
  const results = new Map(blocks.flatMap((b) => (b.type === 'tool_result' ? [[b.tool_use_id, b] as const] : [])));
  const out = new Map<string, Asked[]>();
  for (const b of blocks) {
    if (b.type !== 'tool_use') continue;
    const result = results.get(b.id);
    const asked = [...(result?.superseded_approvals ?? []), ...(result?.approval ? [result.approval] : [])];
    const own = asked.map((approval): Asked => ({ card: { ...recordedApprovalCard(approval, turnId, b.name, b.input),
      ...(b.name === DELEGATE_TOOL ? { toolUseId: b.id } : {}) }, byWorker: false }));
    const record = b.name === DELEGATE_TOOL ? delegations.find((d) => d.tool_use_id === b.id) : undefined;
    const questions = [...own, ...(record ? workerQuestions(record, turnId) : [])];
    if (questions.length > 0) out.set(b.id, questions);
  }
  return out;
}

function approvalEntry({ card }: Asked): Entry {
  return { kind: 'approval', id: card.id, card };
}

/**
 * A user's own delegation (`/delegate`) as the live chat showed it: the question its start asked (a worker that may change
 * things), its card, then its worker's questions.
 */
function userDelegation(record: DelegationRecord, card: Entry): Entry[] {
  const { start, worker } = userDelegationQuestions(record);
  return [...start.map(approvalEntry), card, ...worker.map(approvalEntry)];
}

/** A user's delegation's questions: those its start asked (a worker that may change things), then its worker's. */
function userDelegationQuestions(record: DelegationRecord): { start: Asked[]; worker: Asked[] } {
  const asked = [...(record.superseded_approvals ?? []), ...(record.approval ? [record.approval] : [])];
  const start = asked.map((approval): Asked => ({
    card: recordedApprovalCard(approval, record.tool_use_id, DELEGATE_TOOL, { task: record.task }), byWorker: false }));
  return { start, worker: workerQuestions(record, record.tool_use_id) };
}

/** The questions a delegation's worker asked, answered (`turnId`: the chat's turn they go in, if any). */
function workerQuestions(record: DelegationRecord, turnId: string): Asked[] {
  return (record.approvals ?? []).map((a): Asked => ({ card: recordedWorkerCard(a, turnId), byWorker: true }));
}

/**
 * Whether a chat answer was kept in the session's history: a `/delegate` that ran a worker (it has
 * a model) or failed keeps the command and the answer (docs/delegation.md); a question back does
 * not, nor does a refusal before any worker (a mistyped tier, delegation turned off: `NOT_SENT`).
 */
export function keptInHistory(result: ChatResult): boolean {
  return result.kind === 'command' && result.summary === SlashCommands.delegate
    && (result.model !== null || (result.status === 'failed' && !NOT_SENT.has(result.error?.code ?? '')));
}

/**
 * What the user sent for a stored turn, to send it again (a failed turn's Retry in a new window): the
 * text as typed (`@alias`, `#file` included: shown again), the message without its tokens (the
 * `@alias` stays: the daemon removes it again) and the attachments with the text they were sent
 * with. Undefined for what cannot be sent again as it was: an image, or `/route override`'s re-run
 * (its suggestion is gone).
 */
export function sentMessage(detail: SessionDetail, turnId: string, workspace: string)
  : { text: string; message: string; attachments: Attachment[] } | undefined {
  const message = detail.messages.find((m) => m.turn_id === turnId && m.role === 'user');
  if (!message || message.content.some((b) => b.type === 'image')) return undefined;
  const text = message.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n\n');
  if (!text.trim() || text.trim() === SlashCommands.routeOverride) return undefined;
  const attachments = message.content.flatMap((b): Attachment[] => (b.type === 'attachment' ? [{
    kind: b.kind, uri: attachmentUri(b.path, workspace), text: b.text,
    ...(b.start_line && b.end_line ? { start_line: b.start_line, end_line: b.end_line } : {}),
  }] : []));
  return { text, message: withoutTokens(text) || text, attachments };
}

/** The file URI of an attachment's stored path: relative to the workspace when inside it, else absolute. */
function attachmentUri(path: string, workspace: string): string {
  const encoded = path.split('/').map(encodeURIComponent).join('/');
  return path.startsWith('/') ? `file://${encoded}` : `${workspace.replace(/\/+$/, '')}/${encoded}`;
}

/** A message of a `/delegate` exchange: the user's command, or the worker's answer shown as its output. */
function exchangeEntry(message: Message): Entry {
  return message.role === 'user' ? { kind: 'user', id: message.id, text: userText(message.content) }
    : { kind: 'command', id: message.id, text: blocksText(message.content) };
}

/** A user's message as it was shown when sent: its text, then one `Attached: …` line per attachment. */
function userText(blocks: ContentBlock[]): string {
  const attached = blocks.flatMap((b) => (b.type === 'attachment' ? [attachedLine(b.path, b.start_line, b.end_line)] : []));
  return [blocksText(blocks), ...attached].filter(Boolean).join('\n');
}

/** Remove and return the delegations (oldest first) that started by `time` (all when no time). */
function takeStartedBefore(delegations: DelegationRecord[], time: string | undefined): DelegationRecord[] {
  const limit = time === undefined ? Infinity : Date.parse(time);
  const taken = delegations.filter((d) => Date.parse(d.started_at) <= limit);
  for (const d of taken) delegations.splice(delegations.indexOf(d), 1);
  return taken;
}

function turnEntry(turn: Turn, messages: Message[]): TurnEntry {
  const answers = messages.filter((m) => m.role === 'assistant');
  return {
    kind: 'turn',
    id: turn.id,
    model: turn.model,
    summary: turn.summary,
    banners: turn.decision?.banners ?? [],
    text: answers.map((m) => blocksText(m.content)).filter(Boolean).join('\n\n'),
    status: turn.status,
    error: turn.error,
    costUsd: turn.cost_usd,
    estimatedUsd: turn.estimated_usd ?? null,
    tools: toolActivity(messages, turn.status),
    notices: [],
    explanation: null,
    explanationOpen: false,
  };
}

function sortedTurns(detail: SessionDetail): Turn[] {
  return [...detail.turns].sort((a, b) => a.index - b.index);
}

export function blocksText(blocks: ContentBlock[]): string {
  return blocks.map((b) => (b.type === 'text' ? b.text : b.type === 'image' ? `[image: ${b.media_type}]` : ''))
    .filter(Boolean).join('\n\n');
}

/**
 * The tool lines of a stored turn. A call with no result recorded is still running in a running turn
 * (its approval card waits, say); in a turn the daemon's end cut off it has no outcome anyone knows of
 * (it read `done`, a command that never ran among them).
 */
/** A stored call of an interrupted turn with no result: whether it ran is not known. */
const UNRECORDED_CALL = 'no result: Switchman stopped before it was recorded';

function toolActivity(messages: Message[], status: TurnStatus): ToolActivity[] {
  const unanswered: Pick<ToolActivity, 'status' | 'summary'> = status === 'running' ? { status: 'running' }
    : status === 'interrupted' ? { status: 'error', summary: UNRECORDED_CALL } : { status: 'done' };
  const tools = new Map<string, ToolActivity>();
  for (const block of messages.flatMap((m) => m.content)) {
    if (block.type === 'tool_use') {
      tools.set(block.id, { id: block.id, name: block.name, input: block.input, ...unanswered });
    } else if (block.type === 'tool_result' && !block.is_error) {
      // The line the chat showed live (`done: src/app.py: 2 lines`), kept with the result.
      const tool = tools.get(block.tool_use_id);
      if (tool) {
        tool.status = 'done';
        if (block.summary) tool.summary = block.summary;
        else delete tool.summary;
        if (block.output_shown) tool.output = block.content;
      }
    } else if (block.type === 'tool_result' && block.is_error) {
      // Live, the line said why (`error: denied`); a reloaded chat says it too: the line kept with
      // the result, else (stored before it was kept) the result's first line.
      const tool = tools.get(block.tool_use_id);
      const why = block.summary || (block.content.trim() ? firstLine(block.content.trim()) : '');
      if (tool) Object.assign(tool, { status: 'error', ...(why ? { summary: why } : {}), ...(block.output_shown ? { output: block.content } : {}) });
    }
  }
  return [...tools.values()];
}

/** The read-only transcript opened from the Sessions view: per-turn model and cost. */
export function transcriptMarkdown(detail: SessionDetail): string {
  const { session, cost } = detail;
  const lines = [`# ${session.title || 'Untitled session'}`, ''];
  lines.push(`Session \`${session.id}\`${session.is_worker ? ' (worker)' : ''} · started ${readableTime(session.created_at)} · `
    + `${plural(session.turn_count, 'turn')} · total `
    + formatCost(cost.total_usd, cost.estimated_usd, { why: ': calls cut short before the provider reported usage' }));
  if (cost.workers.length > 0) {
    const [planner, workers] = formatUsds([cost.planner_usd, cost.workers_usd]);
    lines.push('', `Planner ${planner} · workers ${workers} (${plural(cost.workers.length, 'worker')})`);
  }
  if (session.sticky_model) lines.push('', `Sticky model: \`${session.sticky_model}\``);
  // A worker's handoff, as its card's transcript heads it: who handed what over, with which tools.
  if (detail.handoff) {
    lines.push('', '## Handoff', '', ...handoffLines(detail.handoff).map((l) => `- **${l.label}:** ${l.value}`));
  }
  const workerRows = workersByModel(cost.workers);
  if (cost.by_model.length > 0 || workerRows.length > 0) {
    lines.push('', '| model | turns | cost | input tokens | output tokens |', '|---|---:|---:|---:|---:|');
    // one column: its amounts share their decimals
    const costs = formatUsds([...cost.by_model.map((row) => row.cost_usd), ...workerRows.map((row) => row.costUsd)]);
    cost.by_model.forEach((row, i) => {
      lines.push(`| \`${row.model}\` | ${row.turns} | ${costs[i]} | ${row.input_tokens} | ${row.output_tokens} |`);
    });
    // `cost.workers` has no token counts: the workers' rows leave them out.
    workerRows.forEach((row, i) => {
      lines.push(`| ${row.model === null ? 'no model' : `\`${row.model}\``} (workers) | ${row.turns} | ${costs[cost.by_model.length + i]} | – | – |`);
    });
  }
  if (cost.workers.length > 0) lines.push('', '## Workers', '', ...workersTable(cost.workers));
  for (const step of timeline(detail, new Set())) {
    if (step.kind === 'turn') lines.push('', ...turnMarkdown(step.turn, detail, session.is_worker));
    else if (step.kind === 'exchange') lines.push('', ...exchangeMarkdown(step.message, step.started, cost.workers));
    else lines.push('', ...workerMarkdown(step.record, cost.workers));
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The session's workers' spend by model, costliest first, so that the cost table's rows add up to
 * the session's total (the planner's `by_model` rows plus these). A worker's cost goes to the model
 * it ran on.
 */
function workersByModel(workers: readonly WorkerCost[]): { model: string | null; turns: number; costUsd: number }[] {
  const rows = new Map<string | null, { model: string | null; turns: number; costUsd: number }>();
  for (const worker of workers) {
    const row = rows.get(worker.model) ?? { model: worker.model, turns: 0, costUsd: 0 };
    rows.set(worker.model, { ...row, turns: row.turns + worker.turns, costUsd: row.costUsd + (Number(worker.cost_usd) || 0) });
  }
  return [...rows.values()].sort((a, b) => b.costUsd - a.costUsd);
}

/**
 * Each worker the session delegated to, as `/cost` lists them: its task, model, turns and cost, and how its delegation
 * ended (`failed: timeout`, `stopped`, `done`), which the cost table's rows by model do not say.
 */
function workersTable(workers: readonly WorkerCost[]): string[] {
  const cell = (text: string) => text.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/\s+/g, ' ').trim();
  // one column: its amounts share their decimals ($0.000000 beside $0.000045, not $0.00)
  const column = workers.map((w) => w.cost_usd);
  return ['| worker | model | turns | cost | ended |', '|---|---|---:|---:|---|', ...workers.map((w) => {
    const task = cell(w.title ?? '') || w.parent_tool_use_id || w.session_id;
    const { amount, note } = costParts(w.cost_usd, w.estimated_usd, { alongside: column });
    return `| ${task} | ${w.model === null ? 'no model' : `\`${w.model}\``} | ${w.turns} | ${amount}${note} `
      + `| ${cell(workerEnd(w))} |`;
  })];
}

/** How a worker's delegation ended, in words: `failed: timeout` (the error's code), `stopped`, `done`; `–` unrecorded. */
function workerEnd(worker: WorkerCost): string {
  if (!worker.status) return '–';
  const code = worker.error?.split(':', 1)[0];
  return worker.status === 'failed' && code ? `failed: ${code}` : DELEGATION_LABELS[worker.status];
}

/** A `/delegate` command (with the workers it started) or the worker's answer to it. */
function exchangeMarkdown(message: Message, started: DelegationRecord[], workers: readonly WorkerCost[]): string[] {
  const body = messageMarkdown(message.content);
  if (message.role !== 'user') return [`**Worker:**`, '', body];
  return ['---', '', '## You delegated', '', `**You:**`, '', body, ...started.flatMap((r) => ['', ...workerMarkdown(r, workers)])];
}

/** One line for a user's worker: its tier (capped or not), model, cost and how it ended. */
function workerMarkdown(record: DelegationRecord, workers: readonly WorkerCost[]): string[] {
  const view = cardView(recordedDelegation(record, workers));
  const { start, worker } = userDelegationQuestions(record);
  return [...start.flatMap((q) => [questionMarkdown(q), '']), `_Worker · ${view.title} · ${view.meta}_`,
    ...worker.flatMap((q) => ['', questionMarkdown(q)])];
}

/**
 * A question a stored call asked and its answer, in the words of its card and of Neovim's transcript:
 * `? Edit src/app.py — Denied: use a constant`, `… (asked by the worker)`, `… Superseded, asked again: …`.
 */
function questionMarkdown({ card, byWorker }: Asked): string {
  return `? ${card.title || card.tool} — ${outcomeText(card)}${byWorker ? ' (asked by the worker)' : ''}`;
}

/**
 * `worker`: a worker's session, whose messages from the "user" are the task its planner (or a /delegate) handed it.
 * The heading's cost includes the turn's workers' (`incl. workers`), as the chat's badge for the turn does.
 */
function turnMarkdown(turn: Turn, detail: SessionDetail, worker = false): string[] {
  const messages = detail.messages.filter((m) => m.turn_id === turn.id);
  const cards = storedDelegations(messages, detail.cost?.workers ?? [], turn.status, detail.delegations);
  const cost = turnCostLabel(turn.cost_usd, cards, turn.estimated_usd) ?? formatCost(turn.cost_usd, turn.estimated_usd);
  const lines = ['---', '', `## Turn ${turn.index} · ${turn.model ?? 'no model'} · ${cost} · ${turn.status}`];
  if (turn.summary) lines.push('', `_Why: ${turn.summary}_`);
  if (turn.usage) lines.push('', `${turn.usage.input_tokens} input / ${turn.usage.output_tokens} output tokens`);
  // each call's questions under its result (an Apply's, a click on a code block, after the turn's messages)
  const questions = questionsByCall(turn.id, messages, detail.delegations ?? []);
  for (const message of messages) {
    const who = message.role === 'user' ? (worker ? 'Task' : 'You') : message.role === 'tool' ? 'Tool'
      : message.model ?? turn.model ?? 'Assistant';
    const body = messageMarkdown(message.content, questions);
    if (body) lines.push('', `**${who}:**`, '', body);
  }
  for (const apply of (detail.applies ?? []).filter((a) => a.turn_id === turn.id)) {
    lines.push('', questionMarkdown({ card: recordedApprovalCard(apply.approval, turn.id, 'apply_code'), byWorker: false }));
  }
  if (turn.error) lines.push('', `> **${turn.status}:** ${turn.error.message}`);
  return lines;
}

function messageMarkdown(blocks: ContentBlock[], questions: ReadonlyMap<string, Asked[]> = new Map()): string {
  return blocks.map((block) => {
    switch (block.type) {
      case 'text': return block.text;
      case 'image': return `_[image: ${block.media_type}]_`;
      case 'attachment': return `_${attachedLine(block.path, block.start_line, block.end_line)}_`;
      case 'tool_use': return `\`${block.name}\` ${'`'}${JSON.stringify(block.input)}${'`'}`;
      case 'tool_result': return [`${block.is_error ? '⚠ ' : ''}\`result\`: ${block.output_shown ? outputMarkdown(block.content) : firstLine(block.content)}`,
        ...(questions.get(block.tool_use_id) ?? []).map(questionMarkdown)].join('\n\n');
    }
  }).filter(Boolean).join('\n\n');
}

/**
 * A command's result the chat shows whole (`output_shown`): its exit status line, then what it printed in a code
 * block, as a terminal showed it (escape sequences left out). A fence longer than any run of backticks in it keeps
 * the output from closing it.
 */
function outputMarkdown(content: string): string {
  const [status = '', ...printed] = terminalText(content).replace(/\n+$/, '').split('\n');
  if (printed.length === 0) return status;
  const body = printed.join('\n');
  const fence = '`'.repeat(Math.max(3, ...[...body.matchAll(/`+/g)].map((m) => m[0].length + 1)));
  return `${status}\n\n${fence}text\n${body}\n${fence}`;
}

function firstLine(text: string): string {
  const line = text.split('\n', 1)[0];
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
