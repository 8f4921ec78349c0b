/** The DOM of a delegation card, updated part by part (its content comes from the pure `cardView`). */

import { cardView, transcriptEnd, waitsToStart, type CardView, type DelegationCard, type WorkerMessage } from '../chat/delegations';
import type { HandoffLine } from '../chat/handoff';
import type { UsdValue } from '../common/format';
import { el, renderMarkdown } from './render';
import { containerPart, part, renderParts, setAttributes, type Part } from './parts';

export interface CardActions {
  toggle(turnId: string, card: DelegationCard): void;
  stop(turnId: string, card: DelegationCard): void;
}

/**
 * A card as a part of its turn (or of the user's delegation entry): updated in place while its worker
 * runs, so a selection, the focused toggle or a collapsed handoff inside it stays. The buttons' actions
 * use the card's id (the part's key) and, for Stop, its worker turn (part of the Stop button's signature).
 * A running worker's time counts on from `now` (only its meta line changes as it does). `alongside`: the costs of
 * the cards shown with it (its turn's), whose decimals its cost shares: a sibling's cost can change its meta line.
 */
export function delegationCardPart(turnId: string, card: DelegationCard, actions: CardActions, now?: number,
  alongside: readonly UsdValue[] = []): Part {
  const view = cardView(card, now, alongside);
  return containerPart(`card:${card.toolUseId}`, [card, view.meta], 'div', (element) => {
    setAttributes(element, { class: `delegation ${view.denied ? 'denied' : card.status}${card.open ? ' open' : ''}`, 'data-tool-use': card.toolUseId, 'data-status': card.status,
      'data-worker': card.workerSessionId ?? '' });
    const parts = [headPart(turnId, card, view, actions), part('task', view.task, () => el('div', { class: 'delegation-task' }, [view.task]))];
    const note = view.note;
    if (note) parts.push(part('note', [note, view.noteTone], () => el('div', { class: `delegation-note ${view.noteTone ?? ''}` }, [note])));
    if (card.open) parts.push(transcriptPart(card));
    renderParts(element, parts);
  });
}

function headPart(turnId: string, card: DelegationCard, view: CardView, actions: CardActions): Part {
  const toggle = containerPart('toggle', [card.open, card.tier, view.title, view.tierNote, view.meta], 'button', (button) => {
    setAttributes(button, { class: 'delegation-toggle', 'aria-expanded': String(card.open), title: view.toggleLabel });
    renderParts(button, [
      part('chevron', card.open, () => el('span', { class: 'delegation-chevron', 'aria-hidden': 'true' }, [card.open ? '▾' : '▸'])),
      part('title', [card.tier, view.title, view.tierNote], () => el('span', { class: 'delegation-title', 'data-tier': card.tier,
        ...(view.tierNote ? { title: view.tierNote } : {}) }, [`Worker · ${view.title}`])),
      part('meta', view.meta, () => el('span', { class: 'delegation-meta' }, [view.meta])),
    ]);
  }, (button) => button.addEventListener('click', () => actions.toggle(turnId, card)));
  const parts = [toggle];
  if (view.canStop) {
    parts.push(part('stop', [card.workerTurnId, card.status], () => {
      const stop = el('button', { class: 'delegation-stop', title: waitsToStart(card.status)
        ? 'Stop this delegation before it starts (the planner carries on)' : 'Stop this worker (the planner carries on)' }, ['Stop']);
      stop.addEventListener('click', () => actions.stop(turnId, card));
      return stop;
    }));
  }
  return containerPart('head', [card.open, card.tier, view.title, view.tierNote, view.meta, view.canStop, card.workerTurnId, card.status], 'div',
    (head) => {
      setAttributes(head, { class: 'delegation-head' });
      renderParts(head, parts);
    });
}

/** The worker's transcript: a message already shown stays as it is when the transcript is fetched again. */
function transcriptPart(card: DelegationCard): Part {
  return containerPart('transcript', [card.workerSessionId, card.transcript, transcriptEnd(card)], 'div', (box) => {
    setAttributes(box, { class: 'delegation-transcript' });
    renderParts(box, transcriptParts(card));
  });
}

function transcriptParts(card: DelegationCard): Part[] {
  const loaded = card.transcript;
  const notice = (text: string) => [part('notice', text, () => el('div', { class: 'notice' }, [text]))];
  if (!card.workerSessionId) return notice('This worker never started a session.');
  if (!loaded || loaded.loading) return notice('Loading the worker’s transcript…');
  const error = loaded.error;
  if (error) return [part('error', error, () => el('div', { class: 'failure' }, [error]))];
  const end = transcriptEnd(card);
  // how the worker ended, after what it did: the failure was only in the card's head
  const ending = end ? [part('end', end, () => el('div', { class: 'worker-message end failure', role: 'status' },
    [el('div', { class: 'who' }, [end.label]), el('div', { class: 'body plain' }, [end.text])]))] : [];
  if (loaded.messages.length === 0) return [...notice('Nothing recorded yet.'), ...ending];
  const handoff = loaded.handoff;
  const parts = handoff ? [part('handoff', handoff, () => handoffBlock(handoff))] : [];
  loaded.messages.forEach((message, i) => parts.push(part(`message:${i}`, message, () => workerMessage(message))));
  return [...parts, ...ending];
}

function workerMessage(message: WorkerMessage): HTMLElement {
  const body = el('div', { class: `body ${message.who === 'worker' ? 'markdown' : 'plain'}` });
  if (message.who === 'worker') body.innerHTML = renderMarkdown(message.text); // sanitised (html: false)
  else body.textContent = message.text;
  const who = message.who === 'task' ? 'Task' : message.who === 'tool' ? 'Tool' : 'Worker';
  return el('div', { class: `worker-message ${message.who}` }, [el('div', { class: 'who' }, [who]), body]);
}

/** The handoff envelope, as a small definition list above the transcript. */
function handoffBlock(lines: HandoffLine[]): HTMLElement {
  const rows = lines.flatMap((line) => [el('dt', {}, [line.label]), el('dd', {}, [line.value])]);
  return el('details', { class: 'handoff', open: '' }, [el('summary', {}, ['Handoff']), el('dl', {}, rows)]);
}
