"""The rules of a policy, indexed by the message patterns that gate them.

The chain matches every message pattern of every rule in one RE2 pass
(:mod:`switchman.engine.userregex`). A rule whose condition needs one of its
patterns to occur (a ``message_matches`` or ``message_contains_any`` that must
hold) cannot match when none did, so only the rules gated by a pattern that
was found, and the rules without such a gate, are evaluated: a decision costs
the rules that could match, not every rule in the file.
"""

from __future__ import annotations

from collections.abc import Iterator
from heapq import merge
from typing import TYPE_CHECKING

from switchman.engine.routing.predicates import message_gate

if TYPE_CHECKING:
    from switchman.engine.config.policy import Rule


class RuleIndex:
    """Rules in order, with the one-pass pattern list and each pattern's gated rules."""

    def __init__(self, rules: tuple[Rule, ...]) -> None:
        self.rules = rules
        self.patterns = tuple(dict.fromkeys(p for rule in rules for p in rule.message_patterns))
        """Every message pattern, once, in rule order (what the RE2 set matches)."""
        self._ungated: list[int] = []
        self._gated: dict[str, list[int]] = {}
        self._named: dict[str, Rule] = {}
        for position, rule in enumerate(rules):
            self._named.setdefault(rule.name, rule)
            gate = message_gate(rule.when)
            if gate is None:
                self._ungated.append(position)
            for pattern in gate or ():
                self._gated.setdefault(pattern, []).append(position)

    def named(self, name: str) -> Rule | None:
        """The first rule called ``name``."""
        return self._named.get(name)

    def candidates(self, hits: frozenset[str] | None) -> Iterator[Rule]:
        """The rules that can match, in order, given the patterns found (None: unknown)."""
        if hits is None:
            yield from self.rules
            return
        gated = sorted({p for pattern in hits for p in self._gated.get(pattern, ())})
        for position in merge(self._ungated, gated):
            yield self.rules[position]
