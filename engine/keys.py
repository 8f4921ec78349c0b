"""API keys: whether one is present, and reading it at call time.

A key is only ever held in memory, by the provider's client and by the daemon's
:class:`KeyRing` (what it masks); it is never put into a record, event, log
line or message. Configuration names a key *source* (an environment variable or
a file), never a key.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from switchman.engine.config.registry import ProviderSpec
from switchman.engine.errors import UnreadableFile
from switchman.engine.files import read_text

MAX_KEY_FILE_BYTES = 64 * 1024
_FINGERPRINT_SALT = os.urandom(16)


def read_key(provider: ProviderSpec, environ: Mapping[str, str] = os.environ,
             read_file: Callable[[Path], str] | None = None) -> str | None:
    """The provider's API key, or None when it needs one and none is set; ``read_file``
    reads a key file (:func:`key_file_text` unless given)."""
    if provider.api_key_env:
        value = environ.get(provider.api_key_env, "").strip()
        if value:
            return value
    if provider.api_key_file:
        value = (read_file or key_file_text)(Path(provider.api_key_file).expanduser())
        if value:
            return value
    return None


def key_file_text(path: Path) -> str:
    """The key a key file holds; "" when it cannot be read (its content is never shown)."""
    try:
        return read_text(path, MAX_KEY_FILE_BYTES).strip()
    except UnreadableFile:
        return ""


RECENT_CHANGE_NS = 2_000_000_000
"""A key file changed less than this long ago is not kept: it is read at each use."""


class KeyRing:
    """The daemon's one reader of API keys: whether each provider has one, where it comes
    from, and the keys masked at every answer, tool result and provider error.

    Keys are read for masking several times a turn, so a key file is read again only once
    it changed. A file is known unchanged by its device, inode, size, modification and
    change times (a rotated key is written in place or renamed over the file: one of them
    differs). A write in the same clock tick as an earlier one can leave all of them as they
    were, so a file changed within :data:`RECENT_CHANGE_NS` of being looked at is not kept
    (git does the same with the files it calls "racy").

    Every key value read since the ring was made is remembered, in memory only, and stays
    in :meth:`masked` after the key is rotated or its provider removed: a model still holds
    the old key in its earlier context, and a file or a command's output may print it. (Not
    a key file's content read half-written: see :meth:`masked`.)
    """

    def __init__(self, environ: Mapping[str, str] = os.environ,
                 read: Callable[[Path], str] = key_file_text,
                 clock: Callable[[], int] = time.time_ns) -> None:
        self._environ = environ
        self._read = read
        self._clock = clock
        self._files: dict[Path, tuple[tuple[int, ...], str]] = {}
        self._seen: dict[str, None] = {}
        """Every key read so far, in the order first read (a set that keeps its order)."""

    def key(self, provider: ProviderSpec) -> str | None:
        """The provider's key now (as :func:`read_key`)."""
        key = read_key(provider, self._environ, self.file_key)
        if key is not None and key not in self._seen:
            self._seen[key] = None
        return key

    def present(self, provider: ProviderSpec) -> bool:
        """Whether calls to ``provider`` can be made: a key is set, or none is needed."""
        return not provider.needs_key or self.key(provider) is not None

    def keys(self, providers: Iterable[ProviderSpec]) -> list[str]:
        """The keys of ``providers`` that have one now; files of other providers are
        forgotten."""
        providers = list(providers)
        kept = {Path(p.api_key_file).expanduser() for p in providers if p.api_key_file}
        self._files = {path: file for path, file in self._files.items() if path in kept}
        return [key for p in providers if (key := self.key(p))]

    def masked(self, providers: Iterable[ProviderSpec]) -> list[str]:
        """What is masked: the keys of ``providers`` now and every key read before them (a
        rotated key, a removed provider's), for as long as the daemon runs.

        A value that begins another one read is left out: it is a key file read while it was
        being written (truncated, then written), and masking it on its own would mask what
        it holds wherever it shows — ``sk-ant-api03-``, say, in code a model writes. What of
        it is secret is masked as a piece of the whole key (:mod:`~switchman.engine.keymask`).
        """
        self.keys(providers)
        seen = list(self._seen)
        for value in seen:
            if any(other != value and other.startswith(value) for other in seen):
                del self._seen[value]
        return list(self._seen)

    def fingerprint(self, provider: ProviderSpec) -> str | None:
        """A stand-in for the provider's key as it is now, to tell whether it changed since
        the provider refused one: a hash salted per process, held in memory only (never
        recorded); None when no key is set."""
        key = self.key(provider)
        if key is None:
            return None
        return hashlib.blake2b(key.encode(), digest_size=16, key=_FINGERPRINT_SALT).hexdigest()

    def source(self, provider: ProviderSpec) -> str | None:
        """Where ``provider``'s key really comes from — the environment variable or the key
        file :func:`read_key` takes it from — never the key; with no key set, where one is
        looked for first; None when the provider names no source."""
        if provider.api_key_env and self._environ.get(provider.api_key_env, "").strip():
            return provider.api_key_env
        if provider.api_key_file and self.key(provider):  # the variable is unset or empty
            return provider.api_key_file
        return provider.api_key_env or provider.api_key_file

    def file_open(self, provider: ProviderSpec) -> bool:
        """Whether the key :meth:`key` takes comes from a key file that other users of this
        machine can read (group or others have any permission on it; POSIX only)."""
        if os.name != "posix" or not provider.api_key_file \
                or self.source(provider) != provider.api_key_file:
            return False
        try:
            return Path(provider.api_key_file).expanduser().stat().st_mode & 0o077 != 0
        except OSError:
            return False

    def file_key(self, path: Path) -> str:
        """The key the file at ``path`` holds now (as :func:`key_file_text`)."""
        try:
            st = path.stat()
        except (OSError, ValueError):  # no file: no key
            self._files.pop(path, None)
            return ""
        signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        kept = self._files.get(path)
        if kept is not None and kept[0] == signature:
            return kept[1]
        value = self._read(path)
        if self._clock() - max(st.st_mtime_ns, st.st_ctime_ns) >= RECENT_CHANGE_NS:
            self._files[path] = (signature, value)
        else:
            self._files.pop(path, None)
        return value


