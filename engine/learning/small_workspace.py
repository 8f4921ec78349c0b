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

import heapq
import operator
from array import array
from collections.abc import Sequence

from switchman.engine.learning import database as db
from switchman.engine.learning.columns import ScoringColumns

SMALL_ROWS = 256
"""Up to this many rows a workspace is scored here (about a millisecond per query)."""


def encode(vector: Sequence[float]) -> tuple[bytes, float]:
    """int8 codes (as bytes) and the scale that turns them back into ``vector``
    (approximately): what :func:`.index.encode` gives, computed without numpy."""
    peak = max(map(abs, vector), default=0.0)
    scale = peak / 127 if peak else 1.0
    step = array("f", [scale])[0]  # numpy divides a float32 vector by the float32 scale
    quotients = array("f", [x / step for x in vector])
    return array("b", map(round, quotients)).tobytes(), scale


class ExactIndex:
    """Rows as their non-zero codes; every row scored exactly on each query."""

    def __init__(self) -> None:
        self._dims: list[array[int]] = []
        self._codes: list[array[int]] = []
        self._scales: list[float] = []

    def __len__(self) -> int:
        return len(self._scales)

    def add_encoded(self, codes: bytes, scale: float) -> None:
        """Append one fingerprint given as int8 codes and their scale."""
        values = array("b", codes)
        self._dims.append(array("H", [i for i, c in enumerate(values) if c]))
        self._codes.append(array("b", [c for c in values if c]))
        self._scales.append(array("f", [scale])[0])  # kept as float32, as numpy keeps it

    def nearest(self, vector: Sequence[float], k: int) -> tuple[list[int], list[float]]:
        """Positions of the ``k`` most similar rows, most similar first (ties: lower
        position first), and their cosines."""
        query = list(map(float, vector))
        at = query.__getitem__
        sims = [scale * sum(map(operator.mul, map(at, dims), codes))
                for dims, codes, scale in zip(self._dims, self._codes, self._scales,
                                              strict=True)]
        best = heapq.nlargest(max(k, 0), range(len(sims)), key=sims.__getitem__)
        return best, [sims[p] for p in best]

    def drop_oldest(self, count: int) -> None:
        """Forget the first ``count`` positions."""
        del self._dims[:count], self._codes[:count], self._scales[:count]


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
