"""A repository or config folder full of file-system traps never stalls the daemon.

Each test lays a trap (a symlink to /dev/zero or /dev/stdin, a FIFO, a symlink
loop) where the daemon reads configuration and skills, then asks it to route a
draft: the answer must come (a generous bound catches a hang, such as a read of
/dev/stdin that never ends; how fast it comes is bench/'s business, not a
test's), and the trapped file must be reported as a configuration error.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from switchman.server import methods
from tests.support.editing import Editor, editing
from tests.support.hostile_files import CONFIG_FOLDER_NAMINGS, dot_switchman_config, make_trap
from tests.support.lsp import running_server, server_env

TRAPS = ["dev-zero", "dev-stdin", "fifo", "loop"]
ANSWER_WITHIN = 15.0  # seconds: a trapped read never answers at all; a loaded machine is slow


def lay(folder: Path, trap: str, files: tuple[str, ...]) -> None:
    """``trap`` at each of ``files`` in ``folder``, and at a skill file beside them."""
    (folder / "skills").mkdir(parents=True)
    for name in (*files, "skills/trap.md"):
        make_trap(folder / name, trap)
    (folder / "skills" / "good.md").write_text(
        "---\nname: sql_tuning\ndescription: Slow queries and indexes.\n---\n", "utf-8")


@pytest.mark.parametrize("place", ["user config folder", "workspace"])
@pytest.mark.parametrize("trap", TRAPS)
async def test_the_daemon_answers_beside_a_trapped_file(
        tmp_path: Path, trap: str, place: str) -> None:
    config, data, workspace = tmp_path / "config", tmp_path / "data", tmp_path / "project"
    for folder in (config, data, workspace):
        folder.mkdir()
    if place == "workspace":
        lay(workspace / ".switchman", trap, ("routing.yaml",))
    else:
        lay(config, trap, ("routing.yaml", "models.yaml"))
    env = server_env(config, data, {"ANTHROPIC_API_KEY": "sk-ant-test"})
    async with running_server("visual-studio-code", env, workspaces=[workspace],
                              listen=(methods.STATUS,)) as client:
        preview = await asyncio.wait_for(client.request(methods.PREVIEW, {
            "workspace": workspace.as_uri(), "message": "tune these slow queries"}),
            ANSWER_WITHIN)
        assert preview["model"], preview  # routed by the built-in policy meanwhile
        again = await asyncio.wait_for(client.request(methods.MODELS, {
            "workspace": workspace.as_uri()}), ANSWER_WITHIN)
        assert again["models"]
        status = await client.wait_for(methods.STATUS, lambda s: s["config_errors"] > 0)
        assert status["workspace"] == workspace.as_uri()


async def test_a_config_folder_that_is_a_file_is_reported_by_the_daemon(tmp_path: Path) -> None:
    """SWITCHMAN_CONFIG_DIR naming a file: none of the user's files can be read. The status
    said no configuration errors and /rules check "No configuration files found ... ok", so
    nothing told the user that their models.yaml and routing.yaml were not in use."""
    data, workspace = tmp_path / "data", tmp_path / "project"
    data.mkdir()
    workspace.mkdir()
    wrong = tmp_path / "routing.yaml"
    wrong.write_text("global_default: haiku\n", "utf-8")
    env = server_env(wrong, data, {"ANTHROPIC_API_KEY": "sk-ant-test"})
    async with running_server("visual-studio-code", env, workspaces=[workspace],
                              listen=(methods.STATUS,)) as client:
        status = await client.wait_for(methods.STATUS, lambda s: s["config_errors"] > 0)
        assert status["config_errors"] == 1
        assert status["banners"] == [f"{wrong} has errors; the built-in defaults are in use."]
        checked = await client.request(methods.CHAT, {"workspace": workspace.as_uri(),
                                                      "message": "/rules check"})
        assert checked["text"] == (
            f"{wrong}:1:1: error [unreadable-file] The configuration folder is not a folder, "
            "so your models.yaml, routing.yaml and profiles.yaml cannot be read from it and "
            "the built-in defaults are in use: point SWITCHMAN_CONFIG_DIR at the folder that "
            f"holds them.\n1 error, 0 warnings in {wrong}")


async def test_a_workspace_routing_file_leading_out_of_the_workspace_is_not_read(
        tmp_path: Path) -> None:
    """A cloned repository's .switchman/routing.yaml linked to a file outside it was read as
    the workspace's policy (and checked, its lines shown in diagnostics). The daemon does not
    read it; the status banner says why, and /rules check shows the located error."""
    config, data, workspace, home = (tmp_path / n for n in ("config", "data", "repo", "home"))
    for folder in (config, data, workspace / ".switchman", home):
        folder.mkdir(parents=True)
    (home / "notes.yaml").write_text("default: opus\n", "utf-8")
    linked = workspace / ".switchman" / "routing.yaml"
    linked.symlink_to(home / "notes.yaml")
    env = server_env(config, data, {"ANTHROPIC_API_KEY": "sk-ant-test"})
    async with running_server("visual-studio-code", env, workspaces=[workspace],
                              listen=(methods.STATUS,)) as client:
        status = await client.wait_for(methods.STATUS, lambda s: s["config_errors"] > 0)
        assert status["banners"] == [
            f"{linked} leads out of the workspace (a symbolic link) and is not read; your own "
            "configuration and the built-in defaults apply."]
        checked = await client.request(methods.CHAT, {"workspace": workspace.as_uri(),
                                                      "message": "/rules check"})
        assert f"{linked}:1:1: error [outside-workspace] This file is not read: it is a " \
            f"symbolic link leading out of the workspace, to {home / 'notes.yaml'}." \
            in checked["text"]
        preview = await client.request(methods.PREVIEW, {"workspace": workspace.as_uri(),
                                                         "message": "hello"})
        assert preview["model"] != "anthropic:claude-opus-4-7"


def link_workspace_routing(workspace: Path, linked: str, target: Path) -> str:
    """Make ``workspace``'s ``.switchman/routing.yaml`` lead to ``target``: a link to it
    (``linked`` "file"), or in a ``.switchman`` folder linked to its folder; its URI."""
    folder = workspace / ".switchman"
    if linked == "file":
        (folder / "routing.yaml").symlink_to(target)
    else:
        folder.rmdir()
        folder.symlink_to(target.parent, target_is_directory=True)
    return (folder / "routing.yaml").as_uri()


@pytest.mark.parametrize("linked", ["file", ".switchman folder"])
async def test_a_linked_out_workspace_file_open_in_the_editor_shows_the_located_error(
        tmp_path: Path, linked: str) -> None:
    """The editor's path (``<workspace>/.switchman/routing.yaml``) was resolved to the link's
    target outside the workspace, which is no configuration file: the open file showed
    nothing, not the outside-workspace error. It shows that error alone: its text is not
    checked as the workspace's policy."""
    outside = tmp_path / "home"
    outside.mkdir()
    target = outside / ("notes.yaml" if linked == "file" else "routing.yaml")
    target.write_text("default: [broken\n", "utf-8")
    async with editing("visual-studio-code", tmp_path) as editor:
        uri = link_workspace_routing(editor.workspace, linked, target)
        editor.open(uri, "default: [broken\n")
        [problem] = await editor.diagnostics(uri)
        assert problem.code == "outside-workspace"
        assert problem.severity == types.DiagnosticSeverity.Error
        assert problem.range == types.Range(types.Position(0, 0), types.Position(0, 0))
        what = "it is a" if linked == "file" else "its .switchman folder is a"
        assert problem.message.startswith(
            f"This file is not read: {what} symbolic link leading out of the workspace, to "
            f"{target}.")
        editor.replace_all(uri, "rules:\n  - name: x\n    when: {skills_matching_message_"
                                "includes: [nope]}\n    use: opsu\n")
        assert [d.code for d in await editor.diagnostics(uri)] == ["outside-workspace"]


