"""Thread-safe shared state of a fake provider: script queues, request log, stalls."""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Any

from .script import JSONDict, Reply, Stall, Step


@dataclass(frozen=True)
class RecordedRequest:
    """One model request the fake received.

    ``headers`` has lower-cased names and keeps auth values verbatim.
    ``api`` is ``"anthropic"``, ``"openai"`` or ``"unknown"``.
    """

    index: int
    api: str
    method: str
    path: str
    model: str | None
    stream: bool
    body: Any
    headers: dict[str, str]

    def to_json(self) -> JSONDict:
        """A JSON-serialisable form for the control API."""
        return {
            "index": self.index,
            "api": self.api,
            "method": self.method,
            "path": self.path,
            "model": self.model,
            "stream": self.stream,
            "body": self.body,
            "headers": self.headers,
        }


class ScriptQueue:
    """Queued steps: one FIFO per model name plus a shared FIFO."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._shared: deque[Step] = deque()
        self._by_model: dict[str, deque[Step]] = {}

    def push(self, steps: list[Step], model: str | None = None) -> None:
        """Append steps to the queue for ``model`` (or the shared queue)."""
        with self._lock:
            target = self._shared if model is None else self._by_model.setdefault(model, deque())
            target.extend(steps)

    def pop(self, model: str | None) -> Step | None:
        """Take the next step for ``model``, falling back to the shared queue."""
        with self._lock:
            own = self._by_model.get(model) if model is not None else None
            if own:
                return own.popleft()
            if self._shared:
                return self._shared.popleft()
            return None

    def clear(self) -> list[Step]:
        """Drop every queued step and return them."""
        with self._lock:
            dropped = list(self._shared)
            for queue in self._by_model.values():
                dropped.extend(queue)
            self._shared.clear()
            self._by_model.clear()
            return dropped

    def sizes(self) -> dict[str, int]:
        """Queue lengths; the shared queue is reported under ``"*"``."""
        with self._lock:
            sizes = {"*": len(self._shared)}
            sizes.update({m: len(q) for m, q in self._by_model.items() if q})
            return sizes


class RequestLog:
    """Recorded requests with a condition to wait for the N-th one."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._items: list[RecordedRequest] = []

    def add(self, **fields: Any) -> RecordedRequest:
        """Record a request and wake waiters."""
        with self._cond:
            record = RecordedRequest(index=len(self._items), **fields)
            self._items.append(record)
            self._cond.notify_all()
            return record

    def snapshot(self) -> list[RecordedRequest]:
        """A copy of the requests recorded so far."""
        with self._cond:
            return list(self._items)

    def wait_for(self, count: int, timeout: float) -> list[RecordedRequest] | None:
        """Wait until at least ``count`` requests exist; None on timeout."""
        with self._cond:
            ok = self._cond.wait_for(lambda: len(self._items) >= count, timeout)
            return list(self._items) if ok else None

    def clear(self) -> None:
        """Forget all recorded requests."""
        with self._cond:
            self._items.clear()


class StallRegistry:
    """Every stall that is queued or in progress, for bulk release."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cond = threading.Condition()
        self._pending: list[Stall] = []
        self.reached_count = 0

    def track(self, steps: list[Step]) -> None:
        """Remember the stalls contained in newly queued steps."""
        stalls = [s.fault for s in steps if isinstance(s, Reply) and isinstance(s.fault, Stall)]
        with self._lock:
            self._pending.extend(stalls)

    def mark_reached(self, stall: Stall) -> None:
        """Record that the server started stalling on ``stall``."""
        stall.reached.set()
        with self._cond:
            self.reached_count += 1
            self._cond.notify_all()

    def wait_reached(self, count: int, timeout: float) -> bool:
        """Wait until ``count`` stalls in total have been reached."""
        with self._cond:
            return self._cond.wait_for(lambda: self.reached_count >= count, timeout)

    def release_all(self) -> int:
        """Release every known stall (queued or active); return how many."""
        with self._lock:
            released = [s for s in self._pending if not s.release.is_set()]
            self._pending = []
        for stall in released:
            stall.release.set()
        return len(released)

    def reset(self) -> None:
        """Release everything and zero the reached counter."""
        self.release_all()
        with self._cond:
            self.reached_count = 0


class ProviderState:
    """Everything the HTTP handlers share with the controlling test."""

    def __init__(self) -> None:
        self.queue = ScriptQueue()
        self.log = RequestLog()
        self.stalls = StallRegistry()
        self.stopping = threading.Event()
        self._seq_lock = threading.Lock()
        self._seq = 0
        self.started_at = int(time.time())

    def script(self, steps: list[Step], model: str | None = None) -> None:
        """Queue steps and track their stalls."""
        self.stalls.track(steps)
        self.queue.push(steps, model)

    def next_seq(self) -> int:
        """A process-unique sequence number for response ids."""
        with self._seq_lock:
            self._seq += 1
            return self._seq

    def reset(self) -> None:
        """Clear queues and requests and release every stall."""
        self.queue.clear()
        self.log.clear()
        self.stalls.reset()
