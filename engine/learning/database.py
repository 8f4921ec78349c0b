"""The pattern database: one SQLite file beside the sessions database, ``patterns.db``.

Its own file, so the pattern store can be exported, forgotten or rebuilt
without touching transcripts, and so its writes never wait on a session's.
Like the sessions database it uses WAL with ``synchronous=NORMAL``: a committed
row survives the daemon being killed. The daemon commits on a thread of its own
(:mod:`.recorder`). No column holds message text.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from switchman.engine.learning.evaluator import Evidence, NextAction
from switchman.engine.learning.fingerprint import widened
from switchman.engine.learning.meaning import Centre

SCHEMA_VERSION = 3
"""2: ``pattern_centres`` (each workspace's centre of meaning, :mod:`.meaning`); rows of
version 1 have fingerprints without the meaning block, read widened (no rewrite needed).
3: ``pattern_turns.rescored`` and ``pattern_rescores`` (:func:`update_evidence`), added to
an older file when it is opened."""
FILE_NAME = "patterns.db"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS pattern_turns (
    id INTEGER PRIMARY KEY,
    workspace TEXT NOT NULL,
    turn_id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    planner_turn_id TEXT,
    is_worker INTEGER NOT NULL DEFAULT 0,
    model TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    cost_usd REAL NOT NULL DEFAULT 0,
    samples INTEGER NOT NULL DEFAULT 1,
    message_hash TEXT NOT NULL,
    fingerprint BLOB NOT NULL,
    scale REAL NOT NULL,
    status TEXT NOT NULL,
    tool_errors INTEGER NOT NULL DEFAULT 0,
    next_action TEXT,
    feedback INTEGER,
    delegations INTEGER NOT NULL DEFAULT 0,
    delegations_failed INTEGER NOT NULL DEFAULT 0,
    success REAL NOT NULL,
    rescored INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS pattern_turns_by_workspace ON pattern_turns (workspace, id);
CREATE INDEX IF NOT EXISTS pattern_turns_by_session ON pattern_turns (session_id, id);
CREATE TABLE IF NOT EXISTS pattern_forgets (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    forgets INTEGER NOT NULL
);
INSERT OR IGNORE INTO pattern_forgets (id, forgets) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS pattern_rescores (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    rescores INTEGER NOT NULL
);
INSERT OR IGNORE INTO pattern_rescores (id, rescores) VALUES (1, 0);
CREATE TABLE IF NOT EXISTS pattern_centres (
    workspace TEXT PRIMARY KEY,
    turns INTEGER NOT NULL,
    total BLOB NOT NULL
);
"""


class PatternRow(msgspec.Struct, frozen=True, kw_only=True):
    """One remembered turn: its fingerprint, model, cost and evidence (never its text)."""

    workspace: str
    turn_id: str
    session_id: str
    model: str
    recorded_at: str
    cost_usd: float
    message_hash: str
    codes: bytes
    scale: float
    evidence: Evidence
    success: float
    samples: int = 1
    is_worker: bool = False
    planner_turn_id: str | None = None
    id: int = 0
    mean: tuple[float, ...] | None = None
    """The message's meaning (:func:`.meaning.message_mean`), counted into the workspace's
    centre when the row is stored; never written to the row."""


def connect(path: Path | str, *, busy_seconds: float = 5.0) -> sqlite3.Connection:
    """Open (creating if needed) the pattern database; ``":memory:"`` for a throwaway one.

    ``busy_seconds``: how long a statement waits for another connection's write lock. A
    file already of :data:`SCHEMA_VERSION` is opened without writing to it, so without
    waiting for that lock: the daemon opens it on the event loop as it starts, and another
    daemon's commit (a ``switchman patterns forget`` of a big store) held the start up to the
    busy timeout, then failed it ("database is locked"). Only a new file, or one of an older
    Switchman, is set up, under the write lock."""
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute(f"PRAGMA busy_timeout={int(busy_seconds * 1000)}")
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    if _version(connection) < SCHEMA_VERSION:
        _set_up(connection)
    return connection


def _version(connection: sqlite3.Connection) -> int:
    return int(connection.execute("PRAGMA user_version").fetchone()[0])


def _set_up(connection: sqlite3.Connection) -> None:
    """Create the tables, or bring an older file's up to date, in one write transaction
    (several daemons starting at once: one sets the file up, the others find it done)."""
    with writing(connection):
        if _version(connection) >= SCHEMA_VERSION:
            return
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                connection.execute(statement)
        columns = {raw[1] for raw in connection.execute("PRAGMA table_info(pattern_turns)")}
        if "rescored" not in columns:  # a file of schema 2 or before
            connection.execute("ALTER TABLE pattern_turns"
                               " ADD COLUMN rescored INTEGER NOT NULL DEFAULT 0")
        connection.execute("CREATE INDEX IF NOT EXISTS pattern_turns_by_rescored"
                           " ON pattern_turns (rescored) WHERE rescored > 0")
        connection.execute(f"PRAGMA user_version={SCHEMA_VERSION}")


def reader(path: str) -> sqlite3.Connection:
    """A read-only connection to an existing pattern database (for a loader thread: WAL lets
    it read while the daemon's connection writes)."""
    connection = sqlite3.connect(f"{Path(path).as_uri()}?mode=ro", uri=True,
                                 check_same_thread=False)
    connection.row_factory = sqlite3.Row
    connection.execute("PRAGMA busy_timeout=5000")
    return connection


def count(connection: sqlite3.Connection, workspace: str) -> int:
    """How many rows a workspace has (an index-only count: milliseconds at 100,000)."""
    return int(connection.execute("SELECT COUNT(*) FROM pattern_turns WHERE workspace = ?",
                                  (workspace,)).fetchone()[0])


def insert(connection: sqlite3.Connection, row: PatternRow) -> int:
    """Store ``row`` (replacing an earlier row of the same turn); returns its id."""
    e = row.evidence
    cursor = connection.execute(
        "INSERT OR REPLACE INTO pattern_turns (workspace, turn_id, session_id, planner_turn_id,"
        " is_worker, model, recorded_at, cost_usd, samples, message_hash, fingerprint, scale,"
        " status, tool_errors, next_action, feedback, delegations, delegations_failed, success)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (row.workspace, row.turn_id, row.session_id, row.planner_turn_id, int(row.is_worker),
         row.model, row.recorded_at, row.cost_usd, row.samples, row.message_hash, row.codes,
         row.scale, e.status, e.tool_errors, e.next_action, e.feedback, e.delegations,
         e.delegations_failed, row.success))
    return int(cursor.lastrowid or 0)


