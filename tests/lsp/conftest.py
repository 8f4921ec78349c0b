"""Fixtures for end-to-end tests: the real daemon, the real SDKs, the fake provider."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from switchman.server import methods
from tests.conftest import models_yaml
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import CLIENTS, SwitchmanClient, running_server, server_env

ANTHROPIC_KEY = "sk-ant-test-key-0000111122223333"
OPENAI_KEY = "sk-openai-test-key-444455556666"
LISTEN = (methods.CHAT_DELTA, methods.ROUTE_DECIDED, methods.STATUS, methods.DELEGATION,
          methods.SESSION_CHANGED)


@dataclass
class Daemon:
    """Where a daemon under test keeps things, and how it is started."""

    config: Path
    data: Path
    workspace: Path
    env: dict[str, str]

    @property
    def uri(self) -> str:
        """The workspace as the editor names it."""
        return self.workspace.as_uri()

    def write_routing(self, text: str) -> None:
        """Replace the user's routing.yaml."""
        (self.config / "routing.yaml").write_text(text, "utf-8")


@pytest.fixture
def daemon(tmp_path: Path, fake: FakeProvider) -> Daemon:
    config, data, workspace = tmp_path / "config", tmp_path / "data", tmp_path / "project"
    for folder in (config, data, workspace):
        folder.mkdir()
    (config / "models.yaml").write_text(models_yaml(fake), "utf-8")
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n", "utf-8")
    env = server_env(config, data, {"ANTHROPIC_API_KEY": ANTHROPIC_KEY,
                                    "OPENAI_API_KEY": OPENAI_KEY,
                                    "SWITCHMAN_RETRY_BASE_SECONDS": "0"})
    return Daemon(config, data, workspace, env)


@pytest.fixture(params=CLIENTS)
async def client(request: pytest.FixtureRequest, daemon: Daemon) -> AsyncIterator[
        SwitchmanClient]:
    async with running_server(request.param, daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as started:
        yield started


def error_data(error: JsonRpcException) -> dict[str, Any]:
    """The ``data`` of a JSON-RPC error (our errors always carry one)."""
    assert isinstance(error.data, dict)
    return error.data


def deltas(client: SwitchmanClient, turn_id: str, kind: str = "text") -> list[dict[str, Any]]:
    """The chat deltas of one turn, of one kind."""
    return [d for d in client.received[methods.CHAT_DELTA]
            if d["turn_id"] == turn_id and d["kind"] == kind]
