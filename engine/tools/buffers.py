"""The editor's buffers, as the tools see them.

An editor shares the text of its open documents with the daemon (LSP
``didOpen``/``didChange``; both clients share the workspace's file buffers).
That text, unsaved changes included, is what the user sees, so it is what
``read_file`` and ``grep`` return and what an edit is made from; a folder's
``grep`` also searches the buffers of files never saved. A file the editor
does not share (not open, too large to share, or no editor at all) is read
from the disk.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from pathlib import Path

EditorTexts = Callable[[], Mapping[Path, str]]
"""The text of each document the editor shares, by the real path of its file. Called from
the tools' worker threads; it returns a snapshot, not a live view."""


def no_editor_texts() -> Mapping[Path, str]:
    """No editor (the command line, unit tests): every file is read from the disk."""
    return {}


_SURROGATE = re.compile("[\ud800-\udfff]")


def plain_text(text: str) -> str:
    """``text`` with each lone UTF-16 surrogate (an editor's buffer may hold one; no
    provider request or database can) read as one U+FFFD, as a file's bad byte is. Neovim
    sends a buffer's bytes as they are, and the daemon reads a byte that is not UTF-8 as one
    surrogate: its UTF-8 form (three bytes) decoded would be three U+FFFD."""
    if text.isascii():
        return text
    return _SURROGATE.sub("\ufffd", text)
