"""The policy chain: order, validation, fall-through, records (spec §4, §7, §9)."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import msgspec
import pytest

from switchman.engine.availability import AvailabilityTracker, ErrorClass
from switchman.engine.clock import ManualClock
from switchman.engine.config.policy import PatternSettings, effective_policy
from switchman.engine.config.registry import Capabilities, ModelRegistry, ModelSpec
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.config.store import ConfigStore
from switchman.engine.errors import NoModelAvailable
from switchman.engine.patterns import (
    FixedPatternStore,
    InMemoryPatternStore,
    PatternRecommendation,
    PatternStore,
)
from switchman.engine.router import Router
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import (
    ModelOption,
    Policy,
    RouteDecided,
    ValidationFailure,
    Verdict,
)
from switchman.engine.routing.explain import render, short_reason
from switchman.engine.routing.overrides import parse_override
from switchman.engine.routing.validation import CandidateValidator
from tests.learning.test_pattern_store import WS, open_store, record

OPUS, SONNET, HAIKU = ("anthropic:claude-opus-4-7", "anthropic:claude-sonnet-4-6",
                       "anthropic:claude-haiku-4-5")
GPT5 = "openai:gpt-5"

POLICY = """
global_default: haiku
rules:
  - name: fast for commits
    when: {message_matches: "^/commit"}
    use: haiku
  - name: deep for architecture
    when: {message_matches: architecture}
    use: opus
  - name: images
    when: {has_images: true}
    use: sonnet
workspaces:
  /code/app:
    default: sonnet
