"""Hostile documents: checks and editor requests, each a ratio against a normal document.

For each hostile text (keys up to the size cap, a line of 30,000 spaces, a
mutated 3 KB file, a 200,000-character value, deep flow nesting, an alias
fan-out, thousands of rules that shadow each other, a 10 MB file, YAML-only
line breaks) the benchmark measures, in the same run:

* the editor's check (chunked parse, schema and semantic checks, advice);
* the outline;
* the slowest single completion or hover over positions spread evenly through
  the text (every request is one of these);
* quick fixes for every problem in the text (each fix is verified by a recheck);

and divides each by the same operation on a well-formed routing.yaml of the
same size (rules of the usual shape), so a ratio near 1 means the hostile text
costs no more than an ordinary one. The check and the outline go rule by rule,
so a text of many short rules is also divided by a well-formed file of as many
rules (``SAME_RULES``; short distinct rules, within the size cap), measured in
the same run: the row of the same size alone reads several times for 6,000
one-line rules against 551 of six lines. Absolute figures are printed too: the
aim is that no single check or request on any of these texts takes a second.

Quick fixes get a ratio only when the reference's request did the same work
(:func:`same_fix_work`): it had problems to fix and verified as many fixes, each
a whole recheck of the edited text and nearly all of the time. Otherwise the row
shows "—" and the hostile text's time is informational: a normal text of the same
size has no problem, and the 6,000 rules' request verifies no fix (its first 20
problems are shadowed flow-style rules, which no fix moves) while their
same-rule-count reference verifies one per unnamed rule until the time limit.

Run: ``.venv/bin/python bench/bench_hostile.py`` (``--positions N``).
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from functools import partial
from typing import NamedTuple

from bench_support import at_least, machine

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind, check_doc
from switchman.engine.config.problems import Position, Problem, Range
from switchman.engine.config.text import split_lines
from switchman.engine.editing.advice import advise
from switchman.engine.editing.chunked import ChunkedParser
from switchman.engine.editing.completion import complete
from switchman.engine.editing.fixes import FixContext, fixes
from switchman.engine.editing.hover import hover
from switchman.engine.editing.outline import outline
from switchman.engine.files import MAX_CONFIG_BYTES
from switchman.engine.keys import KeyRing

REGISTRY = builtin_registry()
ENVIRON = KeyRing({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
KIND = FileKind.ROUTING
PATH = "/c/routing.yaml"
TIERS = {"fast": "anthropic:claude-haiku-4-5", "balanced": "anthropic:claude-sonnet-4-6",
         "deep": "anthropic:claude-opus-4-7"}
BASE = ("schema_version: 1\nglobal_default: sonnet\ntiers: {fast: haiku, balanced: sonnet, "
        "deep: opus}\nrules:\n")


def normal(size: int) -> str:
    """A well-formed routing.yaml of about ``size`` characters, never over the size cap: a
    reference past it would be refused by the check, completion and hover (which answer it at
    once), and a hostile text at the cap divided by nothing."""
    rules = []
    length, i = len(BASE), 0
    while length < size:
        rule = (f"  - name: rule {i}\n    when:\n      any_of:\n"
                f"        - message_matches: \"(?i)deploy-{i}\"\n"
                f"        - file_extensions_in_context: [sql, py{i}]\n    use: haiku\n")
        if length + len(rule) > MAX_CONFIG_BYTES:
            break
        rules.append(rule)
        length += len(rule)
        i += 1
    return BASE + "".join(rules)


def normal_rules(count: int) -> str:
    """A well-formed routing.yaml of ``count`` rules, each with its own condition (so none
    shadows another), short enough that 6,000 of them stay within the size cap."""
    letters = "bcdfghjkmnpqrstvwxz"  # no vowel: no code reads as a YAML 1.1 yes / no / on

    def code(i: int) -> str:
        digits = ""
        for _ in range(3):
            i, digit = divmod(i, len(letters))
            digits += letters[digit]
        return digits

    return BASE + "".join(f"- when: {{message_matches: {code(i)}}}\n  use: opus\n"
                          for i in range(count))


def rule_count(text: str) -> int:
    """How many rules ``text``'s ``rules:`` holds (0 when it has none or does not parse)."""
    root = ChunkedParser().parse(text, PATH).root
    pairs = root.pairs if root is not None else []
    return next((len(value.items) for key, value in pairs if key.text == "rules"), 0)


def shadowing_rules(count: int) -> str:
    """``count`` rules that match every turn, each shadowed by the first (flow style)."""
    return "global_default: opus\nrules:\n" + "- {use: opus}\n" * count


def mutated(seed: int = 7) -> str:
    """A 3 KB routing.yaml after 40 random single-token edits."""
    rnd = random.Random(seed)
    text = normal(3000)
    tokens = ["\n", " ", "-", ":", "{", "[", "'", "#", "&a ", "*a", "!!int ", "0x", "\t",
              "  - ", "use: opus\n", "\u2028", "\r"]
    for _ in range(40):
        at = rnd.randrange(len(text) + 1)
        text = text[:at] + rnd.choice(tokens) + text[at:]
    return text


