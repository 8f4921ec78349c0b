"""Running delegations: the ``delegate`` tool, worker sessions, results, events, progress.

The ``delegate`` tool is offered to a turn when delegation is on, the turn's
model ``can_delegate`` and the session is not a worker (spec 001 §3); it is
decided per turn, so a model change re-decides it. Each call creates a worker
session through :class:`SessionManager` and runs its one turn through
:class:`TurnLifecycle`, exactly like a user's turn — routed with the tier in
slot 5, recorded, cancellable. Calls of one message run side by side, at
most ``max_concurrent_workers`` at once per planner turn.

Calls beyond the cap wait for a free slot (:mod:`.slots`): each is announced
``queued`` with its place in line (``switchman/delegation``, a ``delegate.queued``
event) and moves to ``running`` when it starts.

Cancelling the planner's turn cancels its tool calls, so every running
worker ends ``cancelled`` with it (``cancelled_by_user``), and every waiting
one ends so without starting. Cancelling one worker's turn (its own turn id),
or stopping one delegation by its planner's turn and tool use id (:meth:`Delegation.stop`,
the only way to reach one still waiting), fails only that delegation; the planner goes on.

A worker that may write or execute starts only once the user approves the
delegation (:mod:`.approval`); a denial fails the call with
``approval_denied`` and no worker session is created.
"""

from __future__ import annotations

import asyncio
import json
from functools import partial
from typing import Any

import msgspec

from switchman.engine.clock import Clock
from switchman.engine.config.store import ConfigStore
from switchman.engine.delegation.approval import delegation_request, floor_note, floored_tier
from switchman.engine.delegation.contract import (
    FORBIDDEN_FOR_WORKERS,
    REQUEST_CONTEXT,
    REQUEST_CONTEXT_SPEC,
    ArgumentProblem,
    DelegateCall,
    DelegateResult,
    FileInclude,
    FileRangeInclude,
    InsufficientContextRequest,
    delegate_spec,
    parse_call,
    parse_context_request,
)
from switchman.engine.delegation.envelope import HandoffEnvelope, encode
from switchman.engine.delegation.grant import WorkerTools, check_worker_tools, worker_tools
from switchman.engine.delegation.handoff import Handoff, prepare, worker_prompt
from switchman.engine.delegation.progress import (
    EXITED_DETAIL,
    DelegationSource,
    WorkerProgress,
    chosen_by,
    record_refusal,
)
from switchman.engine.delegation.recording import handoff_envelope
from switchman.engine.delegation.slots import WorkerSlots
from switchman.engine.errors import NoModelAvailable
from switchman.engine.messages import ApprovalRecord
from switchman.engine.profiles.profile import SUBAGENT_PROFILE, ActiveProfile, ProfileSet
from switchman.engine.providers.base import ToolSpec
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.tiers import ESTIMATED, GIVEN, estimate_complexity, model_tier
from switchman.engine.sessions.lifecycle import TurnLifecycle
from switchman.engine.sessions.live import LiveSession, WorkerRole
from switchman.engine.sessions.manager import SessionManager
from switchman.engine.tokens import estimate_text
from switchman.engine.tools.approval import (
    ApprovalPolicy,
    ApprovalRequest,
    approval_record,
    stopped_record,
)
from switchman.engine.tools.arguments import ToolOutcome, summary_of
from switchman.engine.tools.registry import ToolCallRequest, ToolContext, ToolEntry, ToolRegistry
from switchman.engine.tools.toolbox import TOOL_CLASSES
from switchman.engine.wording import unknown_name