"""


class Harness:
    """A chain over a routing policy, with a real availability tracker."""

    def __init__(self, registry: ModelRegistry, text: str = POLICY) -> None:
        policy, problems = check_routing_text(text, "routing.yaml", registry)
        assert policy is not None, problems
        self.registry = registry
        self.policy = policy
        self.clock = ManualClock()
        self.tracker = AvailabilityTracker(self.clock)
        self.configured = {"anthropic", "openai", "ollama"}
        self.patterns: PatternRecommendation | None = None
        self.pattern_settings = PatternSettings()
        self.store: PatternStore | None = None
        """A pattern store of its own, in place of a fixed :attr:`patterns`."""

    def decide(self, message: str, *, workspace: str | None = "/code/app",
               sticky: str | None = None, tier: str | None = None,
               **ctx: object) -> RouteDecided:
        text, override = parse_override(message, self.registry)
        effective = replace(effective_policy(self.policy, workspace, None),
                            pattern=self.pattern_settings)
        validator = CandidateValidator(self.registry, lambda p: p.name in self.configured,
                                       self.tracker.check)
        chain = PolicyChain(self.registry, effective, validator, self.clock,
                            self.store or FixedPatternStore(self.patterns))
        context = TurnContext(message=text, workspace_path=workspace, **ctx)  # type: ignore[arg-type]
        return chain.decide(RouteRequest(context=context, turn_id="t1", session_id="s1",
                                         override=override, sticky_model=sticky,
                                         delegate_tier=tier))


@pytest.fixture
def h(registry: ModelRegistry) -> Harness:
    return Harness(registry)


def verdicts(decision: RouteDecided) -> list[tuple[str, str]]:
    return [(e.policy.value, e.verdict.value) for e in decision.chain]


def test_rule_wins_when_it_validates(h: Harness) -> None:
    decision = h.decide("/commit fix the auth bug")
    assert decision.chosen_model == HAIKU
    assert verdicts(decision) == [("PER_MESSAGE_OVERRIDE", "not_applicable"),
                                  ("MANUAL_STICKY", "not_applicable"),
                                  ("CONFIGURED_RULES", "chose")]
    assert decision.winner is not None and decision.winner.rule_name == "fast for commits"
    assert short_reason(decision) == "rule: fast for commits"


def test_override_beats_sticky_and_does_not_change_it(h: Harness) -> None:
    decision = h.decide("@opus what's a quick name?", sticky=SONNET)
    assert decision.chosen_model == OPUS
    assert decision.chain[0].reason == 'override "@opus"'
    assert len(decision.chain) == 1


def test_sticky_opts_out_of_rules(h: Harness) -> None:
    decision = h.decide("/commit x", sticky=SONNET)
    assert decision.chosen_model == SONNET
    assert verdicts(decision)[-1] == ("MANUAL_STICKY", "chose")


def test_no_rule_falls_to_workspace_default_then_global(h: Harness) -> None:
    assert h.decide("hello").chosen_model == SONNET
    decision = h.decide("hello", workspace="/elsewhere")
    assert decision.chosen_model == HAIKU
    assert [e.policy for e in decision.chain] == list(Policy)
    assert decision.chain[4].verdict is Verdict.NOT_APPLICABLE  # slot 5 outside delegation
    assert decision.chain[4].reason == "not in delegation re-entry"  # spec 001 §7, word for word


def test_capability_rejection_is_recorded_and_chain_continues(registry: ModelRegistry) -> None:
    h = Harness(_with_local_model(registry), "global_default: opus\nrules:\n  - name: small\n"
                "    when: {has_images: true}\n    use: local\n")
    decision = h.decide("look at this", has_images=True, workspace=None)
    rejected = decision.chain[2]
    assert rejected.verdict is Verdict.REJECTED
    assert rejected.validation_failure is ValidationFailure.NO_VISION_SUPPORT
    assert decision.chosen_model == OPUS


def test_tool_capability_is_only_required_when_tools_are_sent(registry: ModelRegistry) -> None:
    h = Harness(_with_local_model(registry), "global_default: opus\nrules:\n  - name: local\n"
                "    use: local\n")
    with_tools = h.decide("hi", has_tool_definitions=True, workspace=None)
    assert with_tools.chain[2].validation_failure is ValidationFailure.NO_TOOL_SUPPORT
    assert with_tools.chosen_model == OPUS
    assert h.decide("hi", workspace=None).chosen_model == "ollama:tiny"


def _with_local_model(registry: ModelRegistry) -> ModelRegistry:
    tiny = ModelSpec(id="ollama:tiny", provider="ollama", api_model="tiny", display_name="tiny",
                     aliases=("local",),
                     capabilities=Capabilities(max_context_tokens=8000, supports_tools=False))
    return ModelRegistry(registry.providers, [*registry.models.values(), tiny])


def test_context_window_is_checked(registry: ModelRegistry) -> None:
    h = Harness(registry, "global_default: gpt-5\nrules:\n  - when: {message_matches: arch}\n"
                          "    use: opus\n")
    decision = h.decide("architecture", estimated_input_tokens=250_000)
    assert decision.chain[2].validation_failure is ValidationFailure.EXCEEDS_CONTEXT_WINDOW
    assert decision.chosen_model == GPT5


def test_not_configured_provider_is_rejected(h: Harness) -> None:
    h.configured = {"openai"}
    with pytest.raises(NoModelAvailable) as caught:
        h.decide("architecture")
    failures = {e.validation_failure for e in caught.value.decision.chain if e.validation_failure}
    assert failures == {ValidationFailure.NOT_CONFIGURED}
    assert "Set ANTHROPIC_API_KEY" in str(caught.value)


def test_model_outage_falls_through_with_a_banner(h: Harness) -> None:
    for _ in range(5):
        h.tracker.record_failure("anthropic", OPUS, ErrorClass.SERVER)
    decision = h.decide("Walk me through the architecture of this codebase")
    assert decision.chain[2].validation_failure is ValidationFailure.PROVIDER_UNAVAILABLE
    assert decision.chain[2].outage_scope == "model"
    assert decision.chosen_model == SONNET
    assert decision.banners == [f"{OPUS} currently unavailable. Routing fell through to {SONNET}."]


def test_an_alias_that_cannot_take_the_turn_says_so_in_a_banner(h: Harness) -> None:
    """`@haiku summarise all this` over a session too long for Haiku's window ran on another
    model with nothing but the badge to tell: the user asked for a model by name and got a
    different one."""
    decision = h.decide("@haiku summarise all this", sticky=GPT5,
                        estimated_input_tokens=300_000)
    assert decision.chain[0].validation_failure is ValidationFailure.EXCEEDS_CONTEXT_WINDOW
    assert decision.chosen_model == GPT5
    why = decision.chain[0].reason.partition(" rejected: ")[2]
    assert decision.banners == [
        f"@haiku ({HAIKU}) cannot take this turn: {why}. Routing fell through to {GPT5} "
        "(sticky model)."]
    assert "300000 tokens exceed" in why
    for _ in range(5):  # an outage keeps its own banner, said once
        h.tracker.record_failure("anthropic", OPUS, ErrorClass.SERVER)
    decision = h.decide("@opus hello", sticky=SONNET)
    assert decision.banners == [f"{OPUS} currently unavailable. Routing fell through to {SONNET}."]
    assert h.decide("@haiku hello", sticky=SONNET).banners == []  # it could: no banner


def test_a_sticky_model_that_cannot_take_the_turn_says_so_in_a_banner(h: Harness) -> None:
    """`/model gpt-5` opts the session out of the rules; when GPT-5 cannot take a turn (its
    key is gone, the session outgrew its window) the turn ran on what the rest of the chain
    chose with nothing but the badge to tell, as an `@alias` once did: the user named that
    model too."""
    h.configured = {"anthropic"}  # the OpenAI key is gone
    decision = h.decide("summarise all this", sticky=GPT5)
    assert decision.chain[1].validation_failure is ValidationFailure.NOT_CONFIGURED
    assert decision.chosen_model == SONNET
    why = decision.chain[1].reason.partition(" rejected: ")[2]
    assert "OPENAI_API_KEY" in why
    assert decision.banners == [f"The sticky model {GPT5} cannot take this turn: {why}. "
                                f"Routing fell through to {SONNET} (workspace default)."]
    assert h.decide("hello", sticky=HAIKU).banners == []  # it could: no banner


def test_auth_error_makes_the_next_decision_reject_the_provider(h: Harness) -> None:
    h.tracker.record_failure("anthropic", HAIKU, ErrorClass.AUTH)
    h.policy = check_routing_text("global_default: haiku\nrules:\n  - use: opus\n"
                                  "workspaces:\n  /code/app: {default: sonnet}\n",
                                  "routing.yaml", h.registry)[0]  # type: ignore[assignment]
    h.configured = {"anthropic"}
    with pytest.raises(NoModelAvailable) as caught:
        h.decide("hello")
    decision = caught.value.decision
    assert [e.verdict for e in decision.chain if e.candidate_model] == [Verdict.REJECTED] * 3
    assert all(e.outage_scope == "provider" for e in decision.chain if e.candidate_model)
    message = str(caught.value)
    assert message.splitlines()[:3] == [
        "No model available for this turn.",
        "anthropic provider currently unavailable.",
        f"Tried: {OPUS}, {SONNET}, {HAIKU} — all on anthropic.",
    ]
    # Only providers a turn could use are suggested; the rest say what to set up.
    assert message.splitlines()[3:] == ["To use other providers, set OPENAI_API_KEY for openai."]
    assert decision.chosen_model is None and decision.winner_index is None


def test_provider_outage_suggests_only_usable_providers(h: Harness) -> None:
    h.tracker.record_failure("anthropic", HAIKU, ErrorClass.AUTH)
    message_with_openai = _no_model_message(h)
    assert message_with_openai.splitlines()[3:] == [
        "Run /model <id> to choose a model from openai, or wait for recovery."]
    h.tracker.record_failure("openai", GPT5, ErrorClass.AUTH)
    assert _no_model_message(h).splitlines()[3:] == ["Wait for the provider to recover."]


def test_a_worker_with_its_tier_down_is_told_of_tiers_not_of_model(h: Harness) -> None:
    """/model sets the sticky model of a person's session, which a worker's tier ignores: a
    worker whose tier lists only a provider that is down is told where the tier's models
    are set (the text reaches its planner and the card's note)."""
    h.tracker.record_failure("anthropic", HAIKU, ErrorClass.AUTH)
    with pytest.raises(NoModelAvailable) as caught:
        h.decide("rename foo", workspace=None, tier="fast")
    message = str(caught.value)
    assert "/model" not in message
    assert message.splitlines()[-1] == (
        "Add a model from openai to the fast tier (tiers: in routing.yaml), or wait for "
        "recovery.")


def test_a_local_provider_is_suggested_with_its_server(registry: ModelRegistry) -> None:
    local = ModelSpec(id="ollama:qwen3", provider="ollama", api_model="qwen3", display_name="Q",
                      capabilities=Capabilities(max_context_tokens=200_000))
    h = Harness(ModelRegistry(registry.providers, [*registry.models.values(), local]))
    h.configured = {"anthropic", "ollama"}
    h.tracker.record_failure("anthropic", HAIKU, ErrorClass.AUTH)
    assert _no_model_message(h).splitlines()[3:] == [
        "Run /model <id> to choose a model from ollama (if its server at "
        "http://127.0.0.1:11434/v1 is running), or wait for recovery.",
        "To use other providers, set OPENAI_API_KEY for openai."]


def test_without_keys_the_message_names_what_to_set(h: Harness) -> None:
    h.configured = set()
    lines = _no_model_message(h).splitlines()
    assert lines[2:] == ["Set ANTHROPIC_API_KEY (see 'switchman models').",
                         "To use other providers, set OPENAI_API_KEY for openai."]


def test_a_message_too_long_for_every_model_says_so_not_to_pick_one(h: Harness) -> None:
    """Found by sending a 5 MB paste in Neovim: "Run /model <id> to choose explicitly", though
    no model could take it (a sticky model is checked the same way)."""
    h.policy = check_routing_text("global_default: haiku\nrules:\n  - use: opus\n",
                                  "routing.yaml", h.registry)[0]  # type: ignore[assignment]
    with pytest.raises(NoModelAvailable) as caught:
        h.decide("summarise this log", workspace=None, estimated_input_tokens=1_400_000)
    lines = str(caught.value).splitlines()
    assert lines[1] == (f"Tried: {OPUS} (context window too small), {HAIKU} (context window too "
                        "small)")
    assert lines[2:] == [
        "The message, its attachments and the conversation so far do not fit the context "
        "window of any of these models: send less (a part of the text, fewer attachments), or "
        "start a new session."]


def _no_model_message(h: Harness) -> str:
    h.policy = check_routing_text("global_default: haiku\nrules:\n  - use: opus\n",
                                  "routing.yaml", h.registry)[0]  # type: ignore[assignment]
    with pytest.raises(NoModelAvailable) as caught:
        h.decide("hello", workspace=None)
    return str(caught.value)


def test_provider_outage_banner_names_the_fallback_policy(h: Harness) -> None:
    h.tracker.record_failure("anthropic", OPUS, ErrorClass.AUTH)
    h.policy = check_routing_text("global_default: gpt-5\nrules:\n  - use: opus\n",
                                  "routing.yaml", h.registry)[0]  # type: ignore[assignment]
    decision = h.decide("hello", workspace=None)
    assert decision.chosen_model == GPT5
    assert decision.banners == [
        f"anthropic provider currently unavailable. Routing fell through to {GPT5} "
        "(global default)."]


def test_rule_fallback_by_a_second_rule(h: Harness) -> None:
    h.policy = check_routing_text(
        "global_default: haiku\nrules:\n  - name: deep\n    when: {message_matches: arch}\n"
        "    use: opus\n  - name: deep (fallback)\n    when: {message_matches: arch}\n"
        "    use: sonnet\n", "routing.yaml", h.registry)[0]  # type: ignore[assignment]
    h.tracker.record_failure("anthropic", OPUS, ErrorClass.AUTH)
    h.tracker.record_success("anthropic", SONNET)  # provider healthy again...
    for _ in range(5):  # ...but opus itself is down
        h.tracker.record_failure("anthropic", OPUS, ErrorClass.OVERLOADED)
    decision = h.decide("arch review")
    assert [e.rule_name for e in decision.chain[2:]] == ["deep", "deep (fallback)"]
    assert decision.chosen_model == SONNET


def test_pattern_recommendation_when_no_rule_matches(h: Harness) -> None:
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.78, 12, [])
    decision = h.decide("hello", workspace=None)
    assert decision.winner is not None
    assert decision.winner.policy is Policy.PATTERN_RECOMMENDATION
    assert decision.winner.confidence == 0.78


