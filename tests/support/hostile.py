"""Run every check and editor function on one text and hold each result to its promises.

Shared by the property tests, the fuzz harness and the regression corpus: a
text passes when nothing raises, every range lies inside the document as an
editor counts lines, and every quick fix offered removes its problem and keeps
the file parseable.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from hypothesis import currently_in_test_context
from hypothesis.control import current_build_context

from switchman.engine.config.builtin import builtin_registry
from switchman.engine.config.check import FileKind, check_doc
from switchman.engine.config.problems import Position, Problem, Range
from switchman.engine.config.text import apply_edits, split_lines, utf16_len
from switchman.engine.config.yamldoc import YamlDocument, parse_yaml
from switchman.engine.editing.advice import advise
from switchman.engine.editing.chunked import ChunkedParser
from switchman.engine.editing.completion import complete
from switchman.engine.editing.fixes import FixContext, fixes
from switchman.engine.editing.hover import hover
from switchman.engine.editing.outline import Symbol, outline
from switchman.engine.keys import KeyRing

REGISTRY = builtin_registry()
ENVIRON = KeyRing({"ANTHROPIC_API_KEY": "k"})
PATHS = {FileKind.ROUTING: "/c/routing.yaml", FileKind.MODELS: "/c/models.yaml",
         FileKind.WORKSPACE: "/w/.switchman/routing.yaml",
         FileKind.PROFILES: "/c/profiles.yaml",
         FileKind.WORKSPACE_PROFILES: "/w/.switchman/profiles.yaml"}
TIERS = {"fast": "anthropic:claude-haiku-4-5", "balanced": "anthropic:claude-sonnet-4-6",
         "deep": "anthropic:claude-opus-4-7"}


class Document:
    """The lines of a text as an editor counts them, to check ranges against."""

    def __init__(self, text: str) -> None:
        self.lines = split_lines(text)
        self.widths = [utf16_len(line) for line in self.lines]

    def contains(self, position: Position) -> bool:
        """Whether ``position`` is a place in the text (the end of a line included)."""
        return (0 <= position.line < len(self.lines)
                and 0 <= position.character <= self.widths[position.line])

    def check_range(self, rng: Range, what: str) -> None:
        """Fail unless ``rng`` lies inside the text and does not end before it starts."""
        assert self.contains(rng.start), f"{what}: {rng} starts outside the document"
        assert self.contains(rng.end), f"{what}: {rng} ends outside the document"
        start, end = rng.start, rng.end
        assert (start.line, start.character) <= (end.line, end.character), f"{what}: {rng}"

    def positions(self, step: int = 1) -> Iterator[Position]:
        """Every ``step``-th position in the text, line ends included."""
        for line, width in enumerate(self.widths):
            for character in range(0, width + 1, step):
                yield Position(line, character)


def checked(kind: FileKind, text: str) -> tuple[YamlDocument, list[Problem]]:
    """Check ``text`` as the editor does; every problem's range must lie inside it."""
    doc = ChunkedParser().parse(text, PATHS[kind])
    problems = check_doc(kind, doc, REGISTRY) + advise(kind, doc, REGISTRY, ENVIRON)
    document = Document(text)
    for problem in problems:
        document.check_range(problem.range, f"{problem.code} problem")
        assert "Traceback" not in problem.message
    whole = check_doc(kind, parse_yaml(text, PATHS[kind]), REGISTRY)
    assert sorted(map(_key, whole)) == sorted(
        _key(p) for p in problems if p.code not in _ADVICE), "chunked parse disagrees"
    return doc, problems


MAX_POSITIONS = 400
"""Per text; a longer text is sampled evenly (every request on it is timed in bench/)."""


