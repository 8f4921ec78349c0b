"""Provider availability: per (provider, model) and provider-wide (spec §4.5).

Each scope is healthy, degraded (recent failures below the threshold) or
unavailable. Routing rejects an unavailable candidate with
``provider_unavailable``; the chain then falls through.

Transitions to unavailable:

* five consecutive failures of one (provider, model) within two minutes;
* three distinct models of one provider turning unavailable within two
  minutes marks the whole provider;
* any authentication error (401/403) marks the whole provider at once, until its
  API key changes (the user fixed it) — :meth:`AvailabilityTracker.key_now`;
* two network errors reaching a provider within 30 seconds mark the whole
  provider (a single one only counts as a model failure).

A success clears its model scope, and clears the provider scope together with
the network window. With no attempts for five minutes an unavailable scope
clears by itself. Time comes from an injectable clock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from enum import StrEnum

import msgspec

from switchman.engine.clock import Clock
from switchman.engine.events import EventBus, ProviderRecovered, ProviderUnavailable

MODEL_FAILURE_THRESHOLD = 5
MODEL_FAILURE_WINDOW_SECONDS = 120.0
PROVIDER_MODEL_OUTAGE_THRESHOLD = 3
PROVIDER_MODEL_OUTAGE_WINDOW_SECONDS = 120.0
_NETWORK_PROVIDER_ESCALATION_THRESHOLD = 2
_NETWORK_PROVIDER_ESCALATION_WINDOW_SECONDS = 30.0
IDLE_CLEAR_SECONDS = 300.0


class ErrorClass(StrEnum):
    """How a failed provider call is classified."""

    AUTH = "auth"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    SERVER = "server"
    NETWORK = "network"
    TIMEOUT = "timeout"
    BAD_REQUEST = "bad_request"


_COUNTS_AGAINST_MODEL = {ErrorClass.RATE_LIMIT, ErrorClass.OVERLOADED, ErrorClass.SERVER,
                         ErrorClass.NETWORK, ErrorClass.TIMEOUT}


class Health(StrEnum):
    """The state of one scope."""

    HEALTHY = "healthy"
    DEGRADED = "degraded"
    UNAVAILABLE = "unavailable"


class Unavailability(msgspec.Struct, frozen=True):
    """Why a candidate model cannot be used right now."""

    scope: str
    """``model`` or ``provider``."""
    provider: str
    model: str
    reason: str


class ScopeState(msgspec.Struct, frozen=True):
    """One scope's state, for status displays."""

    provider: str
    model: str | None
    health: Health
    cause: str | None = None
    banner: str | None = None


@dataclass
class _Scope:
    failures: deque[float] = field(default_factory=deque)
    unavailable: bool = False
    cause: str = ""
    last_attempt: float = 0.0


@dataclass
class _ProviderScope(_Scope):
    network: deque[float] = field(default_factory=deque)
    model_outages: deque[tuple[float, str]] = field(default_factory=deque)
    refused_key: str | None = None
    """The fingerprint of the key an authentication error refused (its outage lasts until
    the key changes), while that outage lasts."""


RETRY_ASKED = "retry asked"
"""A recovery's cause when the user asked to try every provider again (``/route retry``)."""


def model_banner(model: str) -> str:
    """Status text for a model-specific outage."""
    return f"{model} currently unavailable."


def provider_banner(provider: str) -> str:
    """Status text for a provider-wide outage."""
    return f"{provider} provider currently unavailable."


