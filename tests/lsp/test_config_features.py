"""Completion, hover, quick fixes and the outline for config files, end to end."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from lsprotocol import types

from tests.support.editing import Editor, code_points, editing, with_code
from tests.support.lsp import CLIENTS

RULES = """\
global_default: sonnet
rules:
  - name: commits
    when: {message_matches: commit}
    use: haiku
"""


def doc(uri: str) -> types.TextDocumentIdentifier:
    return types.TextDocumentIdentifier(uri=uri)


def offset(editor: Editor, uri: str, position: types.Position) -> int:
    lines = editor.texts[uri].split("\n")
    return sum(len(line) + 1 for line in lines[:position.line]) + code_points(
        lines[position.line], position.character, editor.encoding)


def apply(editor: Editor, uri: str, edits: list[types.TextEdit]) -> str:
    """The document's text with ``edits`` applied, as an editor would."""
    text = editor.texts[uri]
    spans = sorted(((offset(editor, uri, e.range.start), offset(editor, uri, e.range.end),
                     e.new_text) for e in edits), reverse=True)
    for start, end, new_text in spans:
        text = text[:start] + new_text + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    assert action.edit is not None
    if action.edit.document_changes:
        [change] = action.edit.document_changes
        assert isinstance(change, types.TextDocumentEdit)
        assert change.text_document.uri == uri
        return [e for e in change.edits if isinstance(e, types.TextEdit)]
    assert action.edit.changes is not None
    return list(action.edit.changes[uri])


