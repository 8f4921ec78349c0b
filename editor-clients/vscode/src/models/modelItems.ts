/** The QuickPick of models: `switchman/models` in, items out (pure; the picker maps them to VS Code). */

import { formatUsd } from '../common/format';
import type { PickerEntry } from '../common/picker';
import type { ModelInfo, ModelsResult, PendingSwap } from '../protocol/types';

/** A model row (its value: the model id to pin, null to follow the routing rules) or a provider heading. */
export type ModelPickItem = PickerEntry<string | null>;

const AVAILABILITY: Record<ModelInfo['availability'], string> = {
  healthy: '$(check) available',
  degraded: '$(warning) degraded (recent failures)',
  unavailable: '$(error) unavailable right now',
};

/** What a pending change's row says (`pending`: the swap queued behind a running turn, from the status). */
const PENDING = 'pending: applies when the running turn ends';

export function modelPickItems(result: ModelsResult, pending: PendingSwap | null = null): ModelPickItem[] {
  const items: ModelPickItem[] = [clearItem(result.sticky_model, pending)];
  let provider = '';
  for (const model of result.models) {
    if (model.provider !== provider) {
      provider = model.provider;
      items.push({ kind: 'separator', label: provider });
    }
    items.push(modelItem(model, result.sticky_model === model.id, pending?.model === model.id));
  }
  return items;
}

/** The picker's first row, which clears the sticky model. */
export const FOLLOW_RULES = 'Follow my routing rules';

/**
 * What the status bar says once a model chosen in the picker is sticky: how to undo it in the
 * picker (the daemon's own message only knows `/model`, which the user did not use).
 */
export function stickySetMessage(model: string): string {
  return `Sticky model set: ${model}. Your rules are skipped until you choose "${FOLLOW_RULES}" in the model picker `
    + '(click Switchman in the status bar) or run /model - in the chat.';
}

function clearItem(sticky: string | null, pending: PendingSwap | null): ModelPickItem {
  let description = sticky ? 'clear the sticky model' : 'current';
  if (pending && pending.model === null) description = PENDING;
  else if (pending && !sticky) description = 'current · choose it to drop the pending change';
  return {
    kind: 'choice',
    label: `$(circle-slash) ${FOLLOW_RULES}`,
    description,
    detail: 'Each message goes to the model your rules choose.',
    value: null,
    current: sticky === null,
  };
}

function modelItem(model: ModelInfo, current: boolean, pending = false): ModelPickItem {
  const aliases = model.aliases.map((a) => `@${a}`).join(' ');
  return {
    kind: 'choice',
    label: `${current ? '$(pinned) ' : ''}${model.display_name}`,
    description: [model.id, aliases, current ? 'sticky' : '', pending ? PENDING : ''].filter(Boolean).join('  '),
    detail: modelDetail(model),
    value: model.id,
    current,
  };
}

export function modelDetail(model: ModelInfo): string {
  const parts: string[] = [];
  parts.push(model.configured ? AVAILABILITY[model.availability] : '$(key) not configured: set the provider\'s API key');
  if (model.tier) parts.push(`tier ${model.tier}`);
  if (model.pricing) {
    parts.push(`${formatUsd(model.pricing.input)} in / ${formatUsd(model.pricing.output)} out per 1M tokens`);
  }
  return parts.join(' · ');
}
