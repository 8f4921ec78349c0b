"""The durable pattern store behind slot 4: remember turns, recommend from similar ones.

Rows live in ``patterns.db`` (:mod:`.database`); each workspace has an
in-memory k-NN index over its rows, loaded on first use, plus the columns
scoring needs (model, success, samples, cost), so a recommendation is one k-NN
query and the §5.5 scoring of K neighbours. Up to ``small_rows`` rows the index
is plain Python (:mod:`.small_workspace`); past that, numpy's
(:mod:`.workspace_index`), which is when numpy is first imported.

Retention: at most ``max_rows`` turns per workspace (default 100,000);
past that the oldest tenth is forgotten, in the database too.

Large workspaces are read off the event loop, and each trained index is saved
beside the database: :mod:`.loaded_workspaces`. Until a workspace is ready slot
4 answers :class:`PatternsLoading` and the decision goes on without it.
"""

from __future__ import annotations

import shutil
import sqlite3
from collections.abc import Callable, Container, Hashable, Iterator
from typing import TYPE_CHECKING, TypeVar

import msgspec

from switchman.engine.clock import Clock, utc_text
from switchman.engine.config.policy import PatternSettings
from switchman.engine.learning import database as db
from switchman.engine.learning import fingerprint as fingerprints
from switchman.engine.learning import meaning
from switchman.engine.learning.evaluator import (
    Evidence,
    NextAction,
    is_continuation,
    message_hash,
    next_action,
    success_score,
)
from switchman.engine.learning.fingerprint import Vector
from switchman.engine.learning.loaded_workspaces import (
    INDEX_FOLDER,
    MAX_ROWS,
    SYNC_LOAD_ROWS,
    LoadedWorkspaces,
)
from switchman.engine.learning.meaning import Centre
from switchman.engine.learning.small_workspace import SMALL_ROWS, SmallWorkspace, encode
from switchman.engine.messages import usd_of_float
from switchman.engine.patterns import (
    OnlyUnknownModels,
    PatternNeighbor,
    PatternRecommendation,
    PatternsLoading,
    TooFewSamples,
    Unavailable,
    neighbourhood,
    pool_size,
    score_neighbors,
)
from switchman.engine.routing.context import TurnContext

if TYPE_CHECKING:
    from switchman.engine.learning.loaded_workspaces import LoadedWorkspace

__all__ = [  # the loading constants and types moved to .loaded_workspaces, still named here
    "INDEX_FOLDER", "MAX_ROWS", "RECENT_FINGERPRINTS", "SYNC_LOAD_ROWS", "LearnedPatternStore",
    "LoadedWorkspace", "Neighbour", "TurnRecord", "WorkspaceStats", "protocol_time",
]

RECENT_FINGERPRINTS = 16
"""Fingerprints kept for reuse: a turn is fingerprinted when routed and when recorded."""

N = TypeVar("N")


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
    attached: tuple[str, ...] = ()
    """What the turn's message attached (:func:`.evaluator.attached_keys`), part of its
    message hash."""


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
    centre_turns: int = 0
    """Turns counted into the workspace's centre of meaning (it settles at
    :data:`.meaning.CENTRE_TURNS`)."""


