"""Explaining routing: "why this model?" for a turn, and a dry-run preview of a draft."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.server import methods
from switchman.server.errors import as_rpc_errors, invalid_params
from switchman.server.params import ExplainParams, PreviewParams, decode
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/explain`` and ``switchman/preview``."""

    @server.feature(methods.EXPLAIN)
    def explain(params: Any) -> Any:
        p = decode(params, ExplainParams)
        if not (p.workspace or p.session_id or p.turn_id):
            raise invalid_params("give a workspace, a session_id or a turn_id")
        with as_rpc_errors():
            return to_wire(server.switchman.explain(p.workspace, p.session_id, p.turn_id))

    @server.feature(methods.PREVIEW)
    async def preview(params: Any) -> Any:
        p = decode(params, PreviewParams)
        with as_rpc_errors():
            return to_wire(await server.switchman.preview(p.workspace, p.session_id, p.message,
                                                          p.has_images, p.attachments))
