"""Which daemon owns a running turn, and whether that daemon is still alive.

Every editor window starts its own daemon, and all of them share one
database. A turn left ``running`` may belong to a daemon that is busy with it
right now, or to one that was killed. Each daemon therefore holds a *lease*:
an exclusive lock on its own file in ``<data>/daemons/``, taken at start and
held until the process ends. The operating system drops the lock when the
process dies, however it dies (``kill -9`` included), so another daemon can
tell a live owner from a dead one by trying to take the lock: if it can, the
owner is gone. No clock, heartbeat or pid re-use is involved.
"""

from __future__ import annotations

import contextlib
import os
import sys
from pathlib import Path
from typing import IO, Protocol

from switchman.engine.ids import new_id

LEASES_FOLDER = "daemons"


class Owners(Protocol):
    """Who this daemon is, and whether another owner id is still alive."""

    @property
    def id(self) -> str:
        """This daemon's owner id."""
        ...

    def alive(self, owner: str | None) -> bool:
        """Whether the daemon ``owner`` is still running (None: a turn from before owners)."""
        ...


class SoleOwner:
    """The owner when one process has the database to itself (tests, the CLI)."""

    def __init__(self) -> None:
        self.id = new_id()

    def alive(self, owner: str | None) -> bool:
        """Only this process is alive."""
        return owner == self.id


class DaemonLease:
    """This daemon's lease on ``<data>/daemons/<id>.lock``, held for the life of the process."""

    def __init__(self, data_folder: Path) -> None:
        self.id = new_id()
        self.folder = data_folder / LEASES_FOLDER
        self.folder.mkdir(parents=True, exist_ok=True)
        # Locked under a name no one probes, then renamed into place: another daemon never
        # sees this lease unlocked (and so never takes it for a dead one's).
        pending = self.folder / f"{self.id}.pending"
        self._file: IO[bytes] | None = pending.open("wb")
        _lock(self._file)
        self._file.write(f"{os.getpid()}\n".encode())
        self._file.flush()
        pending.replace(self._path(self.id))
        self.tidy()

    def tidy(self) -> None:
        """Remove the lease files of daemons that have ended."""
        for path in self.folder.glob("*.lock"):
            self.alive(path.stem)

    def alive(self, owner: str | None) -> bool:
        """Whether ``owner``'s process still holds its lease (a missing lease file: gone)."""
        if owner == self.id:
            return True
        if not owner or not _is_id(owner):
            return False
        try:
            probe = self._path(owner).open("rb+")
        except OSError:
            return False
        with probe:
            if not _try_lock(probe):
                return True
            _unlock(probe)
        with contextlib.suppress(OSError):  # the owner is gone: tidy its lease file away
            self._path(owner).unlink()
        return False

    def release(self) -> None:
        """Give up the lease (the process is ending)."""
        if self._file is not None:
            with contextlib.suppress(OSError):
                self._path(self.id).unlink()
            self._file.close()
            self._file = None

    def _path(self, owner: str) -> Path:
        return self.folder / f"{owner}.lock"


def _is_id(owner: str) -> bool:
    return owner.isalnum() and len(owner) <= 64  # never a path


if sys.platform == "win32":  # pragma: no cover - exercised on Windows only
    import msvcrt

    def _lock(file: IO[bytes]) -> None:
        msvcrt.locking(file.fileno(), msvcrt.LK_NBLCK, 1)

    def _try_lock(file: IO[bytes]) -> bool:
        try:
            msvcrt.locking(file.fileno(), msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(file: IO[bytes]) -> None:
        file.seek(0)
        msvcrt.locking(file.fileno(), msvcrt.LK_UNLCK, 1)
else:
    import fcntl

    def _lock(file: IO[bytes]) -> None:
        fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)

    def _try_lock(file: IO[bytes]) -> bool:
        try:
            fcntl.flock(file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(file: IO[bytes]) -> None:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)
