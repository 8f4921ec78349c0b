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
from switchman.engine.keymask import KeyMask
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


def keyed_by_file(tmp_path: Path, fake: FakeProvider) -> Path:
    """Config, data and workspace folders in ``tmp_path``, Anthropic sent to ``fake`` with
    its key (:data:`OLD_KEY`) in a file; the key file."""
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(OLD_KEY)
    (tmp_path / "config" / "models.yaml").write_text(
        f"providers:\n  anthropic: {{base_url: '{fake.anthropic_base_url}', "
        f"api_key_env: null, api_key_file: '{key_file}'}}\n")
    return key_file


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
    key_file = keyed_by_file(tmp_path, fake)
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


def test_every_key_read_stays_masked_after_it_changed(tmp_path: Path) -> None:
    key_file = tmp_path / "anthropic.key"
    key_file.write_text(OLD_KEY)
    provider = ProviderSpec("anthropic", ApiKind.ANTHROPIC, api_key_file=str(key_file))
    other = ProviderSpec("openai", ApiKind.OPENAI, api_key_env="OPENAI_API_KEY")
    environ = {"OPENAI_API_KEY": "sk-openai-before-rotation"}
    ring = KeyRing(environ, key_file_text, later)
    assert ring.masked([provider, other]) == [OLD_KEY, "sk-openai-before-rotation"]
    key_file.write_text(NEW_KEY)
    environ["OPENAI_API_KEY"] = "sk-openai-after-rotation"
    assert ring.keys([provider, other]) == [NEW_KEY, "sk-openai-after-rotation"]
    assert set(ring.masked([provider])) == {OLD_KEY, NEW_KEY, "sk-openai-before-rotation",
                                            "sk-openai-after-rotation"}


def test_a_key_file_read_half_written_adds_no_key_of_its_own(tmp_path: Path) -> None:
    """A key file saved while a turn runs can be read between its truncation and the end of
    the write: that half (here only the public ``sk-ant-api03-`` every Anthropic key starts
    with) was remembered as a key, and masked as one for as long as the daemon ran, in every
    answer and in the code a model writes. A value that begins a key read later is that
    key half-written: only the key is masked."""
    key_file = tmp_path / "anthropic.key"
    key = "sk-ant-api03-Sx8Qw2Lm5Nc7Vb1Zr4Tk9Hd3Jf6Gy0Pa"
    provider = ProviderSpec("anthropic", ApiKind.ANTHROPIC, api_key_file=str(key_file))
    ring = KeyRing({}, key_file_text, time.time_ns)
    for written in ("", key[:13], key[:24], key, key[:13], key):
        key_file.write_text(written)
        ring.masked([provider])
    assert ring.masked([provider]) == [key]
    assert KeyMask(*ring.masked([provider])).mask(
        'if key.startswith("sk-ant-api03-"): ...') == 'if key.startswith("sk-ant-api03-"): ...'


async def test_a_rotated_key_stays_masked(tmp_path: Path, fake: FakeProvider) -> None:
    """A key rotated mid-session is still in the model's earlier context, in files and in
    commands' output: only the new key was masked, so the old one a model repeated, or a
    tool printed, reached the chat, the transcript, the database and the next request."""
    key_file = keyed_by_file(tmp_path, fake)
    (tmp_path / "workspace" / "old.txt").write_text(f"ANTHROPIC_API_KEY={OLD_KEY}\n")
    recorder = Recorder()
    service = Switchman(recorder, config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ={},
                        approver=ScriptedApprover(), keys=KeyRing({}, key_file_text, later))
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    try:
        fake.script_text("Hello.")
        assert (await service.chat(workspace, None, "@sonnet hi")).status == "completed"
        rotated = tmp_path / "new.key"
        rotated.write_text(NEW_KEY)
        os.replace(rotated, key_file)
        half = len(OLD_KEY) // 2
        fake.script_tool_calls(
            [ToolCall("grep", {"pattern": OLD_KEY}, id="toolu_g"),
             ToolCall("read_file", {"path": "old.txt"}, id="toolu_r")],
            text=("The old key was ", OLD_KEY[:half], OLD_KEY[half:], "."))
        fake.script_text("It is ", OLD_KEY, " still.")
        second = await service.chat(workspace, None, "@sonnet what was my key?")
        assert second.status == "completed"
        assert fake.requests[-1].headers["authorization"] == f"Bearer {NEW_KEY}"
        assert second.text == "The old key was [redacted].It is [redacted] still."
        [_, read] = fake.requests[-1].body["messages"][-1]["content"]
        assert "[redacted]" in read["content"]
        seen = repr([second, recorder.deltas, fake.requests[-1].body,
                     service.session(second.session_id)])
        database = b"".join(p.read_bytes() for p in (tmp_path / "data").glob("switchman.db*"))
        for key in (OLD_KEY, NEW_KEY):
            assert key not in seen and key.encode() not in database
    finally:
        service.store.db.close()


def test_the_model_list_and_status_ask_the_daemons_key_ring(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model list (``configured``) and the status bar's "no provider has an API key"
    notice read keys themselves, from the process's environment and the key files: a
    daemon given another environment (tests, embedders) listed its models as keyless, and
    each listing read every key file again, once per model."""
    def elsewhere(path: Path) -> str:
        raise AssertionError(f"{path} read past the daemon's key ring")

    monkeypatch.setattr(keys, "key_file_text", elsewhere)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    key_file = tmp_path / "openai.key"
    key_file.write_text(NEW_KEY)
    (tmp_path / "config" / "models.yaml").write_text(
        f"providers:\n  openai: {{api_key_env: null, api_key_file: '{key_file}'}}\n")
    reads: list[Path] = []
    service = Switchman(Recorder(), config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data",
                        environ={"ANTHROPIC_API_KEY": OLD_KEY},
                        keys=KeyRing({"ANTHROPIC_API_KEY": OLD_KEY}, counting(reads), later))
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    try:
        listed = service.models(workspace).models
        assert {m.provider for m in listed if m.configured} == {"anthropic", "openai"}
        assert service.models(workspace).models == listed
        assert reads == [key_file]
        assert OLD_KEY not in repr(listed) and NEW_KEY not in repr(listed)
        status = service.status(workspace)
        assert not any("API key" in banner for banner in status.banners)
    finally:
        service.store.db.close()
