"""The numpy path of the fingerprint gives exactly the plain-Python fingerprint.

A store that grows past the size where numpy is loaded keeps fingerprinting the same
way: rows recorded before and queries made after must agree to the last bit.
"""

from __future__ import annotations

import random
import string

import numpy as np
import pytest

from switchman.engine.learning import fingerprint as plain
from switchman.engine.learning.fingerprint_numpy import unit_lexical_block
from switchman.engine.routing.context import TurnContext

SAMPLES = [
    "", "   ", "the of and", "fix", "fix the failing unit test in parser.py",
    "Refactor `PatternStore.recommend` — it's 400 lines!", "ünïcödé wörds ß 日本語のテキスト",
    "a_b __init__ snake_case CamelCase x1 2x", "x" * 30_000, "word " * 5_000,
    "/model opus please", "emoji 🚀🚀 and tabs\tand\nnewlines",
]


def _messages(count: int) -> list[str]:
    rng = random.Random(11)
    alphabet = string.ascii_letters + string.digits + " _-.,/()'\"\n" + "éß日本🚀"
    words = ["fix", "test", "parser", "the", "refactor", "a", "lint", "of", "café"]
    out = []
    for _ in range(count):
        if rng.random() < 0.5:
            out.append(" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))))
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 900))))
    return out


def _plain_block(message: str) -> np.ndarray:
    dense = np.zeros(plain.LEXICAL_DIMENSIONS, np.float32)
    block = plain._weighted(plain._unit(plain.lexical_block(message)), plain.LEXICAL_SHARE)
    for bucket, value in block.items():
        dense[bucket] = value
    return dense


def test_numpy_counts_the_message_exactly_as_plain_python() -> None:
    differ = [m for m in SAMPLES + _messages(3_000)
              if unit_lexical_block(m, plain.LEXICAL_SHARE).tobytes() !=
              _plain_block(m).tobytes()]
    assert differ == []


def test_the_fingerprint_is_the_same_with_numpy_loaded_or_not(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ctx = TurnContext(message="rename the helper in utils.py " * 3, files_touched=("src/utils.py",),
                      estimated_input_tokens=900, has_tool_calls_in_history=True)
    assert len(ctx.message) >= plain.NUMPY_FROM_CHARS
    with_numpy = plain.fingerprint(ctx)
    monkeypatch.delitem(__import__("sys").modules, "numpy")
    without = plain.fingerprint(ctx)
    assert with_numpy.tobytes() == without.tobytes()
    assert len(without) == plain.DIMENSIONS
