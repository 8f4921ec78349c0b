"""pygls' JSON-RPC protocol, hardened against whatever arrives on the wire.

JSON-RPC promises an answer to every request. pygls structures a message while
the JSON is still being parsed, and a frame it cannot structure (params given
as a string, a hover without a position, an id that is an object) is logged
and dropped: the editor waits forever. Here each frame is parsed as plain
JSON first and structured once, at the top level, so every failure has a
request id to answer:

* a body that is not JSON (or too deeply nested to read): ``-32700``, id null;
* a frame that is not a JSON-RPC message (no method, an id of the wrong type,
  an array, a notification's method with an id): ``-32600``;
* a request whose params do not fit the method: ``-32602`` with a short
  message naming the method (pygls' :class:`JsonRpcInvalidParams`).

No Python exception text reaches the client: an unexpected error while handling
a request is answered with a fixed ``-32603`` message and logged on stderr.
"""

from __future__ import annotations

import asyncio
import contextvars
import json
import logging
from collections.abc import Generator
from typing import Any

import attrs
import msgspec
from lsprotocol import types
from lsprotocol.types import EXIT, INITIALIZE
from pygls.exceptions import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRpcInvalidParams,
    JsonRpcInvalidRequest,
    JsonRpcParseError,
)
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
)
from pygls.protocol.language_server import lsp_method
from pygls.workspace import Workspace

from switchman.server.shared_text import SharedWorkspace, shared_document

log = logging.getLogger(__name__)

UNREADABLE_FRAME_ERRORS = (json.JSONDecodeError, UnicodeDecodeError, RecursionError)
"""What reading a frame's body can raise: pygls reports these through ``report_server_error``."""

TEXT_DOCUMENT_SYNC = types.TextDocumentSyncKind.Incremental
"""How the editor sends changes: only what changed (the server is made with it)."""

_ENCODER = msgspec.json.Encoder()
INTERNAL_ERROR_MESSAGE = ("Switchman failed to handle this request (an internal error); "
                          "details are in its log.")


