"""Many repositories in one run (PATHs, ``--repos FILE``, a summary per repository), the report
kept as a journal while the run goes, and ``--resume`` -- with fake rules and a fake checker."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import torchfix.cli as cli_module
from cli_runner import run
from test_app_bulk import hooks  # noqa: F401 - the fixture
from test_app_fakes import FakeChecker


def _repos(root: Path, files: int = 8) -> None:
    for i in range(files):
        repo = root / ("alpha" if i < files // 2 else "beta")
        repo.mkdir(exist_ok=True)
        (repo / f"m{i}.py").write_text(f"def f{i}():\n    v{i} = 1\n    return v{i}\n")


def _checker_stopping_after(checks: int, log: list[str]):  # noqa: ANN202
    """A ``make_checker`` hook whose checker is Ctrl-C'd at the check after ``checks``."""

    def check(kernel):  # noqa: ANN001, ANN202
        if len(log) == checks:
            raise KeyboardInterrupt
        log.append(kernel.old)
        return FakeChecker().check(kernel)

    def make(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        checker = FakeChecker()
        checker.check = check  # type: ignore[method-assign]
        return checker

    return make


def _counting_checker(log: list[str]):  # noqa: ANN202
    def make(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        checker = FakeChecker()
        checker.check = lambda kernel: (log.append(kernel.old), FakeChecker().check(kernel))[1]  # type: ignore[method-assign]
        return checker

    return make


def _without_time(text: str) -> dict:
    report = json.loads(text)
    report.pop("seconds")
    return report


def test_a_stopped_run_resumes_without_checking_what_was_decided(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    _repos(tmp_path)
    whole = run(["--jobs", "1", "--report", "whole.json", "alpha", "beta"], tmp_path, capfdbinary)
    assert whole[0] == 0 and whole[1].count(b"+++ b/") == 8

    stopped: list[str] = []
    monkeypatch.setattr(cli_module, "make_checker", _checker_stopping_after(3, stopped))
    code, _, err = run(["--jobs", "1", "--report", "r.json", "alpha", "beta"], tmp_path, capfdbinary)
    assert code == 130 and "nothing was written" in err and "run again with --resume r.json" in err
    journal = (tmp_path / "r.json").read_text().splitlines()
    assert json.loads(journal[0])["format"] == "torchfix-journal" and len(journal) == 1 + 3

    resumed: list[str] = []
    monkeypatch.setattr(cli_module, "make_checker", _counting_checker(resumed))
    code, out, err = run(["--jobs", "1", "--resume", "r.json", "alpha", "beta"], tmp_path, capfdbinary)
    assert code == 0
    assert resumed == [f"v{i} = 1" for i in range(3, 8)], "the three decided files are not checked again"
    assert out == whole[1], "the same diff as one uninterrupted run"
    assert _without_time((tmp_path / "r.json").read_text()) == _without_time((tmp_path / "whole.json").read_text())


def test_apply_resumed_writes_the_files_decided_before_the_stop(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    _repos(tmp_path, files=4)
    monkeypatch.setattr(cli_module, "make_checker", _checker_stopping_after(2, []))
    assert run(["--apply", "--jobs", "1", "--report", "r.json", "."], tmp_path, capfdbinary)[0] == 130
    assert all(b"= 1" in p.read_bytes() for p in tmp_path.rglob("m*.py")), "nothing written by the stopped run"
    monkeypatch.setattr(cli_module, "make_checker", _counting_checker(checked := []))
    code, _, err = run(["--apply", "--jobs", "1", "--resume", "r.json", "."], tmp_path, capfdbinary)
    assert code == 0 and "4 written" in err and len(checked) == 2
    assert all(b"= 2" in p.read_bytes() for p in tmp_path.rglob("m*.py"))


def test_a_file_changed_since_the_stop_is_processed_again(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    _repos(tmp_path, files=2)
    monkeypatch.setattr(cli_module, "make_checker", _checker_stopping_after(1, []))
    run(["--jobs", "1", "--report", "r.json", "."], tmp_path, capfdbinary)
    (tmp_path / "alpha" / "m0.py").write_text("def f0():\n    w = 1\n    return w\n")
    monkeypatch.setattr(cli_module, "make_checker", _counting_checker(checked := []))
    code, out, _ = run(["--jobs", "1", "--resume", "r.json", "."], tmp_path, capfdbinary)
    assert code == 0 and checked == ["w = 1", "v1 = 1"] and b"+    w = 2" in out


def test_resume_refuses_a_journal_of_other_settings_and_a_finished_report(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    _repos(tmp_path, files=2)
    monkeypatch.setattr(cli_module, "make_checker", _checker_stopping_after(1, []))
    run(["--jobs", "1", "--examples", "10", "--report", "r.json", "."], tmp_path, capfdbinary)
    code, _, err = run(["--jobs", "1", "--examples", "20", "--resume", "r.json", "."], tmp_path, capfdbinary)
    assert code == 2 and "made with other check settings (examples: 10 then, 20 now)" in err
    code, _, err = run(["--jobs", "1", "--resume", "missing.json", "."], tmp_path, capfdbinary)
    assert code == 2 and "no such report to resume" in err
    monkeypatch.setattr(cli_module, "make_checker", _counting_checker([]))
    assert run(["--jobs", "1", "--report", "done.json", "."], tmp_path, capfdbinary)[0] == 0
    code, _, err = run(["--jobs", "1", "--resume", "done.json", "."], tmp_path, capfdbinary)
    assert code == 2 and "the report of a run that finished: there is nothing to resume" in err


def test_a_journal_cut_mid_line_resumes_from_its_whole_lines(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    _repos(tmp_path, files=4)
    monkeypatch.setattr(cli_module, "make_checker", _checker_stopping_after(3, []))
    run(["--jobs", "1", "--report", "r.json", "."], tmp_path, capfdbinary)
    journal = tmp_path / "r.json"
    journal.write_text(journal.read_text()[:-40])  # the stop came while the last line was written
    monkeypatch.setattr(cli_module, "make_checker", _counting_checker(checked := []))
    assert run(["--jobs", "1", "--resume", "r.json", "."], tmp_path, capfdbinary)[0] == 0
    assert checked == ["v2 = 1", "v3 = 1"]


def test_repos_file_and_a_summary_per_repository(tmp_path, capfdbinary, hooks):  # noqa: F811
    _repos(tmp_path)
    (tmp_path / "lists").mkdir()
    (tmp_path / "lists" / "repos.txt").write_text("# the migration's repositories\n../alpha\n\n../beta   # the second\n")
    code, out, err = run(["--format", "json", "--repos", "lists/repos.txt"], tmp_path, capfdbinary)
    assert code == 0
    report = json.loads(out)
    assert [(r["path"], r["scanned"], r["rewritten"]) for r in report["repositories"]] == [
        ("lists/../alpha", 4, 4), ("lists/../beta", 4, 4)
    ]
    assert report["repositories"][0]["rewrites"] == {"TFV901/verified": 4}
    assert "repositories:\n  lists/../alpha: 4 files, 4 rewritten, 0 failed; verified 4, rejected 0" in err
    code, _, err = run(["--repos", "nowhere.txt"], tmp_path, capfdbinary)
    assert code == 2 and "--repos nowhere.txt: cannot read" in err
    (tmp_path / "bad.txt").write_text("alpha\ngamma\n")
    code, _, err = run(["--repos", "bad.txt"], tmp_path, capfdbinary)
    assert code == 2 and "bad.txt:2: gamma: no such file or directory" in err


def test_scheduler_in_the_configuration_must_be_a_string(tmp_path, capfdbinary, hooks):  # noqa: F811
    (tmp_path / "pyproject.toml").write_text("[tool.torchfix]\nscheduler = 8786\n")
    (tmp_path / "m.py").write_text("v = 1\n")
    code, _, err = run(["."], tmp_path, capfdbinary)
    assert code == 2 and "[tool.torchfix] scheduler: expected str, got 8786" in err


def test_an_unreachable_scheduler_is_a_clear_error(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    pytest.importorskip("distributed")
    import torchfix.cluster as cluster_module

    monkeypatch.setattr(cluster_module, "CONNECT_SECONDS", 1.0)
    (tmp_path / "pyproject.toml").write_text('[tool.torchfix]\nscheduler = "tcp://127.0.0.1:9"\n')
    (tmp_path / "m.py").write_text("v = 1\n")
    code, out, err = run(["--apply", "."], tmp_path, capfdbinary)
    assert code == 2 and "torchfix: error: cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err
    assert (tmp_path / "m.py").read_text() == "v = 1\n"


def test_scheduler_without_distributed_names_the_extra(tmp_path, capfdbinary, hooks, monkeypatch):  # noqa: F811
    monkeypatch.setitem(sys.modules, "distributed", None)  # an import of it raises ImportError
    (tmp_path / "m.py").write_text("v = 1\n")
    code, _, err = run(["--scheduler", "tcp://127.0.0.1:9", "."], tmp_path, capfdbinary)
    assert code == 2 and "pip install 'torchfix-codemod[dask]'" in err
