"""Saved configuration changes: push the status when a file turns valid or invalid.

Where the editor can watch files for us (dynamic registration of
``workspace/didChangeWatchedFiles``), we ask it to watch each workspace's
``.switchman/`` folder and, when it supports relative patterns (which may lie
outside the workspace), the user's config folder (its files and its ``skills/``).
The daemon polls whatever configuration file the editor does not watch
(``ConfigPoll``, off the event loop). A skill file's change also has the open
configuration documents checked again (their ``unknown-skill`` warnings); without
the editor's file events, a skill file saved in the editor (``didSave``) does.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from lsprotocol import types

from switchman.server.features import config_editing

if TYPE_CHECKING:
    from switchman.server.app import SwitchmanServer

log = logging.getLogger(__name__)

REGISTRATION_ID = "switchman-config-files"
USER_FILES = ("{routing,models,profiles}.yaml", "skills/**")
WORKSPACE_FILES = ("**/.switchman/**", "**/{routing,models,profiles}.yaml")


def register(server: SwitchmanServer) -> None:
    """Handle the editor's file events (the watch starts from ``initialized``: :func:`start`)."""

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def files_changed(params: types.DidChangeWatchedFilesParams) -> None:
        server.switchman.announce_status()
        config_editing.files_changed(server, [change.uri for change in params.changes])


async def start(server: SwitchmanServer) -> None:
    """Ask the editor to watch what it can; poll the rest."""
    watch = server.client_capabilities.workspace
    files = watch.did_change_watched_files if watch else None
    dynamic = bool(files and files.dynamic_registration)
    relative = dynamic and bool(files and files.relative_pattern_support)
    if dynamic:
        try:
            await server.client_register_capability_async(_registration(server, relative))
        except Exception as error:  # any refusal or error answer: we poll instead
            log.info("the editor did not accept file watchers (%s); polling instead", error)
            dynamic = relative = False
    server.switchman.watch_config(user_files=not relative, workspace_files=not dynamic)


def _registration(server: SwitchmanServer, relative: bool) -> types.RegistrationParams:
    watchers = [types.FileSystemWatcher(glob_pattern=glob) for glob in WORKSPACE_FILES]
    if relative:
        folder = server.switchman.config.directory
        watchers += [types.FileSystemWatcher(glob_pattern=types.RelativePattern(
            base_uri=folder.absolute().as_uri(), pattern=pattern)) for pattern in USER_FILES]
    options = types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers)
    return types.RegistrationParams(registrations=[types.Registration(
        id=REGISTRATION_ID, method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=options)])
