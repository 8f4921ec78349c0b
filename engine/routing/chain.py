"""The policy chain (spec §4.1): seven slots in fixed order, first valid candidate wins.

1. PER_MESSAGE_OVERRIDE   ``@alias`` at the start of the message
2. MANUAL_STICKY          the session's model set with ``/model``
3. CONFIGURED_RULES       routing.yaml rules, first match whose model validates
4. PATTERN_RECOMMENDATION the pattern store, above its confidence and sample gates
5. DELEGATE_REQUEST       the requested tier, only when routing a delegated worker
6. WORKSPACE_DEFAULT      the workspace's default model
7. GLOBAL_DEFAULT         the global default model

Every candidate is validated (configured, available, capable). The chain
records one evaluation per policy that ran (each matched rule counts as one);
after a winner, the pattern store is still consulted so that a confident
disagreement is recorded as ``deferred``.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from dataclasses import dataclass, replace

import msgspec

from switchman.engine.clock import Clock
from switchman.engine.config.policy import DisagreementSettings, EffectivePolicy
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.errors import NoModelAvailable
from switchman.engine.patterns import PatternRecommendation, PatternStore, Unavailable
from switchman.engine.profiles.profile import ActiveProfile
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import (
    Policy,
    PolicyEvaluation,
    ProfileChoice,
    RouteDecided,
    TierChoice,
    ValidationFailure,
    Verdict,
)
from switchman.engine.routing.explain import (
    PROFILE_DEFAULT,
    chosen_label,
    fallthrough_banners,
    no_model_message,
    samples,
)
from switchman.engine.routing.overrides import Override
from switchman.engine.routing.predicates import CostTodayExceeds
from switchman.engine.routing.tiers import model_tier, resolve_effort, tier_models, tier_rank
from switchman.engine.routing.validation import CandidateValidator
from switchman.engine.userregex import pattern_set

NA = Verdict.NOT_APPLICABLE
Suggestion = PatternRecommendation | Unavailable | None
"""What slot 4 has to go on: a recommendation, none, or a store still loading."""
DELEGATE_REQUEST_IN_FLIGHT = "delegate_request_in_flight"


@dataclass(frozen=True)
class RouteRequest:
    """Everything the chain needs for one decision."""

    context: TurnContext
    turn_id: str = ""
    session_id: str | None = None
    override: Override | None = None
    sticky_model: str | None = None
    delegate_tier: str | None = None
    profile: ActiveProfile | None = None
    """The session's agent profile: its model policy takes the default's place (a top-level
    turn) or refines the tiers (a worker)."""
    complexity: str | None = None
    """For a worker: the task's complexity (trivial … large), if known."""
    complexity_source: str | None = None
    """``given`` by the planner or ``estimated`` from the task."""
    tier_floor: str | None = None
    """For a worker: its planner's tier when the tier floor is on (no tier above it)."""
    reasoning_effort: str | None = None
    """For a worker: an effort that replaces its tier's (an agent profile's, say)."""


