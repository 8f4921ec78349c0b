/** The DOM of a delegation card (its content comes from the pure `cardView`). */

import { cardView, type DelegationCard } from '../chat/delegations';
import type { HandoffLine } from '../chat/handoff';
import { el, renderMarkdown } from './render';

export interface CardActions {
  toggle(turnId: string, card: DelegationCard): void;
  stop(turnId: string, card: DelegationCard): void;
}

export function delegationCard(turnId: string, card: DelegationCard, actions: CardActions): HTMLElement {
  const view = cardView(card);
  const toggle = el('button', { class: 'delegation-toggle', 'aria-expanded': String(card.open), title: view.toggleLabel }, [
    el('span', { class: 'delegation-chevron', 'aria-hidden': 'true' }, [card.open ? '▾' : '▸']),
    el('span', { class: 'delegation-title', 'data-tier': card.tier, ...(view.tierNote ? { title: view.tierNote } : {}) },
      [`Worker · ${view.title}`]),
    el('span', { class: 'delegation-meta' }, [view.meta]),
  ]);
  toggle.addEventListener('click', () => actions.toggle(turnId, card));
  const head: (Node | string)[] = [toggle];
  if (view.canStop) {
    const stop = el('button', { class: 'delegation-stop', title: 'Stop this worker (the planner carries on)' }, ['Stop']);
    stop.addEventListener('click', () => actions.stop(turnId, card));
    head.push(stop);
  }
  const children: (Node | string)[] = [
    el('div', { class: 'delegation-head' }, head),
    el('div', { class: 'delegation-task' }, [view.task]),
  ];
  if (view.note) children.push(el('div', { class: `delegation-note ${view.noteTone ?? ''}` }, [view.note]));
  if (card.open) children.push(transcript(card));
  return el('div', { class: `delegation ${card.status}`, 'data-tool-use': card.toolUseId, 'data-status': card.status,
    'data-worker': card.workerSessionId ?? '' }, children);
}

function transcript(card: DelegationCard): HTMLElement {
  const box = el('div', { class: 'delegation-transcript' });
  const loaded = card.transcript;
  if (!card.workerSessionId) box.append(el('div', { class: 'notice' }, ['This worker never started a session.']));
  else if (!loaded || loaded.loading) box.append(el('div', { class: 'notice' }, ['Loading the worker’s transcript…']));
  else if (loaded.error) box.append(el('div', { class: 'failure' }, [loaded.error]));
  else if (loaded.messages.length === 0) box.append(el('div', { class: 'notice' }, ['Nothing recorded yet.']));
  else {
    if (loaded.handoff) box.append(handoffBlock(loaded.handoff));
    for (const message of loaded.messages) {
      const body = el('div', { class: `body ${message.who === 'worker' ? 'markdown' : 'plain'}` });
      if (message.who === 'worker') body.innerHTML = renderMarkdown(message.text); // sanitised (html: false)
      else body.textContent = message.text;
      const who = message.who === 'task' ? 'Task' : message.who === 'tool' ? 'Tool' : 'Worker';
      box.append(el('div', { class: `worker-message ${message.who}` }, [el('div', { class: 'who' }, [who]), body]));
    }
  }
  return box;
}

/** The handoff envelope, as a small definition list above the transcript. */
function handoffBlock(lines: HandoffLine[]): HTMLElement {
  const rows = lines.flatMap((line) => [el('dt', {}, [line.label]), el('dd', {}, [line.value])]);
  return el('details', { class: 'handoff', open: '' }, [el('summary', {}, ['Handoff']), el('dl', {}, rows)]);
}
