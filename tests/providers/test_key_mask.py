"""Masking keys in text: whole keys, long-enough pieces of them, and the shortened form
providers quote (``sk-proj-****wxyz``), in one text and streamed in pieces."""

from __future__ import annotations

import itertools

import pytest

from switchman.engine.keymask import KeyMask

ANTHROPIC = "sk-ant-api03-OLDoldOLD7mQx_Zr2-Wv9LpTe4NcYb8HuKd1SgFa6JiXo3RwBn5EtMy0PqLkCzAhUsVfGjDr"
OPENAI = "sk-proj-Q8r2Lm5Nx7Tz1Vb4Kc9Wd3Fg6Hj0Ps2Ya5Ue8Io1wxyz"


def masked(text: str) -> str:
    return KeyMask(ANTHROPIC, OPENAI).mask(text)


@pytest.mark.parametrize("echo", [
    ANTHROPIC[:22],  # the key's start: its public "sk-ant-api03-" and 9 characters more
    ANTHROPIC[30:42],  # 12 characters from the middle
    ANTHROPIC[-20:],  # its end
    OPENAI[:20],
])
def test_a_piece_of_a_key_is_masked(echo: str) -> None:
    """A model that echoes only part of a key (its first 20 characters, a run from the
    middle): the whole key was masked, a piece of it was not."""
    assert masked(f"It starts `{echo}`, see?") == "It starts `[redacted]`, see?"
    assert masked(f"{echo}{echo}") == "[redacted]"


@pytest.mark.parametrize("text", [
    "Anthropic keys start with sk-ant-api03- and OpenAI's with sk-proj-.",
    f"Like {ANTHROPIC[:18]}… (five characters after the public part)",
    f"{ANTHROPIC[30:41]} is 11 characters of the key",
    "A word, a path src/keymask.py, an id 01JDXABCDEFGHJKMNPQRSTVWXYZ.",
])
def test_ordinary_text_and_short_pieces_are_kept(text: str) -> None:
    """The public part every key of a provider starts with, or a piece shorter than the
    minimum, is no secret: writing about key formats keeps its text."""
    assert masked(text) == text


@pytest.mark.parametrize("quoted", [
    "sk-proj-****wxyz", "sk-proj-Q8r2*********************wxyz", "sk-...wxyz", "sk-proj-…wxyz",
    f"{ANTHROPIC[:16]}...{ANTHROPIC[-4:]}",
])
def test_the_shortened_form_providers_quote_is_masked(quoted: str) -> None:
    """OpenAI's 401 quotes the key as its start, stars and its last 4 characters; a model
    or a console shows it with dots. The start and the end are the key's own."""
    text = f"Incorrect API key provided: {quoted}. You can find your API key at …"
    assert masked(text) == "Incorrect API key provided: [redacted]. You can find your API key at …"


@pytest.mark.parametrize("text", [
    "****wxyz", "sk****wxyz (two characters of a start)", "sk-proj-****abcd", "wait... wxyz",
])
def test_stars_without_the_keys_start_and_end_are_kept(text: str) -> None:
    assert masked(text) == text


STREAMED = [
    (f"Your key begins {ANTHROPIC[:22]}, mine ends {OPENAI[-15:]}.", 2),
    (f"Refused: {OPENAI[:8]}****{OPENAI[-4:]}. Retry.", 1),
    (f"The middle: ({ANTHROPIC[40:54]}) and the start sk-ant-api03- alone.", 1),
]


@pytest.mark.parametrize(("text", "pieces"), STREAMED)
def test_a_piece_split_anywhere_across_deltas_never_shows(text: str, pieces: int) -> None:
    """Cut in three at every pair of places, the text comes through masked as a whole, but
    for at most 3 characters before a piece whose start was in a delta already shown (it
    was no key's start: only its next characters told it was a piece)."""
    whole = masked(text)
    assert whole.count("[redacted]") == pieces
    for first, second in itertools.combinations(range(1, len(text)), 2):
        mask = KeyMask(ANTHROPIC, OPENAI)
        shown = "".join([mask.feed(text[:first]), mask.feed(text[first:second]),
                         mask.feed(text[second:]), mask.flush()])
        assert at_most_three_more(shown, whole), (first, second, shown)


def at_most_three_more(shown: str, whole: str) -> bool:
    """``shown`` is ``whole`` with at most 3 characters more before each ``[redacted]``."""
    parts, wholes = shown.split("[redacted]"), whole.split("[redacted]")
    return len(parts) == len(wholes) and parts[-1] == wholes[-1] and all(
        p.startswith(w) and len(p) - len(w) <= 3
        for p, w in zip(parts[:-1], wholes[:-1], strict=True))


def test_a_piece_in_a_tool_calls_input_is_masked() -> None:
    given = {"command": f"echo {ANTHROPIC[:24]} | head", "path": "notes.txt"}
    assert KeyMask(ANTHROPIC).mask_in(given) == {"command": "echo [redacted] | head",
                                                 "path": "notes.txt"}
