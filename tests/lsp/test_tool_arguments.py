"""A malformed tool argument is an error result the model can correct, never a failed turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from switchman.server import methods
from tests.lsp.conftest import Daemon, deltas
from tests.support.fake_provider import FakeProvider, ToolCall
from tests.support.lsp import SwitchmanClient


@pytest.mark.parametrize(("arguments", "expected"), [
    ({"path": "src/app.py", "start_line": "abc"}, "'start_line' must be a whole number"),
    ({"path": "src/\u0000app.py"}, "NUL character"),
])
async def test_a_malformed_argument_goes_back_to_the_model(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        arguments: dict[str, Any], expected: str) -> None:
    fake.script_tool_call("read_file", arguments, id="toolu_bad")
    fake.script_text("Let me fix that.")
    result = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                 "message": "read app.py"})
    assert result["status"] == "completed"
    assert result["text"] == "Let me fix that."
    assert deltas(client, result["turn_id"], "tool_result")[0]["tool"]["status"] == "error"
    returned = fake.requests[1].body["messages"][-1]["content"][0]
    assert returned["is_error"] is True
    assert expected in str(returned["content"])


async def test_arguments_that_are_not_json_are_named_to_the_model(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """An OpenAI-style call whose arguments are cut-off JSON was answered "A 'path' argument
    (text) is required.", which sends the model looking for the wrong mistake."""
    fake.script_tool_calls([ToolCall("read_file", id="call_bad",
                                     argument_chunks=('{"path": "src', '/app.py"'))],
                           model="gpt-5")
    fake.script_text("Let me fix that.", model="gpt-5")
    result = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                 "message": "@gpt-5 read app.py"})
    assert (result["status"], result["text"]) == ("completed", "Let me fix that.")
    [shown] = deltas(client, result["turn_id"], "tool_result")
    assert shown["tool"]["status"] == "error"
    returned = fake.requests[1].body["messages"][-1]
    assert returned["role"] == "tool"
    assert returned["content"].startswith(
        "The arguments of this read_file call are not a JSON object: "
        "'{\"path\": \"src/app.py\"'.")


async def test_arguments_with_a_number_too_long_for_python_are_named_to_the_model(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """An integer of more than 4,300 digits in an OpenAI-style call's arguments: reading them
    raised a bare ValueError (Python's digit limit), and the turn failed as a Switchman bug."""
    arguments = '{"path": "src/app.py", "start_line": ' + "9" * 5000 + "}"
    fake.script_tool_calls([ToolCall("read_file", id="call_long",
                                     argument_chunks=(arguments[:30], arguments[30:]))],
                           model="gpt-5")
    fake.script_text("Let me fix that.", model="gpt-5")
    result = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                 "message": "@gpt-5 read app.py"})
    assert (result["status"], result["text"]) == ("completed", "Let me fix that.")
    assert deltas(client, result["turn_id"], "tool_result")[0]["tool"]["status"] == "error"
    returned = fake.requests[1].body["messages"][-1]
    assert returned["content"].startswith(
        "The arguments of this read_file call are not a JSON object")


async def test_a_tool_call_without_an_id_gets_one_the_history_keeps(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """An OpenAI-compatible server that sends its tool calls without an id: the call and its
    result were kept with the id "": two calls could not be told apart, and the history sent
    to Anthropic (@sonnet later in the session) held ids its API does not take."""
    (daemon.workspace / "src" / "app.py").write_text("print('hi')\n", "utf-8")
    fake.script_tool_calls([ToolCall("read_file", {"path": "src/app.py"}, id=""),
                            ToolCall("list_files", {"path": "src"}, id="")], model="gpt-5")
    fake.script_text("Read it.", model="gpt-5")
    fake.script_text("Still here.", model="claude-sonnet-4-6")
    first = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                "message": "@gpt-5 read app.py"})
    assert first["status"] == "completed"
    called, answered = fake.requests[1].body["messages"][-3:-1], fake.requests[1].body[
        "messages"][-2:]
    ids = [c["id"] for c in called[0]["tool_calls"]]
    assert all(ids) and len(set(ids)) == 2
    assert [m["tool_call_id"] for m in answered] == ids
    second = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                 "message": "@sonnet and now?"})
    assert second["status"] == "completed"
    history = fake.requests[2].body["messages"]
    uses = [b["id"] for m in history for b in m["content"] if b.get("type") == "tool_use"]
    results = [b["tool_use_id"] for m in history for b in m["content"]
               if b.get("type") == "tool_result"]
    assert uses == ids and results == ids


@pytest.mark.parametrize("ids", [("call_a", "call_b"), ("", "")])
async def test_tool_calls_streamed_without_an_index_are_told_apart(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider,
        ids: tuple[str, str]) -> None:
    """An OpenAI-compatible server whose tool-call chunks have no ``index``: every chunk was
    taken for the first call's, so two calls became one (the second's name, both argument
    strings run together, which no tool could read). With ids, a new id starts another
    call; with none either, a chunk naming a function once the latest call's arguments are
    complete JSON does, and arguments alone continue the latest."""
    (daemon.workspace / "src" / "app.py").write_text("print('hi')\n", "utf-8")
    fake.script_tool_calls([
        ToolCall("read_file", id=ids[0], indexed=False,
                 argument_chunks=('{"path": ', '"src/app.py"', "}")),
        ToolCall("list_files", {"path": "src"}, id=ids[1], indexed=False)], model="gpt-5")
    fake.script_text("Read it.", model="gpt-5")
    done = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                               "message": "@gpt-5 read app.py"})
    assert done["status"] == "completed"
    sent = fake.requests[1].body["messages"]
    called = next(m for m in sent if m.get("tool_calls"))
    answered = [m for m in sent if m["role"] == "tool"]
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"]))
            for c in called["tool_calls"]] == [("read_file", {"path": "src/app.py"}),
                                               ("list_files", {"path": "src"})]
    sent_ids = [c["id"] for c in called["tool_calls"]]
    assert all(sent_ids) and len(set(sent_ids)) == 2
    if all(ids):  # the server's own, else one given each
        assert sent_ids == list(ids)
    assert [m["tool_call_id"] for m in answered] == sent_ids
    assert "print('hi')" in answered[0]["content"] and "app.py" in answered[1]["content"]
    shown = [d["tool"]["name"] for d in deltas(client, done["turn_id"], "tool_call")]
    assert shown == ["read_file", "list_files"]
