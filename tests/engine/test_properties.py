"""Property-based tests: loaders and predicates never raise; the chain always decides."""

from __future__ import annotations

from datetime import time
from decimal import Decimal
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from switchman.engine.availability import Unavailability
from switchman.engine.clock import ManualClock
from switchman.engine.config import schema as s
from switchman.engine.config.builtin import builtin_policy, builtin_registry
from switchman.engine.config.check import FileKind, check_text
from switchman.engine.config.policy import effective_policy
from switchman.engine.config.problems import Problem
from switchman.engine.errors import NoModelAvailable
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import Verdict
from switchman.engine.routing.predicates import build_predicate
from switchman.engine.routing.validation import CandidateValidator
from switchman.engine.userregex import compile_regex, pattern_set

REGISTRY = builtin_registry()
KEYS = sorted({*s.ROUTING_FILE.fields, *s.WORKSPACE_FILE.fields, *s.MODELS_FILE.fields,
               *s.RULE.fields, *s.PREDICATES, *s.PROVIDER.fields, *s.MODEL.fields,
               *s.CAPABILITIES.fields, *s.PRICING.fields, *s.TIERS.fields, *s.PATTERN.fields,
               "anthropic:claude-opus-4-7", "/code/x", "providers", "base_url"})

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(-10**6, 10**6),
    st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=20),
    st.sampled_from(["opus", "haiku", "22:00", "(a)\\1", "[", "*", "~", "06:00", "gpt-5"]),
)
documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.sampled_from(KEYS), st.text(max_size=8)), children,
                        max_size=5),
    ),
    max_leaves=30,
)


def _check_all_kinds(text: str) -> None:
    for kind, path in ((FileKind.ROUTING, "routing.yaml"), (FileKind.MODELS, "models.yaml"),
                       (FileKind.WORKSPACE, "/w/.switchman/routing.yaml")):
        found = check_text(kind, text, path, REGISTRY)
        assert all(isinstance(p, Problem) for p in found)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_arbitrary_yaml_documents_never_make_the_loader_raise(document: Any) -> None:
    _check_all_kinds(yaml.safe_dump(document, allow_unicode=True))


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_arbitrary_text_never_makes_the_loader_raise(text: str) -> None:
    _check_all_kinds(text)


leaf_predicates = st.one_of(
    st.builds(lambda v: {"message_matches": v}, st.sampled_from(["a", "^x", "(?i)arch", ""])),
    st.builds(lambda v: {"message_contains_any": v}, st.lists(st.text(max_size=5), min_size=1)),
    st.builds(lambda v: {"estimated_input_tokens_gt": v}, st.integers(0, 10**7)),
    st.builds(lambda v: {"estimated_input_tokens_lt": v}, st.integers(0, 10**7)),
    st.builds(lambda v: {"has_images": v}, st.booleans()),
    st.builds(lambda v: {"has_tool_calls_in_history": v}, st.booleans()),
    st.builds(lambda v: {"skills_matching_message_includes": v},
              st.lists(st.text(max_size=5), min_size=1)),
    st.builds(lambda v: {"file_extensions_in_context": v},
              st.lists(st.text(max_size=5), min_size=1)),
    st.builds(lambda v: {"workspace_path_matches": v}, st.sampled_from(["/", "x$", ".*"])),
    st.builds(lambda a, b: {"time_of_day_between": (a, b)}, st.integers(0, 1439),
              st.integers(0, 1439)),
    st.builds(lambda v: {"cost_today_exceeds_usd": v}, st.floats(0, 1e6)),
)
when_blocks = st.recursive(
    leaf_predicates,
    lambda inner: st.one_of(
        st.builds(lambda items: {"any_of": items}, st.lists(inner, max_size=3)),
        st.builds(lambda items: {"all_of": items}, st.lists(inner, max_size=3)),
        st.builds(lambda item: {"not": item}, inner),
        st.builds(lambda a, b: {**a, **b}, inner, inner),
    ),
    max_leaves=12,
)
contexts = st.builds(
    TurnContext,
    message=st.text(max_size=50),
    has_images=st.booleans(),
    estimated_input_tokens=st.integers(0, 10**7),
    has_tool_calls_in_history=st.booleans(),
    files_touched=st.lists(st.text(max_size=12), max_size=4).map(tuple),
    workspace_path=st.one_of(st.none(), st.text(max_size=20)),
    local_time=st.one_of(st.none(), st.times().map(lambda t: time(t.hour, t.minute))),
    cost_today_usd=st.decimals(0, 1000, places=2, allow_nan=False),
    skills_matching=st.frozensets(st.text(max_size=5), max_size=3),
)


@settings(max_examples=500, deadline=None)
@given(when_blocks, contexts)
def test_predicate_trees_always_evaluate_to_a_bool(when: dict[str, Any], ctx: TurnContext) -> None:
    assert isinstance(build_predicate(when).matches(ctx), bool)


MODELS = list(REGISTRY.models)
PROVIDERS = list(REGISTRY.providers)


@settings(max_examples=300, deadline=None)
@given(
    contexts,
    st.sets(st.sampled_from(PROVIDERS)),
    st.sets(st.sampled_from(MODELS + PROVIDERS)),
    st.one_of(st.none(), st.sampled_from(MODELS)),
    st.one_of(st.none(), st.sampled_from(["fast", "balanced", "deep"])),
)
def test_the_chain_chooses_a_valid_model_or_fails_with_a_typed_error(
    ctx: TurnContext, configured: set[str], down: set[str], sticky: str | None, tier: str | None
) -> None:
    def availability(provider: str, model: str) -> Unavailability | None:
        hit = provider in down or model in down
        return Unavailability("model", provider, model, "down") if hit else None

    validator = CandidateValidator(REGISTRY, lambda p: p.name in configured, availability)
    policy = builtin_policy(REGISTRY)
    assert policy is not None
    chain = PolicyChain(REGISTRY, effective_policy(policy, None, None), validator, ManualClock())
    request = RouteRequest(context=ctx, turn_id="t", sticky_model=sticky, delegate_tier=tier)
    try:
        decision = chain.decide(request)
    except NoModelAvailable as failure:
        assert failure.decision.chosen_model is None
        assert all(e.verdict is not Verdict.CHOSE for e in failure.decision.chain)
        return
    assert decision.winner is not None
    assert decision.winner.verdict is Verdict.CHOSE
    assert validator.validate(decision.chosen_model or "", ctx) is None
    assert sum(e.verdict is Verdict.CHOSE for e in decision.chain) == 1
    assert Decimal(0) <= ctx.cost_today_usd


PATTERNS = ["^/commit", "(?i)arch", "needle-[0-9]+$", "a|b", "x{2,}", "\\bword\\b", "[a-z]+-\\d",
            "(?i)^$", "é", "😀"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PATTERNS), min_size=1, unique=True),
       st.text(alphabet=st.sampled_from(list("abx/ commitARCHneedl-0123é😀word\n")), max_size=60))
def test_one_pass_pattern_set_agrees_with_separate_searches(patterns: list[str],
                                                            text: str) -> None:
    hits = pattern_set(tuple(patterns)).hits(text)
    assert hits == frozenset(p for p in patterns if compile_regex(p).search(text) is not None)
