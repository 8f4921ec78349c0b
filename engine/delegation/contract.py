"""The ``delegate()`` contract (spec 000 §6, 001 §4): arguments, context, results.

Arguments come from a model, so every one is checked here and a bad one is
an :class:`ArgumentProblem` whose message tells the planner what to fix; it
becomes an error tool result, never a failed turn.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Literal

import msgspec

from switchman.engine.config.schema import COMPLEXITY_LEVELS, TIER_NAMES
from switchman.engine.messages import ZERO_USD
from switchman.engine.providers.base import ToolSpec

DELEGATE = "delegate"
REQUEST_CONTEXT = "_request_context"
MAX_TIMEOUT_SECONDS = 3600.0
MAX_TASK_CHARS = 100_000
FORBIDDEN_FOR_WORKERS = frozenset({
    DELEGATE, "memory_add", "memory_replace", "memory_consolidate",
    "skill_create", "skill_update", "skill_delete", "skill_write",
})
"""Tools a worker never gets, whatever ``allowed_tools`` says (spec 001 §5.6)."""

FailureMode = Literal["worker_error", "max_tokens_exceeded", "insufficient_context",
                      "output_schema_validation_failed", "no_model_available_for_tier",
                      "cancelled_by_user", "timeout", "invalid_arguments", "approval_denied"]
INVALID_ARGUMENTS: FailureMode = "invalid_arguments"
"""A ``delegate`` call refused for its arguments: recorded, never a delegation (no worker)."""


class ArgumentProblem(ValueError):
    """A ``delegate`` argument the planner must correct."""


class FileInclude(msgspec.Struct, frozen=True, tag="file", tag_field="type"):
    """A file the worker re-reads itself."""

    path: str


class FileRangeInclude(msgspec.Struct, frozen=True, tag="file_range", tag_field="type"):
    """Only some lines of a file (1-based, inclusive)."""

    path: str
    lines: tuple[int, int]


class ToolResultInclude(msgspec.Struct, frozen=True, tag="tool_result", tag_field="type"):
    """The result of one of the planner's earlier tool calls, inlined."""

    tool_use_id: str


class MessageInclude(msgspec.Struct, frozen=True, tag="message", tag_field="type"):
    """One earlier message of the planner's session, inlined."""

    message_id: str


class InlineInclude(msgspec.Struct, frozen=True, tag="inline", tag_field="type"):
    """A note the planner writes for the worker."""

    text: str
    label: str = "note"


Include = FileInclude | FileRangeInclude | ToolResultInclude | MessageInclude | InlineInclude


class ContextSpec(msgspec.Struct, frozen=True):
    """What the worker is given besides its task (spec 000 §6.3)."""

    mode: Literal["minimal", "explicit"]
    include: list[Include] = []


class DelegateCall(msgspec.Struct, frozen=True, kw_only=True):
    """A validated ``delegate`` call."""

    tier: str
    task: str
    context: ContextSpec
    output_schema: dict[str, Any] | None = None
    allowed_tools: list[str] | None = None
    max_tokens: int | None = None
    timeout_seconds: float | None = None
    complexity: str | None = None
    """The planner's estimate (trivial … large); None lets the engine estimate it."""
    profile: str | None = None
    """The registered agent profile the worker runs with (None: ``subagent``)."""


class MissingItem(msgspec.Struct, frozen=True):
    """One thing a worker needs and was not given."""

    type: Literal["file", "file_range", "message", "tool_result", "decision", "other"]
    ref: str
    hint: str


class InsufficientContextRequest(msgspec.Struct, frozen=True):
    """A worker's structured request for more context (spec 000 §6.6.1)."""

    missing: list[MissingItem]
    summary: str


class DelegateUsageSummary(msgspec.Struct, frozen=True, kw_only=True):
    """What one delegation used (recorded, not shown to the planner model)."""

    model: str
    turn_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: Decimal = ZERO_USD
    estimated_usd: Decimal = ZERO_USD
    """The part of ``cost_usd`` that is Switchman's estimate (calls cut short)."""
    wall_time_seconds: float = 0.0
    tool_call_count: int = 0


