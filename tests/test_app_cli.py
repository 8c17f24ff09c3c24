"""The command line as a user drives it: diffs that apply, atomic in-place writes, exit codes,
and bad input that is reported and left byte-for-byte alone."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import torchfix.cli as cli_module
import torchfix.source as source_module
from cli_runner import run

SLOW = """import torch


def total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        total += x[i].item()
    return total
"""
FAST = """import torch


def total(x: torch.Tensor) -> float:
    total = x.sum(dtype=torch.float64).item()
    return total
"""


class _Shared:
    """The session's checker, shared by every CLI run in this module (closing is a no-op)."""

    def __init__(self, checker) -> None:  # noqa: ANN001
        self.inner = checker

    def check(self, kernel):  # noqa: ANN001, ANN201
        return self.inner.check(kernel)

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True)
def shared_checker(monkeypatch, checker):
    monkeypatch.setattr(cli_module, "make_checker", lambda *a: _Shared(checker))


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def test_dry_run_prints_a_diff_that_git_apply_and_patch_accept(tmp_path, capfdbinary):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SLOW)
    git(tmp_path, "init", "-q")
    code, out, err = run([], tmp_path, capfdbinary)
    assert code == 0 and out.startswith(b"diff --git a/pkg/m.py b/pkg/m.py\n")
    assert (tmp_path / "pkg" / "m.py").read_text() == SLOW, "a dry run wrote"
    (tmp_path / "fix.patch").write_bytes(out)
    assert git(tmp_path, "apply", "--check", "fix.patch").returncode == 0
    dry = subprocess.run(["patch", "-p1", "--dry-run", "-i", "fix.patch"], cwd=tmp_path, capture_output=True)
    assert dry.returncode == 0, dry.stdout
    assert git(tmp_path, "apply", "fix.patch").returncode == 0
    assert (tmp_path / "pkg" / "m.py").read_text() == FAST
    assert "TFV004" in err and "verified" in err


def test_apply_writes_atomically_keeps_mode_and_a_second_run_changes_nothing(tmp_path, capfdbinary):
    target = tmp_path / "m.py"
    target.write_text(SLOW)
    target.chmod(0o640)
    code, out, err = run(["--apply", "m.py"], tmp_path, capfdbinary)
    assert code == 0 and out == b""
    assert target.read_text() == FAST
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert not [p for p in tmp_path.iterdir() if "torchfix-tmp" in p.name]
    code, out, err = run(["--apply", "m.py"], tmp_path, capfdbinary)
    assert code == 0 and target.read_text() == FAST and "0 rewritten" in err


def test_check_exits_1_when_rewrites_exist_and_0_when_clean(tmp_path, capfdbinary):
    (tmp_path / "m.py").write_text(SLOW)
    assert run(["--check", "m.py"], tmp_path, capfdbinary)[0] == 1
    assert (tmp_path / "m.py").read_text() == SLOW
    (tmp_path / "m.py").write_text(FAST)
    assert run(["--check", "m.py"], tmp_path, capfdbinary)[0] == 0


@pytest.mark.parametrize(
    "name,data,reason",
    [
        ("py2.py", b'print "hello"\nx = 1\n', "Python 2 syntax?"),
        ("broken.py", b"def f(:\n    pass\n", "does not parse"),
        ("bad_bytes.py", b"x = '\xff\xfe'\ny = 1 += 2\n", "not decodable as utf-8"),
    ],
)
def test_bad_files_are_reported_untouched_and_the_run_goes_on(tmp_path, capfdbinary, name, data, reason):
    # the byte prefilter would let files without candidates through unparsed: give them one
    bad = tmp_path / name
    bad.write_bytes(data + b"\nt = 0.0\nfor v in x:\n    t += v.item()\n")
    good = tmp_path / "zz_good.py"
    good.write_text(SLOW)
    before = bad.read_bytes()
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert code == 0
    assert f"{name}: error:" in err and reason in err
    assert bad.read_bytes() == before
    assert good.read_text() == FAST


