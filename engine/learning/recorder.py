"""What the sessions layer tells the pattern store, in the words of a session's life.

:class:`OutcomeRecorder` is the one object the sessions layer and the
language server talk to about learning: a turn ended, a new message was sent,
the model was changed, a suggestion was accepted or dismissed, the user gave
👍/👎. Each call becomes a row or a piece of late evidence in the store.
Recording must never break a turn, so failures are logged, not raised
(except for feedback, which the user asked for and must hear about).

Every write to ``patterns.db`` runs on one worker thread, in the order the
calls were made (a 👍 after a turn's end applies to that turn's row): a commit
can wait seconds for the file's write lock (another daemon's commit, a
checkpoint), and nothing slow runs on the event loop. Only the row itself is
built on the caller's thread, from the fingerprint routing computed there.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sqlite3
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from decimal import Decimal
from typing import Literal, TypeVar

import msgspec

from switchman.engine.errors import PatternsNotSaved, UnknownTurn
from switchman.engine.learning import database
from switchman.engine.learning.evaluator import NextAction
from switchman.engine.learning.report import format_stats
from switchman.engine.learning.store import LearnedPatternStore, TurnRecord
from switchman.engine.messages import Message, ToolResultBlock
from switchman.engine.routing.context import TurnContext

log = logging.getLogger(__name__)
T = TypeVar("T")

ENDED_TURNS_KEPT = 1024
"""How many of the latest ended turns' ids the recorder keeps, so a worker that ends after its
planner's turn (:meth:`OutcomeRecorder.worker_done`) still reaches the planner's row."""

SETTLE_SECONDS = 2.0
"""How long a chat answer waits for its turn's pattern row (:meth:`OutcomeRecorder.settled`)."""

HELD_SECONDS = 0.5
"""How long what a new message says about the turn before it waits for the next write before
it is written by itself (:meth:`OutcomeRecorder.message_sent`): well after the new turn's first
token, and before a daemon killed during a longer turn could lose it."""


class FeedbackResult(msgspec.Struct, frozen=True):
    """The answer to ``switchman/feedback``."""

    turn_id: str
    rating: str
    success: float
    """The turn's success score now (1.0 after 👍, 0.0 after 👎, from the turn's other
    signals once a rating is taken back)."""