class SwitchmanProtocol(LanguageServerProtocol):
    """pygls' protocol: every request answered, nothing internal leaked, silent after ``exit``.

    A turn may still be finishing when the editor exits; its last notifications
    must not be written to a closed stream (which pygls would report as errors).
    """

    closing = False
    _initialized = False
    """Whether ``initialize`` was dispatched (LSP sends it once; a second is refused)."""
    _shared: tuple[Workspace, SharedWorkspace] | None = None

    @property
    def workspace(self) -> Workspace:
        """pygls' workspace, with documents that apply an edit to the lines it touches
        (:mod:`.shared_text`): pygls makes its own at ``initialize``, before any document is
        opened, and this takes its place at the first use after that."""
        made = super().workspace
        shared = self._shared
        if shared is None or shared[0] is not made:
            shared = self._shared = (made, SharedWorkspace.like(made, TEXT_DOCUMENT_SYNC))
        return shared[1]

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(
            self, params: types.DidChangeTextDocumentParams) -> Generator[Any, Any, None]:
        """pygls' ``didChange``, but a change to a document the editor has not opened (or has
        closed) is named in one warning and ignored: pygls logged a ``KeyError`` traceback."""
        uri = params.text_document.uri
        if shared_document(self.workspace, uri) is None:
            log.warning("ignored a change to %s: the editor has not opened it", uri)
            return
        yield from super().lsp_text_document__did_change(params)

    def _send_data(self, data: Any) -> None:
        if not self.closing:
            super()._send_data(data)

    def notify_json(self, method: str, params: dict[str, Any], *, now: bool = False) -> None:
        """Send a notification whose params are plain JSON data already.

        pygls passes every message through cattrs, which walks each value in
        Python on the event loop, and then through the ``json`` module; the
        engine's records are JSON-ready (msgspec) and diagnostics are built as
        JSON in the check process, so they go straight to msgspec's encoder,
        several times faster (each streamed delta is one of these). The body is
        UTF-8, and the header counts its bytes.

        Frames are written at the end of the loop's pass (``PipeWriter``); ``now``
        writes this one, after whatever is queued before it, at once: for what the
        editor is waiting on (diagnostics), which would otherwise also wait for the
        next pass of the loop, behind every stream's callbacks.
        """
        if self.closing or self.writer is None:
            return
        body = _ENCODER.encode({"jsonrpc": self.VERSION, "method": method, "params": params})
        # Every writer the daemon uses (stdout's, TCP's, a terminal's) writes synchronously.
        self.writer.write(b"Content-Length: %d\r\nContent-Type: %s; charset=%s\r\n\r\n%s"
                          % (len(body), self.CONTENT_TYPE.encode(), self.CHARSET.encode(), body))
        flush = getattr(self.writer, "flush", None) if now else None
        if flush is not None:
            flush()

    def structure_message(self, data: dict[str, Any]) -> Any:
        """Leave every JSON object plain; :meth:`handle_message` structures the whole frame.

        pygls passes this as ``json.loads``' object hook, which sees nested objects
        first; structuring there would also turn params that merely contain a
        ``jsonrpc`` key into messages, and its failures could not be answered.
        """
        return data

    def handle_message(self, message: Any) -> None:
        """Check and structure one parsed frame, then hand it to pygls (never raises)."""
        try:
            structured = self._structure(message)
        except JsonRpcException as error:
            if not self._fail_awaited(message):
                self._refuse(message, error)
            return
        if structured.__class__ is types.CancelNotification \
                and not _valid_id(structured.params.id):  # cattrs lets a list through
            log.warning("dropped $/cancelRequest: its id is not a string or an integer")
            return
        try:
            self._dispatch(message, structured)
        except Exception:  # a bug in dispatch must not end the I/O loop
            log.exception("could not handle %s", _describe(message))
            self._refuse(message, JsonRpcInternalError(INTERNAL_ERROR_MESSAGE))

    def _fail_awaited(self, message: Any) -> bool:
        """An editor's answer of another shape than its request's (``null`` for
        ``workspace/applyEdit``) fails that request: its caller gets an error, as for an error
        answer, instead of waiting for an answer that was dropped. False when ``message`` is
        not an answer the daemon awaits."""
        if not isinstance(message, dict) or "method" in message \
                or not _valid_id(message.get("id")) or message["id"] not in self._request_futures:
            return False
        log.warning("could not read the editor's answer to request %s", message["id"])
        self._handle_response(message["id"], None, types.ResponseError(
            code=JsonRpcInvalidParams.CODE,
            message="the editor's answer could not be read (not the shape this request takes)"))
        return True

    def _handle_response(self, msg_id: Any, result: Any | None = None,
                         error: types.ResponseError | None = None) -> None:
        """An answer to a request the daemon no longer waits for (an approval whose turn was
        cancelled, or that timed out: the editor answered as it was withdrawn) changes
        nothing; pygls would fail setting the cancelled future's result."""
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            del self._request_futures[msg_id]
            log.info("ignored a late answer to request %s (no longer waited for)", msg_id)
            return
        super()._handle_response(msg_id, result, error)

    def _dispatch(self, data: dict[str, Any], message: Any) -> None:
        """pygls' ``handle_message`` for a structured frame, its kind read from the frame's
        keys. pygls tells the kinds apart with ``isinstance`` against runtime-checkable
        protocols, about 20 µs each in Python 3.11, on every message the editor sends (each
        keystroke's ``didChange``, each chat message before its turn starts)."""
        method = data.get("method")
        if self._shutdown and method != EXIT:
            log.warning("ignored %s: the server is shutting down", _describe(data))
            if method is not None and "id" in data:  # every request is answered (LSP too)
                self.send_error(message.id, JsonRpcInvalidRequest(
                    "Invalid request: the server is shutting down (shutdown was requested)."))
            return
        if method == INITIALIZE and "id" in data:
            if self._initialized:  # pygls would make a new workspace, its documents lost
                log.warning("refused a second initialize (id %r)", message.id)
                self.send_error(message.id, JsonRpcInvalidRequest(
                    "Invalid request: the server is already initialized (initialize is sent "
                    "once)."))
                return
            self._initialized = True
        context = contextvars.copy_context()  # each handler runs in a context of its own
        if method is not None and "id" in data:
            context.run(self._handle_request, message.id, method, message.params)
        elif method is not None:
            context.run(self._handle_notification, method, message.params)
        elif "error" in data:
            context.run(self._handle_response, message.id, None, message.error)
        else:
            context.run(self._handle_response, message.id, message.result)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        """Cancel a request one loop turn later, so that its handler has started.

        Frames that arrive together are dispatched in one loop turn: a chat request
        and the ``$/cancelRequest`` the editor sent right after it would otherwise
        cancel the handler before it ran, and the message would be neither recorded
        nor answered as a ``cancelled`` turn. Once started, the handler turns the
        cancellation into a turn that ends ``cancelled`` with what it kept.
        """
        asyncio.get_running_loop().call_soon(super()._handle_cancel_notification, msg_id)

    def parse_error(self, error: BaseException) -> None:
        """Answer a frame whose body could not be read as JSON."""
        detail = "too deeply nested" if isinstance(error, RecursionError) else str(error)
        log.warning("unreadable JSON-RPC frame: %s", detail)
        self.send_error(None, JsonRpcParseError(f"Parse error: the frame is not valid JSON "
                                                 f"({_shorten(detail)})."))

    def _send_response(self, msg_id: Any, result: Any | None = None,
                       error: types.ResponseError | None = None) -> None:
        if error is not None and error.code == JsonRpcInternalError.CODE and not _ours(error):
            # pygls puts the exception text and traceback here; those stay in our log.
            error = types.ResponseError(code=error.code, message=INTERNAL_ERROR_MESSAGE,
                                        data={"code": "internal_error"})
        super()._send_response(msg_id, result, error)

    # -- structuring ----------------------------------------------------------------------

    def _structure(self, data: Any) -> Any:
        """The frame as pygls' message objects; raises a JSON-RPC error for what is not one."""
        if not isinstance(data, dict):
            raise JsonRpcInvalidRequest("Invalid request: a JSON-RPC message must be an object.")
        if data.get("jsonrpc") != self.VERSION:
            raise JsonRpcInvalidRequest('Invalid request: "jsonrpc" must be "2.0".')
        if "id" in data and not _valid_id(data["id"]):
            raise JsonRpcInvalidRequest('Invalid request: "id" must be a string or an integer.')
        method = data.get("method")
        if "method" in data and not isinstance(method, str):
            raise JsonRpcInvalidRequest('Invalid request: "method" must be a string.')
        kind = self._message_type(data)
        try:
            return self._converter.structure(data, kind)
        except Exception as exc:  # cattrs reports shape mistakes in several exception types
            log.warning("invalid params for %s: %s", _describe(data), _shorten(str(exc)))
            raise JsonRpcInvalidParams(
                f"Invalid params for {method or 'the response'}: they do not have the shape "
                "this method takes.", data={"code": "invalid_params"}) from None

    def _message_type(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        if "id" not in data:
            return self.get_message_type(method or "") or JsonRPCNotification
        if method is not None:
            kind = self.get_message_type(method)
            if kind is not None and "id" not in attrs.fields_dict(kind):
                # a notification's type has no id to answer: it would fail in dispatch
                raise JsonRpcInvalidRequest(
                    f'Invalid request: {method} is a notification; send it without an "id".')
            return kind or JsonRPCRequestMessage
        if "error" in data:
            return types.ResponseErrorMessage
        return self._result_types.pop(data["id"], None) or JsonRPCResponseMessage

    def _refuse(self, message: Any, error: JsonRpcException) -> None:
        """Answer a frame that cannot be handled, if it is a request (a notification is dropped)."""
        msg_id = message.get("id") if isinstance(message, dict) else None
        is_request = isinstance(message, dict) and "method" in message and "id" in message
        if not is_request and not isinstance(error, JsonRpcInvalidRequest):
            log.warning("dropped %s: %s", _describe(message), error.message)
            return
        self.send_error(msg_id if _valid_id(msg_id) else None, error)

    def send_error(self, msg_id: Any, error: JsonRpcException) -> None:
        """Answer ``msg_id`` (None when it cannot be known) with ``error``."""
        # A plain dict: lsprotocol's types leave out a null id, which JSON-RPC requires here.
        response: dict[str, Any] = {"code": error.code, "message": error.message}
        if error.data is not None:
            response["data"] = error.data
        self._send_data({"jsonrpc": self.VERSION, "id": msg_id, "error": response})


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _ours(error: types.ResponseError) -> bool:
    """Whether an internal error was raised on purpose by Switchman (it carries ``data.code``)."""
    return isinstance(error.data, dict) and "traceback" not in error.data \
        and isinstance(error.data.get("code"), str)


def _describe(message: Any) -> str:
    if isinstance(message, dict):
        return f"{message.get('method', 'response')!s:.80} (id {message.get('id')!r:.40})"
    return f"a {type(message).__name__} frame"


def _shorten(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"
