"""Apply: the user puts a code block of an answer into a file, through the daemon.

An editor's "Apply" button does not change the buffer itself. It sends the
code, the document's current text and the span to replace (the selection, or
the whole file), and the daemon treats it like a tool call: the same
``switchman/approve`` question with the diff, the same trust (tool
``apply_code``, so "always" means "apply code blocks without showing me the
diff first" and is independent of the model's ``edit_file``), and the same
``workspace/applyEdit`` for the change. The file must belong to the workspace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from switchman.engine.config.problems import Range
from switchman.engine.config.text import offset_at
from switchman.engine.errors import InvalidApply
from switchman.engine.ids import new_id
from switchman.engine.messages import ApprovalRecord
from switchman.engine.tools.approval import (
    ApprovalAnswer,
    ApprovalPolicy,
    ApprovalRequest,
    Decision,
    ToolClass,
    approval_record,
)
from switchman.engine.tools.arguments import ToolRefused
from switchman.engine.tools.changes import EditApplier, FileChange, path_of, replacement
from switchman.engine.tools.confinement import WorkspaceRoot

APPLY_TOOL = "apply_code"
MAX_APPLY_CHARS = 2 * 1024 * 1024


@dataclass(frozen=True)
class ApplyCodeRequest:
    """One Apply click: put ``code`` in place of ``span`` of the document ``uri``."""

    workspace: str
    uri: str
    text: str
    """The document's text as the editor has it (unsaved changes included)."""
    code: str
    span: Range | None = None
    """What to replace (UTF-16 positions in ``text``); None replaces the whole text."""
    session_id: str = ""
    turn_id: str = ""
    """The turn whose answer held the code block, when the editor knows it."""


class ApplyCodeResult(msgspec.Struct, frozen=True):
    """What became of an Apply: applied, or why not (denied, or refused by the editor)."""

    applied: bool
    decision: Decision
    path: str
    reason: str | None = None
    approval: ApprovalRecord | None = None
    """The question the user was asked and the answer, as the turn keeps it (null when
    nothing was asked): an editor shows it in its chat at once."""
    unchanged: bool = False
    """The code is already what it would replace: nothing was asked nor changed (``applied``
    false, ``decision`` "deny", ``reason`` saying so)."""


def proposed_change(request: ApplyCodeRequest, folder: Path) -> FileChange:
    """The edit an Apply makes; :class:`InvalidApply` when the file or span cannot be used."""
    if not request.uri.startswith("file://") or "\0" in request.uri:
        raise InvalidApply(f"'{request.uri[:200]}' is not a file URI; Apply works on files "
                           "of the workspace.")
    if len(request.text) > MAX_APPLY_CHARS or len(request.code) > MAX_APPLY_CHARS:
        raise InvalidApply("The file or the code is too large to apply here.")
    workspace = WorkspaceRoot(folder)
    try:
        path = workspace.resolve(str(path_of(request.uri)))
    except ToolRefused as refusal:
        raise InvalidApply(str(refusal)) from None
    original = request.text
    if request.span is None:
        start, end = 0, len(original)
    else:
        start = offset_at(original, request.span.start)
        end = offset_at(original, request.span.end)
        if end < start:
            raise InvalidApply("The range to replace ends before it starts.")
    proposed = original[:start] + request.code + original[end:]
    return FileChange("edit", workspace.relative(path), request.uri, original, proposed,
                      [replacement(original, start, end, request.code)])


async def apply_code(policy: ApprovalPolicy, applier: EditApplier, request: ApplyCodeRequest,
                     folder: Path, keep: Callable[[ApprovalRecord], None] | None = None
                     ) -> ApplyCodeResult:
    """Ask (unless ``apply_code`` is trusted here), then apply through the editor. ``keep``
    is given the question and its answer when the user was asked one."""
    change = proposed_change(request, folder)
    if change.proposed == change.original:  # the user would be asked to approve an empty diff
        return ApplyCodeResult(False, "deny", change.path, f"{change.path} already has this "
                               "code: there is nothing to change.", unchanged=True)
    what = "the selection" if request.span is not None else "the whole file"
    question = ApprovalRequest(
        id=new_id(), workspace=request.workspace, session_id=request.session_id,
        turn_id=request.turn_id, tool=APPLY_TOOL, tool_class=ToolClass.WRITE,
        title=f"Apply the code block to {change.path} (replacing {what})", path=change.path,
        uri=change.uri, original=change.original, proposed=change.proposed,
        diff=change.diff())
    asked: list[bool] = []
    answer = await policy.decide(question, lambda: asked.append(True))
    result = await _apply(applier, change, answer)
    if not asked:
        return result
    not_applied = answer.allowed and not result.applied
    record = approval_record(question, ApprovalAnswer(
        "deny", result.reason, by_editor=True) if not_applied else answer)
    if keep is not None:
        keep(record)
    return msgspec.structs.replace(result, approval=record)


async def _apply(applier: EditApplier, change: FileChange,
                 answer: ApprovalAnswer) -> ApplyCodeResult:
    if not answer.allowed:
        return ApplyCodeResult(False, answer.decision, change.path, answer.reason)
    applied = await applier.apply(change)
    if not applied.applied:
        return ApplyCodeResult(False, answer.decision, change.path,
                               applied.reason or "the editor did not apply it")
    return ApplyCodeResult(True, answer.decision, change.path, applied.reason or None)
