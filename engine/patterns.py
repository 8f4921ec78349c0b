"""Learned recommendations: the pattern-store interface and its scoring (spec §5.5).

A store finds the K past turns most similar to this one ("neighbours") and
the engine scores each model among them:

* success: the sample-size-weighted mean success score of its neighbours;
* cost efficiency: 1 for the cheapest model in the cluster, 0 for the
  dearest (all 0 when every model costs the same);
* score = (1 - cost_weight) * success + cost_weight * cost efficiency.

The top model is recommended with confidence (top - runner_up) / top (0 when
the top score is 0). The chain ignores it below ``min_confidence`` or with
fewer than ``min_sample_size`` supporting samples.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from typing import Protocol

import msgspec

from switchman.engine.config.policy import PatternSettings
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import ModelOption


class PatternNeighbor(msgspec.Struct, frozen=True):
    """The outcome of past turns similar to this one."""

    primary_model: str
    success_score: float
    sample_size: int
    avg_cost_usd: float


class PatternRecommendation(msgspec.Struct, frozen=True):
    """The store's suggestion for a turn."""

    model: str
    score: float
    confidence: float
    sample_size: int
    alternatives: list[ModelOption]


class PatternStore(Protocol):
    """Anything that can recommend a model from past turns."""

    def recommend(
        self, ctx: TurnContext, settings: PatternSettings
    ) -> PatternRecommendation | None:
        """The recommendation for ``ctx``, or None without enough data."""
        ...


def score_neighbors(
    neighbors: Sequence[PatternNeighbor], cost_weight: float
) -> PatternRecommendation | None:
    """Score the models among ``neighbors`` per §5.5; None when there are none."""
    weight: dict[str, int] = defaultdict(int)
    success: dict[str, float] = defaultdict(float)
    cost: dict[str, float] = defaultdict(float)
    for n in neighbors:
        samples = max(n.sample_size, 1)
        weight[n.primary_model] += samples
        success[n.primary_model] += n.success_score * samples
        cost[n.primary_model] += n.avg_cost_usd * samples
    if not weight:
        return None
    avg_cost = {m: cost[m] / samples for m, samples in weight.items()}
    high, low = max(avg_cost.values()), min(avg_cost.values())
    options = []
    for model, samples in weight.items():
        efficiency = 0.0 if high == low else (high - avg_cost[model]) / (high - low)
        score = (1 - cost_weight) * (success[model] / samples) + cost_weight * efficiency
        options.append(ModelOption(model, round(score, 6), samples))
    options.sort(key=lambda o: (-o.score, o.model))
    top = options[0]
    runner_up = options[1].score if len(options) > 1 else 0.0
    confidence = 0.0 if top.score <= 0 else (top.score - runner_up) / top.score
    return PatternRecommendation(top.model, top.score, round(confidence, 6), top.sample_size,
                                 options[1:])


_WORD = re.compile(r"[a-z0-9_]{3,}")


def fingerprint(text: str) -> frozenset[str]:
    """The set of words (3+ characters, lower case) that stands for a turn."""
    return frozenset(_WORD.findall(text.lower()))


class _Remembered(msgspec.Struct, frozen=True):
    words: frozenset[str]
    outcome: PatternNeighbor


class InMemoryPatternStore:
    """A small store kept in memory: k-NN by word overlap (Jaccard similarity)."""

    def __init__(self) -> None:
        self._rows: list[_Remembered] = []

    def add(self, message: str, model: str, success_score: float, cost_usd: float,
            sample_size: int = 1) -> None:
        """Remember the outcome of a past turn."""
        outcome = PatternNeighbor(model, success_score, sample_size, cost_usd)
        self._rows.append(_Remembered(fingerprint(message), outcome))

    def recommend(
        self, ctx: TurnContext, settings: PatternSettings
    ) -> PatternRecommendation | None:
        """Score the ``settings.neighbors`` most similar past turns."""
        words = fingerprint(ctx.message)
        scored = [(_jaccard(words, row.words), row.outcome) for row in self._rows]
        nearest = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])
        return score_neighbors([n for _, n in nearest[: settings.neighbors]],
                               settings.cost_weight)


class FixedPatternStore:
    """Always recommends the same thing (for policy tests and dry runs)."""

    def __init__(self, recommendation: PatternRecommendation | None) -> None:
        self.recommendation = recommendation

    def recommend(
        self, ctx: TurnContext, settings: PatternSettings
    ) -> PatternRecommendation | None:
        """The fixed recommendation."""
        return self.recommendation


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0
