"""Read-only tools the model may call, confined to the session's workspace folder.

Every path is resolved (symlinks included) and refused unless it lies inside
the workspace, so no tool can read outside it. Output is capped so one call
cannot flood the context window. A file the editor shares is read from its
buffer, unsaved changes included (:mod:`.buffers`). ``list_files`` lists the
disk's files; a folder ``grep`` searches them and the shared buffers under the
folder whose file was never saved, in one order.
"""

from __future__ import annotations

import asyncio
import fnmatch
import heapq
import logging
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from switchman.engine.errors import UnreadableFile
from switchman.engine.files import read_chunks, read_head
from switchman.engine.providers.base import ToolSpec
from switchman.engine.tools.arguments import (
    ToolOutcome,
    ToolRefused,
    path_argument,
    summary_of,
    text_argument,
    whole_number_argument,
)
from switchman.engine.tools.buffers import EditorTexts, no_editor_texts, plain_text
from switchman.engine.tools.confinement import WorkspaceRoot
from switchman.engine.tools.secret_files import holds_secrets, is_secret_file, refusal
from switchman.engine.userregex import RegexError, compile_regex
from switchman.engine.wording import counted

__all__ = ["DEFINITIONS", "TOOL_NAMES", "ToolOutcome", "ToolRefused", "WorkspaceTools"]
log = logging.getLogger(__name__)

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
MAX_LIST_ENTRIES = 500
MAX_GREP_MATCHES = 200
MAX_GREP_FILE_BYTES = 1024 * 1024
MAX_SCAN_BYTES = 64 * 1024 * 1024
"""read_file reaches lines within a file's first 64 MB (a start_line further in is refused)."""
SKIPPED_DIRS = frozenset({".git", ".hg", ".svn", "node_modules", ".venv", "venv", "__pycache__",
                          ".mypy_cache", ".ruff_cache", ".pytest_cache", "dist", "build"})


_PATH = {"type": "string", "description": "Path relative to the workspace root."}

DEFINITIONS = [
    ToolSpec("read_file", "Read a text file from the workspace, optionally a range of lines.", {
        "type": "object",
        "properties": {"path": _PATH,
                       "start_line": {"type": "integer", "description": "First line (1-based)."},
                       "end_line": {"type": "integer", "description": "Last line (inclusive)."}},
        "required": ["path"]}),
    ToolSpec("list_files", "List files under a folder of the workspace (recursive).", {
        "type": "object",
        "properties": {"path": {**_PATH, "description": "Folder to list (default: the root)."},
                       "glob": {"type": "string", "description": "Only names matching, e.g. *.py"}},
    }),
    ToolSpec("grep", "Search the workspace's text files with a regular expression (RE2).", {
        "type": "object",
        "properties": {"pattern": {"type": "string", "description": "RE2 regular expression."},
                       "path": {**_PATH, "description": "Folder or file to search (default: "
                                                        "the root)."},
                       "glob": {"type": "string", "description": "Only files matching, e.g. *.ts"}},
        "required": ["pattern"]}),
]
TOOL_NAMES = frozenset(t.name for t in DEFINITIONS)


