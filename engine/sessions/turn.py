"""Running one turn: LLM calls on the locked model, tool calls, retries, cancellation.

The model chosen at turn start serves every call of the turn (spec §3.2).
:meth:`TurnRunner.run` is given a :class:`TurnSetup` fixed at the turn's start
and *returns* a :class:`TurnOutcome` with what the turn added to the
transcript; it never mutates the session.

Retries have one owner: the turn, with a :class:`.retry.RetryPolicy`. The SDKs
are created with ``max_retries=0``; a failed call that is worth retrying (rate
limit, overload, 5xx, network, timeout) is tried again at most ``retries``
times, and only while no output has been streamed (a retry after output would
repeat text). The availability tracker hears about the *call*, not each attempt: one
failure when the call finally fails, so retries never multiply failures
(spec §4.5: backoff inside one call changes no state).

A call that ends without its final message is still charged once its request
has left for the provider (stopped, even before the first token; the connection
lost; an error inside the stream): the input tokens the provider reported when
the stream started (or, if it reported none, the estimate of the request) and
the output streamed so far (estimated from its text), marked as an estimate. A
call the provider refused with an HTTP error status, or whose request never
left, costs nothing. Each sent request is marked durably
(``llm.call_started``), so a daemon killed during the call leaves its charge to
the next daemon (``store/repository.py``, ``_charge_cut_off_call``).

A turn's start (its durable record and the routing notice to the editor) is
written while the provider works on the first request: :class:`.turn_setup.TurnStart` runs
as soon as the adapter says the request has left, and at the latest before
anything the call returns is handled, stored or shown (architecture.md, "The
provider is called before the turn's start is written").

Tool calls of one assistant message run in order, except tools marked
``concurrent`` (``delegate``), which run side by side; results go back in
call order. Cancelling the turn cancels them all, and each still answers.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from switchman.engine.availability import AvailabilityTracker, ErrorClass
from switchman.engine.clock import Clock
from switchman.engine.config.registry import ProviderSpec
from switchman.engine.errors import sentence
from switchman.engine.events import CallUsage, LlmCallCompleted, LlmCallRefused, LlmCallStarted
from switchman.engine.ids import new_id
from switchman.engine.messages import (
    ZERO_USD,
    Block,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    Usage,
    cost_of,
)
from switchman.engine.providers.base import (
    REQUEST_SENT,
    Finished,
    ProviderRequest,
    TextDelta,
    ToolCall,
    UsageReport,
)
from switchman.engine.providers.errors import ProviderError
from switchman.engine.sessions.records import (
    ChatDelta,
    ErrorInfo,
    ToolActivity,
    TurnResult,
)
from switchman.engine.sessions.retry import RetryPolicy
from switchman.engine.sessions.turn_setup import StopReason, TurnOutcome, TurnSetup
from switchman.engine.store.repository import SessionStore
from switchman.engine.tokens import estimate_messages, estimate_text, estimate_turn
from switchman.engine.tools.arguments import QuestionStopped, ToolOutcome
from switchman.engine.tools.registry import ToolCallRequest

CUT_OFF_NOTICE = ("The answer reached the model's output limit and was cut off here; "
                  'send "continue" for the rest.')
"""A person's turn whose answer the provider stopped at its output limit (a worker's ends as
``max_tokens_exceeded`` for its planner instead)."""

EMPTY_NOTICE = ("The model ended its answer without writing anything; send the message again, "
                "or try another model (@alias).")
"""A person's turn whose only call ended with no text and no tool call."""

EXITED_MESSAGE = ("Switchman stopped while this turn was running (the editor closed, reloaded "
                  "or restarted it). Your message and the answer written by then are kept; "
                  "send your message again to continue.")
"""A person's turn running when the editor ended the daemon (LSP ``exit``, or its pipe
closed): ``interrupted``,
as after a crash, not ``cancelled`` as if the person had pressed Stop."""

log = logging.getLogger(__name__)

MAX_TOOL_STEPS = 25
MAX_OUTPUT_TOKENS = 8192
CHECKPOINT_SECONDS = 0.5

