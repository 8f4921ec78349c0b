"""Delegations the user starts: ``/delegate [tier|profile] <task>`` and "delegate that" (spec 003).

The user hands the focused task (:mod:`.focus`) to a worker directly. The
worker is the same as a planner's: a worker session under the user's session,
one :class:`WorkerRun`, approval first when it may write or execute, the same
events and ``switchman/delegation`` notifications — with ``source: user`` and
no planner turn. The user's session gets no model turn: the message is answered
like a command, with the worker's answer (or its failure, or one clarifying
question when the task is ambiguous; then no worker runs). The command and the
answer join the session's conversation, so the next turn's model sees them.
"""

from __future__ import annotations

import json

import msgspec

from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.delegation.contract import (
    FORBIDDEN_FOR_WORKERS,
    ArgumentProblem,
    ContextSpec,
    DelegateCall,
    DelegateResult,
    InlineInclude,
    InsufficientContextRequest,
)
from switchman.engine.delegation.focus import (
    COMMAND,
    DEFAULT_TIER,
    Clarification,
    FocusedTask,
    focused_task,
    parse_command,
    unknown_target,
)
from switchman.engine.delegation.grant import worker_tools
from switchman.engine.delegation.handoff import Handoff
from switchman.engine.delegation.progress import EXITED_DETAIL
from switchman.engine.delegation.workers import Delegation, WorkerRun
from switchman.engine.errors import DelegationDisabled, UnknownTier
from switchman.engine.ids import new_id
from switchman.engine.messages import ZERO_USD, AttachmentBlock, Message, TextBlock
from switchman.engine.profiles.profile import ActiveProfile
from switchman.engine.sessions.lifecycle import TITLE_LENGTH
from switchman.engine.sessions.live import LiveSession
from switchman.engine.sessions.records import ChatDelta, ErrorInfo, TurnResult
from switchman.engine.tools.registry import ToolContext
from switchman.engine.wording import first_line

USER_DELEGATION_PREFIX = "user_"
"""User delegations have no ``delegate`` call; their id (in ``tool_use_id``) starts so."""


class UserDelegation:
    """Runs the delegations the user asks for in the chat."""

    def __init__(self, delegation: Delegation) -> None:
        self.delegation = delegation

    def targets(self, live: LiveSession) -> tuple[str, ...]:
        """The names ``/delegate``'s first word may be: the tiers, then the workspace's
        profiles (a tier wins over a profile of the same name)."""
        return (*TIER_NAMES, *self.delegation.config.profiles(str(live.folder)).names())

    def _target(self, live: LiveSession, name: str | None) -> tuple[str, ActiveProfile]:
        """The worker's tier and profile for ``name``: a tier (with the generic ``subagent``
        profile, as a planner's worker), or a profile (on its own tier, else balanced)."""
        folder = str(live.folder)
        if name is None or name in TIER_NAMES:
            return name or DEFAULT_TIER, self.delegation.worker_profile(folder, None)
        try:
            profile = self.delegation.worker_profile(folder, name)
        except ArgumentProblem:  # listed by targets(): only a profile file saved meanwhile
            profile = self.delegation.worker_profile(folder, None)
        return profile.profile.model_policy.tier or DEFAULT_TIER, profile

    async def run(self, live: LiveSession, message: str,
                  attachments: list[AttachmentBlock], *, typed: str | None = None) -> TurnResult:
        """Answer ``message`` (a ``/delegate`` command or phrase) in ``live``'s chat;
        ``typed``: the command as the user typed it, when that differs (kept as typed)."""
        config = self.delegation.config
        if not config.effective(str(live.folder)).delegation.enabled:  # the user's own too
            return self._refuse(live, DelegationDisabled(str(config.routing_path)))
        command = parse_command(message, self.targets(live))
        if command is None:  # the caller checked; kept for a clear failure if it did not
            return self._answer(live, "Usage: /delegate [tier] <task>", None)
        profiles = tuple(self.delegation.config.profiles(str(live.folder)).names())
        mistaken = unknown_target(command, TIER_NAMES, profiles,
                                  any(a.kind == "selection" for a in attachments))
        if mistaken is not None:
            return self._refuse(live, mistaken)
        focus = focused_task(command, attachments, live.history, live.running is not None)
        if isinstance(focus, Clarification):
            return self._answer(live, focus.question, None)
        tier, profile = self._target(live, command.target)
        self._keep_command(live, message, attachments, typed)
        result, detail = await self._start(live, tier, profile, focus)
        text = _result_text(result, detail, exiting=self.delegation.lifecycle.runner.exiting)
        self._remember(live, text, result)
        # the worker's cost is in today's total now, and the session list has the exchange
        self.delegation.sessions.observer.status_changed(live.workspace)
        return self._answer(live, text, result)

    def _keep_command(self, live: LiveSession, message: str,
                      attachments: list[AttachmentBlock], typed: str | None) -> None:
        """Store the user's command before its worker starts, as a turn stores its user
        message when it starts: a daemon killed while the worker runs keeps it (the reloaded
        delegation then shows as interrupted, see ``delegation/history.py``)."""
        store, now = self.delegation.sessions.store, self.delegation.clock.now()
        command = Message(id=new_id(), session_id=live.id, turn_id=None, role="user",
                          content=[TextBlock(message), *attachments], created_at=now,
                          typed=typed if typed not in (None, message) else None)
        with store.db:  # both or neither
            store.db.execute("BEGIN")
            store.add_message(command)
            # listed like any session with messages: newest first, titled (if it has no title)
            shown = typed or message
            store.touch(live.id, now, title=first_line(shown, TITLE_LENGTH))
        live.remember([command])

    def _remember(self, live: LiveSession, text: str, result: DelegateResult) -> None:
        """Keep the worker's answer in the session's conversation after the command, so the
        next model turn sees what the worker found (and the transcript shows it after a
        reload). No turn is recorded: no model was routed."""
        store, now = self.delegation.sessions.store, self.delegation.clock.now()
        usage = result.usage_summary
        answer = Message(id=new_id(), session_id=live.id, turn_id=None, role="assistant",
                         content=[TextBlock(text)], created_at=now,
                         model=usage.model or None if usage is not None else None)
        with store.db:
            store.db.execute("BEGIN")
            store.add_message(answer)
            store.touch(live.id, now)
        live.remember([answer])

    async def _start(self, live: LiveSession, tier: str, profile: ActiveProfile,
                     focus: FocusedTask) -> tuple[DelegateResult, str | None]:
        """The worker's result, and the delegation's detail (what more there is to say)."""
        delegation_id = USER_DELEGATION_PREFIX + new_id()
        # The worker gets what a turn of this session would offer (less the planner-only tools).
        context = ToolContext(workspace=live.workspace, folder=live.folder, session_id=live.id,
                              turn_id=delegation_id, model=live.last_model or "")
        tools = [n for n in self.delegation.lifecycle.tools_for(live, delegation_id, "").names()
                 if n not in FORBIDDEN_FOR_WORKERS]
        includes = [InlineInclude(text=a.rendered(), label=_label(a)) for a in focus.attachments]
        call = DelegateCall(tier=tier, task=focus.task, profile=profile.name, context=ContextSpec(
            mode="explicit" if includes else "minimal", include=list(includes)))
        run = WorkerRun(self.delegation, live, context, delegation_id, call, _handoff(focus),
                        worker_tools(None, tools, profile), profile, source="user",
                        focus=focus.focus)
        return await run.result(), run.progress.detail

    def _refuse(self, live: LiveSession, error: UnknownTier | DelegationDisabled) -> TurnResult:
        """A failed command: nothing was delegated (and nothing is kept in the session)."""
        text = str(error)
        self.delegation.sessions.observer.delta(ChatDelta(live.id, None, "command_output",
                                                          text=text))
        return TurnResult(kind="command", session_id=live.id, turn_id=None, status="failed",
                          model=None, text=text, error=ErrorInfo(error.code, text),
                          summary=COMMAND)

    def _answer(self, live: LiveSession, text: str, result: DelegateResult | None) -> TurnResult:
        self.delegation.sessions.observer.delta(ChatDelta(live.id, None, "command_output",
                                                          text=text))
        failed = result is not None and not result.success
        usage = result.usage_summary if result is not None else None
        return TurnResult(
            kind="command", session_id=live.id, turn_id=None,
            status="failed" if failed else "completed",
            model=usage.model or None if usage is not None else None, text=text,
            cost_usd=usage.cost_usd if usage is not None else ZERO_USD,
            error=ErrorInfo(_code(result), text) if failed and result is not None else None,
            summary="/delegate")


