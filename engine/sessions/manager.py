"""Chat sessions per workspace folder: finding, creating and loading them; sticky models.

Each workspace has a *current* session (the one the chat panel and status bar
show); a message without a session id goes there. A worker session (spec 001
§5) is created here too, by the same code as any other session, with its
planner recorded; it is never a workspace's current session.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from datetime import UTC, date, datetime, time
from decimal import Decimal
from pathlib import Path
from typing import Protocol

from switchman.engine.clock import Clock
from switchman.engine.config.store import ConfigStore
from switchman.engine.errors import UnknownProfile, UnknownSession, WorkerSession
from switchman.engine.events import SessionCreated
from switchman.engine.ids import new_id
from switchman.engine.learning.recorder import OutcomeRecorder
from switchman.engine.messages import AttachmentBlock
from switchman.engine.profiles.apply import offers_tools
from switchman.engine.profiles.listing import profile_in_force
from switchman.engine.profiles.profile import ActiveProfile, origin_words
from switchman.engine.router import Router
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.sticky import StickyModel, SwapOutcome, pending_banner
from switchman.engine.sessions.attachments import inside_workspace
from switchman.engine.sessions.live import LiveSession, WorkerRole
from switchman.engine.sessions.prompt import system_prompt
from switchman.engine.sessions.records import (
    ChatDelta,
    DelegationUpdate,
    PendingSwapInfo,
    ProfileSwitch,
    RouteNotice,
    SessionInfo,
    SwapResult,
)
from switchman.engine.sessions.workspaces import WorkspaceRegistry, folder_of
from switchman.engine.skills import SkillIndex, folders_signature, skill_folders
from switchman.engine.store.repository import SessionStore
from switchman.engine.tokens import estimate_turn
from switchman.engine.tools.approval import TrustStore
from switchman.engine.tools.toolbox import ALL_DEFINITIONS, TOOLBOX_NAMES


class SessionObserver(Protocol):
    """Receives what sessions produce (the language server forwards it to the editor)."""

    def route_decided(self, notice: RouteNotice) -> None:
        """A turn was routed."""

    def delta(self, delta: ChatDelta) -> None:
        """Streamed output."""

    def status_changed(self, workspace: str) -> None:
        """Something the workspace's status shows changed."""

    def delegation(self, update: DelegationUpdate) -> None:
        """A delegation started, made progress or ended."""

    def session_changed(self, workspace: str, session_id: str | None) -> None:
        """Another daemon (another editor window) changed the workspace's current session:
        added messages or turns, set its sticky model or profile, or made another current."""


UNDO_STICKY = "clear the sticky model"
"""How the message of a sticky model set through ``switchman/setModel`` says to undo it: the
daemon does not know which picker or command of the editor set it (each editor words that)."""