def exercise(kind: FileKind, text: str, step: int = 1) -> None:
    """Every editor function on ``text`` at every ``step``-th position; see the module doc."""
    doc, problems = checked(kind, text)
    document = Document(text)
    step = max(step, (sum(document.widths) + len(document.lines)) // MAX_POSITIONS)
    for symbol in _flat(outline(kind, doc)):
        document.check_range(symbol.range, "outline range")
        document.check_range(symbol.selection_range, "outline selection")
    for position in document.positions(step):
        for candidate in complete(kind, text, position, REGISTRY, ENVIRON, ["/w"]):
            document.check_range(candidate.range, "completion edit")
        found = hover(kind, doc, position, REGISTRY, ENVIRON)
        if found is not None:
            document.check_range(found.range, "hover")
    verify_fixes(kind, text, doc, problems)


def verify_fixes(kind: FileKind, text: str, doc: YamlDocument, problems: list[Problem]) -> None:
    """Each fix offered on the whole text removes its problem and leaves the text parseable.

    The fixes are built as the editor builds them (checked by a recheck), and
    their result is checked again here, independently.
    """
    document = Document(text)
    everything = Range(Position(0, 0), Position(len(document.lines), 0))
    # Every fix is checked, however long it takes (a still clock): the editor's time limit
    # would leave the later ones of a slow run unchecked here.
    context = FixContext(kind, TIERS, recheck(kind), clock=lambda: 0.0)
    for fix in fixes(doc, problems, everything, context):
        for edit in fix.edits:
            document.check_range(edit.range, f"edit of fix {fix.title!r}")
        fixed = apply_edits(text, fix.edits)
        after = parse_yaml(fixed, PATHS[kind])
        assert not after.problems, f"fix {fix.title!r} broke the YAML: {fixed!r}"
        found = check_doc(kind, after, REGISTRY) + advise(kind, after, REGISTRY, ENVIRON)
        assert _like(found, fix.problem) < _like(problems, fix.problem), \
            f"fix {fix.title!r} left its problem: {fixed!r}"


def recheck(kind: FileKind) -> Callable[[str], list[Problem]]:
    """How the editor checks the text a fix would produce."""
    def problems_of(text: str) -> list[Problem]:
        doc = parse_yaml(text, PATHS[kind])
        return check_doc(kind, doc, REGISTRY) + advise(kind, doc, REGISTRY, ENVIRON)

    return problems_of


def _like(problems: list[Problem], problem: Problem) -> int:
    return sum(p.code == problem.code and p.message == problem.message for p in problems)


_ADVICE = {"no-vision-model", "missing-api-key", "no-cost-tracking", "unnamed-rule", "empty-when"}


def _key(problem: Problem) -> tuple[str, str, str]:
    return (str(problem.range), problem.code, problem.message)


def _flat(symbols: Iterable[Symbol]) -> Iterator[Symbol]:
    for symbol in symbols:
        yield symbol
        yield from _flat(symbol.children)


# -- the regression corpus and the fuzz budget -------------------------------------------

CORPUS = Path(__file__).parent.parent / "corpus" / "config"
FUZZ_ENV = "SWITCHMAN_FUZZ"


def fuzz_examples(default: int) -> int:
    """How many examples a fuzz test runs: ``default`` in ``make test``, far more when
    ``SWITCHMAN_FUZZ`` is set (to a multiplier, e.g. ``SWITCHMAN_FUZZ=50``)."""
    factor = os.environ.get(FUZZ_ENV, "")
    return default * max(int(factor), 1) if factor.isdigit() else default


def corpus_entries() -> list[Path]:
    """Every input that ever failed, in file-name order."""
    return sorted(CORPUS.glob("*.json"))


def replay(entry: Path) -> None:
    """Hold one corpus entry to the promises of :func:`exercise` (every version, in order)."""
    data = json.loads(entry.read_text("utf-8"))
    kinds = list(FileKind) if data["kind"] == "all" else [FileKind(data["kind"])]
    for kind in kinds:
        exercise_versions(kind, data["versions"])


def exercise_versions(kind: FileKind, versions: list[str], step: int = 1) -> None:
    """:func:`exercise` on each version, and the chunked parse of the edits agreeing too."""
    parser = ChunkedParser()
    for text in versions:
        exercise(kind, text, step)
        doc = parser.parse(text, PATHS[kind])
        assert sorted(map(_key, check_doc(kind, doc, REGISTRY))) == sorted(
            map(_key, check_doc(kind, parse_yaml(text, PATHS[kind]), REGISTRY))), \
            "re-using the previous version's rules changed the result"


def record_failure(kind: FileKind, versions: list[str], why: str) -> None:
    """Add a failing input to the corpus (only for Hypothesis' final, shrunk example)."""
    context = current_build_context() if currently_in_test_context() else None
    if context is None or not context.is_final:
        return
    body = json.dumps({"kind": kind.value, "versions": versions, "why": why}, indent=1)
    name = hashlib.sha256(body.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    CORPUS.mkdir(parents=True, exist_ok=True)
    (CORPUS / f"found-{name}.json").write_text(body + "\n", "utf-8")


def exercise_or_record(kind: FileKind, versions: list[str], step: int = 1) -> None:
    """:func:`exercise_versions`, saving the input to the corpus if it fails."""
    try:
        exercise_versions(kind, versions, step)
    except BaseException as exc:
        record_failure(kind, versions, f"{type(exc).__name__}: {str(exc)[:200]}")
        raise
