"""The embedded SQLite database: connection settings and schema migrations.

WAL journaling with ``synchronous=NORMAL``: a committed transaction survives
the daemon being killed (the write-ahead log is in the operating system's
hands); only a power loss can lose the most recent commits. Each write that
must survive a crash (a user's message, a turn's start) is its own commit.

SQLite copies the log back into the database (a checkpoint, with an ``fsync``)
inside whichever commit takes the log past 1,000 pages: every few dozen turns,
a commit on the event loop took tens of milliseconds, in the middle of a turn's
start or its first delta. The daemon's connection leaves that to
:func:`checkpoint`, run on a worker thread every few seconds.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from contextlib import closing
from pathlib import Path

log = logging.getLogger(__name__)

SCHEMA_VERSION = 5

_MIGRATIONS = {
    1: """
    CREATE TABLE workspaces (
        uri TEXT PRIMARY KEY,
        current_session_id TEXT
    );
    CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        workspace TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        sticky_model TEXT,
        is_worker INTEGER NOT NULL DEFAULT 0,
        parent_session_id TEXT,
        parent_tool_use_id TEXT
    );
    CREATE INDEX sessions_by_workspace ON sessions (workspace, updated_at);
    CREATE INDEX sessions_by_parent ON sessions (parent_session_id);
    CREATE TABLE turns (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        idx INTEGER NOT NULL,
        status TEXT NOT NULL,
        model TEXT,
        started_at TEXT NOT NULL,
        ended_at TEXT,
        input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0,
        cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        cost_micros INTEGER NOT NULL DEFAULT 0,
        llm_calls INTEGER NOT NULL DEFAULT 0,
        tool_calls INTEGER NOT NULL DEFAULT 0,
        error_code TEXT,
        error_message TEXT,
        summary TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX turns_by_session ON turns (session_id, idx);
    CREATE TABLE messages (
        id TEXT PRIMARY KEY,
        session_id TEXT NOT NULL REFERENCES sessions (id),
        turn_id TEXT,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL,
        model TEXT,
        content TEXT NOT NULL,
        touched TEXT NOT NULL DEFAULT '[]'
    );
    CREATE INDEX messages_by_session ON messages (session_id, id);
    CREATE TABLE events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        type TEXT NOT NULL,
        session_id TEXT,
        turn_id TEXT,
        payload TEXT NOT NULL
    );
    CREATE INDEX events_by_turn ON events (turn_id, type);
    CREATE INDEX events_by_session ON events (session_id, id);
    CREATE TABLE cost_ledger (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        ts TEXT NOT NULL,
        session_id TEXT NOT NULL,
        turn_id TEXT,
        model TEXT NOT NULL,
        input_tokens INTEGER NOT NULL,
        output_tokens INTEGER NOT NULL,
        cache_read_tokens INTEGER NOT NULL,
        cache_write_tokens INTEGER NOT NULL,
        cost_micros INTEGER NOT NULL
    );
    CREATE INDEX cost_by_time ON cost_ledger (ts);
    CREATE INDEX cost_by_session ON cost_ledger (session_id);
    """,
    # Running turns are owned by the daemon running them (see ownership.py), and the
    # database itself allows one running turn per session. Turns left running by daemons
    # from before owners existed cannot be told apart from live ones: they end here.
    2: """
    ALTER TABLE turns ADD COLUMN owner TEXT;
    UPDATE turns SET status = 'interrupted', error_code = 'interrupted',
        ended_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE status = 'running';
    CREATE UNIQUE INDEX one_running_turn_per_session ON turns (session_id)
        WHERE status = 'running';
    """,
    # Agent profiles: a session's own choice of profile (null: the workspace's or global
    # default), and a worker's handoff envelope (JSON) as recorded when it started.
    3: """
    ALTER TABLE sessions ADD COLUMN profile TEXT;
    ALTER TABLE sessions ADD COLUMN handoff TEXT;
    """,
    # A user's message as typed, where the model reads another text (Message.typed).
    4: """
    ALTER TABLE messages ADD COLUMN typed TEXT;
    """,
    # Which charges are Switchman's estimates (a call cut short before the provider reported
    # its usage), so that costs shown can say so; earlier rows count as reported.
    5: """
    ALTER TABLE cost_ledger ADD COLUMN estimated INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE turns ADD COLUMN estimated_micros INTEGER NOT NULL DEFAULT 0;
    """,
}


def connect(path: Path, *, checkpoint_elsewhere: bool = False) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` and bring its schema up to date.

    ``checkpoint_elsewhere``: commits never checkpoint; the caller runs :func:`checkpoint`
    (see the module's docstring).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA busy_timeout=5000")  # first: other daemons share the file
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA foreign_keys=ON")
    if checkpoint_elsewhere:
        connection.execute("PRAGMA wal_autocheckpoint=0")
    _migrate(connection)
    return connection


def checkpoint(path: Path) -> tuple[int, int]:
    """Copy what the write-ahead log holds into the database without waiting for other
    connections (a passive checkpoint), on a connection of its own: for a worker thread.
    Returns (pages in the log, pages copied)."""
    with closing(sqlite3.connect(path, isolation_level=None)) as connection:
        connection.execute("PRAGMA busy_timeout=5000")
        _, log, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(log), int(copied)


async def checkpoint_every(path: Path, seconds: float) -> None:
    """Run :func:`checkpoint` on a worker thread every ``seconds``, until cancelled."""
    while True:
        await asyncio.sleep(seconds)
        try:
            await asyncio.to_thread(checkpoint, path)
        except sqlite3.Error as error:  # busy or locked: the next round catches up
            log.warning("database checkpoint skipped: %s", error)


def _migrate(connection: sqlite3.Connection) -> None:
    for target in range(1, SCHEMA_VERSION + 1):
        if _version(connection) >= target:
            continue
        # Several daemons may start at once on one database: the write lock taken up front
        # lets one migrate while the others wait, then find the work done.
        connection.execute("BEGIN IMMEDIATE")
        try:
            if _version(connection) < target:
                for statement in _MIGRATIONS[target].split(";"):
                    if statement.strip():
                        connection.execute(statement)
                connection.execute(f"PRAGMA user_version={target}")
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")  # a migration applies completely or not at all
            raise


def _version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])
