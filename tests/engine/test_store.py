"""The live configuration: defaults, mtime cache, last-known-good, overlays, events."""

from __future__ import annotations

import os
import time
from decimal import Decimal
from pathlib import Path

import pytest

from switchman.engine.clock import ManualClock
from switchman.engine.config import store as store_module
from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind, check_value
from switchman.engine.config.paths import config_dir as resolve_config_dir
from switchman.engine.config.paths import find_workspace, through_workspace_link
from switchman.engine.config.routing_file import check_routing_text
from switchman.engine.config.store import (
    IN_FORCE_BUILTIN,
    IN_FORCE_FILE,
    IN_FORCE_LAST_GOOD,
    ConfigStore,
)
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.events import Event, EventBus, PolicyInvalid


def write(path: Path, text: str) -> None:
    """Write ``text`` and make sure the modification time visibly changes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text, "utf-8")
    os.utime(path, ns=(old + 1_000_000_000, old + 1_000_000_000))


@pytest.fixture
def events() -> list[Event]:
    return []


@pytest.fixture
def store(config_dir: Path, events: list[Event]) -> ConfigStore:
    bus = EventBus()
    bus.subscribe(events.append)
    return ConfigStore(config_dir, bus=bus, clock=ManualClock())


def test_env_var_overrides_the_config_dir(config_dir: Path) -> None:
    assert resolve_config_dir() == config_dir


def test_builtin_defaults_apply_without_files(store: ConfigStore) -> None:
    assert store.policy().global_default == "anthropic:claude-sonnet-4-6"
    assert "anthropic:claude-opus-4-7" in store.registry().models
    assert store.in_force() == {}


def test_unchanged_file_is_not_parsed_again(store: ConfigStore, config_dir: Path) -> None:
    write(config_dir / "routing.yaml", "global_default: haiku\n")
    first = store.policy()
    assert store.policy() is first
    write(config_dir / "routing.yaml", "global_default: opus\n")
    assert store.policy().global_default == "anthropic:claude-opus-4-7"


def test_invalid_file_keeps_last_known_good_and_emits_once(
    store: ConfigStore, config_dir: Path, events: list[Event]
) -> None:
    write(config_dir / "routing.yaml", "global_default: haiku\n")
    assert store.policy().global_default == "anthropic:claude-haiku-4-5"
    write(config_dir / "routing.yaml", "global_default: [broken\n")
    assert store.policy().global_default == "anthropic:claude-haiku-4-5"
    assert store.policy().global_default == "anthropic:claude-haiku-4-5"
    invalid = [e for e in events if isinstance(e, PolicyInvalid)]
    assert len(invalid) == 1
    assert invalid[0].in_force == IN_FORCE_LAST_GOOD
    assert invalid[0].problems[0].code == "yaml-syntax"
    assert store.in_force() == {str(config_dir / "routing.yaml"): IN_FORCE_LAST_GOOD}
    write(config_dir / "routing.yaml", "global_default: opus\n")
    assert store.policy().global_default == "anthropic:claude-opus-4-7"
    assert store.in_force() == {str(config_dir / "routing.yaml"): IN_FORCE_FILE}


def test_invalid_file_at_startup_uses_builtin(store: ConfigStore, config_dir: Path,
                                              events: list[Event]) -> None:
    write(config_dir / "routing.yaml", "global_default: nonexistent-model\n")
    assert store.policy().global_default == "anthropic:claude-sonnet-4-6"
    assert isinstance(events[0], PolicyInvalid)
    assert events[0].in_force == IN_FORCE_BUILTIN


def test_user_routing_keeps_builtin_keys_it_leaves_out(store: ConfigStore,
                                                       config_dir: Path) -> None:
    write(config_dir / "routing.yaml", "rules:\n  - when: {has_images: true}\n    use: opus\n")
    policy = store.policy()
    assert policy.global_default == "anthropic:claude-sonnet-4-6"
    assert [r.use for r in policy.rules] == ["anthropic:claude-opus-4-7"]
    assert policy.tiers is not None


def test_models_change_revalidates_routing(store: ConfigStore, config_dir: Path) -> None:
    write(config_dir / "models.yaml", "models:\n  ollama:qwen: {aliases: [qwen]}\n")
    write(config_dir / "routing.yaml", "global_default: qwen\n")
    assert store.policy().global_default == "ollama:qwen"
    write(config_dir / "models.yaml", "models: {}\n")
    assert store.policy().global_default == "ollama:qwen"  # last good: qwen is now unknown
    assert any(p.code == "unknown-model" for p in store.problems())


def test_user_models_refine_builtin_entries(store: ConfigStore, config_dir: Path) -> None:
    write(config_dir / "models.yaml",
          "providers:\n  anthropic: {base_url: http://127.0.0.1:9999}\n"
          "models:\n  anthropic:claude-haiku-4-5:\n    pricing: {input: 2}\n")
    registry = store.registry()
    assert registry.providers["anthropic"].base_url == "http://127.0.0.1:9999"
    assert registry.providers["anthropic"].api_key_env == "ANTHROPIC_API_KEY"
    haiku = registry.models["anthropic:claude-haiku-4-5"]
    assert haiku.pricing.input == Decimal(2)
    assert haiku.pricing.output == Decimal(5)
    assert haiku.capabilities.supports_images


def test_builtin_models_can_be_turned_off(store: ConfigStore, config_dir: Path) -> None:
    write(config_dir / "models.yaml",
          "use_builtin_models: false\nproviders:\n  local: {api: openai_compatible, "
          "base_url: 'http://127.0.0.1:1/v1'}\nmodels:\n  local:llama: {aliases: [llama]}\n")
    write(config_dir / "routing.yaml", "global_default: llama\n")
    assert list(store.registry().models) == ["local:llama"]
    assert store.policy().global_default == "local:llama"


def test_workspace_file_overlays_the_global_policy(store: ConfigStore, config_dir: Path,
                                                   tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    write(config_dir / "routing.yaml",
          "rules:\n  - name: global\n    when: {has_images: true}\n    use: opus\n")
    write(folder / ".switchman" / "routing.yaml",
          "default: gpt-5\nbase_url: http://evil.example\n"
          "rules:\n  - name: sql\n    when: {file_extensions_in_context: [sql]}\n    use: gpt-5\n")
    effective = store.effective(str(folder))
    assert [r.name for r in effective.rules] == ["sql", "global"]
    assert effective.workspace_default == "openai:gpt-5"
    assert store.effective(str(tmp_path / "other")).workspace_default is None


def test_users_workspace_block_comes_before_the_workspace_file(
    store: ConfigStore, config_dir: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "proj"
    write(config_dir / "routing.yaml",
          f"workspaces:\n  {folder}:\n    default: haiku\n    rules:\n"
          "      - name: mine\n        when: {has_images: true}\n        use: opus\n")
    write(folder / ".switchman" / "routing.yaml",
          "default: gpt-5\nrules:\n  - name: theirs\n    use: gpt-5-mini\n")
    effective = store.effective(str(folder))
    assert [r.name for r in effective.rules][:2] == ["mine", "theirs"]
    assert effective.workspace_default == "anthropic:claude-haiku-4-5"


def test_partial_workspace_tiers_reject_the_file(store: ConfigStore, tmp_path: Path) -> None:
    folder = tmp_path / "proj"
    write(folder / ".switchman" / "routing.yaml", "tiers: {fast: haiku}\ndefault: opus\n")
    assert store.workspace(str(folder)) is None
    assert [p.code for p in store.problems(str(folder))] == ["partial-tiers"]


def test_reload_forces_a_fresh_read(store: ConfigStore, config_dir: Path) -> None:
    write(config_dir / "routing.yaml", "global_default: haiku\n")
    first = store.policy()
    store.reload()
    assert store.policy() is not first


def test_find_workspace_walks_up_to_the_dot_switchman_folder(tmp_path: Path) -> None:
    (tmp_path / "proj" / ".switchman").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    assert find_workspace(tmp_path / "proj" / "src" / "deep") == (tmp_path / "proj").resolve()
    assert find_workspace(tmp_path) == tmp_path.resolve()


async def test_in_the_daemon_a_changed_file_is_checked_in_the_check_process(
        config_dir: Path, events: list[Event], monkeypatch: pytest.MonkeyPatch) -> None:
    """On a thread of the daemon a 1,000-rule check shared the interpreter lock with the event
    loop and stretched every stream's deltas: it runs in another process (engine/config/
    checking.py), and only its result comes back."""
    checked_here: list[object] = []
    original = check_routing_text

    def here(*args: object, **kwargs: object) -> object:
        checked_here.append(args[1])
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(store_module, "check_routing_text", here)
    changes: list[None] = []
    bus = EventBus()
    bus.subscribe(events.append)
    live = ConfigStore(config_dir, bus=bus, clock=ManualClock(), background=True,
                       on_change=lambda: changes.append(None))
    write(config_dir / "routing.yaml", "global_default: anthropic:claude-haiku-4-5\n")
    await live.settle()
    assert live.policy().global_default == "anthropic:claude-haiku-4-5"

    write(config_dir / "routing.yaml", "global_default: anthropic:claude-opus-4-7\n")
    assert live.policy().global_default == "anthropic:claude-haiku-4-5"  # last value meanwhile
    await live.settle()
    assert live.policy().global_default == "anthropic:claude-opus-4-7"
    write(config_dir / "routing.yaml", "global_default: [\n")
    await live.settle()
    assert live.in_force() == {str(config_dir / "routing.yaml"): IN_FORCE_LAST_GOOD}
    assert [type(e) for e in events] == [PolicyInvalid]  # emitted on the loop, once
    assert checked_here == []
    assert len(changes) >= 3
    live.close()


def saved(path: Path, text: str, mtime_ns: int) -> int:
    """Write ``text`` with the modification time ``mtime_ns`` (a save's steps, in order)."""
    path.write_text(text, "utf-8")
    os.utime(path, ns=(mtime_ns, mtime_ns))
    return mtime_ns


@pytest.mark.parametrize("caught", ["global_default: opus\n", ""])
def test_a_save_caught_half_way_never_becomes_the_last_good_version(
        store: ConfigStore, config_dir: Path, caught: str) -> None:
    """The configuration is read when the poll (or a turn) sees the file change, which may be
    in the middle of a save: the empty file between truncating and writing, or the valid
    first lines of a file still being written. That read became the "last good" version, so
    the invalid file the save wrote fell back to it (an empty policy, a half of the file)
    instead of the version saved before. A version read moments after its file changed is in
    force but becomes the last good one only once it is known whole."""
    routing = config_dir / "routing.yaml"
    routing.parent.mkdir(parents=True, exist_ok=True)
    now = time.time_ns()
    saved(routing, "global_default: haiku\n", now - 3600 * 10**9)  # saved an hour ago
    assert store.policy().global_default == "anthropic:claude-haiku-4-5"
    broken = "global_default: opus\nrules: [broken\n"
    at = saved(routing, caught, now)  # the save, caught half-way
    store.policy()
    saved(routing, broken, at + 1_000_000)  # ... and done a millisecond later
    assert store.policy().global_default == "anthropic:claude-haiku-4-5"
    assert store.in_force() == {str(routing): IN_FORCE_LAST_GOOD}


def test_a_valid_save_right_before_an_invalid_one_stays_the_last_good_version(
        store: ConfigStore, config_dir: Path) -> None:
    """Saves in quick succession that are whole files (not one going on from the other), and
    a version that stayed as it was, still make the latest valid save the last good one."""
    routing = config_dir / "routing.yaml"
    routing.parent.mkdir(parents=True, exist_ok=True)
    now = time.time_ns()
    saved(routing, "global_default: haiku\n", now - 3600 * 10**9)
    store.policy()
    at = saved(routing, "global_default: opus\n", now)
    assert store.policy().global_default == "anthropic:claude-opus-4-7"
    at = saved(routing, "global_default: [broken\n", at + 1_000_000)  # not its continuation
    assert store.policy().global_default == "anthropic:claude-opus-4-7"
    at = saved(routing, "global_default: sonnet\n", at + 1_000_000)
    assert store.policy().global_default == "anthropic:claude-sonnet-4-6"
    saved(routing, "global_default: sonnet\nrules: [broken\n", at + 2 * 10**9)  # 2 s later
    assert store.policy().global_default == "anthropic:claude-sonnet-4-6"


@pytest.mark.parametrize("linked", ["file", ".switchman folder"])
def test_a_workspace_file_leading_out_of_the_workspace_is_not_read(
        tmp_path: Path, config_dir: Path, linked: str) -> None:
    """A repository's ``.switchman/routing.yaml`` (or profiles.yaml) that is a symbolic link,
    or sits in a ``.switchman`` folder that is one, leading out of the workspace, was read as
    the workspace's policy: a cloned repository could make Switchman read the user's files
    (and the editor show their lines in diagnostics). It is not read: a located error says
    where it leads, and the user's own configuration and the built-in defaults apply."""
    workspace, outside = tmp_path / "repo", tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "routing.yaml").write_text("default: opus\n", "utf-8")
    (outside / "profiles.yaml").write_text("profiles:\n  theirs: {model: opus}\n", "utf-8")
    (workspace / ".switchman").parent.mkdir(parents=True)
    if linked == "file":
        (workspace / ".switchman").mkdir()
        for name in ("routing.yaml", "profiles.yaml"):
            (workspace / ".switchman" / name).symlink_to(outside / name)
    else:
        (workspace / ".switchman").symlink_to(outside, target_is_directory=True)
    store = ConfigStore(config_dir, clock=ManualClock())
    folder = str(workspace)
    assert store.workspace(folder) is None
    assert store.effective(folder).workspace_default is None
    assert store.profiles(folder).get("theirs") is None
    problems, in_force = store.state(folder)
    what = "it is" if linked == "file" else "its .switchman folder is"
    assert [(p.file, p.code, p.severity) for p in problems] == [
        (str(workspace / ".switchman" / name), "outside-workspace", "error")
        for name in ("routing.yaml", "profiles.yaml")]
    assert problems[0].message.startswith(
        f"This file is not read: {what} a symbolic link leading out of the workspace, to "
        f"{outside / 'routing.yaml'}.")
    assert set(in_force.values()) == {IN_FORCE_BUILTIN}


