"""Several daemons on one database: leases, the turn lock in the database, orphaned turns."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from switchman.engine.errors import TurnInProgress
from switchman.engine.ids import new_id
from switchman.engine.messages import ZERO_USD, Message, TextBlock, Usage
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.sessions.records import TurnInfo
from switchman.engine.store.database import SCHEMA_VERSION, checkpoint, connect
from switchman.engine.store.ownership import DaemonLease
from switchman.engine.store.repository import SessionStore

NOW = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def daemon(data: Path) -> tuple[SessionStore, DaemonLease]:
    """One daemon's view of the shared database: its own connection and lease."""
    lease = DaemonLease(data)
    return SessionStore(connect(data / "switchman.db"), lease), lease


def start_turn(store: SessionStore, session_id: str) -> TurnInfo:
    turn_id = new_id()
    turn = TurnInfo(id=turn_id, session_id=session_id, index=0, status="running",
                    model="anthropic:claude-haiku-4-5", started_at=NOW)
    user = Message(id=new_id(), session_id=session_id, turn_id=turn_id, role="user",
                   content=[TextBlock("hi")], created_at=NOW)
    decision = RouteDecided(timestamp=NOW, session_id=session_id, turn_id=turn_id, chain=[],
                            winner_index=None, chosen_model=None, elapsed_ms=0.0)
    store.begin_turn(turn, user, decision, workspace="file:///w", title="hi")
    return turn


def statuses(store: SessionStore, session_id: str) -> list[tuple[int, str]]:
    return [(t.index, t.status) for t in store.turns(session_id)]


@pytest.fixture
def session(tmp_path: Path) -> str:
    store, _ = daemon(tmp_path)
    store.create_session("s1", "file:///w", NOW)
    return "s1"


def test_a_live_daemons_running_turn_locks_the_session_for_the_others(
        tmp_path: Path, session: str) -> None:
    first, _ = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    running = start_turn(first, session)
    with pytest.raises(TurnInProgress) as caught:
        start_turn(second, session)
    assert caught.value.turn_id == running.id
    assert statuses(second, session) == [(1, "running")]  # nothing half-written
    # The other window's turn cannot be stopped from here: the message says where it runs
    # (it said "wait for it to finish or cancel it", and this window has no Stop for it).
    assert str(caught.value) == ("A turn started in another window (or editor) is still "
                                 "running in this session; wait for it to finish, or stop it "
                                 "there.")


def test_a_dead_daemons_turn_is_interrupted_and_the_next_turn_numbered_after_it(
        tmp_path: Path, session: str) -> None:
    first, first_lease = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    start_turn(first, session)
    first_lease.release()  # what the operating system does when the process dies
    turn = start_turn(second, session)
    assert turn.index == 2
    assert statuses(second, session) == [(1, "interrupted"), (2, "running")]


def test_starting_a_daemon_interrupts_only_dead_daemons_turns(tmp_path: Path) -> None:
    alive, _ = daemon(tmp_path)
    dead, dead_lease = daemon(tmp_path)
    for store, session in ((alive, "a"), (dead, "d")):
        store.create_session(session, "file:///w", NOW)
        start_turn(store, session)
    dead_lease.release()
    newcomer, _ = daemon(tmp_path)
    assert newcomer.interrupt_orphans(NOW) == 1
    assert statuses(newcomer, "a") == [(1, "running")]
    assert statuses(newcomer, "d") == [(1, "interrupted")]
    assert sorted(p.stem for p in (tmp_path / "daemons").glob("*.lock")) == sorted(
        [alive.owners.id, newcomer.owners.id])  # the dead daemon's lease file is tidied away


def test_the_database_allows_one_running_turn_per_session(tmp_path: Path,
                                                          session: str) -> None:
    store, _ = daemon(tmp_path)
    start_turn(store, session)
    with pytest.raises(sqlite3.IntegrityError):
        store.db.execute("INSERT INTO turns (id, session_id, idx, status, started_at) "
                         "VALUES ('x', ?, 9, 'running', '')", (session,))


