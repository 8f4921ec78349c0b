"""Quick fixes for configuration problems, as plain text edits.

* ``unknown-model``: replace the name with one of the closest known ones;
* ``partial-tiers``: add the missing tiers, copied from the global mapping;
* ``unnamed-rule``: give the rule a name;
* ``shadowed-rule``: move the rule above the one that shadows it;
* ``empty-when``: write ``when: {}``, matching every turn on purpose;
* ``unknown-skill``: replace the name with one of the closest known skills;
* ``duplicate-model``: remove the repeat from the tier's list;
* ``unknown-profile``: replace a ``default:`` profile name with one of the closest known ones.

Every edit keeps the file's layout (block or flow style, indentation, quotes).
That a fix works is checked when it is built, not hoped: with a
:attr:`FixContext.recheck`, a fix is offered only if the edited text parses and
has fewer problems like the one it fixes. Those checks stop once a request has spent
:data:`FIX_SECONDS` on them (on a huge file each is a whole re-check), so a code action
never holds the config worker, and every check queued behind it, for long.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping

import msgspec

from switchman.engine.config.check import FileKind
from switchman.engine.config.nodes import last_position, rule_lists
from switchman.engine.config.problems import Code, Position, Problem, Range
from switchman.engine.config.schema import TIER_NAMES
from switchman.engine.config.text import TextEdit, apply_edits, from_utf16
from switchman.engine.config.yamldoc import YamlDocument, YamlNode


class Fix(msgspec.Struct, frozen=True):
    """One code action: a title and the edits that carry it out."""

    title: str
    problem: Problem
    edits: list[TextEdit]
    preferred: bool = False


class FixContext(msgspec.Struct, frozen=True):
    """What fixes need besides the document."""

    kind: FileKind
    global_tiers: Mapping[str, str]
    """The tier mapping a partial ``tiers`` block is completed from."""
    recheck: Callable[[str], list[Problem]] | None = None
    """Every problem of an edited text, checked exactly as the document's own were."""
    clock: Callable[[], float] = time.monotonic
    """Seconds, for :data:`FIX_SECONDS`."""


Fixer = Callable[[YamlDocument, Problem, FixContext], list[Fix]]


MAX_FIXED_PROBLEMS = 20
"""Problems per request that get fixes: each fix is checked by re-checking the whole file."""

FIX_SECONDS = 0.5
"""Time a request spends checking fixes: no check starts after it (the first always runs).
Problems are taken in the document's order, so at a cursor the fix there is checked."""


def fixes(doc: YamlDocument, problems: list[Problem], rng: Range,
          context: FixContext) -> list[Fix]:
    """The fixes for the problems that touch ``rng`` (the first :data:`MAX_FIXED_PROBLEMS`)."""
    found: list[Fix] = []
    fixable = [p for p in problems if p.code in _FIXERS and _touches(p.range, rng)]
    start, checked = context.clock(), False
    for problem in fixable[:MAX_FIXED_PROBLEMS]:
        for fix in _FIXERS[problem.code](doc, problem, context):
            if checked and context.clock() - start >= FIX_SECONDS:
                return found
            checked = context.recheck is not None
            if _works(doc.text, fix, problems, context):
                found.append(fix)
    return found


def _works(text: str, fix: Fix, problems: list[Problem], context: FixContext) -> bool:
    """Whether applying ``fix`` keeps the text parseable and removes its problem."""
    if context.recheck is None:
        return True
    after = context.recheck(apply_edits(text, fix.edits))
    if any(p.code in _UNPARSEABLE and p.is_error for p in after):
        return False
    return _count(after, fix.problem) < _count(problems, fix.problem)


_UNPARSEABLE = (Code.YAML_SYNTAX, Code.TOO_COMPLEX)


def _count(problems: list[Problem], like: Problem) -> int:
    # Problems move with the edit, so they are told apart by what they say, not where.
    return sum(p.code is like.code and p.message == like.message for p in problems)


def _touches(a: Range, b: Range) -> bool:
    return not (_before(a.end, b.start) or _before(b.end, a.start))


def _before(a: Position, b: Position) -> bool:
    return (a.line, a.character) < (b.line, b.character)


# -- unknown-model, unknown-skill, unknown-profile -------------------------------------


def _replace_name(doc: YamlDocument, problem: Problem, context: FixContext) -> list[Fix]:
    suggestions = (problem.data or {}).get("suggestions") or []
    start = problem.range.start
    line = doc.lines[start.line] if start.line < len(doc.lines) else ""
    first = line[from_utf16(line, start.character):][:1]
    quote = first if first in ("'", '"') else ""
    return [Fix(f"Replace with '{suggestion}'", problem,
                [TextEdit(problem.range, f"{quote}{suggestion}{quote}")], preferred=index == 0)
            for index, suggestion in enumerate(suggestions[:3])]