class DelegateResult(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of one ``delegate`` call (spec 001 §4.3)."""

    success: bool
    output: str | dict[str, Any] | list[Any] | InsufficientContextRequest
    error: str | None
    usage_summary: DelegateUsageSummary
    worker_session_id: str


def parse_call(arguments: dict[str, Any]) -> DelegateCall:
    """The call ``arguments`` describe; raises :class:`ArgumentProblem` naming what is wrong."""
    unknown = sorted(set(arguments) - set(DELEGATE_SPEC.input_schema["properties"]))
    if unknown:
        raise ArgumentProblem(f"unknown argument(s): {', '.join(unknown)}")
    tier = arguments.get("tier")
    if tier not in TIER_NAMES:
        raise ArgumentProblem(f"'tier' must be one of {', '.join(TIER_NAMES)} (got {tier!r})")
    task = arguments.get("task")
    if not isinstance(task, str) or not task.strip():
        raise ArgumentProblem("'task' must be a non-empty string: the worker's instruction")
    if len(task) > MAX_TASK_CHARS:
        raise ArgumentProblem(f"'task' is longer than {MAX_TASK_CHARS} characters")
    return DelegateCall(
        tier=tier, task=task.strip(), context=_context(arguments.get("context")),
        output_schema=_schema(arguments.get("output_schema")),
        allowed_tools=_names(arguments.get("allowed_tools")),
        max_tokens=_positive_int(arguments.get("max_tokens"), "max_tokens"),
        timeout_seconds=_timeout(arguments.get("timeout_seconds")),
        complexity=_complexity(arguments.get("complexity")),
        profile=_profile(arguments.get("profile")))


def _profile(raw: object) -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str) or not raw.strip():
        raise ArgumentProblem("'profile' must be the name of a registered profile")
    return raw.strip()


def _complexity(raw: object) -> str | None:
    if raw is None:
        return None
    if raw not in COMPLEXITY_LEVELS:
        raise ArgumentProblem(f"'complexity' must be one of {', '.join(COMPLEXITY_LEVELS)} "
                              f"(got {raw!r}), or left out to let Switchman estimate it")
    return str(raw)


def _context(raw: object) -> ContextSpec:
    if raw is None:
        raise ArgumentProblem("'context' is required: {\"mode\": \"minimal\"} or "
                              "{\"mode\": \"explicit\", \"include\": [...]}")
    try:
        spec = msgspec.convert(raw, ContextSpec)
    except msgspec.ValidationError as exc:
        raise ArgumentProblem(f"'context' is not valid: {exc}") from None
    if spec.mode == "minimal" and spec.include:
        raise ArgumentProblem("'context' in mode minimal takes no 'include'; use mode explicit")
    if spec.mode == "explicit" and not spec.include:
        raise ArgumentProblem("'context' in mode explicit needs a non-empty 'include' list")
    for item in spec.include:
        if isinstance(item, FileRangeInclude) and not 1 <= item.lines[0] <= item.lines[1]:
            raise ArgumentProblem(f"file_range {item.path}: 'lines' must be [first, last] with "
                                  "1 <= first <= last")
    return spec


def _schema(raw: object) -> dict[str, Any] | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise ArgumentProblem("'output_schema' must be a JSON Schema object")
    import jsonschema  # noqa: PLC0415 - ~0.1 s to import; only delegations with a schema need it

    try:
        jsonschema.validators.validator_for(raw).check_schema(raw)
    except jsonschema.SchemaError as exc:
        raise ArgumentProblem(f"'output_schema' is not a valid JSON Schema: {exc.message}") \
            from None
    _check_refs(raw)
    return raw


_DATA_KEYWORDS = frozenset({"const", "default", "enum", "examples"})
"""Keywords whose values are data, not schemas: a ``$ref`` key in them is no reference."""
_SCHEMA_URI = "urn:switchman:output-schema"


def _check_refs(schema: dict[str, Any]) -> None:
    """Every ``$ref`` of ``schema`` must lead somewhere inside it: one that does not (a pointer
    to nothing, a remote schema, which is never fetched) passed the schema check, and checking
    the worker's answer then raised. Schemas that set their own ``$id`` inside are left to the
    answer's check (:func:`validate_output`), where relative references change base."""
    refs: list[str] = []
    if not _collect_refs(schema, refs, root=True):
        return
    from referencing import Registry  # noqa: PLC0415 - comes with jsonschema; see _schema
    from referencing.exceptions import Unresolvable  # noqa: PLC0415
    from referencing.jsonschema import DRAFT202012, specification_with  # noqa: PLC0415

    dialect = schema.get("$schema")
    specification = specification_with(dialect, default=DRAFT202012) \
        if isinstance(dialect, str) else DRAFT202012
    resolver = Registry().with_resource(_SCHEMA_URI, specification.create_resource(schema)) \
        .resolver(base_uri=_SCHEMA_URI)
    for ref in refs:
        try:
            resolver.lookup(ref)
        except Unresolvable:
            raise ArgumentProblem(
                f"'output_schema' has a $ref that leads nowhere: {ref!r}. References must "
                "point inside the schema (put shared parts under $defs); remote schemas are "
                "not fetched") from None


def _collect_refs(node: object, refs: list[str], *, root: bool = False) -> bool:
    """Add the ``$ref`` strings under ``node`` to ``refs``; False when a schema inside sets
    its own ``$id`` (the references cannot then all be read from the root)."""
    if isinstance(node, list):
        return all(_collect_refs(item, refs) for item in node)
    if not isinstance(node, dict):
        return True
    if not root and isinstance(node.get("$id"), str):
        return False
    if isinstance(node.get("$ref"), str):
        refs.append(node["$ref"])
    return all(_collect_refs(value, refs) for key, value in node.items()
               if key not in _DATA_KEYWORDS)


def _names(raw: object) -> list[str] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(n, str) for n in raw):
        raise ArgumentProblem("'allowed_tools' must be a list of tool names")
    return list(dict.fromkeys(raw))


