/** The chat webview: renders the state, persists it with setState, talks `{type: ...}` messages. */

import type { ChatState, FromWebview, ToWebview } from '../chat/messages';
import { initialChatState, sessionTitle } from '../chat/messages';
import { needsTranscript, ticks, waitsToStart } from '../chat/delegations';
import {
  allCards, markStopping, ratingAsked, reduce, refusedDraft, toggleDelegation, toggleExplanation, unexplained,
} from '../chat/reducer';
import { el, TranscriptView } from './render';
import { busyPreview } from '../chat/preview';

interface VsCodeApi {
  postMessage(message: FromWebview): void;
  getState(): Persisted | undefined;
  setState(state: Persisted): void;
}
interface Persisted {
  chat: ChatState;
  draft: string;
}
declare function acquireVsCodeApi(): VsCodeApi;

const vscode = acquireVsCodeApi();
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const input = $<HTMLTextAreaElement>('input');
const transcript = $<HTMLElement>('transcript');
const persisted = vscode.getState();
let state: ChatState = persisted?.chat ? { ...initialChatState(), ...persisted.chat, pending: persisted.chat.pending } : initialChatState();
input.value = persisted?.draft ?? '';
let previewTimer: ReturnType<typeof setTimeout> | undefined;

const view = new TranscriptView(transcript, (turnId) => {
  const turn = state.entries.find((e) => e.kind === 'turn' && e.id === turnId);
  if (turn && turn.kind === 'turn' && turn.explanation) update(toggleExplanation(state, turnId));
  else vscode.postMessage({ type: 'explain', turnId });
}, {
  toggle(turnId, card) {
    update(toggleDelegation(state, turnId, card.toolUseId));
    fetchTranscripts(turnId, card.toolUseId);
  },
  stop(turnId, card) {
    if (waitsToStart(card.status)) {  // no worker turn yet: named by its planner's turn and call
      update(markStopping(state, turnId, card.toolUseId));
      vscode.postMessage({ type: 'stopDelegation', turnId, toolUseId: card.toolUseId });
      return;
    }
    if (!card.workerTurnId) return;
    update(markStopping(state, turnId, card.toolUseId));
    vscode.postMessage({ type: 'stopWorker', workerTurnId: card.workerTurnId, turnId, toolUseId: card.toolUseId });
  },
}, (turnId, rating) => {
  update(ratingAsked(state, turnId));
  vscode.postMessage({ type: 'feedback', turnId, rating });
}, {
  answer: (id, decision, reason) => vscode.postMessage({ type: 'approvalAnswer', id, decision, ...(reason ? { reason } : {}) }),
  openDiff: (id) => vscode.postMessage({ type: 'approvalDiff', id }),
}, (text) => {
  if (state.pending || !state.connected) return;
  vscode.postMessage({ type: 'send', text });
  followTheEnd();
}, (turnId) => {
  if (state.pending || !state.connected) return;
  vscode.postMessage({ type: 'retry', turnId });
  followTheEnd();
}, ({ path, line, column }) => vscode.postMessage({ type: 'openLocation', path, line, column }));

/** The cards whose worker transcript was asked for and has not arrived yet. */
const fetching = new Set<string>();

/** Ask for the worker transcript of open cards that need it (only `toolUseId`'s, if given). */
function fetchTranscripts(turnId?: string, toolUseId?: string): void {
  for (const { turnId: owner, card } of allCards(state)) {
    if (turnId && owner !== turnId) continue;
    if ((!toolUseId || card.toolUseId === toolUseId) && needsTranscript(card) && card.workerSessionId
      && !fetching.has(card.toolUseId)) {
      fetching.add(card.toolUseId);
      vscode.postMessage({ type: 'workerTranscript', turnId: owner, toolUseId: card.toolUseId,
        workerSessionId: card.workerSessionId });
    }
  }
}

/** The turns whose routing chain was asked for and has not arrived yet. */
const explaining = new Set<string>();

/** Ask for the routing chain of the turns that show theirs open without one (after a rebuild). */
function fetchExplanations(): void {
  for (const turnId of unexplained(state)) {
    if (explaining.has(turnId)) continue;
    explaining.add(turnId);
    vscode.postMessage({ type: 'explain', turnId });
  }
}

/** An open card whose worker just ended: reload its transcript (the worker's answer is now stored). */
function refreshEnded(message: ToWebview): void {
  if (message.type !== 'event' || message.event.type !== 'delegation' || message.event.params.phase !== 'ended') return;
  const toolUseId = message.event.params.tool_use_id;
  const turnId = message.event.params.turn_id ?? toolUseId; // a user's delegation is its own entry
  const card = allCards(state).find((c) => c.turnId === turnId && c.card.toolUseId === toolUseId)?.card;
  if (card?.open && card.workerSessionId) {
    vscode.postMessage({ type: 'workerTranscript', turnId, toolUseId, workerSessionId: card.workerSessionId });
  }
}

