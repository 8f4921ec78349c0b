"""How far a learned router could get on per-prompt correctness data, given more than is fair.

``routing_quality.py`` measures the fair figure: online, each prompt routed before its
outcome is known, and only the chosen model's outcome learned. This script puts reference
points beside it, on the same data (same CSV shape and options), so that its figure can be
read against what the data allows:

* **perfect**: the strong model exactly where only it is right;
* **group oracle**: every prompt of a group (the CSV file it came from: the subject, for
  RouteLLM's MMLU files) routed by the group's true accuracies, known in advance;
* **full-information k-NN**: the engine's own fingerprints (meaning block relative to the
  centre of the first 200 prompts of a shuffled order, as a workspace's first turns set
  it), each prompt routed by the similarity-weighted outcome gap of its K nearest prompts
  in the other folds (5-fold cross-fitting), with *both* models' outcomes known there.

Each figure is the share of strong calls at the cheapest threshold on the predicted gap
whose accuracy reaches 95% of strong-only accuracy; every prompt's predicted gap is a
threshold, so the figure is exact (ties are broken in a seeded random order). The online
figure with both outcomes is ``routing_quality.py --feedback full``.

    python bench/routing_bounds.py --data ../shared/data/routellm/mmlu/responses \\
        --strong gpt-4-1106-preview --weak mistralai/Mixtral-8x7B-Instruct-v0.1
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict

import numpy as np
from bench_support import at_least, between
from routing_quality import (
    Prompt,
    context,
    data_arguments,
    random_share,
    selected_prompts,
)

from switchman.engine.learning import meaning
from switchman.engine.learning.fingerprint import fingerprint

FOLDS = 5


def share_at_95(gap: np.ndarray, strong: np.ndarray, weak: np.ndarray, seed: int = 0) -> float:
    """The least share of strong calls, sending the prompts of largest predicted ``gap``
    first, whose accuracy reaches 95% of the strong model's."""
    ties = np.random.default_rng(seed).random(len(gap))
    order = np.lexsort((ties, -gap))
    accuracy = (weak.sum() + np.concatenate([[0.0], np.cumsum((strong - weak)[order])])) / len(gap)
    return float(np.argmax(accuracy >= 0.95 * strong.mean()) / len(gap))


def group_gaps(prompts: list[Prompt], strong: np.ndarray, weak: np.ndarray) -> np.ndarray:
    """Each prompt's group's true accuracy gap (strong minus weak)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i, prompt in enumerate(prompts):
        members[prompt.group].append(i)
    gap = np.zeros(len(prompts))
    for rows in members.values():
        gap[rows] = strong[rows].mean() - weak[rows].mean()
    return gap


def fingerprints(prompts: list[Prompt], seed: int = 0) -> np.ndarray:
    """The engine's fingerprint of every prompt, relative to the centre of the first
    ``CENTRE_TURNS`` prompts of a shuffled order."""
    order = list(range(len(prompts)))
    random.Random(seed).shuffle(order)
    centre = meaning.Centre()
    for i in order:
        if centre.settled:
            break
        mean = meaning.message_mean(prompts[i].text)
        if mean is not None:
            centre = centre.counting(mean)
    return np.stack([np.frombuffer(fingerprint(context(p.text), centre.mean), np.float32)
                     for p in prompts])


def knn_gaps(vectors: np.ndarray, strong: np.ndarray, weak: np.ndarray, neighbors: int,
             exponent: float, seed: int = 0) -> np.ndarray:
    """Each prompt's gap as its ``neighbors`` nearest in the other folds show it (both
    outcomes known there), weighted by similarity to the power ``exponent``."""
    fold = np.random.default_rng(seed).integers(0, FOLDS, len(vectors))
    outcome_gap = strong - weak
    gap = np.zeros(len(vectors))
    for f in range(FOLDS):
        held, known = np.flatnonzero(fold == f), np.flatnonzero(fold != f)
        k = min(neighbors, len(known))
        if not len(held) or not k:
            continue
        similarity = vectors[held] @ vectors[known].T
        nearest = np.argpartition(-similarity, k - 1, axis=1)[:, :k]
        weights = np.maximum(np.take_along_axis(similarity, nearest, 1), 1e-6) ** exponent
        gap[held] = (outcome_gap[known][nearest] * weights).sum(1) / weights.sum(1)
    return gap


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line (the data options are routing_quality.py's)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    parser.add_argument("--neighbors", type=at_least(1), nargs="+", default=[10, 40, 100, 300])
    parser.add_argument("--similarity-exponent", type=between(0, 16), default=4.0)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    """Print the reference points as JSON."""
    args = arguments(argv)
    prompts, _ = selected_prompts(args)
    strong = np.array([p.strong_ok for p in prompts], float)
    weak = np.array([p.weak_ok for p in prompts], float)
    vectors = fingerprints(prompts)
    summary = {
        "prompts": len(prompts), "split": args.split,
        "groups": len({p.group for p in prompts}),
        "perfect": round(share_at_95(strong - weak, strong, weak), 4),
        "group_oracle": round(share_at_95(group_gaps(prompts, strong, weak), strong, weak), 4),
        "random": None if (share := random_share(strong.mean(), weak.mean())) is None
        else round(share, 4),
        "full_information_knn": {
            str(k): round(share_at_95(knn_gaps(vectors, strong, weak, k,
                                               args.similarity_exponent), strong, weak), 4)
            for k in args.neighbors},
        "similarity_exponent": args.similarity_exponent,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()