@pytest.mark.parametrize("linked", ["file", ".switchman folder"])
async def test_a_workspace_file_linked_within_the_workspace_is_checked_in_the_editor(
        tmp_path: Path, linked: str) -> None:
    """A ``.switchman/routing.yaml`` linked to ``config/switchman.yaml``, or in a
    ``.switchman`` linked to ``config``, both inside the workspace: the daemon reads it as
    the workspace's own, but the editor's path was resolved to the link's target, named
    otherwise, and nothing was checked."""
    async with editing("visual-studio-code", tmp_path) as editor:
        target = editor.workspace / "config" / ("switchman.yaml" if linked == "file"
                                                else "routing.yaml")
        target.parent.mkdir()
        target.write_text("", "utf-8")
        uri = link_workspace_routing(editor.workspace, linked, target)
        editor.open(uri, "rules:\n  - name: x\n    use: opsu\n")
        [problem] = await editor.diagnostics(uri)
        assert problem.code == "unknown-model"


@pytest.mark.parametrize("named", CONFIG_FOLDER_NAMINGS)
async def test_a_config_folder_called_dot_switchman_is_yours_in_the_editor_and_the_daemon(
        tmp_path: Path, named: str) -> None:
    """``SWITCHMAN_CONFIG_DIR=~/.switchman`` (a folder, or a link to a dotfiles folder) with
    the home folder open: the user's routing.yaml opened in the editor was taken for the home
    workspace's (refused as leading out of it, or checked for a workspace's keys), and the
    daemon read it a second time as that workspace's file, with the same errors."""
    dotfiles, data, home = tmp_path / "dotfiles", tmp_path / "data", tmp_path / "home"
    for folder in (dotfiles, data):
        folder.mkdir()
    mine = dot_switchman_config(home, dotfiles, named, "global_default: haiku\n")
    env = server_env(mine, data, {"ANTHROPIC_API_KEY": "sk-ant-test",
                                  "SWITCHMAN_DIAGNOSTICS_DELAY_MS": "0"})
    async with running_server("visual-studio-code", env, workspaces=[home]) as client:
        editor = Editor(client, mine, home)
        uri = editor.uri("routing")
        editor.open(uri, "global_default: opsu\n")
        assert [d.code for d in await editor.diagnostics(uri)] == ["unknown-model"]
        checked = await client.request(methods.CHAT, {"workspace": home.as_uri(),
                                                      "message": "/rules check"})
        assert checked["text"] == f"ok: {mine / 'routing.yaml'}"
