/**
 * The chat panel's extension side: sends messages, forwards the daemon's stream to the webview and
 * reloads the transcript from `switchman/session` whenever the webview (re)starts.
 */

import type { Disposable, Folder, StatusSource, SwitchmanConnection, WorkspaceFolders } from '../common/host';
import { sameWorkspace } from '../common/host';
import {
  MISSING_CONTEXT, NO_FOLDER, NO_FOLDER_MESSAGE, PROVIDER_ERROR, TURN_IN_PROGRESS, requestFailure, type RequestFailure,
} from '../protocol/errors';
import { ErrorCodes, Notifications, Requests, SlashCommands } from '../protocol/methods';
import * as params from '../protocol/params';
import type { RatingChange } from '../protocol/params';
import type {
  CancelResult, ChatDeltaParams, ChatResult, DelegationParams, ExplainResult, NewSessionResult, PreviewResult,
  RouteDecidedParams, SessionChangedParams, SessionDetail, SessionsResult,
} from '../protocol/types';
import { workerTranscript } from './delegations';
import type { ChatSettings } from '../server/settings';
import type { ApprovalAnswer, ApprovalRecord, Attachment } from '../protocol/types';
import type { ApprovalCard } from '../tools/approval';
import { attachedOnce, attachmentLabel, fileAttachment, missingContextMessage, resolveTokens, sameAttachment, selectionAttachment,
  type EditorContext } from './attachments';
import { explanationMessage, explanationView } from './chain';
import type { ChatEvent, CodeAction, Entry, FromWebview, PreviewView, ToWebview } from './messages';
import { previewFailure, previewView } from './preview';
import { LiveExchange } from './liveExchange';
import { retryableFailure, wasRefused } from './reducer';
import { sentMessage, transcriptEntries } from './transcript';

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
  /** Open a file at a place (1-based) named in a command's answer, e.g. `/rules check`'s problems. */
  openLocation?(path: string, line: number, column: number): void;
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
  /** What the session kept of a question (a call's result): a stopped one's card says so. */
  recorded?(record: ApprovalRecord): void;
  /** A worker stopped: a question it had open says so. */
  workerStopped?(workerSessionId: string): void;
  answer(id: string, answer: ApprovalAnswer): void;
  openDiff(id: string): Promise<void>;
}


/** Added to the daemon's refusal of an attachment that Send Selection had attached. */
export const DROPPED_ATTACHMENTS = 'What Send Selection attached was taken off the message: attach again what should go with it.';
/** A message as sent: `text` as typed (shown), `message` as the daemon gets it. */
interface Resend {
  text: string;
  message: string;
  attachments: Attachment[];
}

export class ChatController implements Disposable {
  private workspace: string | undefined;
  private readonly sessions = new Map<string, string>();
  private pending: PendingTurn | undefined;
  /** Events of the last exchange, replayed after a reload so a running answer is not lost. */
  private live: LiveExchange | undefined;
  private post: ((message: ToWebview) => void) | undefined;
  private previewSeq = 0;
  private readonly subscriptions: Disposable[];
  private localSeq = 0;
  /** Attached with "Send Selection to Switchman", sent with the next message. */
  private attachments: Attachment[] = [];
  /**
   * The 👍 / 👎 the daemon took in this window, by turn id: a turn replayed live after a reload is not
   * in the transcript (whose `ratings` cover the others), and older daemons send no ratings.
   */
  private readonly ratings = new Map<string, RatingChange>();
  /**
   * What was sent for each turn that failed at its provider in this window (the text as typed, the
   * message and the attachments as sent): its Retry button sends exactly that again.
   */
  private readonly retries = new Map<string, Resend>();
  /** Another window changed the session while this chat's turn ran: redraw it once the turn ends. */
  private reloadAfterTurn = false;

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
      connection.onNotification<SessionChangedParams>(Notifications.sessionChanged, (p) => this.onSessionChanged(p)),
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
      case 'retry': return this.retry(message.turnId);
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
      case 'openLocation': return this.hooks.openLocation?.(message.path, message.line, message.column);
      case 'toggleExplanation': return;
      case 'workerTranscript': return this.workerTranscript(message.turnId, message.toolUseId, message.workerSessionId);
      case 'stopWorker': return this.stopWorker(message.workerTurnId, message.turnId, message.toolUseId);
      case 'stopDelegation': return this.stopDelegation(message.turnId, message.toolUseId);
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

