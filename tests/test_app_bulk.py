"""Bulk-migration manners with fake rules and a fake checker: --jobs, progress, formats,
discovery, interrupt safety, configuration, suppressions, --unsafe, --interactive, --color."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import torchfix.cli as cli_module
from cli_runner import run
from test_app_fakes import AssignOne, CrashesWorker, FakeChecker, Unverifiable, WholeFunction, fake_checker_factory, variant

SRC = "def f():\n    x = 1\n    return x\n"
NEW = "def f():\n    x = 2\n    return x\n"
ROOT = Path(__file__).resolve().parent.parent
# the real hooks, as imported (before any test replaced them)
REAL_HOOKS = {name: getattr(cli_module, name) for name in ("make_checker", "load_rules", "documented_rules")}
KNOWN = {"TFV901": AssignOne, "TFV902": WholeFunction, "TFV906": CrashesWorker, "TFV907": Unverifiable}


class Hooks:
    rules: list = [AssignOne]


@pytest.fixture
def hooks(monkeypatch):  # noqa: ANN001, ANN201
    state = Hooks()
    state.rules = [AssignOne]

    def load_rules(select, ignore):  # noqa: ANN001, ANN202
        for code in (select or []) + (ignore or []):
            if not any(k.startswith(code.upper()) for k in KNOWN):
                raise ValueError(f"unknown rule selector {code!r}")
        return [
            r for r in state.rules
            if (select is None or any(r.code.startswith(s.upper()) for s in select))
            and not any(r.code.startswith(s.upper()) for s in ignore or [])
        ]

    monkeypatch.setattr(cli_module, "load_rules", load_rules)
    monkeypatch.setattr(cli_module, "documented_rules", lambda: list(KNOWN.values()))
    # a module-level factory pickles by name: --jobs N really starts worker processes
    monkeypatch.setattr(cli_module, "make_checker", fake_checker_factory)
    return state


def git(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)


def _tree(root: Path, n: int) -> None:
    for i in range(n):
        sub = root / f"pkg{i % 3}"
        sub.mkdir(exist_ok=True)
        body = SRC if i % 2 == 0 else f"def g{i}():\n    return {i}\n"
        (sub / f"m{i:02d}.py").write_text(body + ("y = 1  # torchfix: ignore\n" if i % 5 == 0 else ""))
    (root / "pkg0" / "broken.py").write_text("def f(:\n    x = 1\n")


def _timeless(err: str) -> str:
    return "\n".join(line.split(" (")[0] if "scanned," in line else line for line in err.splitlines())


# --- --jobs --------------------------------------------------------------------------------------


def test_jobs_1_and_jobs_2_give_the_same_bytes(tmp_path, capfdbinary, hooks):
    _tree(tmp_path, 12)
    one = run(["--jobs", "1", "."], tmp_path, capfdbinary)
    two = run(["--jobs", "2", "."], tmp_path, capfdbinary)
    assert one[0] == two[0] == 0
    assert one[1] == two[1] and one[1].count(b"diff --git") == 6
    assert _timeless(one[2]) == _timeless(two[2]) and "broken.py: error: does not parse" in one[2]
    json_one = run(["--jobs", "1", "--format", "json", "."], tmp_path, capfdbinary)[1]
    json_two = run(["--jobs", "2", "--format", "json", "."], tmp_path, capfdbinary)[1]
    strip = lambda data: {k: v for k, v in json.loads(data).items() if k != "seconds"}  # noqa: E731
    assert strip(json_one) == strip(json_two)


def test_a_file_that_kills_its_worker_is_that_files_error_and_the_run_goes_on(tmp_path, capfdbinary, hooks):
    hooks.rules = [CrashesWorker]
    for name in ("a", "b", "c", "d"):
        (tmp_path / f"{name}.py").write_text(SRC)
    (tmp_path / "b.py").write_text(SRC + "# CRASH-THE-WORKER\n")
    code, out, err = run(["--jobs", "2", "--apply", "."], tmp_path, capfdbinary)
    assert code == 2, err
    assert "b.py: error: internal error: the worker process died" in err
    assert [p.name for p in sorted(tmp_path.glob("*.py")) if p.read_text() == NEW] == ["a.py", "c.py", "d.py"]
    assert "b.py: error" not in err.replace("b.py: error: internal error: the worker process died", "")


def test_jobs_with_the_real_rules_and_checker(tmp_path, capfdbinary, monkeypatch):
    """The real hooks (picklable by name) in two worker processes, each with its own checker."""
    from test_app_cli import SLOW

    for name, hook in REAL_HOOKS.items():
        monkeypatch.setattr(cli_module, name, hook)
    monkeypatch.setenv("TORCHFIX_NO_CACHE", "1")
    for i in range(3):
        (tmp_path / f"m{i}.py").write_text(SLOW)
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        with pytest.raises(SystemExit) as exit_info:
            cli_module.main(["--jobs", "2", "--examples", "20", "."])
    finally:
        os.chdir(old)
    out, err = capfdbinary.readouterr()
    assert exit_info.value.code == 0, err
    assert out.count(b"x.sum(dtype=torch.float64)") == 3 and "3 rewritten" in err.decode()


# --- progress and summary ------------------------------------------------------------------------


def test_plain_progress_lines_and_the_summary_breakdown(tmp_path, capfdbinary, hooks):
    from torchfix.progress import MIN_FILES

    hooks.rules = [AssignOne]
    for i in range(MIN_FILES):
        (tmp_path / f"m{i:03d}.py").write_text(SRC if i % 10 == 0 else "y = 3\n")
    code, out, err = run(["--jobs", "1", "."], tmp_path, capfdbinary)
    progress = [line for line in err.splitlines() if line.startswith("torchfix: ") and "/50 files" in line]
    assert progress == [], "a run of a few seconds prints no progress line in a log"
    assert "files: 50 scanned, 50 parsed, 0 skipped (no torch), 0 skipped (no candidate), 0 failed" in err
    code, out, err = run(["-q", "--jobs", "1", "."], tmp_path, capfdbinary)
    assert err == ""


def test_plain_progress_is_a_line_per_tenth_at_most_every_interval():
    import io

    from torchfix.progress import PLAIN_INTERVAL, Progress

    now = [0.0]
    stream = io.StringIO()
    progress = Progress(100, stream, enabled=True, clock=lambda: now[0])
    for step in range(99):
        now[0] += PLAIN_INTERVAL / 4  # 4 files per interval: a tenth (10 files) takes 2.5 intervals
        progress.advance()
    lines = stream.getvalue().splitlines()
    assert lines[0] == f"torchfix: 10/100 files (10%), {PLAIN_INTERVAL * 2.5:.1f}s"
    assert len(lines) == 9  # every tenth, none after the last file

    now[0], stream = 0.0, io.StringIO()
    fast = Progress(100, stream, enabled=True, clock=lambda: now[0])
    for step in range(99):
        now[0] += PLAIN_INTERVAL / 40  # the whole run takes 2.5 intervals
        fast.advance()
    # a line only where a tenth was passed and an interval had gone by since the last one
    assert [line.split()[1] for line in stream.getvalue().splitlines()] == ["40/100", "80/100"]


def test_the_tensor_prefilter_skips_files_that_mention_no_tensor_code(tmp_path, capfdbinary):
    # the real rules: files without torch/numpy/tensor methods are never parsed
    (tmp_path / "plain.py").write_text("def f(:\n    for i in range(3):\n        y[i] = 1\n")  # would not parse
    (tmp_path / "tensor.py").write_text("import torch\nx = torch.ones(3)\n")
    (tmp_path / "nothing.py").write_text("import torch\n")
    code, out, err = run(["--jobs", "1", "."], tmp_path, capfdbinary)
    assert code == 0 and "error" not in err
    assert "files: 3 scanned, 0 parsed, 1 skipped (no torch), 2 skipped (no candidate), 0 failed" in err


def test_no_torch_imports_for_files_without_candidates(tmp_path):
    (tmp_path / "m.py").write_text("import os\nfor i in range(3):\n    y[i] = i\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args in (["--help"], ["--check", "m.py"]):
        proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "torchfix", *args], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert proc.returncode == 0, proc.stderr
        imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
        assert "torch" not in imported and "hypothesis" not in imported and "numpy" not in imported, args


# --- formats -------------------------------------------------------------------------------------


def test_json_holds_the_diff_and_the_verdict(tmp_path, capfdbinary, hooks):
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["--format", "json", "m.py"], tmp_path, capfdbinary)
    report = json.loads(out)
    (rec,) = report["rewrites"]
    assert rec["outcome"] == "verified" and rec["emitted"] and rec["verified"]
    assert rec["diff"].startswith("diff --git a/m.py b/m.py\n") and "+    x = 2\n" in rec["diff"]
    assert rec["verdict"]["outcome"] == "verified" and rec["verdict"]["examples"] == 60
    assert rec["replacement"] == [2, 3, "    x = 2\n"]
    assert report["summary"]["rewrites"] == {"TFV901/verified": 1} and report["summary"]["parsed"] == 1


def test_json_shows_a_rejected_rewrite_with_its_diff_beside_the_counterexample(tmp_path, capfdbinary, hooks, monkeypatch):
    from test_app_fakes import rejected

    monkeypatch.setattr(cli_module, "make_checker", lambda *a: FakeChecker(lambda kernel: rejected("differs")))
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["--format", "json", "m.py"], tmp_path, capfdbinary)
    (rec,) = json.loads(out)["rewrites"]
    assert rec["outcome"] == "rejected" and not rec["emitted"] and rec["counterexample"]
    assert rec["fix"] == "assign 2" and "+    x = 2\n" in rec["diff"], "the refuted candidate, for review"
    assert rec["replacement"] is None, "nothing to apply"
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert out == b"" and "m.py:2:5: TFV901 rejected: differs\n  refuted rewrite: assign 2\n  counterexample" in err


def test_sarif_2_1_0(tmp_path, capfdbinary, hooks, monkeypatch):
    hooks.rules = [AssignOne, variant(WholeFunction, skip_reason="the function is too long")]
    (tmp_path / "m.py").write_text(SRC)
    (tmp_path / "bad.py").write_text("def f(:\n    x = 1\n")
    code, out, err = run(["--format", "sarif", "--report", "r.json", "."], tmp_path, capfdbinary)
    assert code == 0
    log = json.loads(out)
    assert log["version"] == "2.1.0" and "sarif" in log["$schema"]
    (run_,) = log["runs"]
    rules = run_["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(KNOWN) and rules[0]["name"] == "assign-one"
    assert rules[0]["shortDescription"]["text"] and "## What it does" in rules[0]["help"]["markdown"]
    verified, skipped = sorted(run_["results"], key=lambda r: r["ruleId"])
    assert verified["ruleId"] == "TFV901" and verified["level"] == "warning" and verified["ruleIndex"] == 0
    assert verified["locations"][0]["physicalLocation"]["region"] == {"startLine": 2, "startColumn": 5}
    assert verified["properties"]["verified"] and verified["properties"]["verdict"]["outcome"] == "verified"
    (change,) = verified["fixes"][0]["artifactChanges"]
    assert change["replacements"][0] == {
        "deletedRegion": {"startLine": 2, "startColumn": 1, "endLine": 3, "endColumn": 1},
        "insertedContent": {"text": "    x = 2\n"},
    }
    assert skipped["level"] == "note" and skipped["properties"]["outcome"] == "skipped" and "fixes" not in skipped
    (note,) = run_["invocations"][0]["toolExecutionNotifications"]
    assert "bad.py" in note["message"]["text"]
    assert json.loads((tmp_path / "r.json").read_text())["version"] == 2, "--report keeps writing json"


def test_github_annotations(tmp_path, capfdbinary, hooks):
    hooks.checker = None
    (tmp_path / "m.py").write_text(SRC)
    (tmp_path / "bad.py").write_text("def f(:\n    x = 1\n")
    code, out, err = run(["--format", "github", "."], tmp_path, capfdbinary)
    lines = out.decode().splitlines()
    assert lines[0].startswith("::error file=bad.py,title=torchfix::does not parse")
    assert lines[1] == "::warning file=m.py,line=2,col=5,title=TFV901 verified::`x = 1` can be `x = 2` [assign 2]"
    assert b"diff --git" not in out


# --- discovery -----------------------------------------------------------------------------------


def test_symlinked_directories_are_not_followed_and_exclude_globs(tmp_path, capfdbinary, hooks):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "far.py").write_text(SRC)
    proj = tmp_path / "proj"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "a.py").write_text(SRC)
    (proj / "src" / "gen_b.py").write_text(SRC)
    (proj / "legacy").mkdir()
    (proj / "legacy" / "c.py").write_text(SRC)
    (proj / "linked").symlink_to(outside, target_is_directory=True)
    (proj / "loop").symlink_to(proj, target_is_directory=True)
    code, out, err = run(["."], proj, capfdbinary)
    assert b"far.py" not in out and out.count(b"diff --git") == 3
    code, out, err = run(["--exclude", "legacy/", "--exclude", "gen_*.py", "."], proj, capfdbinary)
    assert out.count(b"diff --git") == 1 and b"a/src/a.py" in out
    code, out, err = run(["linked"], proj, capfdbinary)
    assert b"linked/far.py" in out, "a symlinked directory named on the command line is walked"


# --- interrupt safety ----------------------------------------------------------------------------


def test_ctrl_c_while_writing_says_how_many_were_written(tmp_path, capfdbinary, hooks, monkeypatch):
    import torchfix.write

    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(SRC)
    real = torchfix.write.atomic_write
    calls = []

    def interrupt_second(path, data):  # noqa: ANN001, ANN202
        calls.append(path)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(path, data)

    monkeypatch.setattr(torchfix.write, "atomic_write", interrupt_second)
    code, out, err = run(["--apply", "--jobs", "1", "."], tmp_path, capfdbinary)
    assert code == 130
    assert "interrupted while writing: 1 of 3 rewritten files written; the other 2 are unchanged" in err
    assert [(tmp_path / f"{n}.py").read_text() for n in "abc"] == [NEW, SRC, SRC]
    assert not [p for p in tmp_path.iterdir() if "torchfix-tmp" in p.name]


def test_ctrl_c_while_processing_writes_nothing(tmp_path, capfdbinary, hooks, monkeypatch):
    import torchfix.parallel

    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.py").write_text(SRC)
    real = torchfix.parallel.run_one
    seen = []

    def interrupt_third(job, *args, **kwargs):  # noqa: ANN001, ANN202
        seen.append(job)
        if len(seen) == 3:
            raise KeyboardInterrupt
        return real(job, *args, **kwargs)

    monkeypatch.setattr(torchfix.parallel, "run_one", interrupt_third)
    code, out, err = run(["--apply", "--jobs", "1", "."], tmp_path, capfdbinary)
    assert code == 130 and "interrupted while processing (2 of 3 files done): nothing was written" in err
    assert all((tmp_path / f"{n}.py").read_text() == SRC for n in "abc")


# --- configuration -------------------------------------------------------------------------------


def test_pyproject_configuration_and_cli_overrides(tmp_path, capfdbinary, hooks, monkeypatch):
    hooks.rules = [AssignOne, WholeFunction]
    settings = []
    monkeypatch.setattr(cli_module, "make_checker", lambda *a: settings.append(a) or FakeChecker())
    proj = tmp_path / "proj"
    (proj / "src" / "deep").mkdir(parents=True)
    (proj / "tests").mkdir()
    (proj / "vendor").mkdir()
    for rel in ("src/deep/a.py", "tests/t.py", "vendor/v.py"):
        (proj / rel).write_text(SRC)
    (proj / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.torchfix]\nselect = ["TFV90"]\nignore = "TFV902"\nexclude = ["vendor/"]\n'
        "examples = 7\ntimeout = 2\nseed = 5\njobs = 1\n\n"
        '[tool.torchfix.per-file-ignores]\n"tests/**" = ["TFV901"]\n'
    )
    # run from a subdirectory: the configuration is found by walking up from the path
    code, out, err = run(["."], proj / "src", capfdbinary)
    assert out.count(b"diff --git") == 1 and b"+    x = 2" in out and b"pass" not in out
    assert settings[-1] == (7, 5, 2.0)
    code, out, err = run(["."], proj, capfdbinary)
    assert out.count(b"diff --git") == 1 and b"a/src/deep/a.py" in out, "vendor excluded, tests per-file-ignored"
    code, out, err = run(["vendor/v.py"], proj, capfdbinary)
    assert out == b"", "exclude applies to named files too (pre-commit passes file names)"
    # flags override the file
    code, out, err = run(["--ignore", "TFV901", "--examples", "3", "src"], proj, capfdbinary)
    assert b"+pass" in out and settings[-1] == (3, 5, 2.0)


@pytest.mark.parametrize(
    "table,message",
    [("bogus = 1", "unknown key 'bogus'"), ("examples = 'many'", "expected int"), ("jobs = 0", "must be positive"),
     ("select = [1]", "expected a list of rule codes"), ("select = [", "invalid TOML")],
)
def test_bad_configuration_is_a_usage_error(tmp_path, capfdbinary, hooks, table, message):
    (tmp_path / "pyproject.toml").write_text(f"[tool.torchfix]\n{table}\n")
    (tmp_path / "m.py").write_text(SRC)
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert code == 2 and message in err and "pyproject.toml" in err


def test_configured_unsafe_can_be_turned_off(tmp_path, capfdbinary, hooks):
    hooks.rules = [Unverifiable]
    (tmp_path / "pyproject.toml").write_text("[tool.torchfix]\nunsafe = true\n")
    (tmp_path / "m.py").write_text(SRC)
    assert b"+    x = 2" in run(["m.py"], tmp_path, capfdbinary)[1]
    assert run(["--no-unsafe", "m.py"], tmp_path, capfdbinary)[1] == b""


# --- suppressions --------------------------------------------------------------------------------


def test_report_unused_suppressions(tmp_path, capfdbinary, hooks):
    (tmp_path / "m.py").write_text(
        "def f():\n    x = 1  # torchfix: ignore[TFV901]\n    y = 3  # torchfix: ignore\n"
        "    s = '# torchfix: ignore'\n    z = 1  # torchfix: ignore[TFV004]\n    return x\n"
    )
    (tmp_path / "clean.py").write_text("y = 3  # torchfix: ignore\n")
    code, out, err = run([".", "--check"], tmp_path, capfdbinary)
    assert code == 1 and "unused suppression" not in err, "z = 1 is still rewritten"
    code, out, err = run(["--report-unused-suppressions", "--format", "json", "."], tmp_path, capfdbinary)
    unused = [(u["path"], u["line"]) for u in json.loads(out)["unused_suppressions"]]
    assert unused == [("clean.py", 1), ("m.py", 3), ("m.py", 5)]
    assert "m.py:3:1: unused suppression: '# torchfix: ignore' silenced nothing" in err
    assert "3 unused suppression comment(s)" in err


# --- --unsafe ------------------------------------------------------------------------------------


def test_unsafe_emits_unverified_rewrites_marked_as_such(tmp_path, capfdbinary, hooks):
    hooks.rules = [Unverifiable]
    (tmp_path / "m.py").write_text(SRC)
    git(tmp_path, "init", "-q")
    code, out, err = run(["m.py"], tmp_path, capfdbinary)
    assert out == b"" and "TFV907 unverified: assumes `model` treats samples independently" in err
    code, out, err = run(["--unsafe", "m.py"], tmp_path, capfdbinary)
    assert out.startswith(b"diff --git a/m.py b/m.py\n") and b"unverified" not in out, "the diff stays a clean patch"
    (tmp_path / "fix.patch").write_bytes(out)
    assert git(tmp_path, "apply", "--check", "fix.patch").returncode == 0
    assert "emitted anyway (--unsafe)" in err and "1 unverified rewrite(s) emitted (--unsafe)" in err
    rec = json.loads(run(["--unsafe", "--format", "json", "m.py"], tmp_path, capfdbinary)[1])["rewrites"][0]
    assert rec["outcome"] == "unverified" and rec["emitted"] and not rec["verified"] and rec["verdict"] is None
    result = json.loads(run(["--unsafe", "--format", "sarif", "m.py"], tmp_path, capfdbinary)[1])["runs"][0]["results"][0]
    assert result["properties"]["outcome"] == "unverified" and result["properties"]["verified"] is False
    assert "UNVERIFIED" in result["message"]["text"] and result["fixes"]


# --- --interactive -------------------------------------------------------------------------------

TWO = "def f():\n    x = 1\n    return x\n\n\ndef g():\n    y = 1\n    return y\n\n\ndef h():\n    z = 1\n    return z\n"


@pytest.mark.parametrize(
    "answers,expected",
    [("y\nn\ny\n", ("x = 2", "y = 1", "z = 2")), ("n\na\n", ("x = 1", "y = 2", "z = 2")),
     ("y\nq\n", ("x = 2", "y = 1", "z = 1")), ("?\nn\nn\nn\n", ("x = 1", "y = 1", "z = 1"))],
)
def test_interactive_review(tmp_path, hooks, monkeypatch, answers, expected):
    (tmp_path / "m.py").write_text(TWO)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli_module.cli, ["--interactive", "--color", "never", "m.py"], input=answers)
    assert result.exit_code == 0, result.output
    text = (tmp_path / "m.py").read_text()
    assert all(part in text for part in expected), text
    assert "m.py:2:5: TFV901 verified: `x = 1` can be `x = 2`" in result.output
    assert "checker: verified: no counterexample" in result.output and "+    x = 2" in result.output
    assert "Apply this rewrite [y,n,a,q,?]?" in result.output
    if answers.startswith("?"):
        assert "a - apply this and every remaining rewrite" in result.output


# --- colour --------------------------------------------------------------------------------------


def test_color(tmp_path, capfdbinary, hooks, monkeypatch):
    (tmp_path / "m.py").write_text(SRC)
    plain = run(["m.py"], tmp_path, capfdbinary)[1]
    assert b"\x1b[" not in plain, "auto: no colour when stdout is not a terminal"
    colored = run(["--color", "always", "m.py"], tmp_path, capfdbinary)[1]
    assert b"\x1b[32m+    x = 2\x1b[0m\n" in colored and b"\x1b[31m-    x = 1\x1b[0m\n" in colored
    assert run(["--color", "never", "m.py"], tmp_path, capfdbinary)[1] == plain

    from torchfix.formats import use_color

    class Tty:
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color("auto", Tty()) and not use_color("never", Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color("auto", Tty()) and use_color("always", Tty())


# --- pre-commit ----------------------------------------------------------------------------------


def test_pre_commit_hooks_file(tmp_path, capfdbinary, hooks):
    import yaml

    hooks_file = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    by_id = {h["id"]: h for h in hooks_file}
    assert set(by_id) == {"torchfix", "torchfix-apply"}
    assert "--check" in by_id["torchfix"]["entry"] and "--apply" in by_id["torchfix-apply"]["entry"]
    for hook in hooks_file:
        assert hook["types"] == ["python"] and hook["pass_filenames"] is True and hook["require_serial"] is False
        assert hook["language"] == "python"
    # what pre-commit runs: the entry with the staged file names (a stub, a clean file, a rewrite)
    (tmp_path / "a.pyi").write_text("def f() -> int: ...\n")
    (tmp_path / "b.py").write_text("")
    (tmp_path / "c.py").write_text(SRC)
    entry = by_id["torchfix"]["entry"].split()[1:]
    assert run([*entry, "a.pyi", "b.py"], tmp_path, capfdbinary)[0] == 0
    assert run([*entry, "a.pyi", "b.py", "c.py"], tmp_path, capfdbinary)[0] == 1
    apply_entry = by_id["torchfix-apply"]["entry"].split()[1:]
    assert run([*apply_entry, "c.py"], tmp_path, capfdbinary)[0] == 0 and (tmp_path / "c.py").read_text() == NEW


# --- the GPU line of the summary -----------------------------------------------------------------


@pytest.mark.parametrize("machine,line", [
    (("cpu",), cli_module.NO_LOCAL_GPU_NOTE),
    (("cpu", "cuda"), cli_module.NO_GPU_LEG_NOTE),
])
def test_the_summary_says_why_no_check_ran_on_a_gpu(tmp_path, capfdbinary, hooks, monkeypatch, machine, line):
    # checks that all ended on the CPU do not mean the machine has no GPU: a refutation there
    # ends a check before its CUDA leg
    import torchfix.equivalence.checker as checker_module

    monkeypatch.setattr(checker_module, "available_devices", lambda: machine)
    (tmp_path / "m.py").write_text(SRC)
    code, _, err = run(["--jobs", "1", "m.py"], tmp_path, capfdbinary)
    assert code == 0 and line in err
    other = {cli_module.NO_LOCAL_GPU_NOTE, cli_module.NO_GPU_LEG_NOTE} - {line}
    assert not any(note in err for note in other)
