/** Stubs of the host interfaces for unit tests. */

import { Emitter } from '../../src/common/host';
import type { ConnectionState, Disposable, Folder, StatusSource, SwitchmanConnection, WorkspaceFolders } from '../../src/common/host';
import type { StatusParams } from '../../src/protocol/types';

type Responder = (params: any, signal?: AbortSignal) => unknown;

/** A daemon stand-in: scripted answers per method, notifications pushed by the test. */
export class FakeConnection implements SwitchmanConnection {
  state: ConnectionState = 'running';
  readonly requests: { method: string; params: any }[] = [];
  private readonly responders = new Map<string, Responder>();
  private readonly emitters = new Map<string, Emitter<unknown>>();
  private readonly states = new Emitter<ConnectionState>();

  answer(method: string, responder: Responder): this {
    this.responders.set(method, responder);
    return this;
  }

  async request<R>(method: string, params: unknown, signal?: AbortSignal): Promise<R> {
    this.requests.push({ method, params });
    const responder = this.responders.get(method);
    if (!responder) throw Object.assign(new Error(`no answer scripted for ${method}`), { data: { code: 'test' } });
    return (await responder(params, signal)) as R;
  }

  onNotification<P>(method: string, handler: (params: P) => void): Disposable {
    return this.emitter(method).event(handler as (p: unknown) => void);
  }

  notify(method: string, params: unknown): void {
    this.emitter(method).fire(params);
  }

  onDidChangeState(listener: (state: ConnectionState) => void): Disposable {
    return this.states.event(listener);
  }

  setState(state: ConnectionState): void {
    this.state = state;
    this.states.fire(state);
  }

  sent(method: string): any[] {
    return this.requests.filter((r) => r.method === method).map((r) => r.params);
  }

  private emitter(method: string): Emitter<unknown> {
    let emitter = this.emitters.get(method);
    if (!emitter) this.emitters.set(method, (emitter = new Emitter()));
    return emitter;
  }
}

export class FakeFolders implements WorkspaceFolders {
  private readonly changed = new Emitter<void>();
  constructor(public folders: Folder[]) {}
  all(): Folder[] {
    return this.folders;
  }
  active(): Folder | undefined {
    return this.folders[0];
  }
  onDidChange(listener: () => void): Disposable {
    return this.changed.event(listener);
  }
  set(folders: Folder[]): void {
    this.folders = folders;
    this.changed.fire();
  }
}

export class FakeStatuses implements StatusSource {
  private readonly latest = new Map<string, StatusParams>();
  private readonly changed = new Emitter<StatusParams>();
  get(workspace: string): StatusParams | undefined {
    return this.latest.get(workspace);
  }
  onDidChange(listener: (status: StatusParams) => void): Disposable {
    return this.changed.event(listener);
  }
  push(status: StatusParams): void {
    this.latest.set(status.workspace, status);
    this.changed.fire(status);
  }
}

export function status(overrides: Partial<StatusParams> = {}): StatusParams {
  return {
    workspace: 'file:///home/me/app', session_id: 'S1', active_model: null, sticky_model: null, pending_swap: null,
    turn_in_flight: false, banners: [], cost_today_usd: '0', config_errors: 0, ...overrides,
  };
}

/** Wait until `check` holds, polling the event loop (no fixed sleeps). */
export async function until(check: () => boolean, timeoutMs = 2000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setImmediate(resolve));
  }
}
