"""The meaning block of a fingerprint: what a message is about, from static word vectors.

Hashed words and character n-grams (:mod:`.fingerprint`'s lexical block) put two
messages together only when they share words. Two questions about the same topic
in different words ("photosynthesis" and "chlorophyll") stay apart, and on
RouteLLM's MMLU data only 30% of a prompt's 40 nearest fingerprints were from its
own subject (docs/performance.md). This block adds each message's place in a space
of word meanings: the weighted mean of its words' GloVe vectors (GloVe 6B, 50
dimensions, Stanford NLP; public domain under PDDL-1.0), trimmed to the 50,000 most
frequent words and shipped with the daemon (``words/``, 6 MB, mapped rather than read,
built by ``scripts/build_word_table.py``). No model runs and nothing is downloaded.

* **Weights** (smooth inverse frequency, SIF): a word counts ``a / (a + p(word))``,
  with ``p`` from its frequency rank (Zipf), so "the" or "which" barely count and
  rare, topical words count fully.
* **Centre**: every such mean points much the same way (the common words of the
  language), so the mean is taken relative to the workspace's own centre: the
  average of its first ``CENTRE_TURNS`` turns' means (:class:`Centre`, kept by the
  store). Without the centre the block put nothing together. A message whose mean
  lies near the centre gets a shorter block (``FULL_DISTANCE``).
* **Integers**: each word's weighted vector is stored in fixed point and held as
  one Python integer with a 32-bit lane per dimension, so a message's sum is one
  integer addition per word, in plain Python (no numpy), and the same on every
  machine.

Nothing of the message is kept: the mean is reduced to the fingerprint's int8 codes
like the other blocks (the store keeps the centre, a mean over many turns).
"""

from __future__ import annotations

import bisect
import logging
import math
import mmap
import re
import struct
import sys
import threading
import zlib
from array import array
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

DIMENSIONS = 50
TABLE_WORDS = 50_000
TABLE_FILE = "glove-6b-50d-50k.bin"
FIXED_POINT = 4096
"""Stored values are ``round(weight · value · FIXED_POINT)`` as int16."""
SIF_A = 1e-3
VOCABULARY = 400_000
"""Words in the full GloVe 6B vocabulary, whose frequency ranks give p(word)."""
HARMONIC = 10.647490986741632
"""Σ 1 / (rank + 10) over the full vocabulary's ranks: p(rank) = 1 / ((rank + 10) · this)."""
CENTRE_TURNS = 200
"""A workspace's centre is the mean of its first turns' means; then it stays fixed."""
FULL_DISTANCE = 1.0
"""How far from the centre a message's mean must lie for the block to count fully; nearer,
it counts in proportion. Varied text lies 1.1-2.3 away (10th to 90th percentile of MMLU's
prompts and of this project's commit messages), so this only touches messages that differ
from the workspace's usual ones by a word or two: unit length there would make noise (a
number, a name) half of the similarity of two near-identical requests."""
MAX_CHARS = 20_000
WORD = re.compile(r"[a-z]+|[0-9]+")
_MAGIC = b"switchman-words 2\n"
NUMPY_FROM_WORDS = 8
"""Messages with this many distinct words or more are summed with numpy where it is
loaded (a large store: :mod:`.meaning_numpy`, the same values)."""
LOOKED_UP_WORDS = 2_000
"""The words (by frequency) found through a dictionary (two thirds of the words of a
typical message); the rest by their CRC-32 in a sorted array."""
MET_WORDS = 2_048
"""Words kept once looked up, with their integers (about 0.6 MB at most): a workspace's
requests share much of their vocabulary."""
_LANE = 4
"""Bytes per dimension in a word's integer: 32 bits, room for 65,536 words of 16 bits."""
_BIAS = 1 << 15
"""Added to every stored int16 so that each lane holds a non-negative number."""


def sif_weight(rank: int) -> float:
    """How much a word of frequency ``rank`` (0: the most frequent) counts."""
    p = 1.0 / ((rank + 10.0) * HARMONIC)
    return SIF_A / (SIF_A + p)


def encode_table(words: Sequence[str], ranks: Sequence[int], values: bytes) -> bytes:
    """The table file: a header; the words, one per line, most frequent first; their ranks
    (uint32); ``len(words) * DIMENSIONS`` weighted int16 values (little-endian); and an
    index: the words' CRC-32s in order (uint32) and each one's word (uint32). A word whose
    CRC-32 an earlier (more frequent) word has already is left out of the index."""
    if len(values) != 2 * DIMENSIONS * len(words) or len(ranks) != len(words):
        raise ValueError("one rank and DIMENSIONS values per word")
    text = "\n".join(words).encode()
    first: dict[int, int] = {}
    for position, word in enumerate(words):
        first.setdefault(zlib.crc32(word.encode()), position)
    keys = sorted(first)
    head = struct.pack("<IIII", len(words), DIMENSIONS, len(text), len(keys))
    return (_MAGIC + head + text + array("I", ranks).tobytes() + values
            + array("I", keys).tobytes() + array("I", [first[k] for k in keys]).tobytes())


