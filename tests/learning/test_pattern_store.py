"""The durable pattern store: recording, late scores, recommending, retention, management."""

from __future__ import annotations

import re
import sqlite3
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import msgspec
import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.config.policy import PatternSettings
from switchman.engine.learning import database
from switchman.engine.learning.evaluator import NextAction
from switchman.engine.learning.fingerprint import Vector, fingerprint
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.patterns import (
    OnlyUnknownModels,
    PatternRecommendation,
    PatternsLoading,
    TooFewSamples,
)
from switchman.engine.routing.context import TurnContext

WS = "/work/project"
SETTINGS = PatternSettings(cost_weight=0.05, min_confidence=0.05, min_sample_size=2, neighbors=6)


def open_store(path: Path | str = ":memory:", **options: int) -> LearnedPatternStore:
    return LearnedPatternStore(database.connect(path), ManualClock(), background=False,
                               **options)  # type: ignore[arg-type]


def record(store: LearnedPatternStore, turn: str, message: str, model: str, *,
           status: str = "completed", session: str | None = None, cost: float = 0.01,
           workspace: str = WS) -> None:
    store.record(TurnRecord(context=TurnContext(message=message, workspace_path=workspace),
                            turn_id=turn, session_id=session or f"s-{turn}", model=model,
                            status=status, cost_usd=cost))


def suggest(store: LearnedPatternStore, ctx: TurnContext, settings: PatternSettings = SETTINGS,
            known: set[str] | None = None) -> PatternRecommendation | None:
    """The store's recommendation (these stores are small: read at once, never loading; and
    large enough for their settings), scoring only the models in ``known`` if given."""
    rec = store.recommend(ctx, settings, known)
    assert not isinstance(rec, PatternsLoading | TooFewSamples | OnlyUnknownModels)
    return rec


def teach(store: LearnedPatternStore) -> None:
    """SQL questions go well on 'deep' and badly on 'fast'; docs questions go well on 'fast'."""
    for i in range(4):
        record(store, f"sql-deep-{i}", f"optimise this SQL join query number {i}", "deep",
               cost=0.1)
        record(store, f"sql-fast-{i}", f"optimise the SQL join query {i} please", "fast")
        store.feedback(f"sql-fast-{i}", -1)
        record(store, f"doc-fast-{i}", f"write the README docs section {i}", "fast")
        store.feedback(f"doc-fast-{i}", 1)


def test_recommends_from_similar_turns_with_spec_scoring() -> None:
    store = open_store()
    teach(store)
    sql = suggest(store, TurnContext(message="optimise my SQL join query", workspace_path=WS))
    docs = suggest(store, TurnContext(message="write README docs", workspace_path=WS))
    assert sql is not None and sql.model == "deep"
    # deep: success 0.7, cost efficiency 0 → 0.95 * 0.7; fast: 0 success, efficiency 1 → 0.05
    assert sql.score == pytest.approx(0.665)
    assert [o.model for o in sql.alternatives] == ["fast"]
    assert sql.alternatives[0].score == pytest.approx(0.05)
    assert docs is not None and docs.model == "fast"


def test_a_store_below_min_sample_size_recommends_nothing_without_fingerprinting() -> None:
    fingerprinted: list[str] = []

    def counted(ctx: TurnContext) -> Vector:
        fingerprinted.append(ctx.message)
        return fingerprint(ctx)

    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False,
                                fingerprinter=counted)
    settings = PatternSettings(min_sample_size=3)
    record(store, "t1", "optimise this SQL join", "deep")
    record(store, "t2", "optimise that SQL join", "deep")
    turn = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    assert store.recommend(turn, settings) == TooFewSamples(2, 3)
    assert fingerprinted == ["optimise this SQL join", "optimise that SQL join"]
    # the turn is fingerprinted when it is recorded, and then counts
    store.record(TurnRecord(context=turn, turn_id="t3", session_id="s-t3", model="deep",
                            status="completed"))
    assert fingerprinted[-1] == "optimise my SQL join query"
    assert [n.model for n in store.neighbours(turn, 1)] == ["deep"]
    rec = store.recommend(TurnContext(message="optimise a SQL join", workspace_path=WS),
                          settings)
    assert isinstance(rec, PatternRecommendation) and rec.sample_size == 3
    assert fingerprinted[-1] == "optimise a SQL join"


