"""Tiers as ordered lists, complexity overrides, reasoning effort and the tier floor:
the configuration side (validation, completion, hover, JSON Schema) and the engine
functions the chain and delegation use."""

from __future__ import annotations

import pytest

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import ManualClock
from switchman.engine.config.builtin import (
    builtin_models_values,
    builtin_registry,
    builtin_routing_values,
)
from switchman.engine.config.check import FileKind
from switchman.engine.config.jsonschema import json_schema
from switchman.engine.config.models_file import check_models_text
from switchman.engine.config.policy import RoutingPolicy, effective_policy
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.profiles_file import check_profiles_text
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_text, check_workspace_text
from switchman.engine.delegation.contract import DELEGATE_SPEC, ArgumentProblem, parse_call
from switchman.engine.editing.editing import tier_text
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.explain import render
from switchman.engine.routing.tiers import estimate_complexity, model_tier, resolve_effort
from switchman.engine.routing.validation import CandidateValidator
from tests.engine.test_config_completion_hover import hover_at, labels

HAIKU, SONNET, OPUS = ("anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6",
                       "anthropic:claude-opus-4-7")
MINI, GPT5 = "openai:gpt-5-mini", "openai:gpt-5"


def registry() -> ModelRegistry:
    return builtin_registry()


def check(text: str) -> tuple[RoutingPolicy | None, list[Problem]]:
    reg = registry()
    return check_routing_text(text, "routing.yaml", reg, builtin_routing_values(reg))


def with_models(text: str) -> ModelRegistry:
    """The built-in registry with ``text`` (a models.yaml) merged over it."""
    merged, problems = check_models_text(text, "models.yaml", builtin_models_values())
    assert merged is not None, problems
    return merged


def test_a_tier_takes_an_ordered_list_or_one_model() -> None:
    policy, problems = check("global_default: sonnet\ntiers:\n  fast: [haiku, gpt-5-mini]\n"
                             "  balanced: sonnet\n  deep: [opus]\n")
    assert problems == []
    assert policy is not None and policy.tiers is not None
    assert policy.tiers.models("fast") == (HAIKU, MINI)
    assert policy.tiers.models("balanced") == (SONNET,)
    assert policy.tiers.get("fast") == HAIKU


def test_an_unknown_model_in_a_list_is_located_at_that_item() -> None:
    text = "global_default: sonnet\ntiers:\n  fast: [haiku, gpt-5-mni]\n  balanced: sonnet\n" \
           "  deep: opus\n"
    policy, problems = check(text)
    assert policy is None
    [problem] = problems
    assert problem.code is Code.UNKNOWN_MODEL
    line = text.splitlines()[2]
    assert (problem.range.start.line, problem.range.start.character) == (2, line.index("gpt"))
    assert problem.range.end.character == line.index("]")
    assert "gpt-5-mini" in problem.message


def test_an_empty_tier_list_is_an_error() -> None:
    _, problems = check("global_default: sonnet\ntiers:\n  fast: []\n  balanced: sonnet\n"
                        "  deep: opus\n")
    assert [p.code for p in problems] == [Code.INVALID_TYPE]


def test_workspace_tiers_still_need_all_three() -> None:
    reg = registry()
    policy, problems = check_workspace_text("tiers:\n  fast: [gpt-5-mini, haiku]\n"
                                            "  effort: {fast: low}\n", "ws.yaml", reg, "/w")
    assert policy is None
    assert [p.code for p in problems] == [Code.PARTIAL_TIERS]
    policy, problems = check_workspace_text(
        "tiers:\n  fast: [gpt-5-mini, haiku]\n  balanced: gpt-5\n  deep: opus\n"
        "  complexity:\n    deep: {trivial: sonnet}\n", "ws.yaml", reg, "/w")
    assert problems == []
    assert policy is not None and policy.tiers is not None
    assert policy.tiers.models("fast") == (MINI, HAIKU)
    assert policy.tiers.for_complexity("deep", "trivial") == (SONNET,)
    assert policy.tiers.for_complexity("deep", "large") is None  # inherits