class PolicyChain:
    """Runs the seven policies for one workspace's effective policy."""

    def __init__(
        self,
        registry: ModelRegistry,
        policy: EffectivePolicy,
        validator: CandidateValidator,
        clock: Clock,
        patterns: PatternStore | None = None,
    ) -> None:
        self.registry = registry
        self.policy = policy
        self.validator = validator
        self.clock = clock
        self.patterns = patterns

    def decide(self, request: RouteRequest) -> RouteDecided:
        """The decision for ``request``; raises :class:`NoModelAvailable` if nothing validates."""
        started = self.clock.monotonic()
        request = self._with_pattern_hits(request)
        chain: list[PolicyEvaluation] = []
        suggestion = self._recommendation(request.context)
        winner: int | None = None
        for slot in self._slots(request, suggestion):
            chain.append(slot)
            if slot.verdict is Verdict.CHOSE:
                winner = len(chain) - 1
                break
        if winner is not None and chain[winner].tier_choice is None:
            chain[winner] = self._profile_effort(chain[winner], request.profile,
                                                 worker=request.delegate_tier is not None)
        if winner is not None and chain[winner].policy in _BEFORE_PATTERN:
            deferred = self._deferred(suggestion, chain[winner], request.context)
            if deferred is not None:
                chain.append(deferred)
        decision = RouteDecided(
            timestamp=self.clock.now(),
            session_id=request.session_id,
            turn_id=request.turn_id,
            chain=chain,
            winner_index=winner,
            chosen_model=None if winner is None else chain[winner].candidate_model,
            elapsed_ms=round((self.clock.monotonic() - started) * 1000, 3),
            workspace=request.context.workspace_path,
            profile=None if request.profile is None else ProfileChoice(
                request.profile.name, request.profile.resolved_from,
                request.profile.profile.bound),
        )
        if winner is None:
            raise NoModelAvailable(decision, no_model_message(decision, self.validator))
        banners = fallthrough_banners(decision) + self._budget_banner(request, chain[winner])
        surfaced = surfaced_suggestion(decision, self.policy.disagreement)
        if surfaced is not None:
            banners.append(disagreement_banner(decision, surfaced))
        return decision if not banners else _with_banners(decision, banners)

    def _profile_effort(self, winner: PolicyEvaluation, profile: ActiveProfile | None,
                        *, worker: bool = False) -> PolicyEvaluation:
        """``winner`` of a top-level turn, noting a profile's effort its model cannot take,
        so "why this model?" says it was dropped; of a worker's turn that no tier candidate
        won (its profile's model, a rule: a tier's candidate notes its own), also the
        effort its calls are sent with."""
        wanted = profile.profile.model_policy.effort if profile is not None else None
        effort, note = resolve_effort(self.registry.get(winner.candidate_model or ""), wanted)
        note = f"reasoning effort {effort}" if worker and effort else note
        return winner if note is None else msgspec.structs.replace(
            winner, reason=f"{winner.reason}; {note}")

    def _with_pattern_hits(self, request: RouteRequest) -> RouteRequest:
        """Match every rule's message pattern in one RE2 pass, up front."""
        patterns = self.policy.rule_index.patterns
        if not patterns or request.context.message_hits is not None:
            return request
        hits = pattern_set(patterns).hits(request.context.message)
        context = msgspec.structs.replace(request.context, message_hits=hits)
        return replace(request, context=context)

    # -- slots ---------------------------------------------------------------------

    def _slots(
        self, request: RouteRequest, suggestion: Suggestion
    ) -> Iterator[PolicyEvaluation]:
        ctx = request.context
        yield self._override(request.override, ctx)
        yield self._sticky(request.sticky_model, ctx)
        yield from self._rules(ctx)
        if request.delegate_tier is not None:  # a worker: the planner's tier decides (001 §11)
            yield self._deferred_in_delegation(suggestion)
            yield from self._profile_model(request, ctx, Policy.DELEGATE_REQUEST)
            yield from self._delegate(request, ctx)
            for policy in (Policy.WORKSPACE_DEFAULT, Policy.GLOBAL_DEFAULT):
                yield _na(policy, "not used for delegated workers: no model of the requested "
                                  "tier or above could be used")
            return
        yield self._pattern(suggestion, ctx)
        yield _na(Policy.DELEGATE_REQUEST, "not in delegation re-entry")
        yield from self._profile_model(request, ctx, Policy.WORKSPACE_DEFAULT)
        yield self._default(Policy.WORKSPACE_DEFAULT, self.policy.workspace_default, ctx,
                            "no workspace default configured")
        yield self._default(Policy.GLOBAL_DEFAULT, self.policy.global_default, ctx,
                            "no global default configured")

    def _try(self, policy: Policy, model: str, ctx: TurnContext, reason: str,
             **extra: object) -> PolicyEvaluation:
        rejection = self.validator.validate(model, ctx)
        if rejection is None:
            return PolicyEvaluation(policy=policy, verdict=Verdict.CHOSE, candidate_model=model,
                                    reason=reason, **extra)  # type: ignore[arg-type]
        return PolicyEvaluation(policy=policy, verdict=Verdict.REJECTED, candidate_model=model,
                                reason=f"{reason} → {model} rejected: {rejection.detail}",
                                validation_failure=rejection.failure,
                                outage_scope=rejection.outage_scope,
                                **extra)  # type: ignore[arg-type]

    def _override(self, override: Override | None, ctx: TurnContext) -> PolicyEvaluation:
        if override is None:
            return _na(Policy.PER_MESSAGE_OVERRIDE, "no @model token in message")
        return self._try(Policy.PER_MESSAGE_OVERRIDE, override.model, ctx,
                         override.reason or f'override "@{override.token}"')

    def _sticky(self, sticky: str | None, ctx: TurnContext) -> PolicyEvaluation:
        if sticky is None:
            return _na(Policy.MANUAL_STICKY, "no sticky model set")
        return self._try(Policy.MANUAL_STICKY, sticky, ctx, "sticky model set with /model")

    def _rules(self, ctx: TurnContext) -> Iterator[PolicyEvaluation]:
        rules = self.policy.rules
        matched = False
        for rule in self.policy.rule_index.candidates(ctx):
            if not rule.when.matches(ctx):
                continue
            matched = True
            evaluation = self._try(Policy.CONFIGURED_RULES, rule.use, ctx,
                                   f'rule "{rule.name}" matched', rule_name=rule.name)
            yield evaluation
            if evaluation.verdict is Verdict.CHOSE:
                return
        if not matched:
            reason = f"no rule matched ({len(rules)} checked)" if rules else "no rules configured"
            yield _na(Policy.CONFIGURED_RULES, reason)

    def _recommendation(self, ctx: TurnContext) -> Suggestion:
        if self.patterns is None:
            return None
        return self.patterns.recommend(ctx, self.policy.pattern, self.registry.models)

    def _pattern(self, rec: Suggestion, ctx: TurnContext) -> PolicyEvaluation:
        policy = Policy.PATTERN_RECOMMENDATION
        if not isinstance(rec, PatternRecommendation):
            return _na(policy, _no_suggestion(rec))
        settings = self.policy.pattern
        extra = {"confidence": rec.confidence, "sample_size": rec.sample_size,
                 "pattern_alternatives": rec.alternatives}
        described = f"suggested {rec.model} (score {rec.score:.3f}, confidence " \
                    f"{rec.confidence:.2f}, {samples(rec.sample_size)})"
        if rec.sample_size < settings.min_sample_size:
            return PolicyEvaluation(policy=policy, verdict=NA, candidate_model=None,
                                    reason=f"{described}: insufficient samples "
                                           f"(min_sample_size {settings.min_sample_size})",
                                    **extra)  # type: ignore[arg-type]
        if rec.confidence < settings.min_confidence:
            return PolicyEvaluation(policy=policy, verdict=NA, candidate_model=None,
                                    reason=f"{described}: below min_confidence "
                                           f"{settings.min_confidence}",
                                    **extra)  # type: ignore[arg-type]
        return self._try(policy, rec.model, ctx, described, **extra)

    def _deferred_in_delegation(self, rec: Suggestion) -> PolicyEvaluation:
        """Slot 4 inside a worker: a recommendation is kept in the trace but never chosen,
        so learned patterns cannot override the planner's tier (spec 001 §11)."""
        if not isinstance(rec, PatternRecommendation):
            return _na(Policy.PATTERN_RECOMMENDATION, _no_suggestion(rec))
        return PolicyEvaluation(policy=Policy.PATTERN_RECOMMENDATION, verdict=Verdict.DEFERRED,
                                candidate_model=rec.model, reason=DELEGATE_REQUEST_IN_FLIGHT,
                                confidence=rec.confidence, sample_size=rec.sample_size,
                                pattern_alternatives=rec.alternatives)

    def _deferred(
        self, rec: Suggestion, winner: PolicyEvaluation, ctx: TurnContext
    ) -> PolicyEvaluation | None:
        """The pattern's suggestion after an earlier policy won, validated like any
        candidate: one that could not take the turn (no key, provider down, not capable)
        says so and is never offered as ``/route override`` (:func:`surfaced_suggestion`)."""
        settings = self.policy.pattern
        if not isinstance(rec, PatternRecommendation) \
                or rec.sample_size < settings.min_sample_size \
                or rec.confidence < settings.min_confidence:
            return None
        reason = f"suggested {rec.model} (score {rec.score:.3f}, confidence " \
                 f"{rec.confidence:.2f}, {samples(rec.sample_size)}) — outranked by " \
                 f"{chosen_label(winner)}"
        rejection = None if rec.model == winner.candidate_model \
            else self.validator.validate(rec.model, ctx)
        if rejection is not None:
            reason = f"{reason}; it could not be used: {rejection.detail}"
        return PolicyEvaluation(
            policy=Policy.PATTERN_RECOMMENDATION, verdict=Verdict.DEFERRED,
            candidate_model=rec.model, reason=reason,
            confidence=rec.confidence, sample_size=rec.sample_size,
            pattern_alternatives=rec.alternatives,
            validation_failure=None if rejection is None else rejection.failure,
            outage_scope=None if rejection is None else rejection.outage_scope)

    def _profile_model(self, request: RouteRequest, ctx: TurnContext,
                       policy: Policy) -> Iterator[PolicyEvaluation]:
        """The profile's default model (its ``model``, or its ``tier``'s), tried before the
        workspace default; in a worker, before the requested tier (only for a ``model``, and
        never above the tier floor)."""
        active = request.profile
        if active is None:
            return
        model_policy = active.profile.model_policy
        model, what = model_policy.model, "model"
        if model is None and model_policy.tier is not None and policy is not \
                Policy.DELEGATE_REQUEST:
            model = self._tier_model(model_policy.tier, active)
            what = f"tier {model_policy.tier}"
        if model is None:
            return
        label = f'{PROFILE_DEFAULT}{active.name}" (from {active.resolved_from}): default {what}'
        floor = request.tier_floor if request.tier_floor in TIER_NAMES else None
        if policy is Policy.DELEGATE_REQUEST and self._above_floor(model, floor):
            yield self._floor_rejection(model, floor, label)
            return
        yield self._try(policy, model, ctx, label)  # when rejected, the usual default follows

    def _above_floor(self, model: str, floor: str | None) -> bool:
        return floor is not None and \
            tier_rank(model_tier(model, self.policy.tiers, self.registry)) > tier_rank(floor)

    def _floor_rejection(self, model: str, floor: str | None, label: str) -> PolicyEvaluation:
        return PolicyEvaluation(
            policy=Policy.DELEGATE_REQUEST, verdict=Verdict.REJECTED, candidate_model=model,
            reason=f"{label} → {model} rejected: its tier is above {floor}, the planner's",
            validation_failure=ValidationFailure.ABOVE_TIER_FLOOR)

    def _tier_model(self, tier: str, active: ActiveProfile | None) -> str | None:
        """``tier``'s model: the profile's own tier models first, then the policy's."""
        override = active.profile.model_policy.tiers.get(tier) if active is not None else None
        return override or self.resolve_tier(tier)

    def _delegate(self, request: RouteRequest, ctx: TurnContext) -> Iterator[PolicyEvaluation]:
        """The requested tier's candidates in order, capped at the planner's tier (the
        floor), then the next tiers up to the floor (or deep) while none validates."""
        tier = request.delegate_tier or ""
        if tier not in TIER_NAMES:
            yield _na(Policy.DELEGATE_REQUEST, f"unknown tier '{tier}'")
            return
        floor = request.tier_floor if request.tier_floor in TIER_NAMES else None
        start = tier
        if floor is not None and tier_rank(tier) > tier_rank(floor):
            start = floor
        top = len(TIER_NAMES) if floor is None else tier_rank(floor) + 1
        for step in TIER_NAMES[tier_rank(start):top]:
            chosen = yield from self._tier_candidates(request, step, floor, ctx)
            if chosen:
                return
        if floor is not None and top < len(TIER_NAMES):
            yield _na(Policy.DELEGATE_REQUEST, f"tier floor: not upgrading above {floor}, the "
                                               "planner's tier")

    def _tier_candidates(self, request: RouteRequest, step: str, floor: str | None,
                         ctx: TurnContext) -> Generator[PolicyEvaluation, None, bool]:
        """Try one tier's models; returns (as the generator's value) whether one was chosen."""
        tiers = self.policy.tiers
        override = tiers.for_complexity(step, request.complexity) if tiers else None
        models = override or tier_models(tiers, self.registry, step)
        mine = request.profile.profile.model_policy.tiers.get(step) if request.profile else None
        if mine is not None and self._above_floor(mine, floor):
            yield self._floor_rejection(mine, floor, f"profile tier {step} model {mine}")
        elif mine is not None:  # the worker profile's own model for this tier comes first
            models = (mine, *(m for m in models if m != mine))
        if not models:
            yield _na(Policy.DELEGATE_REQUEST, f"tier {step} has no model")
            return False
        requested = request.delegate_tier or step
        for position, model in enumerate(models, start=1):
            choice = TierChoice(
                requested_tier=requested, tier=step, candidate=position,
                complexity=request.complexity, complexity_source=request.complexity_source,
                complexity_override=override is not None, tier_floor=floor,
                floor_applied=floor is not None and tier_rank(requested) > tier_rank(floor))
            evaluation = self._tier_try(model, ctx, choice, len(models),
                                        request.reasoning_effort or self._tier_effort(step))
            yield evaluation
            if evaluation.verdict is Verdict.CHOSE:
                return True
        return False

    def _tier_effort(self, tier: str) -> str | None:
        tiers = self.policy.tiers
        return tiers.effort.get(tier) if tiers is not None else None

    def _tier_try(self, model: str, ctx: TurnContext, choice: TierChoice, count: int,
                  wanted_effort: str | None) -> PolicyEvaluation:
        reason = _tier_reason(model, choice, count)
        floor = choice.tier_floor
        if floor is not None and choice.complexity_override \
                and tier_rank(model_tier(model, self.policy.tiers, self.registry)) \
                > tier_rank(floor):
            return PolicyEvaluation(
                policy=Policy.DELEGATE_REQUEST, verdict=Verdict.REJECTED, candidate_model=model,
                reason=f"{reason} → {model} rejected: its tier is above {floor}, the planner's",
                validation_failure=ValidationFailure.ABOVE_TIER_FLOOR, tier_choice=choice)
        evaluation = self._try(Policy.DELEGATE_REQUEST, model, ctx, reason, tier_choice=choice)
        if evaluation.verdict is not Verdict.CHOSE:
            return evaluation
        effort, note = resolve_effort(self.registry.get(model), wanted_effort)
        if effort is None and note is None:
            return evaluation
        choice = msgspec.structs.replace(choice, reasoning_effort=effort, effort_note=note)
        extra = f"; reasoning effort {effort}" if effort else f"; {note}"
        return msgspec.structs.replace(evaluation, tier_choice=choice,
                                       reason=evaluation.reason + extra)

    def resolve_tier(self, tier: str) -> str | None:
        """The first model of ``tier``: workspace tiers, then global tiers, then the registry."""
        return next(iter(tier_models(self.policy.tiers, self.registry, tier)), None)

    def _default(self, policy: Policy, model: str | None, ctx: TurnContext,
                 missing: str) -> PolicyEvaluation:
        if not model:
            return _na(policy, missing)
        label = "workspace default" if policy is Policy.WORKSPACE_DEFAULT else "global default"
        return self._try(policy, model, ctx, label)

    def _budget_banner(self, request: RouteRequest, winner: PolicyEvaluation) -> list[str]:
        if winner.policy is not Policy.CONFIGURED_RULES:
            return []
        rule = self.policy.rule_index.named(winner.rule_name or "")
        limits = [p.usd for p in (rule.when.conjuncts() if rule else ())
                  if isinstance(p, CostTodayExceeds)]
        if not limits:
            return []
        spent = request.context.cost_today_usd
        return [f"Daily budget ${max(limits):.2f} exceeded (${spent:.2f} today). "
                f'Routing per "{winner.rule_name}" rule.']


