"""Routing stays near-linear at scale: shadowing checks, the one-pass RE2 set, keyword lists.

These count work (predicate comparisons, sets compiled, lowercasings), never time:
the timings live in bench/bench_routing.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from switchman.engine import userregex
from switchman.engine.clock import ManualClock
from switchman.engine.config import shadowing
from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.policy import RoutingPolicy, Rule, effective_policy
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.config.shadowing import ShadowIndex
from switchman.engine.routing import predicates
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.predicates import build_predicate, implies, message_patterns
from switchman.engine.routing.ruleindex import RuleIndex
from switchman.engine.routing.validation import CandidateValidator
from switchman.engine.userregex import compile_regex, keyword_pattern, pattern_set

REGISTRY = builtin_registry()
MODEL = "anthropic:claude-haiku-4-5"

conjuncts = st.one_of(
    st.builds(lambda v: {"message_contains_any": v},
              st.lists(st.sampled_from("abcde"), min_size=1, max_size=3, unique=True)),
    st.builds(lambda v: {"file_extensions_in_context": v},
              st.lists(st.sampled_from(["py", "ts", "md"]), min_size=1, max_size=2, unique=True)),
    st.builds(lambda v: {"estimated_input_tokens_gt": v}, st.integers(0, 4)),
    st.builds(lambda v: {"estimated_input_tokens_lt": v}, st.integers(0, 4)),
    st.builds(lambda v: {"cost_today_exceeds_usd": v}, st.integers(0, 3)),
    st.builds(lambda v: {"has_images": v}, st.booleans()),
    st.builds(lambda v: {"message_matches": v}, st.sampled_from(["x", "y"])),
)
conditions = st.lists(conjuncts, max_size=3).map(lambda parts: {"all_of": parts} if parts else {})


@settings(max_examples=300, deadline=None)
@given(st.lists(conditions, min_size=1, max_size=12))
def test_shadow_index_finds_the_first_shadowing_rule(whens: list[dict[str, Any]]) -> None:
    index = ShadowIndex()
    rules: list[Rule] = []
    for i, when in enumerate(whens):
        rule = Rule(name=f"r{i}", use=MODEL, when=build_predicate(when) if when else
                    build_predicate({"all_of": []}))
        expected = next((prior for prior in rules if implies(prior.when, rule.when)), None)
        assert index.add(rule) is expected
        rules.append(rule)


def _rules_file(count: int, condition: Callable[[int], str]) -> str:
    lines = ["schema_version: 1", "global_default: anthropic:claude-sonnet-4-6", "rules:"]
    for i in range(count):
        lines += [f"  - name: rule {i}", f"    when: {{{condition(i)}}}", f"    use: {MODEL}"]
    return "\n".join(lines) + "\n"


def _keyword_file(count: int) -> str:
    return _rules_file(count, lambda i: f'message_contains_any: ["kw{i}", "alt{i}"]')


def _threshold_file(count: int) -> str:
    return _rules_file(count, lambda i: f"estimated_input_tokens_gt: {count - i}")


@pytest.mark.parametrize("text", [_keyword_file(1000), _threshold_file(1000)],
                         ids=["keyword-lists", "thresholds"])
def test_shadowing_1000_rules_compares_a_near_linear_number_of_pairs(
        text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = 0

    def counting(earlier: Any, later: Any) -> bool:
        nonlocal calls
        calls += 1
        return implies(earlier, later)

    monkeypatch.setattr(shadowing, "implies", counting)
    policy, problems = check_routing_text(text, "routing.yaml", REGISTRY)
    assert policy is not None and len(policy.rules) == 1000
    assert [p for p in problems if p.code == "shadowed-rule"] == []
    assert calls < 5000  # all pairs would be ~500,000


def test_shadowing_still_reported_in_a_long_threshold_file() -> None:
    text = _threshold_file(300).replace("estimated_input_tokens_gt: 300}",
                                        "estimated_input_tokens_gt: 1}")
    _, problems = check_routing_text(text, "routing.yaml", REGISTRY)
    shadowed = [p for p in problems if p.code == "shadowed-rule"]
    assert len(shadowed) == 299  # rule 0 (> 1) now shadows every later rule (> 299 ... > 1)
    assert all(p.data and p.data["shadowed_by"] == "rule 0" for p in shadowed)


def _regexes(count: int) -> tuple[str, ...]:
    return tuple(f"(?i)(deploy|migrat|refactor)-{i}[a-z]+\\b" for i in range(count))


def test_5000_regexes_take_the_one_pass_set() -> None:
    patterns = _regexes(5000)
    matched = pattern_set(patterns)
    assert len(matched.sets) == 1 and matched.alone == []
    assert matched.hits("lorem ipsum MIGRAT-4999abc and deploy-17x") == {patterns[4999],
                                                                        patterns[17]}


def test_a_set_over_its_budget_is_split_not_dropped(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(userregex, "_MIN_SET_MEMORY", 1 << 20)
    monkeypatch.setattr(userregex, "_SET_MEMORY_PER_PATTERN", 0)
    patterns = _regexes(2000)
    matched = userregex.PatternSet(patterns)
    assert len(matched.sets) > 1
    assert sum(len(members) for _, members in matched.sets) + len(matched.alone) == 2000
    text = "deploy-0a refactor-1999zz"
    assert matched.hits(text) == {p for p in patterns if compile_regex(p).search(text)}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["Fix", "é", "a.b", "(x)", "ÉTÉ", "bug"]), min_size=1,
                unique=True),
       st.text(alphabet=st.sampled_from(list("fixFIXéÉtTa.b(x)BUGg \n")), max_size=40))
def test_keyword_patterns_agree_with_lowercased_search(keywords: list[str], text: str) -> None:
    patterns = tuple(keyword_pattern(k.lower()) for k in keywords)
    hits = pattern_set(patterns).hits(text)
    assert hits == {p for p, k in zip(patterns, keywords, strict=True)
                    if k.lower() in text.lower()}


class CountingStr(str):
    """A message that counts how often it is lowercased."""

    lowered = 0

    def lower(self) -> str:
        CountingStr.lowered += 1
        return super().lower()


def test_a_decision_never_lowercases_the_message_per_keyword_rule() -> None:
    rules = tuple(Rule(name=f"k{i}", use=MODEL,
                       when=build_predicate({"message_contains_any": [f"Word{i}x", "other"]}),
                       message_patterns=(keyword_pattern(f"word{i}x"), keyword_pattern("other")))
                  for i in range(20))
    global_policy = RoutingPolicy(global_default="anthropic:claude-sonnet-4-6", rules=rules)
    policy = effective_policy(global_policy, None, None)
    clock = ManualClock()
    chain = PolicyChain(REGISTRY, policy, CandidateValidator(REGISTRY, lambda p: True,
                                                             lambda p, m: None), clock)
    message = CountingStr("x" * 1000 + " WORD19X ")
    decision = chain.decide(RouteRequest(context=TurnContext(message=message)))
    assert decision.winner is not None and decision.winner.rule_name == "k19"
    assert CountingStr.lowered == 0


@pytest.mark.parametrize("images", [False, True])
def test_a_condition_shared_by_many_any_of_rules_is_evaluated_once_per_decision(
        monkeypatch: pytest.MonkeyPatch, images: bool) -> None:
    """An ``any_of`` of a regex and a condition on the turn used to be evaluated rule by rule
    (1,250 of them in a 5,000-rule policy: the decision grew faster than the rules)."""
    rules = tuple(Rule(name=f"r{i}", use=MODEL, when=(pred := build_predicate({"any_of": [
        {"message_matches": f"ticket-{i}x$"}, {"not": {"has_images": False}}]})),
        message_patterns=message_patterns(pred)) for i in range(200))
    policy = effective_policy(RoutingPolicy(global_default=MODEL, rules=rules), None, None)
    chain = PolicyChain(REGISTRY, policy, CandidateValidator(REGISTRY, lambda p: True,
                                                             lambda p, m: None), ManualClock())
    evaluated: list[bool] = []
    real_test = predicates.HasImages.test

    def counting(self: predicates.HasImages, ctx: TurnContext) -> bool:
        evaluated.append(True)
        return real_test(self, ctx)

    monkeypatch.setattr(predicates.HasImages, "test", counting)
    decision = chain.decide(RouteRequest(context=TurnContext(message="see ticket-199x",
                                                             has_images=images)))
    assert decision.winner is not None
    assert decision.winner.rule_name == ("r0" if images else "r199")
    assert len(evaluated) == (2 if images else 1)  # the shared condition; r0's own when matched


nested = st.one_of(conditions, st.builds(lambda a, b: {"any_of": [a or {"has_images": True}, b]},
                                         conditions, conjuncts),
                   st.builds(lambda a: {"not": a}, conjuncts))


@settings(max_examples=300, deadline=None)
@given(st.lists(nested, min_size=1, max_size=10),
       st.text(alphabet=st.sampled_from(list("abcdexyzABX ")), max_size=20), st.booleans())
def test_skipping_rules_whose_patterns_missed_matches_evaluating_every_rule(
        whens: list[dict[str, Any]], message: str, images: bool) -> None:
    rules = tuple(Rule(name=f"r{i}", use=MODEL, when=(pred := build_predicate(when or
                                                                               {"all_of": []})),
                       message_patterns=message_patterns(pred)) for i, when in enumerate(whens))
    index = RuleIndex(rules)
    plain = TurnContext(message=message, estimated_input_tokens=2, has_images=images)
    prepared = TurnContext(message=message, estimated_input_tokens=2, has_images=images,
                           message_hits=pattern_set(index.patterns).hits(message))
    assert [r for r in index.candidates(prepared) if r.when.matches(prepared)] == \
        [r for r in rules if r.when.matches(plain)]