async def complete_at(editor: Editor, uri: str, needle: str, after: int = 0) -> list[
        types.CompletionItem]:
    """Completion with the cursor ``after`` characters into the first ``needle``."""
    at = editor.texts[uri].index(needle) + after
    start = editor.range_at(uri, at, at).start
    result = await editor.client.text_document_completion_async(types.CompletionParams(
        text_document=doc(uri), position=start))
    assert isinstance(result, types.CompletionList)
    return list(result.items)


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_completion_of_keys_conditions_models_and_tiers(editor_name: str,
                                                              tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        text = ("global_default: sonnet\ntiers:\n  fast: haiku\n  \nrules:\n  - name: a\n"
                "    when:\n      \n    use: op\n")
        editor.open(uri, text)
        top = await complete_at(editor, uri, "tiers")
        assert {"schema_version", "pattern", "workspaces"} <= {i.label for i in top}
        assert "global_default" not in {i.label for i in top}

        tiers = await complete_at(editor, uri, "  \nrules", 2)
        assert [i.label for i in tiers] == ["balanced", "deep", "complexity", "effort"]

        conditions = {i.label: i for i in await complete_at(editor, uri, "      \n    use", 6)}
        assert len(conditions) == 14
        matches = conditions["message_matches"]
        assert matches.insert_text_format == types.InsertTextFormat.Snippet
        assert isinstance(matches.text_edit, types.TextEdit)
        assert matches.text_edit.new_text == 'message_matches: "${1:pattern}"'
        assert matches.kind == types.CompletionItemKind.Function
        assert isinstance(matches.documentation, types.MarkupContent)
        assert "**Reads:**" in matches.documentation.value

        models = {i.label: i for i in await complete_at(editor, uri, "use: op", 7)}
        assert {"opus", "anthropic:claude-opus-4-7", "textonly", "ollama:textonly"} <= set(models)
        opus = models["opus"].text_edit
        assert isinstance(opus, types.TextEdit)
        at = editor.texts[uri].index("op\n")
        assert opus.range == editor.range_at(uri, at, at + 2)


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_hover_on_conditions_models_and_rule_names(editor_name: str,
                                                         tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        editor.open(uri, RULES)

        async def hover(needle: str) -> types.Hover:
            position = editor.range_of(uri, needle).start
            found = await editor.client.text_document_hover_async(types.HoverParams(
                text_document=doc(uri), position=position))
            assert found is not None
            return found

        condition = await hover("message_matches")
        assert isinstance(condition.contents, types.MarkupContent)
        assert condition.contents.kind == types.MarkupKind.Markdown
        assert "**Reads:** The new user message of this turn" in condition.contents.value
        assert condition.range == editor.range_of(uri, "message_matches")

        model = await hover("haiku")
        assert isinstance(model.contents, types.MarkupContent)
        assert "`haiku` is an alias of `anthropic:claude-haiku-4-5`" in model.contents.value
        assert "`ANTHROPIC_API_KEY` is set" in model.contents.value
        assert "input $1.00, output $5.00" in model.contents.value

        rule = await hover("commits")
        assert isinstance(rule.contents, types.MarkupContent)
        assert "Feeds **CONFIGURED_RULES**" in rule.contents.value
        assert "Rule 1 of 1 in your global rules" in rule.contents.value


FIXES = [
    ("routing", "global_default: opsu\n", "unknown-model"),
    ("routing", "tiers:\n  fast: haiku\n", "partial-tiers"),
    ("workspace", "tiers: {deep: opus}\n", "partial-tiers"),
    ("routing", "rules:\n  - when: {has_images: true}\n    use: 🚀\n", "unknown-model"),
    ("routing", "rules:\n  - when: {message_matches: \"é\"}\n    use: opus\n", "unnamed-rule"),
    ("routing", "rules:\n  - name: all\n    use: opus\n  - name: images\n"
     "    when: {has_images: true}\n    use: sonnet\n", "shadowed-rule"),
    ("workspace", "rules:\n  - name: all\n    when:   # none yet\n    use: opus\n",
     "empty-when"),
    ("workspace", "tiers:\n  fast: haiku\n  balanced:\n    - sonnet\n    - 'sonnet'\n"
     "  deep: opus\n", "duplicate-model"),
    ("profiles", "default: reviewr\nprofiles:\n  reviewer: {tools: [read_file]}\n",
     "unknown-profile"),
]


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_each_quick_fix_leaves_a_valid_file(editor_name: str, tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        for kind, text, code in FIXES:
            uri = editor.uri(kind)
            editor.open(uri, text.replace("🚀", "opsu"))
            [problem] = with_code(await editor.diagnostics(uri), code)
            actions = await editor.client.text_document_code_action_async(
                types.CodeActionParams(text_document=doc(uri), range=problem.range,
                                       context=types.CodeActionContext(diagnostics=[problem])))
            assert actions, code
            action = actions[0]
            assert isinstance(action, types.CodeAction)
            assert action.kind == types.CodeActionKind.QuickFix
            assert action.is_preferred
            assert action.diagnostics is not None and action.diagnostics[0].code == code
            fixed = apply(editor, uri, edits_of(action, uri))
            editor.replace_all(uri, fixed)
            after = await editor.diagnostics(uri)
            assert not [d for d in after if d.severity == types.DiagnosticSeverity.Error], fixed
            assert not with_code(after, code), fixed
            editor.close(uri)


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_the_outline_lists_rules_workspaces_and_tiers(editor_name: str,
                                                            tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("routing")
        editor.open(uri, RULES + "tiers: {fast: haiku, balanced: sonnet, deep: opus}\n"
                    "workspaces:\n  /code/app:\n    rules:\n      - use: opus\n")
        symbols = await editor.client.text_document_document_symbol_async(
            types.DocumentSymbolParams(text_document=doc(uri)))
        assert symbols
        if isinstance(symbols[0], types.DocumentSymbol):  # VS Code: nested symbols
            names = {s.name: s for s in symbols if isinstance(s, types.DocumentSymbol)}
            assert list(names) == ["global_default", "rules", "tiers", "workspaces"]
            assert [c.name for c in names["rules"].children or []] == ["commits"]
            assert [c.name for c in names["tiers"].children or []] == ["fast", "balanced", "deep"]
            [app] = names["workspaces"].children or []
            assert [c.name for c in app.children or []] == ["rules"]
            assert names["rules"].children[0].selection_range == editor.range_of(  # type: ignore[index]
                uri, "commits")
        else:  # Neovim's declared capabilities: a flat list with containers
            flat = [(s.name, s.container_name) for s in symbols
                    if isinstance(s, types.SymbolInformation)]
            assert ("commits", "rules") in flat
            assert ("deep", "tiers") in flat
            assert ("rule_1", "rules") in flat
            assert ("/code/app", "workspaces") in flat


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_profile_files_get_completion_hover_and_diagnostics(editor_name: str,
                                                                   tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("workspace-profiles")
        text = ("profiles:\n  reviewer:\n    tools: [read_file, ]\n    approval: \n"
                "    model: hai\n    base_url: http://evil.example\n")
        editor.open(uri, text)
        tools = {i.label for i in await complete_at(editor, uri, ", ]", 2)}
        assert {"grep", "run_command", "delegate"} <= tools
        approval = [i.label for i in await complete_at(editor, uri, "approval: ", 10)]
        assert approval == ["ask", "read_only"]
        models = {i.label for i in await complete_at(editor, uri, "model: hai", 10)}
        assert "haiku" in models
        found = await editor.client.text_document_hover_async(types.HoverParams(
            text_document=doc(uri), position=editor.range_of(uri, "approval").start))
        assert found is not None and isinstance(found.contents, types.MarkupContent)
        assert "read_only" in found.contents.value
        problems = await editor.diagnostics(uri)
        assert [(p.code, p.range) for p in problems if p.code == "untrusted-setting"] == [
            ("untrusted-setting", editor.range_of(uri, "base_url"))]


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_a_workspace_default_wider_than_yours_is_flagged_where_it_is_chosen(
        editor_name: str, tmp_path: Path) -> None:
    """`default: default` in a repository's profiles file ran its sessions with every tool
    while the user's own default was read_only: the narrowing is shown on the default line."""
    async with editing(editor_name, tmp_path) as editor:
        (editor.config / "profiles.yaml").write_text(
            "default: reviewer\nprofiles:\n  reviewer:\n    tools: [read_file, grep]\n"
            "    approval: read_only\n", "utf-8")
        uri = editor.uri("workspace-profiles")
        text = "default: default\n"
        editor.open(uri, text)
        problems = await editor.diagnostics(uri)
        flagged = [(p.code, p.severity, p.range) for p in problems]
        at = editor.range_of(uri, "default", 2)
        assert flagged == [("untrusted-setting", types.DiagnosticSeverity.Warning, at)] * 2
        assert "cannot add 'list_files'" in problems[0].message
        assert "cannot loosen approval" in problems[1].message


def write_skill(folder: Path, name: str, description: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: {description}\n---\nbody\n", "utf-8")


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_skill_names_are_offered_where_a_rule_or_profile_names_skills(
        editor_name: str, tmp_path: Path) -> None:
    async with editing(editor_name, tmp_path) as editor:
        write_skill(editor.config / "skills", "system_design", "Architecture and trade-offs")
        write_skill(editor.workspace / ".switchman" / "skills", "db-migrations",
                    "Schema changes with Alembic")
        rule = ("rules:\n  - name: a\n    when: {skills_matching_message_includes: [sy]}\n"
                "    use: opus\n")

        uri = editor.uri("routing")  # the user's rules: theirs and every open folder's skills
        editor.open(uri, rule)
        offered = {i.label: i for i in await complete_at(editor, uri, "sy]", 2)}
        assert set(offered) == {"system_design", "db-migrations"}
        design = offered["system_design"]
        assert design.kind == types.CompletionItemKind.File
        assert isinstance(design.documentation, types.MarkupContent | str)
        assert "Architecture and trade-offs" in str(design.documentation)

        uri = editor.uri("workspace")
        editor.open(uri, rule)
        assert {i.label for i in await complete_at(editor, uri, "sy]", 2)} == {
            "system_design", "db-migrations"}

        uri = editor.uri("workspace-profiles")
        editor.open(uri, "profiles:\n  reviewer:\n    skills: [db]\n")
        assert {i.label for i in await complete_at(editor, uri, "db]", 2)} == {
            "system_design", "db-migrations"}


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_a_workspace_blocks_skill_names_are_offered_as_its_check_knows_them(
        editor_name: str, tmp_path: Path) -> None:
    """In a `workspaces:` block of the user's routing.yaml, completion offered every open
    folder's skills while the check flagged them (the block applies to its folder only):
    what is offered there is the user's skills, the block folder's and, for a block keyed on
    a folder above, the folders' below it (open or not), and none of them is flagged."""
    async with editing(editor_name, tmp_path) as editor:
        write_skill(editor.config / "skills", "system_design", "Architecture and trade-offs")
        write_skill(editor.workspace / ".switchman" / "skills", "db-migrations", "Schemas")
        billing = tmp_path / "billing"
        write_skill(billing / ".switchman" / "skills", "ledger", "Double-entry bookkeeping")
        text = (f"global_default: opus\nworkspaces:\n  {billing}:\n    rules:\n"
                "      - name: a\n        when: {skills_matching_message_includes: [le]}\n"
                "        use: opus\n"
                f"  {tmp_path}:\n    rules:\n"
                "      - name: b\n        when: {skills_matching_message_includes: [db]}\n"
                "        use: opus\n"
                "rules:\n  - name: c\n    when: {skills_matching_message_includes: [sy]}\n"
                "    use: opus\n")
        uri = editor.uri("routing")
        editor.open(uri, text)
        assert {i.label for i in await complete_at(editor, uri, "le]", 2)} == {
            "system_design", "ledger"}
        # keyed on a folder above: the open folder's skills and billing's (below it, not open)
        assert {i.label for i in await complete_at(editor, uri, "db]", 2)} == {
            "system_design", "db-migrations", "ledger"}
        assert {i.label for i in await complete_at(editor, uri, "sy]", 2)} == {
            "system_design", "db-migrations"}
        editor.replace_all(uri, text.replace("[le]", "[ledger, system_design]").replace(
            "[db]", "[db-migrations, ledger]").replace("[sy]", "[system_design, db-migrations]"))
        assert with_code(await editor.diagnostics(uri), "unknown-skill") == []


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_a_skill_name_no_skill_has_is_flagged_with_the_known_ones(
        editor_name: str, tmp_path: Path) -> None:
    """A misspelt skill name made its rule's condition never match, and a profile list
    nothing, without a word: a warning on the name, the known skills named, a quick fix.
    Skill files are read again only when one changes (a stat walk per check)."""
    async with editing(editor_name, tmp_path) as editor:
        write_skill(editor.config / "skills", "system_design", "Architecture and trade-offs")
        uri = editor.uri("workspace")
        editor.open(uri, "rules:\n  - name: a\n"
                    "    when: {skills_matching_message_includes: [sytem_design]}\n"
                    "    use: opus\n")
        [problem] = with_code(await editor.diagnostics(uri), "unknown-skill")
        assert problem.range == editor.range_of(uri, "sytem_design")
        assert problem.severity == types.DiagnosticSeverity.Warning
        assert "No skill named 'sytem_design'" in problem.message
        assert "Did you mean 'system_design'?" in problem.message
        assert str(editor.workspace / ".switchman" / "skills") in problem.message
        actions = await editor.client.text_document_code_action_async(
            types.CodeActionParams(text_document=doc(uri), range=problem.range,
                                   context=types.CodeActionContext(diagnostics=[problem])))
        assert actions and isinstance(actions[0], types.CodeAction)
        assert "[system_design]" in apply(editor, uri, edits_of(actions[0], uri))

        uri = editor.uri("workspace-profiles")
        editor.open(uri, "profiles:\n  reviewer:\n    skills: [db-migrations]\n")
        [problem] = with_code(await editor.diagnostics(uri), "unknown-skill")
        assert problem.range == editor.range_of(uri, "db-migrations")
        assert "Known skills: system_design." in problem.message
        write_skill(editor.workspace / ".switchman" / "skills", "db-migrations", "Schemas")
        editor.insert(uri, 0, "#\n")  # the next check sees the new skill
        assert with_code(await editor.diagnostics(uri), "unknown-skill") == []


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_an_open_files_unknown_skill_follows_the_skill_files_without_an_edit(
        editor_name: str, tmp_path: Path) -> None:
    """The warning stayed until the routing or profiles file was edited again: a skill file
    added or removed (the editor's file events), or saved in the editor, checks it again."""
    async with editing(editor_name, tmp_path) as editor:
        uri = editor.uri("workspace-profiles")
        editor.open(uri, "profiles:\n  reviewer:\n    skills: [db-migrations, design]\n")
        assert len(with_code(await editor.diagnostics(uri), "unknown-skill")) == 2

        def unknown(count: int) -> Callable[[list[types.Diagnostic]], bool]:
            return lambda found: len(with_code(found, "unknown-skill")) == count

        seen = editor.published()  # a workspace's skill added: the editor's file event
        write_skill(editor.workspace / ".switchman" / "skills", "db-migrations", "Schemas")
        editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(editor.workspace / ".switchman" / "skills" /
                                          "db-migrations.md").as_uri(),
                                     type=types.FileChangeType.Created)]))
        await editor.next_diagnostics(uri, seen, unknown(1))

        seen = editor.published()  # the user's skill saved in the editor (no file event)
        write_skill(editor.config / "skills", "design", "Architecture")
        editor.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=doc((editor.config / "skills" / "design.md").as_uri())))
        await editor.next_diagnostics(uri, seen, unknown(0))

        seen = editor.published()  # removed: the warning is back
        (editor.config / "skills" / "design.md").unlink()
        editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(editor.config / "skills" / "design.md").as_uri(),
                                     type=types.FileChangeType.Deleted)]))
        await editor.next_diagnostics(uri, seen, unknown(1))