_BEFORE_PATTERN = (Policy.PER_MESSAGE_OVERRIDE, Policy.MANUAL_STICKY, Policy.CONFIGURED_RULES)


def surfaced_suggestion(decision: RouteDecided,
                        settings: DisagreementSettings) -> PolicyEvaluation | None:
    """The pattern suggestion to show the user (spec §5.6), if surfacing is on and it is
    confident and well supported enough to disagree with the winner, and its model could
    take the turn: a suggestion ``/route override`` could not act on is not offered (it
    stays in the chain, with its ``validation_failure``, for "why this model?"). Nor is
    one inside a delegated worker, which takes no messages and whose tier patterns never
    override (spec 001 §11)."""
    if not settings.surface:
        return None
    deferred = next((e for e in decision.chain if e.policy is Policy.PATTERN_RECOMMENDATION
                     and e.verdict is Verdict.DEFERRED), None)
    winner = decision.winner
    if deferred is None or deferred.candidate_model == decision.chosen_model \
            or deferred.validation_failure is not None \
            or winner is None or winner.policy not in _BEFORE_PATTERN:  # a worker's tier
        return None
    if (deferred.confidence or 0) < settings.min_confidence \
            or (deferred.sample_size or 0) < settings.min_sample_size:
        return None
    return deferred


