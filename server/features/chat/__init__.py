"""Chat: send a message (streamed), cancel a turn, start a new session or resume an older one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from switchman.engine.messages import ImageBlock
from switchman.server import methods
from switchman.server.errors import as_rpc_errors
from switchman.server.params import (
    CancelParams,
    ChatParams,
    ResumeSessionParams,
    WorkspaceParams,
    decode,
)
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Register ``switchman/chat``, ``switchman/cancel``, ``switchman/newSession`` and
    ``switchman/resumeSession``."""

    @server.feature(methods.CHAT)
    async def chat(params: Any) -> Any:
        p = decode(params, ChatParams)
        server.answering_chat()
        images = [ImageBlock(i.media_type, i.data) for i in p.images]
        with as_rpc_errors():
            result = await server.switchman.chat(p.workspace, p.session_id, p.message, images,
                                                 p.attachments, typed=p.typed)
        return to_wire(result)

    @server.feature(methods.CANCEL)
    async def cancel(params: Any) -> Any:
        p = decode(params, CancelParams)
        with as_rpc_errors():
            cancelled, status = await server.switchman.cancel(p.turn_id, p.tool_use_id)
        return {"cancelled": cancelled, "status": status}

    @server.feature(methods.NEW_SESSION)
    def new_session(params: Any) -> Any:
        p = decode(params, WorkspaceParams)
        with as_rpc_errors():
            return {"session": to_wire(server.switchman.new_session(p.workspace))}

    @server.feature(methods.RESUME_SESSION)
    def resume_session(params: Any) -> Any:
        p = decode(params, ResumeSessionParams)
        with as_rpc_errors():
            return {"session": to_wire(server.switchman.resume_session(p.workspace,
                                                                       p.session_id))}