def test_slot_4_scores_only_the_models_in_the_registry(h: Harness) -> None:
    """A model removed from models.yaml (or renamed) did best on similar turns: slot 4 no
    longer suggests it (to be rejected as unknown_model, turn after turn), the models still
    known among the neighbours decide, and "why this model?" does not list it."""
    store = InMemoryPatternStore()
    for i in range(6):
        store.add(f"refactor the parser module {i}", "anthropic:claude-retired-1", 1.0, 0.01)
        store.add(f"refactor the parser module {i}", SONNET, 0.6, 0.01)
    h.store = store
    decision = h.decide("refactor the parser module", workspace=None)
    assert decision.winner is not None
    assert (decision.winner.policy, decision.chosen_model) == (
        Policy.PATTERN_RECOMMENDATION, SONNET)
    assert decision.winner.pattern_alternatives == []
    assert "retired" not in render(decision)
    learned = open_store()  # what the daemon uses: it also says why it has nothing to score
    for i in range(6):
        record(learned, f"t{i}", f"refactor the parser module {i}", "anthropic:claude-retired-1")
    h.store = learned
    pattern = h.decide("refactor the parser module", workspace=WS).chain[3]
    assert (pattern.verdict, pattern.reason) == (Verdict.NOT_APPLICABLE, (
        "the 6 most similar past turns were answered only by models no longer in the registry "
        "(anthropic:claude-retired-1): kept, not scored"))


