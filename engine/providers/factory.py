"""Adapters by provider, created on first use and reused while the key (and the provider's
endpoint and timeout) are unchanged.

An adapter imports its provider's SDK, which takes most of a second and tens
of MiB (the ``anthropic`` package alone is about 45 MiB resident). An idle
daemon imports none: an adapter is created on a worker thread when a chat is
likely to need it soon (:meth:`AdapterFactory.prepare`, see
``Switchman.expect_turn``) or, failing that, when it first streams. A turn
that starts before the import has finished waits for it without blocking the
event loop, which keeps serving the editor and other turns.

The import leaves a few hundred thousand long-lived objects (the SDK's generated
types). Left in the collector's oldest generation, they made each later full
collection take 170-400 ms on the event loop, in the middle of chat streams. So
the creation runs like a configuration check: with automatic collection paused,
and what it leaves alive frozen (``engine/gcpause.py``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import hashlib
import threading
from collections.abc import AsyncIterator, Callable, Iterable

import msgspec

from switchman.engine.config.registry import ApiKind, ProviderSpec
from switchman.engine.gcpause import run_paused
from switchman.engine.keymask import KeyMask
from switchman.engine.keys import KeyRing
from switchman.engine.messages import TextBlock, ToolUseBlock
from switchman.engine.providers.base import (
    Finished,
    ProviderAdapter,
    ProviderRequest,
    StreamEvent,
    TextDelta,
    ToolCall,
)
from switchman.engine.providers.errors import ProviderError


class AdapterFactory:
    """Hands out one adapter (and SDK client) per provider endpoint and key, the key read by
    ``keys`` (the daemon's :class:`~switchman.engine.keys.KeyRing`). ``masked`` gives the
    keys masked in answers: every configured provider's now, and those read before them."""

    def __init__(self, keys: KeyRing | None = None,
                 masked: Callable[[], Iterable[str]] = tuple) -> None:
        self._keys = keys or KeyRing()
        self._masked = masked
        self._cache: dict[tuple[str, str, str, str, str], DeferredAdapter] = {}

    def adapter(self, provider: ProviderSpec) -> DeferredAdapter:
        """The adapter for ``provider`` with its current key."""
        key = self._keys.key(provider)
        # Only a digest of the key is kept, so the cache never holds a key twice.
        digest = hashlib.sha256((key or "").encode()).hexdigest()[:16]
        # Everything the adapter is made from: a models.yaml edit of the timeout applies to the
        # next call, as every other edit does (the client kept the first one until a restart).
        cache_key = (provider.name, provider.api.value, provider.base_url or "", digest,
                     str(provider.timeout_seconds))
        adapter = self._cache.get(cache_key)
        if adapter is None:
            adapter = self._cache[cache_key] = DeferredAdapter(lambda: self._create(provider, key),
                                                               key, self._masked)
        return adapter

    def prepare(self, provider: ProviderSpec) -> None:
        """Start creating ``provider``'s adapter (its SDK import included) in the background."""
        self.adapter(provider).prepare()

    @staticmethod
    def _create(provider: ProviderSpec, key: str | None) -> ProviderAdapter:
        # Imported here: each adapter imports its SDK, which is slow; only used ones load.
        if provider.api is ApiKind.ANTHROPIC:
            from switchman.engine.providers.anthropic_adapter import (  # noqa: PLC0415
                AnthropicAdapter,
            )

            return AnthropicAdapter(provider, key)
        from switchman.engine.providers.openai_adapter import OpenAIAdapter  # noqa: PLC0415

        return OpenAIAdapter(provider, key)


class DeferredAdapter:
    """An adapter created (SDK import included) once, on a worker thread. Its answers never
    hold ``key``, nor any key ``masked`` gives when a call starts (the other providers'), nor
    a piece of one: a provider that echoes one gets it masked (:class:`KeyMask`)."""

    def __init__(self, create: Callable[[], ProviderAdapter], key: str | None = None,
                 masked: Callable[[], Iterable[str]] = tuple) -> None:
        self._create = create
        self._key = key
        self._masked = masked
        self._created: concurrent.futures.Future[ProviderAdapter] | None = None

    def prepare(self) -> concurrent.futures.Future[ProviderAdapter]:
        """Start creating the real adapter unless that has started; the creation's future."""
        if self._created is None:
            self._created = concurrent.futures.Future()
            # A daemon thread: an import still running never holds up the daemon's exit.
            threading.Thread(target=_fulfil, args=(self._created, self._create),
                             name="provider-adapter", daemon=True).start()
        return self._created

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Stream ``request`` through the real adapter, creating it first if needed."""
        created = self.prepare()
        if created.done():  # the usual case: no hop through the loop before the request
            adapter = created.result()
        else:  # shielded: a cancelled turn must not cancel a creation other turns share
            adapter = await asyncio.shield(asyncio.wrap_future(created))
        mask = KeyMask(self._key, *self._masked())
        try:
            async for event in adapter.stream(request):
                if isinstance(event, TextDelta):
                    if shown := mask.feed(event.text):
                        yield TextDelta(shown)
                    continue
                if held := mask.flush():
                    yield TextDelta(held)
                yield _masked(event, mask) if isinstance(event, Finished | ToolCall) else event
        except Exception as error:
            # A stream cut short keeps its last text, which only looked like the key's start.
            # (A cancelled turn keeps what was shown: at most that start is not.)
            if held := mask.flush():
                yield TextDelta(held)
            if isinstance(error, ProviderError):
                _mask_error(error, mask)
            raise


def _masked(event: Finished | ToolCall, mask: KeyMask) -> Finished | ToolCall:
    """The answer as the editor, the transcript and the tools get it: the keys masked in its
    text and in its tool calls' input (a command line, a file's content). The tool runs with
    the input masked, as the user is shown it and approves it: what runs is what was seen."""
    if isinstance(event, ToolCall):  # shown while the answer streams
        return msgspec.structs.replace(event, input=mask.mask_in(event.input))
    return msgspec.structs.replace(event, content=[
        msgspec.structs.replace(b, text=mask.mask(b.text)) if isinstance(b, TextBlock)
        else msgspec.structs.replace(b, input=mask.mask_in(b.input))
        if isinstance(b, ToolUseBlock) else b
        for b in event.content])


def _mask_error(error: ProviderError, mask: KeyMask) -> None:
    """``error`` with the keys masked in its message: the adapter masks its own key and
    anything key-shaped, but a provider (a gateway, a proxy) may quote another provider's key
    or a rotated one, which reached the chat, the transcript and the log as it was."""
    error.detail = mask.mask(error.detail)
    error.args = tuple(mask.mask(a) if isinstance(a, str) else a for a in error.args)


def _fulfil(future: concurrent.futures.Future[ProviderAdapter],
            create: Callable[[], ProviderAdapter]) -> None:
    if not future.set_running_or_notify_cancel():  # running: nobody can cancel it from now on
        return
    try:
        future.set_result(run_paused(create))
    except BaseException as error:  # handed to whoever awaits the adapter
        future.set_exception(error)
