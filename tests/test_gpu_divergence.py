"""benchmarks/gpu_divergence.py runs only where a GPU is lent, once in a while: this keeps it
working between such sessions. Without a GPU it takes each proposal's CPU pick as the pipeline
does and says that nothing was checked on CUDA (exit status 2)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_the_cpu_pick_is_the_rung_the_pipeline_emits(tmp_path, monkeypatch, capsys) -> None:  # noqa: ANN001
    # importable by name: its pool's spawned workers import it to run their share
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    script = importlib.import_module("gpu_divergence")
    if "cuda" in script.available_devices():
        pytest.skip("a GPU is present: the CUDA leg runs (benchmarks/device_check.sh covers it)")
    report = tmp_path / "picks.json"
    cases = [ROOT / "corpus" / "TFV002" / "tensor_from_items_scaled.py", ROOT / "corpus" / "TFV004" / "eval_accuracy.py"]
    status = script.main([*map(str, cases), "--jobs", "1", "--json", str(report)])
    assert status == 2 and "none checked on CUDA" in capsys.readouterr().out
    picks = json.loads(report.read_text())["picks"]
    # TFV002's rung is the one the CLI emits; TFV004's device accumulator is speed-gated, so a
    # run without measurement withholds it and there is no pick
    assert [(Path(p["path"]).name, p["rule"]) for p in picks] == [("tensor_from_items_scaled.py", "TFV002")]
    assert picks[0]["rung"].startswith("one .tolist(), rebuilt once")
