"""Language-server features, one package per capability.

Each feature package exposes ``register(server)``, which attaches its handlers
to the server with ``@server.feature(...)``. :data:`FEATURES` lists them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

Register = Callable[["SwitchmanServer"], None]

def _all() -> list[Register]:
    from switchman.server.features import (  # noqa: PLC0415
        chat,
        explain,
        feedback,
        models,
        sessions,
        workspaces,
    )

    return [workspaces.register, chat.register, models.register, explain.register,
            sessions.register, feedback.register]


FEATURES: list[Register] = _all()

from switchman.server.features import config_editing  # noqa: E402 - registered after the others

FEATURES.append(config_editing.register)
