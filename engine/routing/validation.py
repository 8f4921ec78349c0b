"""Candidate validation (spec §4.4): configured, available, and capable of this turn.

Only what the turn will use is required: a turn without images does not need
vision; a turn without tool definitions does not need tool support.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from switchman.engine.availability import Unavailability
from switchman.engine.config.registry import ModelRegistry, ProviderSpec
from switchman.engine.routing.context import TurnContext
from switchman.engine.routing.decision import ValidationFailure

ConfiguredCheck = Callable[[ProviderSpec], bool]
AvailabilityCheck = Callable[[str, str], Unavailability | None]



@dataclass(frozen=True)
class Rejection:
    """Why a candidate cannot take the turn."""

    failure: ValidationFailure
    detail: str
    outage_scope: str | None = None
    """For ``provider_unavailable``: ``model`` or ``provider``."""


class CandidateValidator:
    """Decides whether a candidate model can take a turn."""

    def __init__(
        self,
        registry: ModelRegistry,
        configured: ConfiguredCheck,
        availability: AvailabilityCheck,
    ) -> None:
        self.registry = registry
        self.configured = configured
        self.availability = availability

    def validate(self, model_id: str, ctx: TurnContext) -> Rejection | None:
        """None if the model can take the turn, else why not."""
        model = self.registry.get(model_id)
        provider = self.registry.provider_of(model_id)
        if model is None or provider is None:
            return Rejection(ValidationFailure.UNKNOWN_MODEL, f"{model_id} is not in the registry")
        if not self.configured(provider):
            source = provider.api_key_env or provider.api_key_file or "its key source"
            return Rejection(ValidationFailure.NOT_CONFIGURED,
                             f"no API key for {provider.name} ({source})")
        outage = self.availability(provider.name, model_id)
        if outage is not None:
            return Rejection(ValidationFailure.PROVIDER_UNAVAILABLE, outage.reason, outage.scope)
        return self._capable(model_id, ctx)

    def _capable(self, model_id: str, ctx: TurnContext) -> Rejection | None:
        model = self.registry.models[model_id]
        caps = model.capabilities
        if ctx.has_images and not caps.supports_images:
            return Rejection(ValidationFailure.NO_VISION_SUPPORT, f"{model_id} cannot read images")
        if ctx.estimated_input_tokens > caps.max_context_tokens:
            return Rejection(ValidationFailure.EXCEEDS_CONTEXT_WINDOW,
                             f"~{ctx.estimated_input_tokens} tokens exceed {model_id}'s "
                             f"{caps.max_context_tokens}-token window")
        if ctx.has_tool_definitions and not caps.supports_tools:
            return Rejection(ValidationFailure.NO_TOOL_SUPPORT,
                             f"{model_id} cannot call tools, and this turn offers them (a "
                             "profile with tools: [] offers none)")
        if ctx.has_system_prompt and not caps.supports_system_prompt:
            return Rejection(ValidationFailure.NO_SYSTEM_PROMPT_SUPPORT,
                             f"{model_id} takes no system prompt")
        if ctx.requires_structured_output and not caps.supports_structured_output:
            return Rejection(ValidationFailure.NO_STRUCTURED_OUTPUT_SUPPORT,
                             f"{model_id} cannot produce structured output")
        return None
