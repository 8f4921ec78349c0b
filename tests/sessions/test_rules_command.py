"""/rules check and /rules reload in chat, through the engine's service."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from switchman.engine.config import skill_names
from switchman.engine.config.problems import Problem
from switchman.engine.service import Switchman
from switchman.engine.sessions import slash_commands
from tests.conftest import models_yaml
from tests.sessions.conftest import Recorder
from tests.support.fake_provider import FakeProvider


@pytest.mark.parametrize("command", ["/rules check", "/rules reload"])
async def test_rules_check_finds_unknown_skills_off_the_event_loop(
        tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch,
        command: str) -> None:
    """The unknown-skill warnings read every config file and walk the skills folders (below a
    parent folder's ``workspaces:`` block, up to a thousand folders): that runs on a thread,
    not on the loop that serves the editor, and still gives the same answer."""
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    (tmp_path / "config" / "models.yaml").write_text(models_yaml(fake))
    (tmp_path / "config" / "routing.yaml").write_text(
        "rules:\n  - name: a\n    when: {skills_matching_message_includes: sytem_design}\n"
        "    use: opus\n")
    loop_thread, threads = threading.current_thread(), []

    def recording(files: list[str], directory: Path, folder: Path) -> list[Problem]:
        threads.append(threading.current_thread())
        return skill_names.unknown_skills_in_files(files, directory, folder)

    monkeypatch.setattr(slash_commands, "unknown_skills_in_files", recording)
    service = Switchman(Recorder(), config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ={"ANTHROPIC_API_KEY": "k"})
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    answer = await service.chat(workspace, None, command)
    assert threads and loop_thread not in threads
    if command == "/rules check":
        assert "No skill named 'sytem_design'" in answer.text, answer.text
    else:
        assert answer.text == "Reloaded: 1 rule active (1 problem; run /rules check).", \
            answer.text


async def test_rules_show_says_when_a_broken_file_is_not_what_it_lists(
        tmp_path: Path, fake: FakeProvider) -> None:
    """With errors in routing.yaml, /rules show listed the last valid version's rules (or the
    built-in ones) as if they were the file's; the CLI said so, the chat did not."""
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    config = tmp_path / "config"
    (config / "models.yaml").write_text(models_yaml(fake))
    routing = config / "routing.yaml"
    routing.write_text("rules:\n  - name: a\n    when: {message_matches: [}\n    use: opus\n")
    service = Switchman(Recorder(), config_folder=config, data_folder=tmp_path / "data",
                        environ={"ANTHROPIC_API_KEY": "k"})
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    shown = (await service.chat(workspace, None, "/rules show")).text
    assert shown.splitlines()[-1] == (f"Note: {routing} has errors, so Switchman uses the "
                                      "built-in policy in its place (/rules check lists them).")
    routing.write_text("rules:\n  - name: mine\n    when: {message_matches: x}\n    use: opus\n")
    assert "1. mine" in (await service.chat(workspace, None, "/rules show")).text
    routing.write_text("rules: [\n")
    os.utime(routing, ns=(routing.stat().st_mtime_ns + 10**9,) * 2)
    shown = (await service.chat(workspace, None, "/rules show")).text
    assert "1. mine" in shown
    assert shown.splitlines()[-1] == (f"Note: {routing} has errors, so its last valid version "
                                      "is in force (/rules check lists them).")
    routing.write_text("rules: []\n")
    os.utime(routing, ns=(routing.stat().st_mtime_ns + 2 * 10**9,) * 2)
    assert "Note:" not in (await service.chat(workspace, None, "/rules show")).text
