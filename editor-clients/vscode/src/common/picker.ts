/**
 * The QuickPick flow the model and profile pickers share: open at once (busy while the daemon
 * answers), pre-select the current choice, return what the user accepted, report failures; and how
 * a change the daemon made is announced. Pure: VS Code is reached through {@link PickerUi}.
 */

import { requestFailure } from '../protocol/errors';

/** A row the user can accept; `value` is what gets set, `current` marks what is in force now. */
export interface PickerChoice<T> {
  kind: 'choice';
  label: string;
  description?: string;
  detail?: string;
  value: T;
  current: boolean;
}

/** One row of a picker: a choice, or a separator heading a group. */
export type PickerEntry<T> = { kind: 'separator'; label: string } | PickerChoice<T>;

export interface PickerOptions {
  title: string;
  placeholder: string;
  /** Also match the typed filter against each row's detail line. */
  matchOnDetail?: boolean;
}

/** What the pickers need of VS Code (vscodeHost.ts implements it with `createQuickPick`). */
export interface PickerUi {
  /**
   * Show a picker at once, busy until `entries` settles (it may reject: then the picker closes and
   * the rejection is passed on); resolves with the accepted entry, or undefined when dismissed.
   */
  pick<T>(options: PickerOptions, entries: Promise<PickerEntry<T>[]>): Promise<PickerEntry<T> | undefined>;
  showError(message: string): void;
  /** A notification the user should not miss. */
  showInfo(message: string): void;
  /** A passing confirmation (the status bar, a few seconds). */
  showStatus(message: string): void;
  /** A notification with one button: resolves true when the user clicks it. */
  offer(message: string, action: string): Promise<boolean>;
}

/** Let the user pick one of `load`'s choices: `{ value }`, or undefined when dismissed or failed (shown). */
export async function pickChoice<T>(ui: PickerUi, options: PickerOptions,
  load: () => Promise<PickerEntry<T>[]>): Promise<{ value: T } | undefined> {
  try {
    const chosen = await ui.pick(options, load());
    return chosen?.kind === 'choice' ? { value: chosen.value } : undefined;
  } catch (error) {
    ui.showError(`Switchman: ${requestFailure(error).message}`);
    return undefined;
  }
}

/**
 * Send a request that changes something and say how it went with its `message`: as a notification
 * when `notable` says so, else in the status bar (nothing when `said` is false: the caller says it); a failure
 * as an error. Resolves with the result (undefined when it failed).
 */
export async function announce<R extends { message: string }>(ui: PickerUi, request: () => Promise<R>,
  notable: (result: R) => boolean = () => false, said: (result: R) => boolean = () => true): Promise<R | undefined> {
  try {
    const result = await request();
    if (!said(result)) return result;
    if (notable(result)) ui.showInfo(`Switchman: ${result.message}`);
    else ui.showStatus(`Switchman: ${result.message}`);
    return result;
  } catch (error) {
    ui.showError(`Switchman: ${requestFailure(error).message}`);
    return undefined;
  }
}
