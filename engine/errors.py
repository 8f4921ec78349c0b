"""Exception hierarchy for the engine.

::

    SwitchmanError
    ├── ConfigError              a configuration file cannot be used
    └── RoutingError             a turn cannot be routed
        ├── UnknownAlias         ``@name`` at the start of a message names no model
        ├── UnknownModel         a model id or alias (e.g. for /model) names no model
        ├── EmptyMessage         nothing left to send after stripping an override
        └── NoModelAvailable     every policy in the chain was empty or rejected

Provider errors live in ``switchman.engine.providers.errors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from switchman.engine.routing.decision import RouteDecided


class SwitchmanError(Exception):
    """Base class of every error the engine raises on purpose."""

    code = "switchman_error"


class ConfigError(SwitchmanError):
    """A configuration file could not be used at all."""

    code = "config_error"


class RoutingError(SwitchmanError):
    """A turn could not be routed; no turn starts."""

    code = "routing_error"


class UnknownAlias(RoutingError):
    """``@alias`` at the start of a message does not name a model."""

    code = "unknown_alias"

    def __init__(self, token: str, suggestions: list[str]) -> None:
        self.token = token
        self.suggestions = suggestions
        hint = f" Did you mean {', '.join('@' + s for s in suggestions)}?" if suggestions else ""
        super().__init__(
            f"Unknown model alias '@{token}'. The message was not sent.{hint} "
            "Start the message with \\@ to send a literal @."
        )


class UnknownModel(RoutingError):
    """A model id or alias given by the user names no configured model."""

    code = "unknown_model"

    def __init__(self, name: str, suggestions: list[str]) -> None:
        self.name = name
        self.suggestions = suggestions
        hint = f" Did you mean {', '.join(suggestions)}?" if suggestions else ""
        super().__init__(f"Unknown model '{name}'.{hint}")


class EmptyMessage(RoutingError):
    """The message is empty once the ``@alias`` token is removed."""

    code = "empty_message"

    def __init__(self, token: str) -> None:
        self.token = token
        super().__init__(f"Nothing to send after '@{token}'. Type your message after the alias.")


class NoModelAvailable(RoutingError):
    """Every policy in the chain returned nothing or was rejected by validation."""

    code = "no_model_available"

    def __init__(self, decision: RouteDecided, message: str) -> None:
        self.decision = decision
        super().__init__(message)
