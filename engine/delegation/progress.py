"""What one delegation is doing: the worker's output as progress, its events, its result.

:class:`WorkerProgress` is the worker turn's sink (instead of the editor's chat
stream): it counts the worker's calls, tokens and cost, tells the editor
about the delegation (``started``, throttled ``progress``, ``ended``), and
records ``delegate.started`` / ``delegate.completed`` / ``delegate.failed``
and the worker's ``session.ended``.
"""

from __future__ import annotations

import asyncio
from decimal import Decimal
from typing import Any, Literal

from switchman.engine.clock import Clock
from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.delegation.contract import (
    INVALID_ARGUMENTS,
    MAX_TASK_CHARS,
    DelegateCall,
    DelegateResult,
    DelegateUsageSummary,
    FailureMode,
    InsufficientContextRequest,
    validate_output,
)
from switchman.engine.delegation.envelope import HandoffEnvelope
from switchman.engine.delegation.handoff import Handoff
from switchman.engine.delegation.history import AWAITING_APPROVAL_DETAIL
from switchman.engine.events import (
    DelegateAwaitingApproval,
    DelegateCompleted,
    DelegateFailed,
    DelegateQueued,
    DelegateStarted,
    SessionEnded,
)
from switchman.engine.messages import ZERO_USD, ApprovalRecord, Usage
from switchman.engine.routing.decision import RouteDecided, TierChoice
from switchman.engine.routing.explain import short_reason
from switchman.engine.routing.tiers import worker_effort
from switchman.engine.sessions.manager import SessionManager
from switchman.engine.sessions.records import (
    ChatDelta,
    DelegationStatus,
    DelegationUpdate,
    QueuePlace,
    RouteNotice,
)
from switchman.engine.sessions.turn_setup import TurnOutcome
from switchman.engine.tokens import estimate_text
from switchman.engine.tools.registry import ToolContext

DelegationSource = Literal["planner", "user"]

PROGRESS_INTERVAL_SECONDS = 0.25
"""Text progress is sent at most this often (tool calls and charges always); text held back
is sent when the interval is over, so a worker that pauses after a few words shows them."""
ACTIVITY_CHARS = 120



EXITED_DETAIL = ("Switchman stopped while this worker ran (the editor closed, reloaded or "
                 "restarted it)")
"""Why a delegation ended when the daemon exited under it: not the user's Stop, nor a
cancellation of the planner's turn by the user (its turn ends ``interrupted`` too)."""

