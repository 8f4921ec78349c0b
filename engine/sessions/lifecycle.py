"""The life of a turn: route, record the start, run, end — for top-level and worker sessions.

Every turn goes through :meth:`TurnLifecycle.run`: a user's message, a
``/route override`` re-run and a delegated worker's task alike. The turn is
routed (the worker's tier enters slot 5), run as its own task (so it can be
cancelled) and recorded durably while the provider works on its first request,
before anything it returns is shown, and ended:
the session remembers what the turn added, a queued sticky swap lands, and
the turn-ended hooks run.

The tools a turn is offered are built per turn from the registered tool
sources, so a model change (a sticky swap, an ``@alias`` turn) re-decides
which tools — ``delegate`` among them — the model sees.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

import msgspec

from switchman.engine.errors import (
    NoModelAvailable,
    OverrideUnusable,
    TurnElsewhere,
    TurnInProgress,
    UnknownTurn,
)
from switchman.engine.ids import new_id
from switchman.engine.messages import AttachmentBlock, Block, ImageBlock, Message, TextBlock, Usage
from switchman.engine.profiles.apply import allowed_tools, prompt_section, visible_skills
from switchman.engine.profiles.profile import ActiveProfile
from switchman.engine.providers.base import AdapterSource
from switchman.engine.router import Router
from switchman.engine.routing.chain import RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.explain import short_reason
from switchman.engine.routing.overrides import Override, without_override
from switchman.engine.routing.tiers import resolve_effort, worker_effort
from switchman.engine.sessions.attachments import inside_workspace
from switchman.engine.sessions.live import LiveSession, RunningTurn, TurnSink
from switchman.engine.sessions.manager import SessionManager, SessionObserver
from switchman.engine.sessions.prompt import system_prompt
from switchman.engine.sessions.records import ChatDelta, RouteNotice, TurnInfo
from switchman.engine.sessions.turn import TurnRunner
from switchman.engine.sessions.turn_setup import TurnOutcome, TurnSetup, TurnStart
from switchman.engine.tokens import estimate_messages
from switchman.engine.tools.registry import ToolContext, ToolRegistry
from switchman.engine.tools.workspace import WorkspaceTools
from switchman.engine.wording import first_line

log = logging.getLogger(__name__)
TITLE_LENGTH = 60

ToolSource = Callable[[ToolContext, ToolRegistry], None]
"""Adds tools to a turn's registry (given who runs the turn, on which model)."""


@dataclass(frozen=True)
class TurnEnded:
    """What a turn-ended hook is told."""

    session: LiveSession
    outcome: TurnOutcome
    context: TurnContext
    """The turn as routing saw it (its message, the session's files and size then)."""


TurnEndedHook = Callable[[TurnEnded], None]


@dataclass(frozen=True)
class _Said:
    """A turn's user message: the text routed and sent to the model, and what the user
    typed when that differs (None otherwise)."""

    text: str
    typed: str | None = None

    @property
    def shown(self) -> str:
        """The message as the user sees it in the transcript."""
        return self.text if self.typed is None else self.typed


class _EditorSink:
    """A top-level session's turn output goes to the editor."""

    def __init__(self, observer: SessionObserver) -> None:
        self.observer = observer

    def route_decided(self, notice: RouteNotice) -> None:
        self.observer.route_decided(notice)

    def delta(self, delta: ChatDelta) -> None:
        self.observer.delta(delta)

    def charged(self, usage: Usage, cost: Decimal, estimated: bool = False) -> None:
        """The editor reads costs from the turn's result and the status."""


