"""Sharing every file buffer costs the daemon only pygls' copy of the text.

The clients send ``didOpen``/``didChange`` for each file buffer of the workspace, so a
keystroke in a code file must not start configuration editing (its imports, its check
process) nor look anything up on the disk. Run in a fresh interpreter, so that what is
imported is this test's doing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from switchman.server.features.documents.open_documents import OpenDocuments

TYPING_IN_A_CODE_FILE = """
import sys
from lsprotocol import types
from pygls.workspace import Workspace
from switchman.server.app import build_server
from switchman.server.features import config_editing

server = build_server()
server.protocol._workspace = Workspace(None, sync_kind=types.TextDocumentSyncKind.Incremental)
uri = {uri!r}
server.protocol._handle_notification(types.TEXT_DOCUMENT_DID_OPEN, types.DidOpenTextDocumentParams(
    types.TextDocumentItem(uri=uri, language_id="python", version=1, text="x = 1\\n")))
for version in range(2, 50):
    start = types.Position(0, 0)
    server.protocol._handle_notification(types.TEXT_DOCUMENT_DID_CHANGE,
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            [types.TextDocumentContentChangePartial(range=types.Range(start, start), text="y")]))
assert server.workspace.get_text_document(uri).source == "y" * 48 + "x = 1\\n"
assert type(server.workspace.get_text_document(uri)).__name__ == "SharedTextDocument"
assert server.editor_texts() == {{__import__("pathlib").Path({path!r}): "y" * 48 + "x = 1\\n"}}
assert config_editing.editing.cache_info().currsize == 0, "configuration editing was started"
loaded = [m for m in sys.modules if m.startswith("switchman.engine.editing")]
assert not loaded, loaded
"""


def test_typing_in_a_code_file_does_not_start_configuration_editing(tmp_path: Path) -> None:
    path = tmp_path / "app.py"
    code = TYPING_IN_A_CODE_FILE.format(uri=path.as_uri(), path=str(path))
    subprocess.run([sys.executable, "-c", code], check=True)


def test_documents_are_known_by_their_real_path(tmp_path: Path) -> None:
    real = tmp_path / "project" / "app.py"
    real.parent.mkdir()
    real.write_text("x\n", "utf-8")
    linked = tmp_path / "linked"
    linked.symlink_to(real.parent, target_is_directory=True)
    documents = OpenDocuments()
    assert documents.opened((linked / "app.py").as_uri()) is False
    assert documents.uri_of(real) == (linked / "app.py").as_uri()
    texts = documents.texts({(linked / "app.py").as_uri(): _Text("typed\n")}.get)
    assert texts == {real: "typed\n"}


def test_only_configuration_names_go_to_configuration_editing(tmp_path: Path) -> None:
    documents = OpenDocuments()
    routing = (tmp_path / ".switchman" / "routing.yaml").as_uri()
    code = (tmp_path / "app.py").as_uri()
    assert documents.opened(routing) is True
    assert documents.opened(code) is False
    assert (documents.may_be_config(routing), documents.may_be_config(code)) == (True, False)
    assert documents.opened("untitled:Untitled-1") is False
    assert documents.closed(code) is False
    assert documents.closed(routing) is True
    assert documents.texts({code: _Text("x")}.get) == {}  # closed: read from the disk again


class _Text:
    def __init__(self, source: str) -> None:
        self.source = source
