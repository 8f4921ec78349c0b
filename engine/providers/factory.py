"""Adapters by provider, created on first use and reused while the key is unchanged.

An adapter imports its provider's SDK, which takes most of a second (the
daemon starts that import in the background at start-up); adapters are
therefore created on a worker thread when they first stream, so a turn that
starts before the import has finished waits for it without blocking the event
loop, which keeps serving the editor and other turns.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
from collections.abc import AsyncIterator, Callable, Mapping

from switchman.engine.config.registry import ApiKind, ProviderSpec
from switchman.engine.keys import read_key
from switchman.engine.providers.base import ProviderAdapter, ProviderRequest, StreamEvent


class AdapterFactory:
    """Hands out one adapter (and SDK client) per provider endpoint and key."""

    def __init__(self, environ: Mapping[str, str] = os.environ) -> None:
        self._environ = environ
        self._cache: dict[tuple[str, str, str, str], ProviderAdapter] = {}

    def adapter(self, provider: ProviderSpec) -> ProviderAdapter:
        """The adapter for ``provider`` with its current key."""
        key = read_key(provider, self._environ)
        # Only a digest of the key is kept, so the cache never holds a key twice.
        digest = hashlib.sha256((key or "").encode()).hexdigest()[:16]
        cache_key = (provider.name, provider.api.value, provider.base_url or "", digest)
        adapter = self._cache.get(cache_key)
        if adapter is None:
            adapter = self._cache[cache_key] = DeferredAdapter(lambda: self._create(provider, key))
        return adapter

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
    """An adapter created (SDK import included) on a worker thread when it first streams."""

    def __init__(self, create: Callable[[], ProviderAdapter]) -> None:
        self._create = create
        self._created: asyncio.Future[ProviderAdapter] | None = None

    async def stream(self, request: ProviderRequest) -> AsyncIterator[StreamEvent]:
        """Stream ``request`` through the real adapter, creating it first if needed."""
        if self._created is None:  # concurrent first turns share one creation
            self._created = asyncio.ensure_future(asyncio.to_thread(self._create))
        adapter = await asyncio.shield(self._created)
        async for event in adapter.stream(request):
            yield event
