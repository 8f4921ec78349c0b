"""A turn's fingerprint: a unit vector that puts similar requests near each other.

Three blocks, each normalised on its own and then weighted, so that the cosine
similarity of two fingerprints is ``LEXICAL_SHARE`` times the similarity of
their messages' words, ``MEANING_SHARE`` times the similarity of what they are
about, and the rest times the similarity of their structure:

* lexical: hashed words (common English function words left out) and,
  at a third of their weight, character 4-grams of the message (signed
  feature hashing, log-scaled counts). Character n-grams make
  "refactor"/"refactoring" and parts of code identifiers overlap. (Word
  pairs were tried and made neighbours worse on the MMLU benchmark.)
* structural: what the chain already knows about the turn: slash command,
  input-size bucket, touched file extensions, images, tools in history,
  matching skills.
* meaning: the message's weighted mean of static word vectors, relative to the
  workspace's centre (:mod:`.meaning`), so that messages about the same topic
  in different words land near each other. It needs the workspace's centre;
  without one (a workspace's first turn) the block is left out.

Fingerprints of 512 values (before the meaning block) are read as these with
the meaning block empty (:func:`widened`): their rows keep working, a little
less similar to new turns than new rows are, until retention ages them out.

Everything is computed locally with stable hashes (CRC-32) and a shipped word
table, so fingerprints are the same across processes and machines and no model
or network is needed. The message itself is never kept (``evaluator.message_hash`` identifies
a re-sent message without storing it).

Plain Python (``array`` of float32), no numpy: every turn is fingerprinted, and
a daemon whose stores are small never needs numpy (docs/architecture.md,
"numpy only for large pattern stores"). The arithmetic follows numpy's float32
rules step by step, so the values are the ones the earlier numpy code gave
(tests/learning/test_small_store.py compares them with a file it wrote).
"""

from __future__ import annotations

import math
import re
import sys
import zlib
from array import array
from collections.abc import Iterable, Sequence
from typing import TypeAlias

from switchman.engine.learning import meaning
from switchman.engine.routing.context import TurnContext

LEXICAL_DIMENSIONS = 480
STRUCTURAL_DIMENSIONS = 32
MEANING_DIMENSIONS = meaning.DIMENSIONS
DIMENSIONS = LEXICAL_DIMENSIONS + STRUCTURAL_DIMENSIONS + MEANING_DIMENSIONS
EARLIER_DIMENSIONS = LEXICAL_DIMENSIONS + STRUCTURAL_DIMENSIONS
"""The width of fingerprints stored before the meaning block (:func:`widened`)."""
MEANING_SHARE = 0.49
"""Share of the cosine similarity that comes from what the message is about."""
EARLIER_LEXICAL_SHARE = 0.85
"""Share of the cosine similarity that comes from the message's words, without meaning."""
LEXICAL_SHARE = (1 - MEANING_SHARE) * EARLIER_LEXICAL_SHARE
"""Share of the cosine similarity that comes from the message's words (with a full meaning
block; a message near its workspace's centre has a shorter one, :data:`.meaning.FULL_DISTANCE`)."""
CHAR_GRAM = 4
CHAR_GRAM_WEIGHT = 0.3
_STOP = (
    "a an the of to in on at by for with from as and or but if then than so not no is are was"
    " were be been being it its this that these those which what who whom whose i you he she"
    " we they me him her us them my your our their following")
STOP_WORDS = frozenset(_STOP.split())
NUMPY_FROM_CHARS = 32
"""Messages this long or longer are counted with numpy when it is loaded (:func:`fingerprint`)."""
MAX_CHARS = 20_000
"""Only the first characters count: a pasted log should not make a turn slow to fingerprint."""

Vector: TypeAlias = "array[float]"
"""``DIMENSIONS`` float32 values (typecode ``f``); numpy reads it without a copy."""
Block: TypeAlias = dict[int, float]
"""Part of a fingerprint, sparse: bucket → float32 value (buckets not present are 0)."""
_WORD = re.compile(r"[^\W_]+|_+", re.UNICODE)
# A 4-byte polynomial rolling hash modulo 2**32 (multiplier P), then a murmur-style finaliser.
_P = 16777619
_MIX = 0x85EBCA6B
_U32 = 0xFFFFFFFF
_LANE = 64
"""Bits per gram when all grams are hashed at once in one integer (see :func:`_char_grams`)."""


