"""Human-readable renderings of a ``route.decided`` record ("why this model?")."""

from __future__ import annotations

from switchman.engine.availability import model_banner, provider_banner
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.keys import missing_key_hint
from switchman.engine.profiles.profile import origin_words
from switchman.engine.routing.decision import (
    Policy,
    PolicyEvaluation,
    RouteDecided,
    ValidationFailure,
    Verdict,
)
from switchman.engine.routing.overrides import ROUTE_OVERRIDE_REASON, ROUTE_OVERRIDE_SUMMARY
from switchman.engine.routing.validation import CandidateValidator

_LABELS = {
    Policy.PER_MESSAGE_OVERRIDE: "override",
    Policy.MANUAL_STICKY: "sticky model",
    Policy.CONFIGURED_RULES: "rule",
    Policy.PATTERN_RECOMMENDATION: "pattern recommendation",
    Policy.DELEGATE_REQUEST: "delegation tier",
    Policy.WORKSPACE_DEFAULT: "workspace default",
    Policy.GLOBAL_DEFAULT: "global default",
}

_SHORT_FAILURE = {
    ValidationFailure.NOT_CONFIGURED: "no API key",
    ValidationFailure.PROVIDER_UNAVAILABLE: "unavailable",
    ValidationFailure.NO_VISION_SUPPORT: "no vision",
    ValidationFailure.EXCEEDS_CONTEXT_WINDOW: "context window too small",
    ValidationFailure.NO_TOOL_SUPPORT: "no tool support",
    ValidationFailure.NO_SYSTEM_PROMPT_SUPPORT: "no system prompt support",
    ValidationFailure.NO_STRUCTURED_OUTPUT_SUPPORT: "no structured output",
    ValidationFailure.UNKNOWN_MODEL: "not in the registry",
    ValidationFailure.ABOVE_TIER_FLOOR: "above the planner's tier",
}


PROFILE_DEFAULT = 'profile "'
"""How the reason of a profile's default model starts (``profile "reviewer" (from session):
default tier deep``); it stands in slot 6, or slot 5 in a worker."""


def _profile_default(evaluation: PolicyEvaluation) -> str | None:
    """The profile whose default model this evaluation tried, if it was a profile's."""
    if evaluation.policy not in (Policy.WORKSPACE_DEFAULT, Policy.DELEGATE_REQUEST) or \
            not evaluation.reason.startswith(PROFILE_DEFAULT):
        return None
    name, found, _ = evaluation.reason.removeprefix(PROFILE_DEFAULT).partition('" (from ')
    return name if found else None


def chosen_label(evaluation: PolicyEvaluation) -> str:
    """What made the choice, e.g. ``rule "fast for commits"`` or ``workspace default``."""
    if evaluation.policy is Policy.CONFIGURED_RULES and evaluation.rule_name:
        return f'rule "{evaluation.rule_name}"'
    if evaluation.policy is Policy.PER_MESSAGE_OVERRIDE:
        return evaluation.reason
    if (profile := _profile_default(evaluation)) is not None:  # not the workspace's default
        return f'profile "{profile}" default'
    return _LABELS[evaluation.policy]


def short_reason(decision: RouteDecided) -> str:
    """A badge-sized reason: ``rule: fast for commits``, ``sticky model``, ..."""
    winner = decision.winner
    if winner is None:
        return "no model available"
    if winner.policy is Policy.CONFIGURED_RULES and winner.rule_name:
        return f"rule: {winner.rule_name}"
    if winner.policy is Policy.PER_MESSAGE_OVERRIDE:
        if winner.reason == ROUTE_OVERRIDE_REASON:
            return ROUTE_OVERRIDE_SUMMARY
        return winner.reason.replace('override "', "override ").rstrip('"')
    if (profile := _profile_default(winner)) is not None:
        return f"profile: {profile}"
    return _LABELS[winner.policy]