def test_pattern_below_the_gates_is_not_applicable(h: Harness) -> None:
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.78, 3, [])
    decision = h.decide("hello", workspace=None)
    assert decision.chain[3].verdict is Verdict.NOT_APPLICABLE
    assert "insufficient samples" in decision.chain[3].reason
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.01, 30, [])
    assert "below min_confidence" in h.decide("hello", workspace=None).chain[3].reason


def test_pattern_disagreement_is_recorded_as_deferred(h: Harness) -> None:
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.87, 23, [])
    decision = h.decide("/commit fix the auth bug")
    assert decision.chosen_model == HAIKU
    last = decision.chain[-1]
    assert (last.policy, last.verdict, last.candidate_model) == (
        Policy.PATTERN_RECOMMENDATION, Verdict.DEFERRED, SONNET)
    assert last.reason == (f"suggested {SONNET} (score 0.900, confidence 0.87, 23 samples) — "
                           'outranked by rule "fast for commits"')  # its score, as when chosen
    assert decision.winner_index == 2


def test_delegation_tier_resolves_and_upgrades(h: Harness) -> None:
    decision = h.decide("rename foo", workspace=None, tier="fast")
    assert decision.chosen_model == HAIKU
    assert decision.winner is not None and decision.winner.policy is Policy.DELEGATE_REQUEST
    h.configured = {"anthropic"}
    h.tracker.record_failure("anthropic", HAIKU, ErrorClass.SERVER)
    for _ in range(4):
        h.tracker.record_failure("anthropic", HAIKU, ErrorClass.SERVER)
    upgraded = h.decide("rename foo", workspace=None, tier="fast")
    assert upgraded.chosen_model == SONNET
    assert "upgraded from fast" in upgraded.chain[-1].reason


