"""Chat sessions per workspace folder: starting turns, cancelling them, sticky models.

Each workspace has a *current* session (the one the chat panel and status bar
show); a message without a session id goes there. Turns are routed at their
start, recorded durably before any provider is called, and run as tasks so
they can be cancelled; a sticky-model change requested mid-turn is queued
until the turn ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlparse

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import Clock
from switchman.engine.config.store import ConfigStore
from switchman.engine.errors import (
    EmptyMessage,
    NoModelAvailable,
    TurnInProgress,
    UnknownSession,
    UnknownTurn,
    UnknownWorkspace,
    check_text,
)
from switchman.engine.ids import new_id
from switchman.engine.learning.recorder import OutcomeRecorder
from switchman.engine.messages import (
    Block,
    ImageBlock,
    Message,
    TextBlock,
    image_count,
    message_texts,
)
from switchman.engine.providers.factory import AdapterFactory
from switchman.engine.router import Router
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.explain import short_reason
from switchman.engine.routing.overrides import Override
from switchman.engine.routing.sticky import StickyModel, SwapOutcome, pending_banner
from switchman.engine.sessions.prompt import system_prompt
from switchman.engine.sessions.records import (
    ChatDelta,
    PendingSwapInfo,
    RouteNotice,
    SessionInfo,
    SwapResult,
    TurnInfo,
    TurnResult,
)
from switchman.engine.sessions.turn import TurnRunner, TurnSetup
from switchman.engine.skills import SkillIndex
from switchman.engine.store.repository import SessionStore
from switchman.engine.tokens import estimate_turn
from switchman.engine.tools.workspace import WorkspaceTools

log = logging.getLogger(__name__)
TITLE_LENGTH = 60


class SessionObserver(Protocol):
    """Receives what sessions produce (the language server forwards it to the editor)."""

    def route_decided(self, notice: RouteNotice) -> None:
        """A turn was routed."""

    def delta(self, delta: ChatDelta) -> None:
        """Streamed output."""

    def status_changed(self, workspace: str) -> None:
        """Something the workspace's status shows changed."""


@dataclass
class RunningTurn:
    """A turn in flight."""

    turn_id: str
    model: str
    task: asyncio.Task[TurnResult]


@dataclass
class LiveSession:
    """A session loaded in memory."""

    id: str
    workspace: str
    folder: Path
    sticky: StickyModel
    history: list[Message]
    touched: list[str]
    skills: SkillIndex
    running: RunningTurn | None = None
    last_model: str | None = None
    turn_count: int = 0
    ended: dict[str, str] = field(default_factory=dict)
    """Status of turns that ended while this daemon ran, by turn id."""
    history_tokens: int = 0
    """Estimated tokens of ``history`` (kept up to date as messages are added)."""
    has_tool_calls: bool = False
    """Whether an assistant message in ``history`` called a tool."""

    def remember(self, messages: list[Message]) -> None:
        """Add messages to the history, updating the running estimates."""
        self.history.extend(messages)
        self.history_tokens += estimate_turn(message_texts(messages), image_count(messages))
        self.has_tool_calls = self.has_tool_calls or any(
            m.role == "assistant" and m.tool_uses() for m in messages)


def workspace_uri(raw: str) -> str:
    """A workspace given as a ``file://`` URI or an absolute path, as a URI."""
    if raw.startswith("file://"):
        return Path(unquote(urlparse(raw).path)).resolve().as_uri()
    return Path(raw).expanduser().resolve().as_uri()


def folder_of(uri: str) -> Path:
    """The local folder of a ``file://`` URI."""
    return Path(unquote(urlparse(uri).path))


