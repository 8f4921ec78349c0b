"""scripts/system-deps.sh: what `make test` installs (or names) before the editor tests run."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from tests.conftest import EditorsTogether

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "system-deps.sh"


def run_script(path: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run the script with only ``path`` on PATH (so the tools it looks for are absent)."""
    return subprocess.run(["/bin/bash", str(SCRIPT), *args], env={"PATH": path}, text=True,
                          capture_output=True, check=False)


def test_missing_packages_are_named_with_the_command_that_installs_them(tmp_path: Path) -> None:
    done = run_script(str(tmp_path), "--check")
    assert done.returncode == 3
    assert "not installed: " in done.stderr
    for package in ("ripgrep", "libkrb5-dev", "build-essential", "iproute2", "util-linux"):
        assert package in done.stderr
    assert "apt-get install -y --no-install-recommends " in done.stderr


def test_the_makefile_test_target_runs_it_first() -> None:
    makefile = (SCRIPT.parents[1] / "Makefile").read_text("utf-8")
    assert "test: system-deps lint typecheck pytest" in makefile
    assert "bash scripts/system-deps.sh" in makefile
    ci = (SCRIPT.parents[1] / ".ci" / "run").read_text("utf-8")
    assert "apt-get" not in ci  # one list of packages, in the script



def test_the_editor_tests_run_one_at_a_time_beside_the_rest() -> None:
    """`make pytest` runs two pytest-xdist workers with ``--dist loadgroup``, whose scheduler
    (tests/conftest.py) keeps every editor test in one group: on one worker, one at a time."""
    makefile = (SCRIPT.parents[1] / "Makefile").read_text("utf-8")
    assert "-m pytest -q -n $(PYTEST_WORKERS) --dist loadgroup" in makefile
    project = tomllib.loads((SCRIPT.parents[1] / "pyproject.toml").read_text("utf-8"))
    dev = project["project"]["optional-dependencies"]["dev"]
    assert any(d.startswith("pytest-xdist") for d in dev)
    split = EditorsTogether._split_scope
    scheduler = object.__new__(EditorsTogether)
    assert {split(scheduler, "tests/editors/test_neovim.py::test_chat[debian]"),
            split(scheduler, "tests/editors/test_neovim.py::test_chat[pypi]"),
            split(scheduler, "tests/editors/test_vscode.py::test_unit_tests_pass")} == {"editors"}
    assert split(scheduler, "tests/lsp/test_chat.py::test_a[neovim]") == \
        "tests/lsp/test_chat.py::test_a[neovim]"
