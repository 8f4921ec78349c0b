"""Retry policy, key redaction, history normalisation and tool-call chunk pairing."""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace
from typing import Any

import pytest

from switchman.engine.availability import ErrorClass
from switchman.engine.keymask import KeyMask
from switchman.engine.keys import redact
from switchman.engine.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock
from switchman.engine.providers import openai_adapter
from switchman.engine.providers.base import (
    UNANSWERED_DELEGATION,
    UNFINISHED_CALL,
    normalize_history,
)
from switchman.engine.providers.errors import ProviderError, class_for_status
from switchman.engine.sessions.retry import RetryPolicy


def error(error_class: ErrorClass, retry_after: float | None = None) -> ProviderError:
    return ProviderError(error_class, "x", model="m", retry_after=retry_after)


def test_retries_back_off_and_stop() -> None:
    policy = RetryPolicy(retries=2, base_seconds=0.5)
    assert policy.delay(0, error(ErrorClass.SERVER)) == 0.5
    assert policy.delay(1, error(ErrorClass.SERVER)) == 1.0
    assert policy.delay(2, error(ErrorClass.SERVER)) is None


def test_the_providers_wait_is_honoured_unless_too_long() -> None:
    policy = RetryPolicy()
    assert policy.delay(0, error(ErrorClass.RATE_LIMIT, retry_after=3)) == 3
    assert policy.delay(0, error(ErrorClass.RATE_LIMIT, retry_after=600)) is None


@pytest.mark.parametrize("error_class", [ErrorClass.AUTH, ErrorClass.BAD_REQUEST])
def test_permanent_errors_are_not_retried(error_class: ErrorClass) -> None:
    assert RetryPolicy().delay(0, error(error_class)) is None


def test_policy_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SWITCHMAN_RETRIES", "0")
    monkeypatch.setenv("SWITCHMAN_RETRY_BASE_SECONDS", "0.1")
    assert RetryPolicy.from_environment() == RetryPolicy(0, 0.1)


@pytest.mark.parametrize(("status", "kind", "expected"), [
    (401, None, ErrorClass.AUTH), (429, None, ErrorClass.RATE_LIMIT),
    (529, None, ErrorClass.OVERLOADED), (503, None, ErrorClass.OVERLOADED),
    (500, None, ErrorClass.SERVER), (404, None, ErrorClass.BAD_REQUEST),
    (200, "overloaded_error", ErrorClass.OVERLOADED), (200, "api_error", ErrorClass.SERVER),
])
def test_status_classification(status: int, kind: str | None, expected: ErrorClass) -> None:
    assert class_for_status(status, kind) is expected


def test_redaction_masks_known_and_key_shaped_secrets() -> None:
    text = "Incorrect API key provided: sk-proj-abcdefgh12345678. Also my-secret-value."
    cleaned = redact(text, ["my-secret-value"])
    assert "sk-proj-abcdefgh12345678" not in cleaned
    assert "my-secret-value" not in cleaned
    assert cleaned.startswith("Incorrect API key provided: [redacted]")


def test_a_key_is_masked_everywhere_in_a_tool_calls_input() -> None:
    key = "sk-test-0123456789"
    given = {"command": f"echo {key}", "n": 3, "flag": True, "none": None,
             "items": [{"deep": [key, "x"]}, 7], key: "a name too"}
    masked = KeyMask(key).mask_in(given)
    assert masked == {"command": "echo [redacted]", "n": 3, "flag": True, "none": None,
                      "items": [{"deep": ["[redacted]", "x"]}, 7], "[redacted]": "a name too"}
    clean = {"command": "ls", "items": ["é"]}
    assert KeyMask(key).mask_in(clean) is clean  # nothing to mask: the same object
    assert KeyMask(None).mask_in(given) is given


def test_every_key_is_masked_in_streamed_text_split_anywhere() -> None:
    """Two keys that begin alike, each cut at every place across two pieces: neither shows,
    and text that only began like one comes through."""
    first, second = "sk-shared-11111111", "sk-shared-22222222"
    for key in (first, second):
        for cut in range(1, len(key)):
            mask = KeyMask(first, None, second)
            shown = mask.feed(f"a {key[:cut]}") + mask.feed(f"{key[cut:]} b sk-shared-")
            assert shown + mask.flush() == "a [redacted] b sk-shared-"
    assert KeyMask("sk-shared-1111", first).mask(f"{first} sk-shared-1111") == \
        "[redacted] [redacted]"


