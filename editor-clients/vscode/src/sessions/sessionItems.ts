/** How a session looks in the Sessions view (pure). */

import { formatUsd, plural, shortModelName } from '../common/format';
import type { Session } from '../protocol/types';

export interface SessionItemView {
  label: string;
  description: string;
  tooltip: string;
  icon: 'comment-discussion' | 'person' | 'star-full';
  hasChildren: boolean;
}

export function sessionItemView(session: Session, isCurrent: boolean, now: Date = new Date()): SessionItemView {
  const model = session.last_model ? shortModelName(session.last_model) : 'no turns yet';
  const parts = [model, formatUsd(session.cost_usd), relativeTime(session.updated_at, now)];
  if (isCurrent) parts.unshift('current');
  return {
    label: session.title.trim() || (session.is_worker ? 'Worker session' : 'New chat'),
    description: parts.join(' · '),
    tooltip: [
      session.title || '(no messages yet)',
      `${plural(session.turn_count, 'turn')} · ${formatUsd(session.cost_usd)}${session.workers?.length ? ' including workers' : ''}`,
      session.sticky_model ? `Sticky model: ${session.sticky_model}` : 'No sticky model',
      `Updated ${session.updated_at}`,
      `Session ${session.id}`,
    ].join('\n'),
    icon: session.is_worker ? 'person' : isCurrent ? 'star-full' : 'comment-discussion',
    hasChildren: (session.workers?.length ?? 0) > 0,
  };
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
  return `${title || 'session'}.md`;
}
