"""``@alias`` per-message overrides (spec §11).

An override is ``@name`` at the very start of the message followed by
whitespace (or nothing). The token is removed before the message is routed or
sent. ``\\@name`` at the start sends a literal ``@name`` (the backslash is
removed). ``Email me @haiku`` is not an override.
"""

from __future__ import annotations

import re

import msgspec

from switchman.engine.config.registry import ModelRegistry
from switchman.engine.errors import UnknownAlias
from switchman.engine.wording import closest

_OVERRIDE = re.compile(r"@([\w.:/+-]+)(?:\s+|\Z)")
MAX_OFFERED = 5
"""Aliases a lone ``@`` is answered with."""


class Override(msgspec.Struct, frozen=True):
    """A parsed ``@alias`` override."""

    token: str
    model: str
    required: bool = False
    """The turn must run on ``model`` (``/route override``): if it is rejected, the turn
    does not start instead of falling through to the rest of the chain."""
    reason: str | None = None
    """What the chain says made the choice; ``override "@token"`` when None (typed by the
    user). ``/route override`` names itself: its user typed no ``@alias``."""


ROUTE_OVERRIDE_REASON = "/route override (the pattern store's suggestion)"
"""The reason of a turn ``/route override`` ran again on the suggested model."""
ROUTE_OVERRIDE_SUMMARY = "/route override"
"""Its badge-sized form."""


def without_override(typed: str) -> str:
    """``typed`` without its leading ``@alias`` (``\\@`` read as a literal ``@``): the words
    of a message, for its session's title, where the alias only chose the model."""
    if typed.startswith("\\@"):
        return typed[1:]
    match = _OVERRIDE.match(typed)
    return typed if match is None else typed[match.end():]


def parse_override(message: str, registry: ModelRegistry) -> tuple[str, Override | None]:
    """Split ``message`` into the text to send and its override, if any.

    Raises :class:`UnknownAlias` for an unknown name (no turn may start). Nothing after the
    token is ``""`` to send: whether that is a message depends on what it carries (an
    ``@alias`` with a file or selection attached sends them), so the caller decides
    (:class:`EmptyMessage` when it carries nothing).
    """
    if message.startswith("\\@"):
        return message[1:], None
    match = _OVERRIDE.match(message)
    if match is None:
        if message.strip() == "@":  # a model's alias was to follow: say which there are
            raise UnknownAlias("", sorted(registry.aliases)[:MAX_OFFERED])
        return message, None
    token = match.group(1)
    model = registry.resolve(token)
    if model is None:
        raise UnknownAlias(token, closest(token, list(registry.aliases)))
    return message[match.end():], Override(token, model)
