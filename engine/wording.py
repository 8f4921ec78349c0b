"""Counts in the words Switchman prints: ``1 turn``, ``2 turns`` (never ``1 turn(s)``)."""

from __future__ import annotations


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
