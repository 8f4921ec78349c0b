"""Random edits to a valid routing.yaml never crash the daemon; it always answers next."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine, Iterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from tests.support.editing import Editor, editing
from tests.support.lsp import CLIENTS

T = TypeVar("T")

VALID = "schema_version: 1\nglobal_default: sonnet\ntiers: {fast: haiku, balanced: sonnet, " \
    "deep: opus}\nrules:\n" + "".join(
        f"  - name: rule {i}\n    when:\n      any_of:\n        - message_matches: \"(?i)x{i}\"\n"
        f"        - file_extensions_in_context: [sql, é{i}]\n    use: haiku\n"
        for i in range(12)) + "workspaces:\n  /code/app:\n    default: opus\n"

ALPHABET = [*" -:#{}[],\"'&*!|>\n\tabcé😀0", "rules:", "  - ", "use: ", "when:"]


class DaemonThread:
    """A daemon and its client driven from a private event loop, shared by many examples."""

    def __init__(self, session: AbstractAsyncContextManager[Editor]) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.session = session
        self.editor = self.run(session.__aenter__())

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the daemon's loop and return its result."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout=60)

    def close(self) -> None:
        """Shut the daemon down and stop the loop."""
        self.run(self.session.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join()


@pytest.fixture(scope="module", params=CLIENTS)
def daemon(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[
        DaemonThread]:
    folder: Path = tmp_path_factory.mktemp("random-edits")
    started = DaemonThread(editing(request.param, folder))
    yield started
    started.close()


edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 12),
                           st.lists(st.sampled_from(ALPHABET), max_size=4).map("".join)),
                 min_size=1, max_size=8)


async def edit_then_ask(editor: Editor, changes: list[tuple[float, int, str]],
                        probe: float) -> None:
    uri = editor.uri("routing")
    if uri in editor.texts:
        editor.replace_all(uri, VALID)
    else:
        editor.open(uri, VALID)
    for where, length, inserted in changes:
        start = int(where * len(editor.texts[uri]))
        editor.edit(uri, start, min(start + length, len(editor.texts[uri])), inserted)
    await editor.diagnostics(uri)  # the final version was checked
    at = int(probe * len(editor.texts[uri]))
    position = editor.range_at(uri, at, at).start
    whole = editor.range_at(uri, 0, len(editor.texts[uri]))
    identifier = types.TextDocumentIdentifier(uri=uri)
    client = editor.client
    await client.text_document_hover_async(types.HoverParams(identifier, position))
    await client.text_document_completion_async(types.CompletionParams(identifier, position))
    await client.text_document_document_symbol_async(types.DocumentSymbolParams(identifier))
    await client.text_document_code_action_async(types.CodeActionParams(
        identifier, whole, types.CodeActionContext(diagnostics=[])))


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(changes=edits, probe=st.floats(0, 1))
def test_random_edits_never_break_the_daemon(daemon: DaemonThread,
                                             changes: list[tuple[float, int, str]],
                                             probe: float) -> None:
    daemon.run(edit_then_ask(daemon.editor, changes, probe))
    client = daemon.editor.client
    assert client.error is None
    assert not [m for m in client.messages if m.type == types.MessageType.Error]
