/** The agent-profile QuickPick's items (pure): every profile, the one in force marked, and "use the default". */

import type { ActiveProfile, ProfileInfo, ProfileSource, ProfilesResult } from '../protocol/types';

export interface ProfilePickItem {
  label: string;
  description?: string;
  detail?: string;
  /** The profile to set; null clears the session's choice. */
  profile: string | null;
  current: boolean;
}

const FROM: Record<ProfileSource, string> = {
  session: 'chosen for this session',
  workspace: "the workspace's default",
  global: 'the global default',
};

/** How the profile in force came to be, in words (`reviewer — chosen for this session`). */
export function profileOrigin(active: ActiveProfile): string {
  return `${active.name} — ${FROM[active.resolved_from] ?? active.resolved_from}`;
}

export function profilePickItems(result: ProfilesResult): ProfilePickItem[] {
  const items = result.profiles.map((p): ProfilePickItem => ({
    label: `${p.name === result.active.name ? '$(check) ' : ''}${p.name}`,
    description: [p.source, p.description].filter((s) => s).join(' · '),
    detail: profileDetail(p),
    profile: p.name,
    current: p.name === result.active.name,
  }));
  if (result.active.resolved_from === 'session') {
    items.unshift({ label: '$(discard) Use the default profile', description: 'clear this session\'s choice',
      profile: null, current: false });
  }
  return items;
}

function profileDetail(profile: ProfileInfo): string {
  const policy = profile.model_policy;
  const model = policy.model ?? (policy.tier ? `tier ${policy.tier}` : 'your routing rules');
  const approval = profile.approval === 'read_only' ? ' · read-only' : '';
  return `model: ${model} · tools: ${profile.tools.join(', ') || 'none'}${approval}`;
}
