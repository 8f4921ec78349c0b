"""Records that sessions hand to the outside world (and that the protocol carries)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

import msgspec

from switchman.engine.delegation.envelope import HandoffEnvelope
from switchman.engine.messages import ZERO_USD, ApprovalRecord, Usage
from switchman.engine.profiles.profile import ModelPolicy
from switchman.engine.routing.decision import RouteDecided

TurnStatus = Literal["running", "completed", "cancelled", "failed", "interrupted"]
DelegationStatus = Literal["queued", "awaiting_approval", "running", "completed", "failed",
                           "cancelled"]


class ErrorInfo(msgspec.Struct, frozen=True):
    """A machine code and a message for people."""

    code: str
    message: str


class PendingSwapInfo(msgspec.Struct, frozen=True):
    """A sticky-model change waiting for the running turn to end (None: clear it)."""

    model: str | None


class SessionInfo(msgspec.Struct, kw_only=True):
    """A session as listed and shown."""

    id: str
    workspace: str
    title: str
    created_at: datetime
    updated_at: datetime
    sticky_model: str | None
    pending_swap: PendingSwapInfo | None = None
    last_model: str | None = None
    turn_count: int = 0
    cost_usd: Decimal = ZERO_USD
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` that is Switchman's estimate, not a provider's report."""
    is_worker: bool = False
    parent_session_id: str | None = None
    parent_tool_use_id: str | None = None
    profile: str | None = None
    """The session's own profile choice (``/profile``); None: the workspace's or global
    default applies. A worker's is the profile its planner delegated to."""
    workers: list[SessionInfo] = msgspec.field(default_factory=list)
    delegation_status: DelegationStatus | None = None
    """For a worker listed under its planner (``include_workers``): how its delegation went
    (``failed`` and ``cancelled`` too, which its turn may not show); None elsewhere."""


class TurnInfo(msgspec.Struct, kw_only=True):
    """One turn and what it cost."""

    id: str
    session_id: str
    index: int
    status: TurnStatus
    model: str | None
    started_at: datetime
    ended_at: datetime | None = None
    usage: Usage = Usage()
    cost_usd: Decimal = ZERO_USD
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` charged for calls cut short, estimated by Switchman."""
    llm_calls: int = 0
    tool_calls: int = 0
    error: ErrorInfo | None = None
    summary: str = ""
    decision: RouteDecided | None = None


class ToolActivity(msgspec.Struct, frozen=True, omit_defaults=True):
    """A tool call shown while it runs and when it ends."""

    id: str
    name: str
    status: Literal["running", "done", "error"]
    input: dict[str, Any] | None = None
    summary: str | None = None
    approval: ApprovalRecord | None = None
    """On a result: the question the call asked first and its answer, as the session keeps
    it (a chat shows the same line live and rebuilt)."""
    superseded_approvals: list[ApprovalRecord] | None = None
    """On a ``delegate`` result: the questions asked before ``approval`` and superseded by it
    (asked again, the worker's model having changed), oldest first, as a session read has them."""
    output: str | None = None
    """On a result the chat shows (a command's output): the result's text, as the model got
    it and the session keeps it."""


DeltaKind = Literal["text", "tool_call", "tool_result", "command_output", "notice"]


class ChatDelta(msgspec.Struct, frozen=True, omit_defaults=True):
    """A piece of streamed output."""

    session_id: str
    turn_id: str | None
    kind: DeltaKind
    text: str | None = None
    tool: ToolActivity | None = None


class TurnResult(msgspec.Struct, kw_only=True):
    """The outcome of ``switchman/chat``: a finished turn, or a command's answer."""

    kind: Literal["turn", "command"]
    session_id: str
    turn_id: str | None
    status: Literal["completed", "cancelled", "failed"]
    model: str | None
    text: str
    usage: Usage = Usage()
    cost_usd: Decimal = ZERO_USD
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` that is Switchman's estimate (a call stopped, failed or
    cut off before the provider reported its usage); zero when all of it was reported."""
    error: ErrorInfo | None = None
    summary: str = ""
    banners: list[str] = msgspec.field(default_factory=list)


class RouteNotice(msgspec.Struct, frozen=True):
    """Sent once at the start of a turn."""

    session_id: str
    turn_id: str
    model: str | None
    summary: str
    banners: list[str]
    decision: RouteDecided


class SwapResult(msgspec.Struct, frozen=True):
    """The outcome of setting or clearing a sticky model."""

    outcome: Literal["applied", "cleared", "queued", "unchanged"]
    session_id: str
    sticky_model: str | None
    pending_swap: PendingSwapInfo | None
    message: str


class StatusSnapshot(msgspec.Struct, frozen=True):
    """What a workspace's status bar shows."""

    workspace: str
    session_id: str | None
    active_model: str | None
    sticky_model: str | None
    pending_swap: PendingSwapInfo | None
    turn_in_flight: bool
    banners: list[str]
    cost_today_usd: Decimal
    config_errors: int
    profile: ProfileInForce | None = None
    estimated_today_usd: Decimal = ZERO_USD
    """The part of ``cost_today_usd`` that is Switchman's estimate (calls cut short)."""