def rows(connection: sqlite3.Connection, workspace: str | None = None) -> Iterator[PatternRow]:
    """Every row, oldest first (of one workspace when given)."""
    if workspace is None:
        cursor = connection.execute("SELECT * FROM pattern_turns ORDER BY id")
    else:
        cursor = connection.execute(
            "SELECT * FROM pattern_turns WHERE workspace = ? ORDER BY id", (workspace,))
    for raw in cursor:
        yield _row(raw)


def rows_after(connection: sqlite3.Connection, workspace: str, after: int) -> list[PatternRow]:
    """A workspace's rows with an id above ``after``, oldest first."""
    return [_row(raw) for raw in connection.execute(
        "SELECT * FROM pattern_turns WHERE workspace = ? AND id > ? ORDER BY id",
        (workspace, after))]


def recorded_time(stored: str | None) -> datetime | None:
    """A row's ``recorded_at`` (written by ``isoformat()``: microseconds, ``+00:00``) as a
    time in UTC; None when it cannot be read."""
    try:
        moment = datetime.fromisoformat(stored or "")
    except ValueError:
        return None
    return moment.astimezone(UTC) if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def data_version(connection: sqlite3.Connection) -> int:
    """SQLite's count of commits by other connections to the file, as ``connection`` sees
    it (unchanged: nobody else wrote since it last looked)."""
    return int(connection.execute("PRAGMA data_version").fetchone()[0])


def by_turn(connection: sqlite3.Connection, turn_id: str) -> PatternRow | None:
    """The row of ``turn_id``, if it was recorded."""
    raw = connection.execute("SELECT * FROM pattern_turns WHERE turn_id = ?",
                             (turn_id,)).fetchone()
    return None if raw is None else _row(raw)


def last_of_session(connection: sqlite3.Connection, session_id: str) -> PatternRow | None:
    """The most recent row of a session."""
    raw = connection.execute(
        "SELECT * FROM pattern_turns WHERE session_id = ? ORDER BY id DESC LIMIT 1",
        (session_id,)).fetchone()
    return None if raw is None else _row(raw)


def feedback_of_session(connection: sqlite3.Connection, session_id: str) -> dict[str, int]:
    """The explicit feedback (+1 / -1) given to a session's turns still stored, by turn id."""
    rows = connection.execute(
        "SELECT turn_id, feedback FROM pattern_turns WHERE session_id = ? AND feedback IS NOT NULL",
        (session_id,)).fetchall()
    return {str(turn_id): int(feedback) for turn_id, feedback in rows}


def update_evidence(connection: sqlite3.Connection, turn_id: str, evidence: Evidence,
                    success: float) -> None:
    """Replace a row's evidence and score (a late-arriving signal), numbering the change
    (``pattern_rescores`` counts them; the row keeps the number in ``rescored``) so another
    daemon on the file finds the rows re-scored since it last looked (:func:`rescored`).

    Within the caller's :func:`writing` when it read the row the evidence comes from (else
    in a transaction of its own)."""
    with writing(connection):
        connection.execute("UPDATE pattern_rescores SET rescores = rescores + 1 WHERE id = 1")
        connection.execute(
            "UPDATE pattern_turns SET status = ?, tool_errors = ?, next_action = ?,"
            " feedback = ?, delegations = ?, delegations_failed = ?, success = ?,"
            " rescored = (SELECT rescores FROM pattern_rescores WHERE id = 1)"
            " WHERE turn_id = ?",
            (evidence.status, evidence.tool_errors, evidence.next_action, evidence.feedback,
             evidence.delegations, evidence.delegations_failed, success, turn_id))


