"""What the editor shows when a provider fails: the provider's words, and why no retry."""

from __future__ import annotations

import socket

import pytest
from pygls.exceptions import JsonRpcException

from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon, deltas
from tests.support.fake_provider import FakeProvider
from tests.support.lsp import SwitchmanClient, running_server


async def test_a_server_error_shows_the_providers_message(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    for _ in range(3):
        fake.script_error(500, "The model backend is restarting")
    result = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hi"})
    message = result["error"]["message"]
    assert message == ("anthropic:claude-sonnet-4-6: server error (500): The model backend is "
                       "restarting. Your message is saved; send it again to retry.")
    for notice in deltas(client, result["turn_id"], "notice"):
        assert "Error code" not in notice["text"] and "{" not in notice["text"]


async def test_a_long_retry_after_fails_at_once_and_says_so(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    fake.script_error(429, "Too many requests", retry_after=120)
    result = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hi"})
    assert result["status"] == "failed"
    assert "the provider asked to wait 120 s before trying again, longer than the 30 s " \
        "Switchman waits within a turn" in result["error"]["message"]
    assert len(fake.requests) == 1  # no retry, no waiting


async def test_a_message_sent_again_after_a_failure_reaches_the_model_once(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    for _ in range(3):
        fake.script_error(500, "The model backend is restarting")
    params = {"workspace": daemon.uri, "message": "explain this",
              "attachments": [{"kind": "selection", "uri": (daemon.workspace / "src" / "app.py")
                               .as_uri(), "text": "def main():", "start_line": 1,
                               "end_line": 1}]}
    failed = await client.request(methods.CHAT, params)
    assert failed["status"] == "failed"
    fake.script_text("It defines main.")
    retried = await client.request(methods.CHAT, params)
    assert retried["status"] == "completed"
    sent = fake.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user"]
    texts = [b["text"] for b in sent[0]["content"]]
    assert texts.count("explain this") == 1 and sum("def main():" in t for t in texts) == 1
    session = await client.request(methods.SESSION, {"session_id": retried["session_id"]})
    assert [m["role"] for m in session["messages"]] == ["user", "user", "assistant"]


async def test_an_unreachable_provider_reads_as_one_sentence_then_the_advice(
        daemon: Daemon, fake: FakeProvider) -> None:
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    (daemon.config / "models.yaml").write_text(
        f"providers:\n  openai: {{base_url: 'http://127.0.0.1:{port}/v1'}}\n", "utf-8")
    async with running_server("neovim", daemon.env, [daemon.workspace], LISTEN) as client:
        result = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                     "message": "@gpt-5 hi"})
    message = result["error"]["message"]
    # The address is named: a mistyped base_url in models.yaml is seen at once.
    assert message.startswith(f"openai:gpt-5: could not reach the provider at "
                              f"http://127.0.0.1:{port}/v1 (network error): ")
    assert message.endswith(". Your message is saved; send it again to retry.")
    assert ".." not in message  # the SDK's "Connection error." ran into ". Your message"


async def test_after_a_refused_key_is_fixed_sending_again_goes_through(
        daemon: Daemon, fake: FakeProvider) -> None:
    """"The API key was refused — check it … send it again to retry": once the key file was
    fixed, sending again still failed for five minutes (the provider stayed unavailable)."""
    key_file = daemon.config / "anthropic.key"
    key_file.write_text("sk-ant-mistyped-0000000000000", "utf-8")
    (daemon.config / "models.yaml").write_text(
        f"providers:\n  anthropic: {{base_url: '{fake.anthropic_base_url}', "
        f"api_key_env: null, api_key_file: '{key_file}'}}\n", "utf-8")
    async with running_server("neovim", daemon.env, workspaces=[daemon.workspace],
                              listen=LISTEN) as client:
        fake.script_error(401, "invalid x-api-key")
        refused = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                      "message": "hello"})
        assert "the API key was refused" in refused["error"]["message"]
        with pytest.raises(JsonRpcException) as still_out:  # the same key: no call is made
            await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hello"})
        assert "anthropic provider currently unavailable" in str(still_out.value)
        key_file.write_text("sk-ant-fixed-11111111111111111", "utf-8")
        fake.script_text("hi there")
        again = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                    "message": "hello"})
        assert (again["status"], again["text"]) == ("completed", "hi there")
        assert fake.requests[-1].headers["authorization"] == "Bearer sk-ant-fixed-11111111111111111"
        assert len(fake.requests) == 2


async def test_a_retry_notice_reads_as_one_sentence(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """The provider's message ending with a full stop read "…restarting.. Retrying (1/2)…"
    (as the SDK's own "Connection error." did after a dropped connection)."""
    fake.script_error(500, "The model backend is restarting.")
    fake.script_text("back")
    result = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hi"})
    assert result["status"] == "completed"
    (notice,) = [d["text"] for d in deltas(client, result["turn_id"], "notice")]
    assert notice == ("anthropic:claude-sonnet-4-6: server error (500): The model backend is "
                      "restarting. Retrying (1/2)…")


@pytest.mark.parametrize("model", ["sonnet", "gpt-5"])
async def test_an_answer_cut_off_by_the_output_limit_says_so(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider, model: str) -> None:
    """An answer the provider stopped at its output limit (Anthropic `max_tokens`, OpenAI
    `length`) ended like a finished one: nothing told the user the rest was missing."""
    fake.script_text("The first half of a long ", stop_reason="max_tokens")
    result = await client.request(methods.CHAT, {"workspace": daemon.uri,
                                                 "message": f"@{model} explain everything"})
    assert result["status"] == "completed"
    notices = [d["text"] for d in deltas(client, result["turn_id"], "notice")]
    assert notices == ["The answer reached the model's output limit and was cut off here; "
                       "send \"continue\" for the rest."]
    fake.script_text("A short answer.")
    done = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "thanks"})
    assert deltas(client, done["turn_id"], "notice") == []


async def test_an_answer_with_nothing_in_it_says_so(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """A provider that ended its answer without any text or tool call left the chat with a
    badge, a cost line and nothing between them."""
    fake.script_text()
    result = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hello?"})
    assert (result["status"], result["text"]) == ("completed", "")
    notices = [d["text"] for d in deltas(client, result["turn_id"], "notice")]
    assert notices == ["The model ended its answer without writing anything; send the message "
                       "again, or try another model (@alias)."]
    fake.script_tool_call("read_file", {"path": "src/app.py"})
    fake.script_text()  # after a tool step, saying nothing more is an answer
    done = await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "read it"})
    assert deltas(client, done["turn_id"], "notice") == []
