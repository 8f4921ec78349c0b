"""Located configuration problems: what is wrong, where, and how bad.

Positions follow the Language Server Protocol: 0-based lines and 0-based
character offsets counted in UTF-16 code units, so an editor can underline the
exact key or value without any conversion.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec

from switchman.engine.config.keyshape import mask_keys, mask_keys_in


class Position(msgspec.Struct, frozen=True):
    """A 0-based line and UTF-16 character offset."""

    line: int
    character: int


class Range(msgspec.Struct, frozen=True):
    """A half-open span between two positions."""

    start: Position
    end: Position

    @classmethod
    def at(cls, line: int, start: int, end: int) -> Range:
        """A range on a single line."""
        return cls(Position(line, start), Position(line, end))


ZERO_RANGE = Range.at(0, 0, 0)


class Severity(StrEnum):
    """How bad a problem is. Errors reject the file; the rest are advice."""

    ERROR = "error"
    WARNING = "warning"
    INFORMATION = "information"
    HINT = "hint"


class Code(StrEnum):
    """Stable problem codes; documented in docs/editing.md."""

    YAML_SYNTAX = "yaml-syntax"
    UNKNOWN_KEY = "unknown-key"
    DUPLICATE_KEY = "duplicate-key"
    MISSING_KEY = "missing-key"
    SCHEMA_VERSION = "schema-version"
    INVALID_TYPE = "invalid-type"
    INVALID_VALUE = "invalid-value"
    UNKNOWN_MODEL = "unknown-model"
    UNKNOWN_PROVIDER = "unknown-provider"
    UNKNOWN_PREDICATE = "unknown-predicate"
    INVALID_REGEX = "invalid-regex"
    DUPLICATE_RULE_NAME = "duplicate-rule-name"
    DUPLICATE_CASE_NAME = "duplicate-case-name"
    PARTIAL_TIERS = "partial-tiers"
    EFFORT_UNSUPPORTED = "effort-unsupported"
    INVERTED_TIERS = "inverted-tiers"
    OUT_OF_RANGE = "out-of-range"
    INVALID_TIME_WINDOW = "invalid-time-window"
    DUPLICATE_ALIAS = "duplicate-alias"
    DUPLICATE_MODEL = "duplicate-model"
    UNTRUSTED_SETTING = "untrusted-setting"
    SHADOWED_RULE = "shadowed-rule"
    EMPTY_COMBINATOR = "empty-combinator"
    INVALID_WORKSPACE_PATH = "invalid-workspace-path"
    INVALID_MODEL_ID = "invalid-model-id"
    TOO_COMPLEX = "too-complex"
    UNREADABLE_FILE = "unreadable-file"
    OUTSIDE_WORKSPACE = "outside-workspace"
    CHECK_STOPPED = "check-stopped"
    NO_VISION_MODEL = "no-vision-model"
    MISSING_API_KEY = "missing-api-key"
    NO_COST_TRACKING = "no-cost-tracking"
    UNNAMED_RULE = "unnamed-rule"
    EMPTY_WHEN = "empty-when"
    UNKNOWN_SKILL = "unknown-skill"
    UNKNOWN_PROFILE = "unknown-profile"


class Problem(msgspec.Struct, frozen=True):
    """One thing wrong with a configuration file, located precisely.

    ``data`` carries machine-readable hints for editors (for example the
    closest known model id for an ``unknown-model`` problem).
    """

    file: str
    range: Range
    severity: Severity
    code: Code
    message: str
    source: str = "switchman"
    data: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        # A key pasted into the file by mistake is quoted by messages such as "Unknown model
        # '…'": masked here, so no diagnostic, report or stored event ever repeats one.
        msgspec.structs.force_setattr(self, "message", mask_keys(self.message))
        if self.data:
            msgspec.structs.force_setattr(self, "data", mask_keys_in(self.data))

    @property
    def is_error(self) -> bool:
        """Whether this problem makes the file unusable."""
        return self.severity is Severity.ERROR


def has_errors(problems: list[Problem]) -> bool:
    """Whether any problem in the list is an error."""
    return any(p.is_error for p in problems)


def sort_problems(problems: list[Problem]) -> list[Problem]:
    """Problems in file order: by file, then position, then code."""
    return sorted(
        problems,
        key=lambda p: (p.file, p.range.start.line, p.range.start.character, p.code),
    )
