"""Finding the earlier rule that shadows a later one, in near-linear time over a file.

An earlier rule shadows a later one when its condition holds whenever the
later one's does (:func:`implies`). Comparing every pair is quadratic: a
file of 1,000 keyword rules took 1.5 s. Two levels of index avoid that:

1. Buckets by :func:`shadow_key` (the exact conjuncts and the kinds of
   ordered ones): a later rule only meets the buckets whose key is a subset
   of its own.
2. Inside a bucket, through the later rule's ordered conjuncts: for a list
   (keywords, extensions, skills) only earlier rules whose lists hold its
   rarest item can hold all of it; for a threshold, the earliest rule at most
   as strict is found by bisection over the running minimum.

Candidates are confirmed with :func:`implies`, earliest first, so the rule
reported is the first one that shadows.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Iterable, Sequence
from decimal import Decimal
from itertools import combinations
from typing import Any

from switchman.engine.config.policy import Rule
from switchman.engine.routing.predicates import (
    ORDERED_KINDS,
    CostTodayExceeds,
    FileExtensions,
    MessageContainsAny,
    Predicate,
    SkillsMatching,
    TokensAbove,
    TokensBelow,
    implies,
    shadow_key,
)

ShadowKey = tuple[frozenset[Any], frozenset[Any]]
Keys = tuple[ShadowKey, list[ShadowKey]]


class ShadowIndex:
    """Earlier rules, indexed so a later rule only meets the ones that could shadow it."""

    MAX_SUBSET_BITS = 12

    def __init__(self) -> None:
        self._buckets: dict[ShadowKey, _Bucket] = {}
        self._count = 0

    def add(self, rule: Rule, keys: Keys | None = None) -> Rule | None:
        """Index ``rule``; return the first earlier rule that shadows it, if any.

        ``keys`` are :meth:`keys_for` the rule's condition, if already known.
        """
        key, candidates = keys or self.keys_for(rule.when)
        found = [hit for candidate in candidates
                 if (bucket := self._buckets.get(candidate)) is not None
                 and (hit := bucket.first_shadowing(rule.when)) is not None]
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = _Bucket(key[1])
        bucket.add(self._count, rule)
        self._count += 1
        return min(found, key=lambda hit: hit[0])[1] if found else None

    @classmethod
    def keys_for(cls, when: Predicate) -> Keys:
        """A condition's own bucket, and the buckets of earlier rules that could shadow it."""
        exact, kinds = key = shadow_key(when)
        if len(exact) + len(kinds) > cls.MAX_SUBSET_BITS:  # absurd rules: only the cheap cases
            return key, [(frozenset(), frozenset()), (exact, kinds)]
        return key, [(frozenset(a), frozenset(b)) for a in _subsets(exact)
                     for b in _subsets(kinds)]


class _Bucket:
    """Rules with the same exact conjuncts and kinds of ordered conjuncts, in file order."""

    def __init__(self, kinds: frozenset[type[Predicate]]) -> None:
        self.kinds = kinds
        self.rules: list[tuple[int, Rule]] = []
        self.holders: dict[tuple[type[Predicate], Any], list[int]] = {}
        """(list kind, item) -> positions of the rules whose lists of that kind hold the item."""
        self.bounds: dict[type[Predicate], list[Any]] = {}
        """Threshold kind -> running maximum of minus the strictness, by position
        (non-decreasing, so it can be bisected)."""

    def add(self, order: int, rule: Rule) -> None:
        position = len(self.rules)
        self.rules.append((order, rule))
        for kind, parts in _ordered(rule.when, self.kinds).items():
            if kind in _LIST_KINDS:
                for item in frozenset().union(*(_items(p) for p in parts)):
                    self.holders.setdefault((kind, item), []).append(position)
            else:
                bound = -_strictness(parts)
                running = self.bounds.setdefault(kind, [])
                running.append(max(bound, running[-1]) if running else bound)

    def first_shadowing(self, when: Predicate) -> tuple[int, Rule] | None:
        """The earliest rule here whose condition ``when`` implies, with its file order."""
        for position in self._candidates(when):
            order, prior = self.rules[position]
            if implies(prior.when, when):
                return order, prior
        return None

    def _candidates(self, when: Predicate) -> Iterable[int]:
        ordered = _ordered(when, self.kinds)
        lists = [self._holding_all(kind, parts[0]) for kind, parts in ordered.items()
                 if kind in _LIST_KINDS and len(parts) == 1 and _items(parts[0])]
        if lists:
            return min(lists, key=len)
        for kind, parts in ordered.items():
            if kind not in _LIST_KINDS:  # a threshold: skip the rules that are stricter
                return range(bisect_left(self.bounds[kind], -_strictness(parts)),
                             len(self.rules))
        return range(len(self.rules))

    def _holding_all(self, kind: type[Predicate], part: Predicate) -> list[int]:
        """A superset of the rules whose lists of ``kind`` hold every item of ``part``."""
        return min((self.holders.get((kind, item), []) for item in _items(part)), key=len)


_LIST_KINDS = (MessageContainsAny, FileExtensions, SkillsMatching)


def _ordered(when: Predicate, kinds: frozenset[type[Predicate]]
             ) -> dict[type[Predicate], list[Predicate]]:
    found: dict[type[Predicate], list[Predicate]] = {}
    for part in when.conjuncts():
        if isinstance(part, ORDERED_KINDS) and type(part) in kinds:
            found.setdefault(type(part), []).append(part)
    return found


def _items(part: Predicate) -> frozenset[Any]:
    match part:
        case MessageContainsAny(items) | FileExtensions(items) | SkillsMatching(items):
            return items
    return frozenset()


def _strictness(parts: Sequence[Predicate]) -> Decimal:
    """How strict the strictest threshold of one kind is (a stricter one implies the others)."""
    values: list[Decimal] = []
    for part in parts:
        match part:
            case TokensAbove(value) | CostTodayExceeds(value):
                values.append(Decimal(value))
            case TokensBelow(value):
                values.append(-Decimal(value))
    return max(values)


def _subsets(items: frozenset[Any]) -> list[tuple[Any, ...]]:
    ordered = list(items)
    return [c for n in range(len(ordered) + 1) for c in combinations(ordered, n)]
