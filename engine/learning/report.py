"""Plain-text views of the pattern store for the CLI and the ``/patterns`` command."""

from __future__ import annotations

from switchman.engine.learning.store import WorkspaceStats


def format_stats(stats: list[WorkspaceStats], data_file: str) -> str:
    """Turns remembered per workspace and model, with their mean success."""
    if not stats:
        return f"No turns remembered yet ({data_file})."
    lines = [f"Pattern store: {data_file}"]
    for space in stats:
        lines.append(f"{space.workspace or '(no workspace)'}: {space.turns} turn(s), "
                     f"{space.oldest} … {space.newest}")
        for model, (turns, success) in sorted(space.by_model.items(),
                                              key=lambda item: -item[1][0]):
            lines.append(f"  {model}: {turns} turn(s), mean success {success:.2f}")
    return "\n".join(lines)
