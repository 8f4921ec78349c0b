"""Nearest-neighbour search over fingerprints: an inverted-file (IVF) index in numpy.

Rows are kept as int8 codes with one float scale each (a quarter of float32's
memory: 100,000 fingerprints take about 50 MB). A query compares the
fingerprint with a few hundred cell centroids and keeps the cells nearest to
it, so its cost grows with the square root of the store instead of its size.
Their rows are then scored in two steps: first on a *sketch*, each row's
projection onto the ``SKETCH_DIMENSIONS`` principal axes of the stored
fingerprints (float32, ready to multiply: 100,000 rows take 25 MB), then the
best ``RERANK`` of those exactly from their int8 codes. Converting a few
thousand 512-byte rows to float on every query was what made it slow; the
sketch keeps what tells neighbours apart (fingerprints of one workspace span
few directions) at an eighth of the width. A second copy of the sketches
is kept sorted by cell, so a query reads its cells as a few contiguous
blocks instead of gathering rows from all over memory; rows added since that
copy was sorted are scored from the unsorted tail, and the copy is sorted
again once the tail passes ``LAYOUT_SLACK`` rows or a sixteenth of the store.
Below ``EXACT_LIMIT`` rows, and
until the first training, every row is scored exactly.

Centroids and principal axes come from one sample (spherical k-means and an
eigen-decomposition) and are trained again whenever the store has doubled
since the last training; training can run on a thread so a daemon never
waits for it (numpy releases the GIL).
"""

from __future__ import annotations

import math
import threading

import numpy as np
import numpy.typing as npt

from switchman.engine.learning.fingerprint import Vector

EXACT_LIMIT = 4096
"""Up to this many rows, a query scores every row (exact)."""
CANDIDATES = 8000
"""About how many rows a query scores once the index is partitioned."""
SKETCH_DIMENSIONS = 96
"""Width of the sketch a query scores candidates on before re-scoring the best exactly."""
RERANK = 640
"""How many candidates (at least) a query re-scores exactly from their int8 codes."""
LAYOUT_SLACK = 1024
"""Rows added since the cell-sorted sketches were built that a query scans unsorted."""
KMEANS_ITERATIONS = 6
SAMPLE_PER_CELL = 32

Codes = npt.NDArray[np.int8]
IntArray = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


def encode(vector: Vector) -> tuple[Codes, float]:
    """int8 codes and the scale that turns them back into ``vector`` (approximately)."""
    peak = float(np.max(np.abs(vector))) if len(vector) else 0.0
    scale = peak / 127 if peak else 1.0
    return np.round(vector / scale).astype(np.int8), scale


