"""The routing entry point used by the CLI and the daemon.

It ties the live configuration, availability, key checks and the pattern store
to the policy chain. Every decision, a failed one included, is a
``route.decided`` record; the caller keeps it (the session manager stores it
with the turn, or as an event when no model was available).
"""

from __future__ import annotations

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import Clock
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.store import IN_FORCE_FILE, ConfigStore
from switchman.engine.errors import UnknownAlias, UnknownModel
from switchman.engine.patterns import PatternStore
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.overrides import Override, parse_override
from switchman.engine.routing.validation import (
    AvailabilityCheck,
    CandidateValidator,
    ConfiguredCheck,
)
from switchman.engine.wording import closest


class Router:
    """Decides which model takes a turn, for any workspace."""

    def __init__(
        self,
        config: ConfigStore,
        *,
        clock: Clock,
        configured: ConfiguredCheck,
        availability: AvailabilityTracker | AvailabilityCheck,
        patterns: PatternStore | None = None,
    ) -> None:
        self.config = config
        self.clock = clock
        self.configured = configured
        self.availability = availability
        self.patterns = patterns

    def registry(self) -> ModelRegistry:
        """The model registry in force now."""
        return self.config.registry()

    def parse(self, message: str) -> tuple[str, Override | None]:
        """Split off a leading ``@alias``; raises for unknown aliases (an alias with nothing
        after it is the caller's to refuse: it may carry attachments)."""
        try:
            return parse_override(message, self.registry())
        except UnknownAlias as unknown:
            if not (note := self._models_note()):
                raise
            raise UnknownAlias(unknown.token, unknown.suggestions, note) from None

    def resolve_model(self, name: str) -> str:
        """The model id for an id or alias; raises :class:`UnknownModel`."""
        registry = self.registry()
        model = registry.resolve(name)
        if model is None:
            raise UnknownModel(name, closest(name, registry.names()), self._models_note())
        return model

    def _models_note(self) -> str:
        """Why a model or alias may be unknown: models.yaml has errors, so the registry in
        force is its last valid version (or the built-in one), without what the file adds."""
        path = str(self.config.models_path)
        if self.config.in_force().get(path, IN_FORCE_FILE) == IN_FORCE_FILE:
            return ""
        return (f"{path} has errors, so what it adds is not in use until it is fixed "
                "(/rules check lists them).")

    def chain(self, folder: str | None) -> PolicyChain:
        """A policy chain over the configuration in force for ``folder``."""
        registry = self.registry()
        check = self.availability
        if isinstance(check, AvailabilityTracker):
            check = check.check
        validator = CandidateValidator(registry, self.configured, check)
        return PolicyChain(registry, self.config.effective(folder), validator, self.clock,
                           self.patterns)

    def decide(self, request: RouteRequest) -> RouteDecided:
        """Run the chain; raises :class:`NoModelAvailable` (carrying the failed decision)."""
        return self.chain(request.context.workspace_path).decide(request)
