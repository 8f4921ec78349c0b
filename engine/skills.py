"""The skill-description index read by ``skills_matching_message_includes``.

A skill is a Markdown file under a workspace's ``.switchman/skills/`` or the
user's ``skills/`` config folder, starting with YAML front matter::

    ---
    name: system_design
    description: Architecture reviews, service boundaries and data flow design.
    ---

Only the front matter is read, never the body, and no model is called.

Scoring a message against a skill (0 to 1):

* 1.0 when the skill's name appears in the message as a phrase (``_`` and
  ``-`` in the name count as spaces, case ignored);
* otherwise the share of the description's keywords found in the message,
  counting at most six keywords: ``found / min(keywords, 6)``. Keywords are
  words of three or more letters that are not common English words; a
  trailing "s", "es", "ing" or "ed" is ignored when comparing.

A skill matches when its score is at least 0.34: at least two keywords of
a longer description, or the whole of a one- or two-word one.
"""

from __future__ import annotations

import logging
import os
import re
import time
from collections import deque
from collections.abc import Iterable, Iterator
from pathlib import Path

import msgspec

from switchman.engine.config.paths import real_path, through_workspace_link
from switchman.engine.config.yamldoc import parse_yaml
from switchman.engine.errors import UnreadableFile
from switchman.engine.files import read_head
from switchman.engine.tools.confinement import WorkspaceRoot

log = logging.getLogger(__name__)

MATCH_THRESHOLD = 0.34
MAX_KEYWORDS = 6
MAX_DESCRIPTION_CHARS = 1024
"""A skill's description is cut to this length (Anthropic's own limit for skills): every turn's
system prompt lists them, and a repository's skill must not fill it."""
_MAX_FRONT_MATTER_LINES = 200
_MAX_FRONT_MATTER_BYTES = 64 * 1024
_WORD = re.compile(r"[a-z][a-z0-9]{2,}")
_STOPWORDS = frozenset((
    "the", "and", "for", "with", "that", "this", "from", "into", "your", "you", "are", "was",
    "were", "will", "can", "not", "but", "all", "any", "use", "used", "using", "how", "what",
    "when", "where", "which", "who", "why", "its", "our", "out", "has", "have", "had", "about",
    "over", "such", "than", "then", "them", "they", "their", "there", "these", "those", "also",
    "only", "just", "more", "most", "some", "very", "each", "other", "like", "make", "made",
    "does", "did", "done", "should", "would", "could", "may", "might", "must",
))


class Skill(msgspec.Struct, frozen=True):
    """A skill's name and description, as indexed."""

    name: str
    description: str
    path: str


def _stem(word: str) -> str:
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def keywords(text: str) -> frozenset[str]:
    """The stemmed keywords of ``text``."""
    return frozenset(_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOPWORDS)


def score(skill: Skill, message: str) -> float:
    """How well ``message`` matches ``skill`` (see the module docstring)."""
    return _Matcher(skill).score(_Message(message))


_SEPARATORS = re.compile(r"[_\-\s]+")
_TOKEN = re.compile(r"[a-z0-9]+")


class _Message:
    """A message as every skill is scored against it: read once, however many skills."""

    def __init__(self, text: str) -> None:
        self.flat = _SEPARATORS.sub(" ", text.lower())
        self.tokens = frozenset(_TOKEN.findall(self.flat))
        self.keywords = keywords(text)


class _Matcher:
    """One skill's name as a phrase and its description's keywords, worked out once."""

    def __init__(self, skill: Skill) -> None:
        self.phrase = _SEPARATORS.sub(" ", skill.name.lower()).strip()
        first = _TOKEN.match(self.phrase)
        self.first = first.group() if first else None  # None: the name starts with no word
        self.pattern: re.Pattern[str] | None = None  # compiled when first searched for
        self.wanted = keywords(skill.description)

    def score(self, message: _Message) -> float:
        if self._named(message):
            return 1.0
        if not self.wanted:
            return 0.0
        return min(1.0, len(self.wanted & message.keywords) / min(len(self.wanted), MAX_KEYWORDS))

    def _named(self, message: _Message) -> bool:
        """Whether the name occurs as a phrase: not inside a word at either end. A name that
        starts with a word can only occur where the message has that word (a set lookup, so
        most skills never search the message); each search is a literal one."""
        if not self.phrase or (self.first is not None and self.first not in message.tokens):
            return False
        if self.pattern is None:
            self.pattern = re.compile(re.escape(self.phrase) + "(?![a-z0-9])")
        flat, at = message.flat, 0
        while (found := self.pattern.search(flat, at)) is not None:
            start = found.start()
            if start == 0 or _TOKEN.match(flat[start - 1]) is None:
                return True
            at = start + 1
        return False