def test_per_model_neighbourhood_hears_the_rarely_chosen_model() -> None:
    """The default answers most turns; a dearer model that did better on two similar
    turns is outnumbered among the K nearest, but not among the K nearest of each model."""
    store = open_store()
    for i in range(8):
        record(store, f"weak-{i}", f"prove the lemma about primes {i}", "weak")
        store.feedback(f"weak-{i}", -1 if i % 2 else 1)
    for i in range(2):
        record(store, f"strong-{i}", f"prove this lemma about prime gaps {i} in detail",
               "strong", cost=0.5)
        store.feedback(f"strong-{i}", 1)
    ctx = TurnContext(message="prove the lemma about primes 9", workspace_path=WS)
    nearest = suggest(store, ctx)
    assert nearest is not None and nearest.model == "weak"  # six weak turns, no strong one
    settings = msgspec.structs.replace(SETTINGS, neighborhood="per_model", neighbors=3)
    per_model = suggest(store, ctx, settings)
    assert per_model is not None and per_model.model == "strong"
    assert per_model.sample_size == 2
    assert [o.model for o in per_model.alternatives] == ["weak"]
    assert per_model.alternatives[0].sample_size == 3
    found = store.neighbours(ctx, 3, settings)
    assert sorted(n.model for n in found) == ["strong", "strong", "weak", "weak", "weak"]
    assert all(0 < n.similarity <= 1 for n in found)


def test_other_workspaces_are_not_neighbours() -> None:
    store = open_store()
    teach(store)
    elsewhere = TurnContext(message="optimise my SQL join query", workspace_path="/other")
    assert store.recommend(elsewhere, SETTINGS) is None


def test_rows_survive_reopening_and_keep_no_message_text(tmp_path: Path) -> None:
    path = tmp_path / "patterns.db"
    store = open_store(path)
    teach(store)
    store.feedback("doc-fast-0", -1)
    store.connection.close()
    reopened = open_store(path)
    rec = suggest(reopened, TurnContext(message="optimise my SQL join", workspace_path=WS))
    assert rec is not None and rec.model == "deep"
    row = database.by_turn(reopened.connection, "doc-fast-0")
    assert row is not None and row.success == 0.0
    reopened.connection.close()
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir())
    assert b"README" not in raw and b"optimise" not in raw


def test_go_on_twice_is_moving_on_not_asking_again() -> None:
    """"continue" (or "yes") sent after an answer that was itself asked for with
    "continue" answers a new answer: the one before is not counted as re-sent (capped at
    0.1), as a short request sent again is ("fix it"). To another model with ``@alias``
    it still counts against the answer."""
    store = open_store()
    for turn, (text, rerouted) in enumerate((
            ("write the parser", None), ("continue", None), ("Continue.", None),
            ("continue", "deep"), ("yes please", None), ("Yes, please!", None),
            ("fix it", None), ("fix it", None))):
        if turn:
            store.observe_message("s", text, rerouted_to=rerouted)
        record(store, f"t{turn}", text, rerouted or "fast", session="s")
    actions = [row.evidence.next_action for row in (
        database.by_turn(store.connection, f"t{turn}") for turn in range(7)) if row]
    assert actions == [NextAction.MOVED_ON, NextAction.MOVED_ON, NextAction.REROUTED,
                       NextAction.MOVED_ON, NextAction.MOVED_ON, NextAction.MOVED_ON,
                       NextAction.RESENT]


