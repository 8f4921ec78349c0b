"""A store with few rows works without numpy, and answers as numpy's index would.

* the fingerprint, now computed in plain Python, gives the codes numpy gave
  (``fingerprints_numpy.json`` was written by the numpy implementation this replaced,
  at commit 0526305), widened by an empty meaning block when there is no centre;
* :class:`ExactIndex` finds the rows :class:`VectorIndex` finds, in the same order;
* a store answers the same with its small workspaces in Python or in numpy, and moves
  a workspace to numpy's index once it outgrows ``small_rows``;
* an engine that ran 50 chat turns into an empty store never imported numpy.

If the fingerprint's content changes on purpose, rewrite the file:
``PYTHONPATH=. .venv/bin/python -m tests.learning.test_small_store``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from array import array
from pathlib import Path

import numpy as np
import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.config.policy import PatternSettings
from switchman.engine.learning import database
from switchman.engine.learning import index as numpy_index
from switchman.engine.learning.fingerprint import (
    DIMENSIONS,
    EARLIER_DIMENSIONS,
    Vector,
    fingerprint,
    widened,
)
from switchman.engine.learning.small_workspace import ExactIndex, SmallWorkspace, encode
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.learning.workspace_index import WorkspaceIndex
from switchman.engine.routing.context import TurnContext

GOLDEN = Path(__file__).with_name("fingerprints_numpy.json")
WS = "/work/project"
LONG = ("Explain why the scheduler starves low-priority jobs when the queue is full; "
        "include code like def run(queue): return sorted(queue, key=lambda j: j.priority). "
        ) * 300
CASES = {
    "empty": TurnContext(),
    "short": TurnContext(message="hi 3"),
    "sql": TurnContext(message="optimise this SQL join query number 4", workspace_path="/w"),
    "command": TurnContext(message="/review the diff in src/app.ts please",
                           estimated_input_tokens=5000),
    "files": TurnContext(message="fix the failing test",
                         files_touched=("a/b.py", "x.SQL", "README"), has_images=True,
                         has_tool_calls_in_history=True),
    "skills": TurnContext(message="Refactor the parser in parse.py to handle edge cases",
                          skills_matching=frozenset({"python", "refactor"}),
                          estimated_input_tokens=70),
    "unicode": TurnContext(message="Übersetze «naïve café» ins Deutsche — 日本語のテキストも 🙂"
                                   " snake_case __init__"),
    "stopwords": TurnContext(message="the of and it is"),
    "long": TurnContext(message=LONG, estimated_input_tokens=len(LONG) // 4),
}
TOPICS = ["optimise the SQL join", "write the README section", "fix the failing unit test",
          "refactor the parser", "explain this stack trace", "translate the error message",
          "prove the lemma about primes", "review the pull request diff"]


def _messages(count: int, seed: int) -> list[str]:
    """Varied chat messages on a few topics (some repeated word for word)."""
    rng = random.Random(seed)
    words = " ".join(TOPICS).split()
    return [f"{rng.choice(TOPICS)} {' '.join(rng.sample(words, rng.randint(0, 6)))}"
            f" {rng.randint(0, 30)}" for _ in range(count)]


def test_the_fingerprint_gives_the_codes_numpy_gave() -> None:
    """Same int8 codes; the scale equal to float32 rounding (numpy summed the squares
    for the length in float32, in an order its BLAS chose)."""
    golden = json.loads(GOLDEN.read_text())
    assert golden.keys() == CASES.keys()
    for name, ctx in CASES.items():
        vector = fingerprint(ctx)
        codes, scale = encode(vector)
        assert len(vector) == DIMENSIONS
        assert codes == widened(bytes.fromhex(golden[name]["codes"])), name
        assert scale == pytest.approx(golden[name]["scale"], rel=3e-7), name


def test_encoding_without_numpy_is_numpys_encoding() -> None:
    rng = np.random.default_rng(3)
    vectors = [np.zeros(DIMENSIONS, np.float32), rng.standard_normal(DIMENSIONS, np.float32),
               (rng.standard_normal(DIMENSIONS) * 1e-3).astype(np.float32)]
    vectors += [np.frombuffer(fingerprint(ctx), np.float32) for ctx in CASES.values()]
    for vector in vectors:
        codes, scale = numpy_index.encode(vector)
        assert encode(vector.tolist()) == (codes.tobytes(), scale)


def _both_indexes(messages: list[str]) -> tuple[ExactIndex, numpy_index.VectorIndex]:
    exact, vectors = ExactIndex(), numpy_index.VectorIndex(DIMENSIONS)
    for message in messages:
        codes, scale = encode(fingerprint(TurnContext(message=message)))
        exact.add_encoded(codes, scale)
        vectors.add_encoded(np.frombuffer(codes, np.int8), scale)
    return exact, vectors


def _assert_same_answer(exact: ExactIndex, query: Vector, k: int,
                        numpy: tuple[list[int], list[float]]) -> None:
    """The same rows in the same order, with the same cosines (to float32 rounding); only
    rows whose cosines are equal may trade places (numpy's float32 sums split such ties
    by rounding, not by position)."""
    rows, sims = exact.nearest(query, k)
    every = dict(zip(*exact.nearest(query, len(exact)), strict=True))
    assert sims == pytest.approx(numpy[1], abs=1e-6)
    for ours, theirs in zip(rows, numpy[0], strict=True):
        assert ours == theirs or every[ours] == pytest.approx(every[theirs], abs=1e-12)


@pytest.mark.parametrize("k", [1, 6, 24, 500])
def test_the_exact_index_finds_what_numpys_finds(k: int) -> None:
    exact, vectors = _both_indexes(_messages(200, seed=1))
    for message in [*_messages(40, seed=2), "optimise the SQL join 7"]:
        query = fingerprint(TurnContext(message=message))
        expected, expected_sims = vectors.nearest(np.frombuffer(query, np.float32), k)
        _assert_same_answer(exact, query, k, (expected.tolist(), expected_sims.tolist()))


def test_a_query_found_by_its_bytes_is_answered_as_a_plain_list_is() -> None:
    """A fingerprint's non-zero dimensions are found by searching its bytes, and every row's
    sum is read from one integer; a list of floats takes the plain path. Both agree, for
    sums of either sign (the negated query turns every cosine round) and for zeros."""
    exact, vectors = _both_indexes(_messages(120, seed=4))
    for message in ["optimise the SQL join 7", "fix the failing unit test", ""]:
        query = fingerprint(TurnContext(message=message))
        negated = array("f", [-x for x in query])
        for vector in (query, negated):
            answer = exact.nearest(vector, 120)
            assert answer == exact.nearest(vector.tolist(), 120)
            expected, sims = vectors.nearest(np.frombuffer(vector, np.float32), 120)
            _assert_same_answer(exact, vector, 120, (expected.tolist(), sims.tolist()))
        assert exact.nearest(negated, 120)[1] == pytest.approx(
            sorted((-s for s in exact.nearest(query, 120)[1]), reverse=True), abs=1e-12)
    assert exact.nearest(array("f", bytes(4 * DIMENSIONS)), 3) == ([0, 1, 2], [0.0] * 3)


def test_rows_added_and_dropped_after_a_query_are_scored_as_if_built_anew() -> None:
    messages = _messages(90, seed=7)
    grown, _ = _both_indexes(messages[:40])
    query = fingerprint(TurnContext(message="review the pull request diff 3"))
    grown.nearest(query, 5)  # builds the per-dimension integers, kept up to date from now
    for message in messages[40:]:
        grown.add_encoded(*encode(fingerprint(TurnContext(message=message))))
    grown.drop_oldest(25)
    fresh, vectors = _both_indexes(messages[25:])
    assert grown.nearest(query, 30) == fresh.nearest(query, 30)
    expected, sims = vectors.nearest(np.frombuffer(query, np.float32), 30)
    _assert_same_answer(grown, query, 30, (expected.tolist(), sims.tolist()))


def test_equal_rows_come_oldest_first_in_both() -> None:
    exact, vectors = _both_indexes(["fix the failing unit test"] * 5 + ["write docs"] * 3)
    query = fingerprint(TurnContext(message="fix the failing unit test"))
    assert exact.nearest(query, 8)[0] == vectors.nearest(
        np.frombuffer(query, np.float32), 8)[0].tolist() == [0, 1, 2, 3, 4, 5, 6, 7]


VOCABULARY = [
    "optimise", "join", "index", "query", "schema", "table", "readme", "section", "docs",
    "example", "parser", "grammar", "token", "refactor", "rename", "module", "test", "failing",
    "fixture", "assert", "trace", "stack", "exception", "thread", "lemma", "prime", "proof",
    "bound", "translate", "message", "locale", "review", "diff", "branch", "merge", "deploy",
    "cache", "latency", "memory", "profile", "benchmark"]


def _distinct(count: int, seed: int) -> list[str]:
    """Messages of 3-9 words from a shared vocabulary: rows whose cosines with a query tie
    exactly are rare, so both paths must choose the very same rows."""
    rng = random.Random(seed)
    return [" ".join(rng.choices(VOCABULARY, k=rng.randint(3, 9))) for _ in range(count)]


def _taught(small_rows: int, turns: int = 120, *, background: bool = False
            ) -> LearnedPatternStore:
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(),
                                background=background, small_rows=small_rows)
    for i, message in enumerate(_distinct(turns, seed=4)):
        model = ["deep", "fast", "mid"][i % 3]
        store.record(TurnRecord(context=TurnContext(message=message, workspace_path=WS),
                                turn_id=f"t{i}", session_id=f"s{i}", model=model,
                                status="completed", cost_usd=0.01 * (i % 5)))
        if i % 4 == 0:
            store.feedback(f"t{i}", -1 if model == "fast" else 1)
    return store


@pytest.mark.parametrize("neighborhood", ["nearest", "per_model"])
def test_a_store_recommends_the_same_in_python_and_in_numpy(neighborhood: str) -> None:
    python, numpy = _taught(small_rows=1_000), _taught(small_rows=0)
    assert isinstance(python._workspace(WS), SmallWorkspace)
    assert isinstance(numpy._workspace(WS), WorkspaceIndex)
    settings = PatternSettings(neighbors=6, min_sample_size=2, min_confidence=0.05,
                               neighborhood=neighborhood)
    for message in _distinct(40, seed=5):
        ctx = TurnContext(message=message, workspace_path=WS)
        assert python.neighbours(ctx, 6, settings) == numpy.neighbours(ctx, 6, settings)
        assert python.recommend(ctx, settings) == numpy.recommend(ctx, settings)


@pytest.mark.parametrize("background", [True, False])
def test_a_workspace_that_outgrows_small_rows_moves_to_numpys_index(background: bool) -> None:
    """In a daemon on a thread, keeping the turns recorded and the feedback given
    meanwhile; with ``background=False`` (tests, benchmarks) on the caller's thread."""
    grown, numpy = _taught(small_rows=100, background=background), _taught(small_rows=0)
    assert len(grown.index_of(WS)) == len(numpy.index_of(WS)) == 120
    space = grown._workspace(WS)
    assert isinstance(space, WorkspaceIndex)
    assert space.turn_ids == numpy._workspaces[WS].turn_ids
    assert space.success == numpy._workspaces[WS].success
    ctx = TurnContext(message="optimise the SQL join 3", workspace_path=WS)
    assert grown.neighbours(ctx, 10) == numpy.neighbours(ctx, 10)


