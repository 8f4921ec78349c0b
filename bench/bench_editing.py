"""Editing benchmark: didChange -> publishDiagnostics on a 3,000-line routing.yaml.

Drives the real ``switchman serve`` over stdio (diagnostics delay set to 0 so
the debounce is excluded) and, in the same run, yaml-language-server (npm,
installed into bench/node_modules on first use) checking the same file
against the JSON Schema Switchman ships. Both get the identical sequence of
incremental edits: typing and deleting a character inside a rule, and adding
and removing a line above a rule. Each edit waits for its diagnostics before
the next one, so the figures are latencies, not throughput.

yaml-language-server waits a fixed 200 ms (``validationDelayMs``) before it
validates; that delay is subtracted from its figures, as Switchman's debounce
is excluded from its own.

Each server gets ``--warmup`` seconds after initialisation before the file is
opened, so the figures are steady-state typing latencies: the daemon imports
provider SDKs in a background thread at start-up (about 100,000 objects), and
edits made during that second compete with it for the GIL.

Run: ``.venv/bin/python bench/bench_editing.py`` (``--edits N``, ``--no-yaml-ls``).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_routing import three_thousand_lines  # the same file as the re-validation bench
from lean_client import LeanClient

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
SCHEMA = REPO / "engine" / "config" / "schemas" / "routing.schema.json"
YAML_LS_VERSION = "2.0.0"
YAML_LS = BENCH / "node_modules" / "yaml-language-server"
YAML_LS_DELAY_MS = 200.0  # out/src/yamlSettings.js: validationDelayMs (checked at run time)

WARMUP_SECONDS = 5.0

Edit = tuple[int, int, int, int, str]
"""Start line, start character, end line, end character, new text."""
DIAGNOSTICS = "textDocument/publishDiagnostics"


# -- the edits -------------------------------------------------------------------------------


def edit_script(text: str, pairs: int, seed: int = 7) -> list[Edit]:
    """Incremental edits, each a range and the text that replaces it.

    Each pair changes the text and changes it back, so the file stays the size and
    validity it started with: 80% type and delete a character inside a rule, 20% add
    and remove a comment line above a rule.
    """
    lines = text.split("\n")
    rules = [n for n, line in enumerate(lines) if "message_contains_any" in line]
    uses = [n for n, line in enumerate(lines) if line.startswith("    use:")]
    rng = random.Random(seed)
    script: list[Edit] = []
    for _ in range(pairs):
        if rng.random() < 0.8:
            line = rng.choice(rules)
            col = lines[line].index('", "')  # inside the first quoted item
            script += [(line, col, line, col, "q"), (line, col, line, col + 1, "")]
        else:
            line = rng.choice(uses)
            script += [(line, 0, line, 0, "    # a note\n"), (line, 0, line + 1, 0, "")]
    return script


async def start(command: list[str], env: dict[str, str],
                settings: dict[str, Any]) -> LeanClient:
    """A server started and initialised as an editor configured with ``settings`` would."""
    server = LeanClient(settings)
    await server.start(command, env)
    await server.initialize({
        "processId": os.getpid(), "rootUri": None, "workspaceFolders": None,
        "capabilities": {
            "workspace": {"configuration": True, "didChangeConfiguration": {}},
            "textDocument": {"synchronization": {"didSave": True},
                             "publishDiagnostics": {"versionSupport": True}},
            "general": {"positionEncodings": ["utf-16"]}}})
    server.notify("workspace/didChangeConfiguration", {"settings": settings})
    return server


async def measure(server: LeanClient, uri: str, text: str, script: list[Edit],
                  versions: bool, warmup: float) -> tuple[list[float], int]:
    """Open ``text`` and time each edit's diagnostics; return seconds and initial problems."""
    await asyncio.sleep(warmup)
    opened = server.expect(DIAGNOSTICS, lambda p: p["uri"] == uri)
    server.notify("textDocument/didOpen", {"textDocument": {
        "uri": uri, "languageId": "yaml", "version": 1, "text": text}})
    _, first = await asyncio.wait_for(opened, 60)
    samples = []
    for version, (sl, sc, el, ec, new_text) in enumerate(script, start=2):
        done = server.expect(DIAGNOSTICS, _diagnostics_of(uri, version if versions else None))
        start = time.perf_counter()
        server.notify("textDocument/didChange", {
            "textDocument": {"uri": uri, "version": version},
            "contentChanges": [{"range": {"start": {"line": sl, "character": sc},
                                          "end": {"line": el, "character": ec}},
                                "text": new_text}]})
        arrived, _ = await asyncio.wait_for(done, 60)
        samples.append(arrived - start)
    return samples, len(first["diagnostics"])


