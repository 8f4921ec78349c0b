"""Engine events and a small synchronous bus.

Every event is a msgspec Struct tagged by its ``type`` (``route.decided``,
``routing.policy_invalid``, ...), so one encoder serialises any of them for
storage or for the editor.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

import msgspec

from switchman.engine.config.problems import Problem


class Event(msgspec.Struct, frozen=True, kw_only=True, tag_field="type"):
    """Envelope shared by all events."""

    timestamp: datetime
    session_id: str | None = None


class PolicyInvalid(Event, frozen=True, kw_only=True, tag="routing.policy_invalid"):
    """A configuration file failed validation; an older or built-in version stays in force."""

    file: str
    problems: list[Problem]
    in_force: str
    """Which configuration is used instead: ``last-known-good`` or ``built-in``."""


class ProviderUnavailable(Event, frozen=True, kw_only=True, tag="routing.provider_unavailable"):
    """A provider, or one of its models, became unavailable."""

    provider: str
    model: str | None
    scope: str
    """``model`` or ``provider``."""
    cause: str
    banner: str


class ProviderRecovered(Event, frozen=True, kw_only=True, tag="routing.provider_recovered"):
    """A provider, or one of its models, is healthy again."""

    provider: str
    model: str | None
    scope: str
    cause: str
    """``success`` or ``idle`` (auto-cleared after five quiet minutes)."""


class RouteOverridden(Event, frozen=True, kw_only=True, tag="route.overridden"):
    """The user accepted a pattern suggestion (``/route override``): the turn ran again on it."""

    turn_id: str
    """The new turn, run on the suggested model."""
    original_turn_id: str
    from_model: str
    to_model: str


class PatternOverrideDismissed(Event, frozen=True, kw_only=True,
                               tag="pattern.override_dismissed"):
    """The user dismissed a pattern suggestion (``/route ignore``)."""

    turn_id: str
    suggested_model: str


Listener = Callable[[Event], None]


class EventBus:
    """Delivers each emitted event to every subscriber, in order."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Add a listener; returns a function that removes it."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener)

    def emit(self, event: Event) -> None:
        """Deliver ``event`` to every listener."""
        for listener in list(self._listeners):
            listener(event)
