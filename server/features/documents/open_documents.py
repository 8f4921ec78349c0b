"""Which file each document the editor shares is, found once when it is opened.

The clients share every file buffer of the workspace, so ``didChange`` comes
with each keystroke in any file. pygls applies the change to its copy of the
text (``server.workspace``); nothing else may run for it. So a document's real
path (symlinks followed, as the tools resolve paths) is found once, at
``didOpen``, and whether it can be one of Switchman's configuration files is
decided from its name then (the name the editor has: a workspace's
``.switchman/routing.yaml`` linked to ``notes.yaml`` is still its routing file,
which may not be read): only those go on to configuration editing.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from pygls.uris import to_fs_path

CONFIG_FILE_NAMES = frozenset({"routing.yaml", "models.yaml", "profiles.yaml"})
"""The names Switchman's configuration files have (as the editor names them)."""


class SharedText(Protocol):
    """What the tools need of pygls' copy of a document."""

    @property
    def source(self) -> str: ...


class OpenDocuments:
    """The editor's open documents: their files' real paths, and which may be configuration."""

    def __init__(self) -> None:
        self._paths: dict[str, Path] = {}
        self._config: set[str] = set()

    def opened(self, uri: str) -> bool:
        """Record a document the editor opened; whether configuration editing wants it."""
        path = to_fs_path(uri) if uri.startswith("file:") else None
        if path is None:  # untitled:, git:, … documents are no file of the workspace
            self._paths.pop(uri, None)
            return False
        self._paths[uri] = _real(path)
        if Path(path).name in CONFIG_FILE_NAMES:  # the editor's name, not a link target's
            self._config.add(uri)
            return True
        self._config.discard(uri)
        return False

    def closed(self, uri: str) -> bool:
        """Forget a closed document (its file is read from disk again); whether configuration
        editing had it."""
        was_config = self.may_be_config(uri)
        self._paths.pop(uri, None)
        self._config.discard(uri)
        return was_config

    def may_be_config(self, uri: str) -> bool:
        """Whether ``uri`` may be a configuration file (an unknown one is asked about)."""
        return uri in self._config or uri not in self._paths

    def any_config(self) -> bool:
        """Whether a document that may be a configuration file is open."""
        return bool(self._config)

    def texts(self, document_at: Callable[[str], SharedText | None]) -> dict[Path, str]:
        """The text of each open file document (``document_at`` its URI), by its file's
        real path. Called from the tools' threads: the entries are copied at once (no
        Python code runs between them, so the event loop cannot change the dict
        meanwhile)."""
        texts: dict[Path, str] = {}
        for uri, path in list(self._paths.items()):
            document = document_at(uri)
            if document is not None:
                texts[path] = document.source
        return texts

    def uri_of(self, path: Path) -> str | None:
        """The URI the editor opened the file at real ``path`` by, if it has it open."""
        for uri, real in list(self._paths.items()):
            if real == path:
                return uri
        return None


def _real(path: str) -> Path:
    try:
        return Path(os.path.realpath(path))
    except (OSError, ValueError):  # a NUL byte, a loop: the name as given
        return Path(os.path.abspath(path))