  /** Stop one worker: only it fails (`cancelled_by_user`); its planner carries on. `turnId` / `toolUseId`: its card. */
  async stopWorker(workerTurnId: string, turnId?: string, toolUseId?: string): Promise<void> {
    await this.stopCard(params.cancelParams(workerTurnId), turnId, toolUseId);
  }

  /** Stop one delegation of a planner's turn (one still queued for a worker slot too); the planner carries on. */
  async stopDelegation(plannerTurnId: string, toolUseId: string): Promise<void> {
    await this.stopCard(params.cancelDelegationParams(plannerTurnId, toolUseId), plannerTurnId, toolUseId);
  }

  /**
   * Send a card's Stop. One that ended meanwhile (or unknown_turn after a restart) needs nothing: its card shows how
   * it ended. A stop that was refused (another window's daemon runs it; it was starting) is told to the card, which
   * showed "stopping…" without its Stop button and would have kept them while the worker ran on.
   */
  private async stopCard(cancel: object, turnId?: string, toolUseId?: string): Promise<void> {
    let refused: string | null = null;
    try {
      const answer = await this.connection.request<CancelResult>(Requests.cancel, cancel);
      if (!answer.cancelled && answer.status === 'starting') refused = 'its worker is starting; press Stop again in a moment.';
    } catch (error) {
      const failure = requestFailure(error);
      if (failure.code !== 'unknown_turn') refused = failure.message;
    }
    if (refused !== null && turnId !== undefined && toolUseId !== undefined) {
      this.postToView({ type: 'stopRefused', turnId, toolUseId, message: refused });
    }
  }

  /** Send a message (or slash command) exactly as typed; the daemon interprets `@alias` and `/commands`. */
  async send(text: string): Promise<void> {
    if (!text.trim()) return;
    if (this.pending) {
      this.refuseWhileAnswering(text);
      return;
    }
    if (!this.currentFolder) {
      // A window with no folder open: the webview has already cleared its input, so say why nothing
      // was sent and give the text back rather than drop it.
      this.refuse(text, { code: NO_FOLDER, message: NO_FOLDER_MESSAGE });
      return;
    }
    const editor = this.hooks.activeEditor?.();
    const resolved = resolveTokens(text, editor);
    if (resolved.missing.length > 0) {
      // `#selection` with nothing selected (or no editor at all): sending would drop the token
      // and the model would answer about code it never saw. Refused here, the text comes back.
      this.refuse(text, { code: MISSING_CONTEXT, message: missingContextMessage(resolved.missing, editor !== undefined) });
      return;
    }
    const attached = this.attachments;
    this.attachments = [];
    await this.submit({ text, message: resolved.message || text, attachments: attachedOnce(attached, resolved.attachments) }, attached);
  }

  /**
   * A failed turn's Retry: the same message again, with the `@alias` and the attachments it was sent
   * with (not the editor's text of now). Only turns that failed at their provider in this window.
   */
  async retry(turnId: string): Promise<void> {
    const resend = this.retries.get(turnId);
    if (!resend || !this.currentFolder || this.pending) return;
    this.retries.delete(turnId);
    await this.submit(resend, []);
  }

