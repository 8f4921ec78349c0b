"""Masking API keys in text the daemon shows, stores or logs: a model's answer (also as it
streams), a tool call's input, a tool's result, a provider's error.

Three things are masked, each replaced by ``[redacted]``:

* a whole key (of :data:`MIN_KEY` characters or more);
* a piece of a key: a run of at least :data:`MIN_PIECE` of its characters, at least
  :data:`MIN_SECRET` of them after its public prefix (``sk-ant-api03-``, ``sk-proj-``: the
  lowercase words a provider starts every key with, which are no secret, and which code and
  documentation write as they are);
* the shortened form providers quote a key in (``sk-proj-****wxyz``): at least
  :data:`MIN_QUOTED_START` of the key's first characters, a run of ``*``, ``•``, ``.`` or
  ``…``, and the key's last 4 characters.

Ordinary text never matches: a piece needs characters of the key itself, not of its format.
docs/sessions.md ("API keys") says what is masked, for users.
"""

from __future__ import annotations

import json
import re
from typing import Any

REDACTED = "[redacted]"
MIN_KEY = 8
"""A shorter key is not masked (it would mask words)."""
MIN_PIECE = 12
"""The fewest characters of a key that are masked as a piece of it."""
MIN_SECRET = 6
"""Of a piece, the fewest characters after the key's public prefix."""
MIN_QUOTED_START = 3
"""Of the shortened form, the fewest characters of the key's start (``sk-``)."""
SHOWN_BEFORE_A_PIECE = 3
"""While streaming, at most this many characters of a piece can show before it is known to
be one (:meth:`KeyMask.feed`)."""

_GRAM = 6
_STRIDE = MIN_PIECE - _GRAM + 1
"""Every run of :data:`MIN_PIECE` characters holds a whole :data:`_GRAM`-character gram that
starts at a multiple of this: the text is looked up there only."""
_PUBLIC_PREFIX = re.compile(r"(?:[a-z0-9]{1,8}[-_]){0,3}")
_ELISION = "*•.…"
_ELISION_IN = re.compile(f"[{re.escape(_ELISION)}]")
_ELIDED_TAIL = re.compile(f"[{re.escape(_ELISION)}][^{re.escape(_ELISION)}\\s]{{0,3}}\\Z")


