"""The typed handoff envelope (spec 004): what exactly a planner handed to a worker.

Every delegation records one, built once the request has passed validation
(arguments, profile, approval) and before the worker's first call: who
hands over to whom (sessions and profiles), why, the typed input (task,
context references, output schema), the capability scope (tools, approval
mode), a snapshot of the model policy (tier and what each tier resolved to
at that moment), the budget context and trace ids. It travels on the
``delegate.started`` event, in every ``switchman/delegation`` notification,
and stays with the worker session (``switchman/session`` returns it), so an
editor can show exactly what a worker was given. A request refused before
the handoff (an unknown profile, bad arguments) never gets one: it fails with
a typed error result instead.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

import msgspec

from switchman.engine.delegation.contract import ContextSpec

ENVELOPE_VERSION = 1
INTENT_CHARS = 120

HandoffReason = Literal["planner_delegate", "user_delegate"]
"""``planner_delegate``: the planner model called ``delegate``; ``user_delegate``: the user
handed the task over (``/delegate``)."""


class HandoffProfile(msgspec.Struct, frozen=True):
    """A profile at one end of a handoff, and where it was chosen."""

    name: str
    resolved_from: str


class HandoffSource(msgspec.Struct, frozen=True, kw_only=True):
    """The planner: its session, turn, the ``delegate`` call, its model and profile."""

    session_id: str
    turn_id: str
    tool_use_id: str
    model: str
    profile: HandoffProfile


class HandoffTarget(msgspec.Struct, frozen=True, kw_only=True):
    """The worker: its session (null until it exists), profile, the tier asked for and the
    tier it runs on (``worker_tier``: lower when the tier floor capped it; None in records
    kept before it was)."""

    session_id: str | None
    profile: HandoffProfile
    tier: str
    worker_tier: str | None = None


class HandoffInput(msgspec.Struct, frozen=True, kw_only=True):
    """What the worker is asked to do, as typed arguments (never a raw prompt)."""

    task: str
    context: ContextSpec
    output_schema: dict[str, Any] | None = None


class CapabilityScope(msgspec.Struct, frozen=True, kw_only=True):
    """What the worker may do."""

    tools: list[str]
    """Its tools: the planner's (or ``allowed_tools``) ∩ the worker profile's, sorted."""
    dropped_tools: list[str]
    """Tools the planner named that no worker gets."""
    withheld_tools: dict[str, str] = {}
    """Other tools the planner named that this worker does not get, with why (the planner
    lacks them, the worker's profile forbids them); the planner is told these too."""
    approval: str
    """The worker profile's approval mode (``ask`` or ``read_only``)."""
    approval_required: bool
    """Whether the delegation itself needed the user's approval (write or execute tools)."""


class ModelPolicySnapshot(msgspec.Struct, frozen=True, kw_only=True):
    """The model policy the worker is routed by, as it stood at the handoff."""

    tier: str
    profile_model: str | None
    """The worker profile's own model, tried before the tier."""
    tiers: dict[str, str]
    """Each tier's model at this moment (the worker profile's overrides applied)."""
    reasoning_effort: str | None = None
    """The worker profile's effort, replacing the tier's (null: the tier's own)."""


class BudgetContext(msgspec.Struct, frozen=True, kw_only=True):
    """The limits the worker runs under and the spend around it."""

    max_tokens: int | None
    timeout_seconds: float
    max_concurrent_workers: int
    planner_session_cost_usd: Decimal
    cost_today_usd: Decimal


class TraceIds(msgspec.Struct, frozen=True, kw_only=True):
    """Ids that correlate the handoff with everything else recorded about it."""

    trace_id: str
    """The planner's turn: every handoff of one user turn shares it."""
    handoff_id: str
    parent_session_id: str
    parent_turn_id: str
    parent_tool_use_id: str


class HandoffEnvelope(msgspec.Struct, frozen=True, kw_only=True):
    """One handoff from a planner to a worker (spec 004's typed handoff contract)."""

    version: int = ENVELOPE_VERSION
    id: str
    created_at: datetime
    reason: HandoffReason
    intent: str
    """The task's first line (at most 120 characters), for one line of UI."""
    source: HandoffSource
    target: HandoffTarget
    input: HandoffInput
    capability_scope: CapabilityScope
    model_policy: ModelPolicySnapshot
    budget: BudgetContext
    trace: TraceIds

    def with_target_session(self, session_id: str) -> HandoffEnvelope:
        """The envelope once the worker session exists."""
        return msgspec.structs.replace(
            self, target=msgspec.structs.replace(self.target, session_id=session_id))


def intent_of(task: str) -> str:
    """The first non-empty line of ``task``, shortened for one line of UI."""
    line = next((x.strip() for x in task.splitlines() if x.strip()), "")
    return line if len(line) <= INTENT_CHARS else line[:INTENT_CHARS - 1] + "…"


def encode(envelope: HandoffEnvelope) -> str:
    """The envelope as JSON text (kept with the worker session)."""
    return msgspec.json.encode(envelope).decode()


def decode(text: str | None) -> HandoffEnvelope | None:
    """An envelope kept as JSON text; None when there is none (or it cannot be read)."""
    if not text:
        return None
    try:
        return msgspec.json.decode(text, type=HandoffEnvelope)
    except msgspec.DecodeError:  # written by a newer Switchman: show nothing rather than fail
        return None