class Layout(NamedTuple):
    """Where the file's parts start: the words, then the arrays."""

    text_at: int
    text_end: int
    ranks_at: int
    values_at: int
    keys_at: int
    indexed: int


class WordTable:
    """The words' weighted vectors, each as one integer of ``DIMENSIONS`` 32-bit lanes.

    Lean in memory, since every daemon that chats holds one: the values stay in the file
    (mapped, so only the pages of words met are read in), and words are found by their
    CRC-32 in a sorted array (binary search, under a microsecond) instead of a dictionary
    of 50,000 strings (6 MB); only the most frequent words have a dictionary entry. About
    1 MB of memory once words have been met, and a few milliseconds to open."""

    def __init__(self, data: bytes | mmap.mmap) -> None:
        if data[: len(_MAGIC)] != _MAGIC:
            raise ValueError("not a Switchman word table")
        at = len(_MAGIC)
        count, dimensions, text_size, indexed = struct.unpack_from("<IIII", data, at)
        if dimensions != DIMENSIONS:
            raise ValueError(f"a word table of {dimensions} dimensions, not {DIMENSIONS}")
        at += 16
        if len(data) != at + text_size + 4 * count + 2 * DIMENSIONS * count + 8 * indexed:
            raise ValueError("a truncated word table")
        ranks_at = at + text_size
        self.layout = layout = Layout(
            text_at=at, text_end=ranks_at, ranks_at=ranks_at, values_at=ranks_at + 4 * count,
            keys_at=ranks_at + 4 * count + 2 * DIMENSIONS * count, indexed=indexed)
        view = memoryview(data)  # read in place: no copy of the file's arrays
        self._ranks = _uint32s(view, layout.ranks_at, count)
        self._keys = _uint32s(view, layout.keys_at, indexed)
        self._positions = _uint32s(view, layout.keys_at + 4 * indexed, indexed)
        self.data = data
        self.count = count
        self.numpy_arrays: object | None = None
        """:mod:`.meaning_numpy`'s arrays over this table, made there when first needed."""
        known = bytes(data[layout.text_at: layout.text_end]).split(b"\n", LOOKED_UP_WORDS)
        self.frequent_positions = {w.decode(): i for i, w in
                                   enumerate(known[:min(LOOKED_UP_WORDS, count)])}
        self._met: dict[str, tuple[int, float] | None] = {}
        """The words met lately (at most ``MET_WORDS``, then begun anew): :meth:`met`."""

    def position_of(self, word: str) -> int | None:
        """The word's position in the table (by frequency), or None if it is not there."""
        found = self.frequent_positions.get(word)
        if found is not None:
            return found
        key = zlib.crc32(word.encode())
        i = bisect.bisect_left(self._keys, key)
        if i < len(self._keys) and self._keys[i] == key:
            return self._positions[i]
        return None

    def weight(self, position: int) -> float:
        """How much the word at ``position`` counts (:func:`sif_weight` of its rank)."""
        return sif_weight(self._ranks[position])

    def words(self) -> list[str]:
        """Every word, most frequent first (tests and benchmarks: 50,000 strings)."""
        return bytes(self.data[self.layout.text_at: self.layout.text_end]).decode().split("\n")

    def met(self, word: str) -> tuple[int, float] | None:
        """The word's integer (its biased values, a lane each) and weight; None if the table
        does not have it. Kept for the words met lately, known or not, so that a workspace's
        usual vocabulary costs one dictionary lookup a word."""
        met = self._met
        found = met.get(word, _UNMET)
        if found is _UNMET:
            position = self.position_of(word)
            found = None if position is None else (self._spread(position),
                                                   self.weight(position))
            if len(met) >= MET_WORDS:
                met = self._met = {}  # one assignment: safe beside another thread's reads
            met[word] = found
        return found  # type: ignore[return-value]

    def _spread(self, position: int) -> int:
        """Each int16 of the word plus the bias, spread into a 32-bit little-endian lane:
        its low byte, its high byte with the top bit flipped (that is the + 2**15), two zero
        bytes. Made as a word is met (half a microsecond), which keeps the table at 2 bytes
        a value, in the file."""
        at = self.layout.values_at + position * 2 * DIMENSIONS
        values = bytes(self.data[at: at + 2 * DIMENSIONS])
        lanes = bytearray(DIMENSIONS * _LANE)
        lanes[0::_LANE] = values[0::2]
        lanes[1::_LANE] = values[1::2].translate(_FLIP_TOP_BIT)
        return int.from_bytes(lanes, "little")


def _uint32s(view: memoryview, at: int, count: int) -> memoryview:
    """``count`` little-endian uint32 values of the file at ``at``, in place."""
    if sys.byteorder != "little":  # pragma: no cover - a copy, turned around
        values = array("I", view[at: at + 4 * count])
        values.byteswap()
        return memoryview(values)
    return view[at: at + 4 * count].cast("I")


