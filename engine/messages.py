"""The canonical conversation format shared by sessions, storage and providers."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any, Literal

import msgspec


class TextBlock(msgspec.Struct, frozen=True, tag="text", tag_field="type"):
    """Plain text."""

    text: str


class ImageBlock(msgspec.Struct, frozen=True, tag="image", tag_field="type"):
    """An image, base64-encoded."""

    media_type: str
    data: str


class ToolUseBlock(msgspec.Struct, frozen=True, tag="tool_use", tag_field="type"):
    """The model asks for a tool call."""

    id: str
    name: str
    input: dict[str, Any]


ApprovalOutcome = Literal["allowed_once", "allowed_always", "denied", "not_applied",
                          "unanswered", "stopped"]


class ApprovalRecord(msgspec.Struct, frozen=True, kw_only=True):
    """The question the user was asked before a tool call ran, and their answer: kept with
    the call's result so that an editor rebuilding the chat shows it as it was answered.
    Absent when nobody was asked (a read, a tool always allowed in the workspace)."""

    id: str
    """The ``switchman/approve`` request's id (the editor's card of the question)."""
    title: str
    outcome: ApprovalOutcome
    """``not_applied``: the user allowed it but the editor turned it down; ``unanswered``:
    nobody answered (no editor, no answer in time); ``stopped``: the turn was stopped (or the
    daemon shut down) while the question waited for its answer."""
    reason: str | None = None
    command: str | None = None
    cwd: str | None = None
    path: str | None = None
    diff: str | None = None
    """For a file change: the unified diff the question showed, capped
    (``MAX_RECORDED_DIFF_CHARS``); None for other questions and in records kept before it."""
    tier: str | None = None
    """For ``delegate``: the tier the worker was to run on, as the question said."""
    requested_tier: str | None = None
    """For ``delegate``: the tier the planner asked for, when the tier floor lowered it to
    ``tier``."""
    model: str | None = None
    """For ``delegate``: the model the question said the worker would run on."""
    routed_by: str | None = None
    """For ``delegate``: what chose ``model`` when the tier did not (``rule: docs``)."""
    worker_tools: list[str] | None = None
    """For ``delegate``: the write and execute tools the worker was to have."""
    superseded: str | None = None
    """For ``delegate``: why this answer did not start the worker although it allowed it: the
    model changed while the question waited, and the user was asked again (``the model changed
    from … to …``). None for the question whose answer counted."""
    model_changed: str | None = None
    """For ``delegate``: the answer counted, but the model changed while the question waited
    and nothing was asked again (an "always" answer asks no more): why, ``the model changed from
    haiku to sonnet while the question waited``; the worker ran on the second, the delegation's
    ``model``. None otherwise."""


class ToolResultBlock(msgspec.Struct, frozen=True, tag="tool_result", tag_field="type"):
    """The answer to a tool call."""

    tool_use_id: str
    content: str
    is_error: bool = False
    approval: ApprovalRecord | None = None
    """The user's answer to the question this call asked first, if it asked one."""
    summary: str | None = None
    """The one line the editors showed for the result live (``ToolOutcome.summary``), so a
    chat drawn from the session shows the same; None in results stored before it was kept.
    Never sent to a model."""
    output_shown: bool = False
    """The chat shows ``content`` under the call, live and rebuilt (a command's output)."""


class AttachmentRequest(msgspec.Struct, frozen=True, kw_only=True):
    """An attachment as the editor describes it (read into an :class:`AttachmentBlock`)."""

    uri: str
    kind: Literal["file", "selection"] = "file"
    text: str | None = None
    start_line: int | None = None
    end_line: int | None = None


class AttachmentBlock(msgspec.Struct, frozen=True, tag="attachment", tag_field="type",
                      kw_only=True):
    """A file or a selection the user attached to a message (kept apart from its text)."""

    kind: Literal["file", "selection"]
    path: str
    """Relative to the workspace when the file is inside it."""
    text: str
    start_line: int | None = None
    end_line: int | None = None
    truncated: bool = False

    def rendered(self) -> str:
        """The attachment as the model reads it."""
        lines = f" (lines {self.start_line}-{self.end_line})" if self.start_line else ""
        fence = "````" if "```" in self.text else "```"
        note = "\n[… the rest was left out]" if self.truncated else ""
        return (f"Attached {self.kind} {self.path}{lines}:\n{fence}\n{self.text}\n{fence}"
                f"{note}")


Block = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock | AttachmentBlock
Role = Literal["user", "assistant", "tool"]


class Message(msgspec.Struct, kw_only=True):
    """One message of a session's transcript."""

    id: str
    session_id: str
    turn_id: str | None
    role: Role
    content: list[Block]
    created_at: datetime
    model: str | None = None
    typed: str | None = None
    """A user's message as they typed it, where the model reads it otherwise: the leading
    ``@alias`` (spec §11) is not sent, and a ``/route override`` re-run sends the message it
    runs again. Transcripts and titles show this; providers read only ``content``."""

    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def tool_uses(self) -> list[ToolUseBlock]:
        """The tool calls this message makes."""
        return [b for b in self.content if isinstance(b, ToolUseBlock)]


def transcript_key(message: Message) -> tuple[str, str]:
    """Where ``message`` sits in its session's transcript: a turn's messages together, where
    the turn started (its id is made before any of them), and a message of no turn (a
    ``/delegate`` and its answer) at its own time — so a ``/delegate`` sent while a turn ran
    comes after that turn rather than inside it, where it would garble the history the next
    turn's model reads (ids sort by creation time)."""
    return (message.turn_id or message.id, message.id)


def message_texts(messages: list[Message]) -> list[str]:
    """The text of every non-image block (tool inputs as JSON), for size estimates."""
    return [b.text if isinstance(b, TextBlock) else b.content if isinstance(b, ToolResultBlock)
            else b.rendered() if isinstance(b, AttachmentBlock)
            else msgspec.json.encode(b.input).decode() for m in messages for b in m.content
            if not isinstance(b, ImageBlock)]


def image_count(messages: list[Message]) -> int:
    """How many images ``messages`` hold."""
    return sum(isinstance(b, ImageBlock) for m in messages for b in m.content)


class Usage(msgspec.Struct, frozen=True):
    """Tokens used by one or more LLM calls."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens,
                     self.cache_read_tokens + other.cache_read_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)


_MILLION = Decimal(1_000_000)
USD_PLACES = Decimal("0.000001")
ZERO_USD = Decimal("0.000000")
"""Money is a Decimal with six places (micro-dollars) everywhere it is stored or sent."""


def usd_of_float(amount: float) -> Decimal:
    """A cost kept as a float (the pattern store's) as money: the decimal it was made from
    (its shortest repr), to six places."""
    return Decimal(repr(amount)).quantize(USD_PLACES)


def cost_of(usage: Usage, pricing: Any) -> Decimal:
    """The cost in US dollars of ``usage`` at ``pricing`` (per-million prices)."""
    total = (usage.input_tokens * pricing.input + usage.output_tokens * pricing.output
             + usage.cache_read_tokens * pricing.cache_read
             + usage.cache_write_tokens * pricing.cache_write)
    return (Decimal(total) / _MILLION).quantize(USD_PLACES)
