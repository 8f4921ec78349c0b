"""What another daemon changes in a session this daemon's editor shows, and nothing else."""

from __future__ import annotations

from pathlib import Path

from switchman.engine.clock import ManualClock
from switchman.engine.ids import new_id
from switchman.engine.learning import database as learning_db
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.messages import Message, TextBlock
from switchman.engine.routing.context import TurnContext
from switchman.engine.sessions.watch import Ratings, SharedSessionWatch, session_poll_interval
from switchman.engine.store.repository import SessionStore
from tests.engine.test_turn_ownership import NOW, daemon, start_turn

WORKSPACE = "file:///w"


def watched(tmp_path: Path) -> tuple[SessionStore, SessionStore, SharedSessionWatch]:
    """This daemon's store, another daemon's on the same database, and this daemon's watch
    of ``WORKSPACE`` (current session ``s1``; ``elsewhere`` is another folder's session)."""
    mine, _ = daemon(tmp_path)
    other, _ = daemon(tmp_path)
    mine.create_session("s1", WORKSPACE, NOW)
    mine.set_current_session(WORKSPACE, "s1")
    mine.create_session("elsewhere", "file:///other", NOW)
    watch = SharedSessionWatch(mine, lambda: [WORKSPACE])
    watch.remember(WORKSPACE)  # the editor opened it
    assert watch.changed() == []
    return mine, other, watch


def test_only_another_connections_changes_to_an_open_workspaces_session_are_reported(
        tmp_path: Path) -> None:
    mine, other, watch = watched(tmp_path)

    # This daemon's own turn and model: its editor was told already.
    start_turn(mine, "s1")
    mine.set_sticky("s1", "anthropic:claude-haiku-4-5")
    watch.remember(WORKSPACE)
    assert watch.changed() == []

    # Another daemon's turn in the session, then its sticky model and profile.
    other.add_message(Message(id=new_id(), session_id="elsewhere", turn_id=None, role="user",
                              content=[TextBlock("not a session this editor shows")],
                              created_at=NOW))
    assert watch.changed() == []
    other.set_sticky("s1", "anthropic:claude-opus-4-7")
    assert watch.changed() == [(WORKSPACE, "s1")]
    assert watch.changed() == []  # reported once
    other.add_message(Message(id=new_id(), session_id="s1", turn_id=None, role="user",
                              content=[TextBlock("/delegate from the other window")],
                              created_at=NOW))
    assert watch.changed() == [(WORKSPACE, "s1")]
    other.set_profile("s1", "reviewer")
    assert watch.changed() == [(WORKSPACE, "s1")]

    # A change by this daemon noted while another's is unreported does not hide it.
    other.set_sticky("s1", None)
    mine.set_profile("s1", None)
    watch.remember(WORKSPACE)
    assert watch.changed() == [(WORKSPACE, "s1")]

    # Another window starts a new current session.
    other.create_session("s2", WORKSPACE, NOW)
    other.set_current_session(WORKSPACE, "s2")
    assert watch.changed() == [(WORKSPACE, "s2")]


def said(store: SessionStore, session_id: str, text: str) -> None:
    store.add_message(Message(id=new_id(), session_id=session_id, turn_id=None,
                              role="assistant", content=[TextBlock(text)], created_at=NOW))


def test_this_daemons_own_writes_are_not_reported_when_another_daemon_writes_elsewhere(
        tmp_path: Path) -> None:
    """A turn's answer is saved as it streams, with no status (and so no ``remember``) after
    each save: another window's writes to another session must not make it look like that
    window's change to the session this editor shows (sessionChanged back to its own window)."""
    mine, other, watch = watched(tmp_path)
    start_turn(mine, "s1")
    said(mine, "s1", "the first words of this window's answer")
    said(other, "elsewhere", "another window, another folder")
    assert watch.changed() == []
    mine.set_sticky("s1", "anthropic:claude-haiku-4-5")
    said(other, "elsewhere", "more of it")
    assert watch.changed() == []

    # Another daemon's change made before one of this daemon's own is still reported, once.
    other.set_sticky("s1", "anthropic:claude-opus-4-7")
    said(mine, "s1", "more of this window's answer")
    said(other, "elsewhere", "and more")
    assert watch.changed() == [(WORKSPACE, "s1")]
    assert watch.changed() == []


