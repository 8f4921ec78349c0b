/** DOM rendering of the chat transcript. Entries are re-rendered only when they change. */

import MarkdownIt from 'markdown-it';
import { formatUsd, shortModelName } from '../common/format';
import type { Explanation } from '../chat/chain';
import type { CodeAction, Entry, TurnEntry } from '../chat/messages';
import type { Rating } from '../protocol/params';
import { DELEGATE_TOOL } from '../chat/delegations';
import { delegationCard, type CardActions } from './delegationCard';
import { approvalCardElement, type ApprovalActions } from './approvalCard';

/**
 * Answers are untrusted text: raw HTML is escaped (html: false) and markdown-it refuses
 * javascript:, vbscript:, file: and most data: links; the page's CSP blocks inline scripts too.
 */
const markdown = new MarkdownIt({ html: false, linkify: true, breaks: false });

export function renderMarkdown(text: string): string {
  return markdown.render(text);
}

export class TranscriptView {
  private readonly rendered = new Map<string, { element: HTMLElement; signature: string }>();

  constructor(private readonly container: HTMLElement, private readonly onBadge: (turnId: string) => void,
    private readonly cards?: CardActions,
    private readonly onRate: (turnId: string, rating: Rating) => void = () => undefined,
    private readonly approvals?: ApprovalActions) {}

  render(entries: Entry[]): void {
    const keep = new Set<string>();
    let previous: Element | null = null;
    for (const entry of entries) {
      const key = `${entry.kind}:${entry.id}`;
      keep.add(key);
      const element = this.elementFor(key, entry);
      const expected: Element | null = previous ? previous.nextElementSibling : this.container.firstElementChild;
      if (expected !== element) this.container.insertBefore(element, expected);
      previous = element;
    }
    for (const [key, { element }] of this.rendered) {
      if (!keep.has(key)) {
        element.remove();
        this.rendered.delete(key);
      }
    }
  }

  private elementFor(key: string, entry: Entry): HTMLElement {
    const signature = JSON.stringify(entry);
    const known = this.rendered.get(key);
    if (known && known.signature === signature) return known.element;
    const element = this.build(entry);
    known?.element.replaceWith(element);
    this.rendered.set(key, { element, signature });
    return element;
  }

  private build(entry: Entry): HTMLElement {
    switch (entry.kind) {
      case 'user':
        return el('div', { class: 'entry user' }, [el('div', { class: 'who' }, ['You']), el('div', { class: 'body plain' }, [entry.text])]);
      case 'command':
        return entry.failed
          ? el('div', { class: 'entry command error', role: 'alert' }, [el('pre', {}, [entry.text])])
          : el('div', { class: 'entry command' }, [el('pre', {}, [entry.text])]);
      case 'error':
        return el('div', { class: 'entry error', role: 'alert' }, [
          el('div', { class: 'error-code' }, [entry.code]), el('div', { class: 'body plain' }, [entry.message])]);
      case 'turn':
        return this.buildTurn(entry);
      case 'delegation': // a worker the user started with /delegate: the card is the whole entry
        return el('div', { class: 'entry delegated', 'data-delegation': entry.id },
          this.cards ? [delegationCard(entry.id, entry.card, this.cards)] : []);
      case 'approval':
        return this.approvals ? approvalCardElement(entry.card, this.approvals) : el('div', { class: 'entry' });
    }
  }

  /** 👍 / 👎: teach the pattern store whether this answer was good. */
  private ratingButtons(turn: TurnEntry): HTMLElement {
    const buttons = (['up', 'down'] as const).map((rating) => {
      const button = el('button', { class: `rate ${rating}`, 'data-rating': rating,
        title: rating === 'up' ? 'Good answer' : 'Bad answer',
        'aria-pressed': String(turn.rating === rating) }, [rating === 'up' ? '👍' : '👎']);
      button.addEventListener('click', () => this.onRate(turn.id, rating));
      return button;
    });
    return el('div', { class: 'rating', 'aria-label': 'Rate this answer' }, buttons);
  }

  private buildTurn(turn: TurnEntry): HTMLElement {
    const badgeText = `${turn.model ? shortModelName(turn.model) : 'no model'}${turn.summary ? ` · ${turn.summary}` : ''}`;
    const badge = el('button', { class: 'route-badge', title: 'Why this model? Click for the full routing chain',
      'aria-expanded': String(turn.explanationOpen), 'data-turn': turn.id }, [badgeText]);
    badge.addEventListener('click', () => this.onBadge(turn.id));
    const children: (Node | string)[] = [el('div', { class: 'turn-head' }, [badge, status(turn)])];
    if (turn.explanationOpen && turn.explanation) children.push(explanationElement(turn.explanation));
    for (const banner of turn.banners) children.push(el('div', { class: 'banner' }, [`⚠ ${banner}`]));
    const cards = turn.delegations ?? [];
    for (const tool of turn.tools) {
      // A delegate call is shown as its card below.
      if (tool.name === DELEGATE_TOOL && cards.some((c) => c.toolUseId === tool.id)) continue;
      children.push(el('div', { class: `tool ${tool.status}` }, [`🔧 ${tool.name} — ${tool.status}${tool.summary ? `: ${tool.summary}` : ''}`]));
    }
    if (this.cards) for (const card of cards) children.push(delegationCard(turn.id, card, this.cards));
    for (const notice of turn.notices) children.push(el('div', { class: 'notice' }, [notice]));
    const body = el('div', { class: 'body markdown' });
    body.innerHTML = renderMarkdown(turn.text); // sanitised by markdown-it (html: false)
    if (turn.status !== 'running') addCodeActions(body);
    if (turn.status === 'running') body.appendChild(el('span', { class: 'cursor', 'aria-hidden': 'true' }, ['▍']));
    children.push(body);
    if (turn.error) children.push(el('div', { class: 'failure', role: 'alert' }, [turn.error.message]));
    if (turn.status !== 'running') children.push(this.ratingButtons(turn));
    const refused = turn.ratingError;
    if (refused) children.push(el('div', { class: 'failure rating-error', role: 'alert', 'data-code': refused.code }, [refused.message]));
    return el('div', { class: `entry turn ${turn.status}`, 'data-turn': turn.id, 'data-status': turn.status }, children);
  }
}

export const CODE_ACTIONS: { action: CodeAction; label: string; title: string }[] = [
  { action: 'copy', label: 'Copy', title: 'Copy the code' },
  { action: 'insert', label: 'Insert', title: 'Insert the code at the cursor of the active editor' },
  { action: 'apply', label: 'Apply', title: 'Replace the selection (or the whole file) of the active editor, after you approve the diff' },
];

/** A toolbar over every code block of a finished answer; clicks are handled by the page. */
export function addCodeActions(body: HTMLElement): void {
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

function status(turn: TurnEntry): HTMLElement {
  const parts: string[] = [];
  if (turn.status === 'running') parts.push('answering…');
  else if (turn.status !== 'completed') parts.push(turn.status);
  if (turn.costUsd !== null && turn.status !== 'running') parts.push(formatUsd(turn.costUsd));
  return el('span', { class: 'turn-status' }, [parts.join(' · ')]);
}

export function el(tag: string, attributes: Record<string, string> = {}, children: (Node | string)[] = []): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) element.setAttribute(name, value);
  for (const child of children) element.append(child);
  return element;
}
