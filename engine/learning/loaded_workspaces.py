"""Each workspace's learned rows in memory, read on first use and off the event loop when large.

A workspace with more than ``sync_load_rows`` rows, or more than ``small_rows``
(numpy's index: importing numpy takes a tenth of a second or more), is read on
a worker thread (reading 100,000 rows takes seconds, too long for the event
loop); so is a small workspace that has just outgrown ``small_rows``. It starts
when the editor opens the folder (:meth:`LoadedWorkspaces.prepare`) or at the
first decision, whichever comes first. Until it is ready the workspace is None
(slot 4 answers :class:`~switchman.engine.patterns.PatternsLoading`); turns
recorded meanwhile are written to the database at once and added to the index
when it is installed (by turn id: never twice).

Each workspace's trained index is saved in ``patterns-index/`` beside the
database (:mod:`.index_state`), so a reopened store answers from its index at
once instead of scanning every row while it trains again.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from switchman.engine.learning import database as db
from switchman.engine.learning.small_workspace import SmallWorkspace

if TYPE_CHECKING:
    from typing import TypeAlias

    from switchman.engine.learning.index import VectorIndex
    from switchman.engine.learning.workspace_index import WorkspaceIndex

    LoadedWorkspace: TypeAlias = SmallWorkspace | WorkspaceIndex
    """A workspace's rows in memory: plain Python while small, numpy's index past that."""

MAX_ROWS = 100_000
INDEX_FOLDER = "patterns-index"
SYNC_LOAD_ROWS = 1_000
"""Up to this many rows a workspace is read on the caller's thread (tens of milliseconds,
docs/architecture.md "Decisions"); above it, on a worker thread."""

_log = logging.getLogger(__name__)


@dataclass
class _Loading:
    """A workspace being read on a worker thread, and what happened to it meanwhile."""

    turns: int
    recorded: list[db.PatternRow] = field(default_factory=list)
    """Rows recorded during the load (already in the database), with their ids."""
    scores: dict[str, float] = field(default_factory=dict)
    """Success scores changed during the load, by turn id."""
    done: threading.Event = field(default_factory=threading.Event)


@dataclass
class _LastId:
    """The database id of the last row a load has read."""

    id: int

    def passing(self, rows: Iterable[db.PatternRow]) -> Iterator[db.PatternRow]:
        """``rows``, remembering each one's id as it goes by."""
        for row in rows:
            self.id = row.id
            yield row


