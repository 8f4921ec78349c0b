"""What the user means by ``/delegate`` and "delegate that": the focused task (spec 003).

A user-initiated delegation hands one task to a worker. Which task, in order:

1. a **selection** attached to the message: the message's own text (if any) is
   the instruction and the selection is what it is about; with no text the
   selection itself is the task;
2. the **task written** after ``/delegate`` (with any files attached);
3. otherwise the **most recent request** of the session: the text of the last
   user message, with what was attached to it.

Pending things — a queued model swap, a pattern suggestion, an approval
waiting for an answer, an earlier request that failed — are never candidates:
only the user's own latest words are (spec 003, "stale task delegation").
When the reference cannot be resolved without guessing, the answer is one
short question and no worker runs:

* nothing is selected, nothing written and the session has no request yet;
* a turn is still running, so "that" could be the request in flight or the
  one before it;
* the latest request is a list of two or more separate items (bulleted or
  numbered lines): "that" could be any of them.

A first word that reads as a mistyped tier or profile is refused (``unknown_tier``)
rather than handed over as the task: see :func:`unknown_target`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from switchman.engine.errors import UnknownTier
from switchman.engine.messages import AttachmentBlock, Message
from switchman.engine.slips import near_misses

COMMAND = "/delegate"
DEFAULT_TIER = "balanced"
"""A user's worker runs on ordinary coding models unless they name a tier (or profile)."""
_QUOTE_CHARS = 60

_WORKER = r"(?:sub-?\s?agent|worker|helper agent)"
_PHRASES = re.compile(
    r"^\s*(?:ok(?:ay)?[,.]?\s+)?(?:please\s+)?(?:"
    r"(?:delegate\s+(?:that|this|it)(?:\s+(?:off|over))?"
    r"|hand\s+(?:(?:that|this|it)\s+(?:off|over)|(?:off|over)\s+(?:that|this|it)))"
    rf"(?:\s+to\s+(?:a|an|the)\s+(?:(?P<tier1>fast|balanced|deep)\s+)?"
    rf"{_WORKER})?"
    rf"|(?:do|run|handle)\s+(?:that|this|it)\s+(?:via|with|through|using|in|by)\s+"
    rf"(?:a|an|the)\s+(?:(?P<tier2>fast|balanced|deep)\s+)?{_WORKER}"
    r")(?:\s*,?\s*please)?\s*[.!]?\s*$", re.IGNORECASE)
_COMMAND_START = re.compile(r"/delegate\s")
_REFERENCE = re.compile(r"(?:that|this|it)\s*[.!]?", re.IGNORECASE)
"""``/delegate that``: a task that is only a reference means the latest request."""
_LIST_ITEM = re.compile(r"^\s*(?:[-*•]|\d{1,3}[.)])\s+(?P<item>\S.*)$")


@dataclass(frozen=True)
class DelegateCommand:
    """What the user typed: an optional target (a tier or profile name) and the task text."""

    target: str | None
    task: str


@dataclass(frozen=True)
class FocusedTask:
    """The task a user-initiated delegation hands over, and where it came from."""

    task: str
    attachments: tuple[AttachmentBlock, ...]
    focus: str
    """``selection``, ``written`` or ``latest_request`` (recorded on ``delegate.started``)."""


@dataclass(frozen=True)
class Clarification:
    """One short question instead of a guess."""

    question: str


def is_delegate_message(message: str) -> bool:
    """Whether ``message`` asks for a user-initiated delegation (command or phrase)."""
    return parse_command(message, ()) is not None


def parse_command(message: str, targets: tuple[str, ...]) -> DelegateCommand | None:
    """``/delegate [target] <task>`` or a "delegate that" phrase; None for anything else.

    ``targets`` are the names the first word may be (tiers, profiles); a first word
    that names none of them starts the task.
    """
    phrase = _PHRASES.match(message)
    if phrase is not None:
        return DelegateCommand(phrase.group("tier1") or phrase.group("tier2"), "")
    stripped = message.strip()
    if stripped != COMMAND and not _COMMAND_START.match(stripped):
        return None
    rest = stripped[len(COMMAND):].strip()
    word = rest.split(maxsplit=1)[0] if rest else ""
    name = word.rstrip(":")  # "/delegate fast: rename f" names the tier as plainly
    named = next((t for t in targets if t.lower() == name.lower()), None) if name else None
    if named is not None:
        return DelegateCommand(named, _task(rest[len(word):].strip()))
    return DelegateCommand(None, _task(rest))


def _task(written: str) -> str:
    """The written task, or nothing when it only points back (``that``, ``this``, ``it``)."""
    return "" if _REFERENCE.fullmatch(written) else written


def unknown_target(command: DelegateCommand, tiers: tuple[str, ...],
                   profiles: tuple[str, ...], selected: bool) -> UnknownTier | None:
    """Why ``command``'s first word is taken for a mistyped tier or profile, if it is.

    It is when the word is one slip from a tier or profile (``fsat``, ``deeep``), or when
    it is the whole task and nothing is selected (``/delegate ultra``: no one hands over a
    one-word task about nothing; with a selection ``refactor`` is an instruction)."""
    if command.target is not None or not command.task:
        return None
    word, *rest = command.task.split(maxsplit=1)
    meant = near_misses(word, (*tiers, *profiles))
    if not meant and (rest or selected):
        return None
    return UnknownTier(word, meant, tiers, profiles)


def focused_task(command: DelegateCommand, attachments: list[AttachmentBlock],
                 history: list[Message], turn_running: bool) -> FocusedTask | Clarification:
    """The task ``command`` refers to (rules in the module docstring)."""
    if any(a.kind == "selection" for a in attachments):
        task = command.task or "Do what the selected text below asks (the user selected it as " \
                               "your task)."
        return FocusedTask(task, tuple(attachments), "selection")
    if command.task:
        return FocusedTask(command.task, tuple(attachments), "written")
    if turn_running:
        return Clarification("A reply is still being written. Delegate which request? Wait for "
                             "it or stop it, or write the task: /delegate <task>.")
    latest = _latest_request(history)
    if latest is None:
        return Clarification("What should the worker do? Select the code or text to hand over, "
                             "or write the task: /delegate [tier] <task>.")
    items = _list_items(latest.text())
    if len(items) >= 2:
        return Clarification(_which_one(items))
    attached = tuple(b for b in latest.content if isinstance(b, AttachmentBlock))
    return FocusedTask(latest.text().strip(), attached, "latest_request")


def _latest_request(history: list[Message]) -> Message | None:
    """The user's last message with words in it (tool results are not requests, and
    neither is an earlier delegation, which is kept in the history with its answer)."""
    return next((m for m in reversed(history) if m.role == "user" and m.text().strip()
                 and not is_delegate_message(m.text())), None)


def _list_items(text: str) -> list[str]:
    return [m.group("item").strip() for line in text.splitlines()
            if (m := _LIST_ITEM.match(line)) is not None]


def _which_one(items: list[str]) -> str:
    quoted = [f"“{_short(i)}”" for i in items]
    options = f"{quoted[0]} or {quoted[1]}" if len(quoted) == 2 else \
        ", ".join(quoted[:-1]) + f" or {quoted[-1]}"
    return (f"Delegate which one: {options}? Write it after /delegate, or select it and "
            "delegate the selection.")


def _short(text: str) -> str:
    return text if len(text) <= _QUOTE_CHARS else text[:_QUOTE_CHARS - 1].rstrip() + "…"
