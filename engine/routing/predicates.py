"""The closed set of rule predicates and their evaluation.

Each predicate reads one documented input from :class:`TurnContext`. Trees
are built from validated ``when`` blocks; several keys in one block are
implicitly combined with ``all_of``. Evaluation never raises: a predicate that
cannot be decided is false.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from switchman.engine.routing.context import TurnContext
from switchman.engine.userregex import CompiledRegex, compile_regex, keyword_pattern

log = logging.getLogger(__name__)


class Predicate:
    """Base class: a yes/no question about a turn."""

    key = ""

    def test(self, ctx: TurnContext) -> bool:
        """Answer the question; subclasses implement this."""
        raise NotImplementedError

    def matches(self, ctx: TurnContext) -> bool:
        """Answer the question; any unexpected failure counts as no match."""
        try:
            return bool(self.test(ctx))
        except Exception:  # a rule must never break routing
            log.exception("predicate %s failed; treated as no match", self.key)
            return False

    def conjuncts(self) -> tuple[Predicate, ...]:
        """The parts that must all hold (itself, unless it is an ``all_of``)."""
        return (self,)


@dataclass(frozen=True)
class MessageMatches(Predicate):
    pattern: str
    regex: CompiledRegex = field(compare=False, repr=False, hash=False)
    key = "message_matches"

    def test(self, ctx: TurnContext) -> bool:
        if ctx.message_hits is not None:
            return self.pattern in ctx.message_hits
        return self.regex.search(ctx.message) is not None


@dataclass(frozen=True)
class MessageContainsAny(Predicate):
    needles: frozenset[str]
    patterns: tuple[str, ...] = field(compare=False, repr=False, hash=False, default=())
    """One case-insensitive RE2 pattern per needle, so keyword lists join the one-pass set."""
    key = "message_contains_any"

    def test(self, ctx: TurnContext) -> bool:
        if ctx.message_hits is not None:
            return any(p in ctx.message_hits for p in self.patterns)
        text = ctx.message.lower()
        return any(n in text for n in self.needles)


@dataclass(frozen=True)
class TokensAbove(Predicate):
    threshold: int
    key = "estimated_input_tokens_gt"

    def test(self, ctx: TurnContext) -> bool:
        return ctx.estimated_input_tokens > self.threshold


@dataclass(frozen=True)
class TokensBelow(Predicate):
    threshold: int
    key = "estimated_input_tokens_lt"

    def test(self, ctx: TurnContext) -> bool:
        return ctx.estimated_input_tokens < self.threshold


@dataclass(frozen=True)
class HasImages(Predicate):
    expected: bool
    key = "has_images"

    def test(self, ctx: TurnContext) -> bool:
        return ctx.has_images == self.expected


@dataclass(frozen=True)
class HasToolCallsInHistory(Predicate):
    expected: bool
    key = "has_tool_calls_in_history"

    def test(self, ctx: TurnContext) -> bool:
        return ctx.has_tool_calls_in_history == self.expected


@dataclass(frozen=True)
class SkillsMatching(Predicate):
    skills: frozenset[str]
    key = "skills_matching_message_includes"

    def test(self, ctx: TurnContext) -> bool:
        return bool(self.skills & ctx.skills_matching)


@dataclass(frozen=True)
class FileExtensions(Predicate):
    extensions: frozenset[str]
    key = "file_extensions_in_context"

    def test(self, ctx: TurnContext) -> bool:
        return bool(self.extensions & ctx.extensions())


@dataclass(frozen=True)
class WorkspacePathMatches(Predicate):
    pattern: str
    regex: CompiledRegex = field(compare=False, repr=False, hash=False)
    key = "workspace_path_matches"

    def test(self, ctx: TurnContext) -> bool:
        path = ctx.workspace_path
        return path is not None and self.regex.search(path) is not None


@dataclass(frozen=True)
class TimeOfDayBetween(Predicate):
    start_minute: int
    end_minute: int
    key = "time_of_day_between"

    def test(self, ctx: TurnContext) -> bool:
        if ctx.local_time is None:
            return False
        now = ctx.local_time.hour * 60 + ctx.local_time.minute
        if self.start_minute < self.end_minute:
            return self.start_minute <= now < self.end_minute
        return now >= self.start_minute or now < self.end_minute


@dataclass(frozen=True)
class CostTodayExceeds(Predicate):
    usd: Decimal
    key = "cost_today_exceeds_usd"

    def test(self, ctx: TurnContext) -> bool:
        return ctx.cost_today_usd > self.usd


@dataclass(frozen=True)
class AnyOf(Predicate):
    items: tuple[Predicate, ...]
    key = "any_of"

    def test(self, ctx: TurnContext) -> bool:
        return any(p.matches(ctx) for p in self.items)


@dataclass(frozen=True)
class AllOf(Predicate):
    items: tuple[Predicate, ...]
    key = "all_of"

    def test(self, ctx: TurnContext) -> bool:
        return all(p.matches(ctx) for p in self.items)

    def conjuncts(self) -> tuple[Predicate, ...]:
        return tuple(c for p in self.items for c in p.conjuncts())


@dataclass(frozen=True)
class Not(Predicate):
    item: Predicate
    key = "not"

    def test(self, ctx: TurnContext) -> bool:
        return not self.item.matches(ctx)


ALWAYS = AllOf(())


def _extension(text: str) -> str:
    text = text.strip().lower()
    return text if text.startswith(".") else "." + text


_BUILDERS: dict[str, Any] = {
    "message_matches": lambda v: MessageMatches(v, compile_regex(v)),
    "message_contains_any": lambda v: _contains_any(frozenset(s.lower() for s in v)),
    "estimated_input_tokens_gt": TokensAbove,
    "estimated_input_tokens_lt": TokensBelow,
    "has_images": HasImages,
    "has_tool_calls_in_history": HasToolCallsInHistory,
    "skills_matching_message_includes": lambda v: SkillsMatching(frozenset(v)),
    "file_extensions_in_context": lambda v: FileExtensions(frozenset(map(_extension, v))),
    "workspace_path_matches": lambda v: WorkspacePathMatches(v, compile_regex(v)),
    "time_of_day_between": lambda v: TimeOfDayBetween(v[0], v[1]),
    "cost_today_exceeds_usd": lambda v: CostTodayExceeds(Decimal(str(v))),
    "any_of": lambda v: AnyOf(tuple(build_predicate(i) for i in v)),
    "all_of": lambda v: AllOf(tuple(build_predicate(i) for i in v)),
    "not": lambda v: Not(build_predicate(v)),
}


def _contains_any(needles: frozenset[str]) -> MessageContainsAny:
    return MessageContainsAny(needles, tuple(keyword_pattern(n) for n in sorted(needles)))


def _leaf(key: str, value: Any) -> Predicate:
    return _BUILDERS[key](value)  # type: ignore[no-any-return]


def build_predicate(when: Mapping[str, Any]) -> Predicate:
    """The predicate for a validated ``when`` block (keys combine with all_of)."""
    parts = tuple(_leaf(key, value) for key, value in when.items())
    return parts[0] if len(parts) == 1 else AllOf(parts)


ORDERED_KINDS: tuple[type[Predicate], ...] = (
    TokensAbove, TokensBelow, CostTodayExceeds, MessageContainsAny, FileExtensions, SkillsMatching)
"""Conjunct kinds that can imply a different value of their own kind (thresholds, sets)."""


def shadow_key(pred: Predicate) -> tuple[frozenset[Predicate], frozenset[type[Predicate]]]:
    """What an earlier rule needs a later one to contain for :func:`implies` to hold.

    Conjuncts outside :data:`ORDERED_KINDS` only imply an identical conjunct;
    ordered ones only imply conjuncts of their own kind.
    """
    parts = pred.conjuncts()
    exact = frozenset(p for p in parts if not isinstance(p, ORDERED_KINDS))
    kinds = frozenset(type(p) for p in parts if isinstance(p, ORDERED_KINDS))
    return exact, kinds


def implies(earlier: Predicate, later: Predicate) -> bool:
    """Whether ``later`` matching guarantees ``earlier`` matches (a sound, partial check).

    True when every conjunct of ``earlier`` is implied by some conjunct of
    ``later``: identical conditions, or the same kind of threshold that is at
    least as strict, or a list condition whose items are a subset.
    """
    later_parts = later.conjuncts()
    return all(any(_conjunct_implies(e, l_) for l_ in later_parts) for e in earlier.conjuncts())


def _conjunct_implies(earlier: Predicate, later: Predicate) -> bool:
    if earlier == later:
        return True
    if type(earlier) is not type(later):
        return False
    match earlier, later:
        case (TokensAbove(a), TokensAbove(b)) | (CostTodayExceeds(a), CostTodayExceeds(b)):
            return bool(b >= a)
        case TokensBelow(a), TokensBelow(b):
            return b <= a
        case (
            (MessageContainsAny(a), MessageContainsAny(b))
            | (FileExtensions(a), FileExtensions(b))
            | (SkillsMatching(a), SkillsMatching(b))
        ):
            return b <= a
    return False


def message_patterns(pred: Predicate) -> tuple[str, ...]:
    """Every RE2 pattern ``pred`` matches against the message (regexes and keywords), in order."""
    match pred:
        case MessageMatches(pattern):
            return (pattern,)
        case MessageContainsAny():
            return pred.patterns
        case AnyOf(items) | AllOf(items):
            return tuple(p for item in items for p in message_patterns(item))
        case Not(item):
            return message_patterns(item)
    return ()


GateTerm = str | Predicate
"""One way a gated rule can become a candidate: a message pattern found in the one RE2
pass, or a condition on the turn that reads no message pattern, evaluated once per
decision however many rules share it."""


def message_gate(pred: Predicate) -> frozenset[GateTerm] | None:
    """Terms of which at least one must hold for ``pred`` to hold (None: no such set).

    A term is a message pattern (it must occur) or a predicate without message
    patterns (it must be true). A rule gated this way cannot match when no term
    holds, so routing skips it without evaluating it: an ``any_of`` of a regex
    and a condition such as ``not: {has_images: false}`` costs one evaluation of
    that condition per decision, not one per rule.
    """
    match pred:
        case MessageMatches(pattern):
            return frozenset((pattern,))
        case MessageContainsAny():
            return frozenset(pred.patterns)
        case AllOf(items):
            gates = [g for g in map(message_gate, items) if g is not None]
            # A gate of patterns alone is free to test (the RE2 pass found them or not).
            return next((g for g in gates if all(isinstance(t, str) for t in g)),
                        gates[0] if gates else None)
        case AnyOf(items) if items:
            terms: set[GateTerm] = set()
            for item in items:
                gate = message_gate(item)
                if gate is None and message_patterns(item):
                    return None  # it may hold without any of its patterns occurring
                terms |= gate if gate is not None else {item}
            return frozenset(terms)
    return None


def describe(pred: Predicate) -> str:
    """A compact one-line rendering of a predicate, in routing.yaml terms."""
    match pred:
        case AllOf(items) if not items:
            return "always"
        case AllOf(items):
            return " and ".join(describe(p) for p in items)
        case AnyOf(items):
            return "any_of(" + ", ".join(describe(p) for p in items) + ")"
        case Not(item):
            return f"not({describe(item)})"
        case MessageMatches(pattern) | WorkspacePathMatches(pattern):
            return f'{pred.key} "{pattern}"'
        case TimeOfDayBetween(a, b):
            return f"{pred.key} [{a // 60:02d}:{a % 60:02d}, {b // 60:02d}:{b % 60:02d}]"
        case MessageContainsAny(v) | FileExtensions(v) | SkillsMatching(v):
            return f"{pred.key} [{', '.join(sorted(v))}]"
        case TokensAbove(v) | TokensBelow(v) | CostTodayExceeds(v):
            return f"{pred.key} {v}"
        case HasImages(v) | HasToolCallsInHistory(v):
            return f"{pred.key} {str(v).lower()}"
    return pred.key