def test_retention_applies_to_a_small_workspace() -> None:
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False,
                                max_rows=20)
    for i, message in enumerate(_messages(25, seed=6)):
        store.record(TurnRecord(context=TurnContext(message=message, workspace_path=WS),
                                turn_id=f"t{i}", session_id="s", model="m", status="completed"))
    space = store._workspace(WS)
    assert isinstance(space, SmallWorkspace)
    assert len(space.index) == len(space.turn_ids) == database.count(store.connection, WS)
    assert space.turn_ids[-1] == "t24" and "t0" not in space.position


ENGINE_SCRIPT = """
import asyncio, json, sys
from pathlib import Path
from switchman.engine.service import Switchman
from tests.support.fake_provider.provider import FakeProvider

class Quiet:
    def route_decided(self, notice): pass
    def delta(self, delta): pass
    def status_changed(self, workspace): pass
    def delegation(self, update): pass

async def main(root: Path, turns: int) -> dict[str, object]:
    with FakeProvider() as provider:
        (root / "config" / "models.yaml").write_text(
            f"providers:\\n  anthropic: {{base_url: '{provider.base_url}'}}\\n")
        engine = Switchman(Quiet(), config_folder=root / "config", data_folder=root / "data",
                           environ={"ANTHROPIC_API_KEY": "k"})
        workspace = engine.open_workspace(str(root / "workspace"))
        statuses = []
        for i in range(turns):
            session = engine.new_session(workspace)
            statuses.append((await engine.chat(workspace, session.id, f"hi {i}")).status)
        await engine.stop_background()  # waits for the rows being written
        rows = engine.patterns.stats()
    return {"statuses": sorted(set(statuses)), "rows": rows[0].turns if rows else 0,
            "numpy": "numpy" in sys.modules, "faiss": "faiss" in sys.modules}

print(json.dumps(asyncio.run(main(Path(sys.argv[1]), int(sys.argv[2])))))
"""


