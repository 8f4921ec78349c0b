"""What the editor shows when the pointer rests on part of a configuration file.

* a condition (``message_matches`` …): what it reads, and when;
* any other key: its description;
* a model id or alias: provider, capabilities, context window, price and
  whether the provider's key is set;
* a rule's name: which slot of the routing chain it feeds, and in what order;
* one of a setting's choices (a profile's tool, a tier, an approval mode): what it means.
"""

from __future__ import annotations

from decimal import Decimal

import msgspec

from switchman.engine.config import schema as s
from switchman.engine.config.check import FileKind
from switchman.engine.config.declarations import field_at, is_rule, resolved, spec_at
from switchman.engine.config.nodes import rule_lists, scalar_text
from switchman.engine.config.problems import Position, Range
from switchman.engine.config.registry import ModelRegistry, Pricing, ProviderSpec
from switchman.engine.config.text import from_utf16, position_at, snippet_to_plain, split_lines
from switchman.engine.config.yamldoc import YamlDocument
from switchman.engine.editing.cursor import Cursor, locate
from switchman.engine.files import MAX_CONFIG_BYTES
from switchman.engine.keys import KeyRing, missing_key_hint
from switchman.engine.routing.decision import Policy

_CHECKED = ("Checked for every turn when it is routed, before any model is called "
            f"(chain slot 3, {Policy.CONFIGURED_RULES.value}).")
_CAPABILITIES = (("supports_images", "images"), ("supports_tools", "tools"),
                 ("supports_system_prompt", "system prompt"),
                 ("supports_structured_output", "structured output"),
                 ("supports_thinking", "extended thinking"),
                 ("supports_reasoning_effort", "reasoning effort"))


class Hover(msgspec.Struct, frozen=True):
    """Markdown to show, and the text it is about."""

    markdown: str
    range: Range


def hover(kind: FileKind, doc: YamlDocument, position: Position, registry: ModelRegistry,
          keys: KeyRing) -> Hover | None:
    """The hover for ``position`` (UTF-16) in the checked document ``doc``."""
    if len(doc.text) > MAX_CONFIG_BYTES:  # refused by every check; scanning it would stall
        return None
    lines = split_lines(doc.text)
    if not 0 <= position.line < len(lines):
        return None
    line = lines[position.line]
    column = from_utf16(line, position.character)
    cursor = locate(lines, position.line, column)
    if (cursor is None or not cursor.word) and column < len(line) and not line[column].isspace():
        # On a word's first character the cursor reads as *before* it (where completion
        # would start a new key); a hover there means the word itself.
        cursor = locate(lines, position.line, column + 1)
    if cursor is None or not cursor.word:
        return None
    text = _text_for(kind, doc, cursor, registry, keys)
    if text is None:
        return None
    return Hover(text, Range(position_at(lines, cursor.line, cursor.start),
                             position_at(lines, cursor.line, cursor.end)))


def _text_for(kind: FileKind, doc: YamlDocument, cursor: Cursor, registry: ModelRegistry,
              keys: KeyRing) -> str | None:
    if cursor.role == "key":
        holder = spec_at(kind, cursor.path)
        if (isinstance(holder, s.MapOf) and holder.key.format == "model-id") or \
                (isinstance(holder, s.Scalar) and holder.format == "model"):  # `- haiku` item
            return describe_model(registry, cursor.word, keys)
        if isinstance(holder, s.Scalar) and cursor.word in holder.enum:  # `- edit_file` item
            return _choice_text(cursor.word, holder)
        declared = field_at(kind, cursor.path, cursor.word)
        return _key_text(cursor.word, declared) if declared else None
    if cursor.role == "item":  # a list item, e.g. one model of a tier's list
        spec = spec_at(kind, cursor.path)
    elif cursor.role != "value" or cursor.key is None:
        return None
    elif cursor.key == "name" and is_rule(cursor.path):
        return _rule_text(kind, doc, cursor, registry)
    else:
        spec = spec_at(kind, (*cursor.path, cursor.key))
    if isinstance(spec, s.ListOf):  # an item, or the one bare value of a single_ok list
        spec = resolved(spec.item)
    if isinstance(spec, s.Scalar) and spec.format == "model":
        return describe_model(registry, cursor.word, keys)
    if isinstance(spec, s.Scalar) and cursor.word in spec.enum:  # a tool, a tier, a mode …
        return _choice_text(cursor.word, spec)
    return None


def _choice_text(word: str, spec: s.Scalar) -> str:
    return f"**{word}**\n\n{dict(spec.choices).get(word, spec.description)}"


