"""The lexical block of a fingerprint computed with numpy: the same values, faster.

A workspace whose pattern store is large has numpy loaded for its index; there a
message's words and character grams are counted with ``bincount`` instead of Python
loops (about a quarter of the time for a message of a few hundred characters). Every
step keeps the plain-Python rules of :mod:`.fingerprint` exactly — sums of float64
weights in input order, ``math.log1p`` (numpy's may be vectorised differently from one
CPU to another), ``math.fsum`` for the length, float32 rounding after each step — so a
fingerprint is the same whichever way it was computed
(tests/learning/test_fingerprint_numpy.py compares both on thousands of messages).
"""

from __future__ import annotations

import math
import zlib

import numpy as np
import numpy.typing as npt

from switchman.engine.learning.fingerprint import (
    _MIX,
    _P,
    _WORD,
    CHAR_GRAM,
    CHAR_GRAM_WEIGHT,
    LEXICAL_DIMENSIONS,
    MAX_CHARS,
    STOP_WORDS,
)

_Floats = npt.NDArray[np.float64]


def unit_lexical_block(text: str, share: float) -> npt.NDArray[np.float32]:
    """The message's lexical block, of unit length, times the square root of ``share``:
    ``_weighted(_unit(lexical_block(text)), share)`` of :mod:`.fingerprint`, dense."""
    block = np.zeros(LEXICAL_DIMENSIONS, np.float32)
    words = [w for w in _WORD.findall(text[:MAX_CHARS].lower()) if w not in STOP_WORDS]
    if not words:
        return block
    counts = _counts(np.fromiter((zlib.crc32(w.encode()) for w in words), np.uint32,
                                 len(words)), 1.0)
    counts += _counts(_char_grams((" " + " ".join(words) + " ").encode()), CHAR_GRAM_WEIGHT)
    buckets = np.flatnonzero(counts)
    values = np.array([math.copysign(math.log1p(abs(x)), x) for x in counts[buckets].tolist()],
                      np.float32)
    wide = values.astype(np.float64)
    norm = np.float32(math.sqrt(math.fsum((wide * wide).tolist())))
    if norm:
        values = (wide / np.float64(norm)).astype(np.float32)
    factor = np.float64(np.float32(math.sqrt(share)))
    block[buckets] = (values.astype(np.float64) * factor).astype(np.float32)
    return block


def _counts(hashes: npt.NDArray[np.uint32], weight: float) -> _Floats:
    """Signed feature hashing, each bucket's weights summed in order from zero."""
    if not len(hashes):
        return np.zeros(LEXICAL_DIMENSIONS, np.float64)
    signs = np.where(hashes >> np.uint32(31), weight, -weight)
    buckets = (hashes % np.uint32(LEXICAL_DIMENSIONS)).astype(np.intp)
    counts = np.bincount(buckets, weights=signs, minlength=LEXICAL_DIMENSIONS)
    return counts.astype(np.float64, copy=False)


def _char_grams(data: bytes) -> npt.NDArray[np.uint32]:
    """The hash of every run of ``CHAR_GRAM`` bytes (the same hash as the plain code's)."""
    raw = np.frombuffer(data, np.uint8).astype(np.uint32)
    count = len(raw) - CHAR_GRAM + 1
    if count <= 0:
        return np.zeros(0, np.uint32)
    h = np.zeros(count, np.uint32)
    for i in range(CHAR_GRAM):
        h = h * np.uint32(_P) + raw[i: count + i]
    h ^= h >> np.uint32(16)
    h *= np.uint32(_MIX)
    h ^= h >> np.uint32(13)
    return h
