"""What the daemon imports before answering ``initialize`` decides its start-up time."""

from __future__ import annotations

import subprocess
import sys

import pytest

LATER = ("jsonschema", "anthropic", "openai", "numpy")
"""Needed only by a delegation with an output schema, a turn, or the pattern store."""


@pytest.mark.parametrize("module", LATER)
def test_building_the_server_does_not_import(module: str) -> None:
    code = ("import sys\nfrom switchman.server.app import build_server\nbuild_server()\n"
            f"assert {module!r} not in sys.modules, 'imported at start-up: {module}'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