def test_upgrading_a_database_ends_turns_left_running_before_owners(tmp_path: Path) -> None:
    path = tmp_path / "switchman.db"
    old = sqlite3.connect(path)
    from switchman.engine.store.database import _MIGRATIONS  # noqa: PLC0415 - the v1 schema

    old.executescript(_MIGRATIONS[1] + "PRAGMA user_version=1;")
    old.executescript("INSERT INTO sessions (id, workspace, created_at, updated_at) VALUES "
                      "('s', 'w', '', ''); INSERT INTO turns (id, session_id, idx, status, "
                      "started_at) VALUES ('t1', 's', 1, 'running', ''), "
                      "('t2', 's', 2, 'running', '');")
    old.close()
    upgraded = connect(path)
    rows = upgraded.execute("SELECT status FROM turns ORDER BY idx").fetchall()
    assert [r[0] for r in rows] == ["interrupted", "interrupted"]
    assert upgraded.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_spend_today_counts_every_daemon_and_reads_only_new_ledger_rows(tmp_path: Path) -> None:
    """Routing asks for today's spend on every turn: the total is kept, and each answer
    reads only the ledger rows added since (another daemon's included)."""
    first, _ = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    midnight = datetime(2026, 11, 23, tzinfo=UTC)
    first.add_cost(midnight - timedelta(seconds=1), "s", None, "m", Usage(1, 1), Decimal("7"))
    for _ in range(400):
        first.add_cost(NOW, "s", None, "m", Usage(1, 1), Decimal("0.001"))
    assert first.cost_since(midnight) == Decimal("0.4")
    second.add_cost(NOW, "s", None, "m", Usage(1, 1), Decimal("0.25"))
    steps = [0]

    def count() -> int:
        steps[0] += 1
        return 0

    first.db.set_progress_handler(count, 10)
    assert first.cost_since(midnight) == Decimal("0.65")
    first.db.set_progress_handler(None, 10)
    assert steps[0] < 10, steps  # summing the day's 401 rows again takes hundreds
    assert first.cost_since(midnight - timedelta(days=1)) == Decimal("7.65")
    assert first.cost_since(midnight + timedelta(days=1)) == Decimal("0")


def statements(store: SessionStore) -> list[str]:
    """The SQL statements ``store``'s connection runs from now on."""
    seen: list[str] = []
    store.db.set_trace_callback(seen.append)
    return seen


def test_answers_kept_for_turn_starts_follow_every_daemons_writes(tmp_path: Path) -> None:
    """A workspace's current session, a session's sticky model, profile and latest turn, and
    today's spend are asked at every turn's start: they are answered from memory, kept up
    to date by this daemon's own writes, and read again once another daemon has committed
    (``PRAGMA data_version``) or a write of this one's was rolled back."""
    first, _ = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    midnight = datetime(2026, 11, 23, tzinfo=UTC)
    first.create_session("s1", "file:///w", NOW)
    first.set_current_session("file:///w", "s1")
    first.add_cost(NOW, "s1", None, "m", Usage(1, 1), Decimal("0.5"))

    def answers(store: SessionStore) -> tuple[object, ...]:
        return (store.current_session("file:///w"), store.choices("s1"),
                store.cost_since(midnight))

    assert answers(first) == ("s1", (0, None, None), Decimal("0.5"))
    ran = statements(first)
    assert answers(first) == ("s1", (0, None, None), Decimal("0.5"))
    assert ran and all(q == "PRAGMA data_version" for q in ran)

    first.set_sticky("s1", "anthropic:claude-haiku-4-5")
    first.set_profile("s1", "reviewer")
    start_turn(first, "s1")
    first.add_cost(NOW, "s1", None, "m", Usage(1, 1), Decimal("0.25"))
    ran.clear()
    assert answers(first) == ("s1", (1, "anthropic:claude-haiku-4-5", "reviewer"),
                              Decimal("0.75"))
    assert all(q == "PRAGMA data_version" for q in ran)  # its own writes: nothing to read

    second.create_session("s2", "file:///w", NOW)
    second.set_current_session("file:///w", "s2")
    assert answers(first)[0] == "s2"
    second.set_sticky("s1", None)
    second.add_cost(NOW, "s2", None, "m", Usage(1, 1), Decimal("2"))
    assert answers(first) == ("s2", (1, None, "reviewer"), Decimal("2.75"))
    first.add_cost(NOW, "s1", None, "m", Usage(1, 1), Decimal("1"))
    assert first.cost_since(midnight) == Decimal("3.75")
    second.add_cost(NOW, "s2", None, "m", Usage(1, 1), Decimal("1"))  # between two of first's
    first.add_cost(NOW, "s1", None, "m", Usage(1, 1), Decimal("1"))
    assert first.cost_since(midnight) == Decimal("5.75") == second.cost_since(midnight)

    def rolled_back() -> None:
        with first.db:
            first.db.execute("BEGIN")
            first.set_current_session("file:///w", "s1")
            first.add_cost(NOW, "s1", None, "m", Usage(1, 1), Decimal("100"))
            raise RuntimeError

    with pytest.raises(RuntimeError):  # a write rolled back is not remembered
        rolled_back()
    assert answers(first) == ("s2", (1, None, "reviewer"), Decimal("5.75"))


