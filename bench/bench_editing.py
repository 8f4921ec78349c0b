"""Editing benchmark: didChange -> publishDiagnostics on a 3,000-line routing.yaml.

Drives the real ``switchman serve`` over stdio (diagnostics delay set to 0 so
the debounce is excluded) and, in the same run, yaml-language-server checking
the same file against the JSON Schema Switchman ships. The reference is an npm
package, installed once into bench/node_modules with ``--install-yaml-ls`` (the
one step that needs the network); without it, the run says so and prints
Switchman's figures alone. Both get the identical sequence of
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

Run: ``.venv/bin/python bench/bench_editing.py`` (``--edits N``, ``--no-yaml-ls``,
``--yaml-ls FOLDER``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
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
from bench_support import at_least, between, machine
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


async def run_yaml_ls(installed: Path, folder: Path, text: str, script: list[Edit],
                      warmup: float) -> tuple[list[float], int]:
    """yaml-language-server (installed in ``installed``), validating against the shipped
    JSON Schema."""
    settings = {"yaml": {"validate": True, "hover": True, "completion": True,
                         "format": {"enable": False}, "schemas": {}}}
    server = await start(["node", str(installed / "bin" / "yaml-language-server"), "--stdio"],
                         dict(os.environ), settings)
    try:
        samples, initial = await measure(server, (folder / "routing.yaml").as_uri(), text,
                                         script, False, warmup)
    finally:
        await server.stop()
    return [s - YAML_LS_DELAY_MS / 1000 for s in samples], initial


def yaml_ls_missing(folder: Path) -> str | None:
    """Why yaml-language-server in ``folder`` cannot be this run's reference (None: it can)."""
    if shutil.which("node") is None:
        return "node is not installed (yaml-language-server runs on Node.js)"
    if not (folder / "bin" / "yaml-language-server").is_file():
        return (f"yaml-language-server is not installed in {folder} "
                "(`.venv/bin/python bench/bench_editing.py --install-yaml-ls` installs version "
                f"{YAML_LS_VERSION} into bench/node_modules: npm, the one step that needs the "
                "network)")
    return None


def install_yaml_ls() -> None:
    """Install the pinned yaml-language-server into bench/node_modules (with npm)."""
    if shutil.which("npm") is None:
        raise SystemExit("npm is not installed: yaml-language-server is an npm package")
    done = subprocess.run(["npm", "install", "--prefix", str(BENCH), "--no-save",
                           "--no-package-lock", "--no-audit", "--no-fund",
                           f"yaml-language-server@{YAML_LS_VERSION}"], check=False)
    if done.returncode:
        raise SystemExit(f"npm could not install yaml-language-server@{YAML_LS_VERSION} "
                         f"(exit status {done.returncode}; it needs the network)")
    print(f"installed yaml-language-server {YAML_LS_VERSION} into {YAML_LS}")


def yaml_ls_version(folder: Path) -> str:
    """The installed yaml-language-server's version; exits if its validation delay, which is
    subtracted from its figures, is not the one this benchmark knows."""
    settings = folder / "out" / "src" / "yamlSettings.js"
    found = re.search(r"validationDelayMs = (\d+)",
                      settings.read_text("utf-8") if settings.is_file() else "")
    if found is None or float(found.group(1)) != YAML_LS_DELAY_MS:
        raise SystemExit(f"{settings}: no validationDelayMs = {YAML_LS_DELAY_MS:.0f} (another "
                         f"version of yaml-language-server?); this benchmark knows "
                         f"{YAML_LS_VERSION}")
    package = json.loads((folder / "package.json").read_text("utf-8"))
    return str(package.get("version", "?"))


def percentiles(samples: list[float]) -> tuple[float, float, float]:
    """p50, p99 and max in milliseconds."""
    ordered = sorted(samples)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return statistics.median(ordered) * 1e3, p99 * 1e3, ordered[-1] * 1e3


async def main() -> None:
    """Run both servers on the same edits and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--edits", type=at_least(2), default=500,
                        help="edits per server (even; default 500)")
    parser.add_argument("--no-yaml-ls", action="store_true", help="skip yaml-language-server")
    parser.add_argument("--yaml-ls", type=Path, default=YAML_LS, metavar="FOLDER",
                        help="where yaml-language-server is installed (default: "
                        "bench/node_modules/yaml-language-server)")
    parser.add_argument("--install-yaml-ls", action="store_true",
                        help=f"install yaml-language-server {YAML_LS_VERSION} into "
                        "bench/node_modules with npm (needs the network), then exit")
    parser.add_argument("--warmup", type=between(0, math.inf), default=WARMUP_SECONDS,
                        help="seconds between a server's start and opening the file "
                        f"(default {WARMUP_SECONDS:g})")
    args = parser.parse_args()
    if args.install_yaml_ls:
        install_yaml_ls()
        return
    # Nothing is downloaded here: without the reference, Switchman's figures are printed alone
    missing = "--no-yaml-ls" if args.no_yaml_ls else yaml_ls_missing(args.yaml_ls)
    version = yaml_ls_version(args.yaml_ls) if missing is None else ""
    text = three_thousand_lines(f"# yaml-language-server: $schema={SCHEMA.as_uri()}")
    script = edit_script(text, args.edits // 2)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        ours, problems = await run_switchman(Path(tmp) / "switchman", text, script, args.warmup)
        rows.append(("switchman serve (diagnostics delay 0)", ours, problems))
        if missing is None:
            Path(tmp, "yls").mkdir()
            theirs, problems = await run_yaml_ls(args.yaml_ls, Path(tmp) / "yls", text, script,
                                                 args.warmup)
            rows.append((f"yaml-language-server {version} (minus its 200 ms delay)",
                         theirs, problems))
    print(f"{machine()}, {text.count(chr(10))}-line routing.yaml, {len(script)} edits")
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
    else:
        print(f"\nno reference in this run: {missing}.\nThe figures above are Switchman's "
              "alone (informational; no ratio).")


if __name__ == "__main__":
    asyncio.run(main())
