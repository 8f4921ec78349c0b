from __future__ import annotations
import json
from pathlib import Path
from tests.lsp.conftest import Daemon
from tests.support.fake_provider import FakeProvider
from tests.support.rawrpc import RawDaemon

def test_probe(daemon: Daemon, fake: FakeProvider, tmp_path: Path) -> None:
    raw = RawDaemon(daemon.env, tmp_path / "stderr.log")
    try:
        raw.initialize(daemon.workspace)
        uri = (daemon.workspace / "src" / "app.py").as_uri()
        for params in [
            {"message": "explain", "attachments": [{"kind": "selection", "uri": uri, "text": "x \ud800 y", "start_line": 1, "end_line": 1}]},
            {"message": "/delegate fast read it", "attachments": [{"kind": "selection", "uri": uri, "text": "x \ud800 y", "start_line": 1, "end_line": 1}]},
            {"message": "/delegate \ud800 task"},
            {"message": "/profile \ud800"},
            {"message": "/trust revoke \ud800"},
            {"message": "/model \ud800"},
            {"message": "/modle \ud800"},
            {"message": "explain", "attachments": [{"kind": "selection", "uri": "file:///etc/passwd", "text": "root", "start_line": 1, "end_line": 1}]},
            {"message": "explain", "attachments": [{"kind": "file", "uri": "file:///etc/passwd"}]},
            {"message": "explain", "attachments": [{"kind": "file", "uri": uri + "/../../../../etc/passwd"}]},
            {"message": "/delegate fast x", "attachments": [{"kind": "file", "uri": "file:///etc/passwd"}]},
        ]:
            fake.script_text("ok")
            a = raw.request("switchman/chat", {"workspace": daemon.uri, **params}, ) if False else None
            msg_id = raw.new_id()
            raw.send({"jsonrpc": "2.0", "id": msg_id, "method": "switchman/chat", "params": {"workspace": daemon.uri, **params}})
            a = raw.response(msg_id, timeout=30)
            print("\nPARAMS", ascii(params)[:200], "\n  ->", ascii(a.get("result", a.get("error")))[:500])
        print("REQS", [ascii(r.body)[:300] for r in fake.requests if "passwd" in json.dumps(r.body) or "root" in json.dumps(r.body)])
    finally:
        raw.close()
        print((tmp_path / "stderr.log").read_text()[-3000:])