class Delegation:
    """Offers ``delegate`` to planners and runs their workers."""

    def __init__(self, sessions: SessionManager, lifecycle: TurnLifecycle,
                 config: ConfigStore, clock: Clock, policy: ApprovalPolicy) -> None:
        self.sessions = sessions
        self.policy = policy
        self.lifecycle = lifecycle
        self.config = config
        self.clock = clock
        lifecycle.tool_sources.append(self.offer)
        self._spec: tuple[ProfileSet | None, ToolSpec | None] = (None, None)
        """The ``delegate`` definition offered last, and the profiles it names."""
        self._active: dict[tuple[str | None, str],
                           tuple[WorkerRun, WorkerSlots, asyncio.Event]] = {}
        """The planners' delegations waiting or running, by (planner turn, tool use id), with
        their slots and an event set when they have ended."""

    def offer(self, context: ToolContext, tools: ToolRegistry) -> None:
        """Add ``delegate`` to a turn's tools if this session and model may delegate."""
        settings = self.config.effective(str(context.folder)).delegation
        model = self.config.registry().get(context.model)
        if context.is_worker or not settings.enabled or model is None or not model.can_delegate:
            tools.withhold("delegate", "workers never delegate" if context.is_worker
                           else "delegation is turned off in routing.yaml"
                           if not settings.enabled
                           else f"{context.model} may not delegate (its can_delegate is false)")
            return
        limit = WorkerSlots(settings.max_concurrent_workers)  # per planner turn
        profiles = self.config.profiles(str(context.folder))
        known, spec = self._spec
        if known is not profiles or spec is None:  # the same profiles (files unchanged) keep it
            spec = delegate_spec([(n, profiles.profiles[n].description) for n in sorted(
                profiles.names(), key=lambda n: profiles.profiles[n].source == "workspace")])
            self._spec = (profiles, spec)
        tools.add(ToolEntry(spec, partial(self._delegate, context, tools, limit),
                            concurrent=True))

    async def _delegate(self, context: ToolContext, planner_tools: ToolRegistry,
                        limit: WorkerSlots, call: ToolCallRequest) -> ToolOutcome:
        planner = self.sessions.load(context.session_id)
        if planner.is_worker:  # never offered to workers; refuse if it ever is
            return _refused("workers cannot delegate")
        try:
            spec = parse_call(call.arguments)
            _check_tool_names(spec.allowed_tools, planner_tools.names())
            profile = self.worker_profile(str(planner.folder), spec.profile)
            tools = worker_tools(spec.allowed_tools, planner_tools.names(), profile)
            check_worker_tools(tools, planner_tools.names(), profile)
            handoff = prepare(spec, planner.folder,
                              lambda: self.sessions.store.messages(planner.id))
        except ArgumentProblem as problem:
            record_refusal(self.sessions, self.clock, context, call.id, call.arguments,
                           str(problem))
            return _refused(str(problem))
        run = WorkerRun(self, planner, context, call.id, spec, handoff, tools, profile)
        key = (context.turn_id, call.id)
        ended = asyncio.Event()
        self._active[key] = (run, limit, ended)
        run.task = asyncio.current_task()
        try:
            try:
                started = await limit.take(run.progress.queued)
            except asyncio.CancelledError:  # the planner's turn ended while this one waited
                return run.cancelled_before_start(
                    "Switchman stopped before this worker started (the editor closed, reloaded "
                    "or restarted it)" if self.lifecycle.runner.exiting
                    else "the planner's turn was cancelled before this worker started")
            if not started:
                return run.cancelled_before_start("the user stopped it before it started")
            try:
                return await run.run()
            finally:
                limit.release()
        finally:
            del self._active[key]
            ended.set()

    async def stop(self, planner_turn_id: str, tool_use_id: str) -> tuple[bool, str]:
        """Stop one delegation of a planner's turn, waiting or running; the planner goes on.
        Returns (whether it was stopped, the status: ``cancelled``; else ``ended`` when it is
        not waiting or running, or ``starting`` while it is asked about or routed). Raises
        :class:`UnknownTurn` for an unknown planner turn and :class:`TurnElsewhere` for one
        another window's daemon runs."""
        active = self._active.get((planner_turn_id, tool_use_id))
        if active is None:
            self.lifecycle.check_not_elsewhere(planner_turn_id)
            return False, "ended"
        run, limit, ended = active
        if limit.withdraw(run.progress.queued):
            await ended.wait()  # answered, recorded and told, as a cancelled turn is
            return True, "cancelled"
        if run.progress.worker_turn_id is not None:
            return await self.lifecycle.cancel(run.progress.worker_turn_id)
        if run.asking and run.task is not None:  # its start is asked about: stopped there
            run.stopped = True
            run.task.cancel()
            await ended.wait()
            return True, "cancelled"
        return False, "starting"  # being routed: no turn to stop yet

    def worker_profile(self, folder: str, name: str | None) -> ActiveProfile:
        """The registered profile a worker runs with (``subagent`` when none is named);
        raises :class:`ArgumentProblem` naming the registered ones — never a silent default."""
        profiles = self.config.profiles(folder)
        found = profiles.get(name or SUBAGENT_PROFILE)
        if found is None:
            raise ArgumentProblem(unknown_name(f"unknown profile '{name}'.", str(name),
                                               profiles.names(), "The registered profiles are"))
        return ActiveProfile(found, "session")

    def default_timeout(self, folder: str) -> float:
        """The wall-clock limit for workers whose planner gave none."""
        return self.config.effective(folder).delegation.timeout_seconds


