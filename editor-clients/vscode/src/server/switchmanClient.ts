/** The one class that owns the `LanguageClient`: starts, stops and restarts `switchman serve`. */

import * as vscode from 'vscode';
import {
  LanguageClient, RevealOutputChannelOn, State, type ApplyWorkspaceEditParams, type ApplyWorkspaceEditResult,
  type LanguageClientOptions, type Middleware, type ServerOptions,
} from 'vscode-languageclient/node';
import { Emitter, type ConnectionState, type Disposable, type SwitchmanConnection } from '../common/host';
import { Notifications } from '../protocol/methods';
import { initializationOptions } from '../protocol/params';
import { clientDocumentSelector, configDocumentSelector, userConfigDir, type DocumentFilter } from './configFiles';
import { SharedDocuments } from './sharedDocuments';
import { isLaunchProblem, planLaunch, type LaunchHost, type LaunchProblem } from './launch';
import type { ServerSettings } from './settings';
import { applyBases, toSave, unsavedEditRefusal, unsavedNote, type EditTarget } from '../tools/unsavedEdits';

/** Answers one daemon → editor request; `signal` aborts when the daemon withdraws it. */
export type RequestHandler = (params: unknown, signal: AbortSignal) => Promise<unknown>;

export interface StartFailure extends LaunchProblem {
  /** The command line that was tried, when one was. */
  command?: string;
}

export class SwitchmanClient implements SwitchmanConnection, vscode.Disposable {
  private client: LanguageClient | undefined;
  private current: ConnectionState = 'stopped';
  private queue: Promise<unknown> = Promise.resolve();
  private readonly stateChanged = new Emitter<ConnectionState>();
  private readonly notifications = new Map<string, Emitter<unknown>>();
  private readonly requestHandlers = new Map<string, RequestHandler>();

  constructor(
    private readonly output: vscode.OutputChannel,
    private readonly settings: () => ServerSettings,
    private readonly host: LaunchHost,
    private readonly onStartFailure: (failure: StartFailure) => void,
  ) {}

  get state(): ConnectionState {
    return this.current;
  }

  start(): Promise<void> {
    return this.serially(() => this.doStart());
  }

  stop(): Promise<void> {
    return this.serially(() => this.doStop());
  }

  restart(): Promise<void> {
    return this.serially(async () => {
      await this.doStop();
      await this.doStart();
    });
  }

  async request<R>(method: string, params: unknown, signal?: AbortSignal): Promise<R> {
    const client = this.client;
    if (!client || this.current !== 'running') {
      throw new Error('The Switchman daemon is not running. Run "Switchman: Restart Server" or check the Switchman output.');
    }
    if (!signal) return client.sendRequest<R>(method, params);
    const source = new vscode.CancellationTokenSource();
    const abort = () => source.cancel();
    signal.addEventListener('abort', abort);
    try {
      return await client.sendRequest<R>(method, params, source.token);
    } finally {
      signal.removeEventListener('abort', abort);
      source.dispose();
    }
  }

  onNotification<P>(method: string, handler: (params: P) => void): Disposable {
    return this.emitter(method).event(handler as (params: unknown) => void);
  }

  /** Answer the daemon's `method` requests (kept across restarts). */
  onRequest(method: string, handler: RequestHandler): void {
    this.requestHandlers.set(method, handler);
  }

  onDidChangeState(listener: (state: ConnectionState) => void): Disposable {
    return this.stateChanged.event(listener);
  }

  dispose(): void {
    void this.stop();
  }

  private async doStart(): Promise<void> {
    const settings = this.settings();
    const plan = planLaunch(settings, this.host);
    if (isLaunchProblem(plan)) {
      this.output.appendLine(`[switchman] ${plan.message}`);
      this.setState('failed');
      this.onStartFailure(plan);
      return;
    }
    this.output.appendLine(`[switchman] starting ${plan.display}`);
    const client = this.createClient(plan, settings);
    this.client = client;
    this.setState('starting');
    try {
      await client.start();
      this.setState('running');
    } catch (error) {
      this.client = undefined;
      this.setState('failed');
      await client.dispose().catch(() => undefined);
      this.onStartFailure({
        message: `The Switchman daemon did not start (${errorText(error)}). See the Switchman output for what it printed.`,
        setting: settings.pythonPath ? 'switchman.pythonPath' : 'switchman.serverCommand',
        command: plan.display,
      });
    }
  }

