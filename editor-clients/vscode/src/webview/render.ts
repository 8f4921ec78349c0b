/** DOM rendering of the chat transcript: each entry, and each part of a turn, is re-rendered only when it changes. */

import { shortModelName } from '../common/format';
import type { Explanation } from '../chat/chain';
import type { CodeAction, DelegationEntry, Entry, TurnEntry } from '../chat/messages';
import type { RatingChange } from '../protocol/params';
import { DELEGATE_TOOL, ticks, turnCostLabel } from '../chat/delegations';
import { actionableTurn, approvalsInTurns, rateable, turnCards, withRetryButton } from '../chat/reducer';
import type { ApprovalCard } from '../tools/approval';
import { bannerView } from '../chat/banners';
import { foldedMessage, foldedOutput, foldLabel, outputFoldLabel, terminalText } from '../chat/longMessage';
import { delegationCardPart, type CardActions } from './delegationCard';
import { approvalCardElement, type ApprovalActions } from './approvalCard';
import { containerPart, part, PartList, renderParts, setAttributes, type Part } from './parts';
import { markdown, MarkdownStream, renderBlocks } from './markdownStream';
import { icon } from './icons';
import { splitLocations, type FileLocation } from '../chat/locations';

export function renderMarkdown(text: string): string {
  return markdown.render(text);
}

/**
 * The chat's entries. A turn (and a delegation card in it) is updated in place, part by part, so
 * a running answer or worker does not take away what the user selected, opened or focused in it.
 */
export class TranscriptView {
  private readonly entries: PartList;
  /** The time of this render: a running worker's card counts its time on from its last update. */
  private now = Date.now();

  constructor(container: HTMLElement, private readonly onBadge: (turnId: string) => void,
    private readonly cards?: CardActions,
    private readonly onRate: (turnId: string, rating: RatingChange) => void = () => undefined,
    private readonly approvals?: ApprovalActions,
    /** Send a chat message as if typed (a banner's `/route override` button). */
    private readonly onCommand: (text: string) => void = () => undefined,
    /** A failed turn's Retry: send its message again. */
    private readonly onRetry: (turnId: string) => void = () => undefined,
    /** A file location in a command's answer was clicked. */
    private readonly onLocation: (location: FileLocation) => void = () => undefined) {
    this.entries = new PartList(container);
  }

  render(entries: Entry[], now: number = Date.now()): void {
    this.now = now;
    const { shown, byTurn } = approvalsInTurns(entries);
    const actionable = actionableTurn(shown);
    this.entries.render(shown.map((entry) => this.partOf(entry, entry.kind === 'turn' && entry.id === actionable,
      byTurn.get(entry.id) ?? [])));
  }

  private partOf(entry: Entry, last: boolean, approvals: ApprovalCard[]): Part {
    const key = `${entry.kind}:${entry.id}`;
    switch (entry.kind) {
      case 'turn': {
        // The daemon acts on the suggestion of the last turn only, once it has ended.
        const actionable = last && entry.status !== 'running';
        const clock = (entry.delegations ?? []).some(ticks) ? this.now : null;
        return containerPart(key, [entry, actionable, approvals, clock], 'div',
          (element) => this.updateTurn(element, entry, actionable, approvals));
      }
      case 'delegation': // a worker the user started with /delegate: the card is the whole entry
        return containerPart(key, [entry, ticks(entry.card) ? this.now : null], 'div', (element) => {
          setAttributes(element, { class: 'entry delegated', 'data-delegation': entry.id });
          renderParts(element, this.cards ? [delegationCardPart(entry.id, entry.card, this.cards, this.now)] : []);
        });
      default:
        return part(key, entry, () => this.build(entry));
    }
  }

  private build(entry: Exclude<Entry, TurnEntry | DelegationEntry>): HTMLElement {
    switch (entry.kind) {
      case 'user':
        return userMessage(entry.text);
      case 'command':
        return entry.failed
          ? el('div', { class: 'entry command error', role: 'alert' }, [el('pre', {}, [entry.text])])
          : el('div', { class: 'entry command' }, [el('pre', {}, this.withLocations(entry.text))]);
      case 'error':
        return el('div', { class: 'entry error', role: 'alert' }, [
          el('div', { class: 'error-code' }, [entry.code]), el('div', { class: 'body plain' }, [entry.message])]);
      case 'approval':
        return this.approvals ? approvalCardElement(entry.card, this.approvals) : el('div', { class: 'entry' });
    }
  }

  private updateTurn(element: HTMLElement, turn: TurnEntry, actionable: boolean, approvals: ApprovalCard[]): void {
    setAttributes(element, { class: `entry turn ${turn.status}`, 'data-turn': turn.id, 'data-status': turn.status });
    renderParts(element, this.turnParts(turn, actionable, approvals));
  }