def _handoff(focus: FocusedTask) -> Handoff:
    """The worker's first message: the task, then what the user attached, in full."""
    if not focus.attachments:
        return Handoff(focus.task, "No context was provided beyond the task.", 0)
    listed = "\n".join(f"- the user's {_label(a)} (below)" for a in focus.attachments)
    message = "\n\n".join([focus.task, *(a.rendered() for a in focus.attachments)])
    return Handoff(message, "Context provided:\n" + listed, len(focus.attachments))


def _label(block: AttachmentBlock) -> str:
    lines = f" lines {block.start_line}-{block.end_line}" if block.start_line else ""
    return f"{block.kind} {block.path}{lines}"


def _result_text(result: DelegateResult, detail: str | None = None, *,
                 exiting: bool = False) -> str:
    """What the user reads: the worker's answer, or why there is none (``exiting``: the daemon
    stopped it as it exited, which is not the user's Stop; ``detail``: the delegation's, said
    when no worker could be routed, since its error is only the failure mode)."""
    output = result.output
    if result.success:
        return output if isinstance(output, str) else json.dumps(msgspec.to_builtins(output))
    if result.error == "approval_denied":
        return "No worker was started: the delegation was not approved."
    if result.error == "cancelled_by_user" and not result.worker_session_id:
        return "No worker was started: the delegation was cancelled while it waited for approval."
    if isinstance(output, InsufficientContextRequest):
        missing = "\n".join(f"- {m.type} {m.ref}: {m.hint}" for m in output.missing)
        return f"The worker needs more to go on: {output.summary}\n{missing}"
    shown = output if isinstance(output, str) else ""
    if result.error == "no_model_available_for_tier" and detail:
        shown = "\n\n".join(p for p in (detail, shown) if p)
    why = f": {EXITED_DETAIL}." if exiting and result.error == "cancelled_by_user" \
        else f" ({result.error})."
    return f"The worker did not finish{why}" + (f"\n\n{shown}" if shown else "")


def _code(result: DelegateResult) -> str:
    """The failure mode as an error code (``worker_error: …`` → ``worker_error``)."""
    return (result.error or "worker_error").split(":", 1)[0]
