"""The fingerprint's meaning block: the word table, the integer sums, the workspace's centre,
and old 512-value rows read beside new ones."""

from __future__ import annotations

import math
import random
import sqlite3
import struct
from array import array
from collections import Counter
from pathlib import Path

import msgspec
import numpy as np
import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.config.policy import PatternSettings
from switchman.engine.learning import database, meaning
from switchman.engine.learning.evaluator import Evidence
from switchman.engine.learning.fingerprint import (
    DIMENSIONS,
    EARLIER_DIMENSIONS,
    MEANING_SHARE,
    fingerprint,
)
from switchman.engine.learning.small_workspace import encode
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.patterns import PatternRecommendation
from switchman.engine.routing.context import TurnContext

WS = "/work/project"
PLANTS = ["how do plants turn sunlight into sugar",
          "what does a green leaf need to grow",
          "explain photosynthesis in algae"]
CODE = ["sort a list of integers in python",
        "why does my javascript function return undefined",
        "the compiler reports a boolean type error"]
LAW = ["can a landlord keep the deposit after the lease ends",
       "what makes a contract legally binding in court"]


def plain_mean(text: str) -> list[float] | None:
    """The weighted mean computed the obvious way: words found by a dictionary of the
    table's word list, values and ranks read from the file's layout by hand."""
    data = meaning.TABLE_PATH.read_bytes()
    count, _, text_size, _ = struct.unpack_from("<IIII", data, len(b"switchman-words 2\n"))
    at = len(b"switchman-words 2\n") + 16 + text_size
    ranks = array("I", data[at: at + 4 * count])
    values = array("h", data[at + 4 * count: at + 4 * count + 2 * meaning.DIMENSIONS * count])
    position = {w: i for i, w in enumerate(data[at - text_size: at].decode().split("\n"))}
    positions = [position[w] for w in meaning.WORD.findall(text[:meaning.MAX_CHARS].lower())
                 if w in position]
    if not positions:
        return None
    weight = math.fsum(meaning.sif_weight(ranks[p]) for p in positions)
    return [math.fsum(values[p * meaning.DIMENSIONS + d] for p in positions)
            / (meaning.FIXED_POINT * weight) for d in range(meaning.DIMENSIONS)]


def cosine(a: object, b: object) -> float:
    x, y = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(x @ y / (np.linalg.norm(x) * np.linalg.norm(y)))


def centre_of(texts: list[str]) -> tuple[float, ...]:
    centre = meaning.Centre()
    for text in texts:
        mean = meaning.message_mean(text)
        assert mean is not None
        centre = centre.counting(mean)
    assert centre.mean is not None
    return centre.mean


def test_the_table_holds_frequent_words_with_frequency_weights() -> None:
    table = meaning.table()
    assert table is not None
    words = table.words()
    assert len(words) == table.count == meaning.TABLE_WORDS
    assert {"the", "function", "photosynthesis", "javascript", "boolean", "2010"} <= set(words)
    # Every word is found where it is, through the dictionary or the CRC-32 index alike
    # (a word whose CRC-32 a more frequent one has is left out: none in this table).
    assert all(table.position_of(w) == i for i, w in enumerate(words))
    assert table.position_of("zzqxv") is None and table.position_of("") is None
    assert table.position_of("the") == 0 < meaning.LOOKED_UP_WORDS < words.index("boolean")
    the, photosynthesis = (table.weight(words.index(w)) for w in ("the", "photosynthesis"))
    assert the < 0.2
    assert 0.9 < photosynthesis <= 1.0
    exact = math.fsum(1 / (r + 10) for r in range(meaning.VOCABULARY))
    assert meaning.sif_weight(0) == pytest.approx(
        meaning.SIF_A / (meaning.SIF_A + 1 / (10 * exact)))


@pytest.mark.parametrize("text", [
    "photosynthesis", "the the the the", "Sort a LIST of integers, then sort it again: 3 4 5",
    "a " * 15_000,  # more words than fit: only MAX_CHARS count, and no lane overflows
    "x" * 30 + " refactor the parser",
])
def test_the_integer_sums_are_the_plain_weighted_mean(text: str) -> None:
    got, want = meaning.message_mean(text), plain_mean(text)
    assert got is not None and want is not None
    assert got == pytest.approx(want, abs=1e-12)


def test_a_message_without_known_words_has_no_meaning() -> None:
    assert meaning.message_mean("zzqxv qqqxz 😀 ___") is None
    assert meaning.message_mean("") is None


