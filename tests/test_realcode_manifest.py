"""The real-code dev set: its manifest is well-formed, and proposals map to the right rows.

``benchmarks/realcode/run_devset.py`` measures torchfix on real repositories from local snapshots;
these tests need no snapshot. They check the manifest itself (fields, ids, line ranges, the sizes
the dev set promises) and the mapping from a JSON report's records to rows on a fake report.
"""

from __future__ import annotations

import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@lru_cache(maxsize=None)
def _devset():  # noqa: ANN202 - the script as a module, loaded once from its file
    name = "_run_devset_under_test"
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "realcode" / "run_devset.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


def _rows():  # noqa: ANN202
    return _devset().load_manifest()


def test_manifest_parses_with_unique_ids() -> None:
    rows = _rows()
    ids = [r.id for r in rows]
    assert len(ids) == len(set(ids))
    assert all(r.start <= r.end for r in rows)


def test_manifest_covers_both_issues_and_traps() -> None:
    rows = _rows()
    rewrites = [r for r in rows if r.expect == "rewrite"]
    assert len(rewrites) >= 60
    assert sum(r.family == "index" for r in rewrites) >= 25
    assert sum(r.expect == "trap" for r in rows) >= 15
    assert {r.lib for r in rewrites} == {"torch", "numpy"}
    assert {r.pattern for r in rows} <= set(_devset().PATTERNS)


def test_no_repository_dominates_the_dev_set() -> None:
    rows = _rows()
    counts: dict[str, int] = {}
    for r in rows:
        counts[r.repo] = counts.get(r.repo, 0) + 1
    assert max(counts.values()) <= 0.15 * len(rows) + 1


def test_numpy_rows_are_index_family() -> None:
    # the dev set's rule (issue 13 owns NumPy loops of any kind)
    assert all(r.family == "index" for r in _rows() if r.lib == "numpy")


def _line(**overrides: str) -> list[str]:
    fields = {
        "id": "abc-01", "repo": "owner/name", "commit": "0" * 40, "path": "pkg/mod.py", "lines": "3-7",
        "family": "loop", "pattern": "TFV001", "lib": "torch", "expect": "rewrite",
        "hint": "per-row sum -> x.sum(1) written in our own words",
    }
    fields.update(overrides)
    return [fields[c] for c in _devset().COLUMNS]


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"id": "ABC"}, "id"),
        ({"repo": "not a repo"}, "repo"),
        ({"commit": "abc123"}, "40-hex"),
        ({"repo": "pypi:allennlp", "commit": "latest"}, "version"),
        ({"path": "/abs/mod.py"}, "path"),
        ({"path": "mod.txt"}, "path"),
        ({"lines": "7-3"}, "end before"),
        ({"lines": "3"}, "START-END"),
        ({"family": "other"}, "family"),
        ({"pattern": "TFV009"}, "pattern"),
        ({"lib": "jax"}, "lib"),
        ({"expect": "maybe"}, "expect"),
        ({"hint": "x"}, "hint"),
    ],
)
def test_bad_fields_are_refused_with_the_reason(overrides: dict, message: str) -> None:
    module = _devset()
    with pytest.raises(module.ManifestError, match=message):
        module.parse_row(_line(**overrides), "m.tsv:2")


def test_pypi_rows_take_a_version() -> None:
    row = _devset().parse_row(_line(repo="pypi:torchvision", commit="0.2.2.post3"), "m.tsv:2")
    assert row.tree_path == "pypi+torchvision@0.2.2.post3/pkg/mod.py"


def test_partly_overlapping_rows_are_refused(tmp_path: Path) -> None:
    module = _devset()
    header = "\t".join(module.COLUMNS)
    a = "\t".join(_line(id="abc-01", lines="3-7"))
    b = "\t".join(_line(id="abc-02", lines="5-9"))
    manifest = tmp_path / "m.tsv"
    manifest.write_text(f"{header}\n{a}\n{b}\n")
    with pytest.raises(module.ManifestError, match="overlap"):
        module.load_manifest(manifest)
    dup = "\t".join(_line(id="abc-01", lines="20-21"))
    manifest.write_text(f"{header}\n{a}\n{dup}\n")
    with pytest.raises(module.ManifestError, match="already used"):
        module.load_manifest(manifest)


