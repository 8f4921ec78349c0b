"""CLI: ``python -m tests.support.fake_provider --port 0 --port-file PATH``.

Serves until SIGTERM / SIGINT. The chosen port is written atomically to
``--port-file`` (when given) and printed as ``FAKE_PROVIDER_PORT=<port>``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path

from .provider import FakeProvider


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse command-line options."""
    parser = argparse.ArgumentParser(
        prog="python -m tests.support.fake_provider", description=__doc__
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=0, help="port to bind; 0 picks a free one")
    parser.add_argument(
        "--port-file", type=Path, default=None, help="file to write the bound port to"
    )
    return parser.parse_args(argv)


def write_port_file(path: Path, port: int) -> None:
    """Write the port so readers never see a partial file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(f"{port}\n")
    os.replace(tmp, path)


STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


def main(argv: list[str] | None = None) -> int:
    """Run the fake provider until SIGTERM or SIGINT arrives."""
    args = parse_args(argv)
    # Block the stop signals before any thread starts (threads inherit the mask),
    # so they are only ever consumed by sigwait() in this thread.
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    with FakeProvider(host=args.host, port=args.port) as provider:
        if args.port_file is not None:
            write_port_file(args.port_file, provider.port)
        print(f"FAKE_PROVIDER_PORT={provider.port}", flush=True)
        signal.sigwait(STOP_SIGNALS)
    return 0


if __name__ == "__main__":
    sys.exit(main())
