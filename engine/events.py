"""Engine events and a small synchronous bus.

Every event is a msgspec Struct tagged by its ``type`` (``route.decided``,
``routing.policy_invalid``, ...), so one encoder serialises any of them for
storage or for the editor.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from decimal import Decimal
from typing import Literal

import msgspec

from switchman.engine.config.problems import Problem
from switchman.engine.delegation.contract import DelegateUsageSummary, InsufficientContextRequest
from switchman.engine.delegation.envelope import HandoffEnvelope
from switchman.engine.messages import ZERO_USD, ApprovalRecord, Usage


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
    """``success``, ``idle`` (auto-cleared after five quiet minutes), ``its API key changed``
    or ``retry asked`` (``/route retry``)."""


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


class SessionCreated(Event, frozen=True, kw_only=True, tag="session.created"):
    """A session was created (a worker's carries its planner)."""

    workspace: str
    is_worker: bool = False
    parent_session_id: str | None = None
    parent_tool_use_id: str | None = None


class SessionEnded(Event, frozen=True, kw_only=True, tag="session.ended"):
    """A worker session finished its task (top-level sessions never end; they are left)."""

    disposition: str
    """``completed``, ``failed`` or ``cancelled``."""
    is_worker: bool = True


class CallUsage(Usage, frozen=True):
    """An LLM call's tokens and their price: ``llm.call_completed``'s ``usage``, where spec
    001 §8 reads a call's cost (``usage.cost_usd``)."""

    cost_usd: Decimal = ZERO_USD

    @classmethod
    def priced(cls, usage: Usage, cost: Decimal) -> CallUsage:
        return cls(usage.input_tokens, usage.output_tokens, usage.cache_read_tokens,
                   usage.cache_write_tokens, cost)


class LlmCallCompleted(Event, frozen=True, kw_only=True, tag="llm.call_completed"):
    """One LLM call and what it cost (also for calls cut off by a cancel or an interruption).
    The cost is both ``cost_usd`` and ``usage.cost_usd`` (the delegation spec's name)."""

    turn_id: str
    model: str
    usage: CallUsage
    cost_usd: Decimal
    is_worker: bool = False
    parent_session_id: str | None = None
    estimated: bool = False
    """The usage is Switchman's estimate, not the provider's report: a call cut off by a
    cancel, a lost connection or its daemon's death (docs/sessions.md, "Costs")."""


class LlmCallStarted(Event, frozen=True, kw_only=True, tag="llm.call_started"):
    """An LLM call's request has left for the provider: from here on the call is charged,
    even if it is stopped, fails or its daemon dies before the provider reports usage.
    Written before the call's ``llm.call_completed`` (or ``llm.call_refused``); a turn found
    interrupted whose last such mark is this one had a call cut off (docs/sessions.md,
    "Costs")."""

    turn_id: str
    model: str
    input_tokens: int
    """The estimate of the request's input (system prompt, tools and messages)."""
    is_worker: bool = False
    parent_session_id: str | None = None


class LlmCallRefused(Event, frozen=True, kw_only=True, tag="llm.call_refused"):
    """The provider answered a sent call with an HTTP error status: nothing is billed."""

    turn_id: str
    model: str
    status: int


class DelegateStarted(Event, frozen=True, kw_only=True, tag="delegate.started"):
    """A planner's ``delegate`` call started a worker (``session_id`` is the planner's)."""

    tool_use_id: str
    worker_session_id: str
    tier: str
    resolved_model: str
    context_mode: str
    context_reference_count: int
    task_size_tokens: int
    allowed_tool_count: int
    dropped_tools: list[str]
    source: Literal["planner", "user"] = "planner"
    """Who delegated: the planner's ``delegate`` call, or the user (``/delegate``)."""
    focus: str | None = None
    """For the user's delegations: where the task came from (``selection``, ``written``,
    ``latest_request``)."""
    worker_tier: str | None = None
    """The tier whose model the worker runs on (``tier`` is the one the planner asked for)."""
    tier_floor: str | None = None
    """The planner's tier when the tier floor is on."""
    floor_applied: bool = False
    """The floor lowered the requested tier to ``tier_floor``."""
    complexity: str | None = None
    complexity_source: str | None = None
    """``given`` by the planner or ``estimated`` by Switchman."""
    routed_by: str | None = None
    """What chose the worker's model when its tier did not: the winner's badge-sized
    reason (``rule: docs questions`` — your rules still apply to a worker's task)."""
    reasoning_effort: str | None = None
    profile: str | None = None
    """The worker's agent profile."""
    handoff: HandoffEnvelope | None = None
    """The typed handoff envelope (spec 004)."""
    requested_at: datetime | None = None
    """When the delegation was asked for (before any wait for approval or a worker slot)."""
    queued_seconds: float = 0.0
    """How long it waited for a free worker slot (``delegate.queued``) before starting."""
    approval: ApprovalRecord | None = None
    """The question its start asked the user (its worker may change things) and the answer;
    None when nothing was asked."""
    superseded_approvals: list[ApprovalRecord] = msgspec.field(default_factory=list)
    """The questions about its start asked before ``approval``, oldest first, each answered
    and then asked again because the worker's model changed while it waited (``superseded``
    says so); empty when it was asked once, and in records kept before they were kept."""


class DelegateQueued(Event, frozen=True, kw_only=True, tag="delegate.queued"):
    """A planner's ``delegate`` call waits for a free worker slot: its turn already runs
    ``max_concurrent_workers`` workers (the timestamp is when it began waiting)."""

    tool_use_id: str
    turn_id: str | None
    """The planner's turn: a delegation still waiting when that turn was interrupted (the
    daemon died) never started."""
    tier: str
    task: str
    source: Literal["planner", "user"] = "planner"
    position: int
    """Its place in line when it began waiting (1: the next to start)."""
    running: int
    limit: int


class DelegateAwaitingApproval(Event, frozen=True, kw_only=True,
                               tag="delegate.awaiting_approval"):
    """A delegation that waited for a free worker slot got one, and its start now waits for
    the user's approval (the timestamp is when the user was asked). Recorded so a reloaded
    editor, or another window's daemon, lists it as waiting for approval, not for a slot."""

    tool_use_id: str
    turn_id: str | None
    """The planner's turn: one still waiting when that turn was interrupted never started."""


class ApplyAnswered(Event, frozen=True, kw_only=True, tag="apply.answered"):
    """The user answered the question an Apply of a turn's code block asked (an Apply whose
    editor named the turn): kept so a rebuilt chat shows it in that turn."""

    turn_id: str
    approval: ApprovalRecord


class DelegateCompleted(Event, frozen=True, kw_only=True, tag="delegate.completed"):
    """A worker finished its task."""

    tool_use_id: str
    worker_session_id: str
    success: bool
    usage_summary: DelegateUsageSummary
    worker_total_cost_usd: Decimal


class DelegateFailed(Event, frozen=True, kw_only=True, tag="delegate.failed"):
    """A delegation failed (``failure_mode`` from spec 001 §4.4, or ``timeout``)."""

    tool_use_id: str
    worker_session_id: str
    failure_mode: str
    error: str
    usage_summary: DelegateUsageSummary
    worker_total_cost_usd: Decimal
    detail: str | None = None
    insufficient_context_request: InsufficientContextRequest | None = None
    source: Literal["planner", "user"] = "planner"
    tier: str | None = None
    """The tier asked for."""
    task: str | None = None
    """What the worker was to do: with ``tier`` and ``source``, a delegation that ended
    before its worker was routed (no ``delegate.started``) is still described."""
    requested_at: datetime | None = None
    """When the delegation was asked for."""
    approval: ApprovalRecord | None = None
    """The question its start asked the user, when one was (denied, or stopped while it
    waited for the answer, it ended here)."""
    superseded_approvals: list[ApprovalRecord] = msgspec.field(default_factory=list)
    """The questions asked before ``approval`` and superseded by it (as ``delegate.started``
    has them)."""


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
