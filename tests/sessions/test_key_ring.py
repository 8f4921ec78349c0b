"""The providers' keys masked at every answer and tool result: a key file is read once while
it is unchanged, and a rotated key is the one used and masked from then on."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from switchman.engine import keys
from switchman.engine.config.registry import ApiKind, ProviderSpec
from switchman.engine.keys import RECENT_CHANGE_NS, KeyRing, key_file_text
from switchman.engine.service import Switchman
from tests.sessions.conftest import Recorder
from tests.support.fake_provider import FakeProvider, ToolCall
from tests.tools.conftest import ScriptedApprover

OLD_KEY = "sk-ant-file-key-old-0123456789"
NEW_KEY = "sk-ant-file-key-new-9876543210"


def counting(reads: list[Path]) -> Callable[[Path], str]:
    """:func:`key_file_text`, noting each path it reads."""
    def read(path: Path) -> str:
        reads.append(path)
        return key_file_text(path)
    return read


def later() -> int:
    """A clock for which every file was written long ago (none is too recent to be kept)."""
    return time.time_ns() + 10 * RECENT_CHANGE_NS


def test_a_key_file_is_read_again_only_once_it_changed(tmp_path: Path) -> None:
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(f"{OLD_KEY}\n")
    provider = ProviderSpec("anthropic", ApiKind.ANTHROPIC, api_key_file=str(key_file))
    reads: list[Path] = []
    ring = KeyRing({}, counting(reads), later)
    assert [ring.keys([provider]) for _ in range(5)] == [[OLD_KEY]] * 5
    assert reads == [key_file]
    rotated = tmp_path / "new.key"  # the same size, renamed over the old one
    rotated.write_text(f"{NEW_KEY}\n")
    os.replace(rotated, key_file)
    assert ring.keys([provider]) == [NEW_KEY] and ring.key(provider) == NEW_KEY
    assert len(reads) == 2
    key_file.unlink()
    assert ring.keys([provider]) == []


def test_a_key_file_changed_just_now_is_read_at_each_use(tmp_path: Path) -> None:
    """A rewrite in the same clock tick can leave size and times as they were: a key file
    that changed within the last moment is not trusted to be the one read."""
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(OLD_KEY)
    written = key_file.stat()
    provider = ProviderSpec("anthropic", ApiKind.ANTHROPIC, api_key_file=str(key_file))
    reads: list[Path] = []
    ring = KeyRing({}, counting(reads), time.time_ns)
    assert ring.key(provider) == OLD_KEY
    with key_file.open("r+") as handle:  # rewritten in place, its times put back
        handle.write(NEW_KEY)
    os.utime(key_file, ns=(written.st_atime_ns, written.st_mtime_ns))
    assert ring.key(provider) == NEW_KEY
    assert len(reads) == 2


async def test_a_turn_of_many_tool_calls_reads_the_key_file_once(
        tmp_path: Path, fake: FakeProvider, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each tool result and each call to the model masks every configured key: a provider
    whose key is in a file had it read at each of them (and at routing). Rotated between
    turns, the new key is sent and masked in the next one."""

    def elsewhere(path: Path) -> str:
        raise AssertionError(f"{path} read past the daemon's key ring")

    monkeypatch.setattr(keys, "key_file_text", elsewhere)  # routing, the adapter: the ring
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(OLD_KEY)
    (tmp_path / "config" / "models.yaml").write_text(
        f"providers:\n  anthropic: {{base_url: '{fake.anthropic_base_url}', "
        f"api_key_env: null, api_key_file: '{key_file}'}}\n")
    (tmp_path / "workspace" / "key.txt").write_text(f"{OLD_KEY} {NEW_KEY}\n")
    reads: list[Path] = []
    service = Switchman(Recorder(), config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ={},
                        approver=ScriptedApprover(), keys=KeyRing({}, counting(reads), later))
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    try:
        fake.script_tool_calls([ToolCall("read_file", {"path": "key.txt"}, id=f"toolu_{n}")
                                for n in range(3)])
        fake.script_tool_call("grep", {"pattern": "sk-"}, id="toolu_g")
        fake.script_text("Read.")
        first = await service.chat(workspace, None, "@sonnet read key.txt")
        assert first.status == "completed"
        assert reads == [key_file]
        assert {r.headers["authorization"] for r in fake.requests} == {f"Bearer {OLD_KEY}"}
        assert OLD_KEY not in repr(fake.requests[-1].body)
        rotated = tmp_path / "new.key"
        rotated.write_text(NEW_KEY)
        os.replace(rotated, key_file)
        fake.script_tool_call("read_file", {"path": "key.txt"}, id="toolu_r")
        fake.script_text("Read again.")
        second = await service.chat(workspace, None, "@sonnet again")
        assert second.status == "completed"
        assert reads == [key_file] * 2
        assert fake.requests[-1].headers["authorization"] == f"Bearer {NEW_KEY}"
        [result] = fake.requests[-1].body["messages"][-1]["content"]
        assert NEW_KEY not in result["content"] and "[redacted]" in result["content"]
    finally:
        service.store.db.close()
