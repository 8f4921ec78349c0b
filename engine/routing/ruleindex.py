"""The rules of a policy, indexed by the message patterns that gate them.

The chain matches every message pattern of every rule in one RE2 pass
(:mod:`switchman.engine.userregex`). A rule whose condition needs one of its
patterns to occur (a ``message_matches`` or ``message_contains_any`` that must
hold) cannot match when none did, so only the rules gated by a pattern that
was found, and the rules without such a gate, are evaluated: a decision costs
the rules that could match, not every rule in the file. An ``any_of`` mixing
patterns with conditions on the turn (``not: {has_images: false}``) is gated
by both: each distinct condition is evaluated once per decision and lets its
rules through only when it holds (see :func:`predicates.message_gate`).
"""

from __future__ import annotations

from collections.abc import Iterator
from heapq import merge
from typing import TYPE_CHECKING

from switchman.engine.routing.predicates import GateTerm, Predicate, message_gate

if TYPE_CHECKING:
    from switchman.engine.config.policy import Rule
    from switchman.engine.routing.context import TurnContext


class RuleIndex:
    """Rules in order, with the one-pass pattern list and each pattern's gated rules."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.patterns = tuple(dict.fromkeys(p for rule in rules for p in rule.message_patterns))
        """Every message pattern, once, in rule order (what the RE2 set matches)."""
        self._ungated: list[int] = []
        self._gated: dict[GateTerm, list[int]] = {}
        self._conditions: list[Predicate] = []
        """The gate terms that are conditions on the turn (each evaluated once per decision)."""
        self._named: dict[str, Rule] = {}
        for position, rule in enumerate(rules):
            self._named.setdefault(rule.name, rule)
            gate = message_gate(rule.when)
            if gate is None:
                self._ungated.append(position)
            for term in gate or ():
                if isinstance(term, Predicate) and term not in self._gated:
                    self._conditions.append(term)
                self._gated.setdefault(term, []).append(position)

    def named(self, name: str) -> Rule | None:
        """The first rule called ``name``."""
        return self._named.get(name)

    def candidates(self, ctx: TurnContext) -> Iterator[Rule]:
        """The rules that can match the turn, in order, given the patterns found in its
        message (``ctx.message_hits``; None: unknown, every rule is a candidate)."""
        hits = ctx.message_hits
        if hits is None:
            yield from self.rules
            return
        terms: list[GateTerm] = [*hits, *(c for c in self._conditions if c.matches(ctx))]
        gated = sorted({p for term in terms for p in self._gated.get(term, ())})
        for position in merge(self._ungated, gated):
            yield self.rules[position]
