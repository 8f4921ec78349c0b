"""Read-only tools the model may call, confined to the session's workspace folder.

Every path is resolved (symlinks included) and refused unless it lies inside
the workspace, so no tool can read outside it. Output is capped so one call
cannot flood the context window.
"""

from __future__ import annotations

import asyncio
import fnmatch
import logging
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from switchman.engine.errors import UnreadableFile
from switchman.engine.files import read_head
from switchman.engine.providers.base import ToolSpec
from switchman.engine.tools.arguments import (
    ToolOutcome,
    ToolRefused,
    path_argument,
    text_argument,
    whole_number_argument,
)
from switchman.engine.tools.confinement import WorkspaceRoot
from switchman.engine.userregex import RegexError, compile_regex

__all__ = ["DEFINITIONS", "TOOL_NAMES", "ToolOutcome", "ToolRefused", "WorkspaceTools"]
log = logging.getLogger(__name__)

MAX_READ_BYTES = 256 * 1024
MAX_READ_LINES = 2000
MAX_LIST_ENTRIES = 500
MAX_GREP_MATCHES = 200
MAX_GREP_FILE_BYTES = 1024 * 1024
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

    def __init__(self, root: Path) -> None:
        self.workspace = WorkspaceRoot(root)
        self.root = self.workspace.root

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
            return ToolOutcome(str(refusal), is_error=True, summary=str(refusal))
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
        try:
            data, whole = read_head(path, MAX_READ_BYTES)
        except UnreadableFile as exc:
            raise ToolRefused(f"'{self.relative(path)}' {exc.reason}.") from None
        if b"\0" in data[:8192]:
            raise ToolRefused(f"'{self.relative(path)}' is a binary file.")
        lines = data.decode("utf-8", "replace").splitlines()
        start = max(start_line or 1, 1)
        end = min(end_line or len(lines), start + MAX_READ_LINES - 1)
        chosen = lines[start - 1:end]
        truncated = end < len(lines) or not whole
        text = "\n".join(chosen) + ("\n[… truncated]" if truncated else "")
        rel = self.relative(path)
        return ToolOutcome(text, summary=f"{rel}: {len(chosen)} lines", touched=[rel])

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
                           summary=f"{len(found)} files", touched=found)

    def _grep(self, args: dict[str, Any]) -> ToolOutcome:
        try:
            regex = compile_regex(text_argument(args, "pattern", required=True) or "")
        except RegexError as exc:
            raise ToolRefused(f"Invalid pattern: {exc}") from None
        where = self.resolve(args, default=".")
        files = [where] if where.is_file() else self._walk(where)
        glob = text_argument(args, "glob")
        hits: list[str] = []
        touched: list[str] = []
        for path in files:
            if glob and not fnmatch.fnmatch(path.name, glob):
                continue
            matched = self._grep_file(path, regex, hits)
            if matched:
                touched.append(self.relative(path))
            if len(hits) >= MAX_GREP_MATCHES:
                break
        return ToolOutcome("\n".join(hits) or "(no matches)",
                           summary=f"{len(hits)} matches in {len(touched)} files", touched=touched)

    def _grep_file(self, path: Path, regex: Any, hits: list[str]) -> bool:
        try:
            data, whole = read_head(path, MAX_GREP_FILE_BYTES)
        except UnreadableFile:  # FIFOs, devices, loops: nothing to search
            return False
        if not whole:
            return False
        if b"\0" in data[:8192]:
            return False
        matched = False
        for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if regex.search(line) is not None:
                hits.append(f"{self.relative(path)}:{number}: {line[:300]}")
                matched = True
                if len(hits) >= MAX_GREP_MATCHES:
                    break
        return matched

    def _walk(self, folder: Path) -> Iterator[Path]:
        for current, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
            for name in sorted(files):
                path = Path(current) / name
                if self.workspace.contains(path):  # no symlinks out
                    yield path
