"""A small learned store without numpy, against numpy's index over the same rows.

    PYTHONPATH=. .venv/bin/python bench/bench_small_store.py

A workspace with up to ``SMALL_ROWS`` learned turns is scored in plain Python
(``engine/learning/small_workspace.py``) so that the daemon never imports numpy
for it. This times what a turn start asks of the store — ``recommend``: the
fingerprint, the k-NN query and the §5.5 scoring — on the same rows through
both paths in the same run (``small_rows=0`` forces numpy's index), for
chat-sized and long messages, and what ending a turn costs (``record``).
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bench_support import at_least, machine

from switchman.engine.clock import ManualClock
from switchman.engine.config.policy import PatternSettings
from switchman.engine.learning import database
from switchman.engine.learning.fingerprint import fingerprint
from switchman.engine.learning.small_workspace import SMALL_ROWS
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.routing.context import TurnContext

WORKSPACE = "/bench/small"
MODELS = ["anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6", "openai:gpt-5"]


def corpus(lines_per_message: int, count: int, seed: int) -> list[str]:
    """Messages made of lines of the project's own documentation (real prose and code)."""
    docs = Path(__file__).resolve().parents[1] / "docs"
    lines = [line.strip() for path in sorted(docs.glob("*.md"))
             for line in path.read_text().splitlines() if line.strip()]
    rng = random.Random(seed)
    return [" ".join(rng.choice(lines) for _ in range(lines_per_message)) for _ in range(count)]


def filled(rows: int, messages: list[str], small_rows: int) -> LearnedPatternStore:
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False,
                                small_rows=small_rows)
    for i, message in enumerate(messages[:rows]):
        store.record(TurnRecord(context=TurnContext(message=message, workspace_path=WORKSPACE),
                                turn_id=f"t{i}", session_id=f"s{i}", model=MODELS[i % 3],
                                status="completed"))
    store.wait_loaded(WORKSPACE)
    return store


def percentiles(action: Callable[[TurnContext], object],
                contexts: list[TurnContext]) -> tuple[float, float]:
    """p50 and p99 in milliseconds, one call per context (after one warm-up call)."""
    action(contexts[0])
    samples = []
    for ctx in contexts:
        started = time.perf_counter()
        action(ctx)
        samples.append(time.perf_counter() - started)
    samples.sort()
    return statistics.median(samples) * 1e3, samples[int(len(samples) * 0.99)] * 1e3


def main(queries: int) -> None:
    """Print a Markdown table."""
    settings = PatternSettings()
    print(f"{machine()}\n")
    print("| message | rows | recommend, plain Python: p50 / p99 ms | numpy's index, same rows "
          "(reference) | ratio (p50) | fingerprint alone (informational): p50 ms |")
    print("|---|---|---|---|---|---|")
    for label, lines in (("a sentence (~80 chars)", 1), ("a long message (~2,600 chars)", 40)):
        messages = corpus(lines, SMALL_ROWS + queries, seed=lines)
        contexts = [TurnContext(message=m, workspace_path=WORKSPACE)
                    for m in messages[SMALL_ROWS:]]
        prints = percentiles(fingerprint, contexts)
        for rows in (50, SMALL_ROWS):
            python = filled(rows, messages, SMALL_ROWS)
            numpy = filled(rows, messages, 0)
            ours = percentiles(partial(python.recommend, settings=settings), contexts)
            theirs = percentiles(partial(numpy.recommend, settings=settings), contexts)
            print(f"| {label} | {rows} | {ours[0]:.3f} / {ours[1]:.3f} | {theirs[0]:.3f} / "
                  f"{theirs[1]:.3f} | {ours[0] / theirs[0]:.2f}x | {prints[0]:.3f} |")
    messages = corpus(1, SMALL_ROWS + 1, seed=9)
    recording = {}
    for small_rows in (SMALL_ROWS, 0):
        store = filled(SMALL_ROWS - 1, messages, small_rows)
        started = time.perf_counter()
        store.record(TurnRecord(context=TurnContext(message=messages[-1],
                                                    workspace_path=WORKSPACE),
                                turn_id="last", session_id="s", model=MODELS[0],
                                status="completed"))
        recording[small_rows] = (time.perf_counter() - started) * 1e3
    plain_ms, numpy_ms = recording[SMALL_ROWS], recording[0]
    print(f"\nrecording the {SMALL_ROWS}th turn: plain Python {plain_ms:.2f} ms, numpy's index "
          f"(reference) {numpy_ms:.2f} ms, ratio {plain_ms / numpy_ms:.2f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--queries", type=at_least(1), default=200,
                        help="messages recommended for, per figure (default 200)")
    main(parser.parse_args().queries)
