"""What scoring reads of a workspace's learned rows, by index position (no numpy)."""

from __future__ import annotations

import sys
from array import array

from switchman.engine.learning import database as db


class ScoringColumns:
    """Turn ids, models, success scores, samples and costs of a workspace's rows, in the
    order of its k-NN index; ``position`` finds a turn's row.

    Scores and costs are C doubles (``array``) and each model name is kept once
    (interned): a query reads its neighbours' columns at scattered positions, and a
    float object per row (two per row, 100,000 rows) made each of those reads a cache
    miss of its own, and took 5 MB more.
    """

    def __init__(self) -> None:
        self.turn_ids: list[str] = []
        self.models: list[str] = []
        self.success: array[float] = array("d")
        self.samples: list[int] = []
        self.cost: array[float] = array("d")
        self.position: dict[str, int] = {}

    def append(self, row: db.PatternRow) -> None:
        """The row's scoring columns, at the next position (its codes are indexed already)."""
        self.position[row.turn_id] = len(self.turn_ids)
        self.turn_ids.append(row.turn_id)
        self.models.append(sys.intern(row.model))
        self.success.append(row.success)
        self.samples.append(row.samples)
        self.cost.append(row.cost_usd)

    def drop_columns(self, count: int) -> None:
        """Forget the first ``count`` positions' columns."""
        self.turn_ids = self.turn_ids[count:]
        self.models = self.models[count:]
        self.success, self.samples, self.cost = (
            self.success[count:], self.samples[count:], self.cost[count:])
        self.position = {t: i for i, t in enumerate(self.turn_ids)}
