"""The ``route.decided`` record (spec §7.1): one per routing decision."""

from __future__ import annotations

from enum import StrEnum

import msgspec

from switchman.engine.events import Event


class Policy(StrEnum):
    """The seven slots of the policy chain, in order."""

    PER_MESSAGE_OVERRIDE = "PER_MESSAGE_OVERRIDE"
    MANUAL_STICKY = "MANUAL_STICKY"
    CONFIGURED_RULES = "CONFIGURED_RULES"
    PATTERN_RECOMMENDATION = "PATTERN_RECOMMENDATION"
    DELEGATE_REQUEST = "DELEGATE_REQUEST"
    WORKSPACE_DEFAULT = "WORKSPACE_DEFAULT"
    GLOBAL_DEFAULT = "GLOBAL_DEFAULT"


CHAIN_ORDER = tuple(Policy)


class Verdict(StrEnum):
    """What one policy's evaluation came to."""

    NOT_APPLICABLE = "not_applicable"
    DEFERRED = "deferred"
    REJECTED = "rejected"
    CHOSE = "chose"


class ValidationFailure(StrEnum):
    """Why a candidate model was rejected."""

    NOT_CONFIGURED = "not_configured"
    PROVIDER_UNAVAILABLE = "provider_unavailable"
    NO_VISION_SUPPORT = "no_vision_support"
    EXCEEDS_CONTEXT_WINDOW = "exceeds_context_window"
    NO_TOOL_SUPPORT = "no_tool_support"
    NO_SYSTEM_PROMPT_SUPPORT = "no_system_prompt_support"
    NO_STRUCTURED_OUTPUT_SUPPORT = "no_structured_output_support"
    UNKNOWN_MODEL = "unknown_model"
    ABOVE_TIER_FLOOR = "above_tier_floor"


class ModelOption(msgspec.Struct, frozen=True):
    """A model the pattern store scored."""

    model: str
    score: float
    sample_size: int


class TierChoice(msgspec.Struct, frozen=True, kw_only=True):
    """For DELEGATE_REQUEST: how the worker's tier and candidate were arrived at."""

    requested_tier: str
    """The tier the planner asked for."""
    tier: str
    """The tier this candidate belongs to (after the floor and any upgrade)."""
    candidate: int
    """The candidate's position in the tier's (or the complexity override's) list, from 1."""
    complexity: str | None = None
    complexity_source: str | None = None
    """``given`` (the planner named it) or ``estimated`` (from the task's size and files)."""
    complexity_override: bool = False
    """The candidate comes from the tier's list for this complexity, not the tier's own."""
    tier_floor: str | None = None
    """The planner's tier when the tier floor is on: no worker tier above it."""
    floor_applied: bool = False
    """The floor lowered the requested tier."""
    reasoning_effort: str | None = None
    """The effort sent to the provider with the worker's calls."""
    effort_note: str | None = None
    """Why the tier's reasoning effort is not sent (the model has no such setting)."""


class PolicyEvaluation(msgspec.Struct, frozen=True, kw_only=True):
    """One policy's contribution to a decision."""

    policy: Policy
    verdict: Verdict
    candidate_model: str | None
    reason: str
    rule_name: str | None = None
    confidence: float | None = None
    sample_size: int | None = None
    """For PATTERN_RECOMMENDATION: how many past turns support the suggestion."""
    pattern_alternatives: list[ModelOption] | None = None
    validation_failure: ValidationFailure | None = None
    outage_scope: str | None = None
    """Set with ``provider_unavailable``: ``model`` or ``provider`` (which outage)."""
    tier_choice: TierChoice | None = None
    """Set for DELEGATE_REQUEST candidates."""


class ProfileChoice(msgspec.Struct, frozen=True, omit_defaults=True):
    """The agent profile a turn ran with, and where it was chosen: ``session``
    (``/profile``, or the planner for a worker), ``workspace`` or ``global``."""

    name: str
    resolved_from: str
    bounded_by: str | None = None
    """A workspace's default bounded by the user's global default profile: that profile's
    name (absent otherwise, and in records kept before it)."""


class RouteDecided(Event, frozen=True, kw_only=True, tag="route.decided"):
    """The single record that answers "why this model?" for one turn.

    When nothing validates, ``chosen_model`` and ``winner_index`` are None and
    the turn does not start; the record still explains what was tried.
    """

    turn_id: str
    chain: list[PolicyEvaluation]
    winner_index: int | None
    chosen_model: str | None
    elapsed_ms: float
    workspace: str | None = None
    banners: list[str] = msgspec.field(default_factory=list)
    profile: ProfileChoice | None = None

    @property
    def winner(self) -> PolicyEvaluation | None:
        """The evaluation that chose the model."""
        return None if self.winner_index is None else self.chain[self.winner_index]
