"""A turn's fingerprint: a unit vector that puts similar requests near each other.

Two blocks, each normalised on its own and then weighted, so that the cosine
similarity of two fingerprints is ``LEXICAL_SHARE`` times the similarity of
their messages plus the rest times the similarity of their structure:

* lexical: hashed words (common English function words left out) and,
  at a third of their weight, character 4-grams of the message (signed
  feature hashing, log-scaled counts). Character n-grams make
  "refactor"/"refactoring" and parts of code identifiers overlap. (Word
  pairs were tried and made neighbours worse on the MMLU benchmark.)
* structural: what the chain already knows about the turn: slash command,
  input-size bucket, touched file extensions, images, tools in history,
  matching skills.

Everything is computed locally with stable hashes (CRC-32), so fingerprints
are the same across processes and machines and no model or network is
needed. The message itself is never kept (``evaluator.message_hash`` identifies
a re-sent message without storing it).
"""

from __future__ import annotations

import math
import re
import zlib

import numpy as np
import numpy.typing as npt

from switchman.engine.routing.context import TurnContext

LEXICAL_DIMENSIONS = 480
STRUCTURAL_DIMENSIONS = 32
DIMENSIONS = LEXICAL_DIMENSIONS + STRUCTURAL_DIMENSIONS
LEXICAL_SHARE = 0.85
"""Share of the cosine similarity that comes from the message's words."""
CHAR_GRAM = 4
CHAR_GRAM_WEIGHT = 0.3
_STOP = (
    "a an the of to in on at by for with from as and or but if then than so not no is are was"
    " were be been being it its this that these those which what who whom whose i you he she"
    " we they me him her us them my your our their following")
STOP_WORDS = frozenset(_STOP.split())
MAX_CHARS = 20_000
"""Only the first characters count: a pasted log should not make a turn slow to fingerprint."""

Vector = npt.NDArray[np.float32]
_WORD = re.compile(r"[^\W_]+|_+", re.UNICODE)
# Multiplier of a 4-byte polynomial rolling hash, then a murmur-style finaliser.
_P = np.uint32(16777619)
_MIX = np.uint32(0x85EBCA6B)


def fingerprint(ctx: TurnContext) -> Vector:
    """The fingerprint of a turn, as ``DIMENSIONS`` float32 values of unit length."""
    lexical = _unit(lexical_block(ctx.message)) * math.sqrt(LEXICAL_SHARE)
    structural = _unit(structural_block(ctx)) * math.sqrt(1 - LEXICAL_SHARE)
    return np.concatenate([lexical, structural]).astype(np.float32)


def lexical_block(text: str) -> Vector:
    """Signed hashed counts of words and character 4-grams, log-scaled."""
    words = [w for w in _WORD.findall(text[:MAX_CHARS].lower()) if w not in STOP_WORDS]
    block = np.zeros(LEXICAL_DIMENSIONS, np.float64)
    if words:
        _add(block, np.fromiter((zlib.crc32(w.encode()) for w in words), np.uint32, len(words)))
        _add(block, _char_grams((" " + " ".join(words) + " ").encode()), weight=CHAR_GRAM_WEIGHT)
    return (np.sign(block) * np.log1p(np.abs(block))).astype(np.float32)


def structural_block(ctx: TurnContext) -> Vector:
    """Hashed indicator features of what the chain knows about the turn."""
    features = [f"tokens:{_bucket(ctx.estimated_input_tokens)}"]
    command = ctx.message.lstrip().split(maxsplit=1)[0] if ctx.message.lstrip() else ""
    if command.startswith("/"):
        features.append(f"command:{command.lower()}")
    features += [f"ext:{e}" for e in sorted(ctx.extensions())]
    features += [f"skill:{s}" for s in sorted(ctx.skills_matching)]
    if ctx.has_images:
        features.append("images")
    if ctx.has_tool_calls_in_history:
        features.append("tools-in-history")
    block = np.zeros(STRUCTURAL_DIMENSIONS, np.float64)
    _add(block, np.array([zlib.crc32(f.encode()) for f in features], np.uint32),
         STRUCTURAL_DIMENSIONS)
    return block.astype(np.float32)


def _bucket(tokens: int) -> int:
    """Powers of four: 0-3, 4-15, …, so turns of similar size share a bucket."""
    return 0 if tokens <= 0 else int(math.log(tokens, 4))


def _char_grams(data: bytes) -> npt.NDArray[np.uint32]:
    """Stable hashes of every run of ``CHAR_GRAM`` bytes, computed with numpy."""
    raw = np.frombuffer(data, np.uint8).astype(np.uint32)
    if len(raw) < CHAR_GRAM:
        return np.zeros(0, np.uint32)
    h = np.zeros(len(raw) - CHAR_GRAM + 1, np.uint32)
    for i in range(CHAR_GRAM):
        h = h * _P + raw[i: len(raw) - CHAR_GRAM + 1 + i]
    # Finalise so that neighbouring grams spread over all buckets and signs.
    h ^= h >> np.uint32(16)
    h *= _MIX
    h ^= h >> np.uint32(13)
    return h


def _add(block: npt.NDArray[np.float64], hashes: npt.NDArray[np.uint32],
         size: int = LEXICAL_DIMENSIONS, weight: float = 1.0) -> None:
    """Signed feature hashing: bucket from the low bits, sign from the top bit."""
    if not len(hashes):
        return
    signs = np.where(hashes >> np.uint32(31), weight, -weight)
    block += np.bincount((hashes % np.uint32(size)).astype(np.intp), weights=signs,
                         minlength=size)


def _unit(block: Vector) -> Vector:
    norm = float(np.linalg.norm(block))
    return block / norm if norm else block