def _diagnostics_of(uri: str, version: int | None) -> Callable[[dict[str, Any]], bool]:
    """Matches the diagnostics of ``uri`` (of ``version``, when the server sends versions)."""
    return lambda params: params["uri"] == uri and (
        version is None or params.get("version") == version)


# -- the two servers --------------------------------------------------------------------------


async def run_switchman(folder: Path, text: str, script: list[Edit],
                        warmup: float) -> tuple[list[float], int]:
    """Switchman with the diagnostics delay at 0."""
    config = folder / "config"
    config.mkdir(parents=True)
    env = {**os.environ, "SWITCHMAN_CONFIG_DIR": str(config),
           "SWITCHMAN_DATA_DIR": str(folder / "data"), "SWITCHMAN_DIAGNOSTICS_DELAY_MS": "0",
           "ANTHROPIC_API_KEY": "bench-not-a-key"}
    server = await start([sys.executable, "-m", "switchman.server.cli", "serve"],
                         env, {})
    try:
        return await measure(server, (config / "routing.yaml").as_uri(), text, script, True,
                             warmup)
    finally:
        await server.stop()


async def run_yaml_ls(folder: Path, text: str, script: list[Edit],
                      warmup: float) -> tuple[list[float], int]:
    """yaml-language-server, validating against the shipped JSON Schema."""
    settings = {"yaml": {"validate": True, "hover": True, "completion": True,
                         "format": {"enable": False}, "schemas": {}}}
    server = await start(["node", str(YAML_LS / "bin" / "yaml-language-server"), "--stdio"],
                         dict(os.environ), settings)
    try:
        samples, initial = await measure(server, (folder / "routing.yaml").as_uri(), text,
                                         script, False, warmup)
    finally:
        await server.stop()
    return [s - YAML_LS_DELAY_MS / 1000 for s in samples], initial


def install_yaml_ls() -> None:
    """Install the pinned yaml-language-server into bench/node_modules (once)."""
    if not YAML_LS.exists():
        subprocess.run(["npm", "install", "--prefix", str(BENCH), "--no-save",
                        "--no-package-lock", "--no-audit", "--no-fund",
                        f"yaml-language-server@{YAML_LS_VERSION}"], check=True)
    settings = (YAML_LS / "out" / "src" / "yamlSettings.js").read_text("utf-8")
    found = re.search(r"validationDelayMs = (\d+)", settings)
    if found is None or float(found.group(1)) != YAML_LS_DELAY_MS:
        raise SystemExit("yaml-language-server's validation delay changed; update the bench")


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3, ordered[-1] * 1e3


async def main() -> None:
    """Run both servers on the same edits and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=int, default=500, help="edits per server (even)")
    parser.add_argument("--no-yaml-ls", action="store_true", help="skip yaml-language-server")
    parser.add_argument("--warmup", type=float, default=WARMUP_SECONDS,
                        help="seconds between a server's start and opening the file")
    args = parser.parse_args()
    with_yaml_ls = not args.no_yaml_ls and shutil.which("node") and shutil.which("npm")
    if with_yaml_ls:
        install_yaml_ls()
    text = three_thousand_lines(f"# yaml-language-server: $schema={SCHEMA.as_uri()}")
    script = edit_script(text, args.edits // 2)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ours, problems = await run_switchman(Path(tmp) / "switchman", text, script, args.warmup)
        rows.append(("switchman serve (diagnostics delay 0)", ours, problems))
        if with_yaml_ls:
            Path(tmp, "yls").mkdir()
            theirs, problems = await run_yaml_ls(Path(tmp) / "yls", text, script, args.warmup)
            rows.append((f"yaml-language-server {YAML_LS_VERSION} (minus its 200 ms delay)",
                         theirs, problems))
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
          f"{text.count(chr(10))}-line routing.yaml, {len(script)} edits")
    print("| server | edits | problems on open | p50 ms | p99 ms | max ms |")
    print("|---|---|---|---|---|---|")
    for name, samples, found in rows:
        p50, p99, worst = percentiles(samples)
        print(f"| {name} | {len(samples)} | {found} | {p50:.1f} | {p99:.1f} | {worst:.1f} |")
    if len(rows) == 2:
        (_, ours, _), (_, theirs, _) = rows
        (ours50, ours99, _), (their50, their99, _) = percentiles(ours), percentiles(theirs)
        print(f"\nswitchman / yaml-language-server (same edits, same run): p50 "
              f"{ours50 / their50:.2f}x, p99 {ours99 / their99:.2f}x (goal ≤ 0.3x)")


if __name__ == "__main__":
    asyncio.run(main())