def test_complexity_levels_and_effort_values_are_checked() -> None:
    text = "global_default: sonnet\ntiers:\n  fast: haiku\n  balanced: sonnet\n  deep: opus\n" \
           "  complexity:\n    deep: {hard: opus}\n  effort: {deep: extreme}\n"
    _, problems = check(text)
    codes = sorted(p.code.value for p in problems)
    assert codes == [Code.INVALID_VALUE.value, Code.UNKNOWN_KEY.value]
    effort = next(p for p in problems if p.code is Code.INVALID_VALUE)
    assert effort.range.start.line == 7
    assert "low, medium, high" in effort.message


def test_effort_on_a_model_without_the_setting_is_a_located_warning() -> None:
    reg = with_models("models:\n  ollama:qwen2.5-coder:\n    aliases: [qwen]\n")
    text = "global_default: sonnet\ntiers:\n  fast: [haiku, qwen]\n  balanced: sonnet\n" \
           "  deep: opus\n  effort:\n    fast: low\n    deep: high\n"
    policy, problems = check_routing_text(text, "routing.yaml", reg, builtin_routing_values(reg))
    assert policy is not None  # a warning: the policy still applies
    [warning] = problems
    assert warning.code is Code.EFFORT_UNSUPPORTED
    assert warning.severity is Severity.WARNING
    assert warning.range.start.line == 6
    assert "ollama:qwen2.5-coder" in warning.message and "haiku" not in warning.message


def test_inverted_tiers_are_a_located_warning_per_tier() -> None:
    text = "global_default: sonnet\ntiers: {fast: opus, balanced: sonnet, deep: haiku}\n"
    policy, problems = check(text)
    assert policy is not None  # warnings: the policy still applies
    assert [(p.code, p.severity, p.range.start.line, p.range.start.character)
            for p in problems] == [(Code.INVERTED_TIERS, Severity.WARNING, 1, 30),
                                   (Code.INVERTED_TIERS, Severity.WARNING, 1, 44)]
    balanced, deep = problems
    assert balanced.message.startswith(f"The balanced tier's {SONNET} is a lesser model than "
                                       f"the fast tier's {OPUS} (models.yaml declares it "
                                       "balanced, that one deep)")
    assert deep.data == {"tier": "deep", "below": "fast"}  # once, against the weakest tier
    # a workspace's own tiers are checked too; only a tier's first model counts
    _, problems = check_workspace_text("tiers:\n  fast: [sonnet, haiku]\n  balanced: haiku\n"
                                       "  deep: [opus, haiku]\n", "routing.yaml", registry(),
                                       "/w")
    assert [(p.code, p.range.start.line) for p in problems] == [(Code.INVERTED_TIERS, 2)]


def test_inverted_complexity_lists_are_a_located_warning_per_level() -> None:
    """At a complexity level, a tier without a list there runs its own list: the lists are
    compared with those, and the warning is at the list that inverts the order."""
    text = ("global_default: sonnet\ntiers:\n  fast: haiku\n  balanced: sonnet\n  deep: opus\n"
            "  complexity:\n"
            "    fast: {large: opus}\n"          # above balanced's own sonnet
            "    deep: {trivial: haiku}\n")      # below balanced's own sonnet
    policy, problems = check(text)
    assert policy is not None  # warnings: the policy still applies
    assert [(p.code, p.severity, p.range.start.line, p.range.start.character, p.data)
            for p in problems] == [
        (Code.INVERTED_TIERS, Severity.WARNING, 7, 20, {"tier": "deep", "below": "balanced"}),
        (Code.INVERTED_TIERS, Severity.WARNING, 6, 18, {"tier": "balanced", "below": "fast"})]
    trivial, large = problems
    assert trivial.message.startswith(f"For trivial tasks, the deep tier's {HAIKU} is a lesser "
                                      f"model than the balanced tier's {SONNET} (models.yaml "
                                      "declares it fast, that one balanced), so a worker")
    assert large.message.startswith(f"For large tasks, the balanced tier's {SONNET} is a lesser "
                                    f"model than the fast tier's {OPUS}")
    # a list that keeps its tier's own model does not repeat the tiers' own warnings
    _, problems = check("tiers: {fast: opus, balanced: sonnet, deep: haiku,\n"
                        "        complexity: {fast: {large: opus}, deep: {small: [haiku]}}}\n")
    assert [(p.range.start.line, p.message.split(" tier's")[0]) for p in problems] == [
        (0, "The balanced"), (0, "The deep")]
    _, problems = check("tiers: {fast: haiku, balanced: sonnet, deep: opus,\n"
                        "        complexity: {balanced: {large: [opus]}, deep: {large: opus}}}\n")
    assert problems == []  # in order at every level