class SessionManager:
    """All sessions of all open workspaces."""

    def __init__(self, *, store: SessionStore, router: Router, config: ConfigStore,
                 availability: AvailabilityTracker, adapters: AdapterFactory, clock: Clock,
                 observer: SessionObserver, runner: TurnRunner | None = None,
                 learning: OutcomeRecorder | None = None) -> None:
        self.store = store
        self.router = router
        self.config = config
        self.availability = availability
        self.adapters = adapters
        self.clock = clock
        self.observer = observer
        self.runner = runner or TurnRunner(store, availability, clock, observer.delta)
        self.workspaces: dict[str, Path] = {}
        self._live: dict[str, LiveSession] = {}
        self.learning = learning
        self._routed: dict[str, TurnContext] = {}
        """What routing knew about each running turn, for the pattern store at its end."""

    # -- workspaces ----------------------------------------------------------------------

    def open_workspace(self, raw: str) -> str:
        """Register an editor workspace folder; returns its URI."""
        uri = self._uri(raw)
        self.workspaces[uri] = folder_of(uri)
        return uri

    def close_workspace(self, raw: str) -> None:
        """Forget a workspace folder the editor closed."""
        with contextlib.suppress(UnknownWorkspace):
            self.workspaces.pop(self._uri(raw), None)

    def workspace(self, raw: str) -> str:
        """The URI of an open workspace; raises :class:`UnknownWorkspace`."""
        if raw in self.workspaces:  # already in normal form: skip path resolution
            return raw
        uri = self._uri(raw)
        if uri not in self.workspaces:
            raise UnknownWorkspace(raw)
        return uri

    @staticmethod
    def _uri(raw: str) -> str:
        """``raw`` as a workspace URI; raises :class:`UnknownWorkspace` if it is no local path."""
        try:
            if raw:
                return workspace_uri(raw)
        except (ValueError, OSError):  # a NUL byte, a lone surrogate, a path the OS refuses
            pass
        raise UnknownWorkspace(raw)

    # -- sessions ------------------------------------------------------------------------

    def live(self, workspace: str, session_id: str | None = None) -> LiveSession:
        """The session to use: the given one, or the workspace's current one (created if none)."""
        uri = self.workspace(workspace)
        session_id = session_id or self.store.current_session(uri)
        if session_id is None:
            return self._create(uri, sticky=None)
        live = self.load(session_id)
        if live.workspace != uri:
            raise UnknownSession(session_id)
        return live

    def new_session(self, workspace: str) -> SessionInfo:
        """Start a new current session, inheriting the current one's sticky model."""
        uri = self.workspace(workspace)
        current = self.store.current_session(uri)
        sticky = self.load(current).sticky.active if current else None
        live = self._create(uri, sticky=sticky)
        self.observer.status_changed(uri)
        return self.info(live.id)

    def info(self, session_id: str) -> SessionInfo:
        """A session's record, with its pending swap."""
        info = self.store.session(session_id)
        if info is None:
            raise UnknownSession(session_id)
        live = self._live.get(session_id)
        if live is not None and live.sticky.pending is not None:
            info.pending_swap = PendingSwapInfo(live.sticky.pending.model)
        return info

    def _create(self, uri: str, sticky: str | None) -> LiveSession:
        session_id = new_id()
        self.store.create_session(session_id, uri, self.clock.now(), sticky_model=sticky)
        self.store.set_current_session(uri, session_id)
        return self.load(session_id)

    def load(self, session_id: str) -> LiveSession:
        """A session, loaded into memory on first use."""
        cached = self._live.get(session_id)
        if cached is not None and (cached.running is not None
                                   or self.store.last_turn_index(session_id) == cached.turn_count):
            return cached  # else another daemon ran turns in it meanwhile: load it again
        info = self.store.session(session_id)
        if info is None:
            raise UnknownSession(session_id)
        folder = folder_of(info.workspace)
        live = LiveSession(
            id=session_id, workspace=info.workspace, folder=folder,
            sticky=StickyModel(info.sticky_model), history=[],
            touched=self.store.touched_paths(session_id),
            skills=SkillIndex.build([folder / ".switchman" / "skills",
                                     self.config.directory / "skills"]),
            last_model=info.last_model, turn_count=info.turn_count)
        live.remember(self.store.messages(session_id))
        if cached is not None:
            live.ended = cached.ended
        self._live[session_id] = live
        return live

    # -- turns ---------------------------------------------------------------------------

    async def chat(self, workspace: str, session_id: str | None, message: str,
                   images: list[ImageBlock] | None = None) -> TurnResult:
        """Route and run one turn; cancellation yields a ``cancelled`` result, not an error."""
        check_text(message)
        for image in images or []:
            check_text(image.media_type + image.data, "image")
        live = self.live(workspace, session_id)
        text, override = self.router.parse(message)
        if not text.strip() and not images:
            raise EmptyMessage(override.token if override else "")  # "" reads as an empty message
        if self.learning is not None:
            self.learning.message_sent(live.id, text, override.model if override else None)
        return await self.run_turn(live, text, images or [], override)

    async def run_turn(self, live: LiveSession, text: str, images: list[ImageBlock],
                       override: Override | None) -> TurnResult:
        """Route (``override`` first) and run one turn of ``live``."""
        if live.running is not None:
            raise TurnInProgress(live.running.turn_id)
        setup = self._start(live, text, images, override)
        task = asyncio.get_running_loop().create_task(self.runner.run(setup))
        live.running = RunningTurn(setup.turn.id, setup.model.id, task)
        self.observer.status_changed(live.workspace)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:  # the editor cancelled the chat request itself
            task.cancel()
            return await task
        finally:
            self._end(live, setup, task)

    def _start(self, live: LiveSession, text: str, images: list[ImageBlock],
               override: Override | None) -> TurnSetup:
        turn_id = new_id()
        sticky = live.sticky.begin_turn()
        try:
            context = self._routed[turn_id] = self.turn_context(live, text, len(images))
            decision = self.router.decide(RouteRequest(
                context=context, turn_id=turn_id,
                session_id=live.id, override=override, sticky_model=sticky))
            return self._record_start(live, turn_id, text, images, decision)
        except BaseException as failure:  # the turn did not start: the session is as it was
            self._routed.pop(turn_id, None)
            live.sticky.end_turn()
            if isinstance(failure, NoModelAvailable):
                self.store.add_event(failure.decision)
            self.observer.status_changed(live.workspace)
            raise

    def _record_start(self, live: LiveSession, turn_id: str, text: str,
                      images: list[ImageBlock], decision: RouteDecided) -> TurnSetup:
        registry = self.router.registry()
        model = registry.models[decision.chosen_model or ""]
        provider = registry.providers[model.provider]
        now = self.clock.now()
        content: list[Block] = [TextBlock(text), *images]
        user = Message(id=new_id(), session_id=live.id, turn_id=turn_id, role="user",
                       content=content, created_at=now)
        turn = TurnInfo(id=turn_id, session_id=live.id, index=live.turn_count + 1,
                        status="running", model=model.id, started_at=now,
                        summary=short_reason(decision), decision=decision)
        title = text.strip().splitlines()[0][:TITLE_LENGTH] if text.strip() else "(image)"
        # Durable before any provider call.
        self.store.begin_turn(turn, user, decision, workspace=live.workspace, title=title)
        live.remember([user])
        live.turn_count = turn.index  # numbered by the database, across daemons
        live.last_model = model.id
        self.observer.route_decided(RouteNotice(live.id, turn_id, model.id, turn.summary,
                                                decision.banners, decision))
        tools = WorkspaceTools(live.folder)
        return TurnSetup(turn=turn, model=model, provider=provider,
                         adapter=self.adapters.adapter(provider), tools=tools,
                         system=system_prompt(live.folder, model.id, tools.definitions()),
                         history=list(live.history), banners=decision.banners)

    def _end(self, live: LiveSession, setup: TurnSetup, task: asyncio.Task[TurnResult]) -> None:
        context = self._routed.pop(setup.turn.id, None)
        added = setup.history[len(live.history):]
        if task.done() and not task.cancelled():
            result = task.result()
            live.ended[setup.turn.id] = result.status
            if self.learning is not None and context is not None:
                self.learning.turn_ended(context, turn_id=setup.turn.id, session_id=live.id,
                                         model=setup.model.id, status=result.status,
                                         cost_usd=result.cost_usd, added=added)
        live.remember(added)  # what the turn added
        live.touched += setup.touched
        live.running = None
        applied_before = live.sticky.active
        live.sticky.end_turn()
        if live.sticky.active != applied_before:
            self.store.set_sticky(live.id, live.sticky.active)
        self.observer.status_changed(live.workspace)

    def turn_context(self, live: LiveSession, text: str, images: int) -> TurnContext:
        """What routing knows about a turn of ``live`` with ``text``."""
        return TurnContext(
            message=text,
            has_images=images > 0,
            estimated_input_tokens=_FIXED_TOKENS + live.history_tokens
            + estimate_turn([text], images),
            has_tool_definitions=True,
            has_system_prompt=True,
            has_tool_calls_in_history=live.has_tool_calls,
            files_touched=tuple(live.touched),
            workspace_path=str(live.folder),
            local_time=self.clock.local_time(),
            cost_today_usd=self.cost_today(),
            skills_matching=live.skills.matching(text),
        )

    def loaded(self, session_id: str) -> LiveSession | None:
        """The session if it is already in memory."""
        return self._live.get(session_id)

    def cost_today(self) -> Decimal:
        """Spend across all sessions since 00:00 UTC."""
        now = self.clock.now().astimezone(UTC)
        return self.store.cost_since(datetime.combine(now.date(), time(0), tzinfo=UTC))

    async def cancel(self, turn_id: str) -> tuple[bool, str]:
        """Cancel a running turn; returns (whether it was running, its final status)."""
        for live in self._live.values():
            running = live.running
            if running is not None and running.turn_id == turn_id:
                running.task.cancel()
                result = await asyncio.shield(running.task)
                return True, result.status
            if turn_id in live.ended:
                return False, live.ended[turn_id]
        stored = self.store.turn(turn_id)
        if stored is None:
            raise UnknownTurn(turn_id)
        return False, stored.status

    def cancel_all(self) -> None:
        """Cancel every running turn (each saves what it streamed and ends ``cancelled``)."""
        for live in self._live.values():
            if live.running is not None:
                live.running.task.cancel()

    # -- sticky model --------------------------------------------------------------------

    def set_model(self, workspace: str, session_id: str | None, model: str | None) -> SwapResult:
        """Set (or clear, with None) a session's sticky model; queued while a turn runs."""
        live = self.live(workspace, session_id)
        target = self.router.resolve_model(model) if model is not None else None
        outcome = live.sticky.request(target)
        changed = target is not None and target != live.last_model
        if self.learning is not None and changed and live.running is None:
            last = self.store.last_turn(live.id)
            self.learning.model_changed(last.id if last else None)
        if outcome is not SwapOutcome.QUEUED:
            self.store.set_sticky(live.id, live.sticky.active)
        pending = live.sticky.pending
        self.observer.status_changed(live.workspace)
        return SwapResult(outcome=outcome.value, session_id=live.id,
                          sticky_model=live.sticky.active,
                          pending_swap=PendingSwapInfo(pending.model) if pending else None,
                          message=_swap_message(outcome, target, pending))

    def for_each_workspace(self, action: Callable[[str], None]) -> None:
        """Call ``action`` with every open workspace's URI."""
        for uri in list(self.workspaces):
            action(uri)


# The system prompt and tool definitions every turn sends (estimated once).
_FIXED_TOKENS = estimate_turn([system_prompt(Path("/" + "x" * 40), "provider:model-name",
                                             WorkspaceTools.definitions()),
                               json.dumps([t.input_schema for t in WorkspaceTools.definitions()])])


def _swap_message(outcome: SwapOutcome, model: str | None, pending: object) -> str:
    if outcome is SwapOutcome.QUEUED:
        return pending_banner(pending)  # type: ignore[arg-type]
    if outcome is SwapOutcome.CLEARED:
        return "Sticky model cleared; routing follows your rules again."
    if outcome is SwapOutcome.UNCHANGED:
        return f"Sticky model unchanged ({model or 'none'})."
    return f"Sticky model set: {model}. Your rules are skipped until you run /model -."
