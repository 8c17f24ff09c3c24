"""Unified diffs that ``git apply`` and ``patch -p1`` accept byte-exactly.

The diff is built on the file's own lines, each keeping its own ending (a CRLF file yields CRLF
lines, so the patch applies to the bytes on disk), and is emitted in the file's own encoding (a
latin-1 file yields latin-1 diff lines). The result is bytes: write it to ``sys.stdout.buffer``.
"""

from __future__ import annotations

import difflib
import re

from torchfix.source import declared_encoding

# Lines end at "\n" only. str.splitlines() would also split at \f, \v, \x1c-\x1e, \x85, \u2028 and
# \u2029 -- characters Python allows inside a line -- and the patch would no longer match the file.
_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")
# git quotes a path holding these (C-style, in double quotes); plain paths are written as they are
_NEEDS_QUOTING = re.compile(r'[\x00-\x1f\x7f"\\]')


def split_lines(text: str) -> list[str]:
    """``text`` split after each "\\n", endings kept ("\\r\\n" stays whole); last line may lack one."""
    return _LINE.findall(text)


def _quote(path: str) -> str:
    if not _NEEDS_QUOTING.search(path):
        return path
    escapes = {"\t": "\\t", "\n": "\\n", '"': '\\"', "\\": "\\\\"}
    body = "".join(escapes.get(c, f"\\{ord(c):03o}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in path)
    return f'"{body}"'


def _header_name(prefix: str, path: str) -> str:
    name = _quote(prefix + path)
    # git (and GNU patch) end a "---"/"+++" name holding a space with a tab, so it is not cut there
    return name + "\t" if " " in name and not name.startswith('"') else name


def unified_diff(old: bytes, new: bytes, path: str, context: int = 3) -> bytes:
    """A git-style diff of one file (``a/PATH`` -> ``b/PATH``), or b"" when nothing changed.

    ``path`` is the name shown in the headers, relative to the directory the patch is applied
    from (use forward slashes). Both versions must be in the same encoding (a rewrite keeps it).
    """
    if old == new:
        return b""
    encoding = declared_encoding(old)
    if encoding == "utf-8-sig":
        encoding = "utf-8"  # keep the BOM as part of the first line, as git does
    old_lines = split_lines(old.decode(encoding))
    new_lines = split_lines(new.decode(encoding))
    path = path.replace("\\", "/")
    out = [f"diff --git {_quote('a/' + path)} {_quote('b/' + path)}\n"]
    hunks = difflib.unified_diff(old_lines, new_lines, n=context, lineterm="\n")
    # the first two lines are the ---/+++ headers (a removed line "-- x" also starts with "---")
    next(hunks)
    next(hunks)
    out.append(f"--- {_header_name('a/', path)}\n")
    out.append(f"+++ {_header_name('b/', path)}\n")
    for line in hunks:
        if line.endswith("\n"):
            out.append(line)
        else:  # the file's last line has no newline: say so, as diff and git do
            out.append(line + "\n\\ No newline at end of file\n")
    return "".join(out).encode(encoding)
