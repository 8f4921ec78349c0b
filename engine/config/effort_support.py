"""The ``effort-unsupported`` warning: a reasoning ``effort`` set where a model it would go to
has no reasoning-effort setting, so it is ignored for that model.

It is checked wherever a file sets an effort: a routing file's ``tiers.effort`` (against each
tier's models and complexity lists) and a profile's ``effort`` (against its ``model`` and its
``tiers``). It is reported at the ``effort`` written in the file being checked.
"""

from __future__ import annotations

from collections.abc import Iterable

from switchman.engine.config.problems import Code, Severity
from switchman.engine.config.registry import ModelRegistry
from switchman.engine.config.walker import Path, Walker


def check_effort_support(walker: Walker, registry: ModelRegistry, where: Path, effort: str,
                         models: Iterable[str], others: str) -> None:
    """Warn at ``where`` (an ``effort`` written in this file) when some of ``models`` (ids or
    aliases) has no reasoning-effort setting; ``others`` ends the message, saying who still
    uses the effort."""
    lacking = list(dict.fromkeys(
        spec.id for m in models if (spec := registry.get(registry.resolve(m) or m)) is not None
        and not spec.capabilities.supports_reasoning_effort))
    if lacking:
        walker.report(walker.range_at(where), Code.EFFORT_UNSUPPORTED,
                      f"Reasoning effort '{effort}' is ignored for {', '.join(lacking)}: "
                      "no reasoning-effort setting (capabilities.supports_reasoning_effort "
                      f"in models.yaml). {others}", Severity.WARNING, data={"models": lacking})