def test_hunk_ranges_read_the_old_side() -> None:
    diff = "--- a/m.py\n+++ b/m.py\n@@ -10,4 +10,1 @@\n-a\n@@ -20 +17,2 @@\n-b\n@@ -30,0 +28,1 @@\n+c\n"
    assert _devset().hunk_ranges(diff) == [(10, 13), (20, 20), (30, 30)]
    assert _devset().hunk_ranges(None) == []


def _record(line: int, outcome: str, emitted: bool = False, diff: str | None = None, path: str = "t/m.py",
            rule: str = "TFV001", reason: str = "") -> dict:
    return {"path": path, "line": line, "rule": rule, "outcome": outcome, "emitted": emitted,
            "reason": reason, "diff": diff, "replacement": None, "fix": None}


def test_records_map_to_the_innermost_row_and_traps_to_touching_rewrites() -> None:
    module = _devset()
    parse = module.parse_row
    outer = parse(_line(id="abc-01", lines="10-30"), "m:2")
    inner = parse(_line(id="abc-02", lines="12-14"), "m:3")
    trap = parse(_line(id="abc-03", lines="40-45", expect="trap"), "m:4")
    other = parse(_line(id="abc-04", lines="50-52", path="pkg/other.py"), "m:5")
    rows = [outer, inner, trap, other]
    path_of = {"t/m.py": outer.source_key, "t/o.py": other.source_key}
    records = [
        _record(13, "skipped", reason="nothing shows that x is a tensor"),
        _record(12, "verified", emitted=True, diff="@@ -12,3 +12,1 @@\n"),
        _record(20, "rejected", reason="counterexample"),
        # reported at a header outside the trap, but its hunk rewrites the trap's lines
        _record(38, "verified", emitted=True, diff="@@ -41,2 +41,1 @@\n"),
        _record(60, "verified", emitted=True, diff="@@ -60,2 +60,1 @@\n"),  # outside every row
        _record(51, "unverified", path="t/o.py"),
    ]
    results, outside = module.map_records(rows, records, path_of)
    by_id = {r.row.id: r for r in results}
    assert by_id["abc-02"].status == "emitted" and len(by_id["abc-02"].proposals) == 2
    assert by_id["abc-01"].status == "rejected"  # the inner row's rewrite is not the outer row's
    assert [rec["line"] for rec in by_id["abc-03"].touching_emitted] == [38]
    assert by_id["abc-04"].status == "unverified"
    assert [rec["line"] for rec in outside] == [60]
    summary = module.summarize(results)
    assert summary["recall"]["overall"] == [1, 3]
    assert summary["traps_kept"] == 0 and summary["traps_broken"] == ["abc-03"]
    assert summary["outcomes"] == {"emitted": 1, "rejected": 1, "unverified": 1}


def test_missing_rows_count_neither_as_hits_nor_misses() -> None:
    module = _devset()
    row = module.parse_row(_line(id="abc-01"), "m:2")
    gone = module.parse_row(_line(id="abc-02", path="pkg/gone.py"), "m:3")
    results, _ = module.map_records([row, gone], [], {"t/m.py": row.source_key})
    results[1].missing = "no snapshot (fetch github:owner/name)"
    summary = module.summarize(results)
    assert summary["missing_rows"] == 1
    assert summary["recall"]["overall"] == [0, 1]


def test_extract_reports_a_missing_snapshot_with_its_fetch(tmp_path: Path) -> None:
    module = _devset()
    row = module.parse_row(_line(repo="nobody/nothing"), "m:2")
    written, missing = module.extract([row], tmp_path / "snapshots", tmp_path / "tree")
    assert written == {}
    assert [m.remedy for m in missing] == ["fetch github:nobody/nothing"]
