"""Driving the real ``switchman serve`` subprocess from tests.

:class:`SwitchmanClient` is pytest-lsp's client with plain-dict params and a
record of every notification, so tests can wait for a condition over
everything received (no notification is missed because a wait started late)
and never sleep.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections import defaultdict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import DEFAULT_CLIENT_FEATURES, register_lsp_features

from switchman.server.wire import plain_params_converter

__all__ = ["CLIENTS", "SERVER_COMMAND", "TIMEOUT", "SwitchmanClient", "client_capabilities",
           "running_server", "server_env"]

CLIENTS = ["visual-studio-code", "neovim"]
"""The editors whose capabilities end-to-end tests are parametrised over."""

SERVER_COMMAND = [sys.executable, "-m", "switchman.server"]
TIMEOUT = 60.0  # a bound for failures, not a wait: the shared test machine is often loaded


class SwitchmanClient(LanguageClient):
    """A test client that records every notification it receives, and the wire."""

    def __init__(self, *, wire: bool = False) -> None:
        super().__init__(converter_factory=plain_params_converter)
        self.received: dict[str, list[Any]] = defaultdict(list)
        self.wire: list[str] = []
        """With ``wire``, every message the server sent, as its JSON text (responses and
        errors too); off by default, as it costs the client time (benchmarks use it)."""
        self._changed = asyncio.Condition()
        if wire:
            structure = self.protocol.structure_message

            def recorded(data: dict[str, Any]) -> Any:  # called for each object, inner first
                if "jsonrpc" in data:
                    self.wire.append(json.dumps(data, ensure_ascii=False))
                return structure(data)

            self.protocol.structure_message = recorded  # type: ignore[method-assign]
        self.initialize_result: types.InitializeResult | None = None
        register_lsp_features(self, {**DEFAULT_CLIENT_FEATURES,
                                     types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS: _on_diagnostics,
                                     types.CLIENT_REGISTER_CAPABILITY: _on_register})

    def record(self, method: str, params: Any) -> None:
        """Store a notification and wake waiters."""
        self.received[method].append(params)
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    async def wait_until(self, check: Callable[[], Any], timeout: float = TIMEOUT) -> Any:
        """Wait until ``check()`` returns something truthy; return it."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                while not (result := check()):
                    await self._changed.wait()
                return result

    async def wait_for(self, method: str, where: Callable[[Any], bool] = lambda p: True,
                       timeout: float = TIMEOUT) -> Any:
        """The first recorded ``method`` notification whose params satisfy ``where``."""
        return await self.wait_until(
            lambda: next((p for p in self.received[method] if where(p)), None), timeout)

    async def stop(self) -> None:
        """Stop the client (and the server process, if it is still running)."""
        await super().stop()  # type: ignore[no-untyped-call]

    async def request(self, method: str, params: Any) -> Any:
        """Send a custom request and return its result (raises on an error response)."""
        return await asyncio.wait_for(
            self.protocol.send_request_async(method, params),  # type: ignore[no-untyped-call]
            TIMEOUT)

    @property
    def position_encoding(self) -> str:
        """The position encoding the server chose (UTF-16 unless it said otherwise)."""
        result = self.initialize_result
        chosen = result.capabilities.position_encoding if result is not None else None
        chosen = chosen or types.PositionEncodingKind.Utf16
        return str(getattr(chosen, "value", chosen))

    def listen(self, *methods: str) -> None:
        """Record notifications of these methods."""
        for method in methods:
            self.feature(method)(lambda params, m=method: self.record(m, params))


def _on_diagnostics(client: SwitchmanClient, params: types.PublishDiagnosticsParams) -> None:
    """Keep pytest-lsp's ``client.diagnostics``; also record the notification, waking waiters."""
    client.diagnostics[params.uri] = params.diagnostics
    client.record(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, params)


def _on_register(client: SwitchmanClient, params: types.RegistrationParams) -> None:
    """Accept a dynamic registration (as editors do) and record it."""
    client.record(types.CLIENT_REGISTER_CAPABILITY, params)


def server_env(config_dir: Path, data_dir: Path, extra: dict[str, str] | None = None) -> dict[
        str, str]:
    """The environment for a server under test: isolated folders, no real keys."""
    env = {k: v for k, v in os.environ.items()
           if not k.endswith("_API_KEY") and not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    env.update(SWITCHMAN_CONFIG_DIR=str(config_dir), SWITCHMAN_DATA_DIR=str(data_dir),
               PYTHONUNBUFFERED="1")
    env.update(extra or {})
    return env


@asynccontextmanager
async def running_server(
    capabilities: str | types.ClientCapabilities,
    env: dict[str, str],
    workspaces: list[Path] | None = None,
    listen: tuple[str, ...] = (),
    initialization_options: Any = None,
    wire: bool = False,
) -> AsyncIterator[SwitchmanClient]:
    """Start ``switchman serve``, initialise it as ``capabilities``' editor, and stop it after.

    ``capabilities`` names an editor known to pytest-lsp, or gives its capabilities; with
    ``wire``, the client keeps every message the server sends (:attr:`SwitchmanClient.wire`).
    """
    client = SwitchmanClient(wire=wire)
    client.listen(*listen)
    await client.start_io(*SERVER_COMMAND, env=env)
    folders = [types.WorkspaceFolder(uri=w.as_uri(), name=w.name) for w in workspaces or []]
    try:
        client.initialize_result = await client.initialize_session(types.InitializeParams(
            capabilities=client_capabilities(capabilities) if isinstance(capabilities, str)
            else capabilities,
            workspace_folders=folders or None,
            root_uri=folders[0].uri if folders else None,
            initialization_options=initialization_options,
        ))
        yield client
        await client.shutdown_session()
    finally:
        process = client._server
        failed = sys.exc_info()[0] is not None or client.error is not None
        if failed and process is not None and process.returncode is None:
            process.kill()  # a failed test must not wait forever for a server never told to exit
        await client.stop()


async def kill_9(client: SwitchmanClient, pending: asyncio.Future[Any]) -> None:
    """SIGKILL the client's daemon: it gets no chance to clean up. A request of the daemon the
    client is still answering (an approval left unanswered) is dropped with it: pygls would
    otherwise fail to fail it as the client stops."""
    process = client._server
    assert process is not None
    futures: dict[Any, Any] = client.protocol._request_futures
    answering = [futures.pop(i) for i, f in list(futures.items()) if isinstance(f, asyncio.Task)]
    process.kill()  # before the dropped answers are cancelled: the daemon never reads them
    for task in answering:
        task.cancel()
    await process.wait()
    pending.cancel()
    await client.stop()
