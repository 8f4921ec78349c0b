"""The meaning block's sums computed with numpy: the same values, faster for words not met.

A workspace whose pattern store is large has numpy loaded for its index, and there
the decision must stay under a millisecond. A word the plain path has not met
lately costs it about 2 µs (a binary search, then its integer made from the
file); a store's varied vocabulary misses often. Here the words are found with
one ``searchsorted`` and summed with one gather, in int64: the integer sums are
exact, so they equal the plain path's lane sums, and the weights are summed with
``math.fsum`` over the same products, so the mean is the same to the bit
(tests/learning/test_meaning.py compares both on thousands of messages).
"""

from __future__ import annotations

import math
import zlib
from collections import Counter

import numpy as np

from switchman.engine.learning.meaning import (
    DIMENSIONS,
    FIXED_POINT,
    HARMONIC,
    SIF_A,
    WordTable,
    plain_message_mean,
)


class TableArrays:
    """The table's index, values and weights as numpy arrays (the first three over the
    mapped file, no copy)."""

    def __init__(self, table: WordTable) -> None:
        layout = table.layout
        self.keys = np.frombuffer(table.data, "<u4", layout.indexed, layout.keys_at)
        self.positions = np.frombuffer(table.data, "<u4", layout.indexed,
                                       layout.keys_at + 4 * layout.indexed)
        self.values = np.frombuffer(table.data, "<i2", table.count * DIMENSIONS,
                                    layout.values_at).reshape(table.count, DIMENSIONS)
        ranks = np.frombuffer(table.data, "<u4", table.count, layout.ranks_at)
        # sif_weight's own float64 steps, elementwise: the same values (a test compares)
        self.weights = SIF_A / (SIF_A + 1.0 / ((ranks + 10.0) * HARMONIC))
        # Every word is found by its CRC-32 alone when none of the frequent words (which
        # the plain path finds by name first) shares its CRC-32 with another word.
        frequent = table.frequent_positions
        found = self.positions[np.searchsorted(self.keys, np.fromiter(
            (zlib.crc32(w.encode()) for w in frequent), np.uint32, len(frequent)))]
        self.by_crc_only = bool((found == np.fromiter(frequent.values(), np.uint32,
                                                      len(frequent))).all())


def message_mean(table: WordTable, counted: Counter[str]) -> tuple[float, ...] | None:
    """:func:`.meaning.message_mean` of the message whose words are ``counted``."""
    arrays = table.numpy_arrays
    if not isinstance(arrays, TableArrays):
        arrays = table.numpy_arrays = TableArrays(table)
    if not arrays.by_crc_only:  # pragma: no cover - no two of the shipped words share a CRC-32
        return plain_message_mean(table, counted)
    words, counts = list(counted), np.fromiter(counted.values(), np.int64, len(counted))
    keys = np.fromiter((zlib.crc32(w.encode()) for w in words), np.uint32, len(words))
    at = np.minimum(np.searchsorted(arrays.keys, keys), len(arrays.keys) - 1)
    hit = arrays.keys[at] == keys
    if not hit.any():
        return None
    positions = arrays.positions[at[hit]]
    counts = counts[hit]
    sums = counts @ arrays.values[positions]  # int64: exact, as the plain path's lanes
    weight = math.fsum((arrays.weights[positions] * counts).tolist())
    # int / float divides the int's exact float64 (|sum| < 2**53), as numpy does here
    return tuple((sums / (FIXED_POINT * weight)).tolist())

