/** What a workspace's agent-profile status bar item says (next to the model): `switchman/status` in. */

import type { ActiveProfile, StatusParams } from '../protocol/types';
import { profileOrigin } from '../profiles/profileItems';
import type { StatusContext, StatusView } from './statusText';

/** The profile item's view; hidden (empty text) while there is no status or the daemon has no profiles. */
export function profileStatusView(status: StatusParams | undefined, context: StatusContext): StatusView {
  const profile: ActiveProfile | null | undefined = status?.profile;
  if (!profile || context.connection === 'failed' || context.connection === 'stopped') {
    return { text: '', tooltip: '', background: undefined, command: 'switchman.setProfile', accessibilityLabel: '' };
  }
  const chosen = profile.resolved_from === 'session';
  return {
    text: `${chosen ? '$(person-filled)' : '$(person)'} ${profile.name}`,
    tooltip: [`**Switchman agent profile** — ${context.folderName}`, '', profileOrigin(profile), '',
      'Click to choose a profile.'].join('  \n'),
    background: undefined,
    command: 'switchman.setProfile',
    accessibilityLabel: `Switchman agent profile for ${context.folderName}: ${profile.name}`,
  };
}
