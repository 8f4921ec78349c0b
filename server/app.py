"""The language server: construction, feature registration and the I/O loop."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from switchman.engine import __version__
from switchman.engine.service import Switchman
from switchman.server.notifier import EditorNotifier
from switchman.server.wire import plain_params_converter

log = logging.getLogger(__name__)

InitializeHook = Callable[[types.InitializeParams], None]


class SwitchmanServer(LanguageServer):
    """pygls' LanguageServer holding the engine (:class:`Switchman`).

    Several features need to react to ``initialize``; pygls allows one handler
    per method, so the workspaces feature registers it and calls every function
    in :attr:`initialize_hooks`.
    """

    def __init__(self) -> None:
        super().__init__(
            name="switchman",
            version=__version__,
            converter_factory=plain_params_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )
        self.switchman = Switchman(EditorNotifier(self))
        self.initialize_hooks: list[InitializeHook] = []
        self.initialization_options: dict[str, Any] = {}


def build_server() -> SwitchmanServer:
    """A server with every feature registered."""
    from switchman.server.features import FEATURES  # noqa: PLC0415 - avoids an import cycle

    server = SwitchmanServer()
    for register in FEATURES:
        register(server)
    return server


def _configure_logging() -> None:
    # stdout carries the protocol; logs go to stderr, which editors show in their output panel.
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("pygls", "httpx", "httpx2", "httpcore", "httpcore2", "anthropic", "openai"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def run(tcp: str | None = None) -> int:
    """Serve over stdio, or over TCP at ``HOST:PORT`` for debugging."""
    _configure_logging()
    server = build_server()
    if tcp:
        host, _, port = tcp.rpartition(":")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io()
    return 0
