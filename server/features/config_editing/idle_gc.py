"""Keeping garbage collection out of the way of typing.

A full collection scans every live object; with a long routing file open that
takes 15-20 ms, which doubles an edit's latency when it strikes in the middle
of a check. So once the daemon has been idle for a moment after publishing
diagnostics, it collects and freezes what survives (``gc.freeze``): later
collections then only scan objects created since. When a document has just
been opened (and its tree built) everything is frozen at once, without the
collection: freezing costs next to nothing, collecting can wait for a pause.
Frozen objects are still freed by reference counting as usual; every few
minutes, when idle, everything is unfrozen and collected in full, so cyclic
garbage cannot pile up.

"Idle" includes the chat streams: a full collection runs on the event loop and
takes 50-150 ms with a large configuration loaded, long enough to stall every
stream's deltas. So while any turn is in flight the collection is put off and
tried again a moment later; it runs once no turn is running.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable

from switchman.engine.gcpause import pausing

IDLE_SECONDS = 1.0
REFRESH_SECONDS = 300.0


class IdleCollector:
    """Runs the garbage collector when the daemon is idle."""

    def __init__(self, idle: float = IDLE_SECONDS, refresh: float = REFRESH_SECONDS,
                 clock: Callable[[], float] = time.monotonic,
                 turn_running: Callable[[], bool] = lambda: False) -> None:
        self.idle = idle
        self.refresh = refresh
        self.clock = clock
        self.turn_running = turn_running
        """Whether a chat turn is streaming now (the collection waits until none is)."""
        self._timer: asyncio.TimerHandle | None = None
        self._last_full = clock()

    def busy(self, *, settle_now: bool = False) -> None:
        """Work just finished: collect once nothing else happened for a moment.

        ``settle_now`` freezes the objects alive now straight away.
        """
        if settle_now:
            gc.freeze()
        self._arm()

    def _arm(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = asyncio.get_running_loop().call_later(self.idle, self.collect)

    def collect(self) -> None:
        """Collect garbage and freeze the survivors (unfreezing all now and then); while a
        turn is running, try again after another idle interval instead."""
        self._timer = None
        if self.turn_running() or pausing():  # a check would be scanned while it runs
            self._arm()
            return
        if self.clock() - self._last_full >= self.refresh:
            gc.unfreeze()
            self._last_full = self.clock()
        gc.collect()
        gc.freeze()
