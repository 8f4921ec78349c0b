"""What every tool shares: its outcome, its refusal, and checked reading of its arguments.

Models sometimes send arguments of the wrong type (``"start_line": "abc"``) or
with control characters in a path. Each such mistake must come back to the
model as an error result it can correct, never as an exception that ends the
turn, so tools read their arguments only through the functions here.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec

from switchman.engine.messages import ApprovalRecord
from switchman.engine.wording import first_line

MAX_WHOLE_NUMBER = 10**9


class ToolOutcome(msgspec.Struct, frozen=True):
    """What a tool call produced."""

    content: str
    is_error: bool = False
    summary: str = ""
    touched: list[str] = []
    """Workspace-relative paths the call read, listed or changed (for routing)."""
    approval: ApprovalRecord | None = None
    """The question the user was asked before the call ran, and their answer."""
    approval_stored: bool = True
    """Whether the stored result keeps ``approval``. False when another record keeps it (a
    planner's ``delegate``: its ``delegate.started`` or ``delegate.failed``), so it is stored
    once; the chat is still shown it live, and a session read puts it back in the result."""
    superseded_approvals: list[ApprovalRecord] = []
    """A ``delegate``'s questions asked before ``approval`` and superseded by it (the worker's
    model changed while they waited), oldest first: shown live with it, never stored here."""
    output_shown: bool = False
    """The chat shows ``content`` under the call (a command's output: its user approved it
    and wants to see what it printed)."""


class QuestionStopped(asyncio.CancelledError):
    """The cancellation of a call whose question to the user was waiting for an answer: it
    carries the call's result (``Cancelled.``, with the question) for the transcript, so a
    rebuilt chat shows the question and that the stop cut it short."""

    def __init__(self, outcome: ToolOutcome) -> None:
        super().__init__()
        self.outcome = outcome


SUMMARY_LIMIT = 160
"""The longest summary of a tool's outcome (the editors' one tool line)."""


def summary_of(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """An outcome's text as its summary: the first line, cut at a word before ``limit``
    characters with "…" (a refusal cut mid-word, without a mark, read as the whole reason)."""
    return first_line(text, limit)


class ToolRefused(Exception):
    """The call was not allowed (bad arguments, a path outside the workspace)."""


def text_argument(args: dict[str, Any], name: str, *, required: bool = False,
                  default: str | None = None) -> str | None:
    """The text argument ``name``; :class:`ToolRefused` when it is missing or not text."""
    value = args.get(name)
    if value is None:
        if required:
            raise ToolRefused(f"A '{name}' argument (text) is required.")
        return default
    if not isinstance(value, str):
        raise ToolRefused(f"'{name}' must be text, not {_json_type(value)}.")
    try:  # JSON can carry a lone surrogate; no path, file or command line can hold one
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ToolRefused(f"'{name}' contains an invalid character (a lone UTF-16 surrogate) "
                          f"at position {exc.start}; send it without that character.") from None
    return value


def path_argument(args: dict[str, Any], name: str = "path", *,
                  default: str | None = None) -> str:
    """A path argument: non-empty text without NUL characters."""
    value = text_argument(args, name, default=default)
    if value is None or not value.strip():
        raise ToolRefused(f"A '{name}' argument (text) is required.")
    if "\0" in value:
        raise ToolRefused(f"'{name}' contains a NUL character; paths cannot contain one.")
    return value.strip()


def whole_number_argument(args: dict[str, Any], name: str, *,
                          maximum: int = MAX_WHOLE_NUMBER) -> int | None:
    """An optional whole-number argument (digits in text are accepted too), refused as too
    large above ``maximum`` (the message names it) or below -``MAX_WHOLE_NUMBER``."""
    value = args.get(name)
    if value is None:
        return None
    number: int | None = None
    if isinstance(value, int) and not isinstance(value, bool):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        text = value.strip()  # digits past the limit's are not converted: too large anyway
        far = -MAX_WHOLE_NUMBER - 1 if text.startswith("-") else MAX_WHOLE_NUMBER + 1
        number = int(text) if len(text.lstrip("-").lstrip("0")) < 12 else far
    if number is None:
        raise ToolRefused(f"'{name}' must be a whole number, not {value!r:.40}.")
    if number > maximum or number < -MAX_WHOLE_NUMBER:  # whole, but beyond any line or count
        size, limit = ("large", f"at most {maximum:,}") if number > 0 else \
            ("small", f"at least -{MAX_WHOLE_NUMBER:,}")
        raise ToolRefused(f"'{name}' is too {size}: it can be {limit}, not {value!r:.40}.")
    return number


def bool_argument(args: dict[str, Any], name: str, default: bool = False) -> bool:
    """An optional true/false argument."""
    value = args.get(name, default)
    if not isinstance(value, bool):
        raise ToolRefused(f"'{name}' must be true or false, not {value!r:.40}.")
    return value


def _json_type(value: object) -> str:
    names = {bool: "a boolean", int: "a number", float: "a number", list: "a list",
             dict: "an object"}
    return names.get(type(value), type(value).__name__)