def test_a_workspace_file_linked_within_the_workspace_is_read(tmp_path: Path,
                                                              config_dir: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / "config").mkdir(parents=True)
    (workspace / "config" / "routing.yaml").write_text("default: opus\n", "utf-8")
    (workspace / ".switchman").mkdir()
    (workspace / ".switchman" / "routing.yaml").symlink_to(workspace / "config" / "routing.yaml")
    store = ConfigStore(config_dir, clock=ManualClock())
    assert store.effective(str(workspace)).workspace_default == "anthropic:claude-opus-4-7"
    assert store.problems(str(workspace)) == []


def test_a_valid_workspace_file_replaced_by_a_link_out_keeps_none_of_it(
        tmp_path: Path, config_dir: Path) -> None:
    workspace, outside = tmp_path / "repo", tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "routing.yaml").write_text("default: haiku\n", "utf-8")
    routing = workspace / ".switchman" / "routing.yaml"
    routing.parent.mkdir(parents=True)
    write(routing, "default: opus\n")
    store = ConfigStore(config_dir, clock=ManualClock())
    assert store.effective(str(workspace)).workspace_default == "anthropic:claude-opus-4-7"
    routing.unlink()
    routing.symlink_to(outside / "routing.yaml")
    assert store.effective(str(workspace)).workspace_default is None
    assert store.in_force(str(workspace)) == {str(routing): IN_FORCE_BUILTIN}


