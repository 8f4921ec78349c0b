"""CPU per streamed event in the Anthropic adapter, against the SDK's own stream helper.

Run from the repository root: ``PYTHONPATH=. .venv/bin/python bench/bench_stream_cpu.py``.
The fake provider runs in its own process and sends each reply as ``--chunks`` text
deltas at once; this process's CPU time (``time.process_time``) for reading one reply
through :class:`AnthropicAdapter` is set against reading the same reply with the SDK's
``messages.stream()`` helper, alternating, ``--runs`` times each. Both parse the same
bytes with the same SDK; the difference is what each does per event.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import anthropic
from bench_daemon import fake_provider
from bench_load import script
from bench_support import at_least, machine

from switchman.engine.config.registry import ApiKind, ProviderSpec
from switchman.engine.keys import KeyRing
from switchman.engine.providers.base import ProviderRequest
from switchman.engine.providers.factory import AdapterFactory
from tests.providers.test_adapters import user


async def through_adapter(base_url: str, chunks: int) -> float:
    """CPU seconds to read one reply of ``chunks`` deltas through the adapter."""
    spec = ProviderSpec(name="anthropic", api=ApiKind.ANTHROPIC, api_key_env="K",
                        base_url=base_url, timeout_seconds=30)
    adapter = AdapterFactory(KeyRing({"K": "bench"})).adapter(spec)
    request = ProviderRequest(model_id="anthropic:m", api_model="m", messages=[user("hi")])
    script(base_url, 1, chunks, 0)
    start = time.process_time()
    async for _ in adapter.stream(request):
        pass
    return time.process_time() - start


async def through_helper(sdk: anthropic.AsyncAnthropic, base_url: str, chunks: int) -> float:
    """CPU seconds to read the same reply with the SDK's ``messages.stream()``."""
    script(base_url, 1, chunks, 0)
    start = time.process_time()
    async with sdk.messages.stream(model="m", max_tokens=64, messages=[
            {"role": "user", "content": "hi"}]) as stream:
        async for _ in stream:
            pass
        await stream.get_final_message()
    return time.process_time() - start


async def main(chunks: int, runs: int) -> None:
    """Alternate the two readers and print the medians per event and their ratio."""
    with tempfile.TemporaryDirectory() as tmp, fake_provider(Path(tmp)) as base_url:
        sdk = anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, max_retries=0)
        await through_adapter(base_url, chunks)  # warm up both: imports, connections
        await through_helper(sdk, base_url, chunks)
        adapter, helper = [], []
        for _ in range(runs):
            adapter.append(await through_adapter(base_url, chunks) / chunks)
            helper.append(await through_helper(sdk, base_url, chunks) / chunks)
        await sdk.close()
    a, h = statistics.median(adapter) * 1e6, statistics.median(helper) * 1e6
    print(f"{machine()}, anthropic {anthropic.__version__}; replies of "
          f"{chunks} text deltas, {runs} of each, alternating\n")
    print("| benchmark | figure | reference (same run) | ratio |")
    print("|---|---|---|---|")
    print(f"| CPU per streamed text delta, Anthropic adapter (median) | {a:.1f} µs | "
          f"SDK messages.stream(): {h:.1f} µs | {a / h:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=at_least(1), default=2000,
                        help="text deltas per reply (default 2000)")
    parser.add_argument("--runs", type=at_least(1), default=7,
                        help="replies read each way, alternating (default 7)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.chunks, arguments.runs))
