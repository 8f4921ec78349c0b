"""Files and selections the user attaches to a chat message.

The editor sends what the user sees (a selection's text, or the text of an
open buffer); for a file it sends without text, the daemon reads it, only
inside the workspace. Either way a binary file (a NUL near its start) is
refused: the editor's text of one is no more use to a model than its bytes.
Each attachment is kept as its own block of the user message, so the
transcript shows it as an attachment, and it counts towards routing: its text
in ``estimated_input_tokens`` and its path in ``files_touched``.

Images are checked too (:func:`check_images`): one no provider can read would fail the
turn at the provider and, kept in the session's history, every later turn with it.
"""

from __future__ import annotations

import binascii
from pathlib import Path

from switchman.engine.errors import InvalidAttachment, UnreadableFile
from switchman.engine.files import read_head
from switchman.engine.messages import AttachmentBlock, AttachmentRequest, ImageBlock
from switchman.engine.tools.arguments import ToolRefused
from switchman.engine.tools.changes import path_of
from switchman.engine.tools.confinement import WorkspaceRoot

MAX_ATTACHMENT_CHARS = 200_000
MAX_ATTACHMENT_BYTES = 4 * MAX_ATTACHMENT_CHARS
"""What is read of an attached file: enough for its first MAX_ATTACHMENT_CHARS characters
(UTF-8 takes at most four bytes a character); a bigger file is never read whole."""
MAX_ATTACHMENTS = 20
BINARY_SNIFF = 8192
"""A NUL byte (or character, in the editor's text) this near the start marks a binary file."""


def attachment_blocks(folder: Path, requests: list[AttachmentRequest]) -> list[AttachmentBlock]:
    """The blocks for ``requests``; :class:`InvalidAttachment` for one that cannot be used."""
    if len(requests) > MAX_ATTACHMENTS:
        raise InvalidAttachment(f"At most {MAX_ATTACHMENTS} attachments can be sent at once.")
    return [_block(WorkspaceRoot(folder), r) for r in requests]


IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""The image types both the Anthropic and the OpenAI APIs read."""


def check_images(images: list[ImageBlock]) -> None:
    """:class:`InvalidAttachment` for an image no provider can read: a type other than
    :data:`IMAGE_TYPES`, or data that is not base64 (``data:`` URLs included)."""
    for number, image in enumerate(images, 1):
        which = f"Image {number}" if len(images) > 1 else "The image"
        if image.media_type not in IMAGE_TYPES:
            raise InvalidAttachment(
                f"{which}: '{image.media_type[:40]}' is not an image type the models read "
                f"({', '.join(IMAGE_TYPES)}); nothing was sent.")
        if not image.data:
            raise InvalidAttachment(f"{which} is empty; nothing was sent.")
        try:
            binascii.a2b_base64(image.data, strict_mode=True)
        except (binascii.Error, ValueError):
            raise InvalidAttachment(f"{which} is not base64 data (send the file's bytes "
                                    "base64-encoded, without a data: prefix); nothing was "
                                    "sent.") from None


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
        if request.text is None:  # the daemon reads only inside the workspace, not .git/
            where = "inside .git/, which Switchman does not read" \
                if workspace.contains(path) else "outside the workspace"
            raise InvalidAttachment(f"{path} is {where}; attach its text instead.") from None
    text, whole = (request.text, True) if request.text is not None else _read(real)
    if request.kind == "selection" and request.text is None:
        raise InvalidAttachment("A selection attachment needs its text.")
    if "\0" in text[:BINARY_SNIFF]:  # the editor's text of a binary file: the file's rule
        raise InvalidAttachment(_binary(real))
    return AttachmentBlock(kind=request.kind, path=shown, text=text[:MAX_ATTACHMENT_CHARS],
                           start_line=request.start_line, end_line=request.end_line,
                           truncated=len(text) > MAX_ATTACHMENT_CHARS or not whole)


def _read(path: Path) -> tuple[str, bool]:
    """The text of an attached file (its beginning, for a big one) and whether it is all."""
    try:
        data, whole = read_head(path, MAX_ATTACHMENT_BYTES)
    except UnreadableFile as exc:
        raise InvalidAttachment(f"{path.name} {exc.reason}.") from None
    if b"\0" in data[:BINARY_SNIFF]:
        raise InvalidAttachment(_binary(path))
    try:
        return data.decode("utf-8"), whole
    except UnicodeDecodeError as exc:
        if whole or exc.start < len(data) - 3:  # not a character cut off by the cap
            raise InvalidAttachment(f"{path.name} is not a UTF-8 text file.") from None
        return data[:exc.start].decode("utf-8"), False


def _binary(path: Path) -> str:
    return f"{path.name} is a binary file; only text files can be attached."


def inside_workspace(blocks: list[AttachmentBlock]) -> list[str]:
    """The workspace-relative paths of ``blocks`` (for ``files_touched``)."""
    return [b.path for b in blocks if not b.path.startswith("/")]