@dataclass
class _Progress:
    transcript: list[Message]
    transcript_tokens: int
    """The size estimate of ``transcript``, kept up to date by :meth:`add`."""
    usage: Usage = field(default_factory=Usage)
    cost: Decimal = ZERO_USD
    estimated_cost: Decimal = ZERO_USD
    """The part of ``cost`` that is Switchman's estimate (calls cut short)."""
    text: list[str] = field(default_factory=list)
    """All text streamed during the turn."""
    current: list[str] = field(default_factory=list)
    """Text streamed by the LLM call in progress."""
    llm_calls: int = 0
    tool_calls: int = 0
    touched: list[str] = field(default_factory=list)
    draft: Message | None = None
    """The assistant message being streamed (kept durable by checkpoints)."""
    unfinished: Usage | _Estimate | None = None
    """Usage known so far of a call still streaming (None when no call is in flight, an
    :class:`_Estimate` until the provider reports any)."""
    request: ProviderRequest | None = None
    """The request of the call in progress (what an estimate of its input is made from)."""
    fixed_tokens: int | None = None
    """The estimate of the turn's system prompt and tool descriptions (worked out once)."""
    marked: bool = False
    """Whether the call in progress was marked as sent (``llm.call_started``)."""
    stop_reason: StopReason = "none"

    def add(self, message: Message) -> None:
        """Append to the transcript (estimating only the new message, not the history)."""
        self.transcript.append(message)
        self.transcript_tokens += estimate_messages([message])


