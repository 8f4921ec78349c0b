"""The names a policy test case gives as input, checked against the models the test uses.

A misspelt name in a case does not fail loudly on its own: a sticky model or a pattern
suggestion that is no model is rejected and the turn falls through, an outage of a name that
is nothing takes nothing down, and a case can then pass while testing something else. The
walker checks the single model names (``sticky``, ``planner``, ``pattern.model``, ``expect``'s
models); this module checks the rest, each located where it is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from switchman.engine.config.problems import Code
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.walker import Path, Walker
from switchman.engine.errors import EmptyMessage, UnknownAlias
from switchman.engine.routing.overrides import parse_override
from switchman.engine.wording import closest


def check_case_names(walker: Walker, where: Path, case: Mapping[str, Any],
                     registry: ModelRegistry) -> None:
    """Report each name in ``case`` (at ``where`` in the file) that names nothing."""
    _check_alias(walker, where, case, registry)
    for index, name in enumerate(_names(case.get("unavailable"))):
        if name.strip() not in registry.providers and registry.resolve(name) is None:
            _unknown(walker, (*where, "unavailable", index), Code.UNKNOWN_MODEL,
                     f"'{name}' is neither a model nor a provider.", name,
                     [*registry.names(), *registry.providers])
    for index, name in enumerate(_names(case.get("configured"))):
        if name not in registry.providers:
            _unknown(walker, (*where, "configured", index), Code.UNKNOWN_PROVIDER,
                     f"Unknown provider '{name}'.", name, list(registry.providers))
    _check_expected_configured(walker, where, case, registry)


def _names(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def _check_alias(walker: Walker, where: Path, case: Mapping[str, Any],
                 registry: ModelRegistry) -> None:
    """An ``@alias`` that names no model stops the turn: an error, unless the case expects
    exactly that (``expect: {error: unknown_alias}``)."""
    message, expect = case.get("message"), case.get("expect")
    if not isinstance(message, str) or walker.tainted((*where, "message")):
        return
    if isinstance(expect, dict) and expect.get("error") == "unknown_alias":
        return
    try:
        parse_override(message, registry)
    except UnknownAlias as unknown:
        hint = f" Did you mean {', '.join('@' + s for s in unknown.suggestions)}?" \
            if unknown.suggestions else ""
        walker.report(walker.range_at((*where, "message")), Code.UNKNOWN_MODEL,
                      f"Unknown model alias '@{unknown.token}': this case stops with "
                      f"unknown_alias.{hint} If that is what it tests, expect it: "
                      "expect: {error: unknown_alias}.",
                      data={"suggestions": unknown.suggestions})
    except EmptyMessage:  # the case's own business (it may expect empty_message)
        return


def _check_expected_configured(walker: Walker, where: Path, case: Mapping[str, Any],
                               registry: ModelRegistry) -> None:
    """An expected model whose provider the case leaves without a key can never win."""
    expect, configured = case.get("expect"), case.get("configured")
    if not isinstance(expect, dict) or configured is None:
        return
    model = registry.resolve(str(expect.get("model"))) if "model" in expect else None
    spec = registry.get(model) if model is not None else None
    if spec is not None and spec.provider not in _names(configured):
        walker.report(walker.range_at((*where, "expect", "model")), Code.INVALID_VALUE,
                      f"This case expects {model}, but its provider {spec.provider} is not in "
                      "the case's 'configured' list, so it can never be chosen.")


def _unknown(walker: Walker, path: Path, code: Code, message: str, name: str,
             known: list[str]) -> None:
    suggestions = closest(name, known)
    hint = f" Did you mean '{suggestions[0]}'?" if suggestions else ""
    walker.report(walker.range_at(path), code, message + hint,
                  data={"suggestions": suggestions})
