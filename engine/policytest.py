"""Routing-policy unit tests: ``switchman rules test FILE``.

A test file names the policy under test and lists cases, each a message plus
the state routing would see, and the expected outcome. The format is
documented in docs/policy-tests.md; the file is itself validated with the same
machinery as routing.yaml, so mistakes in it get located problems too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec

from switchman.engine.availability import Unavailability
from switchman.engine.clock import Clock
from switchman.engine.config import schema as s
from switchman.engine.config.builtin import (
    builtin_models_values,
    builtin_policy,
    builtin_registry,
    builtin_routing_values,
)
from switchman.engine.config.models_file import check_models_text
from switchman.engine.config.policy import RoutingPolicy, WorkspacePolicy, effective_policy
from switchman.engine.config.problems import ZERO_RANGE, Code, Problem, has_errors
from switchman.engine.config.registry import ModelRegistry, ProviderSpec
from switchman.engine.config.routing_file import check_routing_text, check_workspace_text
from switchman.engine.config.store import read_config
from switchman.engine.config.walker import Walker
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.errors import EmptyMessage, RoutingError
from switchman.engine.patterns import FixedPatternStore, PatternRecommendation
from switchman.engine.policytest_names import check_case_names
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import CHAIN_ORDER, RouteDecided, TierChoice
from switchman.engine.routing.overrides import parse_override
from switchman.engine.routing.tiers import ESTIMATED, GIVEN, estimate_complexity, model_tier
from switchman.engine.routing.validation import CandidateValidator

_STRINGS = s.ListOf("", item=s.Scalar(), single_ok=True)

CONTEXT = s.Obj("The turn's state.", title="context", fields={
    "has_images": s.Field(s.Scalar("", "boolean")),
    "estimated_input_tokens": s.Field(s.Scalar("", "integer", minimum=0)),
    "files_touched": s.Field(_STRINGS),
    "cost_today_usd": s.Field(s.Scalar("", "number", minimum=0)),
    "local_time": s.Field(s.Scalar("Local time, HH:MM.", format="time")),
    "has_tool_calls_in_history": s.Field(s.Scalar("", "boolean")),
    "skills_matching": s.Field(_STRINGS),
    "has_tool_definitions": s.Field(s.Scalar("", "boolean")),
    "has_system_prompt": s.Field(s.Scalar("", "boolean")),
    "requires_structured_output": s.Field(s.Scalar("", "boolean")),
})

CHAIN_STEP = s.Obj("A partial chain entry.", title="chain step", fields={
    "policy": s.Field(s.Scalar("", enum=tuple(p.value for p in CHAIN_ORDER))),
    "verdict": s.Field(s.Scalar("", enum=("not_applicable", "deferred", "rejected", "chose"))),
    "model": s.Field(s.Scalar("The candidate model (id or alias).", format="model")),
    "validation_failure": s.Field(s.Scalar()),
    "rule": s.Field(s.Scalar()),
    "tier": s.Field(s.Scalar("For DELEGATE_REQUEST: the tier of this candidate.",
                             enum=s.TIER_NAMES)),
    "candidate": s.Field(s.Scalar("For DELEGATE_REQUEST: its place in the list, from 1.",
                                  "integer", minimum=1)),
})

EXPECT = s.Obj("What should happen.", title="expect", fields={
    "model": s.Field(s.Scalar("The chosen model (id or alias).", format="model")),
    "error": s.Field(s.Scalar("", enum=("no_model_available", "unknown_alias", "empty_message",
                                        "unknown_model"))),
    "policy": s.Field(s.Scalar("", enum=tuple(p.value for p in CHAIN_ORDER))),
    "rule": s.Field(s.Scalar("The winning rule's name.")),
    "chain": s.Field(s.ListOf("Leading chain entries, in order.", item=CHAIN_STEP)),
    "banners": s.Field(_STRINGS),
    "tier": s.Field(s.Scalar("The tier the worker runs in.", enum=s.TIER_NAMES)),
    "tier_floor": s.Field(s.Scalar("The planner's tier applied as the floor ('none' when "
                                   "the floor is off).", enum=(*s.TIER_NAMES, "none"))),
    "floor_applied": s.Field(s.Scalar("The floor lowered the requested tier.", "boolean")),
    "complexity": s.Field(s.Scalar("", enum=s.COMPLEXITY_LEVELS)),
    "complexity_source": s.Field(s.Scalar("", enum=(GIVEN, ESTIMATED))),
    "reasoning_effort": s.Field(s.Scalar("The effort sent to the provider ('none': not "
                                         "sent).", enum=(*s.EFFORT_LEVELS, "none"))),
})

CASE = s.Obj("One test case.", title="case", fields={
    "name": s.Field(s.Scalar(), required=True),
    "message": s.Field(s.Scalar(), required=True),
    "workspace": s.Field(s.Scalar("The workspace folder.")),
    "sticky": s.Field(s.Scalar("The session's sticky model (id or alias).", format="model")),
    "delegate_tier": s.Field(s.Scalar("", enum=s.TIER_NAMES)),
    "planner": s.Field(s.Scalar("The delegating planner's model (id or alias); its tier is "
                                "the tier floor unless delegation.tier_floor is false.",
                                format="model")),
    "complexity": s.Field(s.Scalar("The complexity the planner gives.",
                                   enum=s.COMPLEXITY_LEVELS)),
    "task_size": s.Field(s.Obj("The task's size, to estimate its complexity.",
                               title="task_size", fields={
        "tokens": s.Field(s.Scalar("", "integer", minimum=0)),
        "files": s.Field(s.Scalar("", "integer", minimum=0)),
    })),
    "context": s.Field(CONTEXT),
    "unavailable": s.Field(_STRINGS),
    "configured": s.Field(_STRINGS),
    "pattern": s.Field(s.Obj("A canned pattern recommendation.", title="pattern", fields={
        "model": s.Field(s.Scalar("The suggested model (id or alias).", format="model"),
                         required=True),
        "confidence": s.Field(s.Scalar("", "number", minimum=0, maximum=1), required=True),
        "sample_size": s.Field(s.Scalar("", "integer", minimum=0), required=True),
    })),
    "expect": s.Field(EXPECT, required=True),
})

TEST_FILE = s.Obj("A routing policy test file.", title="policy test file", fields={
    "routing": s.Field(s.Scalar("routing.yaml to test, relative to this file.")),
    "models": s.Field(s.Scalar("models.yaml to use, relative to this file.")),
    "workspace_routing": s.Field(s.Scalar("A workspace .switchman/routing.yaml to overlay.")),
    "cases": s.Field(s.ListOf("", item=CASE, min_items=1), required=True),
})


class CaseResult(msgspec.Struct):
    """The outcome of one case."""

    name: str
    passed: bool
    decision: RouteDecided | None
    error: dict[str, str] | None
    failures: list[str] = []


@dataclass
class PolicyUnderTest:
    """The configuration the cases run against (or the problems that stopped loading it)."""

    registry: Any
    policy: Any
    workspace_file: Any
    problems: list[Problem]


class _StaticClock:
    """A clock fixed at one instant, so test output is reproducible."""

    def __init__(self, clock: Clock) -> None:
        self._now = clock.now()

    def now(self) -> Any:
        return self._now

    def local_time(self) -> time:
        return time(12, 0)

    def monotonic(self) -> float:
        return 0.0


def load_test_file(path: Path, registry: ModelRegistry | None = None,
                   ) -> tuple[dict[str, Any], list[Problem]]:
    """Parse and validate a test file; returns its values and any problems. With the
    ``registry`` the file's policy uses, a model an expectation names must be one of it (a
    typo could only fail the case, never pass it); its id replaces an alias."""
    text, unreadable = read_config(path)
    if text is None:
        return {}, [unreadable] if unreadable is not None else []
    doc = parse_yaml(text, str(path))
    if doc.problems:
        return {}, doc.problems
    walker = Walker(doc, registry.resolve, registry.names()) if registry else Walker(doc)
    if doc.root is None:  # empty, or only comments
        walker.report(ZERO_RANGE, Code.MISSING_KEY, "This policy test file is empty: it needs "
                      "'cases', a list of cases (see docs/policy-tests.md).")
        return {}, walker.problems
    raw = walker.walk(doc.root, TEST_FILE, ())
    named: set[str] = set()
    for index, case in enumerate(raw.get("cases") or () if isinstance(raw, dict) else ()):
        name = case.get("name") if isinstance(case, dict) else None
        if isinstance(name, str) and name in named:  # the report could not tell them apart
            walker.report(walker.range_at(("cases", index, "name")), Code.DUPLICATE_CASE_NAME,
                          f"Another case above is already named '{name}'; case names must be "
                          "unique so the report can tell them apart.")
        if isinstance(name, str):
            named.add(name)
        where = ("cases", index, "expect")
        if isinstance(case, dict) and case.get("expect") == {} \
                and not walker.tainted(where):  # would pass, checking nothing
            walker.report(walker.range_at(where, key=True),
                          Code.MISSING_KEY, "This case's 'expect' checks nothing: give at least "
                          "one of " + ", ".join(EXPECT.fields) + ".")
        if isinstance(case, dict) and registry is not None:
            check_case_names(walker, ("cases", index), case, registry)
    return (raw if isinstance(raw, dict) else {}), walker.problems


def load_policy(base: Path, raw: Mapping[str, Any]) -> PolicyUnderTest:
    """The registry, routing policy and workspace overlay a test file points at."""
    problems: list[Problem] = []
    registry: ModelRegistry | None = builtin_registry()
    if "models" in raw:
        path = base / raw["models"]
        text, unreadable = read_config(path)
        registry, found = check_models_text(text, str(path), builtin_models_values()) \
            if text is not None else (None, [unreadable])
        problems += [p for p in found if p is not None]
    if registry is None:
        return PolicyUnderTest(None, None, None, problems)
    policy: RoutingPolicy | None = builtin_policy(registry)
    if "routing" in raw:
        path = base / raw["routing"]
        text, unreadable = read_config(path)
        policy, found = check_routing_text(text, str(path), registry,
                                           builtin_routing_values(registry)) \
            if text is not None else (None, [unreadable])
        problems += [p for p in found if p is not None]
    workspace_file: WorkspacePolicy | None = None
    if "workspace_routing" in raw:
        path = base / raw["workspace_routing"]
        text, unreadable = read_config(path)
        workspace_file, found = check_workspace_text(text, str(path), registry, "") \
            if text is not None else (None, [unreadable])
        problems += [p for p in found if p is not None]
    return PolicyUnderTest(registry, policy, workspace_file, problems)


def run_cases(under_test: PolicyUnderTest, cases: Sequence[Mapping[str, Any]],
              clock: Clock) -> list[CaseResult]:
    """Run every case; a case never raises, it fails with a reason."""
    if has_errors(under_test.problems) or under_test.policy is None:
        raise ValueError("the policy under test has errors")
    return [_run_case(under_test, case, _StaticClock(clock)) for case in cases]


def _run_case(under_test: PolicyUnderTest, case: Mapping[str, Any], clock: Clock) -> CaseResult:
    registry: ModelRegistry = under_test.registry
    expect = case["expect"]
    try:
        text, override = parse_override(case["message"], registry)
        if not text.strip() and not case.get("context", {}).get("has_images"):
            raise EmptyMessage(override.token if override else "")  # as the chat refuses it
        sticky = _resolve(registry, case.get("sticky"))
        chain = _chain(under_test, case, clock)
        request = RouteRequest(context=_context(case, text), turn_id=f"test-{case['name']}",
                               override=override, sticky_model=sticky,
                               delegate_tier=case.get("delegate_tier"),
                               **_delegation(registry, chain, case))
        decision = chain.decide(request)
    except RoutingError as exc:
        failed: RouteDecided | None = getattr(exc, "decision", None)
        error = {"code": exc.code, "message": str(exc)}
        failures = _check_error(expect, exc.code)
        if failed is not None and "chain" in expect:
            failures += _check_chain(expect["chain"], failed, registry)
        return CaseResult(case["name"], not failures, failed, error, failures)
    failures = _check_decision(expect, decision, registry)
    return CaseResult(case["name"], not failures, decision, None, failures)


def _delegation(registry: ModelRegistry, chain: PolicyChain,
                case: Mapping[str, Any]) -> dict[str, Any]:
    """A worker case's complexity (given, or estimated from ``task_size``) and tier floor,
    decided the way a real delegation decides them."""
    found: dict[str, Any] = {}
    if "complexity" in case:
        found.update(complexity=case["complexity"], complexity_source=GIVEN)
    elif "task_size" in case:
        size = case["task_size"]
        found.update(complexity=estimate_complexity(size.get("tokens", 0), size.get("files", 0)),
                     complexity_source=ESTIMATED)
    planner = _resolve(registry, case.get("planner"))
    if planner is not None and chain.policy.delegation.tier_floor:
        found["tier_floor"] = model_tier(planner, chain.policy.tiers, registry)
    return found


def _resolve(registry: ModelRegistry, name: str | None) -> str | None:
    if name is None:
        return None
    return registry.resolve(name) or name


def _context(case: Mapping[str, Any], message: str) -> TurnContext:
    ctx = dict(case.get("context", {}))
    if "local_time" in ctx:
        hh, _, mm = str(ctx["local_time"]).strip().partition(":")  # HH:MM (checked)
        ctx["local_time"] = time(int(hh), int(mm))
    if "cost_today_usd" in ctx:
        ctx["cost_today_usd"] = Decimal(str(ctx["cost_today_usd"]))
    ctx.setdefault("has_tool_definitions", True)
    ctx.setdefault("has_system_prompt", True)
    return TurnContext(
        message=message,
        workspace_path=case.get("workspace"),
        files_touched=tuple(ctx.pop("files_touched", ())),
        skills_matching=frozenset(ctx.pop("skills_matching", ())),
        **ctx,
    )


def _chain(under_test: PolicyUnderTest, case: Mapping[str, Any], clock: Clock) -> PolicyChain:
    registry: ModelRegistry = under_test.registry
    down = set(case.get("unavailable", ()))
    down_models = {registry.resolve(d) or d for d in down if registry.resolve(d) or ":" in d}
    configured = set(case.get("configured", registry.providers))

    def availability(provider: str, model: str) -> Unavailability | None:
        if provider in down:
            return Unavailability("provider", provider, model,
                                  f"all {provider} models temporarily unavailable")
        if model in down_models:
            return Unavailability("model", provider, model, f"{model} model-specific outage")
        return None

    def is_configured(provider: ProviderSpec) -> bool:
        return provider.name in configured

    validator = CandidateValidator(registry, is_configured, availability)
    folder = case.get("workspace")
    policy = effective_policy(under_test.policy, folder, under_test.workspace_file)
    return PolicyChain(registry, policy, validator, clock, _pattern_store(registry, case))


def _pattern_store(registry: ModelRegistry, case: Mapping[str, Any]) -> FixedPatternStore:
    raw = case.get("pattern")
    if raw is None:
        return FixedPatternStore(None)
    model = registry.resolve(raw["model"]) or raw["model"]
    rec = PatternRecommendation(model, raw["confidence"], raw["confidence"], raw["sample_size"], [])
    return FixedPatternStore(rec)


def _check_error(expect: Mapping[str, Any], code: str) -> list[str]:
    wanted = expect.get("error")
    if wanted is None:
        return [f"expected a decision, got error {code}"]
    return [] if wanted == code else [f"expected error {wanted}, got {code}"]


def _check_decision(expect: Mapping[str, Any], decision: RouteDecided,
                    registry: ModelRegistry) -> list[str]:
    failures = []
    winner = decision.winner
    if "error" in expect:
        failures.append(f"expected error {expect['error']}, got {decision.chosen_model}")
    if "model" in expect:
        wanted = registry.resolve(expect["model"]) or expect["model"]
        if decision.chosen_model != wanted:
            failures.append(f"expected model {wanted}, got {decision.chosen_model}")
    if "policy" in expect and winner is not None and winner.policy != expect["policy"]:
        failures.append(f"expected policy {expect['policy']}, got {winner.policy}")
    if "rule" in expect and (winner is None or winner.rule_name != expect["rule"]):
        failures.append(f"expected rule {expect['rule']!r}, got "
                        f"{winner.rule_name if winner else None!r}")
    if "chain" in expect:
        failures += _check_chain(expect["chain"], decision, registry)
    failures += _check_tier_choice(expect, winner.tier_choice if winner else None)
    for banner in expect.get("banners", ()):
        if banner not in decision.banners:
            failures.append(f"expected banner {banner!r}, got {decision.banners}")
    return failures


def _check_tier_choice(expect: Mapping[str, Any], choice: TierChoice | None) -> list[str]:
    got: dict[str, Any] = {
        "tier": choice.tier if choice else None,
        "tier_floor": (choice.tier_floor or "none") if choice else None,
        "floor_applied": choice.floor_applied if choice else None,
        "complexity": choice.complexity if choice else None,
        "complexity_source": choice.complexity_source if choice else None,
        "reasoning_effort": (choice.reasoning_effort or "none") if choice else None}
    return [f"expected {key} {expect[key]}, got {got[key]}" for key in got
            if key in expect and expect[key] != got[key]]


def _check_chain(steps: Sequence[Mapping[str, Any]], decision: RouteDecided,
                 registry: ModelRegistry) -> list[str]:
    failures = []
    for index, step in enumerate(steps):
        if index >= len(decision.chain):
            failures.append(f"chain has {len(decision.chain)} entries, expected at least "
                            f"{len(steps)}")
            break
        actual = decision.chain[index]
        got = {"policy": actual.policy.value, "verdict": actual.verdict.value,
               "model": actual.candidate_model, "rule": actual.rule_name,
               "validation_failure": actual.validation_failure and actual.validation_failure.value,
               "tier": actual.tier_choice.tier if actual.tier_choice else None,
               "candidate": actual.tier_choice.candidate if actual.tier_choice else None}
        for key, value in step.items():
            wanted = (registry.resolve(value) or value) if key == "model" else value
            if got[key] != wanted:
                failures.append(f"chain[{index + 1}].{key}: expected {wanted}, got {got[key]}")
    return failures