_FLIP_TOP_BIT = bytes(b ^ 0x80 for b in range(256))
_UNMET = object()
TABLE_PATH = Path(__file__).with_name("words") / TABLE_FILE
_table: WordTable | None = None
_table_problem: str | None = None
_table_lock = threading.Lock()
_log = logging.getLogger(__name__)


def table() -> WordTable | None:
    """The shipped word table, opened on first use (a few milliseconds); None if it cannot
    be read (a damaged install: said once in the log, and fingerprints go on without
    meaning)."""
    global _table, _table_problem  # noqa: PLW0603 - one table per process, read once
    if _table is None and _table_problem is None:
        with _table_lock:
            if _table is None and _table_problem is None:
                try:
                    _table = WordTable(_mapped(TABLE_PATH))
                except (OSError, ValueError, struct.error) as error:
                    _table_problem = f"{TABLE_PATH}: {error}"
                    _log.warning("the word table cannot be read, so fingerprints have no "
                                 "meaning block (reinstall Switchman): %s", _table_problem)
    return _table


def _mapped(path: Path) -> bytes | mmap.mmap:
    """The file mapped read-only (its pages read in as words are met), or read whole where
    it cannot be mapped."""
    with path.open("rb") as file:
        try:
            return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # an empty file, or a file system without mmap
            return file.read()


def message_mean(text: str) -> tuple[float, ...] | None:
    """The weighted mean of the message's known words' vectors, or None if it has none
    (or the word table cannot be read)."""
    words = table()
    if words is None:
        return None
    counted = Counter(WORD.findall(text[:MAX_CHARS].lower()))
    if "numpy" in sys.modules and len(counted) >= NUMPY_FROM_WORDS:
        from switchman.engine.learning import meaning_numpy  # noqa: PLC0415 - numpy is loaded

        return meaning_numpy.message_mean(words, counted)
    return plain_message_mean(words, counted)


def plain_message_mean(words: WordTable, counted: Counter[str]) -> tuple[float, ...] | None:
    """:func:`message_mean` of the message whose words are ``counted``, in plain Python."""
    met = words.met
    found = [(entry, n) for word, n in counted.items()
             if (entry := met(word)) is not None]  # each known word once, times its count
    if not found:
        return None
    total = sum([entry[0] * n for entry, n in found])
    weight = math.fsum([entry[1] * n for entry, n in found])
    lanes = array("I", total.to_bytes(DIMENSIONS * _LANE, "little"))
    if lanes.itemsize != _LANE:  # pragma: no cover - every platform we ship has 32-bit "I"
        raise RuntimeError("array('I') is not 32 bits here")
    offset = sum(n for _, n in found) * _BIAS
    scale = FIXED_POINT * weight
    return tuple((lane - offset) / scale for lane in _native(lanes))


def _native(lanes: array[int]) -> array[int]:
    if sys.byteorder == "big":  # pragma: no cover
        lanes.byteswap()
    return lanes


class Centre:
    """A workspace's centre of meaning: the mean of its first ``CENTRE_TURNS`` turns'
    message means (immutable: the store replaces it as turns are counted)."""

    __slots__ = ("mean", "total", "turns")

    def __init__(self, turns: int = 0, total: Sequence[float] | None = None) -> None:
        self.turns = turns
        self.total = tuple(total) if total is not None else (0.0,) * DIMENSIONS
        self.mean = tuple(x / turns for x in self.total) if turns else None
        """The centre, or None before any turn was counted (every fingerprint reads it)."""

    @property
    def settled(self) -> bool:
        """Whether the centre stays as it is from now on."""
        return self.turns >= CENTRE_TURNS

    def counting(self, mean: Sequence[float]) -> Centre:
        """This centre with one more turn's mean counted (itself once settled)."""
        if self.settled:
            return self
        return Centre(self.turns + 1, [a + b for a, b in zip(self.total, mean, strict=True)])

    def to_bytes(self) -> bytes:
        return array("d", self.total).tobytes()

    @classmethod
    def from_bytes(cls, turns: int, data: bytes) -> Centre:
        total = array("d", data) if len(data) % 8 == 0 else array("d")
        if len(total) != DIMENSIONS or turns < 1 or not all(map(math.isfinite, total)):
            return cls()  # another width, or damaged: counted anew
        return cls(turns, total)


def centred(mean: Sequence[float], centre: Sequence[float]) -> tuple[list[float], float] | None:
    """``mean - centre`` at unit length, and how fully it counts: its length over
    ``FULL_DISTANCE``, at most 1 (None where they coincide)."""
    delta = [m - c for m, c in zip(mean, centre, strict=True)]
    norm = math.sqrt(math.fsum(x * x for x in delta))
    if not norm:
        return None
    return [x / norm for x in delta], min(1.0, norm / FULL_DISTANCE)