async def test_a_skill_event_under_a_linked_config_folder_checks_the_open_files_again(
        tmp_path: Path) -> None:
    """``SWITCHMAN_CONFIG_DIR`` a symbolic link (to a dotfiles folder, say): the editor watches
    the folder by that name and reports its skill files under it, but they were compared with
    the folder's resolved path, so no event was a skill's and the warning stayed."""
    linked = tmp_path / "linked-config"
    linked.symlink_to(tmp_path / "config", target_is_directory=True)
    async with editing("visual-studio-code", tmp_path,
                       extra_env={"SWITCHMAN_CONFIG_DIR": str(linked)}) as editor:
        uri = editor.uri("workspace-profiles")
        editor.open(uri, "profiles:\n  reviewer:\n    skills: [design]\n")
        assert len(with_code(await editor.diagnostics(uri), "unknown-skill")) == 1
        seen = editor.published()
        write_skill(linked / "skills", "design", "Architecture")
        editor.client.workspace_did_change_watched_files(types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=(linked / "skills" / "design.md").as_uri(),
                                     type=types.FileChangeType.Created)]))
        await editor.next_diagnostics(uri, seen,
                                      lambda found: not with_code(found, "unknown-skill"))


async def test_a_skill_saved_in_a_linked_switchman_named_by_its_target_checks_again(
        tmp_path: Path) -> None:
    """The workspace's ``.switchman`` a link to ``config/switchman``, inside it: Neovim names a
    buffer there by the link's target, so a skill saved in it came as
    ``config/switchman/skills/db.md``, in no skills folder to the daemon, and the open files
    were not checked again; the workspace's profiles.yaml, named so too, was never checked."""
    async with editing("neovim", tmp_path) as editor:
        (editor.workspace / ".switchman").rmdir()
        target = editor.workspace / "config" / "switchman"
        (target / "skills").mkdir(parents=True)
        (editor.workspace / ".switchman").symlink_to(target, target_is_directory=True)
        uri = (target / "profiles.yaml").as_uri()
        editor.open(uri, "profiles:\n  reviewer:\n    skills: [db]\n")
        assert len(with_code(await editor.diagnostics(uri), "unknown-skill")) == 1
        seen = editor.published()
        write_skill(target / "skills", "db", "Schemas")
        editor.client.text_document_did_save(types.DidSaveTextDocumentParams(
            text_document=doc((target / "skills" / "db.md").as_uri())))
        await editor.next_diagnostics(uri, seen, lambda found: not with_code(found,
                                                                             "unknown-skill"))