def read_front_matter(path: Path) -> Skill | None:
    """The skill declared by ``path``'s front matter, or None if it has none; a front matter
    without a ``name`` names the skill after its file (:func:`file_skill_name`).

    Raises :class:`UnreadableFile` when ``path`` is not a regular file (see
    :mod:`switchman.engine.files`); only the first 64 KB are ever read.
    """
    head, _ = read_head(path, _MAX_FRONT_MATTER_BYTES)
    lines = head.decode("utf-8-sig", "replace").splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None
    lines = lines[1:_MAX_FRONT_MATTER_LINES + 1]
    end = next((i for i, line in enumerate(lines) if line.strip() == "---"), len(lines))
    doc = parse_yaml("".join(lines[:end]), str(path))
    root = doc.root
    if root is None or root.kind != "mapping":
        return None
    name, description = root.get("name"), root.get("description")
    named = " ".join(name.text.split()) if name is not None and name.kind == "scalar" else ""
    text = description.text if description is not None and description.kind == "scalar" else ""
    # one line each in the prompt's list: a line break would start what looks like another skill
    text = " ".join(text.split())
    if len(text) > MAX_DESCRIPTION_CHARS:
        text = text[:MAX_DESCRIPTION_CHARS - 1].rstrip() + "…"
    return Skill(named or file_skill_name(path), text, str(path))


def file_skill_name(path: Path) -> str:
    """The name of a skill whose front matter gives none: its file's name without ``.md``,
    or its folder's for a ``SKILL.md`` (the layout of Anthropic's skills: one folder each)."""
    return path.parent.name if path.stem.lower() == "skill" else path.stem


def skill_folders(workspace: Path, config_directory: Path) -> list[Path]:
    """Where a workspace's skills are read from: its own ``.switchman/skills``, then the
    user's ``<config folder>/skills``."""
    return [workspace / ".switchman" / "skills", config_directory / "skills"]


def in_skill_folder(path: Path, config_directory: Path) -> bool:
    """Whether ``path`` is a Markdown file (or a folder) in a skills folder, the user's
    ``<config folder>/skills`` or a workspace's ``.switchman/skills``: its change may add,
    change or remove a skill that a configuration file names. The config folder may be a
    symbolic link, named either way (the editor reports a file under the name it watches),
    and so may a workspace's ``.switchman`` linked within the workspace (Neovim names a skill
    saved there by the link's target)."""
    if path.suffix not in ("", ".md"):
        return False
    if _in_workspace_skills(path) or path.is_relative_to(config_directory / "skills") \
            or real_path(path).is_relative_to(real_path(config_directory / "skills")):
        return True
    return _in_workspace_skills(through_workspace_link(path))  # as Neovim names a saved skill


def _in_workspace_skills(path: Path) -> bool:
    """Whether ``path`` is named in a workspace's ``.switchman/skills``."""
    parts = path.parts
    return any(parts[i:i + 2] == (".switchman", "skills") for i in range(len(parts) - 1))


BELOW_DEPTH = 3
"""How deep below a folder :func:`workspaces_below` looks (``<folder>/a/b/c``)."""
BELOW_MAX_FOLDERS = 1000
"""Folders listed by one :func:`workspaces_below` walk at most (a block keyed on ``~``)."""
BELOW_SECONDS = 30.0
"""How long a walk's answer is reused: the check runs at every keystroke."""
_below: dict[Path, tuple[float, tuple[Path, ...]]] = {}


