"""An editor session on Switchman's configuration files, for end-to-end tests.

:class:`Editor` opens and edits documents the way VS Code and Neovim do
(incremental changes, positions in the encoding the server chose) and waits
for the diagnostics of a given document version. It never sleeps.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.support.lsp import SwitchmanClient, running_server, server_env

PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS

TEXT_ONLY_MODELS = """\
models:
  ollama:textonly:
    aliases: [textonly]
    capabilities: {supports_images: false, max_context_tokens: 32000}
"""
"""The models.yaml on disk for editing tests: the built-ins plus a local model without vision."""


def column(line: str, code_points: int, encoding: str) -> int:
    """A code-point column on ``line`` counted in ``encoding``."""
    prefix = line[:code_points]
    if encoding == types.PositionEncodingKind.Utf8:
        return len(prefix.encode("utf-8"))
    if encoding == types.PositionEncodingKind.Utf32:
        return len(prefix)
    return len(prefix.encode("utf-16-le")) // 2


def code_points(line: str, character: int, encoding: str) -> int:
    """The code-point column of ``character`` counted in ``encoding``."""
    for index in range(len(line) + 1):
        if column(line, index, encoding) >= character:
            return index
    return len(line)


@dataclass
class Editor:
    """One editor connected to a running daemon."""

    client: SwitchmanClient
    config: Path
    workspace: Path
    texts: dict[str, str] = field(default_factory=dict)
    versions: dict[str, int] = field(default_factory=dict)
    sent_at: dict[str, int] = field(default_factory=dict)
    """Per document: how many diagnostics had arrived when its current version was sent."""

    @property
    def encoding(self) -> str:
        """The position encoding the server chose."""
        return self.client.position_encoding

    def uri(self, kind: str) -> str:
        """The URI of the user's ``routing``/``models`` file or the workspace's file."""
        if kind == "workspace":
            return (self.workspace / ".switchman" / "routing.yaml").as_uri()
        if kind == "workspace-profiles":
            return (self.workspace / ".switchman" / "profiles.yaml").as_uri()
        return (self.config / f"{kind}.yaml").as_uri()

    def position(self, uri: str, line: int, code_point: int) -> types.Position:
        """A position in ``uri``'s current text, counted as the server expects."""
        lines = self.texts[uri].split("\n")
        text = lines[line] if line < len(lines) else ""
        return types.Position(line, column(text, code_point, self.encoding))

    def range_of(self, uri: str, needle: str, occurrence: int = 1) -> types.Range:
        """The range of the ``occurrence``-th ``needle`` in ``uri``'s current text."""
        text = self.texts[uri]
        index = -1
        for _ in range(occurrence):
            index = text.index(needle, index + 1)
        return self.range_at(uri, index, index + len(needle))

    def range_at(self, uri: str, start: int, end: int) -> types.Range:
        """The range between two code-point offsets of ``uri``'s current text."""
        text = self.texts[uri]

        def at(offset: int) -> types.Position:
            line = text.count("\n", 0, offset)
            return self.position(uri, line, offset - (text.rfind("\n", 0, offset) + 1))

        return types.Range(at(start), at(end))

    def open(self, uri: str, text: str) -> None:
        """Open a document."""
        self.texts[uri], self.versions[uri] = text, 1
        self.sent_at[uri] = self.published()
        self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="yaml", version=1,
                                                 text=text)))

    def edit(self, uri: str, start: int, end: int, new_text: str) -> None:
        """Replace code-point offsets ``start:end`` with an incremental change."""
        rng = self.range_at(uri, start, end)
        text = self.texts[uri]
        self.texts[uri] = text[:start] + new_text + text[end:]
        self.versions[uri] += 1
        self.sent_at[uri] = self.published()
        self.client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri,
                                                                version=self.versions[uri]),
            content_changes=[types.TextDocumentContentChangePartial(range=rng, text=new_text)]))

    def insert(self, uri: str, offset: int, new_text: str) -> None:
        """Insert text at a code-point offset."""
        self.edit(uri, offset, offset, new_text)

    def replace_all(self, uri: str, text: str) -> None:
        """Replace the whole text (still as an incremental change)."""
        self.edit(uri, 0, len(self.texts[uri]), text)

    def close(self, uri: str) -> None:
        """Close a document."""
        self.client.text_document_did_close(types.DidCloseTextDocumentParams(
            text_document=types.TextDocumentIdentifier(uri=uri)))

    def published(self) -> int:
        """How many diagnostics notifications have arrived (to wait for later ones)."""
        return len(self.client.received[PUBLISH])

    async def diagnostics(self, uri: str) -> list[types.Diagnostic]:
        """The diagnostics published for the document's current version."""
        version = self.versions[uri]
        return await self.next_diagnostics(uri, self.sent_at[uri], version=version)

    async def next_diagnostics(self, uri: str, after: int,
                               where: Callable[[list[types.Diagnostic]], bool] = lambda d: True,
                               version: int | None = None) -> list[types.Diagnostic]:
        """The first diagnostics for ``uri`` published after notification number ``after``."""
        def found() -> Any:
            later = self.client.received[PUBLISH][after:]
            return next((p for p in later if p.uri == uri and where(list(p.diagnostics))
                         and (version is None or p.version == version)), None)

        params = await self.client.wait_until(found)
        return list(params.diagnostics)


def with_code(diagnostics: list[types.Diagnostic], code: str) -> list[types.Diagnostic]:
    """The diagnostics carrying ``code``."""
    return [d for d in diagnostics if d.code == code]


@asynccontextmanager
async def editing(editor: str, tmp_path: Path, delay_ms: int = 0,
                  extra_env: dict[str, str] | None = None) -> AsyncIterator[Editor]:
    """A daemon with an isolated config folder and one workspace, driven as ``editor``."""
    config, data, workspace = tmp_path / "config", tmp_path / "data", tmp_path / "project"
    for folder in (config, data, workspace / ".switchman"):
        folder.mkdir(parents=True)
    (config / "models.yaml").write_text(TEXT_ONLY_MODELS, "utf-8")
    env = server_env(config, data, {"ANTHROPIC_API_KEY": "test-key-not-used",
                                    "SWITCHMAN_DIAGNOSTICS_DELAY_MS": str(delay_ms),
                                    **(extra_env or {})})
    async with running_server(editor, env, workspaces=[workspace]) as client:
        yield Editor(client, config, workspace)
