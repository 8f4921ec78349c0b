"""Delegation tiers: ordered candidates, complexity, the planner's tier, reasoning effort.

A tier names an ordered list of models; a complexity level (``trivial`` …
``large``) may replace that list for one tier. The *tier floor* keeps a
worker at or below its planner's tier, so the planner's own tier has to be
known: :func:`model_tier` decides it. :func:`resolve_effort` is the one place
that decides whether a reasoning-effort hint reaches the provider; profiles
call it with their own effort.
"""

from __future__ import annotations

from decimal import Decimal

from switchman.engine.config.policy import Tiers
from switchman.engine.config.registry import ModelRegistry, ModelSpec
from switchman.engine.config.schema import COMPLEXITY_LEVELS, EFFORT_LEVELS, TIER_NAMES
from switchman.engine.routing.decision import RouteDecided

GIVEN = "given"
ESTIMATED = "estimated"

COMPLEXITY_THRESHOLDS = (
    ("trivial", 300, 0),
    ("small", 2_000, 1),
    ("medium", 12_000, 5),
)
"""(level, most tokens, most files): the first level whose limits a task stays within;
anything bigger is ``large``. Tokens are the task and the context the planner inlined
(about four characters a token); files are the file and file-range references."""

THINKING_BUDGETS = {"low": 2_048, "medium": 8_192, "high": 16_384}
"""Anthropic extended-thinking budgets (tokens) for each reasoning effort. Thinking counts
as output, so a call's ``max_tokens`` is raised by the budget."""


def tier_rank(tier: str) -> int:
    """0 for fast, 1 for balanced, 2 for deep."""
    return TIER_NAMES.index(tier)


def estimate_complexity(tokens: int, files: int) -> str:
    """The complexity of a task of ``tokens`` (task and inlined context) naming ``files``."""
    for level, most_tokens, most_files in COMPLEXITY_THRESHOLDS:
        if tokens <= most_tokens and files <= most_files:
            return level
    return COMPLEXITY_LEVELS[-1]


def tier_models(tiers: Tiers | None, registry: ModelRegistry, tier: str) -> tuple[str, ...]:
    """The tier's ordered models: the configured list, else the registry's first model
    of that tier."""
    models = tiers.models(tier) if tiers is not None else ()
    if models:
        return models
    fallback = registry.model_for_tier(tier)
    return (fallback,) if fallback else ()


def model_tier(model_id: str, tiers: Tiers | None, registry: ModelRegistry) -> str:
    """The tier ``model_id`` belongs to, for the tier floor.

    The first tier (fast, balanced, deep) whose list names it; else the ``tier`` its
    models.yaml entry declares; else by price: the highest tier whose first model costs
    no more per token than it (a model without prices counts as free, so fast).
    """
    for tier in TIER_NAMES:
        if model_id in tier_models(tiers, registry, tier):
            return tier
    spec = registry.get(model_id)
    if spec is not None and spec.tier in TIER_NAMES:
        return spec.tier
    price = _price(spec)
    found = TIER_NAMES[0]
    for tier in TIER_NAMES:
        models = tier_models(tiers, registry, tier)
        if models and _price(registry.get(models[0])) <= price:
            found = tier
    return found


def _price(spec: ModelSpec | None) -> Decimal:
    if spec is None:
        return Decimal(0)
    return spec.pricing.input + spec.pricing.output


def worker_effort(decision: RouteDecided, model: ModelSpec | None, wanted: str | None
                  ) -> str | None:
    """The reasoning effort a delegated worker's calls are sent with: the one its tier's
    candidate settled on, else (its profile's own model, or a rule, chose the model) its
    profile's, ``wanted``, if the model has the setting."""
    winner = decision.winner
    choice = winner.tier_choice if winner is not None else None
    return choice.reasoning_effort if choice is not None else resolve_effort(model, wanted)[0]


def resolve_effort(model: ModelSpec | None, wanted: str | None) -> tuple[str | None, str | None]:
    """The reasoning effort to send with ``model``'s calls, and a note when ``wanted`` is
    dropped: (effort, None), or (None, why it is ignored), or (None, None) without a hint."""
    if wanted is None:
        return None, None
    if wanted not in EFFORT_LEVELS:
        return None, f"reasoning effort '{wanted}' is not one of {', '.join(EFFORT_LEVELS)}"
    if model is None or not model.capabilities.supports_reasoning_effort:
        name = model.id if model is not None else "the model"
        return None, f"reasoning effort {wanted} ignored: {name} has no reasoning-effort setting"
    return wanted, None


def thinking_budget(effort: str) -> int:
    """The Anthropic thinking budget (tokens) for ``effort``."""
    return THINKING_BUDGETS[effort]
