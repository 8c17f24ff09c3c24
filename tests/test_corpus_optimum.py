"""The hand-written optima (``corpus/<CODE>/<case>.optimum.py``) compute what their case computes.

They are the yardstick ``benchmarks/bench_corpus.py`` holds torchfix's rewrites against, so each
must give the original's results -- values, dtype, shape, Python type -- on the inputs the bench
header describes, at a few sizes (empty included where the header allows it).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
OPTIMA = sorted((ROOT / "corpus").glob("TFV*/*.optimum.py"))


def _bench():  # noqa: ANN202 - the benchmark module, loaded from its file
    spec = importlib.util.spec_from_file_location("bench_corpus", ROOT / "benchmarks" / "bench_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_corpus"] = module
    spec.loader.exec_module(module)
    return module


def test_there_are_optima_and_each_belongs_to_a_case() -> None:
    assert len(OPTIMA) >= 4
    for path in OPTIMA:
        case = path.with_name(path.name.replace(".optimum.py", ".py"))
        assert case.exists(), f"{path.name} has no case"
        assert path.read_text().startswith(f"# Hand-written optimum for {case.name}")


@pytest.mark.parametrize("path", OPTIMA, ids=lambda p: f"{p.parent.name}/{p.name}")
@pytest.mark.parametrize("n", [0, 1, 5, 33])
def test_the_optimum_computes_what_the_case_computes(path: Path, n: int) -> None:
    bench = _bench()
    (case,) = [c for c in bench.discover([path.parent.name]) if c.name == path.name.replace(".optimum.py", "")]
    assert case.optimum is not None
    generator = torch.Generator().manual_seed(n)
    inputs = {name: bench.make_input(spec, n, "cpu", generator) for name, spec in case.args}
    try:
        old = case.old(**{k: bench._clone(v) for k, v in inputs.items()})
    except Exception:  # noqa: BLE001 - the original rejects this size: nothing to compare
        pytest.skip(f"the original does not run at n={n}")
    best = case.optimum(**{k: bench._clone(v) for k, v in inputs.items()})
    assert type(best) is type(old)
    if isinstance(old, torch.Tensor):
        assert (best.dtype, best.shape) == (old.dtype, old.shape)
        if old.is_floating_point():
            torch.testing.assert_close(best, old, equal_nan=True)
        else:
            assert torch.equal(best, old)
    else:
        assert best == pytest.approx(old, nan_ok=True)