def render(decision: RouteDecided) -> str:
    """The full "why this model?" view, laid out like spec §7.3."""
    when = decision.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    session = f" · session {decision.session_id}" if decision.session_id else ""
    lines = [f"Turn {decision.turn_id or '-'}{session} · {when}"]
    winner = decision.winner
    if winner is None:
        lines.append("Chose: nothing — no model available; the turn did not start")
    else:
        lines.append(f"Chose: {decision.chosen_model} ({chosen_label(winner)})")
    if decision.profile is not None:
        profile = decision.profile
        lines.append(f"Profile: {profile.name} "
                     f"({origin_words(profile.resolved_from, profile.bounded_by)})")
    lines += ["", "Chain:"]
    for number, evaluation in enumerate(decision.chain, start=1):
        lines.extend(_chain_lines(number, evaluation))
    if decision.banners:
        lines += ["", *decision.banners]
    return "\n".join(lines)


def _chain_lines(number: int, evaluation: PolicyEvaluation) -> list[str]:
    head = f"  [{number}] {evaluation.policy.value:<24} {evaluation.verdict.value:<15}"
    reason = evaluation.reason
    if evaluation.verdict is Verdict.CHOSE and evaluation.candidate_model:
        # slot 4's reason names the model it suggests, which the line names already: spec
        # §7.3's `chose anthropic:claude-sonnet-4-6 (confidence 0.78, 12 samples)`, not
        # `… (suggested anthropic:claude-sonnet-4-6 (score …, 12 samples))`
        suggested = f"suggested {evaluation.candidate_model} ("
        if reason.startswith(suggested) and reason.endswith(")"):
            reason = reason[len(suggested):-1]
        reason = f"{evaluation.candidate_model} ({reason})"
    if evaluation.validation_failure is not None:
        reason = f"{reason} [{evaluation.validation_failure.value}]"
    return [head + reason, *_pattern_lines(evaluation)]


def _pattern_lines(evaluation: PolicyEvaluation) -> list[str]:
    """Slot 4's other candidates: each model's §5.5 score and how many past turns back it."""
    alternatives = evaluation.pattern_alternatives
    if evaluation.policy is not Policy.PATTERN_RECOMMENDATION or not alternatives:
        return []
    others = " · ".join(f"{o.model} {o.score:.3f} ({samples(o.sample_size)})"
                        for o in alternatives)
    return [f"{'':>31}also scored: {others}"]


def samples(count: int | None) -> str:
    """``1 sample``, ``23 samples``: how many past turns back a suggestion."""
    count = count or 0
    return f"{count} sample{'' if count == 1 else 's'}"


def fallthrough_banners(decision: RouteDecided) -> list[str]:
    """Banners for candidates rejected as unavailable before the winner (§4.5), and for the
    model the user named — with ``@alias``, or as the session's sticky model — when it cannot
    take the turn for another reason (asked for by name, it must not be replaced with only
    the badge to tell)."""
    winner = decision.winner
    if winner is None:
        return []
    target = f"{decision.chosen_model}"
    banners: list[str] = []
    for evaluation in decision.chain[: decision.winner_index]:
        failure = evaluation.validation_failure
        named = _named_by_user(evaluation)
        if failure is not None and failure is not ValidationFailure.PROVIDER_UNAVAILABLE \
                and named is not None:
            why = evaluation.reason.partition(" rejected: ")[2] or failure.value
            banners.append(f"{named} cannot take this turn: {why}. Routing fell through to "
                           f"{target} ({chosen_label(winner)}).")
        if failure is not ValidationFailure.PROVIDER_UNAVAILABLE:
            continue
        model = evaluation.candidate_model or ""
        if evaluation.outage_scope == "provider":
            provider = model.partition(":")[0]
            text = (f"{provider_banner(provider)[:-1]}. Routing fell through to {target} "
                    f"({chosen_label(winner)}).")
        else:
            text = f"{model_banner(model)} Routing fell through to {target}."
        if text not in banners:
            banners.append(text)
    return banners


def _named_by_user(evaluation: PolicyEvaluation) -> str | None:
    """How a banner names the model the user asked for by name: ``@haiku
    (anthropic:claude-haiku-4-5)``, ``The sticky model openai:gpt-5``; None for the others."""
    if evaluation.policy is Policy.PER_MESSAGE_OVERRIDE:
        alias = evaluation.reason.partition(" → ")[0].removeprefix("override ").strip('"')
        return f"{alias} ({evaluation.candidate_model})"
    if evaluation.policy is Policy.MANUAL_STICKY:
        return f"The sticky model {evaluation.candidate_model}"
    return None