/** Whether the transcript shows its end (new entries and answer text then keep it in view). */
function atTheEnd(): boolean {
  return transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
}

/**
 * Whether the user reads the end of the transcript, as of their last scroll: when the chat gets
 * smaller (the panel dragged smaller, the window resized) the end stays in view then. The end slid out
 * of view instead, and since the chat was no longer at its end, answers stopped following as they came.
 */
let following = true;
transcript.addEventListener('scroll', () => { following = atTheEnd(); });
new ResizeObserver(() => {
  if (following && !atTheEnd()) transcript.scrollTop = transcript.scrollHeight;
}).observe(transcript);

/**
 * The user sent a message (typed, retried, a suggestion): show the end of the transcript, where it
 * and its answer come, even when they had scrolled up to read an earlier answer.
 */
function followTheEnd(): void {
  transcript.scrollTop = transcript.scrollHeight;
}

function update(next: ChatState): void {
  const atBottom = atTheEnd();
  const asking = document.activeElement?.closest('.approval[data-outcome="pending"]') ?? null;
  const stopped = document.activeElement?.closest('.delegation-stop') ?? null;
  const stoppedCard = stopped?.closest<HTMLElement>('.delegation')?.dataset.toolUse;
  const focused = transcript.contains(document.activeElement) ? document.activeElement : null;
  state = next;
  vscode.setState({ chat: state, draft: input.value });
  render();
  if (asking && !asking.isConnected) keyboardAfterAnswer();
  if (stopped && !stopped.isConnected && stoppedCard) keyboardAfterStop(stoppedCard);
  // Anything else the keyboard was on went away (Retry once the message is sent again, a suggestion's
  // buttons once used): the keyboard goes back to the message input, not to nothing.
  if (focused && !focused.isConnected && (document.activeElement === document.body || document.activeElement === null)) input.focus();
  if (atBottom) transcript.scrollTop = transcript.scrollHeight;
}

/**
 * The question the keyboard was in was answered (its card is redrawn with the outcome): the keyboard
 * goes to the next open question's card (read out, not pressed: Tab reaches its buttons), else back to
 * the message input. It was left on nothing, and Enter or typing did nothing.
 */
function keyboardAfterAnswer(): void {
  const next = transcript.querySelector<HTMLElement>('.approval[data-outcome="pending"]');
  if (!next) {
    input.focus();
    return;
  }
  next.tabIndex = -1;
  next.focus();
}

/**
 * A card's Stop pressed from the keyboard goes away (the worker is stopping): the keyboard stays on
 * that card, on its toggle. It was left on nothing, and Tab started again from the top of the chat.
 */
function keyboardAfterStop(toolUse: string): void {
  const card = Array.from(transcript.querySelectorAll<HTMLElement>('.delegation'))
    .find((element) => element.dataset.toolUse === toolUse);
  card?.querySelector<HTMLElement>('.delegation-toggle')?.focus();
}

function render(): void {
  view.render(state.entries);
  $('empty').hidden = state.entries.length > 0;
  $('offline').hidden = state.connected;
  $('send').hidden = state.pending !== null;
  $('stop').hidden = state.pending === null;
  ($('send') as HTMLButtonElement).disabled = !state.connected;
  // The daemon starts no session while an answer is being written: say so rather than ignore the click.
  const newChat = $<HTMLButtonElement>('new-chat');
  newChat.disabled = state.pending !== null || !state.connected;
  newChat.title = state.pending !== null ? 'Stop or wait for the running answer first, then start a new chat'
    : 'Start a new chat session (switchman/newSession)';
  renderFolders();
  renderPreview();
  const title = sessionTitle(state);
  $('session').textContent = title;
  $('session').title = state.sessionId ? `${title}\nSession ${state.sessionId}` : title;
}

function renderFolders(): void {
  const select = $<HTMLSelectElement>('workspace');
  select.hidden = state.folders.length < 2;
  const options = state.folders.map((f) => el('option', { value: f.uri }, [f.name]) as HTMLOptionElement);
  if (select.options.length !== options.length || Array.from(select.options).some((o, i) => o.value !== options[i].value)) {
    select.replaceChildren(...options);
  }
  if (state.workspace) select.value = state.workspace;
}

function renderPreview(): void {
  const preview = $('preview');
  const shown = state.preview && (state.routePreview || state.preview.tone === 'busy') ? state.preview : null;
  const current = shown && shown.draft === input.value && input.value.trim() ? shown : null;
  preview.textContent = current ? current.text : '';
  preview.className = `preview ${current ? current.tone : ''}`;
  preview.title = current?.detail ?? '';
}

function send(): void {
  const text = input.value;
  if (text.trim() && state.pending) {
    update({ ...state, preview: busyPreview(text) });
    return;
  }
  if (!text.trim() || state.pending || !state.connected) return;
  vscode.postMessage({ type: 'send', text });
  input.value = '';
  fitInput();
  followTheEnd();
  update({ ...state, preview: null });
}