class WorkerProgress:
    """Counts, reports and records one delegation."""

    def __init__(self, sessions: SessionManager, clock: Clock, planner: ToolContext,
                 tool_use_id: str, call: DelegateCall, handoff: Handoff, dropped: list[str],
                 allowed_tool_count: int, source: DelegationSource = "planner",
                 focus: str | None = None) -> None:
        self.sessions = sessions
        self.clock = clock
        self.planner = planner
        self.tool_use_id = tool_use_id
        self.call = call
        self.handoff = handoff
        self.dropped = dropped
        self.allowed_tool_count = allowed_tool_count
        self.source: DelegationSource = source
        self.focus = focus
        # The user's delegations belong to no planner turn (``/delegate`` is a command).
        self.planner_turn_id = planner.turn_id if source == "planner" else None
        self.worker_session_id = ""
        self.envelope: HandoffEnvelope | None = None
        """The handoff, once the request passed validation and approval."""
        self.worker_turn_id: str | None = None
        self.model: str | None = None
        self.usage = Usage()
        self.cost = ZERO_USD
        self.estimated_cost = ZERO_USD
        """The part of :attr:`cost` that is Switchman's estimate (calls cut short)."""
        self.turns = self.llm_calls = self.tool_calls = 0
        self.activity: str | None = None
        self.detail: str | None = None
        self.approval: ApprovalRecord | None = None
        """The question its start asked the user and the answer (recorded with its start or
        its end, for a rebuilt chat: a user's ``/delegate`` has no tool result to keep it)."""
        self.superseded_approvals: list[ApprovalRecord] = []
        """The questions about its start asked before :attr:`approval`, answered and then
        asked again because the worker's model changed while they waited (recorded with it)."""
        self.mode: FailureMode = "worker_error"
        self.choice: TierChoice | None = None
        self.effort: str | None = None
        """The reasoning effort the worker's calls are sent with, once it is routed."""
        self.routed_by: str | None = None
        self.requested_at = clock.now()
        self.queue: QueuePlace | None = None
        """Its place in line while it waits for a free worker slot."""
        self.queued_seconds = 0.0
        self._started = clock.monotonic()
        self._queued_at: float | None = None
        self._ran = False
        """Whether its worker may start (approved, or asked nothing): it has a run time."""
        self._sent = 0.0
        self._text = ""
        self._held: asyncio.TimerHandle | None = None
        """The send of text progress held back by the interval, if one is pending."""
        self._ended = False

    # -- waiting for a worker slot -------------------------------------------------------

    def queued(self, place: QueuePlace) -> None:
        """It waits for a free worker slot (again told when the line moves): recorded once,
        told every time."""
        if self._queued_at is None:
            self._queued_at = self._started = self.clock.monotonic()
            self.sessions.store.add_event(DelegateQueued(
                timestamp=self.clock.now(), session_id=self.planner.session_id,
                tool_use_id=self.tool_use_id, turn_id=self.planner_turn_id, tier=self.call.tier,
                task=self.call.task, source=self.source, position=place.position,
                running=place.running, limit=place.limit), self.planner_turn_id)
        self.queue = place
        self.detail = place.reason()
        self._send("queued", "queued")

    def awaiting_approval(self) -> None:
        """Its start waits for the user's approval. Told only for a delegation the editor
        already shows (one that waited for a slot), so its card stops saying it waits for a
        worker; one that did not wait is shown from its start, as the approval asks first.
        Recorded (``delegate.awaiting_approval``), so ``switchman/session`` lists it so too."""
        if self._queued_at is not None:
            self.sessions.store.add_event(DelegateAwaitingApproval(
                timestamp=self.clock.now(), session_id=self.planner.session_id,
                tool_use_id=self.tool_use_id, turn_id=self.planner_turn_id),
                self.planner_turn_id)
            self.detail = AWAITING_APPROVAL_DETAIL
            self._send("awaiting_approval", "awaiting_approval")

    def wait_over(self) -> None:
        """Its wait (if any) is over, to start or to end unstarted: its own wall time begins."""
        now = self.clock.monotonic()
        if self._queued_at is not None:
            self.queued_seconds = round(now - self._queued_at, 3)
            self.queue, self.detail = None, None
        self._started = now

    def approved(self) -> None:
        """It may start (its start approved, or no question asked): the worker's own wall time
        (``elapsed_seconds``, the recorded ``wall_time_seconds``) begins now, not while the
        user was asked."""
        self._started, self._ran = self.clock.monotonic(), True

    # -- the worker turn's sink ------------------------------------------------------

    def route_decided(self, notice: RouteNotice) -> None:
        """The worker's turn was routed: the delegation has started."""
        self.model, self.worker_turn_id = notice.model, notice.turn_id
        self.turns += 1
        winner = notice.decision.winner
        self.choice = winner.tier_choice if winner is not None else None
        self.routed_by = chosen_by(notice.decision)
        choice = self.choice
        wanted = self.envelope.model_policy.reasoning_effort if self.envelope else None
        self.effort = worker_effort(notice.decision,
                                    self.sessions.config.registry().get(notice.model or ""),
                                    wanted)
        self.sessions.store.add_event(DelegateStarted(
            timestamp=self.clock.now(), session_id=self.planner.session_id,
            tool_use_id=self.tool_use_id, worker_session_id=self.worker_session_id,
            tier=self.call.tier, resolved_model=notice.model or "",
            context_mode=self.call.context.mode,
            context_reference_count=self.handoff.reference_count,
            task_size_tokens=estimate_text(self.call.task),
            allowed_tool_count=self.allowed_tool_count, dropped_tools=self.dropped,
            worker_tier=choice.tier if choice else None,
            tier_floor=choice.tier_floor if choice else None,
            floor_applied=choice.floor_applied if choice else False,
            routed_by=self.routed_by,
            complexity=choice.complexity if choice else None,
            complexity_source=choice.complexity_source if choice else None,
            reasoning_effort=self.effort,
            profile=self.envelope.target.profile.name if self.envelope else None,
            handoff=self.envelope, source=self.source, focus=self.focus,
            requested_at=self.requested_at, queued_seconds=self.queued_seconds,
            approval=self.approval, superseded_approvals=self.superseded_approvals),
            self.planner_turn_id)
        self._send("started", "running")

    def delta(self, delta: ChatDelta) -> None:
        """Worker output becomes the delegation's latest activity."""
        if delta.kind == "text" and delta.text:
            self._text = (self._text + delta.text)[-ACTIVITY_CHARS:]
            self.activity = self._text.strip().splitlines()[-1] if self._text.strip() else None
            waited = self.clock.monotonic() - self._sent
            if waited < PROGRESS_INTERVAL_SECONDS:
                self._hold(PROGRESS_INTERVAL_SECONDS - waited)
                return
        elif delta.tool is not None:
            self._text = ""
            if delta.kind == "tool_result":
                self.tool_calls += 1
                self.activity = f"{delta.tool.name}: {delta.tool.summary or delta.tool.status}"
                self._send("progress", "running", approval=delta.tool.approval)
                return
            self.activity = f"calling {delta.tool.name}"
        elif delta.kind == "notice":
            self.activity = delta.text
        self._send("progress", "running")

    def charged(self, usage: Usage, cost: Decimal, estimated: bool = False) -> None:
        """One worker call was charged."""
        self.usage, self.cost = self.usage + usage, self.cost + cost
        if estimated:
            self.estimated_cost += cost
        self.llm_calls += 1
        self._send("progress", "running")

    # -- the result --------------------------------------------------------------------

    def result_of(self, outcome: TurnOutcome, timed_out: bool, planner_cancelled: bool,
                  requested: InsufficientContextRequest | None,
                  seconds: float, exiting: bool = False) -> DelegateResult:
        """The result of a worker turn that ran (spec 001 §4.4's failure table)."""
        last = next((m for m in reversed(outcome.added) if m.role == "assistant"), None)
        text = last.text() if last is not None else ""
        status = outcome.result.status
        if timed_out:
            self.detail = f"the worker did not finish within {seconds:g} seconds"
            return self.failed("timeout", "timeout", text)
        if status == "cancelled":
            self.detail = EXITED_DETAIL if exiting else "the planner's turn was cancelled" \
                if planner_cancelled else "the user stopped this worker"
            return self.failed("cancelled_by_user", "cancelled_by_user", text)
        if status == "failed":
            message = outcome.result.error.message if outcome.result.error else "failed"
            return self.failed("worker_error", f"worker_error: {message}", text)
        if requested is not None:
            return self.failed("insufficient_context", "insufficient_context", requested)
        if outcome.stop_reason == "max_tokens":
            self.detail = f"the worker reached max_tokens ({self.call.max_tokens or 'model limit'})"
            return self.failed("max_tokens_exceeded", "max_tokens_exceeded", text)
        if outcome.stop_reason == "step_limit":
            return self.failed("worker_error", "worker_error: too many tool steps", text)
        if self.call.output_schema is not None:
            value, problem = validate_output(text, self.call.output_schema)
            if problem is not None:
                self.detail = problem
                return self.failed("output_schema_validation_failed",
                                   "output_schema_validation_failed", text)
            return self._result(True, value, None)
        return self._result(True, text, None)

    def failed(self, mode: FailureMode, error: str,
               output: str | InsufficientContextRequest) -> DelegateResult:
        """A failed result (``mode`` is recorded on ``delegate.failed``)."""
        self.mode = mode
        return self._result(False, output, error)

    def _result(self, success: bool, output: object, error: str | None) -> DelegateResult:
        summary = DelegateUsageSummary(
            model=self.model or "", turn_count=self.turns, input_tokens=self.usage.input_tokens,
            output_tokens=self.usage.output_tokens, cost_usd=self.cost,
            estimated_usd=self.estimated_cost,
            # one that never started a worker ran for no time (its wait is not a run)
            wall_time_seconds=round(self.clock.monotonic() - self._started, 3)
            if self._ran else 0.0,
            tool_call_count=self.tool_calls)
        return DelegateResult(success=success, output=output,  # type: ignore[arg-type]
                              error=error, usage_summary=summary,
                              worker_session_id=self.worker_session_id)

    def ended(self, result: DelegateResult) -> None:
        """Record how the delegation ended and tell the editor."""
        store, now = self.sessions.store, self.clock.now()
        summary = result.usage_summary
        if result.success:
            store.add_event(DelegateCompleted(
                timestamp=now, session_id=self.planner.session_id, tool_use_id=self.tool_use_id,
                worker_session_id=self.worker_session_id, success=True, usage_summary=summary,
                worker_total_cost_usd=summary.cost_usd), self.planner_turn_id)
        else:
            request = result.output if isinstance(result.output, InsufficientContextRequest) \
                else None
            store.add_event(DelegateFailed(
                timestamp=now, session_id=self.planner.session_id, tool_use_id=self.tool_use_id,
                worker_session_id=self.worker_session_id, failure_mode=self.mode,
                error=result.error or "", usage_summary=summary,
                worker_total_cost_usd=summary.cost_usd, detail=self.detail,
                insufficient_context_request=request, source=self.source, tier=self.call.tier,
                task=self.call.task, requested_at=self.requested_at, approval=self.approval,
                superseded_approvals=self.superseded_approvals),
                self.planner_turn_id)
        if self.worker_session_id:
            disposition = "completed" if result.success else \
                "cancelled" if self.mode == "cancelled_by_user" else "failed"
            store.add_event(SessionEnded(timestamp=now, session_id=self.worker_session_id,
                                         disposition=disposition, is_worker=True))
        self._ended = True
        self._send("ended", "completed" if result.success else
                   "cancelled" if self.mode == "cancelled_by_user" else "failed",
                   result.error)

    def _hold(self, delay: float) -> None:
        """Send the latest text progress after ``delay`` seconds, unless something is sent
        before then (it carries the same state)."""
        if self._held is None and not self._ended:
            self._held = asyncio.get_running_loop().call_later(delay, self._send_held)

    def _send_held(self) -> None:
        self._held = None
        self._send("progress", "running")

    def _send(self, phase: str, status: DelegationStatus, error: str | None = None,
              approval: ApprovalRecord | None = None) -> None:
        if self._held is not None:
            self._held.cancel()
            self._held = None
        self._sent = self.clock.monotonic()
        self.sessions.observer.delegation(DelegationUpdate(
            phase=phase, session_id=self.planner.session_id,  # type: ignore[arg-type]
            turn_id=self.planner_turn_id, tool_use_id=self.tool_use_id,
            worker_session_id=self.worker_session_id, worker_turn_id=self.worker_turn_id,
            tier=self.call.tier, model=self.model, task=self.call.task, status=status,
            turns=self.turns, llm_calls=self.llm_calls, tool_calls=self.tool_calls,
            input_tokens=self.usage.input_tokens, output_tokens=self.usage.output_tokens,
            cost_usd=self.cost, estimated_usd=self.estimated_cost,
            # its wait while it waits, its worker's run once started, none if it never started
            elapsed_seconds=round(self._sent - self._started, 3)
            if self._ran or not self._ended else None,
            activity=self.activity, error=error,
            detail=self.detail if error or status in ("queued", "awaiting_approval") else None,
            queue=self.queue,
            dropped_tools=self.dropped,
            profile=self.envelope.target.profile.name if self.envelope else None,
            handoff=self.envelope, source=self.source, routed_by=self.routed_by,
            approval=approval, **_tier_fields(self.choice, self.effort)))


