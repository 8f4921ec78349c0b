/** Formatting shared by the status bar, QuickPick, chat and transcripts. */

import type { ModelInfo } from '../protocol/types';

/** `"0.0412"` → `$0.041`; `"12.5"` → `$12.50`; `"0"` → `$0.00`. */
export function formatUsd(value: string | null | undefined): string {
  const amount = Number(value ?? 0);
  if (!Number.isFinite(amount) || amount === 0) return '$0.00';
  if (Math.abs(amount) >= 1) return `$${amount.toFixed(2)}`;
  return `$${Number(amount.toPrecision(2)).toString()}`;
}

/** The short name of a model: its first alias, else the part after `provider:`. */
export function shortModelName(id: string, models?: Map<string, ModelInfo>): string {
  const info = models?.get(id);
  if (info && info.aliases.length > 0) return info.aliases[0];
  const colon = id.indexOf(':');
  return colon >= 0 ? id.slice(colon + 1) : id;
}

export function modelIndex(models: ModelInfo[]): Map<string, ModelInfo> {
  return new Map(models.map((m) => [m.id, m]));
}

export function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}
