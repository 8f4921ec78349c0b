"""Tools: the trust list (``switchman/trust``, ``switchman/revokeTrust``) and Apply
(``switchman/applyCode``).

The approval request and the edit application that tools send to the editor
are in :mod:`.bridge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from lsprotocol import types

from switchman.engine.config.text import split_lines
from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import ApplyCodeParams, RevokeTrustParams, TrustParams, decode
from switchman.server.positions import Positions
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/trust``, ``switchman/revokeTrust`` and ``switchman/applyCode``."""

    @server.feature(methods.TRUST)
    def trust(params: Any) -> Any:
        p = decode(params, TrustParams)
        with as_rpc_errors():
            return to_wire(server.switchman.trust_list(p.workspace))

    @server.feature(methods.REVOKE_TRUST)
    def revoke_trust(params: Any) -> Any:
        p = decode(params, RevokeTrustParams)
        with as_rpc_errors():
            return to_wire(server.switchman.revoke_trust(p.workspace, p.tool))

    @server.feature(methods.APPLY_CODE)
    async def apply_code(params: Any) -> Any:
        p = decode(params, ApplyCodeParams)
        span = None
        if p.range is not None:  # the editor's position encoding → the engine's UTF-16
            encoding = server.workspace.position_encoding or types.PositionEncodingKind.Utf16
            span = Positions(split_lines(p.text), encoding).engine_range(
                types.Range(types.Position(p.range.start.line, p.range.start.character),
                            types.Position(p.range.end.line, p.range.end.character)))
        # Imported here: the tool modules are not needed to answer ``initialize``.
        from switchman.engine.tools.apply_code import ApplyCodeRequest  # noqa: PLC0415

        with as_rpc_errors():
            return to_wire(await server.switchman.apply_code(ApplyCodeRequest(
                p.workspace, p.uri, p.text, p.code, span, p.session_id or "", p.turn_id or "")))