class TurnLifecycle:
    """Starts, runs, ends and cancels the turns of every session."""

    def __init__(self, sessions: SessionManager, router: Router, adapters: AdapterSource,
                 runner: TurnRunner) -> None:
        self.sessions = sessions
        self.store = sessions.store
        self.router = router
        self.adapters = adapters
        self.runner = runner
        self.clock = sessions.clock
        self._editor = _EditorSink(sessions.observer)
        self.tool_sources: list[ToolSource] = [
            lambda context, tools: tools.add_set(WorkspaceTools(context.folder))]
        """Called in order for every turn; later sources may add, replace or remove tools."""
        self.turn_ended: list[TurnEndedHook] = []
        """Called after every turn (top-level and worker) with how it ended."""

    async def run(self, live: LiveSession, text: str, images: list[ImageBlock],
                  override: Override | None,
                  attachments: list[AttachmentBlock] | None = None, *,
                  cancelled: bool = False,
                  started: Callable[[TurnInfo], None] | None = None,
                  typed: str | None = None) -> TurnOutcome:
        """Route (``override`` first) and run one turn of ``live``; cancelling the caller
        cancels the turn, which still ends normally (``cancelled``). ``cancelled``: the
        caller was cancelled before it got here; the turn is recorded and cancelled.
        ``started``: called with the turn once its start is recorded (never if it could
        not start). ``typed``: what the user typed, when the model is sent ``text``
        instead (kept for the transcript and the title, see :attr:`Message.typed`)."""
        if live.running is not None:
            raise TurnInProgress(live.running.turn_id)
        shown = typed if typed is not None and typed.strip() and typed != text else None
        setup = self._start(live, _Said(text, shown), images, override, attachments or [],
                            started)
        loop = asyncio.get_running_loop()
        task = loop.create_task(self.runner.run(setup))
        if cancelled:  # after the task's first step, which is already scheduled
            loop.call_soon(task.cancel)
        live.running = RunningTurn(setup.turn.id, setup.model.id, task)
        self._status(live)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:  # the caller was cancelled: so is the turn
            task.cancel()
            return await task
        finally:
            self._end(live, setup, task)

    def _start(self, live: LiveSession, said: _Said, images: list[ImageBlock],
               override: Override | None, attachments: list[AttachmentBlock],
               started: Callable[[TurnInfo], None] | None) -> TurnSetup:
        turn_id = new_id()
        sticky = live.sticky.begin_turn()
        try:
            worker = live.worker
            profile = self.sessions.profile(live)
            context = self.sessions.turn_context(live, said.text, len(images), attachments)
            if worker is not None and worker.decision is not None:  # shown when it was asked
                decided, worker.decision = worker.decision, None
                decision = msgspec.structs.replace(decided, session_id=live.id, turn_id=turn_id,
                                                   timestamp=self.clock.now())
            else:
                decision = self.router.decide(_route_request(live, context, profile, turn_id,
                                                             override, sticky))
            if override is not None and override.required \
                    and decision.chosen_model != override.model:
                reason = decision.chain[0].reason
                raise OverrideUnusable(override.model, reason.partition(" rejected: ")[2]
                                       or reason)
            return self._record_start(live, turn_id, said, [*attachments, *images], decision,
                                      profile, context, started)
        except BaseException as failure:  # the turn did not start: the session is as it was
            live.sticky.end_turn()
            if isinstance(failure, NoModelAvailable):
                self.store.add_event(failure.decision)
            self._status(live)
            raise

    def preview(self, live: LiveSession, text: str) -> RouteDecided:
        """The decision a turn of ``live`` with ``text`` would get now, and nothing else:
        nothing is recorded, no provider is called (a worker's, for the question its start
        asks to name the model it will run on). Raises :class:`NoModelAvailable`."""
        context = self.sessions.turn_context(live, text, 0)
        return self.router.decide(_route_request(live, context, self.sessions.profile(live)))

    def _record_start(self, live: LiveSession, turn_id: str, said: _Said,
                      blocks: list[Block], decision: RouteDecided,
                      profile: ActiveProfile, context: TurnContext,
                      started: Callable[[TurnInfo], None] | None) -> TurnSetup:
        registry = self.router.registry()
        model = registry.models[decision.chosen_model or ""]
        now = self.clock.now()
        content: list[Block] = [TextBlock(said.text), *blocks]
        user = Message(id=new_id(), session_id=live.id, turn_id=turn_id, role="user",
                       content=content, created_at=now, typed=said.typed)
        turn = TurnInfo(id=turn_id, session_id=live.id, index=live.turn_count + 1,
                        status="running", model=model.id, started_at=now,
                        summary=short_reason(decision), decision=decision)
        attached = [b for b in blocks if isinstance(b, AttachmentBlock)]
        words = without_override(said.shown).strip()
        title = first_line(words, TITLE_LENGTH) if words else \
            (attached[0].path if attached else "(image)")
        touched = inside_workspace(attached)
        sink = self._sink(live)

        def begin() -> None:
            """Durable before anything of the turn is shown (see TurnStart)."""
            self.store.begin_turn(turn, user, decision, workspace=live.workspace, title=title,
                                  current=not live.is_worker, touched=touched)
            live.remember([user])
            live.touched += touched
            live.turn_count = turn.index  # numbered by the database, across daemons
            live.last_model = model.id
            sink.route_decided(RouteNotice(live.id, turn_id, model.id, turn.summary,
                                           decision.banners, decision))
            if started is not None:
                started(turn)

        tools = self.tools_for(live, turn_id, model.id, profile)
        worker = live.worker
        system = worker.system_prompt(model.id, tools.names()) if worker else \
            system_prompt(live.folder, model.id, tools.definitions(),
                          visible_skills(profile.profile, live.skills))
        section = prompt_section(profile.profile)
        system = f"{system}\n\n{section}" if section else system
        provider = registry.providers[model.provider]
        return TurnSetup(turn=turn, model=model, provider=provider,
                         adapter=self.adapters.adapter(provider), tools=tools, system=system,
                         history=(*live.history, user),
                         history_tokens=live.history_tokens + estimate_messages([user]),
                         sink=sink, start=TurnStart(begin), context=context,
                         banners=tuple(decision.banners), is_worker=live.is_worker,
                         parent_session_id=worker.parent_session_id if worker else None,
                         output_budget=worker.max_output_tokens if worker else None,
                         reasoning_effort=worker_effort(decision, model,
                                                        profile.profile.model_policy.effort)
                         if worker else resolve_effort(
                             model, profile.profile.model_policy.effort)[0])

    def tools_for(self, live: LiveSession, turn_id: str, model: str,
                  profile: ActiveProfile | None = None) -> ToolRegistry:
        """The tools a turn of ``live`` on ``model`` is offered (within its profile's)."""
        context = ToolContext(workspace=live.workspace, folder=live.folder, session_id=live.id,
                              turn_id=turn_id, model=model, is_worker=live.is_worker)
        tools = ToolRegistry()
        for source in self.tool_sources:
            source(context, tools)
        if live.worker is not None:  # only what the planner allowed, plus worker-only tools
            tools.keep(live.worker.allowed_tools, "this worker was not given it")
            for entry in live.worker.extra_tools:
                tools.add(entry)
        active = profile or self.sessions.profile(live)
        written = active.profile.as_written or active.profile
        tools.keep(allowed_tools(written, tools.names()),
                   f"the profile '{active.profile.name}' does not allow it")
        if written is not active.profile:  # what your profile took away from a workspace's
            tools.keep(allowed_tools(active.profile, tools.names()),
                       active.profile.bound_words())
        return tools

    def _sink(self, live: LiveSession) -> TurnSink:
        return live.worker.sink if live.worker is not None else self._editor

    def _end(self, live: LiveSession, setup: TurnSetup, task: asyncio.Task[TurnOutcome]) -> None:
        outcome = task.result() if task.done() and not task.cancelled() \
            and task.exception() is None else None
        if outcome is not None:
            live.ended[setup.turn.id] = outcome.result.status
            live.remember(outcome.added)
            live.touched += outcome.touched
        live.running = None
        applied_before = live.sticky.active
        stored = self.store.choices(live.id) if live.sticky.pending is not None else None
        if stored is not None and stored[1] != live.swap_queued_over:
            # another window set the sticky model after this window's swap was queued: the
            # last request wins (applying the queued one undid the other window's)
            live.sticky.pending = None
            live.sticky.active = applied_before = stored[1]
        live.sticky.end_turn()
        if live.sticky.active != applied_before:
            self.store.set_sticky(live.id, live.sticky.active)
        self._status(live)
        if outcome is not None:
            for hook in list(self.turn_ended):
                try:
                    hook(TurnEnded(live, outcome, setup.context))
                except Exception:  # a hook must not break the turn it observes
                    log.exception("turn-ended hook failed")

    def _status(self, live: LiveSession) -> None:
        if not live.is_worker:
            self.sessions.observer.status_changed(live.workspace)

    async def cancel(self, turn_id: str) -> tuple[bool, str]:
        """Cancel a running turn; returns (whether it was running, its final status).

        Raises :class:`TurnElsewhere` for a turn that another live daemon is running:
        only the daemon running a turn can stop it. A turn whose start could not be recorded
        (another daemon started one in the session at the same moment) is stopped too: it
        never started and nothing of it is kept; its chat request answers why.
        """
        for live in self.sessions.all_loaded():
            running = live.running
            if running is not None and running.turn_id == turn_id:
                running.task.cancel()
                try:
                    outcome = await asyncio.shield(running.task)
                except Exception:  # what recording its start raised: the chat request's error
                    return True, "cancelled"
                return True, outcome.result.status
            if turn_id in live.ended:
                return False, live.ended[turn_id]
        stored = self._stored_not_elsewhere(turn_id)
        if stored.status == "running":
            self.store.interrupt_orphans(self.clock.now())  # its daemon died: say so, not "running"
            stored = self.store.turn(turn_id) or stored
        return False, stored.status

    def check_not_elsewhere(self, turn_id: str) -> None:
        """Raise :class:`UnknownTurn` if no turn has this id, :class:`TurnElsewhere` if
        another live daemon runs it (so a stop of one of its delegations says where it can
        be stopped, as a stop of the turn does)."""
        if not any((live.running is not None and live.running.turn_id == turn_id)
                   or turn_id in live.ended for live in self.sessions.all_loaded()):
            self._stored_not_elsewhere(turn_id)

    def _stored_not_elsewhere(self, turn_id: str) -> TurnInfo:
        stored = self.store.turn(turn_id)
        if stored is None:
            raise UnknownTurn(turn_id)
        if stored.status == "running" and self.store.running_elsewhere(turn_id):
            raise TurnElsewhere(turn_id)
        return stored

    def any_running(self) -> bool:
        """Whether any session has a turn in flight."""
        return any(live.running is not None for live in self.sessions.all_loaded())

    def is_running(self, turn_id: str) -> bool:
        """Whether the turn ``turn_id`` is in flight in this daemon."""
        return any(live.running is not None and live.running.turn_id == turn_id
                   for live in self.sessions.all_loaded())

    def cancel_all(self) -> None:
        """Cancel every running turn as the daemon exits (each saves what it streamed and ends
        ``interrupted``, saying why). Once: the editor may say ``exit``, then close the pipe."""
        if self.runner.exiting:
            return
        self.runner.exiting = True
        loaded = list(self.sessions.all_loaded())
        planning = {live.id for live in loaded if live.running is not None and not live.is_worker}
        for live in loaded:
            # a planner's workers go with its turn; a worker the user started (/delegate) has
            # none, and its command would be answered only once the process had ended
            if live.running is not None and (live.worker is None
                                             or live.worker.parent_session_id not in planning):
                live.running.task.cancel()


def _route_request(live: LiveSession, context: TurnContext, profile: ActiveProfile,
                   turn_id: str = "", override: Override | None = None,
                   sticky: str | None = None) -> RouteRequest:
    """What the chain is given to route a turn of ``live`` (a worker's with its role's tier,
    complexity, floor and effort)."""
    worker = live.worker
    return RouteRequest(
        context=context, turn_id=turn_id, session_id=live.id or None, override=override,
        sticky_model=sticky, delegate_tier=worker.tier if worker else None,
        complexity=worker.complexity if worker else None,
        complexity_source=worker.complexity_source if worker else None,
        tier_floor=worker.tier_floor if worker else None,
        reasoning_effort=worker.reasoning_effort if worker else None, profile=profile)