def test_inside_a_worker_a_confident_pattern_defers_to_the_tier(h: Harness) -> None:
    h.patterns = PatternRecommendation(OPUS, 0.9, 0.95, 40, [])
    decision = h.decide("rename foo", workspace=None, tier="fast")
    assert decision.chosen_model == HAIKU  # outside a worker the pattern would have won
    pattern = decision.chain[3]
    assert (pattern.policy, pattern.verdict, pattern.candidate_model, pattern.reason) == (
        Policy.PATTERN_RECOMMENDATION, Verdict.DEFERRED, OPUS, "delegate_request_in_flight")
    assert h.decide("rename foo", workspace=None).chosen_model == OPUS


def test_a_worker_never_falls_back_to_the_defaults(h: Harness) -> None:
    h.configured = set()
    with pytest.raises(NoModelAvailable) as caught:
        h.decide("rename foo", workspace=None, tier="deep")
    policies = [(e.policy, e.verdict) for e in caught.value.decision.chain]
    assert policies[-2:] == [(Policy.WORKSPACE_DEFAULT, Verdict.NOT_APPLICABLE),
                             (Policy.GLOBAL_DEFAULT, Verdict.NOT_APPLICABLE)]


def test_a_failed_decision_is_a_route_decided_record_too(config_dir: Path) -> None:
    clock = ManualClock()
    router = Router(ConfigStore(config_dir), clock=clock, configured=lambda p: True,
                    availability=AvailabilityTracker(clock))
    assert router.decide(RouteRequest(context=TurnContext(message="hi"), turn_id="a")).turn_id \
        == "a"
    with pytest.raises(NoModelAvailable) as caught:
        Router(ConfigStore(config_dir), clock=clock, configured=lambda p: False,
               availability=AvailabilityTracker(clock)).decide(
            RouteRequest(context=TurnContext(message="hi"), turn_id="b"))
    assert (caught.value.decision.turn_id, caught.value.decision.chosen_model) == ("b", None)
    assert len(caught.value.decision.chain) == 7


