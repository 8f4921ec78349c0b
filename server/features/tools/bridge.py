"""The tools' two questions to the editor: "may I?" and "apply this change".

:class:`EditorApprover` sends the ``switchman/approve`` request (documented
in docs/protocol.md) and waits for the user's answer, at most the approval
timeout; no answer, an editor that cannot show the request, or an answer it
cannot read is a denial. :class:`EditorApplier` turns an engine
:class:`FileChange` into LSP ``workspace/applyEdit``, so the editor changes
its buffers (unsaved, undoable) and its own watchers see the change.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from lsprotocol import converters, types

from switchman.engine.config.text import split_lines
from switchman.engine.tools.approval import (
    DEFAULT_APPROVAL_TIMEOUT_SECONDS,
    ApprovalAnswer,
    ApprovalRequest,
    EditorAnswer,
)
from switchman.engine.tools.changes import Applied, FileChange, path_of
from switchman.server import methods
from switchman.server.positions import Positions
from switchman.server.shared_text import shared_document
from switchman.server.wire import to_wire

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

log = logging.getLogger(__name__)
_CONVERTER = converters.get_converter()
APPROVAL_TIMEOUT_ENV = "SWITCHMAN_APPROVAL_TIMEOUT_SECONDS"
APPROVAL_TIMEOUT_OPTION = "approval_timeout_seconds"


def approval_timeout(environ: dict[str, str] | os._Environ[str], options: dict[str, Any]) -> float:
    """Seconds to wait for an answer: the editor's option, else the environment, else 300."""
    for raw in (options.get(APPROVAL_TIMEOUT_OPTION), environ.get(APPROVAL_TIMEOUT_ENV)):
        try:
            value = float(raw) if raw is not None else None
        except (TypeError, ValueError):
            value = None
        if value is not None and 0 < value <= 86400:
            return value
    return DEFAULT_APPROVAL_TIMEOUT_SECONDS


def _storable(text: str) -> str:
    """The editor's ``text`` with any lone UTF-16 surrogate (legal in JSON, but no database
    or provider request can carry one) replaced by U+FFFD: it reaches the model and the
    transcript as a tool result, and must not fail the turn."""
    if text.isascii():
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


class EditorApprover:
    """Asks the user through the editor (``switchman/approve``)."""

    def __init__(self, server: SwitchmanServer) -> None:
        self.server = server

    async def ask(self, request: ApprovalRequest) -> ApprovalAnswer:
        """The user's answer; a denial when the editor does not answer in time."""
        timeout = approval_timeout(os.environ, self.server.initialization_options)
        if request.uri is not None:  # the diff is shown on the document the user has open
            request = msgspec.structs.replace(request, uri=editor_uri(self.server, request.uri))
        pending = self.server.protocol.send_request_async(
            methods.APPROVE, to_wire(request), msg_id=f"approve-{request.id}")
        try:
            reply = await asyncio.wait_for(pending, timeout)
        except TimeoutError:
            self._withdraw(request)
            unit = "second" if timeout == 1 else "seconds"
            return ApprovalAnswer.unanswered(f"no answer within {timeout:g} {unit}")
        except asyncio.CancelledError:  # the turn was cancelled while the card was shown
            self._withdraw(request)
            raise
        except Exception as exc:  # any error answer is a denial
            log.info("approval request refused by the editor: %s", exc)
            return ApprovalAnswer.unanswered("the editor cannot show approval requests")
        try:
            answer = _editor_answer(_plain(reply))
        except msgspec.ValidationError:
            return ApprovalAnswer.unanswered("the editor's answer could not be read")
        return ApprovalAnswer(answer.decision,
                              None if answer.reason is None else _storable(answer.reason),
                              by_editor=_refused_by_editor(answer, request))

    def _withdraw(self, request: ApprovalRequest) -> None:
        """Tell the editor the question is no longer open (so it can remove its card)."""
        self.server.protocol.notify(types.CANCEL_REQUEST,
                                    types.CancelParams(id=f"approve-{request.id}"))


def _editor_answer(reply: Any) -> EditorAnswer:
    """The editor's answer; raises ``msgspec.ValidationError`` when it cannot be read. A
    ``deny`` is the user's denial whatever else it holds: a ``reason`` or ``refused_by`` that
    is not text is left out (the model is told the user denied it, with no reason), rather
    than the denial passing for an answer nobody gave."""
    try:
        return msgspec.convert(reply, EditorAnswer)
    except msgspec.ValidationError:
        if not isinstance(reply, dict) or reply.get("decision") != "deny":
            raise
        return EditorAnswer("deny", *(value if isinstance(value, str) else None
                                      for value in (reply.get("reason"),
                                                    reply.get("refused_by"))))


def _refused_by_editor(answer: EditorAnswer, request: ApprovalRequest) -> bool:
    """Whether the editor turned down a change the user allowed. Only a change to a file can
    be (its buffer moved while the user was asked): a command or a delegation has no buffer,
    so ``refused_by: "editor"`` on one is the user's plain denial."""
    return answer.decision == "deny" and answer.refused_by == "editor" \
        and request.path is not None


