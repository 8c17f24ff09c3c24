"""Reading a file and parsing it, with a clear one-line reason when that fails.

LibCST parses bytes: it honours PEP 263 coding cookies and BOMs and round-trips them, together with
the file's line endings, through ``Module.bytes``. A file that cannot be read, decoded or parsed is
never modified; the reason is reported (``path: error: reason``) and the run goes on.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize
from pathlib import Path

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


def read_bytes(path: Path) -> bytes:
    """The file's bytes, or SourceError saying why they cannot be read."""
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise SourceError("cannot read: is a directory") from None
    except PermissionError:
        raise SourceError("cannot read: permission denied") from None
    except FileNotFoundError:
        raise SourceError("cannot read: no such file (removed during the run?)") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None


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
