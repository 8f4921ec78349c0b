"""Learned recommendations: the pattern-store interface and its scoring (spec §5.5).

A store finds the K past turns most similar to this one ("neighbours") and
the engine scores each model among them:

* success: the sample-size-weighted mean success score of its neighbours;
* cost efficiency: 1 for the cheapest model in the cluster, 0 for the
  dearest (all 0 when every model costs the same);
* score = (1 - cost_weight) * success + cost_weight * cost efficiency.

Two per-workspace settings extend the spec (both off by default, which is
§5.5 exactly): ``similarity_exponent`` weighs each neighbour's samples by its
similarity to that power, and ``neighborhood: per_model`` compares the K
nearest turns *of each model* (:func:`per_model_nearest`) instead of the K
nearest overall. A model the rules rarely choose otherwise has one or two
turns among K, and its success is a guess from those; docs/routing.md has
the reasoning and the measurements.

The top model is recommended with confidence (top - runner_up) / top (0 when
the top score is 0). The chain ignores it below ``min_confidence`` or with
fewer than ``min_sample_size`` supporting samples.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Container, Sequence
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
    similarity: float = 1.0
    """Cosine similarity to the turn being routed (1.0 when the store has none)."""


class PatternRecommendation(msgspec.Struct, frozen=True):
    """The store's suggestion for a turn."""

    model: str
    score: float
    confidence: float
    sample_size: int
    alternatives: list[ModelOption]


class PatternsLoading(msgspec.Struct, frozen=True):
    """The store is still reading the workspace's past turns: slot 4 is skipped, not awaited."""

    turns: int

    @property
    def reason(self) -> str:
        """Slot 4's reason in the chain."""
        return f"learned patterns for this workspace are still loading ({self.turns} turns)"


class TooFewSamples(msgspec.Struct, frozen=True):
    """The workspace's store holds fewer samples than ``min_sample_size``: no recommendation
    could pass that gate, so none is computed (nor the turn's fingerprint, before its
    request has left)."""

    samples: int
    min_sample_size: int

    @property
    def reason(self) -> str:
        """Slot 4's reason in the chain."""
        return (f"too few learned turns in this workspace ({self.samples}, min_sample_size "
                f"{self.min_sample_size})")


class OnlyUnknownModels(msgspec.Struct, frozen=True):
    """Every similar past turn was answered by a model the registry no longer knows (removed
    from models.yaml, or renamed): their rows are kept, but there is nothing to score."""

    models: list[str]
    turns: int

    @property
    def reason(self) -> str:
        """Slot 4's reason in the chain."""
        return (f"the {self.turns} most similar past turns were answered only by models no "
                f"longer in the registry ({', '.join(self.models)}): kept, not scored")


Unavailable = PatternsLoading | TooFewSamples | OnlyUnknownModels
"""Why the store has no recommendation to give before it looks for similar turns."""


class PatternStore(Protocol):
    """Anything that can recommend a model from past turns."""

    def recommend(
        self, ctx: TurnContext, settings: PatternSettings, known: Container[str] | None = None
    ) -> PatternRecommendation | Unavailable | None:
        """The recommendation for ``ctx``, None without similar turns, :class:`TooFewSamples`
        when the workspace has fewer than ``min_sample_size``, or :class:`PatternsLoading`
        while the workspace's turns are read in the background. With ``known`` (the
        registry's model ids), only those models are scored: the turns of a model removed
        from models.yaml stay stored but no longer count (see :func:`neighbourhood`)."""
        ...