class SessionManager:
    """All sessions of all open workspaces."""

    def __init__(self, *, store: SessionStore, router: Router, config: ConfigStore,
                 clock: Clock, observer: SessionObserver,
                 trust: TrustStore, workspaces: WorkspaceRegistry | None = None) -> None:
        self.store = store
        self.router = router
        self.config = config
        self.clock = clock
        self.observer = observer
        self.learning: OutcomeRecorder | None = None
        """Set by the learning wiring; slash commands and /model report to it."""
        self.workspaces = workspaces or WorkspaceRegistry()
        self.trust = trust
        """The tools always allowed per workspace (``/trust``)."""
        self._today: tuple[date | None, datetime] = (None, datetime.min)
        """Today (UTC) and its start, as :meth:`cost_today` last asked."""
        self._live: OrderedDict[str, LiveSession] = OrderedDict()
        """Loaded sessions, least recently used first (see :meth:`_keep`)."""
        self._skills: dict[Path, tuple[tuple[tuple[str, int, int], ...], SkillIndex]] = {}
        """Each workspace folder's skill index and what it was built from."""

    def live(self, workspace: str, session_id: str | None = None) -> LiveSession:
        """The session to use: the given one, or the workspace's current one (created if none)."""
        uri = self.workspaces.resolve(workspace)
        session_id = session_id or self.store.current_session(uri)
        if session_id is None:
            return self._create(uri, sticky=None)
        live = self.load(session_id)
        if live.workspace != uri:
            raise UnknownSession(session_id, uri)
        return live

    def for_messages(self, workspace: str, session_id: str | None) -> LiveSession:
        """:meth:`live`, refusing a worker session (workers take no messages or model swaps)."""
        live = self.live(workspace, session_id)
        if session_id is not None and (live.is_worker or self.store.is_worker(live.id)):
            raise WorkerSession(live.id)
        return live

    def new_session(self, workspace: str) -> SessionInfo:
        """Start a new current session, inheriting the current one's sticky model and profile
        choice (so what the status bar shows stays true)."""
        uri = self.workspaces.resolve(workspace)
        current = self.store.current_session(uri)
        previous = self.load(current) if current else None
        live = self._create(uri, sticky=previous.sticky.active if previous else None)
        if previous is not None and previous.profile is not None:
            live.profile = previous.profile
            self.store.set_profile(live.id, previous.profile)
        self.observer.status_changed(uri)
        return self.info(live.id)

    def resume_session(self, workspace: str, session_id: str) -> SessionInfo:
        """Make an existing top-level session of ``workspace`` its current one again, so the
        next message without a session id continues it (its history, sticky model and profile
        as it had them). A turn still running in the session that was current goes on in that
        session: turns belong to their session, not to whichever is current."""
        uri = self.workspaces.resolve(workspace)
        if self.store.is_worker(session_id):
            raise WorkerSession(session_id)
        live = self.load(session_id)  # UnknownSession if there is none
        if live.workspace != uri:
            raise UnknownSession(session_id, uri)
        if self.store.current_session(uri) != session_id:
            self.store.set_current_session(uri, session_id)
        self.observer.status_changed(uri)
        return self.info(session_id)

    def new_worker(self, planner: LiveSession, role: WorkerRole) -> LiveSession:
        """A worker session of ``planner`` (same workspace), recorded and ready for its turn.

        Built in memory rather than loaded: a new worker has no history, and it shares
        the planner's workspace and skill index."""
        session_id = new_id()
        now = self.clock.now()
        with self.store.db:  # the session and its session.created in one commit
            self.store.db.execute("BEGIN")
            self.store.create_session(session_id, planner.workspace, now,
                                      parent_session_id=role.parent_session_id,
                                      parent_tool_use_id=role.parent_tool_use_id)
            self.store.add_event(SessionCreated(
                timestamp=now, session_id=session_id, workspace=planner.workspace,
                is_worker=True, parent_session_id=role.parent_session_id,
                parent_tool_use_id=role.parent_tool_use_id))
        live = self.unsaved_worker(planner, role, session_id)
        if role.profile is not None:
            self.store.set_profile(session_id, role.profile.name)
        self._keep(live)
        return live

    @staticmethod
    def unsaved_worker(planner: LiveSession, role: WorkerRole, session_id: str = "") -> LiveSession:
        """A worker session of ``planner`` in memory only (nothing recorded, not kept): what
        its turn would be routed as, before it is created (its start's question names the
        model)."""
        return LiveSession(id=session_id, workspace=planner.workspace, folder=planner.folder,
                           sticky=StickyModel(None), history=[], touched=[],
                           skills=planner.skills, worker=role,
                           profile=role.profile.name if role.profile else None)

    def release(self, session_id: str) -> None:
        """Forget a session's in-memory state once nothing runs in it (a finished worker:
        it takes no more turns; its record stays in the store and loads again if asked)."""
        live = self._live.get(session_id)
        if live is not None and live.running is None:
            del self._live[session_id]

    def _keep(self, live: LiveSession) -> None:
        """Hold ``live`` in memory, dropping the least recently used idle sessions beyond
        :data:`MAX_IDLE_LOADED`: a daemon that runs for weeks must not keep every
        transcript it ever loaded. A dropped session reloads from the store when used."""
        self._live[live.id] = live
        self._live.move_to_end(live.id)
        idle = [s for s in self._live.values() if s.running is None]
        for stale in idle[: max(0, len(idle) - MAX_IDLE_LOADED)]:
            del self._live[stale.id]

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
        now = self.clock.now()
        self.store.create_session(session_id, uri, now, sticky_model=sticky)
        self.store.add_event(SessionCreated(timestamp=now, session_id=session_id, workspace=uri))
        self.store.set_current_session(uri, session_id)
        return self.load(session_id)

    def load(self, session_id: str) -> LiveSession:
        """A session, loaded into memory on first use."""
        cached = self._live.get(session_id)
        if cached is not None and cached.running is not None:
            self._live.move_to_end(session_id)
            return cached
        if cached is not None and (stored := self.store.choices(session_id)) is not None \
                and stored[0] == cached.turn_count:
            # Another editor window's daemon may have set the sticky model or the profile.
            _, cached.sticky.active, cached.profile = stored
            self._live.move_to_end(session_id)
            return cached  # else another daemon ran turns in it meanwhile: load it again
        found = self.store.session_to_load(session_id)
        if found is None:
            raise UnknownSession(session_id)
        info, last_index = found
        folder = folder_of(info.workspace)
        live = LiveSession(
            id=session_id, workspace=info.workspace, folder=folder,
            sticky=StickyModel(info.sticky_model), history=[],
            touched=self.store.touched_paths(session_id),
            skills=self.skills_of(folder),
            last_model=info.last_model, turn_count=last_index,
            profile=info.profile)
        live.remember(self.store.messages(session_id))
        if cached is not None:
            live.ended, live.worker = cached.ended, cached.worker
        self._keep(live)
        return live

    def loaded(self, session_id: str) -> LiveSession | None:
        """The session if it is already in memory."""
        return self._live.get(session_id)

    def all_loaded(self) -> list[LiveSession]:
        """Every session in memory."""
        return list(self._live.values())

    def profile(self, live: LiveSession) -> ActiveProfile:
        """The profile ``live``'s turns run with: a worker's is fixed by its planner; else
        the session's choice, then the workspace's default, then the global default."""
        return self.profile_with(live, live.profile)

    def profile_with(self, live: LiveSession, choice: str | None) -> ActiveProfile:
        """As ``profile``, with ``choice`` as the session's own choice of profile."""
        if live.worker is not None and live.worker.profile is not None:
            return live.worker.profile
        return self.config.profiles(str(live.folder)).resolve(choice)

    def set_profile(self, workspace: str, session_id: str | None,
                    name: str | None) -> ProfileSwitch:
        """Choose the session's profile (None: clear the choice, so the defaults apply).

        It applies from the session's next turn; a running turn keeps its profile.
        """
        live = self.for_messages(workspace, session_id)
        profiles = self.config.profiles(str(live.folder))
        if name is not None and profiles.get(name) is None:
            raise UnknownProfile(name, profiles.names())
        before = live.profile
        live.profile = name
        if before != name:
            self.store.set_profile(live.id, name)
        active = self.profile(live)
        choice = profile_in_force(active, profiles)
        # where it was chosen in the editors' words (`the workspace's default`), and its bound
        origin = origin_words(active.resolved_from, active.profile.bound)
        self.observer.status_changed(live.workspace)
        if before == name:
            return ProfileSwitch("unchanged", live.id, choice,
                                 f"Profile unchanged: {active.name} ({origin}).")
        if name is None:
            return ProfileSwitch("cleared", live.id, choice,
                                 f"Session profile cleared; using {active.name} ({origin}).")
        return ProfileSwitch("applied", live.id, choice,
                             f"Profile set: {active.name}. It applies from the next turn.")

    def skills_of(self, folder: Path) -> SkillIndex:
        """The skills of the workspace ``folder`` (its own, then the user's), read again when a
        skill file was added, changed or removed since they were last read."""
        folders = skill_folders(folder, self.config.directory)
        signature = folders_signature(folders, workspace=folder)
        known = self._skills.get(folder)
        if known is None or known[0] != signature:
            known = self._skills[folder] = (signature, SkillIndex.build(folders, workspace=folder))
        return known[1]

    def turn_context(self, live: LiveSession, text: str, images: int,
                     attachments: list[AttachmentBlock] | None = None) -> TurnContext:
        """What routing knows about a turn of ``live`` with ``text`` (and what is attached).
        A session's skills are brought up to date here (a worker keeps its planner's)."""
        attached = attachments or []
        worker = live.worker
        if worker is None:
            live.skills = self.skills_of(live.folder)
        return TurnContext(
            message=text,
            has_images=images > 0,
            estimated_input_tokens=_FIXED_TOKENS + live.history_tokens
            + estimate_turn([text, *(a.rendered() for a in attached)], images),
            has_tool_definitions=offers_tools(self.profile(live).profile, [
                *worker.allowed_tools, *(e.spec.name for e in worker.extra_tools)]
                if worker else TOOLBOX_NAMES),
            has_system_prompt=True,
            requires_structured_output=worker.requires_structured_output if worker else False,
            has_tool_calls_in_history=live.has_tool_calls,
            files_touched=(*live.touched, *inside_workspace(attached)),
            workspace_path=str(live.folder),
            local_time=self.clock.local_time(),
            cost_today_usd=self.cost_today(),
            skills_matching=live.skills.matching(text),
        )

    def cost_today(self) -> Decimal:
        """Spend across all sessions since 00:00 UTC."""
        today = self.clock.now().astimezone(UTC).date()
        if self._today[0] != today:
            self._today = (today, datetime.combine(today, time(0), tzinfo=UTC))
        return self.store.cost_since(self._today[1])

    def estimated_today(self) -> Decimal:
        """The part of :meth:`cost_today` that is estimated (calls cut short)."""
        self.cost_today()  # today's start, as it reckons it
        return self.store.estimated_since(self._today[1])

    def set_model(self, workspace: str, session_id: str | None, model: str | None,
                  undo: str = UNDO_STICKY) -> SwapResult:
        """Set (or clear, with None) a session's sticky model; queued while a turn runs.
        ``undo`` is how the message says to clear it again, in terms of how it was set
        (``run /model -`` after /model)."""
        live = self.for_messages(workspace, session_id)
        target = self.router.resolve_model(model) if model is not None else None
        dropped = live.sticky.pending is not None
        outcome = live.sticky.request(target)
        # A turn of the session runs in another window (another daemon): the change waits for
        # it, as behind a turn of this window's own.
        elsewhere = live.running is None and self.store.session_running_elsewhere(live.id)
        if self.learning is not None and target not in (None, live.last_model) \
                and live.running is None and not elsewhere:
            # Only an immediate /model change judges the last answer; one made while a turn
            # runs (here or elsewhere) comes after a new message: the user moved on already.
            self.learning.model_changed(live.id)
        if outcome is not SwapOutcome.QUEUED:
            self.store.set_sticky(live.id, live.sticky.active)
        else:
            stored = self.store.choices(live.id)
            live.swap_queued_over = stored[1] if stored is not None else live.sticky.active
        pending = live.sticky.pending
        self.observer.status_changed(live.workspace)
        if outcome in (SwapOutcome.APPLIED, SwapOutcome.CLEARED) and elsewhere:
            # Stored at once, but the turn another window runs routed already: to the user it
            # is queued behind that turn, and the editors say so as for one of their own.
            return SwapResult(outcome=SwapOutcome.QUEUED.value, session_id=live.id,
                              sticky_model=live.sticky.active,
                              pending_swap=PendingSwapInfo(target),
                              message=_waiting_message(target, undo))
        return SwapResult(outcome=outcome.value, session_id=live.id,
                          sticky_model=live.sticky.active,
                          pending_swap=PendingSwapInfo(pending.model) if pending else None,
                          message=_swap_message(outcome, target, pending, undo, dropped))


