/**
 * The chat panel's extension side: sends messages, forwards the daemon's stream to the webview and
 * reloads the transcript from `switchman/session` whenever the webview (re)starts.
 */

import type { Disposable, Folder, StatusSource, SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { sameWorkspace } from '../common/host';
import { requestFailure } from '../protocol/errors';
import { Notifications, Requests, SlashCommands } from '../protocol/methods';
import * as params from '../protocol/params';
import type { Rating } from '../protocol/params';
import type {
  CancelResult, ChatDeltaParams, ChatResult, DelegationParams, ExplainResult, NewSessionResult, PreviewResult,
  RouteDecidedParams, SessionDetail, SessionsResult,
} from '../protocol/types';
import { workerTranscript } from './delegations';
import type { ChatSettings } from '../server/settings';
import type { ApprovalAnswer, Attachment } from '../protocol/types';
import type { ApprovalCard } from '../tools/approval';
import { attachmentLabel, fileAttachment, resolveTokens, selectionAttachment, type EditorContext } from './attachments';
import { explanationMessage, explanationView } from './chain';
import type { ChatEvent, CodeAction, FromWebview, ToWebview } from './messages';
import { previewFailure, previewView } from './preview';
import { keptInHistory, transcriptEntries } from './transcript';

interface PendingTurn {
  localId: string;
  workspace: string;
  sessionId: string | null;
  turnId: string | null;
  abort: AbortController;
}

export interface ChatControllerHooks {
  openSettings(): void;
  restartServer(): void;
  /** The active text editor, for `#file` / `#selection` and "Send Selection to Switchman". */
  activeEditor?(): EditorContext | undefined;
  /** Copy, insert or apply a code block of an answer (`turnId`: the answer's turn). */
  codeAction?(action: CodeAction, text: string, turnId?: string): Promise<void>;
  /** The `switchman/approve` questions, shown and answered as cards in the chat. */
  approvals?: ApprovalSource;
}

/** What the chat needs of the approval questions (tools/approval.ts's ApprovalCenter). */
export interface ApprovalSource {
  all(): ApprovalCard[];
  onDidChange(listener: (card: ApprovalCard) => void): Disposable;
  answer(id: string, answer: ApprovalAnswer): void;
  openDiff(id: string): Promise<void>;
}

export class ChatController implements Disposable {
  private workspace: string | undefined;
  private readonly sessions = new Map<string, string>();
  private pending: PendingTurn | undefined;
  /** Events of the last exchange, replayed after a reload so a running answer is not lost. */
  private live: { workspace: string; events: ChatEvent[]; turns: Set<string> } | undefined;
  private post: ((message: ToWebview) => void) | undefined;
  private previewSeq = 0;
  private readonly subscriptions: Disposable[];
  private localSeq = 0;
  /** Attached with "Send Selection to Switchman", sent with the next message. */
  private attachments: Attachment[] = [];
  /**
   * The 👍 / 👎 the daemon took, by turn id: the transcript (`switchman/session`) does not carry
   * them, so a reloaded or reopened chat shows them pressed again from here.
   */
  private readonly ratings = new Map<string, Rating>();

  constructor(
    private readonly connection: SwitchmanConnection,
    private readonly folders: WorkspaceFolders,
    statuses: StatusSource,
    private readonly settings: () => ChatSettings,
    private readonly hooks: ChatControllerHooks,
  ) {
    this.subscriptions = [
      connection.onNotification<RouteDecidedParams>(Notifications.routeDecided, (p) => this.onRouteDecided(p)),
      connection.onNotification<ChatDeltaParams>(Notifications.chatDelta, (p) => this.onDelta(p)),
      connection.onNotification<DelegationParams>(Notifications.delegation, (p) => this.onDelegation(p)),
      connection.onDidChangeState((state) => this.onConnectionState(state)),
      statuses.onDidChange((status) => this.onStatus(status.workspace, status.session_id)),
      folders.onDidChange(() => void this.reload()),
      ...(hooks.approvals ? [hooks.approvals.onDidChange((card) => this.postToView({ type: 'approval', card }))] : []),
    ];
  }

  /** The webview is up: `post` reaches it until {@link detach}. */
  attach(post: (message: ToWebview) => void): void {
    this.post = post;
  }

  detach(): void {
    this.post = undefined;
  }

  /** The folder the chat talks to. */
  get currentFolder(): Folder | undefined {
    const all = this.folders.all();
    return all.find((f) => this.workspace && sameWorkspace(f.uri, this.workspace)) ?? this.folders.active() ?? all[0];
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  async handle(message: FromWebview): Promise<void> {
    switch (message.type) {
      case 'ready': return this.reload();
      case 'send': return this.send(message.text);
      case 'cancel': return this.cancel();
      case 'draft': return this.preview(message.text);
      case 'explain': return this.explain(message.turnId);
      case 'feedback': return this.feedback(message.turnId, message.rating);
      case 'newChat': return this.newChat();
      case 'selectWorkspace':
        this.workspace = message.uri;
        return this.reload();
      case 'openSettings': return this.hooks.openSettings();
      case 'restartServer': return this.hooks.restartServer();
      case 'codeAction': return this.hooks.codeAction?.(message.action, message.text, message.turnId);
      case 'approvalAnswer':
        return this.hooks.approvals?.answer(message.id, message.reason
          ? { decision: message.decision, reason: message.reason } : { decision: message.decision });
      case 'approvalDiff': return this.hooks.approvals?.openDiff(message.id);
      case 'toggleExplanation': return;
      case 'workerTranscript': return this.workerTranscript(message.turnId, message.toolUseId, message.workerSessionId);
      case 'stopWorker': return this.stopWorker(message.workerTurnId);
    }
  }

  /** A delegation card was opened (or its worker ended while open): fetch the worker's transcript. */
  async workerTranscript(turnId: string, toolUseId: string, workerSessionId: string): Promise<void> {
    let transcript;
    try {
      const detail = await this.connection.request<SessionDetail>(Requests.session, params.sessionParams(workerSessionId));
      transcript = workerTranscript(detail);
    } catch (error) {
      transcript = { loading: false, messages: [], error: requestFailure(error).message };
    }
    this.postToView({ type: 'workerTranscript', turnId, toolUseId, transcript });
  }

  /** Stop one worker: only it fails (`cancelled_by_user`); its planner carries on. */
  async stopWorker(workerTurnId: string): Promise<void> {
    try {
      await this.connection.request<CancelResult>(Requests.cancel, params.cancelParams(workerTurnId));
    } catch {
      // The worker had already ended (unknown_turn after a restart): its card shows how it ended.
    }
  }

  /** Send a message (or slash command) exactly as typed; the daemon interprets `@alias` and `/commands`. */
  async send(text: string): Promise<void> {
    const folder = this.currentFolder;
    if (!folder || this.pending || !text.trim()) return;
    const resolved = resolveTokens(text, this.hooks.activeEditor?.());
    const attachments = [...this.attachments, ...resolved.attachments];
    this.attachments = [];
    const localId = `local-${Date.now().toString(36)}-${++this.localSeq}`;
    const pending: PendingTurn = { localId, workspace: folder.uri, sessionId: null, turnId: null, abort: new AbortController() };
    this.pending = pending;
    this.live = { workspace: folder.uri, events: [], turns: new Set() };
    const labels = attachments.map((a) => attachmentLabel(a, folder.uri));
    this.emit({ type: 'userSent', localId, text: [text, ...labels].join('\n') });
    try {
      pending.sessionId = await this.ensureSession(folder.uri);
      const result = await this.connection.request<ChatResult>(
        Requests.chat, params.chatParams(folder.uri, resolved.message || text, pending.sessionId, attachments),
        pending.abort.signal);
      this.sessions.set(folder.uri, result.session_id);
      this.emit({ type: 'result', localId, result });
    } catch (error) {
      this.emit({ type: 'failed', localId, failure: requestFailure(error) });
    } finally {
      if (this.pending === pending) this.pending = undefined;
    }
  }

  /**
   * "Delegate Selection": send `/delegate [instruction]` with the active editor's selection attached
   * (the daemon hands it to a worker). False when there is no selection or a message is being answered.
   */
  async delegateSelection(instruction: string): Promise<boolean> {
    const editor = this.hooks.activeEditor?.();
    const selection = editor ? selectionAttachment(editor) : undefined;
    if (!selection || this.pending || !this.currentFolder) return false;
    this.attachments.push(selection);
    await this.send([SlashCommands.delegate, instruction.trim()].filter((s) => s).join(' '));
    return true;
  }

  /** Attach the active editor's selection (or its file) to the next message; returns its label. */
  attachSelection(): string | undefined {
    const editor = this.hooks.activeEditor?.();
    const folder = this.currentFolder;
    if (!editor || !folder) return undefined;
    const attachment = selectionAttachment(editor) ?? fileAttachment(editor);
    this.attachments.push(attachment);
    return attachmentLabel(attachment, folder.uri);
  }

  /** Stop the running answer: `switchman/cancel` once the turn is known, else cancel the request. */
  async cancel(): Promise<void> {
    const pending = this.pending;
    if (!pending) return;
    if (!pending.turnId) {
      pending.abort.abort();
      return;
    }
    try {
      await this.connection.request<CancelResult>(Requests.cancel, params.cancelParams(pending.turnId));
    } catch {
      pending.abort.abort();
    }
  }

  async newChat(): Promise<void> {
    const folder = this.currentFolder;
    if (!folder || this.pending) return;
    try {
      const result = await this.connection.request<NewSessionResult>(Requests.newSession, params.newSessionParams(folder.uri));
      this.sessions.set(folder.uri, result.session.id);
      this.live = undefined;
      this.postToView({ type: 'reset', folders: this.folders.all(), workspace: folder.uri, sessionId: result.session.id,
        sessionTitle: null, entries: [] });
      this.replayApprovals([]);
    } catch (error) {
      this.emit({ type: 'failed', localId: `local-new-${++this.localSeq}`, failure: requestFailure(error) });
    }
  }

  async explain(turnId: string): Promise<void> {
    const folder = this.currentFolder;
    if (!folder) return;
    try {
      const result = await this.connection.request<ExplainResult>(Requests.explain, params.explainParams({
        workspace: folder.uri, sessionId: this.sessions.get(folder.uri), turnId }));
      this.postToView({ type: 'explanation', turnId, explanation: explanationView(result) });
    } catch (error) {
      this.postToView({ type: 'explanation', turnId, explanation: explanationMessage(requestFailure(error).message) });
    }
  }

  /** 👍 / 👎 on a turn; the button shows as pressed once the daemon has taken it. */
  async feedback(turnId: string, rating: Rating): Promise<void> {
    try {
      await this.connection.request(Requests.feedback, params.feedbackParams(turnId, rating));
      this.ratings.set(turnId, rating);
      this.postToView({ type: 'rated', turnId, rating });
    } catch (error) {
      this.emit({ type: 'failed', localId: `local-feedback-${++this.localSeq}`, failure: requestFailure(error) });
    }
  }

  /** Where the draft would go; answers for older drafts are dropped. */
  async preview(draft: string): Promise<void> {
    const folder = this.currentFolder;
    const seq = ++this.previewSeq;
    if (!folder || !draft.trim() || !this.settings().routePreview || this.connection.state !== 'running') {
      this.postToView({ type: 'preview', preview: null });
      return;
    }
    let view;
    try {
      const result = await this.connection.request<PreviewResult>(
        Requests.preview, params.previewParams(folder.uri, draft, this.sessions.get(folder.uri)));
      view = previewView(draft, result);
    } catch (error) {
      view = previewFailure(draft, requestFailure(error));
    }
    if (seq === this.previewSeq) this.postToView({ type: 'preview', preview: view });
  }

  /** Fetch the current session's transcript and replace the webview's state with it. */
  async reload(): Promise<void> {
    const settings = this.settings();
    this.postToView({ type: 'settings', routePreview: settings.routePreview, previewDelayMs: settings.previewDelayMs });
    this.postToView({ type: 'connection', connected: this.connection.state === 'running' });
    const folder = this.currentFolder;
    const folders = this.folders.all();
    if (!folder || this.connection.state !== 'running') {
      this.postToView({ type: 'reset', folders, workspace: folder?.uri ?? null, sessionId: null, sessionTitle: null,
        entries: [] });
      return;
    }
    this.workspace = folder.uri; // the panel shows this folder until the user picks another
    const current = this.live && sameWorkspace(this.live.workspace, folder.uri) ? this.live : undefined;
    // A finished `/delegate` is in the session's history: rebuilt from there, not replayed twice.
    const live = current && !current.events.some((e) => e.type === 'result' && keptInHistory(e.result)) ? current : undefined;
    let sessionId: string | null = null;
    let sessionTitle: string | null = null;
    let entries: ReturnType<typeof transcriptEntries> = [];
    try {
      sessionId = await this.currentSession(folder.uri);
      if (sessionId) {
        const detail = await this.connection.request<SessionDetail>(Requests.session, params.sessionParams(sessionId));
        entries = transcriptEntries(detail, live ? replayedIds(live) : undefined);
        sessionTitle = detail.session.title || null;
      }
    } catch {
      entries = [];
    }
    this.postToView({ type: 'reset', folders, workspace: folder.uri, sessionId, sessionTitle, entries });
    for (const event of live?.events ?? []) this.postToView({ type: 'event', event });
    this.replayApprovals(entries, live?.turns);
    this.replayRatings(entries, live?.turns);
  }

  /** After a reset: the ratings given in this window to the turns shown. */
  private replayRatings(entries: { kind: string; id: string }[], liveTurns?: Set<string>): void {
    const shown = new Set(entries.filter((e) => e.kind === 'turn').map((e) => e.id));
    for (const [turnId, rating] of this.ratings) {
      if (shown.has(turnId) || liveTurns?.has(turnId)) this.postToView({ type: 'rated', turnId, rating });
    }
  }

  /** After a reset: the open questions, and the answered ones of the turns shown. */
  private replayApprovals(entries: { kind: string; id: string }[], liveTurns?: Set<string>): void {
    const shown = new Set(entries.filter((e) => e.kind === 'turn').map((e) => e.id));
    for (const card of this.hooks.approvals?.all() ?? []) {
      if (card.outcome === 'pending' || shown.has(card.turnId) || liveTurns?.has(card.turnId)) {
        this.postToView({ type: 'approval', card });
      }
    }
  }

  settingsChanged(): void {
    const settings = this.settings();
    this.postToView({ type: 'settings', routePreview: settings.routePreview, previewDelayMs: settings.previewDelayMs });
  }

  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
    this.pending?.abort.abort();
  }

  private async ensureSession(workspace: string): Promise<string> {
    const known = await this.currentSession(workspace);
    if (known) return known;
    const created = await this.connection.request<NewSessionResult>(Requests.newSession, params.newSessionParams(workspace));
    this.sessions.set(workspace, created.session.id);
    return created.session.id;
  }

  private async currentSession(workspace: string): Promise<string | null> {
    const known = this.sessions.get(workspace);
    if (known) return known;
    const result = await this.connection.request<SessionsResult>(Requests.sessions, params.sessionsParams(workspace, false));
    if (result.current_session_id) this.sessions.set(workspace, result.current_session_id);
    return result.current_session_id;
  }

  private onRouteDecided(p: RouteDecidedParams): void {
    const pending = this.pending;
    if (!pending || (pending.sessionId && pending.sessionId !== p.session_id)) return;
    pending.turnId = p.turn_id;
    this.live?.turns.add(p.turn_id);
    this.emit({ type: 'routeDecided', params: p });
  }

  private onDelta(p: ChatDeltaParams): void {
    if (p.turn_id ? this.live?.turns.has(p.turn_id) : this.pending?.sessionId === p.session_id) {
      this.emit({ type: 'delta', params: p });
    }
  }

  private onDelegation(p: DelegationParams): void {
    const live = this.live;
    if (!live || !(p.turn_id === null ? this.ownUserDelegation(p, live.events) : live.turns.has(p.turn_id))) return;
    // Each notification carries the whole state: a replay needs only the latest one per delegation, in its place.
    const event: ChatEvent = { type: 'delegation', params: p };
    const index = live.events.findIndex((e) => e.type === 'delegation' && e.params.tool_use_id === p.tool_use_id);
    if (index < 0) live.events.push(event);
    else live.events[index] = event;
    this.postToView({ type: 'event', event });
  }

  /** A `/delegate` of this chat: sent from here and still answering, or already shown. */
  private ownUserDelegation(p: DelegationParams, events: ChatEvent[]): boolean {
    const known = events.some((e) => e.type === 'delegation' && e.params.tool_use_id === p.tool_use_id);
    const pending = this.pending;
    // The session is null until the daemon names it (a workspace's first message creates it).
    return known || (pending !== undefined && (pending.sessionId ?? p.session_id) === p.session_id);
  }

  private onStatus(workspace: string, sessionId: string | null): void {
    const folder = this.folders.all().find((f) => sameWorkspace(f.uri, workspace));
    if (!folder || !sessionId || this.sessions.get(folder.uri) === sessionId) return;
    const previous = this.sessions.get(folder.uri);
    this.sessions.set(folder.uri, sessionId);
    // The current session changed elsewhere (e.g. a new session from the Sessions view): show it.
    if (previous && !this.pending && this.currentFolder && sameWorkspace(this.currentFolder.uri, folder.uri)) {
      this.live = undefined;
      void this.reload();
    }
  }

  private onConnectionState(state: SwitchmanConnection['state']): void {
    if (state === 'running') {
      this.sessions.clear();
      void this.reload();
    } else {
      this.postToView({ type: 'connection', connected: false });
    }
  }

  private emit(event: ChatEvent): void {
    this.live?.events.push(event);
    this.postToView({ type: 'event', event });
  }

  private postToView(message: ToWebview): void {
    this.post?.(message);
  }
}

/** The turns and the user's delegations a replay shows: left out of the transcript it follows. */
function replayedIds(live: { events: ChatEvent[]; turns: Set<string> }): Set<string> {
  const delegations = live.events.flatMap((e) => (e.type === 'delegation' && e.params.turn_id === null ? [e.params.tool_use_id] : []));
  return new Set([...live.turns, ...delegations]);
}