class WorkspaceTools:
    """The read tools for one workspace folder."""

    def __init__(self, root: Path, editor_texts: EditorTexts = no_editor_texts) -> None:
        self.workspace = WorkspaceRoot(root)
        self.root = self.workspace.root
        self.editor_texts = editor_texts

    @staticmethod
    def definitions() -> list[ToolSpec]:
        """The tool definitions sent to the model."""
        return list(DEFINITIONS)

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one tool call; failures become error results, never exceptions."""
        handler: Callable[[dict[str, Any]], ToolOutcome] | None = {
            "read_file": self._read_file, "list_files": self._list_files, "grep": self._grep,
        }.get(name)
        if handler is None:
            return ToolOutcome(f"Unknown tool '{name}'.", is_error=True, summary="unknown tool")
        try:
            return await asyncio.to_thread(handler, arguments)
        except ToolRefused as refusal:
            return ToolOutcome(str(refusal), is_error=True, summary=summary_of(str(refusal)))
        except OSError as exc:
            return ToolOutcome(f"{exc.strerror or exc}", is_error=True, summary="error")
        except Exception:  # a bug in a tool must not end the turn; the model can go on
            log.exception("tool %s failed", name)
            return ToolOutcome(f"The tool '{name}' failed unexpectedly.", is_error=True,
                               summary="failed")

    # -- path confinement ----------------------------------------------------------

    def resolve(self, args: dict[str, Any], default: str | None = None) -> Path:
        """The real path named by ``args["path"]`` inside the workspace, or :class:`ToolRefused`."""
        return self.workspace.resolve(path_argument(args, default=default))

    def relative(self, path: Path) -> str:
        """``path`` relative to the workspace root, with forward slashes."""
        return self.workspace.relative(path)

    # -- tools ---------------------------------------------------------------------

    def _read_file(self, args: dict[str, Any]) -> ToolOutcome:
        path = self.resolve(args)
        start_line = whole_number_argument(args, "start_line")
        end_line = whole_number_argument(args, "end_line")
        if start_line is not None and end_line is not None and end_line < start_line:
            raise ToolRefused(f"'end_line' ({end_line}) is before 'start_line' ({start_line}); "
                              "give the first and the last line to read.")
        rel = self.relative(path)
        if is_secret_file(path.name):
            raise ToolRefused(refusal(rel))
        start = max(start_line or 1, 1)
        buffer = self.editor_texts().get(path)
        try:
            part = (read_lines(path, start, end_line) if buffer is None
                    else text_lines(buffer, start, end_line))
        except UnreadableFile as exc:
            raise ToolRefused(f"'{rel}' {exc.reason}.") from None
        if part.binary:
            raise ToolRefused(f"'{rel}' is a binary file.")
        if start > 1 and not part.lines and not part.beyond_scan:
            raise ToolRefused(f"'{rel}' has {_lines(part.total)}; start_line {start} is past "
                              "its end.")
        if part.beyond_scan:
            raise ToolRefused(f"'{rel}' is too large to read from line {start}: read_file looks "
                              f"at its first {MAX_SCAN_BYTES // (1024 * 1024)} MB only. Use "
                              "run_command (for example sed or tail) for lines further in.")
        text = "\n".join(part.lines)
        last = start + len(part.lines) - 1
        if part.cut_line:
            text += (f"\n[… truncated: line {last} is longer than {MAX_READ_BYTES // 1024} KB; "
                     "only its beginning is shown]")
        elif part.more:
            text += (f"\n[… truncated: lines {start}-{last} shown; read on with "
                     f"start_line={last + 1}]")
        return ToolOutcome(text, summary=f"{rel}: {_lines(len(part.lines))}", touched=[rel])

    def _list_files(self, args: dict[str, Any]) -> ToolOutcome:
        folder = self.resolve(args, default=".")
        if not folder.is_dir():
            raise ToolRefused(f"'{args.get('path')}' is not a folder.")
        glob = text_argument(args, "glob")
        found: list[str] = []
        for path in self._walk(folder):
            if glob and not fnmatch.fnmatch(path.name, glob):
                continue
            found.append(self.relative(path))
            if len(found) >= MAX_LIST_ENTRIES:
                break
        more = "\n[… more files not shown]" if len(found) >= MAX_LIST_ENTRIES else ""
        return ToolOutcome("\n".join(found) + more or "(no files)",
                           summary=counted(len(found), "file"), touched=found)

    def _grep(self, args: dict[str, Any]) -> ToolOutcome:
        try:
            regex = compile_regex(text_argument(args, "pattern", required=True) or "")
        except RegexError as exc:
            raise ToolRefused(f"Invalid pattern: {exc}") from None
        where = self.resolve(args, default=".")
        buffers = self.editor_texts()
        unsaved = self._unsaved(where, buffers)
        if not where.is_dir() and not unsaved:  # one file: searched to the read cap, or why not
            if is_secret_file(where.name):
                raise ToolRefused(refusal(self.relative(where)))
            hits: list[str] = []
            buffer = buffers.get(where)
            if buffer is None:
                self._grep_file(where, regex, hits, MAX_SCAN_BYTES, named=True)
            elif len(buffer) > MAX_SCAN_BYTES:
                raise ToolRefused(f"'{self.relative(where)}' is larger than "
                                  f"{MAX_SCAN_BYTES // (1024 * 1024)} MB, which grep does not "
                                  "search; use run_command (for example grep -n) for it.")
            else:
                self._grep_buffer(where, buffer, regex, hits)
            rel = self.relative(where)
            return ToolOutcome(("\n".join(hits) or "(no matches)") + _capped(hits),
                               summary=f"{counted(len(hits), 'match', 'matches')} in {rel}",
                               touched=[rel] if hits else [])
        glob = text_argument(args, "glob")
        hits = []
        touched: list[str] = []
        too_large: list[str] = []
        secret: list[str] = []
        order = partial(_walk_order, where)
        for path in heapq.merge(self._walk(where), unsaved, key=order):
            if glob and not fnmatch.fnmatch(path.name, glob):
                continue
            if holds_secrets(path):
                secret.append(self.relative(path))
                continue
            buffer = buffers.get(path)
            if (_size(path) if buffer is None else len(buffer)) > MAX_GREP_FILE_BYTES:
                too_large.append(self.relative(path))
                continue
            if (self._grep_file(path, regex, hits, MAX_GREP_FILE_BYTES) if buffer is None
                    else self._grep_buffer(path, buffer, regex, hits)):
                touched.append(self.relative(path))
            if len(hits) >= MAX_GREP_MATCHES:
                break
        text = ("\n".join(hits) or "(no matches)") + _capped(hits)
        if too_large:
            text += (f"\n[not searched: {counted(len(too_large), 'file')} larger than "
                     f"{MAX_GREP_FILE_BYTES // (1024 * 1024)} MB ({_few(too_large)}); give one "
                     "as the path to search it]")
        if secret:
            text += f"\n[not searched, as files like these usually hold secrets: {_few(secret)}]"
        return ToolOutcome(text, summary=(f"{counted(len(hits), 'match', 'matches')} in "
                                    f"{counted(len(touched), 'file')}"),
                           touched=touched)

    def _grep_file(self, path: Path, regex: Any, hits: list[str], limit: int,
                   named: bool = False) -> bool:
        """Search one file; a file that cannot be searched is skipped, or refused when
        ``named`` (the model asked for that file)."""
        rel = self.relative(path)
        if named and _size(path) > limit:
            raise ToolRefused(f"'{rel}' is larger than {limit // (1024 * 1024)} MB, which grep "
                              "does not search; use run_command (for example grep -n) for it.")
        try:
            data, whole = read_head(path, MAX_GREP_FILE_BYTES)
        except UnreadableFile as exc:  # FIFOs, devices, loops: nothing to search
            if named:
                raise ToolRefused(f"'{rel}' {exc.reason}.") from None
            return False
        if b"\0" in data[:8192]:
            if named:
                raise ToolRefused(f"'{rel}' is a binary file.")
            return False
        if whole:  # the usual case, at once; lines end at "\n" only, as read on in pieces
            return _grep_lines(rel, _text_lines(data.decode("utf-8", "replace")), regex, hits)
        chunks = read_chunks(path, limit)  # a named file over the walk's cap: read on in pieces
        try:
            return _grep_lines(rel, (raw.decode("utf-8", "replace") for raw, _cut
                                     in _split_lines(chunks, MAX_READ_BYTES)), regex, hits)
        except UnreadableFile:
            return False
        finally:
            chunks.close()

    def _grep_buffer(self, path: Path, text: str, regex: Any, hits: list[str]) -> bool:
        """Search the editor's text of one file; whether any line matched."""
        return _grep_lines(self.relative(path), _text_lines(plain_text(text)), regex, hits)

    def _unsaved(self, folder: Path, buffers: Mapping[Path, str]) -> list[Path]:
        """The shared buffers under ``folder`` whose file is not on the disk (created in the
        editor, never saved), in the order :meth:`_walk` would give them; the walk's
        skipped folders are skipped."""
        found = [path for path in buffers
                 if folder in path.parents and self.workspace.contains(path)
                 and not SKIPPED_DIRS.intersection(path.relative_to(folder).parts[:-1])
                 and not os.path.lexists(path)]
        return sorted(found, key=partial(_walk_order, folder))

    def _walk(self, folder: Path) -> Iterator[Path]:
        """The files under ``folder``: each folder's files by name, then its subfolders."""
        for current, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for name in sorted(files):
                path = Path(current) / name
                if self.workspace.admits(path):  # no symlinks out, nor into .git/
                    yield path


