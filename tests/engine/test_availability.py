"""The availability state machine of spec §4.5, driven by a manual clock."""

from __future__ import annotations

import pytest

from switchman.engine.availability import (
    AvailabilityTracker,
    ErrorClass,
    Health,
)
from switchman.engine.clock import ManualClock
from switchman.engine.events import Event, EventBus, ProviderRecovered, ProviderUnavailable

OPUS, SONNET, HAIKU = "anthropic:claude-opus-4-7", "anthropic:claude-sonnet-4-6", \
    "anthropic:claude-haiku-4-5"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
def tracker(clock: ManualClock, events: list[Event]) -> AvailabilityTracker:
    bus = EventBus()
    bus.subscribe(events.append)
    return AvailabilityTracker(clock, bus)


def fail(tracker: AvailabilityTracker, model: str, times: int, error: ErrorClass,
         clock: ManualClock, every: float = 1.0) -> None:
    for _ in range(times):
        tracker.record_failure("anthropic", model, error)
        clock.advance(every)


def test_five_consecutive_failures_mark_the_model(tracker: AvailabilityTracker,
                                                  clock: ManualClock,
                                                  events: list[Event]) -> None:
    fail(tracker, OPUS, 4, ErrorClass.SERVER, clock)
    assert tracker.check("anthropic", OPUS) is None
    assert tracker.health("anthropic", OPUS) is Health.DEGRADED
    fail(tracker, OPUS, 1, ErrorClass.SERVER, clock)
    outage = tracker.check("anthropic", OPUS)
    assert outage is not None and outage.scope == "model"
    assert "model-specific outage" in outage.reason
    assert tracker.check("anthropic", SONNET) is None
    assert [type(e) for e in events] == [ProviderUnavailable]
    assert isinstance(events[0], ProviderUnavailable)
    assert events[0].banner == f"{OPUS} currently unavailable."


def test_failures_spread_over_more_than_two_minutes_do_not_count(
        tracker: AvailabilityTracker, clock: ManualClock) -> None:
    fail(tracker, OPUS, 5, ErrorClass.SERVER, clock, every=31.0)
    assert tracker.check("anthropic", OPUS) is None


def test_a_success_resets_the_count(tracker: AvailabilityTracker, clock: ManualClock) -> None:
    fail(tracker, OPUS, 4, ErrorClass.OVERLOADED, clock)
    tracker.record_success("anthropic", OPUS)
    fail(tracker, OPUS, 4, ErrorClass.OVERLOADED, clock)
    assert tracker.check("anthropic", OPUS) is None


def test_auth_error_marks_the_provider_at_once(tracker: AvailabilityTracker) -> None:
    tracker.record_failure("anthropic", HAIKU, ErrorClass.AUTH)
    outage = tracker.check("anthropic", OPUS)
    assert outage is not None and outage.scope == "provider"
    assert "all anthropic models temporarily unavailable" in outage.reason
    assert tracker.check("openai", "openai:gpt-5") is None
    assert tracker.health("anthropic") is Health.UNAVAILABLE


def test_one_network_error_is_not_an_outage(tracker: AvailabilityTracker,
                                            clock: ManualClock) -> None:
    tracker.record_failure("anthropic", OPUS, ErrorClass.NETWORK)
    clock.advance(31)
    tracker.record_failure("anthropic", OPUS, ErrorClass.NETWORK)
    assert tracker.check("anthropic", SONNET) is None


def test_two_network_errors_within_30_seconds_mark_the_provider(
        tracker: AvailabilityTracker, clock: ManualClock) -> None:
    tracker.record_failure("anthropic", OPUS, ErrorClass.NETWORK)
    clock.advance(29)
    tracker.record_failure("anthropic", SONNET, ErrorClass.NETWORK)
    outage = tracker.check("anthropic", HAIKU)
    assert outage is not None and outage.scope == "provider"


def test_three_models_down_mark_the_provider(tracker: AvailabilityTracker,
                                             clock: ManualClock) -> None:
    for model in (OPUS, SONNET):
        fail(tracker, model, 5, ErrorClass.SERVER, clock)
    assert tracker.check("anthropic", HAIKU) is None
    fail(tracker, HAIKU, 5, ErrorClass.SERVER, clock)
    outage = tracker.check("anthropic", "anthropic:some-other")
    assert outage is not None and outage.scope == "provider"


def test_bad_requests_do_not_count(tracker: AvailabilityTracker, clock: ManualClock) -> None:
    fail(tracker, OPUS, 10, ErrorClass.BAD_REQUEST, clock)
    assert tracker.health("anthropic", OPUS) is Health.HEALTHY


def test_success_clears_model_and_provider(tracker: AvailabilityTracker, clock: ManualClock,
                                           events: list[Event]) -> None:
    tracker.record_failure("anthropic", OPUS, ErrorClass.AUTH)
    tracker.record_success("anthropic", HAIKU)
    assert tracker.check("anthropic", OPUS) is None
    recovered = [e for e in events if isinstance(e, ProviderRecovered)]
    assert [(e.scope, e.cause) for e in recovered] == [("provider", "success")]


def test_unavailable_clears_after_five_idle_minutes(tracker: AvailabilityTracker,
                                                    clock: ManualClock,
                                                    events: list[Event]) -> None:
    fail(tracker, OPUS, 5, ErrorClass.SERVER, clock, every=0)
    clock.advance(299)
    assert tracker.check("anthropic", OPUS) is not None
    clock.advance(1)
    tracker.tick()
    assert tracker.check("anthropic", OPUS) is None
    assert isinstance(events[-1], ProviderRecovered)
    assert events[-1].cause == "idle"


def test_states_and_banners(tracker: AvailabilityTracker, clock: ManualClock) -> None:
    tracker.record_failure("openai", "openai:gpt-5", ErrorClass.AUTH)
    fail(tracker, OPUS, 5, ErrorClass.SERVER, clock)
    assert tracker.banners() == ["openai provider currently unavailable.",
                                 f"{OPUS} currently unavailable."]


def test_an_auth_outage_ends_when_the_key_changes(tracker: AvailabilityTracker,
                                                  events: list[Event]) -> None:
    tracker.record_failure("anthropic", HAIKU, ErrorClass.AUTH, key="refused")
    assert tracker.refused_key("anthropic") == "refused"
    tracker.key_now("anthropic", "refused")  # the same key: still out
    assert tracker.check("anthropic", OPUS) is not None
    tracker.key_now("anthropic", "fixed")
    assert tracker.check("anthropic", OPUS) is None and tracker.refused_key("anthropic") is None
    assert isinstance(events[-1], ProviderRecovered) and events[-1].cause == \
        "its API key changed"


def test_a_key_change_ends_only_an_outage_its_key_caused(tracker: AvailabilityTracker,
                                                        clock: ManualClock) -> None:
    tracker.record_failure("anthropic", OPUS, ErrorClass.NETWORK)
    tracker.record_failure("anthropic", OPUS, ErrorClass.NETWORK)  # the provider is out
    tracker.record_failure("anthropic", OPUS, ErrorClass.AUTH, key="refused")
    tracker.key_now("anthropic", "fixed")
    assert tracker.check("anthropic", OPUS) is not None
