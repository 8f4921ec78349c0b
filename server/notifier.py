"""Forwards what sessions produce to the editor as ``switchman/*`` notifications."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from switchman.engine.errors import SwitchmanError
from switchman.engine.sessions.records import ChatDelta, RouteNotice
from switchman.server import methods
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

log = logging.getLogger(__name__)


class EditorNotifier:
    """The engine's :class:`SessionObserver`, speaking LSP notifications."""

    def __init__(self, server: SwitchmanServer) -> None:
        self.server = server

    def route_decided(self, notice: RouteNotice) -> None:
        """Tell the editor which model took the turn and why."""
        self.server.protocol.notify(methods.ROUTE_DECIDED, to_wire(notice))

    def delta(self, delta: ChatDelta) -> None:
        """Stream a piece of output."""
        self.server.protocol.notify(methods.CHAT_DELTA, to_wire(delta))

    def status_changed(self, workspace: str) -> None:
        """Send the workspace's current status."""
        try:
            status = self.server.switchman.views.status(workspace)
        except SwitchmanError:  # the workspace was closed meanwhile
            log.debug("no status for %s", workspace)
            return
        self.server.protocol.notify(methods.STATUS, to_wire(status))