@contextlib.contextmanager
def writing(connection: sqlite3.Connection) -> Iterator[None]:
    """One write transaction (``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on an error):
    what is read inside it stays as read until its write commits, whatever another daemon
    on the data folder does meanwhile (it waits for the lock). Inside one already, it joins
    that one."""
    if connection.in_transaction:
        yield
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")


def rescores(connection: sqlite3.Connection) -> int:
    """How many times rows were re-scored, by any process (:func:`update_evidence`)."""
    row = connection.execute("SELECT rescores FROM pattern_rescores WHERE id = 1").fetchone()
    return int(row[0]) if row is not None else 0


def rescored(connection: sqlite3.Connection, workspace: str, after: int,
             up_to: int) -> list[tuple[str, float]]:
    """The turn ids and scores of a workspace's rows re-scored after the count ``after`` and
    up to ``up_to`` (:func:`rescores`), from the index of re-scored rows only (``+workspace``
    keeps the planner off the workspace's index, which would read all its rows)."""
    return [(str(turn_id), float(success)) for turn_id, success in connection.execute(
        "SELECT turn_id, success FROM pattern_turns WHERE rescored > 0 AND rescored > ?"
        " AND rescored <= ? AND +workspace = ?", (after, up_to, workspace))]


def delete_oldest(connection: sqlite3.Connection, workspace: str, count: int) -> None:
    """Forget the ``count`` oldest rows of a workspace (retention)."""
    connection.execute(
        "DELETE FROM pattern_turns WHERE id IN (SELECT id FROM pattern_turns WHERE workspace = ?"
        " ORDER BY id LIMIT ?)", (workspace, count))


def delete_workspace(connection: sqlite3.Connection, workspace: str | None) -> int:
    """Forget every row (of one workspace when given), counting the forgetting in
    ``pattern_forgets`` (:func:`forgets`); returns how many rows."""
    connection.execute("BEGIN IMMEDIATE")
    try:
        if workspace is None:
            cursor = connection.execute("DELETE FROM pattern_turns")
            connection.execute("DELETE FROM pattern_centres")
        else:
            cursor = connection.execute("DELETE FROM pattern_turns WHERE workspace = ?",
                                        (workspace,))
            connection.execute("DELETE FROM pattern_centres WHERE workspace = ?", (workspace,))
        connection.execute("UPDATE pattern_forgets SET forgets = forgets + 1 WHERE id = 1")
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
    return cursor.rowcount


def centre(connection: sqlite3.Connection, workspace: str) -> Centre:
    """The workspace's centre of meaning (an empty one before its first turn)."""
    raw = connection.execute("SELECT turns, total FROM pattern_centres WHERE workspace = ?",
                             (workspace,)).fetchone()
    return Centre() if raw is None else Centre.from_bytes(int(raw[0]), bytes(raw[1]))


def save_centre(connection: sqlite3.Connection, workspace: str, centre: Centre) -> None:
    """Write the workspace's centre as it is (:func:`count_in_centre` counts a turn in)."""
    connection.execute(
        "INSERT OR REPLACE INTO pattern_centres (workspace, turns, total) VALUES (?, ?, ?)",
        (workspace, centre.turns, centre.to_bytes()))


def count_in_centre(connection: sqlite3.Connection, workspace: str,
                    mean: Sequence[float]) -> Centre:
    """Count one turn's meaning into the workspace's centre as the database holds it, in one
    transaction (another daemon on the data folder counts into the same centre: each adding
    to the copy it held in memory, the last to save dropped the other's turns); returns the
    centre now, unchanged once settled."""
    with writing(connection):
        held = centre(connection, workspace)
        counted = held.counting(mean)
        if counted is not held:
            save_centre(connection, workspace, counted)
    return counted


def forgets(connection: sqlite3.Connection) -> int:
    """How many times rows were forgotten, by any process: a daemon that sees the number
    change drops what it holds in memory (``switchman patterns forget`` runs apart from it)."""
    row = connection.execute("SELECT forgets FROM pattern_forgets WHERE id = 1").fetchone()
    return int(row[0]) if row is not None else 0


def _row(raw: sqlite3.Row) -> PatternRow:
    action = raw["next_action"]
    evidence = Evidence(status=raw["status"], tool_errors=raw["tool_errors"],
                        next_action=None if action is None else NextAction(action),
                        feedback=raw["feedback"], delegations=raw["delegations"],
                        delegations_failed=raw["delegations_failed"])
    return PatternRow(
        id=raw["id"], workspace=raw["workspace"], turn_id=raw["turn_id"],
        session_id=raw["session_id"], planner_turn_id=raw["planner_turn_id"],
        is_worker=bool(raw["is_worker"]), model=raw["model"], recorded_at=raw["recorded_at"],
        cost_usd=raw["cost_usd"], samples=raw["samples"], message_hash=raw["message_hash"],
        codes=widened(raw["fingerprint"]), scale=raw["scale"], evidence=evidence,
        success=raw["success"])