class VectorIndex:
    """Fingerprints by position; cosine k-NN among them."""

    def __init__(self, dimensions: int, *, background: bool = False) -> None:
        self.dimensions = dimensions
        self.background = background
        self._codes: Codes = np.zeros((0, dimensions), np.int8)
        self._scales = np.zeros(0, np.float32)
        self._cells = np.zeros(0, np.int32)
        self._sketch: Matrix = np.zeros((0, min(SKETCH_DIMENSIONS, dimensions)), np.float32)
        self._centroids: Matrix | None = None
        self._axes: Matrix | None = None
        """Principal axes (``dimensions`` by sketch width); set with the centroids."""
        # The sketches of positions [0, _sorted_end) ordered by cell; cell c's rows are
        # _sorted_rows[_cell_starts[c]:_cell_starts[c + 1]].
        self._sorted_rows = np.zeros(0, np.int64)
        self._sorted_sketch: Matrix = np.zeros_like(self._sketch)
        self._cell_starts = np.zeros(1, np.int64)
        self._sorted_end = 0
        self._trained_at = 0
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()
        self._training: threading.Thread | None = None

    def __len__(self) -> int:
        return self._size

    def add(self, vector: Vector) -> None:
        """Append one fingerprint (position ``len(self)`` before the call)."""
        codes, scale = encode(vector)
        self.add_encoded(codes, scale)

    def add_encoded(self, codes: Codes, scale: float) -> None:
        """Append one fingerprint given as int8 codes and their scale."""
        with self._lock:
            self._grow(self._size + 1)
            self._codes[self._size] = codes
            self._scales[self._size] = scale
            if self._centroids is not None and self._axes is not None:
                at = slice(self._size, self._size + 1)
                self._cells[at], self._sketch[at] = _place(
                    codes[None, :], np.array([scale], np.float32), self._centroids, self._axes)
            else:
                self._cells[self._size] = -1
            self._size += 1
            if self._size - self._sorted_end > max(LAYOUT_SLACK, self._size // 16):
                self._sort_by_cell()
        if self._size >= EXACT_LIMIT and self._size >= 2 * self._trained_at:
            self._start_training()

    def load(self, codes: Codes, scales: npt.NDArray[np.float32]) -> None:
        """Append many encoded fingerprints at once (opening a store), then train once."""
        with self._lock:
            self._grow(self._size + len(scales))
            end = self._size + len(scales)
            self._codes[self._size: end] = codes
            self._scales[self._size: end] = scales
            if self._centroids is not None and self._axes is not None:
                self._cells[self._size: end], self._sketch[self._size: end] = _place(
                    codes, scales, self._centroids, self._axes)
            else:
                self._cells[self._size: end] = -1
            self._size = end
            self._sort_by_cell()
        if self._size >= EXACT_LIMIT:
            self._start_training()

    def drop_oldest(self, count: int) -> None:
        """Forget the first ``count`` positions (the retention limit was reached)."""
        with self._lock:
            keep = slice(count, self._size)
            self._codes = self._codes[keep].copy()
            self._scales = self._scales[keep].copy()
            self._cells = self._cells[keep].copy()
            self._sketch = self._sketch[keep].copy()
            self._size = len(self._scales)
            self._dropped += count
            self._sort_by_cell()

    def nearest(self, vector: Vector, k: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        """Positions of the ``k`` most similar rows, most similar first, and their cosines."""
        with self._lock:
            rows, rough = self._candidates(vector)
            if not len(rows) or k <= 0:
                return np.zeros(0, np.int64), np.zeros(0, np.float32)
            shortlist = max(RERANK, k)
            if rough is not None and len(rows) > shortlist:
                rows = rows[np.argpartition(-rough, shortlist - 1)[:shortlist]]
            sims = (self._codes[rows].astype(np.float32) @ vector) * self._scales[rows]
        if len(rows) > k:
            best = np.argpartition(-sims, k)[:k]
            rows, sims = rows[best], sims[best]
        order = np.argsort(-sims, kind="stable")
        return rows[order], sims[order]

    def exact_nearest(self, vector: Vector, k: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        """What :meth:`nearest` approximates: every row scored from its codes (slow at scale;
        for recall measurements)."""
        with self._lock:
            size = self._size
            sims = np.empty(size, np.float32)
            for start in range(0, size, 8192):  # bounded memory for the float copy
                end = min(size, start + 8192)
                sims[start:end] = (self._codes[start:end].astype(np.float32) @ vector
                                   ) * self._scales[start:end]
        best = np.argpartition(-sims, k)[:k] if size > k else np.arange(size)
        order = best[np.argsort(-sims[best], kind="stable")]
        return order.astype(np.int64), sims[order]

    def wait_for_training(self) -> None:
        """Block until a training on a thread has finished (tests and benchmarks)."""
        thread = self._training
        if thread is not None:
            thread.join()

    # -- internals ---------------------------------------------------------------------

    def _candidates(self, vector: Vector) -> tuple[IntArray, Vector | None]:
        """Rows in the cells nearest to ``vector`` and their sketch scores (None: score all)."""
        size = self._size
        if self._centroids is None or self._axes is None or size <= EXACT_LIMIT:
            return np.arange(size, dtype=np.int64), None
        cells = len(self._centroids)
        probes = max(1, math.ceil(cells * CANDIDATES / size))
        near = np.argpartition(-(self._centroids @ vector), min(probes, cells - 1))[:probes]
        starts, ends = self._cell_starts[near], self._cell_starts[near + 1]
        projected = vector @ self._axes
        rows, rough = [], []
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            rows.append(self._sorted_rows[a:b])
            rough.append(self._sorted_sketch[a:b] @ projected)  # a block: nothing is copied
        if size > self._sorted_end:  # rows added since the sort
            wanted = np.zeros(cells, bool)
            wanted[near] = True
            tail = self._sorted_end + np.flatnonzero(wanted[self._cells[self._sorted_end:size]])
            rows.append(tail.astype(np.int64))
            rough.append(self._sketch[tail] @ projected)
        return np.concatenate(rows), np.concatenate(rough)

    def _sort_by_cell(self) -> None:
        """Rebuild the cell-sorted copy of the sketches (caller holds the lock)."""
        if self._centroids is None:
            return
        size = self._size
        order = np.argsort(self._cells[:size], kind="stable").astype(np.int64)
        self._sorted_rows = order
        self._sorted_sketch = self._sketch[order]
        self._cell_starts = np.searchsorted(self._cells[:size][order],
                                            np.arange(len(self._centroids) + 1)).astype(np.int64)
        self._sorted_end = size

    def _grow(self, needed: int) -> None:
        capacity = len(self._scales)
        if needed <= capacity:
            return
        capacity = max(needed, capacity * 2, 256)
        codes = np.zeros((capacity, self.dimensions), np.int8)
        codes[: self._size] = self._codes[: self._size]
        self._codes = codes
        self._scales = np.resize(self._scales, capacity)
        self._cells = np.resize(self._cells, capacity)
        sketch = np.zeros((capacity, self._sketch.shape[1]), np.float32)
        sketch[: self._size] = self._sketch[: self._size]
        self._sketch = sketch

    def _start_training(self) -> None:
        if self._training is not None and self._training.is_alive():
            return
        self._trained_at = self._size
        if not self.background:
            self._train()
            return
        self._training = threading.Thread(target=self._train, name="pattern-index", daemon=True)
        self._training.start()

    def _train(self) -> None:
        with self._lock:
            size, dropped = self._size, self._dropped
            codes, scales = self._codes[:size].copy(), self._scales[:size].copy()
        cells = max(16, min(1024, round(math.sqrt(size))))
        rng = np.random.default_rng(size)
        sample = rng.choice(size, min(size, cells * SAMPLE_PER_CELL), replace=False)
        vectors = codes[sample].astype(np.float32) * scales[sample, None]
        centroids = _kmeans(vectors, cells, rng)
        axes = _principal_axes(vectors, self._sketch.shape[1])
        assigned, sketch = _place(codes, scales, centroids, axes)
        with self._lock:
            # Rows may have been dropped from the front or added at the end meanwhile.
            gone = min(self._dropped - dropped, size)
            kept = len(assigned) - gone
            self._cells[:kept] = assigned[gone:]
            self._sketch[:kept] = sketch[gone:]
            if self._size > kept:
                tail = slice(kept, self._size)
                self._cells[tail], self._sketch[tail] = _place(
                    self._codes[tail], self._scales[tail], centroids, axes)
            self._centroids, self._axes = centroids, axes
            self._sort_by_cell()


def _kmeans(sample: npt.NDArray[np.float32], cells: int,
            rng: np.random.Generator) -> npt.NDArray[np.float32]:
    """Spherical k-means: unit centroids that maximise the cosine to their members."""
    centroids = sample[rng.choice(len(sample), cells, replace=False)]
    for _ in range(KMEANS_ITERATIONS):
        labels = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, labels, sample)
        empty = ~sums.any(axis=1)
        sums[empty] = centroids[empty]
        centroids = sums / np.linalg.norm(sums, axis=1, keepdims=True)
    return centroids.astype(np.float32)


def _principal_axes(sample: Matrix, width: int) -> Matrix:
    """The ``width`` directions that keep most of the sample's inner products.

    Not centred: a query is scored by inner products, not by distances to the mean.
    """
    values, vectors = np.linalg.eigh(sample.T.astype(np.float64) @ sample)
    order = np.argsort(values)[::-1][:width]
    axes: Matrix = np.ascontiguousarray(vectors[:, order], dtype=np.float32)
    return axes


def _place(codes: Codes, scales: npt.NDArray[np.float32], centroids: Matrix,
           axes: Matrix) -> tuple[npt.NDArray[np.int32], Matrix]:
    """Each row's cell and sketch."""
    labels = np.empty(len(codes), np.int32)
    sketch = np.empty((len(codes), axes.shape[1]), np.float32)
    for start in range(0, len(codes), 8192):  # bounded memory for the float copy
        end = start + 8192
        block = codes[start:end].astype(np.float32) * scales[start:end, None]
        labels[start:end] = np.argmax(block @ centroids.T, axis=1)
        sketch[start:end] = block @ axes
    return labels, sketch
