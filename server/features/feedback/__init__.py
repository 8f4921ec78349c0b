"""Feedback on a turn: 👍 / 👎 from the editor's chat (``switchman/feedback``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import FeedbackParams, decode
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/feedback``."""

    @server.feature(methods.FEEDBACK)
    async def feedback(params: Any) -> Any:
        p = decode(params, FeedbackParams)
        with as_rpc_errors():
            return to_wire(await server.switchman.feedback(p.turn_id, p.rating))
