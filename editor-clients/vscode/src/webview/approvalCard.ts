/** The DOM of an approval card: what will happen, the three answers, then the outcome. */

import type { ApprovalAnswer } from '../protocol/types';
import {
  outcomeText, reasonKeyAnswer, shownDiff, shownText, titleParts, workerLine, type ApprovalCard,
} from '../tools/approval';
import { el } from './render';
import { icon } from './icons';

export interface ApprovalActions {
  answer(id: string, decision: ApprovalAnswer['decision'], reason?: string): void;
  openDiff(id: string): void;
}

export function approvalCardElement(card: ApprovalCard, actions: ApprovalActions): HTMLElement {
  const title = titleParts(card.title);
  const children: (Node | string)[] = [
    el('div', { class: 'approval-head' }, [el('span', { class: 'approval-icon', 'aria-hidden': 'true' }, [icon('shield')]),
      el('span', { class: 'approval-title' }, title.parts.map((p) => (p.code ? el('code', {}, [p.text]) : p.text)))]),
    ...details(card, actions),
  ];
  if (card.note) children.push(el('div', { class: 'approval-note' }, [card.note]));
  if (card.outcome === 'pending') children.push(answerRow(card, actions));
  else children.push(el('div', { class: 'approval-outcome', role: 'status' }, [outcomeText(card)]));
  return el('div', { class: `approval ${card.outcome}`, 'data-approval': card.id, 'data-outcome': card.outcome,
    'data-tool': card.tool, role: 'group', 'aria-label': `Switchman asks: ${title.plain}` }, children);
}

function details(card: ApprovalCard, actions: ApprovalActions): HTMLElement[] {
  switch (card.kind) {
    case 'command':
      return [el('pre', { class: 'approval-command' }, [shownText(card.command ?? '')]),
        el('div', { class: 'approval-cwd' }, [`in ${card.cwd ?? 'the workspace folder'}`])];
    case 'delegation': {
      // a card rebuilt from a record kept before the tier and tools were has none: its title names the tier
      const worker = workerLine(card);
      return [
        el('div', { class: 'approval-task' }, [shownText(card.task ?? '')]),
        ...(worker === null ? [] : [el('div', { class: 'approval-worker' }, [worker])]),
      ];
    }
    case 'edit': {
      const lines = shownDiff(card.diff).map((line) => el('span', { class: diffClass(line) }, [`${line}\n`]));
      // a card rebuilt from a record kept before diffs were has none: its title says what the change was
      const parts: HTMLElement[] = lines.length > 0 ? [el('pre', { class: 'approval-diff' }, lines)] : [];
      if (card.canOpenDiff && card.outcome === 'pending') {
        const open = el('button', { class: 'approval-open-diff', title: 'Show the change in VS Code\'s diff editor' }, ['Open diff']);
        open.addEventListener('click', () => actions.openDiff(card.id));
        parts.push(el('div', { class: 'approval-links' }, [open]));
      }
      return parts;
    }
  }
}

function diffClass(line: string): string {
  if (line.startsWith('+++') || line.startsWith('---')) return 'diff-file';
  if (line.startsWith('@@')) return 'diff-hunk';
  if (line.startsWith('+')) return 'diff-add';
  if (line.startsWith('-')) return 'diff-del';
  return 'diff-context';
}

function answerRow(card: ApprovalCard, actions: ApprovalActions): HTMLElement {
  const reason = el('input', { class: 'approval-reason', type: 'text', placeholder: 'Reason for the model (optional): Deny, or Enter, sends it',
    'aria-label': 'Reason for denying (optional)' }) as HTMLInputElement;
  const button = (cls: string, label: string, decision: ApprovalAnswer['decision']) => {
    const b = el('button', { class: `approval-button ${cls}` }, [label]) as HTMLButtonElement;
    b.addEventListener('click', () => {
      const text = reason.value.trim();
      actions.answer(card.id, decision, decision === 'deny' && text ? text : undefined);
    });
    return b;
  };
  reason.addEventListener('keydown', (event) => {
    const answer = reasonKeyAnswer(event, reason.value);
    if (event.key === 'Enter') event.preventDefault();
    if (answer) actions.answer(card.id, answer.decision, answer.reason);
  });
  return el('div', { class: 'approval-answers' }, [
    el('div', { class: 'approval-buttons' }, [
      button('allow-once primary', 'Allow once', 'allow_once'),
      ...(card.alwaysLabel ? [button('allow-always', card.alwaysLabel, 'allow_always')] : []),
      button('deny', 'Deny', 'deny'),
    ]),
    reason,
  ]);
}
