"""The CLI with a fake rule and a fake checker injected through its hooks: fast, no torch."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest

import torchfix.cli as cli_module
import torchfix.source as source_module
from cli_runner import run
from test_app_fakes import AssignOne, Crashing, FakeChecker, WholeFunction, by_new_code, rejected, variant

SRC = "def f():\n    x = 1\n    return x\n"
NEW = "def f():\n    x = 2\n    return x\n"


class Hooks:
    def __init__(self) -> None:
        self.rules: list = [AssignOne]
        self.checker = FakeChecker()
        self.settings: list[tuple] = []


@pytest.fixture
def hooks(monkeypatch) -> Hooks:  # noqa: ANN001
    state = Hooks()
    known = {"TFV901": AssignOne, "TFV902": WholeFunction}

    def load_rules(select, ignore):  # noqa: ANN001, ANN202 - mimics codemods.registry.select_rules
        for code in (select or []) + (ignore or []):
            if not any(k.startswith(code.upper()) for k in known):
                raise ValueError(f"unknown rule selector {code!r}")
        return [
            r for r in state.rules
            if (select is None or any(r.code.startswith(s.upper()) for s in select))
            and not any(r.code.startswith(s.upper()) for s in ignore or [])
        ]

    def make_checker(examples, seed, timeout):  # noqa: ANN001, ANN202
        state.settings.append((examples, seed, timeout))
        return state.checker

    monkeypatch.setattr(cli_module, "load_rules", load_rules)
    monkeypatch.setattr(cli_module, "find_rule", lambda code: known.get(code.strip().upper()))
    monkeypatch.setattr(cli_module, "known_codes", lambda: list(known))
    monkeypatch.setattr(cli_module, "make_checker", make_checker)
    return state


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True)


def test_dry_run_prints_a_patch_git_apply_accepts_and_writes_nothing(tmp_path, capfdbinary, hooks):
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "m.py").write_text(SRC)
    (tmp_path / "pkg" / "clean.py").write_text("y = 3\n")
    git(tmp_path, "init", "-q")
    code, out, err = run([], tmp_path, capfdbinary)
    assert code == 0
    assert out.startswith(b"diff --git a/pkg/m.py b/pkg/m.py\n--- a/pkg/m.py\n+++ b/pkg/m.py\n")
    assert (tmp_path / "pkg" / "m.py").read_text() == SRC
    (tmp_path / "fix.patch").write_bytes(out)
    assert git(tmp_path, "apply", "--check", "fix.patch").returncode == 0
    assert subprocess.run(["patch", "-p1", "--dry-run", "-i", "fix.patch"], cwd=tmp_path, capture_output=True).returncode == 0
    assert "pkg/m.py:2:5: TFV901 verified:" in err
    assert "2 files scanned, 1 rewritten, 0 failed" in err
    assert hooks.checker.closed


def test_apply_then_a_second_run_changes_nothing(tmp_path, capfdbinary, hooks):
    target = tmp_path / "m.py"
    target.write_text(SRC)
    target.chmod(0o600)
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert code == 0 and out == b"" and target.read_text() == NEW
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and "1 written" in err
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert code == 0 and out == b"" and target.read_text() == NEW and "0 rewritten" in err
    assert run(["--check", "."], tmp_path, capfdbinary)[0] == 0


def test_check_exit_codes_and_diff(tmp_path, capfdbinary, hooks):
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["--check", "m.py"], tmp_path, capfdbinary)
    assert code == 1 and b"+    x = 2" in out and (tmp_path / "m.py").read_text() == SRC
    (tmp_path / "m.py").write_text(NEW)
    assert run(["--check", "m.py"], tmp_path, capfdbinary)[0] == 0


def test_python2_and_undecodable_files_are_reported_untouched_and_do_not_change_the_exit_code(tmp_path, capfdbinary, hooks):
    py2 = b'print "hello"\nx = 1\n'
    bad = b"x = 1\ns = '\xe9'\n"
    (tmp_path / "a_py2.py").write_bytes(py2)
    (tmp_path / "b_bad.py").write_bytes(bad)
    (tmp_path / "c_good.py").write_text(SRC)
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert code == 0
    assert "a_py2.py: error: does not parse: syntax error at 1:" in err and "(Python 2 syntax?)" in err
    assert "b_bad.py: error: not decodable as utf-8: byte 0xe9 at line 2" in err
    assert (tmp_path / "a_py2.py").read_bytes() == py2 and (tmp_path / "b_bad.py").read_bytes() == bad
    assert (tmp_path / "c_good.py").read_text() == NEW
    assert "3 files scanned, 1 rewritten, 2 failed" in err
    assert run(["--check", "a_py2.py"], tmp_path, capfdbinary)[0] == 0


def test_latin1_file_with_a_cookie_round_trips_in_latin1(tmp_path, capfdbinary, hooks):
    data = "# -*- coding: latin-1 -*-\ndef f():\n    x = 1  # caf\xe9\n    return x\n".encode("latin-1")
    (tmp_path / "m.py").write_bytes(data)
    git(tmp_path, "init", "-q")
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert code == 0 and "x = 2  # caf\xe9".encode("latin-1") in out
    (tmp_path / "fix.patch").write_bytes(out)
    assert git(tmp_path, "apply", "--check", "fix.patch").returncode == 0
    code, out, err = run(["--apply", "m.py"], tmp_path, capfdbinary)
    assert (tmp_path / "m.py").read_bytes() == data.replace(b"x = 1", b"x = 2")


@pytest.mark.parametrize(
    "data",
    [
        b"\xef\xbb\xbf" + SRC.replace("\n", "\r\n").encode(),
        SRC.rstrip("\n").replace("return x", "x = 1").encode(),
    ],
    ids=["bom-crlf", "no-final-newline"],
)
def test_bom_crlf_and_no_final_newline(tmp_path, capfdbinary, hooks, data):
    (tmp_path / "m.py").write_bytes(data)
    git(tmp_path, "init", "-q")
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    (tmp_path / "fix.patch").write_bytes(out)
    check = git(tmp_path, "apply", "--check", "fix.patch")
    assert code == 0 and check.returncode == 0, check.stderr
    run(["--apply", "m.py"], tmp_path, capfdbinary)
    assert (tmp_path / "m.py").read_bytes() == data.replace(b"x = 1", b"x = 2")


def test_unreadable_file_is_reported(tmp_path, capfdbinary, hooks, monkeypatch):
    # we run as root, so chmod 000 would not stop the read: simulate the refusal
    (tmp_path / "m.py").write_text(SRC)
    (tmp_path / "n.py").write_text(SRC)
    real_open = source_module.os.open

    def deny(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202
        if os.path.basename(path) == "m.py":
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(source_module.os, "open", deny)
    code, out, err = run(["."], tmp_path, capfdbinary)
    assert code == 0 and "m.py: error: cannot read: permission denied" in err
    assert out.count(b"diff --git") == 1 and b"a/n.py" in out


def test_symlink_is_preserved(tmp_path, capfdbinary, hooks):
    (tmp_path / "real.py").write_text(SRC)
    (tmp_path / "link.py").symlink_to("real.py")
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert code == 0 and (tmp_path / "link.py").is_symlink() and (tmp_path / "real.py").read_text() == NEW
    assert "1 written" in err, "the file and its alias are one file"


def test_gitignore_is_honoured(tmp_path, capfdbinary, hooks):
    for rel in ("gen/m.py", "kept/m.py", "kept/m_pb2.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text(SRC)
    (tmp_path / ".gitignore").write_text("gen/\n*_pb2.py\n")
    code, out, err = run(["."], tmp_path, capfdbinary)
    assert out.count(b"diff --git") == 1 and b"a/kept/m.py" in out


def test_rejected_rewrite_is_reported_with_its_counterexample_and_not_in_the_diff(tmp_path, capfdbinary, hooks):
    hooks.checker = FakeChecker(by_new_code({"x = 2": rejected("out differs on a negative index")}))
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert code == 0 and out == b""
    assert "m.py:2:5: TFV901 rejected: out differs on a negative index\n" in err
    assert "x = tensor([-1])" in err and "old: tensor([1])" in err
    assert "TFV901" in err.split("rule")[-1] and "0 rewritten" in err


def test_a_rung_refuted_on_a_gpu_only_is_named_beside_the_one_emitted(tmp_path, capfdbinary, hooks):
    """A GPU machine emits a lower rung where CUDA refuted the first, which a machine without a
    GPU emits: the verdict says so, since the report shows no refutation of a climb that ends
    verified (an H200 run found four rungs that were wrong on a GPU this way)."""
    import dataclasses

    on_gpu = rejected("out differs")
    on_gpu = dataclasses.replace(on_gpu, counterexample=dataclasses.replace(on_gpu.counterexample, device="cuda"))
    hooks.rules = [variant(AssignOne, ladder=("2", "3"))]
    hooks.checker = FakeChecker(by_new_code({"x = 2": on_gpu}))
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["m.py", "--format", "json"], tmp_path, capfdbinary)
    (rewrite,) = json.loads(out)["rewrites"]
    assert "+    x = 3" in rewrite["diff"]
    assert rewrite["reason"].endswith("a rung above it, assign 2, was refuted on cuda only: a machine without a GPU emits that one")
    hooks.checker = FakeChecker(by_new_code({"x = 2": rejected("out differs")}))
    code, out, err = run(["m.py", "--format", "json"], tmp_path, capfdbinary)
    (rewrite,) = json.loads(out)["rewrites"]
    assert "+    x = 3" in rewrite["diff"] and "refuted on" not in rewrite["reason"]


def test_skipped_and_overlapping_proposals_are_reported(tmp_path, capfdbinary, hooks):
    hooks.rules = [AssignOne, WholeFunction]
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert "TFV902" not in err, "the overlapped rewrite no longer applies to the rewritten code"
    assert b"+    x = 2" in out and b"pass" not in out
    hooks.rules = [variant(AssignOne, skip_reason="the loop body breaks")]
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    # a reviewer has nothing to act on in a skip: the default counts it, -v lists it
    assert out == b"" and "TFV901 skipped" not in err
    assert "1 skipped proposal(s) not listed above: see each one's reason with --show-skipped (-v)" in err
    for flag in ("-v", "--show-skipped"):
        code, out, err = run([flag, "m.py"], tmp_path, capfdbinary)
        assert out == b"" and "m.py:2:5: TFV901 skipped: the loop body breaks" in err and "not listed above" not in err


def test_select_and_ignore(tmp_path, capfdbinary, hooks):
    hooks.rules = [AssignOne, WholeFunction]
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["--select", "TFV902", "m.py"], tmp_path, capfdbinary)
    assert b"+pass" in out
    code, out, err = run(["--ignore", "tfv90", "m.py"], tmp_path, capfdbinary)
    assert out == b"" and "no rewrites proposed" in err
    code, out, err = run(["--select", "TFV7", "m.py"], tmp_path, capfdbinary)
    assert code == 2 and "unknown rule selector" in err


def test_checker_options_are_passed_and_the_checker_starts_only_when_needed(tmp_path, capfdbinary, hooks):
    (tmp_path / "clean.py").write_text("y = 3\n")
    run(["--examples", "7", "--seed", "3", "--timeout", "1.5", "clean.py"], tmp_path, capfdbinary)
    assert hooks.settings == [], "nothing to check: no checker"
    (tmp_path / "m.py").write_text(SRC)
    (tmp_path / "n.py").write_text(SRC)
    run(["--examples", "7", "--seed", "3", "--timeout", "1.5", "."], tmp_path, capfdbinary)
    assert hooks.settings == [(7, 3, 1.5)], "one checker for the whole run"
    run(["m.py"], tmp_path, capfdbinary)
    assert hooks.settings[-1] == (None, None, None), "unset options keep the checker's defaults"


def test_quiet_prints_only_errors(tmp_path, capfdbinary, hooks):
    (tmp_path / "m.py").write_text(SRC)
    (tmp_path / "py2.py").write_bytes(b'print "x"\n')
    code, out, err = run(["-q", "."], tmp_path, capfdbinary)
    assert b"+    x = 2" in out
    assert err.strip().splitlines() == [line for line in err.strip().splitlines() if "py2.py: error:" in line] != []


def test_explain(tmp_path, capfdbinary, hooks):
    code, out, err = run(["--explain", "tfv901"], tmp_path, capfdbinary)
    assert code == 0 and out.startswith(b"# TFV901 assign-one") and b"## When it stays silent" in out
    code, out, err = run(["--explain", "TFV999"], tmp_path, capfdbinary)
    assert code == 2 and "unknown rule 'TFV999'" in err


@pytest.mark.parametrize(
    "args,message",
    [(["missing.py"], "no such file"), (["notes.txt"], "not a Python file"), (["--apply", "--check"], "exclude each other"),
     (["--examples", "0"], "--examples"), (["--bogus"], "No such option")],
)
def test_usage_errors_exit_2(tmp_path, capfdbinary, hooks, args, message):
    (tmp_path / "notes.txt").write_text("hi\n")
    code, out, err = run(args, tmp_path, capfdbinary)
    assert code == 2 and message in err and out == b""


def test_version(tmp_path, capfdbinary, hooks):
    code, out, err = run(["--version"], tmp_path, capfdbinary)
    assert code == 0 and b"torchfix (torchfix-codemod) " in out


def test_a_crashing_rule_exits_2_after_processing_the_other_files(tmp_path, capfdbinary, hooks):
    hooks.rules = [Crashing, AssignOne]
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["--apply", "m.py"], tmp_path, capfdbinary)
    assert code == 2 and "m.py: error: internal error: RuntimeError: kaboom" in err
    assert "torchfix: internal error: 1 file(s) hit an internal error" in err
    assert (tmp_path / "m.py").read_text() == SRC


def test_unexpected_exception_anywhere_is_an_internal_error(tmp_path, capfdbinary, hooks, monkeypatch):
    import torchfix.discover

    def boom(*args):  # noqa: ANN002, ANN202
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(torchfix.discover, "discover", boom)
    code, out, err = run(["."], tmp_path, capfdbinary)
    assert code == 2 and "torchfix: internal error: RuntimeError: disk on fire" in err


def test_a_failed_write_is_reported_and_exits_2(tmp_path, capfdbinary, hooks, monkeypatch):
    import torchfix.write

    (tmp_path / "m.py").write_text(SRC)

    def refuse(path, data):  # noqa: ANN001, ANN202
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(torchfix.write, "atomic_write", refuse)
    code, out, err = run(["--apply", "m.py"], tmp_path, capfdbinary)
    assert code == 2 and "m.py: error: cannot write: Permission denied" in err
    assert (tmp_path / "m.py").read_text() == SRC


def test_json_report(tmp_path, capfdbinary, hooks):
    hooks.checker = FakeChecker(by_new_code({"x = 2": rejected()}))
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["--format", "json", "--report", "r.json", "m.py"], tmp_path, capfdbinary)
    report = json.loads(out)
    assert report["files"] == [{"path": "m.py", "changed": False, "error": None, "status": "parsed"}]
    (rewrite,) = report["rewrites"]
    assert rewrite["outcome"] == "rejected" and "tensor([-1])" in rewrite["counterexample"]
    assert json.loads((tmp_path / "r.json").read_text())["rewrites"] == report["rewrites"]


def test_python_dash_m_entry_point(tmp_path):
    """``python -m torchfix`` in a fresh process; no file needs checking, so no checker starts."""
    import sys

    (tmp_path / "m.py").write_text("y = 3\n")
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": str(root)}
    proc = subprocess.run([sys.executable, "-m", "torchfix", "--check", "m.py"], cwd=tmp_path, capture_output=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert b"1 file scanned, 0 rewritten, 0 failed" in proc.stderr