def hostile() -> dict[str, str]:
    """The hostile texts, by name."""
    keys = "".join(f"k{i}: 1\n" for i in range(MAX_CONFIG_BYTES // 9))
    return {
        "unknown keys up to the cap": keys[:MAX_CONFIG_BYTES],
        "a line of 30,000 spaces": normal(3000) + " " * 30000 + "\n",
        "mutated 3 KB file": mutated(),
        "200,000-character value": "global_default: " + "x" * 200_000 + "\n",
        "flow nesting 63 deep": "rules: " + "[" * 63 + "]" * 63 + "\n",
        "alias fan-out": "a: &a [" + ", ".join(["x"] * 100) + "]\nb: &b [" +
                         ", ".join(["*a"] * 100) + "]\nrules: [*b, *b, *b]\n",
        "6,000 shadowing rules": shadowing_rules(6000),
        "10 MB file": "k: 1\n" * (2 * 1024 * 1024),
        "U+2028 instead of newlines": normal(3000).replace("\n", "\u2028"),
    }


SAME_RULES = ("6,000 shadowing rules",)
"""Hostile texts also divided by a normal file of as many rules (see the module's text)."""


def references(name: str, text: str) -> list[tuple[str, str]]:
    """The rows' labels and the normal texts ``text`` is divided by: one of its size, and for
    the texts of ``SAME_RULES`` one of as many rules."""
    rows = [(name, normal(min(len(text), MAX_CONFIG_BYTES)))]
    if name in SAME_RULES:
        count = rule_count(text)
        rows.append((f"  same rule count ({count:,})", normal_rules(count)))
    return rows


def timed(operation: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of ``repeat`` runs, in seconds."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        operation()
        best = min(best, time.perf_counter() - start)
    return best


class FixWork(NamedTuple):
    """What one quick-fix request on a text did."""

    problems: int
    """Problems the request was asked about (every problem of the text)."""
    verified: int
    """Fixes it verified, each by a whole recheck of the edited text."""


def same_fix_work(hostile: FixWork, reference: FixWork) -> bool:
    """Whether the two requests' times can be divided: the reference had something to fix,
    and both verified as many fixes (a recheck each, nearly all of the time)."""
    return reference.problems > 0 and hostile.verified == reference.verified


def measure(text: str, positions: int) -> tuple[dict[str, float], FixWork]:
    """Seconds for each operation on ``text``, and what its quick-fix request did."""
    doc = ChunkedParser().parse(text, PATH)
    verified = 0
    problems = check_doc(KIND, doc, REGISTRY) + advise(KIND, doc, REGISTRY, ENVIRON)

    def check() -> None:
        fresh = ChunkedParser().parse(text, PATH)
        check_doc(KIND, fresh, REGISTRY)
        advise(KIND, fresh, REGISTRY, ENVIRON)

    def recheck(edited: str) -> list[Problem]:
        nonlocal verified
        verified += 1
        again = ChunkedParser().parse(edited, PATH)
        return check_doc(KIND, again, REGISTRY) + advise(KIND, again, REGISTRY, ENVIRON)

    lines = split_lines(text)
    spots = [Position(n, col) for n in range(0, len(lines), max(1, len(lines) // positions))
             for col in (0, len(lines[n]) // 2, len(lines[n]))][:3 * positions]
    request = max((timed(partial(complete, KIND, text, p, REGISTRY, ENVIRON, []), 1) +
                   timed(partial(hover, KIND, doc, p, REGISTRY, ENVIRON), 1)) / 2
                  for p in spots)
    everything = Range(Position(0, 0), Position(len(lines), 0))
    context = FixContext(KIND, TIERS, recheck)
    figures = {"check": timed(check), "outline": timed(lambda: outline(KIND, doc)),
               "slowest request": request,
               "fixes": timed(lambda: fixes(doc, problems, everything, context), 1)}
    return figures, FixWork(len(problems), verified)


def row(name: str, operation: str, seconds: float, base: float, same_work: bool) -> str:
    """One line of the table: a hostile text's time for ``operation``, the normal text's
    (``base``, seconds) and the ratio, or "—" when the normal text did nothing to compare
    with (quick fixes whose work was not the hostile text's: ``same_work`` false)."""
    nothing = base <= 0 or (operation == "fixes" and not same_work)
    ratio = "—" if nothing else f"{seconds / base:.2f}"
    return f"{name:30} {operation:16} {seconds * 1000:11.1f} {base * 1000:10.1f} {ratio:>7}"


def table(name: str, text: str, positions: int) -> list[str]:
    """The table's lines for one hostile text: every operation against each reference (the
    references measured first)."""
    measured = [(label, *measure(normal_text, positions))
                for label, normal_text in references(name, text)]
    figures, work = measure(text, positions)
    return [row(label, operation, seconds, reference[operation], same_fix_work(work, done))
            for label, reference, done in measured for operation, seconds in figures.items()]


def main() -> None:
    """Print each hostile text's figures and their ratios to a normal text of its size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--positions", type=at_least(1), default=40,
                        help="cursor positions per text for completion and hover (default 40)")
    args = parser.parse_args()
    print(machine())
    print(f"{'document':30} {'operation':16} {'hostile ms':>11} {'normal ms':>10} {'ratio':>7}")
    for name, text in hostile().items():
        print("\n".join(table(name, text, args.positions)))
    print("\n— : the normal text's quick fixes did not do the hostile text's work (it had no "
          "problem to fix, or they verified another number of fixes, each a whole recheck), "
          "so the time of the hostile text's fixes has no reference (informational)")
    print("same rule count: the hostile text above against a normal file of as many (short) "
          "rules, since the check and the outline go rule by rule; for a text of many "
          "one-line rules this is the ratio that says whether a rule costs more")


if __name__ == "__main__":
    main()