  private turnParts(turn: TurnEntry, actionable: boolean, approvals: ApprovalCard[]): Part[] {
    const parts = [this.headPart(turn)];
    if (turn.explanationOpen && turn.explanation) {
      const explanation = turn.explanation;
      parts.push(part('explanation', explanation, () => explanationElement(explanation)));
    }
    turn.banners.forEach((banner, i) => parts.push(part(`banner:${i}`, [banner, actionable], () => this.banner(banner, actionable))));
    const cards = turn.delegations ?? [];
    for (const tool of turn.tools) {
      // A delegate call is shown as its card below.
      if (tool.name === DELEGATE_TOOL && cards.some((c) => c.toolUseId === tool.id)) continue;
      const line = `${tool.name} — ${tool.status}${tool.summary ? `: ${tool.summary}` : ''}`;
      parts.push(part(`tool:${tool.id}`, [line, tool.status], () => el('div', { class: `tool ${tool.status}` }, [icon('tools'), line])));
      const output = tool.output;
      if (output) parts.push(part(`output:${tool.id}`, output, () => toolOutput(output)));
    }
    const actions = this.cards;
    // one turn's cards are one list: their costs share their decimals
    const costs = cards.map((card) => card.costUsd);
    const approvalActions = this.approvals;
    for (const shown of turnCards(cards, approvals)) { // a delegation's start question above its card
      if (shown.kind === 'delegation' && actions) parts.push(delegationCardPart(turn.id, shown.card, actions, this.now, costs));
      if (shown.kind === 'approval' && approvalActions) {
        const card = shown.card;
        parts.push(part(`approval:${card.id}`, card, () => approvalCardElement(card, approvalActions)));
      }
    }
    turn.notices.forEach((notice, i) => parts.push(part(`notice:${i}`, notice, () => el('div', { class: 'notice' }, [notice]))));
    parts.push(containerPart('body', [turn.text, turn.status === 'running'], 'div', (body) => {
      setAttributes(body, { class: 'body markdown' });
      answerOf(body).show(turn.text, turn.status === 'running');
    }));
    (turn.lateNotices ?? []).forEach((notice, i) => parts.push(part(`late-notice:${i}`, notice,
      () => el('div', { class: 'notice' }, [notice]))));
    // The daemon's message says "send it again to retry": the button does that, with the message's
    // @alias and attachments; on the last answer only (an older message would be sent out of order).
    const retry = actionable && turn.retryable === true;
    const error = turn.error;
    const failure = error ? (retry ? withRetryButton(error.message) : error.message) : null;
    if (failure !== null) parts.push(part('error', failure, () => el('div', { class: 'failure', role: 'alert' }, [failure])));
    if (retry) parts.push(part('retry', turn.id, () => this.retryButton(turn.id)));
    if (rateable(turn)) parts.push(this.ratingPart(turn));
    const refused = turn.ratingError;
    if (refused) {
      parts.push(part('rating-error', refused, () => el('div', { class: 'failure rating-error', role: 'alert',
        'data-code': refused.code }, [refused.message])));
    }
    return parts;
  }

  /** A notice of the routing (an outage, the pattern store's suggestion with its buttons), one line a line. */
  private banner(banner: string, actionable: boolean): HTMLElement {
    const view = bannerView(banner, actionable);
    const lines = view.lines.map((line, i) => el('div', { class: 'banner-line' }, [i === 0 ? `⚠ ${line}` : line]));
    if (view.actions.length === 0) return el('div', { class: 'banner', role: 'note' }, lines);
    const buttons = view.actions.map((action) => {
      const button = el('button', { class: 'secondary banner-action', 'data-command': action.command, title: action.title },
        [action.label]);
      button.addEventListener('click', () => this.onCommand(action.command));
      return button;
    });
    return el('div', { class: 'banner', role: 'note' }, [...lines, el('div', { class: 'banner-actions' }, buttons)]);
  }

  /** The badge ("Why this model?") and the turn's status. */
  private headPart(turn: TurnEntry): Part {
    const badgeText = `${turn.model ? shortModelName(turn.model) : 'no model'}${turn.summary ? ` · ${turn.summary}` : ''}`;
    const badge = containerPart('badge', [badgeText, turn.explanationOpen], 'button', (button) => {
      setAttributes(button, { class: 'route-badge', title: 'Why this model? Click for the full routing chain',
        'aria-expanded': String(turn.explanationOpen), 'data-turn': turn.id });
      button.textContent = badgeText;
    }, (button) => button.addEventListener('click', () => this.onBadge(turn.id)));
    const line = statusLine(turn);
    return containerPart('head', [badgeText, turn.explanationOpen, line], 'div', (head) => {
      setAttributes(head, { class: 'turn-head' });
      renderParts(head, [badge, part('status', line, () => el('span', { class: 'turn-status' }, [line]))]);
    });
  }

