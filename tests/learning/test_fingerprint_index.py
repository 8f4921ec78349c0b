"""Fingerprints put similar requests together; the IVF index finds what brute force finds."""

from __future__ import annotations

import numpy as np
import pytest

from switchman.engine.learning import index as index_module
from switchman.engine.learning.evaluator import (
    Evidence,
    NextAction,
    is_continuation,
    message_hash,
    next_action,
    success_score,
)
from switchman.engine.learning.fingerprint import DIMENSIONS, fingerprint
from switchman.engine.learning.index import VectorIndex
from switchman.engine.routing.context import TurnContext


def fp(message: str, **fields: object) -> np.ndarray:
    context = TurnContext(message=message, **fields)  # type: ignore[arg-type]
    return np.frombuffer(fingerprint(context), np.float32)


def test_similar_requests_are_nearer_than_unrelated_ones() -> None:
    a = fp("Refactor the parser in parse.py to handle edge cases")
    b = fp("refactoring the parser so it handles the edge cases")
    c = fp("What is the capital of France?")
    assert a.shape == (DIMENSIONS,)
    assert float(np.linalg.norm(a)) == pytest.approx(1.0, abs=1e-5)
    assert float(a @ b) > 0.5 > float(a @ c)


def test_structure_counts_beside_words() -> None:
    plain = fp("fix the failing test")
    same_files = fp("fix the failing test", files_touched=("a/b.py",))
    other_files = fp("fix the failing test", files_touched=("x.sql",), has_images=True)
    assert float(same_files @ fp("fix the failing test", files_touched=("c.py",))) \
        > float(same_files @ other_files)
    assert float(plain @ plain) == pytest.approx(1.0, abs=1e-5)


def test_fingerprints_are_stable_and_empty_messages_work() -> None:
    assert np.array_equal(fp("same words"), fp("same words"))
    assert float(np.linalg.norm(fp(""))) > 0  # structure alone still places the turn


def test_message_hash_ignores_case_and_punctuation_only() -> None:
    assert message_hash("Fix the bug!") == message_hash("fix the   bug")
    assert message_hash("Fix the bug") != message_hash("Fix a bug")
    assert "fix" not in message_hash("fix the bug")


def _clustered(rows: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((50, 64)).astype(np.float32)
    data = centres[rng.integers(0, 50, rows)] + 0.6 * rng.standard_normal((rows, 64))
    unit: np.ndarray = (data / np.linalg.norm(data, axis=1, keepdims=True)).astype(np.float32)
    return unit


def test_exact_below_the_partition_limit() -> None:
    data = _clustered(500)
    index = VectorIndex(64)
    for row in data:
        index.add(row)
    found, sims = index.nearest(data[7], 5)
    expected = np.argsort(-(data @ data[7]))[:5]
    assert list(found) == list(expected)
    assert sims[0] == pytest.approx(1.0, abs=0.02)  # int8 codes: close, not exact


def test_partitioned_index_keeps_recall(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "EXACT_LIMIT", 256)
    monkeypatch.setattr(index_module, "CANDIDATES", 600)
    data = _clustered(3000, seed=1)
    index = VectorIndex(64)
    for row in data:
        index.add(row)
    assert index._centroids is not None  # trained: queries no longer scan every row
    assert len(index._candidates(data[0])[0]) < len(data)
    recall = []
    for q in range(0, 3000, 100):
        found, _ = index.nearest(data[q], 10)
        exact = set(np.argsort(-(data @ data[q]))[:10].tolist())
        recall.append(len(exact & set(found.tolist())) / 10)
    assert float(np.mean(recall)) >= 0.9


def test_dropping_the_oldest_shifts_positions() -> None:
    data = _clustered(50)
    index = VectorIndex(64)
    for row in data:
        index.add(row)
    index.drop_oldest(10)
    found, _ = index.nearest(data[20], 1)
    assert len(index) == 40 and found[0] == 10


def test_background_training_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "EXACT_LIMIT", 256)
    data = _clustered(1200, seed=2)
    index = VectorIndex(64, background=True)
    for row in data:
        index.add(row)
    index.wait_for_training()
    found, _ = index.nearest(data[5], 1)
    assert found[0] == 5


@pytest.mark.parametrize(("evidence", "score"), [
    (Evidence(status="completed"), 0.7),
    (Evidence(status="cancelled"), 0.3),
    (Evidence(status="failed"), 0.0),
    (Evidence(status="completed", next_action=NextAction.MOVED_ON), 0.8),
    (Evidence(status="completed", next_action=NextAction.DISMISSED), 0.9),
    (Evidence(status="completed", next_action=NextAction.RESENT), 0.1),
    (Evidence(status="completed", next_action=NextAction.OVERRIDDEN), 0.1),
    (Evidence(status="completed", tool_errors=5), 0.4),
    (Evidence(status="completed", delegations=4, delegations_failed=2), 0.55),
    (Evidence(status="failed", feedback=1), 1.0),
    (Evidence(status="completed", next_action=NextAction.MOVED_ON, feedback=-1), 0.0),
])
def test_rubric(evidence: Evidence, score: float) -> None:
    assert success_score(evidence) == pytest.approx(score)


