"""Keeping every tool inside its workspace folder.

A path is resolved with every symlink followed and refused unless the real
path lies under the workspace's real root, so neither ``../`` nor a symlink
can lead a tool out. ``.git/`` internals are refused too: reading them can
leak credentials (remote URLs), and writing them could plant hooks that run
code the next time the user commits.

A ``file://`` URI (the editor's name for a file, which a model may repeat) is taken as the
path it names, and judged like any absolute path.
"""

from __future__ import annotations

import os
from pathlib import Path
from urllib.parse import urlsplit

from switchman.engine.tools.arguments import ToolRefused
from switchman.engine.tools.changes import path_of

PROTECTED_DIRS = frozenset({".git"})


def _local(raw: str) -> str:
    """``raw`` as a path: a ``file://`` URI is the path it names (percent-escapes decoded);
    one on another host is refused. Anything else is as given."""
    if raw[:7].lower() != "file://":
        return raw
    parts = urlsplit(raw)
    if parts.netloc not in ("", "localhost"):
        raise ToolRefused(f"'{raw}' is a file:// URI on another host; give a path in the "
                          "workspace.")
    return str(path_of(raw))


def _protected(relative: Path) -> bool:
    """Whether a path (relative to the root) goes through a protected folder. Names are
    compared as case-insensitive file systems (macOS, Windows) read them, Windows also
    dropping a name's trailing dots and spaces: there ``.GIT`` and ``.git.`` are ``.git``."""
    return any(part.rstrip(". ").casefold() in PROTECTED_DIRS for part in relative.parts)


class WorkspaceRoot:
    """One workspace folder, and the rule for which paths belong to it."""

    def __init__(self, folder: Path) -> None:
        self.root = Path(os.path.realpath(folder))

    def resolve(self, raw: str) -> Path:
        """The real path of ``raw`` (relative to the root) inside the workspace."""
        return self._inside(raw, Path(os.path.realpath(self.root / _local(raw))))

    def entry(self, raw: str) -> Path:
        """Where ``raw`` itself is: its folder's real path and its own name, not followed when
        it is a symlink (deleting a link removes the link, as ``rm`` does, not what it leads
        to). The same checks as :meth:`resolve`."""
        lexical = self.root / _local(raw)
        if lexical.name in ("", ".", ".."):
            return self.resolve(raw)
        return self._inside(raw, Path(os.path.realpath(lexical.parent)) / lexical.name)

    def _inside(self, raw: str, candidate: Path) -> Path:
        if candidate != self.root and self.root not in candidate.parents:
            raise ToolRefused(f"'{raw}' is outside the workspace; only files under "
                              f"{self.root} can be used.")
        if _protected(candidate.relative_to(self.root)):
            raise ToolRefused(f"'{raw}' is inside .git/; Switchman's tools do not touch "
                              "repository internals (use git through run_command).")
        return candidate

    def contains(self, path: Path) -> bool:
        """Whether ``path`` (followed through symlinks) lies inside the workspace."""
        real = Path(os.path.realpath(path))
        return real == self.root or self.root in real.parents

    def admits(self, path: Path) -> bool:
        """Whether a path found by a walk (not named by the model) may be used as one named
        would be: followed through symlinks it is inside the workspace and not in ``.git/``
        (a link ``notes.txt`` to ``.git/config`` is refused by name, so it is skipped here)."""
        real = Path(os.path.realpath(path))
        if real != self.root and self.root not in real.parents:
            return False
        return not _protected(real.relative_to(self.root))

    def relative(self, path: Path) -> str:
        """``path`` relative to the root, with forward slashes."""
        return path.relative_to(self.root).as_posix() or "."
