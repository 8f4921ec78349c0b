"""Workspace folders the editor adds and removes (``workspace/didChangeWorkspaceFolders``)."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from lsprotocol import types

from switchman.engine.errors import UnknownWorkspace

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Open and close workspaces as the editor's folders change."""

    @server.feature(types.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(params: types.DidChangeWorkspaceFoldersParams) -> None:
        engine = server.switchman
        removed = {gone.uri for gone in params.event.removed}
        server.workspace_folders = [f for f in server.workspace_folders if f not in removed]
        server.workspace_folders += [a.uri for a in params.event.added
                                     if a.uri not in server.workspace_folders]
        for gone in params.event.removed:
            engine.close_workspace(gone.uri)
        for added in params.event.added:
            with contextlib.suppress(UnknownWorkspace):  # a folder no local path can have
                engine.open_workspace(added.uri)