  /** A command's answer with the file locations it names (`/rules check`'s problems) as links to them. */
  private withLocations(text: string): (Node | string)[] {
    return splitLocations(text).map((piece) => {
      if (typeof piece === 'string') return piece;
      const link = el('a', { class: 'location', href: '#', title: `Open ${piece.path} at line ${piece.line}` }, [piece.text]);
      link.addEventListener('click', (event) => {
        event.preventDefault();
        this.onLocation(piece);
      });
      return link;
    });
  }

  private retryButton(turnId: string): HTMLElement {
    const button = el('button', { class: 'secondary retry', 'data-turn': turnId, title: 'Send this message again',
      'aria-label': 'Retry: send this message again' }, [icon('retry'), 'Retry']);
    button.addEventListener('click', () => this.onRetry(turnId));
    return el('div', { class: 'retry-row' }, [button]);
  }

  /** 👍 / 👎: teach the pattern store whether this answer was good. */
  private ratingPart(turn: TurnEntry): Part {
    const buttons = (['up', 'down'] as const).map((rating) => containerPart(rating, turn.rating === rating, 'button', (button) => {
      // Named in words, drawn as an SVG icon (filled once given): an emoji is read as "thumbs up
      // sign", and drawn as a box without an emoji font.
      const label = rating === 'up' ? 'Good answer' : 'Bad answer';
      const pressed = turn.rating === rating;
      setAttributes(button, { class: `rate ${rating}`, 'data-rating': rating,
        title: pressed ? `${label} (click again to take it back)` : label, 'aria-label': label, 'aria-pressed': String(pressed) });
      const name = rating === 'up' ? (pressed ? 'thumbsUpFilled' : 'thumbsUp') : (pressed ? 'thumbsDownFilled' : 'thumbsDown');
      button.replaceChildren(icon(name));
      // pressed again, it takes the rating back (a toggle that did nothing once pressed)
    }, (button) => button.addEventListener('click', () => this.onRate(turn.id,
      button.getAttribute('aria-pressed') === 'true' ? 'none' : rating))));
    return containerPart('rating', turn.rating ?? null, 'div', (row) => {
      setAttributes(row, { class: 'rating', role: 'group', 'aria-label': 'Rate this answer' });
      renderParts(row, buttons);
    });
  }
}

const answers = new WeakMap<HTMLElement, AnswerView>();

function answerOf(body: HTMLElement): AnswerView {
  let answer = answers.get(body);
  if (!answer) {
    answer = new AnswerView(body);
    answers.set(body, answer);
  }
  return answer;
}

/**
 * An answer's Markdown, kept in place while it streams: each finished block (see
 * markdownStream.ts) gets its nodes once, and its code blocks their Copy / Insert / Apply bar; only
 * the growing tail is replaced on each delta. So a selection in a finished block, or a button under
 * the mouse, stays. When the turn ends the whole text is rendered at once and compared block by
 * block: a block whose HTML is unchanged keeps its nodes, so the final DOM is the full render's.
 */
class AnswerView {
  private readonly stream = new MarkdownStream();
  private blocks: { html: string; nodes: Node[] }[] = [];
  private tail: { html: string; nodes: Node[] } = { html: '', nodes: [] };
  private cursor: HTMLElement | null = null;

  constructor(private readonly body: HTMLElement) {}

  show(text: string, running: boolean): void {
    if (running) {
      const { finished, tail } = this.stream.update(text);
      this.showBlocks(finished);
      if (tail !== this.tail.html) {
        for (const node of this.tail.nodes) this.body.removeChild(node);
        this.tail = { html: tail, nodes: this.insert(tail, false) };
      }
      if (!this.cursor) {
        this.cursor = el('span', { class: 'cursor', 'aria-hidden': 'true' }, ['▍']);
        this.body.append(this.cursor);
      }
      return;
    }
    for (const node of this.tail.nodes) this.body.removeChild(node);
    this.tail = { html: '', nodes: [] };
    this.cursor?.remove();
    this.cursor = null;
    this.showBlocks(renderBlocks(text));
  }

  /** Keep the leading blocks whose HTML is unchanged; build the rest. */
  private showBlocks(htmls: readonly string[]): void {
    let same = 0;
    while (same < this.blocks.length && same < htmls.length && this.blocks[same].html === htmls[same]) same++;
    for (const gone of this.blocks.splice(same)) for (const node of gone.nodes) this.body.removeChild(node);
    for (const html of htmls.slice(same)) this.blocks.push({ html, nodes: this.insert(html, true) });
  }