def test_unreadable_path_is_reported(tmp_path, capfdbinary, monkeypatch):
    (tmp_path / "m.py").write_text(SLOW)
    real_open = source_module.os.open

    def deny(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if os.path.basename(path) == "m.py":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(source_module.os, "open", deny)
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert code == 0 and "m.py: error: cannot read: permission denied" in err and out == b""


def test_encoding_bom_crlf_and_missing_final_newline_are_preserved(tmp_path, capfdbinary):
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# -*- coding: latin-1 -*-\n" + SLOW.replace("float:", "float:  # caf\xe9").encode("latin-1"))
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(b"\xef\xbb\xbf" + SLOW.replace("\n", "\r\n").encode())
    tail = tmp_path / "tail.py"
    tail.write_bytes(SLOW.rstrip("\n").encode())
    git(tmp_path, "init", "-q")
    code, out, err = run(["."], tmp_path, capfdbinary)
    assert code == 0
    (tmp_path / "fix.patch").write_bytes(out)
    check = git(tmp_path, "apply", "--check", "fix.patch")
    assert check.returncode == 0, check.stderr
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert latin.read_bytes().startswith(b"# -*- coding: latin-1 -*-\n") and "caf\xe9".encode("latin-1") in latin.read_bytes()
    assert b"x.sum(dtype=torch.float64)" in latin.read_bytes()
    data = crlf.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert b"x.sum(dtype=torch.float64)" in data
    assert not tail.read_bytes().endswith(b"\n") and b"x.sum(dtype=torch.float64)" in tail.read_bytes()


def test_symlinked_file_stays_a_link_and_its_target_is_rewritten(tmp_path, capfdbinary):
    real = tmp_path / "real.py"
    real.write_text(SLOW)
    link = tmp_path / "link.py"
    link.symlink_to(real)
    code, _, _ = run(["--apply", "link.py"], tmp_path, capfdbinary)
    assert code == 0 and link.is_symlink() and real.read_text() == FAST


def test_gitignore_and_virtualenvs_are_skipped(tmp_path, capfdbinary):
    for rel in ("ignored/m.py", ".venv/lib/m.py", "build/m.py", "kept/m.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SLOW)
    (tmp_path / ".gitignore").write_text("ignored/\n")
    code, out, err = run(["."], tmp_path, capfdbinary)
    assert out.count(b"diff --git") == 1 and b"kept/m.py" in out


def test_rejected_rewrite_is_reported_with_its_counterexample_and_not_emitted(tmp_path, capfdbinary):
    source = "import torch\n\n\ndef f(x: torch.Tensor):\n    c = 0\n    for v in x:\n        c += int(v)\n    return c\n"
    (tmp_path / "m.py").write_text(source)
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert code == 0 and out == b""
    assert "TFV004 rejected" in err and "counterexample (shrunk)" in err and "shape [1]" in err


def test_suppression_comment_silences_a_rule(tmp_path, capfdbinary):
    (tmp_path / "m.py").write_text(SLOW.replace("for i in range(len(x)):", "for i in range(len(x)):  # torchfix: ignore[TFV004]"))
    code, out, err = run(["-v", "m.py"], tmp_path, capfdbinary)
    assert out == b"" and "suppressed" in err


def test_select_ignore_and_json_report(tmp_path, capfdbinary):
    (tmp_path / "m.py").write_text(SLOW)
    code, out, err = run(["--ignore", "TFV004", "m.py"], tmp_path, capfdbinary)
    assert out == b""
    code, out, err = run(["--select", "TFV00", "--format", "json", "--report", "r.json", "m.py"], tmp_path, capfdbinary)
    import json

    report = json.loads(out)
    assert report["rewrites"][0]["rule"] == "TFV004" and report["rewrites"][0]["outcome"] == "verified"
    assert json.loads((tmp_path / "r.json").read_text())["rewrites"] == report["rewrites"]


@pytest.mark.parametrize(
    "args,message",
    [
        (["--select", "TFV9", "."], "unknown rule selector"),
        (["missing.py"], "no such file"),
        (["--explain", "XYZ"], "unknown rule"),
        (["--apply", "--check", "."], "exclude each other"),
    ],
)
def test_usage_errors_exit_2(tmp_path, capfdbinary, args, message):
    code, out, err = run(args, tmp_path, capfdbinary)
    assert code == 2 and message in err


def test_explain_prints_the_rule_docs(tmp_path, capfdbinary):
    code, out, err = run(["--explain", "tfv004"], tmp_path, capfdbinary)
    assert code == 0 and b"## When it stays silent" in out


def test_internal_error_exits_2(tmp_path, capfdbinary, monkeypatch):
    (tmp_path / "m.py").write_text(SLOW)

    def boom(*args):  # noqa: ANN002, ANN202
        raise RuntimeError("kaboom")

    monkeypatch.setattr(cli_module, "make_checker", boom)
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert code == 2 and "internal error" in err and "kaboom" in err


def test_console_script_runs_end_to_end(tmp_path):
    """The installed entry point, in a fresh process with the real checker."""
    (tmp_path / "m.py").write_text(SLOW)
    exe = shutil.which("torchfix")
    cmd = [exe] if exe else [sys.executable, "-m", "torchfix"]
    proc = subprocess.run([*cmd, "--check", "m.py"], cwd=tmp_path, capture_output=True, timeout=300)
    assert proc.returncode == 1 and b"x.sum(dtype=torch.float64)" in proc.stdout
