"""The daemon under load, each figure against a reference measured in the same run.

Run from the repository root: ``PYTHONPATH=. .venv/bin/python bench/bench_load.py``.
The fake provider runs in its own process and streams every reply as
``--chunks`` pieces ``--delay`` seconds apart, like a model.

1. Saving a 1,000-rule routing.yaml during a chat: the largest gap between two
   streamed deltas while the editor opens (then changes) the new text, the file
   is written and a routing preview reads the configuration, against the same
   stream with no save; five of each, alternating, so one stall of the shared
   machine does not decide the figure (the median and the worst are printed).
2. Twenty chats in five folders at once: the gaps between consecutive deltas of
   every stream through ``switchman serve``, against the ``anthropic`` SDK
   streaming the same twenty replies in one process. The added p99 is what the
   daemon adds.
3. routing.yaml diagnostics while those twenty stream (edits start with the
   chats), against the same edits with no chat running.
4. Only with ``--typing-only``, which runs this part alone (parts 1-3 are the default run):
   typing in a code file the editor shares (a 1,000-line Python file, ``--typing-lines``;
   one ``didChange`` per keystroke every ``--keystroke`` seconds): the p99 delta gap of a
   stream while typing, against the same stream without typing, alternating; and the
   daemon's time per keystroke (``--keystrokes`` changes sent at once, then a request
   answered after them, less that request alone).

An option of a part that is not run is refused with the usage message, not ignored: part
4's (``--typing-rounds``, ``--keystroke``, ``--keystrokes``, ``--typing-lines``) without
``--typing-only``, parts 1-3's (``--edits``, ``--saves``) with it.

Every figure is taken by this process, which also keeps every notification of
the run and the SDK's objects: before each timed part it collects its own
garbage and freezes what is left (:func:`settle_client`), so that a full
collection of the benchmark itself does not land inside a sample.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import anthropic
from bench_daemon import fake_provider, settle_client, start_daemon
from bench_routing import mixed_rule, routing_file, three_thousand_lines
from bench_support import at_least, between, machine
from lsprotocol import types

from switchman.server import methods
from tests.support.lsp import SwitchmanClient, server_env

FOLDERS = 5
STREAMS = 20
TYPING_MIN_LINES = 21
"""Keystrokes land between the file's 10th line and its 10th from the end."""


def script(base_url: str, replies: int, chunks: int, delay: float) -> None:
    """Queue ``replies`` streamed replies on the fake provider."""
    step = {"kind": "text", "chunks": [f"w{i} " for i in range(chunks)], "chunk_delay": delay}
    request = urllib.request.Request(f"{base_url}/_fake/script", method="POST",
                                     data=json.dumps([step] * replies).encode(),
                                     headers={"Content-Type": "application/json"})
    urllib.request.urlopen(request, timeout=10).read()




def gaps(times: list[float]) -> list[float]:
    """Seconds between consecutive arrivals."""
    return [b - a for a, b in itertools.pairwise(times)]


def p99(samples: list[float]) -> float:
    """The 99th percentile, in milliseconds."""
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1e3


def on_notification(client: SwitchmanClient, method: str, handler: Any) -> None:
    """Also call ``handler(params)`` for every recorded ``method`` notification."""
    record = client.record

    def recording(name: str, params: Any) -> None:
        if name == method:
            handler(params)
        record(name, params)

    client.record = recording  # type: ignore[assignment]


class Deltas:
    """Arrival times of ``switchman/chatDelta`` notifications, per turn."""

    def __init__(self, client: SwitchmanClient) -> None:
        self.times: dict[str, list[float]] = {}
        on_notification(client, methods.CHAT_DELTA, self._arrived)

    def _arrived(self, params: Any) -> None:
        self.times.setdefault(params["turn_id"], []).append(time.perf_counter())


async def chat(client: SwitchmanClient, workspace: Path, session: str | None = None) -> Any:
    """One chat turn; returns its result."""
    params: dict[str, Any] = {"workspace": workspace.as_uri(), "message": "stream please"}
    if session is not None:
        params["session_id"] = session
    request = client.protocol.send_request_async(methods.CHAT, params)  # type: ignore[no-untyped-call]
    return await asyncio.wait_for(request, 60)


