/** The latest `switchman/status` of every workspace, kept from the daemon's notifications. */

import { Emitter, normalizeUri } from '../common/host';
import type { Disposable, StatusSource, SwitchmanConnection } from '../common/host';
import { Notifications } from '../protocol/methods';
import type { StatusParams } from '../protocol/types';

export class StatusStore implements StatusSource, Disposable {
  private readonly latest = new Map<string, StatusParams>();
  private readonly changed = new Emitter<StatusParams>();
  private readonly subscriptions: Disposable[];
  readonly onDidChange = this.changed.event;

  constructor(connection: SwitchmanConnection) {
    this.subscriptions = [
      connection.onNotification<StatusParams>(Notifications.status, (status) => this.update(status)),
      connection.onDidChangeState((state) => {
        if (state !== 'running') this.latest.clear();
      }),
    ];
  }

  get(workspace: string): StatusParams | undefined {
    return this.latest.get(normalizeUri(workspace));
  }

  update(status: StatusParams): void {
    this.latest.set(normalizeUri(status.workspace), status);
    this.changed.fire(status);
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.changed.dispose();
  }
}
