"""A large workspace's learned rows in memory: the k-NN index and the columns scoring reads.

Kept apart from :mod:`.store` because it needs numpy, which the store imports
only when a workspace has more rows than :mod:`.small_workspace` scores in plain
Python: a daemon whose workspaces have few rows never loads it.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np

from switchman.engine.learning import database as db
from switchman.engine.learning import index_state
from switchman.engine.learning.columns import ScoringColumns
from switchman.engine.learning.fingerprint import DIMENSIONS
from switchman.engine.learning.index import VectorIndex


class WorkspaceIndex(ScoringColumns):
    """One workspace's index and the scoring columns, by index position."""

    def __init__(self, background: bool, max_rows: int | None = None) -> None:
        super().__init__()
        self.index = VectorIndex(DIMENSIONS, background=background, max_rows=max_rows)

    @classmethod
    def loaded(cls, rows: Iterable[db.PatternRow], background: bool,
               max_rows: int | None = None, saved: Path | None = None) -> WorkspaceIndex:
        """The index over ``rows`` (a workspace's, oldest first), never holding more than
        ``max_rows`` (the store's retention). With ``saved``, a file holding the index's
        last training: restored from it when it fits the rows, and rewritten after each
        training.

        The rows are taken one at a time, their codes gathered into one buffer as they
        come: a list of every row read (100,000 of them: about 150 MB of Python objects)
        is never held beside the index being built.
        """
        space = cls(background, max_rows)
        if saved is not None:
            space.index.on_trained = lambda state: index_state.write(saved, state)
        codes, scales, ids = bytearray(), array("f"), array("q")
        for row in rows:
            codes += row.codes
            scales.append(row.scale)
            ids.append(row.id)
            space.append(row)
        if ids:
            space.index.load(np.frombuffer(codes, np.int8).reshape(len(ids), DIMENSIONS),
                             np.frombuffer(scales, np.float32),
                             np.frombuffer(ids, np.int64),
                             None if saved is None else index_state.read(saved, DIMENSIONS))
        return space

    def add(self, row: db.PatternRow) -> None:
        """Index a row stored after the load (``row.id`` is its database id)."""
        self.index.add_encoded(np.frombuffer(row.codes, np.int8), row.scale, row.id)
        self.append(row)

    def nearest(self, vector: Sequence[float], k: int) -> tuple[list[int], list[float]]:
        """Positions of the ``k`` rows most similar to ``vector`` and their cosines."""
        positions, sims = self.index.nearest(np.asarray(vector, np.float32), k)
        return positions.tolist(), sims.tolist()

    def drop_oldest(self, count: int) -> None:
        """Forget the first ``count`` rows (the retention limit was reached)."""
        self.index.drop_oldest(count)
        self.drop_columns(count)
