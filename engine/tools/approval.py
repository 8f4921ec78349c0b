"""Asking the user before a tool changes the workspace or runs a command.

Tools are classed *read*, *write* or *execute*. Reads never ask. Writes and
executes ask the editor (an :class:`Approver`), showing what will happen: the
diff of an edit, the command line and folder of a command. The answers:

* ``allow_once`` — run this call;
* ``allow_always`` — run it, and never ask again for this tool in this
  workspace (kept in the :class:`TrustStore`, in Switchman's data folder —
  never in the repository, so a cloned workspace cannot grant itself trust);
* ``deny`` — do not run it; the optional reason goes back to the model.

No answer within the timeout, or no editor to ask, is a denial. A worker
session's "always" is used for that call only and not remembered (spec 001
§13): the user approved a sub-task, not a workspace-wide policy.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Literal, Protocol

import msgspec

from switchman.engine.errors import TrustNotSaved
from switchman.engine.messages import ApprovalOutcome, ApprovalRecord

log = logging.getLogger(__name__)
TRUST_FILE = "trust.json"
DEFAULT_APPROVAL_TIMEOUT_SECONDS = 300.0


class ToolClass(StrEnum):
    """What a tool may do, which decides whether it asks first."""

    READ = "read"
    WRITE = "write"
    EXECUTE = "execute"


Decision = Literal["allow_once", "allow_always", "deny"]


class ApprovalRequest(msgspec.Struct, frozen=True, kw_only=True):
    """What the editor shows the user before a write or execute call."""

    id: str
    workspace: str
    session_id: str
    turn_id: str
    tool: str
    tool_class: ToolClass
    title: str
    """One line: what will happen ("Edit src/app.py", "Run `make test`")."""
    path: str | None = None
    uri: str | None = None
    original: str | None = None
    proposed: str | None = None
    diff: str | None = None
    command: str | None = None
    cwd: str | None = None
    is_worker: bool = False
    tier: str | None = None
    """For ``delegate``: the tier the worker runs on (after the tier floor)."""
    requested_tier: str | None = None
    """For ``delegate``: the tier the planner asked for, when the tier floor lowered it to
    ``tier``; None when it did not."""
    model: str | None = None
    """For ``delegate``: the model the worker will run on, routed before it is asked (no
    provider called); None when no model could be named."""
    routed_by: str | None = None
    """For ``delegate``: what chose ``model`` when the tier did not (``rule: docs``, a
    profile's own model); None when the tier did."""
    task: str | None = None
    """For ``delegate``: the worker's instruction."""
    worker_tools: list[str] | None = None
    """For ``delegate``: the write and execute tools the worker will have."""
    asked_again: str | None = None
    """For ``delegate``: why the user is asked again after answering (``the model changed from
    X to Y while the question waited``); None the first time."""
    tool_use_id: str | None = None
    """For ``delegate``: the delegation's id (the planner's call's, a ``/delegate``'s own), as
    its ``switchman/delegation`` notifications have it, so the editor can show the question
    above its worker's card; None for other tools."""


MAX_REASON_CHARS = 1000
"""The longest denial reason passed on to the model."""


class ApprovalAnswer(msgspec.Struct, frozen=True):
    """The user's answer, or the daemon's denial when the user could not be asked."""

    decision: Decision
    reason: str | None = None
    by_user: bool = True
    """False when nobody answered: no editor, no answer in time, an unreadable answer."""
    by_editor: bool = False
    """The user allowed it, but the editor turned it down (``refused_by: "editor"``: the
    file changed in the editor while the user was asked); ``reason`` says why."""

    @classmethod
    def unanswered(cls, reason: str) -> ApprovalAnswer:
        """A denial made because the user could not be asked (``reason`` says why)."""
        return cls("deny", reason, by_user=False)

    @property
    def allowed(self) -> bool:
        """Whether the call may run."""
        return self.decision != "deny"

    @property
    def short_reason(self) -> str | None:
        """The reason, capped: it comes from the editor, which may send any amount of text,
        and must not flood the model's context (and the bill) or the events with one answer."""
        reason = (self.reason or "").strip()
        if len(reason) > MAX_REASON_CHARS:
            reason = reason[:MAX_REASON_CHARS] + " … (cut)"
        return reason or None

    def reason_sentence(self) -> str:
        """" Their reason: …" for the model, or nothing."""
        reason = self.short_reason
        if not reason:
            return ""
        return f" Their reason: {reason}" + ("" if reason[-1] in ".!?…)" else ".")

    def refusal(self, what: str, outcome: str) -> str:
        """For the model: who refused ``what`` ("this edit"), its ``outcome`` ("it did not
        happen") and why. A denial the daemon made must not read as the user's decision:
        the model would tell the user they refused something they never saw."""
        if self.by_editor:  # not the user's refusal: they allowed it
            why = self.short_reason or "it no longer fitted the file"
            return f"The user allowed {what}, but the editor did not apply it, so {outcome}: {why}"
        if self.by_user:
            return f"The user denied {what}; {outcome}.{self.reason_sentence()}"
        return (f"The user could not be asked to approve {what} ({self.short_reason}),"
                f" so {outcome}.")


MAX_RECORDED_DIFF_CHARS = 16_000
"""The most of an edit's diff a record keeps: the diff the question showed (itself at most
``MAX_DIFF_LINES`` lines) when it is no longer than this, else its first whole lines up to it
and a line saying how many were left out. A chat rebuilt from the session shows it as the
question did, without one huge edit (a minified file's line) weighing on every load."""


def recorded_diff(diff: str | None) -> str | None:
    """``diff`` as a record keeps it (see :data:`MAX_RECORDED_DIFF_CHARS`); None for none."""
    if not diff:
        return None
    if len(diff) <= MAX_RECORDED_DIFF_CHARS:
        return diff
    cut = diff.rfind("\n", 0, MAX_RECORDED_DIFF_CHARS) + 1
    left = diff[cut:].splitlines()
    return f"{diff[:cut]}[… {len(left)} more lines not kept]\n"


def approval_record(request: ApprovalRequest, answer: ApprovalAnswer) -> ApprovalRecord:
    """What the transcript keeps of a question the user was asked and its answer."""
    outcome: ApprovalOutcome
    if answer.by_editor:
        outcome = "not_applied"
    elif not answer.allowed:
        outcome = "denied" if answer.by_user else "unanswered"
    else:
        outcome = "allowed_always" if answer.decision == "allow_always" else "allowed_once"
    return _record(request, outcome, answer.short_reason)


def stopped_record(request: ApprovalRequest, reason: str | None = None) -> ApprovalRecord:
    """What the transcript keeps of a question a stop cut short (nobody answered): its turn's,
    or (``reason``) a delegation's own from its card."""
    return _record(request, "stopped", reason)


def _record(request: ApprovalRequest, outcome: ApprovalOutcome,
            reason: str | None) -> ApprovalRecord:
    """What a rebuilt card shows of ``request``, as the question showed it (the diff capped;
    not the file's text)."""
    return ApprovalRecord(id=request.id, title=request.title, outcome=outcome, reason=reason,
                          command=request.command, cwd=request.cwd, path=request.path,
                          diff=recorded_diff(request.diff), tier=request.tier,
                          requested_tier=request.requested_tier, model=request.model,
                          routed_by=request.routed_by, worker_tools=request.worker_tools)


class EditorAnswer(msgspec.Struct, frozen=True):
    """The editor's reply to ``switchman/approve``: only a decision and a reason."""

    decision: Decision
    reason: str | None = None
    refused_by: str | None = None
    """``editor`` on a ``deny`` of a file change: the editor turned down what the user allowed
    (the change no longer fits the buffer), so the model is not told the user refused. On a
    command or a delegation, and with other values, it is ignored, as unknown fields are."""


class Approver(Protocol):
    """Asks the user (through the editor); answers ``deny`` when nobody can be asked."""

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The user's answer to ``request``."""
        ...


class DenyAll:
    """The approver when no editor is attached: every request is denied."""

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """Deny, saying why."""
        return ApprovalAnswer.unanswered("no editor is attached to approve it")


class TrustEntry(msgspec.Struct, frozen=True):
    """The tools always allowed in one workspace."""

    workspace: str
    tools: list[str]


class TrustList(msgspec.Struct, frozen=True, omit_defaults=True):
    """What ``switchman/trust`` answers."""

    trusted: list[TrustEntry]
    problem: str | None = None
    """Why ``trust.json`` could not be read (see :attr:`TrustStore.problem`), when it could not."""


class TrustRevoked(msgspec.Struct, frozen=True):
    """What ``switchman/revokeTrust`` answers: the tools no longer always allowed."""

    workspace: str
    revoked: list[str]


class TrustStore:
    """Tools the user always allows, per workspace, in ``<data folder>/trust.json``."""

    def __init__(self, data_folder: Path) -> None:
        self.path = data_folder / TRUST_FILE
        self._lock = threading.Lock()
        self._damage: str | None = None
        """Why the file could not be read the last time (None when it could, or is absent)."""
        self._reset = False
        """Whether an answer has since replaced that damaged file with a new one."""

    @property
    def problem(self) -> str | None:
        """For the user: trust.json could not be read, so no tool is always allowed (or, once
        an answer replaced it, the tools it allowed ask again); None when it is fine."""
        if self._damage is None:
            return None
        if self._reset:
            return (f"{self.path} could not be read ({self._damage}) and was started anew: "
                    "the tools it always allowed ask first again.")
        return (f"{self.path} cannot be read ({self._damage}), so no tool is always allowed "
                "and each asks first; the next \"always\" answer starts it anew.")

    def trusted(self, workspace: str) -> list[str]:
        """The tools always allowed in ``workspace``, sorted."""
        return sorted(self._read().get(workspace, []))

    def all(self) -> dict[str, list[str]]:
        """Every workspace's always-allowed tools."""
        return {w: sorted(t) for w, t in sorted(self._read().items()) if t}

    def is_trusted(self, workspace: str, tool: str) -> bool:
        """Whether ``tool`` runs without asking in ``workspace``."""
        return tool in self._read().get(workspace, [])

    def grant(self, workspace: str, tool: str) -> None:
        """Always allow ``tool`` in ``workspace``."""
        with self._lock:
            data = self._read()
            data[workspace] = sorted({*data.get(workspace, []), tool})
            self._write(data)

    def revoke(self, workspace: str, tool: str | None = None) -> list[str]:
        """Stop trusting ``tool`` (every tool when None); returns the tools revoked."""
        with self._lock:
            data = self._read()
            current = data.get(workspace, [])
            revoked = [t for t in current if tool is None or t == tool]
            remaining = [t for t in current if t not in revoked]
            if remaining:
                data[workspace] = remaining
            else:
                data.pop(workspace, None)
            self._write(data)
        return revoked

    def _read(self) -> dict[str, list[str]]:
        try:
            raw = json.loads(self.path.read_text("utf-8"))
        except FileNotFoundError:
            raw = {}
        except OSError as exc:  # unreadable: trust nothing rather than fail
            return self._unreadable(exc.strerror or type(exc).__name__)
        except json.JSONDecodeError as exc:  # its position only: the text may hold anything
            return self._unreadable(f"not valid JSON at line {exc.lineno}, column {exc.colno}")
        except ValueError:
            return self._unreadable("not UTF-8 text")
        if not isinstance(raw, dict):
            return self._unreadable("not a JSON object")
        if not self._reset:  # mended or removed by hand
            self._damage = None
        return {str(w): [str(t) for t in tools if isinstance(t, str)]
                for w, tools in raw.items() if isinstance(tools, list)}

    def _unreadable(self, reason: str) -> dict[str, list[str]]:
        """Trust nothing; log the damage once (the file is read on every tool call)."""
        if reason != self._damage or self._reset:
            log.warning("%s cannot be read (%s): no tool is always allowed until an "
                        "\"always\" answer replaces it", self.path, reason)
        self._damage, self._reset = reason, False
        return {}

    def _write(self, data: dict[str, list[str]]) -> None:
        temp = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Written to a temporary file and renamed, so a crash never leaves half a file.
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".trust-", suffix=".json")
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=2, sort_keys=True)
            os.replace(temp, self.path)
            self._reset = self._damage is not None
        except OSError as exc:
            if temp is not None:
                Path(temp).unlink(missing_ok=True)
            raise TrustNotSaved(str(self.path), exc.strerror or str(exc)) from exc


class ApprovalPolicy:
    """Decides whether one tool call may run: trusted, or asked and allowed."""

    def __init__(self, trust: TrustStore, approver: Approver) -> None:
        self.trust = trust
        self.approver = approver

    async def decide(self, request: ApprovalRequest,
                     asking: Callable[[], None] | None = None) -> ApprovalAnswer:
        """The answer for ``request`` (reads are always allowed); ``asking`` is called when
        the user is about to be asked (not for a read or a trusted tool)."""
        if request.tool_class is ToolClass.READ:
            return ApprovalAnswer("allow_once")
        if self.trust.is_trusted(request.workspace, request.tool):
            return ApprovalAnswer("allow_always")
        if asking is not None:
            asking()
        try:
            answer = await self.approver.ask(request)
        except Exception:  # an editor that answers nonsense must not run anything
            log.exception("approval request %s failed", request.id)
            return ApprovalAnswer.unanswered("the editor could not be asked")
        if answer.decision == "allow_always" and not request.is_worker:
            try:
                self.trust.grant(request.workspace, request.tool)
            except TrustNotSaved as problem:  # the user allowed this call: it still runs
                log.warning("%s", problem)
        return answer