class OutcomeRecorder:
    """Turns session events into pattern-store rows and evidence."""

    def __init__(self, store: LearnedPatternStore,
                 running: Callable[[str], bool] = lambda turn_id: False) -> None:
        self.store = store
        self.running = running
        """Whether a turn is still in flight (:func:`.hooks.learn_from_turns` sets the
        lifecycle's): the waiting flags of a planner turn still running are never dropped."""
        self._delegations: dict[str, tuple[int, list[tuple[bool, str | None]]]] = {}
        """Workers' success flags (each with its ``delegate`` call's id) by planner turn,
        until the planner's turn is recorded, each
        with :attr:`_turns_ended` when its first flag arrived or it was last seen running
        (oldest first). A planner turn that has not ended while more than
        :data:`ENDED_TURNS_KEPT` turns did, and is not running, never will end here (it never
        started, or it ended before the worker and left :attr:`_ended`): its flags are
        dropped then (they waited in memory for good). One still running (a long planner
        turn while other windows' or workers' turns end) waits another window."""
        self._turns_ended = 0
        """How many turns have ended so far."""
        self._ended: dict[str, None] = {}
        """The latest turns recorded (:data:`ENDED_TURNS_KEPT`), oldest first: a worker
        ending after its planner's turn goes straight to the planner's row."""
        self._writer = ThreadPoolExecutor(max_workers=1,
                                          thread_name_prefix="switchman-patterns-write")
        """The one thread that writes (one worker: the calls' order is the writes' order)."""
        self._held: list[tuple[Callable[..., object], tuple[object, ...]]] = []
        """Writes asked for but not yet handed to the writer (see :meth:`message_sent`);
        every later write hands them over first, in order."""
        self._last: Future[object] | None = None
        """The write handed to the writer last (the writes complete in order)."""
        self.held_seconds = HELD_SECONDS
        """How long held writes wait for another write before they are handed over alone."""
        self._held_timer: asyncio.TimerHandle | None = None

    def turn_ended(self, context: TurnContext, *, turn_id: str, session_id: str, model: str,
                   status: str, cost_usd: Decimal, added: Iterable[Message] = (),
                   is_worker: bool = False, planner_turn_id: str | None = None,
                   attached: tuple[str, ...] = ()) -> None:
        """Record a turn that ended (top-level and worker alike); ``attached``: what its message
        attached (:func:`.evaluator.attached_keys`).

        A worker usually ends before its planner's turn does, so how its delegation ended
        (:meth:`worker_done`) waits here until the planner's row exists. A failed worker's
        ``delegate failed`` result is not also a tool error: it counts once, as a failed
        delegation (a ``delegate`` call refused before any worker ran is one)."""
        _, flags = self._delegations.pop(turn_id, (0, []))
        failed_workers = {call for success, call in flags if not success}
        errors = sum(1 for m in added for b in m.content if isinstance(b, ToolResultBlock)
                     and b.is_error and b.tool_use_id not in failed_workers)
        try:
            row = self.store.row_of(TurnRecord(
                context=context, turn_id=turn_id, session_id=session_id, model=model,
                status=status, cost_usd=float(cost_usd), tool_errors=errors,
                is_worker=is_worker, planner_turn_id=planner_turn_id, attached=attached))
        except Exception:  # learning is best effort: the turn itself has ended fine
            log.exception("could not record a pattern outcome")
        else:
            self._later(self.store.store_row, row)
        self._ended[turn_id] = None
        if len(self._ended) > ENDED_TURNS_KEPT:
            del self._ended[next(iter(self._ended))]
        self._turns_ended += 1
        for success, _ in flags:
            self.delegation_ended(turn_id, success)
        self._drop_abandoned()

    def _drop_abandoned(self) -> None:
        """Drop the waiting flags of planner turns that have not ended while more than
        :data:`ENDED_TURNS_KEPT` turns did and are not running; a running one's wait again."""
        while self._delegations:
            planner, (since, flags) = next(iter(self._delegations.items()))
            if since >= self._turns_ended - ENDED_TURNS_KEPT:
                return
            del self._delegations[planner]
            if self.running(planner):  # still on its way to its row: checked a window later
                self._delegations[planner] = (self._turns_ended, flags)
            else:
                log.debug("dropped the worker flags of planner turn %s: more than %d turns "
                          "ended, not it", planner, ENDED_TURNS_KEPT)

    def worker_done(self, planner_turn_id: str, success: bool,
                    tool_use_id: str | None = None) -> None:
        """A planner's delegation whose worker ran has ended, ``success`` or not (the result
        the planner got: a worker whose turn completed with an answer that failed the
        output schema, or that hit its max_tokens, failed). The planner's row is written
        when its turn ends, so the flag waits until then; a worker that ends after it (its
        task cancelled again as the daemon exits, say) updates the row at once, as any late
        evidence does (it stayed waiting for good, and the planner never learned it). A flag
        whose planner turn has not ended while more than :data:`ENDED_TURNS_KEPT` turns did, and
        is not running, is dropped (a planner turn that never started, or that ended that long
        ago). ``tool_use_id``: the planner's ``delegate`` call, whose error result a failed
        worker's flag stands for."""
        if planner_turn_id in self._ended:
            self.delegation_ended(planner_turn_id, success)
        else:
            self._delegations.setdefault(planner_turn_id, (self._turns_ended, []))[1] \
                .append((success, tool_use_id))

    def message_sent(self, session_id: str, text: str, override_model: str | None,
                     attached: tuple[str, ...] = ()) -> None:
        """A new message in a session (``attached``: what it attached,
        :func:`.evaluator.attached_keys`): evidence about the session's previous turn.

        Held until the next write (usually the new turn's own row, at its end), which
        hands it over first: handing it to the writer thread as the turn started woke the
        thread on the way to the first token (~0.15 ms of the start's CPU: the wake-up,
        the interpreter lock handed to it and back). A turn that runs longer than
        :data:`HELD_SECONDS` has it written then, so a daemon killed during the turn does not
        lose it (the message re-sent, say, that caps the score of the answer before)."""
        self._held.append((self.store.observe_message,
                           (session_id, text, override_model, attached)))
        if self._held_timer is None:
            with contextlib.suppress(RuntimeError):  # no running loop: the next write takes it
                self._held_timer = asyncio.get_running_loop().call_later(
                    self.held_seconds, self._hand_over_held)

    def model_changed(self, session_id: str) -> None:
        """``/model`` right after a turn counts against that turn's model."""
        self._later(self.store.model_changed, session_id)

    def suggestion_answered(self, turn_id: str, accepted: bool) -> None:
        """``/route override`` (accepted) or ``/route ignore`` on the turn's suggestion."""
        action = NextAction.OVERRIDDEN if accepted else NextAction.DISMISSED
        self._later(self.store.set_next_action, turn_id, action)

    def delegation_ended(self, planner_turn_id: str, success: bool) -> None:
        """A worker finished: its success flag (only) reaches its planner's turn."""
        self._later(self.store.delegation_ended, planner_turn_id, success)

    async def feedback(self, turn_id: str, rating: str) -> FeedbackResult:
        """Explicit 👍 (``up``) or 👎 (``down``) on a recorded turn, or ``none`` to take one
        back, answered once it is committed (after every write asked for before it); raises
        UnknownTurn, or PatternsNotSaved (naming patterns.db and why) when the write failed."""
        def rate() -> FeedbackResult:
            value = 1 if rating == "up" else -1 if rating == "down" else 0
            try:
                rated = self.store.feedback(turn_id, value)
            except sqlite3.Error as error:  # a full disk, a file the user may not write
                raise PatternsNotSaved(turn_id, self.store.database_file,
                                       str(error)) from error
            if not rated:
                raise UnknownTurn(turn_id, f"Turn '{turn_id}' cannot be rated: there is no such "
                                           "turn, it has not ended yet, or the pattern store "
                                           "no longer keeps it (switchman patterns forget).")
            row = database.by_turn(self.store.writer, turn_id)
            return FeedbackResult(turn_id, rating, row.success if row else 0.0)

        return await self._written(rate)

    def ratings(self, session_id: str) -> dict[str, Literal["up", "down"]]:
        """The 👍 (``up``) / 👎 (``down``) given to a session's turns, by turn id; none if the
        store cannot be read (the transcript is shown without them)."""
        try:
            given = self.store.feedback_of_session(session_id)
        except Exception:  # best effort, like recording: the transcript matters more
            log.exception("could not read the ratings of a session")
            return {}
        return {turn_id: "up" if value > 0 else "down" for turn_id, value in given.items()}

    async def stats_text(self, workspace: str | None = None) -> str:
        """The store's statistics as text (one workspace folder, or all), with every turn
        that ended before the question (read on the writer thread, after its writes)."""
        def read() -> str:
            stats = [s for s in self.store.stats()
                     if workspace is None or s.workspace == workspace]
            return format_stats(stats, "patterns.db")

        return await self._written(read)

    async def written(self) -> None:
        """Wait until every write asked for so far is committed (or has failed)."""
        await self._written(lambda: None)

    def last_write(self) -> Future[object] | None:
        """The write asked for last (None before any): a mark for :meth:`settled`."""
        return self._last

    async def settled(self, since: Future[object] | None,
                      bound: float = SETTLE_SECONDS) -> None:
        """Wait until the writes asked for after the mark ``since`` (:meth:`last_write`) are
        committed, for at most ``bound`` seconds: a chat message is answered once what it
        taught the store is on disk, so the row of a turn whose answer the editor has
        survives a ``kill -9`` as its transcript does; a ``patterns.db`` another process
        keeps locked longer delays the answer no more than that (the write goes on). A
        message that wrote nothing (``/cost``) does not wait for earlier writes. A write that
        failed (a full disk, a file the user may not write) is logged (:func:`_logged`), and
        the answer goes out as usual: the turn itself ran."""
        last = self._last
        if last is None or last is since:
            return
        with contextlib.suppress(Exception):  # TimeoutError, or the write's own failure
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(last)), bound)

    async def _written(self, action: Callable[[], T]) -> T:
        self._hand_over_held()
        return await asyncio.wrap_future(self._writer.submit(action))

    def _later(self, action: Callable[..., object], *args: object) -> None:
        self._hand_over_held()
        self._submit(action, *args)

    def _hand_over_held(self) -> None:
        if self._held_timer is not None:
            self._held_timer.cancel()
            self._held_timer = None
        held, self._held = self._held, []
        for action, args in held:
            self._submit(action, *args)

    def _submit(self, action: Callable[..., object], *args: object) -> None:
        try:
            self._last = self._writer.submit(action, *args)
            self._last.add_done_callback(_logged)
        except RuntimeError:  # the interpreter is exiting: nothing is written any more
            log.warning("a pattern outcome arrived after shut-down and was not recorded")


def _logged(done: Future[object]) -> None:
    error = done.exception()
    if error is not None:  # learning is best effort: the turn itself has ended fine
        log.error("could not record a pattern outcome", exc_info=error)