async def save_during_stream(client: SwitchmanClient, deltas: Deltas, config: Path,
                             workspace: Path, base_url: str, chunks: int, delay: float,
                             rounds: int) -> tuple[list[float], list[float]]:
    """Largest delta gap (ms) of streams without and with a save of a 1,000-rule file.

    The two alternate, ``rounds`` times each, so that both see the same machine; each
    save is a new text (its rules renamed), so each is checked in full, and the first
    one also opens the document in the editor.
    """
    routing = config / "routing.yaml"
    uri = routing.as_uri()
    largest: dict[bool, list[float]] = {False: [], True: []}
    for round_ in range(rounds):
        for save in (False, True):
            script(base_url, 1, chunks, delay)
            before = len(deltas.times)
            turn = asyncio.ensure_future(chat(client, workspace))
            await wait_for(lambda count=before: len(deltas.times) > count and
                           len(list(deltas.times.values())[-1]) >= 10)
            if save:
                text = routing_file(1000, mixed_rule).replace(
                    "global_default: sonnet", "global_default: anthropic:claude-sonnet-4-6"
                ).replace("name: rule ", f"name: r{round_} rule ")
                if round_ == 0:
                    client.text_document_did_open(types.DidOpenTextDocumentParams(
                        types.TextDocumentItem(uri=uri, language_id="yaml", version=1,
                                               text=text)))
                else:
                    client.text_document_did_change(types.DidChangeTextDocumentParams(
                        types.VersionedTextDocumentIdentifier(uri=uri, version=round_ + 1),
                        [types.TextDocumentContentChangeWholeDocument(text=text)]))
                routing.write_text(text)
                client.text_document_did_save(types.DidSaveTextDocumentParams(
                    types.TextDocumentIdentifier(uri=uri)))
                await client.protocol.send_request_async(  # type: ignore[no-untyped-call]
                    methods.PREVIEW, {"workspace": workspace.as_uri(), "message": "deploy"})
            result = await turn
            largest[save].append(max(gaps(deltas.times[result["turn_id"]])) * 1e3)
    return largest[False], largest[True]


def code_file(lines: int) -> str:
    """A Python file of ``lines`` lines of ordinary length (about 40 KB for 1,000)."""
    body = ["def handler_{n}(request, user):", "    value = compute(request.args, user.id)",
            "    if value is None:", "        return respond(404, 'missing')",
            "    return respond(200, value)  # done", ""]
    return "\n".join(body[i % len(body)].format(n=i) for i in range(lines)) + "\n"


class Typist:
    """Keystrokes into one shared code file: a character typed, then deleted."""

    def __init__(self, client: SwitchmanClient, path: Path, lines: int) -> None:
        self.client, self.uri, self.version, self.lines = client, path.as_uri(), 1, lines
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(code_file(lines))
        client.text_document_did_open(types.DidOpenTextDocumentParams(types.TextDocumentItem(
            uri=self.uri, language_id="python", version=1, text=code_file(lines))))

    def key(self) -> None:
        """Send one keystroke's ``didChange`` (at a line that moves through the file)."""
        count = self.version - 1
        line = 10 + (count // 2 * 13) % (self.lines - 20)
        inserting = count % 2 == 0
        self.version += 1
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
            [types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, 8), types.Position(line, 8 if inserting
                                                                            else 9)),
                text="x" if inserting else "")]))


async def typing_during_stream(client: SwitchmanClient, deltas: Deltas, typist: Typist,
                               workspace: Path, base_url: str, chunks: int, delay: float,
                               rounds: int, interval: float) -> tuple[list[float], list[float]]:
    """p99 delta gap (ms) of streams without and with typing, alternating ``rounds`` times."""
    found: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(rounds):
        for typing in (False, True):
            script(base_url, 1, chunks, delay)
            turn = asyncio.ensure_future(chat(client, workspace))
            while typing and not turn.done():
                typist.key()
                await asyncio.sleep(interval)
            result = await turn
            found[typing].append(p99(gaps(deltas.times[result["turn_id"]])))
    return found[False], found[True]


