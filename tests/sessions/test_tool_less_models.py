"""A model that cannot call tools (``supports_tools: false``, as many small local models)
takes the turns of a profile that offers no tools, and only those."""

from __future__ import annotations

from tests.sessions.conftest import Engine
from tests.support.fake_provider import FakeProvider

TINY = "anthropic:tiny-local"


def tool_less_model_and_profile(engine: Engine) -> None:
    config = engine.service.config.directory
    with (config / "models.yaml").open("a", encoding="utf-8") as models:
        models.write(f"models:\n  {TINY}:\n    aliases: [tiny]\n    capabilities: "
                     "{max_context_tokens: 100000, supports_tools: false}\n")
    (config / "profiles.yaml").write_text("profiles:\n  chat:\n    tools: []\n", "utf-8")


async def test_a_profile_without_tools_lets_a_tool_less_model_answer(
        engine: Engine, fake: FakeProvider) -> None:
    """The turn was always said to send tool definitions, so such a model was turned down
    even under a profile that offers none: it could never be used."""
    tool_less_model_and_profile(engine)
    service = engine.service
    await service.set_profile(engine.workspace, None, "chat")
    fake.script_text("hello")
    answered = await service.chat(engine.workspace, None, "@tiny hi")
    assert (answered.status, answered.model) == ("completed", TINY)
    assert "tools" not in fake.requests[-1].body


async def test_a_turn_that_offers_tools_still_turns_a_tool_less_model_down(
        engine: Engine, fake: FakeProvider) -> None:
    tool_less_model_and_profile(engine)
    fake.script_text("from the default")
    answered = await engine.service.chat(engine.workspace, None, "@tiny hi")
    assert answered.model != TINY and answered.status == "completed"
    assert any(f"{TINY} cannot call tools, and this turn offers them (a profile with tools: "
               "[] offers none)" in banner for banner in answered.banners), answered.banners
    assert fake.requests[-1].body["tools"]
