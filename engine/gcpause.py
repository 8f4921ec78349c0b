"""Keeping Python's cyclic garbage collector from stalling the event loop during checks.

Checking a large configuration file (now in the check process) allocates tens of
thousands of objects (a 1,000-rule file: ~85,000 on its first check in the
editor). Python's collector runs when allocations pass a threshold, on
whichever thread happens to allocate, and holds the interpreter lock for its
whole length: a collection that finds those young objects took 90 ms, and a
full one triggered there stalled every chat stream on the loop for a quarter
of a second.

So a check runs with automatic collection paused (:func:`collection_paused`,
process-wide, counted so overlapping checks nest), and when the last check
ends what it left alive is frozen (``gc.freeze``): the new configuration is
long-lived, and later collections no longer scan it. Checks build trees and
records without reference cycles (measured: a collection after a check finds
nothing unreachable), so freezing keeps no garbage alive; reference counting
still frees frozen objects as usual, and the daemon's idle collector unfreezes
and collects everything now and then (``server/features/config_editing/idle_gc.py``).
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")

_lock = threading.Lock()
_holders = 0
_was_enabled = False


@contextmanager
def collection_paused() -> Iterator[None]:
    """No automatic collection while the block runs; freeze its survivors when it ends."""
    global _holders, _was_enabled  # noqa: PLW0603 - one collector per process
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0:
                gc.freeze()
                if _was_enabled:
                    gc.enable()


def run_paused(work: Callable[..., T], *args: Any) -> T:
    """``work(*args)`` inside :func:`collection_paused` (for executors)."""
    with collection_paused():
        return work(*args)


def pausing() -> bool:
    """Whether a check holds collection paused now (an idle collection then waits)."""
    return _holders > 0