def _positive_int(raw: object, name: str) -> int | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int) or raw < 1:
        raise ArgumentProblem(f"'{name}' must be a whole number of at least 1 (got {raw!r})")
    return raw


def _timeout(raw: object) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) \
            or not 0 < raw <= MAX_TIMEOUT_SECONDS:
        raise ArgumentProblem(f"'timeout_seconds' must be a number of seconds in (0, "
                              f"{MAX_TIMEOUT_SECONDS:.0f}] (got {raw!r})")
    return float(raw)


def validate_output(text: str, schema: dict[str, Any]) -> tuple[Any, str | None]:
    """The worker's final text parsed as JSON and checked against ``schema``:
    (value, None) when it conforms, (None, why not) otherwise."""
    body = _strip_fence(text)
    try:
        value = msgspec.json.decode(body)
    except msgspec.DecodeError as exc:
        return None, f"the output is not JSON ({exc})"
    import jsonschema  # noqa: PLC0415 - see _schema
    from referencing.exceptions import Unresolvable  # noqa: PLC0415

    try:
        error = jsonschema.exceptions.best_match(
            jsonschema.validators.validator_for(schema)(schema).iter_errors(value))
    except Unresolvable as exc:  # a $ref that leads nowhere (see _check_refs)
        return None, f"the output_schema cannot be used: {exc}"
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return None, f"at {where}: {error.message}"
    return value, None


def _strip_fence(text: str) -> str:
    """Models often wrap JSON in a Markdown code fence; look inside it."""
    body = text.strip()
    if body.startswith("```") and body.endswith("```"):
        body = body[3:-3]
        body = body.split("\n", 1)[1] if "\n" in body else body
    return body.strip()


_INCLUDE_SCHEMA = {"type": "object", "description": (
    "One of: {type: file, path} (the worker re-reads it); {type: file_range, path, "
    "lines: [first, last]}; {type: tool_result, tool_use_id} (an earlier tool result of this "
    "session, inlined); {type: message, message_id} (an earlier message, inlined); "
    "{type: inline, label, text} (a note from you)."),
    "properties": {"type": {"enum": ["file", "file_range", "tool_result", "message",
                                     "inline"]}},
    "required": ["type"]}

