"""The composition root of the daemon and the one API the language server calls.

The language server creates one :class:`Switchman` and adapts each request to
one of its methods; tests create one directly. Nothing here knows about LSP.

Parts, wired here: the workspace registry, the session manager (finding and
creating sessions, workers included), the turn lifecycle (routing, running,
ending and cancelling turns), delegation (the ``delegate`` tool and its
workers) and the read-only queries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sqlite3
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path

import msgspec

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import Clock, SystemClock
from switchman.engine.config.paths import (
    config_dir,
    data_dir,
    workspace_profiles_file,
    workspace_routing_file,
)
from switchman.engine.config.registry import ProviderSpec
from switchman.engine.config.store import ConfigStore
from switchman.engine.config.watch import ConfigPoll, poll_interval
from switchman.engine.delegation.by_user import UserDelegation
from switchman.engine.delegation.focus import is_delegate_message
from switchman.engine.delegation.workers import Delegation
from switchman.engine.errors import (
    DataFolderUnusable,
    EmptyMessage,
    InvalidAttachment,
    NothingToRate,
    WorkerSession,
    check_text,
)
from switchman.engine.events import (
    ApplyAnswered,
    Event,
    EventBus,
    PolicyInvalid,
    ProviderRecovered,
    ProviderUnavailable,
)
from switchman.engine.keys import KeyRing
from switchman.engine.learning import database as patterns_db
from switchman.engine.learning.evaluator import attached_keys
from switchman.engine.learning.hooks import learn_from_turns
from switchman.engine.learning.recorder import FeedbackResult, OutcomeRecorder
from switchman.engine.learning.store import LearnedPatternStore
from switchman.engine.messages import ApprovalRecord, AttachmentRequest, ImageBlock
from switchman.engine.patterns import PatternStore
from switchman.engine.profiles.apply import visible_skills
from switchman.engine.providers.base import AdapterSource
from switchman.engine.providers.factory import AdapterFactory
from switchman.engine.router import Router
from switchman.engine.sessions import slash_commands
from switchman.engine.sessions.attachments import attachment_blocks, check_images
from switchman.engine.sessions.lifecycle import TurnLifecycle
from switchman.engine.sessions.manager import SessionManager, SessionObserver
from switchman.engine.sessions.queries import SessionQueries
from switchman.engine.sessions.records import (
    Explanation,
    ModelList,
    Preview,
    ProfileList,
    ProfileSwitch,
    SessionDetail,
    SessionInfo,
    SessionList,
    StatusSnapshot,
    SwapResult,
    TurnResult,
)
from switchman.engine.sessions.turn import TurnRunner
from switchman.engine.sessions.watch import Ratings, SharedSessionWatch, session_poll_interval
from switchman.engine.sessions.workspaces import WorkspaceRegistry, named_folder_uri
from switchman.engine.store.database import checkpoint_every, connect
from switchman.engine.store.ownership import DaemonLease
from switchman.engine.store.repository import SessionStore
from switchman.engine.tools.apply_code import ApplyCodeRequest, ApplyCodeResult, apply_code
from switchman.engine.tools.approval import (
    ApprovalPolicy,
    Approver,
    DenyAll,
    TrustEntry,
    TrustList,
    TrustRevoked,
    TrustStore,
)
from switchman.engine.tools.buffers import EditorTexts, no_editor_texts
from switchman.engine.tools.changes import DiskApplier, EditApplier
from switchman.engine.tools.registry import ToolContext, ToolRegistry
from switchman.engine.tools.toolbox import WORKER_EXCLUDED, Toolbox, ToolServices
from switchman.engine.turn_starts import TurnStarts

log = logging.getLogger(__name__)
DATABASE_NAME = "switchman.db"
AVAILABILITY_TICK_SECONDS = 30.0
CHECKPOINT_SECONDS = 5.0
"""How often the database's write-ahead log is checkpointed, off the event loop."""
WRITER_BUSY_SECONDS = 60.0
"""How long a patterns.db write waits for the file's write lock (on the pattern writer
thread, never the event loop) before it is given up and logged."""