def test_next_message_scores_the_previous_turn() -> None:
    store = open_store()
    record(store, "t1", "explain this stack trace", "fast", session="s")
    store.observe_message("s", "Explain this stack trace!", rerouted_to="deep")
    record(store, "t2", "explain this stack trace", "deep", session="s")
    store.observe_message("s", "thanks, now add a test", rerouted_to=None)
    first = database.by_turn(store.connection, "t1")
    second = database.by_turn(store.connection, "t2")
    assert first is not None and first.evidence.next_action is NextAction.REROUTED
    assert first.success == pytest.approx(0.1)
    assert second is not None and second.evidence.next_action is NextAction.MOVED_ON
    assert second.success == pytest.approx(0.8)


def test_an_override_outranks_moving_on_but_not_the_reverse() -> None:
    store = open_store()
    record(store, "t1", "plan the migration", "fast")
    store.set_next_action("t1", NextAction.MOVED_ON)
    store.set_next_action("t1", NextAction.OVERRIDDEN)
    store.set_next_action("t1", NextAction.DISMISSED)
    row = database.by_turn(store.connection, "t1")
    assert row is not None and row.evidence.next_action is NextAction.OVERRIDDEN


def test_delegations_reach_the_planner_as_success_flags() -> None:
    store = open_store()
    record(store, "planner", "split the refactor", "deep")
    store.delegation_ended("planner", success=True)
    store.delegation_ended("planner", success=False)
    row = database.by_turn(store.connection, "planner")
    assert row is not None and (row.evidence.delegations, row.evidence.delegations_failed) \
        == (2, 1)
    assert row.success == pytest.approx(0.55)


def test_feedback_on_an_unknown_turn_is_reported() -> None:
    assert open_store().feedback("nope", 1) is False


def test_retention_forgets_the_oldest_tenth() -> None:
    store = open_store(max_rows=20)
    for i in range(21):
        record(store, f"t{i}", f"message number {i}", "fast")
    kept = [row.turn_id for row in database.rows(store.connection, WS)]
    assert len(kept) == 19 and kept[0] == "t2"
    assert store.stats()[0].turns == 19


def test_stats_forget_and_export() -> None:
    store = open_store()
    teach(store)
    record(store, "x", "something else", "fast", workspace="/other")
    stats = {s.workspace: s for s in store.stats()}
    assert stats[WS].turns == 12 and stats[WS].by_model["deep"] == (4, 0.7)
    assert (stats[WS].centre_turns, stats["/other"].centre_turns) == (12, 1)
    exported = list(store.export())
    assert len(exported) == 13 and "message_hash" in exported[0]
    assert not any("SQL" in str(value) for row in exported for value in row.values())
    assert store.forget("/other") == 1
    assert store.forget() == 12
    assert store.stats() == []


def test_rows_another_process_forgets_are_not_recommended_from(tmp_path: Path) -> None:
    """`switchman patterns forget` runs beside the daemon: the daemon's store must stop
    recommending from (and explaining with) the rows it had read before they were deleted."""
    path = tmp_path / database.FILE_NAME
    daemon = open_store(path)
    teach(daemon)
    sql = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    assert suggest(daemon, sql) is not None
    cli = open_store(path)
    assert cli.forget(WS) == 12
    assert suggest(daemon, sql) is None  # nothing remembered: no similar past turns
    record(daemon, "after", "optimise the SQL join query again", "deep")
    assert [n.model for n in daemon.neighbours(sql, 10)] == ["deep"]  # read again, with it


