"""Daemon benchmarks, each against a reference measured in the same run. Run from the
repository root (``make bench`` does):

    PYTHONPATH=. .venv/bin/python bench/bench_daemon.py

The fake provider runs in its own process, so that neither path's client
competes with it for a Python interpreter.

1. Time to first delta: from sending a message to the first streamed text, through
   ``switchman serve`` (JSON-RPC over stdio, routing, durable writes, the real SDK)
   versus calling the ``anthropic`` SDK directly, both against the same local fake
   provider, interleaved. The paired difference is what the daemon adds. Two SDK
   references: ``hi`` alone (no tools, no system prompt), and the daemon's own request
   (its system prompt, tool definitions and limits, read back from the fake provider's
   log of the daemon's last warm-up turn) with this run's message. The daemon is
   driven by pytest-lsp's client; then, with that daemon stopped, a second daemon (its
   own data folder) is driven by a lean client that only reads frames and parses their
   JSON, as an editor does (``lean_client.py``), against the SDK sending the same
   request: pygls' client costs the benchmark ~0.2 ms each way per turn, which the first
   pairing counts as the daemon's.
2. Spawn → initialize result: ``switchman serve`` against a bare pygls 2 server
   started by the same interpreter, interleaved.
3. Resident memory of the daemon with keys set: at the initialize result, idle a
   few seconds later (the engine created; no SDK is imported until a chat is likely),
   and after 50 sessions (one turn each).
4. The first turn of a daemon sent right after initialize (a new session, then the
   message: it may wait for the engine and the SDK import that the new session
   started) against the warmed turns' p50 of the same run.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
from bench_support import REPO, at_least, machine
from lean_client import LeanClient
from lsprotocol import types
from pytest_lsp import client_capabilities

from switchman.server import methods
from tests.support.lsp import SERVER_COMMAND, SwitchmanClient, server_env


@contextlib.contextmanager
def fake_provider(folder: Path) -> Iterator[str]:
    """The fake provider in a separate process; yields its base URL."""
    port_file = folder / "port"
    process = subprocess.Popen([sys.executable, "-m", "tests.support.fake_provider", "--port",
                                "0", "--port-file", str(port_file)], cwd=REPO,  # finds tests/
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


BARE_PYGLS = ("from pygls.lsp.server import LanguageServer; "
              "LanguageServer('bare', '1').start_io()")
IDLE_SECONDS = 3.0
WARM_TURNS = 5
"""Turns through the daemon before the timed ones (each in a new session)."""
MEMORY_SESSIONS = 50
"""Sessions (a turn each) after which the daemon's memory is measured."""


def settle_client() -> None:
    """Collect this process's garbage and freeze the survivors, before a timed part.

    The benchmark keeps every notification of the run and the SDK's objects. Left to
    itself, its collector ran full collections inside samples: in ``bench_load.py`` one
    of 138 ms (seen with ``gc.callbacks``) just as the twenty chats started, while the
    first edit's diagnostics waited unread in its pipe. That was the benchmark's pause,
    not the daemon's.
    """
    gc.collect()
    gc.freeze()


def summary(samples: list[float]) -> tuple[float, float]:
    """p50 and p99 in milliseconds."""
    ordered = sorted(samples)
    return statistics.median(ordered) * 1e3, ordered[min(len(ordered) - 1,
                                                          int(len(ordered) * 0.99))] * 1e3


async def sdk_direct(client: anthropic.AsyncAnthropic) -> float:
    """First-text latency of one call made with the SDK directly."""
    start = time.perf_counter()
    elapsed: float | None = None
    async with client.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=[
            {"role": "user", "content": "hi"}]) as stream:
        async for event in stream:
            if event.type == "text" and elapsed is None:
                elapsed = time.perf_counter() - start
    assert elapsed is not None
    return elapsed


def daemon_request(base_url: str) -> dict[str, Any]:
    """The body of the last request the fake provider received (the daemon's last turn)."""
    with urllib.request.urlopen(f"{base_url}/_fake/requests") as response:
        logged = json.load(response)["requests"]
    return dict(logged[-1]["body"])


