/** Formatting shared by the status bar, QuickPick, chat and transcripts. */

import type { ModelInfo } from '../protocol/types';

/** `"0.0412"` → `$0.041`; `"0.6"` → `$0.60`; `"12.5"` → `$12.50`; `"0"` → `$0.00`. */
export function formatUsd(value: string | null | undefined): string {
  const amount = Number(value ?? 0);
  if (!Number.isFinite(amount) || amount === 0) return '$0.00';
  if (Math.abs(amount) >= 1) return `$${amount.toFixed(2)}`;
  // Two significant digits, but cents stay two digits: $0.60, not $0.6.
  const rounded = Number(amount.toPrecision(2));
  return Math.abs(rounded) >= 0.1 ? `$${rounded.toFixed(2)}` : `$${rounded.toString()}`;
}

/**
 * A cost and the part of it Switchman estimated (calls cut short before the provider reported
 * usage), each said once: `amount` is `$0.041`, or `~$0.041` when all of it is estimated; `note`
 * follows it: ` (~$0.0019 estimated)` when part is, ` (estimated)` when all is, `` when none is.
 * `why` is added after the word estimated (`: calls cut short`); `ofWhich` words the partial note as
 * `/cost` does: ` (of which ~$0.0019 estimated)`.
 */
export function costParts(totalUsd: string | number | null | undefined, estimatedUsd: string | number | null | undefined,
  { why = '', ofWhich = false }: CostWording = {}): { amount: string; note: string } {
  const total = formatUsd(String(totalUsd ?? 0));
  const estimated = Number(estimatedUsd ?? 0) || 0;
  if (estimated <= 0) return { amount: total, note: '' };
  // all of it: the estimate covers the whole cost (to the micro-dollar the daemon counts in)
  if (estimated >= (Number(totalUsd ?? 0) || 0) - 1e-7) return { amount: `~${total}`, note: ` (estimated${why})` };
  return { amount: total, note: ` (${ofWhich ? 'of which ' : ''}~${formatUsd(String(estimated))} estimated${why})` };
}

export interface CostWording {
  why?: string;
  ofWhich?: boolean;
}

/** {@link costParts} on one line: `$0.041 (~$0.0019 estimated)`, `~$0.0019 (estimated)`, `$0.041`. */
export function formatCost(totalUsd: string | number | null | undefined, estimatedUsd: string | number | null | undefined,
  wording: CostWording = {}): string {
  const { amount, note } = costParts(totalUsd, estimatedUsd, wording);
  return amount + note;
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

/**
 * A time as people read it, to the minute and in UTC (as the daemon records it): `2026-11-24 23:38 UTC`, not
 * the record's `2026-11-24T23:38:17.383000Z`. Anything that does not read as a time is shown as it came.
 */
export function readableTime(iso: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2}(?:\.\d+)?)?(?:Z|\+00:00)$/.exec(iso);
  return match ? `${match[1]} ${match[2]} UTC` : iso;
}
