"""The editor's open workspace folders, by URI."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import unquote, urlparse

from switchman.engine.errors import UnknownWorkspace


def workspace_uri(raw: str) -> str:
    """A workspace given as a ``file://`` URI or an absolute path, as a URI."""
    if raw.startswith("file://"):
        return Path(unquote(urlparse(raw).path)).resolve().as_uri()
    return Path(raw).expanduser().resolve().as_uri()


def named_folder_uri(raw: str) -> str:
    """``raw`` (a ``file://`` URI or an absolute path, open or not) as a workspace URI; raises
    :class:`UnknownWorkspace` for anything else, which would otherwise be resolved against
    the daemon's own folder, or cannot be a path at all (a NUL, a lone surrogate)."""
    local = unquote(urlparse(raw).path) if raw.startswith("file://") else raw
    if Path(local).expanduser().is_absolute():
        try:
            return workspace_uri(raw)
        except (ValueError, OSError):
            pass
    raise UnknownWorkspace(raw[:200], f"'{raw[:200]}' is not a workspace folder: give a file:// "
                                      "URI or an absolute path.")


def folder_of(uri: str) -> Path:
    """The local folder of a ``file://`` URI."""
    return Path(unquote(urlparse(uri).path))


class WorkspaceRegistry:
    """Which folders the editor has open; every request names one of them."""

    def __init__(self) -> None:
        self._folders: dict[str, Path] = {}

    def open(self, raw: str) -> str:
        """Register an editor workspace folder; returns its URI."""
        uri = _uri(raw)
        self._folders[uri] = folder_of(uri)
        return uri

    def close(self, raw: str) -> None:
        """Forget a workspace folder the editor closed."""
        with contextlib.suppress(UnknownWorkspace):
            self._folders.pop(_uri(raw), None)

    def resolve(self, raw: str) -> str:
        """The URI of an open workspace; raises :class:`UnknownWorkspace`."""
        if raw in self._folders:  # already in normal form: skip path resolution
            return raw
        uri = _uri(raw)
        if uri not in self._folders:
            raise UnknownWorkspace(raw)
        return uri

    def folder(self, uri: str) -> Path:
        """The local folder of an open workspace."""
        return self._folders[self.resolve(uri)]

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._folders))

    def __contains__(self, uri: object) -> bool:
        return uri in self._folders


def _uri(raw: str) -> str:
    """``raw`` as a workspace URI; raises :class:`UnknownWorkspace` if it is no local path."""
    try:
        if raw:
            return workspace_uri(raw)
    except (ValueError, OSError):  # a NUL byte, a lone surrogate, a path the OS refuses
        pass
    raise UnknownWorkspace(raw)