def _key_text(key: str, declared: s.Field) -> str:
    if declared.reads is None:
        return f"**{key}**\n\n{declared.spec.description}"
    shape = f"\n\nValue: `{snippet_to_plain(declared.snippet).strip()}`" if declared.snippet \
        else ""
    return (f"**{key}** — condition\n\n{declared.spec.description}\n\n"
            f"**Reads:** {declared.reads}\n\n**When:** {_CHECKED}{shape}")


def describe_model(registry: ModelRegistry, name: str, keys: KeyRing) -> str:
    """Markdown about a model id or alias: provider, key, capabilities, window, price."""
    model_id = registry.resolve(name)
    model = registry.get(model_id) if model_id else None
    if model is None:
        return f"**{name}** is not a known model. Models come from models.yaml."
    provider = registry.providers.get(model.provider)
    lines = [f"**{model.display_name}** `{model.id}`"]
    if name.strip() != model.id:
        lines.append(f"`{name.strip()}` is an alias of `{model.id}`.")
    if provider is not None:
        lines.append(f"- Provider: {provider.name} ({provider.api.value} API); "
                     f"{_key_status(provider, keys)}")
    about = [f"aliases: {', '.join(model.aliases)}" if model.aliases else "no aliases",
             f"tier: {model.tier}" if model.tier else "no tier",
             "can delegate" if model.can_delegate else "does not delegate"]
    lines.append(f"- {'; '.join(about)}")
    caps = model.capabilities
    lines.append(f"- Context window: {caps.max_context_tokens:,} tokens "
                 f"(replies up to {caps.max_output_tokens:,})")
    able = [label for attr, label in _CAPABILITIES if getattr(caps, attr)]
    lines.append(f"- Capabilities: {', '.join(able) or 'text only'}")
    lines.append(f"- {_price(model.pricing)}")
    return "\n".join(lines)


def _key_status(provider: ProviderSpec, keys: KeyRing) -> str:
    if not provider.needs_key:
        return "needs no API key"
    where = keys.source(provider)  # the file when the key really comes from it
    source = f"`{where}`" if where == provider.api_key_env else f"key file `{where}`"
    if keys.present(provider):
        return f"API key from {source} is set"
    hint = missing_key_hint(provider, check_file=True)  # the file too, and why it gave none
    if provider.api_key_env:
        hint = hint.replace(provider.api_key_env, f"`{provider.api_key_env}`", 1)
    return f"**no API key**: set {hint}"


def _price(pricing: Pricing) -> str:
    if pricing.is_free:
        return "Price: none set (cost is counted as $0)"
    parts = [f"input {_usd(pricing.input)}", f"output {_usd(pricing.output)}"]
    if pricing.cache_read:
        parts.append(f"cache read {_usd(pricing.cache_read)}")
    if pricing.cache_write:
        parts.append(f"cache write {_usd(pricing.cache_write)}")
    return f"Price per million tokens: {', '.join(parts)}"


def _usd(amount: Decimal) -> str:
    return f"${amount:,.2f}" if amount >= Decimal("0.01") else f"${amount.normalize()}"


def _rule_text(kind: FileKind, doc: YamlDocument, cursor: Cursor,
               registry: ModelRegistry) -> str:
    index = cursor.path[-1]
    assert isinstance(index, int)
    lines = [f"**Rule '{cursor.word}'**"]
    rules = dict(rule_lists(kind, doc.root)).get(tuple(str(p) for p in cursor.path[:-1]))
    if rules is not None and index < len(rules.items):
        use = scalar_text(rules.items[index], "use")
        resolved = registry.resolve(use) if use else None
        if use:
            lines[0] += f" → `{resolved or use}`"
        lines.append(f"Feeds **{Policy.CONFIGURED_RULES.value}** (slot 3 of the routing "
                     "chain): the first rule whose conditions match and whose model passes "
                     "validation chooses the model for the turn.")
        lines.append(f"Rule {index + 1} of {len(rules.items)} in {_where(kind, cursor.path)}.")
    lines.append(_ORDER)
    return "\n\n".join(lines)


_ORDER = ("Order for a turn: the rules of your routing.yaml's `workspaces:` block for the "
          "folder, then the workspace's `.switchman/routing.yaml`, then your global rules.")


def _where(kind: FileKind, path: tuple[str | int, ...]) -> str:
    if kind is FileKind.WORKSPACE:
        return "this workspace's `.switchman/routing.yaml` (runs before your global rules)"
    if path[0] == "workspaces":
        return f"your `workspaces:` block for `{path[1]}` (runs first for turns in that folder)"
    return "your global rules (they run after any workspace's rules)"
