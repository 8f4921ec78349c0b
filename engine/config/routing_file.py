"""routing.yaml (user level) and .switchman/routing.yaml (workspace level) semantics."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from switchman.engine.config import schema as s
from switchman.engine.config.effort_support import check_effort_support
from switchman.engine.config.policy import (
    DelegationSettings,
    DisagreementSettings,
    PatternSettings,
    RoutingPolicy,
    Rule,
    Tiers,
    WorkspacePolicy,
)
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.shadowing import ShadowIndex
from switchman.engine.config.tier_order import check_tier_order
from switchman.engine.config.walker import Path, Walker, shorten
from switchman.engine.config.yamldoc import YamlDocument, parse_yaml
from switchman.engine.routing.predicates import (
    ALWAYS,
    Predicate,
    build_predicate,
    message_patterns,
)


def check_routing_text(
    text: str, path: str, registry: ModelRegistry, base: Mapping[str, Any] | None = None
) -> tuple[RoutingPolicy | None, list[Problem]]:
    """Validate a user routing.yaml.

    ``base`` holds the built-in policy's validated values: top-level keys the
    file leaves out keep those. Returns the policy (None if the file has
    errors) and every problem found.
    """
    return check_routing_doc(parse_yaml(text, path), registry, base)


def check_routing_doc(
    doc: YamlDocument, registry: ModelRegistry, base: Mapping[str, Any] | None = None
) -> tuple[RoutingPolicy | None, list[Problem]]:
    """:func:`check_routing_text` for an already parsed document."""
    if doc.problems:
        return None, doc.problems
    walker = Walker(doc, registry.resolve, registry.names())
    raw = _walk_root(walker, doc, s.ROUTING_FILE)
    _check_schema_version(walker, raw)
    values = {**(base or {}), **raw}
    rules = _rules(walker, values.get("rules", []), ("rules",), raw_paths="rules" in raw)
    tiers = _tiers(walker, registry, values.get("tiers"), ("tiers",))
    workspaces = tuple(
        _workspace(walker, registry, folder, block, ("workspaces", folder))
        for folder, block in raw.get("workspaces", {}).items()
        if _workspace_path_ok(walker, folder)
    )
    if "global_default" not in values:
        walker.report(walker.range_at(()), Code.MISSING_KEY,
                      "routing.yaml needs a 'global_default' model.")
    if _has_errors(walker.problems):
        return None, walker.problems
    policy = RoutingPolicy(
        global_default=values["global_default"],
        tiers=tiers,
        pattern=_pattern(values.get("pattern")) or PatternSettings(),
        disagreement=DisagreementSettings(**values.get("pattern_disagreement", {})),
        delegation=DelegationSettings(**values.get("delegation", {})),
        rules=rules,
        workspaces=workspaces,
    )
    return policy, walker.problems


def check_workspace_text(
    text: str, path: str, registry: ModelRegistry, folder: str
) -> tuple[WorkspacePolicy | None, list[Problem]]:
    """Validate a workspace's ``.switchman/routing.yaml`` (untrusted input)."""
    return check_workspace_doc(parse_yaml(text, path), registry, folder)


def check_workspace_doc(
    doc: YamlDocument, registry: ModelRegistry, folder: str
) -> tuple[WorkspacePolicy | None, list[Problem]]:
    """:func:`check_workspace_text` for an already parsed document."""
    if doc.problems:
        return None, doc.problems
    walker = Walker(doc, registry.resolve, registry.names())
    raw = _walk_root(walker, doc, s.WORKSPACE_FILE)
    _check_schema_version(walker, raw)
    block = _workspace(walker, registry, folder, raw, ())
    if _has_errors(walker.problems):
        return None, walker.problems
    return block, walker.problems


def routing_defaults_values(text: str, registry: ModelRegistry) -> dict[str, Any]:
    """The built-in routing.yaml's validated values, used as ``base`` for a user file.

    Empty when the built-in policy does not fit ``registry`` (for example when
    the user turned the built-in models off); the user file must then say
    everything itself.
    """
    doc = parse_yaml(text, "<builtin routing.yaml>")
    walker = Walker(doc, registry.resolve, registry.names())
    raw = _walk_root(walker, doc, s.ROUTING_FILE)
    return {} if walker.problems or doc.problems else raw


def _has_errors(problems: list[Problem]) -> bool:
    return any(p.severity is Severity.ERROR for p in problems)


def _walk_root(walker: Walker, doc: YamlDocument, spec: s.Obj) -> dict[str, Any]:
    if doc.root is None:
        return {}
    value = walker.walk(doc.root, spec, ())
    return value if isinstance(value, dict) else {}


