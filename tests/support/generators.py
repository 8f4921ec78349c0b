"""Hypothesis strategies for hostile configuration text, down to the scalar level.

Values are generated where the schema expects them (every scalar path of every
file kind), as the raw text a person or a fuzzer could type: explicit tags,
hex, octal, binary and base-60 numbers, numbers too long for any type, lone
surrogates, YAML-only line breaks, and every line ending.
"""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import strategies as st

from switchman.engine.config import declarations
from switchman.engine.config import schema as s
from switchman.engine.config.check import FileKind

Leaf = tuple[tuple[str | int, ...], s.Spec]

ROOTS = declarations.ROOTS
LINE_ENDINGS = ["\n", "\r\n", "\r", "\x85", "\u2028", "\u2029"]
ODD_CHARACTERS = ["\ud800", "\udfff", "\ufeff", "\x00", "\x07", "\t", "\u00e9", "\U0001f600",
                  "\u200b", "#", ":", "- ", "{", "[", "&a ", "*a", "!", "|", ">", "'", '"', "%"]
TAGS = ["", "", "", "!!int ", "!!float ", "!!bool ", "!!str ", "!!null ", "!!binary ",
        "!!timestamp ", "!!set ", "!!omap ", "!!python/object ", "!local ",
        "!<tag:yaml.org,2002:int> ", "!!merge ", "!!value "]


def _digits(alphabet: str, max_size: int = 12) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=0, max_size=max_size)


numbers = st.one_of(
    st.integers(-10**6, 10**6).map(str),
    st.builds("0x{}".format, _digits("0123456789abcdefABCDEF_Zx")),
    st.builds("0b{}".format, _digits("012_")),
    st.builds("0{}".format, _digits("012345678_")),
    st.lists(st.integers(0, 99), min_size=2, max_size=400).map(
        lambda parts: ":".join(map(str, parts))),
    st.builds("{}.{}".format, st.lists(st.integers(0, 70), min_size=2, max_size=300).map(
        lambda parts: ":".join(map(str, parts))), _digits("0123456789_", 4)),
    st.integers(1, 1500).map(lambda n: "9" * n),
    st.integers(1, 1500).map(lambda n: "-0x" + "f" * n),
    st.builds("{}e{}".format, st.sampled_from(["1", "1.5", ".5", "-2.", "9" * 40]),
              st.integers(-400, 400)),
    st.sampled_from([".inf", "-.Inf", "+.INF", ".nan", ".NaN", ".", "._", ".e5", "-", "+", "0x",
                     "0b", "0o17", "1_000", "1__0.5", "1:2:3", "190:20:30.15", "08", "0.", "1e",
                     "1e+", "١٢٣"]),
)
words = st.sampled_from(["maybe", "yes", "No", "ON", "off", "true", "False", "y", "n", "~",
                         "null", "", "opus", "haiku", "anthropic:claude-opus-4-7", "gpt-5",
                         "09:00", "24:00", "22:00", "(a", "(?i)x", "\\", "http://x", "https://",
                         "FOO_KEY", "1FOO", "~/key", "/abs", r"\pL{200}", r"(\pL|\pN|\pP){10}x"])
scalar_texts = st.builds(
    "{}{}{}".format, st.sampled_from(TAGS),
    st.one_of(numbers, words, st.text(max_size=8)),
    st.one_of(st.just(""), st.sampled_from(ODD_CHARACTERS)),
)


def leaves(spec: s.Spec, path: tuple[str | int, ...] = (), depth: int = 0) -> Iterator[Leaf]:
    """Every scalar (or time window) place in ``spec``, with a sample path to it."""
    if isinstance(spec, s.Ref):
        if depth > 3:
            return
        spec = s.DEFINITIONS[spec.name]
    if isinstance(spec, s.Obj):
        for key, field in spec.fields.items():
            yield from leaves(field.spec, (*path, key), depth + 1)
    elif isinstance(spec, s.ListOf):
        yield from leaves(spec.item, (*path, 0), depth + 1)
    elif isinstance(spec, s.MapOf):
        key = {"providers": "anthropic", "models": "anthropic:m",
               "workspaces": "/w"}.get(str(path[-1]) if path else "", "k")
        yield from leaves(spec.value, (*path, key), depth + 1)
    else:
        yield path, spec


LEAVES = {kind: list(leaves(root)) for kind, root in ROOTS.items()}


def render(assignments: list[tuple[tuple[str | int, ...], str]], newline: str) -> str:
    """Block YAML setting each path to its raw scalar text (later paths share prefixes)."""
    lines: list[str] = []
    written: list[tuple[str | int, ...]] = []
    for path, value in assignments:
        shared = 0
        for old in written:
            common = 0
            while common < min(len(old), len(path)) - 1 and old[common] == path[common]:
                common += 1
            shared = max(shared, common)
        indent = 0
        for depth, part in enumerate(path):
            if depth < shared:
                indent += 2
                continue
            last = depth == len(path) - 1
            pad = " " * indent
            if isinstance(part, int):
                lines.append(f"{pad}- {value}" if last else f"{pad}-")
            else:
                lines.append(f"{pad}{part}: {value}" if last else f"{pad}{part}:")
            indent += 2
        written.append(path)
    return newline.join(lines) + newline


@st.composite
def config_documents(draw: st.DrawFn, kind: FileKind) -> str:
    """A document of ``kind`` with hostile values at the places the schema declares."""
    chosen = draw(st.lists(st.sampled_from(LEAVES[kind]), min_size=1, max_size=6))
    assignments = [(path, draw(scalar_texts)) for path, _ in chosen]
    text = render(assignments, draw(st.sampled_from(LINE_ENDINGS)))
    if draw(st.booleans()):  # a stray character somewhere
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from([*ODD_CHARACTERS, *LINE_ENDINGS])) + text[at:]
    return text