def test_an_unreadable_table_leaves_the_block_out_and_says_so_once(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "words.bin").write_bytes(b"switchman-words 1\n" + bytes(5))
    monkeypatch.setattr(meaning, "TABLE_PATH", tmp_path / "words.bin")
    monkeypatch.setattr(meaning, "_table", None)
    monkeypatch.setattr(meaning, "_table_problem", None)
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=False)
    for i, text in enumerate(PLANTS + CODE):
        record(store, f"t{i}", text)
    vector = np.frombuffer(store.fingerprint(TurnContext(message=LAW[0], workspace_path=WS)),
                           np.float32)
    assert not vector[EARLIER_DIMENSIONS:].any()
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)
    warnings = [r for r in caplog.records if "word table cannot be read" in r.getMessage()]
    assert len(warnings) == 1 and "words.bin" in warnings[0].getMessage()


def test_a_truncated_or_foreign_table_is_refused() -> None:
    data = (Path(meaning.__file__).with_name("words") / meaning.TABLE_FILE).read_bytes()
    with pytest.raises(ValueError, match="truncated"):
        meaning.WordTable(data[:-10])
    with pytest.raises(ValueError, match="not a Switchman word table"):
        meaning.WordTable(b"GloVe" + data)


def test_topics_come_together_in_other_words_once_centred() -> None:
    """Messages on one topic sharing no content word are nearer in meaning than messages
    on other topics; the lexical block alone cannot see it."""
    centre = centre_of(PLANTS + CODE + LAW)
    about = {t: (meaning.centred(meaning.message_mean(t) or (), centre) or ([], 0))[0]
             for t in PLANTS + CODE + LAW}
    for group in (PLANTS, CODE, LAW):
        for a in group:
            nearest = max((b for b in about if b != a), key=lambda b: cosine(about[a], about[b]))
            assert nearest in group, (a, nearest)
    # The fingerprints with the block put "sunlight into sugar" nearer "a green leaf" than
    # the code question; without it (no centre) the two are as unrelated as any.
    def fp(text: str, with_centre: bool) -> array[float]:
        return fingerprint(TurnContext(message=text), centre if with_centre else None)
    near = cosine(fp(PLANTS[0], True), fp(PLANTS[1], True))
    far = cosine(fp(PLANTS[0], True), fp(CODE[0], True))
    assert near > far + 0.2
    assert cosine(fp(PLANTS[0], False), fp(PLANTS[1], False)) <= \
        cosine(fp(PLANTS[0], False), fp(CODE[0], False))


def test_the_fingerprint_has_unit_length_with_or_without_the_block() -> None:
    centre = centre_of(PLANTS + CODE)
    ctx = TurnContext(message=LAW[0])
    with_block = np.frombuffer(fingerprint(ctx, centre), np.float32)
    without = np.frombuffer(fingerprint(ctx), np.float32)
    assert len(with_block) == len(without) == DIMENSIONS
    assert float(np.linalg.norm(with_block)) == pytest.approx(1.0, abs=1e-5)
    assert float(np.linalg.norm(without)) == pytest.approx(1.0, abs=1e-5)
    assert float(np.linalg.norm(with_block[EARLIER_DIMENSIONS:])) ** 2 == pytest.approx(
        MEANING_SHARE, abs=1e-5)
    assert not without[EARLIER_DIMENSIONS:].any()
    # A message with no known word has no block even with a centre.
    unknown = np.frombuffer(fingerprint(TurnContext(message="zzqxv"), centre), np.float32)
    assert not unknown[EARLIER_DIMENSIONS:].any()


def test_a_message_near_its_workspace_centre_gets_a_short_block() -> None:
    """Requests that differ by a number or a name lie near their centre; a unit-length
    block there would be noise (the number) worth half the similarity, so it shrinks and
    the words decide, as they did before the block."""
    alike = [f"rename the variable foo to bar in file {i}" for i in range(20)]
    centre = centre_of(alike)
    vector = np.frombuffer(fingerprint(TurnContext(message=alike[3]), centre), np.float32)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0, abs=1e-5)
    assert 0 < float(np.linalg.norm(vector[EARLIER_DIMENSIONS:])) ** 2 < 0.05
    earlier = np.frombuffer(fingerprint(TurnContext(message=alike[3])), np.float32)
    for text in alike:  # each similarity within a tenth of the words' alone
        now = float(vector @ np.frombuffer(fingerprint(TurnContext(message=text), centre),
                                           np.float32))
        before = float(earlier @ np.frombuffer(fingerprint(TurnContext(message=text)),
                                               np.float32))
        assert abs(now - before) < 0.1, text


def open_store(path: Path | str = ":memory:") -> LearnedPatternStore:
    return LearnedPatternStore(database.connect(path), ManualClock(), background=False)


def record(store: LearnedPatternStore, turn: str, message: str, model: str = "fast",
           workspace: str = WS) -> None:
    store.record(TurnRecord(context=TurnContext(message=message, workspace_path=workspace),
                            turn_id=turn, session_id=f"s-{turn}", model=model,
                            status="completed"))