DELEGATE_SPEC = ToolSpec(DELEGATE, (
    "Hand a focused, mechanical sub-task to a worker on a cheaper model and get its result. "
    "The worker has no memory of this conversation: give it a precise task and the context "
    "it needs. Use tier fast for mechanical work (renames, formatting, small searches, "
    "summaries), balanced for ordinary coding, deep only for hard reasoning. Several "
    "delegate calls in one message run at the same time. If the worker reports "
    "insufficient_context, retry with the references it lists or do the task yourself."), {
    "type": "object",
    "properties": {
        "tier": {"enum": list(TIER_NAMES), "description": "Which class of model runs it."},
        "task": {"type": "string", "description": "The worker's instruction."},
        "context": {"type": "object", "description": (
            "{\"mode\": \"minimal\"} for self-contained tasks, or {\"mode\": \"explicit\", "
            "\"include\": [...]} with references."),
            "properties": {"mode": {"enum": ["minimal", "explicit"]},
                           "include": {"type": "array", "items": _INCLUDE_SCHEMA}},
            "required": ["mode"]},
        "output_schema": {"type": "object", "description": "A JSON Schema the worker's final "
                          "answer must match (it then answers with JSON only)."},
        "allowed_tools": {"type": "array", "items": {"type": "string"}, "description":
                          "The tools the worker may use, among yours (default: all of yours)."},
        "max_tokens": {"type": "integer", "minimum": 1, "description":
                       "A cap on the worker's output tokens."},
        "timeout_seconds": {"type": "number", "exclusiveMinimum": 0, "description":
                            "Stop the worker after this many seconds."},
        "complexity": {"enum": list(COMPLEXITY_LEVELS), "description": (
            "How hard the task is; a tier may use other models for some levels. Leave it "
            "out to have it estimated from the task and context.")},
        "profile": {"type": "string", "description": (
            "The agent profile the worker runs with: its instructions, tools (within yours) "
            "and model policy. Only registered profiles; default subagent.")},
    },
    "required": ["tier", "task", "context"]})


LISTED_PROFILES_CHARS = 4_000
"""How much of the delegate tool's definition lists profiles: it is sent with every call of a
planner, and a repository's profiles.yaml of 1,000 profiles made it 192 KB (48,000 tokens)."""
PROFILE_ABOUT_CHARS = 160
"""A listed profile's description is cut to this."""


def delegate_spec(profiles: list[tuple[str, str]]) -> ToolSpec:
    """:data:`DELEGATE_SPEC` naming the profiles a worker may run with (name, description),
    so the planner can choose one: in the order given (the user's and the built-in ones
    first), within :data:`LISTED_PROFILES_CHARS`. When some do not fit, the rest are only
    counted and the names are not an ``enum``: any registered one is still accepted."""
    parts: list[str] = []
    used = 0
    for name, about in profiles:
        short = about if len(about) <= PROFILE_ABOUT_CHARS else \
            about[:PROFILE_ABOUT_CHARS - 1].rstrip() + "…"
        part = f"{name}: {short}" if short else name
        if used + len(part) > LISTED_PROFILES_CHARS:
            break
        parts.append(part)
        used += len(part) + 2
    listed = "; ".join(parts)
    if len(parts) < len(profiles):
        listed += f"; and {len(profiles) - len(parts)} more profiles, not listed here"
    properties = dict(DELEGATE_SPEC.input_schema["properties"])
    properties["profile"] = {
        **({"enum": [name for name, _ in profiles]} if len(parts) == len(profiles) else
           {"type": "string"}),
        "description": f"{properties['profile']['description']} Profiles: {listed}."}
    return ToolSpec(DELEGATE_SPEC.name, DELEGATE_SPEC.description,
                    {**DELEGATE_SPEC.input_schema, "properties": properties})

REQUEST_CONTEXT_SPEC = ToolSpec(REQUEST_CONTEXT, (
    "End your work and ask the planner for what you are missing, instead of guessing. "
    "List each missing item; the planner may retry with it."), {
    "type": "object",
    "properties": {
        "missing": {"type": "array", "items": {
            "type": "object",
            "properties": {"type": {"enum": ["file", "file_range", "message", "tool_result",
                                             "decision", "other"]},
                           "ref": {"type": "string", "description": "Path, id or label."},
                           "hint": {"type": "string", "description": "What you would do with "
                                                                     "it."}},
            "required": ["type", "ref", "hint"]}, "minItems": 1},
        "summary": {"type": "string", "description": "One sentence: what is missing."},
    },
    "required": ["missing", "summary"]})


def parse_context_request(arguments: dict[str, Any]) -> InsufficientContextRequest:
    """A worker's ``_request_context`` arguments; raises :class:`ArgumentProblem`."""
    try:
        request = msgspec.convert(arguments, InsufficientContextRequest)
    except msgspec.ValidationError as exc:
        raise ArgumentProblem(f"_request_context arguments are not valid: {exc}") from None
    if not request.missing or not request.summary.strip():
        raise ArgumentProblem("_request_context needs at least one missing item and a summary")
    return request
