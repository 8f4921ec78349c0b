"""Daemon benchmarks (figures go to docs/performance.md). Run from the repository root:

    PYTHONPATH=. .venv/bin/python bench/bench_daemon.py

The fake provider runs in its own process, so that neither path's client
competes with it for a Python interpreter.

1. Time to first delta: from sending a message to the first streamed text, through
   ``switchman serve`` (JSON-RPC over stdio, routing, durable writes, the real SDK)
   versus calling the ``anthropic`` SDK directly, both against the same local fake
   provider. The difference is what the daemon adds.
2. Spawn → initialize result: starting ``switchman serve`` until its answer to
   ``initialize`` arrives.
3. Resident memory of the idle daemon, after initialize and after one turn.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import anthropic
from lsprotocol import types
from pytest_lsp import client_capabilities

from switchman.server import methods
from tests.support.lsp import SERVER_COMMAND, SwitchmanClient, server_env


@contextlib.contextmanager
def fake_provider(folder: Path) -> Iterator[str]:
    """The fake provider in a separate process; yields its base URL."""
    port_file = folder / "port"
    process = subprocess.Popen([sys.executable, "-m", "tests.support.fake_provider", "--port",
                                "0", "--port-file", str(port_file)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while not port_file.exists() or not port_file.read_text().strip():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the fake provider did not start")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port_file.read_text().strip()}"
    finally:
        process.terminate()
        process.wait(10)


def summary(samples: list[float]) -> tuple[float, float]:
    """p50 and p90 in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e3, ordered[int(len(ordered) * 0.9)] * 1e3


async def sdk_direct(client: anthropic.AsyncAnthropic) -> float:
    """First-text latency of one call made with the SDK directly."""
    start = time.perf_counter()
    async with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=[
            {"role": "user", "content": "hi"}]) as stream:
        async for event in stream:
            if event.type == "text":
                elapsed = time.perf_counter() - start
        return elapsed


async def start_daemon(env: dict[str, str], workspace: Path) -> tuple[SwitchmanClient, float]:
    """A daemon and the seconds from spawn to the initialize result."""
    client = SwitchmanClient()
    client.listen(methods.CHAT_DELTA, methods.ROUTE_DECIDED, methods.STATUS)
    start = time.perf_counter()
    await client.start_io(*SERVER_COMMAND, env=env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="w")]))
    return client, time.perf_counter() - start


async def through_daemon(client: SwitchmanClient, workspace: Path, run: int) -> float:
    """First-text latency of one turn through the daemon (in a fresh session)."""
    await client.request(methods.NEW_SESSION, {"workspace": workspace.as_uri()})
    seen = len(client.received[methods.CHAT_DELTA])
    start = time.perf_counter()
    pending = asyncio.ensure_future(client.request(
        methods.CHAT, {"workspace": workspace.as_uri(), "message": f"hi {run}"}))
    await client.wait_until(lambda: len(client.received[methods.CHAT_DELTA]) > seen)
    elapsed = time.perf_counter() - start
    await pending
    return elapsed


def rss_mb(pid: int) -> float:
    """Resident set size of a process, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main(runs: int, spawns: int) -> None:
    """Run the benchmarks and print a Markdown table."""
    with tempfile.TemporaryDirectory() as tmp, fake_provider(Path(tmp)) as base_url:
        root = Path(tmp)
        for name in ("config", "data", "workspace"):
            (root / name).mkdir()
        (root / "config" / "models.yaml").write_text(
            f"providers:\n  anthropic: {{base_url: '{base_url}'}}\n")
        (root / "config" / "routing.yaml").write_text("global_default: sonnet\nrules: []\n")
        env = server_env(root / "config", root / "data", {"ANTHROPIC_API_KEY": "bench"})
        workspace = root / "workspace"

        sdk = anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, max_retries=0)
        startup = []
        for _ in range(spawns):
            probe, seconds = await start_daemon(env, workspace)
            startup.append(seconds)
            await probe.shutdown_session()
            await probe.stop()
        client, _ = await start_daemon(env, workspace)
        pid = client._server.pid  # type: ignore[union-attr]
        idle_rss = rss_mb(pid)
        for run in range(5):  # warm up both paths: SDK imports, connections, caches
            await sdk_direct(sdk)
            await through_daemon(client, workspace, run)
        direct, daemon = [], []
        for run in range(runs):  # interleaved, so machine noise hits both alike
            direct.append(await sdk_direct(sdk))
            daemon.append(await through_daemon(client, workspace, run))
        after_rss = rss_mb(pid)
        await client.shutdown_session()
        await client.stop()

    d50, d90 = summary(direct)
    s50, s90 = summary(daemon)
    a50, a90 = summary([b - a for a, b in zip(direct, daemon, strict=True)])
    i50, i90 = summary(startup)
    print(f"python {sys.version.split()[0]}")
    print("| measurement | runs | p50 ms | p90 ms |")
    print("|---|---|---|---|")
    print(f"| first text delta, SDK directly | {runs} | {d50:.2f} | {d90:.2f} |")
    print(f"| first text delta, through switchman serve | {runs} | {s50:.2f} | {s90:.2f} |")
    print(f"| **added by the daemon** (paired difference) | {runs} | **{a50:.2f}** | {a90:.2f} |")
    print(f"| spawn → initialize result | {spawns} | {i50:.0f} | {i90:.0f} |")
    print(f"\nIdle RSS after initialize: {idle_rss:.1f} MiB; after {runs + 5} turns: "
          f"{after_rss:.1f} MiB")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--spawns", type=int, default=10)
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.spawns))
