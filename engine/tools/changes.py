"""Workspace changes the write tools propose, and how they are applied.

A write tool never touches the disk itself. It describes a
:class:`FileChange` (the file's text before and after, plus the text edits
that lead from one to the other); the user approves it after seeing the diff,
and an :class:`EditApplier` applies it. The language server's applier sends
LSP ``workspace/applyEdit`` so the editor changes its buffer (undoable;
VS Code and Neovim then save it); :class:`DiskApplier` writes files directly where no editor is
involved (the command line, unit tests).
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Literal, Protocol
from urllib.parse import unquote, urlparse

import msgspec

from switchman.engine.config.problems import Position, Range
from switchman.engine.config.text import TextEdit, split_lines, to_utf16

ChangeKind = Literal["create", "edit", "delete"]
MAX_DIFF_LINES = 400


class FileChange(msgspec.Struct, frozen=True):
    """One proposed change to one workspace file."""

    kind: ChangeKind
    path: str
    """Relative to the workspace root."""
    uri: str
    original: str | None
    """The text before (None when the file is created)."""
    proposed: str | None
    """The text after (None when the file is deleted)."""
    edits: list[TextEdit] = []
    """For ``edit``: replacements whose ranges refer to ``original``."""

    def diff(self) -> str:
        """A unified diff of the change (capped), as the approval prompt shows it."""
        before = (self.original or "").splitlines(keepends=True)
        after = (self.proposed or "").splitlines(keepends=True)
        lines = list(difflib.unified_diff(
            before, after, "/dev/null" if self.kind == "create" else f"a/{self.path}",
            "/dev/null" if self.kind == "delete" else f"b/{self.path}"))
        lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        if len(lines) > MAX_DIFF_LINES:
            lines = [*lines[:MAX_DIFF_LINES], f"[… {len(lines) - MAX_DIFF_LINES} more lines]\n"]
        return "".join(lines)


class Applied(msgspec.Struct, frozen=True):
    """Whether a change was applied and, if not, why (when applied: why it is not saved, if so)."""

    applied: bool
    reason: str = ""


class EditApplier(Protocol):
    """Applies approved changes (through the editor, or to the disk)."""

    async def apply(self, change: FileChange) -> Applied:
        """Apply ``change``; a refusal is an :class:`Applied` with a reason, never an error."""
        ...


class DiskApplier:
    """Writes changes straight to the files (no editor involved)."""

    async def apply(self, change: FileChange) -> Applied:
        """Write, create or delete the file."""
        path = path_of(change.uri)
        try:
            if change.proposed is None:
                path.unlink()
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(change.proposed, "utf-8")
        except OSError as exc:
            return Applied(False, exc.strerror or str(exc))
        return Applied(True)


def path_of(uri: str) -> Path:
    """The local path of a ``file://`` URI."""
    return Path(unquote(urlparse(uri).path))


def replacement(original: str, start: int, end: int, new_text: str) -> TextEdit:
    """The LSP text edit replacing code points ``start:end`` of ``original``."""
    return TextEdit(Range(_position(original, start), _position(original, end)), new_text)


def _position(text: str, offset: int) -> Position:
    before = text[:offset]
    line = before.count("\n")
    column = offset - (before.rfind("\n") + 1)
    return Position(line, to_utf16(split_lines(text)[line], column))


def read_text(path: Path) -> str:
    """A workspace file's text (UTF-8, newlines kept as they are)."""
    with path.open("r", encoding="utf-8", newline="") as handle:
        return handle.read()


def file_uri(path: Path) -> str:
    """The ``file://`` URI of an absolute path."""
    return Path(os.path.abspath(path)).as_uri()
