"""Check a YAML tree against a :mod:`schema` declaration, collecting every problem.

The walk turns nodes into plain Python values (dicts, lists, str, int, float,
bool). Values that fail their declaration are left out, so later semantic
checks only see well-typed data; every failure becomes a located
:class:`Problem`. Paths such as ``("rules", 3, "use")`` map back to nodes so
semantic checks can locate their own problems.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from typing import Any

from switchman.engine.config import schema as s
from switchman.engine.config.keyshape import looks_like_a_key
from switchman.engine.config.problems import Code, Problem, Range, Severity
from switchman.engine.config.scalars import MAX_NUMBER_CHARS, yaml_bool, yaml_float, yaml_int
from switchman.engine.config.urls import url_problem
from switchman.engine.config.yamldoc import YamlDocument, YamlNode
from switchman.engine.userregex import RegexError, compile_regex
from switchman.engine.wording import closest

Path = tuple[str | int, ...]
ModelResolver = Callable[[str], str | None]

NODE_BUDGET = 200_000
REGEX_INSTRUCTIONS_PER_NODE = 2
"""A regular expression costs the node budget one node per this many instructions of its
RE2 program (compiling takes about a microsecond per instruction, as walking a node does):
a file's patterns together are bounded like its nodes, so a file of many large ones is
refused after a fraction of a second instead of compiling each for seconds in all."""
REFUSED_REGEX_NODES = 4_000
"""What a pattern RE2 refuses as too large costs: finding that out took up to 6 ms."""
MAX_PROBLEMS = 1000
"""Problems shown per file; a hostile file can have one per line, and each costs time."""
MAX_SUGGESTIONS = 100
"""Unknown keys per file that get a 'did you mean' (the search is the costly part)."""
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"
_BOOL = "tag:yaml.org,2002:bool"
_NULL = "tag:yaml.org,2002:null"
_STR_TAG = "tag:yaml.org,2002:str"
_ENV_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)\Z")
_KEY_SOURCE = {"env-var": "the name of an environment variable",
               "path": "the path of a file that holds the key"}


class _Invalid:
    """Marks a value that failed validation and was left out."""

    def __repr__(self) -> str:
        return "INVALID"


INVALID: Any = _Invalid()


class Walker:
    """One validation pass over one document."""

    def __init__(
        self,
        doc: YamlDocument,
        resolve_model: ModelResolver | None = None,
        model_names: Sequence[str] = (),
    ) -> None:
        self.doc = doc
        self.resolve_model = resolve_model
        self.model_names = model_names
        self.context: object = getattr(resolve_model, "__self__", resolve_model)
        """What values depend on besides the nodes (the registry), for :attr:`doc.memo`."""
        self.problems: list[Problem] = []
        self.bad_paths: set[Path] = set()
        self._path: Path = ()
        self._budget = NODE_BUDGET
        self._found = 0  # every problem found, shown or not
        self._suggestions = MAX_SUGGESTIONS

    # -- locating and reporting -------------------------------------------------

    def node_at(self, path: Path, *, key: bool = False) -> YamlNode | None:
        """The value node (or, with ``key``, the key node) at ``path``, if it exists."""
        node = self.doc.root
        key_node: YamlNode | None = None
        for part in path:
            if node is None:
                return None
            if isinstance(part, str) and node.kind == "mapping":
                key_node = node.key_node(part)
                node = node.get(part)
            elif isinstance(part, int) and node.kind == "sequence":
                key_node, node = None, node.items[part] if part < len(node.items) else None
            elif not (part == 0 and node.kind == "scalar"):  # a lone value read as a list
                return None
        return key_node if key else node

    def range_at(self, path: Path, *, key: bool = False) -> Range:
        """The range of the value (or key) at ``path``; falls back to its parent."""
        probe = path
        while probe:
            node = self.node_at(probe, key=key) or self.node_at(probe)
            if node is not None:
                return self.doc.range_of(node)
            probe = probe[:-1]
        root = self.doc.root
        return self.doc.range_of(root) if root is not None else Range.at(0, 0, 0)

    def report(
        self,
        rng: Range,
        code: Code,
        message: str,
        severity: Severity = Severity.ERROR,
        data: dict[str, Any] | None = None,
    ) -> None:
        """Record a problem (after :data:`MAX_PROBLEMS`, only that there were more)."""
        self._found += 1
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(self.doc.problem(rng, code, message, severity, data))
        elif not self.saturated:
            self.problems.append(self.doc.problem(
                rng, Code.TOO_COMPLEX, f"More than {MAX_PROBLEMS} problems; the rest are not "
                "shown. Fix these first.", severity))
        else:
            self.hidden(severity)

    def hidden(self, severity: Severity) -> None:
        """Note a problem past :data:`MAX_PROBLEMS`: an error makes the notice an error."""
        notice = self.problems[MAX_PROBLEMS]
        if severity is Severity.ERROR and notice.severity is not Severity.ERROR:
            self.problems[MAX_PROBLEMS] = self.doc.problem(
                notice.range, notice.code, notice.message, Severity.ERROR)

    @property
    def saturated(self) -> bool:
        """Whether no more problems will be shown (so none need be worded)."""
        return len(self.problems) > MAX_PROBLEMS

    def tainted(self, path: Path) -> bool:
        """Whether a problem was found at or below ``path`` during the walk."""
        n = len(path)
        return any(bad[:n] == path for bad in self.bad_paths)

    def _bad(self, node: YamlNode, code: Code, message: str, **data: Any) -> Any:
        self.bad_paths.add(self._path)
        if self.saturated:
            self._found += 1
            self.hidden(Severity.ERROR)
            return INVALID
        self.report(self.doc.range_of(node), code, message, data=data or None)
        return INVALID

    # -- the walk ----------------------------------------------------------------

    def walk(self, node: YamlNode, spec: s.Spec, path: Path) -> Any:
        """Validate ``node`` against ``spec``; return its plain value or INVALID."""
        self._budget -= 1
        if self._budget < 0:
            if self._budget == -1:
                self._bad(node, Code.TOO_COMPLEX, "The file is too large or too repetitive to "
                          "check (check aliases that expand many times).")
            return INVALID
        self._path = path
        kind = type(spec)
        if kind is s.Ref:
            spec = s.DEFINITIONS[spec.name]  # type: ignore[attr-defined]
            kind = type(spec)
        if kind is s.Scalar:
            return self._scalar(node, spec, path)  # type: ignore[arg-type]
        if kind is s.Obj:
            return self._object(node, spec, path)  # type: ignore[arg-type]
        if kind is s.ListOf:
            return self._list(node, spec, path)  # type: ignore[arg-type]
        if kind is s.MapOf:
            return self._map(node, spec, path)  # type: ignore[arg-type]
        if kind is s.TimeWindow:
            return self._time_window(node)
        raise TypeError(f"unknown spec {spec!r}")  # pragma: no cover - programming error

    def _object(self, node: YamlNode, spec: s.Obj, path: Path) -> Any:
        if node.is_null:  # nothing given: fine, unless something had to be
            self._missing_keys(node, spec, path, set())
            return {}
        if node.kind != "mapping":
            return self._bad(node, Code.INVALID_TYPE,
                             f"{_label(spec, path)} must be a mapping of keys, "
                             f"found {_describe(node)}.")
        result: dict[str, Any] = {}
        seen: set[str] = set()
        fields = spec.fields
        for key_node, value_node in node.pairs:
            key = key_node.text
            self._path = path  # a bad key taints this mapping, not the child walked last
            if key_node.kind != "scalar" or key_node.tag == _NULL or key == "<<" or key in seen:
                self._key_problem(key_node)
                continue
            seen.add(key)
            child = (*path, key)
            self._path = child
            field = fields.get(key)
            if field is None:
                self._unknown_key(key_node, key, spec)
                continue
            value = self.walk(value_node, field.spec, child)
            if value is not INVALID:
                result[key] = value
        self._path = path
        self._missing_keys(node, spec, path, seen)
        return result

    def _missing_keys(self, node: YamlNode, spec: s.Obj, path: Path, seen: set[str]) -> None:
        """Report each required key of ``spec`` that ``node`` does not have."""
        for key in spec.required:
            if key not in seen:
                rng = self.range_at(path, key=True) if path else self.doc.range_of(node)
                about = spec.fields[key].spec.description
                article = "an" if key[:1] in "aeio" or key.startswith("un") else "a"  # a 'use'
                self.report(rng, Code.MISSING_KEY,
                            f"{_label(spec, path)} needs {article} '{key}' key"
                            + (f": {_continuing(about)}" if about else "."))

    def _key_problem(self, key_node: YamlNode) -> None:
        """Report a key that is not plain text, a merge key, or a repeated key."""
        if key_node.kind != "scalar" or key_node.is_null:
            self._bad(key_node, Code.INVALID_TYPE, f"Keys must be plain text, found "
                      f"{_describe(key_node)}.")
        elif key_node.text == "<<":
            self._bad(key_node, Code.UNKNOWN_KEY, "YAML merge keys (<<) are not supported here; "
                      "write the keys out.")
        else:
            self._bad(key_node, Code.DUPLICATE_KEY, f"'{key_node.text}' appears twice in this "
                      "mapping; only one can count.")

    def _unknown_key(self, key_node: YamlNode, key: str, spec: s.Obj) -> None:
        special = spec.special.get(key)
        if special is not None:
            self.report(self.doc.range_of(key_node), special.code, special.message,
                        special.severity)
            return
        if self.saturated:
            self._bad(key_node, spec.unknown_code, "")
            return
        self._suggestions -= 1
        suggestions = closest(key, list(spec.fields)) if self._suggestions >= 0 else []
        what = "condition" if spec.unknown_code is Code.UNKNOWN_PREDICATE else "key"
        where = f" in {spec.title}" if spec.title else ""
        hint = f" Did you mean '{suggestions[0]}'?" if suggestions else ""
        known = ", ".join(spec.fields)
        self._bad(key_node, spec.unknown_code,
                  f"Unknown {what} '{key}'{where}.{hint} Known: {known}.",
                  suggestions=suggestions)

    def _map(self, node: YamlNode, spec: s.MapOf, path: Path) -> Any:
        if node.is_null:
            return {}
        if node.kind != "mapping":
            return self._bad(node, Code.INVALID_TYPE,
                             f"{_label(spec, path)} must be a mapping, found {_describe(node)}.")
        result: dict[str, Any] = {}
        seen: set[str] = set()
        for key_node, value_node in node.pairs:
            key = key_node.text
            self._path = path  # a bad key taints this mapping, not the child walked last
            if key_node.kind != "scalar" or key_node.tag == _NULL or key == "<<" or key in seen:
                self._key_problem(key_node)
                continue
            seen.add(key)
            if not self._map_key_ok(key_node, key, spec.key):
                continue
            child = (*path, key)
            value = self.walk(value_node, spec.value, child)
            if value is not INVALID:
                result[key] = value
        return result

    def _map_key_ok(self, key_node: YamlNode, key: str, spec: s.Scalar) -> bool:
        if spec.format == "model-id" and not _is_model_id(key):
            self._bad(key_node, Code.INVALID_MODEL_ID,
                      f"Model id '{key}' must look like 'provider:name', "
                      "e.g. 'ollama:qwen2.5-coder'.")
            return False
        return True

    def _list(self, node: YamlNode, spec: s.ListOf, path: Path) -> Any:
        if node.kind != "sequence":
            if spec.single_ok and node.kind == "scalar" and not node.is_null:
                item = self.walk(node, spec.item, (*path, 0))
                return INVALID if item is INVALID else [item]
            return self._bad(node, Code.INVALID_TYPE,
                             f"{_label(spec, path)} must be a list, found {_describe(node)}.")
        if len(node.items) < spec.min_items:
            self.report(self.doc.range_of(node), spec.empty_code,
                        f"{_label(spec, path)} needs at least {spec.min_items} "
                        f"item{'s' if spec.min_items > 1 else ''}.", spec.empty_severity)
            if spec.empty_severity is Severity.ERROR:
                return INVALID
        if self.doc.memo is not None and type(spec.item) is s.Obj:
            values = [self._remembered(item, spec.item, (*path, i))
                      for i, item in enumerate(node.items)]
        else:
            values = [self.walk(item, spec.item, (*path, i)) for i, item in enumerate(node.items)]
        return [v for v in values if v is not INVALID]

    def _remembered(self, node: YamlNode, spec: s.Obj, path: Path) -> Any:
        """:meth:`walk` for a list item, re-using the value of an unchanged, valid item.

        Only items without problems are remembered, so nothing located (which
        moves with edits above) is ever re-used.
        """
        assert self.doc.memo is not None
        known = self.doc.memo.get(node, spec, self.context)
        if known is not None and self._budget >= known[1]:  # else the walk would run out
            value, walked = known
            self._budget -= walked
            return value
        found, budget = self._found, self._budget
        value = self.walk(node, spec, path)
        if self._found == found and value is not INVALID:
            self.doc.memo.put(node, spec, self.context, (value, budget - self._budget))
        return value

    def _time_window(self, node: YamlNode) -> Any:
        items = node.items if node.kind == "sequence" else []
        if len(items) != 2 or any(i.kind != "scalar" for i in items):
            return self._bad(node, Code.INVALID_TIME_WINDOW,
                             "A time window is two times, e.g. [\"09:00\", \"17:30\"].")
        minutes = []
        for item in items:
            match = _HHMM.match(item.text.strip())
            if match is None:
                return self._bad(item, Code.INVALID_TIME_WINDOW,
                                 f"'{item.text}' is not a time of day; use 24-hour HH:MM.")
            minutes.append(int(match.group(1)) * 60 + int(match.group(2)))
        if minutes[0] == minutes[1]:
            return self._bad(node, Code.INVALID_TIME_WINDOW,
                             "The window starts and ends at the same time, so it is empty.")
        return (minutes[0], minutes[1])

    def _scalar(self, node: YamlNode, spec: s.Scalar, path: Path) -> Any:
        if node.is_null and spec.nullable:
            return None
        if node.kind != "scalar" or node.is_null:
            return self._bad(node, Code.INVALID_TYPE,
                             f"{_label(spec, path)} must be {_article(spec.type)}, "
                             f"found {_describe(node)}.")
        value = self._convert(node, spec, path)
        if value is INVALID:
            return INVALID
        return self._check_value(node, spec, path, value)

    def _convert(self, node: YamlNode, spec: s.Scalar, path: Path) -> Any:
        kind = spec.type
        if kind == "string":
            if spec.text_only and node.tag != _STR_TAG:
                return self._bad(node, Code.INVALID_TYPE,
                                 f"{_label(spec, path)} must be text, found {_describe(node)} "
                                 f"(write it in quotes if you mean the text).")
            return node.text
        value: Any = None
        if kind == "boolean" and node.tag == _BOOL:
            value = yaml_bool(node.text)
        elif kind == "integer" and node.tag == _INT:
            value = yaml_int(node.text)
        elif kind == "number" and node.tag in (_INT, _FLOAT):
            value = yaml_float(node.text)
            unbounded = spec.minimum is None and spec.maximum is None
            if value is not None and (math.isnan(value) or (math.isinf(value) and unbounded)):
                return self._bad(node, Code.OUT_OF_RANGE,
                                 f"{_label(spec, path)} must be a finite number.")
        if value is not None:
            return value
        if len(node.text) > MAX_NUMBER_CHARS and kind in ("integer", "number"):
            return self._bad(node, Code.OUT_OF_RANGE, f"{_label(spec, path)} is far too long "
                             f"to be {_article(kind)} ({len(node.text):,} characters).")
        return self._bad(node, Code.INVALID_TYPE,
                         f"{_label(spec, path)} must be {_article(kind)}, found {_describe(node)}.")

    def _check_value(self, node: YamlNode, spec: s.Scalar, path: Path, value: Any) -> Any:
        if spec.type in ("integer", "number"):
            low, high = spec.minimum, spec.maximum
            if (low is not None and value < low) or (high is not None and value > high):
                return self._bad(node, Code.OUT_OF_RANGE,
                                 f"{_label(spec, path)} must be {_bounds(low, high)}; "
                                 f"found {shorten(node.text)}.")
        if spec.enum and value not in spec.enum:
            return self._bad(node, Code.INVALID_VALUE,
                             f"{_label(spec, path)} must be one of {', '.join(spec.enum)}; "
                             f"found '{value}'.", suggestions=closest(str(value), spec.enum))
        if spec.format is not None:
            return self._check_format(node, spec, path, value)
        return value

    def _spend_on_regex(self, node: YamlNode, nodes: int) -> bool:
        """Charge a pattern to the node budget; False (and a problem here) once it runs out."""
        if self._budget < 0:
            return False
        self._budget -= nodes
        if self._budget >= 0:
            return True
        self._budget = -2  # reported here, not again by the next walk (see walk)
        self._bad(node, Code.TOO_COMPLEX, "The regular expressions of this file are too large "
                  "together to check and match quickly; the patterns from here on are not "
                  "compiled. Use fewer or simpler patterns (message_contains_any for plain "
                  "words).")
        return False

    def _check_format(self, node: YamlNode, spec: s.Scalar, path: Path, value: Any) -> Any:
        fmt = spec.format
        if fmt == "regex":
            try:
                compiled = compile_regex(value)
            except RegexError as exc:
                self._spend_on_regex(node, REFUSED_REGEX_NODES if exc.too_large else 1)
                return self._bad(node, Code.INVALID_REGEX, f"Invalid regular expression: {exc}.")
            if not self._spend_on_regex(node, compiled.programsize // REGEX_INSTRUCTIONS_PER_NODE):
                return INVALID
        elif fmt == "model" and self.resolve_model is not None:
            return self._model(node, value)
        elif fmt in _KEY_SOURCE and looks_like_a_key(value):
            # never repeated: the message reaches the terminal, the editor and its logs
            return self._bad(node, Code.UNTRUSTED_SETTING,
                             f"This looks like an API key itself, not {_KEY_SOURCE[fmt]}. "
                             "Keys are never written in configuration files (nor repeated in "
                             "any message): remove it from this file, and put the key in an "
                             "environment variable named in api_key_env, or in a file only "
                             "you can read named in api_key_file.")
        elif fmt == "env-var" and not _ENV_VAR.match(value):
            return self._bad(node, Code.INVALID_VALUE,
                             f"'{value}' is not an environment variable name.")
        elif fmt == "url" and (problem := url_problem(value)) is not None:
            return self._bad(node, Code.INVALID_VALUE, problem)
        elif fmt == "time" and _HHMM.match(str(value).strip()) is None:
            return self._bad(node, Code.INVALID_VALUE,
                             f"'{shorten(node.text)}' is not a time of day; use 24-hour HH:MM.")
        return value

    def _model(self, node: YamlNode, name: str) -> Any:
        assert self.resolve_model is not None
        resolved = self.resolve_model(name)
        if resolved is not None:
            return resolved
        suggestions = closest(name, self.model_names)
        hint = f" Did you mean '{suggestions[0]}'?" if suggestions else ""
        return self._bad(node, Code.UNKNOWN_MODEL,
                         f"Unknown model '{name}'.{hint} Models come from models.yaml "
                         "(run 'switchman models' to list them).", suggestions=suggestions)


def _is_model_id(key: str) -> bool:
    provider, sep, name = key.partition(":")
    return bool(sep and provider.strip() and name.strip())


def _label(spec: s.Spec, path: Path) -> str:
    title = getattr(spec, "title", "")
    if path and isinstance(path[-1], str):
        return f"'{path[-1]}'"
    if title:
        return f"This {title}"
    named = next((part for part in reversed(path) if isinstance(part, str)), None)
    return f"An item of '{named}'" if named else "This value"


def _article(kind: str) -> str:
    return {"integer": "a whole number", "number": "a number", "boolean": "true or false",
            "string": "text"}.get(kind, kind)


def _bounds(low: float | None, high: float | None) -> str:
    def fmt(x: float) -> str:
        return str(int(x)) if float(x).is_integer() else str(x)

    if low is not None and high is not None:
        return f"between {fmt(low)} and {fmt(high)}"
    if low is not None:
        return f"at least {fmt(low)}"
    return f"at most {fmt(high)}" if high is not None else "valid"


def _describe(node: YamlNode) -> str:
    if node.kind == "mapping":
        return "a mapping"
    if node.kind == "sequence":
        return "a list"
    if node.is_null:
        return "nothing (null)"
    if node.tag == _BOOL:
        known = yaml_bool(node.text) is not None
        return f"the boolean {node.text}" if known else f"'{shorten(node.text)}' tagged !!bool"
    if node.tag in (_INT, _FLOAT) and yaml_float(node.text) is not None:
        return f"the number {shorten(node.text)}"
    if node.tag not in (_STR_TAG, _BOOL):
        return f"'{shorten(node.text)}' tagged {node.tag.replace('tag:yaml.org,2002:', '!!')}"
    return f"the text '{shorten(node.text)}'"


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters for a message (hostile values can be huge)."""
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _continuing(sentence: str) -> str:
    """A description (``What should happen.``) continuing a sentence after a colon: its first
    letter in lower case, unless the word is a name in capitals (``RE2``, ``URL``)."""
    if sentence[:1].isupper() and not sentence[1:2].isupper():
        return sentence[:1].lower() + sentence[1:]
    return sentence