class ModelCost(msgspec.Struct, frozen=True):
    """Spend on one model."""

    model: str
    cost_usd: Decimal
    turns: int
    input_tokens: int
    output_tokens: int
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` that is Switchman's estimate."""


class WorkerCost(msgspec.Struct, frozen=True):
    """Spend of one worker session."""

    session_id: str
    parent_tool_use_id: str | None
    model: str | None
    cost_usd: Decimal
    turns: int
    title: str = ""
    """The worker's task as its session is titled (the first line of what it was handed)."""
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` that is Switchman's estimate."""
    status: DelegationStatus | None = None
    """How its delegation went, as ``switchman/session``'s ``delegations`` say (null for a
    worker's own workers, whose delegations its planner's session does not list)."""
    error: str | None = None
    """The delegation's error when it failed or was stopped (``worker_error``, ``timeout``)."""


class CostBreakdown(msgspec.Struct, frozen=True):
    """A session's spend by model, planner and workers."""

    total_usd: Decimal
    by_model: list[ModelCost]
    planner_usd: Decimal
    workers_usd: Decimal
    workers: list[WorkerCost]
    estimated_usd: Decimal = ZERO_USD
    """The part of ``total_usd`` that is Switchman's estimate (calls cut short before the
    provider reported their usage), workers included."""


class ModelInfo(msgspec.Struct, frozen=True):
    """A model as offered to the user (status bar, model picker)."""

    id: str
    display_name: str
    provider: str
    aliases: list[str]
    tier: str | None
    can_delegate: bool
    configured: bool
    availability: str
    capabilities: Any
    pricing: Any


class ModelList(msgspec.Struct, frozen=True):
    """The answer to ``switchman/models``."""

    sticky_model: str | None
    models: list[ModelInfo]


class Explanation(msgspec.Struct, frozen=True):
    """"Why this model?" for one turn."""

    turn_id: str | None
    decision: RouteDecided | None
    summary: str
    text: str | None


class Preview(msgspec.Struct, frozen=True):
    """Where a draft would go, without sending it."""

    model: str | None
    summary: str
    message: str
    decision: RouteDecided | None
    text: str | None
    error: ErrorInfo | None
    command: str | None


class SessionList(msgspec.Struct, frozen=True):
    """The answer to ``switchman/sessions``."""

    current_session_id: str | None
    sessions: list[SessionInfo]


class DelegationRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One delegation of a session, from its recorded events (``switchman/session``'s
    ``delegations``): what an editor needs to rebuild the delegation's card."""

    tool_use_id: str
    """The planner's ``delegate`` call, or the user's delegation id (``user_…``)."""
    worker_session_id: str
    source: Literal["planner", "user"]
    started_at: datetime
    task: str
    tier: str
    """The tier asked for."""
    worker_tier: str | None
    """The tier the worker ran on (after the tier floor and any upgrade)."""
    tier_floor: str | None
    floor_applied: bool
    """The tier floor lowered ``tier`` to ``worker_tier``."""
    model: str | None
    routed_by: str | None = None
    """What chose the worker's model when its tier did not (``rule: docs questions``)."""
    status: DelegationStatus
    """``queued`` while it waits for a free worker slot (then ``awaiting_approval`` while its
    start waits for the user's answer), ``running`` until it ends; ``failed``
    with ``interrupted`` once the daemon that ran it died (its worker's turn, or for one still
    waiting its planner's turn, marked interrupted)."""
    error: str | None = None
    detail: str | None = None
    queued_at: datetime | None = None
    """When it began waiting for a free worker slot (null: it never waited)."""
    ended_at: datetime | None = None
    """When it ended, for one whose worker started (null while it runs or waits, for one that
    never started, and when its end was never recorded: the daemon running it died)."""
    approvals: list[ApprovalRecord] = msgspec.field(default_factory=list)
    """The questions its worker asked the user (an edit, a command) and their answers, oldest
    first, as the worker's transcript keeps them: a chat rebuilt from the planner's session
    shows them in the planner's turn, as it did live."""
    approval: ApprovalRecord | None = None
    """The question its start asked the user (its worker may change things) and the answer:
    a user's ``/delegate`` has no tool result to keep it with. A planner's is stored here only
    (with ``delegate.started`` or ``delegate.failed``); a session read puts it in its call's
    ``tool_result.approval`` too. None when nothing was asked, and in records kept before
    it was."""
    superseded_approvals: list[ApprovalRecord] = msgspec.field(default_factory=list)
    """The questions about its start asked before ``approval``, oldest first: each was
    answered, then the worker's model changed while it waited and the user was asked again
    (its ``superseded`` says so). A session read puts a planner's in its call's
    ``tool_result.superseded_approvals`` too. Empty when it was asked once."""


