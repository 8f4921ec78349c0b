/** How a session looks in the Sessions view (pure). */

import { DELEGATION_LABELS, waitsToStart } from '../chat/delegations';
import { costParts, plural, readableTime, shortModelName, type UsdValue } from '../common/format';
import type { DelegationParams, Session } from '../protocol/types';

export interface SessionItemView {
  label: string;
  description: string;
  tooltip: string;
  icon: 'comment-discussion' | 'person' | 'star-full' | 'error';
  hasChildren: boolean;
}

/**
 * `alongside`: the costs of the sessions listed with it (its level of the view), whose decimals its cost shares
 * (as `formatUsds` gives them): `$0.00000` beside `$0.00004`, not `$0.00`.
 */
export function sessionItemView(session: Session, isCurrent: boolean, now: Date = new Date(),
  alongside: readonly UsdValue[] = []): SessionItemView {
  const model = session.last_model ? shortModelName(session.last_model) : 'no turns yet';
  // an estimate (calls cut short before the provider reported usage) is not shown as the bill
  const { amount, note } = costParts(session.cost_usd, session.estimated_usd, { alongside });
  const parts = [model, amount + note, relativeTime(session.updated_at, now)];
  if (isCurrent) parts.unshift('current');
  // a worker whose delegation did not end well (or has not ended) says so first: "done" goes without saying
  const ended = session.is_worker && session.delegation_status ? DELEGATION_LABELS[session.delegation_status] : null;
  const went = session.delegation_status !== 'completed' ? ended : null;
  if (went) parts.unshift(went);
  return {
    label: session.title.trim() || (session.is_worker ? 'Worker session' : 'New chat'),
    description: parts.join(' · '),
    tooltip: [
      session.title || '(no messages yet)',
      ...(ended ? [`Delegation ${ended}`] : []),
      `${plural(session.turn_count, 'turn')} · ${amount}${session.workers?.length ? ' including workers' : ''}${note}`,
      session.sticky_model ? `Sticky model: ${session.sticky_model}` : 'No sticky model',
      `Updated ${readableTime(session.updated_at)}`,
      `Session ${session.id}`,
    ].join('\n'),
    icon: session.is_worker ? (session.delegation_status === 'failed' ? 'error' : 'person')
      : isCurrent ? 'star-full' : 'comment-discussion',
    hasChildren: (session.workers?.length ?? 0) > 0,
  };
}

/**
 * A planner's delegation waiting for a free worker slot, then (its worker may change things) for the user's
 * approval to start: no worker session yet, so an item of its own.
 */
export interface QueuedItemView {
  label: string;
  description: string;
  tooltip: string;
}

export function queuedItemView(update: DelegationParams): QueuedItemView {
  const asking = update.status === 'awaiting_approval';
  const place = update.queue ? `#${update.queue.position} in line` : 'waiting';
  return {
    label: update.task.split('\n', 1)[0].trim() || 'Queued worker',
    description: asking ? `${update.tier} · awaiting approval` : `${update.tier} · queued · ${place}`,
    tooltip: [update.task, update.detail ?? (asking ? 'waiting for your approval to start' : 'waiting for a free worker'),
      `Delegation ${update.tool_use_id}`].join('\n'),
  };
}

/**
 * The delegations now waiting to start (for a worker slot, then for approval), by planner session, folded from
 * `switchman/delegation` (a waiting one has no worker session for `switchman/sessions` to list; it is listed
 * once it starts, when this lets it go).
 */
export class QueuedDelegations {
  private readonly byPlanner = new Map<string, Map<string, DelegationParams>>();

  /** Fold one notification; true when what is queued changed. */
  apply(update: DelegationParams): boolean {
    const waiting = this.byPlanner.get(update.session_id);
    if (!waitsToStart(update.status)) {
      if (!waiting?.delete(update.tool_use_id)) return false;
      if (waiting.size === 0) this.byPlanner.delete(update.session_id);
      return true;
    }
    const planner = waiting ?? new Map<string, DelegationParams>();
    planner.set(update.tool_use_id, update);
    this.byPlanner.set(update.session_id, planner);
    return true;
  }

  /** A planner's waiting delegations, next to start first (those awaiting approval have their slot). */
  of(plannerSessionId: string): DelegationParams[] {
    return [...(this.byPlanner.get(plannerSessionId)?.values() ?? [])]
      .sort((a, b) => (a.queue?.position ?? 0) - (b.queue?.position ?? 0));
  }

  clear(): void {
    this.byPlanner.clear();
  }
}

export function relativeTime(iso: string, now: Date): string {
  const seconds = Math.max(0, (now.getTime() - new Date(iso).getTime()) / 1000);
  if (!Number.isFinite(seconds)) return iso;
  if (seconds < 60) return 'just now';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.floor(seconds / 3600)} h ago`;
  return `${Math.floor(seconds / 86400)} d ago`;
}

/** The title of a transcript tab, safe as a file name. */
export function transcriptFileName(session: Session): string {
  const title = (session.title.trim() || 'session').replace(/[\\/:*?"<>|\s]+/g, ' ').slice(0, 60).trim();
  // a title that already ends in a Markdown file's name ("Summarise README.md") keeps it as the extension
  return /.\.md$/i.test(title) ? title : `${title || 'session'}.md`;
}
