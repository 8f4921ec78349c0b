"""Agent profiles: list them with the session's active one; choose one for a session."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import ProfilesParams, SetProfileParams, decode
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/profiles`` and ``switchman/setProfile``."""

    @server.feature(methods.PROFILES)
    async def profiles(params: Any) -> Any:
        p = decode(params, ProfilesParams)
        with as_rpc_errors():
            return to_wire(await server.switchman.profiles(p.workspace, p.session_id))

    @server.feature(methods.SET_PROFILE)
    async def set_profile(params: Any) -> Any:
        p = decode(params, SetProfileParams)
        with as_rpc_errors():
            return to_wire(await server.switchman.set_profile(p.workspace, p.session_id,
                                                              p.profile))
