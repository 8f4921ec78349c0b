"""Views of the pattern store for the CLI and the ``/patterns`` command: plain text, and the
JSON of ``switchman patterns stats --json``."""

from __future__ import annotations

from switchman.engine.learning.database import recorded_time
from switchman.engine.learning.meaning import CENTRE_TURNS
from switchman.engine.learning.store import WorkspaceStats, protocol_time
from switchman.engine.wording import counted


def format_stats(stats: list[WorkspaceStats], data_file: str) -> str:
    """Turns remembered per workspace and model, with their mean success."""
    if not stats:
        return f"No turns remembered yet ({data_file})."
    lines = [f"Pattern store: {data_file}"]
    for space in stats:
        lines.append(f"{space.workspace or '(no workspace)'}: {counted(space.turns, 'turn')}, "
                     f"{_when(space.oldest)} … {_when(space.newest)}")
        for model, (turns, success) in sorted(space.by_model.items(),
                                              key=lambda item: -item[1][0]):
            lines.append(f"  {model}: {counted(turns, 'turn')}, mean success {success:.2f}")
        lines.append(_centre_line(space.centre_turns))
    return "\n".join(lines)


def stats_data(stats: list[WorkspaceStats]) -> list[dict[str, object]]:
    """The statistics as ``patterns stats --json`` prints them: times as the protocol writes
    them (``…T14:23:11.532Z``, as ``patterns export`` does), each model's figures named."""
    return [{"workspace": space.workspace, "turns": space.turns,
             "by_model": {model: {"turns": turns, "mean_success": success}
                          for model, (turns, success) in space.by_model.items()},
             "oldest": _time(space.oldest), "newest": _time(space.newest),
             "centre_turns": space.centre_turns} for space in stats]


def _time(stored: str | None) -> str | None:
    return None if stored is None else protocol_time(stored)


def _when(stored: str | None) -> str:
    """A stored time as Switchman prints times: ``2026-11-24T14:12:17Z``; what cannot be
    read, as stored."""
    moment = recorded_time(stored)
    return str(stored) if moment is None else moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _centre_line(turns: int) -> str:
    """How far the workspace's centre of meaning has come: what a request's topic is told
    against (what is usual in this workspace), set from its first turns."""
    if turns >= CENTRE_TURNS:
        return f"  topic matching: set from this workspace's first {CENTRE_TURNS} turns"
    if turns == 0:
        return "  topic matching: starts after this workspace's first turn"
    return (f"  topic matching: learning what is usual here, {turns} of its first "
            f"{CENTRE_TURNS} turns so far")
