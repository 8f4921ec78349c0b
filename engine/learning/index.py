"""Nearest-neighbour search over fingerprints: an inverted-file (IVF) index.

Rows are kept as int8 codes with one float scale each (a quarter of float32's
memory: 100,000 fingerprints take about 50 MB). Each row also has a *sketch*:
its projection onto the ``SKETCH_DIMENSIONS`` principal axes of the stored
fingerprints (float32, ready to multiply). The sketches are partitioned into
cells by spherical k-means; a second copy of them is kept by cell, as 8-bit
codes in faiss's inverted lists (:mod:`.cell_lists`), read by a compiled loop.

A query projects the fingerprint onto the axes, scores the cell centroids
(in sketch space: about 1,000 by 96 values), and reads the cells nearest to it,
best first, until ``CANDIDATES`` rows have been read. That budget is in rows,
not cells, so a query that lands among crowded cells costs no more than one
among sparse ones (the tail of the query time is bounded); in a young store,
whose cells are small, one product over every float32 sketch costs less and
is used instead (``CALL_ROWS``). The candidates are scored on their sketches,
and the best ``RERANK`` of them again exactly from their int8 codes. Rows
added since the lists were built are scored from an unsorted tail (their
float32 sketches); the lists are built again once the tail passes
``LAYOUT_SLACK`` rows or a sixteenth of the store. Below ``EXACT_LIMIT`` rows,
and until the first training, every row is scored exactly.

Axes and centroids come from one sample (an eigen-decomposition, then
spherical k-means on the sample's sketches, which is several times cheaper
than in the full width and partitions as well) and are trained again
whenever as many rows have arrived since the last training as it was trained on:
when a growing store has doubled, or when a full one (at its retention limit) has
replaced that many of its rows, so the cells follow what is stored; training can run on
a thread so a daemon never waits for it (numpy releases the GIL). Each training
hands its result to ``on_trained`` (the store saves it, :mod:`.index_state`) and
:meth:`VectorIndex.load` restores a saved one instead of training again.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from switchman.engine.learning.cell_lists import CellLists
from switchman.engine.learning.clustering import kmeans, principal_axes
from switchman.engine.learning.index_state import MIN_MATCHED, IndexState, checksum

EXACT_LIMIT = 1024
"""Up to this many rows, a query scores every row (exact)."""
CANDIDATES = 6000
"""How many rows (sorted, plus the unsorted tail's) a query scores on their sketches."""
SKETCH_DIMENSIONS = 96
"""Width of the sketch a query scores candidates on before re-scoring the best exactly."""
RERANK = 384
"""How many candidates (at least) a query re-scores exactly from their int8 codes."""
LAYOUT_SLACK = 1024
"""Rows added since the lists were built that a query scans unsorted (float32 sketches)."""
CALL_ROWS = 30
"""Sketch rows that cost as much to score as reading one more cell (a numpy call, about
1 µs, measured): a query that would read many small cells scores every row's float32
sketch in one product instead (faster than faiss's lists below a few thousand rows)."""
CELLS_PER_ROOT = 3.2
"""Cells per square root of the store's size (about 1,000 at 100,000 rows)."""
MAX_CELLS = 1024
SAMPLE_PER_CELL = 20
MIN_SAMPLE = 20_000
"""Training looks at this many rows at least (all of a smaller store)."""

Vector = npt.NDArray[np.float32]
"""A fingerprint as numpy sees it (:func:`.fingerprint.fingerprint` gives float32 values)."""
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

    def __init__(self, dimensions: int, *, background: bool = False,
                 max_rows: int | None = None) -> None:
        self.dimensions = dimensions
        self.background = background
        self.max_rows = max_rows
        """Rows the owner keeps at most (its retention): growth never reserves more."""
        self._codes: Codes = np.zeros((0, dimensions), np.int8)
        self._scales = np.zeros(0, np.float32)
        self._keys = np.zeros(0, np.int64)
        """Each row's database id (-1: none), so a saved training can be matched to rows."""
        self._cells = np.zeros(0, np.int32)
        self._sketch: Matrix = np.zeros((0, min(SKETCH_DIMENSIONS, dimensions)), np.float32)
        self._centroids: Matrix | None = None
        """Cell centres in sketch space (cells by sketch width)."""
        self._axes: Matrix | None = None
        """Principal axes (``dimensions`` by sketch width); set with the centroids."""
        self._lists: CellLists | None = None
        """The sketches of positions [0, _sorted_end) in their cells (once trained)."""
        self._cell_sizes = np.zeros(0, np.int64)
        self._sorted_end = 0
        self._shortlist_codes: Codes = np.zeros((0, dimensions), np.int8)
        self._shortlist_floats: Matrix = np.zeros((0, dimensions), np.float32)
        self._trained_at = 0
        """Rows the store held at the last training."""
        self._arrived = 0
        """Rows added since the last training started (a full store keeps its size)."""
        self._size = 0
        self._dropped = 0
        self._lock = threading.Lock()
        self._training: threading.Thread | None = None
        self.on_trained: Callable[[IndexState], None] | None = None
        """Called (on the training's thread) with each training's result."""
        self.trainings = 0
        """Trainings started (restoring a saved one is not a training)."""
        self.full_scans = 0
        """Queries answered by scoring every row: small stores, or an untrained large one."""

    def __len__(self) -> int:
        return self._size

    def add(self, vector: Vector) -> None:
        """Append one fingerprint (position ``len(self)`` before the call)."""
        codes, scale = encode(vector)
        self.add_encoded(codes, scale)

    def add_encoded(self, codes: Codes, scale: float, key: int = -1) -> None:
        """Append one fingerprint given as int8 codes and their scale (``key``: its row id)."""
        with self._lock:
            self._grow(self._size + 1)
            self._codes[self._size] = codes
            self._scales[self._size] = scale
            self._keys[self._size] = key
            if self._centroids is not None and self._axes is not None:
                at = slice(self._size, self._size + 1)
                self._cells[at], self._sketch[at] = _place(
                    codes[None, :], np.array([scale], np.float32), self._centroids, self._axes)
            else:
                self._cells[self._size] = -1
            self._size += 1
            self._arrived += 1
            if self._size - self._sorted_end > max(LAYOUT_SLACK, self._size // 16):
                self._lay_out_cells()
        if self._size >= EXACT_LIMIT and self._arrived >= self._trained_at:
            self._start_training()

    def load(self, codes: Codes, scales: npt.NDArray[np.float32],
             keys: npt.NDArray[np.int64] | None = None, saved: IndexState | None = None) -> None:
        """Append many encoded fingerprints at once (opening a store), then train once,
        unless ``saved`` (an earlier training of these rows, by ``keys``) can be restored."""
        restored = False
        with self._lock:
            self._grow(self._size + len(scales))
            end = self._size + len(scales)
            self._codes[self._size: end] = codes
            self._scales[self._size: end] = scales
            self._keys[self._size: end] = -1 if keys is None else keys
            if saved is not None and not self._size and self._restore(saved, end):
                restored = True
            elif self._centroids is not None and self._axes is not None:
                self._cells[self._size: end], self._sketch[self._size: end] = _place(
                    codes, scales, self._centroids, self._axes)
            else:
                self._cells[self._size: end] = -1
            self._arrived += 0 if restored else len(scales)
            self._size = end
            self._lay_out_cells()
        if self._size >= EXACT_LIMIT and not (restored and self._arrived < self._trained_at):
            self._start_training()

    def drop_oldest(self, count: int) -> None:
        """Forget the first ``count`` positions (the retention limit was reached)."""
        with self._lock:
            count = min(count, self._size)
            # Moved down in place: the arrays keep their capacity, so the next add does not
            # reallocate (a full store drops a tenth and grows back, over and over).
            kept = self._size - count
            for array in (self._codes, self._scales, self._keys, self._cells, self._sketch):
                array[:kept] = array[count: self._size]
            self._size = kept
            self._sorted_end = min(self._sorted_end, kept)
            self._dropped += count
            self._lay_out_cells()

    def nearest(self, vector: Vector, k: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        """Positions of the ``k`` most similar rows, most similar first, and their cosines."""
        if k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        with self._lock:
            if self._centroids is None or self._axes is None or self._size <= EXACT_LIMIT:
                rows, sims = np.arange(self._size, dtype=np.int64), self._scan(vector)
                self.full_scans += 1
            else:
                rows = self._shortlist(vector, max(RERANK, k))
                sims = self._exact(rows, vector)
        return _best(rows, sims, k)

    def exact_nearest(self, vector: Vector, k: int) -> tuple[IntArray, npt.NDArray[np.float32]]:
        """What :meth:`nearest` approximates: every row scored from its codes (slow at scale;
        for recall measurements)."""
        with self._lock:
            sims = self._scan(vector)
        return _best(np.arange(len(sims), dtype=np.int64), sims, k)

    def wait_for_training(self) -> None:
        """Block until a training on a thread has finished (tests and benchmarks)."""
        thread = self._training
        if thread is not None:
            thread.join()

    # -- internals ---------------------------------------------------------------------

    def _restore(self, saved: IndexState, end: int) -> bool:
        """Give rows [0, end) their saved cells and sketches, placing those the state does
        not know; False (nothing changed) if it does not fit (caller holds the lock)."""
        if saved.dimensions != self.dimensions or saved.axes.shape[1] != self._sketch.shape[1]:
            return False
        found, at = saved.locate(self._keys[:end], checksum(self._codes[:end]))
        if found.sum() < MIN_MATCHED * end:
            return False
        known, unknown = np.flatnonzero(found), np.flatnonzero(~found)
        self._cells[known], self._sketch[known] = saved.cells[at[known]], saved.sketch[at[known]]
        if len(unknown):
            self._cells[unknown], self._sketch[unknown] = _place(
                self._codes[unknown], self._scales[unknown], saved.centroids, saved.axes)
        self._axes, self._centroids = saved.axes, saved.centroids
        self._trained_at = saved.trained_at
        self._arrived = len(unknown)  # the rows stored since that training
        return True

    def _exact(self, rows: IntArray, vector: Vector) -> Vector:
        """Cosines of ``rows`` from their int8 codes (caller holds the lock).

        A shortlist's codes are converted in buffers kept between queries: a fresh float
        array of this size per query costs more than the product itself. They are gathered
        with ``mode="clip"`` (the rows are valid positions): the default mode copies them
        into a hidden buffer first, which doubled the gather's time.
        """
        if len(rows) > len(self._shortlist_codes):
            self._shortlist_codes = np.empty((len(rows), self.dimensions), np.int8)
            self._shortlist_floats = np.empty((len(rows), self.dimensions), np.float32)
        codes = self._shortlist_codes[: len(rows)]
        floats = self._shortlist_floats[: len(rows)]
        np.take(self._codes, rows, axis=0, out=codes, mode="clip")
        np.copyto(floats, codes)
        sims: Vector = floats @ vector
        sims *= self._scales[rows]
        return sims

    def _scan(self, vector: Vector) -> Vector:
        """Cosines of every row (caller holds the lock): small stores, and a large one
        until its first training has finished."""
        size = self._size
        sims = np.empty(size, np.float32)
        for start in range(0, size, 8192):  # bounded memory for the float copy
            end = min(size, start + 8192)
            sims[start:end] = (self._codes[start:end].astype(np.float32) @ vector
                               ) * self._scales[start:end]
        return sims

    def _shortlist(self, vector: Vector, count: int) -> IntArray:
        """The ``count`` candidates with the best sketch scores (caller holds the lock)."""
        rows, scores = self._candidates(vector)
        if len(scores) <= count:
            return rows
        return rows[np.argpartition(scores, len(scores) - count)[-count:]]

    def _candidates(self, vector: Vector) -> tuple[IntArray, Vector]:
        """The rows in the cells nearest to ``vector`` (those in the lists, then the
        unsorted tail's) and their sketch scores (trained only; caller holds the lock)."""
        assert self._centroids is not None  # nearest checks before calling
        assert self._axes is not None
        assert self._lists is not None
        projected: Vector = vector @ self._axes
        near = self._cells_to_read(self._centroids @ projected)
        tail = self._tail(near)
        sorted_end = self._sorted_end
        if sorted_end <= int(self._cell_sizes[near].sum()) + CALL_ROWS * len(near):
            # The cells are so small (a young store) that one product over every laid-out
            # row's float32 sketch costs less than a list per cell: read them all.
            rows: IntArray = np.arange(sorted_end, dtype=np.int64)
            scores: Vector = self._sketch[:sorted_end] @ projected
        else:
            scores, rows = self._lists.scores(projected, near)
        if len(tail):  # rows added since the lists were built, scored from their sketches
            rows = np.concatenate([rows, tail])
            scores = np.concatenate([scores, self._sketch[tail] @ projected])
        return rows, scores

    def _tail(self, near: IntArray) -> IntArray:
        """Rows added since the sort that lie in the cells ``near`` (caller holds the lock)."""
        size = self._size
        if size <= self._sorted_end:
            return np.zeros(0, np.int64)
        assert self._centroids is not None
        wanted = np.zeros(len(self._centroids), bool)
        wanted[near] = True
        tail: IntArray = self._sorted_end + np.flatnonzero(
            wanted[self._cells[self._sorted_end:size]])
        return tail.astype(np.int64)

    def _cells_to_read(self, similarity: Vector) -> IntArray:
        """The cells nearest first, as many as it takes to read ``CANDIDATES`` rows."""
        cells = len(similarity)
        # Sort only the likeliest cells: several times as many as an average cell size
        # needs; if even they hold too few rows, sort them all.
        likely = min(cells, max(32, 4 * CANDIDATES * cells // max(1, self._sorted_end)))
        order = np.argpartition(similarity, cells - likely)[cells - likely:]
        order = order[np.argsort(-similarity[order])]
        read = np.cumsum(self._cell_sizes[order])
        if read[-1] < CANDIDATES and likely < cells:
            order = np.argsort(-similarity)
            read = np.cumsum(self._cell_sizes[order])
        count = int(np.searchsorted(read, CANDIDATES)) + 1
        return order[:count]

    def _lay_out_cells(self) -> None:
        """Lay every row out in its cell again, in the faiss lists (caller holds the lock)."""
        if self._centroids is None:
            return
        size = self._size
        cells = self._cells[:size]
        self._lists = CellLists(self._centroids, self._sketch[:size], cells)
        self._cell_sizes = np.bincount(cells, minlength=len(self._centroids)).astype(np.int64)
        self._sorted_end = size

    def _grow(self, needed: int) -> None:
        capacity = len(self._scales)
        if needed <= capacity:
            return
        capacity = max(needed, capacity * 2, 256)
        if self.max_rows is not None:
            capacity = max(needed, min(capacity, self.max_rows + 1))
        codes = np.zeros((capacity, self.dimensions), np.int8)
        codes[: self._size] = self._codes[: self._size]
        self._codes = codes
        self._scales = np.resize(self._scales, capacity)
        self._keys = np.resize(self._keys, capacity)
        self._cells = np.resize(self._cells, capacity)
        sketch = np.zeros((capacity, self._sketch.shape[1]), np.float32)
        sketch[: self._size] = self._sketch[: self._size]
        self._sketch = sketch

    def _start_training(self) -> None:
        if self._training is not None and self._training.is_alive():
            return
        self._trained_at, self._arrived = self._size, 0
        self.trainings += 1
        if not self.background:
            self._train()
            return
        self._training = threading.Thread(target=self._train, name="pattern-index", daemon=True)
        self._training.start()

    def _train(self) -> None:
        with self._lock:
            size, dropped = self._size, self._dropped
            codes, scales = self._codes[:size].copy(), self._scales[:size].copy()
            keys = self._keys[:size].copy()
        cells = max(16, min(MAX_CELLS, round(CELLS_PER_ROOT * math.sqrt(size))))
        rng = np.random.default_rng(size)
        sample = rng.choice(size, min(size, max(MIN_SAMPLE, cells * SAMPLE_PER_CELL)),
                            replace=False)
        vectors: Matrix = codes[sample].astype(np.float32) * scales[sample, None]
        axes = principal_axes(vectors, self._sketch.shape[1])
        sketches: Matrix = vectors @ axes
        centroids = kmeans(sketches, cells, rng)
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
            self._lay_out_cells()
        if self.on_trained is not None:  # the rows as trained: those added since are placed
            self.on_trained(IndexState(self.dimensions, size, axes, centroids, keys,
                                       checksum(codes), assigned, sketch))


def _best(rows: IntArray, sims: Vector, k: int) -> tuple[IntArray, Vector]:
    """The ``k`` rows with the highest ``sims``, highest first (ties: lower position first)."""
    if len(rows) > k:
        best = np.argpartition(sims, len(rows) - k)[-k:]
        rows, sims = rows[best], sims[best]
    order = np.argsort(-sims, kind="stable")
    return rows[order], sims[order]


def _place(codes: Codes, scales: npt.NDArray[np.float32], centroids: Matrix,
           axes: Matrix) -> tuple[npt.NDArray[np.int32], Matrix]:
    """Each row's sketch and the cell whose centroid is nearest to it."""
    labels = np.empty(len(codes), np.int32)
    sketch = np.empty((len(codes), axes.shape[1]), np.float32)
    for start in range(0, len(codes), 8192):  # bounded memory for the float copy
        end = start + 8192
        block = codes[start:end].astype(np.float32) * scales[start:end, None]
        sketch[start:end] = block @ axes
        labels[start:end] = np.argmax(sketch[start:end] @ centroids.T, axis=1)
    return labels, sketch