async def sdk_same_request(client: anthropic.AsyncAnthropic, body: dict[str, Any],
                           run: int) -> float:
    """First-text latency of the daemon's request (``body``), made with the SDK directly;
    only the message differs (``hi {run}``, as the daemon's turn sends it)."""
    arguments = {k: v for k, v in body.items() if k not in ("stream", "messages")}
    message: Any = {"role": "user", "content": [{"type": "text", "text": f"hi {run}"}]}
    start = time.perf_counter()
    elapsed: float | None = None
    async with client.messages.stream(messages=[message], **arguments) as stream:
        async for event in stream:
            if event.type == "text" and elapsed is None:
                elapsed = time.perf_counter() - start
    assert elapsed is not None
    return elapsed


async def spawn_initialize(command: list[str], env: dict[str, str], workspace: Path) -> float:
    """Seconds from spawning ``command`` to its ``initialize`` result; then shuts it down."""
    client = SwitchmanClient()
    start = time.perf_counter()
    await client.start_io(*command, env=env)
    await client.initialize_session(types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="w")]))
    elapsed = time.perf_counter() - start
    await client.shutdown_session()
    await client.stop()
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


def cpu_seconds(pid: int) -> float:
    """CPU time (user + system) a process has used so far, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def descendants(pid: int) -> list[int]:
    """Every process started by ``pid``, and theirs (the check process, its tracker)."""
    parents: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def tree_rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and every process it started, in MiB."""
    return sum(rss_mb(p) for p in [pid, *descendants(pid)])


async def through_lean_client(client: LeanClient, workspace: Path, run: int) -> float:
    """:func:`through_daemon` with the lean client."""
    await client.request(methods.NEW_SESSION, {"workspace": workspace.as_uri()})
    seen = len(client.received[methods.CHAT_DELTA])
    start = time.perf_counter()
    answer = client.send_request(methods.CHAT, {"workspace": workspace.as_uri(),
                                                "message": f"hi {run}"})
    await client.wait_until(lambda: len(client.received[methods.CHAT_DELTA]) > seen)
    elapsed = time.perf_counter() - start
    await answer
    return elapsed