async def keystroke_cost(client: SwitchmanClient, typist: Typist, workspace: Path,
                         count: int) -> tuple[float, float]:
    """Milliseconds of the daemon's time per keystroke: ``count`` sent at once, then a
    request (answered after them, in order), less the same request alone (the reference,
    also returned, in milliseconds)."""
    params = {"workspace": workspace.as_uri()}
    start = time.perf_counter()
    await client.request(methods.TRUST, params)
    alone = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(count):
        typist.key()
    await client.request(methods.TRUST, params)
    return (time.perf_counter() - start - alone) / count * 1e3, alone * 1e3


async def typing_only(chunks: int, delay: float, rounds: int, interval: float,
                      keystrokes: int, lines: int) -> None:
    """Part 4 alone, printed as one table."""
    with tempfile.TemporaryDirectory() as tmp, fake_provider(Path(tmp)) as base_url:
        root = Path(tmp)
        config, data, workspace = root / "config", root / "data", root / "project"
        for folder in (config, data, workspace):
            folder.mkdir()
        (config / "models.yaml").write_text(
            f"providers:\n  anthropic: {{base_url: '{base_url}'}}\n")
        (config / "routing.yaml").write_text(
            "global_default: anthropic:claude-sonnet-4-6\nrules: []\n")
        env = server_env(config, data, {"ANTHROPIC_API_KEY": "bench"})
        client, _ = await start_daemon(env, workspace)
        deltas = Deltas(client)
        script(base_url, 1, 5, 0)
        await chat(client, workspace)  # warm up: SDK import, connection
        typist = Typist(client, workspace / "src" / "app.py", lines)
        settle_client()
        costs = [await keystroke_cost(client, typist, workspace, keystrokes) for _ in range(5)]
        settle_client()
        quiet, typing = await typing_during_stream(client, deltas, typist, workspace, base_url,
                                                   chunks, delay, rounds, interval)
        await client.shutdown_session()
        await client.stop()
    print(f"{machine()}; streams of {chunks} deltas {delay * 1e3:.0f} ms "
          f"apart; a keystroke every {interval * 1e3:.0f} ms into a {lines:,}-line file "
          f"({len(code_file(lines).encode()) / 1024:,.0f} KB)\n")
    print("| benchmark | figure | reference (same run) | result |")
    print("|---|---|---|---|")
    print(f"| typing in a shared code file during a stream: p99 delta gap, median of {rounds} "
          f"(worst) | {statistics.median(typing):.1f} ({max(typing):.1f}) ms | no typing: "
          f"{statistics.median(quiet):.1f} ({max(quiet):.1f}) ms | "
          f"{statistics.median(typing) - statistics.median(quiet):+.1f} ms |")
    print(f"| daemon time per keystroke ({keystrokes} at once, then a request), median of 5 | "
          f"{statistics.median(c for c, _ in costs):.3f} ms | the request alone: "
          f"{statistics.median(a for _, a in costs):.3f} ms | (subtracted from the figure) |")


