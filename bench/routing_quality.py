"""Routing quality of the learned lane (slot 4) on per-prompt correctness data.

Replays a CSV of prompts with one correctness column per model (RouteLLM's
MMLU files have this shape) through the real engine: the Router and its
policy chain, the learned pattern store, fingerprints and the §5.5 scoring.
The weak model is the configured default and the strong one is available;
for each prompt, in a shuffled order, the chain decides, the chosen model's
correctness is fed back as explicit 👍/👎 feedback, and the store grows as it
goes. Nothing about a prompt's outcome is known before it is routed.

Exploration: a store that only ever sees the default model cannot learn
that another one does better. A simulated user sends a random share of
prompts to the strong model with ``@alias`` (``--explore``); those calls
count as strong calls like any other.

Each operating point (one ``cost_weight`` of the sweep) is the mean over
``--orders`` shuffled orders. ``strong_share_at_95`` is the cheapest point whose
accuracy reaches 95% of strong-only; after the sweep, ``--refine`` more points
are added one at a time halfway between that point and the next cost_weight
up, so a coarse sweep does not leave it a whole step away.

Tuning discipline (``--split``): each prompt belongs, by a stable hash of its
text, to the *validation* half or the *test* half. Settings are chosen by
running ``--split validation`` only; the figure to report is one run of
``--split test`` with those settings frozen. There is no separate training
set: the learning is online, each prompt learning only from those routed
before it in the same replay (which starts from an empty store).

Output: JSON on stdout; ``--plot FILE`` draws accuracy against the share of
strong calls (needs matplotlib).

    python bench/routing_quality.py --data ../shared/data/routellm/mmlu/responses \\
        --strong gpt-4-1106-preview --weak mistralai/Mixtral-8x7B-Instruct-v0.1 \\
        --strong-price 24.7 --weak-price 0.24 --plot docs/images/routing_quality.png
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import itertools
import json
import math
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench_support import at_least, between

import switchman.engine.learning  # noqa: F401  (single-threaded BLAS before numpy loads)
from switchman.engine.clock import SystemClock
from switchman.engine.config.store import ConfigStore
from switchman.engine.learning import database
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.router import Router
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.overrides import Override
from switchman.engine.tokens import estimate_turn

WORKSPACE = "/bench/workspace"
STRONG, WEAK = "bench:strong", "bench:weak"
TRUE = {"true", "1", "yes", "y", "t"}
FALSE = {"false", "0", "no", "n", "f"}


@dataclass(frozen=True)
class Prompt:
    """One row of the data: the prompt and whether each model answered it correctly."""

    text: str
    strong_ok: bool
    weak_ok: bool
    group: str = ""
    """The file the row came from (the subject, in RouteLLM's MMLU files)."""


@dataclass(frozen=True)
class Point:
    """One operating point, averaged over shuffled orders."""

    cost_weight: float
    strong_share: float
    accuracy: float


def read_prompts(data: Path, strong: str, weak: str, exclude: set[str]) -> list[Prompt]:
    """Every row of the CSV file(s) at ``data``; other columns are ignored."""
    csv.field_size_limit(sys.maxsize)  # a prompt may be a long document (the default: 128 KiB)
    if not data.exists():
        raise SystemExit(f"{data}: no such file or folder")
    # a folder whose name ends in .csv is not a file of prompts
    files = sorted(p for p in data.rglob("*.csv") if p.is_file()) if data.is_dir() else [data]
    if not files:
        raise SystemExit(f"{data}: a folder with no .csv file in it (or its subfolders)")
    prompts = []
    for path in files:
        # utf-8-sig: a spreadsheet's "CSV UTF-8" starts with a byte-order mark, which read as
        # utf-8 became part of the first column's name ("\ufeffprompt": "no column 'prompt'")
        with path.open(newline="", encoding="utf-8-sig") as handle:
            reader = csv.DictReader(handle)
            try:  # each row with the line it ends on (a quoted prompt may span lines)
                check_header(path, reader.fieldnames, ("prompt", strong, weak))
                rows = [(row, reader.line_num) for row in reader]
            except UnicodeDecodeError as error:
                raise SystemExit(f"{path}: not UTF-8 text ({error.reason} at byte "
                                 f"{error.start})") from None
        for row, line in rows:
            if row["prompt"] in exclude:
                continue
            prompts.append(Prompt(row["prompt"], _bool(row, strong, path, line),
                                  _bool(row, weak, path, line), path.stem))
    return prompts


def check_header(path: Path, header: Sequence[str] | None, columns: Sequence[str]) -> None:
    """Exits naming ``path`` unless its first line names every one of ``columns``: an empty
    file, a blank first line or a first row of data would otherwise read as no prompts."""
    expected = ("expected a header line naming the columns "
                f"{', '.join(map(repr, columns[:-1]))} and {columns[-1]!r}")
    if header is None:
        raise SystemExit(f"{path}: the file is empty ({expected})")
    if not any(name.strip() for name in header):
        raise SystemExit(f"{path}: the first line is blank, not a header ({expected})")
    missing = [repr(name) for name in columns if name not in header]
    if missing:
        names = ", ".join(missing[:-1]) + " or " + missing[-1] if len(missing) > 1 else missing[0]
        raise SystemExit(f"{path}: no column {names} in the first line ({', '.join(header)}); "
                         f"{expected}")
    twice = [repr(name) for name in dict.fromkeys(columns) if header.count(name) > 1]
    if twice:  # which of them holds the answers? csv would take the last without a word
        raise SystemExit(f"{path}: the first line names {', '.join(twice)} more than once "
                         f"({', '.join(header)})")


def _bool(row: dict[str, str], column: str, path: Path, line: int) -> bool:
    if row[column] is None:  # a row shorter than the header
        raise SystemExit(f"{path}:{line}: {column} has no value (the row has fewer fields "
                         "than the header)")
    value = row[column].strip().lower()
    if value not in TRUE | FALSE:  # an empty cell too: unknown, not "answered wrongly"
        raise SystemExit(f"{path}:{line}: {column} is {row[column]!r}, not a boolean")
    return value in TRUE


def in_split(prompt: Prompt, split: str) -> bool:
    """Whether ``prompt`` is in ``split`` (``all``, ``validation`` or ``test``): a stable
    half of the prompts each, decided by a hash of the text alone."""
    if split == "all":
        return True
    half = hashlib.blake2b(prompt.text.encode(), digest_size=4).digest()[0] % 2
    return half == (0 if split == "validation" else 1)


def excluded_prompts(path: Path | None) -> set[str]:
    """Prompts listed in a JSON-lines file (``eval_prompt`` or ``prompt`` fields)."""
    if path is None or not path.exists():
        return set()
    found = set()
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            found.add(record.get("eval_prompt") or record.get("prompt") or "")
    return found


def write_config(folder: Path, args: argparse.Namespace, cost_weight: float) -> None:
    """A models.yaml with the two models and a routing.yaml with the weak one as default."""
    model = ("  {id}:\n    aliases: [{alias}]\n    capabilities: {{max_context_tokens: 1000000}}\n"
             "    pricing: {{input: {price}, output: {price}}}\n")
    (folder / "models.yaml").write_text(
        "schema_version: 1\nuse_builtin_models: false\n"
        "providers:\n  bench: {api: openai_compatible, api_key_env: null,"
        " base_url: 'http://127.0.0.1:9/v1'}\nmodels:\n"
        + model.format(id=STRONG, alias="strong", price=args.strong_price)
        + model.format(id=WEAK, alias="weak", price=args.weak_price), "utf-8")
    (folder / "routing.yaml").write_text(
        f"schema_version: 1\nglobal_default: {WEAK}\npattern:\n"
        f"  cost_weight: {cost_weight}\n  min_confidence: {args.min_confidence}\n"
        f"  min_sample_size: {args.min_sample_size}\n  neighbors: {args.neighbors}\n"
        f"  neighborhood: {args.neighborhood}\n"
        f"  similarity_exponent: {args.similarity_exponent}\n", "utf-8")


class Replay:
    """One pass over the prompts in one order, with one configuration."""

    def __init__(self, folder: Path) -> None:
        clock = SystemClock()
        # The store's own fingerprints: their meaning block is relative to the centre this
        # replay's first turns set, so they cannot be computed once for every replay.
        self.patterns = LearnedPatternStore(database.connect(":memory:"), clock,
                                            background=False)
        self.router = Router(ConfigStore(folder), clock=clock, configured=lambda p: True,
                             availability=lambda model, provider: None,
                             patterns=self.patterns)
        self.decision_seconds: list[float] = []

    def run(self, prompts: list[Prompt], order: list[int], explore: set[int],
            prices: dict[str, float], full_feedback: bool = False) -> tuple[float, float]:
        """Route every prompt; returns (share of strong calls, accuracy). With
        ``full_feedback`` (a diagnostic, not a fair evaluation) both models' outcomes are
        recorded after each prompt, as if every prompt had been sent to both."""
        strong = correct = 0
        for step, i in enumerate(order):
            prompt = prompts[i]
            ctx = context(prompt.text)
            turn_id = f"t{step}"
            override = Override("strong", STRONG) if step in explore else None
            started = time.perf_counter()
            decision = self.router.decide(RouteRequest(context=ctx, turn_id=turn_id,
                                                       session_id=f"s{step}", override=override))
            self.decision_seconds.append(time.perf_counter() - started)
            chosen = decision.chosen_model or WEAK
            ok = prompt.strong_ok if chosen == STRONG else prompt.weak_ok
            for model in (STRONG, WEAK) if full_feedback else (chosen,):
                self.learn(ctx, f"{turn_id}-{model}", model,
                           prompt.strong_ok if model == STRONG else prompt.weak_ok, prices)
            strong += chosen == STRONG
            correct += ok
        return strong / len(order), correct / len(order)

    def learn(self, ctx: TurnContext, turn_id: str, model: str, ok: bool,
              prices: dict[str, float]) -> None:
        """Record a finished turn and its correctness as 👍/👎 feedback."""
        self.patterns.record(TurnRecord(
            context=ctx, turn_id=turn_id, session_id=f"s-{turn_id}", model=model,
            status="completed", cost_usd=prices[model] * ctx.estimated_input_tokens / 1e6))
        self.patterns.feedback(turn_id, 1 if ok else -1)


def context(text: str) -> TurnContext:
    """What routing knows about a prompt sent on its own."""
    return TurnContext(message=text, workspace_path=WORKSPACE,
                       estimated_input_tokens=estimate_turn([text]))


def replay_once(prompts: list[Prompt], args: argparse.Namespace, cost_weight: float,
                seed: int) -> tuple[float, float, list[float]]:
    """One shuffled order at one cost_weight: (strong share, accuracy, decision seconds)."""
    rng = random.Random(seed)
    order = list(range(len(prompts)))
    rng.shuffle(order)
    explore = {s for s in range(len(order)) if rng.random() < args.explore}
    prices = {STRONG: args.strong_price, WEAK: args.weak_price}
    with tempfile.TemporaryDirectory() as folder:
        write_config(Path(folder), args, cost_weight)
        replay = Replay(Path(folder))
        share, accuracy = replay.run(prompts, order, explore, prices,
                                     full_feedback=args.feedback == "full")
    print(f"cost_weight {cost_weight} order {seed}: strong {share:.3f} accuracy {accuracy:.4f}",
          file=sys.stderr, flush=True)
    return share, accuracy, replay.decision_seconds[-2000:]  # the store is fullest at the end


def sweep(prompts: list[Prompt], args: argparse.Namespace,
          target: float) -> tuple[list[Point], list[float]]:
    """Every cost_weight of the sweep, then ``--refine`` more between the cheapest point that
    reaches ``target`` and the next one up (:func:`refine`); each point averaged over the
    shuffled orders. Also the decision times of the last replay."""
    points, timings = evaluate(prompts, args, args.cost_weights)

    def more(weights: list[float]) -> list[Point]:
        nonlocal timings
        added, timings = evaluate(prompts, args, weights)
        return added

    points = refine(points, target, args.refine, more)
    return points, timings


def refine(points: list[Point], target: float, steps: int,
           evaluate_at: Callable[[list[float]], list[Point]]) -> list[Point]:
    """``points`` and ``steps`` more, each halfway between the cheapest point whose accuracy
    reaches ``target`` and the point of the next larger cost_weight (which does not reach it):
    a coarse sweep leaves the cheapest operating point up to a whole step away."""
    points = sorted(points, key=lambda p: p.cost_weight)
    for _ in range(steps):
        reaching = [p for p in points if p.accuracy >= target]
        if not reaching:
            break
        cheapest = min(reaching, key=lambda p: p.strong_share)
        above = [p for p in points if p.cost_weight > cheapest.cost_weight]
        if not above or above[0].accuracy >= target:
            break
        middle = round((cheapest.cost_weight + above[0].cost_weight) / 2, 6)
        if middle in (cheapest.cost_weight, above[0].cost_weight):
            break
        points = sorted(points + evaluate_at([middle]), key=lambda p: p.cost_weight)
    return points


def evaluate(prompts: list[Prompt], args: argparse.Namespace,
             weights: list[float]) -> tuple[list[Point], list[float]]:
    """Each cost_weight in ``weights`` averaged over the shuffled orders (in ``--jobs``
    processes); also the decision times of the last replay."""
    tasks = [(w, seed) for w in weights for seed in range(args.orders)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        futures = [pool.submit(replay_once, prompts, args, w, seed) for w, seed in tasks]
        results = [f.result() for f in futures]
    points = []
    for w in weights:
        mine = [r for (weight, _), r in zip(tasks, results, strict=True) if weight == w]
        points.append(Point(w, statistics.mean(r[0] for r in mine),
                            statistics.mean(r[1] for r in mine)))
    return points, results[-1][2]


def share_at(points: list[Point], target: float) -> float | None:
    """The smallest strong share among operating points whose accuracy reaches ``target``."""
    reaching = [p.strong_share for p in points if p.accuracy >= target]
    return min(reaching) if reaching else None


def interpolated_share(points: list[Point], target: float) -> float | None:
    """Where the accuracy-vs-share curve (sorted by share) first crosses ``target``."""
    curve = sorted(points, key=lambda p: p.strong_share)
    for low, high in itertools.pairwise(curve):
        if low.accuracy < target <= high.accuracy:
            return low.strong_share + (target - low.accuracy) * (
                high.strong_share - low.strong_share) / (high.accuracy - low.accuracy)
    return share_at(points, target)


def percentile(samples: list[float], q: float) -> float:
    """The ``q`` quantile of ``samples`` in milliseconds."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))] * 1e3


def plot(path: Path, points: list[Point], strong: float, weak: float, target: float) -> None:
    """Accuracy against the share of strong calls, with random routing for reference."""
    import matplotlib  # noqa: PLC0415  (a bench-only dependency)
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415
    curve = sorted(points, key=lambda p: p.strong_share)
    figure, axes = plt.subplots(figsize=(6.4, 4.4))
    axes.plot([0, 1], [weak, strong], "--", color="grey", label="random routing")
    axes.plot([p.strong_share for p in curve], [p.accuracy for p in curve], "o-",
              label="learned patterns (slot 4)")
    axes.axhline(target, color="tab:red", linewidth=0.8, label="95% of strong-only")
    axes.set_xlabel("share of prompts sent to the strong model")
    axes.set_ylabel("accuracy")
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.tight_layout()
    figure.savefig(path, dpi=120)


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    data_arguments(parser)
    # Each bound is the one routing.yaml's pattern settings or models.yaml's prices have: a
    # value outside it would make the generated configuration invalid (ignored, unnoticed).
    parser.add_argument("--strong-price", type=between(0, math.inf), default=24.7,
                        help="$ per million tokens")
    parser.add_argument("--weak-price", type=between(0, math.inf), default=0.24,
                        help="$ per million tokens")
    parser.add_argument("--orders", type=at_least(1), default=3, help="shuffled orders per point")
    parser.add_argument("--explore", type=between(0, 1), default=0.05,
                        help="share of prompts a simulated user sends to the strong model")
    parser.add_argument("--neighbors", type=at_least(1), default=40)
    parser.add_argument("--neighborhood", choices=("nearest", "per_model"), default="per_model")
    parser.add_argument("--similarity-exponent", type=between(0, 16), default=4.0)
    parser.add_argument("--feedback", choices=("chosen", "full"), default="chosen",
                        help="chosen: only the routed model's outcome is learned (the fair "
                        "evaluation); full: both models' (a diagnostic of neighbourhood "
                        "quality without the cost of exploring)")
    parser.add_argument("--min-confidence", type=between(0, 1), default=0.05)
    parser.add_argument("--min-sample-size", type=at_least(1), default=2)
    parser.add_argument("--cost-weights", type=between(0, 1), nargs="+",
                        default=[0.0, 0.02, 0.04, 0.05, 0.06, 0.08, 0.1, 0.15, 0.3])
    parser.add_argument("--refine", type=at_least(0), default=2,
                        help="cost_weights added, one at a time, halfway between the cheapest "
                        "point reaching 95%% of strong-only accuracy and the next one up")
    parser.add_argument("--jobs", type=at_least(1), default=2, help="replays run in parallel")
    parser.add_argument("--limit", type=at_least(1), help="only the first N prompts (quick runs)")
    parser.add_argument("--plot", type=Path, help="write the curve as a PNG")
    return parser.parse_args(argv)


def data_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that say which data to read (shared with routing_bounds.py)."""
    parser.add_argument("--data", type=Path, required=True, help="a CSV file or a folder of them")
    parser.add_argument("--strong", required=True, help="column of the strong model")
    parser.add_argument("--weak", required=True, help="column of the weak model")
    parser.add_argument("--exclude", type=Path, help="JSON lines of prompts to leave out "
                        "(default: contaminated_prompts.jsonl beside or above --data, if any)")
    parser.add_argument("--split", choices=("all", "validation", "test"), default="all",
                        help="tune on validation, report test (halves by a hash of the prompt)")


def selected_prompts(args: argparse.Namespace) -> tuple[list[Prompt], Path | None]:
    """The prompts :func:`data_arguments` select (first ``--limit`` of them, if given), and
    the file of prompts left out; exits naming ``--data`` when none is left."""
    exclude = args.exclude or default_exclude(args.data)
    prompts = [p for p in read_prompts(args.data, args.strong, args.weak,
                                       excluded_prompts(exclude)) if in_split(p, args.split)]
    if getattr(args, "limit", None):
        prompts = prompts[: args.limit]
    if not prompts:
        raise SystemExit(f"{args.data}: no prompts")
    return prompts, exclude


def random_share(strong: float, weak: float) -> float | None:
    """The share of strong calls random routing needs for 95% of strong-only accuracy
    (None when the strong model is no better)."""
    return (0.95 * strong - weak) / (strong - weak) if strong > weak else None


def default_exclude(data: Path) -> Path | None:
    """contaminated_prompts.jsonl in ``data``'s folder or one of its parents."""
    for folder in [data if data.is_dir() else data.parent, *data.resolve().parents]:
        candidate = folder / "contaminated_prompts.jsonl"
        if candidate.exists():
            return candidate
    return None


def main(argv: list[str] | None = None) -> None:
    """Run the sweep and print the JSON summary."""
    args = arguments(argv)
    prompts, exclude = selected_prompts(args)
    strong = sum(p.strong_ok for p in prompts) / len(prompts)
    weak = sum(p.weak_ok for p in prompts) / len(prompts)
    target = 0.95 * strong
    points, timings = sweep(prompts, args, target)
    summary = {
        "prompts": len(prompts), "split": args.split,
        "excluded_file": str(exclude) if exclude else None,
        "strong_accuracy": round(strong, 4), "weak_accuracy": round(weak, 4),
        "target_accuracy": round(target, 4),
        "strong_share_at_95": _round(share_at(points, target)),
        "strong_share_at_95_interpolated": _round(interpolated_share(points, target)),
        "random_strong_share_at_95": _round(random_share(strong, weak)),
        "note": unreached_note(points, target),
        "settings": {"neighbors": args.neighbors, "neighborhood": args.neighborhood,
                     "similarity_exponent": args.similarity_exponent,
                     "feedback": args.feedback, "min_confidence": args.min_confidence,
                     "min_sample_size": args.min_sample_size, "explore": args.explore,
                     "orders": args.orders, "refine": args.refine},
        "refined_cost_weights": sorted({p.cost_weight for p in points}
                                       - set(args.cost_weights)),
        "decision_ms_p50": round(percentile(timings, 0.5), 3),
        "decision_ms_p99": round(percentile(timings, 0.99), 3),
        "curve": [{"cost_weight": p.cost_weight, "strong_share": round(p.strong_share, 4),
                   "accuracy": round(p.accuracy, 4)} for p in points],
    }
    if args.plot:
        plot(args.plot, points, strong, weak, target)
    if summary["note"]:
        print(summary["note"], file=sys.stderr)
    print(json.dumps(summary, indent=2))


def unreached_note(points: list[Point], target: float) -> str | None:
    """Why ``strong_share_at_95`` is null, when no operating point reaches ``target``."""
    if share_at(points, target) is not None or not points:
        return None
    best = max(points, key=lambda p: p.accuracy)
    return (f"no operating point reached {target:.2%} accuracy (95% of strong-only), so "
            f"strong_share_at_95 is null; the most accurate, cost_weight {best.cost_weight}, "
            f"reached {best.accuracy:.2%} with {best.strong_share:.1%} strong calls. The store "
            "learns too little about the strong model here: try more prompts, lower "
            "--cost-weights or more exploration (--explore).")


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


if __name__ == "__main__":
    main()
