/** The always-allowed tools as QuickPick items (pure; the command is in trustCommands.ts). */

import { sameWorkspace, type Folder } from '../common/host';
import type { TrustResult } from '../protocol/types';

export interface TrustItem {
  label: string;
  description: string;
  detail: string;
  workspace: string;
  tool: string;
}

/** One item per always-allowed tool; open folders first, each named as VS Code names it. */
export function trustItems(result: TrustResult, folders: Folder[]): TrustItem[] {
  const items: TrustItem[] = [];
  const open = (uri: string) => folders.find((f) => sameWorkspace(f.uri, uri));
  const entries = [...result.trusted].sort((a, b) => Number(!open(a.workspace)) - Number(!open(b.workspace)));
  for (const entry of entries) {
    const folder = open(entry.workspace);
    for (const tool of entry.tools) {
      items.push({
        label: tool, description: folder ? folder.name : `${decodeURIComponent(entry.workspace.replace(/^file:\/\//, ''))} (not open)`,
        detail: tool === 'apply_code' ? 'Apply puts code blocks into files without asking' : `${tool} runs without asking`,
        workspace: entry.workspace, tool,
      });
    }
  }
  return items;
}

/** What to tell the user when there is nothing to pick: the daemon's problem with `trust.json`, if any, first. */
export function emptyTrustMessage(result: TrustResult): { text: string; warn: boolean } {
  const none = 'no tool is always allowed. Switchman asks before every change and command.';
  return result.problem ? { text: `Switchman: ${result.problem}`, warn: true } : { text: `Switchman: ${none}`, warn: false };
}