# -- empty-when ------------------------------------------------------------------------

_NULLS = ("", "~", "null", "Null", "NULL")


def _match_every_turn(doc: YamlDocument, problem: Problem, context: FixContext) -> list[Fix]:
    """``when:`` (or ``when: null``) becomes ``when: {}``, comments and layout kept."""
    start, end = problem.range.start, problem.range.end
    if start.line != end.line or start.line >= len(doc.lines):
        return []
    line = doc.lines[start.line]
    colon = from_utf16(line, end.character)
    if line[colon:colon + 1] != ":":
        return []
    first = colon + 1 + len(line[colon + 1:]) - len(line[colon + 1:].lstrip(" "))
    last = first
    while last < len(line) and line[last] not in " \t,}]#":
        last += 1
    if line[first:last] not in _NULLS:
        return []
    edit = TextEdit(Range(doc.position(start.line, colon + 1), doc.position(start.line, last)),
                    " {}")
    return [Fix("Write 'when: {}' (match every turn on purpose)", problem, [edit],
                preferred=True)]


# -- partial-tiers ---------------------------------------------------------------------


def _fill_tiers(doc: YamlDocument, problem: Problem, context: FixContext) -> list[Fix]:
    missing = [t for t in (problem.data or {}).get("missing", []) if t in TIER_NAMES]
    if not missing or any(t not in context.global_tiers for t in missing):
        return []
    tiers = next((value for key, value in _tiers_blocks(doc.root)
                  if doc.range_of(key) == problem.range), None)
    if tiers is None or tiers.kind != "mapping" or not tiers.pairs:
        return []
    pairs = [(t, context.global_tiers[t]) for t in missing]
    edit = _append_flow(doc, tiers, pairs) if tiers.flow else _append_block(doc, tiers, pairs)
    listed = ", ".join(f"{t}: {m}" for t, m in pairs)
    return [Fix(f"Add the missing tiers from the global mapping ({listed})", problem, [edit],
                preferred=True)]


def _tiers_blocks(root: YamlNode | None) -> list[tuple[YamlNode, YamlNode]]:
    if root is None or root.kind != "mapping":
        return []
    found = [(k, v) for k, v in root.pairs if k.text == "tiers"]
    workspaces = root.get("workspaces")
    if workspaces is not None and workspaces.kind == "mapping":
        found += [(k, v) for _, block in workspaces.pairs if block.kind == "mapping"
                  for k, v in block.pairs if k.text == "tiers"]
    return found


def _append_flow(doc: YamlDocument, mapping: YamlNode, pairs: list[tuple[str, str]]) -> TextEdit:
    line, col = mapping.end
    at = doc.position(line, col - 1)  # just before the closing brace
    text = "".join(f", {tier}: {model}" for tier, model in pairs)
    return TextEdit(Range(at, at), text)


def _append_block(doc: YamlDocument, mapping: YamlNode, pairs: list[tuple[str, str]]) -> TextEdit:
    indent = " " * mapping.pairs[0][0].start[1]
    line, col = last_position(mapping)
    if col == 0 and line > 0:  # a block scalar ends at the start of the next line
        line, col = line - 1, len(doc.lines[line - 1])
    at = doc.position(line, len(doc.lines[line].rstrip("\r")) if line < len(doc.lines) else col)
    text = "".join(f"\n{indent}{tier}: {model}" for tier, model in pairs)
    return TextEdit(Range(at, at), text)


# -- duplicate-model -------------------------------------------------------------------


def _remove_repeat(doc: YamlDocument, problem: Problem, context: FixContext) -> list[Fix]:
    """The repeated model out of its tier's list: ``, sonnet`` from a flow list, the item's
    line (and a comment on it) from a block list."""
    found = next(((items, i) for items in _tier_lists(doc) for i, item in enumerate(items)
                  if i > 0 and doc.range_of(item) == problem.range), None)
    if found is None:
        return []
    items, index = found
    item = items[index]
    line, col = item.start
    title = f"Remove the repeated '{item.text}'"
    if item.flow or doc.lines[line][:col].strip() != "-":  # [sonnet, sonnet]
        edit = TextEdit(Range(doc.range_of(items[index - 1]).end, problem.range.end), "")
        return [Fix(title, problem, [edit], preferred=True)]
    if item.end[0] != line:
        return []
    if line + 1 < len(doc.lines):
        edit = TextEdit(Range(Position(line, 0), Position(line + 1, 0)), "")
    else:  # the last line of a file without a final newline: take the break before it
        edit = TextEdit(Range(doc.position(line - 1, len(doc.lines[line - 1])),
                              doc.position(line, len(doc.lines[line]))), "")
    return [Fix(title, problem, [edit], preferred=True)]