def workspaces_below(folder: Path) -> tuple[Path, ...]:
    """The folders below ``folder`` that have skills of their own (``.switchman/skills``),
    whether open in the editor or not: a ``workspaces:`` block keyed on ``folder`` applies to
    each, so its rules may name their skills.

    Bounded, since ``folder`` may be a big tree (``~``): breadth first, ``BELOW_DEPTH``
    levels down, ``BELOW_MAX_FOLDERS`` folders listed at most, no hidden folder, no symbolic
    link and no repository (a folder with ``.git`` or ``.switchman``) entered: 3 to 6 ms for a
    hundred repositories on this machine, about 18 ms for a walk that lists its 1,000. The
    answer is reused for ``BELOW_SECONDS``: a repository cloned meanwhile counts from the next
    walk (its skill files' changes count at once: :class:`KnownSkills`)."""
    now = time.monotonic()
    cached = _below.get(folder)
    if cached is not None and now - cached[0] < BELOW_SECONDS:
        return cached[1]
    found: list[Path] = []
    queue, listed = deque([(folder, 0)]), 0
    while queue and listed < BELOW_MAX_FOLDERS:
        current, depth = queue.popleft()
        listed += 1
        try:
            entries = sorted(os.scandir(current), key=lambda entry: entry.name)
        except OSError:
            continue
        names = {entry.name for entry in entries}
        if current != folder and ".switchman" in names \
                and os.path.isdir(os.path.join(current, ".switchman", "skills")):
            found.append(current)
        if current != folder and names & {".switchman", ".git"}:
            continue  # a repository: a workspace is its root, not a folder inside it
        queue.extend((Path(entry.path), depth + 1) for entry in entries
                     if depth < BELOW_DEPTH and not entry.name.startswith(".")
                     and entry.is_dir(follow_symlinks=False))
    if len(_below) >= KnownSkills.MAX_KEPT:
        _below.clear()
    _below[folder] = (now, tuple(found))
    return _below[folder][1]


MAX_SKILL_FILES = 500
"""Skill files read per folder, the first ones in path order: every turn stats them, and the
first turn after one changes reads each one's front matter; a repository's 5,000 skill files
held that turn for over a second (the index then lists none past this anyway)."""


def skill_files(folder: Path, *, quiet: bool = False) -> Iterator[str]:
    """The Markdown files under ``folder`` (folders and files by name, not through symbolic
    links to folders), at most :data:`MAX_SKILL_FILES` of them; more are logged unless
    ``quiet``."""
    count = 0
    for current, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith(".md"):
                continue
            if count == MAX_SKILL_FILES:
                if not quiet:
                    log.warning("skills past the first %d in %s are not indexed",
                                MAX_SKILL_FILES, folder)
                return
            count += 1
            yield os.path.join(current, name)


def folders_signature(folders: Iterable[Path],
                      workspace: Path | None = None) -> tuple[tuple[str, int, int], ...]:
    """What an index of ``folders`` is built from: each Markdown file's path, modification
    time and size (a skill added, edited, renamed or removed changes it). Asked at every
    turn, so it is a walk of stats (about 10 µs when neither folder exists, 0.1 ms with a
    repository folder of five skills on this machine). A folder inside ``workspace`` that
    leads out of it is not walked, as :meth:`SkillIndex.build` does not index it: a
    repository's ``.switchman/skills`` linked to ``/`` must not make every turn walk the
    whole disk."""
    found: list[tuple[str, int, int]] = []
    for folder in folders:
        if not folder.is_dir():
            continue
        if workspace is not None and folder.is_relative_to(workspace) \
                and not WorkspaceRoot(workspace).contains(folder):
            found.append((str(folder), -2, -2))
            continue
        try:
            for path in skill_files(folder, quiet=True):
                stat = os.stat(path)
                found.append((path, stat.st_mtime_ns, stat.st_size))
        except OSError:  # a file removed meanwhile, one that cannot be read: read again
            found.append((str(folder), -1, -1))
    return tuple(found)


