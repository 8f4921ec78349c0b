"""Tools: the trust list (``switchman/trust``, ``switchman/revokeTrust``).

The approval request and the edit application that tools send to the editor
are in :mod:`.bridge`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import RevokeTrustParams, TrustParams, decode
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/trust`` and ``switchman/revokeTrust``."""

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
