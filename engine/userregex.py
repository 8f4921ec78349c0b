"""Every user-supplied regular expression is compiled here, with RE2.

RE2 matches in time linear in the input, so no pattern in a routing file can
hang the daemon (no catastrophic backtracking). The price is that Perl-only
syntax (backreferences, lookaround) is rejected; we explain that in the error.
"""

from __future__ import annotations

import logging
import re
from functools import lru_cache
from typing import Any, Protocol

import re2

MAX_PATTERN_MEMORY = 256 << 10
"""RE2's memory budget for one pattern (its default is 8 MiB). Within the default a
counted repetition of a Unicode class is valid and huge: ``\\pL{200}`` is a program of
239,204 instructions that took 0.16 s to compile and fits in no routing set, so a
repository's file of thirty such rules stalled the daemon's first turn for 40 s. Within
this budget a pattern has at most about 15,000 instructions (a few milliseconds to
compile); what people write for rules has tens to a few hundred."""
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False
_OPTIONS.max_mem = MAX_PATTERN_MEMORY
_MIN_SET_MEMORY = 8 << 20  # RE2's default budget
_SET_MEMORY_PER_PATTERN = 16 << 10
"""A budget, not an allocation: 5,000 rule-sized patterns use about 25 MiB."""
log = logging.getLogger(__name__)


class CompiledRegex(Protocol):
    """The part of a compiled RE2 pattern the engine uses."""

    def search(self, text: str) -> object | None:
        """A match object if the pattern occurs anywhere in ``text``, else None."""
        ...

    @property
    def programsize(self) -> int:
        """How many instructions RE2 compiled the pattern to (what it costs to build)."""
        ...


class RegexError(ValueError):
    """The pattern is invalid or uses syntax RE2 does not support."""

    @property
    def too_large(self) -> bool:
        """Refused for its size (RE2 compiled it up to the budget first: milliseconds, where a
        syntax error is found at once)."""
        return str(self).startswith(_TOO_LARGE[0])


_BACKREFERENCE = re.compile(r"invalid escape sequence: \\[1-9]")
_HINTS = {
    "invalid perl operator: (?=": "lookahead (?=...) is not supported",
    "invalid perl operator: (?!": "negative lookahead (?!...) is not supported",
    "invalid perl operator: (?<": "lookbehind (?<=...) / (?<!...) is not supported",
}
_TOO_LARGE = ("pattern too large", "it compiles to more than Switchman allows for one pattern, "
              "as a counted repetition of a Unicode class such as \\pL{100} does: repeat "
              "less, or use + or *")


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
    for prefix, text in (*_HINTS.items(), _TOO_LARGE):
        if reason.startswith(prefix):
            hint = text
    return f"{reason} ({hint}; patterns run on RE2, which never backtracks)" if hint else reason


class PatternSet:
    """Many patterns matched against one text in a single RE2 pass.

    RE2 compiles a set within a memory budget (8 MiB by default, which a
    set outgrows at about 1,450 patterns). The budget here grows with the
    number of patterns, so thousands of rules still take one pass; should a
    set fail to compile anyway, it is split in halves, and a pattern that fits
    no set is searched on its own. Every pattern is always answered.
    """

    def __init__(self, patterns: tuple[str, ...]) -> None:
        self.patterns = patterns
        self.sets: list[tuple[Any, tuple[str, ...]]] = []
        """The compiled sets and the patterns each one holds, in order."""
        self.alone: list[str] = []
        """Patterns that fit in no set (searched one by one; empty in practice)."""
        self._add(patterns)

    def _add(self, patterns: tuple[str, ...]) -> None:
        try:
            self.sets.append((_compiled_set(patterns), patterns))
        except re2.error:
            if len(patterns) == 1:
                log.warning("pattern %r fits in no RE2 set; it is searched on its own",
                            patterns[0])
                self.alone.append(patterns[0])
                return
            log.info("RE2 set of %d patterns did not compile; splitting it", len(patterns))
            half = len(patterns) // 2
            self._add(patterns[:half])
            self._add(patterns[half:])

    def hits(self, text: str) -> frozenset[str]:
        """The patterns that occur in ``text``."""
        encoded = text.encode("utf-8")  # once for every set
        found = [members[i] for compiled, members in self.sets
                 for i in compiled.Match(encoded) or ()]
        found += [p for p in self.alone if compile_regex(p).search(text) is not None]
        return frozenset(found)


def _compiled_set(patterns: tuple[str, ...]) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = max(_MIN_SET_MEMORY, len(patterns) * _SET_MEMORY_PER_PATTERN)
    compiled = re2.Set.SearchSet(options)
    for pattern in patterns:
        compiled.Add(pattern)
    compiled.Compile()
    return compiled


@lru_cache(maxsize=64)
def pattern_set(patterns: tuple[str, ...]) -> PatternSet:
    """A cached :class:`PatternSet` for ``patterns`` (each already valid on its own)."""
    return PatternSet(patterns)


def keyword_pattern(keyword: str) -> str:
    """The RE2 pattern finding ``keyword`` anywhere, ignoring case (so it joins a set)."""
    return "(?i)" + str(re2.escape(keyword))