  /**
   * A message sent (`text`), or New chat pressed (null), while an answer is written (one at a time): in another
   * folder's chat, whose panel shows no answer running (it cleared its input), or a panel out of step. Said at
   * the chat it came from, the text back in its input; the running exchange's record (its replay) is left alone.
   */
  private refuseWhileAnswering(text: string | null): void {
    const running = this.folders.all().find((f) => this.pending && sameWorkspace(f.uri, this.pending.workspace));
    const where = running && !sameWorkspace(running.uri, this.currentFolder?.uri ?? '') ? ` in ${running.name}'s chat` : '';
    const localId = `local-${Date.now().toString(36)}-${++this.localSeq}`;
    const failure = { code: TURN_IN_PROGRESS, message: text === null
      ? `No new chat: an answer is still being written${where}. Stop it, or start one when it ends.`
      : `Not sent: an answer is still being written${where}. Stop it, or send this again when it ends.` };
    if (text !== null) this.postToView({ type: 'event', event: { type: 'userSent', localId, text } });
    this.postToView({ type: 'event', event: { type: 'failed', localId, failure } });
  }

  /** A message refused before it reached the daemon: shown with the reason, its text back in the input. */
  private refuse(text: string, failure: RequestFailure): void {
    const folder = this.currentFolder;
    const localId = `local-${Date.now().toString(36)}-${++this.localSeq}`;
    this.live = folder ? new LiveExchange(folder.uri) : undefined;
    this.emit({ type: 'userSent', localId, text });
    this.emit({ type: 'failed', localId, failure });
  }