def test_inverted_profile_tiers_are_a_located_warning() -> None:
    """A profile's ``tiers`` are checked among themselves (the tiers it leaves out are the
    routing policy's, another file)."""
    text = ("profiles:\n  architect:\n    tier: deep\n    tiers:\n      fast: opus\n"
            "      balanced: sonnet\n      deep: haiku\n  scout:\n    tiers: {fast: opus}\n")
    checked, problems = check_profiles_text(text, "profiles.yaml", registry())
    assert checked is not None  # warnings: the profiles still apply
    assert [(p.code, p.severity, p.range.start.line, p.range.start.character, p.data)
            for p in problems] == [
        (Code.INVERTED_TIERS, Severity.WARNING, 5, 16, {"tier": "balanced", "below": "fast"}),
        (Code.INVERTED_TIERS, Severity.WARNING, 6, 12, {"tier": "deep", "below": "fast"})]
    assert problems[1].message.startswith(
        f"The deep tier's {HAIKU} is a lesser model than the fast tier's {OPUS} (models.yaml "
        "declares it fast, that one deep), so a worker asked for a stronger tier gets a weaker "
        "model.")


def test_inverted_tiers_fall_back_to_prices_when_a_tier_is_not_declared() -> None:
    reg = with_models("models:\n"
                      "  ollama:big: {aliases: [big], pricing: {input: 2, output: 8}}\n"
                      "  ollama:small: {aliases: [small], pricing: {input: 0.1, output: 0.4}}\n"
                      "  ollama:free: {aliases: [free]}\n"
                      "  ollama:cheap-deep: {aliases: [cheapdeep], tier: deep,\n"
                      "                      pricing: {input: 0.5, output: 1}}\n")

    def warned(tiers: str) -> list[str]:
        _, problems = check_routing_text(f"tiers: {{{tiers}}}\n", "routing.yaml", reg,
                                         builtin_routing_values(reg))
        return [p.data["tier"] for p in problems if p.data]

    assert warned("fast: big, balanced: small, deep: opus") == ["balanced"]
    assert "$0.5 per million tokens in and out, that one $10" in check_routing_text(
        "tiers: {fast: big, balanced: small, deep: opus}\n", "routing.yaml", reg,
        builtin_routing_values(reg))[1][0].message
    assert warned("fast: small, balanced: big, deep: opus") == []
    assert warned("fast: big, balanced: free, deep: opus") == []  # no price: not known
    # declared tiers win over prices: cheaper, but declared as capable as opus
    assert warned("fast: haiku, balanced: opus, deep: cheapdeep") == []


