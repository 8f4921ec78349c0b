"""Files that usually hold secrets, which the model's read tools leave alone.

A workspace's ``.env``, private keys and credential files sit inside the
workspace, so confinement lets them through; yet what ``read_file`` or ``grep``
returns goes to the model's provider. Reading them is refused (``grep`` skips
them and says so), and a planner cannot hand one to a worker. The write tools
refuse them too: ``edit_file``'s answer (the snippet "was not found", "occurs 3
times") would tell the model what the file holds, and a model that cannot read
a file cannot see what it would replace; the user edits such files. The names
are the usual ones; templates meant to be shared (``.env.example``) are
ordinary files. The user can still attach such a file to a message on purpose
(``#file``) or Apply a code block to it, and an approved ``run_command`` can
read anything, as the user could.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path

SECRET_NAMES = frozenset({
    ".env", ".envrc", ".netrc", "_netrc", ".pgpass", ".pypirc", ".npmrc", ".git-credentials",
    "id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "credentials.json",
})
SECRET_PATTERNS = (".env.*", "*.env", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore")
SHARED_TEMPLATES = ("example", "sample", "template", "dist", "defaults")
"""A final or leading part of a name that marks a template with no real values:
``.env.example``, ``example.env``, ``.env.sample.local`` is still secret."""


def is_secret_file(name: str) -> bool:
    """Whether a file called ``name`` (no folder) is one that usually holds secrets."""
    lowered = name.lower()
    parts = lowered.strip(".").split(".")
    if parts[-1] in SHARED_TEMPLATES or parts[0] in SHARED_TEMPLATES:
        return False
    return lowered in SECRET_NAMES or any(fnmatch.fnmatchcase(lowered, p)
                                          for p in SECRET_PATTERNS)


def holds_secrets(path: Path) -> bool:
    """Whether ``path`` is such a file by its own name or, a symbolic link, by the name of
    the file it leads to (``settings.txt`` linking to ``.env``), as a path named to a tool is
    judged by its real name."""
    return is_secret_file(path.name) or (
        path.is_symlink() and is_secret_file(os.path.basename(os.path.realpath(path))))


def refusal(rel: str) -> str:
    """Why a tool does not read ``rel``."""
    return (f"'{rel}' usually holds secrets (keys, passwords), so Switchman's tools do not "
            "read it for the model. If something in it is needed, ask the user to paste that "
            "part (without the secret) or to attach the file to a message.")


def change_refusal(rel: str) -> str:
    """Why a write tool does not create, edit or delete ``rel`` (before looking inside it)."""
    return (f"'{rel}' usually holds secrets (keys, passwords), so Switchman's tools do not "
            "read or change it for the model. If it needs a change, tell the user what to "
            "change (without asking for the secret) so that they make it themselves.")
