"""The configuration that ships inside the package."""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any

from switchman.engine.config.models_file import builtin_values, check_models_text
from switchman.engine.config.policy import RoutingPolicy
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.routing_file import check_routing_text, routing_defaults_values

BUILTIN_MODELS = "<builtin models.yaml>"
BUILTIN_ROUTING = "<builtin routing.yaml>"


def builtin_text(name: str) -> str:
    """The text of a built-in file (``models.yaml`` or ``routing.yaml``)."""
    return (files("switchman.engine.config") / "defaults" / name).read_text("utf-8")


@cache
def builtin_models_values() -> dict[str, Any]:
    """The built-in models.yaml as validated plain values."""
    return builtin_values(builtin_text("models.yaml"))


@cache
def builtin_registry() -> ModelRegistry:
    """The registry you get with no models.yaml of your own."""
    registry, problems = check_models_text("", BUILTIN_MODELS, builtin_models_values())
    assert registry is not None, problems
    return registry


def builtin_routing_values(registry: ModelRegistry) -> dict[str, Any]:
    """The built-in routing.yaml's values, resolved against ``registry`` ({} if they don't fit)."""
    return routing_defaults_values(builtin_text("routing.yaml"), registry)


def builtin_policy(registry: ModelRegistry) -> RoutingPolicy | None:
    """The built-in routing policy for ``registry``; None if it names models the registry lacks."""
    policy, _ = check_routing_text(builtin_text("routing.yaml"), BUILTIN_ROUTING, registry)
    return policy