def test_completion_offers_models_inside_a_tier_list() -> None:
    for marked in ["tiers:\n  fast: [haiku, ¦]\n", "tiers:\n  fast:\n    - ¦\n",
                   "tiers:\n  complexity:\n    deep:\n      large: ¦\n"]:
        found = labels(FileKind.ROUTING, marked)
        assert "sonnet" in found and OPUS in found, marked
    assert labels(FileKind.ROUTING, "tiers:\n  effort:\n    deep: ¦\n") == ["low", "medium",
                                                                           "high"]
    assert labels(FileKind.ROUTING, "tiers:\n  complexity:\n    fast:\n      ¦\n") == [
        "trivial", "small", "medium", "large"]
    assert "tier_floor" in labels(FileKind.ROUTING, "delegation:\n  ¦\n")


def test_hover_explains_the_new_keys() -> None:
    for marked, words in [("tiers:\n  eff¦ort: {deep: high}\n", "Anthropic extended thinking"),
                          ("tiers:\n  compl¦exity: {}\n", "trivial"),
                          ("delegation:\n  tier_fl¦oor: false\n", "planner")]:
        found = hover_at(FileKind.ROUTING, marked)
        assert found is not None and words in found.markdown, marked


def test_json_schema_accepts_one_model_or_a_list() -> None:
    tiers = json_schema(FileKind.ROUTING)["properties"]["tiers"]
    fast = tiers["properties"]["fast"]
    assert [option.get("type") for option in fast["anyOf"]] == ["string", "array"]
    assert fast["anyOf"][1]["minItems"] == 1
    assert set(tiers["properties"]["complexity"]["properties"]["deep"]["properties"]) == {
        "trivial", "small", "medium", "large"}
    assert tiers["properties"]["effort"]["properties"]["deep"]["enum"] == ["low", "medium",
                                                                          "high"]
    delegation = json_schema(FileKind.ROUTING)["properties"]["delegation"]
    assert delegation["properties"]["tier_floor"]["type"] == "boolean"


def test_complexity_estimate_thresholds() -> None:
    assert estimate_complexity(0, 0) == "trivial"
    assert estimate_complexity(300, 0) == "trivial"
    assert estimate_complexity(301, 0) == "small"
    assert estimate_complexity(100, 1) == "small"
    assert estimate_complexity(2_001, 0) == "medium"
    assert estimate_complexity(100, 5) == "medium"
    assert estimate_complexity(12_001, 0) == "large"
    assert estimate_complexity(100, 6) == "large"


def test_the_plannerstier_text() -> None:
    reg = registry()
    policy, _ = check("global_default: sonnet\ntiers:\n  fast: [haiku, gpt-5]\n"
                      "  balanced: sonnet\n  deep: opus\n")
    assert policy is not None
    assert model_tier(GPT5, policy.tiers, reg) == "fast"  # the first list naming it
    assert model_tier(OPUS, policy.tiers, reg) == "deep"
    assert model_tier(MINI, policy.tiers, reg) == "fast"  # its models.yaml tier
    assert model_tier(SONNET, None, reg) == "balanced"  # registry defaults


def test_effort_resolution() -> None:
    reg = registry()
    assert resolve_effort(reg.get(OPUS), "high") == ("high", None)
    assert resolve_effort(reg.get(OPUS), None) == (None, None)
    merged = with_models("models:\n  ollama:qwen:\n    tier: fast\n")
    effort, note = resolve_effort(merged.get("ollama:qwen"), "low")
    assert effort is None and note is not None and "no reasoning-effort setting" in note


def test_delegate_takes_a_complexity() -> None:
    assert DELEGATE_SPEC.input_schema["properties"]["complexity"]["enum"] == [
        "trivial", "small", "medium", "large"]
    base = {"tier": "fast", "task": "rename x", "context": {"mode": "minimal"}}
    assert parse_call(base).complexity is None
    assert parse_call({**base, "complexity": "large"}).complexity == "large"
    with pytest.raises(ArgumentProblem, match="'complexity' must be one of trivial, small"):
        parse_call({**base, "complexity": "huge"})


