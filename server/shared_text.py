"""The text of a document the editor shares, kept as lines so that a keystroke costs little.

pygls keeps a document as one string and applies an edit by splitting the whole text into
lines and writing every line out again: in a 1.5 MB file that is milliseconds of the event
loop per keystroke, while the editor waits for the daemon. :class:`SharedTextDocument` keeps
the list of lines pygls would split (``str.splitlines(keepends=True)``, pygls' notion of a
line) and replaces, in place, only the lines an edit touches, plus one on each side so that a
``\r`` and a ``\n`` meeting across the edit join as they would in the whole text. The whole
text is joined only when something reads :attr:`~SharedTextDocument.source`, once per
version.

``source`` may be read from a tool's thread while the loop applies the next edit. Joining a
list holds the GIL, so it sees the lines between two edits, and the joined text is cached
under the count of edits it was joined at only if no edit came in meanwhile: a reader on
another thread never leaves an old text cached for a newer version. The loop is the only
writer of the lines; :attr:`~SharedTextDocument.lines` is for the loop alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace


class SharedTextDocument(TextDocument):
    """pygls' text document with edits applied to its lines (same results, less work)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        text = self._source
        # A document made for a URI that is not open has no text: pygls reads the file when
        # asked; it is never edited, so it keeps pygls' own behaviour.
        self._lines: list[str] | None = None if text is None else text.splitlines(True)
        self._edits = 0
        self._joined: tuple[int, str] | None = None if text is None else (0, text)
        self._source = None  # the lines hold the text now

    @property
    def lines(self) -> Sequence[str]:
        lines = self._lines
        return super().lines if lines is None else lines

    @property
    def source(self) -> str:
        lines = self._lines
        if lines is None:
            return super().source
        edits, joined = self._edits, self._joined
        if joined is not None and joined[0] == edits:
            return joined[1]
        text = "".join(lines)
        if self._edits == edits:  # no edit since: the text is this version's
            self._joined = (edits, text)
        return text

    def _apply_full_change(self, change: types.TextDocumentContentChangeEvent) -> None:
        if self._lines is None:
            super()._apply_full_change(change)
            return
        self._lines[:] = change.text.splitlines(True)
        self._edits += 1

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self._lines
        if lines is None:  # never opened with a text (see __init__)
            super()._apply_incremental_change(change)
            return
        edit = self._position_codec.range_from_client_units(lines, change.range)
        first, start = edit.start.line, edit.start.character
        last, end = edit.end.line, edit.end.character
        count = len(lines)
        if first == count:  # at the very end: appended (pygls' own special case)
            middle = change.text
            last = count - 1
        elif first > count or last < first:
            return  # pygls leaves the text as it was for a range past the end or backwards
        else:
            middle = lines[first][:start] + change.text + (
                lines[last][end:] if last < count else "")
        low, high = max(first - 1, 0), min(last + 2, count)  # one neighbour on each side
        touched = "".join(lines[low:first]) + middle + "".join(lines[last + 1:high])
        lines[low:high] = touched.splitlines(True)
        self._edits += 1


def shared_document(workspace: Workspace, uri: str) -> TextDocument | None:
    """The document the editor opened at ``uri``, or None when it has not opened it.

    pygls keys its documents by the URI percent-decoded (``file:///a b/naïve.py``), while
    editors send ``file:///a%20b/na%C3%AFve.py``: looked up as sent, a file whose path has a
    space, a non-ASCII letter, ``#`` or ``%`` was never found, so the tools read the disk
    instead of the unsaved buffer and an edit named no buffer version."""
    documents: dict[str, TextDocument] = workspace.text_documents
    return documents.get(uri) or documents.get(unquote(uri))


class SharedWorkspace(Workspace):
    """pygls' workspace, whose text documents are :class:`SharedTextDocument`."""

    @classmethod
    def like(cls, made: Workspace, sync_kind: types.TextDocumentSyncKind) -> SharedWorkspace:
        """A workspace with the root, folders and position encoding of ``made`` (the one
        pygls made at ``initialize``, before any document was opened)."""
        return cls(made.root_uri, sync_kind, list(made.folders.values()),
                   made.position_encoding)

    def _create_text_document(self, doc_uri: str, source: str | None = None,
                              version: int | None = None,
                              language_id: str | None = None) -> TextDocument:
        return SharedTextDocument(doc_uri, source=source, version=version,
                                  language_id=language_id, sync_kind=self._sync_kind,
                                  position_codec=self.position_codec)
