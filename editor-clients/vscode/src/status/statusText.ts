/** What a workspace's status bar item says: `switchman/status` in, text / tooltip / colour out. */

import { formatCost, plural, shortModelName } from '../common/format';
import type { ConnectionState } from '../common/host';
import type { ModelInfo, StatusParams } from '../protocol/types';

export interface StatusView {
  text: string;
  /** Markdown. */
  tooltip: string;
  background: 'warning' | 'error' | undefined;
  command: 'switchman.setModel' | 'switchman.setProfile' | 'switchman.restartServer' | 'switchman.showOutput';
  accessibilityLabel: string;
}

export interface StatusContext {
  folderName: string;
  /** More than one folder is open: prefix the folder's name. */
  multiRoot: boolean;
  connection: ConnectionState;
  models?: Map<string, ModelInfo>;
}

export function statusView(status: StatusParams | undefined, context: StatusContext): StatusView {
  if (context.connection === 'failed' || context.connection === 'stopped') return stoppedView(context);
  if (!status) return startingView(context);
  const name = (id: string | null) => (id ? shortModelName(id, context.models) : 'auto');
  const shown = status.sticky_model ?? status.active_model;
  let text = `${statusIcon(status)} ${prefix(context)}${name(shown)}`;
  if (status.pending_swap) text += ` → ${name(status.pending_swap.model)}`;
  if (status.banners.length > 0 || status.config_errors > 0) text += ' $(warning)';
  return {
    text,
    tooltip: statusTooltip(status, context),
    background: status.config_errors > 0 ? 'error' : status.banners.length > 0 ? 'warning' : undefined,
    command: 'switchman.setModel',
    accessibilityLabel: accessibilityLabel(status, context, name(shown), status.pending_swap ? name(status.pending_swap.model) : null),
  };
}

/**
 * What a screen reader says: the model and everything the icon and colour show (a running turn, a
 * queued change, configuration errors, notices), which it cannot see.
 */
function accessibilityLabel(status: StatusParams, context: StatusContext, model: string, next: string | null): string {
  const parts = [`Switchman model for ${context.folderName}: ${model}${status.sticky_model ? ' (sticky)' : ''}`];
  if (status.turn_in_flight) parts.push('a turn is running');
  if (next) parts.push(`switches to ${next} when it ends`);
  if (status.config_errors > 0) parts.push(`${plural(status.config_errors, 'error')} in the configuration files`);
  if (status.banners.length > 0) parts.push(plural(status.banners.length, 'notice'));
  return parts.join('; ');
}

function statusIcon(status: StatusParams): string {
  if (status.turn_in_flight) return '$(loading~spin)';
  return status.sticky_model ? '$(pinned)' : '$(hubot)';
}

function prefix(context: StatusContext): string {
  return context.multiRoot ? `${context.folderName}: ` : '';
}

export function statusTooltip(status: StatusParams, context: StatusContext): string {
  const lines = [`**Switchman** — ${context.folderName}`, ''];
  if (status.sticky_model) {
    lines.push(`Sticky model: \`${status.sticky_model}\` (your rules are skipped)`);
  } else {
    lines.push('Sticky model: none — routing follows your rules');
  }
  if (status.active_model) {
    lines.push(`${status.turn_in_flight ? 'Answering now' : 'Last turn'}: \`${status.active_model}\``);
  }
  if (status.pending_swap) {
    const next = status.pending_swap.model ? `\`${status.pending_swap.model}\`` : 'your rules';
    lines.push(`Pending: switches to ${next} when the running turn ends`);
  }
  // the part estimated for calls cut short worded as /cost words it
  lines.push(`Spent today: ${formatCost(status.cost_today_usd, status.estimated_today_usd, { why: ': calls cut short', ofWhich: true })}`);
  for (const banner of status.banners) lines.push(`$(warning) ${banner}`);
  if (status.config_errors > 0) {
    // The daemon's notice already says which file and that its last valid version is in use.
    // Not "see the Problems panel": it lists a file's problems only while the file is open.
    lines.push(`$(error) ${plural(status.config_errors, 'error')} in the configuration files: `
      + '**Switchman: Check Rules** lists them');
  }
  lines.push('', 'Click to choose a model.');
  return lines.join('  \n');
}

function startingView(context: StatusContext): StatusView {
  return {
    text: `$(loading~spin) ${prefix(context)}Switchman`,
    tooltip: '**Switchman** — starting the daemon…',
    background: undefined,
    command: 'switchman.showOutput',
    accessibilityLabel: 'Switchman is starting',
  };
}

function stoppedView(context: StatusContext): StatusView {
  return {
    text: `$(error) ${prefix(context)}Switchman`,
    tooltip: '**Switchman** — the daemon is not running. Click to restart it; see the Switchman output for details.',
    background: 'error',
    command: 'switchman.restartServer',
    accessibilityLabel: 'Switchman daemon is not running',
  };
}