def test_dangling_tool_calls_are_answered() -> None:
    now = datetime.now(UTC)
    history = [
        Message(id="1", session_id="s", turn_id="t", role="user", content=[TextBlock("hi")],
                created_at=now),
        Message(id="2", session_id="s", turn_id="t", role="assistant", created_at=now,
                content=[ToolUseBlock("a", "grep", {}), ToolUseBlock("b", "grep", {})]),
        Message(id="3", session_id="s", turn_id="t", role="tool", created_at=now,
                content=[ToolResultBlock("a", "ok")]),
    ]
    fixed = normalize_history(history)
    assert [m.role for m in fixed] == ["user", "assistant", "tool", "tool"]
    assert fixed[2].content == [ToolResultBlock("b", UNFINISHED_CALL, True)]


def test_only_an_unanswered_delegate_command_gets_a_note() -> None:
    now = datetime.now(UTC)

    def message(id: str, role: str, turn_id: str | None) -> Message:
        return Message(id=id, session_id="s", turn_id=turn_id, role=role,  # type: ignore[arg-type]
                       created_at=now, content=[TextBlock(id)])

    history = [message("/delegate a", "user", None), message("answer", "assistant", None),
               message("/delegate cut off", "user", None), message("turn", "user", "t1"),
               message("turn cut off", "user", "t2"), message("next", "user", "t3")]
    fixed = normalize_history(history)
    assert [m.text() for m in fixed] == ["/delegate a", "answer", "/delegate cut off",
                                         UNANSWERED_DELEGATION, "turn", "turn cut off", "next"]
    assert fixed[3].role == "assistant" and fixed[3].id == "/delegate cut off-unanswered"


def test_a_message_sent_again_after_its_turn_failed_is_sent_once() -> None:
    now = datetime.now(UTC)

    def message(id: str, text: str, turn_id: str | None, role: str = "user") -> Message:
        return Message(id=id, session_id="s", turn_id=turn_id, role=role,  # type: ignore[arg-type]
                       created_at=now, content=[TextBlock(text)])

    history = [message("1", "fix the bug", "t1"), message("2", "fix the bug", "t2"),
               message("3", "done", "t2", "assistant"), message("4", "and this", "t3"),
               message("5", "and that", "t4"), message("6", "/delegate x", None),
               message("7", "/delegate x", "t5")]
    fixed = normalize_history(history)
    assert [m.id for m in fixed] == ["2", "3", "4", "5", "6", "6-unanswered", "7"]


def test_tool_call_chunks_without_index_or_id_start_a_call_only_when_one_is_due() -> None:
    """Chunks as compatible servers stream them with neither ``index`` nor ``id``."""
    def chunk(name: str | None = None, arguments: str = "") -> Any:
        return SimpleNamespace(index=None, id=None,
                               function=SimpleNamespace(name=name, arguments=arguments))

    def calls_of(*chunks: Any) -> list[tuple[str, str]]:
        calls: dict[int, openai_adapter._PendingCall] = {}
        for part in chunks:
            pending = calls.setdefault(openai_adapter._call_key(part, calls),
                                       openai_adapter._PendingCall())
            pending.name = part.function.name or pending.name
            pending.arguments += part.function.arguments
        return [(c.name, c.arguments) for c in calls.values()]

    # a header, then arguments, per call
    assert calls_of(chunk("grep"), chunk(arguments='{"pattern": "x"}'), chunk("list_files"),
                    chunk(arguments="{}")) == [("grep", '{"pattern": "x"}'), ("list_files", "{}")]
    # the name repeated on every chunk while the arguments arrive: one call
    assert calls_of(chunk("grep", '{"pat'), chunk("grep", 'tern": "x"}')) == [
        ("grep", '{"pattern": "x"}')]
    # a call without arguments, then another function's header
    assert calls_of(chunk("list_files"), chunk("grep", '{"pattern": "x"}')) == [
        ("list_files", ""), ("grep", '{"pattern": "x"}')]
