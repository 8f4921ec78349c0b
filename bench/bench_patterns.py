"""Slot 4's cost per decision with a full pattern store (100,000 turns in one workspace).

Fills ``patterns.db`` with fingerprints of generated messages (one transaction),
opens it as the daemon does after a restart, and measures in the same run:

* the k-NN query alone (``LearnedPatternStore.neighbours``, K = 10);
* a whole route decision through the Router with that store, against the same
  decision with no pattern store (the reference), as a ratio;
* the index's recall@10: how many of the 10 rows an exact scan of every row
  finds (the reference) the index's answer holds, averaged over the queries;
* reopening the store as the daemon does (training on a thread), with the
  saved training beside ``patterns.db`` and without it (as before it was
  saved): the time from opening until a query is answered from the index, and
  how long the queries before that took (each scans every row).

``--text narrow`` draws every message from 40 programming words (the store's
easiest case: few directions); ``--text varied`` (the default) from topics over
a Zipf-distributed vocabulary of 20,000 words, which is harder for the cells
and the sketch. The words are real ones, drawn from the fingerprint's word
table, so every message has a meaning block (relative to the centre of the
first 200 messages, saved with the rows as the store would have it).

    python bench/bench_patterns.py [--rows 100000] [--text varied|narrow]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import numpy.typing as npt
from bench_support import at_least

import switchman.engine.learning  # noqa: F401  (single-threaded BLAS before numpy loads)
from switchman.engine.clock import SystemClock
from switchman.engine.config.policy import PatternSettings
from switchman.engine.config.store import ConfigStore
from switchman.engine.learning import database, meaning
from switchman.engine.learning.evaluator import Evidence, message_hash
from switchman.engine.learning.fingerprint import DIMENSIONS, fingerprint
from switchman.engine.learning.index import EXACT_LIMIT, Codes, VectorIndex, encode
from switchman.engine.learning.store import INDEX_FOLDER, LearnedPatternStore
from switchman.engine.patterns import PatternStore
from switchman.engine.router import Router
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.context import TurnContext

WORKSPACE = "/bench/project"
MIN_ROWS = EXACT_LIMIT + 1
"""A store of EXACT_LIMIT rows or fewer is scanned whole and never indexed (reopening it
would wait for an indexed answer forever), nor is a workspace of SMALL_ROWS given one."""
_VOCABULARY = ("parser refactor test commit docs sql query index cache deploy migrate api route "
         "model token stream error retry auth login user session config yaml json schema "
         "lint type async thread lock file path build release bug fix feature review")
WORDS = _VOCABULARY.split()


def narrow_message(rng: random.Random) -> str:
    """A plausible request of 6-30 words from a small programming vocabulary."""
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30)))


class VariedText:
    """Messages on 2,000 topics: half of each message's words from its topic's 40, the
    rest from a Zipf-distributed vocabulary of 20,000 words of the word table."""

    def __init__(self, seed: int = 7) -> None:
        rng = random.Random(seed)
        table = meaning.table()
        assert table is not None, "the word table cannot be read"
        self.words = rng.sample(sorted(table.words()), 20_000)
        self.weights = list(itertools.accumulate(1 / (rank + 1) ** 1.1
                                                 for rank in range(len(self.words))))
        self.topics = [rng.sample(self.words, 40) for _ in range(2000)]

    def __call__(self, rng: random.Random) -> str:
        topic = rng.choice(self.topics)
        length = rng.randint(5, 60)
        common = rng.choices(self.words, cum_weights=self.weights, k=length - length // 2)
        return " ".join(rng.sample(common + rng.choices(topic, k=length // 2), length))


def fill(path: Path, rows: int, message: Callable[[random.Random], str],
         centre: meaning.Centre) -> tuple[float, Codes, npt.NDArray[np.float32]]:
    """Write ``rows`` turns and the workspace's ``centre`` straight into the database;
    returns seconds and the rows' codes."""
    rng = random.Random(0)
    connection = database.connect(path)
    started = time.perf_counter()
    evidence = Evidence(status="completed")
    all_codes = np.zeros((rows, DIMENSIONS), np.int8)
    scales = np.zeros(rows, np.float32)
    with connection:
        connection.execute("BEGIN")
        database.save_centre(connection, WORKSPACE, centre)
        for i in range(rows):
            ctx = TurnContext(message=message(rng), workspace_path=WORKSPACE,
                              estimated_input_tokens=rng.randint(100, 50_000))
            codes, scale = encode(np.frombuffer(fingerprint(ctx, centre.mean), np.float32))
            all_codes[i], scales[i] = codes, scale
            database.insert(connection, database.PatternRow(
                workspace=WORKSPACE, turn_id=f"t{i}", session_id=f"s{i % 500}",
                model=rng.choice(["anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6"]),
                recorded_at="2026-11-23T00:00:00+00:00", cost_usd=rng.random() / 10,
                message_hash=message_hash(ctx.message), codes=codes.tobytes(), scale=scale,
                evidence=evidence, success=rng.random()))
    connection.close()
    return time.perf_counter() - started, all_codes, scales