def fingerprint(ctx: TurnContext, centre: Sequence[float] | None = None,
                mean: Sequence[float] | None = None) -> Vector:
    """The fingerprint of a turn, as ``DIMENSIONS`` float32 values of unit length.

    ``centre`` is the workspace's centre of meaning (:class:`.meaning.Centre`); without
    it, or without a known word in the message, the meaning block is left out and the
    other two share the whole length as they did before it existed (``EARLIER_SHARES``).
    ``mean``: the message's :func:`.meaning.message_mean` when the caller has it already.

    Where numpy is already loaded (a workspace with a large store), a message of more
    than a few words is counted with it (:mod:`.fingerprint_numpy`: the same values,
    1.5 times faster at 60 characters, 2.5 at 200, 3 at 1,000; at 20 characters numpy's
    per-call work makes it no faster). numpy is never imported for this.
    """
    about = None
    if centre is not None:
        if mean is None:
            mean = meaning.message_mean(ctx.message)
        about = None if mean is None else meaning.centred(mean, centre)
    if about is None:
        lexical_share, lexical_factor, structural_factor = EARLIER_SHARES
    elif about[1] == 1.0:
        lexical_share, lexical_factor, structural_factor = SHARES
    else:  # near the centre: the block counts less, the others take the rest
        lexical_share, lexical_factor, structural_factor = _shares(MEANING_SHARE * about[1] ** 2)
    if len(ctx.message) >= NUMPY_FROM_CHARS and "numpy" in sys.modules:
        from switchman.engine.learning.fingerprint_numpy import (  # noqa: PLC0415
            unit_lexical_block,  # numpy is loaded already; only then is this imported
        )
        vector = array("f", unit_lexical_block(ctx.message, lexical_share).tobytes())
        vector.extend(array("f", bytes(4 * (STRUCTURAL_DIMENSIONS + MEANING_DIMENSIONS))))
    else:
        vector = array("f", bytes(4 * DIMENSIONS))
        for bucket, value in _placed(lexical_block(ctx.message), lexical_factor):
            vector[bucket] = value
    features = _features(ctx)
    key: tuple[float | str, ...] = (structural_factor, *features)
    structure = _STRUCTURES.get(key)
    if structure is None:  # turns of a session mostly share their structure
        structure = _STRUCTURES[key] = _placed(_structural_block(features), structural_factor)
        while len(_STRUCTURES) > STRUCTURES_KEPT:
            del _STRUCTURES[next(iter(_STRUCTURES))]
    for bucket, value in structure:
        vector[LEXICAL_DIMENSIONS + bucket] = value
    if about is not None:
        direction, weight = about
        factor = math.sqrt(MEANING_SHARE) * weight
        vector[EARLIER_DIMENSIONS:] = array("f", [x * factor for x in direction])
    return vector


def widened(codes: bytes) -> bytes:
    """A stored fingerprint's int8 codes at today's width: a row stored before the meaning
    block had ``EARLIER_DIMENSIONS`` codes, and reads as having that block empty."""
    if len(codes) == DIMENSIONS:
        return codes
    if len(codes) == EARLIER_DIMENSIONS:
        return codes + bytes(MEANING_DIMENSIONS)
    raise ValueError(f"a stored fingerprint of {len(codes)} values")


_STRUCTURES: dict[tuple[float | str, ...], list[tuple[int, float]]] = {}
"""The structural block's values by the features they came from (see :func:`_placed`)."""
STRUCTURES_KEPT = 256


def _placed(block: Block, factor: float) -> list[tuple[int, float]]:
    """``_weighted(_unit(block))`` as (bucket, float32 value) pairs: the same float32
    roundings, step by step, without the dictionaries in between (every turn is
    fingerprinted before its request leaves)."""
    if not block:
        return []
    values: Iterable[float] = block.values()
    norm = array("f", [math.sqrt(math.fsum([x * x for x in values]))])[0]
    if norm:
        values = array("f", [x / norm for x in values]).tolist()
    return list(zip(block, array("f", [x * factor for x in values]).tolist(), strict=True))


def lexical_block(text: str) -> Block:
    """Signed hashed counts of words and character 4-grams, log-scaled."""
    words = [w for w in _WORD.findall(text[:MAX_CHARS].lower()) if w not in STOP_WORDS]
    if not words:
        return {}
    block = _counts([zlib.crc32(w.encode()) for w in words])
    grams = _char_grams((" " + " ".join(words) + " ").encode())
    for bucket, count in _counts(grams, weight=CHAR_GRAM_WEIGHT).items():
        block[bucket] = block.get(bucket, 0.0) + count
    return _float32({b: math.copysign(math.log1p(abs(x)), x) for b, x in block.items() if x})


