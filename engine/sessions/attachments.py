"""Files and selections the user attaches to a chat message.

The editor sends what the user sees (a selection's text, or the text of an
open buffer); for a file it sends without text, the daemon reads it, only
inside the workspace. Each attachment is kept as its own block of the user
message, so the transcript shows it as an attachment, and it counts towards
routing: its text in ``estimated_input_tokens`` and its path in
``files_touched``.
"""

from __future__ import annotations

from pathlib import Path

from switchman.engine.errors import InvalidAttachment
from switchman.engine.messages import AttachmentBlock, AttachmentRequest
from switchman.engine.tools.arguments import ToolRefused
from switchman.engine.tools.changes import path_of, read_text
from switchman.engine.tools.confinement import WorkspaceRoot

MAX_ATTACHMENT_CHARS = 200_000
MAX_ATTACHMENTS = 20


def attachment_blocks(folder: Path, requests: list[AttachmentRequest]) -> list[AttachmentBlock]:
    """The blocks for ``requests``; :class:`InvalidAttachment` for one that cannot be used."""
    if len(requests) > MAX_ATTACHMENTS:
        raise InvalidAttachment(f"At most {MAX_ATTACHMENTS} attachments can be sent at once.")
    return [_block(WorkspaceRoot(folder), r) for r in requests]


def _block(workspace: WorkspaceRoot, request: AttachmentRequest) -> AttachmentBlock:
    if not request.uri.startswith("file://") or "\0" in request.uri:
        raise InvalidAttachment(f"'{request.uri[:200]}' is not a file URI.")
    first, last = request.start_line, request.end_line
    if (first is None) != (last is None) or \
            (first is not None and last is not None and not 1 <= first <= last):
        raise InvalidAttachment(f"An attachment's lines are start_line and end_line, both or "
                                f"neither, counted from 1 with end_line not before start_line "
                                f"(got {first} and {last}).")
    path = path_of(request.uri)
    try:
        real = workspace.resolve(str(path))
        shown = workspace.relative(real)
    except ToolRefused:
        real, shown = path, str(path)
        if request.text is None:  # the daemon reads only inside the workspace
            raise InvalidAttachment(f"{path} is outside the workspace; attach its text "
                                    "instead.") from None
    text = request.text if request.text is not None else _read(real)
    if request.kind == "selection" and request.text is None:
        raise InvalidAttachment("A selection attachment needs its text.")
    return AttachmentBlock(kind=request.kind, path=shown, text=text[:MAX_ATTACHMENT_CHARS],
                           start_line=request.start_line, end_line=request.end_line,
                           truncated=len(text) > MAX_ATTACHMENT_CHARS)


def _read(path: Path) -> str:
    try:
        if not path.is_file():
            raise InvalidAttachment(f"{path.name} is not a file.")
        return read_text(path)
    except UnicodeDecodeError:
        raise InvalidAttachment(f"{path.name} is not a UTF-8 text file.") from None
    except OSError as exc:
        raise InvalidAttachment(f"{path.name} cannot be read: {exc.strerror}.") from None


def inside_workspace(blocks: list[AttachmentBlock]) -> list[str]:
    """The workspace-relative paths of ``blocks`` (for ``files_touched``)."""
    return [b.path for b in blocks if not b.path.startswith("/")]
