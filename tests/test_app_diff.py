"""Diffs that real ``git apply`` and ``patch -p1`` accept and that reproduce the new bytes exactly."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from torchfix.diff import split_lines, unified_diff

needs_tools = pytest.mark.skipif(not (shutil.which("git") and shutil.which("patch")), reason="git and patch needed")


def _apply_both_ways(tmp_path: Path, rel: str, old: bytes, new: bytes) -> bytes:
    """Check the patch with git apply and patch -p1, apply it with each, return the patch."""
    patch = unified_diff(old, new, rel)
    assert patch.startswith(f"diff --git a/{rel} b/{rel}\n".encode())
    for tool in ("git", "patch"):
        work = tmp_path / tool
        target = work / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(old)
        (work / "fix.patch").write_bytes(patch)
        if tool == "git":
            subprocess.run(["git", "init", "-q"], cwd=work, check=True)
            check = subprocess.run(["git", "apply", "--check", "fix.patch"], cwd=work, capture_output=True)
            assert check.returncode == 0, check.stderr
            subprocess.run(["git", "apply", "fix.patch"], cwd=work, check=True)
        else:
            dry = subprocess.run(["patch", "-p1", "--dry-run", "-i", "fix.patch"], cwd=work, capture_output=True)
            assert dry.returncode == 0, dry.stdout
            subprocess.run(["patch", "-p1", "-s", "-i", "fix.patch"], cwd=work, check=True)
        assert target.read_bytes() == new, f"{tool} produced other bytes"
    return patch


BASE = "import torch\n\n\ndef f(x):\n    total = 0\n    for v in x:\n        total += v.item()\n    return total\n"
NEW = BASE.replace("    total = 0\n    for v in x:\n        total += v.item()\n", "    total = x.sum().item()\n")


@needs_tools
def test_plain_utf8(tmp_path):
    _apply_both_ways(tmp_path, "pkg/m.py", BASE.encode(), NEW.encode())


@needs_tools
def test_crlf_and_bom(tmp_path):
    old = b"\xef\xbb\xbf" + BASE.replace("\n", "\r\n").encode()
    new = b"\xef\xbb\xbf" + NEW.replace("\n", "\r\n").encode()
    patch = _apply_both_ways(tmp_path, "m.py", old, new)
    assert b"-    total = 0\r\n" in patch


@needs_tools
@pytest.mark.parametrize("old_tail,new_tail", [("", ""), ("\n", ""), ("", "\n")])
def test_missing_final_newline(tmp_path, old_tail, new_tail):
    old = BASE.rstrip("\n") + old_tail
    new = NEW.rstrip("\n") + new_tail
    patch = _apply_both_ways(tmp_path, "m.py", old.encode(), new.encode())
    assert b"\\ No newline at end of file\n" in patch


@needs_tools
def test_latin1_with_a_coding_cookie_is_diffed_in_latin1(tmp_path):
    old = ("# -*- coding: latin-1 -*-\n" + BASE.replace("return total", "return total  # caf\xe9")).encode("latin-1")
    new = ("# -*- coding: latin-1 -*-\n" + NEW.replace("return total", "return total  # caf\xe9")).encode("latin-1")
    patch = _apply_both_ways(tmp_path, "m.py", old, new)
    with pytest.raises(UnicodeDecodeError):
        patch.decode("utf-8")


@needs_tools
def test_latin1_change_on_a_non_ascii_line(tmp_path):
    old = "# coding: latin-1\ns = 'caf\xe9'\nx = 1\n".encode("latin-1")
    new = "# coding: latin-1\ns = 'caf\xe9!'\nx = 2\n".encode("latin-1")
    _apply_both_ways(tmp_path, "m.py", old, new)


@needs_tools
def test_lines_with_form_feeds_and_other_unicode_breaks(tmp_path):
    # \f, \x1c and \u2028 are not line ends for Python, git or patch
    old = "x = 1\n\x0c\ndef f():\n    return 'a\u2028b\x1cc'\n\x0cy = 1\n".encode()
    new = old.replace(b"x = 1", b"x = 2").replace(b"y = 1", b"y = 2")
    _apply_both_ways(tmp_path, "m.py", old, new)


@needs_tools
def test_content_lines_that_look_like_headers(tmp_path):
    old = b"x = 1\n-- comment\n++y\n"
    new = b"x = 2\n"
    patch = _apply_both_ways(tmp_path, "m.py", old, new)
    assert b"\n--- comment\n" in patch and b"\n-++y\n" in patch


@needs_tools
def test_path_with_a_space(tmp_path):
    _apply_both_ways(tmp_path, "my pkg/m.py", BASE.encode(), NEW.encode())


def test_no_change_no_diff():
    assert unified_diff(b"x = 1\n", b"x = 1\n", "m.py") == b""


def test_split_lines_keeps_endings_and_splits_only_at_newline():
    assert split_lines("a\r\nb\x0cc\nd") == ["a\r\n", "b\x0cc\n", "d"]
    assert split_lines("") == []