def disagreement_banner(decision: RouteDecided, suggestion: PolicyEvaluation) -> str:
    """The notice offering ``/route override`` and ``/route ignore``."""
    winner = decision.winner
    assert winner is not None
    return (f"→ Routing to {decision.chosen_model} per {chosen_label(winner)}\n"
            f"Pattern store suggests {suggestion.candidate_model} (confidence "
            f"{suggestion.confidence:.2f}, {samples(suggestion.sample_size)})\n"
            f"/route override to use {suggestion.candidate_model} for this turn\n"
            "/route ignore to dismiss")



def _tier_reason(model: str, choice: TierChoice, count: int) -> str:
    """E.g. ``tier balanced (capped from deep by the tier floor), complexity large
    (estimated) → candidate 2 of 3: openai:gpt-5``."""
    parts = [f"tier {choice.tier}"]
    if choice.floor_applied:
        parts.append(f" (capped from {choice.requested_tier} by the tier floor: the planner is "
                     f"{choice.tier_floor})")
    elif choice.tier != choice.requested_tier:
        parts.append(f" (upgraded from {choice.requested_tier})")
    if choice.complexity is not None:
        used = "its list for" if choice.complexity_override else "no override for"
        parts.append(f", {used} complexity {choice.complexity} ({choice.complexity_source})")
    parts.append(f" → candidate {choice.candidate} of {count}: {model}")
    return "".join(parts)


def _no_suggestion(rec: Unavailable | None) -> str:
    """Slot 4's reason when there is nothing to recommend (yet)."""
    return "no similar past turns" if rec is None else rec.reason


def _na(policy: Policy, reason: str) -> PolicyEvaluation:
    return PolicyEvaluation(policy=policy, verdict=NA, candidate_model=None, reason=reason)


def _with_banners(decision: RouteDecided, banners: list[str]) -> RouteDecided:
    return msgspec.structs.replace(decision, banners=banners)
