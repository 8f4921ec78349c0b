"""A workspace with few learned rows: exact k-NN in plain Python, without numpy.

numpy (about 15 MiB resident once imported) pays for itself only when a query has
thousands of rows to score. Up to ``SMALL_ROWS`` rows the store keeps a workspace
here instead: each row's non-zero int8 codes and its scale, every row scored on
each query. The answers are those of :class:`.index.VectorIndex` over the same
rows (``tests/learning/test_small_store.py``): the same rows in the same order,
cosines equal to float32 rounding (numpy sums the products in float32, this in
float64). Past ``SMALL_ROWS`` the store moves the workspace to
:class:`.workspace_index.WorkspaceIndex` (docs/architecture.md, "numpy only for
large pattern stores").
"""

from __future__ import annotations

import sys
from array import array
from collections.abc import Iterable, Sequence

from switchman.engine.learning import database as db
from switchman.engine.learning.columns import ScoringColumns
from switchman.engine.learning.fingerprint import DIMENSIONS

SMALL_ROWS = 256
"""Up to this many rows a workspace is scored here (about a millisecond per query)."""
FRACTION = 40
"""Fractional bits of a query's values: exact for any float32 of magnitude 2⁻¹⁶ or more."""
_ONE = 1 << FRACTION
_LANE_BITS = 64
_PLUS_128 = bytes((i + 128) % 256 for i in range(256))
"""An int8 code's byte → the code plus 128 (0-255)."""
_INVERSE_ONE = 2.0 ** -FRACTION
"""An integer times this is the integer over ``_ONE``, rounded alike (a power of two)."""
_FLAGS = bytes([0] + [1] * 255)
"""A byte → 1 if it is not zero."""


def encode(vector: Sequence[float]) -> tuple[bytes, float]:
    """int8 codes (as bytes) and the scale that turns them back into ``vector``
    (approximately): what :func:`.index.encode` gives, computed without numpy."""
    peak = max(map(abs, vector), default=0.0)
    scale = peak / 127 if peak else 1.0
    step = array("f", [scale])[0]  # numpy divides a float32 vector by the float32 scale
    quotients = array("f", [x / step for x in vector])
    return array("b", map(round, quotients)).tobytes(), scale


