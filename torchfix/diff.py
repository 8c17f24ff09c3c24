"""Unified diffs that ``git apply`` and ``patch -p1`` accept, byte-exact.

The diff is built on the file's own lines with their own endings (CRLF stays CRLF) and emitted in
the file's own encoding: a latin-1 file yields latin-1 diff lines, so the patch applies to the
bytes on disk.
"""

from __future__ import annotations

import difflib

from torchfix.source import declared_encoding


def _lines(data: bytes, encoding: str) -> list[str]:
    return data.decode(encoding).splitlines(keepends=True)


def unified_diff(old: bytes, new: bytes, path: str, context: int = 3) -> bytes:
    """A git-style diff of one file (``a/PATH`` -> ``b/PATH``), or b"" when nothing changed."""
    if old == new:
        return b""
    encoding = declared_encoding(old)
    if encoding == "utf-8-sig":
        encoding = "utf-8"  # keep the BOM bytes in the first line, as git does
    old_lines, new_lines = _lines(old, encoding), _lines(new, encoding)
    path = path.replace("\\", "/")
    out = [f"diff --git a/{path} b/{path}\n"]
    for line in difflib.unified_diff(old_lines, new_lines, f"a/{path}", f"b/{path}", n=context):
        if line.startswith(("---", "+++")):
            out.append(line.rstrip("\r\n") + "\n")
            continue
        if not line.endswith("\n"):
            out.append(line + "\n\\ No newline at end of file\n")
        else:
            out.append(line)
    return "".join(out).encode(encoding, "surrogateescape")
