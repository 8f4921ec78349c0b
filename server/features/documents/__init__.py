"""The documents the editor shares with the daemon: ``didOpen``, ``didChange``, ``didSave``,
``didClose``.

Both clients share the workspace's file buffers, so the tools read and edit what
the user sees (:mod:`switchman.engine.tools.buffers`). pygls keeps each text;
:class:`.open_documents.OpenDocuments` knows which file it is. Switchman's
configuration files go on to configuration editing (diagnostics and the rest);
any other document costs only pygls applying the change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from switchman.server.features import config_editing

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer


def register(server: SwitchmanServer) -> None:
    """Attach the document synchronisation handlers to ``server``."""
    documents = server.open_documents

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: types.DidOpenTextDocumentParams) -> None:
        if documents.opened(params.text_document.uri):
            config_editing.editing(server).updated(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: types.DidChangeTextDocumentParams) -> None:
        if documents.may_be_config(params.text_document.uri):
            config_editing.editing(server).updated(params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(params: types.DidSaveTextDocumentParams) -> None:
        # a skill file saved: the open configuration files' unknown-skill warnings may change
        config_editing.files_changed(server, [params.text_document.uri])

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: types.DidCloseTextDocumentParams) -> None:
        if documents.closed(params.text_document.uri):
            config_editing.editing(server).closed(params.text_document.uri)