class KeyMask:
    """Masks keys in text, and in streamed text also when a key, a piece of one or its
    shortened form arrives split across deltas.

    A provider, a proxy or a local server that echoes a key (the one it was sent, another
    provider's it was shown in a file, part of one) must not carry it to the editor, the
    transcript or the database. Of each delta, what could begin one is held back until the
    next delta (or :meth:`flush`) shows whether it does.
    """

    def __init__(self, *secrets: str | None) -> None:
        keys = {s for s in secrets if s and len(s) >= MIN_KEY}
        # Longest first: a key that is part of another is masked as part of the longer one.
        self._secrets = sorted(keys, key=len, reverse=True)
        # A text begins a key when "\0" + it is in _joined, and is in one when it is in _long
        # (the keys long enough to have pieces).
        self._joined = "\0" + "\0".join(self._secrets)
        self._firsts = {key[0] for key in self._secrets}
        self._long = "\0".join(key for key in self._secrets if len(key) >= MIN_PIECE)
        self._grams: dict[str, list[tuple[str, int]]] = {}
        self._public: dict[str, int] = {}
        self._ends: dict[str, list[str]] = {}
        for key in self._secrets:
            self._public[key] = _public_prefix(key)
            self._ends.setdefault(key[-4:], []).append(key)
            for i in range(len(key) - _GRAM + 1 if len(key) >= MIN_PIECE else 0):
                self._grams.setdefault(key[i:i + _GRAM], []).append((key, i))
        # The last character of the shortened form's run and the key's end (a lookbehind for
        # where the run starts costs more than walking back over it).
        ends = "|".join(map(re.escape, self._ends))
        self._quoted = re.compile(f"[{re.escape(_ELISION)}](?:{ends})")
        # A piece is made of its key's characters only: only such runs are looked at.
        characters = "".join(sorted({c for gram in self._grams for c in gram}))
        self._runs = re.compile(f"[{re.escape(characters)}]{{{MIN_PIECE},}}") \
            if characters else None
        self._held = ""
        self._shown = ""
        """The last characters shown (at most :data:`SHOWN_BEFORE_A_PIECE`, none masked): a
        piece that began there is found, and masked from where the next delta starts."""

    def feed(self, text: str) -> str:
        """What of the text so far can be shown, the keys masked."""
        if not self._secrets:
            return text
        full = self._shown + self._held + text
        start = len(self._shown)
        spans = self._spans(full)
        held_from = max(start, self._held_from(full, start))
        for begin, end in reversed(spans):  # a match that reaches the held text waits for it
            if end > held_from:
                held_from = max(start, min(held_from, begin))
        spans = [(begin, end) for begin, end in spans if end <= held_from]
        self._held = full[held_from:]
        shown = full[:held_from]
        last = spans[-1][1] if spans else 0
        self._shown = shown[max(last, held_from - SHOWN_BEFORE_A_PIECE):]
        return _replace(shown, spans, start)

    def flush(self) -> str:
        """The text held back, the keys masked: the stream ended, or something other than
        text follows."""
        full, start = self._shown + self._held, len(self._shown)
        self._held = self._shown = ""
        return _replace(full, self._spans(full), start) if self._secrets else full

    def mask(self, text: str) -> str:
        """A whole text, the keys masked (``text`` itself when it holds none)."""
        return _replace(text, self._spans(text)) if self._secrets else text

    def mask_in(self, value: Any) -> Any:
        """Plain data (a tool call's input: dicts, lists, strings), the keys masked in every
        text of it, names included; ``value`` itself when no key is in it."""
        if not self._secrets or not self._spans(json.dumps(value, ensure_ascii=False)):
            return value
        return self._mask_in(value)

    def _mask_in(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, list):
            return [self._mask_in(v) for v in value]
        if isinstance(value, dict):
            return {self._mask_in(k): self._mask_in(v) for k, v in value.items()}
        return value

    def _spans(self, text: str) -> list[tuple[int, int]]:
        """Where ``text`` holds a key, a piece of one or its shortened form: sorted, merged
        (start, end) ranges."""
        found = []
        for key in self._secrets:
            at = text.find(key)
            while at != -1:
                found.append((at, at + len(key)))
                at = text.find(key, at + 1)
        for run in self._runs.finditer(text) if self._runs is not None else ():
            found += self._pieces(text, run.start(), run.end())
        if _ELISION_IN.search(text):
            found += self._shortened(text)
        return _merged(found)

    def _pieces(self, text: str, first: int, last: int) -> list[tuple[int, int]]:
        """The pieces of keys in ``text[first:last]``, a run of keys' characters."""
        grams, found, reached = self._grams, [], 0
        for at in range(first, last - _GRAM + 1, _STRIDE):
            if at + _GRAM <= reached:  # in a piece found already (a key repeated: once each)
                continue
            for key, offset in grams.get(text[at:at + _GRAM], ()):
                shift = offset - at  # a text index plus this is the key's index
                begin, end = at, at + _GRAM
                while begin > first and begin + shift > 0 \
                        and text[begin - 1] == key[begin + shift - 1]:
                    begin -= 1
                while end < last and end + shift < len(key) and text[end] == key[end + shift]:
                    end += 1
                secret = end + shift - max(begin + shift, self._public[key])
                if end - begin >= MIN_PIECE and secret >= MIN_SECRET:
                    found.append((begin, end))
                    reached = max(reached, end)
        return found

    def _shortened(self, text: str) -> list[tuple[int, int]]:
        found = []
        for match in self._quoted.finditer(text):
            run = match.start()
            while run > 0 and text[run - 1] in _ELISION:
                run -= 1
            for key in self._ends[text[match.end() - 4:match.end()]]:
                shown = _start_before(text, run, key)
                if shown >= MIN_QUOTED_START:
                    found.append((run - shown, match.end()))
        return found

    def _held_from(self, text: str, start: int) -> int:
        """Where the end of ``text`` that could begin a key, a piece of one or its shortened
        form starts (``len(text)`` when none could). What is before ``start`` was looked at
        with the text before it: none of it began a key or a shortened form."""
        held = 0
        for at in range(start, len(text)):  # the longest end that begins a key
            if text[at] in self._firsts and "\0" + text[at:] in self._joined:
                held = len(text) - at
                break
        least = SHOWN_BEFORE_A_PIECE + 1
        if len(text) >= least and text[-least:] in self._long:
            low, high = least, len(text)
            while low < high:  # the longest end that is in a key: a piece's start, maybe
                middle = (low + high + 1) // 2
                low, high = (middle, high) if text[-middle:] in self._long else \
                    (low, middle - 1)
            held = max(held, low)
        elided = _elided_end(text) if _ELIDED_TAIL.search(text, max(0, len(text) - 4)) else None
        if elided is not None:
            run, after = elided
            for key in self._secrets:
                shown = _start_before(text, run, key)
                if shown >= MIN_QUOTED_START and key[-4:].startswith(after):
                    held = max(held, len(text) - run + shown)
        return len(text) - held


def _public_prefix(key: str) -> int:
    """The length of the lowercase words a provider starts every key with (``sk-proj-``)."""
    found = _PUBLIC_PREFIX.match(key)
    return len(found[0]) if found else 0


def _start_before(text: str, at: int, key: str) -> int:
    """How many of ``key``'s first characters (not all of them) end at ``at`` in ``text``, the
    most: 0 when ``text[:at]`` does not end with the start of ``key``."""
    begin = text.find(key[0], max(0, at - len(key) + 1), at)
    while begin != -1:
        if key.startswith(text[begin:at]):
            return at - begin
        begin = text.find(key[0], begin + 1, at)
    return 0


def _elided_end(text: str) -> tuple[int, str] | None:
    """Where a run of ``*``, ``•``, ``.`` or ``…`` starts that ends ``text`` or is followed by
    at most 3 characters (which may begin a key's last 4), and those characters."""
    after = len(text)
    while after > 0 and len(text) - after < 3 and text[after - 1] not in _ELISION \
            and not text[after - 1].isspace():
        after -= 1
    run = after
    while run > 0 and text[run - 1] in _ELISION:
        run -= 1
    return (run, text[after:]) if run < after else None


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for begin, end in sorted(spans):
        if merged and begin <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((begin, end))
    return merged


def _replace(text: str, spans: list[tuple[int, int]], start: int = 0) -> str:
    """``text`` from ``start`` on, each span replaced by ``[redacted]`` (a span that began
    before ``start`` from ``start``)."""
    parts, at = [], start
    for begin, end in spans:
        if end > at:
            parts += [text[at:max(at, begin)], REDACTED]
            at = end
    if not parts:
        return text[start:] if start else text
    return "".join(parts) + text[at:]
