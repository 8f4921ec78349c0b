/**
 * The chat's last exchange as it happened, kept by the extension so a reloaded webview gets it
 * back: its events in order, the turns it started, its user's delegations (pure).
 */

import { sameWorkspace } from '../common/host';
import type { DelegationParams, SessionDetail } from '../protocol/types';
import type { ChatEvent } from './messages';
import { keptInHistory } from './transcript';

export class LiveExchange {
  readonly events: ChatEvent[] = [];
  readonly turns = new Set<string>();

  constructor(readonly workspace: string) {}

  record(event: ChatEvent): void {
    this.events.push(event);
  }

  /** Each notification carries the whole state: a replay needs only the latest one per delegation, in its place. */
  recordDelegation(params: DelegationParams): ChatEvent {
    const event: ChatEvent = { type: 'delegation', params };
    const index = this.events.findIndex((e) => e.type === 'delegation' && e.params.tool_use_id === params.tool_use_id);
    if (index < 0) this.events.push(event);
    else this.events[index] = event;
    return event;
  }

  knowsDelegation(toolUseId: string): boolean {
    return this.events.some((e) => e.type === 'delegation' && e.params.tool_use_id === toolUseId);
  }

  /**
   * Whether a reload of `workspace` replays this exchange: not for another folder, and not for a
   * finished `/delegate`, which the session's history has (it is rebuilt from there, not shown twice).
   */
  replaysIn(workspace: string): boolean {
    return sameWorkspace(this.workspace, workspace)
      && !this.events.some((e) => e.type === 'result' && keptInHistory(e.result));
  }

  /**
   * Whether the session holds a turn after this exchange's own: another window's, sent in the
   * shared session once this one had ended. Replayed after the transcript, it would show above it.
   */
  supersededIn(detail: SessionDetail): boolean {
    const own = detail.turns.filter((t) => this.turns.has(t.id)).map((t) => t.index);
    if (own.length === 0) return false;
    const last = Math.max(...own);
    return detail.turns.some((t) => t.index > last && !this.turns.has(t.id));
  }

  /** The turns and the user's delegations the replay shows: the transcript before it leaves them out. */
  shownIds(): Set<string> {
    const delegations = this.events.flatMap((e) => (e.type === 'delegation' && e.params.turn_id === null
      ? [e.params.tool_use_id] : []));
    return new Set([...this.turns, ...delegations]);
  }
}