def test_route_decided_has_the_spec_field_names(h: Harness) -> None:
    record = msgspec.to_builtins(h.decide("/commit x"))
    assert {"type", "timestamp", "session_id", "turn_id", "chain", "winner_index",
            "chosen_model", "elapsed_ms"} <= set(record)
    assert record["type"] == "route.decided"
    assert set(record["chain"][0]) >= {"policy", "verdict", "candidate_model", "reason",
                                       "rule_name", "confidence", "pattern_alternatives",
                                       "validation_failure"}


def test_render_lays_out_the_chain(h: Harness) -> None:
    for _ in range(5):
        h.tracker.record_failure("anthropic", OPUS, ErrorClass.SERVER)
    text = render(h.decide("architecture"))
    lines = text.splitlines()
    assert lines[0].startswith("Turn t1 · session s1 · ")
    assert lines[1] == f"Chose: {SONNET} (workspace default)"
    assert lines[3] == "Chain:"
    assert lines[4].split() == ["[1]", "PER_MESSAGE_OVERRIDE", "not_applicable", "no", "@model",
                                "token", "in", "message"]
    assert "[3] CONFIGURED_RULES" in lines[6] and "rejected" in lines[6]
    assert lines[-1] == f"{OPUS} currently unavailable. Routing fell through to {SONNET}."


def test_budget_rule_banner(h: Harness) -> None:
    h.policy = check_routing_text(
        'global_default: opus\nrules:\n  - name: budget circuit breaker\n'
        '    when: {cost_today_exceeds_usd: 5.00}\n    use: haiku\n', "routing.yaml",
        h.registry)[0]  # type: ignore[assignment]
    decision = h.decide("hi", workspace=None, cost_today_usd=Decimal("5.42"))
    assert decision.banners == ['Daily budget $5.00 exceeded ($5.42 today). Routing per '
                                '"budget circuit breaker" rule.']