@dataclass
class LinePart:
    """Some lines of a file, as :func:`read_lines` found them."""

    lines: list[str] = field(default_factory=list)
    total: int = 0
    """Lines seen; all of the file's when ``past_end``."""
    more: bool = False
    """Lines follow that were left out for the caps (not for ``end``)."""
    cut_line: bool = False
    """The last line is longer than the byte cap; only its beginning is given."""
    binary: bool = False
    beyond_scan: bool = False
    """``start`` lies beyond the first :data:`MAX_SCAN_BYTES` of the file."""


def read_lines(path: Path, start: int, end: int | None) -> LinePart:
    """Lines ``start``..``end`` (1-based; to the caps when ``end`` is None) of a text file.

    At most :data:`MAX_READ_LINES` lines or :data:`MAX_READ_BYTES` are given at once. A
    file within that size (or a read from its first line) is read at once; further into
    a big file it reads on without holding more than the lines it keeps, so any line of
    the file's first :data:`MAX_SCAN_BYTES` can be read.
    """
    data, whole = read_head(path, MAX_READ_BYTES)
    part = LinePart()
    if b"\0" in data[:8192]:
        part.binary = True
        return part
    if not whole and start > 1:
        return _read_lines_on(path, start, end)
    lines = data.decode("utf-8", "replace").split("\n")
    if lines[-1] == "" and (whole or len(lines) > 1):
        lines.pop()  # the last newline (or an empty file)
    if not whole:  # the last line read may go on past the cap
        if len(lines) > 1:
            lines.pop()
        else:
            part.cut_line = True
    available = len(lines)
    stop = available if end is None else min(end, available)
    upto = min(stop, start - 1 + MAX_READ_LINES)
    part.lines = [line.removesuffix("\r") for line in lines[start - 1:upto]]
    part.total = available
    reached_end = end is not None and upto >= end
    part.more = not part.cut_line and not reached_end and (upto < available or not whole)
    return part