def missing_key_hint(provider: ProviderSpec, *, check_file: bool = False) -> str:
    """Where a key is looked for, for a message saying none is set: the variable and the key
    file both (the file is where a user who wrote ``api_key_file`` looks); with
    ``check_file``, why the file gave none ("does not exist", "is empty"), never its text."""
    sources = [provider.api_key_env] if provider.api_key_env else []
    if provider.api_key_file:
        why = ""
        if check_file:
            try:
                empty = not read_text(Path(provider.api_key_file).expanduser(),
                                      MAX_KEY_FILE_BYTES).strip()
                why = ", which is empty" if empty else ""
            except UnreadableFile as problem:
                why = f", which {problem.reason}"
        sources.append(f"the key file {provider.api_key_file}{why}")
    return " or ".join(sources) or "an API key"


_TOKEN_LIKE = re.compile(r"\b(?:sk-[A-Za-z0-9_\-]{6,}|[A-Za-z0-9_\-]{32,})"
                         r"(?:(?:[*•…]+|\.{3,})[A-Za-z0-9]{1,4}\b|\b)")
"""A key-shaped word, with the shortened form's stars and last characters after it
(``sk-test-01****cdef``): masked up to the stars, it left the key's last characters shown and
no shortened form for :mod:`~switchman.engine.keymask` to find."""


def redact(text: str, secrets: list[str]) -> str:
    """``text`` with every known secret and anything key-shaped masked.

    Provider error messages sometimes quote the key they refused; they pass
    through here before they reach a log, the database or the editor.
    """
    for secret in secrets:
        if secret and len(secret) >= 4:
            text = text.replace(secret, "[redacted]")
    return _TOKEN_LIKE.sub("[redacted]", text)
