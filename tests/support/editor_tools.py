"""The editor's side of tools, for end-to-end tests: approval answers and buffers.

:class:`ToolEditor` plays what VS Code or Neovim do: it answers
``switchman/approve`` requests from a script (or never, to test the timeout),
records them, and applies ``workspace/applyEdit`` to in-memory buffers, as an
editor applies edits to unsaved buffers (the disk is left alone, except for
deleting a file, which editors do on disk).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from lsprotocol import types

from switchman.engine.config.problems import Range
from switchman.engine.config.text import TextEdit, apply_edits, split_lines
from switchman.server import methods
from switchman.server.positions import Positions
from tests.support.lsp import SwitchmanClient

NEVER = None
"""An answer that is never given (the request waits until withdrawn)."""


NO_RAW_ANSWER = object()
"""``ToolEditor.raw_answer`` unset: applyEdit answers as an editor does."""


class ToolEditor:
    """Answers approvals and applies edits for one :class:`SwitchmanClient`."""

    def __init__(self, client: SwitchmanClient) -> None:
        self.client = client
        self.answers: list[dict[str, Any] | None] = []
        self.default: dict[str, Any] = {"decision": "allow_once"}
        self.approvals: list[dict[str, Any]] = []
        self.edits: list[dict[str, Any]] = []
        self.buffers: dict[str, str] = {}
        self.refusal: str | None = None
        """When set, applyEdit answers ``applied: false`` with this reason."""
        self.unsaved: str | None = None
        """When set, applyEdit answers ``applied: true`` with this ``failureReason`` (not saved)."""
        self.raw_answer: Any = NO_RAW_ANSWER
        """When set, applyEdit answers exactly this (a malformed answer: null, a list) and
        changes nothing."""
        self.while_asked: Callable[[dict[str, Any]], None] | None = None
        """Run before each approval is answered (what the user does while the card is shown)."""
        self._never = asyncio.Event()
        # pygls marks the registered function, so it takes plain functions, not methods.
        async def approve(params: Any) -> Any:
            return await self._approve(params)

        def apply(params: Any) -> Any:
            return self._apply(params)

        client.feature(methods.APPROVE)(approve)
        client.feature(types.WORKSPACE_APPLY_EDIT)(apply)

    async def _approve(self, params: Any) -> Any:
        self.approvals.append(params)
        self.client.record(methods.APPROVE, params)
        if self.while_asked is not None:
            self.while_asked(params)
        answer = self.answers.pop(0) if self.answers else self.default
        if answer is NEVER:
            await self._never.wait()
        return answer

    def _apply(self, params: Any) -> Any:
        edit = self.client.protocol._converter.unstructure(params)["edit"]
        self.edits.append(edit)
        self.client.record(types.WORKSPACE_APPLY_EDIT, edit)
        if self.raw_answer is not NO_RAW_ANSWER:
            return self.raw_answer
        if self.refusal is not None:
            return {"applied": False, "failureReason": self.refusal}
        for uri, edits in (edit.get("changes") or {}).items():
            self._edit_buffer(uri, edits)
        for change in edit.get("documentChanges") or []:
            if change.get("kind") == "create":
                self.buffers[change["uri"]] = ""
            elif change.get("kind") == "delete":
                _path(change["uri"]).unlink()
                self.buffers.pop(change["uri"], None)
            else:
                self._edit_buffer(change["textDocument"]["uri"], change["edits"])
        if self.unsaved is not None:
            return {"applied": True, "failureReason": self.unsaved}
        return {"applied": True}

    def _edit_buffer(self, uri: str, edits: list[dict[str, Any]]) -> None:
        text = self.buffers.get(uri)
        if text is None:
            text = _path(uri).read_text("utf-8")
        positions = Positions(split_lines(text), self.client.position_encoding)
        engine_edits = [TextEdit(Range(positions.engine_position(_position(e["range"]["start"])),
                                       positions.engine_position(_position(e["range"]["end"]))),
                                 e["newText"]) for e in edits]
        self.buffers[uri] = apply_edits(text, engine_edits)

    def buffer(self, path: Path) -> str | None:
        """The unsaved text of ``path`` after the edits applied to it."""
        return self.buffers.get(path.as_uri())


def _position(raw: dict[str, int]) -> types.Position:
    return types.Position(raw["line"], raw["character"])


def _path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path))
