"""Language-server features, one package per capability.

Each feature package exposes ``register(server)``, which attaches its handlers
to the server with ``@server.feature(...)``. :data:`FEATURES` lists them all.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from switchman.server.features import (
    chat,
    config_editing,
    config_watch,
    documents,
    explain,
    feedback,
    lifecycle,
    models,
    profiles,
    sessions,
    tools,
    workspace_folders,
)

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

Register = Callable[["SwitchmanServer"], None]

FEATURES: list[Register] = [lifecycle.register, workspace_folders.register, chat.register,
                            models.register, explain.register, sessions.register,
                            tools.register, config_watch.register, documents.register,
                            config_editing.register,
                            feedback.register, profiles.register]