@pytest.mark.parametrize("small_rows", [256, 0])
def test_scores_another_daemon_changes_are_followed_at_the_next_decision(
        tmp_path: Path, small_rows: int) -> None:
    """Two editor windows on one workspace (a daemon each, one patterns.db): a 👍/👎 or a
    next action given in one window changes the row's score there, and the other window's
    store, which had read the row before, kept the old score until it restarted."""
    path = tmp_path / database.FILE_NAME
    left, right = open_store(path, small_rows=small_rows), open_store(path,
                                                                      small_rows=small_rows)
    teach(left)
    sql = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    first = suggest(right, sql)
    assert first is not None and first.model == "deep"  # it has read the rows
    for i in range(4):  # the other window changes its mind about them
        left.feedback(f"sql-deep-{i}", -1)
        left.feedback(f"sql-fast-{i}", 1)
    left.set_next_action("doc-fast-0", NextAction.OVERRIDDEN)
    then = suggest(right, sql)
    assert then is not None and then.model == "fast"
    scores = {n.model: n.success for n in right.neighbours(sql, 8)}
    assert scores == {"deep": 0.0, "fast": 1.0}
    docs = TurnContext(message="write the README docs section 0", workspace_path=WS)
    assert right.neighbours(docs, 1)[0].success == 1.0  # feedback decides over the override
    record(right, "mine", "optimise the SQL join query again", "fast")  # its own rows and
    right.feedback("mine", -1)  # scores still count, once each
    assert sorted(n.success for n in right.neighbours(sql, 9)) == [0.0] * 5 + [1.0] * 4


def test_a_file_of_schema_2_gains_the_rescoring_column_when_opened(tmp_path: Path) -> None:
    path = tmp_path / database.FILE_NAME
    old = sqlite3.connect(path)
    old.executescript(database._SCHEMA.replace(",\n    rescored INTEGER NOT NULL DEFAULT 0", ""))
    old.execute("PRAGMA user_version=2")
    old.close()
    daemon, other = open_store(path), open_store(path)  # the second finds the column added
    assert database.connect(path).execute("PRAGMA user_version").fetchone()[0] == 3
    record(daemon, "t1", "optimise this SQL join query", "deep")
    sql = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    assert [n.success for n in other.neighbours(sql, 1)] == [0.7]
    daemon.feedback("t1", 1)
    assert [n.success for n in other.neighbours(sql, 1)] == [1.0]


def test_a_file_set_up_already_opens_while_another_daemon_holds_its_write_lock(
        tmp_path: Path) -> None:
    """The daemon opens patterns.db on the event loop as it starts. Opening ran the schema
    script, whose inserts and version pragma take the write lock even when there is nothing to
    do: while another daemon committed (a `switchman patterns forget` of a big store, say) the
    start waited for the busy timeout (5 s for the loop's connection, 60 s for the writer's),
    then failed with "database is locked". A file of this schema is opened without writing;
    with no wait allowed at all it still opens and reads."""
    path = tmp_path / database.FILE_NAME
    database.connect(path).close()
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, as another daemon's commit holds it
    try:
        opened = database.connect(path, busy_seconds=0)  # waiting would fail at once
        assert database.forgets(opened) == 0
        store = LearnedPatternStore(opened, ManualClock(), writer=database.connect(
            path, busy_seconds=0))
        assert store.feedback_of_session("s") == {}
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()


PREVIOUS_RELEASE_SCHEMA = re.sub(  # ae9ef93's (schema 2), run by it at every start
    r"CREATE TABLE IF NOT EXISTS pattern_rescores.*?VALUES \(1, 0\);\n", "",
    database._SCHEMA.replace(",\n    rescored INTEGER NOT NULL DEFAULT 0", ""), flags=re.DOTALL)
PREVIOUS_RELEASE_UPDATE = (  # ae9ef93's update_evidence: it knows nothing of `rescored`
    "UPDATE pattern_turns SET status = ?, tool_errors = ?, next_action = ?, feedback = ?,"
    " delegations = ?, delegations_failed = ?, success = ? WHERE turn_id = ?")


