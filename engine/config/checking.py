"""Where configuration checks run in the daemon, and checking each text only once.

Saving a configuration file open in the editor used to check the same text
twice: the editor checked its buffer, then the configuration store checked
the saved file, each on its own worker thread. A 1,000-rule routing file takes
a quarter of a second to check, in Python code that holds the interpreter lock
in 5 ms slices, so two checks side by side left the event loop (which streams
every chat) a third of the interpreter and stretched the gaps between deltas.

Now every check in the process runs on one worker thread (:func:`config_worker`),
one at a time, and :class:`LastChecks` remembers the latest check of each file:
the text's digest, what the check depended on (the model registry, the user's
profiles) and its result. Whoever checks a file next, the editor or the store,
reuses that result when its text and context are the same, so a save checks
the saved text once.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from switchman.engine.config.problems import Problem
from switchman.engine.config.registry import ModelRegistry

Checked = tuple[Any, list[Problem]]
"""A check's result: the file's value (None when it has errors) and its problems."""

WORKER_NAME = "config-check"

_worker: ThreadPoolExecutor | None = None
_worker_lock = threading.Lock()


def config_worker() -> ThreadPoolExecutor:
    """The process's one thread for configuration checks, started on first use."""
    global _worker  # noqa: PLW0603 - one per process, shared by the store and the editor
    with _worker_lock:
        if _worker is None:
            _worker = ThreadPoolExecutor(1, WORKER_NAME)
        return _worker


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