class TurnRunner:
    """Runs turns for the session lifecycle."""

    def __init__(self, store: SessionStore, availability: AvailabilityTracker, clock: Clock,
                 retry: RetryPolicy | None = None,
                 key_of: Callable[[ProviderSpec], str | None] | None = None) -> None:
        self.store = store
        self.availability = availability
        self.clock = clock
        self.retry = retry or RetryPolicy.from_environment()
        self.key_of = key_of or (lambda _provider: None)
        """The fingerprint of a provider's key now (told with an authentication error, so
        that a changed key ends the outage it caused)."""
        self.exiting = False
        """The daemon is exiting: the turns cancelled now end ``interrupted``."""

    async def run(self, setup: TurnSetup) -> TurnOutcome:
        """Run the turn to its end; raises only what recording its start raised (then the
        turn never started), never anything else (cancellation included)."""
        progress = _Progress(transcript=list(setup.history),
                             transcript_tokens=setup.history_tokens)
        # this task's context: its adapter calls read it
        REQUEST_SENT.set(lambda: self._sent(setup, progress))
        status, error, unfinished = "completed", None, False
        # A worker's task is its planner's to retry; a person's message is theirs.
        advice = "" if setup.is_worker else " Your message is saved; send it again to retry."
        try:
            await self._loop(setup, progress)
        except asyncio.CancelledError:
            status, unfinished = "cancelled", True
            if self.exiting and not setup.is_worker:  # a worker's end is its planner's to tell
                status, error = "interrupted", ErrorInfo("interrupted", EXITED_MESSAGE)
        except ProviderError as exc:
            unfinished = True
            status, error = "failed", ErrorInfo("provider_error", f"{sentence(str(exc))}{advice}")
        except Exception as exc:  # a bug must not lose the turn or hang the editor
            if exc is setup.start.failure:
                raise
            log.exception("turn %s failed", setup.turn.id)
            # fixed words: no exception text in a response (it stays in the log)
            status, error = "failed", ErrorInfo(
                "internal_error", f"Switchman failed during this turn (a bug; its log has the "
                f"details).{advice}")
        setup.start.ensure()  # a turn cut short before its first answer is recorded too
        if unfinished:
            self._charge_unfinished(setup, progress)
        return self._finish(setup, progress, status, error)

    async def _loop(self, setup: TurnSetup, progress: _Progress) -> None:
        for _ in range(MAX_TOOL_STEPS):
            finished = await self._call(setup, progress)
            progress.stop_reason = "max_tokens" if finished.stop_reason == "max_tokens" \
                else "end_turn"
            calls = [b for b in finished.content if isinstance(b, ToolUseBlock)]
            if finished.stop_reason != "tool_use" or not calls:
                if finished.stop_reason == "max_tokens" and not setup.is_worker:
                    self._notice(setup, CUT_OFF_NOTICE)  # else it reads as a finished answer
                elif not setup.is_worker and not progress.tool_calls \
                        and not "".join(progress.text).strip():
                    self._notice(setup, EMPTY_NOTICE)  # else a badge and a cost, nothing between
                return
            if await self._run_tools(setup, progress, calls):
                progress.stop_reason = "ended_by_tool"
                return
            if self._budget_spent(setup, progress):
                # The next call could only be cut off at once, after paying for the whole
                # context: the turn ends as one that reached its cap (its tools did run).
                progress.stop_reason = "max_tokens"
                return
        progress.stop_reason = "step_limit"
        self._notice(setup, f"Stopped after {MAX_TOOL_STEPS} tool steps in one turn.")

    @staticmethod
    def _budget_spent(setup: TurnSetup, progress: _Progress) -> bool:
        return setup.output_budget is not None \
            and progress.usage.output_tokens >= setup.output_budget

    def _max_output(self, setup: TurnSetup, progress: _Progress) -> int:
        limit = min(setup.model.capabilities.max_output_tokens, MAX_OUTPUT_TOKENS)
        if setup.output_budget is not None:
            limit = min(limit, max(setup.output_budget - progress.usage.output_tokens, 1))
        return limit

    async def _call(self, setup: TurnSetup, progress: _Progress) -> Finished:
        request = ProviderRequest(
            model_id=setup.model.id, api_model=setup.model.api_model,
            messages=list(progress.transcript), system=setup.system,
            tools=setup.tools.definitions(), max_output_tokens=self._max_output(setup, progress),
            reasoning_effort=setup.reasoning_effort)
        attempt = 0
        while True:
            started = len(progress.text)
            try:
                return await self._stream(setup, progress, request)
            except ProviderError as exc:
                setup.start.ensure()  # the notice below follows the routing notice
                if exc.status not in (None, 200):  # refused with an error status: not billed
                    self._refused(setup, progress, exc)
                wait = self.retry.delay(attempt, exc)
                if wait is None or len(progress.text) != started:
                    key = self.key_of(setup.provider) \
                        if exc.error_class is ErrorClass.AUTH else None
                    self.availability.record_failure(setup.provider.name, setup.model.id,
                                                     exc.error_class, key)
                    raise
                self._charge_unfinished(setup, progress)  # sent, then lost: the provider bills
                self._notice(setup, f"{sentence(str(exc))} Retrying "
                                    f"({attempt + 1}/{self.retry.retries})…")
                await asyncio.sleep(wait)
                attempt += 1

    async def _stream(self, setup: TurnSetup, progress: _Progress,
                      request: ProviderRequest) -> Finished:
        progress.draft = Message(id=new_id(), session_id=setup.turn.session_id,
                                 turn_id=setup.turn.id, role="assistant", content=[],
                                 created_at=self.clock.now(), model=setup.model.id)
        progress.current = []
        progress.llm_calls += 1
        progress.unfinished = None  # nothing is charged until the request has left
        progress.request, progress.marked = request, False
        saver = _Checkpoints(self, progress)
        try:
            return await self._read(setup, progress, request, saver)
        finally:
            saver.close()

    async def _read(self, setup: TurnSetup, progress: _Progress, request: ProviderRequest,
                    saver: _Checkpoints) -> Finished:
        async for event in setup.adapter.stream(request):
            setup.start.ensure()  # recorded (and routed on screen) before any output
            if progress.unfinished is None:  # worked out only if the call is cut short
                progress.unfinished = _Estimate(request, progress.transcript_tokens)
            if isinstance(event, UsageReport):
                progress.unfinished = event.usage
            elif isinstance(event, TextDelta):
                progress.current.append(event.text)
                progress.text.append(event.text)
                saver.text_added()  # what the user sees survives a crash
                setup.sink.delta(ChatDelta(setup.turn.session_id, setup.turn.id, "text",
                                           text=event.text))
                # A reply that arrived in one piece is read without waiting on I/O: yield,
                # so this delta goes out now and other streams take their turn, rather
                # than after the whole burst (the editor's writes leave once per pass).
                await asyncio.sleep(0)
            elif isinstance(event, ToolCall):
                setup.sink.delta(ChatDelta(setup.turn.session_id, setup.turn.id, "tool_call",
                                           tool=ToolActivity(event.id, event.name, "running",
                                                             input=event.input)))
            elif isinstance(event, Finished):
                self.availability.record_success(setup.provider.name, setup.model.id)
                self._account(setup, progress, event)
                return event
        raise ProviderError(ErrorClass.SERVER, "the stream ended without a final message",
                            model=setup.model.id)

    def _sent(self, setup: TurnSetup, progress: _Progress) -> None:
        """The adapter says the call's request has left: from now on the call is charged,
        and (on the next pass, after the turn's start) it is marked sent in the database."""
        setup.start.soon()
        if progress.unfinished is None and progress.request is not None:
            progress.unfinished = _Estimate(progress.request, progress.transcript_tokens)
            asyncio.get_running_loop().call_soon(self._mark_sent, setup, progress,
                                                 progress.unfinished)

    def _mark_sent(self, setup: TurnSetup, progress: _Progress, estimate: _Estimate) -> None:
        """Write ``llm.call_started`` with the request's input estimate, so that if this
        daemon dies during the call, the daemon that finds the turn interrupted charges it."""
        if progress.unfinished is not estimate or setup.start.failure is not None:
            return  # the call already ended (it charged itself), or the turn never started
        if progress.fixed_tokens is None:
            progress.fixed_tokens = estimate.fixed_tokens()
        turn = setup.turn
        try:
            self.store.add_event(LlmCallStarted(
                timestamp=self.clock.now(), session_id=turn.session_id, turn_id=turn.id,
                model=setup.model.id, input_tokens=progress.fixed_tokens
                + estimate.transcript_tokens, is_worker=setup.is_worker,
                parent_session_id=setup.parent_session_id), turn.id)
        except Exception:  # a callback of the event loop: log, the turn carries on
            log.exception("could not mark turn %s's call as sent", turn.id)
            return
        progress.marked = True

    def _refused(self, setup: TurnSetup, progress: _Progress, exc: ProviderError) -> None:
        """The provider answered the call with an error status: nothing was billed."""
        progress.unfinished = None
        if progress.marked:  # the mark is settled: a later interruption does not charge it
            progress.marked = False
            turn = setup.turn
            self.store.add_event(LlmCallRefused(
                timestamp=self.clock.now(), session_id=turn.session_id, turn_id=turn.id,
                model=setup.model.id, status=exc.status or 0), turn.id)

    def _account(self, setup: TurnSetup, progress: _Progress, finished: Finished) -> None:
        """Keep the assistant message and charge the call to the ledger."""
        draft = progress.draft
        assert draft is not None
        draft.content = list(finished.content)
        self.store.add_message(draft)
        progress.add(draft)
        progress.draft = None
        progress.unfinished = None
        self._charge(setup, progress, finished.usage)

    def _charge(self, setup: TurnSetup, progress: _Progress, usage: Usage, *,
                estimated: bool = False) -> None:
        cost = cost_of(usage, setup.model.pricing)
        progress.usage = progress.usage + usage
        progress.cost += cost
        progress.marked = False
        if estimated:
            progress.estimated_cost += cost
        turn = setup.turn
        now = self.clock.now()
        self.store.add_cost(now, turn.session_id, turn.id, setup.model.id, usage, cost,
                            estimated=estimated)
        self.store.add_event(LlmCallCompleted(
            timestamp=now, session_id=turn.session_id, turn_id=turn.id, model=setup.model.id,
            usage=CallUsage.priced(usage, cost), cost_usd=cost, is_worker=setup.is_worker,
            parent_session_id=setup.parent_session_id, estimated=estimated), turn.id)
        setup.sink.charged(usage, cost, estimated)

    def _charge_unfinished(self, setup: TurnSetup, progress: _Progress) -> None:
        """Charge a call that ended without its final message for what it used so far."""
        known, progress.unfinished = progress.unfinished, None
        if known is None:
            return
        if isinstance(known, _Estimate):
            known = known.usage()
        streamed = estimate_text("".join(progress.current)) if progress.draft else 0
        self._charge(setup, progress, Usage(known.input_tokens,
                                            max(known.output_tokens, streamed),
                                            known.cache_read_tokens, known.cache_write_tokens),
                     estimated=True)

    def _checkpoint(self, progress: _Progress) -> None:
        """Save the text the current call streamed so far, so a crash keeps it."""
        if progress.draft is not None:
            progress.draft.content = [TextBlock("".join(progress.current))]
            self.store.add_message(progress.draft)

    async def _run_tools(self, setup: TurnSetup, progress: _Progress,
                         calls: list[ToolUseBlock]) -> bool:
        """Run one message's tool calls; True if a tool ended the turn."""
        outcomes: dict[str, ToolOutcome] = {}
        side_by_side = {c.id: asyncio.create_task(self._run_one(setup, c)) for c in calls
                        if (entry := setup.tools.get(c.name)) is not None and entry.concurrent}
        try:
            for call in calls:
                task = side_by_side.get(call.id)
                # Shielded: cancelling the turn must reach this task even though a call
                # (a worker) ends normally when cancelled; _settle then cancels every call.
                try:
                    outcomes[call.id] = await asyncio.shield(task) if task \
                        else await self._run_one(setup, call)
                except QuestionStopped as stopped:  # kept: the question it was asking
                    outcomes[call.id] = stopped.outcome
                    raise
        finally:  # also when cancelled: every call gets its result before anything else
            await _settle(side_by_side, outcomes)
            self._record_results(setup, progress, calls, outcomes)
        return any((entry := setup.tools.get(c.name)) is not None and entry.ends_turn
                   and not outcomes[c.id].is_error for c in calls if c.id in outcomes)

    async def _run_one(self, setup: TurnSetup, call: ToolUseBlock) -> ToolOutcome:
        try:
            outcome = await setup.tools.run(ToolCallRequest(call.id, call.name, call.input))
        except QuestionStopped as stopped:  # the chat shows the question live as rebuilt
            self._result_delta(setup, call, stopped.outcome)
            raise
        self._result_delta(setup, call, outcome)
        return outcome

    def _result_delta(self, setup: TurnSetup, call: ToolUseBlock, outcome: ToolOutcome) -> None:
        tool = ToolActivity(call.id, call.name, "error" if outcome.is_error else "done",
                            summary=outcome.summary, approval=outcome.approval,
                            superseded_approvals=outcome.superseded_approvals or None,
                            output=outcome.content if outcome.output_shown else None)
        setup.sink.delta(ChatDelta(setup.turn.session_id, setup.turn.id, "tool_result", tool=tool))

    def _record_results(self, setup: TurnSetup, progress: _Progress, calls: list[ToolUseBlock],
                        outcomes: dict[str, ToolOutcome]) -> None:
        results: list[Block] = []
        touched: list[str] = []
        for call in calls:
            outcome = outcomes.get(call.id)
            if outcome is None:
                results.append(ToolResultBlock(call.id, "Cancelled.", is_error=True))
                continue
            progress.tool_calls += 1
            touched += outcome.touched
            results.append(ToolResultBlock(call.id, outcome.content, outcome.is_error,
                                           approval=outcome.approval
                                           if outcome.approval_stored else None,
                                           summary=outcome.summary or None,
                                           output_shown=outcome.output_shown))
        message = Message(id=new_id(), session_id=setup.turn.session_id, turn_id=setup.turn.id,
                          role="tool", content=results, created_at=self.clock.now())
        self.store.add_message(message, touched)
        progress.add(message)
        progress.touched += touched

    def _notice(self, setup: TurnSetup, text: str) -> None:
        setup.sink.delta(ChatDelta(setup.turn.session_id, setup.turn.id, "notice", text=text))

    def _finish(self, setup: TurnSetup, progress: _Progress, status: str,
                error: ErrorInfo | None) -> TurnOutcome:
        if progress.draft is not None and progress.current:  # keep a partial answer
            self._checkpoint(progress)
            progress.add(progress.draft)
        turn = setup.turn
        turn.status = status  # type: ignore[assignment]
        turn.ended_at = self.clock.now()
        turn.usage, turn.cost_usd = progress.usage, progress.cost
        turn.estimated_usd = progress.estimated_cost
        turn.llm_calls, turn.tool_calls, turn.error = progress.llm_calls, progress.tool_calls, error
        self.store.finish_turn(turn)
        # No editor is left to read the answer to a turn interrupted at exit: its hooks see it
        # ended as a cancelled one.
        answered = "cancelled" if status == "interrupted" else status
        result = TurnResult(kind="turn", session_id=turn.session_id, turn_id=turn.id,
                            status=answered,  # type: ignore[arg-type]
                            model=setup.model.id, text="".join(progress.text),
                            usage=progress.usage, cost_usd=progress.cost,
                            estimated_usd=progress.estimated_cost, error=error,
                            summary=turn.summary, banners=list(setup.banners))
        return TurnOutcome(result, progress.transcript[len(setup.history):], progress.touched,
                           progress.stop_reason, progress.tool_calls)


