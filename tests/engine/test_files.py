"""Reading untrusted files: regular files only, never blocking, capped, each refusal explained."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from switchman.engine.config.check import FileKind
from switchman.engine.config.problems import Code
from switchman.engine.config.store import ConfigStore, read_config
from switchman.engine.editing.editing import ConfigDocuments
from switchman.engine.errors import UnreadableFile
from switchman.engine.files import MAX_CONFIG_BYTES, read_head, read_text
from switchman.engine.skills import MAX_SKILL_FILES, SkillIndex, folders_signature
from tests.support.hostile_files import REASONS, TRAPS, make_trap, within


@pytest.mark.parametrize("trap", TRAPS)
def test_every_trap_is_refused_quickly_with_its_reason(tmp_path: Path, trap: str) -> None:
    path = make_trap(tmp_path / "routing.yaml", trap)
    with pytest.raises(UnreadableFile) as refused:
        within(2, lambda: read_text(path))
    assert REASONS[trap] in refused.value.reason
    assert str(path) in str(refused.value)


def test_a_regular_file_is_read_whole_without_its_byte_order_mark(tmp_path: Path) -> None:
    path = tmp_path / "routing.yaml"
    path.write_bytes(b"\xef\xbb\xbfglobal_default: opus\n")
    assert read_text(path) == "global_default: opus\n"


def test_a_file_at_the_cap_is_read_and_one_byte_more_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "routing.yaml"
    path.write_bytes(b"#" * MAX_CONFIG_BYTES)
    assert len(read_text(path)) == MAX_CONFIG_BYTES
    path.write_bytes(b"#" * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(UnreadableFile, match="larger than the 256 KB limit"):
        read_text(path)


def test_read_head_reads_only_the_head(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 100)
    assert read_head(path, 10) == (b"x" * 10, False)
    assert read_head(path, 100) == (b"x" * 100, True)


def test_a_non_utf8_file_is_located_at_its_first_bad_byte(tmp_path: Path) -> None:
    path = make_trap(tmp_path / "routing.yaml", "not-utf8")
    with pytest.raises(UnreadableFile) as refused:
        read_text(path)
    assert (refused.value.line, refused.value.column) == (1, 19)
    assert "byte 0xe9 on line 2" in refused.value.reason


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_file_says_permission_denied(tmp_path: Path) -> None:
    path = tmp_path / "routing.yaml"
    path.write_text("x: 1\n")
    path.chmod(0)
    _, problem = read_config(path)
    assert problem is not None
    assert problem.message == "The file cannot be read (permission denied)."


def test_a_name_with_a_nul_byte_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="invalid name"):
        read_text(str(tmp_path / "a\0b"))


@pytest.mark.parametrize("trap", TRAPS)
def test_the_config_store_reports_each_trap_and_keeps_the_built_in_policy(
        tmp_path: Path, trap: str) -> None:
    make_trap(tmp_path / "routing.yaml", trap)
    store = ConfigStore(tmp_path)
    problems, in_force = within(2, store.state)
    assert [p.code for p in problems] == [Code.UNREADABLE_FILE]
    assert REASONS[trap] in problems[0].message
    assert in_force[str(tmp_path / "routing.yaml")] == "built-in"
    assert store.policy().global_default  # routing still works


@pytest.mark.parametrize("trap", ["fifo", "dev-zero", "dev-stdin", "loop", "folder"])
def test_a_trapped_skill_file_is_skipped_and_the_others_are_indexed(tmp_path: Path,
                                                                    trap: str) -> None:
    (tmp_path / "good.md").write_text("---\nname: sql_tuning\ndescription: Slow queries.\n---\n")
    make_trap(tmp_path / "bad.md", trap)
    index = within(2, lambda: SkillIndex.build([tmp_path]))
    assert set(index.skills) == {"sql_tuning"}


def test_a_folder_of_thousands_of_skills_is_read_only_up_to_the_cap(tmp_path: Path) -> None:
    """A repository's 5,000 skill files were all statted every turn and all read on the
    first one (over a second on the daemon's event loop)."""
    for i in range(MAX_SKILL_FILES + 30):
        (tmp_path / f"s{i:05}.md").write_text(f"---\nname: s{i}\ndescription: d\n---\n")
    assert len(folders_signature([tmp_path])) == MAX_SKILL_FILES
    index = SkillIndex.build([tmp_path])
    assert len(index.skills) == MAX_SKILL_FILES and "s0" in index.skills
    assert f"s{MAX_SKILL_FILES}" not in index.skills


def test_a_config_document_under_a_symlink_loop_is_handled_not_raised(tmp_path: Path) -> None:
    make_trap(tmp_path / "loop", "loop")
    documents = ConfigDocuments(tmp_path / "config")
    path = tmp_path / "loop" / ".switchman" / "routing.yaml"
    assert documents.kind_of(path) is FileKind.WORKSPACE
    documents.update(path, "rules: [")
    analysis = documents.check(path)
    assert analysis is not None
    assert [p.code for p in analysis.problems] == [Code.YAML_SYNTAX]


@pytest.mark.parametrize("looping", ["workspace .switchman", "user config folder"])
def test_a_config_folder_that_is_a_symlink_loop_is_a_located_problem(
        tmp_path: Path, looping: str) -> None:
    """Such a folder used to pass for "no configuration": ``stat`` and ``lstat`` both fail."""
    project, config = tmp_path / "project", tmp_path / "config"
    project.mkdir()
    folder = project / ".switchman" if looping == "workspace .switchman" else config
    os.symlink(folder, folder)
    store = ConfigStore(config)
    problems, in_force = within(2, lambda: store.state(str(project)))
    assert problems, "the looping folder was taken for an absent one"
    for problem in problems:
        assert problem.code is Code.UNREADABLE_FILE
        assert Path(problem.file).parent == folder
        assert problem.message == f"The file is inside {folder}, which is a symbolic link loop."
    assert set(in_force.values()) == {"built-in"}
    assert store.policy().global_default  # routing still works


def test_a_repository_skills_folder_leading_out_of_it_is_never_walked(tmp_path: Path) -> None:
    workspace, outside = tmp_path / "repo", tmp_path / "home"
    (workspace / ".switchman").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.md").write_text("---\nname: secret\ndescription: mine\n---\n", "utf-8")
    skills = workspace / ".switchman" / "skills"
    skills.symlink_to(outside, target_is_directory=True)  # `/` in a hostile repository
    walked = folders_signature([skills], workspace=workspace)
    assert walked == ((str(skills), -2, -2),)  # its files are not looked at
    assert "secret.md" in str(folders_signature([skills]))  # a user's own folder is walked
    assert SkillIndex.build([skills], workspace=workspace).skills == {}
