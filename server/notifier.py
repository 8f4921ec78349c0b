"""Forwards what sessions produce to the editor as ``switchman/*`` notifications."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from switchman.engine.errors import SwitchmanError
from switchman.server import methods
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.engine.sessions.records import ChatDelta, DelegationUpdate, RouteNotice
    from switchman.server.app import SwitchmanServer

log = logging.getLogger(__name__)

STATUS_COALESCE_SECONDS = 0.05
"""Status changes within this window are sent as one notification (turn start and
end, repeated /model, several outage events), off the turn's hot path."""


class EditorNotifier:
    """The engine's :class:`SessionObserver`, speaking LSP notifications."""

    def __init__(self, server: SwitchmanServer) -> None:
        self.server = server
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._computing: str | None = None
        self._holds: dict[str, int] = {}
        """Answers being prepared that a workspace's status must not overtake, by workspace
        (:meth:`status_held`)."""
        self._held: set[str] = set()
        """Workspaces whose status came due while held: sent once the hold ends."""

    def route_decided(self, notice: RouteNotice) -> None:
        """Tell the editor which model took the turn and why."""
        self.server.notify_json(methods.ROUTE_DECIDED, to_wire(notice))

    def delta(self, delta: ChatDelta) -> None:
        """Stream a piece of output."""
        self.server.notify_json(methods.CHAT_DELTA, to_wire(delta))

    def delegation(self, update: DelegationUpdate) -> None:
        """Tell the editor a delegation started, progressed or ended."""
        self.server.protocol.notify(methods.DELEGATION, to_wire(update))

    def session_changed(self, workspace: str, session_id: str | None) -> None:
        """Tell the editor another window changed the session it shows (it fetches it again)."""
        self.server.notify_json(methods.SESSION_CHANGED,
                                {"workspace": workspace, "session_id": session_id})

    def status_changed(self, workspace: str) -> None:
        """Send the workspace's status shortly (coalescing changes that come together)."""
        if workspace in self._pending or workspace == self._computing:
            # computing a status re-reads changed config files, which announces them; the
            # status being computed already shows that
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the event loop (start-up): send now
            self._send_status(workspace)
            return
        self._pending[workspace] = loop.call_later(STATUS_COALESCE_SECONDS, self._send_status,
                                                   workspace)

    @contextlib.contextmanager
    def status_held(self, workspace: str) -> Iterator[None]:
        """Hold the workspace's status notifications while an async handler prepares its
        answer, so the status showing what the request changed never arrives before the
        answer does (``switchman/setModel`` waits for the pattern store's commit; the editors
        read its answer's message once the status changes). A status that came due meanwhile
        is sent a coalescing window after the hold ends: later than the answer, which goes
        out one loop iteration after its handler returns. Other workspaces' statuses go on
        (holding them all, a new session in another folder showed up to 2 s late)."""
        self._holds[workspace] = self._holds.get(workspace, 0) + 1
        try:
            yield
        finally:
            self._holds[workspace] -= 1
            if not self._holds[workspace]:
                del self._holds[workspace]
                if workspace in self._held:
                    self._held.discard(workspace)
                    self.status_changed(workspace)

    def _send_status(self, workspace: str) -> None:
        self._pending.pop(workspace, None)
        if workspace in self._holds:
            self._held.add(workspace)
            return
        self._computing = workspace
        try:
            status = self.server.switchman.status(workspace)
        except SwitchmanError:  # the workspace was closed meanwhile
            log.debug("no status for %s", workspace)
            return
        finally:
            self._computing = None
        self.server.notify_json(methods.STATUS, to_wire(status))