MAX_IDLE_LOADED = 64
"""Idle sessions kept in memory; more are dropped least recently used first."""

# The system prompt and tool definitions every turn sends (estimated once).
_FIXED_TOKENS = estimate_turn([system_prompt(Path("/" + "x" * 40), "provider:model-name",
                                             ALL_DEFINITIONS),
                               json.dumps([t.input_schema for t in ALL_DEFINITIONS])])


def _waiting_message(model: str | None, undo: str) -> str:
    """The answer to a change stored at once while another window's turn runs in the session:
    that turn routed already, so the change applies from the next turn on (as one queued
    behind this window's own turn; the last request of either window wins)."""
    waits = "Applies to next turn: the turn running in another window keeps its model."
    if model is None:
        return f"Sticky model will be cleared. {waits}"
    return f"Model swap pending: {model}. {waits} Your rules are skipped from then until you " \
        f"{undo}."


def _swap_message(outcome: SwapOutcome, model: str | None, pending: object, undo: str,
                  dropped: bool = False) -> str:
    if outcome is SwapOutcome.QUEUED:
        return pending_banner(pending)  # type: ignore[arg-type]
    if outcome is SwapOutcome.CLEARED:
        return "Sticky model cleared; routing follows your rules again."
    if outcome is SwapOutcome.UNCHANGED and dropped:  # a queued change undone mid-turn
        stays = f"the sticky model stays {model}" if model else \
            "there is still no sticky model (routing follows your rules)"
        return f"The change waiting for the running turn is dropped: {stays}."
    if outcome is SwapOutcome.UNCHANGED:
        return f"Sticky model unchanged ({model or 'none'})."
    return f"Sticky model set: {model}. Your rules are skipped until you {undo}."
