"""The hand-written optima (``corpus/<CODE>/<case>.optimum.py``) compute what their case computes.

They are the yardstick ``benchmarks/bench_corpus.py`` holds torchfix's rewrites against, so each
must give the original's results -- values, dtype, shape, Python type, and what it writes into its
arguments -- on the inputs the bench header describes, at a few sizes (empty included where the
original runs on it), and keep the original's handling of NaN and infinities in float inputs.
"""

from __future__ import annotations

import importlib.util
import math
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
OPTIMA = sorted(CORPUS.glob("TFV*/*.optimum.py"))
FIRST_LINE = re.compile(r"^# Hand-written optimum for (\w+\.py): \S.*$")


@lru_cache(maxsize=None)
def _bench():  # noqa: ANN202 - the benchmark module, loaded once from its file
    name = "_bench_corpus_under_test"
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / "bench_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@lru_cache(maxsize=None)
def _cases() -> dict[tuple[str, str], Any]:
    return {(case.rule, case.name): case for case in _bench().discover(None)}


def _case_of(path: Path) -> Any:
    return _cases().get((path.parent.name, path.name.removesuffix(".optimum.py")))


def _code(text: str) -> str:
    """The text without its leading comment lines (the scenario line and the bench header)."""
    lines = text.splitlines()
    while lines and lines[0].startswith("#"):
        lines.pop(0)
    return "\n".join(lines).strip()


def test_there_are_optima_across_the_rules() -> None:
    assert len(OPTIMA) >= 40
    assert {p.parent.name for p in OPTIMA} == {f"TFV00{k}" for k in range(1, 7)}


@pytest.mark.parametrize("path", OPTIMA, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_each_optimum_belongs_to_a_runnable_case_and_says_what_it_does(path: Path) -> None:
    case_file = path.with_name(path.name.replace(".optimum.py", ".py"))
    assert case_file.exists(), f"{path.name} has no case"
    match = FIRST_LINE.match(path.read_text().splitlines()[0])
    assert match and match.group(1) == case_file.name, "first line: '# Hand-written optimum for <case>.py: <what>'"
    # runnable: a bench header and an .expected.py that differs from the case (else nothing is timed)
    case = _case_of(path)
    assert case is not None, f"{case_file.name} is not a runnable bench case"
    assert case.optimum is not None
    expected = path.with_name(path.name.replace(".optimum.py", ".expected.py"))
    assert _code(path.read_text()) != _code(expected.read_text()), "the rewrite is the optimum: no file needed"


def _assert_same(best: Any, old: Any, where: str) -> None:
    assert type(best) is type(old), f"{where}: {type(best).__name__} instead of {type(old).__name__}"
    if isinstance(old, torch.Tensor):
        assert (best.dtype, best.shape, best.device) == (old.dtype, old.shape, old.device), where
        if old.is_floating_point() or old.is_complex():
            torch.testing.assert_close(best, old, equal_nan=True, msg=lambda m: f"{where}: {m}")
        else:
            assert torch.equal(best, old), where
    elif isinstance(old, np.ndarray):
        assert (best.dtype, best.shape) == (old.dtype, old.shape), where
        if np.issubdtype(old.dtype, np.inexact):
            np.testing.assert_allclose(best, old, rtol=1e-6, equal_nan=True, err_msg=where)
        else:
            np.testing.assert_array_equal(best, old, err_msg=where)
    elif isinstance(old, (list, tuple)):
        assert len(best) == len(old), where
        for k, (b, o) in enumerate(zip(best, old)):
            _assert_same(b, o, f"{where}[{k}]")
    elif isinstance(old, float):
        assert (math.isnan(best) and math.isnan(old)) or math.isclose(best, old, rel_tol=1e-9, abs_tol=1e-9), (
            f"{where}: {best!r} != {old!r}"
        )
    else:
        assert best == old, f"{where}: {best!r} != {old!r}"


def _special_values(value: Any, k: int) -> Any:
    """A float tensor with NaN, +inf and -inf at three spread-out positions, shifted by ``k`` (the
    argument's place) so that two inputs do not get them at the same places."""
    if not isinstance(value, torch.Tensor) or not value.is_floating_point() or value.numel() < 4:
        return value
    flat = value.reshape(-1)
    size = flat.numel()
    for j, special in enumerate((math.nan, math.inf, -math.inf), start=1):
        flat[(size * j // 4 + k) % size] = special
    return value


def _compare(path: Path, n: int, special: bool) -> None:
    bench, case = _bench(), _case_of(path)
    assert case is not None and case.optimum is not None
    generator = torch.Generator().manual_seed(n)
    inputs = {name: bench.make_input(spec, n, "cpu", generator) for name, spec in case.args}
    if special:
        inputs = {name: _special_values(value, k) for k, (name, value) in enumerate(inputs.items())}
    old_args = {k: bench._clone(v) for k, v in inputs.items()}
    best_args = {k: bench._clone(v) for k, v in inputs.items()}
    try:
        old = case.old(**old_args)
    except Exception:  # noqa: BLE001 - the original rejects this input: nothing to compare
        pytest.skip(f"the original does not run on this input (n={n})")
    best = case.optimum(**best_args)
    _assert_same(best, old, "result")
    for name in inputs:  # what the function writes into its arguments (TFV005's in-place updates)
        _assert_same(best_args[name], old_args[name], f"argument {name} after the call")


@pytest.mark.parametrize("n", [0, 1, 5, 33])
@pytest.mark.parametrize("path", OPTIMA, ids=lambda p: f"{p.parent.name}/{p.name.removesuffix('.optimum.py')}")
def test_the_optimum_computes_what_the_case_computes(path: Path, n: int) -> None:
    _compare(path, n, special=False)


@pytest.mark.parametrize("path", OPTIMA, ids=lambda p: f"{p.parent.name}/{p.name.removesuffix('.optimum.py')}")
def test_the_optimum_treats_nan_and_infinities_as_the_case_does(path: Path) -> None:
    case = _case_of(path)
    assert case is not None
    if not any(spec.startswith(("float", "bfloat")) and "[" in spec for _, spec in case.args):
        pytest.skip("no float tensor input")
    _compare(path, 33, special=True)