class _Checkpoints:
    """When a streaming call's text is saved: the first text at once, then at most every
    :data:`CHECKPOINT_SECONDS`, and text that arrived in between once that time is up even
    if nothing follows it (a stream that pauses, or whose daemon is then killed, must not
    leave the last words shown unsaved)."""

    def __init__(self, runner: TurnRunner, progress: _Progress) -> None:
        self.runner = runner
        self.progress = progress
        self.draft = progress.draft
        self.last: float | None = None
        self.later: asyncio.TimerHandle | None = None

    def text_added(self) -> None:
        """Save now, or schedule the save of what the last save missed."""
        now = self.runner.clock.monotonic()
        if self.last is None or now - self.last >= CHECKPOINT_SECONDS:
            self.save()
        elif self.later is None:
            self.later = asyncio.get_running_loop().call_later(
                CHECKPOINT_SECONDS - (now - self.last), self.save)

    def save(self) -> None:
        """Save the call's text so far (unless the call has already kept its message)."""
        self.close()
        if self.progress.draft is self.draft:
            self.runner._checkpoint(self.progress)
            self.last = self.runner.clock.monotonic()

    def close(self) -> None:
        """Drop a scheduled save (the call ended)."""
        if self.later is not None:
            self.later.cancel()
            self.later = None


async def _settle(tasks: dict[str, asyncio.Task[ToolOutcome]],
                  outcomes: dict[str, ToolOutcome]) -> None:
    """Cancel side-by-side calls still running, wait for each to answer, keep what they said."""
    running = [t for t in tasks.values() if not t.done()]
    for task in running:
        task.cancel()
    if running:
        await asyncio.wait(running)
    for call_id, task in tasks.items():
        if call_id not in outcomes and not task.cancelled() and task.exception() is None:
            outcomes[call_id] = task.result()


@dataclass(frozen=True)
class _Estimate:
    """A call whose request has left but whose usage the provider has not yet reported.
    The system prompt and tool descriptions are estimated only when needed (the call is
    marked sent, on the loop's next pass, or ends unfinished), not in the adapter's
    callback on the way to the first delta."""

    request: ProviderRequest
    transcript_tokens: int
    """The estimate of the request's messages."""

    def fixed_tokens(self) -> int:
        """The estimate of the request's system prompt and tool descriptions."""
        return estimate_turn([self.request.system or "",
                              *(t.description for t in self.request.tools)])

    def usage(self) -> Usage:
        """The routing estimate of the request's input tokens."""
        return Usage(input_tokens=self.fixed_tokens() + self.transcript_tokens)
