"""Counts in the words Switchman prints: ``1 turn``, ``2 turns`` (never ``1 turn(s)``)."""

from __future__ import annotations


def counted(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and ``noun``, in the plural (``nouns``, else ``noun`` + s) unless it is 1."""
    return f"{count} {noun}" if count == 1 else f"{count} {nouns or noun + 's'}"
