"""Checking a provider's ``base_url`` when the configuration is read, not when a turn runs."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_PORT = re.compile(r":([^:\]/]*)\Z")
_HOST = re.compile(r"[A-Za-z0-9.\-_~%]+|\[[0-9A-Fa-f:.]+\]")


def url_problem(value: str) -> str | None:
    """Why ``value`` cannot be used as an API base URL (a sentence), or None if it can."""
    if any(c.isspace() or not c.isprintable() for c in value):
        return f"'{value}' contains spaces or control characters; it is not a URL."
    try:
        parts = urlsplit(value)
    except ValueError:  # an unclosed IPv6 bracket
        return f"'{value}' is not a valid URL."
    if parts.scheme not in ("http", "https"):
        return f"'{value}' is not an http:// or https:// URL."
    host, port = _host_and_port(parts.netloc.rpartition("@")[2])
    if not host or not _HOST.fullmatch(host):
        return f"'{value}' has no valid host name."
    if port is not None and not (port.isdigit() and 1 <= int(port) <= 65535):
        return f"'{value}' has port '{port}'; a port is a number from 1 to 65535."
    return None


def _host_and_port(netloc: str) -> tuple[str, str | None]:
    match = _PORT.search(netloc)
    if match is None or (netloc.startswith("[") and not netloc[:match.start()].endswith("]")):
        return netloc, None
    return netloc[:match.start()], match.group(1)