  private async doStop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (error) {
        this.output.appendLine(`[switchman] stopping the daemon: ${errorText(error)}`);
      }
    }
    this.setState('stopped');
  }

  private createClient(plan: { command: string; args: string[]; env: Record<string, string> }, settings: ServerSettings) {
    const serverOptions: ServerOptions = { command: plan.command, args: plan.args, options: { env: plan.env } };
    const configDir = userConfigDir(plan.env, this.host.homeDir, this.host.platform);
    const shared = new SharedDocuments();
    const clientOptions: LanguageClientOptions = {
      documentSelector: clientDocumentSelector(configDir),
      middleware: sharingMiddleware(shared, configDocumentSelector(configDir)),
      outputChannel: this.output,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions: initializationOptions(settings.diagnosticsDebounceMs),
      connectionOptions: { maxRestartCount: 4 },
    };
    const client = new LanguageClient('switchman', 'Switchman', serverOptions, clientOptions);
    // Replaces the client's own handler (ours is installed after it): the daemon's edits are checked first.
    client.onRequest('workspace/applyEdit', (params: ApplyWorkspaceEditParams) => applyDaemonEdit(client, params, shared));
    for (const method of Object.values(Notifications)) {
      client.onNotification(method, (params: unknown) => this.emitter(method).fire(params));
    }
    for (const [method, handler] of this.requestHandlers) {
      client.onRequest(method, (params: unknown, token: vscode.CancellationToken) => {
        const abort = new AbortController();
        token.onCancellationRequested(() => abort.abort());
        return handler(params, abort.signal);
      });
    }
    client.onDidChangeState((event) => {
      if (this.client !== client) return;
      if (event.newState === State.Running) this.setState('running');
      else if (event.newState === State.Stopped) this.setState('stopped');
    });
    return client;
  }

  private emitter(method: string): Emitter<unknown> {
    let emitter = this.notifications.get(method);
    if (!emitter) {
      emitter = new Emitter<unknown>();
      this.notifications.set(method, emitter);
    }
    return emitter;
  }

  private setState(state: ConnectionState): void {
    if (state === this.current) return;
    this.current = state;
    this.stateChanged.fire(state);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/**
 * What the daemon is sent: `didOpen`, `didChange` and `didClose` of the documents `shared` lets through
 * (the configuration files and the workspace's files up to the sharing limit). Completion, hover, code
 * actions and the outline are Switchman's for its configuration files only: for any other file they are
 * not asked of the daemon at all (VS Code asks for code actions at every cursor move).
 */
function sharingMiddleware(shared: SharedDocuments, configSelector: DocumentFilter[]): Middleware {
  const isConfig = (document: vscode.TextDocument) => vscode.languages.match(configSelector, document) > 0;
  return {
    didOpen: (document, next) => (shared.opened({
      uri: document.uri.toString(), scheme: document.uri.scheme, length: documentLength(document),
      inWorkspace: vscode.workspace.getWorkspaceFolder(document.uri) !== undefined, isConfig: isConfig(document),
    }) ? next(document) : Promise.resolve()),
    didChange: (event, next) => (shared.isShared(event.document.uri.toString()) ? next(event) : Promise.resolve()),
    didClose: (document, next) => (shared.closed(document.uri.toString()) ? next(document) : Promise.resolve()),
    provideCompletionItem: (document, position, context, token, next) =>
      (isConfig(document) ? next(document, position, context, token) : undefined),
    provideHover: (document, position, token, next) => (isConfig(document) ? next(document, position, token) : undefined),
    provideCodeActions: (document, range, context, token, next) =>
      (isConfig(document) ? next(document, range, context, token) : undefined),
    provideDocumentSymbols: (document, token, next) => (isConfig(document) ? next(document, token) : undefined),
  };
}

/** A document's length in characters, without copying its text. */
function documentLength(document: vscode.TextDocument): number {
  return document.offsetAt(document.lineAt(document.lineCount - 1).range.end);
}

/**
 * `workspace/applyEdit` from the daemon: refused, with the reason, when a file it changes has text in
 * the editor that the daemon did not make the change from (see `unsavedEditRefusal`). Once applied, the
 * files whose editor text was the disk's are saved (`toSave`); a save that fails is reported with
 * `applied: true` and a `failureReason` saying the change is in the editor only. A buffer with the
 * user's unsaved changes is edited and left unsaved.
 */
async function applyDaemonEdit(client: LanguageClient, params: ApplyWorkspaceEditParams,
  shared: SharedDocuments): Promise<ApplyWorkspaceEditResult> {
  const versions = new Map<string, number | null>();
  for (const change of params.edit.documentChanges ?? []) {
    if ('textDocument' in change) versions.set(change.textDocument.uri, change.textDocument.version);
  }
  const uris = [...Object.keys(params.edit.changes ?? {}), ...versions.keys()];
  const targets = await Promise.all([...new Set(uris)].map(async (uri): Promise<EditTarget & { uri: vscode.Uri }> => {
    const parsed = client.protocol2CodeConverter.asUri(uri);
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === parsed.toString());
    let disk: string | undefined;
    if (document?.isDirty) {
      disk = await vscode.workspace.fs.readFile(parsed).then((bytes) => new TextDecoder().decode(bytes), () => undefined);
    }
    return { uri: parsed, path: vscode.workspace.asRelativePath(parsed), text: document?.getText(),
      shared: document !== undefined && shared.isShared(document.uri.toString()), disk, dirty: document?.isDirty,
      version: document?.version, editVersion: versions.get(uri), base: document && applyBases.get(document.uri.toString()) };
  }));
  const refusal = unsavedEditRefusal(targets);
  if (refusal) return { applied: false, failureReason: refusal };
  const edit = await client.protocol2CodeConverter.asWorkspaceEdit(params.edit);
  if (!await vscode.workspace.applyEdit(edit)) return { applied: false };
  const failures: { path: string; reason: string }[] = [];
  for (const target of toSave(targets)) {
    const reason = await saveDocument(target.uri);
    if (reason) failures.push({ path: target.path, reason });
  }
  const note = unsavedNote(failures);
  return note ? { applied: true, failureReason: note } : { applied: true };
}

/** Save the document the edit changed (opened by the edit when it was not open); why not, or null. */
async function saveDocument(uri: vscode.Uri): Promise<string | null> {
  try {
    const document = await vscode.workspace.openTextDocument(uri);
    if (!document.isDirty) return null;
    return await document.save() ? null : 'the editor did not save it';
  } catch (error) {
    return errorText(error);
  }
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
