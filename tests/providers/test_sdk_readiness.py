"""An idle daemon imports no SDK (nor numpy); a sign of chat use imports the one it will need.

Each case runs the engine in a fresh interpreter, so ``sys.modules`` shows
exactly what it imported. Both keys are set; the built-in defaults route to
Anthropic (``sonnet``), and ``@gpt-5`` names an OpenAI model.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import asyncio, json, sys, threading
from pathlib import Path
from switchman.engine.service import Switchman

class Quiet:
    def route_decided(self, notice): pass
    def delta(self, delta): pass
    def status_changed(self, workspace): pass
    def delegation(self, update): pass

HEAVY = ("anthropic", "openai", "numpy")
root = Path(sys.argv[1])
engine = Switchman(Quiet(), config_folder=root / "config", data_folder=root / "data",
                   environ={"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
workspace = engine.open_workspace(str(root / "workspace"))
engine.status(workspace)
engine.models(workspace)
idle = [m for m in HEAVY if m in sys.modules]
step = sys.argv[2]
if step == "sessions":
    engine.session_list(workspace, False)
elif step == "new-session":
    engine.new_session(workspace)
elif step == "preview":
    asyncio.run(engine.preview(workspace, None, "@gpt-5 rename this function", False))
for thread in threading.enumerate():  # the adapter being created in the background
    if thread.name == "provider-adapter":
        thread.join(120)
print(json.dumps({"idle": idle, "after": [m for m in HEAVY if m in sys.modules]}))
"""


def imported(tmp_path: Path, step: str) -> dict[str, list[str]]:
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir(exist_ok=True)
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path), step], check=True,
                          capture_output=True, text=True)
    result: dict[str, list[str]] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_an_idle_engine_with_keys_imports_no_sdk_and_no_numpy(tmp_path: Path) -> None:
    assert imported(tmp_path, "idle") == {"idle": [], "after": []}


@pytest.mark.parametrize("step", ["sessions", "new-session"])
def test_opening_the_chat_imports_the_likely_models_sdk_only(tmp_path: Path, step: str) -> None:
    assert imported(tmp_path, step) == {"idle": [], "after": ["anthropic"]}


def test_a_previewed_draft_imports_its_models_sdk_only(tmp_path: Path) -> None:
    # the preview is a routing decision, so the learned store is read too: an empty one
    # needs no numpy (tests/learning/test_small_store.py)
    assert imported(tmp_path, "preview") == {"idle": [], "after": ["openai"]}