class SessionDetail(msgspec.Struct, frozen=True):
    """The answer to ``switchman/session``."""

    session: SessionInfo
    messages: list[Any]
    turns: list[TurnInfo]
    cost: CostBreakdown
    handoff: HandoffEnvelope | None = None
    """A worker's handoff envelope (null for other sessions)."""
    delegations: list[DelegationRecord] = msgspec.field(default_factory=list)
    """The session's delegations (its planner's and the user's own), oldest first."""
    ratings: dict[str, Literal["up", "down"]] = msgspec.field(default_factory=dict)
    """The user's 👍 / 👎 by turn id, as long as the pattern store keeps the turn."""
    applies: list[AppliedCode] = msgspec.field(default_factory=list)
    """The questions the Apply of a turn's code block asked, and their answers, oldest first."""


class AppliedCode(msgspec.Struct, frozen=True):
    """One Apply's question and its answer, in the turn whose answer held the code block."""

    turn_id: str
    approval: ApprovalRecord


class ProfileInfo(msgspec.Struct, frozen=True, omit_defaults=True):
    """A profile as the profile picker shows it."""

    name: str
    description: str
    source: str
    tools: list[str]
    """The tools its turns may use (approval mode applied), sorted."""
    model_policy: ModelPolicy
    approval: str
    skills: list[str] | None
    bounded_by: str | None = None
    """The user's global default profile that bounds this one as the workspace's default in
    force (``tools`` and ``approval`` are then what it is left); absent when not bounded."""
    tools_left_out: list[str] = []
    """The tools the profile would have but its bound takes away, sorted (with ``bounded_by``)."""


class ProfileInForce(msgspec.Struct, frozen=True, omit_defaults=True):
    """The profile a session runs with and where it was chosen (``session``, ``workspace``
    or ``global``); when the workspace's default is bounded by the user's global default,
    also by which profile and what the session is left (absent otherwise)."""

    name: str
    resolved_from: str
    bounded_by: str | None = None
    tools: list[str] | None = None
    """With ``bounded_by``: the tools the session's turns may use, sorted."""
    approval: str | None = None
    """With ``bounded_by``: the approval mode in force."""
    tools_left_out: list[str] = []


class ProfileList(msgspec.Struct, frozen=True):
    """The answer to ``switchman/profiles``."""

    profiles: list[ProfileInfo]
    active: ProfileInForce


class ProfileSwitch(msgspec.Struct, frozen=True):
    """The answer to ``switchman/setProfile``."""

    outcome: Literal["applied", "cleared", "unchanged"]
    session_id: str
    profile: ProfileInForce
    message: str


class QueuePlace(msgspec.Struct, frozen=True, kw_only=True):
    """Where a delegation waiting for a free worker slot stands."""

    position: int
    """1: the next to start when a worker of the planner's turn ends."""
    running: int
    """Workers of the planner's turn running now."""
    limit: int
    """``max_concurrent_workers``: how many may run at once."""

    def reason(self) -> str:
        """Why it waits, in words (``waiting for a free worker: 2 of 2 running``)."""
        ahead = f"; {self.position - 1} ahead of it" if self.position > 1 else ""
        return f"waiting for a free worker: {self.running} of {self.limit} running{ahead}"


class DelegationUpdate(msgspec.Struct, frozen=True, kw_only=True):
    """A delegation as the editor shows it: sent when it starts, as it progresses, and
    when it ends (``switchman/delegation``)."""

    phase: Literal["queued", "awaiting_approval", "started", "progress", "ended"]
    session_id: str
    """The planner's session."""
    turn_id: str | None
    """The planner's turn (None when the user delegated, with ``/delegate``)."""
    tool_use_id: str
    """The planner's ``delegate`` call (for the user's delegations, an id of its own)."""
    worker_session_id: str
    worker_turn_id: str | None
    tier: str
    model: str | None
    task: str
    status: DelegationStatus
    turns: int
    llm_calls: int
    tool_calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    elapsed_seconds: float | None
    """While it waits (queued, awaiting approval): how long it has waited; once its start was
    approved (or needed no approval): its worker's run time, from then; None once it ended
    without ever starting a worker (denied, stopped while it waited, no model)."""
    activity: str | None
    error: str | None
    detail: str | None
    dropped_tools: list[str]
    source: Literal["planner", "user"] = "planner"
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` that is Switchman's estimate (calls cut short)."""
    worker_tier: str | None = None
    """The tier the worker runs in, once routed (``tier`` is the requested one)."""
    tier_floor: str | None = None
    """The planner's tier when the tier floor is on."""
    floor_applied: bool = False
    """The tier floor lowered the requested tier."""
    routed_by: str | None = None
    """What chose the worker's model when its tier did not (``rule: docs questions``)."""
    complexity: str | None = None
    complexity_source: str | None = None
    reasoning_effort: str | None = None
    profile: str | None = None
    """The worker's agent profile (null when the call failed before the handoff)."""
    handoff: HandoffEnvelope | None = None
    """The typed handoff envelope, once the request passed validation and approval."""
    queue: QueuePlace | None = None
    """Its place in line while it waits for a free worker slot (``queued``), else null."""
    approval: ApprovalRecord | None = None
    """On the ``progress`` update of a worker's call that asked the user first: the question
    and its answer as the worker's session keeps it (``not_applied`` when the daemon did not
    apply an allowed change), so the live chat says what a rebuilt one will; else null."""
