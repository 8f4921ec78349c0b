"""Engine values to and from LSP types for configuration editing, in one place.

Every position crosses here, converted by :class:`~switchman.server.positions.Positions`
against the text it refers to.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from switchman.engine.config.problems import Position, Problem, Range, Severity
from switchman.engine.config.text import TextEdit, to_utf16
from switchman.engine.editing.completion import Candidate, CandidateKind
from switchman.engine.editing.fixes import Fix
from switchman.engine.editing.hover import Hover
from switchman.engine.editing.outline import Symbol, SymbolKind
from switchman.server.positions import Positions

_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFORMATION: types.DiagnosticSeverity.Information,
    Severity.HINT: types.DiagnosticSeverity.Hint,
}


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


def diagnostic_json(problem: Problem, positions: Positions, uri: str,
                    related: bool) -> dict[str, Any]:
    """:func:`lsp_diagnostic` as the LSP JSON it unstructures to, built directly: a long
    file has hundreds of problems, and building lsprotocol objects for each and then
    unstructuring them with cattrs was a fifth of each check."""
    found: dict[str, Any] = {
        "range": _range_json(positions.lsp_range(problem.range)),
        "message": problem.message,
        "severity": _SEVERITY[problem.severity].value,
        "code": problem.code.value,
        "source": problem.source,
    }
    if problem.data is not None:
        found["data"] = problem.data
    information = _related(problem, positions, uri) if related else None
    if information is not None:
        found["relatedInformation"] = [
            {"location": {"uri": i.location.uri, "range": _range_json(i.location.range)},
             "message": i.message} for i in information]
    return found


def _range_json(rng: types.Range) -> dict[str, Any]:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


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


_COMPLETION_KINDS = {
    CandidateKind.KEY: types.CompletionItemKind.Property,
    CandidateKind.CONDITION: types.CompletionItemKind.Function,
    CandidateKind.MODEL: types.CompletionItemKind.Value,
    CandidateKind.ALIAS: types.CompletionItemKind.Reference,
    CandidateKind.VALUE: types.CompletionItemKind.EnumMember,
    CandidateKind.FOLDER: types.CompletionItemKind.Folder,
    CandidateKind.SKILL: types.CompletionItemKind.File,
}

_SYMBOL_KINDS = {
    SymbolKind.SETTING: types.SymbolKind.Property,
    SymbolKind.RULES: types.SymbolKind.Array,
    SymbolKind.RULE: types.SymbolKind.Event,
    SymbolKind.WORKSPACES: types.SymbolKind.Namespace,
    SymbolKind.WORKSPACE: types.SymbolKind.Module,
    SymbolKind.TIERS: types.SymbolKind.Enum,
    SymbolKind.TIER: types.SymbolKind.EnumMember,
    SymbolKind.PROVIDERS: types.SymbolKind.Namespace,
    SymbolKind.PROVIDER: types.SymbolKind.Interface,
    SymbolKind.MODELS: types.SymbolKind.Namespace,
    SymbolKind.MODEL: types.SymbolKind.Class,
    SymbolKind.PROFILES: types.SymbolKind.Namespace,
    SymbolKind.PROFILE: types.SymbolKind.Object,
}


def lsp_completion(candidate: Candidate, positions: Positions, snippets: bool,
                   markdown: bool) -> types.CompletionItem:
    """A completion candidate as an LSP completion item replacing the token at the cursor."""
    return types.CompletionItem(
        label=candidate.label,
        kind=_COMPLETION_KINDS[candidate.kind],
        detail=candidate.detail or None,
        documentation=lsp_markup(candidate.documentation, markdown)
        if candidate.documentation else None,
        sort_text=candidate.sort,
        filter_text=candidate.label,
        insert_text_format=types.InsertTextFormat.Snippet if snippets
        else types.InsertTextFormat.PlainText,
        text_edit=types.TextEdit(range=positions.lsp_range(candidate.range),
                                 new_text=candidate.snippet if snippets else candidate.plain),
    )


def lsp_markup(text: str, markdown: bool) -> types.MarkupContent:
    """Markdown, or the same text as plain text for clients that cannot render it."""
    if markdown:
        return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)
    return types.MarkupContent(kind=types.MarkupKind.PlainText,
                               value=text.replace("**", "").replace("`", ""))


def lsp_hover(hover: Hover, positions: Positions, markdown: bool) -> types.Hover:
    """A hover with its range."""
    return types.Hover(contents=lsp_markup(hover.markdown, markdown),
                       range=positions.lsp_range(hover.range))


def lsp_text_edit(edit: TextEdit, positions: Positions) -> types.TextEdit:
    """A text edit in the client's position encoding."""
    return types.TextEdit(range=positions.lsp_range(edit.range), new_text=edit.new_text)


def lsp_code_action(fix: Fix, positions: Positions, uri: str, version: int | None,
                    document_changes: bool, related: bool) -> types.CodeAction:
    """A quick fix as a code action carrying its workspace edit."""
    edits = [lsp_text_edit(e, positions) for e in fix.edits]
    if document_changes:
        edit = types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
            edits=list(edits))])
    else:
        edit = types.WorkspaceEdit(changes={uri: edits})
    return types.CodeAction(
        title=fix.title,
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[lsp_diagnostic(fix.problem, positions, uri, related)],
        is_preferred=fix.preferred,
        edit=edit,
    )


def lsp_document_symbol(symbol: Symbol, positions: Positions) -> types.DocumentSymbol:
    """An outline entry with its children."""
    return types.DocumentSymbol(
        name=symbol.name,
        kind=_SYMBOL_KINDS[symbol.kind],
        detail=symbol.detail or None,
        range=positions.lsp_range(symbol.range),
        selection_range=positions.lsp_range(symbol.selection_range),
        children=[lsp_document_symbol(c, positions) for c in symbol.children],
    )


def lsp_symbol_information(symbols: list[Symbol], positions: Positions, uri: str,
                           container: str | None = None) -> list[types.SymbolInformation]:
    """The outline flattened, for clients without hierarchical symbols."""
    flat = []
    for symbol in symbols:
        flat.append(types.SymbolInformation(
            name=symbol.name, kind=_SYMBOL_KINDS[symbol.kind], container_name=container,
            location=types.Location(uri=uri, range=positions.lsp_range(symbol.range))))
        flat += lsp_symbol_information(symbol.children, positions, uri, symbol.name)
    return flat