def structural_block(ctx: TurnContext) -> Block:
    """Hashed indicator features of what the chain knows about the turn."""
    return _structural_block(_features(ctx))


def _structural_block(features: list[str]) -> Block:
    counts = _counts([zlib.crc32(f.encode()) for f in features], STRUCTURAL_DIMENSIONS)
    return _float32({b: x for b, x in counts.items() if x})


def _features(ctx: TurnContext) -> list[str]:
    """What the chain knows about the turn, as indicator features."""
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
    return features


def _bucket(tokens: int) -> int:
    """Powers of four: 0-3, 4-15, …, so turns of similar size share a bucket."""
    return 0 if tokens <= 0 else int(math.log(tokens, 4))


def _char_grams(data: bytes) -> array[int]:
    """Stable hashes of every run of ``CHAR_GRAM`` bytes.

    Hashed all at once: each byte gets a 64-bit lane of one large integer, so one
    multiplication, shift or mask of that integer works on every gram (no lane can
    carry into the next: a lane never holds more than 42 bits before it is masked).
    That is a few times faster than a Python loop over the grams.
    """
    count = len(data) - CHAR_GRAM + 1
    if count <= 0:
        return array("Q")
    lanes = bytearray(len(data) * _LANE // 8)
    lanes[:: _LANE // 8] = data
    x = int.from_bytes(lanes, "little")
    mask = int.from_bytes(_U32.to_bytes(_LANE // 8, "little") * count, "little")
    h = 0
    for i in range(CHAR_GRAM):  # h = b0·P³ + b1·P² + b2·P + b3 (mod 2³²), lane by lane
        h += (x >> (_LANE * i)) * pow(_P, CHAR_GRAM - 1 - i, 1 << 32)
    h &= mask
    # Finalise so that neighbouring grams spread over all buckets and signs.
    h ^= (h >> 16) & mask
    h = (h * _MIX) & mask
    h ^= (h >> 13) & mask
    hashes = array("Q", h.to_bytes(count * _LANE // 8, "little"))
    if sys.byteorder == "big":
        hashes.byteswap()
    return hashes


def _counts(hashes: list[int] | array[int], size: int = LEXICAL_DIMENSIONS,
            weight: float = 1.0) -> dict[int, float]:
    """Signed feature hashing: bucket from the low bits, sign from the top bit.

    Each bucket's weights are summed in order, from zero: the same float additions, in
    the same order, as ``numpy.bincount`` made.
    """
    counts: dict[int, float] = {}
    for h in hashes:
        bucket = h % size
        counts[bucket] = counts.get(bucket, 0.0) + (weight if h >> 31 else -weight)
    return counts


def _unit(block: Block) -> Block:
    """``block`` over its length (the length exactly rounded to float32)."""
    norm = _float32({0: math.sqrt(math.fsum(x * x for x in block.values()))})[0]
    return _float32({b: x / norm for b, x in block.items()}) if norm else block


def _weighted(block: Block, share: float) -> Block:
    """``block`` times the square root of its share."""
    factor = _float32({0: math.sqrt(share)})[0]
    return _float32({b: x * factor for b, x in block.items()})


def _shares(meaning_share: float) -> tuple[float, float, float]:
    """The lexical block's share, and what :func:`_weighted` multiplies the lexical and the
    structural block by (the square roots of their shares, float32), when the meaning block
    takes ``meaning_share``."""
    lexical = (1 - meaning_share) * EARLIER_LEXICAL_SHARE
    structural = (1 - meaning_share) * (1 - EARLIER_LEXICAL_SHARE)
    factors = array("f", [math.sqrt(lexical), math.sqrt(structural)])
    return lexical, factors[0], factors[1]


SHARES = _shares(MEANING_SHARE)
"""With a full meaning block."""
EARLIER_SHARES = (EARLIER_LEXICAL_SHARE, array("f", [math.sqrt(EARLIER_LEXICAL_SHARE)])[0],
                  array("f", [math.sqrt(1 - EARLIER_LEXICAL_SHARE)])[0])
"""Without a meaning block: the shares every fingerprint had before it existed."""


def _float32(block: dict[int, float]) -> Block:
    """``block`` with each value rounded to float32, as numpy's float32 operations round.

    (An addition, subtraction, multiplication, division or square root of float32 values
    done in float64 and then rounded to float32 gives exactly the float32 result.)
    """
    return dict(zip(block, array("f", block.values()).tolist(), strict=True))