def test_the_store_counts_each_workspace_centre_durably_until_it_settles(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meaning, "CENTRE_TURNS", 4)
    path = tmp_path / "patterns.db"
    store = open_store(path)
    first = TurnContext(message=PLANTS[0], workspace_path=WS)
    assert not np.frombuffer(store.fingerprint(first), np.float32)[EARLIER_DIMENSIONS:].any()
    for i, text in enumerate(PLANTS + CODE):
        record(store, f"t{i}", text)
    record(store, "other", LAW[0], workspace="/elsewhere")
    connection = sqlite3.connect(path)
    centres = {w: (n, array("d", total)) for w, n, total in
               connection.execute("SELECT workspace, turns, total FROM pattern_centres")}
    assert centres.keys() == {WS, "/elsewhere"}
    assert centres[WS][0] == 4  # settled after four turns: later ones are not counted
    expected = [math.fsum(col) for col in zip(*(meaning.message_mean(t) or () for t in
                                                  PLANTS + CODE[:1]), strict=True)]
    assert list(centres[WS][1]) == pytest.approx(expected)
    # Reopened, the same centre gives the same fingerprints; no message text was stored.
    again = open_store(path)
    ctx = TurnContext(message=LAW[1], workspace_path=WS)
    assert np.frombuffer(again.fingerprint(ctx), np.float32)[EARLIER_DIMENSIONS:].any()
    assert again.fingerprint(ctx).tobytes() == store.fingerprint(ctx).tobytes()
    dump = b"".join(path.read_bytes() for path in tmp_path.iterdir())
    assert b"sunlight" not in dump and b"landlord" not in dump
    # Forgetting a workspace forgets its centre, and the next turn starts a new one.
    again.forget(WS)
    assert {w for (w,) in connection.execute("SELECT workspace FROM pattern_centres")} == {
        "/elsewhere"}
    assert not np.frombuffer(again.fingerprint(ctx), np.float32)[EARLIER_DIMENSIONS:].any()
    again.forget()
    assert connection.execute("SELECT COUNT(*) FROM pattern_centres").fetchone()[0] == 0