def _check_schema_version(walker: Walker, raw: Mapping[str, Any]) -> None:
    version = raw.get("schema_version")
    if version is not None and version not in s.SUPPORTED_SCHEMA_VERSIONS:
        supported = ", ".join(map(str, s.SUPPORTED_SCHEMA_VERSIONS))
        walker.report(walker.range_at(("schema_version",)), Code.SCHEMA_VERSION,
                      f"schema_version {shorten(str(version))} is not supported by this Switchman "
                      f"(supported: {supported}). Upgrade Switchman or use version 1.")


def _workspace_path_ok(walker: Walker, folder: str) -> bool:
    if folder.startswith("~") or os.path.isabs(folder):
        return True
    walker.report(walker.range_at(("workspaces", folder), key=True), Code.INVALID_WORKSPACE_PATH,
                  f"Workspace '{folder}' must be an absolute path (or start with ~).")
    return False


def _workspace(walker: Walker, registry: ModelRegistry, folder: str, raw: Mapping[str, Any],
               path: Path) -> WorkspacePolicy:
    return WorkspacePolicy(
        path=folder,
        default=raw.get("default"),
        pattern=_pattern(raw.get("pattern")),
        tiers=_tiers(walker, registry, raw.get("tiers"), (*path, "tiers")),
        rules=_rules(walker, raw.get("rules", []), (*path, "rules")),
    )


def _pattern(raw: Mapping[str, Any] | None) -> PatternSettings | None:
    if raw is None:
        return None
    return PatternSettings(**raw)


def _tiers(walker: Walker, registry: ModelRegistry, raw: Mapping[str, Any] | None,
           path: Path) -> Tiers | None:
    if not raw:
        return None
    _check_repeats(walker, registry, raw, path)
    # A tier written but invalid is already reported where it is; only absent ones are missing.
    missing = [t for t in s.TIER_NAMES if t not in raw and walker.node_at((*path, t)) is None]
    if any(t not in raw for t in s.TIER_NAMES) and not missing:
        return None
    if missing:
        if walker.node_at(path) is not None:  # only report on tiers written in this file
            walker.report(walker.range_at(path, key=True), Code.PARTIAL_TIERS,
                          f"tiers must name all of fast, balanced and deep (missing: "
                          f"{', '.join(missing)}). Copy the global mapping for tiers you do not "
                          "want to change.", data={"missing": missing})
        return None
    tiers = Tiers(tuple(raw["fast"]), tuple(raw["balanced"]), tuple(raw["deep"]),
                  complexity={tier: {level: tuple(models) for level, models in levels.items()}
                              for tier, levels in raw.get("complexity", {}).items()},
                  effort=dict(raw.get("effort", {})))
    _check_effort(walker, registry, tiers, path)
    _check_order(walker, registry, tiers, path)
    return tiers


def _check_repeats(walker: Walker, registry: ModelRegistry, raw: Mapping[str, Any],
                   path: Path) -> None:
    """``duplicate-model`` at each model a tier's list (or one of its complexity levels'
    lists) names again, by its id or an alias: a model that cannot run a worker the first
    time cannot the second, so the repeat is no fallback (a slip for another model)."""
    lists = [((*path, tier), f"the {tier} tier's list") for tier in s.TIER_NAMES]
    complexity = raw.get("complexity")
    if isinstance(complexity, Mapping):
        lists += [((*path, "complexity", tier, level), f"the {tier} tier's {level} list")
                  for tier, levels in complexity.items() if isinstance(levels, Mapping)
                  for level in levels]
    for where, what in lists:
        node = walker.node_at(where)
        if node is None or node.kind != "sequence":
            continue
        seen: dict[str, str] = {}
        for index, item in enumerate(node.items):
            if item.kind != "scalar" or not item.text:
                continue
            model = registry.resolve(item.text) or item.text
            if model not in seen:
                seen[model] = item.text
                continue
            first = seen[model]
            same = "" if first == item.text else f" (as '{first}')"
            walker.report(walker.range_at((*where, index)), Code.DUPLICATE_MODEL,
                          f"'{item.text}' is already in {what}{same}: if it cannot run a "
                          "worker the first time (no key, an outage, too weak for the task), "
                          "it cannot the second, so the repeat adds no fallback. Remove it, "
                          "or name the model you meant.", Severity.WARNING,
                          data={"first": first})