class SkillIndex:
    """Skills from several folders; later folders do not override earlier names."""

    def __init__(self, skills: Iterable[Skill] = ()) -> None:
        self.skills: dict[str, Skill] = {}
        for skill in skills:
            self.skills.setdefault(skill.name, skill)
        self._matchers: dict[str, _Matcher] | None = None
        """Each skill's phrase and keywords, worked out at the first message scored."""

    @classmethod
    def build(cls, folders: Iterable[Path], workspace: Path | None = None) -> SkillIndex:
        """Index every ``*.md`` file (recursively) in ``folders`` that exist.

        A folder inside ``workspace`` (the repository's ``.switchman/skills``) is untrusted:
        it, and each of its files, must really be inside the workspace, so that a symlink
        cannot lead the index (and ``skill_load``) to the user's files or have it walk ``/``.
        A skill of the user's own keeps its name: a repository's of the same name is left out
        (it would otherwise replace what the user wrote, silently).
        """
        found: list[Skill] = []
        theirs: list[Skill] = []  # the workspace's: after every one of the user's
        for folder in folders:
            root = WorkspaceRoot(workspace) if workspace is not None and \
                folder.is_relative_to(workspace) else None  # None: the user's own folder
            if folder.is_dir() and (root is None or root.contains(folder)):
                for path in map(Path, sorted(skill_files(folder))):
                    if root is not None and not root.contains(path):
                        log.warning("skill skipped: %s leads out of the workspace", path)
                        continue
                    try:
                        skill = read_front_matter(path)
                    except UnreadableFile as exc:  # a hostile repository must not stop the index
                        log.warning("skill skipped: %s", exc)
                        continue
                    if skill is not None:
                        (found if root is None else theirs).append(skill)
        return cls(found + theirs)

    @classmethod
    def of_folders(cls, config_directory: Path, workspaces: Iterable[Path]) -> SkillIndex:
        """The user's skills (``<config folder>/skills``), then each workspace's
        (``.switchman/skills``) not already named: what a rule or profile written for those
        workspaces can name."""
        found = list(cls.build([config_directory / "skills"]).skills.values())
        for workspace in workspaces:
            theirs = skill_folders(workspace, config_directory)[0]
            found += cls.build([theirs], workspace=workspace).skills.values()
        return cls(found)

    def scores(self, message: str) -> dict[str, float]:
        """Every skill's score for ``message``: the message is read once, not once per skill
        (a repository's 5,000 skills made every turn rescan it 10,000 times)."""
        if self._matchers is None:
            self._matchers = {name: _Matcher(skill) for name, skill in self.skills.items()}
        read = _Message(message)
        return {name: matcher.score(read) for name, matcher in self._matchers.items()}

    def matching(self, message: str) -> frozenset[str]:
        """Names of the skills that match ``message``."""
        return frozenset(n for n, s in self.scores(message).items() if s >= MATCH_THRESHOLD)


class KnownSkills:
    """The skill names a configuration file can name, read again only when a skill file is
    added, changed or removed: checked on every keystroke of an editor, a file that names a
    skill costs a walk of stats (see :func:`folders_signature`), not a read of every skill."""

    MAX_KEPT = 16
    """Sets of folders remembered (one per config folder and open workspaces)."""

    def __init__(self) -> None:
        self._known: dict[tuple[Path, tuple[Path, ...]], tuple[object, frozenset[str]]] = {}

    def names(self, config_directory: Path, workspaces: Iterable[Path]) -> frozenset[str]:
        """The names :meth:`SkillIndex.of_folders` would index."""
        key = (config_directory, tuple(workspaces))
        signature = (folders_signature([config_directory / "skills"]),
                     *(folders_signature(skill_folders(w, config_directory)[:1], workspace=w)
                       for w in key[1]))
        known = self._known.get(key)
        if known is None or known[0] != signature:
            if len(self._known) >= self.MAX_KEPT:
                self._known.clear()
            index = SkillIndex.of_folders(config_directory, key[1])
            known = self._known[key] = (signature, frozenset(index.skills))
        return known[1]


def searched_folders(config_directory: Path, workspaces: Iterable[Path]) -> list[str]:
    """Where :meth:`SkillIndex.of_folders` looks, as shown to the user."""
    return [str(config_directory / "skills"),
            *(str(skill_folders(w, config_directory)[0]) for w in workspaces)]
