"""/route override and /route ignore (spec §5.6 and §10), through the engine's service."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from switchman.engine.availability import MODEL_FAILURE_THRESHOLD, ErrorClass
from switchman.engine.learning import database
from switchman.engine.learning.evaluator import NextAction
from switchman.engine.messages import AttachmentRequest, ImageBlock
from switchman.engine.patterns import FixedPatternStore, PatternRecommendation
from switchman.engine.routing.decision import ValidationFailure, Verdict
from switchman.engine.service import Switchman
from switchman.engine.sessions.records import TurnResult
from tests.conftest import models_yaml
from tests.sessions.conftest import Recorder
from tests.support.fake_provider import FakeProvider, Reply, Stall
from tests.tools.conftest import ScriptedApprover

HAIKU, SONNET = "anthropic:claude-haiku-4-5", "anthropic:claude-sonnet-4-6"
POLICY = ("pattern_disagreement: {surface: true}\nrules:\n  - name: fast for commits\n"
          "    when: {message_matches: '^/commit'}\n    use: haiku\n")


def suggesting(tmp_path: Path, fake: FakeProvider,
               model: str) -> tuple[Switchman, Recorder, str]:
    """An engine whose pattern store suggests ``model``; only Anthropic has a key."""
    for name in ("config", "data", "workspace"):
        (tmp_path / name).mkdir()
    (tmp_path / "config" / "models.yaml").write_text(models_yaml(fake))
    (tmp_path / "config" / "routing.yaml").write_text(POLICY)
    recorder = Recorder()
    store = FixedPatternStore(PatternRecommendation(model, 0.9, 0.87, 23, []))
    service = Switchman(recorder, config_folder=tmp_path / "config",
                        data_folder=tmp_path / "data", environ={"ANTHROPIC_API_KEY": "k"},
                        patterns=store, approver=ScriptedApprover())
    workspace = service.open_workspace(str(tmp_path / "workspace"))
    return service, recorder, workspace


@pytest.fixture
def engine(tmp_path: Path, fake: FakeProvider) -> tuple[Switchman, Recorder, str]:
    return suggesting(tmp_path, fake, SONNET)


async def test_override_runs_the_last_message_on_the_suggested_model(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    service, recorder, workspace = engine
    fake.script_text("short")
    first = await service.chat(workspace, None, "/commit fix the auth bug")
    assert first.model == HAIKU
    assert "/route override" in first.banners[0]
    fake.script_text("a better commit message")
    again = await service.chat(workspace, None, "/route override")
    assert (again.kind, again.model, again.text) == ("turn", SONNET, "a better commit message")
    assert fake.requests[1].body["messages"][-1]["content"][0]["text"] == \
        "/commit fix the auth bug"
    overridden = service.store.events(kind="route.overridden")
    assert [(e["from_model"], e["to_model"]) for e in overridden] == [(HAIKU, SONNET)]
    assert (overridden[0]["turn_id"], overridden[0]["original_turn_id"]) == \
        (again.turn_id, first.turn_id)  # the re-run, and the turn it replaces
    assert len(recorder.notices) == 2  # one route.decided per turn, the re-run included
    await service.learning.written()  # patterns.db is written on a thread of its own
    rows = {r.model: r for r in database.rows(service.patterns.connection)}
    assert rows[HAIKU].evidence.next_action is NextAction.OVERRIDDEN  # 000 §5.7 feeds learning
    assert rows[HAIKU].success == pytest.approx(0.1)
    assert rows[SONNET].evidence.status == "completed"


async def test_the_rerun_says_it_was_route_override_not_an_alias_the_user_typed(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    service, _, workspace = engine
    fake.script_text("short")
    await service.chat(workspace, None, "/commit fix the auth bug")
    fake.script_text("a better commit message")
    again = await service.chat(workspace, None, "/route override")
    assert again.summary == "/route override"  # the badge; before: "override @sonnet"
    explained = service.explain(workspace, None, again.turn_id)
    assert explained.summary == "/route override" and explained.text is not None
    assert "Chose: anthropic:claude-sonnet-4-6 (/route override (the pattern store's suggestion))" \
        in explained.text
    assert "@sonnet" not in explained.text
    detail = service.session(again.session_id)  # the model read the message it ran again
    assert [m["content"][0]["text"] for m in detail.messages if m["role"] == "user"] == [
        "/commit fix the auth bug", "/route override"]


async def test_the_same_message_sent_again_with_an_alias_counts_as_rerouted(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    """The transcript keeps ``@sonnet``; the comparison with the previous message does not."""
    service, _, workspace = engine
    for message in ("/commit fix the auth bug", "@sonnet /commit fix the auth bug"):
        fake.script_text("meh")
        await service.chat(workspace, None, message)
    await service.learning.written()
    first, second = database.rows(service.patterns.connection)
    assert (first.model, second.model) == (HAIKU, SONNET)
    assert first.evidence.next_action is NextAction.REROUTED
    assert first.success == pytest.approx(0.1)
    assert first.message_hash == second.message_hash


async def test_ignore_records_the_dismissal(engine: tuple[Switchman, Recorder, str],
                                           fake: FakeProvider) -> None:
    service, _, workspace = engine
    fake.script_text("ok")
    await service.chat(workspace, None, "/commit fix the auth bug")
    answer = await service.chat(workspace, None, "/route ignore")
    assert answer.kind == "command"
    assert answer.text == f"Dismissed the suggestion to use {SONNET}."
    assert [e["suggested_model"] for e in service.store.events(
        kind="pattern.override_dismissed")] == [SONNET]
    assert len(fake.requests) == 1
    await service.learning.written()
    [row] = database.rows(service.patterns.connection)
    assert (row.model, row.evidence.next_action) == (HAIKU, NextAction.DISMISSED)
    assert row.success == pytest.approx(0.9)


async def test_the_answers_to_a_suggestion_are_found_by_their_turn(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    """route.overridden and pattern.override_dismissed carry their turn in the payload; the
    events table's turn column (which lookups by turn use) was left empty for them."""
    service, _, workspace = engine
    fake.script_text("short")
    first = await service.chat(workspace, None, "/commit fix the auth bug")
    await service.chat(workspace, None, "/route ignore")
    fake.script_text("better")
    again = await service.chat(workspace, None, "/route override")
    rows = service.store.db.execute(
        "SELECT type, turn_id FROM events WHERE type IN ('route.overridden', "
        "'pattern.override_dismissed') ORDER BY id").fetchall()
    assert [tuple(r) for r in rows] == [("pattern.override_dismissed", first.turn_id),
                                        ("route.overridden", again.turn_id)]


