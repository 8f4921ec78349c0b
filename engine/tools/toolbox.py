"""Every tool a turn may call, with approval before writes and commands.

:class:`Toolbox` is what the turn loop talks to: the definitions sent to the
model and one ``run`` per call. It classes each tool (read / write /
execute), asks the :class:`ApprovalPolicy` before anything that is not a read,
applies approved file changes through the :class:`EditApplier`, and turns
every failure into an error result the model can read and correct.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import msgspec

from switchman.engine.errors import sentence
from switchman.engine.ids import new_id
from switchman.engine.keymask import KeyMask
from switchman.engine.messages import ApprovalRecord
from switchman.engine.providers.base import ToolSpec
from switchman.engine.skills import SkillIndex
from switchman.engine.tools import edits, memory, shell, skill_tools, workspace
from switchman.engine.tools.approval import (
    ApprovalAnswer,
    ApprovalPolicy,
    ApprovalRequest,
    ToolClass,
    approval_record,
    stopped_record,
)
from switchman.engine.tools.arguments import (
    QuestionStopped,
    ToolOutcome,
    ToolRefused,
    summary_of,
)
from switchman.engine.tools.buffers import EditorTexts, no_editor_texts
from switchman.engine.tools.changes import EditApplier, FileChange
from switchman.engine.tools.edits import FileEdits
from switchman.engine.tools.registry import ToolContext

log = logging.getLogger(__name__)

TOOL_CLASSES: dict[str, ToolClass] = {
    "read_file": ToolClass.READ, "list_files": ToolClass.READ, "grep": ToolClass.READ,
    "skill_load": ToolClass.READ,
    "edit_file": ToolClass.WRITE, "create_file": ToolClass.WRITE, "delete_file": ToolClass.WRITE,
    "memory_add": ToolClass.WRITE, "memory_replace": ToolClass.WRITE,
    "run_command": ToolClass.EXECUTE,
}
WORKER_EXCLUDED = frozenset({"memory_add", "memory_replace"})
"""Tools never offered to worker sessions (they would change durable memory)."""
ALL_DEFINITIONS = [*workspace.DEFINITIONS, skill_tools.DEFINITION, *edits.DEFINITIONS,
                   shell.DEFINITION, *memory.DEFINITIONS]
TOOLBOX_NAMES = tuple(d.name for d in ALL_DEFINITIONS)
"""Every tool a turn may be offered, ``delegate`` aside."""
_VERBS = {"create": "Create", "edit": "Edit", "delete": "Delete"}


@dataclass(frozen=True)
class ToolServices:
    """Daemon-wide parts the tools use."""

    policy: ApprovalPolicy
    applier: EditApplier
    environ: Mapping[str, str]
    """The daemon's environment; commands get it without API-key variables."""
    key_variables: Callable[[], Iterable[str]] = tuple
    """The variables configured providers read keys from (removed from commands' env)."""
    editor_texts: EditorTexts = no_editor_texts
    """The editor's unsaved texts: the base of edits and what reads return (see edits.py)."""
    provider_keys: Callable[[], Iterable[str]] = tuple
    """The configured providers' API keys now, masked in every result (a command that prints
    a file holding one, a read of it): they reach no model, chat or transcript."""


