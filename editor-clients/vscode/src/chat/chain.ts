/** "Why this model?" as rows of a table: one per policy of the routing chain (pure). */

import { plural, shortModelName } from '../common/format';
import type { ExplainResult, PolicyEvaluation } from '../protocol/types';

export interface ChainRow {
  /** The policy in words, e.g. `Configured rule "fast for commits"`. */
  policy: string;
  verdict: PolicyEvaluation['verdict'];
  /** The verdict in words: `chose`, `rejected`, `skipped`, `deferred`. */
  verdictLabel: string;
  /** The candidate's short name, or null. */
  model: string | null;
  reason: string;
  winner: boolean;
}

export interface Explanation {
  /** `Chose claude-haiku-4-5`, or why nothing could be chosen. */
  headline: string;
  rows: ChainRow[];
  /** The daemon's full text (the fallback without a decision, and the copyable version). */
  text: string;
}

const POLICY_NAMES: Record<string, string> = {
  PER_MESSAGE_OVERRIDE: '@alias in the message',
  MANUAL_STICKY: 'Sticky model',
  CONFIGURED_RULES: 'Configured rule',
  PATTERN_RECOMMENDATION: 'Pattern recommendation',
  DELEGATE_REQUEST: 'Delegation tier',
  WORKSPACE_DEFAULT: 'Workspace default',
  GLOBAL_DEFAULT: 'Global default',
};

const VERDICT_LABELS: Record<PolicyEvaluation['verdict'], string> = {
  chose: 'chose', rejected: 'rejected', deferred: 'deferred', not_applicable: 'skipped',
};

export function policyName(evaluation: PolicyEvaluation): string {
  const name = POLICY_NAMES[evaluation.policy] ?? evaluation.policy;
  return evaluation.rule_name ? `${name} "${evaluation.rule_name}"` : name;
}

/** A learned pattern's other scored models (the daemon's "also scored" line), for its row. */
function alsoScored(evaluation: PolicyEvaluation): string {
  const others = evaluation.pattern_alternatives ?? [];
  if (evaluation.policy !== 'PATTERN_RECOMMENDATION' || others.length === 0) return '';
  return `; also scored: ${others.map((o) => `${shortModelName(o.model)} ${o.score.toFixed(3)} (${plural(o.sample_size, 'sample')})`).join(' · ')}`;
}

export function explanationView(result: ExplainResult): Explanation {
  const text = result.text ?? 'No routing decision was recorded for this turn.';
  const decision = result.decision;
  if (!decision) return { headline: text, rows: [], text };
  const rows = decision.chain.map((evaluation, index): ChainRow => ({
    policy: policyName(evaluation),
    verdict: evaluation.verdict,
    verdictLabel: VERDICT_LABELS[evaluation.verdict] ?? evaluation.verdict,
    model: evaluation.candidate_model ? shortModelName(evaluation.candidate_model) : null,
    reason: evaluation.reason + alsoScored(evaluation),
    winner: index === decision.winner_index,
  }));
  const headline = decision.chosen_model
    ? `Chose ${shortModelName(decision.chosen_model)}${result.summary ? ` · ${result.summary}` : ''}`
    : 'No model could take this turn';
  return { headline, rows, text };
}

/** An explanation that is only a message (the request failed). */
export function explanationMessage(message: string): Explanation {
  return { headline: message, rows: [], text: message };
}
