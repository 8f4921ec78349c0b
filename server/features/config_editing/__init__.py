"""Editing routing.yaml and models.yaml: diagnostics, completion, hover, code actions, outline.

This module only registers LSP methods; :mod:`.feature` holds the state and
:mod:`.convert` the LSP conversions. The meaning of it all lives in the
engine (``switchman.engine.config``).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer
    from switchman.server.features.config_editing.feature import ConfigEditing


@functools.cache
def editing(server: SwitchmanServer) -> ConfigEditing:
    """The server's configuration editing, created on first use (the documents feature hands
    it the configuration files the editor opens and changes)."""
    # Created on the first request, not at registration: the editing engine's imports would
    # otherwise delay the answer to ``initialize``, and most sessions open no config file.
    from switchman.engine.config.paths import config_dir  # noqa: PLC0415
    from switchman.engine.editing.editing import ConfigDocuments  # noqa: PLC0415
    from switchman.server.features.config_editing.feature import (  # noqa: PLC0415
        ConfigEditing,
    )

    return ConfigEditing(server, ConfigDocuments(config_dir()))


def files_changed(server: SwitchmanServer, uris: list[str]) -> None:
    """Files saved or changed on disk (``didSave``, ``workspace/didChangeWatchedFiles``):
    when one is in a skills folder, the open configuration documents are checked again."""
    if not server.open_documents.any_config():  # nothing to check: configuration editing
        return                                   # is not started for it
    paths = [Path(path) for uri in uris if (path := to_fs_path(uri)) is not None]
    editing(server).skills_changed(paths)


def register(server: SwitchmanServer) -> None:
    """Attach the configuration-editing handlers to ``server``. A request about a document
    that is no configuration file (the editor shares every file buffer) is answered empty
    at once, without starting configuration editing."""
    documents = server.open_documents

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[" "]))
    async def completion(params: types.CompletionParams) -> types.CompletionList:
        if not documents.may_be_config(params.text_document.uri):
            return types.CompletionList(is_incomplete=False, items=[])
        after_space = params.context is not None and params.context.trigger_character == " "
        items = await editing(server).completion(params.text_document.uri, params.position,
                                                 after_space)
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        if not documents.may_be_config(params.text_document.uri):
            return None
        return await editing(server).hover(params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        if not documents.may_be_config(params.text_document.uri):
            return []
        return await editing(server).code_actions(params.text_document.uri, params.range)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(params: types.DocumentSymbolParams) -> (
            list[types.DocumentSymbol] | list[types.SymbolInformation]):
        if not documents.may_be_config(params.text_document.uri):
            return []
        return await editing(server).symbols(params.text_document.uri)