def record_refusal(sessions: SessionManager, clock: Clock, planner: ToolContext,
                   tool_use_id: str, arguments: dict[str, Any], detail: str) -> None:
    """Record a ``delegate`` call refused for its arguments: its one event, ``delegate.failed``
    with ``invalid_arguments`` and ``detail`` (what the planner was told to fix). No worker
    session, no handoff, nothing charged; the tier and task are kept when they are readable."""
    tier, task = arguments.get("tier"), arguments.get("task")
    now = clock.now()
    sessions.store.add_event(DelegateFailed(
        timestamp=now, session_id=planner.session_id, tool_use_id=tool_use_id,
        worker_session_id="", failure_mode=INVALID_ARGUMENTS, error=INVALID_ARGUMENTS,
        usage_summary=DelegateUsageSummary(model=""), worker_total_cost_usd=ZERO_USD,
        detail=detail, tier=tier if tier in TIER_NAMES else None,
        task=task[:MAX_TASK_CHARS] if isinstance(task, str) else None, requested_at=now),
        planner.turn_id)


def chosen_by(decision: RouteDecided) -> str | None:
    """What chose a worker's model when its tier did not: a rule matching the task (slot 3)
    chooses before the tier (slot 5), so does a profile's own model (``rule: docs``)."""
    winner = decision.winner
    return short_reason(decision) if winner is not None and winner.tier_choice is None else None


def _tier_fields(choice: TierChoice | None, effort: str | None) -> dict[str, Any]:
    """How the worker's tier was chosen, for the editor (empty until it is routed), and the
    reasoning effort its calls are sent with (also when no tier chose its model)."""
    effort_field = {"reasoning_effort": effort} if effort is not None else {}
    if choice is None:
        return effort_field
    return {"worker_tier": choice.tier, "tier_floor": choice.tier_floor,
            "floor_applied": choice.floor_applied, "complexity": choice.complexity,
            "complexity_source": choice.complexity_source, "reasoning_effort": effort}