def no_model_message(decision: RouteDecided, validator: CandidateValidator) -> str:
    """The hard-failure text shown when nothing validates (§4.7, §8).

    It suggests only providers a turn could actually use now (a key set, no
    outage) and says what to set up for the others.
    """
    tried: dict[str, ValidationFailure] = {}
    for evaluation in decision.chain:
        if evaluation.candidate_model and evaluation.validation_failure:
            tried.setdefault(evaluation.candidate_model, evaluation.validation_failure)
    lines = ["No model available for this turn."]
    if not tried:
        lines.append("No policy proposed a model: set a global_default in routing.yaml.")
        return "\n".join(lines)
    providers = {m.partition(":")[0] for m in tried}
    down = [e for e in decision.chain if e.outage_scope == "provider"]
    tier = _worker_tier(decision)
    if len(providers) == 1 and down and all(
            f is ValidationFailure.PROVIDER_UNAVAILABLE for f in tried.values()):
        provider = next(iter(providers))
        lines.append(provider_banner(provider))
        lines.append(f"Tried: {', '.join(tried)} — all on {provider}.")
        lines.extend(_alternatives(validator, exclude=providers, then="or wait for recovery",
                                   tier=tier)
                     or ["Wait for the provider to recover."])
        return "\n".join(lines)
    listed = ", ".join(f"{m} ({_SHORT_FAILURE[f]})" for m, f in tried.items())
    lines.append(f"Tried: {listed}")
    if all(f is ValidationFailure.NOT_CONFIGURED for f in tried.values()):
        lines.append(_key_hint(tried, validator.registry))
        lines.extend(_alternatives(validator, exclude=providers, tier=tier))
    elif tier is not None:
        lines.append(f"Check the {tier} tier's models (tiers: in routing.yaml, /rules check).")
    elif all(f is ValidationFailure.EXCEEDS_CONTEXT_WINDOW for f in tried.values()):
        # no model to pick with /model: a sticky one is checked against the window too
        lines.append("The message, its attachments and the conversation so far do not fit the "
                     "context window of any of these models: send less (a part of the text, "
                     "fewer attachments), or start a new session.")
    else:
        lines.append("Run /model <id> to choose explicitly, or /rules check.")
    return "\n".join(lines)


def _worker_tier(decision: RouteDecided) -> str | None:
    """The tier a worker's turn asked for (None for a person's turn). ``/model`` sets a
    person's session's model, which a worker's tier does not follow: its advice names
    ``tiers:`` instead."""
    return next((e.tier_choice.requested_tier for e in decision.chain
                 if e.tier_choice is not None), None)


def _key_hint(tried: dict[str, ValidationFailure], registry: ModelRegistry) -> str:
    sources = []
    for model in tried:
        provider = registry.provider_of(model)
        source = provider and missing_key_hint(provider)
        if source and source not in sources:
            sources.append(source)
    keys = " or ".join(sources) or "an API key"
    return f"Set {keys} (see 'switchman models')."


def _alternatives(validator: CandidateValidator, exclude: set[str], then: str = "",
                  tier: str | None = None) -> list[str]:
    """Which other providers a turn (a worker's of ``tier``) could use now, and what the
    rest need set up."""
    registry = validator.registry
    usable: list[str] = []
    setup: list[str] = []
    for provider in sorted(registry.providers.values(), key=lambda p: p.name):
        model = next((m.id for m in registry.models.values() if m.provider == provider.name),
                     None)
        if provider.name in exclude or model is None:
            continue
        if not validator.configured(provider):
            if provider.needs_key:
                setup.append(f"{provider.api_key_env or provider.api_key_file} for "
                             f"{provider.name}")
        elif (outage := validator.availability(provider.name, model)) is None \
                or outage.scope != "provider":
            usable.append(provider.name if provider.needs_key else
                          f"{provider.name} (if its server at {provider.base_url} is running)")
    lines = []
    if usable:
        names = " or ".join(usable)
        where = f"Run /model <id> to choose a model from {names}" if tier is None \
            else f"Add a model from {names} to the {tier} tier (tiers: in routing.yaml)"
        lines.append(f"{where}{', ' + then if then else ''}.")
    if setup:
        lines.append(f"To use other providers, set {', '.join(setup)}.")
    return lines
