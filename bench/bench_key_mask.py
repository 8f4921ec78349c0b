"""CPU of masking API keys (whole keys, pieces, the ``sk-proj-****wxyz`` form) per streamed
delta and per tool result, against work the daemon does for the same text anyway.

Run from the repository root: ``.venv/bin/python bench/bench_key_mask.py``. Three keys of
real providers' lengths are masked (an Anthropic key of 108 characters, an OpenAI project
key of 164, a 40-character one). A reply of ``--deltas`` text deltas (prose and code, a
few characters each, none holding a key) goes through :meth:`KeyMask.feed`, against
serialising each delta's ``switchman/chatDelta`` notification (``json.dumps``, as pygls
does before it writes one); a tool result of ``--result-kb`` KB of prose goes through
:meth:`KeyMask.mask`, against serialising it with ``json.dumps`` (as it is stored and sent
to the model). Both sides alternate, ``--runs`` times each; medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable

from bench_support import at_least, machine

from switchman.engine.keymask import KeyMask

KEYS = (("sk-ant-api03-" + "Xy7_Qm2-Lp9ZkV4wRt8NbC1dFg6HjK3sMa5UeW0oPiYrTq" * 3)[:108],
        ("sk-proj-" + "Ab3Cd5Ef7Gh9Ij1Kl2Mn4Op6Qr8St0Uv" * 6)[:164],
        ("x" + "9fK2mQ7vL4pR8tW1zY6bN3cH5" * 2)[:40])
PROSE = ("The function reads the configuration once, keeps it, and checks the file again "
         "only when it changed: `def load(path: Path) -> Config:` returns the parsed "
         "routing rules, and a test covers the case where the file is missing. ")


def deltas(count: int) -> list[str]:
    """``count`` pieces of text, 3 to 7 characters each, as a model streams them."""
    text = PROSE * (count * 7 // len(PROSE) + 1)
    pieces, at = [], 0
    for i in range(count):
        size = 3 + i % 5
        pieces.append(text[at:at + size])
        at += size
    return pieces


def per_delta(pieces: list[str]) -> float:
    """CPU seconds per delta through one stream's mask."""
    mask = KeyMask(*KEYS)
    start = time.process_time()
    for piece in pieces:
        mask.feed(piece)
    mask.flush()
    return (time.process_time() - start) / len(pieces)


def per_notification(pieces: list[str]) -> float:
    """CPU seconds per delta to serialise its chatDelta notification."""
    start = time.process_time()
    for piece in pieces:
        json.dumps({"jsonrpc": "2.0", "method": "switchman/chatDelta", "params": {
            "session_id": "01JDXABCDEFGHJKMNPQRSTVWXY", "turn_id": "01JDXABCDEFGHJKMNPQRSTVWXZ",
            "kind": "text", "text": piece}})
    return (time.process_time() - start) / len(pieces)


def timed(fn: Callable[[], object], repeat: int = 5) -> float:
    start = time.process_time()
    for _ in range(repeat):
        fn()
    return (time.process_time() - start) / repeat


def main(count: int, result_kb: int, runs: int) -> None:
    """Alternate each pair and print the medians and their ratios."""
    pieces = deltas(count)
    result = PROSE * (result_kb * 1024 // len(PROSE))
    mask = KeyMask(*KEYS)
    fed, serialised, masked, dumped = [], [], [], []
    for _ in range(runs):
        fed.append(per_delta(pieces) * 1e6)
        serialised.append(per_notification(pieces) * 1e6)
        masked.append(timed(lambda: mask.mask(result)) * 1e3)
        dumped.append(timed(lambda: json.dumps({"type": "tool_result", "content": result})) * 1e3)
    rows = [(f"masking a streamed delta ({count} deltas)", statistics.median(fed), "µs",
             "serialising its chatDelta notification", statistics.median(serialised)),
            (f"masking a {result_kb} KB tool result", statistics.median(masked), "ms",
             "serialising it", statistics.median(dumped))]
    print(f"{machine()}; {len(KEYS)} keys of {', '.join(str(len(k)) for k in KEYS)} "
          f"characters; {runs} runs of each, alternating (medians)\n")
    print("| benchmark | figure | reference (same run) | ratio |\n|---|---|---|---|")
    for what, figure, unit, reference, against in rows:
        print(f"| {what} | {figure:.2f} {unit} | {reference}: {against:.2f} {unit} | "
              f"{figure / against:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=at_least(1), default=7,
                        help="runs of each, alternating (default 7)")
    parser.add_argument("--deltas", type=at_least(1), default=2000,
                        help="text deltas per reply (default 2000)")
    parser.add_argument("--result-kb", type=at_least(1), default=64,
                        help="size of the tool result in KB (default 64)")
    arguments = parser.parse_args()
    main(arguments.deltas, arguments.result_kb, arguments.runs)