def test_the_previous_release_still_opens_and_writes_a_file_of_schema_3(tmp_path: Path) -> None:
    """A user who goes back a release after running this one (or runs both, in two editor
    windows): the previous release's schema script, inserts, re-scorings and reads work on a
    file of schema 3, and this release opens the file afterwards with nothing lost."""
    path = tmp_path / database.FILE_NAME
    daemon = open_store(path)
    record(daemon, "t1", "optimise this SQL join query", "deep")
    daemon.feedback("t1", 1)  # numbered: rescored > 0
    previous = sqlite3.connect(path, isolation_level=None)
    previous.row_factory = sqlite3.Row
    previous.executescript(PREVIOUS_RELEASE_SCHEMA)
    previous.execute("PRAGMA user_version=2")
    row = database.by_turn(daemon.connection, "t1")
    assert row is not None
    database.insert(previous, msgspec.structs.replace(row, turn_id="t2", session_id="s-t2"))
    previous.execute(PREVIOUS_RELEASE_UPDATE, ("completed", 0, None, -1, 0, 0, 0.0, "t1"))
    read = [dict(r) for r in previous.execute("SELECT * FROM pattern_turns ORDER BY id")]
    assert [(r["turn_id"], r["feedback"]) for r in read] == [("t1", -1), ("t2", 1)]
    previous.close()
    again = open_store(path)
    sql = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    assert again.connection.execute("PRAGMA user_version").fetchone()[0] == 3
    assert sorted(n.success for n in again.neighbours(sql, 5)) == [0.0, 1.0]
    assert again.feedback_of_session("s-t2") == {"t2": 1}
    again.feedback("t2", -1)  # numbered again, for the daemons of this release
    assert [n.success for n in open_store(path).neighbours(sql, 5)] == [0.0, 0.0]
    assert database.rescored(again.connection, WS, 1, database.rescores(again.connection)) \
        == [("t2", 0.0)]


def test_two_daemons_changing_one_row_at_once_both_count(tmp_path: Path) -> None:
    """Two editor windows on one data folder (a daemon each, one patterns.db) each learn a
    worker's success flag for the same planner turn at the same moment: each read the row,
    then waited for the write lock and wrote the whole evidence back, so the second write
    dropped the first's delegation. The read and the write are now one write transaction."""
    path = tmp_path / database.FILE_NAME
    left, right = open_store(path), open_store(path)
    record(left, "planner", "split the refactor", "deep")
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")  # the write lock, as a third connection's commit holds it
    waiting = {id(left): threading.Event(), id(right): threading.Event()}
    for store in (left, right):
        def seen(statement: str, store: LearnedPatternStore = store) -> None:
            if statement.startswith("BEGIN IMMEDIATE"):  # from here on it waits for the lock
                waiting[id(store)].set()
        store.writer.set_trace_callback(seen)
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            changes = [pool.submit(left.delegation_ended, "planner", True),
                       pool.submit(right.delegation_ended, "planner", False)]
            assert all(event.wait(10) for event in waiting.values())
            blocker.execute("ROLLBACK")
            for change in changes:
                change.result()
    finally:
        blocker.close()
    row = database.by_turn(database.connect(path), "planner")
    assert row is not None
    assert (row.evidence.delegations, row.evidence.delegations_failed) == (2, 1)


def test_a_model_the_registry_no_longer_knows_is_not_scored_but_its_rows_are_kept() -> None:
    """'deep' was removed from models.yaml: slot 4 stops suggesting it (it would be rejected
    as unknown_model, turn after turn) and 'fast' decides among the neighbours; when 'deep'
    comes back, so does what was learned about it."""
    store = open_store()
    teach(store)
    sql = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    without = suggest(store, sql, known={"fast", "other"})
    assert without is not None and without.model == "fast"
    assert without.alternatives == []  # "why this model?" does not list 'deep'
    assert without.sample_size == 3  # of the 6 nearest, the 3 known
    docs = TurnContext(message="write README docs", workspace_path=WS)
    assert store.recommend(docs, SETTINGS, {"other"}) == OnlyUnknownModels(["fast"], 6)
    per_model = msgspec.structs.replace(SETTINGS, neighborhood="per_model", neighbors=3)
    again = suggest(store, sql, per_model, {"fast"})
    assert again is not None and again.model == "fast" and again.alternatives == []
    back = suggest(store, sql, known={"fast", "deep"})
    assert back is not None and back.model == "deep"
    assert [o.model for o in back.alternatives] == ["fast"]