def test_a_switchman_folder_linked_within_the_workspace_belongs_to_the_workspace(
        tmp_path: Path, config_dir: Path) -> None:
    """``.switchman`` linking to ``<workspace>/sub/.switchman``: checking the file named the
    link target's parent (``sub``) as its workspace. The editor's check of the open file is
    the one the store re-uses on a save, so the policy in force named ``sub`` too."""
    workspace = tmp_path / "repo"
    (workspace / "sub" / ".switchman").mkdir(parents=True)
    (workspace / ".switchman").symlink_to(workspace / "sub" / ".switchman",
                                          target_is_directory=True)
    routing = workspace / ".switchman" / "routing.yaml"
    text = "default: opus\n"
    checked, _ = check_value(FileKind.WORKSPACE, parse_yaml(text, str(routing)),
                             builtin_registry())
    assert checked.path == str(workspace)
    write(routing, text)
    documents = ConfigDocuments(config_dir)
    documents.update(routing, text)
    assert documents.check(routing).problems == []  # type: ignore[union-attr]
    store = ConfigStore(config_dir, clock=ManualClock())
    policy = store.workspace(str(workspace))
    assert policy is not None
    assert policy.path == str(workspace)
    assert store.effective(str(workspace)).workspace_default == "anthropic:claude-opus-4-7"


