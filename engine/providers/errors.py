"""Provider failures, classified for the availability tracker and explained for people.

::

    ProviderError                 a call to a provider failed
      .error_class                auth | rate_limit | overloaded | server | network | timeout
                                  | bad_request
      .retryable                  worth another attempt (before any output was streamed)
"""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit

from switchman.engine.availability import ErrorClass
from switchman.engine.errors import SwitchmanError

MAX_RETRY_WAIT_SECONDS = 30.0
"""The longest wait a turn accepts before a retry; a provider asking for more fails the call
at once (with the wait in its message) rather than leave the editor silent for minutes."""

_RETRYABLE = {ErrorClass.RATE_LIMIT, ErrorClass.OVERLOADED, ErrorClass.SERVER,
              ErrorClass.NETWORK, ErrorClass.TIMEOUT}

_EXPLANATIONS = {
    ErrorClass.AUTH: "the API key was refused — check it",
    ErrorClass.RATE_LIMIT: "rate limited",
    ErrorClass.OVERLOADED: "the provider is overloaded",
    ErrorClass.SERVER: "server error",
    ErrorClass.NETWORK: "could not reach the provider (network error)",
    ErrorClass.TIMEOUT: "the provider did not answer in time",
    ErrorClass.BAD_REQUEST: "the provider rejected the request",
}


class ProviderError(SwitchmanError):
    """A failed provider call. The message never contains an API key."""

    code = "provider_error"

    def __init__(
        self,
        error_class: ErrorClass,
        detail: str,
        *,
        model: str = "",
        status: int | None = None,
        retry_after: float | None = None,
        address: str | None = None,
    ) -> None:
        self.error_class = error_class
        self.detail = detail
        self.model = model
        self.status = status
        self.retry_after = retry_after
        status_text = f" ({status})" if status else ""
        explanation = _EXPLANATIONS[error_class]
        if address and error_class is ErrorClass.NETWORK:  # a mistyped base_url shows
            explanation = f"could not reach the provider at {address} (network error)"
        super().__init__(f"{model or 'provider'}: {explanation}{status_text}"
                         + (f": {detail}" if detail else "") + self._wait_note())

    def _wait_note(self) -> str:
        if self.retry_after is None or self.retry_after <= MAX_RETRY_WAIT_SECONDS \
                or self.error_class not in _RETRYABLE:
            return ""
        return (f" — the provider asked to wait {self.retry_after:.0f} s before trying again, "
                f"longer than the {MAX_RETRY_WAIT_SECONDS:.0f} s Switchman waits within a turn")

    @property
    def retryable(self) -> bool:
        """Whether another attempt may succeed."""
        return self.error_class in _RETRYABLE


def shown_address(url: object) -> str:
    """A provider's endpoint as a message may name it: scheme, host, port and path, without
    a user name, password, query or fragment (where a key could hide)."""
    parts = urlsplit(str(url))
    netloc = parts.netloc.rpartition("@")[2]  # as written, even a port no socket can have
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def cut_short(model: str) -> ProviderError:
    """A stream whose body ended before the answer did: a proxy or server gave up, and what
    arrived is not a finished answer. Failed as a cut connection is, so the turn does not end
    "completed". Servers that speak the APIs differ in how they close a stream, so the
    adapters say it only where the answer is plainly unfinished: Anthropic's without
    ``message_stop``, its stop reason or a closed content block; OpenAI's without
    ``finish_reason``; an OpenAI-compatible one with no ``finish_reason`` and nothing at all
    before the end (some local servers never send ``finish_reason``, and the SDK hides whether
    ``[DONE]`` came)."""
    return ProviderError(ErrorClass.NETWORK, "the stream ended before the answer did",
                         model=model)


def unreadable(exc: Exception, model: str) -> ProviderError | None:
    """A stream frame that is not JSON, or not the API's shape (``json``'s and pydantic's
    errors are ``ValueError``), as a provider error: the provider's fault, not Switchman's."""
    if isinstance(exc, ValueError):
        return ProviderError(ErrorClass.SERVER, "the provider sent a stream that could not be "
                             "read", model=model)
    return None


def error_detail(exc: Exception) -> str:
    """The provider's own message for a failure, trimmed (callers redact keys from it).

    The SDKs' messages for HTTP errors are ``Error code: 500 - {...}``, a Python
    rendering of the response body; the message inside that body is what the
    provider meant to say. Without one, the status (shown anyway) says enough.
    """
    body = getattr(exc, "body", None)
    message = _body_message(body)
    if message is None:
        message = str(getattr(exc, "message", None) or exc)
        if message.startswith("Error code:"):
            message = ""
    return " ".join(message.split())[:500]


def _body_message(body: object) -> str | None:
    """``error.message`` (or ``message``) of a JSON error body, as Anthropic and OpenAI send."""
    if isinstance(body, dict):
        inner = body.get("error")
        if isinstance(inner, str):
            return inner
        found = (inner if isinstance(inner, dict) else body).get("message")
        return found if isinstance(found, str) and found.strip() else None
    return None


def connection_failure(exc: BaseException) -> BaseException | None:
    """The socket error behind ``exc`` when the transport raised it raw, else None.

    Some transports open connections inside an anyio task group and raise a
    one-member ``ExceptionGroup`` the SDK does not translate.
    """
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc if isinstance(exc, OSError | OverflowError) else None


def class_for_status(status: int, error_type: str | None = None) -> ErrorClass:
    """The error class of an HTTP status (and the provider's error type, if any)."""
    if status in (401, 403):
        return ErrorClass.AUTH
    if status == 429:
        return ErrorClass.RATE_LIMIT
    if status in (503, 529) or error_type == "overloaded_error":
        return ErrorClass.OVERLOADED
    if status >= 500 or (status == 200 and error_type != "invalid_request_error"):
        return ErrorClass.SERVER  # 200: an error event inside a stream
    return ErrorClass.BAD_REQUEST


def retry_after_seconds(headers: object) -> float | None:
    """The server's requested wait, from ``retry-after-ms`` or ``retry-after``."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = get(name)
        if value is not None:
            try:
                return max(0.0, float(value) / scale)
            except ValueError:
                continue
    return None
