"""A trained index saved beside ``patterns.db``, so that a reopened store need not train.

Training a full store (principal axes, spherical k-means, placing every row)
takes seconds; until it finishes every query scans all rows. The trained state
is therefore written to a file after each training: the axes, the centroids
and, per row, its database id, a checksum of its int8 codes, its cell and its
sketch. Reopening the store reads the file and gives every row whose id *and*
checksum match its saved cell and sketch; rows added since are placed with the
saved centroids (as rows added after a training always are).

The file is a cache, never a source of truth: one of another version, another
fingerprint width, malformed, unreadable, or matching too few of the rows is
ignored and the index trains as it would without it.
"""

from __future__ import annotations

import logging
import os
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

VERSION = 1
"""Bumped whenever the file's contents or the way sketches and cells are made change."""
MIN_MATCHED = 0.75
"""Share of the rows the file must know; below it, training again is cheaper in the long
run (a retrained state is saved and matches the next opening)."""

_log = logging.getLogger(__name__)

Keys = npt.NDArray[np.int64]


@dataclass(frozen=True)
class IndexState:
    """What a training produced, per row by database id."""

    dimensions: int
    trained_at: int
    """Rows the store held when it was trained (it trains again once as many have
    arrived since)."""
    axes: npt.NDArray[np.float32]
    centroids: npt.NDArray[np.float32]
    keys: Keys
    checksums: Keys
    cells: npt.NDArray[np.int32]
    sketch: npt.NDArray[np.float32]

    def locate(self, keys: Keys, checksums: Keys) -> tuple[npt.NDArray[np.bool_], Keys]:
        """For each row given, whether the state knows it, and its position in the state."""
        if not len(self.keys):
            return np.zeros(len(keys), bool), np.zeros(len(keys), np.int64)
        order = np.argsort(self.keys, kind="stable")
        at = order[np.minimum(np.searchsorted(self.keys[order], keys), len(order) - 1)]
        found = (self.keys[at] == keys) & (self.checksums[at] == checksums)
        return found, at.astype(np.int64)


def checksum(codes: npt.NDArray[np.int8]) -> Keys:
    """A cheap per-row checksum of int8 codes (ids can be reused after rows are deleted):
    the sum of each row's codes.

    Summed *into* int64 (numpy widens through a small buffer as it goes), never by
    converting the codes first: an int64 copy of a full store's codes is eight times
    their size (450 MB at 100,000 rows), made at every opening and every training.
    """
    sums: Keys = codes.sum(axis=1, dtype=np.int64)
    return sums


def write(path: Path, state: IndexState) -> None:
    """Save ``state`` atomically (a reader never sees half a file); failures are logged."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("wb") as out:
            np.savez(out, version=np.array([VERSION, state.dimensions, state.trained_at]),
                     axes=state.axes, centroids=state.centroids, keys=state.keys,
                     checksums=state.checksums, cells=state.cells, sketch=state.sketch)
        os.replace(temporary, path)
    except OSError as error:
        _log.warning("could not save the pattern index to %s: %s", path, error)


def read(path: Path, dimensions: int) -> IndexState | None:
    """The state saved at ``path`` if it is whole and fits ``dimensions``; else None."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            arrays = {name: saved[name] for name in (
                "version", "axes", "centroids", "keys", "checksums", "cells", "sketch")}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, zipfile.BadZipFile) as error:
        _log.info("ignoring the saved pattern index %s: %s", path, error)
        return None
    state = _checked(arrays, dimensions)
    if state is None:
        _log.info("ignoring the saved pattern index %s: another version or shape", path)
    return state


def _checked(a: dict[str, npt.NDArray[np.generic]], dimensions: int) -> IndexState | None:
    """The arrays as a state, if their versions, types and shapes agree."""
    version = a["version"]
    if version.shape != (3,) or version.dtype.kind != "i" or version[0] != VERSION \
            or version[1] != dimensions:
        return None
    axes, centroids, sketch = a["axes"], a["centroids"], a["sketch"]
    keys, checksums, cells = a["keys"], a["checksums"], a["cells"]
    rows = len(keys)
    if (axes.dtype != np.float32 or centroids.dtype != np.float32 or sketch.dtype != np.float32
            or keys.dtype != np.int64 or checksums.dtype != np.int64
            or cells.dtype != np.int32 or axes.ndim != 2 or centroids.ndim != 2
            or axes.shape[0] != dimensions or centroids.shape[1] != axes.shape[1]
            or not len(centroids) or sketch.shape != (rows, axes.shape[1])
            or checksums.shape != (rows,) or cells.shape != (rows,)):
        return None
    if rows and (cells.min() < 0 or cells.max() >= len(centroids)):
        return None
    if not (np.isfinite(axes).all() and np.isfinite(centroids).all()
            and np.isfinite(sketch).all()):
        return None
    # The types are checked above: these conversions copy nothing.
    return IndexState(int(version[1]), int(version[2]), axes.astype(np.float32, copy=False),
                      centroids.astype(np.float32, copy=False), keys.astype(np.int64, copy=False),
                      checksums.astype(np.int64, copy=False), cells.astype(np.int32, copy=False),
                      sketch.astype(np.float32, copy=False))
