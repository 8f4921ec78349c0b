"""The routing policy as the engine uses it, after validation."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property

import msgspec

from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.routing.predicates import ALWAYS, Predicate, describe
from switchman.engine.routing.ruleindex import RuleIndex


class PatternSettings(msgspec.Struct, frozen=True):
    """How pattern recommendations are scored and gated (spec §5.5)."""

    cost_weight: float = 0.05
    min_confidence: float = 0.05
    min_sample_size: int = 5
    neighbors: int = 10
    neighborhood: str = "nearest"
    """``nearest``: the K nearest past turns (spec §5.5); ``per_model``: the K nearest of
    each model among the nearest few hundred (an extension, see docs/routing.md)."""
    similarity_exponent: float = 0.0
    """Each neighbour's samples count similarity ** exponent times (0: all alike, §5.5)."""


class DisagreementSettings(msgspec.Struct, frozen=True):
    """When to surface a confident pattern that disagrees with the winning rule."""

    surface: bool = False
    min_confidence: float = 0.85
    min_sample_size: int = 20


class DelegationSettings(msgspec.Struct, frozen=True):
    """Whether planners may hand sub-tasks to workers, how many at once, and whether a
    worker's tier is capped at its planner's (the tier floor)."""

    enabled: bool = True
    max_concurrent_workers: int = 3
    timeout_seconds: float = 600.0
    tier_floor: bool = True


class Tiers(msgspec.Struct, frozen=True):
    """The ordered models of each delegation tier, with optional overrides by task
    complexity and a reasoning effort per tier."""

    fast: tuple[str, ...]
    balanced: tuple[str, ...]
    deep: tuple[str, ...]
    complexity: dict[str, dict[str, tuple[str, ...]]] = {}
    """tier → complexity level → models; a level left out inherits the tier's list."""
    effort: dict[str, str] = {}
    """tier → ``low`` / ``medium`` / ``high``."""

    def models(self, tier: str) -> tuple[str, ...]:
        """The tier's ordered models (empty for an unknown tier name)."""
        found: tuple[str, ...] = getattr(self, tier, ()) if tier in TIER_NAMES else ()
        return found

    def get(self, tier: str) -> str | None:
        """The tier's first model, or None for an unknown tier name."""
        return next(iter(self.models(tier)), None)

    def for_complexity(self, tier: str, complexity: str | None) -> tuple[str, ...] | None:
        """The override list for ``complexity`` in ``tier``, or None to inherit."""
        if complexity is None:
            return None
        return self.complexity.get(tier, {}).get(complexity)


@dataclass(frozen=True)
class Rule:
    """One routing rule, in file order."""

    name: str
    use: str
    when: Predicate = ALWAYS
    synthetic_name: bool = False
    source: str = ""
    """The file the rule came from."""
    line: int | None = None
    """0-based line of the rule in its file; None when it was not read from a file here (the
    built-in policy's rules that a routing.yaml without ``rules`` keeps)."""
    message_patterns: tuple[str, ...] = ()
    """The RE2 patterns of ``when``'s ``message_matches`` and ``message_contains_any``
    conditions (matched in one pass per turn)."""

    def summary(self) -> str:
        """``name: condition -> model`` on one line."""
        return f"{self.name}: {describe(self.when)} -> {self.use}"


@dataclass(frozen=True)
class WorkspacePolicy:
    """Settings that apply to one workspace folder (and folders below it)."""

    path: str
    default: str | None = None
    pattern: PatternSettings | None = None
    tiers: Tiers | None = None
    rules: tuple[Rule, ...] = ()

    def covers(self, folder: str) -> bool:
        """Whether ``folder`` is this workspace or lies below it."""
        mine = os.path.normpath(os.path.expanduser(self.path))
        theirs = os.path.normpath(folder)
        return theirs == mine or theirs.startswith(mine.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class RoutingPolicy:
    """The user-level routing policy (routing.yaml)."""

    global_default: str
    tiers: Tiers | None = None
    pattern: PatternSettings = field(default_factory=PatternSettings)
    disagreement: DisagreementSettings = field(default_factory=DisagreementSettings)
    delegation: DelegationSettings = field(default_factory=DelegationSettings)
    rules: tuple[Rule, ...] = ()
    workspaces: tuple[WorkspacePolicy, ...] = ()

    def workspace_block(self, folder: str | None) -> WorkspacePolicy | None:
        """The most specific ``workspaces:`` entry covering ``folder``."""
        if folder is None:
            return None
        covering = [w for w in self.workspaces if w.covers(folder)]
        return max(covering, key=lambda w: len(os.path.expanduser(w.path)), default=None)


@dataclass(frozen=True)
class EffectivePolicy:
    """Everything routing needs for one workspace, overlays already applied.

    Rule order: the user's ``workspaces:`` block, then the workspace's own
    ``.switchman/routing.yaml``, then the global rules. For default, pattern and
    tiers the user's block wins over the workspace file, which wins over the
    global section.
    """

    global_default: str
    workspace_default: str | None
    rules: tuple[Rule, ...]
    pattern: PatternSettings
    disagreement: DisagreementSettings
    tiers: Tiers | None
    sources: tuple[str, ...] = field(default=())
    delegation: DelegationSettings = field(default_factory=DelegationSettings)

    @cached_property
    def rule_index(self) -> RuleIndex:
        """The rules indexed for routing (built once per policy)."""
        return RuleIndex(self.rules)


def effective_policy(
    policy: RoutingPolicy, folder: str | None, workspace_file: WorkspacePolicy | None
) -> EffectivePolicy:
    """Combine the global policy with the overlays that apply to ``folder``."""
    block = policy.workspace_block(folder)
    layers = [layer for layer in (block, workspace_file) if layer is not None]

    def first(attr: str) -> object:
        return next((getattr(x, attr) for x in layers if getattr(x, attr) is not None), None)

    pattern = first("pattern")
    tiers = first("tiers")
    default = first("default")
    return EffectivePolicy(
        global_default=policy.global_default,
        workspace_default=default if isinstance(default, str) else None,
        rules=tuple(r for layer in layers for r in layer.rules) + policy.rules,
        pattern=pattern if isinstance(pattern, PatternSettings) else policy.pattern,
        disagreement=policy.disagreement,
        tiers=tiers if isinstance(tiers, Tiers) else policy.tiers,
        sources=tuple(layer.path for layer in layers),
        delegation=policy.delegation,
    )
