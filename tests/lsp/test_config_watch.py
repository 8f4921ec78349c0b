"""The status follows saved configuration changes, in both directions, with no chat turn.

With VS Code's capabilities (dynamic registration of ``workspace/didChangeWatchedFiles``
with relative patterns, as VS Code has reported since 1.64) the daemon asks the editor to
watch the files and polls nothing, so only the editor's file events can turn the status; with
Neovim's (no dynamic registration) the daemon's own poll must notice the save.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon
from tests.support.lsp import CLIENTS, SwitchmanClient, client_capabilities, running_server

BROKEN = "rules:\n  - name: typo\n    use: opsu\n"
VALID = "rules:\n  - name: sql\n    when: {file_extensions_in_context: [sql]}\n    use: gpt-5\n"


def capabilities(editor: str) -> types.ClientCapabilities:
    """pytest-lsp's capabilities of ``editor``, with what current VS Code reports for watching."""
    caps = client_capabilities(editor)
    watched = caps.workspace.did_change_watched_files if caps.workspace else None
    if editor == "visual-studio-code" and watched is not None:
        watched.relative_pattern_support = True
    return caps


def editor_watches(editor: str) -> bool:
    """Whether this editor watches files for the daemon (so the daemon does not poll)."""
    return editor == "visual-studio-code"


@asynccontextmanager
async def started(editor: str, daemon: Daemon, poll_seconds: str) -> AsyncIterator[
        SwitchmanClient]:
    env = {**daemon.env, "SWITCHMAN_CONFIG_POLL_SECONDS": poll_seconds}
    async with running_server(capabilities(editor), env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        yield client


@pytest.fixture(params=CLIENTS)
async def editor(request: pytest.FixtureRequest, daemon: Daemon) -> AsyncIterator[
        tuple[str, SwitchmanClient]]:
    async with started(request.param, daemon, "0.05") as client:
        yield request.param, client


async def status_after(client: SwitchmanClient, seen: int,
                       where: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    """The first status notification after the first ``seen`` ones that satisfies ``where``."""
    statuses = client.received[methods.STATUS]
    found: dict[str, Any] = await client.wait_until(
        lambda: next((s for s in statuses[seen:] if where(s)), None))
    return found


async def save(editor: str, client: SwitchmanClient, path: Path, text: str) -> int:
    """Save ``text`` as the user would (an editor that watches reports it); the status count."""
    seen = len(client.received[methods.STATUS])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, "utf-8")
    if editor_watches(editor):
        await client.wait_for(types.CLIENT_REGISTER_CAPABILITY)
        client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(changes=[
            types.FileEvent(uri=path.as_uri(), type=types.FileChangeType.Changed)]))
    return seen


def invalid(status: dict[str, Any]) -> bool:
    return bool(status["config_errors"] > 0 and status["banners"])


def valid(status: dict[str, Any]) -> bool:
    return bool(status["config_errors"] == 0 and not status["banners"])


async def test_a_saved_user_routing_file_turns_the_status_invalid_and_valid_again(
        editor: tuple[str, SwitchmanClient], daemon: Daemon) -> None:
    name, client = editor
    await status_after(client, 0, valid)
    seen = await save(name, client, daemon.config / "routing.yaml", BROKEN)
    broken = await status_after(client, seen, invalid)
    assert "routing.yaml has errors" in broken["banners"][0]
    seen = await save(name, client, daemon.config / "routing.yaml", VALID)
    await status_after(client, seen, valid)


async def test_a_workspace_routing_file_turns_the_status_invalid_and_valid_again(
        editor: tuple[str, SwitchmanClient], daemon: Daemon) -> None:
    name, client = editor
    path = daemon.workspace / ".switchman" / "routing.yaml"
    seen = await save(name, client, path, BROKEN)
    await status_after(client, seen, invalid)
    seen = await save(name, client, path, VALID)
    await status_after(client, seen, valid)


async def test_a_broken_file_from_the_start_turns_valid_when_fixed(
        daemon: Daemon) -> None:
    daemon.write_routing(BROKEN)
    for name in CLIENTS:
        async with started(name, daemon, "0.05") as client:
            await status_after(client, 0, invalid)
            seen = await save(name, client, daemon.config / "routing.yaml", VALID)
            await status_after(client, seen, valid)
        daemon.write_routing(BROKEN)


async def test_vscode_is_asked_to_watch_the_config_folder_and_workspace_files(
        daemon: Daemon) -> None:
    async with started("visual-studio-code", daemon, "0.05") as client:
        params = await client.wait_for(types.CLIENT_REGISTER_CAPABILITY)
        registration = params.registrations[0]
        assert registration.method == types.WORKSPACE_DID_CHANGE_WATCHED_FILES
        globs = [w["globPattern"] for w in registration.register_options["watchers"]]
        assert "**/.switchman/**" in globs
        assert [g for g in globs if isinstance(g, dict)] == [  # the user's skills too
            {"baseUri": daemon.config.as_uri(), "pattern": "{routing,models,profiles}.yaml"},
            {"baseUri": daemon.config.as_uri(), "pattern": "skills/**"}]


@pytest.mark.parametrize("command", ["/rules check", "/rules reload"])
async def test_rules_commands_refresh_the_status(command: str, daemon: Daemon) -> None:
    # An hour's poll and no file events: only the command can notice the fix. (Turning
    # invalid is announced by the policy_invalid event whenever the files are read.)
    for name in CLIENTS:
        daemon.write_routing(BROKEN)
        async with started(name, daemon, "3600") as client:
            await status_after(client, 0, invalid)
            await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "/help"})
            daemon.write_routing(VALID)
            seen = len(client.received[methods.STATUS])
            await client.request(methods.CHAT, {"workspace": daemon.uri, "message": command})
            await status_after(client, seen, valid)


@pytest.mark.parametrize("editor", CLIENTS)
async def test_valid_files_are_never_said_to_have_errors_while_first_checked(
        editor: str, daemon: Daemon) -> None:
    """The status right after start-up came while the files' first checks still ran, and
    said of the (valid) models.yaml "has errors; the built-in defaults are in use" until
    the next status."""
    daemon.write_routing(VALID)
    async with started(editor, daemon, "1") as client:
        await client.wait_for(methods.STATUS)  # the one after initialized
        await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "/rules check"})
        await client.wait_until(lambda: len(client.received[methods.STATUS]) >= 2)  # /rules
        statuses = client.received[methods.STATUS]
        assert [s["banners"] for s in statuses] == [[]] * len(statuses)
        assert {s["config_errors"] for s in statuses} == {0}