async def test_on_the_event_loop_another_daemons_writes_are_seen_from_the_next_pass(
        tmp_path: Path) -> None:
    """Within one pass of the event loop (one turn's start) ``data_version`` is read once."""
    first, _ = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    first.create_session("s1", "file:///w", NOW)
    first.set_current_session("file:///w", "s1")
    await asyncio.sleep(0)
    ran = statements(first)
    assert first.current_session("file:///w") == first.current_session("file:///w") == "s1"
    assert first.choices("s1") == (0, None, None)
    assert ran.count("PRAGMA data_version") == 1
    second.set_current_session("file:///w", "s2")
    await asyncio.sleep(0)
    assert first.current_session("file:///w") == "s2"


def test_the_daemons_commits_leave_checkpoints_to_a_worker_thread(tmp_path: Path) -> None:
    """A commit that takes the write-ahead log past 1,000 pages would copy it into the
    database (with an fsync) on the event loop; the daemon's connection never does."""
    path = tmp_path / "switchman.db"
    connection = connect(path, checkpoint_elsewhere=True)
    connection.execute("CREATE TABLE filler (text TEXT)")
    for _ in range(1500):
        connection.execute("INSERT INTO filler VALUES (?)", ("x" * 3000,))
    log, copied = checkpoint(path)  # as the daemon's background task does
    assert log > 1500 and copied == log  # all of it was still in the log until now
    assert checkpoint(path) == (log, log)  # nothing new since
    connection.close()


def test_loading_a_session_reads_its_latest_turn_with_it(tmp_path: Path) -> None:
    """A session loaded into memory needs its record and the index of its latest turn,
    whichever daemon ran it: both come from one query."""
    first, _ = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    first.create_session("s1", "file:///w", NOW)
    assert first.session_to_load("s1") == (first.session("s1"), 0)
    for store in (first, second):  # each daemon numbers its turn after the last recorded
        turn = start_turn(store, "s1")
        turn.status = "completed"
        store.finish_turn(turn)
    ran = statements(first)
    found = first.session_to_load("s1")
    assert len(ran) == 1
    assert found is not None and found[1] == 2 and found[0].turn_count == 2
    assert first.session_to_load("nobody") is None


def test_the_estimated_part_of_todays_spend_is_kept_with_it(tmp_path: Path) -> None:
    """The status bars show which part of today's spend is estimated (calls cut short) on
    every status: summed with the total, from the same new ledger rows, every daemon's."""
    first, _ = daemon(tmp_path)
    second, _ = daemon(tmp_path)
    midnight = datetime(2026, 11, 23, tzinfo=UTC)
    first.add_cost(midnight - timedelta(seconds=1), "s", None, "m", Usage(1, 1), Decimal("7"),
                   estimated=True)  # yesterday's
    first.add_cost(NOW, "s", None, "m", Usage(1, 1), Decimal("0.5"))
    assert first.cost_since(midnight) == Decimal("0.5")
    assert first.estimated_since(midnight) == ZERO_USD
    first.add_cost(NOW, "s", None, "m", Usage(1, 1), Decimal("0.125"), estimated=True)
    second.add_cost(NOW, "s", None, "m", Usage(1, 1), Decimal("0.25"), estimated=True)
    assert first.estimated_since(midnight) == Decimal("0.375")
    assert first.cost_since(midnight) == Decimal("0.875")
    first.add_cost(NOW, "s", None, "m", Usage(1, 1), Decimal("0.5"), estimated=True)
    assert first.estimated_since(midnight) == Decimal("0.875")  # its own row, added as written
    assert first.estimated_since(midnight - timedelta(days=1)) == Decimal("7.875")
