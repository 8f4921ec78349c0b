"""The ``inverted-tiers`` warning: a stronger tier whose model is a lesser one than a weaker
tier's (``tiers: {fast: opus, ..., deep: haiku}``), so the tier floor and a planner asking
for more depth get less.

It is checked wherever a file maps tiers to models: a routing file's ``tiers`` block (each
tier's first model), each complexity level of its ``complexity`` lists (a level a tier
leaves out inherits the tier's list), and a profile's ``tiers``. Only tiers written in the
file being checked are reported, where their model is written.
"""

from __future__ import annotations

from collections.abc import Mapping

from switchman.engine.config import schema as s
from switchman.engine.config.problems import Code, Severity
from switchman.engine.config.registry import ModelRegistry, ModelSpec
from switchman.engine.config.walker import Path, Walker

TierModels = Mapping[str, tuple[str, Path | None]]
"""tier → (its model, where that model is written in this file; None if it is not)."""


def check_tier_order(walker: Walker, registry: ModelRegistry, tiers: TierModels,
                     context: str = "") -> None:
    """Warn once per tier whose model ranks below a weaker tier's, against the weakest such
    tier, at the stronger tier's model — or at the weaker one's, when only that is written in
    this file. ``context`` starts the message (``For large tasks, ``)."""
    known = {t: (spec, at) for t, (model, at) in tiers.items()
             if (spec := registry.get(registry.resolve(model) or "")) is not None}
    for rank, tier in enumerate(s.TIER_NAMES):
        if tier not in known:
            continue
        model, at = known[tier]
        for lower in s.TIER_NAMES[:rank]:
            if lower not in known:
                continue
            other, other_at = known[lower]
            why = _lesser(model, other)
            where = at or other_at
            if why is None or where is None:
                continue
            lead = f"{context}the {tier}" if context else f"The {tier}"
            walker.report(walker.range_at(where), Code.INVERTED_TIERS,
                          f"{lead} tier's {model.id} is a lesser model than the {lower} "
                          f"tier's {other.id} ({why}), so a worker asked for a stronger tier "
                          f"gets a weaker model. Swap them, unless that is what you want.",
                          Severity.WARNING, data={"tier": tier, "below": lower})
            break


def _lesser(model: ModelSpec, other: ModelSpec) -> str | None:
    """Why ``model`` ranks below ``other`` (None if it does not, or that is not known): by the
    tiers models.yaml declares for both, else by price (input + output per million tokens)
    when both have one. A declared tier wins over price: a cheap model may be declared as
    capable as a dear one from another provider."""
    if model.tier in s.TIER_NAMES and other.tier in s.TIER_NAMES:
        if s.TIER_NAMES.index(model.tier) < s.TIER_NAMES.index(other.tier):
            return f"models.yaml declares it {model.tier}, that one {other.tier}"
        return None
    if model.pricing.is_free or other.pricing.is_free:
        return None
    price = model.pricing.input + model.pricing.output
    other_price = other.pricing.input + other.pricing.output
    if price < other_price:
        return f"${price:g} per million tokens in and out, that one ${other_price:g}"
    return None
