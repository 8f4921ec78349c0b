/**
 * A turn's banner as the chat shows it: its lines (the daemon writes one notice a line) and, for the
 * pattern store's suggestion (`pattern_disagreement.surface`), buttons that send `/route override` or
 * `/route ignore` in place of the lines telling the user to type them.
 */

import { shortModelName } from '../common/format';
import { SlashCommands } from '../protocol/methods';

export interface BannerAction {
  /** The chat message the button sends, exactly as if typed. */
  command: string;
  label: string;
  title: string;
}

export interface BannerView {
  lines: string[];
  actions: BannerAction[];
}

const OVERRIDE_LINE = /^\/route override to use (\S+) for this turn$/;
const IGNORE_LINE = /^\/route ignore to dismiss$/;

/**
 * Split `banner` into its lines; the two `/route` lines become buttons when `actionable` (the
 * daemon acts on the suggestion of the session's last turn only, once it has ended) and are left
 * out otherwise (an older turn's suggestion can no longer be taken).
 */
export function bannerView(banner: string, actionable: boolean): BannerView {
  const lines: string[] = [];
  const actions: BannerAction[] = [];
  for (const line of banner.split('\n')) {
    const override = OVERRIDE_LINE.exec(line.trim());
    if (override) {
      if (actionable) {
        actions.push({ command: SlashCommands.routeOverride, label: `Use ${shortModelName(override[1])} for this turn`,
          title: `Send the message again on ${override[1]} (/route override)` });
      }
    } else if (IGNORE_LINE.test(line.trim())) {
      if (actionable) {
        actions.push({ command: SlashCommands.routeIgnore, label: 'Dismiss',
          title: 'Keep this answer and tell the pattern store (/route ignore)' });
      }
    } else if (line.trim()) {
      lines.push(line);
    }
  }
  return { lines, actions };
}
