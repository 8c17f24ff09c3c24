"""Reading a file and parsing it, with a clear reason when that fails.

LibCST parses bytes: it honours PEP 263 coding cookies and BOMs and round-trips them, together with
the file's line endings, through ``Module.bytes``. A file it cannot read, decode or parse is left
byte-for-byte alone; the reason is reported and the run goes on.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass
from pathlib import Path

import libcst as cst

_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


@dataclass(frozen=True)
class SourceError(Exception):
    """Why a file was not processed: one line, fit for ``path: error: reason``."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def declared_encoding(data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    for line in data.splitlines()[:2]:
        match = _COOKIE.match(line)
        if match:
            return match.group(1).decode("ascii", "replace")
    return "utf-8"


def read_bytes(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except IsADirectoryError:
        raise SourceError("is a directory") from None
    except PermissionError:
        raise SourceError("cannot read: permission denied") from None
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None


def parse(data: bytes) -> cst.Module:
    """Parse ``data`` or raise SourceError with the reason (decoding, syntax, Python 2)."""
    encoding = declared_encoding(data)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r} in its coding declaration") from None
    try:
        data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise SourceError(f"cannot decode as {encoding}: byte {exc.object[exc.start]:#04x} at offset {exc.start}") from None
    try:
        return cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        hint = ""
        text = data.decode(encoding, "replace")
        if re.search(r"^\s*print\s+[^\s(=]", text, re.M) or re.search(r"except\s+[\w.]+\s*,\s*\w+\s*:", text) or "ur'" in text:
            hint = " (Python 2 syntax?)"
        raise SourceError(f"does not parse: syntax error at {exc.raw_line}:{exc.raw_column + 1}{hint}") from None
    except (RecursionError, MemoryError):
        raise SourceError("does not parse: too deeply nested") from None
    except Exception as exc:  # LibCST raises a few other types for odd inputs (e.g. bad indentation)
        raise SourceError(f"does not parse: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
