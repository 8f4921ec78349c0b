"""Typing slips: whether a word the user typed is a known name but for one mistake.

Used where a near-miss would otherwise be taken for something else and cost a
model call or a worker: a mistyped slash command (``/modle``) read as a
message, a mistyped tier (``/delegate fsat …``) read as the task.
"""

from __future__ import annotations

from collections.abc import Iterable


def one_slip(typed: str, meant: str) -> bool:
    """Whether ``typed`` is ``meant`` but for at most one edit: a letter wrong, missing or
    extra, or two neighbours swapped (compare lowercase words for the case too)."""
    if len(typed) == len(meant):
        wrong = [i for i, (a, b) in enumerate(zip(typed, meant, strict=True)) if a != b]
        if len(wrong) <= 1:
            return True
        first, second = wrong[0], wrong[-1]
        return len(wrong) == 2 and second == first + 1 \
            and typed[first] == meant[second] and typed[second] == meant[first]
    shorter, longer = sorted((typed, meant), key=len)
    return len(longer) - len(shorter) == 1 and any(
        longer[:i] + longer[i + 1:] == shorter for i in range(len(longer)))


def near_misses(typed: str, names: Iterable[str], *, skip: int = 0) -> list[str]:
    """The ``names`` ``typed`` is one slip from (case ignored), in their order, none equal to it.

    The first letter after ``skip`` characters must match: a slip there is rare, and
    ``/post`` or ``past`` are words of their own, not ``/cost`` or ``fast``."""
    word = typed.lower()
    return [n for n in names if n != typed and len(word) > skip and len(n) > skip
            and word[skip] == n[skip].lower() and one_slip(word, n.lower())]
