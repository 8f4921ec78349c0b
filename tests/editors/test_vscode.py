"""The VS Code extension: its unit tests, and an end-to-end run in a real VS Code.

The end-to-end run (``editor-clients/vscode/test/e2e/run.mjs``) installs the packaged
``.vsix`` into code-server 4.100.3, drives it with Playwright and Debian's chromium, and
talks to the real daemon and the fake provider (both started inside the run, so that they
share its loopback-only network namespace when ``unshare -n`` is available). Screenshots and
logs are kept in ``test-artifacts/vscode/``. ``scripts/setup-e2e.sh`` installs what the runs
need (idempotent; a few seconds once done) and names any missing system package.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "editor-clients" / "vscode"
SETUP = EXTENSION / "scripts" / "setup-e2e.sh"
E2E_SCRIPT = EXTENSION / "test" / "e2e" / "run.mjs"
ARTIFACTS = REPO / "test-artifacts" / "vscode"
NODE_HINT = "Node.js 20 with npm (e.g. the nodejs package of the NodeSource 20.x repository)"
SETUP_TIMEOUT = 900.0
UNIT_TIMEOUT = 300.0
E2E_TIMEOUT = 600.0
DROPPED_ENV = ("ANTHROPIC_", "OPENAI_", "SWITCHMAN_", "XDG_", "VSCODE_", "ELECTRON_")


def run(command: list[str], timeout: float, env: dict[str, str] | None = None) -> (
        subprocess.CompletedProcess[str]):
    """Run a command in the extension folder; fail the test with its output if it times out."""
    try:
        return subprocess.run(command, cwd=EXTENSION, env=env, text=True, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout,
                              check=False)
    except subprocess.TimeoutExpired as expired:
        output = expired.output.decode("utf-8", "replace") if isinstance(
            expired.output, bytes) else expired.output or ""
        pytest.fail(f"{' '.join(command)} did not finish within {timeout:.0f} s\n{output}",
                    pytrace=False)


def require_node() -> None:
    """Fail with what to install when node or npm is missing."""
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{' and '.join(missing)} not found: the VS Code extension needs "
                    f"{NODE_HINT}.", pytrace=False)


def setup(*flags: str) -> None:
    """Run scripts/setup-e2e.sh (idempotent); its output says what is missing if it fails."""
    require_node()
    done = run(["bash", str(SETUP), *flags], SETUP_TIMEOUT)
    if done.returncode != 0:
        pytest.fail(f"scripts/setup-e2e.sh {' '.join(flags)} exited with {done.returncode}:\n"
                    f"{done.stdout}", pytrace=False)
    print(done.stdout)


def isolated_env() -> dict[str, str]:
    """This environment without keys or Switchman/VS Code settings from the machine running it."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(DROPPED_ENV) and not k.endswith("_API_KEY")}
    env.update(SWITCHMAN_REPO=str(REPO), SWITCHMAN_PYTHON=sys.executable,
               SWITCHMAN_BIN=str(Path(sys.executable).parent / "switchman"),
               E2E_ARTIFACTS=str(ARTIFACTS))
    return env


def network_isolation() -> list[str]:
    """A prefix running a command in a loopback-only network namespace, when this machine can."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return []
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        return []
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']


def test_unit_tests_pass() -> None:
    """`npm test`: strict type check, then node's test runner over the pure modules."""
    setup("--deps-only")
    done = run(["npm", "test", "--silent"], UNIT_TIMEOUT)
    assert done.returncode == 0, f"npm test exited with {done.returncode}:\n{done.stdout}"
    print(done.stdout)


def test_extension_in_code_server() -> None:
    """A user's session in VS Code: squiggle, streamed chat, model picked in the status bar."""
    setup()
    daemon = Path(sys.executable).parent / "switchman"
    if not daemon.exists():
        pytest.fail(f"{daemon} is missing: install Switchman into this Python first "
                    "(make test does)", pytrace=False)
    prefix = network_isolation()
    if not prefix:
        print("unshare -n is not available here: running without a private network namespace "
              "(chromium still resolves no host names)")
    done = run([*prefix, "node", str(E2E_SCRIPT)], E2E_TIMEOUT, env=isolated_env())
    assert done.returncode == 0, (
        f"the end-to-end run exited with {done.returncode}; screenshots and logs are in "
        f"{ARTIFACTS}\n{done.stdout}")
    print(done.stdout)