def centre_of(message: Callable[[random.Random], str]) -> meaning.Centre:
    """The workspace's centre of meaning after its first turns (the fill's own messages)."""
    rng, centre = random.Random(0), meaning.Centre()
    while not centre.settled:
        mean = meaning.message_mean(message(rng))
        if mean is not None:
            centre = centre.counting(mean)
    return centre


def recall(codes: Codes, scales: npt.NDArray[np.float32], contexts: list[TurnContext],
           centre: tuple[float, ...] | None, k: int = 10) -> tuple[float, float]:
    """Mean and worst recall@k of the index (as the store builds it on opening) against
    scoring every row exactly."""
    index = VectorIndex(DIMENSIONS)
    index.load(codes, scales)
    found = []
    for ctx in contexts:
        vector = np.frombuffer(fingerprint(ctx, centre), np.float32)
        approximate = set(index.nearest(vector, k)[0].tolist())
        exact = set(index.exact_nearest(vector, k)[0].tolist())
        found.append(len(approximate & exact) / k)
    return statistics.mean(found), min(found)


def percentiles(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    return ordered[len(ordered) // 2] * 1e3, ordered[int(len(ordered) * 0.99)] * 1e3


def timed(fn: object, contexts: list[TurnContext]) -> list[float]:
    """Seconds per call of ``fn(ctx)`` over ``contexts``."""
    samples = []
    for ctx in contexts:
        started = time.perf_counter()
        fn(ctx)  # type: ignore[operator]
        samples.append(time.perf_counter() - started)
    return samples


def reopened(path: Path, contexts: list[TurnContext],
             saved: bool) -> tuple[float, float, list[float]]:
    """Open the store (index training on a thread) and query it until a query is answered
    from the index: seconds to load the rows (and restore the saved training), seconds
    from opening until that query, and each query's seconds (the last one indexed)."""
    if not saved:
        shutil.rmtree(path.parent / INDEX_FOLDER, ignore_errors=True)
    started = time.perf_counter()
    store = LearnedPatternStore(database.connect(path), SystemClock(), background=True)
    store.index_of(WORKSPACE)  # what the first decision does: read the rows
    loaded = time.perf_counter() - started
    samples: list[float] = []
    for ctx in itertools.cycle(contexts):
        scans = store.index_of(WORKSPACE).full_scans
        before = time.perf_counter()
        store.neighbours(ctx, 10)
        samples.append(time.perf_counter() - before)
        if store.index_of(WORKSPACE).full_scans == scans:
            break
    elapsed = time.perf_counter() - started
    store.index_of(WORKSPACE).wait_for_training()  # leaves the file saved for the next run
    store.connection.close()
    return loaded, elapsed, samples


def router(folder: Path, patterns: PatternStore | None) -> Router:
    """The Router the daemon builds, with or without a pattern store."""
    return Router(ConfigStore(folder), clock=SystemClock(), configured=lambda p: True,
                  availability=lambda model, provider: None, patterns=patterns)


def main() -> None:
    """Fill, reopen, measure; print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=at_least(MIN_ROWS), default=100_000,
                        help="learned turns in the store (default 100000)")
    parser.add_argument("--queries", type=at_least(1), default=2000,
                        help="messages timed per figure (default 2000)")
    parser.add_argument("--text", choices=("varied", "narrow"), default="varied",
                        help="the messages' words (default varied)")
    parser.add_argument("--recall-queries", type=at_least(1), default=300,
                        help="messages whose neighbours are checked by an exact scan "
                        "(default 300)")
    args = parser.parse_args()
    message = VariedText() if args.text == "varied" else narrow_message
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / database.FILE_NAME
        centre = centre_of(message)
        fill_seconds, codes, scales = fill(path, args.rows, message, centre)
        started = time.perf_counter()
        store = LearnedPatternStore(database.connect(path), SystemClock(), background=False)
        rng = random.Random(1)
        contexts = [TurnContext(message=message(rng), workspace_path=WORKSPACE,
                                estimated_input_tokens=rng.randint(100, 50_000))
                    for _ in range(args.queries)]
        store.neighbours(contexts[0], 10)  # starts reading the rows (on a thread: 100k rows)
        store.wait_loaded(WORKSPACE)
        store.neighbours(contexts[0], 10)  # trains the index
        assert len(store.neighbours(contexts[0], 10)) == 10, "the store answered nothing"
        load_seconds = time.perf_counter() - started
        query = percentiles(timed(lambda c: store.neighbours(c, 10), contexts))
        fingerprints = percentiles(timed(  # the message's meaning is timed with it
            lambda c: fingerprint(c, centre.mean, meaning.message_mean(c.message)), contexts))
        settings = PatternSettings()
        recommend = percentiles(timed(lambda c: store.recommend(c, settings), contexts))
        per_model = PatternSettings(neighbors=25, neighborhood="per_model",
                                    similarity_exponent=4)
        recommend_per_model = percentiles(timed(lambda c: store.recommend(c, per_model),
                                                contexts))
        with_store, without = router(Path(folder), store), router(Path(folder), None)
        decide = percentiles(timed(lambda c: with_store.decide(RouteRequest(context=c)),
                                   contexts))
        reference = percentiles(timed(lambda c: without.decide(RouteRequest(context=c)),
                                      contexts))
        store.connection.close()
        reopening = {saved: reopened(path, contexts, saved) for saved in (False, True)}
    mean_recall, worst_recall = recall(codes, scales, contexts[: args.recall_queries],
                                       centre.mean)
    print(f"{args.rows} rows of {args.text} text: filled in {fill_seconds:.1f} s, opened and "
          f"indexed in {load_seconds:.1f} s; load average {os.getloadavg()[0]:.1f}")
    print(f"recall@10 against an exact scan ({args.recall_queries} queries): mean "
          f"{mean_recall:.3f}, worst {worst_recall:.1f}")
    print("| measure | p50 ms | p99 ms |")
    print("|---|---|---|")
    for name, (p50, p99) in [("fingerprint (informational)", fingerprints),
                             ("k-NN query (K=10) (informational)", query),
                             ("recommend (fingerprint + query + §5.5 scoring) (informational)",
                              recommend),
                             ("recommend, per-model neighbourhood (25 of each among 256, "
                              "similarity^4) (informational)", recommend_per_model),
                             ("route decision with the store", decide),
                             ("route decision without a store (reference)", reference)]:
        print(f"| {name} | {p50:.3f} | {p99:.3f} |")
    print(f"| decision ratio with / without | {decide[0] / reference[0]:.2f} | "
          f"{decide[1] / reference[1]:.2f} |")
    print("\n| reopening the store | rows loaded, s | until a query is indexed, s | "
          "queries scanning every row | their median ms |")
    print("|---|---|---|---|---|")
    for saved, (loaded, seconds, samples) in reopening.items():
        scanning = samples[:-1]
        median = f"{statistics.median(scanning) * 1e3:.1f}" if scanning else "-"
        print(f"| {'with' if saved else 'without'} the saved training | {loaded:.2f} | "
              f"{seconds:.2f} | {len(scanning)} | {median} |")


if __name__ == "__main__":
    main()