def _check_order(walker: Walker, registry: ModelRegistry, tiers: Tiers, path: Path) -> None:
    """``inverted-tiers`` among the tiers' first models (the others are fallbacks), then at
    each complexity level some tier has a list for, reported at the lists that change a
    tier's model (a tier without one is compared with its own first model: that order is
    reported just before)."""
    firsts = {t: (ms[0], (*path, t, 0) if walker.node_at((*path, t)) is not None else None)
              for t in s.TIER_NAMES if (ms := tiers.models(t))}
    check_tier_order(walker, registry, firsts)
    for level in s.COMPLEXITY_LEVELS:
        lists = {t: found for t, levels in tiers.complexity.items()
                 if (found := levels.get(level))}
        if not lists:
            continue
        models: dict[str, tuple[str, Path | None]] = {t: (m, None) for t, (m, _) in firsts.items()}
        for tier, listed in lists.items():
            where = (*path, "complexity", tier, level)
            changed = listed[0] != models.get(tier, ("", None))[0]
            models[tier] = (listed[0], (*where, 0) if changed and walker.node_at(where)
                            is not None else None)
        check_tier_order(walker, registry, models, f"For {level} tasks, ")


def _check_effort(walker: Walker, registry: ModelRegistry, tiers: Tiers, path: Path) -> None:
    """Warn where a tier's effort would be ignored: a model of the tier (or of one of its
    complexity overrides) has no reasoning-effort setting."""
    for tier, effort in tiers.effort.items():
        where = (*path, "effort", tier)
        if walker.node_at(where) is None:  # inherited from the built-in policy
            continue
        models = [*tiers.models(tier), *(m for ms in tiers.complexity.get(tier, {}).values()
                                         for m in ms)]
        check_effort_support(walker, registry, where, effort, models,
                             "Workers on the other models of the tier use it.")


def _rules(
    walker: Walker, raw: list[dict[str, Any]], path: Path, *, raw_paths: bool = True
) -> tuple[Rule, ...]:
    """Build rules; report duplicate names and shadowed rules."""
    rules: list[Rule] = []
    shadows = ShadowIndex()  # rules without problems, for shadowing checks
    names: dict[str, int] = {}
    for index, item in enumerate(raw):
        # A rule dropped for its `use` (unknown model, wrong type, missing) keeps its name.
        if isinstance(name := item.get("name"), str) and name:
            if name in names and raw_paths:
                walker.report(walker.range_at((*path, index, "name")), Code.DUPLICATE_RULE_NAME,
                              f"Another rule above is already named '{name}'; rule names "
                              "must be unique so traces can name them.")
            names.setdefault(name, index)
        rule = _rule(walker, item, (*path, index), index, located=raw_paths)
        if rule is None:
            continue
        if raw_paths and not walker.tainted((*path, index)):
            _check_shadowing(walker, shadows, rule, (*path, index))
        rules.append(rule)
    return tuple(rules)


def _rule(
    walker: Walker, item: Mapping[str, Any], path: Path, index: int, *, located: bool
) -> Rule | None:
    if "use" not in item:
        return None
    node = walker.node_at(path) if located else None
    name = item.get("name")
    predicate, patterns = _condition(walker, item)
    return Rule(
        name=name if name else f"rule_{index + 1}",
        use=item["use"],
        when=predicate,
        message_patterns=patterns,
        synthetic_name=not name,
        source=walker.doc.path if located else "<builtin routing.yaml>",
        line=node.start[0] if node is not None else None,
    )


def _condition(walker: Walker, item: Mapping[str, Any]) -> tuple[Predicate, tuple[str, ...]]:
    """The rule's predicate and its message patterns (re-used while the item is unchanged)."""
    memo = walker.doc.memo
    known = memo.get(item, _condition, None) if memo is not None else None
    if known is None:
        when = item.get("when") or {}
        predicate = build_predicate(when) if when else ALWAYS
        known = (predicate, message_patterns(predicate))
        if memo is not None:
            memo.put(item, _condition, None, known)
    return known


def _check_shadowing(walker: Walker, index: ShadowIndex, rule: Rule, path: Path) -> None:
    memo = walker.doc.memo
    keys = memo.get(rule.when, ShadowIndex, None) if memo is not None else None
    if keys is None:
        keys = ShadowIndex.keys_for(rule.when)
        if memo is not None:
            memo.put(rule.when, ShadowIndex, None, keys)
    prior = index.add(rule, keys)
    if prior is None:
        return
    if prior.when == ALWAYS:
        why = f"rule '{prior.name}' above has no conditions, so it matches every turn"
    elif prior.when == rule.when:
        why = f"rule '{prior.name}' above has the same conditions"
    else:
        why = f"whenever this rule matches, rule '{prior.name}' above matches too"
    if prior.use == rule.use:
        effect = "This rule can never be chosen."
    else:
        effect = (f"This rule is only reached when {prior.use} is rejected (unavailable or "
                  "lacking a capability). Move it above if it should win.")
    anchor = next((q for q in ((*path, "name"), (*path, "when")) if walker.node_at(q)), path)
    walker.report(walker.range_at(anchor), Code.SHADOWED_RULE, f"Shadowed: {why}. {effect}",
                  Severity.WARNING, data={"shadowed_by": prior.name,
                                          "shadowed_by_line": prior.line})
