"""The session with the editor: ``initialize``, ``initialized``, ``shutdown`` and ``exit``."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from switchman.engine.errors import DataFolderUnusable
from switchman.server.features import config_watch

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

log = logging.getLogger(__name__)

SHUTDOWN_WAIT_SECONDS = 2.0
"""How long ``shutdown`` waits for the turns it ended to be answered (each saves what it has)."""


def register(server: SwitchmanServer) -> None:
    """Remember what ``initialize`` announced, start the engine after it, stop it at the end."""

    @server.feature(types.INITIALIZE)
    def initialize(params: types.InitializeParams) -> None:
        options = params.initialization_options
        server.initialization_options = options if isinstance(options, dict) else {}
        folders = [f.uri for f in params.workspace_folders or []]
        server.workspace_folders = folders or ([params.root_uri] if params.root_uri else [])
        if (engine := server.started_engine) is not None:  # a request came before initialize
            server.open_folders(engine)

    @server.feature(types.INITIALIZED)
    async def initialized(params: types.InitializedParams) -> None:
        from switchman.engine.config.checking import CHECKS  # noqa: PLC0415 - light; see app.py

        CHECKS.start()  # the check process starts its interpreter while this one imports the engine
        try:
            engine = server.switchman  # created here, after the editor has its initialize answer
        except DataFolderUnusable as error:  # told once here; each request answers it too
            log.error("%s", error)
            server.window_show_message(types.ShowMessageParams(types.MessageType.Error,
                                                               str(error)))
            return
        engine.start_background()
        engine.announce_status()
        await config_watch.start(server)

    @server.feature(types.SHUTDOWN)
    async def shutdown(params: None) -> None:
        server.shutdown_requested = True
        # Before pygls cancels the requests still running (a chat turn's among them, which
        # would end as the user's Stop): the editor is going away, so they end interrupted.
        server.editor_gone()
        await server.chats_answered(SHUTDOWN_WAIT_SECONDS)  # their answers go out before this one
        if (engine := server.started_engine) is not None:  # none before ``initialized``
            await engine.stop_background()

    @server.feature(types.EXIT)
    def exit_(params: None) -> None:
        server.protocol.closing = True  # type: ignore[attr-defined]
        server.editor_gone()  # running turns save what they have
