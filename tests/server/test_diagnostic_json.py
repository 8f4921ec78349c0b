"""Diagnostics are built as LSP JSON directly (a fifth of a long file's check went to building
lsprotocol objects and unstructuring them): the JSON is what the lsprotocol route gave."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.protocol import default_converter

from switchman.server.features.config_editing import checker
from switchman.server.features.config_editing.convert import diagnostic_json, lsp_diagnostic

TEXT = """global_default: opus
rules:
  - name: all ✓ 𝄞
    use: opus
  - name: images — ünïcode
    when: {has_images: true}
    use: sonet
  - name: keyed
    whn: {message_contains_any: [a]}
    use: sonnet
  - use: haiku
"""


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8", "utf-32"])
@pytest.mark.parametrize("related", [True, False])
def test_the_json_is_what_lsprotocol_and_cattrs_made(tmp_path: Path, encoding: str,
                                                      related: bool) -> None:
    path = tmp_path / "routing.yaml"
    checker.update(tmp_path, path, TEXT)
    analysis = checker.documents(tmp_path).check(path)
    assert analysis is not None
    codes = {p.code.value for p in analysis.problems}
    assert {"shadowed-rule", "unknown-key", "unnamed-rule"} <= codes
    assert any(p.data for p in analysis.problems)
    positions = checker._positions(analysis.text, encoding)
    uri = path.as_uri()

    direct = [diagnostic_json(p, positions, uri, related) for p in analysis.problems]
    through_lsprotocol = default_converter().unstructure(  # type: ignore[no-untyped-call]
        [lsp_diagnostic(p, positions, uri, related) for p in analysis.problems],
        list[types.Diagnostic])

    assert json.loads(json.dumps(direct)) == json.loads(json.dumps(through_lsprotocol))
    assert related == any("relatedInformation" in d for d in direct)