_DAMAGED = (sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_CORRUPT)
"""SQLite's answers for a file that is not a database, or a damaged one (not a locked or
unwritable one, which are the folder's problem)."""


class Switchman:
    """Configuration, routing, availability, storage and sessions, wired together."""

    def __init__(
        self,
        observer: SessionObserver,
        *,
        config_folder: Path | None = None,
        data_folder: Path | None = None,
        clock: Clock | None = None,
        environ: Mapping[str, str] = os.environ,
        patterns: PatternStore | None = None,
        adapters: AdapterSource | None = None,
        approver: Approver | None = None,
        applier: EditApplier | None = None,
        editor_texts: EditorTexts = no_editor_texts,
        turn_starts: TurnStarts | None = None,
        keys: KeyRing | None = None,
    ) -> None:
        self.clock = clock or SystemClock()
        self._environ = environ
        self._key_ring = keys or KeyRing(environ)
        """The providers' keys, each key file read again only once it changed."""
        data = data_folder or data_dir(environ)
        self._database = data / DATABASE_NAME
        # the data folder first: when it cannot be written nothing else is started
        self.store, self.patterns = self._open_data(data)
        self.bus = EventBus()
        self.config = ConfigStore(config_folder or config_dir(environ), bus=self.bus,
                                  clock=self.clock, background=True,
                                  on_change=self._config_checked)
        self.availability = AvailabilityTracker(self.clock, self.bus)
        self.learning = OutcomeRecorder(self.patterns)
        self.trust = TrustStore(data)
        self.router = Router(self.config, clock=self.clock,
                             configured=self._configured,
                             availability=self.availability,
                             patterns=self.patterns if patterns is None else patterns)
        self.workspaces = WorkspaceRegistry()
        self.turn_starts = turn_starts or TurnStarts()
        """When each chat's turn starts (see :meth:`_settle`); the editor's side holds
        them while it waits for an edit's diagnostics."""
        self.sessions = SessionManager(store=self.store, router=self.router, config=self.config,
                                       clock=self.clock, observer=observer, trust=self.trust,
                                       workspaces=self.workspaces)
        factory = AdapterFactory(self._key_ring, self._keys)
        self._adapters = factory if adapters is None else None
        """The SDK adapters, unless a test passed its own (:meth:`expect_turn`)."""
        # what a dead daemon's cut-off call is charged at when its turn is interrupted
        self.store.pricing = lambda model: (spec.pricing if (spec := self.router.registry()
                                                             .get(model)) else None)
        self.lifecycle = TurnLifecycle(self.sessions, self.router, adapters or factory,
                                       TurnRunner(self.store, self.availability, self.clock,
                                                  key_of=self._key_fingerprint))
        self.tool_services = ToolServices(
            ApprovalPolicy(self.trust, approver or DenyAll()), applier or DiskApplier(), environ,
            self._key_variables, editor_texts, self._keys)
        self.lifecycle.tool_sources[0] = self._toolbox  # in place of the read-only tools
        self.delegation = Delegation(self.sessions, self.lifecycle, self.config, self.clock,
                                     self.tool_services.policy)
        self.user_delegation = UserDelegation(self.delegation)
        self.queries = SessionQueries(self.sessions, self.availability, self._key_ring)
        learn_from_turns(self.learning, self.sessions, self.lifecycle)
        self.interrupt_orphans()
        self.bus.subscribe(self._on_event)
        self.shared_sessions = SharedSessionWatch(
            self.store, lambda: self.workspaces,
            Ratings(self.patterns.rescore_count, self.patterns.feedback_of_session))
        """What other daemons (other editor windows) change in this editor's sessions."""
        self._ticker: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        self._checkpoints: asyncio.Task[None] | None = None
        self._config_poll: asyncio.Task[None] | None = None
        self._skills_poll: asyncio.Task[None] | None = None

    def _open_data(self, data: Path) -> tuple[SessionStore, LearnedPatternStore]:
        """The session store and the pattern store in ``data``; DataFolderUnusable (naming
        the folder and why) when the folder cannot be created or written."""
        lease: DaemonLease | None = None
        opening = data
        try:
            lease = DaemonLease(data)  # creates the folder and writes in it: fails first
            opening = self._database
            store = SessionStore(connect(self._database, checkpoint_elsewhere=True), lease)
            opening = patterns_file = data / patterns_db.FILE_NAME
            # two connections: slot 4 reads on the loop, the recorder writes on its own thread
            patterns = LearnedPatternStore(
                patterns_db.connect(patterns_file), self.clock,
                writer=patterns_db.connect(patterns_file, busy_seconds=WRITER_BUSY_SECONDS))
        except (OSError, sqlite3.Error) as error:
            if lease is not None:  # the next request tries again, with a lease of its own
                lease.release()
            if getattr(error, "sqlite_errorcode", None) in _DAMAGED and opening != data \
                    and opening.is_file():  # the folder is fine; one file in it is not
                raise DataFolderUnusable(str(data), str(error), damaged=str(opening)) from error
            reason = f"{error.strerror}: {error.filename}" if isinstance(error, OSError) \
                and error.strerror else f"{error}: {data}"
            raise DataFolderUnusable(str(data), reason) from error
        return store, patterns

    # -- workspaces ----------------------------------------------------------------------

    def open_workspace(self, folder: str) -> str:
        """Register an editor folder (URI or path); returns its URI and announces its status."""
        uri = self.workspaces.open(folder)
        self.shared_sessions.remember(uri)
        # the folder will chat: a large learned store starts loading now, on a thread
        self.patterns.prepare(str(self.workspaces.folder(uri)))
        self.sessions.observer.status_changed(uri)
        return uri

    def close_workspace(self, folder: str) -> None:
        """Forget a folder the editor closed."""
        self.workspaces.close(folder)

    def announce_status(self) -> None:
        """Send every open workspace's status (after start-up or a configuration change)."""
        for uri in self.workspaces:
            self.sessions.observer.status_changed(uri)

    # -- chat ----------------------------------------------------------------------------

    async def chat(self, workspace: str, session_id: str | None, message: str,
                   images: list[ImageBlock] | None = None,
                   attachments: list[AttachmentRequest] | None = None, *,
                   typed: str | None = None) -> TurnResult:
        """A chat message: a slash command, or a turn (cancelled turns end normally).
        ``typed``: the message as the user typed it, when the editor sends another text
        (kept for the transcript and the title; the model never reads it)."""
        check_text(message)
        check_text(typed or "", "typed")
        for image in images or []:
            check_text(image.media_type + image.data, "image")
        check_images(images or [])
        for attachment in attachments or []:
            check_text(attachment.uri + (attachment.text or ""), "attachment")
        live = self.sessions.for_messages(workspace, session_id)
        mark = self.learning.last_write()
        cancelled = await self._settle(str(live.folder))  # route with the files as saved
        if slash_commands.command_name(message) is not None:
            if cancelled:
                raise asyncio.CancelledError
            if is_delegate_message(message):
                if images:  # a worker's handoff is text: say so rather than drop them
                    raise InvalidAttachment("Images cannot be handed to a worker; send them in "
                                            "a message, or describe them in the task.")
                return await self._learned(mark, await self.user_delegation.run(
                    live, message, await asyncio.to_thread(attachment_blocks, live.folder,
                                                           attachments or []), typed=typed))
            return await self._learned(mark, await slash_commands.run(
                self.sessions, self.lifecycle, self.queries, live, message))
        text, override = self.router.parse(message)
        # Files are read on a thread, but a message without any starts its turn in this pass
        # (a thread's round trip was ~0.25 ms before the first token, and the turn's start
        # would no longer see the configuration settle() looked at)
        attached = await asyncio.to_thread(attachment_blocks, live.folder, attachments) \
            if attachments else []
        if not text.strip() and not images and not attached:
            raise EmptyMessage(override.token if override else "")  # "" reads as an empty message
        self.learning.message_sent(live.id, text, override.model if override else None,
                                   attached_keys([*(images or []), *attached]))
        return await self._learned(mark, (await self.lifecycle.run(
            live, text, images or [], override, attached, cancelled=cancelled,
            typed=message if typed is None else typed)).result)

    async def _learned(self, mark: Future[object] | None, result: TurnResult) -> TurnResult:
        """``result``, answered once what its message taught the pattern store since ``mark``
        (the turn's row, a ``/model`` or ``/route`` verdict on the turn before) is committed,
        for a bounded time: the row then survives a ``kill -9`` right after the answer, as
        the transcript does. A cancellation arriving meanwhile leaves the result as it is."""
        try:
            await self.learning.settled(mark)
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
        return result

    async def _settle(self, folder: str) -> bool:
        """Wait for this turn's start, then for the folder's config checks; True if the
        caller was cancelled meanwhile.

        Turn starts take turns, each after one pass of the event loop, and give way to an
        edit's diagnostics for a bounded time (:class:`TurnStarts`). A start (routing, the
        durable record, the turn's tools and prompt) runs without yielding, and twenty
        chats sent at once were twenty starts queued on the loop ahead of whatever the
        editor sent with them: a diagnostics check waited for all of them (about 170 ms).
        After its turn, the start has no wait before its turn's task is created, unless a
        configuration check is due.

        A message cancelled before its turn could start is still recorded, as a turn
        that ends ``cancelled`` at once, so the editor's view and the history agree.
        """
        try:
            await self.turn_starts.take_turn()
            await self.config.settle(folder)  # its look at the files serves the start
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None:
                task.uncancel()
            return True
        return False

    async def cancel(self, turn_id: str, tool_use_id: str | None = None) -> tuple[bool, str]:
        """Cancel a running turn (a worker's turn cancels only that worker), or with
        ``tool_use_id`` only that delegation of the planner's turn (one still waiting for a
        worker slot too); returns (whether it was running, its final status)."""
        if tool_use_id is not None:
            return await self.delegation.stop(turn_id, tool_use_id)
        return await self.lifecycle.cancel(turn_id)

    def turns_running(self) -> bool:
        """Whether any turn (a worker's included) is in flight."""
        return self.lifecycle.any_running()

    def cancel_all(self) -> None:
        """Cancel every running turn; each keeps what it streamed."""
        self.lifecycle.cancel_all()

    def new_session(self, workspace: str) -> SessionInfo:
        """Start a new current session in ``workspace`` (its SDK is got ready: a message
        usually follows)."""
        info = self.sessions.new_session(workspace)
        self.expect_turn(self.queries.likely_model(workspace))
        return info

    def resume_session(self, workspace: str, session_id: str) -> SessionInfo:
        """Make an older session of ``workspace`` its current one (its SDK is got ready: a
        message usually follows)."""
        info = self.sessions.resume_session(workspace, session_id)
        self.expect_turn(self.queries.likely_model(workspace))
        return info

    async def set_model(self, workspace: str, session_id: str | None,
                        model: str | None) -> SwapResult:
        """Set or clear (None) the sticky model; queued while a turn runs. Answered once what
        the change said of the last turn ("model changed") is in the pattern store, as the
        chat's ``/model`` is (waiting at most :data:`SETTLE_SECONDS`)."""
        mark = self.learning.last_write()
        result = self.sessions.set_model(workspace, session_id, model)
        await self.learning.settled(mark)
        return result

    async def set_profile(self, workspace: str, session_id: str | None,
                          profile: str | None) -> ProfileSwitch:
        """Choose (or clear, with None) the session's agent profile (from the profile files
        as saved)."""
        await self.config.settle(str(self.workspaces.folder(workspace)))
        return self.sessions.set_profile(workspace, session_id, profile)

    # -- answers -------------------------------------------------------------------------

    async def profiles(self, workspace: str, session_id: str | None) -> ProfileList:
        """Every agent profile usable in ``workspace`` and the session's active one (from the
        profile files as saved)."""
        await self.config.settle(str(self.workspaces.folder(workspace)))
        return self.queries.profiles(workspace, session_id)

    def status(self, workspace: str) -> StatusSnapshot:
        """What the workspace's status bar shows now (the editor is told of the session as
        it is: another daemon's changes are announced from what is noted here on)."""
        status = self.queries.status(workspace)
        self.shared_sessions.remember(self.workspaces.resolve(workspace))
        return status

    def models(self, workspace: str) -> ModelList:
        """Every model and whether it can be used now."""
        return self.queries.models(workspace)

    def explain(self, workspace: str | None, session_id: str | None,
                turn_id: str | None) -> Explanation:
        """"Why this model?" for a turn (default: the session's last)."""
        return self.queries.explain(workspace, session_id, turn_id)

    async def preview(self, workspace: str, session_id: str | None, message: str,
                      has_images: bool,
                      attachments: list[AttachmentRequest] | None = None) -> Preview:
        """Where a draft would go, without sending it (and that model's SDK is got ready: the
        draft is being typed). ``attachments``: what the message would carry, read on a
        thread and checked as a chat message's are, so that the preview routes it the same
        way; and like a message's turn, it routes with the configuration files as saved."""
        check_text(message)  # a draft with a lone surrogate could never be sent either
        for attachment in attachments or []:
            check_text(attachment.uri + (attachment.text or ""), "attachment")
        folder = self.workspaces.folder(self.workspaces.resolve(workspace))
        attached = await asyncio.to_thread(attachment_blocks, folder, attachments) \
            if attachments else []
        await self.config.settle(str(folder))
        preview = self.queries.preview(workspace, session_id, message, has_images, attached)
        self.expect_turn(preview.model)
        return preview

    def session_list(self, workspace: str, include_workers: bool) -> SessionList:
        """The workspace's sessions, newest first (workers nested if asked). The chat view
        asks when it opens, so the SDK of the likely model is got ready."""
        listing = self.queries.sessions(workspace, include_workers)
        self.expect_turn(self.queries.likely_model(workspace))
        return listing

    def session(self, session_id: str) -> SessionDetail:
        """One session's transcript, turns, costs and ratings (a worker's too)."""
        detail = self.queries.session(session_id)
        # The ratings live in the pattern store, beside what routing learns from them.
        return msgspec.structs.replace(detail, ratings=self.learning.ratings(session_id))

    # -- tools ---------------------------------------------------------------------------

    def _toolbox(self, context: ToolContext, tools: ToolRegistry) -> None:
        """Offer a turn the workspace tools: reads, file changes, commands, memory, skills."""
        live = self.sessions.loaded(context.session_id)  # never a reload mid-start
        skills = visible_skills(self.sessions.profile(live).profile, live.skills) \
            if live is not None else None
        tools.add_set(Toolbox(context, self.tool_services, skills))
        if context.is_worker:
            for name in WORKER_EXCLUDED:
                tools.withhold(name, "workers never change the workspace memory")

    def trust_list(self, workspace: str | None = None) -> TrustList:
        """The tools always allowed, in one workspace or in all of them."""
        entries = self.trust.all()
        if workspace is not None:
            uri = named_folder_uri(workspace)
            entries = {uri: entries.get(uri, [])}
        return TrustList([TrustEntry(w, t) for w, t in entries.items()], self.trust.problem)

    def revoke_trust(self, workspace: str, tool: str | None = None) -> TrustRevoked:
        """Stop always allowing ``tool`` (every tool when None) in ``workspace``."""
        uri = named_folder_uri(workspace)
        return TrustRevoked(uri, self.trust.revoke(uri, tool))

    async def apply_code(self, request: ApplyCodeRequest) -> ApplyCodeResult:
        """Put a code block into a workspace file, asking first like an edit tool does."""
        uri = self.workspaces.resolve(request.workspace)
        return await apply_code(self.tool_services.policy, self.tool_services.applier,
                                replace(request, workspace=uri), self.workspaces.folder(uri),
                                lambda approval: self._keep_apply(request, approval))

    def _keep_apply(self, request: ApplyCodeRequest, approval: ApprovalRecord) -> None:
        """Keep an Apply's question and answer in the turn whose code block it applied (when
        the editor named a stored turn, of the session it named if it named one), for a
        rebuilt chat."""
        try:
            turn = self.store.turn(request.turn_id) if request.turn_id else None
            if turn is not None and request.session_id in ("", turn.session_id):
                self.store.add_event(ApplyAnswered(timestamp=self.clock.now(),
                                                   session_id=turn.session_id,
                                                   turn_id=request.turn_id, approval=approval),
                                     request.turn_id)
        except sqlite3.Error:  # the edit is made or refused already: say that, keep no card
            log.warning("could not keep the Apply's answer with turn %s", request.turn_id,
                        exc_info=True)

    def _keys(self) -> list[str]:
        """The API keys masked in what tools return and in what models answer: those the
        configured providers have now, and every one read before (a rotated key)."""
        return self._key_ring.masked(self.router.registry().providers.values())

    def _key_variables(self) -> list[str]:
        """The environment variables configured providers read API keys from."""
        return [p.api_key_env for p in self.router.registry().providers.values()
                if p.api_key_env]
    async def feedback(self, turn_id: str, rating: str) -> FeedbackResult:
        """👍 (``up``) or 👎 (``down``) on a turn, or ``none`` to take it back, once committed
        (after the turn's row); raises UnknownTurn if it was never recorded, NothingToRate if
        it ended before answering anything (it would teach that its model did well, or badly,
        on a message it never answered: the editors offer no rating there), WorkerSession if a
        worker ran it (its answer went to the planner; its row keeps the rubric's score)."""
        turn = self.store.turn(turn_id)
        if rating != "none" and turn is not None and self.store.is_worker(turn.session_id):
            raise WorkerSession(turn.session_id, turn_id)
        if rating != "none" and turn is not None \
                and turn.status not in ("completed", "running") \
                and not self.store.answered(turn_id):
            raise NothingToRate(turn_id, turn.status)
        # Other windows on the session are told of it (their daemons' watch); this one's
        # editor shows it already, so it is not announced back.
        self.shared_sessions.rating(turn_id)
        value: int | None = None
        try:
            result = await self.learning.feedback(turn_id, rating)
            value = 1 if rating == "up" else -1 if rating == "down" else 0
            return result
        finally:
            self.shared_sessions.rated(turn_id, turn.session_id if turn else None, value)

    def _configured(self, provider: ProviderSpec) -> bool:
        """Whether calls to ``provider`` can be made (a key is set, or none is needed). A key
        other than the one the provider refused ends that outage first: the user fixed it."""
        if self.availability.refused_key(provider.name) is not None:
            self.availability.key_now(provider.name, self._key_fingerprint(provider))
        return self._key_ring.present(provider)

    def _key_fingerprint(self, provider: ProviderSpec) -> str | None:
        return self._key_ring.fingerprint(provider)

    def expect_turn(self, model: str | None) -> None:
        """A turn on ``model`` is likely soon: create its provider's adapter (importing the
        SDK) on a worker thread now, so that neither an idle daemon holds an SDK nor the turn
        waits for the import (architecture.md, "Start-up")."""
        if model is None or self._adapters is None:
            return
        provider = self.router.registry().provider_of(model)
        if provider is not None and self._key_ring.present(provider):
            self._adapters.prepare(provider)

    def start_background(self) -> None:
        """Start periodic work (outage auto-clear) on the running event loop."""
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())
            self._checkpoints = asyncio.get_running_loop().create_task(
                checkpoint_every(self._database, CHECKPOINT_SECONDS))
            self._watch = asyncio.get_running_loop().create_task(
                self._watch_other_daemons(session_poll_interval(self._environ)))

    def watch_config(self, *, user_files: bool, workspace_files: bool) -> None:
        """Poll the user's config files and/or each workspace's routing file for saved changes.

        Used for what the editor does not watch for us (``workspace/didChangeWatchedFiles``).
        """
        if self._config_poll is not None or not (user_files or workspace_files):
            return

        def paths() -> list[Path]:
            user = [self.config.models_path, self.config.routing_path,
                    self.config.profiles_path] if user_files else []
            uris = list(self.workspaces) if workspace_files else []
            folders = [self.workspaces.folder(uri) for uri in uris]
            return user + [workspace_routing_file(f) for f in folders] \
                + [workspace_profiles_file(f) for f in folders]

        poll = ConfigPoll(paths, self.announce_status)
        self._config_poll = asyncio.get_running_loop().create_task(
            poll.run(poll_interval(self._environ)))

    def watch_block_skills(self, on_change: Callable[[], None],
                           wanted: Callable[[], bool]) -> None:
        """Poll, while ``wanted()``, the skills folders a rule of a ``workspaces:`` block of the
        user's routing.yaml (as in force) may name: the block's folder's and those of the
        folders below it (:func:`.skill_names.blocks_skills`), which no editor watches (they
        lie outside the open folders, and a block keyed on ``~`` covers too many to watch);
        ``on_change`` after one changed. The walks run off the event loop."""
        if self._skills_poll is not None:
            return
        # the check's modules: imported once a routing.yaml is open, not at the daemon's start
        from switchman.engine.config.skill_names import blocks_skills  # noqa: PLC0415

        def blocks() -> list[Path]:
            return [Path(block.path) for block in self.config.policy().workspaces] \
                if wanted() else []

        # a block first seen: its skills may have changed before (the routing.yaml just read)
        poll = ConfigPoll(blocks, on_change, look=blocks_skills, new_is_change=True)
        self._skills_poll = asyncio.get_running_loop().create_task(
            poll.run(poll_interval(self._environ)))

    async def stop_background(self) -> None:
        """Stop periodic work."""
        for task in (self._ticker, self._config_poll, self._skills_poll, self._checkpoints,
                     self._watch):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._ticker = self._config_poll = self._skills_poll = self._checkpoints = None
        self._watch = None
        self.config.close()
        await self.learning.written()  # the rows of turns that have ended are on disk

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(AVAILABILITY_TICK_SECONDS)
            self.availability.tick()
            self.interrupt_orphans()

    async def _watch_other_daemons(self, interval: float) -> None:
        while True:
            await asyncio.sleep(interval)
            self.announce_others_changes()

    def announce_others_changes(self) -> None:
        """Tell the editor about sessions it shows that another daemon changed (a message
        sent or a sticky model or profile set in another editor window): their status, and
        that the transcript is worth fetching again."""
        try:
            changed = self.shared_sessions.changed()
        except sqlite3.Error:  # the database is busy or locked: the next check sees it
            log.debug("could not check for other daemons' changes", exc_info=True)
            return
        for workspace, session_id in changed:
            self.sessions.observer.status_changed(workspace)
            self.sessions.observer.session_changed(workspace, session_id)

    def interrupt_orphans(self) -> None:
        """Mark turns of daemons that died mid-turn as interrupted (other daemons' live turns
        are left alone: several editor windows share one database)."""
        interrupted = self.store.interrupt_orphans(self.clock.now())
        if interrupted:
            log.warning("marked %d turn(s) left running by a daemon that ended as interrupted",
                        interrupted)
            self.announce_status()

    def _config_checked(self) -> None:
        """A changed configuration file was checked: what the status shows may differ."""
        self.announce_status()

    def _on_event(self, event: Event) -> None:
        """Keep session-independent events and tell every workspace its status changed."""
        if isinstance(event, PolicyInvalid | ProviderUnavailable | ProviderRecovered):
            self.store.add_event(event)
            self.announce_status()