def test_next_action_classification() -> None:
    same = message_hash("fix it")
    assert next_action(same, "m1", message_hash("Fix it!"), None) is NextAction.RESENT
    assert next_action(same, "m1", same, "m2") is NextAction.REROUTED
    assert next_action(same, "m1", same, "m1") is NextAction.RESENT
    assert next_action(same, "m1", message_hash("now the docs"), "m2") is NextAction.MOVED_ON
    go_on = message_hash("continue")
    assert next_action(go_on, "m1", go_on, None, continuation=True) is NextAction.MOVED_ON
    assert next_action(go_on, "m1", go_on, "m2", continuation=True) is NextAction.REROUTED
    assert [is_continuation(t) for t in ("continue", "OK, go ahead.", "yes please", "fix it",
                                         "", "yes yes yes yes yes yes")] == [
        True, True, True, False, False, False]


def test_sketch_shortlist_keeps_recall_on_real_fingerprints(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Fingerprints are 512 wide; candidates are first scored on a 64-wide sketch.

    The shortlist must find what scoring every candidate exactly finds.
    """
    monkeypatch.setattr(index_module, "EXACT_LIMIT", 256)
    monkeypatch.setattr(index_module, "CANDIDATES", 800)
    monkeypatch.setattr(index_module, "RERANK", 64)
    rng = np.random.default_rng(3)
    vocabulary = [f"{stem}{suffix}" for stem in (
        "parse", "refactor", "test", "commit", "doc", "query", "index", "cache", "deploy",
        "migrate", "route", "token", "stream", "retry", "login", "session", "config", "schema",
        "lint", "thread", "lock", "build", "release", "review", "render", "widget", "plot")
        for suffix in ("", "er", "ing", "s", "ed")]
    messages = [" ".join(rng.choice(vocabulary, rng.integers(4, 20))) for _ in range(3000)]
    data = np.stack([fp(m, estimated_input_tokens=int(rng.integers(10, 9000)))
                     for m in messages])
    index = VectorIndex(DIMENSIONS)
    for row in data:
        index.add(row)
    assert index._axes is not None
    assert index._axes.shape == (DIMENSIONS, index_module.SKETCH_DIMENSIONS)
    decoded = index._codes[:3000].astype(np.float32) * index._scales[:3000, None]
    recall = []
    for _ in range(60):
        query = fp(" ".join(rng.choice(vocabulary, 10)))
        candidates = index._candidates(query)[0]
        assert len(candidates) > 4 * 64  # the sketch really shortlists
        found, _ = index.nearest(query, 10)
        # What scoring every candidate exactly finds (the cells' own recall is tested above).
        exact = set(candidates[np.argsort(-(decoded[candidates] @ query))[:10]].tolist())
        recall.append(len(exact & set(found.tolist())) / 10)
    assert float(np.mean(recall)) >= 0.95


def test_rows_added_after_sorting_are_found_before_and_after_the_next_sort(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(index_module, "EXACT_LIMIT", 256)
    monkeypatch.setattr(index_module, "CANDIDATES", 300)
    monkeypatch.setattr(index_module, "LAYOUT_SLACK", 64)
    data = _clustered(2000, seed=4)
    index = VectorIndex(64)
    index.load(*_encoded(data[:1500]))
    assert index._sorted_end == 1500
    for position in range(1500, 2000):
        index.add(data[position])
        unsorted = index._sorted_end <= position
        found, _ = index.nearest(data[position], 1)
        assert found[0] == position, (position, unsorted)
    assert 1500 < index._sorted_end < 2000  # sorted again on the way, a tail remains


def _encoded(data: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    pairs = [index_module.encode(row) for row in data]
    return np.stack([c for c, _ in pairs]), np.array([s for _, s in pairs], np.float32)


def _varied_messages(count: int, seed: int) -> list[str]:
    """Messages on many topics over a large Zipf-distributed vocabulary (hard for the index)."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = ["".join(rng.choice(letters, rng.integers(3, 10))) for _ in range(8000)]
    zipf = 1 / np.arange(1, len(words) + 1) ** 1.1
    zipf /= zipf.sum()
    topics = [rng.choice(len(words), 30) for _ in range(600)]
    messages = []
    for _ in range(count):
        length = int(rng.integers(5, 50))
        chosen = np.concatenate([rng.choice(len(words), length - length // 2, p=zipf),
                                 rng.choice(topics[int(rng.integers(len(topics)))], length // 2)])
        messages.append(" ".join(words[i] for i in chosen))
    return messages


def test_recall_on_varied_text_at_the_default_settings() -> None:
    """Varied text spreads over many directions: the cells and the sketch must keep up
    (bench/bench_patterns.py measures the same at 100,000 rows)."""
    messages = _varied_messages(12_000, seed=5)
    index = VectorIndex(DIMENSIONS)
    for message in messages[:-60]:
        index.add(fp(message))
    assert index._centroids is not None
    recall = []
    for message in messages[-60:]:
        query = fp(message)
        found = set(index.nearest(query, 10)[0].tolist())
        recall.append(len(found & set(index.exact_nearest(query, 10)[0].tolist())) / 10)
    assert float(np.mean(recall)) >= 0.68  # 0.63 with the earlier 3,000 / 64-wide / 256 settings
