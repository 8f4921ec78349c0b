"""The shapes of custom request params; decoding turns mistakes into ``invalid_params``."""

from __future__ import annotations

from typing import Annotated, Any, Literal, TypeVar

import msgspec

from switchman.engine.messages import AttachmentRequest
from switchman.server.errors import invalid_params

T = TypeVar("T")


class Image(msgspec.Struct, frozen=True):
    media_type: str
    data: str


class ChatParams(msgspec.Struct, frozen=True):
    workspace: str
    message: str
    session_id: str | None = None
    images: list[Image] = []
    attachments: list[AttachmentRequest] = []
    typed: str | None = None
    """The message as the user typed it, when the client sends another text (VS Code takes
    ``#file`` / ``#selection`` out and sends what they attach): shown, never sent."""


class FeedbackParams(msgspec.Struct, frozen=True):
    turn_id: str
    rating: Literal["up", "down", "none"]
    """``none`` takes back a 👍 or 👎 given before."""


class CancelParams(msgspec.Struct, frozen=True):
    turn_id: str
    tool_use_id: str | None = None
    """With the planner's turn id: stop only that delegation (waiting or running)."""


class SetModelParams(msgspec.Struct, frozen=True):
    workspace: str
    model: str | None
    session_id: str | None = None


class ProfilesParams(msgspec.Struct, frozen=True):
    workspace: str
    session_id: str | None = None


class SetProfileParams(msgspec.Struct, frozen=True):
    workspace: str
    profile: str | None
    session_id: str | None = None


class WorkspaceParams(msgspec.Struct, frozen=True):
    workspace: str


class ExplainParams(msgspec.Struct, frozen=True):
    workspace: str | None = None
    session_id: str | None = None
    turn_id: str | None = None


class PreviewParams(msgspec.Struct, frozen=True):
    workspace: str
    message: str
    session_id: str | None = None
    has_images: bool = False
    attachments: list[AttachmentRequest] = []


class SessionsParams(msgspec.Struct, frozen=True):
    workspace: str
    include_workers: bool = False


class SessionParams(msgspec.Struct, frozen=True):
    session_id: str


class ResumeSessionParams(msgspec.Struct, frozen=True):
    workspace: str
    session_id: str


def decode(params: Any, shape: type[T]) -> T:
    """``params`` (plain JSON data) as ``shape``, or an ``invalid_params`` error."""
    try:
        decoded = msgspec.convert(params if params is not None else {}, shape)
    except msgspec.ValidationError as exc:
        raise invalid_params(str(exc)) from None
    for name in getattr(shape, "__struct_fields__", ()):
        value = getattr(decoded, name)
        # An id is looked up in SQLite, which cannot take a lone UTF-16 surrogate (legal in
        # JSON): say so here rather than fail inside the lookup with an internal error.
        if name.endswith("_id") and isinstance(value, str) and not _encodable(value):
            raise invalid_params(f"`$.{name}` contains a lone UTF-16 surrogate, so it names "
                                 "nothing")
    return decoded


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class TrustParams(msgspec.Struct, frozen=True):
    workspace: str | None = None


class RevokeTrustParams(msgspec.Struct, frozen=True):
    workspace: str
    tool: str | None = None


class LspPosition(msgspec.Struct, frozen=True):
    line: Annotated[int, msgspec.Meta(ge=0)]
    character: Annotated[int, msgspec.Meta(ge=0)]


class LspRange(msgspec.Struct, frozen=True):
    start: LspPosition
    end: LspPosition


class ApplyCodeParams(msgspec.Struct, frozen=True):
    workspace: str
    uri: str
    text: str
    code: str
    range: LspRange | None = None
    session_id: str | None = None
    turn_id: str | None = None

