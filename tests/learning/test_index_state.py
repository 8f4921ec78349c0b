"""A reopened store restores its saved training instead of scanning every row while it
trains again; a saved file that does not fit its rows is ignored."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import numpy as np

from switchman.engine.clock import ManualClock
from switchman.engine.learning import database, index_state
from switchman.engine.learning.evaluator import Evidence
from switchman.engine.learning.fingerprint import DIMENSIONS
from switchman.engine.learning.index import VectorIndex, encode
from switchman.engine.learning.store import INDEX_FOLDER, LearnedPatternStore
from switchman.engine.routing.context import TurnContext

WS = "/work/project"
ROWS = 3000


def _vectors(count: int, seed: int) -> np.ndarray:
    """Unit vectors around 60 directions (clustered, as fingerprints are)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((60, DIMENSIONS)).astype(np.float32)
    data = centres[rng.integers(0, 60, count)] + rng.standard_normal(
        (count, DIMENSIONS)).astype(np.float32)
    normalised: np.ndarray = data / np.linalg.norm(data, axis=1, keepdims=True)
    return normalised


def _fill(path: Path, vectors: np.ndarray, first: int = 0) -> None:
    """Rows written straight into the database, as a daemon's earlier turns left them."""
    connection = database.connect(path)
    with connection:
        connection.execute("BEGIN")
        for i, vector in enumerate(vectors, start=first):
            codes, scale = encode(vector)
            database.insert(connection, database.PatternRow(
                workspace=WS, turn_id=f"t{i}", session_id="s", model=f"m{i}",
                recorded_at="2026-11-23T00:00:00+00:00", cost_usd=0.0, message_hash="h",
                codes=codes.tobytes(), scale=scale, evidence=Evidence(status="completed"),
                success=1.0))
    connection.close()


def _open(path: Path, *, background: bool) -> LearnedPatternStore:
    return LearnedPatternStore(database.connect(path), ManualClock(), background=background)


def _answers(store: LearnedPatternStore, queries: np.ndarray) -> list[list[str]]:
    store.fingerprint(TurnContext(message="", workspace_path=WS))  # imports numpy's side
    index = store.index_of(WS)
    space = store._workspaces[WS]
    return [[space.turn_ids[p] for p in index.nearest(q, 10)[0].tolist()] for q in queries]


def _trained_store(path: Path, queries: np.ndarray) -> list[list[str]]:
    """Open the filled store once (training and saving its index); its answers."""
    store = _open(path, background=False)
    answers = _answers(store, queries)
    assert store.index_of(WS).trainings == 1
    store.connection.close()
    return answers


def test_a_reopened_store_answers_its_first_queries_from_the_saved_index(
        tmp_path: Path) -> None:
    path = tmp_path / database.FILE_NAME
    _fill(path, _vectors(ROWS, seed=1))
    queries = _vectors(20, seed=2)
    before = _trained_store(path, queries)
    assert len(list((tmp_path / INDEX_FOLDER).glob("*.npz"))) == 1
    # As the daemon opens it: training would run on a thread, and every query until it
    # finished would score all the rows.
    reopened = _open(path, background=True)
    index = reopened.index_of(WS)
    assert _answers(reopened, queries) == before  # the same index, so the same answers
    assert index.full_scans == 0
    assert index.trainings == 0


def test_rows_added_since_the_save_are_placed_not_retrained(tmp_path: Path) -> None:
    path = tmp_path / database.FILE_NAME
    vectors = _vectors(ROWS + 200, seed=3)
    _fill(path, vectors[:ROWS])
    _trained_store(path, vectors[:5])
    _fill(path, vectors[ROWS:], first=ROWS)
    reopened = _open(path, background=True)
    index = reopened.index_of(WS)
    space = reopened._workspaces[WS]
    for i in range(ROWS, ROWS + 200, 20):  # each new row is found as its own nearest
        assert space.turn_ids[int(index.nearest(vectors[i], 1)[0][0])] == f"t{i}"
    assert (index.trainings, index.full_scans) == (0, 0)


def test_a_file_that_does_not_fit_is_ignored_and_the_store_trains(tmp_path: Path) -> None:
    path = tmp_path / database.FILE_NAME
    _fill(path, _vectors(ROWS, seed=4))
    queries = _vectors(10, seed=5)
    before = _trained_store(path, queries)
    saved = next((tmp_path / INDEX_FOLDER).glob("*.npz"))
    for damage in (b"not a zip file", saved.read_bytes()[:1000]):  # garbage, cut short
        good = saved.read_bytes()
        saved.write_bytes(damage)
        reopened = _open(path, background=False)
        assert _answers(reopened, queries) == before
        assert reopened.index_of(WS).trainings == 1
        reopened.connection.close()
        assert saved.read_bytes() != damage  # the training saved a good file again
        saved.write_bytes(good)
    # The same ids holding other fingerprints (ids are reused once rows are forgotten).
    other = _open(path, background=False)
    other.forget(WS)
    assert not saved.exists()
    other.connection.close()
    saved.write_bytes(good)
    _fill(path, _vectors(ROWS, seed=6))
    assert _open(path, background=False).index_of(WS).trainings == 1


def test_a_state_of_another_width_or_version_is_not_read(tmp_path: Path) -> None:
    index = VectorIndex(DIMENSIONS)
    states: list[index_state.IndexState] = []
    index.on_trained = states.append
    codes = np.stack([encode(v)[0] for v in _vectors(1500, seed=7)])
    index.load(codes, np.ones(1500, np.float32), np.arange(1500, dtype=np.int64))
    saved = tmp_path / "state.npz"
    index_state.write(saved, states[0])
    assert index_state.read(saved, DIMENSIONS) is not None
    assert index_state.read(saved, DIMENSIONS + 8) is None
    with np.load(saved) as arrays:
        changed = dict(arrays)
    changed["version"] = np.array([index_state.VERSION + 1, DIMENSIONS, 1500])
    np.savez(saved.open("wb"), **changed)
    assert index_state.read(saved, DIMENSIONS) is None


def test_checking_the_saved_rows_costs_no_copy_of_the_store(tmp_path: Path) -> None:
    """Opening a store with a saved index, and each training, checksum every row's codes.
    That took an int64 copy of all the codes, eight times their size (450 MB at 100,000
    rows, at every opening and every training); the sum is now taken as it goes. The
    memory is numpy's, which it reports to tracemalloc: no clock is involved."""
    rows = 20_000
    codes = np.random.default_rng(8).integers(-127, 128, (rows, DIMENSIONS), dtype=np.int8)
    scales, keys = np.ones(rows, np.float32), np.arange(rows, dtype=np.int64)
    expected = codes.astype(np.int64).sum(axis=1)  # what saved files hold: not changed
    tracemalloc.start()
    try:
        assert (index_state.checksum(codes) == expected).all()
        assert tracemalloc.get_traced_memory()[1] < codes.nbytes // 8
        trained = VectorIndex(DIMENSIONS)
        states: list[index_state.IndexState] = []
        trained.on_trained = states.append
        trained.load(codes, scales, keys)
        tracemalloc.reset_peak()
        held = tracemalloc.get_traced_memory()[0]  # the first index, the saved state
        reopened = VectorIndex(DIMENSIONS)
        reopened.load(codes, scales, keys, states[0])
        assert reopened.trainings == 0
        # The reopened index's own arrays (codes, sketches, cells) and the saved state's
        # gathered sketches: about 2.5 times the codes; the int64 copy made it 9.7.
        assert tracemalloc.get_traced_memory()[1] - held < 4 * codes.nbytes
    finally:
        tracemalloc.stop()