  /** Put `html`'s nodes after the finished blocks (before the tail and the cursor). */
  private insert(html: string, finished: boolean): Node[] {
    const template = document.createElement('template');
    template.innerHTML = html; // sanitised by markdown-it (html: false)
    if (finished) addCodeActions(template.content);
    const nodes = Array.from(template.content.childNodes);
    const before = finished ? (this.tail.nodes[0] ?? this.cursor) : this.cursor;
    this.body.insertBefore(template.content, before);
    return nodes;
  }
}

export const CODE_ACTIONS: { action: CodeAction; label: string; title: string }[] = [
  { action: 'copy', label: 'Copy', title: 'Copy the code' },
  { action: 'insert', label: 'Insert', title: 'Insert the code at the cursor of the active editor' },
  { action: 'apply', label: 'Apply', title: 'Replace the selection (or the whole file) of the active editor, after you approve the diff' },
];

/** A toolbar over every code block of a finished answer or block; clicks are handled by the page. */
export function addCodeActions(body: ParentNode): void {
  for (const pre of Array.from(body.querySelectorAll('pre'))) {
    const bar = el('div', { class: 'code-actions' });
    for (const { action, label, title } of CODE_ACTIONS) {
      bar.append(el('button', { class: 'code-action', 'data-code-action': action, title }, [label]));
    }
    pre.before(bar);
  }
}

/**
 * The routing chain as a two-column table (policy | verdict, model and reason): the second
 * column wraps, so it reads at a sidebar's ~300 px where five columns would not fit.
 */
export function explanationElement(explanation: Explanation): HTMLElement {
  const head = el('div', { class: 'explanation-head' }, [explanation.headline]);
  if (explanation.rows.length === 0) return el('div', { class: 'explanation' }, [head]);
  const rows = explanation.rows.map((row) => el('tr', { class: row.winner ? 'winner' : row.verdict }, [
    el('th', { scope: 'row' }, [row.policy]),
    el('td', {}, [
      el('span', { class: `verdict ${row.verdict}` }, [row.verdictLabel]),
      ...(row.model ? [' ', el('code', {}, [row.model])] : []),
      el('div', { class: 'reason' }, [row.reason]),
    ]),
  ]));
  const table = el('table', { class: 'chain' }, [
    el('thead', {}, [el('tr', {}, [el('th', { scope: 'col' }, ['Policy']), el('th', { scope: 'col' }, ['Outcome'])])]),
    el('tbody', {}, rows),
  ]);
  const full = el('details', {}, [el('summary', {}, ['Full text']), el('pre', {}, [explanation.text])]);
  return el('div', { class: 'explanation' }, [head, table, full]);
}

function statusLine(turn: TurnEntry): string {
  const parts: string[] = [];
  if (turn.status === 'running') parts.push('answering…');
  else if (turn.status !== 'completed') parts.push(turn.status);
  const cost = turn.status !== 'running' ? turnCostLabel(turn.costUsd, turn.delegations, turn.estimatedUsd) : null;
  if (cost) parts.push(cost);
  return parts.join(' · ');
}

/** The user's message; a long one folded to its first lines, with a toggle to show all of it (and to fold it again). */
function userMessage(text: string): HTMLElement {
  const fold = foldedMessage(text);
  const body = el('div', { class: 'body plain' }, [fold ? fold.head : text]);
  if (!fold) return el('div', { class: 'entry user' }, [el('div', { class: 'who' }, ['You']), body]);
  const toggle = el('button', { class: 'message-fold', 'aria-expanded': 'false' }, [foldLabel(fold, false)]);
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    body.textContent = open ? text : fold.head;
    body.classList.toggle('folded', !open);
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = foldLabel(fold, open);
  });
  body.classList.add('folded');
  return el('div', { class: 'entry user' }, [el('div', { class: 'who' }, ['You']), body, toggle]);
}

/** What a command printed, under its tool line; a long one folded to its last lines, with a toggle. */
function toolOutput(output: string): HTMLElement {
  const text = terminalText(output);
  const fold = foldedOutput(text);
  const body = el('pre', { class: 'tool-output' }, [fold ? fold.tail : text]);
  if (!fold) return el('div', { class: 'tool-output-block' }, [body]);
  const toggle = el('button', { class: 'message-fold', 'aria-expanded': 'false' }, [outputFoldLabel(fold, false)]);
  toggle.addEventListener('click', () => {
    const open = toggle.getAttribute('aria-expanded') !== 'true';
    body.textContent = open ? text : fold.tail;
    toggle.setAttribute('aria-expanded', String(open));
    toggle.textContent = outputFoldLabel(fold, open);
  });
  return el('div', { class: 'tool-output-block' }, [body, toggle]);
}

export function el(tag: string, attributes: Record<string, string> = {}, children: (Node | string)[] = []): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) element.append(child);
  return element;
}