def test_a_confident_disagreeing_pattern_is_surfaced_when_enabled(registry: ModelRegistry) -> None:
    text = ("global_default: sonnet\npattern_disagreement: {surface: true}\nrules:\n"
            "  - name: fast for commits\n"
            "    when: {message_matches: '^/commit'}\n    use: haiku\n")
    h = Harness(registry, text)
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.87, 23, [])
    decision = h.decide("/commit fix the auth bug", workspace=None)
    assert decision.banners == [
        f'→ Routing to {HAIKU} per rule "fast for commits"\n'
        f"Pattern store suggests {SONNET} (confidence 0.87, 23 samples)\n"
        f"/route override to use {SONNET} for this turn\n/route ignore to dismiss"]
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.87, 19, [])  # below min_sample_size 20
    assert h.decide("/commit fix the auth bug", workspace=None).banners == []
    h.policy = check_routing_text(text.replace("surface: true", "surface: false"),
                                  "routing.yaml", registry)[0]  # type: ignore[assignment]
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.87, 23, [])
    assert h.decide("/commit fix the auth bug", workspace=None).banners == []


def test_inside_a_worker_a_disagreeing_pattern_is_not_offered(registry: ModelRegistry) -> None:
    """A worker takes no messages, so no /route override is offered for its turn."""
    h = Harness(registry, "global_default: sonnet\npattern_disagreement: {surface: true}\n")
    h.patterns = PatternRecommendation(OPUS, 0.9, 0.95, 40, [])
    decision = h.decide("rename foo", workspace=None, tier="fast")
    assert decision.chosen_model == HAIKU and decision.banners == []
    assert decision.chain[3].verdict is Verdict.DEFERRED  # still in "why this model?"


def test_a_disagreeing_pattern_whose_model_cannot_be_used_is_recorded_not_offered(
        registry: ModelRegistry) -> None:
    """/route override could not take a suggestion without a key or with its provider down:
    no banner offers it, and the chain says why (for "why this model?")."""
    h = Harness(registry, "global_default: sonnet\npattern_disagreement: {surface: true}\n"
                          "rules:\n  - name: fast for commits\n"
                          "    when: {message_matches: '^/commit'}\n    use: haiku\n")
    h.configured = {"anthropic"}
    h.patterns = PatternRecommendation(GPT5, 0.9, 0.87, 23, [])
    decision = h.decide("/commit fix the auth bug", workspace=None)
    assert decision.chosen_model == HAIKU and decision.banners == []
    deferred = decision.chain[-1]
    assert (deferred.verdict, deferred.candidate_model, deferred.validation_failure) == (
        Verdict.DEFERRED, GPT5, ValidationFailure.NOT_CONFIGURED)
    assert deferred.reason.endswith('outranked by rule "fast for commits"; it could not be '
                                    "used: no API key for openai (OPENAI_API_KEY)")
    assert "[not_configured]" in render(decision)
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.87, 23, [])
    for _ in range(5):
        h.tracker.record_failure("anthropic", SONNET, ErrorClass.SERVER)
    down = h.decide("/commit fix the auth bug", workspace=None)
    assert down.banners == []  # not offered, and no fall-through banner: haiku won anyway
    assert (down.chain[-1].validation_failure, down.chain[-1].outage_scope) == (
        ValidationFailure.PROVIDER_UNAVAILABLE, "model")


def test_why_this_model_counts_one_sample_in_the_singular(h: Harness) -> None:
    # "why this model?" said "(1 samples)" for a model with one similar past turn
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.78, 12, [ModelOption(HAIKU, 0.5, 1)])
    text = render(h.decide("hello", workspace=None))
    assert "12 samples))" not in text and f"also scored: {HAIKU} 0.500 (1 sample)" in text
    # the chosen model once, as spec §7.3 has it (it read "… (suggested <the same model> (…))")
    assert f"PATTERN_RECOMMENDATION   chose          {SONNET} (score 0.900, confidence 0.78, " \
           f"12 samples)\n" in text
    h.patterns = PatternRecommendation(SONNET, 0.9, 0.78, 1, [])
    assert "(score 0.900, confidence 0.78, 1 sample): insufficient samples" \
        in h.decide("hello", workspace=None).chain[3].reason