class ExactIndex:
    """Rows as int8 codes; every row scored exactly on each query, in integers.

    Each dimension's codes in every row are kept as one integer, a 64-bit lane per
    row (the code plus 128: a byte, 0-255). A query's values become integers with
    ``FRACTION`` fractional bits (exact for every value a fingerprint holds), and each
    non-zero one multiplies its dimension's integer: one multiplication of two Python
    integers scores a dimension of all rows at once, and no lane can carry into the
    next (at most 512 products below 2^48 each). The 128s are taken off at the end.
    The sums are exact, so rows that tie in exact arithmetic tie here.
    """

    def __init__(self, dimensions: int = DIMENSIONS) -> None:
        self.dimensions = dimensions
        self._codes = bytearray()
        """Row after row, each code plus 128."""
        self._scales: list[float] = []
        self._columns: list[int] | None = None
        """Each dimension's lanes: built at the first query, then kept up to date."""
        self._constants = (0, 0, 0)
        """For the last count of rows queried: the count, 1 and 2^63 in each lane."""

    def __len__(self) -> int:
        return len(self._scales)

    def add_encoded(self, codes: bytes, scale: float) -> None:
        """Append one fingerprint given as int8 codes and their scale."""
        shifted = codes.translate(_PLUS_128)
        if self._columns is not None:
            at = _LANE_BITS * len(self._scales)
            for dimension, byte in enumerate(shifted):
                self._columns[dimension] |= byte << at
        self._codes += shifted
        self._scales.append(array("f", [scale])[0])  # kept as float32, as numpy keeps it

    def nearest(self, vector: Sequence[float], k: int) -> tuple[list[int], list[float]]:
        """Positions of the ``k`` most similar rows, most similar first (ties: lower
        position first), and their cosines."""
        rows = len(self._scales)
        if rows == 0 or k <= 0:
            return [], []
        columns = self._built_columns()
        if len(vector) != len(columns):
            raise ValueError(f"a query of {len(vector)} values for {len(columns)} dimensions")
        positive = negative = total = 0
        for dimension in _non_zero(vector):
            value = float(vector[dimension])
            if value:
                q = round(value * _ONE)
                if q > 0:
                    positive += q * columns[dimension]
                else:
                    negative -= q * columns[dimension]
                total += q
        # Each row's lane of positive - negative - 128·total (below 2^55 in magnitude for a
        # unit vector), plus 2^63 so that no lane borrows from the next; the 2^63 then
        # flipped back: the lanes read as signed integers are the rows' sums.
        ones, signs = self._lane_constants(rows)
        lanes = _signed_lanes((positive - negative + ((1 << 63) - 128 * total) * ones) ^ signs,
                              rows)
        sims = [scale * (lane * _INVERSE_ONE) for scale, lane in zip(
            self._scales, lanes, strict=True)]
        # sorted is stable: equal cosines keep the lower position first, as nlargest does
        best = sorted(range(rows), key=sims.__getitem__, reverse=True)[:k]
        return best, [sims[p] for p in best]

    def _lane_constants(self, rows: int) -> tuple[int, int]:
        """1 and 2^63 in each of ``rows`` lanes."""
        if self._constants[0] != rows:
            ones = int.from_bytes((b"\1" + bytes(_LANE_BITS // 8 - 1)) * rows, "little")
            self._constants = (rows, ones, ones << 63)
        return self._constants[1], self._constants[2]

    def drop_oldest(self, count: int) -> None:
        """Forget the first ``count`` positions."""
        del self._codes[: count * self.dimensions], self._scales[:count]
        if self._columns is not None:
            self._columns = [c >> (_LANE_BITS * count) for c in self._columns]

    def _built_columns(self) -> list[int]:
        if self._columns is None:
            lanes = bytearray(_LANE_BITS // 8 * len(self._scales))
            self._columns = []
            for dimension in range(self.dimensions):
                lanes[:: _LANE_BITS // 8] = self._codes[dimension:: self.dimensions]
                self._columns.append(int.from_bytes(lanes, "little"))
        return self._columns


def _non_zero(vector: Sequence[float]) -> Iterable[int]:
    """The dimensions where ``vector`` may be non-zero, in order: for a fingerprint (float32,
    mostly zeros) found by searching its bytes, not by a loop over all its dimensions."""
    if not (isinstance(vector, array) and vector.typecode == "f"):
        return range(len(vector))
    flags = vector.tobytes().translate(_FLAGS)
    found = []
    at = flags.find(1)
    while at >= 0:
        found.append(dimension := at >> 2)
        at = flags.find(1, (dimension + 1) << 2)
    return found


def _signed_lanes(value: int, count: int) -> array[int]:
    """The ``count`` 64-bit lanes of ``value``, lowest first, as signed integers."""
    lanes = array("q", value.to_bytes(_LANE_BITS // 8 * count, "little"))
    if sys.byteorder == "big":
        lanes.byteswap()
    return lanes


class SmallWorkspace(ScoringColumns):
    """One small workspace's rows: the exact index and the scoring columns."""

    def __init__(self) -> None:
        super().__init__()
        self.index = ExactIndex()

    @classmethod
    def loaded(cls, rows: list[db.PatternRow]) -> SmallWorkspace:
        """The workspace over ``rows`` (oldest first)."""
        space = cls()
        for row in rows:
            space.add(row)
        return space

    def add(self, row: db.PatternRow) -> None:
        """Index a stored row at the next position."""
        self.index.add_encoded(row.codes, row.scale)
        self.append(row)

    def nearest(self, vector: Sequence[float], k: int) -> tuple[list[int], list[float]]:
        """Positions of the ``k`` rows most similar to ``vector`` and their cosines."""
        return self.index.nearest(vector, k)

    def drop_oldest(self, count: int) -> None:
        """Forget the first ``count`` rows (the retention limit was reached)."""
        self.index.drop_oldest(count)
        self.drop_columns(count)