class EditorApplier:
    """Applies file changes with ``workspace/applyEdit``."""

    def __init__(self, server: SwitchmanServer) -> None:
        self.server = server

    async def apply(self, change: FileChange) -> Applied:
        """Ask the editor to apply ``change``; its refusal comes back with its reason."""
        edit = self.workspace_edit(change)
        if isinstance(edit, str):
            return Applied(False, edit)
        label = {"create": "Create", "edit": "Edit", "delete": "Delete"}[change.kind]
        params = types.ApplyWorkspaceEditParams(
            edit=_CONVERTER.structure(edit, types.WorkspaceEdit),
            label=f"Switchman: {label} {change.path}")
        try:
            reply = _plain(await self.server.workspace_apply_edit_async(params))
        except Exception as exc:  # an error answer is a refusal
            return Applied(False, f"the editor answered with an error ({exc})")
        if not isinstance(reply, dict) or not reply.get("applied"):
            reason = reply.get("failureReason") if isinstance(reply, dict) else None
            return Applied(False, _storable(str(reason or "the editor did not apply it")))
        # applied, with a reason: the editor could not save it (VS Code and Neovim save our edits)
        note = reply.get("failureReason")
        return Applied(True, _storable(str(note)) if note else "")

    def workspace_edit(self, change: FileChange) -> dict[str, Any] | str:
        """The LSP ``WorkspaceEdit`` for ``change``, or why the editor cannot take it."""
        version = self._shared_version(change)
        # the URI the editor opened the file by, if it has it open (its escapes, its symlinks)
        opened = self.server.open_documents.uri_of(path_of(change.uri))
        change = msgspec.structs.replace(change, uri=opened or editor_uri(self.server, change.uri))
        if isinstance(version, str):
            return version
        edits = [{"range": self._range(change, e.range), "newText": e.new_text}
                 for e in change.edits]
        if change.kind == "edit" and not self._supports("document_changes"):
            return {"changes": {change.uri: edits}}
        if change.kind != "edit" and change.kind not in self._resource_operations():
            return f"the editor cannot {change.kind} files through the language server"
        document = {"uri": change.uri, "version": version}
        if change.kind == "delete":
            return {"documentChanges": [{"kind": "delete", "uri": change.uri}]}
        if change.kind == "create":
            insert = {"range": _zero_range(), "newText": change.proposed or ""}
            return {"documentChanges": [
                {"kind": "create", "uri": change.uri,
                 "options": {"overwrite": False, "ignoreIfExists": False}},
                {"textDocument": document, "edits": [insert]}]}
        return {"documentChanges": [{"textDocument": document, "edits": edits}]}

    def _shared_version(self, change: FileChange) -> int | str | None:
        """The version of the editor's document the edit was made from, when the editor
        shares the file: the editor refuses the edit if the buffer has changed since (typed
        after the daemon's last check, its ``didChange`` still on the way). A shared text
        that is no longer the edit's base is refused here (the reason). None: not shared."""
        if change.kind != "edit":
            return None
        workspace = self.server.workspace
        opened_as = self.server.open_documents.uri_of(path_of(change.uri))  # by its real path
        document = shared_document(workspace, opened_as or change.uri) or shared_document(
            workspace, editor_uri(self.server, change.uri))
        if document is None:
            return None
        if document.source != change.original:
            return ("the file changed in the editor after this change was made from its text, "
                    "so it would land in the wrong place; read the file again and make the "
                    "change anew")
        version: int | None = document.version
        return version

    def _range(self, change: FileChange, rng: Any) -> dict[str, Any]:
        encoding = self.server.workspace.position_encoding or types.PositionEncodingKind.Utf16
        converted = Positions(split_lines(change.original or ""), encoding).lsp_range(rng)
        return {"start": {"line": converted.start.line, "character": converted.start.character},
                "end": {"line": converted.end.line, "character": converted.end.character}}

    def _workspace_edit_capability(self) -> types.WorkspaceEditClientCapabilities | None:
        workspace = self.server.client_capabilities.workspace
        return workspace.workspace_edit if workspace is not None else None

    def _supports(self, name: str) -> bool:
        capability = self._workspace_edit_capability()
        return bool(capability is not None and getattr(capability, name))

    def _resource_operations(self) -> set[str]:
        capability = self._workspace_edit_capability()
        operations = capability.resource_operations if capability is not None else None
        return {str(getattr(o, "value", o)) for o in operations or []}


def editor_uri(server: SwitchmanServer, uri: str) -> str:
    """``uri`` (a file's real path, as the tools resolve it) as the editor names it.

    A workspace folder opened through a symlink (``~/code/app`` where ``~/code`` links
    elsewhere) has its files known to the editor under that name; an edit sent to the
    real path would be another document to it, changed beside the one the user has
    open (and lost when that one is saved).
    """
    path = path_of(uri)
    for folder in server.workspace_folders:
        named = path_of(folder) if folder.startswith("file://") else Path(folder)
        real = Path(os.path.realpath(named))
        if real != named and (path == real or real in path.parents):
            return (named / path.relative_to(real)).as_uri()
    return uri


def _plain(value: Any) -> Any:
    """A reply as plain data (pygls may hand back attrs objects for known methods)."""
    if isinstance(value, dict | list | str | int | float | bool) or value is None:
        return value
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if hasattr(value, "__attrs_attrs__"):
        return {_camel(a.name): _plain(getattr(value, a.name)) for a in value.__attrs_attrs__}
    return value


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _zero_range() -> dict[str, Any]:
    return {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
