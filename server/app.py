"""The language server: construction, feature registration and the I/O loop."""

from __future__ import annotations

import logging
import sys

from lsprotocol import types
from pygls.lsp.server import LanguageServer

from switchman.engine import __version__
from switchman.server.wire import plain_params_converter

log = logging.getLogger(__name__)


class SwitchmanServer(LanguageServer):
    """pygls' LanguageServer with Switchman's converter and name."""

    def __init__(self) -> None:
        super().__init__(
            name="switchman",
            version=__version__,
            converter_factory=plain_params_converter,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )


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
