"""Files and selections attached to a chat message: sent to the model, counted for routing."""

from __future__ import annotations

from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from switchman.engine.sessions.attachments import MAX_ATTACHMENT_BYTES
from switchman.server import methods
from tests.lsp.conftest import Daemon, error_data
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import SwitchmanClient

HAIKU, OPUS = "anthropic:claude-haiku-4-5", "anthropic:claude-opus-4-7"


async def chat(client: SwitchmanClient, daemon: Daemon, message: str,
               attachments: list[dict[str, Any]]) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message,
                                               "attachments": attachments})


async def test_a_selection_and_a_file_reach_the_model_and_the_transcript(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    (daemon.workspace / "db").mkdir()
    (daemon.workspace / "db" / "q.sql").write_text("SELECT * FROM users;\n", "utf-8")
    daemon.write_routing("rules:\n  - name: sql\n    when: {file_extensions_in_context: [sql]}\n"
                         "    use: haiku\n")
    fake.script_text("It selects every user.")
    selection = {"kind": "selection", "uri": (daemon.workspace / "src" / "app.py").as_uri(),
                 "text": "    return 42  # unsaved", "start_line": 2, "end_line": 2}
    result = await chat(client, daemon, "explain these", [
        selection, {"uri": (daemon.workspace / "db" / "q.sql").as_uri()}])
    assert result["model"] == HAIKU  # the attached .sql file counts in files_touched
    assert result["summary"] == "rule: sql"
    sent = str(fake.requests[0].body["messages"])
    assert "Attached selection src/app.py (lines 2-2)" in sent
    assert "return 42  # unsaved" in sent
    assert "Attached file db/q.sql" in sent and "SELECT * FROM users;" in sent
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    user = next(m for m in detail["messages"] if m["role"] == "user")
    assert user["content"][0] == {"type": "text", "text": "explain these"}
    assert [(b["type"], b["kind"], b["path"]) for b in user["content"][1:]] == [
        ("attachment", "selection", "src/app.py"), ("attachment", "file", "db/q.sql")]


async def test_attached_text_counts_in_estimated_input_tokens(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("rules:\n  - name: big\n    when: {estimated_input_tokens_gt: 20000}\n"
                         "    use: opus\n")
    fake.script_text("short")
    small = await chat(client, daemon, "hi", [])
    fake.script_text("long")
    big = await chat(client, daemon, "summarise", [{
        "kind": "selection", "uri": (daemon.workspace / "src" / "app.py").as_uri(),
        "text": "word " * 20000, "start_line": 1, "end_line": 400}])
    assert small["model"] != OPUS
    assert (big["model"], big["summary"]) == (OPUS, "rule: big")


async def test_a_preview_routes_a_draft_with_its_attachments_as_the_chat_does(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    (daemon.workspace / "db").mkdir()
    (daemon.workspace / "db" / "q.sql").write_text("SELECT * FROM users;\n", "utf-8")
    daemon.write_routing("rules:\n  - name: big\n    when: {estimated_input_tokens_gt: 20000}\n"
                         "    use: opus\n  - name: sql\n"
                         "    when: {file_extensions_in_context: [sql]}\n    use: haiku\n")
    big = {"kind": "selection", "uri": (daemon.workspace / "src" / "app.py").as_uri(),
           "text": "word " * 20000, "start_line": 1, "end_line": 400}
    sql = {"uri": (daemon.workspace / "db" / "q.sql").as_uri()}

    async def preview(attachments: list[dict[str, Any]]) -> Any:
        return await client.request(methods.PREVIEW, {"workspace": daemon.uri,
                                                      "message": "summarise",
                                                      "attachments": attachments})

    assert (await preview([]))["model"] not in (OPUS, HAIKU)
    assert ((await preview([big]))["model"], (await preview([big]))["summary"]) == (
        OPUS, "rule: big")
    assert ((await preview([sql]))["model"], (await preview([sql]))["summary"]) == (
        HAIKU, "rule: sql")
    fake.script_text("long")
    sent = await chat(client, daemon, "summarise", [big])
    assert (sent["model"], sent["summary"]) == (OPUS, "rule: big")  # where the preview said
    with pytest.raises(JsonRpcException) as refused:
        await preview([{"uri": "file:///etc/passwd"}])
    assert "outside the workspace" in str(refused.value)


@pytest.mark.parametrize(("attachment", "expected"), [
    ({"uri": "file:///etc/passwd"}, "outside the workspace"),
    ({"uri": "https://example.com/x.py"}, "not a file URI"),
    ({"uri": "file:///nowhere/x.py", "kind": "selection"}, "outside the workspace"),
    ({"uri": "src/app.py", "kind": "selection", "text": "x", "start_line": 0, "end_line": 2},
     "counted from 1 with end_line not before start_line (got 0 and 2)"),
    ({"uri": "src/app.py", "kind": "selection", "text": "x", "start_line": 3, "end_line": 1},
     "(got 3 and 1)"),
    ({"uri": "src/app.py", "kind": "selection", "text": "x", "start_line": 3}, "both or neither"),
    ({"uri": ".git/config"}, "/.git/config is inside .git/, which Switchman does not read; "
                             "attach its text instead."),
])
async def test_an_unusable_attachment_is_a_clear_error(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        attachment: dict[str, Any], expected: str) -> None:
    if attachment["uri"] in ("src/app.py", ".git/config"):  # a file of the workspace
        (daemon.workspace / ".git").mkdir()
        (daemon.workspace / ".git" / "config").write_text("[remote]\n", "utf-8")
        attachment = {**attachment, "uri": (daemon.workspace / attachment["uri"]).as_uri()}
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "look", [attachment])
    assert error_data(caught.value)["code"] == "invalid_attachment"
    assert expected in caught.value.message
    assert fake.requests == []


async def test_a_big_file_is_attached_by_its_beginning_without_reading_it_whole(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """The daemon read an attached file whole, on its event loop (a 1 GB log froze every
    request for seconds); now it reads only what can be attached. The file's end is not
    UTF-8: read whole, it would be refused."""
    log = daemon.workspace / "build.log"
    log.write_bytes(b"step ok\n" * (MAX_ATTACHMENT_BYTES // 8 + 1000) + b"\xff\xfe broken tail")
    fake.script_text("It is a build log.")
    result = await chat(client, daemon, "what is this?", [{"kind": "file", "uri": log.as_uri()}])
    assert result["status"] == "completed"
    sent = str(fake.requests[0].body["messages"])
    assert "Attached file build.log" in sent and "step ok" in sent and "broken tail" not in sent
    detail = await client.request(methods.SESSION, {"session_id": result["session_id"]})
    block = next(b for m in detail["messages"] for b in m["content"] if b["type"] == "attachment")
    assert block["truncated"] is True


@pytest.mark.parametrize(("content", "expected"), [
    (b"h\0e\0l\0l\0o\0", "x.dat is a binary file; only text files can be attached."),
    (b"caf\xe9\n", "x.dat is not a UTF-8 text file."),
])
async def test_a_file_that_is_not_text_is_refused(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, content: bytes,
        expected: str) -> None:
    (daemon.workspace / "x.dat").write_bytes(content)
    with pytest.raises(JsonRpcException) as caught:
        await chat(client, daemon, "look", [{"uri": (daemon.workspace / "x.dat").as_uri()}])
    assert error_data(caught.value)["code"] == "invalid_attachment"
    assert expected in caught.value.message
    assert fake.requests == []


@pytest.mark.parametrize("kind", ["file", "selection"])
async def test_the_editors_text_of_a_binary_file_is_refused_as_the_file_is(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, kind: str) -> None:
    """An editor that has the file open sends its text; a NUL in it is refused as a NUL in
    the file is (a client asks with ``switchman/preview`` before it attaches the file)."""
    blob = {"kind": kind, "uri": (daemon.workspace / "blob.bin").as_uri(),
            "text": "PK\u0003\u0004\u0000\u0000 bytes", "start_line": 1, "end_line": 1}
    for method in (methods.PREVIEW, methods.CHAT):
        with pytest.raises(JsonRpcException) as caught:
            await client.request(method, {"workspace": daemon.uri, "message": "look",
                                          "attachments": [blob]})
        assert error_data(caught.value)["code"] == "invalid_attachment"
        assert "blob.bin is a binary file; only text files can be attached." in (
            caught.value.message)
    assert fake.requests == []