async def start_lean_client(env: dict[str, str], data: Path, workspace: Path) -> LeanClient:
    """A daemon with its own data folder, driven by the lean client."""
    lean = LeanClient()
    await lean.start(SERVER_COMMAND, {**env, "SWITCHMAN_DATA_DIR": str(data)})
    await lean.initialize({  # as an editor opening ``workspace``
        "processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {},
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": "w"}]})
    return lean


async def first_tokens(sdk: anthropic.AsyncAnthropic, client: SwitchmanClient,
                       workspace: Path, body: dict[str, Any], runs: int) -> tuple[
        list[float], list[float], list[float], float, tuple[float, float]]:
    """Time to first text of ``runs`` turns through the daemon, each after one call with
    the SDK directly and one with the SDK sending the daemon's own request (``body``);
    the daemon's CPU per turn (ms); its memory (daemon, with children) after 50 sessions."""
    pid = client._server.pid  # type: ignore[union-attr]
    await sdk_same_request(sdk, body, 0)  # warm
    direct, same, daemon = [], [], []
    memory = (float("nan"), float("nan"))
    cpu_before = cpu_seconds(pid)
    with collector_paused():
        for run in range(runs):  # interleaved, so machine noise hits all three alike
            direct.append(await sdk_direct(sdk))
            same.append(await sdk_same_request(sdk, body, run))
            daemon.append(await through_daemon(client, workspace, run))
            if run + WARM_TURNS == MEMORY_SESSIONS:
                memory = (rss_mb(pid), tree_rss_mb(pid))
    return direct, same, daemon, (cpu_seconds(pid) - cpu_before) / runs * 1e3, memory


async def lean_first_tokens(sdk: anthropic.AsyncAnthropic, lean: LeanClient, workspace: Path,
                            body: dict[str, Any], runs: int) -> tuple[list[float], list[float]]:
    """Time to first text of ``runs`` turns through a daemon driven by the lean client (the
    only daemon running), each after the same two SDK calls as in :func:`first_tokens`, in
    the same order (the reference is the second, sending the same request)."""
    for run in range(5):  # warm up: its SDK import, connection, caches
        await through_lean_client(lean, workspace, run)
    same, leanly = [], []
    with collector_paused():
        for run in range(runs):
            await sdk_direct(sdk)
            same.append(await sdk_same_request(sdk, body, run))
            leanly.append(await through_lean_client(lean, workspace, run))
    return same, leanly


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No collection of the benchmark's own inside a sample: collected and frozen once
    before, then paused. (Collecting before each sample instead leaves the next sample's
    caches cold, which only the SDK's path, all in this process, would pay.)"""
    settle_client()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def lean_row(same: list[float], leanly: list[float]) -> str:
    """The table row of the turns driven by the lean client, against the same request."""
    q50, q99 = summary(same)
    l50, l99 = summary(leanly)
    m50, m99 = summary([b - a for a, b in zip(same, leanly, strict=True)])
    return (f"| the same, the daemon driven by a lean client (frames and `json` only, as an "
            f"editor) | {l50:.2f} / {l99:.2f} ms | anthropic SDK directly, same request, "
            f"interleaved: {q50:.2f} / {q99:.2f} ms | added (paired): {m50:.2f} / {m99:.2f} "
            "ms | ≤ 1 ms / ≤ 3 ms |")


def memory_rows(runs: int, initialize: float, idle: tuple[float, float],
                after: tuple[float, float]) -> str:
    """The table rows of the daemon's resident memory (MiB): at initialize, idle (the daemon,
    with its children) and after ``MEMORY_SESSIONS`` sessions (the same), which a run of
    fewer turns does not reach: said so, rather than printed as "nan MiB"."""
    reached = runs + WARM_TURNS >= MEMORY_SESSIONS
    unmeasured = f"not measured (--runs {MEMORY_SESSIONS - WARM_TURNS} or more)"
    alone = f"{after[0]:.1f} MiB" if reached else unmeasured
    tree = f"{after[1]:.1f} MiB" if reached else unmeasured
    grown = f"{after[0] - initialize:+.1f} MiB" if reached else "—"
    return (f"| resident memory, idle {IDLE_SECONDS:.0f} s after initialize, keys set | "
            f"{idle[0]:.1f} MiB | at initialize: {initialize:.1f} MiB | "
            f"{idle[0] - initialize:+.1f} MiB (the engine) | ≤ 60 MB |\n"
            f"| resident memory after {MEMORY_SESSIONS} sessions (a turn each) | {alone} | at "
            f"initialize: {initialize:.1f} MiB | {grown} | ≤ 120 MB |\n"
            f"| the same with the daemon's child processes (config check process): idle / "
            f"after {MEMORY_SESSIONS} sessions | {idle[1]:.1f} MiB / {tree} | the daemon alone: "
            f"{idle[0]:.1f} MiB / {alone} | — | — |")


async def main(runs: int, spawns: int) -> None:
    """Run the benchmarks and print a Markdown table."""
    with tempfile.TemporaryDirectory() as tmp, fake_provider(Path(tmp)) as base_url:
        root = Path(tmp)
        for name in ("config", "data", "workspace"):
            (root / name).mkdir()
        (root / "config" / "models.yaml").write_text(
            f"providers:\n  anthropic: {{base_url: '{base_url}'}}\n")
        (root / "config" / "routing.yaml").write_text("global_default: sonnet\nrules: []\n")
        env = server_env(root / "config", root / "data",
                         {"ANTHROPIC_API_KEY": "bench", "OPENAI_API_KEY": "bench"})
        workspace = root / "workspace"

        bare, ours = [], []
        for _ in range(spawns):  # interleaved, so machine noise hits both alike
            bare.append(await spawn_initialize([sys.executable, "-c", BARE_PYGLS], env,
                                               workspace))
            ours.append(await spawn_initialize(SERVER_COMMAND, env, workspace))
        fresh, _ = await start_daemon(env, workspace)
        first_turn = await through_daemon(fresh, workspace, 0)
        await fresh.shutdown_session()
        await fresh.stop()
        client, _ = await start_daemon(env, workspace)
        pid = client._server.pid  # type: ignore[union-attr]
        initialize_rss = rss_mb(pid)
        await asyncio.sleep(IDLE_SECONDS)  # anything started in the background has run
        idle_rss, idle_tree = rss_mb(pid), tree_rss_mb(pid)
        sdk = anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, max_retries=0)
        for run in range(WARM_TURNS):  # warm up both paths: SDK imports, connections, caches
            await sdk_direct(sdk)
            await through_daemon(client, workspace, run)
        body = daemon_request(base_url)
        direct, same, daemon, cpu_per_turn, (sessions_rss, sessions_tree) = await first_tokens(
            sdk, client, workspace, body, runs)
        await client.shutdown_session()
        await client.stop()
        # Then the same with the lean client, its daemon alone (one daemon's trailing work,
        # such as its status 50 ms after a turn, must not land in the other's samples).
        lean = await start_lean_client(env, root / "lean", workspace)
        lean_same, leanly = await lean_first_tokens(sdk, lean, workspace, body, runs)
        await lean.stop()

    d50, d99 = summary(direct)
    s50, s99 = summary(daemon)
    a50, a99 = summary([b - a for a, b in zip(direct, daemon, strict=True)])
    q50, q99 = summary(same)
    r50, r99 = summary([b - a for a, b in zip(same, daemon, strict=True)])
    request_kb = len(json.dumps(body)) / 1024
    b50, _ = summary(bare)
    i50, _ = summary(ours)
    print(f"{machine()}\n")
    print("| benchmark | figure | reference (same run) | result | goal |")
    print("|---|---|---|---|---|")
    print(f"| time to first delta through switchman serve ({runs} turns): p50 / p99 | "
          f"{s50:.2f} / {s99:.2f} ms | anthropic SDK directly, interleaved: {d50:.2f} / "
          f"{d99:.2f} ms | added (paired): {a50:.2f} / {a99:.2f} ms | ≤ 1 ms / ≤ 3 ms |")
    print(f"| the same, against the daemon's own request ({request_kb:.1f} KB: its system "
          f"prompt and {len(body.get('tools', []))} tools) | {s50:.2f} / {s99:.2f} ms | "
          f"anthropic SDK directly, same request, interleaved: {q50:.2f} / {q99:.2f} ms | "
          f"added (paired): {r50:.2f} / {r99:.2f} ms | ≤ 1 ms / ≤ 3 ms |")
    print(lean_row(lean_same, leanly))
    print(f"| the daemon's CPU per turn (a new session, the message, its answer), from /proc "
          f"| {cpu_per_turn:.2f} ms | — (informational) | — | — |")
    print(f"| spawn → initialize result ({spawns} spawns): p50 | {i50:.0f} ms | bare pygls 2 "
          f"server: {b50:.0f} ms | {i50 / b50:.2f}x | ≤ 1.1x |")
    print(f"| first turn right after initialize: time to first delta | {first_turn * 1e3:.0f} ms"
          f" | warmed turns' p50: {s50:.2f} ms | {first_turn * 1e3 - s50:+.0f} ms | — |")
    print(memory_rows(runs, initialize_rss, (idle_rss, idle_tree),
                      (sessions_rss, sessions_tree)))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=at_least(1), default=100,
                        help=f"timed turns (default 100; the memory after {MEMORY_SESSIONS} "
                        f"sessions needs {MEMORY_SESSIONS - WARM_TURNS})")
    parser.add_argument("--spawns", type=at_least(1), default=10,
                        help="daemons and bare servers started (default 10)")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.runs, arguments.spawns))
