"""A shared document's text after any edits is exactly what pygls' own document would hold."""

from __future__ import annotations

import sys
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import PositionCodec, TextDocument

from switchman.server.shared_text import SharedTextDocument, SharedWorkspace

# Line breaks of every kind str.splitlines knows (pygls' lines), pairs that join across an
# edit (\r then \n), text outside the BMP (two UTF-16 units, four UTF-8 bytes).
PIECES = st.sampled_from(["a", "bc", " ", "\n", "\r", "\r\n", "\u2028", "\x0c", "é", "😋", ""])
TEXT = st.lists(PIECES, max_size=30).map("".join)
ENCODINGS = st.sampled_from([types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf8,
                             types.PositionEncodingKind.Utf32])


@st.composite
def edits(draw: st.DrawFn) -> list[tuple[int, int, int, int, str]]:
    return draw(st.lists(st.tuples(st.integers(0, 8), st.integers(0, 6), st.integers(0, 8),
                                   st.integers(0, 6), TEXT), max_size=12))


def change(edit: tuple[int, int, int, int, str]) -> types.TextDocumentContentChangePartial:
    start_line, start, end_line, end, text = edit
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(start_line, start), types.Position(end_line, end)),
        text=text)


@settings(max_examples=400, deadline=None)
@given(TEXT, edits(), ENCODINGS)
def test_every_edit_gives_the_text_pygls_would(text: str, steps: list[tuple[int, int, int, int,
                                                                           str]],
                                                encoding: types.PositionEncodingKind) -> None:
    codec = PositionCodec(encoding=encoding)
    theirs = TextDocument("file:///a.py", text, version=1, position_codec=codec)
    ours = SharedTextDocument("file:///a.py", text, version=1, position_codec=codec)
    for step in steps:
        theirs.apply_change(change(step))
        ours.apply_change(change(step))
        assert ours.source == theirs.source
        assert tuple(ours.lines) == tuple(theirs.lines)


def test_a_full_change_replaces_the_text_and_an_unopened_document_reads_the_file(
        tmp_path: object) -> None:
    document = SharedTextDocument("file:///a.py", "one\ntwo\n", version=1)
    document.apply_change(types.TextDocumentContentChangeWholeDocument(text="three\r\nfour"))
    assert document.source == "three\r\nfour" and list(document.lines) == ["three\r\n", "four"]
    path = tmp_path / "b.py"  # type: ignore[operator]
    path.write_text("on disk\n", "utf-8")
    assert SharedTextDocument(path.as_uri()).source == "on disk\n"


def test_the_workspace_makes_shared_documents_with_its_encoding() -> None:
    workspace = SharedWorkspace("file:///w", types.TextDocumentSyncKind.Incremental,
                                position_encoding=types.PositionEncodingKind.Utf8)
    workspace.put_text_document(types.TextDocumentItem("file:///w/a.py", "python", 1, "é\n"))
    document = workspace.get_text_document("file:///w/a.py")
    assert isinstance(document, SharedTextDocument)
    workspace.update_text_document(types.VersionedTextDocumentIdentifier(2, "file:///w/a.py"),
                                   change((0, 2, 0, 2, "x")))  # UTF-8: after é's two bytes
    assert document.source == "éx\n" and document.version == 2


def test_a_reader_on_another_thread_never_sees_an_old_text_for_a_new_version() -> None:
    document = SharedTextDocument("file:///a.py", "x\n" * 2000, version=1)
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    stop = threading.Event()
    torn: list[str] = []

    def read() -> None:
        while not stop.is_set():  # always some whole version: y's, then x's
            text = document.source
            done = text.count("y")
            if text != "y\n" * done + "x\n" * (2000 - done):
                torn.append(text)

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for n in range(500):
            document.apply_change(change((n, 0, n, 1, "y")))
            assert document.source.count("y") == n + 1  # the loop's own read is current
    finally:
        stop.set()
        reader.join()
        sys.setswitchinterval(switching)
    assert not torn
