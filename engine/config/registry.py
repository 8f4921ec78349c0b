"""The model registry: providers, models, their capabilities, prices and aliases."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from decimal import Decimal
from enum import StrEnum

import msgspec


class ApiKind(StrEnum):
    """The API family a provider speaks."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    OPENAI_COMPATIBLE = "openai_compatible"


class ProviderSpec(msgspec.Struct, frozen=True, omit_defaults=True):
    """How to reach one provider. Holds the *name* of a key source, never a key."""

    name: str
    api: ApiKind
    api_key_env: str | None = None
    api_key_file: str | None = None
    base_url: str | None = None
    timeout_seconds: float = 600.0

    @property
    def needs_key(self) -> bool:
        """Whether calls need an API key (local servers usually do not)."""
        return self.api_key_env is not None or self.api_key_file is not None


class Capabilities(msgspec.Struct, frozen=True):
    """What a model can do; routing validates turns against it."""

    max_context_tokens: int = 8192
    max_output_tokens: int = 4096
    supports_images: bool = False
    supports_tools: bool = True
    supports_system_prompt: bool = True
    supports_structured_output: bool = False
    supports_thinking: bool = False
    supports_reasoning_effort: bool = False
    """Takes a reasoning-effort setting (OpenAI ``reasoning_effort``, Anthropic thinking)."""


class Pricing(msgspec.Struct, frozen=True):
    """US dollars per million tokens."""

    input: Decimal = Decimal(0)
    output: Decimal = Decimal(0)
    cache_read: Decimal = Decimal(0)
    cache_write: Decimal = Decimal(0)

    @property
    def is_free(self) -> bool:
        """True when no price is set (so cost cannot be tracked)."""
        return not (self.input or self.output or self.cache_read or self.cache_write)


class ModelSpec(msgspec.Struct, frozen=True):
    """One model in the registry."""

    id: str
    provider: str
    api_model: str
    display_name: str
    aliases: tuple[str, ...] = ()
    tier: str | None = None
    can_delegate: bool = False
    capabilities: Capabilities = Capabilities()
    pricing: Pricing = Pricing()


class ModelRegistry:
    """Providers and models, with alias lookup."""

    def __init__(self, providers: Mapping[str, ProviderSpec], models: Iterable[ModelSpec]) -> None:
        self.providers = dict(providers)
        self.models = {m.id: m for m in models}
        self.aliases: dict[str, str] = {}
        for model in self.models.values():
            for alias in model.aliases:
                self.aliases.setdefault(alias, model.id)
        self._short = _unique_short_names(self.models)

    def resolve(self, name: str) -> str | None:
        """The model id for an id, alias or unambiguous short name; None if unknown."""
        name = name.strip()
        if name in self.models:
            return name
        if name in self.aliases:
            return self.aliases[name]
        lowered = name.lower()
        for alias, model_id in self.aliases.items():
            if alias.lower() == lowered:
                return model_id
        return self._short.get(name)

    def get(self, model_id: str) -> ModelSpec | None:
        """The model with this exact id."""
        return self.models.get(model_id)

    def short_name(self, model_id: str) -> str:
        """The name the editors show for a model: its first alias, else the part of its id
        after ``provider:`` (``haiku``, ``claude-haiku-4-5``)."""
        model = self.models.get(model_id)
        if model is not None and model.aliases:
            return model.aliases[0]
        return model_id.partition(":")[2] or model_id

    def provider_of(self, model_id: str) -> ProviderSpec | None:
        """The provider serving ``model_id``."""
        model = self.models.get(model_id)
        return self.providers.get(model.provider) if model else None

    def names(self) -> list[str]:
        """Every id and alias, for suggestions."""
        return [*self.models, *self.aliases]

    def model_for_tier(self, tier: str) -> str | None:
        """The first registered model of ``tier`` (the registry's default for it)."""
        return next((m.id for m in self.models.values() if m.tier == tier), None)


def _unique_short_names(models: Mapping[str, ModelSpec]) -> dict[str, str]:
    counts: dict[str, list[str]] = {}
    for model_id in models:
        counts.setdefault(model_id.partition(":")[2], []).append(model_id)
    return {short: ids[0] for short, ids in counts.items() if len(ids) == 1 and short}
