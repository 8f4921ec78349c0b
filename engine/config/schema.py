"""The structure of routing.yaml and models.yaml, declared once.

The validator walks these declarations; the JSON Schema shipped for other
editors, the language server's completion and hover all read them too, so the
four can never disagree about what a file may contain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from switchman.engine.config.problems import Code, Severity

ScalarType = Literal["string", "integer", "number", "boolean"]
ScalarFormat = Literal["regex", "model", "provider", "env-var", "url", "path", "model-id",
                       "skill", "time"]

TIER_NAMES = ("fast", "balanced", "deep")
COMPLEXITY_LEVELS = ("trivial", "small", "medium", "large")
EFFORT_LEVELS = ("low", "medium", "high")
SUPPORTED_SCHEMA_VERSIONS = (1,)


@dataclass(frozen=True)
class Spec:
    """Base of every value declaration."""

    description: str = ""


@dataclass(frozen=True)
class Scalar(Spec):
    """A single value: string, integer, number or boolean."""

    type: ScalarType = "string"
    minimum: float | None = None
    maximum: float | None = None
    enum: tuple[str, ...] = ()
    format: ScalarFormat | None = None
    nullable: bool = False
    text_only: bool = False
    """For ``string``: a number or ``true``/``false`` is refused rather than read as its
    text (prose such as a prompt is never a number; quoting it says one was meant)."""
    choices: tuple[tuple[str, str], ...] = ()
    """What some values of ``enum`` mean, for hover and completion (value, text)."""


@dataclass(frozen=True)
class ListOf(Spec):
    """A list. ``single_ok`` also accepts one bare value as a one-item list."""

    item: Spec | Ref = field(default_factory=Scalar)
    min_items: int = 0
    single_ok: bool = False
    empty_code: Code = Code.INVALID_TYPE
    empty_severity: Severity = Severity.ERROR


@dataclass(frozen=True)
class TimeWindow(Spec):
    """A ``[HH:MM, HH:MM]`` pair; problems use the ``invalid-time-window`` code."""


@dataclass(frozen=True)
class Ref(Spec):
    """A reference to a named declaration in :data:`DEFINITIONS` (for recursion)."""

    name: str = ""


@dataclass(frozen=True)
class Field:
    """One key of an object."""

    spec: Spec
    required: bool = False
    reads: str | None = None
    """For predicates: where the value is read from at routing time."""
    snippet: str | None = None
    """Completion text for the value (LSP snippet syntax)."""


@dataclass(frozen=True)
class SpecialKey:
    """A key that is recognised but not accepted, with its own code and message."""

    code: Code
    severity: Severity
    message: str


@dataclass(frozen=True)
class Obj(Spec):
    """A mapping with a fixed set of keys."""

    fields: Mapping[str, Field] = field(default_factory=dict)
    unknown_code: Code = Code.UNKNOWN_KEY
    special: Mapping[str, SpecialKey] = field(default_factory=dict)
    title: str = ""
    required: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        required = tuple(k for k, f in self.fields.items() if f.required)
        object.__setattr__(self, "required", required)


@dataclass(frozen=True)
class MapOf(Spec):
    """A mapping from user-chosen keys to values of one shape."""

    value: Spec | Ref = field(default_factory=Spec)
    key: Scalar = field(default_factory=Scalar)


def _model(description: str) -> Scalar:
    return Scalar(description, format="model")


# --- predicates -----------------------------------------------------------------

_MESSAGE = "The new user message of this turn, after any leading @alias is removed."
_TOKENS = (
    "The estimated size in tokens of everything the turn would send: system prompt, "
    "tool definitions, the conversation so far and the new message."
)

PREDICATES: Mapping[str, Field] = {
    "message_matches": Field(
        Scalar("Matches when this RE2 regular expression occurs in the message. Case-sensitive; "
               "start the pattern with (?i) to ignore case.", format="regex"),
        reads=_MESSAGE,
        snippet='"${1:pattern}"',
    ),
    "message_contains_any": Field(
        ListOf("Matches when any of these strings occurs in the message, ignoring case.",
               item=Scalar(), min_items=1, single_ok=True),
        reads=_MESSAGE,
        snippet='["${1:text}"]',
    ),
    "estimated_input_tokens_gt": Field(
        Scalar("Matches when the estimated input exceeds this many tokens.", "integer", minimum=0),
        reads=_TOKENS,
        snippet="${1:80000}",
    ),
    "estimated_input_tokens_lt": Field(
        Scalar("Matches when the estimated input is below this many tokens.", "integer", minimum=0),
        reads=_TOKENS,
        snippet="${1:2000}",
    ),
    "has_images": Field(
        Scalar("Matches when the turn's message does (true) or does not (false) carry images.",
               "boolean"),
        reads="The image attachments of the new user message.",
        snippet="${1|true,false|}",
    ),
    "has_tool_calls_in_history": Field(
        Scalar("Matches when an earlier assistant message in this session did (true) or did not "
               "(false) call a tool.", "boolean"),
        reads="The session's stored transcript: any earlier assistant message with a tool call.",
        snippet="${1|true,false|}",
    ),
    "skills_matching_message_includes": Field(
        ListOf("Matches when any of these skills' descriptions matches the message.",
               item=Scalar("A skill name.", format="skill"), min_items=1, single_ok=True),
        reads=(
            "The skill index (name and description from the front matter of the Markdown files in "
            ".switchman/skills/ and the user's skills folder), scored against the message. "
            "Skill bodies are never read for routing."
        ),
        snippet='["${1:skill_name}"]',
    ),
    "file_extensions_in_context": Field(
        ListOf("Matches when the session's tools have touched a file with any of these "
               "extensions (case-insensitive; the leading dot is optional).",
               item=Scalar(), min_items=1, single_ok=True),
        reads=(
            "Paths in the inputs and results of this session's tool calls (files the assistant "
            "actually read or listed). Message text is not scanned. Empty on the first turn."
        ),
        snippet='[".${1:sql}"]',
    ),
    "workspace_path_matches": Field(
        Scalar("Matches when this RE2 regular expression occurs in the workspace's absolute path.",
               format="regex"),
        reads="The absolute path of the session's workspace folder, fixed when the session starts.",
        snippet='"${1:/work/}"',
    ),
    "time_of_day_between": Field(
        TimeWindow("Matches when local time is within [start, end). A window such as "
                   "[22:00, 06:00] wraps past midnight."),
        reads="The wall clock at routing time, in your local timezone.",
        snippet='["${1:09:00}", "${2:17:00}"]',
    ),
    "cost_today_exceeds_usd": Field(
        Scalar("Matches when today's spend in US dollars is above this amount.", "number",
               minimum=0),
        reads="The total cost of all your sessions since 00:00 UTC, from the cost ledger.",
        snippet="${1:5.00}",
    ),
    "any_of": Field(
        ListOf("Matches when at least one of these conditions matches.", item=Ref(name="when"),
               min_items=1, empty_code=Code.EMPTY_COMBINATOR, empty_severity=Severity.WARNING),
        reads="Its nested conditions.",
        snippet="\n  - ${1:message_matches}: ${2}",
    ),
    "all_of": Field(
        ListOf("Matches when every one of these conditions matches.", item=Ref(name="when"),
               min_items=1, empty_code=Code.EMPTY_COMBINATOR, empty_severity=Severity.WARNING),
        reads="Its nested conditions.",
        snippet="\n  - ${1:message_matches}: ${2}",
    ),
    "not": Field(
        Ref("Matches when the nested condition does not.", name="when"),
        reads="Its nested condition.",
        snippet="{${1:has_images}: ${2:true}}",
    ),
}

WHEN = Obj(
    "Conditions for this rule. Several keys must all match; an empty block always matches.",
    fields=PREDICATES,
    unknown_code=Code.UNKNOWN_PREDICATE,
    title="when",
)

# --- routing.yaml ------------------------------------------------------------------

RULE = Obj(
    "A routing rule: when its conditions match, the turn goes to its model.",
    fields={
        "name": Field(Scalar("A unique name, shown in the 'why this model?' trace. Rules without "
                             "one are called rule_<position>.")),
        "description": Field(Scalar("A note for people reading the policy; not used for routing.")),
        "when": Field(WHEN),
        "use": Field(_model("The model (id or alias) this rule routes to."), required=True),
    },
    special={
        "fallback": SpecialKey(
            Code.UNKNOWN_KEY,
            Severity.ERROR,
            "Rules have no fallback lists. Add a second rule with the same 'when' below this one; "
            "it takes over when this rule's model is rejected.",
        ),
    },
    title="rule",
)

_TIER_LIST = ("{what} Give one model or an ordered list: the first that can be used "
              "(key set, available, capable enough) runs the worker; the others are fallbacks.")


def _tier_models(description: str) -> ListOf:
    return ListOf(description, item=_model("A model (id or alias)."), min_items=1,
                  single_ok=True)


_COMPLEXITY_LEVEL = ("Models for {level} tasks in this tier, in order (leave the level out to "
                     "inherit the tier's list).")

TIER_COMPLEXITY = Obj(
    "Models of one tier by task complexity. A level you leave out inherits the tier's list.",
    fields={level: Field(_tier_models(_COMPLEXITY_LEVEL.format(level=level)))
            for level in COMPLEXITY_LEVELS},
    title="complexity",
)

COMPLEXITY = Obj(
    "Per-tier overrides by task complexity (trivial, small, medium, large). The planner "
    "names the complexity in delegate(), or Switchman estimates it from the task.",
    fields={tier: Field(TIER_COMPLEXITY) for tier in TIER_NAMES},
    title="complexity",
)

EFFORT = Obj(
    "Reasoning effort per tier, for models that support it (OpenAI reasoning effort, "
    "Anthropic extended thinking); ignored for models without such a setting.",
    fields={tier: Field(Scalar(f"Reasoning effort of {tier} workers.", enum=EFFORT_LEVELS))
            for tier in TIER_NAMES},
    title="effort",
)

TIERS = Obj(
    "Which models each delegation tier uses. Give all three tiers or none.",
    fields={
        "fast": Field(_tier_models(_TIER_LIST.format(
            what="Cheap, quick models for mechanical sub-tasks."))),
        "balanced": Field(_tier_models(_TIER_LIST.format(
            what="Capable models for most coding work."))),
        "deep": Field(_tier_models(_TIER_LIST.format(
            what="The strongest models, for planning and hard reasoning."))),
        "complexity": Field(COMPLEXITY),
        "effort": Field(EFFORT),
    },
    title="tiers",
)

PATTERN = Obj(
    "How learned recommendations from past turns are weighed.",
    fields={
        "cost_weight": Field(Scalar("0 weighs only past success, 1 only cost (default 0.05).",
                                    "number", minimum=0, maximum=1)),
        "min_confidence": Field(Scalar("Recommendations less confident than this are ignored "
                                       "(default 0.05).", "number", minimum=0, maximum=1)),
        "min_sample_size": Field(Scalar("Recommendations backed by fewer past turns are ignored "
                                        "(default 5).", "integer", minimum=1)),
        "neighbors": Field(Scalar("How many similar past turns to compare (default 10).",
                                  "integer", minimum=1, maximum=1000)),
        "neighborhood": Field(Scalar(
            "Which past turns are compared: the nearest overall (default), or the nearest "
            "of each model, so a model tried rarely is judged on as many turns as the "
            "default.", enum=("nearest", "per_model"))),
        "similarity_exponent": Field(Scalar(
            "Weigh each similar turn by its similarity to this power, so the closest count "
            "most (default 0: all alike).", "number", minimum=0, maximum=16)),
    },
    title="pattern",
)

PATTERN_DISAGREEMENT = Obj(
    "Show the learned recommendation when it disagrees with the rule that won.",
    fields={
        "surface": Field(Scalar("Show disagreements (default false).", "boolean")),
        "min_confidence": Field(Scalar("Only above this confidence (default 0.85).", "number",
                                       minimum=0, maximum=1)),
        "min_sample_size": Field(Scalar("Only with at least this many samples (default 20).",
                                        "integer", minimum=1)),
    },
    title="pattern_disagreement",
)

DELEGATION = Obj(
    "Delegation: planners (models with can_delegate) hand sub-tasks to workers on a tier's "
    "model with the delegate tool.",
    fields={
        "enabled": Field(Scalar("Delegation at all (default true). Set false to turn it off "
                                "everywhere: no delegate tool, and /delegate is refused.",
                                "boolean")),
        "max_concurrent_workers": Field(Scalar("How many workers one planner turn runs at once "
                                               "(default 3).", "integer", minimum=1,
                                               maximum=16)),
        "timeout_seconds": Field(Scalar("Stop a worker after this many seconds unless the "
                                        "planner gives its own timeout (default 600).", "number",
                                        minimum=1, maximum=3600)),
        "tier_floor": Field(Scalar("A worker's tier never exceeds its planner's: a balanced "
                                   "planner asking for deep gets balanced (default true).",
                                   "boolean")),
    },
    title="delegation",
)

_RULES = ListOf("Routing rules, tried top to bottom; the first match whose model validates wins.",
                item=RULE)

_BLOCK_FIELDS: Mapping[str, Field] = {
    "default": Field(_model("The model for this workspace's turns when no rule or pattern "
                            "applies.")),
    "pattern": Field(PATTERN),
    "tiers": Field(TIERS),
    "rules": Field(_RULES),
}

WORKSPACE_BLOCK = Obj(
    "Settings for one workspace (and folders below it). Its rules run before the global rules; "
    "its default, pattern and tiers replace the global ones.",
    fields=_BLOCK_FIELDS,
    special={
        **{key: SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                           f"'{key}' is set once for every workspace: move it to the top level "
                           "of this file, out of the 'workspaces' block.")
           for key in ("delegation", "pattern_disagreement")},
        "global_default": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                                     "A workspace's block sets 'default', not 'global_default'."),
    },
    title="workspace",
)

_SCHEMA_VERSION = Field(Scalar("The format version of this file. Only 1 exists.", "integer",
                               minimum=1))

_UNTRUSTED_MESSAGE = (
    "A workspace routing file cannot set '{key}': providers, base URLs and API-key sources may "
    "only come from your own models.yaml, so a cloned repository can never redirect your keys. "
    "This setting is ignored."
)
UNTRUSTED_KEYS = ("providers", "models", "base_url", "api_key", "api_key_env", "api_key_file",
                  "api_base", "endpoint")

_TEST_FILE_MESSAGE = ("'cases' is the key of a policy test file, which is run with "
                      "'switchman rules test FILE' (see docs/policy-tests.md), not checked as "
                      "a routing file.")

ROUTING_FILE = Obj(
    "Switchman routing policy (routing.yaml).",
    fields={
        "schema_version": _SCHEMA_VERSION,
        "global_default": Field(_model("The model used when nothing else applies.")),
        "tiers": Field(TIERS),
        "pattern": Field(PATTERN),
        "pattern_disagreement": Field(PATTERN_DISAGREEMENT),
        "delegation": Field(DELEGATION),
        "rules": Field(_RULES),
        "workspaces": Field(MapOf("Per-workspace settings, keyed by absolute folder path "
                                  "(~ allowed).", value=WORKSPACE_BLOCK,
                                  key=Scalar("Workspace folder path.", format="path"))),
    },
    special={
        **{key: SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                           f"'{key}' belongs in models.yaml, not routing.yaml.")
           for key in ("providers", "models")},
        "profiles": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                               "'profiles' belongs in profiles.yaml, not routing.yaml."),
        "cases": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR, _TEST_FILE_MESSAGE),
    },
    title="routing.yaml",
)

WORKSPACE_FILE = Obj(
    "Workspace routing policy (.switchman/routing.yaml). Untrusted: it may only choose among "
    "models you configured.",
    fields={"schema_version": _SCHEMA_VERSION, **_BLOCK_FIELDS},
    special={
        **{key: SpecialKey(Code.UNTRUSTED_SETTING, Severity.WARNING,
                           _UNTRUSTED_MESSAGE.format(key=key)) for key in UNTRUSTED_KEYS},
        "global_default": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                                     "A workspace file sets 'default', not 'global_default'."),
        "profiles": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                               "'profiles' belongs in .switchman/profiles.yaml, not "
                               ".switchman/routing.yaml."),
        "cases": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR, _TEST_FILE_MESSAGE),
        "workspaces": SpecialKey(Code.UNKNOWN_KEY, Severity.ERROR,
                                 "'workspaces' belongs in your user routing.yaml; this file "
                                 "already is the workspace's block."),
        "delegation": SpecialKey(Code.UNTRUSTED_SETTING, Severity.WARNING,
                                 "A workspace routing file cannot set 'delegation': whether "
                                 "models may hand work to workers, and with what limits, can "
                                 "only be set in your own routing.yaml, so a cloned repository "
                                 "cannot change it. This setting is ignored."),
        "pattern_disagreement": SpecialKey(
            Code.UNTRUSTED_SETTING, Severity.WARNING,
            "A workspace routing file cannot set 'pattern_disagreement': whether the pattern "
            "store's suggestions are shown is set once, in your own routing.yaml (its top "
            "level). This setting is ignored."),
    },
    title=".switchman/routing.yaml",
)

# --- models.yaml -------------------------------------------------------------------

PROVIDER = Obj(
    "How to reach one provider's API.",
    fields={
        "api": Field(Scalar("Which API this provider speaks.", enum=("anthropic", "openai",
                                                                   "openai_compatible"))),
        "api_key_env": Field(Scalar("Name of the environment variable holding the API key. "
                                    "Null for local servers that need no key.",
                                    format="env-var", nullable=True)),
        "api_key_file": Field(Scalar("Path of a file whose content is the API key (read each "
                                     "time it is needed; never logged).", format="path")),
        "base_url": Field(Scalar("The API's base URL, e.g. http://127.0.0.1:11434/v1 for Ollama.",
                                 format="url")),
        "timeout_seconds": Field(Scalar("How long one request may take before it is abandoned "
                                        "(default 600).", "number", minimum=1)),
    },
    special={"api_key": SpecialKey(
        Code.UNTRUSTED_SETTING, Severity.ERROR,
        "Keys are never written in configuration files. Put the key in an environment variable "
        "and name it in api_key_env (or point api_key_file at a file only you can read).")},
    title="provider",
)

CAPABILITIES = Obj(
    "What the model can do; routing rejects a model that lacks something a turn needs.",
    fields={
        "max_context_tokens": Field(Scalar("The context window in tokens.", "integer", minimum=1)),
        "max_output_tokens": Field(Scalar("The most tokens one reply may contain.", "integer",
                                          minimum=1)),
        "supports_images": Field(Scalar("Accepts image input.", "boolean")),
        "supports_tools": Field(Scalar("Can call tools (default true).", "boolean")),
        "supports_system_prompt": Field(Scalar("Accepts a system prompt (default true).",
                                               "boolean")),
        "supports_structured_output": Field(Scalar("Can be held to a JSON schema (default false).",
                                                   "boolean")),
        "supports_thinking": Field(Scalar("Produces extended reasoning (not checked by routing).",
                                          "boolean")),
        "supports_reasoning_effort": Field(Scalar(
            "Takes a reasoning-effort setting: OpenAI reasoning_effort, or Anthropic extended "
            "thinking with a token budget (default false). Tier effort is ignored for models "
            "without it.", "boolean")),
    },
    title="capabilities",
)

_PRICE = "US dollars per million tokens."
PRICING = Obj(
    "Prices used to compute each turn's cost.",
    fields={
        "input": Field(Scalar(f"Input tokens, {_PRICE}", "number", minimum=0)),
        "output": Field(Scalar(f"Output tokens, {_PRICE}", "number", minimum=0)),
        "cache_read": Field(Scalar(f"Input tokens read from the prompt cache, {_PRICE}", "number",
                                   minimum=0)),
        "cache_write": Field(Scalar(f"Input tokens written to the prompt cache, {_PRICE}",
                                    "number", minimum=0)),
    },
    title="pricing",
)

MODEL = Obj(
    "One model. Its id is 'provider:name'.",
    fields={
        "provider": Field(Scalar("The provider serving it (default: the part of the id before "
                                 "':').", format="provider")),
        "api_model": Field(Scalar("The name sent to the API (default: the part of the id after "
                                  "':').")),
        "display_name": Field(Scalar("A friendlier name for menus.")),
        "aliases": Field(ListOf("Short names usable as @alias and in /model. Unique across all "
                                "models.", item=Scalar(), single_ok=True)),
        "tier": Field(Scalar("The delegation tier this model belongs to.", enum=TIER_NAMES)),
        "can_delegate": Field(Scalar("Whether this model may hand sub-tasks to cheaper models "
                                     "with delegate(). Default: true for a balanced or deep "
                                     "model, false otherwise.", "boolean")),
        "capabilities": Field(CAPABILITIES),
        "pricing": Field(PRICING),
    },
    title="model",
)

MODELS_FILE = Obj(
    "Switchman model registry (models.yaml).",
    fields={
        "schema_version": _SCHEMA_VERSION,
        "use_builtin_models": Field(Scalar("Start from Switchman's built-in providers and models "
                                           "(default true). Entries here add to or refine them.",
                                           "boolean")),
        "providers": Field(MapOf("API providers by name.", value=PROVIDER,
                                 key=Scalar("Provider name."))),
        "models": Field(MapOf("Models by id ('provider:name').", value=MODEL,
                              key=Scalar("Model id.", format="model-id"))),
    },
    title="models.yaml",
)

DEFINITIONS: Mapping[str, Obj] = {"when": WHEN}
