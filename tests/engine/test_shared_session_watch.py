"""What another daemon changes in a session this daemon's editor shows, and nothing else."""

from __future__ import annotations

from pathlib import Path

from switchman.engine.ids import new_id
from switchman.engine.messages import Message, TextBlock
from switchman.engine.sessions.watch import SharedSessionWatch, session_poll_interval
from tests.engine.test_turn_ownership import NOW, daemon, start_turn

WORKSPACE = "file:///w"


def test_only_another_connections_changes_to_an_open_workspaces_session_are_reported(
        tmp_path: Path) -> None:
    mine, _ = daemon(tmp_path)
    other, _ = daemon(tmp_path)
    mine.create_session("s1", WORKSPACE, NOW)
    mine.set_current_session(WORKSPACE, "s1")
    mine.create_session("elsewhere", "file:///other", NOW)
    watch = SharedSessionWatch(mine, lambda: [WORKSPACE])
    watch.remember(WORKSPACE)  # the editor opened it
    assert watch.changed() == []

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


def test_the_poll_interval_comes_from_the_environment() -> None:
    assert session_poll_interval({}) == 1.0
    assert session_poll_interval({"SWITCHMAN_SESSION_POLL_SECONDS": "0.05"}) == 0.05
    assert session_poll_interval({"SWITCHMAN_SESSION_POLL_SECONDS": "soon"}) == 1.0
    assert session_poll_interval({"SWITCHMAN_SESSION_POLL_SECONDS": "0"}) == 1.0
