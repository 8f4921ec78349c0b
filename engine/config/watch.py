"""Noticing saved configuration changes when the editor cannot tell us.

The configuration is read fresh (by file signature) whenever it is used, so a
saved fix or breakage takes effect at the next turn anyway; what needs a
trigger is the *status* the editor shows ("your routing.yaml has errors").
Editors that support it watch the files for us (LSP
``workspace/didChangeWatchedFiles``); for the others, and for the user's
config folder, which usually lies outside every workspace, :class:`ConfigPoll`
compares the files' (mtime, size) signatures once a second. A handful of
``stat`` calls per second is far cheaper than an inotify dependency, and the
calls run in a worker thread, so a slow file system never stalls the event
loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

POLL_SECONDS = 1.0
POLL_SECONDS_ENV = "SWITCHMAN_CONFIG_POLL_SECONDS"
"""Overrides the poll interval (tests use a short one)."""

Signature = tuple[int, int] | None
_UNSEEN = object()


def poll_interval(environ: Mapping[str, str] = os.environ) -> float:
    """The poll interval in seconds: ``SWITCHMAN_CONFIG_POLL_SECONDS`` or one second."""
    try:
        value = float(environ.get(POLL_SECONDS_ENV) or POLL_SECONDS)
    except ValueError:
        return POLL_SECONDS
    return value if value > 0 else POLL_SECONDS


def signatures(paths: Iterable[Path]) -> dict[Path, Signature]:
    """Each file's (mtime in ns, size), or None where it does not exist or cannot be read."""
    found: dict[Path, Signature] = {}
    for path in paths:
        try:
            st = path.stat()
        except (OSError, ValueError):  # ValueError: a path with a NUL byte
            found[path] = None
        else:
            found[path] = (st.st_mtime_ns, st.st_size)
    return found


class ConfigPoll:
    """Calls ``on_change`` after any of ``paths()`` was created, changed or deleted (``look``
    says how each path is now: :func:`signatures` of files by default)."""

    def __init__(self, paths: Callable[[], Iterable[Path]], on_change: Callable[[], None],
                 look: Callable[[list[Path]], Mapping[Path, object]] = signatures,
                 *, new_is_change: bool = False) -> None:
        self._paths = paths
        self._on_change = on_change
        self._look = look
        self._new_is_change = new_is_change
        self._seen: Mapping[Path, object] | None = None

    def observe(self, current: Mapping[Path, object]) -> bool:
        """Compare with the previous observation; True (after calling ``on_change``) on a change.

        A path seen for the first time (a workspace opened since) is not a change: its
        status is sent when the workspace opens. With ``new_is_change`` it is one, the first
        observation's too: what it was before is not known.
        """
        previous, self._seen = self._seen, current
        if previous is None and not self._new_is_change:
            return False
        before: Mapping[Path, object] = previous or {}
        changed = any(before.get(path, _UNSEEN if self._new_is_change else sig) != sig
                      for path, sig in current.items())
        if changed:
            self._on_change()
        return changed

    async def run(self, interval: float) -> None:
        """Poll until cancelled; the paths are chosen on the loop, the ``stat`` calls off it."""
        while True:
            paths = list(self._paths())
            self.observe(await asyncio.to_thread(self._look, paths))
            await asyncio.sleep(interval)
