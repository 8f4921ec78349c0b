"""models.yaml semantics: merge over the built-in registry, check providers and aliases."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from switchman.engine.config import schema as s
from switchman.engine.config.problems import Code, Problem, Severity
from switchman.engine.config.registry import (
    ApiKind,
    Capabilities,
    ModelRegistry,
    ModelSpec,
    Pricing,
    ProviderSpec,
)
from switchman.engine.config.walker import Walker
from switchman.engine.config.yamldoc import YamlDocument, parse_yaml

Raw = dict[str, Any]

DELEGATING_TIERS = ("balanced", "deep")
"""Tiers whose models may delegate when their entry does not say (``can_delegate``)."""


def check_models_text(
    text: str, path: str, builtin: Mapping[str, Any] | None
) -> tuple[ModelRegistry | None, list[Problem]]:
    """Validate a models.yaml merged over ``builtin`` (the built-in file's values).

    Returns the registry (None when the file has errors) and every problem.
    """
    return check_models_doc(parse_yaml(text, path), builtin)


def check_models_doc(
    doc: YamlDocument, builtin: Mapping[str, Any] | None
) -> tuple[ModelRegistry | None, list[Problem]]:
    """:func:`check_models_text` for an already parsed document."""
    if doc.problems:
        return None, doc.problems
    walker = Walker(doc)
    raw: Raw = {}
    if doc.root is not None:
        value = walker.walk(doc.root, s.MODELS_FILE, ())
        raw = value if isinstance(value, dict) else {}
    _check_version(walker, raw)
    base: Mapping[str, Any] = builtin if raw.get("use_builtin_models", True) and builtin else {}
    providers = _merge(base.get("providers", {}), raw.get("providers", {}))
    models = _merge(base.get("models", {}), raw.get("models", {}), deep=("capabilities", "pricing"))
    specs = _providers(walker, providers)
    model_specs = [m for m in (_model(walker, mid, v, specs) for mid, v in models.items()) if m]
    _check_aliases(walker, model_specs)
    if any(p.severity is Severity.ERROR for p in walker.problems):
        return None, walker.problems
    return ModelRegistry(specs, model_specs), walker.problems


def builtin_values(text: str) -> Raw:
    """The validated values of the built-in models.yaml."""
    doc = parse_yaml(text, "<builtin models.yaml>")
    walker = Walker(doc)
    assert doc.root is not None
    assert not doc.problems
    value = walker.walk(doc.root, s.MODELS_FILE, ())
    if walker.problems:
        raise AssertionError(f"built-in models.yaml is invalid: {walker.problems}")
    return value  # type: ignore[no-any-return]


def _check_version(walker: Walker, raw: Raw) -> None:
    version = raw.get("schema_version")
    if version is not None and version not in s.SUPPORTED_SCHEMA_VERSIONS:
        walker.report(walker.range_at(("schema_version",)), Code.SCHEMA_VERSION,
                      f"schema_version {version} is not supported (supported: 1).")


def _merge(base: Mapping[str, Raw], mine: Mapping[str, Raw], deep: tuple[str, ...] = ()) -> dict[
    str, Raw]:
    """Entries of ``mine`` refine same-named ``base`` entries field by field."""
    merged = {key: dict(value) for key, value in base.items()}
    for key, value in mine.items():
        entry = merged.setdefault(key, {})
        for field, item in value.items():
            if field in deep and isinstance(entry.get(field), dict):
                entry[field] = {**entry[field], **item}
            else:
                entry[field] = item
    return merged


def _providers(walker: Walker, raw: Mapping[str, Raw]) -> dict[str, ProviderSpec]:
    specs: dict[str, ProviderSpec] = {}
    for name, value in raw.items():
        if "api" not in value:
            walker.report(walker.range_at(("providers", name), key=True), Code.MISSING_KEY,
                          f"Provider '{name}' needs 'api': anthropic, openai or openai_compatible.")
            continue
        specs[name] = ProviderSpec(
            name=name,
            api=ApiKind(value["api"]),
            api_key_env=value.get("api_key_env"),
            api_key_file=value.get("api_key_file"),
            base_url=value.get("base_url"),
            timeout_seconds=float(value.get("timeout_seconds", 600.0)),
        )
    return specs


def _model(
    walker: Walker, model_id: str, raw: Raw, providers: Mapping[str, ProviderSpec]
) -> ModelSpec | None:
    provider = raw.get("provider") or model_id.partition(":")[0]
    if provider not in providers:
        located = ("models", model_id, "provider")
        rng = walker.range_at(located) if walker.node_at(located) else walker.range_at(
            ("models", model_id), key=True)
        walker.report(rng, Code.UNKNOWN_PROVIDER,
                      f"Model '{model_id}' uses provider '{provider}', which is not defined. "
                      f"Known providers: {', '.join(providers) or 'none'}.")
        return None
    return ModelSpec(
        id=model_id,
        provider=provider,
        api_model=raw.get("api_model") or model_id.partition(":")[2],
        display_name=raw.get("display_name") or model_id,
        aliases=tuple(raw.get("aliases", ())),
        tier=raw.get("tier"),
        # Left out, a balanced or deep model may delegate and a fast or untiered one may not
        # (spec 001 §3), as the built-in entries say outright.
        can_delegate=bool(raw.get("can_delegate", raw.get("tier") in DELEGATING_TIERS)),
        capabilities=Capabilities(**raw.get("capabilities", {})),
        pricing=Pricing(**{k: Decimal(str(v)) for k, v in raw.get("pricing", {}).items()}),
    )


def _check_aliases(walker: Walker, models: list[ModelSpec]) -> None:
    ids = {m.id for m in models}
    owner: dict[str, str] = {}
    for model in models:
        for index, alias in enumerate(model.aliases):
            path = ("models", model.id, "aliases", index)
            clash = owner.get(alias) or (alias if alias in ids and alias != model.id else None)
            if clash is None and (" " in alias or alias.startswith("@") or not alias):
                walker.report(walker.range_at(path), Code.INVALID_VALUE,
                              f"Alias '{alias}' must be one word without a leading @.")
            elif clash is not None and clash != model.id:
                walker.report(walker.range_at(path), Code.DUPLICATE_ALIAS,
                              f"Alias '{alias}' already names {clash}; aliases must be unique "
                              "across all models (including the built-in ones).")
            owner.setdefault(alias, model.id)