def text_lines(text: str, start: int, end: int | None) -> LinePart:
    """:func:`read_lines` of an editor's buffer: the same caps, from its text."""
    data = plain_text(text).encode("utf-8")  # a lone surrogate is read as U+FFFD
    if b"\0" in data[:8192]:
        return LinePart(binary=True)
    part = LinePart()
    _take_lines(part, iter((data,)), start, end)
    return part


def _read_lines_on(path: Path, start: int, end: int | None) -> LinePart:
    """:func:`read_lines` from a line past the first :data:`MAX_READ_BYTES` of a file."""
    part = LinePart()
    chunks = read_chunks(path, MAX_SCAN_BYTES + 1)  # a generator: closed below

    def checked() -> Iterator[bytes]:
        scanned = 0
        for chunk in chunks:
            scanned += len(chunk)
            if scanned > MAX_SCAN_BYTES:
                part.beyond_scan = True
                return
            yield chunk

    try:
        _take_lines(part, checked(), start, end)
    finally:
        chunks.close()
    if part.beyond_scan and part.lines:  # what was found is given; the rest is "more"
        part.beyond_scan, part.more = False, True
    return part


def _take_lines(part: LinePart, chunks: Iterable[bytes], start: int, end: int | None) -> None:
    """Put lines ``start``..``end`` of the data into ``part``, to the caps."""
    skipped = [0, 0]  # newlines skipped; 1 when the data skipped ends inside a line
    size = 0
    found = _split_lines(_from_line(chunks, start, skipped), MAX_READ_BYTES)
    for number, (line, cut) in enumerate(found, start=start):
        if end is not None and number > end:
            break
        full = len(part.lines) >= MAX_READ_LINES
        if full or (part.lines and size + len(line) > MAX_READ_BYTES):
            part.more = True
            break
        part.lines.append(line.decode("utf-8", "replace").removesuffix("\r"))
        size += len(line) + 1
        if cut:
            part.cut_line = True
            break
    part.total = skipped[0] + skipped[1]