class LearnedPatternStore(LoadedWorkspaces):
    """Pattern rows per workspace in SQLite, k-NN in memory (implements ``PatternStore``)."""

    def __init__(self, connection: sqlite3.Connection, clock: Clock, *,
                 max_rows: int = MAX_ROWS, background: bool = True,
                 fingerprinter: Callable[[TurnContext], Vector] | None = None,
                 sync_load_rows: int = SYNC_LOAD_ROWS, small_rows: int = SMALL_ROWS,
                 writer: sqlite3.Connection | None = None) -> None:
        super().__init__(connection, writer=writer, max_rows=max_rows, background=background,
                         sync_load_rows=sync_load_rows, small_rows=small_rows)
        self._fingerprinter = fingerprinter
        self.clock = clock
        self._forgets = db.forgets(connection)
        """The database's count of forgettings when the rows in memory were read."""
        self._recent: dict[Hashable, tuple[Vector, tuple[float, ...] | None]] = {}
        """Fingerprints (and meanings) of the latest contexts (see :meth:`fingerprint`)."""
        self._centres: dict[str, Centre] = {}
        """Each workspace's centre of meaning, read on first use (:mod:`.meaning`)."""

    # -- slot 4 ------------------------------------------------------------------------

    def recommend(self, ctx: TurnContext, settings: PatternSettings,
                  known: Container[str] | None = None
                  ) -> PatternRecommendation | Unavailable | None:
        """Score the past turns of the workspace most similar to ``ctx`` (§5.5, with the
        workspace's neighbourhood and similarity settings); :class:`PatternsLoading` while
        its rows are still being read, :class:`TooFewSamples` (without fingerprinting the
        turn: it is fingerprinted when recorded, after its request has left) while all of
        them together could not pass ``min_sample_size``. Only the models in ``known`` (the
        registry's) are scored when given: a removed model's rows are kept, not counted."""
        self._notice_forgets()
        self._notice_others(_key(ctx))
        with self._lock:
            space = self._workspace(_key(ctx))
            if space is None:
                return PatternsLoading(self._loading[_key(ctx)].turns)
            wanted = settings.min_sample_size
            if 0 < len(space.turn_ids) < wanted:  # every row is at least one sample
                samples = sum(max(s, 1) for s in space.samples)
                if samples < wanted:
                    return TooFewSamples(samples, wanted)
        passed_over: list[str] = []
        found = self._nearest(ctx, settings.neighbors, settings, PatternNeighbor, known,
                              passed_over)
        if passed_over:
            return OnlyUnknownModels(sorted(set(passed_over)), len(passed_over))
        return score_neighbors(found, settings.cost_weight, settings.similarity_exponent)

    def _notice_forgets(self) -> None:
        """Rows forgotten by another process (``switchman patterns forget`` while the daemon
        runs) leave memory too: each workspace is read again from the database when next
        used, instead of recommending from turns the user deleted (one row read)."""
        forgets = db.forgets(self.connection)
        if forgets != self._forgets:
            with self._lock:
                self._forgets = forgets
                self._workspaces.clear()
                self._loading.clear()  # a load in flight then installs nothing
                self._centres.clear()
                self._recent.clear()

    def _notice_others(self, key: str) -> None:
        """Rows another daemon on this data folder (another editor window on the workspace)
        recorded since this one read the workspace join its index at the next decision, and
        the scores it changed since (a 👍 there, a next action) replace the ones read: both
        were seen only after a restart. The check is one pragma while nobody else wrote;
        after a commit elsewhere (this daemon's writer thread is elsewhere too), three small
        indexed reads: the new rows, the count of re-scorings, the rows re-scored since."""
        version = db.data_version(self.connection)
        with self._lock:
            space, read = self._workspaces.get(key), self._read_up_to.get(key)
            if space is None or read is None or read[1] == version:
                return
            centre = self._centres.get(key)
            if centre is not None and not centre.settled:  # the other may have counted in it
                del self._centres[key]  # read again at the next fingerprint
        rescores = db.rescores(self.connection)  # before the rows: a change between is read
        fresh = db.rows_after(self.connection, key, read[0])  # again next time
        changed = db.rescored(self.connection, key, read[2], rescores) \
            if rescores != read[2] else []
        with self._lock:
            if self._workspaces.get(key) is not space:
                return  # forgotten or read again meanwhile
            for row in fresh:
                if row.turn_id not in space.position:  # this daemon's rows are in already
                    self._add(space, row)  # past max_rows the oldest leave memory
            for turn_id, score in changed:
                at = space.position.get(turn_id)
                if at is not None:
                    space.success[at] = score
            self._read_up_to[key] = (fresh[-1].id if fresh else read[0], version, rescores)

    def neighbours(self, ctx: TurnContext, k: int,
                   settings: PatternSettings | None = None) -> list[Neighbour]:
        """The ``k`` past turns of the workspace most similar to ``ctx`` (with
        ``neighborhood: per_model`` in ``settings``, the ``k`` nearest of each model)."""
        self._notice_others(_key(ctx))
        return self._nearest(ctx, k, settings, Neighbour)

    def _nearest(self, ctx: TurnContext, k: int, settings: PatternSettings | None,
                 make: Callable[[str, float, int, float, float], N],
                 known: Container[str] | None = None,
                 passed_over: list[str] | None = None) -> list[N]:
        """:meth:`neighbours`, each made by ``make`` (model, success, samples, cost,
        similarity): routing scores :class:`PatternNeighbor` objects."""
        with self._lock:
            space = self._workspace(_key(ctx))
            if space is None or not len(space.index):
                return []  # nothing yet, or still loading: no fingerprint needed
        vector = self.fingerprint(ctx)
        wanted = PatternSettings(neighbors=k) if settings is None else settings
        with self._lock:  # rows are added and scored on the pattern writer thread
            space = self._workspaces.get(_key(ctx))
            if space is None or not len(space.index):
                return []  # outgrown meanwhile: being read again
            picked, similarity = space.nearest(vector, pool_size(wanted))
            models = [space.models[p] for p in picked]
            chosen = neighbourhood(models, wanted, known)
            if not chosen and passed_over is not None:  # all of them of unknown models
                passed_over += models[: wanted.neighbors]
            found = []
            for i in chosen:
                p = picked[i]
                found.append(make(space.models[p], space.success[p], space.samples[p],
                                  space.cost[p], round(similarity[i], 4)))
            return found

    # -- recording ---------------------------------------------------------------------

    def record(self, turn: TurnRecord) -> None:
        """Remember a turn that has ended (top-level or worker alike)."""
        self.store_row(self.row_of(turn))

    def row_of(self, turn: TurnRecord) -> db.PatternRow:
        """The row a turn that has ended is remembered by (its fingerprint is the one routing
        computed: call this on the thread that routes)."""
        vector, mean = self._fingerprint(turn.context)
        codes, scale = encode(vector)
        evidence = Evidence(status=turn.status, tool_errors=turn.tool_errors)
        return db.PatternRow(
            workspace=_key(turn.context), turn_id=turn.turn_id, session_id=turn.session_id,
            model=turn.model, recorded_at=self.clock.now().isoformat(), cost_usd=turn.cost_usd,
            message_hash=message_hash(turn.context.message, turn.attached), codes=codes,
            scale=scale, evidence=evidence, success=success_score(evidence),
            is_worker=turn.is_worker, planner_turn_id=turn.planner_turn_id, mean=mean)

    def store_row(self, row: db.PatternRow) -> None:
        """Write a turn's row (:meth:`row_of`) and add it to its workspace's index; the write
        holds no lock slot 4 needs."""
        with self._changing:
            with self._lock:
                space = self._workspace(row.workspace)
                if space is not None and row.turn_id in space.position:
                    return  # recorded already (a turn ends once)
                loading = self._loading.get(row.workspace)
                if space is None and loading is not None \
                        and any(r.turn_id == row.turn_id for r in loading.recorded):
                    return
            stored = msgspec.structs.replace(row, id=db.insert(self.writer, row))
            self._count_in_centre(row)
            with self._lock:
                space = self._workspaces.get(row.workspace)
                if space is None:  # loading: durable now, in the index once it is installed
                    if row.workspace in self._loading:
                        self._loading[row.workspace].recorded.append(stored)
                    return
                if stored.turn_id in space.position:  # a load that started meanwhile read it
                    return
                drop = self._add(space, stored)
                if isinstance(space, SmallWorkspace) and len(space.turn_ids) > self.small_rows:
                    # Outgrown: read again from the database (every row, with its current
                    # score) into numpy's index, on a thread; recording goes on meanwhile.
                    del self._workspaces[row.workspace]
                    self._workspace(row.workspace)
            self._forget_oldest(row.workspace, drop)

    def _count_in_centre(self, row: db.PatternRow) -> None:
        """Count the row's meaning into its workspace's centre, until the centre settles
        (holding ``_changing``: one count at a time), adding to the centre the database
        holds: another daemon on the data folder may have counted turns since this one read
        it (one row read and written per turn until it settles, on the writer thread)."""
        if row.mean is None:
            return
        if self._centre(row.workspace, self.writer).settled:
            return  # for good: no read
        counted = db.count_in_centre(self.writer, row.workspace, row.mean)
        with self._lock:
            self._centres[row.workspace] = counted

    def _centre(self, workspace: str, via: sqlite3.Connection | None = None) -> Centre:
        """The workspace's centre of meaning, read from the database on first use (``via``
        the caller's connection: the pattern writer thread reads with its own)."""
        with self._lock:
            centre = self._centres.get(workspace)
            if centre is None:
                centre = self._centres[workspace] = db.centre(via or self.connection,
                                                              workspace)
            return centre

    def observe_message(self, session_id: str, text: str, rerouted_to: str | None,
                        attached: tuple[str, ...] = ()) -> None:
        """A new message in a session (with what it attached: :func:`.evaluator.attached_keys`):
        what it says about the session's previous turn."""
        with self._changing, db.writing(self.writer):
            previous = db.last_of_session(self.writer, session_id)
            if previous is None or previous.evidence.next_action is not None:
                return
            action = next_action(previous.message_hash, previous.model,
                                 message_hash(text, attached), rerouted_to,
                                 continuation=not attached and is_continuation(text))
            self._update(previous, next_action=action)

    def model_changed(self, session_id: str) -> None:
        """The session's model was changed before its next message."""
        with self._changing, db.writing(self.writer):
            previous = db.last_of_session(self.writer, session_id)
            if previous is not None and previous.evidence.next_action is None:
                self._update(previous, next_action=NextAction.MODEL_CHANGED)

    def set_next_action(self, turn_id: str, action: NextAction) -> None:
        """Record the user's next action after ``turn_id`` (``/model``, ``/route …``)."""
        with self._changing, db.writing(self.writer):
            row = db.by_turn(self.writer, turn_id)
            if row is None:
                return
            soft = row.evidence.next_action in (None, NextAction.MOVED_ON)
            if soft or action is NextAction.OVERRIDDEN:
                self._update(row, next_action=action)

    def feedback(self, turn_id: str, value: int) -> bool:
        """Explicit 👍 (+1) / 👎 (-1) on a turn, or 0 to take it back (the score comes from
        the turn's other signals again); False if the turn was never recorded."""
        with self._changing, db.writing(self.writer):
            row = db.by_turn(self.writer, turn_id)
            if row is None:
                return False
            self._update(row, feedback=None if value == 0 else 1 if value > 0 else -1)
            return True

    def rescore_count(self) -> int:
        """How many times rows were re-scored, by any daemon: it moves with every 👍/👎 given,
        changed or taken back (and with other late evidence). One row read."""
        with self._lock:
            return db.rescores(self.connection)

    def feedback_of_session(self, session_id: str) -> dict[str, int]:
        """The 👍 (+1) / 👎 (-1) given to a session's turns, by turn id (rows retention dropped
        have none)."""
        with self._lock:
            return db.feedback_of_session(self.connection, session_id)

    def delegation_ended(self, planner_turn_id: str, success: bool) -> None:
        """A worker of ``planner_turn_id`` finished; only its success flag reaches the planner."""
        with self._changing, db.writing(self.writer):
            row = db.by_turn(self.writer, planner_turn_id)
            if row is None:
                return
            e = row.evidence
            self._update(row, delegations=e.delegations + 1,
                         delegations_failed=e.delegations_failed + (0 if success else 1))

    def _update(self, row: db.PatternRow, **changes: object) -> None:
        evidence = msgspec.structs.replace(row.evidence, **changes)
        score = success_score(evidence)
        db.update_evidence(self.writer, row.turn_id, evidence, score)
        with self._lock:
            space = self._workspaces.get(row.workspace)
            if space is not None and row.turn_id in space.position:
                space.success[space.position[row.turn_id]] = score
            elif row.workspace in self._loading:  # the loader may have read the old score
                self._loading[row.workspace].scores[row.turn_id] = score

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
        centres = dict(self.connection.execute(
            "SELECT workspace, turns FROM pattern_centres").fetchall())
        return [WorkspaceStats(w, sum(n for n, _ in models.values()), models, *spans[w],
                               centre_turns=min(int(centres.get(w, 0)), meaning.CENTRE_TURNS))
                for w, models in sorted(result.items())]

    def forget(self, workspace: str | None = None) -> int:
        """Delete every row (of one workspace folder when given); returns how many."""
        with self._changing:
            count = db.delete_workspace(self.writer, workspace)
            with self._lock:
                self._forgets = db.forgets(self.writer)
                self._recent.clear()  # fingerprints made with the centre just forgotten
                if workspace is None:
                    self._workspaces.clear()
                    self._loading.clear()  # a load in flight then installs nothing
                    self._centres.clear()
                else:
                    self._workspaces.pop(workspace, None)
                    self._loading.pop(workspace, None)
                    self._centres.pop(workspace, None)
            saved = self._saved_index(workspace or "")
            if saved is not None and workspace is None:
                shutil.rmtree(saved.parent, ignore_errors=True)
            elif saved is not None:
                saved.unlink(missing_ok=True)
            return int(count)

    def export(self, workspace: str | None = None) -> Iterator[dict[str, object]]:
        """Every row as plain data: no message text exists to export, only hashes. Money and
        times are written as the protocol writes them (``"0.041200"``, ``…14:23:11.532Z``)."""
        for row in db.rows(self.connection, workspace):
            yield {"workspace": row.workspace, "turn_id": row.turn_id,
                   "session_id": row.session_id, "model": row.model,
                   "recorded_at": protocol_time(row.recorded_at),
                   "cost_usd": str(usd_of_float(row.cost_usd)),
                   "success": row.success, "samples": row.samples,
                   "is_worker": row.is_worker, "message_hash": row.message_hash,
                   "evidence": msgspec.to_builtins(row.evidence)}

    def fingerprint(self, ctx: TurnContext) -> Vector:
        """The turn's fingerprint (by default :func:`.fingerprint.fingerprint`, with the
        meaning block relative to the workspace's centre)."""
        return self._fingerprint(ctx)[0]

    def _fingerprint(self, ctx: TurnContext) -> tuple[Vector, tuple[float, ...] | None]:
        """The turn's fingerprint and its message's meaning (None with a fingerprinter of
        the caller's, or without a known word).

        A turn is fingerprinted when it is routed and again when it is recorded, with the
        same context: the last few are kept (the chain's match details left out of the key),
        so the row remembers the fingerprint its turn was routed with.
        """
        # What the default fingerprint reads of the context (hashing the whole context, its
        # spend and time of day included, cost as much again); any other reads the context
        key: Hashable = msgspec.structs.replace(ctx, message_hits=None) \
            if self._fingerprinter is not None else (
                ctx.workspace_path, ctx.message, ctx.estimated_input_tokens, ctx.files_touched,
                ctx.skills_matching, ctx.has_images, ctx.has_tool_calls_in_history)
        known = self._recent.get(key)
        if known is not None:
            return known
        if self._fingerprinter is not None:
            result: tuple[Vector, tuple[float, ...] | None] = (self._fingerprinter(ctx), None)
        else:
            mean = meaning.message_mean(ctx.message)
            result = (fingerprints.fingerprint(ctx, self._centre(_key(ctx)).mean, mean), mean)
        self._recent[key] = result
        while len(self._recent) > RECENT_FINGERPRINTS:
            del self._recent[next(iter(self._recent))]
        return result


def _key(ctx: TurnContext) -> str:
    return ctx.workspace_path or ""


def protocol_time(stored: str) -> str:
    """A row's time as the protocol writes times; what cannot be read, as stored."""
    moment = db.recorded_time(stored)
    return stored if moment is None else utc_text(moment)