  /** `attached`: the "Send Selection" attachments among `sent.attachments`, kept for next time if refused. */
  private async submit(sent: Resend, attached: Attachment[]): Promise<void> {
    const folder = this.currentFolder;
    if (!folder) return;
    const { text, attachments } = sent;
    const localId = `local-${Date.now().toString(36)}-${++this.localSeq}`;
    const pending: PendingTurn = { localId, workspace: folder.uri, sessionId: null, turnId: null, abort: new AbortController() };
    this.pending = pending;
    this.live = new LiveExchange(folder.uri);
    const labels = attachments.map((a) => attachmentLabel(a, folder.uri));
    this.emit({ type: 'userSent', localId, text: [text, ...labels].join('\n'), ...(labels.length ? { draft: text } : {}) });
    let end: ChatEvent;
    try {
      pending.sessionId = await this.ensureSession(folder.uri);
      const result = await this.connection.request<ChatResult>(
        Requests.chat, params.chatParams(folder.uri, sent.message, pending.sessionId, attachments, text),
        pending.abort.signal);
      this.sessions.set(folder.uri, result.session_id);
      if (result.turn_id && retryableFailure(result)) this.retries.set(result.turn_id, sent);
      end = { type: 'result', localId, result };
    } catch (error) {
      end = { type: 'failed', localId, failure: requestFailure(error) };
    } finally {
      if (this.pending === pending) this.pending = undefined;
    }
    // Refused (an unknown @alias or tier, a mistyped /command): the text comes back to the input,
    // and what was attached to it stays attached for when it is sent again. Unless an attachment
    // was what the daemon refused (its file turned binary since Send Selection, say): kept, it
    // would refuse every message after this one, and nothing in the panel takes it off.
    if (end.type === 'failed' && end.failure.code === ErrorCodes.invalidAttachment && attached.length) {
      end = { ...end, failure: { ...end.failure, message: `${end.failure.message} ${DROPPED_ATTACHMENTS}` } };
    } else if (wasRefused(end)) {
      this.attachments = [...attached, ...this.attachments];
    }
    this.emit(end);
    if (this.reloadAfterTurn && !this.pending) {
      this.reloadAfterTurn = false;
      await this.reload();
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

  /**
   * Attach the active editor's selection (or its file) to the next message; returns its label, or
   * the daemon's reason when it could not be sent: `switchman/preview` checks a draft's attachments
   * as a message's are checked, so a binary file is refused now, not with the next message (and the
   * ones after it, as a refused message's attachments stay attached). Undefined with no editor.
   * Attached at once, before the check answers: a message sent meanwhile goes with it (the daemon
   * checks what a message attaches, and a refused attachment is dropped), and a refusal takes it off.
   * The same file (or the same lines of it) again replaces the one attached, with its text of now
   * (`again`): it goes once, as in Neovim.
   */
  async attachSelection(): Promise<{ label: string; again?: true } | { refused: string } | undefined> {
    const editor = this.hooks.activeEditor?.();
    const folder = this.currentFolder;
    if (!editor || !folder) return undefined;
    const attachment = selectionAttachment(editor) ?? fileAttachment(editor);
    const earlier = this.attachments.findIndex((a) => sameAttachment(a, attachment));
    if (earlier >= 0) this.attachments[earlier] = attachment;
    else this.attachments.push(attachment);
    if (this.connection.state === 'running') {
      try {
        await this.connection.request(Requests.preview,
          params.previewParams(folder.uri, '', this.sessions.get(folder.uri), [attachment]));
      } catch (error) {
        const failure = requestFailure(error);
        if (failure.code === ErrorCodes.invalidAttachment) {
          this.attachments = this.attachments.filter((a) => a !== attachment);  // unless already sent
          return { refused: failure.message };
        }
      } // any other trouble is told when the message is sent
    }
    const label = attachmentLabel(attachment, folder.uri);
    return earlier >= 0 ? { label, again: true } : { label };
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
    if (!folder) return;
    if (this.pending) {  // (the panel disables New chat while it shows the answer: this is another folder's chat)
      this.refuseWhileAnswering(null);
      return;
    }
    try {
      const result = await this.connection.request<NewSessionResult>(Requests.newSession, params.newSessionParams(folder.uri));
      this.sessions.set(folder.uri, result.session.id);
      this.live = undefined;
      this.postToView({ type: 'reset', folders: this.folders.all(), workspace: folder.uri, sessionId: result.session.id,
        sessionTitle: null, entries: [] });
      this.replayAfterReset([]);
    } catch (error) {
      this.emit({ type: 'failed', localId: `local-new-${++this.localSeq}`, failure: requestFailure(error) });
    }
  }

  /**
   * Continue an older session (the Sessions view's "Continue in Chat" names its folder; a transcript's asks the daemon
   * for it): the daemon makes it the folder's current session, and the chat shows that folder and the session's
   * conversation, drawn as after a reload. False, and nothing asked, while an answer is being written; the daemon's
   * refusal is thrown.
   */
  async resume(workspace: string | undefined, sessionId: string): Promise<boolean> {
    if (this.pending) return false;
    workspace ??= (await this.connection.request<SessionDetail>(Requests.session, params.sessionParams(sessionId))).session.workspace;
    const folder = this.folders.all().find((f) => sameWorkspace(f.uri, workspace))?.uri ?? workspace;
    const result = await this.connection.request<NewSessionResult>(Requests.resumeSession,
      params.resumeSessionParams(folder, sessionId));
    this.sessions.set(folder, result.session.id);
    this.workspace = folder;
    this.live = undefined; // the last exchange belongs to the session left
    await this.reload();
    return true;
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

  /**
   * 👍 / 👎 on a turn (`none`: the one given taken back); the button shows as pressed once the daemon has taken it, and a refusal shows at
   * that turn (not at the end of the chat, nor replayed after a reload: it is about one click).
   */
  async feedback(turnId: string, rating: RatingChange): Promise<void> {
    try {
      await this.connection.request(Requests.feedback, params.feedbackParams(turnId, rating));
      this.ratings.set(turnId, rating);
      this.postToView({ type: 'rated', turnId, rating });
    } catch (error) {
      this.postToView({ type: 'ratingFailed', turnId, failure: requestFailure(error) });
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
    // Routed as it would be sent: without its #file / #selection tokens, with what they and
    // "Send Selection" attach (their size and paths count for routing).
    const editor = this.hooks.activeEditor?.();
    const resolved = resolveTokens(draft, editor);
    const view = resolved.missing.length > 0
      ? previewFailure(draft, { code: MISSING_CONTEXT, message: missingContextMessage(resolved.missing, editor !== undefined) })
      : await this.routeDraft(folder.uri, draft, resolved.message || draft, attachedOnce(this.attachments, resolved.attachments));
    if (seq === this.previewSeq) this.postToView({ type: 'preview', preview: view });
  }

  private async routeDraft(workspace: string, draft: string, message: string, attachments: Attachment[]): Promise<PreviewView> {
    try {
      const result = await this.connection.request<PreviewResult>(Requests.preview,
        params.previewParams(workspace, message, this.sessions.get(workspace), attachments));
      return previewView(draft, result);
    } catch (error) {
      return previewFailure(draft, requestFailure(error));
    }
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
    let sessionId: string | null = null;
    let detail: SessionDetail | undefined;
    try {
      sessionId = await this.currentSession(folder.uri);
      if (sessionId) detail = await this.connection.request<SessionDetail>(Requests.session, params.sessionParams(sessionId));
    } catch {
      detail = undefined;
    }
    // The exchange to replay is the one of now, not of when the transcript was asked for: a message
    // sent meanwhile (the panel had just opened) would be wiped by the reset and never drawn again.
    let live = this.live?.replaysIn(folder.uri) ? this.live : undefined;
    if (live && !this.pending && detail && live.supersededIn(detail)) {
      // Another window's turns came after this window's last exchange: replayed after the
      // transcript, it showed above them. The transcript has it, in its place.
      this.live = live = undefined;
    }
    if (live && this.pending && sessionId === null) sessionId = this.pending.sessionId;
    const stored = detail ? transcriptEntries(detail, live?.shownIds()) : [];
    if (detail) this.rememberRetry(detail, stored, folder.uri);
    // A failed turn keeps its Retry: what this window sent, or (a new window) what the daemon kept of it.
    const entries = stored.map((e) => (e.kind === 'turn' && this.retries.has(e.id) ? { ...e, retryable: true } : e));
    const sessionTitle = detail?.session.title || null;
    this.postToView({ type: 'reset', folders, workspace: folder.uri, sessionId, sessionTitle, entries });
    for (const event of live?.events ?? []) this.postToView({ type: 'event', event });
    this.replayAfterReset(entries, live?.turns, detail?.ratings);
  }

  /**
   * The last answer failed at its provider and was not sent from this window (it was reloaded, or
   * another window sent it), or was cut off by the daemon's end (it was killed; the window was
   * reloaded or closed mid-answer): its Retry sends the message the daemon kept, as typed, with its attachments.
   */
  private rememberRetry(detail: SessionDetail, entries: Entry[], workspace: string): void {
    const last = [...entries].reverse().find((e) => e.kind === 'turn');
    if (last?.kind !== 'turn' || this.retries.has(last.id)) return;
    if (last.status !== 'interrupted' && (last.status !== 'failed' || last.error?.code !== PROVIDER_ERROR)) return;
    const sent = sentMessage(detail, last.id, workspace);
    if (sent) this.retries.set(last.id, sent);
  }

  /**
   * After a reset: the open questions; the answered ones and the ratings of the turns shown. The session's
   * `ratings` (`stored`) are the ratings as they are now, another window's included (it may have changed one
   * given here): the turns replayed live get theirs, and the ones given here are not shown over them. An older
   * daemon sends none: then the ratings given in this window are shown again.
   */
  private replayAfterReset(entries: { kind: string; id: string }[], liveTurns?: Set<string>,
    stored?: Record<string, 'up' | 'down'>): void {
    const shown = new Set(entries.filter((e) => e.kind === 'turn').map((e) => e.id));
    const visible = (turnId: string) => shown.has(turnId) || liveTurns?.has(turnId) === true;
    for (const card of this.hooks.approvals?.all() ?? []) {
      if (card.outcome === 'pending' || visible(card.turnId)) this.postToView({ type: 'approval', card });
    }
    if (stored) {
      for (const turnId of liveTurns ?? []) {
        const rating = stored[turnId];
        if (rating) this.postToView({ type: 'rated', turnId, rating });
      }
      return;
    }
    for (const [turnId, rating] of this.ratings) if (visible(turnId)) this.postToView({ type: 'rated', turnId, rating });
  }

  settingsChanged(): void {
    const settings = this.settings();
    this.postToView({ type: 'settings', routePreview: settings.routePreview, previewDelayMs: settings.previewDelayMs });
  }

  /**
   * The extension is going away (the window reloads or closes): a running answer is not aborted here.
   * VS Code disposes this while the daemon is still being stopped, and the abort reached it first as
   * a Stop: the turn was kept `cancelled`, as if the user had pressed Stop. Left to the daemon, it ends
   * `interrupted`, saying why, with a Retry in the reopened chat.
   */
  dispose(): void {
    for (const subscription of this.subscriptions) subscription.dispose();
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
    if (p.kind === 'tool_result') {
      // a delegation's questions asked before its last one end as their rebuilt cards do: superseded, and why
      for (const record of [...(p.tool?.superseded_approvals ?? []), ...(p.tool?.approval ? [p.tool.approval] : [])]) {
        this.hooks.approvals?.recorded?.(record);
      }
    }
    if (p.turn_id ? this.live?.turns.has(p.turn_id) : this.pending?.sessionId === p.session_id) {
      this.emit({ type: 'delta', params: p });
    }
  }

  private onDelegation(p: DelegationParams): void {
    if (p.approval) this.hooks.approvals?.recorded?.(p.approval); // a worker's question, as its session keeps it
    if (p.phase === 'ended' && p.status === 'cancelled') this.hooks.approvals?.workerStopped?.(p.worker_session_id);
    const live = this.live;
    if (!live || !(p.turn_id === null ? this.ownUserDelegation(p, live) : live.turns.has(p.turn_id))) return;
    const event = live.recordDelegation(p);
    if (this.showsLive()) this.postToView({ type: 'event', event });
  }

  /** A `/delegate` of this chat: sent from here and still answering, or already shown. */
  private ownUserDelegation(p: DelegationParams, live: LiveExchange): boolean {
    const known = live.knowsDelegation(p.tool_use_id);
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

  /**
   * Another editor window's daemon changed the workspace's current session (a message and its answer, the
   * sticky model or profile, a new session): redraw the chat from the daemon, after this chat's running turn.
   */
  private onSessionChanged(p: SessionChangedParams): void {
    const folder = this.folders.all().find((f) => sameWorkspace(f.uri, p.workspace));
    if (!folder) return;
    const previous = this.sessions.get(folder.uri);
    if (p.session_id) this.sessions.set(folder.uri, p.session_id);
    if (!this.currentFolder || !sameWorkspace(this.currentFolder.uri, folder.uri)) return;
    if (this.pending) {
      this.reloadAfterTurn = true;
      return;
    }
    if (previous !== p.session_id) this.live = undefined; // another session: the last exchange is not in it
    void this.reload();
  }

  private onConnectionState(state: SwitchmanConnection['state']): void {
    if (state === 'running') {
      this.sessions.clear();
      // A (re)started daemon: nothing of the last exchange is still answering, so the chat is
      // drawn from what the daemon recorded (a turn cut off by the restart shows `interrupted`).
      if (!this.pending) this.live = undefined;
      void this.reload();
    } else {
      this.postToView({ type: 'connection', connected: false });
    }
  }

  /** Record an event of the running exchange, and show it if the panel shows its folder (not another folder's chat). */
  private emit(event: ChatEvent): void {
    this.live?.record(event);
    if (this.showsLive()) this.postToView({ type: 'event', event });
  }

  private showsLive(): boolean {
    const shown = this.workspace;
    return !this.live || shown === undefined || sameWorkspace(this.live.workspace, shown);
  }

  private postToView(message: ToWebview): void {
    this.post?.(message);
  }
}

