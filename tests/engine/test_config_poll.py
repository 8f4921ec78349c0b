"""ConfigPoll: saved changes to configuration files are noticed by their signatures."""

from __future__ import annotations

from pathlib import Path

import pytest

from switchman.engine.config.skill_names import blocks_skills
from switchman.engine.config.watch import ConfigPoll, poll_interval, signatures


def test_a_change_creation_or_deletion_calls_back_once_each(tmp_path: Path) -> None:
    routing, models = tmp_path / "routing.yaml", tmp_path / "models.yaml"
    routing.write_text("rules: []\n", "utf-8")
    calls: list[int] = []
    poll = ConfigPoll(lambda: [routing, models], lambda: calls.append(1))
    assert not poll.observe(signatures([routing, models]))  # the first look is the baseline
    assert not poll.observe(signatures([routing, models]))
    routing.write_text("rules:\n  - use: opus\n", "utf-8")
    assert poll.observe(signatures([routing, models]))
    models.write_text("models: {}\n", "utf-8")
    assert poll.observe(signatures([routing, models]))
    routing.unlink()
    assert poll.observe(signatures([routing, models]))
    assert len(calls) == 3


def test_a_newly_watched_file_is_not_a_change(tmp_path: Path) -> None:
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    second.write_text("x: 1\n", "utf-8")
    poll = ConfigPoll(lambda: [first], lambda: pytest.fail("no change happened"))
    poll.observe(signatures([first]))
    assert not poll.observe(signatures([first, second]))


def test_the_skills_of_a_blocks_folders_below_it_are_polled_new_ones_counting(
        tmp_path: Path) -> None:
    """The daemon's poll of a ``workspaces:`` block's skills (no editor watches them): a skill
    added in a folder below the block's changes its look; a block first seen counts as a
    change too (its skills may have changed before routing.yaml was read)."""
    block, skills = tmp_path / "code", tmp_path / "code" / "billing" / ".switchman" / "skills"
    skills.mkdir(parents=True)
    calls: list[int] = []
    poll = ConfigPoll(lambda: [block], lambda: calls.append(1), look=blocks_skills,
                      new_is_change=True)
    assert not poll.observe(blocks_skills([]))  # no block yet: nothing to tell
    assert poll.observe(blocks_skills([block]))
    assert not poll.observe(blocks_skills([block]))
    (skills / "ledger.md").write_text("---\nname: ledger\n---\n", "utf-8")
    assert poll.observe(blocks_skills([block]))
    assert len(calls) == 2


def test_unreadable_paths_have_no_signature(tmp_path: Path) -> None:
    assert signatures([tmp_path / "missing.yaml", Path("bad\0name")]) == {
        tmp_path / "missing.yaml": None, Path("bad\0name"): None}


@pytest.mark.parametrize(("value", "seconds"), [("0.25", 0.25), ("", 1.0), ("x", 1.0),
                                                ("-1", 1.0)])
def test_the_poll_interval_comes_from_the_environment(value: str, seconds: float) -> None:
    assert poll_interval({"SWITCHMAN_CONFIG_POLL_SECONDS": value}) == seconds
