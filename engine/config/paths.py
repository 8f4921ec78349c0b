"""Where configuration and data live."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

CONFIG_DIR_ENV = "SWITCHMAN_CONFIG_DIR"
DATA_DIR_ENV = "SWITCHMAN_DATA_DIR"
WORKSPACE_DIR = ".switchman"


def config_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """The user's Switchman config folder (``SWITCHMAN_CONFIG_DIR`` overrides it)."""
    override = environ.get(CONFIG_DIR_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs  # noqa: PLC0415 - slow to import; not needed when overridden

    return Path(platformdirs.user_config_dir("switchman", appauthor=False))


def data_dir(environ: Mapping[str, str] = os.environ) -> Path:
    """The folder for machine state such as the database (``SWITCHMAN_DATA_DIR`` overrides)."""
    override = environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).expanduser()
    import platformdirs  # noqa: PLC0415 - slow to import; not needed when overridden

    return Path(platformdirs.user_data_dir("switchman", appauthor=False))


def real_path(path: str | Path) -> Path:
    """``path`` absolute with symlinks resolved, or just absolute where that is impossible.

    ``Path.resolve`` raises on a symlink loop (and on a name with a NUL byte), and
    a path from an editor or a repository may be either.
    """
    expanded = Path(path).expanduser()
    try:
        return expanded.resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(os.path.abspath(expanded))


def same_folder(folder: str | Path, other: str | Path) -> bool:
    """Whether two names lead to one folder: either may be a symbolic link to the other (the
    user's config folder named ``~/.switchman`` and linked to a dotfiles folder, say)."""
    return real_path(folder) == real_path(other)


def config_path(path: str | Path) -> Path:
    """The path Switchman knows a configuration file by: absolute, with the symbolic links
    of the folders above it resolved, but not the file itself nor, for a workspace's
    ``<folder>/.switchman/<file>``, its ``.switchman`` folder.

    Whether a file is one of Switchman's, which workspace it belongs to and whether it
    leads out of that workspace are decided on this path: resolving all of it names a
    link's target instead (a ``.switchman/routing.yaml`` linked to ``notes.yaml`` would be
    no configuration file, one in a ``.switchman`` linked to ``<folder>/sub/.switchman``
    would be ``<folder>/sub``'s). Resolving the folders above gives a workspace (and the
    user's config folder) the one name the daemon knows it by, however it was opened.
    """
    expanded = Path(path).expanduser()
    try:
        lexical = Path(os.path.abspath(expanded))
    except ValueError:  # a NUL byte in the name
        return expanded
    above = lexical.parent.parent if lexical.parent.name == WORKSPACE_DIR else lexical.parent
    return real_path(above) / lexical.relative_to(above)


def through_workspace_link(path: str | Path) -> Path:
    """``path`` named through a workspace's ``.switchman`` folder that is a symbolic link to a
    folder inside the workspace holding ``path`` (``<folder>/config/switchman/routing.yaml`` is
    ``<folder>/.switchman/routing.yaml`` when ``.switchman`` links to ``config/switchman``);
    otherwise ``path`` absolute, with the folders above it resolved.

    Neovim names a file in a linked folder by the link's target, which is no configuration
    file by its name and place: this finds the name the file was opened by. The nearest folder
    above with such a link wins. A link leading out of its workspace, or to the workspace
    itself, is not followed back: that file is not the workspace's own.
    """
    try:
        named = real_path(Path(path).parent) / Path(path).name
    except ValueError:  # a NUL byte in the name
        return Path(path)
    for above in named.parents:
        link = above / WORKSPACE_DIR
        if not os.path.islink(link):
            continue
        target = real_path(link)
        if target != above and target.is_relative_to(above) and named.is_relative_to(target):
            return link / named.relative_to(target)
    return named


def outside_workspace(path: str | Path) -> Path | None:
    """Where a workspace's ``<folder>/.switchman/<file>`` really is, when that is outside
    ``<folder>``: the file, or its ``.switchman`` folder, is a symbolic link leading out of the
    workspace (None when it stays inside, or leads nowhere). A repository's configuration is
    untrusted: it must not make Switchman read the user's own files as its configuration."""
    lexical = Path(path)
    try:
        root = Path(os.path.realpath(lexical.parent.parent))
        real = Path(os.path.realpath(lexical))
    except (OSError, ValueError):  # a NUL byte in the name: nothing is read anyway
        return None
    if real == root or root in real.parents:
        return None
    return real


def workspace_routing_file(folder: str | Path) -> Path:
    """The routing file a workspace may carry."""
    return Path(folder) / WORKSPACE_DIR / "routing.yaml"


def workspace_profiles_file(folder: str | Path) -> Path:
    """The profiles file a workspace may carry."""
    return Path(folder) / WORKSPACE_DIR / "profiles.yaml"


def find_workspace(start: Path) -> Path:
    """The nearest folder at or above ``start`` with a ``.switchman`` folder, else ``start``."""
    start = start.resolve()
    for folder in (start, *start.parents):
        if (folder / WORKSPACE_DIR).is_dir():
            return folder
    return start