async def wait_for(check: Any, timeout: float = 30) -> None:
    """Poll ``check`` on the event loop until it holds (the client has no event for it)."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not met")
        await asyncio.sleep(0.001)


async def sdk_streams(base_url: str, chunks: int, delay: float) -> list[float]:
    """Delta gaps of twenty concurrent streams made with the SDK directly."""
    sdk = anthropic.AsyncAnthropic(api_key="bench", base_url=base_url, max_retries=0)
    script(base_url, STREAMS, chunks, delay)

    async def one() -> list[float]:
        times = []
        async with sdk.messages.stream(model="claude-sonnet-4-6", max_tokens=64, messages=[
                {"role": "user", "content": "stream please"}]) as stream:
            async for event in stream:
                if event.type == "text":
                    times.append(time.perf_counter())
        return gaps(times)

    results = await asyncio.gather(*(one() for _ in range(STREAMS)))
    await sdk.close()
    return [g for r in results for g in r]


class Edits:
    """didChange → publishDiagnostics latency on an open 3,000-line routing.yaml."""

    def __init__(self, client: SwitchmanClient, uri: str) -> None:
        self.client, self.uri, self.version = client, uri, 1
        self.arrived: dict[int, float] = {}
        self.event = asyncio.Event()
        on_notification(client, types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS, self._published)

    def _published(self, params: types.PublishDiagnosticsParams) -> None:
        if params.uri == self.uri and params.version is not None:
            self.arrived[params.version] = time.perf_counter()
            self.event.set()

    def open(self, text: str) -> Awaitable[float]:
        """Open the document; the result is the time its diagnostics took."""
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=self.uri, language_id="yaml", version=1, text=text)))
        return self._wait(1, time.perf_counter())

    async def run(self, count: int) -> list[float]:
        """Type a character into a rule and delete it again, ``count`` times."""
        samples = []
        for i in range(count):
            line = 10 + (i // 2 * 7) % 2900  # the delete lands where the insert did
            inserting = i % 2 == 0
            change = types.TextDocumentContentChangePartial(
                range=types.Range(types.Position(line, 4), types.Position(line, 4 if inserting
                                                                            else 5)),
                text="x" if inserting else "")
            self.version += 1
            start = time.perf_counter()
            self.client.text_document_did_change(types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=self.uri, version=self.version),
                [change]))
            samples.append(await self._wait(self.version, start))
        return samples

    async def _wait(self, version: int, start: float) -> float:
        while version not in self.arrived:
            self.event.clear()
            await asyncio.wait_for(self.event.wait(), 30)
        return self.arrived[version] - start


async def concurrent(client: SwitchmanClient, deltas: Deltas, folders: list[Path],
                     base_url: str, chunks: int, delay: float, edits: Edits,
                     count: int) -> tuple[list[float], list[float]]:
    """Twenty chats at once in five folders, with edits starting at the same moment."""
    sessions = []
    for i in range(STREAMS):
        folder = folders[i % FOLDERS]
        reply = await client.request(methods.NEW_SESSION, {"workspace": folder.as_uri()})
        sessions.append((folder, reply["session"]["id"]))
    script(base_url, STREAMS, chunks, delay)
    turns = [asyncio.ensure_future(chat(client, folder, session))
             for folder, session in sessions]
    diagnostics = await edits.run(count)
    results = await asyncio.gather(*turns)
    return [g for r in results for g in gaps(deltas.times[r["turn_id"]])], diagnostics


async def main(chunks: int, delay: float, count: int, saves: int) -> None:
    """Run the load benchmarks and print a Markdown table."""
    with tempfile.TemporaryDirectory() as tmp, fake_provider(Path(tmp)) as base_url:
        root = Path(tmp)
        config, data = root / "config", root / "data"
        folders = [root / f"folder{i}" for i in range(FOLDERS)]
        for folder in (config, data, *folders):
            folder.mkdir()
        (config / "models.yaml").write_text(
            f"providers:\n  anthropic: {{base_url: '{base_url}'}}\n")
        (config / "routing.yaml").write_text(
            "global_default: anthropic:claude-sonnet-4-6\nrules: []\n")
        env = server_env(config, data, {"ANTHROPIC_API_KEY": "bench",
                                        "SWITCHMAN_DIAGNOSTICS_DELAY_MS": "0"})
        client, _ = await start_daemon(env, folders[0])
        for folder in folders[1:]:
            client.workspace_did_change_workspace_folders(types.DidChangeWorkspaceFoldersParams(
                types.WorkspaceFoldersChangeEvent(
                    added=[types.WorkspaceFolder(uri=folder.as_uri(), name=folder.name)],
                    removed=[])))
        deltas = Deltas(client)
        script(base_url, 1, 5, 0)
        await chat(client, folders[0])  # warm up: SDK import, connection
        settle_client()
        quiet, saving = await save_during_stream(client, deltas, config, folders[0], base_url,
                                                 chunks, delay, saves)
        settle_client()
        sdk = await sdk_streams(base_url, chunks, delay)
        edits = Edits(client, (folders[1] / ".switchman" / "routing.yaml").as_uri())
        (folders[1] / ".switchman").mkdir()
        await edits.open(three_thousand_lines())
        settle_client()
        unloaded = await edits.run(count)
        settle_client()
        daemon, loaded = await concurrent(client, deltas, folders, base_url, chunks, delay,
                                          edits, count)
        await client.shutdown_session()
        await client.stop()

    print(f"{machine()}; streams of {chunks} deltas {delay * 1e3:.0f} ms apart\n")
    print("| benchmark | figure | reference (same run) | result | goal |")
    print("|---|---|---|---|---|")
    print(f"| saving a 1,000-rule routing.yaml during a stream: largest delta gap, median of "
          f"{saves} (worst) | {statistics.median(saving):.1f} ({max(saving):.1f}) ms | "
          f"no save: {statistics.median(quiet):.1f} ({max(quiet):.1f}) ms | "
          f"{statistics.median(saving) - statistics.median(quiet):+.1f} ms | ≤ 50 ms |")
    print(f"| per-delta gap, {STREAMS} streams in {FOLDERS} folders through the daemon: p99 | "
          f"{p99(daemon):.1f} ms | SDK, same {STREAMS} streams: {p99(sdk):.1f} ms | "
          f"{p99(daemon) - p99(sdk):+.1f} ms added | ≤ 10 ms added |")
    print(f"| didChange → diagnostics (3,000 lines) while they stream: p99 | "
          f"{p99(loaded):.1f} ms | no chats: {p99(unloaded):.1f} ms | "
          f"{p99(loaded) / p99(unloaded):.2f}x | ≤ 2x |")
    print(f"\n(medians: delta gap daemon {statistics.median(daemon) * 1e3:.1f} ms, SDK "
          f"{statistics.median(sdk) * 1e3:.1f} ms; diagnostics loaded "
          f"{statistics.median(loaded) * 1e3:.1f} ms, unloaded "
          f"{statistics.median(unloaded) * 1e3:.1f} ms)")


TYPING_OPTIONS = {"typing_rounds": 5, "keystroke": 0.025, "keystrokes": 2000,
                  "typing_lines": 1000}
"""Part 4's options and their defaults: only with ``--typing-only``."""
LOAD_OPTIONS = {"edits": 40, "saves": 5}
"""Parts 1-3's own options and their defaults: never with ``--typing-only``."""


def arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line; an option of the part that is not run is refused, not ignored."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--chunks", type=at_least(2), default=150,
                        help="deltas per streamed reply (default 150)")
    parser.add_argument("--delay", type=between(0, 10), default=0.012,
                        help="seconds between deltas (default 0.012)")
    parser.add_argument("--edits", type=at_least(1),
                        help="routing.yaml edits, idle and under load (default 40; not with "
                        "--typing-only)")
    parser.add_argument("--saves", type=at_least(1),
                        help="streams with a save, alternating with as many without (default "
                        "5; not with --typing-only)")
    parser.add_argument("--typing-only", action="store_true",
                        help="only part 4: typing in a shared code file (not run otherwise); "
                        "the four options below are refused without it")
    parser.add_argument("--typing-rounds", type=at_least(1),
                        help="with --typing-only: streams with typing, alternating with as "
                        "many without (default 5)")
    parser.add_argument("--keystroke", type=between(0, 10),
                        help="with --typing-only: seconds between keystrokes while a stream "
                        "runs (default 0.025)")
    parser.add_argument("--keystrokes", type=at_least(1),
                        help="with --typing-only: keystrokes sent at once to time the "
                        "daemon's work for each (default 2000)")
    parser.add_argument("--typing-lines", type=at_least(TYPING_MIN_LINES),
                        help="with --typing-only: lines of the code file typed into "
                        "(default 1000)")
    args = parser.parse_args(argv)
    unused = LOAD_OPTIONS if args.typing_only else TYPING_OPTIONS
    given = ", ".join("--" + name.replace("_", "-") for name in unused
                      if getattr(args, name) is not None)
    if given:
        parser.error(f"{given}: not with --typing-only (parts 1-3 are not run with it)"
                     if args.typing_only else
                     f"{given}: only with --typing-only (part 4, run alone)")
    for name, default in (TYPING_OPTIONS | LOAD_OPTIONS).items():
        if getattr(args, name) is None:
            setattr(args, name, default)
    return args


if __name__ == "__main__":
    options = arguments()
    if options.typing_only:
        asyncio.run(typing_only(options.chunks, options.delay, options.typing_rounds,
                                options.keystroke, options.keystrokes,
                                options.typing_lines))
    else:
        asyncio.run(main(options.chunks, options.delay, options.edits,
                         options.saves))
