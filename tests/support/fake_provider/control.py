"""The JSON control API under ``/_fake/`` for non-Python test drivers.

Endpoints (all JSON):

* ``POST /_fake/script`` - body is a list of steps, or
  ``{"steps": [...], "model": "name"}`` to key them to a model.
* ``GET /_fake/requests[?wait=N&timeout=S]`` - recorded requests; with
  ``wait`` blocks until at least N exist (HTTP 408 on timeout).
* ``POST /_fake/reset`` - clear queues and requests, release stalls.
* ``POST /_fake/release`` - release every queued or active stall.
* ``GET /_fake/state[?wait_stalls=N&timeout=S]`` - queue sizes, request
  count and how many stalls were reached; ``wait_stalls`` blocks.
* ``GET /_fake/health`` - ``{"ok": true}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from .script import ScriptError, parse_steps
from .state import ProviderState

Query = dict[str, list[str]]
Result = tuple[int, object]
_Handler = Callable[[ProviderState, Query, bytes], Result]

DEFAULT_WAIT_TIMEOUT = 10.0


def handle_control(
    method: str, path: str, query: Query, raw: bytes, state: ProviderState
) -> Result:
    """Dispatch one control request; returns (status, JSON-able body)."""
    handler = _ROUTES.get((method, path))
    if handler is None:
        return 404, {"error": f"no control endpoint {method} {path}"}
    try:
        return handler(state, query, raw)
    except (ScriptError, ValueError) as exc:
        return 400, {"error": str(exc)}


def _query_number(query: Query, key: str, default: float | None) -> float | None:
    """A numeric query parameter, or ``default``."""
    values = query.get(key)
    return float(values[0]) if values else default


def _script(state: ProviderState, query: Query, raw: bytes) -> Result:
    """Queue steps from the request body."""
    payload = json.loads(raw or b"null")
    model = None
    if isinstance(payload, dict):
        model = payload.get("model")
        payload = payload.get("steps")
    steps = parse_steps(payload)
    state.script(steps, model if isinstance(model, str) else None)
    return 200, {"queued": len(steps), "queue": state.queue.sizes()}


def _requests(state: ProviderState, query: Query, raw: bytes) -> Result:
    """List recorded requests, optionally waiting for a count."""
    wait = _query_number(query, "wait", None)
    timeout = _query_number(query, "timeout", DEFAULT_WAIT_TIMEOUT) or 0.0
    records = state.log.snapshot() if wait is None else state.log.wait_for(int(wait), timeout)
    if records is None:
        current = state.log.snapshot()
        return 408, {
            "error": "timeout",
            "count": len(current),
            "requests": [r.to_json() for r in current],
        }
    return 200, {"count": len(records), "requests": [r.to_json() for r in records]}


def _reset(state: ProviderState, query: Query, raw: bytes) -> Result:
    """Clear all scripted and recorded state."""
    state.reset()
    return 200, {"ok": True}


def _release(state: ProviderState, query: Query, raw: bytes) -> Result:
    """Release every known stall."""
    return 200, {"released": state.stalls.release_all()}


def _state(state: ProviderState, query: Query, raw: bytes) -> Result:
    """Report queue sizes and counters, optionally waiting for stalls."""
    wanted = _query_number(query, "wait_stalls", None)
    timeout = _query_number(query, "timeout", DEFAULT_WAIT_TIMEOUT) or 0.0
    ok = True if wanted is None else state.stalls.wait_reached(int(wanted), timeout)
    body = {
        "queue": state.queue.sizes(),
        "requests": len(state.log.snapshot()),
        "stalls_reached": state.stalls.reached_count,
    }
    return (200 if ok else 408), body


def _health(state: ProviderState, query: Query, raw: bytes) -> Result:
    """Liveness probe."""
    return 200, {"ok": True}


_ROUTES: dict[tuple[str, str], _Handler] = {
    ("POST", "/_fake/script"): _script,
    ("GET", "/_fake/requests"): _requests,
    ("POST", "/_fake/reset"): _reset,
    ("POST", "/_fake/release"): _release,
    ("GET", "/_fake/state"): _state,
    ("GET", "/_fake/health"): _health,
}