class WorkerRun:
    """One ``delegate`` call: the worker session, its turn, and the result."""

    def __init__(self, delegation: Delegation, planner: LiveSession, context: ToolContext,
                 tool_use_id: str, call: DelegateCall, handoff: Handoff,
                 tools: WorkerTools, profile: ActiveProfile,
                 source: DelegationSource = "planner", focus: str | None = None) -> None:
        self.delegation = delegation
        self.profile = profile
        self.planner = planner
        self.context = context
        self.call = call
        self.handoff = handoff
        self.tools = tools
        self.dropped, self.allowed = self.tools.dropped, self.tools.allowed
        self.requested: InsufficientContextRequest | None = None
        self.task: asyncio.Task[Any] | None = None
        """The planner's call running it (what a Stop cancels while its start is asked)."""
        self.asking = False
        """Whether the user is being asked to approve its start."""
        self.stopped = False
        """Whether the user stopped it from its card while asked about."""
        self.approval: ApprovalRecord | None = None
        """The question its start asked the user and how it ended (kept with its result)."""
        self.tier_floor: str | None = None
        """The planner's tier when the tier floor is on (decided when it starts)."""
        self.asked_again: str | None = None
        """Why its start is asked about again, once routing changed while the question waited
        (kept with the earlier question, which the new one supersedes)."""
        self.progress = WorkerProgress(delegation.sessions, delegation.clock, context,
                                       tool_use_id, call, handoff, self.dropped,
                                       len(self.tools.wanted), source, focus)

    async def run(self) -> ToolOutcome:
        """Run the worker to its end and turn how it ended into the planner's tool result."""
        return self._tool_outcome(await self.result())

    def cancelled_before_start(self, detail: str) -> ToolOutcome:
        """End a delegation stopped while it waited for a free worker slot (``detail`` says
        how): recorded, told and answered as a running worker's cancellation is."""
        self.progress.wait_over()
        self.progress.detail = detail
        result = self.progress.failed("cancelled_by_user", "cancelled_by_user", "")
        return self._tool_outcome(self._ended(result))

    async def result(self) -> DelegateResult:
        """Run the worker to its end; how it ended (recorded, and sent to the editor)."""
        self.progress.wait_over()  # its wall time starts here, not while it waited
        try:
            ran = await self._run()
        except asyncio.CancelledError:  # cancelled again while its worker's turn ended (at
            # exit every task left is): the delegation is still recorded as ended, not running
            self.progress.detail = EXITED_DETAIL if self.delegation.lifecycle.runner.exiting \
                else "the planner's turn was cancelled"
            self._ended(self.progress.failed("cancelled_by_user", "cancelled_by_user", ""))
            raise
        return self._ended(ran)

    def _ended(self, result: DelegateResult) -> DelegateResult:
        self.progress.ended(result)
        learning, planner_turn = self.delegation.sessions.learning, self.progress.planner_turn_id
        if learning is not None and planner_turn is not None and self.progress.worker_session_id:
            learning.worker_done(planner_turn, result.success,  # only workers that ran count
                                 self.progress.tool_use_id)
        return result

    async def _run(self) -> DelegateResult:
        self.tier_floor = self._tier_floor()  # before asking: the question names the capped tier
        role = WorkerRole(
            parent_session_id=self.planner.id, parent_tool_use_id=self.progress.tool_use_id,
            tier=self.call.tier, system_prompt=self._prompt, allowed_tools=self.allowed,
            extra_tools=[ToolEntry(REQUEST_CONTEXT_SPEC, self._request_context,
                                   ends_turn=True, internal=True)],
            sink=self.progress, max_output_tokens=self.call.max_tokens,
            requires_structured_output=self.call.output_schema is not None,
            profile=self.profile, reasoning_effort=self.profile.profile.model_policy.effort,
            tier_floor=self.tier_floor)
        role.complexity, role.complexity_source = self._complexity()
        approved = await self._approved(role)
        if isinstance(approved, DelegateResult):
            return approved
        role.decision, approval_required = approved
        self.progress.approved()  # its wall time starts here, not while its start was asked
        envelope = self._envelope(approval_required)
        worker = self.delegation.sessions.new_worker(self.planner, role)
        self.progress.worker_session_id = worker.id
        self.progress.envelope = envelope.with_target_session(worker.id)
        self.delegation.sessions.store.set_handoff(worker.id, encode(self.progress.envelope))
        seconds = self.call.timeout_seconds or \
            self.delegation.default_timeout(str(self.planner.folder))
        deadline = asyncio.timeout(seconds)
        try:
            async with deadline:
                outcome = await self.delegation.lifecycle.run(worker, self.handoff.message, [],
                                                              None)
        except NoModelAvailable as failure:
            return self._no_model(failure)
        finally:  # the worker takes no more turns: only its stored record stays
            self.delegation.sessions.release(worker.id)
        current = asyncio.current_task()
        planner_cancelled = current is not None and current.cancelling() > 0
        return self.progress.result_of(outcome, deadline.expired(), planner_cancelled,
                                       self.requested, seconds,
                                       exiting=self.delegation.lifecycle.runner.exiting)

    def _complexity(self) -> tuple[str, str]:
        """The complexity (the planner's, else estimated from the task and its context) the
        worker is routed with, and where it came from."""
        if self.call.complexity is not None:
            complexity, source = self.call.complexity, GIVEN
        else:
            files = sum(isinstance(item, FileInclude | FileRangeInclude)
                        for item in self.call.context.include)
            complexity = estimate_complexity(estimate_text(self.handoff.message), files)
            source = ESTIMATED
        return complexity, source

    def _tier_floor(self) -> str | None:
        """The tier floor the worker is routed with: the planner's tier, when the floor is on."""
        config = self.delegation.config
        effective = config.effective(str(self.planner.folder))
        # The floor protects against a planner overspending; a user who names a tier chose it.
        return model_tier(self.context.model, effective.tiers, config.registry()) \
            if effective.delegation.tier_floor and self.progress.source == "planner" else None

    def _tier(self) -> str:
        """The tier the worker runs on: the one asked for, capped at the tier floor."""
        return floored_tier(self.call.tier, self.tier_floor)

    def _tier_said(self) -> str:
        """The worker's tier as its question names it: ``balanced (deep, capped by the tier
        floor)`` when the floor lowered the planner's."""
        return self._tier() + floor_note(self.call.tier, self.tier_floor)

    def _no_model(self, failure: NoModelAvailable) -> DelegateResult:
        # The error is the failure mode itself, as spec 000 §6.6's table has it (and as the
        # editors read it); what was tried and why goes in the detail.
        self.progress.detail = f"no model available for tier {self._tier_said()}: {failure}"
        return self.progress.failed("no_model_available_for_tier",
                                    "no_model_available_for_tier", "")

    async def _route(self, role: WorkerRole) -> RouteDecided | DelegateResult:
        """The worker's routing as it would be now, with the files as saved (nothing recorded,
        no provider called); the failure when no model can take it."""
        await self.delegation.config.settle(str(self.planner.folder))
        unsaved = self.delegation.sessions.unsaved_worker(self.planner, role)
        try:
            return self.delegation.lifecycle.preview(unsaved, self.handoff.message)
        except NoModelAvailable as failure:
            return self._no_model(failure)

    async def _approved(self, role: WorkerRole) -> tuple[RouteDecided, bool] | DelegateResult:
        """The routing the worker runs on and whether its start needed approval; else how it
        ended unstarted (no model, denied, stopped). It is routed before the user is asked, so
        the question names the model, and again once approved: when the model changed while
        the question waited (routing.yaml, models.yaml, a provider's outage), the user is asked
        again about the one that would run now. What runs is what the last question named."""
        decision = await self._route(role)
        if isinstance(decision, DelegateResult):
            return decision
        required = False
        while (request := delegation_request(self.context, self.call, self.allowed,
                                             self.tier_floor, decision.chosen_model,
                                             chosen_by(decision), self.asked_again,
                                             self.progress.tool_use_id)) is not None:
            required = True
            refusal = await self._approval(request)
            if refusal is not None:
                return refusal
            if self.approval is None or self.approval.id != request.id:
                if self.approval is not None and self.asked_again is not None:
                    # an "always" answer asks no more: its question keeps that the model changed
                    self.approval = self.progress.approval = msgspec.structs.replace(
                        self.approval, model_changed=self.asked_again)
                break  # not asked (delegate is trusted): no question named this model
            now = await self._route(role)
            if isinstance(now, DelegateResult):
                return now
            asked, decision = decision, now
            if now.chosen_model == asked.chosen_model:
                break  # else routing changed while the question waited: ask about this one
            self.asked_again = self._model_changed(asked, now)
        return decision, required

    def _model_changed(self, asked: RouteDecided, now: RouteDecided) -> str:
        """Why the worker's start is asked about again, its models named as the editors
        name them (``the model changed from haiku to sonnet while the question waited``)."""
        registry = self.delegation.config.registry()
        before, after = (registry.short_name(d.chosen_model or "") for d in (asked, now))
        return f"the model changed from {before} to {after} while the question waited"

    async def _approval(self, request: ApprovalRequest) -> DelegateResult | None:
        """None when the worker may start (trusted or approved); else the failure."""
        self.asking = True
        asked: list[bool] = []

        def asking() -> None:
            asked.append(True)
            if self.approval is not None and self.asked_again is not None:
                # the answer before is kept, marked as superseded by this question and why
                self.progress.superseded_approvals.append(msgspec.structs.replace(
                    self.approval, superseded=self.asked_again))
            self.progress.awaiting_approval()
        try:
            answer = await self.delegation.policy.decide(request, asking)
        except asyncio.CancelledError:  # stopped while the user was asked: ends like a worker
            if self.stopped and self.task is not None:  # this call alone: the planner goes on
                self.task.uncancel()
                self.progress.detail = "the user stopped it before it started"
            else:
                self.progress.detail = "cancelled while waiting for approval"
            self.approval = self.progress.approval = \
                stopped_record(request, self.progress.detail) if asked else None
            return self.progress.failed("cancelled_by_user", "cancelled_by_user", "")
        finally:
            self.asking = False
        if asked:  # (a question asked again keeps the first's record when this one is trusted)
            self.approval = self.progress.approval = approval_record(request, answer)
        if answer.allowed:
            return None
        self.progress.detail = answer.short_reason or "the user denied it"
        return self.progress.failed(
            "approval_denied", "approval_denied",
            f"{answer.refusal('this delegation', 'no worker was started')} "
            "Do the task yourself, or delegate it with read-only allowed_tools.")

    def _envelope(self, approval_required: bool) -> HandoffEnvelope:
        folder = str(self.planner.folder)
        return handoff_envelope(
            self.delegation.sessions, self.planner, self.context, self.progress.tool_use_id,
            self.call, self.profile, worker_tier=self._tier(), tools=self.allowed,
            dropped=self.dropped, withheld=self.tools.told(),
            approval_required=approval_required,
            timeout_seconds=self.call.timeout_seconds or self.delegation.default_timeout(folder),
            max_concurrent_workers=self.delegation.config.effective(
                folder).delegation.max_concurrent_workers,
            reason="user_delegate" if self.progress.source == "user" else "planner_delegate")

    def _tool_outcome(self, result: DelegateResult) -> ToolOutcome:
        """The planner's tool result: the worker's output (or the failure), then the tools it
        named and the worker did not have, if any."""
        output = result.output if isinstance(result.output, str) \
            else json.dumps(msgspec.to_builtins(result.output))
        note = self.tools.note()
        # the question is stored once, with the delegation's start or end (history.py)
        if result.success:
            return ToolOutcome("\n\n".join(p for p in (output, note) if p),
                               summary=f"{self._tier()} worker done", approval=self.approval,
                               approval_stored=False,
                               superseded_approvals=self.progress.superseded_approvals)
        # A tier without a usable model has no output: the planner is told why instead.
        why = self.progress.detail if self.progress.mode == "no_model_available_for_tier" \
            else None
        text = "\n\n".join(p for p in (f"delegate failed: {result.error}", why, output, note)
                           if p)
        return ToolOutcome(text, is_error=True, summary=summary_of(result.error or "failed"),
                           approval=self.approval, approval_stored=False,
                           superseded_approvals=self.progress.superseded_approvals)

    def _prompt(self, model: str, tools: list[str]) -> str:
        return worker_prompt(model, "Your task:\n" + self.call.task + "\n\n"
                             + self.handoff.summary, tools, self.call.output_schema,
                             from_user=self.progress.source == "user")

    async def _request_context(self, call: ToolCallRequest) -> ToolOutcome:
        try:
            self.requested = parse_context_request(call.arguments)
        except ArgumentProblem as problem:
            return ToolOutcome(str(problem), is_error=True, summary="invalid request")
        return ToolOutcome("Request sent to the planner; your work ends here.",
                           summary="asked the planner for context")


KNOWN_TOOLS = frozenset({*TOOL_CLASSES, *FORBIDDEN_FOR_WORKERS, REQUEST_CONTEXT})
"""Every tool name ``allowed_tools`` may hold: the tools there are, and those no worker gets
(named, they are dropped and recorded as ``dropped_tools``)."""


def _check_tool_names(allowed: list[str] | None, planner_tools: list[str]) -> None:
    """Refuse an ``allowed_tools`` entry that names no tool at all (``"read_fle"``): narrowing
    it away would start a worker without the tool the planner meant to give it. A real tool
    the planner lacks is narrowed away as the spec says (the worker gets planner ∩ allowed)."""
    unknown = [n for n in allowed or () if n not in KNOWN_TOOLS and n not in planner_tools]
    if unknown:
        yours = ", ".join(sorted(n for n in planner_tools if n not in FORBIDDEN_FOR_WORKERS))
        raise ArgumentProblem(f"'allowed_tools' names no tool called "
                              f"{', '.join(repr(n) for n in unknown)}; your tools are {yours}")


def _refused(detail: str) -> ToolOutcome:
    return ToolOutcome(f"delegate refused: {detail}. Nothing was started; correct the call and "
                       "try again.", is_error=True, summary=summary_of(detail))