class LoadedWorkspaces:
    """The workspaces' rows in memory, by workspace folder, and the loads under way."""

    def __init__(self, connection: sqlite3.Connection, *, writer: sqlite3.Connection | None,
                 max_rows: int, background: bool, sync_load_rows: int,
                 small_rows: int) -> None:
        self.connection = connection
        """Reads: the decisions' loads, statistics, ratings (the event loop's)."""
        self.writer = connection if writer is None else writer
        """Every change to rows, and the reads a change depends on. The daemon gives a
        connection of its own used on its pattern writer thread, so a commit that waits for
        the file's write lock never holds a read on the event loop (docs/architecture.md)."""
        self.max_rows = max_rows
        self.background = background
        self.sync_load_rows = sync_load_rows
        self.small_rows = small_rows
        """Up to this many rows a workspace is scored without numpy."""
        self._database = str(next((r[2] for r in connection.execute("PRAGMA database_list")
                                   if r[1] == "main"), ""))
        """The database's file ("" for an in-memory one): read once, the connection is fixed."""
        self._workspaces: dict[str, LoadedWorkspace] = {}
        self._loading: dict[str, _Loading] = {}
        self._lock = threading.RLock()
        """Guards the in-memory workspaces; never held across a write to the database."""
        self._read_up_to: dict[str, tuple[int, int, int]] = {}
        """Per loaded workspace: the highest row id read from the database, the connection's
        ``data_version`` then, and the database's count of re-scorings (rows other daemons
        add, and scores they change, are read after them)."""
        self._changing = threading.Lock()
        """Held by one change to rows at a time (read, decide, write); never taken by slot 4."""

    @property
    def database_file(self) -> str:
        """The database's file, to name it in a message (``patterns.db`` for one in memory)."""
        return self._database or db.FILE_NAME

    def index_of(self, workspace: str) -> VectorIndex:
        """numpy's k-NN index of a workspace with more than ``small_rows`` rows, waiting for
        it if it is loading (diagnostics, tests, benchmarks: never the event loop)."""
        self.prepare(workspace)
        self.wait_loaded(workspace)
        space = self._workspace(workspace)
        assert space is not None
        assert not isinstance(space, SmallWorkspace), "a small workspace has no numpy index"
        return space.index

    def prepare(self, workspace: str) -> None:
        """A sign ``workspace`` will chat (its folder was opened): if it has many rows, start
        reading them on a worker thread now. Returns at once."""
        with self._lock:
            self._workspace(workspace, start_only=True)

    def wait_loaded(self, workspace: str, timeout: float | None = None) -> bool:
        """Block until no load of ``workspace`` is running; False on timeout."""
        with self._lock:
            loading = self._loading.get(workspace)
        return loading is None or loading.done.wait(timeout)

    def _workspace(self, key: str, *, start_only: bool = False) -> LoadedWorkspace | None:
        """The workspace's index, read now if small; None while it loads on a thread."""
        with self._lock:
            space = self._workspaces.get(key)
            if space is not None or key in self._loading:
                return space
            turns = db.count(self.connection, key)
            # numpy's index (and numpy's import) is built on a thread too, never on the loop;
            # a store with background=False (tests, benchmarks) builds it on the caller's
            limit = min(self.sync_load_rows, self.small_rows) if self.background \
                else self.sync_load_rows
            if turns > limit:
                loading = self._loading[key] = _Loading(turns)
                threading.Thread(target=self._load_in_background, args=(key, loading),
                                 name="switchman-patterns-load", daemon=True).start()
                return None
            if start_only:
                return None
            space = self._workspaces[key] = self._load(key, self.connection)
            return space

    def _load_in_background(self, key: str, loading: _Loading) -> None:
        """Read the rows without holding the lock (recording goes on meanwhile), then install
        the index with the rows recorded and the scores changed since."""
        database = self._database
        try:
            connection = self.connection if not database else db.reader(database)
            try:
                space = self._load(key, connection)
            finally:
                if connection is not self.connection:
                    connection.close()
        except Exception:  # a broken read must not leave the workspace loading forever
            _log.exception("could not load the learned patterns of %s", key)
            space = SmallWorkspace()
        drop = 0
        with self._lock:
            if self._loading.get(key) is loading:  # not forgotten meanwhile
                del self._loading[key]
                for row in loading.recorded:
                    if row.turn_id not in space.position:  # the read may have seen it
                        drop += self._add(space, row)
                for turn_id, score in loading.scores.items():
                    if turn_id in space.position:
                        space.success[space.position[turn_id]] = score
                self._workspaces[key] = space
        loading.done.set()
        if drop:
            with self._changing:
                self._forget_oldest(key, drop)

    def _load(self, key: str, connection: sqlite3.Connection) -> LoadedWorkspace:
        """The workspace's rows in memory: in plain Python up to ``small_rows``, else in
        numpy's index (numpy is imported then: a daemon with small stores never pays
        its 15 MiB)."""
        version = db.data_version(self.connection) if connection is self.connection else -1
        rescores = db.rescores(connection)  # before the rows: a change between is read again
        rows = db.rows(connection, key)
        first = list(itertools.islice(rows, self.small_rows + 1))
        read = _LastId(first[-1].id if first else 0)
        space: LoadedWorkspace
        if len(first) <= self.small_rows:
            space = SmallWorkspace.loaded(first)
        else:
            from switchman.engine.learning.workspace_index import (  # noqa: PLC0415
                WorkspaceIndex,
            )
            # The rest are streamed into the index, never held as a list (at 100,000 rows
            # that list was about 150 MB beside the index being built).
            space = WorkspaceIndex.loaded(read.passing(itertools.chain(first, rows)),
                                          self.background, self.max_rows,
                                          self._saved_index(key))
        with self._lock:
            self._read_up_to[key] = (read.id, version, rescores)
        return space

    def _saved_index(self, key: str) -> Path | None:
        """Where the workspace's trained index is saved (None for an in-memory database)."""
        database = self._database
        if not database:
            return None
        name = hashlib.sha256(key.encode()).hexdigest()[:24]
        return Path(database).parent / INDEX_FOLDER / f"{name}.npz"

    def _add(self, space: LoadedWorkspace, row: db.PatternRow) -> int:
        """Put a stored row into the workspace's index, dropping the oldest past ``max_rows``
        from memory; returns how many to delete from the database too
        (:meth:`_forget_oldest`, once the lock is released)."""
        space.add(row)
        if len(space.turn_ids) <= self.max_rows:
            return 0
        drop = max(1, self.max_rows // 10)
        space.drop_oldest(drop)
        return drop

    def _forget_oldest(self, workspace: str, count: int) -> None:
        if count:
            db.delete_oldest(self.writer, workspace, count)