def test_two_daemons_on_one_data_folder_count_into_one_centre(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two editor windows on one workspace (a daemon each, one patterns.db) each count their
    own turns into the workspace's centre: neither overwrites the other's count (each saved
    the centre it held in memory, so the last writer's turns were all the centre kept)."""
    monkeypatch.setattr(meaning, "CENTRE_TURNS", 6)
    path = tmp_path / "patterns.db"
    left, right = open_store(path), open_store(path)
    texts = PLANTS + CODE + LAW
    for i, text in enumerate(texts[:5]):  # interleaved: each store read the centre before
        record(left if i % 2 else right, f"t{i}", text)
    expected = [math.fsum(col) for col in zip(*(meaning.message_mean(t) or () for t in
                                                  texts[:5]), strict=True)]
    centre = database.centre(database.connect(path), WS)
    assert centre.turns == 5 and list(centre.total) == pytest.approx(expected)
    record(left, "t5", texts[5])  # the sixth settles it: the other daemon's next decision
    ctx = TurnContext(message=LAW[1], workspace_path=WS)  # fingerprints with it
    right.recommend(TurnContext(message="x", workspace_path=WS), PatternSettings())
    assert left.fingerprint(ctx).tobytes() == right.fingerprint(ctx).tobytes()
    record(right, "t6", texts[6])  # and counts no more turns into it
    centre = database.centre(database.connect(path), WS)
    assert centre.turns == 6 and centre.settled


@pytest.mark.parametrize("small_rows", [10_000, 0])
def test_rows_stored_before_the_meaning_block_are_still_recommended_from(
        tmp_path: Path, small_rows: int) -> None:
    """A database written by the version before (512-value fingerprints) is read with the
    new block empty, by the plain-Python and the numpy index alike."""
    path = tmp_path / "patterns.db"
    writer = database.connect(path)
    for i in range(6):
        model, ok = ("deep", 1.0) if i % 2 else ("fast", 0.0)
        ctx = TurnContext(message=f"optimise this SQL join query {i}", workspace_path=WS)
        codes, scale = encode(fingerprint(ctx)[:EARLIER_DIMENSIONS])
        assert len(codes) == EARLIER_DIMENSIONS
        row = database.PatternRow(
            workspace=WS, turn_id=f"old{i}", session_id="s", model=model,
            recorded_at="2026-11-01T00:00:00+00:00", cost_usd=0.01, message_hash="h",
            codes=codes, scale=scale, success=ok,
            evidence=Evidence(status="completed", feedback=1 if ok else -1))
        database.insert(writer, row)
    store = LearnedPatternStore(database.connect(path), ManualClock(), background=False,
                                small_rows=small_rows)
    record(store, "new", "explain photosynthesis", "fast")  # a centre exists now
    ctx = TurnContext(message="optimise my SQL join query", workspace_path=WS)
    assert np.frombuffer(store.fingerprint(ctx), np.float32)[EARLIER_DIMENSIONS:].any()
    rec = store.recommend(ctx, PatternSettings(min_sample_size=2, neighbors=6))
    assert isinstance(rec, PatternRecommendation) and rec.model == "deep"
    assert all(len(r.codes) == DIMENSIONS for r in database.rows(store.connection))


def test_a_row_keeps_the_fingerprint_its_turn_was_routed_with() -> None:
    store = open_store()
    record(store, "t0", PLANTS[0])
    ctx = TurnContext(message=PLANTS[1], workspace_path=WS)
    routed = store.fingerprint(ctx)
    record(store, "t1", CODE[0])  # the centre moves on before the turn ends
    store.record(TurnRecord(context=ctx, turn_id="t2", session_id="s", model="fast",
                            status="completed"))
    row = database.by_turn(store.connection, "t2")
    assert row is not None
    assert (row.codes, row.scale) == encode(routed)
    assert msgspec.structs.replace(row, mean=None).mean is None  # the mean is never stored


def test_the_table_is_opened_only_when_a_turn_is_fingerprinted(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A daemon that opens folders but never chats holds no table (its idle memory); the
    first fingerprint opens it (mapped: a few milliseconds, about 3 MB)."""
    monkeypatch.setattr(meaning, "_table", None)
    store = LearnedPatternStore(database.connect(":memory:"), ManualClock(), background=True)

    def opened() -> bool:
        return meaning._table is not None

    store.prepare(WS)
    store.recommend(TurnContext(message=PLANTS[0], workspace_path=WS), PatternSettings())
    assert not opened()  # an empty workspace's decision fingerprints nothing
    record(store, "t0", PLANTS[0])
    assert opened()


@pytest.mark.parametrize(("turns", "total"), [
    (3, b"\x00" * 7), (3, array("d", [0.0] * 49).tobytes()), (0, bytes(8 * meaning.DIMENSIONS)),
    (3, array("d", [math.nan] + [0.0] * 49).tobytes()),
    (3, array("d", [math.inf] * 50).tobytes())])
def test_a_damaged_centre_is_counted_anew(turns: int, total: bytes) -> None:
    connection = database.connect(":memory:")
    connection.execute("INSERT INTO pattern_centres VALUES (?, ?, ?)", (WS, turns, total))
    store = LearnedPatternStore(connection, ManualClock(), background=False)
    vector = np.frombuffer(store.fingerprint(TurnContext(message=LAW[0], workspace_path=WS)),
                           np.float32)
    assert np.isfinite(vector).all() and not vector[EARLIER_DIMENSIONS:].any()
    record(store, "t0", PLANTS[0])
    assert database.centre(connection, WS).turns == 1


def test_stats_say_how_far_the_centre_has_come() -> None:
    from switchman.engine.learning.report import format_stats  # noqa: PLC0415
    from switchman.engine.learning.store import WorkspaceStats  # noqa: PLC0415

    def line(turns: int) -> str:
        text = format_stats([WorkspaceStats(WS, 3, {"fast": (3, 0.5)}, "a", "b", turns)], "p")
        return text.splitlines()[-1]

    assert line(0) == "  topic matching: starts after this workspace's first turn"
    assert line(1) == ("  topic matching: learning what is usual here, 1 of its first 200 "
                       "turns so far")
    assert line(200) == "  topic matching: set from this workspace's first 200 turns"


def test_numpy_sums_the_same_means_to_the_bit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Where numpy is loaded (a large store) messages are summed with it: the same values,
    exactly, on thousands of messages over the whole table and beyond it."""
    from switchman.engine.learning import meaning_numpy  # noqa: PLC0415

    table = meaning.table()
    assert table is not None
    words = table.words()
    rng = random.Random(11)
    vocabulary = [*words[:100], *rng.sample(words, 3000), "zzqxv", "foo_bar", "x" * 40, "7"]
    messages = [" ".join(rng.choices(vocabulary, k=rng.randint(1, 80))) for _ in range(2000)]
    messages += [*PLANTS, *CODE, *LAW, "the " * 5000, "zzqxv qqqxz"]
    monkeypatch.setattr(meaning, "NUMPY_FROM_WORDS", 10**9)  # the plain path only
    for message in messages:
        plain = meaning.message_mean(message)
        fast = meaning_numpy.message_mean(
            table, Counter(meaning.WORD.findall(message[:meaning.MAX_CHARS].lower())))
        assert plain == fast, message[:80]
