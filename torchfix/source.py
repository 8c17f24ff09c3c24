"""Reading a file and parsing it, with a clear one-line reason when that fails.

LibCST parses bytes: it honours PEP 263 coding cookies and BOMs and round-trips them, together with
the file's line endings, through ``Module.bytes``. A file that cannot be read, decoded or parsed is
never modified; the reason is reported (``path: error: reason``) and the run goes on.
"""

from __future__ import annotations

import ast
import codecs
import errno
import io
import os
import re
import stat
import tokenize
import warnings
from pathlib import Path
from typing import Any

import libcst as cst


class SourceError(Exception):
    """Why a file was not processed: one line, fit for ``path: error: reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self):  # keep it picklable for worker processes
        return (SourceError, (self.reason,))


def declared_encoding(data: bytes) -> str:
    """The encoding Python (and LibCST) would read ``data`` with: BOM, PEP 263 cookie, or utf-8.

    Uses the stdlib's own rules (``tokenize.detect_encoding``: cookie on line 1, or on line 2 when
    line 1 is a comment or blank) so the diff is emitted in exactly the encoding the file has.
    Returns "utf-8-sig" for a BOM. Raises SourceError for an unknown or contradictory declaration.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        message = str(exc.msg if hasattr(exc, "msg") else exc)
        if message.startswith("unknown encoding"):
            raise SourceError(f"{message} in its coding declaration") from None
        if message.startswith("encoding problem"):  # a BOM together with a non-utf-8 cookie
            raise SourceError("a UTF-8 BOM contradicts its coding declaration") from None
        # the first lines are not valid utf-8: decoding reports the exact byte
        return "utf-8"
    return encoding


#: the default of ``--max-file-size``: larger files are skipped unread. LibCST needs about 0.5 GB of
#: memory and 5-10 s per MB of ordinary code (a 0.93 MB file: 454 MB, 7 s); hand-written Python
#: files are far smaller, and generated ones (tables, protobuf) hold nothing to vectorize.
DEFAULT_MAX_BYTES = 2 * 1024 * 1024


class SkippedFile(SourceError):
    """A file that is not read at all: not a regular file (a FIFO, a device, a socket), or larger
    than the size limit. Reported as ``path: skipped: reason``, not as a failure."""

    def __reduce__(self):
        return (SkippedFile, (self.reason,))


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def format_size(n: int) -> str:
    """``n`` bytes for a message: 1.5 MB, 300 KB, 12 bytes (powers of 1024)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def _open_error(path: Path, exc: OSError) -> SourceError:
    code = exc.errno
    if code == errno.ENOENT:
        if os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return SourceError(f"cannot read: a dangling symlink (to {target!r}, which does not exist)")
        return SourceError("cannot read: no such file (removed during the run?)")
    if code == errno.ELOOP:
        return SourceError("cannot read: a symlink loop (the link resolves back to itself)")
    if code in (errno.EACCES, errno.EPERM):
        return SourceError("cannot read: permission denied")
    if code == errno.EISDIR:
        return SourceError("cannot read: is a directory")
    if code == errno.ENXIO:  # a socket, or a device without a driver
        return SkippedFile("not a regular file (a socket or a device); not read")
    return SourceError(f"cannot read: {exc.strerror or exc}")


def read_bytes(path: Path | str, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), or SourceError saying why not.

    Only regular files are read: a FIFO named ``x.py`` would block the run forever and a symlink
    to ``/dev/zero`` would never end, so anything else is :class:`SkippedFile`. The file is
    ``stat``-ed before it is opened (opening a device can have effects of its own), opened without
    blocking, and its descriptor checked again with ``fstat``: the path may have been swapped for a
    FIFO in between. ``max_bytes``: a larger file is :class:`SkippedFile` too, and at most that
    many bytes are ever read, even from a file that grows while it is read.
    """
    try:
        before = os.stat(path)
    except OSError as exc:
        raise _open_error(Path(path), exc) from None
    if not stat.S_ISREG(before.st_mode):
        if stat.S_ISDIR(before.st_mode):
            raise SourceError("cannot read: is a directory")
        raise SkippedFile(f"not a regular file ({_kind(before.st_mode)}); not read")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _open_error(Path(path), exc) from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise SkippedFile(f"not a regular file ({_kind(opened.st_mode)}); not read")
        _check_size(opened.st_size, max_bytes)
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            _check_size(total, max_bytes)  # it grew while being read
        return b"".join(chunks)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _check_size(size: int, max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise SkippedFile(f"{format_size(size)}, over the size limit of {format_size(max_bytes)} (--max-file-size); not read")


# Python 2 constructs that Python 3 rejects; matched on the failing line first, then on the file.
# "except X, e:" is not here: since PEP 758 LibCST parses it as an unparenthesized exception tuple.
_PY2_LINE = [
    re.compile(r"^\s*print\s+(?![\s(=.,)\[:+\-*/%<>!&|^]|$)"),  # print "x" / print x, y
    re.compile(r"^\s*print\s*>>"),  # print >>sys.stderr, x
    re.compile(r"^\s*exec\s+[\"'\w]"),  # exec "code"
    re.compile(r"`[^`\n]+`"),  # repr backticks
    re.compile(r"<>"),
    re.compile(r"\b[uU][rR][\"']"),  # ur"..." literals
    re.compile(r"(?<![\w.])0\d+[lL]?\b"),  # 0777 octal literals
    re.compile(r"\b\d+[lL]\b"),  # 10L long literals
    re.compile(r"^\s*raise\s+[\w.]+\s*,"),  # raise E, "msg"
]
_ERROR_AT = re.compile(r"error at (\d+):(\d+)")


def _looks_like_python2(text: str, line: int) -> bool:
    lines = text.splitlines()
    if 1 <= line <= len(lines) and any(p.search(lines[line - 1]) for p in _PY2_LINE):
        return True
    # the parser often reports the line after the culprit; fall back to statement-level markers
    return any(p.search(l) for l in lines for p in _PY2_LINE[:3])


def _position(exc: cst.ParserSyntaxError) -> tuple[int, int]:
    """line:col (1-based) of a syntax error; LibCST's message is more precise than its fields."""
    match = _ERROR_AT.search(exc.message)
    if match:
        return int(match.group(1)), int(match.group(2)) + 1
    return exc.raw_line, exc.raw_column + 1


def parse(data: bytes) -> cst.Module:
    """Parse ``data`` or raise SourceError with the reason (encoding, decoding, syntax)."""
    encoding = declared_encoding(data)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r} in its coding declaration") from None
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(
            f"not decodable as {encoding}: byte {exc.object[exc.start]:#04x} at line {line} (offset {exc.start})"
        ) from None
    try:
        return cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        line, col = _position(exc)
        hint = " (Python 2 syntax?)" if _looks_like_python2(text, line) else ""
        detail = exc.message.splitlines()[0] if exc.message else ""
        detail = re.sub(r"^(parser|tokenizer) error: (error at \d+:\d+: )?", "", detail)
        if len(detail) > 80:
            detail = detail[:77] + "..."
        raise SourceError(f"does not parse: syntax error at {line}:{col}{hint}: {detail}") from None
    except (RecursionError, MemoryError):
        raise SourceError("does not parse: too deeply nested") from None
    except Exception as exc:  # LibCST raises a few other types for odd inputs
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise SourceError(f"does not parse: {type(exc).__name__}: {first}") from None