class Toolbox:
    """The tools of one turn."""

    def __init__(self, context: ToolContext, services: ToolServices,
                 skills: SkillIndex | None = None) -> None:
        self.context = context
        self.services = services
        self.skills = skills or SkillIndex()

    # Made at the first call: a turn is offered the tools before any is called, and
    # finding the folder's real path is system calls on the way to the first token.
    @cached_property
    def reads(self) -> workspace.WorkspaceTools:
        """The read tools, confined to the workspace's real folder."""
        return workspace.WorkspaceTools(self.context.folder, self.services.editor_texts)

    @cached_property
    def edits(self) -> FileEdits:
        """The file changes, confined like :attr:`reads`."""
        return FileEdits(self.reads.workspace, self.services.editor_texts)

    def definitions(self) -> list[ToolSpec]:
        """The tool definitions sent to the model."""
        worker = self.context.is_worker
        return [s for s in ALL_DEFINITIONS if not (worker and s.name in WORKER_EXCLUDED)]

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run one call; every failure or refusal is an error result, never an exception. A
        provider's key in the result, or a piece of one, is masked (:class:`KeyMask`)."""
        outcome = await self._run(name, arguments)
        mask = KeyMask(*self.services.provider_keys())
        content, summary = mask.mask(outcome.content), mask.mask(outcome.summary)
        if content is outcome.content and summary is outcome.summary:
            return outcome
        return msgspec.structs.replace(outcome, content=content, summary=summary)

    async def _run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in TOOL_CLASSES or not any(s.name == name for s in self.definitions()):
            return ToolOutcome(f"Unknown tool '{name}'.", is_error=True, summary="unknown tool")
        try:
            if name in workspace.TOOL_NAMES:
                return await self.reads.run(name, arguments)
            if name == "skill_load":
                return await asyncio.to_thread(skill_tools.load_skill, self.skills, arguments)
            if name == "run_command":
                return await self._run_command(arguments)
            return await self._change(name, arguments)
        except ToolRefused as refusal:
            return ToolOutcome(str(refusal), is_error=True, summary=summary_of(str(refusal)))
        except OSError as exc:
            return ToolOutcome(f"{exc.strerror or exc}", is_error=True, summary="error")
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug in a tool must not end the turn; the model can go on
            log.exception("tool %s failed", name)
            return ToolOutcome(f"The tool '{name}' failed unexpectedly.", is_error=True,
                               summary="failed")

    def _propose(self, name: str, arguments: dict[str, Any]) -> FileChange:
        if name.startswith("memory_"):
            return memory.propose_memory_change(self.edits, name, arguments)
        return self.edits.propose(name, arguments)

    async def _ask(self, tool: str, title: str, **detail: Any
                   ) -> tuple[ApprovalAnswer, ApprovalRecord | None]:
        """The policy's answer for this call, and the record of the question when the user
        was asked one (kept with the call's result for a rebuilt chat)."""
        request = self._request(tool, title, **detail)
        asked: list[bool] = []
        try:
            answer = await self.services.policy.decide(request, lambda: asked.append(True))
        except asyncio.CancelledError as stop:
            if not asked:
                raise
            raise QuestionStopped(ToolOutcome("Cancelled.", is_error=True, summary="stopped",
                                              approval=stopped_record(request))) from stop
        return answer, approval_record(request, answer) if asked else None

    async def _change(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        change = await asyncio.to_thread(self._propose, name, arguments)
        answer, record = await self._ask(
            name, f"{_VERBS[change.kind]} {change.path}", path=change.path, uri=change.uri,
            original=change.original, proposed=change.proposed, diff=change.diff())
        if answer.allowed and (
                moved := await asyncio.to_thread(self._changed_since, change, name, arguments)):
            if record is not None:  # the card says it was not applied, not "Allowed once."
                record = msgspec.structs.replace(record, outcome="not_applied", reason=(
                    f"{change.path} changed since this change was proposed (on disk or by "
                    "another tool): applied to that text it would have landed in the wrong "
                    "place, so nothing was changed."))
            return _answered(ToolOutcome(moved, is_error=True, touched=[change.path],
                                         summary=f"{change.path} changed meanwhile"), record)
        return _answered(await self._apply(change, answer), record)

    async def _apply(self, change: FileChange, answer: ApprovalAnswer) -> ToolOutcome:
        if not answer.allowed:
            return _denied(answer, f"{change.kind} of {change.path}")
        applied = await self.services.applier.apply(change)
        if not applied.applied:
            reason = f": {sentence(applied.reason)}" if applied.reason else "."
            # the tool line says why too (the user may have to act: save the file, make it writable)
            why = f": {applied.reason}" if applied.reason else ""
            return ToolOutcome(f"The editor refused the change to {change.path}{reason} "
                               "Nothing was changed.", is_error=True,
                               summary=summary_of(f"refused by the editor{why}"),
                               touched=[change.path])
        if applied.reason:  # in the editor's buffer, but the editor could not save it
            return ToolOutcome(f"{_applied_text(change)} {sentence(applied.reason)} Commands and "
                               "reads see the old file until it is saved.",
                               summary=f"{_DONE[change.kind]} {change.path} (not saved)",
                               touched=[change.path])
        return ToolOutcome(_applied_text(change), summary=f"{_DONE[change.kind]} {change.path}",
                           touched=[change.path])

    def _changed_since(self, change: FileChange, name: str, arguments: dict[str, Any]
                       ) -> str | None:
        """Why ``change`` must not be applied now (None if it may): its file changed while
        the user was asked — created, edited or deleted by them, another tool or a worker
        running beside this one. A change is applied at the places it was computed for (a
        new file's text is written over whatever is there), so applied to other text it
        would corrupt the file or lose what was written meanwhile."""
        try:
            now = self._propose(name, arguments)
        except ToolRefused:
            now = None
        if now is not None and (now.kind, now.uri, now.original) == (
                change.kind, change.uri, change.original):
            return None
        return (f"{change.path} changed while this change waited for approval, so nothing was "
                "changed (applied to the new text it would land in the wrong place, or "
                "write over it). Read the file again and make the change anew.")

    async def _run_command(self, arguments: dict[str, Any]) -> ToolOutcome:
        command, timeout = shell.command_arguments(arguments)
        folder = str(self.reads.root)
        answer, record = await self._ask("run_command", shell.command_title(command),
                                          command=command, cwd=folder)
        if not answer.allowed:
            return _answered(_denied(answer, "command"), record)
        environment = shell.child_environment(self.services.environ,
                                              self.services.key_variables())
        runner = shell.CommandRunner(self.reads.root, environment)
        return _answered(await runner.run(command, timeout), record)

    def _request(self, tool: str, title: str, **detail: Any) -> ApprovalRequest:
        c = self.context
        return ApprovalRequest(id=new_id(), workspace=c.workspace, session_id=c.session_id,
                               turn_id=c.turn_id, tool=tool, tool_class=TOOL_CLASSES[tool],
                               title=title, is_worker=c.is_worker, **detail)


def _answered(outcome: ToolOutcome, record: ApprovalRecord | None) -> ToolOutcome:
    """``outcome`` with the question asked before it, when one was."""
    return outcome if record is None else msgspec.structs.replace(outcome, approval=record)


def _denied(answer: ApprovalAnswer, what: str) -> ToolOutcome:
    return ToolOutcome(answer.refusal(f"this {what}", "it did not happen"),
                       is_error=True, summary="not applied" if answer.by_editor else "denied")


_DONE = {"create": "created", "edit": "edited", "delete": "deleted"}
"""A change's kind as the tool line says it happened ("edited src/app.py", not "editd")."""


def _applied_text(change: FileChange) -> str:
    where = "in the editor (the user can undo it)"
    if change.kind == "delete":  # no undo to promise: Neovim removes the file and its buffer
        return f"Deleted {change.path} through the editor."
    if change.kind == "create":
        return f"Created {change.path} {where}."
    return f"Edited {change.path} {where}."
