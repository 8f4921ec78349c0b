"""Engine values to and from LSP types for configuration editing, in one place.

The engine counts columns in UTF-16 code units; the editor may have chosen
UTF-8 or UTF-32 at initialisation. Every position crosses here, converted
against the text it refers to.
"""

from __future__ import annotations

from lsprotocol import types

from switchman.engine.config.problems import Position, Problem, Range, Severity
from switchman.engine.config.text import from_utf16, to_utf16

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


class Positions:
    """Converts positions in one text between the engine's UTF-16 and the client's encoding."""

    def __init__(self, lines: list[str], encoding: str) -> None:
        self.lines = lines
        self.encoding = encoding

    def _line(self, number: int) -> str:
        return self.lines[number] if 0 <= number < len(self.lines) else ""

    def lsp_position(self, position: Position) -> types.Position:
        """An engine position as the client counts it."""
        if self.encoding == types.PositionEncodingKind.Utf16:
            return types.Position(position.line, position.character)
        line = self._line(position.line)
        column = from_utf16(line, position.character)
        if self.encoding == types.PositionEncodingKind.Utf32:
            return types.Position(position.line, column)
        return types.Position(position.line, len(line[:column].encode("utf-8")))

    def lsp_range(self, rng: Range) -> types.Range:
        """An engine range as the client counts it."""
        return types.Range(self.lsp_position(rng.start), self.lsp_position(rng.end))

    def engine_position(self, position: types.Position) -> Position:
        """A client position in the engine's UTF-16 columns."""
        if self.encoding == types.PositionEncodingKind.Utf16:
            return Position(position.line, position.character)
        line = self._line(position.line)
        if self.encoding == types.PositionEncodingKind.Utf32:
            column = min(position.character, len(line))
        else:
            column = len(line.encode("utf-8")[:position.character].decode("utf-8", "ignore"))
        return Position(position.line, to_utf16(line, column))

    def engine_range(self, rng: types.Range) -> Range:
        """A client range in the engine's UTF-16 columns."""
        return Range(self.engine_position(rng.start), self.engine_position(rng.end))


def lsp_diagnostic(problem: Problem, positions: Positions, uri: str,
                   related: bool) -> types.Diagnostic:
    """A problem as an LSP diagnostic (with the shadowing rule as related information)."""
    return types.Diagnostic(
        range=positions.lsp_range(problem.range),
        message=problem.message,
        severity=_SEVERITY[problem.severity],
        code=problem.code.value,
        source=problem.source,
        data=problem.data,
        related_information=_related(problem, positions, uri) if related else None,
    )


def _related(problem: Problem, positions: Positions,
             uri: str) -> list[types.DiagnosticRelatedInformation] | None:
    data = problem.data or {}
    line = data.get("shadowed_by_line")
    if not isinstance(line, int) or not 0 <= line < len(positions.lines):
        return None
    text = positions.lines[line]
    start = len(text) - len(text.lstrip())
    rng = Range(Position(line, to_utf16(text, start)), Position(line, to_utf16(text, len(text))))
    return [types.DiagnosticRelatedInformation(
        location=types.Location(uri=uri, range=positions.lsp_range(rng)),
        message=f"rule '{data.get('shadowed_by')}' matches first")]
