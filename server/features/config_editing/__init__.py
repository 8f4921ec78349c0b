"""Editing routing.yaml and models.yaml: diagnostics, completion, hover, code actions, outline.

This module only registers LSP methods; :mod:`.feature` holds the state and
:mod:`.convert` the LSP conversions. The meaning of it all lives in the
engine (``switchman.engine.config``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from switchman.engine.config.editing import ConfigDocuments
from switchman.engine.config.paths import config_dir
from switchman.server.features.config_editing.feature import ConfigEditing

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Attach the configuration-editing handlers to ``server``."""
    editing = ConfigEditing(server, ConfigDocuments(config_dir()))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        editing.updated(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        editing.updated(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        editing.closed(params.text_document.uri)