def _tier_lists(doc: YamlDocument) -> list[list[YamlNode]]:
    """The items of every tier's list, and of every complexity level's, in ``tiers`` blocks."""
    found = []
    for _, tiers in _tiers_blocks(doc.root):
        if tiers.kind != "mapping":
            continue
        lists = [v for k, v in tiers.pairs if k.text in TIER_NAMES]
        complexity = tiers.get("complexity")
        if complexity is not None and complexity.kind == "mapping":
            lists += [v for _, levels in complexity.pairs if levels.kind == "mapping"
                      for _, v in levels.pairs]
        found += [list(v.items) for v in lists if v.kind == "sequence"]
    return found


# -- unnamed-rule ----------------------------------------------------------------------


def _add_name(doc: YamlDocument, problem: Problem, context: FixContext) -> list[Fix]:
    name = (problem.data or {}).get("suggested_name")
    rule = next((item for _, rules in rule_lists(context.kind, doc.root) for item in rules.items
                 if item.kind == "mapping" and doc.range_of(item) == problem.range), None)
    if not isinstance(name, str) or rule is None or not rule.pairs:
        return []
    line, col = rule.start
    if rule.flow:
        at = doc.position(line, col + 1)
        edit = TextEdit(Range(at, at), f"name: {name}, ")
    else:
        at = doc.position(line, col)
        edit = TextEdit(Range(at, at), f"name: {name}\n{' ' * col}")
    return [Fix(f"Name this rule '{name}'", problem, [edit], preferred=True)]


# -- shadowed-rule ---------------------------------------------------------------------


def _move_above(doc: YamlDocument, problem: Problem, context: FixContext) -> list[Fix]:
    data = problem.data or {}
    target_line = data.get("shadowed_by_line")
    for _, rules in rule_lists(context.kind, doc.root):
        blocks = _item_blocks(doc, rules)
        if blocks is None:
            continue
        starts = [rules.items[i].start[0] for i in range(len(rules.items))]
        moving = next((i for i, (a, b) in enumerate(blocks)
                       if a <= problem.range.start.line < b), None)
        above = next((i for i, line in enumerate(starts) if line == target_line), None)
        if moving is not None and above is not None and above < moving:
            edits = _move_lines(doc, blocks[moving], blocks[above][0])
            title = f"Move this rule above '{data.get('shadowed_by')}'"
            return [Fix(title, problem, edits, preferred=True)]
    return []


def _item_blocks(doc: YamlDocument, rules: YamlNode) -> list[tuple[int, int]] | None:
    """For each item of a block list: the lines it owns (comments right above it included)."""
    if rules.flow or not rules.items:
        return None
    starts = []
    for item in rules.items:
        line, col = item.start
        if item.flow or doc.lines[line][:col].strip() != "-":
            return None
        while line > 0 and doc.lines[line - 1].strip().startswith("#"):
            line -= 1
        starts.append(line)
    if starts != sorted(set(starts)):
        return None
    last_line, last_col = last_position(rules.items[-1])
    end = last_line if last_col == 0 else last_line + 1
    return list(zip(starts, [*starts[1:], max(end, starts[-1] + 1)], strict=True))


def _move_lines(doc: YamlDocument, block: tuple[int, int], to_line: int) -> list[TextEdit]:
    """Edits that move lines ``block`` (start, end) to just above line ``to_line``."""
    start, end = block
    lines = doc.lines
    moved = "\n".join(lines[start:end]) + "\n"
    insert = TextEdit(Range(Position(to_line, 0), Position(to_line, 0)), moved)
    if end < len(lines):
        return [insert, TextEdit(Range(Position(start, 0), Position(end, 0)), "")]
    # The block runs to the end of a file without a final newline: take the break before it.
    previous = doc.position(start - 1, len(lines[start - 1]))
    return [insert, TextEdit(Range(previous, doc.position(end - 1, len(lines[end - 1]))), "")]


_FIXERS: dict[Code, Fixer] = {
    Code.UNKNOWN_MODEL: _replace_name,
    Code.UNKNOWN_SKILL: _replace_name,
    Code.PARTIAL_TIERS: _fill_tiers,
    Code.UNNAMED_RULE: _add_name,
    Code.SHADOWED_RULE: _move_above,
    Code.EMPTY_WHEN: _match_every_turn,
    Code.DUPLICATE_MODEL: _remove_repeat,
    Code.UNKNOWN_PROFILE: _replace_name,
}
