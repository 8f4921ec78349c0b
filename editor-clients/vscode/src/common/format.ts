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

export type UsdValue = string | number | null | undefined;

/**
 * Amounts shown together (one line, one card), each with as many decimals as the one that needs
 * most, as `/cost` shows its amounts: alone, `0` reads `$0.00` and `0.00004` reads `$0.00004`, and side
 * by side that looked like two kinds of number (was the first rounded away?). Together they read
 * `$0.00000` and `$0.00004`; `$0.01` and `$0.25` stay as they are.
 */
export function formatUsds(values: readonly UsdValue[]): string[] {
  const alone = values.map((v) => formatUsd(v === null || v === undefined ? v : String(v)));
  const places = Math.max(0, ...alone.map(decimalsOf));
  return values.map((v, i) => {
    const amount = Number(v ?? 0);
    return Number.isFinite(amount) ? `$${amount.toFixed(places)}` : alone[i];
  });
}

function decimalsOf(shown: string): number {
  const dot = shown.indexOf('.');
  return dot < 0 ? 0 : shown.length - dot - 1;
}

/**
 * A cost and the part of it Switchman estimated (calls cut short before the provider reported
 * usage), each said once: `amount` is `$0.041`, or `~$0.041` when all of it is estimated; `note`
 * follows it: ` (~$0.0019 estimated)` when part is, ` (estimated)` when all is, `` when none is.
 * `why` is added after the word estimated (`: calls cut short`); `ofWhich` words the partial note as
 * `/cost` does: ` (of which ~$0.0019 estimated)`. The amounts share their decimals ({@link formatUsds}),
 * also with `alongside`, amounts shown with them (`others`, in their order).
 */
export function costParts(totalUsd: UsdValue, estimatedUsd: UsdValue,
  { why = '', ofWhich = false, alongside = [] }: CostWording = {}): { amount: string; note: string; others: string[] } {
  const estimated = Number(estimatedUsd ?? 0) || 0;
  const [total, part, ...others] = formatUsds([totalUsd ?? 0, estimated > 0 ? estimated : 0, ...alongside]);
  if (estimated <= 0) return { amount: total, note: '', others };
  // all of it: the estimate covers the whole cost (to the micro-dollar the daemon counts in)
  if (estimated >= (Number(totalUsd ?? 0) || 0) - 1e-7) return { amount: `~${total}`, note: ` (estimated${why})`, others };
  return { amount: total, note: ` (${ofWhich ? 'of which ' : ''}~${part} estimated${why})`, others };
}

export interface CostWording {
  why?: string;
  ofWhich?: boolean;
  /** Amounts shown beside the cost, formatted with the same decimals (`others`). */
  alongside?: readonly UsdValue[];
}

/** {@link costParts} on one line: `$0.041 (~$0.0019 estimated)`, `~$0.0019 (estimated)`, `$0.041`. */
export function formatCost(totalUsd: UsdValue, estimatedUsd: UsdValue,
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
