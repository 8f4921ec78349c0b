/** The handoff envelope of a worker (spec 004) as a few labelled lines for the worker's view (pure). */

import { formatUsds, plural, shortModelName } from '../common/format';
import type { HandoffEnvelope } from '../protocol/types';

export interface HandoffLine {
  label: string;
  value: string;
}

const FROM: Record<string, string> = { session: 'chosen', workspace: 'workspace default', global: 'global default' };

function profile(p: { name: string; resolved_from: string }): string {
  return `${p.name} (${FROM[p.resolved_from] ?? p.resolved_from})`;
}

/** The worker by the tier it runs on: `balanced worker (deep, capped by the tier floor)` when the floor lowered the
 * one asked for; `deep worker` otherwise and in records from before `worker_tier`. */
function worker(target: HandoffEnvelope['target']): string {
  const runs = target.worker_tier ?? target.tier;
  return runs === target.tier ? `${runs} worker` : `${runs} worker (${target.tier}, capped by the tier floor)`;
}

/** Who handed what to whom, with which tools, models and limits. */
export function handoffLines(envelope: HandoffEnvelope): HandoffLine[] {
  const scope = envelope.capability_scope;
  const policy = envelope.model_policy;
  const source = envelope.reason === 'user_delegate'
    ? `you (/delegate), profile ${profile(envelope.source.profile)}`
    : `planner on ${shortModelName(envelope.source.model)}, profile ${profile(envelope.source.profile)}`;
  const models = Object.entries(policy.tiers).map(([tier, model]) => `${tier}: ${shortModelName(model)}`).join(', ');
  const limits = [`timeout ${envelope.budget.timeout_seconds}s`];
  if (envelope.budget.max_tokens !== null) limits.push(`max ${envelope.budget.max_tokens} output tokens`);
  const lines: HandoffLine[] = [
    { label: 'From', value: source },
    { label: 'To', value: `${worker(envelope.target)}, profile ${profile(envelope.target.profile)}` },
    { label: 'Tools', value: `${scope.tools.join(', ') || 'none'}${scope.approval === 'read_only' ? ' (read-only)' : ''}`
      + (scope.approval_required ? ' · approved by you' : '') },
    { label: 'Models', value: policy.profile_model ? `${shortModelName(policy.profile_model)} first; ${models}` : models },
    { label: 'Context', value: contextOf(envelope) },
    { label: 'Limits', value: limits.join(' · ') },
    // Not a limit: what had been spent when the task was handed over.
    { label: 'Spent', value: spent(envelope) },
  ];
  if (scope.dropped_tools.length > 0) lines.push({ label: 'Dropped', value: scope.dropped_tools.join(', ') });
  // Named by the planner, not given (it lacks them, or the worker's profile forbids them).
  const withheld = Object.entries(scope.withheld_tools ?? {});
  if (withheld.length > 0) {
    lines.push({ label: 'Withheld', value: withheld.map(([name, why]) => `${name} (${why})`).join('; ') });
  }
  return lines;
}

/** `$0.01 in the session, $0.25 today, before the handoff`; both with the same decimals (`$0.00000` beside `$0.00004`). */
function spent(envelope: HandoffEnvelope): string {
  const [session, today] = formatUsds([envelope.budget.planner_session_cost_usd, envelope.budget.cost_today_usd]);
  return `${session} in the session, ${today} today, before the handoff`;
}

function contextOf(envelope: HandoffEnvelope): string {
  const count = envelope.input.context.include?.length ?? 0;
  const refs = envelope.input.context.mode === 'minimal' || count === 0 ? 'the task only' : plural(count, 'reference');
  return envelope.input.output_schema ? `${refs}; answers with JSON (a schema)` : refs;
}