def _from_line(chunks: Iterable[bytes], start: int, skipped: list[int]) -> Iterator[bytes]:
    """The data from the beginning of line ``start`` on: whole chunks before it are only
    counted (``skipped``: the newlines passed, and 1 if the data ended inside a line)."""
    to_skip = start - 1
    for chunk in chunks:
        if to_skip:
            count = chunk.count(b"\n")
            if count < to_skip:
                to_skip -= count
                skipped[0] += count
                skipped[1] = 0 if chunk.endswith(b"\n") else 1
                continue
            position = -1
            for _ in range(to_skip):
                position = chunk.index(b"\n", position + 1)
            skipped[0] += to_skip
            skipped[1] = 0
            to_skip = 0
            if position + 1 < len(chunk):
                yield chunk[position + 1:]
            continue
        yield chunk


def _split_lines(chunks: Iterable[bytes], longest: int) -> Iterator[tuple[bytes, bool]]:
    """Each line of the data (without its newline), cut to ``longest`` bytes, and whether
    it was cut; a line's cut-off rest is never held in memory."""
    pending = bytearray()
    cut = False
    for chunk in chunks:
        position = 0
        while True:
            newline = chunk.find(b"\n", position)
            stop = len(chunk) if newline < 0 else newline
            if not cut:
                pending += chunk[position:stop]
                if len(pending) > longest:
                    del pending[longest:]
                    cut = True
            if newline < 0:
                break
            yield bytes(pending), cut
            pending.clear()
            cut = False
            position = newline + 1
    if pending or cut:
        yield bytes(pending), cut


def _grep_lines(rel: str, lines: Iterable[str], regex: Any, hits: list[str]) -> bool:
    """Add the lines matching ``regex`` to ``hits`` (up to the cap); whether any matched."""
    matched = False
    for number, line in enumerate(lines, start=1):
        if regex.search(line) is not None:
            hits.append(f"{rel}:{number}: {line[:300]}")
            matched = True
            if len(hits) >= MAX_GREP_MATCHES:
                break
    return matched


def _capped(hits: list[str]) -> str:
    """The note after a grep that stopped at :data:`MAX_GREP_MATCHES`: the model must not take
    the matches shown for all there are."""
    if len(hits) < MAX_GREP_MATCHES:
        return ""
    return (f"\n[stopped at the first {MAX_GREP_MATCHES} matches; there may be more: narrow the "
            "pattern, the path or the glob to see the rest]")


def _text_lines(text: str) -> list[str]:
    """The lines of ``text``, ending at "\n" only (as a file is read on in pieces)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()  # after the last newline (or an empty text)
    return lines


def _walk_order(folder: Path, path: Path) -> tuple[tuple[int, str], ...]:
    """Where :meth:`WorkspaceTools._walk` of ``folder`` gives ``path``: a folder's files
    (by name) come before its subfolders (by name, each in turn)."""
    *folders, name = path.relative_to(folder).parts
    return (*((1, part) for part in folders), (0, name))


def _few(names: list[str]) -> str:
    """The first five of ``names``, then an ellipsis."""
    return ", ".join(names[:5]) + (", …" if len(names) > 5 else "")


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _lines(count: int) -> str:
    return counted(count, "line")