def test_hover_describes_a_model_in_a_tier_list() -> None:
    for marked in ["tiers:\n  fast: [hai¦ku, opus]\n", "tiers:\n  fast:\n    - hai¦ku\n",
                   "tiers:\n  complexity:\n    deep:\n      large: [gpt-5, op¦us]\n"]:
        found = hover_at(FileKind.ROUTING, marked)
        assert found is not None and "`anthropic:claude-" in found.markdown, marked


def test_the_partial_tiers_fix_copies_lists() -> None:
    # the quick fix for a partial tiers block writes the global tiers as YAML text
    policy, _ = check("global_default: sonnet\ntiers:\n  fast: [haiku, gpt-5-mini]\n"
                      "  balanced: sonnet\n  deep: opus\n")
    assert policy is not None
    assert tier_text(policy.tiers, "fast") == f"[{HAIKU}, {MINI}]"
    assert tier_text(policy.tiers, "balanced") == SONNET
    assert tier_text({"deep": [OPUS]}, "deep") == OPUS
    assert tier_text(None, "deep") is None


def worker_decision(routing: str, **request: object) -> RouteDecided:
    reg = registry()
    policy, problems = check(routing)
    assert policy is not None, problems
    clock = ManualClock()
    validator = CandidateValidator(reg, lambda p: True, AvailabilityTracker(clock).check)
    chain = PolicyChain(reg, effective_policy(policy, None, None), validator, clock)
    return chain.decide(RouteRequest(context=TurnContext(message="do it"), turn_id="t",
                                     **request))  # type: ignore[arg-type]


def test_an_effort_given_with_the_request_replaces_the_tiers() -> None:
    # the hook an agent profile uses: its own effort beats the tier's
    routing = "global_default: sonnet\ntiers:\n  fast: haiku\n  balanced: sonnet\n" \
              "  deep: opus\n  effort: {deep: high}\n"
    tiers_own = worker_decision(routing, delegate_tier="deep")
    assert tiers_own.winner is not None and tiers_own.winner.tier_choice is not None
    assert tiers_own.winner.tier_choice.reasoning_effort == "high"
    replaced = worker_decision(routing, delegate_tier="deep", reasoning_effort="low")
    assert replaced.winner is not None and replaced.winner.tier_choice is not None
    assert replaced.winner.tier_choice.reasoning_effort == "low"
    assert "reasoning effort low" in replaced.winner.reason


def test_why_this_model_explains_the_floor_and_the_candidates() -> None:
    routing = "global_default: sonnet\ntiers:\n  fast: haiku\n  balanced: [sonnet, gpt-5]\n" \
              "  deep: opus\n"
    decision = worker_decision(routing, delegate_tier="deep", tier_floor="balanced",
                               complexity="small", complexity_source="estimated")
    text = render(decision)
    assert "tier balanced (capped from deep by the tier floor: the planner is balanced)" in text
    assert "no override for complexity small (estimated) → candidate 1 of 2: " \
           f"{SONNET}" in text


def test_a_model_that_does_not_say_may_delegate_by_its_tier() -> None:
    """Spec 001 §3: ``can_delegate`` left out is true for a balanced or deep model and false
    for a fast or untiered one; it was false for every model that left it out, so a local
    planner declared ``tier: deep`` never got the delegate tool."""
    merged = with_models("""
providers:
  ollama: {api: openai_compatible, base_url: 'http://127.0.0.1:11434/v1'}
models:
  ollama:deep-one: {tier: deep}
  ollama:balanced-one: {tier: balanced}
  ollama:fast-one: {tier: fast}
  ollama:untiered: {}
  ollama:said-no: {tier: deep, can_delegate: false}
  anthropic:claude-sonnet-4-6: {tier: fast}
""")
    def may(model_id: str) -> bool:
        spec = merged.get(model_id)
        assert spec is not None
        return spec.can_delegate

    assert [may(f"ollama:{name}") for name in (
        "deep-one", "balanced-one", "fast-one", "untiered", "said-no")] == [
        True, True, False, False, False]
    assert may(SONNET)  # the built-in entry says it outright; a tier changed keeps it
