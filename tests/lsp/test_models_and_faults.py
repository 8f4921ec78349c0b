"""Sticky models, status notifications, model listing, and provider faults end to end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from switchman.server import methods
from tests.lsp.conftest import LISTEN, Daemon, deltas, error_data
from tests.support.fake_provider import FakeProvider, Usage
from tests.support.lsp import CLIENTS, SwitchmanClient, running_server

HAIKU, SONNET, OPUS = ("anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6",
                       "anthropic:claude-opus-4-7")
GPT5 = "openai:gpt-5"


async def chat(client: SwitchmanClient, daemon: Daemon, message: str) -> Any:
    return await client.request(methods.CHAT, {"workspace": daemon.uri, "message": message})


def decisions(client: SwitchmanClient) -> list[dict[str, Any]]:
    return [n["decision"] for n in client.received[methods.ROUTE_DECIDED]]


async def test_status_is_sent_after_initialized(client: SwitchmanClient, daemon: Daemon) -> None:
    status = await client.wait_for(methods.STATUS, lambda s: s["workspace"] == daemon.uri)
    assert status["sticky_model"] is None
    assert status["turn_in_flight"] is False
    assert status["cost_today_usd"] == "0.000000"
    assert status["config_errors"] == 0
    assert status["banners"] == []


async def test_status_says_when_no_provider_has_a_key(daemon: Daemon) -> None:
    """A first run with no API key: the status bar said `auto` as if all were well, and the
    first message was refused. The status names the keys to set before anything is sent."""
    env = {k: v for k, v in daemon.env.items() if not k.endswith("_API_KEY")}
    async with running_server("visual-studio-code", env, [daemon.workspace], LISTEN) as client:
        status = await client.wait_for(methods.STATUS, lambda s: s["workspace"] == daemon.uri)
    assert status["banners"] == [
        "No provider has an API key, so every message will be refused: set ANTHROPIC_API_KEY "
        "or OPENAI_API_KEY (see 'switchman models')."]


async def test_set_model_applies_and_routes_the_next_turn(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    answer = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "opus"})
    assert answer["outcome"] == "applied"
    assert answer["sticky_model"] == OPUS
    # not chosen with /model: the message does not say to run /model - (the editor words it)
    assert answer["message"] == f"Sticky model set: {OPUS}. Your rules are skipped until you " \
                                "clear the sticky model."
    await client.wait_for(methods.STATUS, lambda s: s["sticky_model"] == OPUS)
    result = await chat(client, daemon, "write a commit message")  # a rule would pick haiku
    assert result["model"] == OPUS
    assert result["summary"] == "sticky model"
    cleared = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": None})
    assert (cleared["outcome"], cleared["sticky_model"]) == ("cleared", None)
    assert (await chat(client, daemon, "write a commit message"))["model"] == HAIKU


async def test_swaps_during_a_turn_are_queued_last_write_wins(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    stall = fake.script_stall("thinking", after_chunks=1)
    running = asyncio.ensure_future(chat(client, daemon, "hello"))
    assert await stall.wait_reached_async()
    first = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "opus"})
    second = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "haiku"})
    assert (first["outcome"], second["outcome"]) == ("queued", "queued")
    assert second["pending_swap"] == {"model": HAIKU}
    # the routing spec's banner word for word: the model by its full id
    assert second["message"] == f"Model swap pending: {HAIKU}. Applies to next turn."
    await client.wait_for(methods.STATUS, lambda s: s["pending_swap"] == {"model": HAIKU}
                          and s["turn_in_flight"])
    fake.release_stalls()
    result = await running
    assert result["model"] == SONNET  # the running turn kept its model
    await client.wait_for(methods.STATUS, lambda s: s["sticky_model"] == HAIKU
                          and s["pending_swap"] is None and not s["turn_in_flight"])
    assert (await chat(client, daemon, "next"))["model"] == HAIKU


async def test_undoing_a_queued_swap_mid_turn_leaves_nothing_pending(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    """Opus picked in the status bar while a turn runs, then "Follow my routing rules" to undo
    it: the status bar showed `→ auto` and "Sticky model will be cleared" of a session that
    had no sticky model, as if something would still change."""
    stall = fake.script_stall("thinking", after_chunks=1)
    running = asyncio.ensure_future(chat(client, daemon, "hello"))
    assert await stall.wait_reached_async()
    await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "opus"})
    undone = await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": None})
    assert (undone["outcome"], undone["pending_swap"]) == ("unchanged", None)
    assert undone["message"] == ("The change waiting for the running turn is dropped: there is "
                                 "still no sticky model (routing follows your rules).")
    await client.wait_for(methods.STATUS, lambda s: s["pending_swap"] is None
                          and s["turn_in_flight"])
    fake.release_stalls()
    await running
    assert (await chat(client, daemon, "next"))["model"] == SONNET


async def test_models_lists_state_and_prices(client: SwitchmanClient, daemon: Daemon) -> None:
    listing = await client.request(methods.MODELS, {"workspace": daemon.uri})
    models = {m["id"]: m for m in listing["models"]}
    opus = models[OPUS]
    assert opus["configured"] is True
    assert opus["availability"] == "healthy"
    assert opus["aliases"] == ["opus"]
    assert opus["pricing"]["input"] == "5.0"
    assert opus["capabilities"]["max_context_tokens"] == 200000


async def test_unknown_model_for_set_model(client: SwitchmanClient, daemon: Daemon) -> None:
    with pytest.raises(JsonRpcException) as caught:
        await client.request(methods.SET_MODEL, {"workspace": daemon.uri, "model": "opsu"})
    assert caught.value.code == 1004
    assert error_data(caught.value)["suggestions"][0] == "opus"


async def test_auth_error_makes_the_provider_unavailable_and_routing_falls_through(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("global_default: gpt-5\nrules:\n  - name: claude first\n"
                         "    use: sonnet\n")
    fake.script_error(401, "invalid x-api-key", model="claude-sonnet-4-6")
    failed = await chat(client, daemon, "hi")
    assert failed["status"] == "failed"
    assert "API key was refused" in failed["error"]["message"]
    status = await client.wait_for(methods.STATUS, lambda s: any(
        "anthropic provider currently unavailable" in b for b in s["banners"]))
    assert status["banners"]
    fake.script_text("from gpt", model="gpt-5")
    result = await chat(client, daemon, "hi again")
    assert result["model"] == GPT5
    decision = decisions(client)[-1]
    rejected = decision["chain"][2]
    assert (rejected["validation_failure"], rejected["outage_scope"]) == (
        "provider_unavailable", "provider")
    assert decision["banners"] == [
        f"anthropic provider currently unavailable. Routing fell through to {GPT5} "
        "(global default)."]
    assert len(decisions(client)) == 2  # exactly one route.decided per turn
    listing = await client.request(methods.MODELS, {"workspace": daemon.uri})
    assert {m["id"]: m["availability"] for m in listing["models"]}[HAIKU] == "unavailable"


async def test_five_server_errors_make_the_model_unavailable(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("global_default: gpt-5\nrules:\n  - name: sonnet\n    use: sonnet\n")
    for _ in range(15):
        fake.script_error(500, "boom", model="claude-sonnet-4-6")
    first = await chat(client, daemon, "one")  # three attempts (two retries): one failed call
    assert first["status"] == "failed"
    retries = [d for d in deltas(client, first["turn_id"], "notice") if "Retrying" in d["text"]]
    assert len(retries) == 2
    second = await chat(client, daemon, "two")
    assert (second["status"], second["model"]) == ("failed", SONNET)  # retries are not failures
    for n in range(3):  # the fifth failed call marks the model unavailable
        assert (await chat(client, daemon, f"again {n}"))["status"] == "failed"
    assert len([r for r in fake.requests if r.model == "claude-sonnet-4-6"]) == 15
    fake.script_text("hello from gpt", model="gpt-5")
    third = await chat(client, daemon, "three")
    assert third["model"] == GPT5
    rejected = decisions(client)[-1]["chain"][2]
    assert (rejected["validation_failure"], rejected["outage_scope"]) == (
        "provider_unavailable", "model")
    await client.wait_for(methods.STATUS, lambda s: s["active_model"] == GPT5 and any(
        f"{SONNET} currently unavailable." in b for b in s["banners"]))
    assert len(decisions(client)) == 6


@pytest.mark.parametrize("editor", CLIENTS)
async def test_without_keys_no_model_is_available(editor: str, daemon: Daemon) -> None:
    env = {k: v for k, v in daemon.env.items() if not k.endswith("_API_KEY")}
    async with running_server(editor, env, workspaces=[daemon.workspace]) as client:
        with pytest.raises(JsonRpcException) as caught:
            await client.request(methods.CHAT, {"workspace": daemon.uri, "message": "hello"})
    error = caught.value
    assert error.code == 1006
    assert error_data(error)["code"] == "no_model_available"
    assert error_data(error)["decision"]["chosen_model"] is None
    assert "Set ANTHROPIC_API_KEY" in error.message
    assert error_data(error)["text"].startswith("Turn ")


async def test_todays_spend_feeds_the_budget_condition(
        client: SwitchmanClient, daemon: Daemon, fake: FakeProvider) -> None:
    daemon.write_routing("global_default: sonnet\nrules:\n  - name: budget cap\n"
                         "    when: {cost_today_exceeds_usd: 0.01}\n    use: haiku\n")
    fake.script_text("expensive", usage=Usage(input_tokens=5000, output_tokens=1000))
    first = await chat(client, daemon, "hello")
    assert first["model"] == SONNET
    assert first["cost_usd"] == "0.030000"  # 5000 * $3/M + 1000 * $15/M
    status = await client.wait_for(methods.STATUS, lambda s: s["cost_today_usd"] == "0.030000")
    assert status["workspace"] == daemon.uri
    second = await chat(client, daemon, "hello again")
    assert (second["model"], second["summary"]) == (HAIKU, "rule: budget cap")
    assert second["banners"] == ['Daily budget $0.01 exceeded ($0.03 today). Routing per '
                                 '"budget cap" rule.']
