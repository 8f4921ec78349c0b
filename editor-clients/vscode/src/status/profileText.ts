/** What a workspace's agent-profile status bar item says (next to the model): `switchman/status` in. */

import type { ActiveProfile, StatusParams } from '../protocol/types';
import { boundedBy, profileOrigin } from '../profiles/profileItems';
import type { StatusContext, StatusView } from './statusText';

/** The profile item's view; hidden (empty text) while there is no status or the daemon has no profiles. */
export function profileStatusView(status: StatusParams | undefined, context: StatusContext): StatusView {
  const profile: ActiveProfile | null | undefined = status?.profile;
  if (!profile || context.connection === 'failed' || context.connection === 'stopped') {
    return { text: '', tooltip: '', background: undefined, command: 'switchman.setProfile', accessibilityLabel: '' };
  }
  const chosen = profile.resolved_from === 'session';
  const icon = profile.bounded_by ? '$(shield)' : chosen ? '$(person-filled)' : '$(person)';
  return {
    text: `${icon} ${profile.name}`,
    tooltip: [`**Switchman agent profile** — ${context.folderName}`, '', profileOrigin(profile), ...boundLines(profile), '',
      'Click to choose a profile.'].join('  \n'),
    background: undefined,
    command: 'switchman.setProfile',
    accessibilityLabel: `Switchman agent profile for ${context.folderName}: ${profile.name}`
      + (profile.bounded_by ? `, ${boundedBy(profile.bounded_by)}` : ''),
  };
}

/** What a bounded workspace default is left, and what it loses, for the tooltip (nothing when it is not bounded). */
function boundLines(profile: ActiveProfile): string[] {
  if (!profile.bounded_by) return [];
  const approval = profile.approval === 'read_only' ? ' · read-only' : '';
  const lines = ['', `Tools: ${profile.tools?.join(', ') || 'none'}${approval}`];
  if (profile.tools_left_out?.length) lines.push(`Left out: ${profile.tools_left_out.join(', ')}`);
  return lines;
}
