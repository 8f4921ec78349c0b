"""The durable pattern store behind slot 4: remember turns, recommend from similar ones.

Rows live in ``patterns.db`` (:mod:`.database`); each workspace has an
in-memory :class:`VectorIndex` over its rows, loaded on first use, plus the
columns scoring needs (model, success, samples, cost) as numpy arrays, so a
recommendation is one k-NN query and the §5.5 scoring of K neighbours.

Retention: at most ``max_rows`` turns per workspace (default 100,000);
past that the oldest tenth is forgotten, in the database too.

Each workspace's trained index is saved in ``patterns-index/`` beside the
database (:mod:`.index_state`), so a reopened store answers from its index at
once instead of scanning every row while it trains again.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from switchman.engine.clock import Clock
from switchman.engine.config.policy import PatternSettings
from switchman.engine.learning import database as db
from switchman.engine.learning.evaluator import (
    Evidence,
    NextAction,
    message_hash,
    next_action,
    success_score,
)
from switchman.engine.patterns import (
    PatternNeighbor,
    PatternRecommendation,
    neighbourhood,
    pool_size,
    score_neighbors,
)
from switchman.engine.routing.context import TurnContext

if TYPE_CHECKING:
    from switchman.engine.learning.fingerprint import Vector
    from switchman.engine.learning.index import VectorIndex
    from switchman.engine.learning.workspace_index import WorkspaceIndex

MAX_ROWS = 100_000
INDEX_FOLDER = "patterns-index"


class TurnRecord(msgspec.Struct, frozen=True, kw_only=True):
    """A turn that has just ended, as the store needs it."""

    context: TurnContext
    turn_id: str
    session_id: str
    model: str
    status: str
    cost_usd: float = 0.0
    tool_errors: int = 0
    is_worker: bool = False
    planner_turn_id: str | None = None


class Neighbour(msgspec.Struct, frozen=True):
    """A similar past turn, as "why this model?" shows it."""

    model: str
    success: float
    samples: int
    cost_usd: float
    similarity: float


class WorkspaceStats(msgspec.Struct, frozen=True):
    """What the store holds for one workspace."""

    workspace: str
    turns: int
    by_model: dict[str, tuple[int, float]]
    """model → (turns, mean success)."""
    oldest: str | None
    newest: str | None


class LearnedPatternStore:
    """Pattern rows per workspace in SQLite, k-NN in memory (implements ``PatternStore``)."""

    def __init__(self, connection: sqlite3.Connection, clock: Clock, *,
                 max_rows: int = MAX_ROWS, background: bool = True,
                 fingerprinter: Callable[[TurnContext], Vector] | None = None) -> None:
        self.connection = connection
        self._fingerprinter = fingerprinter
        self.clock = clock
        self.max_rows = max_rows
        self.background = background
        self._workspaces: dict[str, WorkspaceIndex] = {}
        self._lock = threading.RLock()

    # -- slot 4 ------------------------------------------------------------------------

    def recommend(self, ctx: TurnContext,
                  settings: PatternSettings) -> PatternRecommendation | None:
        """Score the past turns of the workspace most similar to ``ctx`` (§5.5, with the
        workspace's neighbourhood and similarity settings)."""
        found = self.neighbours(ctx, settings.neighbors, settings)
        return score_neighbors([PatternNeighbor(n.model, n.success, n.samples, n.cost_usd,
                                                n.similarity) for n in found],
                               settings.cost_weight, settings.similarity_exponent)

    def neighbours(self, ctx: TurnContext, k: int,
                   settings: PatternSettings | None = None) -> list[Neighbour]:
        """The ``k`` past turns of the workspace most similar to ``ctx`` (with
        ``neighborhood: per_model`` in ``settings``, the ``k`` nearest of each model)."""
        space = self._workspace(_key(ctx))
        if not len(space.index):
            return []
        wanted = PatternSettings(neighbors=k) if settings is None else settings
        positions, sims = space.index.nearest(self.fingerprint(ctx), pool_size(wanted))
        picked, similarity = positions.tolist(), sims.tolist()
        found = []
        for i in neighbourhood([space.models[p] for p in picked], wanted):
            p = picked[i]
            found.append(Neighbour(space.models[p], space.success[p], space.samples[p],
                                   space.cost[p], round(similarity[i], 4)))
        return found

    # -- recording ---------------------------------------------------------------------

    def record(self, turn: TurnRecord) -> None:
        """Remember a turn that has ended (top-level or worker alike)."""
        from switchman.engine.learning.index import encode  # noqa: PLC0415 - see fingerprint()

        codes, scale = encode(self.fingerprint(turn.context))
        evidence = Evidence(status=turn.status, tool_errors=turn.tool_errors)
        row = db.PatternRow(
            workspace=_key(turn.context), turn_id=turn.turn_id, session_id=turn.session_id,
            model=turn.model, recorded_at=self.clock.now().isoformat(), cost_usd=turn.cost_usd,
            message_hash=message_hash(turn.context.message), codes=codes.tobytes(), scale=scale,
            evidence=evidence, success=success_score(evidence), is_worker=turn.is_worker,
            planner_turn_id=turn.planner_turn_id)
        with self._lock:
            space = self._workspace(row.workspace)
            if row.turn_id in space.position:
                return  # recorded already (a turn ends once)
            space.index.add_encoded(codes, scale, db.insert(self.connection, row))
            space.append(row)
            if len(space.turn_ids) > self.max_rows:
                drop = max(1, self.max_rows // 10)
                db.delete_oldest(self.connection, row.workspace, drop)
                space.drop_oldest(drop)

    def observe_message(self, session_id: str, text: str, rerouted_to: str | None) -> None:
        """A new message in a session: what it says about the session's previous turn."""
        with self._lock:
            previous = db.last_of_session(self.connection, session_id)
            if previous is None or previous.evidence.next_action is not None:
                return
            action = next_action(previous.message_hash, previous.model, message_hash(text),
                                 rerouted_to)
            self._update(previous, next_action=action)

    def model_changed(self, session_id: str) -> None:
        """The session's model was changed before its next message."""
        with self._lock:
            previous = db.last_of_session(self.connection, session_id)
            if previous is not None and previous.evidence.next_action is None:
                self._update(previous, next_action=NextAction.MODEL_CHANGED)

    def set_next_action(self, turn_id: str, action: NextAction) -> None:
        """Record the user's next action after ``turn_id`` (``/model``, ``/route …``)."""
        with self._lock:
            row = db.by_turn(self.connection, turn_id)
            if row is None:
                return
            soft = row.evidence.next_action in (None, NextAction.MOVED_ON)
            if soft or action is NextAction.OVERRIDDEN:
                self._update(row, next_action=action)

    def feedback(self, turn_id: str, value: int) -> bool:
        """Explicit 👍 (+1) / 👎 (-1) on a turn; False if the turn was never recorded."""
        with self._lock:
            row = db.by_turn(self.connection, turn_id)
            if row is None:
                return False
            self._update(row, feedback=1 if value > 0 else -1)
            return True

    def feedback_of_session(self, session_id: str) -> dict[str, int]:
        """The 👍 (+1) / 👎 (-1) given to a session's turns, by turn id (rows retention dropped
        have none)."""
        with self._lock:
            return db.feedback_of_session(self.connection, session_id)

    def delegation_ended(self, planner_turn_id: str, success: bool) -> None:
        """A worker of ``planner_turn_id`` finished; only its success flag reaches the planner."""
        with self._lock:
            row = db.by_turn(self.connection, planner_turn_id)
            if row is None:
                return
            e = row.evidence
            self._update(row, delegations=e.delegations + 1,
                         delegations_failed=e.delegations_failed + (0 if success else 1))

    def _update(self, row: db.PatternRow, **changes: object) -> None:
        evidence = msgspec.structs.replace(row.evidence, **changes)
        score = success_score(evidence)
        db.update_evidence(self.connection, row.turn_id, evidence, score)
        space = self._workspaces.get(row.workspace)
        if space is not None and row.turn_id in space.position:
            space.success[space.position[row.turn_id]] = score

    # -- management --------------------------------------------------------------------

    def stats(self) -> list[WorkspaceStats]:
        """Counts and mean success per model, per workspace."""
        result: dict[str, dict[str, tuple[int, float]]] = {}
        spans: dict[str, tuple[str, str]] = {}
        for raw in self.connection.execute(
                "SELECT workspace, model, COUNT(*), AVG(success), MIN(recorded_at),"
                " MAX(recorded_at) FROM pattern_turns GROUP BY workspace, model"):
            result.setdefault(raw[0], {})[raw[1]] = (raw[2], round(raw[3], 4))
            low, high = spans.get(raw[0], (raw[4], raw[5]))
            spans[raw[0]] = (min(low, raw[4]), max(high, raw[5]))
        return [WorkspaceStats(w, sum(n for n, _ in models.values()), models, *spans[w])
                for w, models in sorted(result.items())]

    def forget(self, workspace: str | None = None) -> int:
        """Delete every row (of one workspace folder when given); returns how many."""
        with self._lock:
            count = db.delete_workspace(self.connection, workspace)
            if workspace is None:
                self._workspaces.clear()
            else:
                self._workspaces.pop(workspace, None)
            saved = self._saved_index(workspace or "")
            if saved is not None and workspace is None:
                shutil.rmtree(saved.parent, ignore_errors=True)
            elif saved is not None:
                saved.unlink(missing_ok=True)
            return int(count)

    def export(self, workspace: str | None = None) -> Iterator[dict[str, object]]:
        """Every row as plain data: no message text exists to export, only hashes."""
        for row in db.rows(self.connection, workspace):
            yield {"workspace": row.workspace, "turn_id": row.turn_id,
                   "session_id": row.session_id, "model": row.model,
                   "recorded_at": row.recorded_at, "cost_usd": row.cost_usd,
                   "success": row.success, "samples": row.samples,
                   "is_worker": row.is_worker, "message_hash": row.message_hash,
                   "evidence": msgspec.to_builtins(row.evidence)}

    def fingerprint(self, ctx: TurnContext) -> Vector:
        """The turn's fingerprint (by default :func:`.fingerprint.fingerprint`)."""
        if self._fingerprinter is None:
            # numpy is imported when the store is first used, not with the engine: an idle
            # daemon then stays 12-17 MiB smaller
            from switchman.engine.learning.fingerprint import fingerprint  # noqa: PLC0415

            self._fingerprinter = fingerprint
        return self._fingerprinter(ctx)

    def index_of(self, workspace: str) -> VectorIndex:
        """The workspace's k-NN index, loaded if needed (diagnostics, tests, benchmarks)."""
        return self._workspace(workspace).index

    def _workspace(self, key: str) -> WorkspaceIndex:
        with self._lock:
            space = self._workspaces.get(key)
            if space is None:
                space = self._workspaces[key] = self._load(key)
            return space

    def _load(self, key: str) -> WorkspaceIndex:
        from switchman.engine.learning.workspace_index import WorkspaceIndex  # noqa: PLC0415

        return WorkspaceIndex.loaded(list(db.rows(self.connection, key)), self.background,
                                     self.max_rows, self._saved_index(key))

    def _saved_index(self, key: str) -> Path | None:
        """Where the workspace's trained index is saved (None for an in-memory database)."""
        database = next((r[2] for r in self.connection.execute("PRAGMA database_list")
                         if r[1] == "main"), "")
        if not database:
            return None
        name = hashlib.sha256(key.encode()).hexdigest()[:24]
        return Path(database).parent / INDEX_FOLDER / f"{name}.npz"


def _key(ctx: TurnContext) -> str:
    return ctx.workspace_path or ""