def score_neighbors(
    neighbors: Sequence[PatternNeighbor], cost_weight: float, similarity_exponent: float = 0.0
) -> PatternRecommendation | None:
    """Score the models among ``neighbors`` per §5.5; None when there are none.

    With ``similarity_exponent`` > 0 a neighbour's samples weigh ``similarity **
    similarity_exponent`` each in the success and cost means; the sample sizes reported
    (and gated on) are still plain counts.
    """
    counts: dict[str, int] = defaultdict(int)
    weight: dict[str, float] = defaultdict(float)
    success: dict[str, float] = defaultdict(float)
    cost: dict[str, float] = defaultdict(float)
    for n in neighbors:
        samples = max(n.sample_size, 1)
        mass = samples * _closeness(n.similarity, similarity_exponent)
        counts[n.primary_model] += samples
        weight[n.primary_model] += mass
        success[n.primary_model] += n.success_score * mass
        cost[n.primary_model] += n.avg_cost_usd * mass
    if not weight:
        return None
    avg_cost = {m: cost[m] / mass for m, mass in weight.items()}
    high, low = max(avg_cost.values()), min(avg_cost.values())
    options = []
    for model, mass in weight.items():
        efficiency = 0.0 if high == low else (high - avg_cost[model]) / (high - low)
        score = (1 - cost_weight) * (success[model] / mass) + cost_weight * efficiency
        options.append(ModelOption(model, round(score, 6), counts[model]))
    options.sort(key=lambda o: (-o.score, o.model))
    top = options[0]
    runner_up = options[1].score if len(options) > 1 else 0.0
    confidence = 0.0 if top.score <= 0 else (top.score - runner_up) / top.score
    return PatternRecommendation(top.model, top.score, round(confidence, 6), top.sample_size,
                                 options[1:])


NEIGHBOURHOOD_POOL = 256
"""With ``neighborhood: per_model``, each model's K nearest are taken from this many
nearest turns (or K if larger): as good as searching every turn on the MMLU replay, and
no dearer than a plain query, which re-scores a few hundred rows anyway."""


def pool_size(settings: PatternSettings) -> int:
    """How many nearest past turns a store fetches to build the neighbourhood."""
    if settings.neighborhood == "per_model":
        return max(settings.neighbors, NEIGHBOURHOOD_POOL)
    return settings.neighbors


def neighbourhood(models: Sequence[str], settings: PatternSettings,
                  known: Container[str] | None = None) -> list[int]:
    """Which of the fetched turns (their models, nearest first) are scored. With ``known``,
    a turn whose model is not in it (removed from models.yaml, or renamed) is left out: the
    other models among the K nearest decide, as if it were not there (its row is kept, and
    counts again if the model comes back). One set lookup per fetched turn: still O(K)."""
    if settings.neighborhood == "per_model":
        return per_model_nearest(models, settings.neighbors, known)
    nearest = range(min(len(models), settings.neighbors))
    return list(nearest) if known is None else [i for i in nearest if models[i] in known]


def per_model_nearest(models: Sequence[str], k: int,
                      known: Container[str] | None = None) -> list[int]:
    """Indices of the first ``k`` of each model in ``models`` (ordered nearest first), of
    the models in ``known`` only when given."""
    taken: dict[str, int] = defaultdict(int)
    chosen = []
    for i, model in enumerate(models):
        if taken[model] < k and (known is None or model in known):
            taken[model] += 1
            chosen.append(i)
    return chosen


def _closeness(similarity: float, exponent: float) -> float:
    """How much a neighbour counts; a tiny floor keeps a lone orthogonal neighbour's mean."""
    if exponent <= 0:
        return 1.0
    return float(max(similarity, 1e-6) ** exponent)


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
        outcome = PatternNeighbor(model, success_score, sample_size, cost_usd, 1.0)
        self._rows.append(_Remembered(fingerprint(message), outcome))

    def recommend(
        self, ctx: TurnContext, settings: PatternSettings, known: Container[str] | None = None
    ) -> PatternRecommendation | None:
        """Score the most similar past turns (``settings`` says how many and how) of the
        models in ``known``."""
        words = fingerprint(ctx.message)
        scored = [(_jaccard(words, row.words), row.outcome) for row in self._rows]
        nearest = sorted((s for s in scored if s[0] > 0), key=lambda s: -s[0])
        nearest = nearest[: pool_size(settings)]
        chosen = neighbourhood([n.primary_model for _, n in nearest], settings, known)
        return score_neighbors(
            [msgspec.structs.replace(nearest[i][1], similarity=nearest[i][0]) for i in chosen],
            settings.cost_weight, settings.similarity_exponent)


class FixedPatternStore:
    """Always recommends the same thing (for policy tests and dry runs)."""

    def __init__(self, recommendation: PatternRecommendation | None) -> None:
        self.recommendation = recommendation

    def recommend(
        self, ctx: TurnContext, settings: PatternSettings, known: Container[str] | None = None
    ) -> PatternRecommendation | None:
        """The fixed recommendation (whatever its model: policy tests check rejections)."""
        return self.recommendation


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0
