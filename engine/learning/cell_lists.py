"""The pattern index's cells in a compiled index: faiss's inverted lists of 8-bit sketches.

A query's sketch stage reads the ~6,000 rows of the cells nearest to it. In
numpy that was one matrix-vector product per cell over float32 sketches (38 MB
at 100,000 rows, kept sorted by cell); here the same cells are faiss inverted
lists holding each sketch as 8-bit codes (a quarter of the bytes, decoded with
SIMD inside faiss's loop). The codes share one range for every axis
("uniform"): decoding them needs no per-axis offsets and scales, which made
the stage 4-9% faster than per-axis ranges at the same recall
(docs/performance.md). Which cells a query reads is still chosen by
:meth:`.index.VectorIndex._cells_to_read` (the row budget), and the cells and
centroids are still ours (:mod:`.clustering`, saved by :mod:`.index_state`):
faiss is only told which list each row belongs to, and the lists are rebuilt
from the sketches whenever the index lays its rows out again (100,000 rows in
about 40 ms), never saved.

faiss is imported here only, the first time a trained index lays out its
rows, so a store that never trains (a small workspace, or one under
``EXACT_LIMIT`` rows) never loads it. It runs on one thread: a query searches
one vector, which faiss does not split over threads anyway, and an OpenMP team
that spins between calls would take the second core from the daemon and the
training thread on a 2-core machine.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import numpy as np
import numpy.typing as npt


@cache
def _module() -> Any:
    """faiss, imported on first use and limited to one OpenMP thread."""
    import faiss  # noqa: PLC0415 - a native library: only trained indexes need it

    faiss.omp_set_num_threads(1)
    return faiss


class CellLists:
    """Rows ``0 .. len(cells) - 1`` in their cells, as 8-bit sketches in faiss lists."""

    def __init__(self, centroids: npt.NDArray[np.float32], sketch: npt.NDArray[np.float32],
                 cells: npt.NDArray[np.int32]) -> None:
        faiss = _module()
        width = centroids.shape[1]
        self._quantizer = faiss.IndexFlatIP(width)  # holds our centroids; never searched
        self._quantizer.add(np.ascontiguousarray(centroids, np.float32))
        self._index = faiss.IndexIVFScalarQuantizer(
            self._quantizer, width, len(centroids), faiss.ScalarQuantizer.QT_8bit_uniform,
            faiss.METRIC_INNER_PRODUCT, False)
        self.rows = len(cells)
        self._no_distances = np.zeros(len(centroids), np.float32)
        if not self.rows:
            return
        sketch = np.ascontiguousarray(sketch, np.float32)
        self._index.train(sketch)  # the range of the values over these rows (no clustering)
        ids = np.arange(self.rows, dtype=np.int64)
        labels = np.ascontiguousarray(cells, np.int64)
        # Each row joins the list of its own cell (ours), not one faiss would choose.
        self._index.add_core(self.rows, faiss.swig_ptr(sketch), faiss.swig_ptr(ids),
                             faiss.swig_ptr(labels))

    def scores(self, projected: npt.NDArray[np.float32],
               cells: npt.NDArray[np.int64]) -> tuple[npt.NDArray[np.float32],
                                                      npt.NDArray[np.int64]]:
        """Every row of ``cells``: its approximate sketch score against ``projected``, and
        its position (a range search with no bound returns them all, without a heap)."""
        if not self.rows or not len(cells):
            return np.zeros(0, np.float32), np.zeros(0, np.int64)
        faiss = _module()
        query = np.ascontiguousarray(projected, np.float32)
        cells = np.ascontiguousarray(cells, np.int64)
        self._index.nprobe = len(cells)
        # faiss's C++ call, not its Python wrapper (which allocates the centroid distances
        # and copies the row limits each time: 5 µs of a 150 µs call); the distances it
        # wants are unused here (no residuals) but read, so they are a buffer of zeros.
        found = faiss.RangeSearchResult(1)
        self._index.range_search_preassigned_c(
            1, faiss.swig_ptr(query), -math.inf, faiss.swig_ptr(cells),
            faiss.swig_ptr(self._no_distances), found)
        count = int(faiss.rev_swig_ptr(found.lims, 2)[1])
        return (faiss.rev_swig_ptr(found.distances, count).copy(),
                faiss.rev_swig_ptr(found.labels, count).copy())
