"""Whole files' results kept between runs (``torchfix.file_cache``): a re-run reads them instead of
parsing and checking again, and only what holds on any run is kept."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from cli_runner import run
from test_app_cli_fake import hooks  # noqa: F401 - the fixture
from test_app_fakes import AssignOne, FakeChecker, NeverMatches, variant, verified

import torchfix.pipeline as pipeline_module
from torchfix.equivalence.kernel import Outcome, Verdict
from torchfix.file_cache import FileResultCache
from torchfix.pipeline import FileStatus, process_file

SETTINGS = {"unsafe": False, "examples": 60}


def _file(tmp_path: Path, text: str = "import torch\nx = 1\n") -> Path:
    path = tmp_path / "m.py"
    path.write_text(text)
    return path


def _no_rerun(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        raise AssertionError("the file was processed again")

    monkeypatch.setattr(pipeline_module, "process_source", refuse)


def test_a_rerun_over_an_unchanged_file_reads_its_result_and_parses_nothing(tmp_path, monkeypatch) -> None:
    path = _file(tmp_path)
    checker = FakeChecker()
    cache = FileResultCache(tmp_path / "cache", SETTINGS)
    first = process_file(path, [AssignOne], lambda: checker, display="m.py", results=cache)
    assert first.new == b"import torch\nx = 2\n" and len(checker.checked) == 1
    assert list((tmp_path / "cache" / "files").rglob("*.json"))
    _no_rerun(monkeypatch)
    again = process_file(path, [AssignOne], lambda: checker, display="m.py", results=FileResultCache(tmp_path / "cache", SETTINGS))
    assert again == first and len(checker.checked) == 1


@pytest.mark.parametrize(
    "change",
    ["bytes", "display", "rules", "settings"],
)
def test_a_result_is_read_back_only_for_the_same_bytes_path_rules_and_settings(tmp_path, change) -> None:
    path = _file(tmp_path)
    checker = FakeChecker()
    process_file(path, [AssignOne], lambda: checker, display="m.py", results=FileResultCache(tmp_path / "cache", SETTINGS))
    display, rules, settings = "m.py", [AssignOne], SETTINGS
    if change == "bytes":
        path.write_text("import torch\nx = 1\ny = 1\n")
    elif change == "display":
        display = "pkg/m.py"
    elif change == "rules":
        rules = [AssignOne, variant(AssignOne, code="TFV909", value="7")]
    else:
        settings = {**SETTINGS, "unsafe": True}
    process_file(path, rules, lambda: checker, display=display, results=FileResultCache(tmp_path / "cache", settings))
    assert len(checker.checked) > 1


@pytest.mark.parametrize(
    "verdict",
    [
        Verdict(Outcome.UNVERIFIED, "the check timed out after 60s"),
        Verdict(Outcome.UNVERIFIED, "the checker worker died (signal 9)"),
        dataclasses.replace(verified(), timing_note="speed not measured: it ran past its budget of 30s"),
    ],
    ids=["timeout", "crash", "failed measurement"],
)
def test_a_result_that_may_depend_on_the_machines_load_is_not_kept(tmp_path, verdict) -> None:
    path = _file(tmp_path)
    checker = FakeChecker(lambda kernel: verdict)
    for _ in range(2):
        process_file(path, [AssignOne], lambda: checker, display="m.py", results=FileResultCache(tmp_path / "cache", SETTINGS))
    assert len(checker.checked) == 2
    assert not list((tmp_path / "cache" / "files").rglob("*.json"))


def test_files_the_prefilters_drop_and_files_that_crash_are_not_kept(tmp_path) -> None:
    cache = FileResultCache(tmp_path / "cache", SETTINGS)
    plain = tmp_path / "plain.py"
    plain.write_text("x = 1\n")
    assert process_file(plain, [NeverMatches], FakeChecker, results=cache).status is FileStatus.NO_CANDIDATE
    broken = _file(tmp_path, "import torch\nx = 1\ndef f(:\n")
    assert process_file(broken, [AssignOne], FakeChecker, results=cache).status is FileStatus.ERROR
    assert not (tmp_path / "cache" / "files").exists() or not list((tmp_path / "cache" / "files").rglob("*.json"))


def test_an_entry_someone_else_wrote_is_not_used(tmp_path, monkeypatch) -> None:
    """The entry holds the bytes --apply writes: a forged one must not reach the file."""
    path = _file(tmp_path)
    checker = FakeChecker()
    process_file(path, [AssignOne], lambda: checker, display="m.py", results=FileResultCache(tmp_path / "cache", SETTINGS))
    (entry,) = (tmp_path / "cache" / "files").rglob("*.json")
    data = json.loads(entry.read_text())
    data["result"]["new"] = "aW1wb3J0IG9zOyBvcy5zeXN0ZW0oImV2aWwiKQo="  # import os; os.system("evil")
    entry.write_text(json.dumps(data))
    again = process_file(path, [AssignOne], lambda: checker, display="m.py", results=FileResultCache(tmp_path / "cache", SETTINGS))
    assert again.new == b"import torch\nx = 2\n" and len(checker.checked) == 2


def test_the_interactive_review_neither_reads_nor_keeps_results(tmp_path) -> None:
    path = _file(tmp_path)
    checker = FakeChecker()
    cache = FileResultCache(tmp_path / "cache", SETTINGS)
    process_file(path, [AssignOne], lambda: checker, display="m.py", results=cache)
    declined = process_file(path, [AssignOne], lambda: checker, display="m.py", results=cache, choose=lambda *a: False)
    assert len(checker.checked) == 2 and declined.new is None


def test_the_cli_rerun_prints_the_same_bytes_from_the_cache(tmp_path, capfdbinary, hooks, monkeypatch) -> None:  # noqa: F811
    hooks.rules = [AssignOne]
    (tmp_path / "m.py").write_text("import torch\nx = 1\n")
    monkeypatch.setenv("TORCHFIX_CACHE_DIR", str(tmp_path / "cache"))
    first = run(["m.py", "--jobs", "1", "--format", "json"], tmp_path, capfdbinary)
    assert first[0] == 0 and len(hooks.checker.checked) == 1
    _no_rerun(monkeypatch)
    second = run(["m.py", "--jobs", "1", "--format", "json"], tmp_path, capfdbinary)
    assert second[0] == 0 and len(hooks.checker.checked) == 1
    strip = lambda out: {k: v for k, v in json.loads(out).items() if k != "seconds"}  # noqa: E731
    assert strip(second[1]) == strip(first[1])
