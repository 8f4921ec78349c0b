"""Time sources. Production uses :class:`SystemClock`; tests drive :class:`ManualClock`."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from datetime import time as dtime
from typing import Protocol


def utc_text(moment: datetime) -> str:
    """``moment`` as Switchman stores and sends times: ISO 8601 in UTC, to the millisecond,
    with ``Z`` (``2026-05-08T14:23:11.532Z``)."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Clock(Protocol):
    """What the engine needs to know about time."""

    def now(self) -> datetime:
        """The current instant, timezone-aware UTC."""
        ...

    def local_time(self) -> dtime:
        """Wall-clock time of day in the user's local timezone."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin; only differences are meaningful."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def local_time(self) -> dtime:
        return datetime.now().astimezone().time()

    def monotonic(self) -> float:
        return time.monotonic()


class ManualClock:
    """A clock that only moves when told to; for deterministic tests."""

    def __init__(self, start: datetime | None = None, local_offset_hours: float = 0.0) -> None:
        self._now = start or datetime(2026, 5, 8, 14, 0, tzinfo=UTC)
        self._offset = timedelta(hours=local_offset_hours)
        self._mono = 1000.0

    def now(self) -> datetime:
        return self._now

    def local_time(self) -> dtime:
        return (self._now + self._offset).time()

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``."""
        self._now += timedelta(seconds=seconds)
        self._mono += seconds
