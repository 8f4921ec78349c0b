"""What the daemon imports before answering ``initialize`` decides its start-up time.

A bare pygls server imports pygls and lsprotocol; the daemon may add only its
own thin server modules, msgspec and the engine's error and message types. The
engine proper (configuration, routing, sessions, storage, editing, tools) is
imported when ``initialized`` creates it, and an SDK only for a chat.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

LATER = ("jsonschema", "anthropic", "openai", "numpy", "yaml", "re2", "sqlite3",
         "switchman.engine.config.schema", "switchman.engine.config.store",
         "switchman.engine.routing", "switchman.engine.sessions", "switchman.engine.editing",
         "switchman.engine.tools", "switchman.engine.store", "switchman.engine.service")
"""Each needed only after ``initialize``: by the engine, a chat, or a configuration file."""


def _loaded_after(setup: str, module: str) -> None:
    code = (f"import sys\n{setup}\n"
            f"found = [m for m in sys.modules if (m + '.').startswith({module!r} + '.')]\n"
            f"assert not found, f'imported at start-up: {{found}}'\n")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("module", LATER)
def test_building_the_server_does_not_import(module: str) -> None:
    _loaded_after("from switchman.server.app import build_server\nbuild_server()", module)


@pytest.mark.parametrize("module", ["switchman.engine.config.schema", "yaml"])
def test_switchman_serve_skips_the_other_commands_imports(module: str) -> None:
    """``switchman serve`` (what the editors start) parses its own arguments only."""
    _loaded_after("from switchman.server import cli, app\napp.run = lambda tcp=None: 0\n"
                  "assert cli.main(['serve']) == 0", module)
