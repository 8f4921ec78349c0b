"""The daemon starts, initialises and shuts down cleanly under both editors' capabilities."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.lsp import CLIENTS, running_server, server_env


@pytest.mark.parametrize("editor", CLIENTS)
async def test_initialize_and_shutdown(editor: str, tmp_path: Path) -> None:
    env = server_env(tmp_path / "config", tmp_path / "data")
    async with running_server(editor, env, workspaces=[tmp_path]) as client:
        assert client.error is None
