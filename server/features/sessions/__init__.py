"""Sessions: list a workspace's sessions; one session's transcript, turns and costs."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import SessionParams, SessionsParams, decode
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/sessions`` and ``switchman/session``."""

    @server.feature(methods.SESSIONS)
    def sessions(params: Any) -> Any:
        p = decode(params, SessionsParams)
        with as_rpc_errors():
            listing = to_wire(server.switchman.session_list(p.workspace,
                                                                p.include_workers))
        if not p.include_workers:
            for session in listing["sessions"]:
                session.pop("workers", None)
        return listing

    @server.feature(methods.SESSION)
    def session(params: Any) -> Any:
        p = decode(params, SessionParams)
        with as_rpc_errors():
            return to_wire(server.switchman.session(p.session_id))
