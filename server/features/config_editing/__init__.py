"""Editing routing.yaml and models.yaml: diagnostics, completion, hover, code actions, outline.

This module only registers LSP methods; :mod:`.feature` holds the state and
:mod:`.convert` the LSP conversions. The meaning of it all lives in the
engine (``switchman.engine.config``).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from lsprotocol import types

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer
    from switchman.server.features.config_editing.feature import ConfigEditing


def register(server: SwitchmanServer) -> None:
    """Attach the configuration-editing handlers to ``server``."""

    @functools.cache
    def editing() -> ConfigEditing:
        # Created on the first request, not here: the editing engine's imports would
        # otherwise delay the answer to ``initialize``, and most sessions open no config file.
        from switchman.engine.config.paths import config_dir  # noqa: PLC0415
        from switchman.engine.editing.editing import ConfigDocuments  # noqa: PLC0415
        from switchman.server.features.config_editing.feature import (  # noqa: PLC0415
            ConfigEditing,
        )

        return ConfigEditing(server, ConfigDocuments(config_dir()))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        editing().updated(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        editing().updated(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        editing().closed(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_COMPLETION,
                    types.CompletionOptions(trigger_characters=[" "]))
    async def completion(params: types.CompletionParams) -> types.CompletionList:
        after_space = params.context is not None and params.context.trigger_character == " "
        items = await editing().completion(params.text_document.uri, params.position, after_space)
        return types.CompletionList(is_incomplete=False, items=items)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    async def hover(params: types.HoverParams) -> types.Hover | None:
        return await editing().hover(params.text_document.uri, params.position)

    @server.feature(types.TEXT_DOCUMENT_CODE_ACTION,
                    types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]))
    async def code_action(params: types.CodeActionParams) -> list[types.CodeAction]:
        return await editing().code_actions(params.text_document.uri, params.range)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(params: types.DocumentSymbolParams) -> (
            list[types.DocumentSymbol] | list[types.SymbolInformation]):
        return await editing().symbols(params.text_document.uri)