def test_a_dead_daemons_turn_this_daemon_ends_is_reported_to_its_editor(tmp_path: Path) -> None:
    """The other window's turn showed here as running; its daemon was killed, and this daemon
    marked the turn interrupted (its sweep every 30 s, or its own next turn in the session).
    That is no change this editor made: it is told, or its chat shows "still running" for good
    (no other daemon commits to make the watch look again)."""
    mine, _ = daemon(tmp_path)
    mine.create_session("s1", WORKSPACE, NOW)
    mine.set_current_session(WORKSPACE, "s1")
    watch = SharedSessionWatch(mine, lambda: [WORKSPACE])
    watch.remember(WORKSPACE)
    for ends_it in ("the sweep", "this daemon's next turn"):
        other, other_lease = daemon(tmp_path)
        start_turn(other, "s1")
        assert watch.changed() == [(WORKSPACE, "s1")]  # drawn here, running
        watch.remember(WORKSPACE)
        other_lease.release()  # kill -9
        if ends_it == "the sweep":
            assert mine.interrupt_orphans(NOW) == 1
        else:
            start_turn(mine, "s1")
            watch.remember(WORKSPACE)  # the status this daemon sends for its own turn
        assert watch.changed() == [(WORKSPACE, "s1")], ends_it
        assert watch.changed() == []


def test_the_poll_interval_comes_from_the_environment() -> None:
    assert session_poll_interval({}) == 1.0
    assert session_poll_interval({"SWITCHMAN_SESSION_POLL_SECONDS": "0.05"}) == 0.05
    assert session_poll_interval({"SWITCHMAN_SESSION_POLL_SECONDS": "soon"}) == 1.0
    assert session_poll_interval({"SWITCHMAN_SESSION_POLL_SECONDS": "0"}) == 1.0


def test_a_rating_another_daemon_gives_is_reported_and_this_daemons_own_is_not(
        tmp_path: Path) -> None:
    """The ratings live in the pattern store, not in the sessions database: a 👍/👎 given,
    changed or taken back in another window made no session change, and this editor showed
    the old rating until it was redrawn for something else. Its own ratings it shows already."""
    mine, _ = daemon(tmp_path)
    mine.create_session("s1", WORKSPACE, NOW)
    mine.set_current_session(WORKSPACE, "s1")
    path = tmp_path / learning_db.FILE_NAME
    my_patterns, other_patterns = (LearnedPatternStore(learning_db.connect(path), ManualClock(),
                                                       background=False) for _ in range(2))
    for turn in ("t1", "t2"):
        my_patterns.record(TurnRecord(context=TurnContext(message="hi", workspace_path="/w"),
                                      turn_id=turn, session_id="s1", model="m",
                                      status="completed"))
    watch = SharedSessionWatch(mine, lambda: [WORKSPACE],
                               Ratings(my_patterns.rescore_count, my_patterns.feedback_of_session))
    watch.remember(WORKSPACE)
    assert watch.changed() == []

    for value in (1, -1, 0):  # given, changed, taken back in the other window
        other_patterns.feedback("t1", value)
        assert watch.changed() == [(WORKSPACE, "s1")], value
        assert watch.changed() == []

    # This daemon's own, while it is written and after: its editor shows it already.
    watch.rating("t2")
    assert watch.changed() == []
    my_patterns.feedback("t2", 1)
    assert watch.changed() == []
    watch.rated("t2", "s1", 1)
    assert watch.changed() == []
    # ... unless the other window rated the same turn meanwhile, after it.
    watch.rating("t2")
    my_patterns.feedback("t2", -1)
    other_patterns.feedback("t2", 1)
    watch.rated("t2", "s1", -1)
    assert watch.changed() == [(WORKSPACE, "s1")]
