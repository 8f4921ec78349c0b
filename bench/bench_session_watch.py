"""What noticing other daemons' changes costs the event loop (engine/sessions/watch.py).

Run with ``.venv/bin/python bench/bench_session_watch.py``. Each figure is against a
``SELECT 1`` on the same connection, measured in the same run (best of five):

1. The check once a second when no other daemon wrote (one ``PRAGMA data_version``).
2. The check after another daemon's commit, with three open workspaces (their current
   sessions summarised and compared), minus the cost of that commit itself.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench_support import machine

from switchman.engine.sessions.watch import SharedSessionWatch
from switchman.engine.store.database import connect
from switchman.engine.store.ownership import DaemonLease
from switchman.engine.store.repository import SessionStore

NOW = datetime(2026, 11, 23, tzinfo=UTC)
WORKSPACES = [f"file:///w{i}" for i in range(3)]


def per_call_us(fn: Callable[[], object], calls: int) -> float:
    """The best of five runs of ``calls`` calls, in microseconds per call."""
    runs = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        runs.append((time.perf_counter() - start) / calls * 1e6)
    return min(runs)


def main() -> None:
    """Print the two figures and their reference."""
    print(machine())
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder)
        mine = SessionStore(connect(data / "switchman.db"), DaemonLease(data))
        other = SessionStore(connect(data / "switchman.db"), DaemonLease(data))
        for i, workspace in enumerate(WORKSPACES):
            mine.create_session(f"s{i}", workspace, NOW)
            mine.set_current_session(workspace, f"s{i}")
        watch = SharedSessionWatch(mine, lambda: WORKSPACES)
        for workspace in WORKSPACES:
            watch.remember(workspace)
        seq = iter(range(10**9))

        def other_writes() -> None:
            other.set_sticky("s1", f"model-{next(seq)}")

        def other_writes_and_check() -> None:
            other_writes()
            assert watch.changed()

        reference = per_call_us(lambda: mine.db.execute("SELECT 1").fetchone(), 20_000)
        idle = per_call_us(watch.changed, 20_000)
        changed = per_call_us(other_writes_and_check, 2_000) - per_call_us(other_writes, 2_000)
        print(f"reference SELECT 1: {reference:.2f} us")
        print(f"check, nothing changed: {idle:.2f} us ({idle / reference:.1f}x the reference)")
        print(f"check after another daemon's commit, {len(WORKSPACES)} open workspaces: "
              f"{changed:.1f} us ({changed / reference:.0f}x the reference)")


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__).parse_args()  # --help; no options
    main()