class AvailabilityTracker:
    """Tracks failures and successes and answers "can this model be used now?"."""

    def __init__(self, clock: Clock, bus: EventBus | None = None) -> None:
        self.clock = clock
        self.bus = bus
        self._models: dict[tuple[str, str], _Scope] = {}
        self._providers: dict[str, _ProviderScope] = {}

    # -- recording ---------------------------------------------------------------

    def record_success(self, provider: str, model: str) -> None:
        """A call to ``model`` succeeded: clear its scope and the provider's."""
        now = self.clock.monotonic()
        scope, prov = self._model(provider, model), self._provider(provider)
        scope.last_attempt = prov.last_attempt = now
        scope.failures.clear()
        if scope.unavailable:
            self._clear(provider, model, scope, "success")
        prov.network.clear()
        if prov.unavailable:
            self._clear(provider, None, prov, "success")

    def record_failure(self, provider: str, model: str, error: ErrorClass,
                       key: str | None = None) -> None:
        """A call to ``model`` failed with ``error``; apply the §4.5 thresholds. ``key`` is
        the fingerprint of the key the call was made with (for an authentication error)."""
        now = self.clock.monotonic()
        self._expire(now)
        scope, prov = self._model(provider, model), self._provider(provider)
        scope.last_attempt = prov.last_attempt = now
        if error is ErrorClass.AUTH:
            if not prov.unavailable:
                prov.refused_key = key
            self._mark_provider(provider, prov, "authentication failed (check the API key)")
            return
        if error is ErrorClass.NETWORK and self._network_escalates(prov, now):
            self._mark_provider(provider, prov, "repeated network errors")
        if error in _COUNTS_AGAINST_MODEL:
            self._count_model_failure(provider, model, scope, prov, now, error)

    def _network_escalates(self, prov: _ProviderScope, now: float) -> bool:
        prov.network.append(now)
        _trim(prov.network, now - _NETWORK_PROVIDER_ESCALATION_WINDOW_SECONDS)
        return len(prov.network) >= _NETWORK_PROVIDER_ESCALATION_THRESHOLD

    def _count_model_failure(
        self, provider: str, model: str, scope: _Scope, prov: _ProviderScope, now: float,
        error: ErrorClass,
    ) -> None:
        scope.failures.append(now)
        _trim(scope.failures, now - MODEL_FAILURE_WINDOW_SECONDS)
        if scope.unavailable or len(scope.failures) < MODEL_FAILURE_THRESHOLD:
            return
        scope.unavailable, scope.cause = True, f"{len(scope.failures)} failures in a row ({error})"
        self._announce(provider, model, "model", scope.cause, model_banner(model))
        prov.model_outages.append((now, model))
        while prov.model_outages and prov.model_outages[0][0] < now - \
                PROVIDER_MODEL_OUTAGE_WINDOW_SECONDS:
            prov.model_outages.popleft()
        if len({m for _, m in prov.model_outages}) >= PROVIDER_MODEL_OUTAGE_THRESHOLD:
            self._mark_provider(provider, prov, "several of its models failed")

    def _mark_provider(self, provider: str, prov: _ProviderScope, cause: str) -> None:
        if prov.unavailable:
            return
        prov.unavailable, prov.cause = True, cause
        self._announce(provider, None, "provider", cause, provider_banner(provider))

    def refused_key(self, provider: str) -> str | None:
        """The fingerprint of the key ``provider`` refused, while that outage lasts."""
        prov = self._providers.get(provider)
        return prov.refused_key if prov is not None and prov.unavailable else None

    def key_now(self, provider: str, key: str | None) -> None:
        """``provider``'s key is now ``key`` (a fingerprint): a key other than the one it
        refused ends that outage at once — the user fixed it, and "send it again to retry"
        must work without waiting out the idle clear."""
        prov = self._providers.get(provider)
        if prov is None or not prov.unavailable or prov.refused_key in (None, key):
            return
        prov.network.clear()
        self._clear(provider, None, prov, "its API key changed")

    def forget(self) -> list[str]:
        """End every outage now and forget the failures counted (the user's ``/route retry``:
        the provider is back, and waiting out the idle clear would route around it for
        minutes). Returns the banners of the outages ended."""
        ended = self.banners()
        for (provider, model), scope in self._models.items():
            scope.failures.clear()
            if scope.unavailable:
                self._clear(provider, model, scope, RETRY_ASKED)
        for provider, prov in self._providers.items():
            prov.network.clear()
            prov.model_outages.clear()
            if prov.unavailable:
                self._clear(provider, None, prov, RETRY_ASKED)
        return ended

    # -- queries -----------------------------------------------------------------

    def check(self, provider: str, model: str) -> Unavailability | None:
        """None if ``model`` may be used now, else why not (provider-wide first)."""
        self._expire(self.clock.monotonic())
        prov = self._providers.get(provider)
        if prov is not None and prov.unavailable:
            return Unavailability("provider", provider, model,
                                  f"all {provider} models temporarily unavailable ({prov.cause})")
        scope = self._models.get((provider, model))
        if scope is not None and scope.unavailable:
            return Unavailability("model", provider, model,
                                  f"{model} model-specific outage ({scope.cause})")
        return None

    def health(self, provider: str, model: str | None = None) -> Health:
        """The health of a provider (``model=None``) or of one of its models."""
        self._expire(self.clock.monotonic())
        scope: _Scope | None = (self._providers.get(provider) if model is None
                                else self._models.get((provider, model)))
        if scope is None:
            return Health.HEALTHY
        if scope.unavailable:
            return Health.UNAVAILABLE
        recent = scope.failures or (isinstance(scope, _ProviderScope) and scope.network)
        return Health.DEGRADED if recent else Health.HEALTHY

    def states(self) -> list[ScopeState]:
        """Every scope that is not healthy, provider scopes first."""
        self._expire(self.clock.monotonic())
        out = [ScopeState(p, None, Health.UNAVAILABLE, s.cause, provider_banner(p))
               for p, s in self._providers.items() if s.unavailable]
        for (p, m), s in self._models.items():
            if s.unavailable:
                out.append(ScopeState(p, m, Health.UNAVAILABLE, s.cause, model_banner(m)))
            elif s.failures:
                out.append(ScopeState(p, m, Health.DEGRADED, f"{len(s.failures)} recent failures"))
        return out

    def banners(self) -> list[str]:
        """Status texts for every unavailable scope."""
        return [s.banner for s in self.states() if s.banner]

    def tick(self) -> None:
        """Apply the idle auto-clear now (the daemon calls this periodically)."""
        self._expire(self.clock.monotonic())

    # -- internals ---------------------------------------------------------------

    def _model(self, provider: str, model: str) -> _Scope:
        return self._models.setdefault((provider, model), _Scope())

    def _provider(self, provider: str) -> _ProviderScope:
        return self._providers.setdefault(provider, _ProviderScope())

    def _expire(self, now: float) -> None:
        for (provider, model), scope in self._models.items():
            if scope.unavailable and now - scope.last_attempt >= IDLE_CLEAR_SECONDS:
                scope.failures.clear()
                self._clear(provider, model, scope, "idle")
        for provider, prov in self._providers.items():
            if prov.unavailable and now - prov.last_attempt >= IDLE_CLEAR_SECONDS:
                prov.network.clear()
                self._clear(provider, None, prov, "idle")

    def _clear(self, provider: str, model: str | None, scope: _Scope, cause: str) -> None:
        scope.unavailable, scope.cause = False, ""
        if isinstance(scope, _ProviderScope):
            scope.refused_key = None
        if self.bus is not None:
            self.bus.emit(ProviderRecovered(timestamp=self.clock.now(), provider=provider,
                                            model=model, scope="model" if model else "provider",
                                            cause=cause))

    def _announce(self, provider: str, model: str | None, scope: str, cause: str,
                  banner: str) -> None:
        if self.bus is not None:
            self.bus.emit(ProviderUnavailable(timestamp=self.clock.now(), provider=provider,
                                              model=model, scope=scope, cause=cause,
                                              banner=banner))


def _trim(times: deque[float], oldest: float) -> None:
    while times and times[0] < oldest:
        times.popleft()