async def answered_then_stalled(service: Switchman, fake: FakeProvider, workspace: str,
                                message: str) -> tuple[TurnResult, asyncio.Future[TurnResult]]:
    """A turn answered ("/commit fix the auth bug"), then ``message`` sent: its turn, still
    running, stalls after its first chunk."""
    fake.script_text("meh")
    first = await service.chat(workspace, None, "/commit fix the auth bug")
    stall = Stall(after_chunks=1)
    fake.script(Reply(text=("still ", "thinking"), fault=stall))
    running = asyncio.ensure_future(service.chat(workspace, None, message))
    assert await stall.wait_reached_async()
    return first, running


async def test_a_resent_message_is_judged_on_disk_while_its_turn_still_runs(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    """What a new message says about the turn before it ("resent") waited in memory for the
    next write, the new turn's own row at its end: a daemon killed during that turn lost it,
    and the answer the user re-asked for kept its score. It is written while the turn runs
    (after ``held_seconds``; 0 here), off the way to the first token."""
    service, _, workspace = engine
    service.learning.held_seconds = 0
    first, again = await answered_then_stalled(service, fake, workspace,
                                               "/commit fix the auth bug")
    await service.learning.settled(None)  # the writes handed over so far (none held back)
    (row,) = database.rows(service.patterns.connection)
    assert (row.turn_id, row.evidence.next_action) == (first.turn_id, NextAction.RESENT)
    fake.release_stalls()
    assert (await again).status == "completed"


async def test_the_same_words_about_another_attachment_are_a_new_request(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider, tmp_path: Path) -> None:
    """"explain this" about one selection, then "explain this" about another, counted as the
    same message re-sent: the first answer's score was capped at 0.1, as if the user had
    re-asked it, though they had moved on. What a message attached (files, selections,
    images) is part of it; the same words with the same attachment again still count."""
    service, _, workspace = engine
    lines = {1: "def a():", 4: "def b():"}

    def selection(line: int) -> list[AttachmentRequest]:
        return [AttachmentRequest(uri=(tmp_path / "workspace" / "app.py").as_uri(),
                                  kind="selection", text=lines[line], start_line=line,
                                  end_line=line)]

    image = ImageBlock("image/png", "iVBORw0KGgo=")
    for attached in (selection(1), selection(4), selection(4), []):
        fake.script_text("an answer")
        await service.chat(workspace, None, "explain this", attachments=attached)
    fake.script_text("an answer")
    await service.chat(workspace, None, "explain this", images=[image])
    # the whole file, sent again after the answer changed it: the same request again
    whole = (tmp_path / "workspace" / "app.py").as_uri()
    for text in ("def a():\n    pass\n", "def a():\n    return 1\n"):
        fake.script_text("an answer")
        await service.chat(workspace, None, "fix the failing test",
                           attachments=[AttachmentRequest(uri=whole, text=text)])
    await service.learning.written()
    actions = [r.evidence.next_action for r in database.rows(service.patterns.connection)]
    assert actions == [NextAction.MOVED_ON, NextAction.RESENT, NextAction.MOVED_ON,
                       NextAction.MOVED_ON, NextAction.MOVED_ON, NextAction.RESENT, None]


async def test_a_resent_message_and_a_model_change_count_against_the_last_answer(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    service, _, workspace = engine
    for _ in range(2):
        fake.script_text("meh")
        await service.chat(workspace, None, "/commit fix the auth bug")
    await service.set_model(workspace, None, "sonnet")
    await service.learning.written()
    first, second = database.rows(service.patterns.connection)
    assert first.evidence.next_action is NextAction.RESENT
    assert second.evidence.next_action is NextAction.MODEL_CHANGED
    assert first.success == second.success == pytest.approx(0.1)


async def test_a_model_change_queued_behind_another_windows_turn_judges_no_answer(
        tmp_path: Path, fake: FakeProvider) -> None:
    """/model while a turn of the session runs is queued and judges nothing: the user already
    moved on with that turn's message. A window's own running turn was treated so, but a change
    made in another window (another daemon on the data folder) counted as "model changed"
    against the turn before, and the held "moved on" of the running turn's message then
    found it judged (both windows' daemons are in this process: ``held_seconds`` holds the
    first one's verdict back, as its half second does when the /model comes quickly)."""
    window, shown, workspace = suggesting(tmp_path, fake, SONNET)
    window.learning.held_seconds = 3600  # written with the running turn's row, at its end
    other = Switchman(Recorder(), config_folder=tmp_path / "config",
                      data_folder=tmp_path / "data", environ={"ANTHROPIC_API_KEY": "k"},
                      approver=ScriptedApprover())
    other.open_workspace(str(tmp_path / "workspace"))
    first, running = await answered_then_stalled(window, fake, workspace, "/commit add the tests")
    await shown.until(lambda: len(shown.notices) == 2)  # its start is on disk
    swap = await other.set_model(workspace, first.session_id, "sonnet")
    assert swap.outcome == "queued"
    fake.release_stalls()
    assert (await running).status == "completed"
    await window.learning.written()
    (row, _) = database.rows(window.patterns.connection)
    assert (row.turn_id, row.evidence.next_action) == (first.turn_id, NextAction.MOVED_ON)


async def test_without_a_suggestion_there_is_nothing_to_override(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    service, _, workspace = engine
    answer = await service.chat(workspace, None, "/route override")
    assert answer.kind == "command"
    assert answer.text.startswith("There is no pattern suggestion to act on.")
    assert fake.requests == []


async def test_override_reruns_the_suggested_turns_message_not_a_later_delegate(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider, tmp_path: Path) -> None:
    """A /delegate typed after the suggested turn is a user message of no turn: /route
    override still sends the suggested turn's own message (with its attachment) again."""
    service, _, workspace = engine
    notes = tmp_path / "workspace" / "notes.txt"
    notes.write_text("the auth bug is in login()\n")
    fake.script_text("short")
    first = await service.chat(workspace, None, "/commit fix the auth bug",
                               attachments=[AttachmentRequest(uri=notes.as_uri())])
    assert "/route override" in first.banners[0]
    fake.script_text("the files are a, b and c")
    delegated = await service.chat(workspace, None, "/delegate fast list the files")
    assert (delegated.kind, delegated.status) == ("command", "completed")
    fake.script_text("a better commit message")
    again = await service.chat(workspace, None, "/route override")
    assert (again.kind, again.model, again.text) == ("turn", SONNET, "a better commit message")
    sent = fake.requests[-1].body["messages"][-1]["content"]
    assert sent == fake.requests[0].body["messages"][-1]["content"]  # the same message, again
    assert sent[0]["text"] == "/commit fix the auth bug" and "login()" in sent[1]["text"]


@pytest.mark.parametrize("command", ["/route", "/route overide", "/route ignore it",
                                     "/route override now"])
async def test_route_with_other_arguments_answers_its_usage(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider, command: str) -> None:
    service, _, workspace = engine
    fake.script_text("short")
    await service.chat(workspace, None, "/commit fix the auth bug")  # a suggestion is shown
    answer = await service.chat(workspace, None, command)
    assert (answer.kind, answer.status) == ("command", "failed")
    assert answer.error is not None and answer.error.code == "command_usage"
    assert answer.text.startswith("Usage: /route override")
    assert len(fake.requests) == 1 and service.store.events(kind="route.overridden") == []
    assert service.store.events(kind="pattern.override_dismissed") == []



async def test_ignore_twice_records_one_dismissal(engine: tuple[Switchman, Recorder, str],
                                                  fake: FakeProvider) -> None:
    service, _, workspace = engine
    fake.script_text("ok")
    await service.chat(workspace, None, "/commit fix the auth bug")
    await service.chat(workspace, None, "/route ignore")
    again = await service.chat(workspace, None, "/route ignore")
    assert (again.kind, again.status) == ("command", "completed")
    assert again.text == f"The suggestion to use {SONNET} was already dismissed."
    assert len(service.store.events(kind="pattern.override_dismissed")) == 1
    await service.learning.written()
    [row] = database.rows(service.patterns.connection)
    assert row.evidence.next_action is NextAction.DISMISSED


async def test_an_override_that_cannot_start_records_nothing(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    """The suggested model went down after it was suggested: the re-run does not fall
    through to another model, the user is told why, and neither the event nor the store's
    evidence is recorded."""
    service, _, workspace = engine
    fake.script_text("short")
    first = await service.chat(workspace, None, "/commit fix the auth bug")
    assert f"/route override to use {SONNET}" in first.banners[0]
    for _ in range(MODEL_FAILURE_THRESHOLD):
        service.availability.record_failure("anthropic", SONNET, ErrorClass.SERVER)
    answer = await service.chat(workspace, None, "/route override")
    assert (answer.kind, answer.status, answer.turn_id) == ("command", "failed", None)
    assert answer.error is not None and answer.error.code == "override_unusable"
    assert answer.text.startswith(f"Cannot run the last message again on {SONNET}: {SONNET} "
                                  "model-specific outage (5 failures in a row (server)). "
                                  "Nothing was sent or recorded")
    assert len(fake.requests) == 1  # nothing ran on haiku instead
    assert service.store.events(kind="route.overridden") == []
    await service.learning.written()
    [row] = database.rows(service.patterns.connection)
    assert row.evidence.next_action is None  # as if no /route override was sent
    assert row.success == pytest.approx(0.7)


async def test_a_second_override_does_not_run_or_record_again(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    """The re-run is the session's last turn and runs on the suggested model: nothing is
    left to override, so a repeated /route override answers so and records nothing."""
    service, _, workspace = engine
    fake.script_text("short")
    await service.chat(workspace, None, "/commit fix the auth bug")
    fake.script_text("a better commit message")
    await service.chat(workspace, None, "/route override")
    again = await service.chat(workspace, None, "/route override")
    assert (again.kind, again.status) == ("command", "completed")
    assert again.text.startswith("The last message already ran again on ")
    assert "(/route override); there is no new suggestion" in again.text
    assert "pattern_disagreement.surface" not in again.text  # it is on: no such hint
    assert len(fake.requests) == 2
    assert len(service.store.events(kind="route.overridden")) == 1


async def test_a_suggestion_that_cannot_be_used_is_not_offered(tmp_path: Path,
                                                               fake: FakeProvider) -> None:
    """The pattern store suggests a model without a key: no notice offers /route override
    (it could only fail), "why this model?" still shows the suggestion and why it could not
    be used, and /route override has nothing to act on."""
    service, recorder, workspace = suggesting(tmp_path, fake, "openai:gpt-5")
    fake.script_text("short")
    first = await service.chat(workspace, None, "/commit fix the auth bug")
    assert (first.model, first.banners) == (HAIKU, [])
    [notice] = recorder.notices
    assert notice.banners == []
    deferred = notice.decision.chain[-1]
    assert (deferred.verdict, deferred.candidate_model, deferred.validation_failure) == (
        Verdict.DEFERRED, "openai:gpt-5", ValidationFailure.NOT_CONFIGURED)
    shown = await service.chat(workspace, None, "/model show")
    assert "it could not be used: no API key for openai (OPENAI_API_KEY) [not_configured]" \
        in shown.text
    answer = await service.chat(workspace, None, "/route override")
    assert answer.text == ("There is no pattern suggestion to act on. Suggestions are shown "
                           "when pattern_disagreement.surface is on in routing.yaml and the "
                           "suggested model can take the turn (/model show says why one was "
                           "not).")
    assert len(fake.requests) == 1 and service.store.events(kind="route.overridden") == []


async def test_retry_ends_the_outages_so_the_next_message_uses_them(
        engine: tuple[Switchman, Recorder, str], fake: FakeProvider) -> None:
    """A provider marked unavailable (two cut streams, say) was routed around for five quiet
    minutes with nothing to do about it once it was back: /route retry ends the outages."""
    service, _, workspace = engine
    nothing = await service.chat(workspace, None, "/route retry")
    assert nothing.text == "No provider or model is marked unavailable; nothing to try again."
    for _ in range(MODEL_FAILURE_THRESHOLD):
        service.availability.record_failure("anthropic", SONNET, ErrorClass.SERVER)
    service.availability.record_failure("anthropic", HAIKU, ErrorClass.AUTH, key="old")
    answer = await service.chat(workspace, None, "/route RETRY")
    assert answer.text == ("Marked unavailable until now:\n"
                           "  anthropic provider currently unavailable.\n"
                           f"  {SONNET} currently unavailable.\n"
                           "They are tried again from the next message (a failure there marks "
                           "them again).")
    assert service.availability.states() == []
    fake.script_text("back")
    back = await service.chat(workspace, None, "@sonnet hello")
    assert (back.model, back.text) == (SONNET, "back")