@pytest.mark.parametrize("editor_name", CLIENTS)
async def test_a_skill_added_below_a_workspaces_blocks_folder_clears_its_warning(
        editor_name: str, tmp_path: Path) -> None:
    """A block keyed on ``code`` (a folder of repositories, none open) may name the skills of
    ``code/billing``: one added there cleared no warning until routing.yaml was edited again,
    since no editor watches those folders. The daemon polls them while routing.yaml is open."""
    code = tmp_path / "code"
    (code / "billing" / ".switchman" / "skills").mkdir(parents=True)
    text = (f"global_default: opus\nworkspaces:\n  {code}:\n    rules:\n      - when: "
            "{skills_matching_message_includes: [ledger]}\n        use: haiku\n")
    async with editing(editor_name, tmp_path,
                       extra_env={"SWITCHMAN_CONFIG_POLL_SECONDS": "0.05"}) as editor:
        (editor.config / "routing.yaml").write_text(text, "utf-8")  # the blocks in force
        uri = editor.uri("routing")
        editor.open(uri, text)
        assert len(with_code(await editor.diagnostics(uri), "unknown-skill")) == 1
        seen = editor.published()
        write_skill(code / "billing" / ".switchman" / "skills", "ledger", "Ledgers")
        await editor.next_diagnostics(uri, seen, lambda found: not with_code(found,
                                                                             "unknown-skill"))