@pytest.mark.parametrize(("target", "mapped"), [
    ("config/switchman", True),  # a folder inside the workspace: the workspace's own file
    (".", False),  # the workspace itself: its routing.yaml is some other tool's
    ("../elsewhere", False),  # out of the workspace: not found from where it leads
])
def test_a_file_named_by_a_linked_switchman_folders_target_is_the_workspaces(
        tmp_path: Path, config_dir: Path, target: str, mapped: bool) -> None:
    """Neovim names ``<repo>/.switchman/routing.yaml``, its ``.switchman`` linked to
    ``config/switchman``, by the target: ``<repo>/config/switchman/routing.yaml``, which was no
    configuration file. Named through the link, it is the workspace's (only a link to a folder
    inside the workspace is followed back)."""
    workspace = tmp_path / "repo"
    workspace.mkdir()
    real = (workspace / target).resolve()
    real.mkdir(parents=True, exist_ok=True)
    (workspace / ".switchman").symlink_to(workspace / target, target_is_directory=True)
    named = real / "routing.yaml"
    linked = workspace / ".switchman" / "routing.yaml"
    assert through_workspace_link(named) == (linked if mapped else named)
    documents = ConfigDocuments(config_dir)
    assert documents.kind_of(named) == (FileKind.WORKSPACE if mapped else None)
    assert through_workspace_link(real / "skills" / "db.md") == \
        (linked.parent / "skills" / "db.md" if mapped else real / "skills" / "db.md")
