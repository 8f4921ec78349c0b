"""Models: list them with their state, and set or clear a session's sticky model."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import SetModelParams, WorkspaceParams, decode
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/models`` and ``switchman/setModel``."""

    @server.feature(methods.MODELS)
    def models(params: Any) -> Any:
        p = decode(params, WorkspaceParams)
        with as_rpc_errors():
            return to_wire(server.switchman.models(p.workspace))

    @server.feature(methods.SET_MODEL)
    async def set_model(params: Any) -> Any:
        p = decode(params, SetModelParams)
        with as_rpc_errors():
            workspace = server.switchman.workspaces.resolve(p.workspace)  # as statuses name it
            with server.notifier.status_held(workspace):
                return to_wire(await server.switchman.set_model(workspace, p.session_id,
                                                                p.model))
