"""The composition root of the daemon: one object that owns the engine's parts.

The language server creates one :class:`Switchman` and adapts its methods to
LSP; tests create one directly. Nothing here knows about LSP.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import threading
from collections.abc import Mapping
from pathlib import Path

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import Clock, SystemClock
from switchman.engine.config.paths import config_dir, data_dir
from switchman.engine.config.store import ConfigStore
from switchman.engine.events import (
    Event,
    EventBus,
    PolicyInvalid,
    ProviderRecovered,
    ProviderUnavailable,
)
from switchman.engine.keys import key_present
from switchman.engine.learning import database as patterns_db
from switchman.engine.learning.recorder import FeedbackResult, OutcomeRecorder
from switchman.engine.learning.store import LearnedPatternStore
from switchman.engine.messages import ImageBlock
from switchman.engine.patterns import PatternStore
from switchman.engine.providers.factory import AdapterFactory
from switchman.engine.router import Router
from switchman.engine.sessions import commands
from switchman.engine.sessions.manager import SessionManager, SessionObserver
from switchman.engine.sessions.records import TurnResult
from switchman.engine.sessions.views import SessionViews
from switchman.engine.store.database import connect
from switchman.engine.store.ownership import DaemonLease
from switchman.engine.store.repository import SessionStore

log = logging.getLogger(__name__)
DATABASE_NAME = "switchman.db"
AVAILABILITY_TICK_SECONDS = 30.0


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
    ) -> None:
        self.clock = clock or SystemClock()
        self.bus = EventBus()
        self.config = ConfigStore(config_folder or config_dir(environ), bus=self.bus,
                                  clock=self.clock)
        self.availability = AvailabilityTracker(self.clock, self.bus)
        data = data_folder or data_dir(environ)
        self.store = SessionStore(connect(data / DATABASE_NAME), DaemonLease(data))
        self.patterns = LearnedPatternStore(
            patterns_db.connect(data / patterns_db.FILE_NAME), self.clock)
        self.learning = OutcomeRecorder(self.patterns)
        self.router = Router(self.config, clock=self.clock,
                             configured=lambda provider: key_present(provider, environ),
                             availability=self.availability,
                             patterns=self.patterns if patterns is None else patterns)
        self.sessions = SessionManager(
            store=self.store, router=self.router, config=self.config,
            availability=self.availability, adapters=AdapterFactory(environ), clock=self.clock,
            observer=observer, learning=self.learning)
        self.views = SessionViews(self.sessions)
        self.interrupt_orphans()
        self.bus.subscribe(self._on_event)
        self._ticker: asyncio.Task[None] | None = None
        self._environ = environ

    async def chat(self, workspace: str, session_id: str | None, message: str,
                   images: list[ImageBlock] | None = None) -> TurnResult:
        """A chat message: a slash command, or a turn."""
        if commands.command_name(message) is not None:
            live = self.sessions.live(workspace, session_id)
            return await commands.run(self.sessions, self.views, live, message)
        return await self.sessions.chat(workspace, session_id, message, images)

    def feedback(self, turn_id: str, rating: str) -> FeedbackResult:
        """👍 (``up``) or 👎 (``down``) on a turn; raises UnknownTurn if it was never recorded."""
        return self.learning.feedback(turn_id, rating)

    def prepare_providers(self) -> None:
        """Import the SDKs of configured providers in a worker thread, ahead of the first turn.

        Importing an SDK takes most of a second; doing it now, off the event loop,
        keeps it out of the first turn's latency without slowing start-up.
        """
        registry = self.router.registry()
        apis = {p.api for p in registry.providers.values()
                if any(m.provider == p.name for m in registry.models.values())
                and key_present(p, self._environ)}
        modules = sorted({"anthropic" if api.value == "anthropic" else "openai" for api in apis})
        if modules:
            threading.Thread(target=_import_all, args=(modules,), name="sdk-preload",
                             daemon=True).start()

    def start_background(self) -> None:
        """Start periodic work (outage auto-clear) on the running event loop."""
        if self._ticker is None:
            self._ticker = asyncio.get_running_loop().create_task(self._tick())

    async def stop_background(self) -> None:
        """Stop periodic work."""
        if self._ticker is not None:
            self._ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._ticker
            self._ticker = None

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(AVAILABILITY_TICK_SECONDS)
            self.availability.tick()
            self.interrupt_orphans()

    def interrupt_orphans(self) -> None:
        """Mark turns of daemons that died mid-turn as interrupted (other daemons' live turns
        are left alone: several editor windows share one database)."""
        interrupted = self.store.interrupt_orphans(self.clock.now())
        if interrupted:
            log.warning("marked %d turn(s) left running by a daemon that ended as interrupted",
                        interrupted)
            self.sessions.for_each_workspace(self.sessions.observer.status_changed)

    def _on_event(self, event: Event) -> None:
        """Keep session-independent events and tell every workspace its status changed."""
        if isinstance(event, PolicyInvalid | ProviderUnavailable | ProviderRecovered):
            self.store.add_event(event)
            self.sessions.for_each_workspace(self.sessions.observer.status_changed)


def _import_all(modules: list[str]) -> None:
    for module in modules:
        try:
            importlib.import_module(module)
        except ImportError:  # reported properly when a turn actually needs it
            log.warning("could not import %s", module)
