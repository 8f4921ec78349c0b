"""Every user-supplied regular expression is compiled here, with RE2.

RE2 matches in time linear in the input, so no pattern in a routing file can
hang the daemon (no catastrophic backtracking). The price is that Perl-only
syntax (backreferences, lookaround) is rejected; we explain that in the error.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Protocol

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False


class CompiledRegex(Protocol):
    """The part of a compiled RE2 pattern the engine uses."""

    def search(self, text: str) -> object | None:
        """A match object if the pattern occurs anywhere in ``text``, else None."""
        ...


class RegexError(ValueError):
    """The pattern is invalid or uses syntax RE2 does not support."""


_BACKREFERENCE = re.compile(r"invalid escape sequence: \\[1-9]")
_HINTS = {
    "invalid perl operator: (?=": "lookahead (?=...) is not supported",
    "invalid perl operator: (?!": "negative lookahead (?!...) is not supported",
    "invalid perl operator: (?<": "lookbehind (?<=...) / (?<!...) is not supported",
}


@lru_cache(maxsize=4096)
def compile_regex(pattern: str) -> CompiledRegex:
    """Compile ``pattern`` with RE2 or raise :class:`RegexError` with a readable reason."""
    try:
        return re2.compile(pattern, _OPTIONS)  # type: ignore[no-any-return]
    except re2.error as exc:
        raise RegexError(_explain(exc)) from None


def _explain(exc: Exception) -> str:
    raw = exc.args[0] if exc.args else str(exc)
    reason = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    hint = "backreferences such as \\1 are not supported" if _BACKREFERENCE.match(reason) else None
    for prefix, text in _HINTS.items():
        if reason.startswith(prefix):
            hint = text
    return f"{reason} ({hint}; patterns run on RE2, which never backtracks)" if hint else reason


class PatternSet:
    """Many patterns matched against one text in a single RE2 pass."""

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        self._set: object | None = None
        try:
            compiled = re2.Set.SearchSet(_OPTIONS)
            for pattern in patterns:
                compiled.Add(pattern)
            compiled.Compile()
            self._set = compiled
        except (re2.error, ValueError, TypeError):
            self._set = None

    def hits(self, text: str) -> frozenset[str] | None:
        """The patterns that occur in ``text``; None if the set could not be used."""
        if self._set is None:
            return None
        try:
            indices = self._set.Match(text)  # type: ignore[attr-defined]
        except (re2.error, ValueError, TypeError):
            return None
        return frozenset(self.patterns[i] for i in indices or ())  # None when nothing matched


@lru_cache(maxsize=64)
def pattern_set(patterns: tuple[str, ...]) -> PatternSet:
    """A cached :class:`PatternSet` for ``patterns`` (each already valid on its own)."""
    return PatternSet(patterns)