/** The most of the view the message input grows to, as lines are typed (then it scrolls). */
const INPUT_MAX_SHARE = 0.4;

/** The height this page gave the input last; another one was dragged by the user (its resize handle). */
let fitted = '';
/** The height the user dragged the input to: it does not get smaller than that. */
let draggedHeight = 0;

/**
 * The message input as tall as what is typed in it (from its two rows up to 40% of the view): a
 * message of several lines (Shift+Enter) scrolled inside two rows, its first lines out of sight.
 */
function fitInput(): void {
  if (input.style.height && input.style.height !== fitted) draggedHeight = input.offsetHeight;
  input.style.height = '';
  const content = input.scrollHeight + input.offsetHeight - input.clientHeight;
  const wanted = Math.max(draggedHeight, Math.min(content, Math.round(window.innerHeight * INPUT_MAX_SHARE)));
  fitted = wanted > input.offsetHeight ? `${wanted}px` : '';
  input.style.height = fitted;
}

function draftChanged(): void {
  fitInput();
  vscode.setState({ chat: state, draft: input.value });
  renderPreview();
  if (previewTimer) clearTimeout(previewTimer);
  if (!state.routePreview) return;
  const text = input.value;
  previewTimer = setTimeout(() => vscode.postMessage({ type: 'draft', text }), state.previewDelayMs);
}

window.addEventListener('message', (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  const before = state.pending;
  update(reduce(state, message));
  // Busy (for screen readers, and tests) until the chat is loaded from the daemon, not only from the saved state.
  if (message.type === 'reset') transcript.setAttribute('aria-busy', 'false');
  if (message.type === 'workerTranscript') fetching.delete(message.toolUseId);
  if (message.type === 'explanation') explaining.delete(message.turnId);
  // A rebuilt chat (reopened, reloaded, a running turn replayed) keeps the cards the user had open.
  if (message.type === 'reset' || (message.type === 'event' && message.event.type === 'delegation')) fetchTranscripts();
  // ... and the routing chains the user had opened.
  if (message.type === 'reset' || (message.type === 'event' && message.event.type === 'routeDecided')) fetchExplanations();
  refreshEnded(message);
  // The answer that kept a message from being sent has ended: the hint goes (the route preview comes back).
  if (before && !state.pending && state.preview?.tone === 'busy') {
    update({ ...state, preview: null });
    draftChanged();
  }
  // A message that was refused (unknown @alias, a mistyped /command…) comes back to the input to fix.
  const refused = refusedDraft(before, message);
  if (refused !== null && !input.value) {
    input.value = refused;
    draftChanged();
  }
});

input.addEventListener('input', draftChanged);
input.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  }
});
transcript.addEventListener('click', (event) => {
  const button = (event.target as HTMLElement).closest<HTMLElement>('[data-code-action]');
  // The buttons sit in a bar just before the code block's <pre> (the button's own sibling is the next button).
  const code = button?.closest('.code-actions')?.nextElementSibling?.textContent;
  const action = button?.dataset.codeAction;
  if (code !== undefined && code !== null && (action === 'copy' || action === 'insert' || action === 'apply')) {
    const turnId = button?.closest<HTMLElement>('[data-turn]')?.dataset.turn;
    vscode.postMessage({ type: 'codeAction', action, text: code.replace(/\n$/, ''), ...(turnId ? { turnId } : {}) });
  }
});
$('send').addEventListener('click', send);
$('stop').addEventListener('click', () => vscode.postMessage({ type: 'cancel' }));
$('new-chat').addEventListener('click', () => vscode.postMessage({ type: 'newChat' }));
$('restart').addEventListener('click', () => vscode.postMessage({ type: 'restartServer' }));
$('settings').addEventListener('click', () => vscode.postMessage({ type: 'openSettings' }));
$<HTMLSelectElement>('workspace').addEventListener('change', (event) => {
  vscode.postMessage({ type: 'selectWorkspace', uri: (event.target as HTMLSelectElement).value });
});

// VS Code focuses the page itself (Open Chat, its keybinding, a click on the tab): put the keyboard in
// the message input, unless the user is already somewhere in the page.
window.addEventListener('focus', () => {
  if (document.activeElement === document.body || document.activeElement === null) input.focus();
});

render();
// Its placeholder too is shown whole when the view is narrow (its first line was cut off).
fitInput();
window.addEventListener('resize', fitInput);
transcript.scrollTop = transcript.scrollHeight;
// A running worker's card counts its time on between the daemon's updates (sent with its output only).
setInterval(() => {
  if (allCards(state).some(({ card }) => ticks(card))) view.render(state.entries);
}, 1000);
if (document.hasFocus()) input.focus();
vscode.postMessage({ type: 'ready' });
if (input.value) draftChanged();
