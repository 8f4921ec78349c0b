"""What routing knows about a turn when it starts."""

from __future__ import annotations

from datetime import time
from decimal import Decimal

import msgspec


class TurnContext(msgspec.Struct, frozen=True, kw_only=True):
    """The state captured at turn start that predicates and validation read.

    ``message`` is the new user message with any leading ``@alias`` removed.
    ``files_touched`` holds paths from this session's tool inputs and results.
    ``skills_matching`` holds the names of skills whose descriptions match the
    message (computed from the skill index before routing).
    """

    message: str = ""
    has_images: bool = False
    estimated_input_tokens: int = 0
    has_tool_definitions: bool = False
    has_system_prompt: bool = False
    requires_structured_output: bool = False
    has_tool_calls_in_history: bool = False
    files_touched: tuple[str, ...] = ()
    workspace_path: str | None = None
    local_time: time | None = None
    cost_today_usd: Decimal = Decimal(0)
    skills_matching: frozenset[str] = frozenset()
    message_hits: frozenset[str] | None = None
    """Set by the chain: the rule patterns known to occur in ``message`` (one RE2 pass);
    None means each ``message_matches`` searches the message itself."""

    def extensions(self) -> frozenset[str]:
        """Lower-case extensions (with the dot) of every touched file."""
        found = set()
        for path in self.files_touched:
            name = path.replace("\\", "/").rsplit("/", 1)[-1]
            if "." in name.lstrip("."):
                found.add("." + name.rsplit(".", 1)[1].lower())
        return frozenset(found)
