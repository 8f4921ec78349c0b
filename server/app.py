"""The language server: construction, feature registration and the I/O loop."""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from pygls.exceptions import FeatureRequestError, JsonRpcException
from pygls.lsp.server import LanguageServer

from switchman.engine import __version__
from switchman.engine.errors import DataFolderUnusable, SwitchmanError
from switchman.engine.turn_starts import TurnStarts
from switchman.server.errors import EXPECTED_CODES
from switchman.server.features import FEATURES
from switchman.server.features.documents.open_documents import OpenDocuments
from switchman.server.notifier import EditorNotifier
from switchman.server.protocol import (
    TEXT_DOCUMENT_SYNC,
    UNREADABLE_FRAME_ERRORS,
    SwitchmanProtocol,
)
from switchman.server.shared_text import shared_document
from switchman.server.stdio import serve_stdio, stdin_is_pipe
from switchman.server.tcp import serve_tcp
from switchman.server.wire import plain_params_converter

if TYPE_CHECKING:
    from switchman.engine.service import Switchman

log = logging.getLogger(__name__)

class SwitchmanServer(LanguageServer):
    """pygls' LanguageServer holding the engine (:class:`Switchman`).

    The engine is created on first use, which the ``initialized`` handler
    triggers: its imports and database setup then happen after the editor has
    its ``initialize`` answer, keeping start-up fast.
    """

    def __init__(self) -> None:
        super().__init__(
            name="switchman",
            version=__version__,
            protocol_cls=SwitchmanProtocol,
            converter_factory=plain_params_converter,
            text_document_sync_kind=TEXT_DOCUMENT_SYNC,
        )
        self.shutdown_requested = False
        self._switchman: Switchman | None = None
        self._unusable: DataFolderUnusable | None = None
        """Why the engine could not start (its data folder), kept until the daemon restarts:
        the engine's background work starts only at ``initialized``."""
        self.initialization_options: dict[str, Any] = {}
        self.workspace_folders: list[str] = []
        """Folder URIs from ``initialize``, opened when the engine starts."""
        self.open_documents = OpenDocuments()
        """The documents the editor shares: which file each is (their text is pygls')."""
        self.turn_starts = TurnStarts()
        """The engine's turn starts, which give way while the editor waits for diagnostics
        (held by the configuration-editing feature, which never starts the engine)."""
        self.notifier = EditorNotifier(self)
        """The engine's session observer (the handlers hold its status notifications)."""
        self.chats_answering: set[asyncio.Task[Any]] = set()
        """The ``switchman/chat`` requests not answered yet (``shutdown`` waits for them)."""

    def notify_json(self, method: str, params: dict[str, Any], *, now: bool = False) -> None:
        """Send a notification with plain JSON params (:meth:`SwitchmanProtocol.notify_json`)."""
        cast("SwitchmanProtocol", self.protocol).notify_json(method, params, now=now)

    @property
    def switchman(self) -> Switchman:
        """The engine, created (with the announced folders opened) on first use."""
        if self._switchman is None:
            from switchman.engine.service import Switchman  # noqa: PLC0415 - see class doc
            from switchman.server.features.tools.bridge import (  # noqa: PLC0415
                EditorApplier,
                EditorApprover,
            )

            if self._unusable is not None:
                raise DataFolderUnusable(self._unusable.folder, self._unusable.reason,
                                         self._unusable.damaged)
            try:
                self._switchman = Switchman(
                    self.notifier, approver=EditorApprover(self),
                    applier=EditorApplier(self), editor_texts=self.editor_texts,
                    turn_starts=self.turn_starts)
            except DataFolderUnusable as error:
                self._unusable = error
                raise
            self.open_folders(self._switchman)
        return self._switchman

    def open_folders(self, engine: Switchman) -> None:
        """Open the folders the editor announced in ``engine``: when it is created, and at
        ``initialize`` when a request before it had already created it (with no folder)."""
        for folder in self.workspace_folders:
            try:
                engine.open_workspace(folder)
            except SwitchmanError as error:  # the editor named a folder no path can have
                log.warning("workspace folder ignored: %s", error)

    def editor_texts(self) -> dict[Path, str]:
        """The editor's text of each file it shares, by real path (what the tools read)."""
        workspace = self.workspace
        return self.open_documents.texts(lambda uri: shared_document(workspace, uri))

    @property
    def started_engine(self) -> Switchman | None:
        """The engine if it has been created (for shutting down without creating it)."""
        return self._switchman

    def editor_gone(self) -> None:
        """The editor said ``exit`` or closed the pipe (its window reloaded or closed before it
        could): the running turns end ``interrupted``, not cancelled as by the user's Stop."""
        if self._switchman is not None:
            self._switchman.cancel_all()

    def answering_chat(self) -> None:
        """Called by a ``switchman/chat`` handler: its request is in :attr:`chats_answering`
        until answered (pygls sends the answer from a done callback added before this one)."""
        task = asyncio.current_task()
        if task is not None:
            self.chats_answering.add(task)
            task.add_done_callback(self.chats_answering.discard)

    async def chats_answered(self, timeout: float) -> None:
        """Wait (at most ``timeout`` seconds) until every chat request is answered. An editor
        sends ``exit`` once ``shutdown`` is answered and may see the daemon's exit before it has
        read what came last (Neovim 0.7.2 then drops it): a turn the shutdown ended is answered
        first, so the editor shows the daemon's ``interrupted`` line, not a crash."""
        if self.chats_answering:
            await asyncio.wait(set(self.chats_answering), timeout=timeout)

    def turns_running(self) -> bool:
        """Whether a chat turn is streaming (never starts the engine to find out)."""
        return self._switchman is not None and self._switchman.turns_running()

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one editor at a time over TCP (see :mod:`switchman.server.tcp`)."""
        serve_tcp(self, host, port, self.editor_gone)

    def report_server_error(self, error: Exception, source: Any) -> None:
        """Errors outside a request: logged here, never shown with their Python text.

        pygls reports a frame it could not parse this way; that frame gets the
        ``-32700`` answer JSON-RPC asks for.
        """
        if isinstance(error, UNREADABLE_FRAME_ERRORS):
            self.protocol.parse_error(error)  # type: ignore[attr-defined]
        elif source is not FeatureRequestError:  # a request's error is its response
            log.error("%s: %s", getattr(source, "__name__", source), error)


def build_server() -> SwitchmanServer:
    """A server with every feature registered."""
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
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_hide_expected_errors)
    logging.getLogger("pygls.server").addFilter(_hide_unreadable_frames)


def _hide_expected_errors(record: logging.LogRecord) -> bool:
    """Drop pygls' tracebacks for errors we answer on purpose (unknown alias, …)."""
    error = record.exc_info[1] if record.exc_info else None
    return not (isinstance(error, JsonRpcException) and error.code in EXPECTED_CODES)


def _hide_unreadable_frames(record: logging.LogRecord) -> bool:
    """Drop pygls' traceback for a frame that is not JSON (answered and logged in one line)."""
    return not (record.exc_info and isinstance(record.exc_info[1], UNREADABLE_FRAME_ERRORS))


def run(tcp: tuple[str, int] | None = None) -> int:
    """Serve over stdio, or over TCP at ``(host, port)`` for debugging."""
    _configure_logging()
    server = build_server()
    if tcp:
        host, port = tcp
        try:
            server.start_tcp(host, port)
        except OSError as error:  # in use, a host that is not this machine's, no such name
            why = error.strerror or str(error)
            print(f"switchman serve: cannot listen on {host}:{port}: {why}", file=sys.stderr)
            return 1
    elif stdin_is_pipe():
        serve_stdio(server, server.editor_gone)
    else:  # a file or terminal on stdin (manual runs): pygls' own blocking I/O
        server.start_io()
    # The LSP exit code: 0 after a proper shutdown request, 1 otherwise.
    return 0 if server.shutdown_requested else 1
