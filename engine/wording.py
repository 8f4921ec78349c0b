"""Counts in the words Switchman prints: ``1 turn``, ``2 turns`` (never ``1 turn(s)``)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

MAX_NAMES_LISTED = 10
"""Known names listed in one message (the closest first, then how many more)."""


def counted(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``nouns``, else ``noun`` + s) unless it is 1."""
    return f"{count} {noun}" if count == 1 else f"{count} {nouns or noun + 's'}"


def first_line(text: str, limit: int) -> str:
    """``text``'s first line, cut at a word before ``limit`` characters with "…" (a line cut
    mid-word without a mark read as whole: a refusal's reason, a session's title)."""
    line = text.strip().split("\n", 1)[0].rstrip()
    if len(line) <= limit:
        return line
    cut = line.rfind(" ", limit // 2, limit)
    return line[:cut if cut > 0 else limit - 1].rstrip(" ,;:") + "…"


def closest(word: str, candidates: Sequence[str], n: int = 3) -> list[str]:
    """The candidates that look most like ``word`` (for 'did you mean' hints)."""
    return difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.5)


def names_listed(names: Sequence[str], first: Sequence[str] = (),
                 limit: int = MAX_NAMES_LISTED) -> str:
    """``names`` for a message, ``first`` (the closest to a misspelled one) leading and the
    rest in their order, at most ``limit`` of them then ``and N more``: a list of every
    known name grew with a repository's (a thousand profiles made a 64 KB error)."""
    listed = [*first, *(n for n in names if n not in first)][:limit]
    more = f" and {len(names) - len(listed)} more" if len(names) > len(listed) else ""
    return f"{', '.join(listed)}{more}"


def unknown_name(lead: str, name: str, known: Sequence[str], listed_as: str) -> str:
    """``lead`` (saying ``name`` is unknown), the closest known name as a question, then
    ``listed_as`` and the known names by :func:`names_listed`, closest first."""
    near = closest(name, known)
    hint = f" Did you mean '{near[0]}'?" if near else ""
    return f"{lead}{hint} {listed_as} {names_listed(known, near)}"
