"""Advice beyond the schema: rules that are valid but will not work as meant.

* ``no-vision-model``: a rule that only matches turns with images
  (``has_images: true``) sends them to a model that cannot read images, so
  routing always rejects it for those turns.
* ``missing-api-key``: the rule's model belongs to a provider whose API key is
  not set where the daemon runs, so the rule can never win.
* ``no-cost-tracking``: a budget condition (``cost_today_exceeds_usd``) while
  no model has a price, so today's cost stays $0 and it never matches.
* ``unnamed-rule`` (a hint): traces can only call the rule ``rule_<n>``.
* ``empty-when`` (information): ``when:`` with no value matches every turn, which a
  forgotten condition looks like; ``when: {}`` (or no ``when``) says so on purpose.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from switchman.engine.config.check import FileKind
from switchman.engine.config.nodes import distinct, is_true, pairs_named, rule_lists, scalar_text
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.yamldoc import YamlDocument, YamlNode
from switchman.engine.keys import KeyRing, missing_key_hint
from switchman.engine.wording import closest

_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ .-]*\Z")


class _Context:
    """What every rule is checked against, computed once per document."""

    def __init__(self, doc: YamlDocument, registry: ModelRegistry,
                 keys: KeyRing) -> None:
        self.doc = doc
        self.registry = registry
        self.keys = keys
        self.costs_known = any(not m.pricing.is_free for m in registry.models.values())
        self._key_set: dict[str, bool] = {}

    def key_set(self, provider: str) -> bool:
        """Whether calls to ``provider`` can be made (cached per document)."""
        if provider not in self._key_set:
            spec = self.registry.providers.get(provider)
            self._key_set[provider] = spec is None or self.keys.present(spec)
        return self._key_set[provider]


def advise(kind: FileKind, doc: YamlDocument, registry: ModelRegistry,
           keys: KeyRing) -> list[Problem]:
    """Advice for every rule of a routing or workspace file (nothing for models.yaml)."""
    if doc.problems or doc.root is None:
        return []
    context = _Context(doc, registry, keys)
    problems: list[Problem] = []
    for _, rules in rule_lists(kind, doc.root):
        names = {n for item in rules.items if (n := _name(item))}
        for index, item in enumerate(rules.items):
            if item.kind == "mapping":
                problems += _advise_rule(context, item, index, names)
    return problems


def suggest_name(rule: YamlNode, taken: set[str], registry: ModelRegistry) -> str:
    """A readable, unused name for an unnamed rule, e.g. ``haiku for message_matches``. An
    unknown model is named as the ``unknown-model`` fix would correct it (its closest known
    name), else left out (``rule for message_matches``): a misspelling is never kept."""
    written = scalar_text(rule, "use")
    model = written if written is None or registry.resolve(written) is not None \
        else next(iter(closest(written, registry.names())), None)
    resolved = registry.resolve(model) if model is not None else None
    short = registry.short_name(resolved) if resolved else "model" if written is None \
        else "rule"
    when = rule.get("when")
    first = when.pairs[0][0].text if when is not None and when.kind == "mapping" and when.pairs \
        else "every turn"
    base = f"{short} for {first}" if _PLAIN_NAME.match(f"{short} for {first}") else "rule"
    name, number = base, 2
    while name in taken:
        name, number = f"{base} {number}", number + 1
    return name


def _name(rule: YamlNode) -> str | None:
    return scalar_text(rule, "name") if rule.kind == "mapping" else None


def _advise_rule(context: _Context, rule: YamlNode, index: int, names: set[str]) -> list[Problem]:
    doc = context.doc
    problems: list[Problem] = []
    if _name(rule) is None:
        problems.append(doc.problem(
            doc.range_of(rule), Code.UNNAMED_RULE,
            f"This rule has no name, so traces call it rule_{index + 1}. Name it so "
            "'why this model?' says which rule chose.", Severity.HINT,
            data={"synthetic_name": f"rule_{index + 1}",
                  "suggested_name": suggest_name(rule, names, context.registry)}))
    use = rule.get("use")
    model_id = context.registry.resolve(use.text) if use is not None and use.kind == "scalar" \
        else None
    when = rule.get("when")
    if use is not None and model_id is not None:
        problems += _model_advice(context, use, model_id, when)
    if when is not None and when.is_null:
        problems += _empty_when(doc, rule)
    if not context.costs_known:
        problems += [doc.problem(
            doc.range_of(key), Code.NO_COST_TRACKING,
            "No model in the registry has a price, so today's cost is always $0 and this "
            "condition never matches. Add pricing to your models in models.yaml.",
            Severity.WARNING) for key in _keys_named(when, "cost_today_exceeds_usd")]
    return problems


def _empty_when(doc: YamlDocument, rule: YamlNode) -> list[Problem]:
    key = rule.key_node("when")
    if key is None:
        return []
    return [doc.problem(
        doc.range_of(key), Code.EMPTY_WHEN,
        "This 'when' is empty, so the rule matches every turn and the rules below it are "
        "only tried when its model is rejected. Add conditions under it, or, to match "
        "every turn on purpose, write 'when: {}' (or leave 'when' out).", Severity.INFORMATION)]


def _model_advice(context: _Context, use: YamlNode, model_id: str,
                  when: YamlNode | None) -> list[Problem]:
    doc, registry = context.doc, context.registry
    model = registry.models[model_id]
    problems: list[Problem] = []
    if _needs_images(when) and not model.capabilities.supports_images:
        vision = [m.id for m in registry.models.values() if m.capabilities.supports_images]
        hint = f" For example {vision[0]}." if vision else ""
        problems.append(doc.problem(
            doc.range_of(use), Code.NO_VISION_MODEL,
            f"This rule only matches turns with images, but {model_id} cannot read images, so "
            f"routing always rejects it for them (no_vision_support).{hint}", Severity.WARNING,
            data={"model": model_id, "suggestions": vision[:3]}))
    if not context.key_set(model.provider):
        provider = registry.providers[model.provider]
        source = provider.api_key_env or provider.api_key_file or "an API key"
        problems.append(doc.problem(
            doc.range_of(use), Code.MISSING_API_KEY,
            f"No API key for {model.provider}: set {missing_key_hint(provider)} where Switchman "
            f"runs (your editor's environment). Until then {model_id} is rejected "
            "(not_configured) and this rule never wins.", Severity.WARNING,
            data={"provider": model.provider, "key_source": source}))
    return problems


def _needs_images(when: YamlNode | None) -> bool:
    """Whether every turn the condition matches carries images (has_images: true as a conjunct)."""
    return any(key.text == "has_images" and is_true(value) for key, value in _conjuncts(when))


def _conjuncts(when: YamlNode | None) -> Iterator[tuple[YamlNode, YamlNode]]:
    """The conditions that must all hold: ``when``'s keys and those inside ``all_of``."""
    for node in distinct(when, lambda key: key == "all_of"):
        yield from node.pairs


def _keys_named(node: YamlNode | None, name: str) -> Iterator[YamlNode]:
    """Every key ``name`` in a condition, however deeply nested."""
    return (key for key, _ in pairs_named(node, name))
