"""Reading files Switchman did not write: regular files only, never blocking, size-capped.

Every file the daemon reads can come from a repository the user merely opened:
``.switchman/routing.yaml``, skill files, the files the model's tools read. One
of them may be a FIFO (reading it waits forever), ``/dev/zero`` behind a symlink
(reading it never ends), a directory, a symlink loop, or simply huge. So every
read goes through this module: the path must name a regular file (checked
before opening and again on the open descriptor, so a swap in between is
caught), it is opened with ``O_NONBLOCK`` so even a FIFO swapped in cannot make
the open wait, and no more than a cap is ever read. Each refusal is an
:class:`UnreadableFile` whose message says what the path is instead.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Generator
from pathlib import Path

from switchman.engine.errors import UnreadableFile

MAX_CONFIG_BYTES = 256 * 1024
"""Configuration files: a routing file with a thousand rules is about 70 KB."""

_OPEN_FLAGS = (os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
               | getattr(os, "O_CLOEXEC", 0))
_CHUNK = 64 * 1024
_UNDER_A_LOOP = (0, -1)


def read_text(path: str | Path, limit: int = MAX_CONFIG_BYTES) -> str:
    """The whole of a UTF-8 text file of at most ``limit`` bytes (a leading BOM dropped).

    Raises :class:`UnreadableFile` for anything else, located at the first
    undecodable byte for a file that is not UTF-8.
    """
    data, whole = _read(Path(path), limit)
    if not whole:
        raise UnreadableFile(str(path), f"is larger than the {size_text(limit)} limit")
    return decode_utf8(str(path), data)


def read_head(path: str | Path, limit: int) -> tuple[bytes, bool]:
    """At most the first ``limit`` bytes of a regular file, and whether that is all of it."""
    return _read(Path(path), limit)


def entry_signature(path: str | Path) -> tuple[int, int] | None:
    """When and how big what is at ``path`` last changed; None when nothing is there.

    A dangling symlink or a symlink loop is something (the link's own signature),
    and so is a path under a folder that is a symlink loop (a fixed signature):
    reading either then reports the problem instead of the file passing for absent.
    """
    try:
        st = os.stat(path)
    except ValueError:  # a NUL byte in the name
        return None
    except OSError:
        try:
            st = os.lstat(path)
        except ValueError:
            return None
        except OSError as exc:
            return _UNDER_A_LOOP if exc.errno == errno.ELOOP else None
    return (st.st_mtime_ns, st.st_size)


def decode_utf8(path: str, data: bytes) -> str:
    """``data`` as text; a file that is not UTF-8 is refused at its first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        offset = exc.start
        line = data.count(b"\n", 0, offset)
        start = data.rfind(b"\n", 0, offset) + 1
        column = len(data[start:offset].decode("utf-8", "replace"))
        raise UnreadableFile(path, f"is not valid UTF-8 (byte 0x{data[offset]:02x} on line "
                                   f"{line + 1})", line, column) from None


def _read(path: Path, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    for chunk in read_chunks(path, limit + 1):
        chunks.append(chunk)
        size += len(chunk)
    data = b"".join(chunks)
    return data[:limit], len(data) <= limit


def read_chunks(path: str | Path, limit: int) -> Generator[bytes, None, None]:
    """The bytes of a regular file, in chunks, at most ``limit`` of them in all.

    The same checks as :func:`read_head` (a regular file, opened without blocking);
    for reading further into a big file without holding it in memory. The file is
    closed when the iteration ends or the iterator is closed.
    """
    path = Path(path)
    _check_regular(path, _stat(path))
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        raise _refusal(path, exc) from None
    try:
        _check_regular(path, os.fstat(fd))  # the path may have been swapped since the stat
        size = 0
        while size < limit:
            try:
                chunk = os.read(fd, min(_CHUNK, limit - size))
            except OSError as exc:
                raise _refusal(path, exc) from None
            if not chunk:
                break
            size += len(chunk)
            yield chunk
    finally:
        os.close(fd)


def _stat(path: Path) -> os.stat_result:
    try:
        return os.stat(path)
    except ValueError:  # a NUL byte in the name
        raise UnreadableFile(str(path).replace("\0", "\\0"), "has an invalid name") from None
    except OSError as exc:
        if exc.errno == errno.ENOENT and os.path.islink(path):
            raise UnreadableFile(str(path), "is a symbolic link to nothing (its target "
                                            "does not exist)") from None
        if exc.errno == errno.ELOOP and (folder := _looping_folder(path)) is not None:
            raise UnreadableFile(str(path), f"is inside {folder}, which is a symbolic link "
                                            "loop") from None
        raise _refusal(path, exc) from None


def _looping_folder(path: Path) -> Path | None:
    """The outermost folder on ``path`` that cannot be resolved for a symlink loop."""
    for folder in reversed(path.parents):
        try:
            os.stat(folder)
        except OSError as exc:
            return folder if exc.errno == errno.ELOOP else None
    return None


def _check_regular(path: Path, info: os.stat_result) -> None:
    mode = info.st_mode
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        what = "is a folder, not a file"
    elif stat.S_ISFIFO(mode):
        what = "is a named pipe (FIFO), not a regular file"
    elif stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        what = "is a device, not a regular file"
    elif stat.S_ISSOCK(mode):
        what = "is a socket, not a regular file"
    else:
        what = "is not a regular file"
    raise UnreadableFile(str(path), what)


def _refusal(path: Path, exc: OSError) -> UnreadableFile:
    reasons = {
        errno.ENOENT: "does not exist",
        errno.ELOOP: "is a symbolic link loop",
        errno.EACCES: "cannot be read (permission denied)",
        errno.EPERM: "cannot be read (permission denied)",
        errno.EISDIR: "is a folder, not a file",
        errno.ENOTDIR: "is not inside a folder (a part of its path is a file)",
        errno.ENAMETOOLONG: "has a name that is too long",
    }
    reason = reasons.get(exc.errno or 0) or f"cannot be read ({exc.strerror or 'error'})"
    return UnreadableFile(str(path), reason)


def size_text(limit: int) -> str:
    """A size in whole KB or MB, for a message: ``512 KB``, ``2 MB``."""
    return f"{limit // 1024} KB" if limit < 1024 * 1024 else f"{limit // (1024 * 1024)} MB"


def size_over(size: int, limit: int) -> str:
    """A file's ``size`` said beside the ``limit`` it exceeds, never as the limit itself:
    ``3 MB``, ``2.1 MB`` (tenths rounded up) where whole MB would read ``2 MB`` against
    "up to 2 MB"."""
    text = size_text(size)
    if text != size_text(limit):
        return text
    unit = 1024 * 1024 if size >= 1024 * 1024 else 1024
    tenths = -(-size * 10 // unit)  # rounded up: the size is over the limit
    return f"{tenths / 10:.1f} {'MB' if unit > 1024 else 'KB'}"
