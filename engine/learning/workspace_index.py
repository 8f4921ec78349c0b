"""One workspace's learned rows in memory: the k-NN index and the columns scoring reads.

Kept apart from :mod:`.store` because it needs numpy, which the store imports
only when a workspace's rows are first needed (a decision or a recorded turn):
an idle daemon never loads it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from switchman.engine.learning import database as db
from switchman.engine.learning import index_state
from switchman.engine.learning.fingerprint import DIMENSIONS
from switchman.engine.learning.index import VectorIndex


class WorkspaceIndex:
    """One workspace's index and the scoring columns, by index position."""

    def __init__(self, background: bool, max_rows: int | None = None) -> None:
        self.index = VectorIndex(DIMENSIONS, background=background, max_rows=max_rows)
        self.turn_ids: list[str] = []
        self.models: list[str] = []
        self.success: list[float] = []
        self.samples: list[int] = []
        self.cost: list[float] = []
        self.position: dict[str, int] = {}

    @classmethod
    def loaded(cls, rows: list[db.PatternRow], background: bool,
               max_rows: int | None = None, saved: Path | None = None) -> WorkspaceIndex:
        """The index over ``rows`` (a workspace's, oldest first), never holding more than
        ``max_rows`` (the store's retention). With ``saved``, a file holding the index's
        last training: restored from it when it fits the rows, and rewritten after each
        training."""
        space = cls(background, max_rows)
        if saved is not None:
            space.index.on_trained = lambda state: index_state.write(saved, state)
        if rows:
            codes = np.frombuffer(b"".join(r.codes for r in rows), np.int8)
            space.index.load(codes.reshape(len(rows), DIMENSIONS),
                             np.array([r.scale for r in rows], np.float32),
                             np.array([r.id for r in rows], np.int64),
                             None if saved is None else index_state.read(saved, DIMENSIONS))
            for row in rows:
                space.append(row)
        return space

    def add(self, row: db.PatternRow) -> None:
        """Index a row stored after the load (``row.id`` is its database id)."""
        self.index.add_encoded(np.frombuffer(row.codes, np.int8), row.scale, row.id)
        self.append(row)

    def append(self, row: db.PatternRow) -> None:
        """The row's scoring columns, at the next position (its codes are indexed already)."""
        self.position[row.turn_id] = len(self.turn_ids)
        self.turn_ids.append(row.turn_id)
        self.models.append(row.model)
        self.success.append(row.success)
        self.samples.append(row.samples)
        self.cost.append(row.cost_usd)

    def drop_oldest(self, count: int) -> None:
        self.index.drop_oldest(count)
        self.turn_ids = self.turn_ids[count:]
        self.models = self.models[count:]
        self.success, self.samples, self.cost = (
            self.success[count:], self.samples[count:], self.cost[count:])
        self.position = {t: i for i, t in enumerate(self.turn_ids)}