def test_fifty_chat_turns_into_an_empty_store_never_import_numpy(tmp_path: Path) -> None:
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    done = subprocess.run([sys.executable, "-c", ENGINE_SCRIPT, str(tmp_path), "50"],
                          check=True, capture_output=True, text=True)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result == {"statuses": ["completed"], "rows": 50, "numpy": False, "faiss": False}


def test_numpy_is_imported_once_a_workspace_has_more_than_small_rows() -> None:
    code = """
import sys
from switchman.engine.clock import ManualClock
from switchman.engine.learning import database
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.routing.context import TurnContext
store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False,
                            small_rows=3)
seen = []
for i in range(5):
    store.record(TurnRecord(context=TurnContext(message=f"hi {i}", workspace_path="/w"),
                            turn_id=f"t{i}", session_id="s", model="m", status="completed"))
    seen.append("numpy" in sys.modules)
print(seen, "faiss" in sys.modules)
"""
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True)
    assert done.stdout.strip() == "[False, False, False, True, True] False"


def test_faiss_is_imported_only_when_an_index_is_first_trained() -> None:
    """The compiled sketch stage (docs/architecture.md, "Learned patterns") is loaded by
    the first training, never by a store that scores every row exactly."""
    code = """
import sys
import numpy as np
from switchman.engine.learning import index
rng = np.random.default_rng(0)
rows = rng.standard_normal((index.EXACT_LIMIT, 64)).astype(np.float32)
vectors = index.VectorIndex(64)
for row in rows[:-1]:
    vectors.add(row)
vectors.nearest(rows[0], 5)
before = "faiss" in sys.modules
vectors.add(rows[-1])  # the first training
print(before, vectors.trainings, "faiss" in sys.modules, vectors.nearest(rows[3], 1)[0][0])
"""
    done = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                          text=True)
    assert done.stdout.split() == ["False", "1", "True", "3"]


if __name__ == "__main__":  # rewrite the golden file from the current fingerprint
    GOLDEN.write_text(json.dumps(
        {name: {"codes": codes[:EARLIER_DIMENSIONS].hex(), "scale": scale}
         for name, (codes, scale) in ((n, encode(fingerprint(c))) for n, c in CASES.items())},
        indent=1, sort_keys=True) + "\n")
