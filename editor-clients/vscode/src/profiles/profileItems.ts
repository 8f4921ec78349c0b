/** The agent-profile QuickPick's items (pure): every profile, the one in force marked, and "use the default". */

import type { PickerChoice } from '../common/picker';
import type { ActiveProfile, ProfileInfo, ProfileSource, ProfilesResult } from '../protocol/types';

/** A profile row; its value is the profile to set, null to clear the session's choice. */
export type ProfilePickItem = PickerChoice<string | null>;

const FROM: Record<ProfileSource, string> = {
  session: 'chosen for this session',
  workspace: "the workspace's default",
  global: 'the global default',
};

/** A bounded profile's description in the picker (its detail names the bound, its tools and approval). */
const BOUNDED = 'bounded: the tools and approval your default leaves it';

/** How the profile in force came to be, in words (`reviewer — chosen for this session`), and what bounds it. */
export function profileOrigin(active: ActiveProfile): string {
  const bound = active.bounded_by ? `, ${boundedBy(active.bounded_by)}` : '';
  return `${active.name} — ${FROM[active.resolved_from] ?? active.resolved_from}${bound}`;
}

/** A workspace default bounded by the user's global default profile, in words. */
export function boundedBy(name: string): string {
  return `bounded by your default '${name}'`;
}

export function profilePickItems(result: ProfilesResult): ProfilePickItem[] {
  const items = result.profiles.map((p): ProfilePickItem => ({
    kind: 'choice',
    label: `${p.name === result.active.name ? '$(check) ' : ''}${p.name}`,
    // bounded, its own description ("every tool, …") would contradict the bound the detail shows
    description: [p.source, p.bounded_by ? BOUNDED : p.description].filter((s) => s).join(' · '),
    detail: profileDetail(p),
    value: p.name,
    current: p.name === result.active.name,
  }));
  if (result.active.resolved_from === 'session') {
    items.unshift({ kind: 'choice', label: '$(discard) Use the default profile', description: 'clear this session\'s choice',
      value: null, current: false });
  }
  return items;
}

function profileDetail(profile: ProfileInfo): string {
  const policy = profile.model_policy;
  const model = policy.model ?? (policy.tier ? `tier ${policy.tier}` : 'your routing rules');
  const approval = profile.approval === 'read_only' ? ' · read-only' : '';
  const effort = policy.effort ? ` · effort ${policy.effort}` : '';
  // a bounded workspace default: its tools and approval are what it is left, the bound first (a long line is cut)
  const bound = profile.bounded_by ? `$(shield) ${boundedBy(profile.bounded_by)} · ` : '';
  return `${bound}model: ${model}${effort} · tools: ${profile.tools.join(', ') || 'none'}${approval}`;
}
