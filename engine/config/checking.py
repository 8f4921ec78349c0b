"""Where configuration checks run in the daemon, and checking each text only once.

Every check in the daemon — the store's check of a saved file, the editor's
check of its unsaved buffer, a quick fix's verification — runs in one
separate, long-lived process (:class:`CheckProcess`), one at a time, in the
order asked. A 1,000-rule routing file takes a quarter of a second of pure
Python to check; on a thread of the daemon that time was shared with the
event loop through the interpreter lock, and every write of a streamed delta
then waited for the checking thread's slice. In its own process a check
takes none of the daemon's interpreter. What comes back is plain data: the
editor's diagnostics as LSP JSON, the store's checked values pickled (a
1,000-rule policy is 150 KB and takes the daemon about 30 ms to unpickle,
mostly RE2 compiling its patterns again, against 250 ms for the check).

The process is started with ``spawn`` (the daemon runs threads, which ``fork``
would copy mid-state), on first use or by :meth:`CheckProcess.start`; its
standard output is the daemon's standard error (the daemon's stdout is the
editor's JSON-RPC stream), and it exits when the daemon does, however the
daemon ends. If it dies during a check, that check raises
:class:`CheckStopped` and the next one starts a new process: callers report
it (a located problem) and keep the last good value; :attr:`generation`
tells the editor's side to send its open documents again.

Inside the process, :class:`LastChecks` remembers the latest check of each
file: the text's digest, what the check depended on (the model registry, the
user's profiles) and its result. Whoever checks a file next, the editor or
the store, reuses that result when its text and context are the same, so a
save checks the saved text once.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing.connection import wait
from typing import Any, TypeVar

from switchman.engine.config.problems import Problem
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.errors import CheckStopped
from switchman.engine.gcpause import run_paused

T = TypeVar("T")
Work = tuple[Callable[..., Any], tuple[Any, ...]]
"""A module-level function and its arguments, to run in the check process."""
Checked = tuple[Any, list[Problem]]
"""A check's result: the file's value (None when it has errors) and its problems."""

log = logging.getLogger(__name__)


class CheckProcess:
    """The daemon's one configuration-check process: started on first use, restarted after
    it dies. Work sent to it must be a module-level function with picklable arguments."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._executor: ProcessPoolExecutor | None = None
        self.generation = 0
        """How many processes were started."""
        self._restorers: list[Callable[[], list[Work]]] = []

    def restore_with(self, state: Callable[[], list[Work]]) -> None:
        """Send the work ``state()`` lists to every new process before anything else (a new
        process holds none of the old one's state: the editor gives it its open documents)."""
        self._restorers.append(state)

    def start(self) -> None:
        """Start the process now (it imports the engine), so the first check does not wait."""
        self.submit(os.getpid)

    def submit(self, work: Callable[..., T], *args: Any) -> Future[T]:
        """Run ``work(*args)`` in the process, with collection paused there as it runs."""
        with self._lock:
            executor = self._executor
            if executor is None:
                self.generation += 1
                executor = self._executor = ProcessPoolExecutor(
                    1, multiprocessing.get_context("spawn"), initializer=_started)
                for restore, restore_args in (w for state in self._restorers for w in state()):
                    executor.submit(run_paused, restore, *restore_args)
        try:
            return executor.submit(run_paused, work, *args)
        except BrokenProcessPool:
            self._forget(executor)
            return self.submit(work, *args)

    async def run(self, work: Callable[..., T], *args: Any) -> T:
        """``work(*args)``'s result from the process; :class:`CheckStopped` if it died."""
        future = self.submit(work, *args)
        try:
            return await asyncio.wrap_future(future)
        except BrokenProcessPool as exc:
            self._died(future)
            raise CheckStopped() from exc

    def result(self, future: Future[T]) -> T:
        """A finished future's result, with a dead process as :class:`CheckStopped`."""
        try:
            return future.result()
        except BrokenProcessPool as exc:
            self._died(future)
            raise CheckStopped() from exc

    def _died(self, future: Future[Any]) -> None:
        # The broken executor refuses the next submit, which starts a new process.
        log.error("the configuration check process exited during a check; starting another")

    def _forget(self, executor: ProcessPoolExecutor) -> None:
        with self._lock:
            if self._executor is executor:
                self._executor = None
        executor.shutdown(wait=False, cancel_futures=True)

    def close(self) -> None:
        """Stop the process (checks in flight are abandoned); a later use starts another."""
        with self._lock:
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.shutdown(wait=False, cancel_futures=True)


def _started() -> None:
    """In the new process: keep stdout clean, leave signals to the daemon, end with it, and
    import the checks before the first one is asked for."""
    os.dup2(2, 1)  # a stray print must never reach the editor's JSON-RPC stream
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = multiprocessing.parent_process()
    if parent is not None:
        threading.Thread(target=_exit_with, args=(parent.sentinel,), daemon=True,
                         name="exit-with-daemon").start()
    importlib.import_module("switchman.engine.config.store")


def _exit_with(sentinel: int) -> None:
    """Exit as soon as the daemon is gone (even after ``kill -9``)."""
    wait([sentinel])
    os._exit(0)


CHECKS = CheckProcess()
"""The daemon's check process, shared by the store and the editor."""


def same_context(a: object, b: object) -> bool:
    """Whether two checks' contexts are equivalent: the same objects, or registries with the
    same providers and models (the editor and the store each read their own copy of
    models.yaml), element by element for tuples."""
    if a is b:
        return True
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same_context(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, ModelRegistry) and isinstance(b, ModelRegistry):
        return a.providers == b.providers and a.models == b.models
    return False


class LastChecks:
    """The latest check of each configuration file, keyed by path (one entry per file)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._last: dict[str, tuple[str, bytes, object, Checked]] = {}

    def check(self, kind: str, path: str, text: str, context: object,
              work: Callable[[], Checked]) -> Checked:
        """``work()``'s result for ``text``, or the remembered one of the same file, kind, text
        and an equivalent ``context`` (see :func:`same_context`)."""
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()
        with self._lock:
            known = self._last.get(path)
        if known is not None and known[0] == kind and known[1] == digest \
                and same_context(known[2], context):
            return known[3][0], list(known[3][1])
        checked = work()
        with self._lock:
            self._last[path] = (kind, digest, context, (checked[0], list(checked[1])))
        return checked

    def forget(self) -> None:
        """Drop every remembered check (``/rules reload`` checks everything again)."""
        with self._lock:
            self._last.clear()


LAST_CHECKS = LastChecks()
"""The process's record of its latest checks, shared by the editor and the store."""


def forget_checks() -> None:
    """Drop :data:`LAST_CHECKS` (sent to the check process by ``/rules reload``)."""
    LAST_CHECKS.forget()
