"""The routing entry point used by the CLI and the daemon.

It ties the live configuration, availability, key checks and the pattern store
to the policy chain, and publishes exactly one ``route.decided`` per decision
(including failed ones) on the event bus.
"""

from __future__ import annotations

from switchman.engine.availability import AvailabilityTracker
from switchman.engine.clock import Clock
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.store import ConfigStore
from switchman.engine.config.walker import closest
from switchman.engine.errors import NoModelAvailable, UnknownModel
from switchman.engine.events import EventBus
from switchman.engine.patterns import PatternStore
from switchman.engine.routing.chain import PolicyChain, RouteRequest
from switchman.engine.routing.decision import RouteDecided
from switchman.engine.routing.overrides import Override, parse_override
from switchman.engine.routing.validation import (
    AvailabilityCheck,
    CandidateValidator,
    ConfiguredCheck,
)


class Router:
    """Decides which model takes a turn, for any workspace."""

    def __init__(
        self,
        store: ConfigStore,
        *,
        clock: Clock,
        configured: ConfiguredCheck,
        availability: AvailabilityTracker | AvailabilityCheck,
        patterns: PatternStore | None = None,
        bus: EventBus | None = None,
    ) -> None:
        self.store = store
        self.clock = clock
        self.configured = configured
        self.availability = availability
        self.patterns = patterns
        self.bus = bus

    def registry(self) -> ModelRegistry:
        """The model registry in force now."""
        return self.store.registry()

    def parse(self, message: str) -> tuple[str, Override | None]:
        """Split off a leading ``@alias``; raises for unknown aliases or empty messages."""
        return parse_override(message, self.registry())

    def resolve_model(self, name: str) -> str:
        """The model id for an id or alias; raises :class:`UnknownModel`."""
        registry = self.registry()
        model = registry.resolve(name)
        if model is None:
            raise UnknownModel(name, closest(name, registry.names()))
        return model

    def chain(self, folder: str | None) -> PolicyChain:
        """A policy chain over the configuration in force for ``folder``."""
        registry = self.registry()
        check = self.availability
        if isinstance(check, AvailabilityTracker):
            check = check.check
        validator = CandidateValidator(registry, self.configured, check)
        return PolicyChain(registry, self.store.effective(folder), validator, self.clock,
                           self.patterns)

    def decide(self, request: RouteRequest) -> RouteDecided:
        """Run the chain and publish the decision; raises :class:`NoModelAvailable`."""
        try:
            decision = self.chain(request.context.workspace_path).decide(request)
        except NoModelAvailable as failure:
            self._publish(failure.decision)
            raise
        self._publish(decision)
        return decision

    def _publish(self, decision: RouteDecided) -> None:
        if self.bus is not None:
            self.bus.emit(decision)
