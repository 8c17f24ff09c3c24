"""The checker on its own: ``python -m torchfix.equivalence``, gradients, witnesses, replay, cache, dtypes.

The persistent verdict cache is off by default under pytest (PYTEST_CURRENT_TEST is set; see
equivalence.cache); the tests that exercise it pass a tmp directory explicitly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from torchfix.equivalence.checker import Checker, CheckSettings
from torchfix.equivalence.engine import EngineSettings, check_kernel
from torchfix.equivalence.functions import UsageError, kernel_from_functions
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome
from torchfix.equivalence.values import decode_inputs, encode_inputs

ROOT = Path(__file__).resolve().parent.parent

OLD = '''
import torch
from typing import Optional

def rowsum(x: torch.Tensor, w):
    out = torch.zeros(x.shape[0], dtype=x.dtype)
    for i in range(x.shape[0]):
        out[i] = (x[i] * w).sum()
    return out

def double(x: torch.Tensor):
    return x * 2

def scale(x: torch.Tensor, k: int):
    return [float(v) * k for v in x]
'''

NEW = '''
import torch

def rowsum(x: torch.Tensor, w):
    return (x * w).sum(dim=1)

def double(x: torch.Tensor):
    return (x * 2).detach()

def double_ok(x: torch.Tensor):
    return x + x

def scale(x: torch.Tensor, k: int):
    return [float(v) * k for v in x[1:]]
'''


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, TORCHFIX_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))
    env.pop("PYTEST_CURRENT_TEST", None)
    return subprocess.run(
        [sys.executable, "-m", "torchfix.equivalence", *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300
    )


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "old.py").write_text(OLD)
    (tmp_path / "new.py").write_text(NEW)
    return tmp_path


def test_cli_refutes_with_a_replayable_witness(files):
    proc = run_cli(files, "old.py:scale", "new.py:scale", "--examples", "30", "--device", "cpu")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    assert "verdict: REFUTED" in out and "seed: 0" in out and "device: cpu" in out
    assert "shape [1]" in out and "float32" in out or "float64" in out
    replay_line = next(line for line in out.splitlines() if line.startswith("replay: "))
    witness = Path(replay_line.split("--replay ")[1].strip())
    data = json.loads(witness.read_text())
    assert data["device"] == "cpu" and set(data["inputs"]) == {"x", "k"}
    again = run_cli(files, "old.py:scale", "new.py:scale", "--replay", str(witness))
    assert again.returncode == 1 and "(replayed)" in again.stdout
    # the differing position and the errors are shown
    assert "result differs" in out and "length: old" in out


def test_cli_equivalent_and_gradient_killing_detach(files):
    ok = run_cli(files, "old.py:double", "new.py:double_ok", "--examples", "30", "--device", "cpu")
    # x * 2 on a bool tensor is int64, x + x stays bool: a real difference
    assert ok.returncode == 1 and "dtype: old torch.int64, new torch.bool" in ok.stdout
    detach = run_cli(files, "old.py:double", "new.py:double", "--examples", "30", "--device", "cpu")
    assert detach.returncode == 1 and "cuts the gradient" in detach.stdout
    same = run_cli(files, "old.py:rowsum", "old.py:rowsum", "--examples", "20", "--device", "cpu")
    assert same.returncode == 0, same.stdout
    assert "verdict: EQUIVALENT" in same.stdout and "dtypes covered:" in same.stdout and "devices: cpu" in same.stdout


def test_cli_usage_errors_and_inconclusive(files, tmp_path):
    assert run_cli(files, "old.py:nope", "new.py:double").returncode == 2
    assert run_cli(files, "missing.py:f", "new.py:double").returncode == 2
    assert run_cli(files, "old.py", "new.py:double").returncode == 2
    assert run_cli(files, "old.py:double", "new.py:rowsum").returncode == 2  # parameters differ
    (tmp_path / "evil.py").write_text("import os\ndef f(x):\n    os.remove('victim')\n    return x\n")
    (tmp_path / "victim").write_text("keep")
    proc = run_cli(files, "evil.py:f", "evil.py:f", "--examples", "10", "--device", "cpu")
    assert proc.returncode == 3 and "imports `os`" in proc.stdout
    assert (tmp_path / "victim").read_text() == "keep"


def test_user_code_is_never_run_in_the_parent(tmp_path):
    """Building the kernel only parses: a module with side effects at import does nothing here."""
    marker = tmp_path / "ran"
    source = f"open({str(marker)!r}, 'w').write('x')\ndef f(x):\n    return x\n"
    kernel = kernel_from_functions(source, "f", source, "f")
    assert not marker.exists()
    assert kernel.gradients and [s.kind for s in kernel.inputs] == [Kind.ANY]
    with pytest.raises(UsageError):
        kernel_from_functions("def f(*a):\n    return a\n", "f", "def f(*a):\n    return a\n", "f")


def test_annotations_pick_kinds():
    src = "import torch\ndef f(a: int, b: float, c: bool, d: torch.Tensor, e, *, g: 'torch.Tensor'):\n    return a\n"
    kernel = kernel_from_functions(src, "f", src, "f")
    assert [s.kind for s in kernel.inputs] == [Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.TENSOR, Kind.ANY, Kind.TENSOR]
    src = "import numpy as np\ndef f(a: np.ndarray, b: 'numpy.ndarray'):\n    return a\n"
    assert [s.kind for s in kernel_from_functions(src, "f", src, "f").inputs] == [Kind.NDARRAY, Kind.NDARRAY]


IMAGES_OLD = """
import torch

def f(x):
    n, c, h, w = x.shape
    out = torch.zeros(n, c)
    for i in range(n):
        out[i] = x[i].sum(dim=(1, 2))
    return out
"""


def test_ranks_the_function_shows_a_parameter_needs_are_drawn(tmp_path):
    """Image code unpacks four sizes or indexes four dimensions: the checker draws that rank too
    (it drew ranks 0-3 only, and found no input on which such code runs), and still refutes a
    rewrite that reduces the wrong dimensions."""
    from torchfix.equivalence.functions import find_function, rank_hints

    hints = rank_hints(find_function("def f(x, y, z):\n    a, b, c, d, e = y.size()\n    return x[:, :, :, 0] + z[0, None, ..., 1]\n", "f", "t"))
    assert hints == {"x": (4,), "y": (5,)}  # (`None` adds an axis and `...` says nothing: none for z)
    (tmp_path / "old.py").write_text(IMAGES_OLD)
    (tmp_path / "new.py").write_text(IMAGES_OLD.replace(
        "    for i in range(n):\n        out[i] = x[i].sum(dim=(1, 2))\n", "    out[:] = x.sum(dim=(2, 3))\n"))
    (tmp_path / "bad.py").write_text(IMAGES_OLD.replace(
        "    for i in range(n):\n        out[i] = x[i].sum(dim=(1, 2))\n", "    out[:] = x.sum(dim=(1, 3))\n"))
    right = run_cli(tmp_path, "old.py:f", "new.py:f", "--examples", "30", "--device", "cpu", "--no-cache")
    assert right.returncode == 0, right.stdout
    wrong = run_cli(tmp_path, "old.py:f", "bad.py:f", "--examples", "30", "--device", "cpu", "--no-cache")
    assert wrong.returncode == 1, wrong.stdout


# ----------------------------------------------------------------------------- gradients

GRAD_SPECS = (InputSpec("x", ranks=(1, 2), dtypes=("float32", "float64")),)


def test_gradient_difference_is_refuted_when_requested(checker):
    kernel = Kernel("y = x * 3\n", "y = x.detach() * 2 + x\n", GRAD_SPECS, ("y",), gradients=True)
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED and "gradient w.r.t. x" in verdict.counterexample.where
    # without the gradient leg the values agree
    assert checker.check(Kernel(kernel.old, kernel.new, GRAD_SPECS, ("y",))).outcome is Outcome.VERIFIED


def test_equal_gradients_are_verified_and_noted(checker):
    kernel = Kernel("y = (x * x).sum(-1)\n", "y = torch.einsum('...i,...i->...', x, x)\n", GRAD_SPECS, ("y",),
                    gradients=True, reorders_float_reduction=True)
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.VERIFIED, verdict
    assert any(n.startswith("gradients compared on") for n in verdict.notes)
    assert any("tolerance widened" in n for n in verdict.notes)


def test_a_nans_gradient_is_compared_like_any_other(checker):
    # `.max()` gives a NaN's gradient to the NaN elements, `amax` to every element: a NaN in a
    # batch's data would poison gradients the loop kept apart -- refuted
    spec = (InputSpec("x", ranks=(1,), dtypes=("float32", "float64")),)
    kernel = Kernel("y = x.max()\n", "y = x.amax(0)\n", spec, ("y",), gradients=True)
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED and "gradient" in verdict.counterexample.where


def test_one_results_infinite_gradient_does_not_hide_anothers(checker):
    # masked with -inf, an all -inf row ties with what the mask leaves out and splits its
    # gradient; the second result's gradient at -inf (`exp` then `log`) is NaN, which summed
    # with the first's would hide the difference: each result is compared on its own
    spec = (InputSpec("x", ranks=(2,), dtypes=("float32",)), InputSpec("keep", ranks=(2,), dtypes=("bool",)))
    old = (
        "a, b = [], []\n"
        "for i in range(len(x)):\n"
        "    a.append(x[i][keep[i]].max().unsqueeze(0))\n"
        "    b.append(x[i].exp().log().sum().unsqueeze(0))\n"
        "a, b = torch.cat(a), torch.cat(b)\n"
    )
    new = 'a = x.masked_fill(~keep[:len(x)], float("-inf")).amax(1)\nb = x.exp().log().sum(1)\n'
    verdict = checker.check(Kernel(old, new, spec, ("a", "b"), gradients=True, reorders_float_reduction=True))
    assert verdict.outcome is Outcome.REJECTED and "output 1 of 2" in verdict.counterexample.where


def test_a_loop_that_ran_no_step_on_the_inputs_it_accepts_proves_nothing(checker):
    # `range(len(x) - 6)` runs no step on the sizes the checker draws: every input agrees, and
    # the rewrite (twice the sum) was never compared where it differs
    spec = (InputSpec("x", ranks=(1,), dtypes=("float32",)), InputSpec("y", Kind.FLOAT))
    old = "for i in range(len(x) - 6):\n    y = y + float(x[i])\n"
    wrong = "y = y + float(x[:max(len(x) - 6, 0)].sum() * 2)\n"
    verdict = checker.check(Kernel(old, wrong, spec, ("y",)))
    assert verdict.outcome is Outcome.UNVERIFIED and "loop at line 1 ran on 0 of the" in verdict.reason
    # a loop that runs is compared as before
    assert checker.check(Kernel(old.replace(" - 6", ""), "y = y + float(x.sum() * 2)\n", spec, ("y",))).outcome is Outcome.REJECTED
    # every loop counts on its own: one that always runs beside it proves nothing of it
    sizes = "dims = [d for d in x.shape]\n"
    verdict = checker.check(Kernel(sizes + old, sizes + wrong, spec, ("y", "dims")))
    assert verdict.outcome is Outcome.UNVERIFIED and "loop at line 2" in verdict.reason
    # and every branch: a step that reaches the sum only behind a test no input passes
    rare = "for i in range(len(x)):\n    if i >= len(x) + 6:\n        y = y + float(x[i])\n"
    verdict = checker.check(Kernel(rare, "y = y + float(x[len(x) + 6:].sum() * 2)\n", spec, ("y",)))
    assert verdict.outcome is Outcome.UNVERIFIED and "branch at line 3 ran on 0 of the" in verdict.reason


def test_counting_steps_changes_nothing_but_the_count():
    from torchfix.equivalence.engine import counting_steps
    from torchfix.equivalence.execute import STEPS

    source = (
        "def unused(v):\n    return [w for w in v]\n"
        "out = []\nfor i in range(n):\n    k = 0\n    while k < i:\n        k += 1\n    out.append(k)\n"
        "ys = [j * 2 for j in range(m) if j]\n"
    )
    code, places = counting_steps(source, "<old>")
    # (the loop of a function the code defines runs when it is called)
    assert places == ["loop at line 4", "loop at line 6", "loop at line 9"]
    for n, m, steps in ((0, 0, []), (3, 0, [0, 0, 1, 0, 1, 1]), (0, 4, [2, 2, 2])):
        counted, plain = {STEPS: [], "n": n, "m": m}, {"n": n, "m": m}
        exec(code, counted)
        exec(compile(source, "<old>", "exec"), plain)
        assert (counted["out"], counted["ys"]) == (plain["out"], plain["ys"])
        assert counted[STEPS] == steps  # (`if j` drops 0: three steps of four elements)


def test_item_code_is_not_differentiable_and_passes(checker):
    kernel = Kernel("y = 0.0\nfor v in x.reshape(-1):\n    y += v.item()\n", "y = x.double().sum().item()\n",
                    GRAD_SPECS, ("y",), gradients=True, reorders_float_reduction=True)
    assert checker.check(kernel).outcome is Outcome.VERIFIED


# ----------------------------------------------------------------------------- dtypes, tolerance


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_inputs_are_generated(dtype, checker):
    spec = (InputSpec("x", ranks=(1,), dtypes=(dtype,)),)
    good = Kernel("y = 0.0\nfor v in x:\n    y += v.item()\n", "y = x.double().sum().item()\n", spec, ("y",),
                  reorders_float_reduction=True)
    verdict = checker.check(good)
    assert verdict.outcome is Outcome.VERIFIED and any(dtype in s for s in verdict.signatures)
    bad = Kernel("y = x * 2\n", "y = (x.float() * 2)\n", spec, ("y",))
    assert checker.check(bad).outcome is Outcome.REJECTED


def test_tolerance_is_widened_only_for_reordered_reductions():
    from torchfix.equivalence.compare import Tolerance, compare

    a, b = torch.tensor([1000.0]), torch.tensor([1000.01])
    assert compare(a, b, "y", Tolerance()) is not None
    wide = Tolerance(True, 100, 1e4)
    assert compare(a, b, "y", wide) is None and wide.events
    # a partial sum that may overflow float16 in one order only: non-finite positions are skipped
    h_old, h_new = torch.tensor([float("inf"), 1.0], dtype=torch.float16), torch.tensor([60000.0, 1.0], dtype=torch.float16)
    assert compare(h_old, h_new, "y", Tolerance(True, 3, 1e5)) is None
    assert compare(h_old, h_new, "y", Tolerance(True, 3, 10.0)) is not None
    # NaN positions must match otherwise
    assert compare(torch.tensor([float("nan")]), torch.tensor([0.0]), "y", Tolerance(True, 3, 10.0)) is not None


def test_deterministic_rerun_path_runs_on_cpu_when_forced():
    kernel = Kernel(
        "for i in range(len(idx)):\n    out[idx[i]] += 1\n",
        "out.index_put_((idx.long(),), torch.ones_like(idx, dtype=out.dtype), accumulate=True)\n",
        (InputSpec("out", dtypes=("int64",), ranks=(1,)), InputSpec("idx", index=True, ranks=(1,))),
        (),
        may_alias=(),  # `idx` given as `out` too would be another test
    )
    verdict = check_kernel(kernel, EngineSettings(examples=30, deterministic=True))
    assert verdict.outcome is Outcome.VERIFIED, verdict
    assert any("use_deterministic_algorithms" in n for n in verdict.notes)


def test_witness_round_trip_is_bit_exact():
    values = {
        "x": torch.tensor([float("nan"), -0.0, float("inf"), 1e-45, 3.4e38], dtype=torch.float32),
        "h": torch.tensor([65504.0, -0.0], dtype=torch.float16),
        "b": torch.tensor([1.5], dtype=torch.bfloat16),
        "i": torch.tensor([[2**40, -1]]),
        "m": torch.tensor([True, False]),
        "n": -3, "f": float("-inf"), "flag": True,
        "steps": [torch.tensor([1.0]), torch.tensor([2.0])],
    }
    back = decode_inputs(encode_inputs(values, device="cpu"))
    for name, value in values.items():
        got = back[name]
        if isinstance(value, torch.Tensor):
            assert got.dtype == value.dtype and got.shape == value.shape
            assert torch.equal(got.view(-1).float().nan_to_num(7.0).signbit(), value.view(-1).float().nan_to_num(7.0).signbit())
            assert torch.equal(got.nan_to_num(7.0), value.nan_to_num(7.0))
        elif isinstance(value, list):
            assert all(torch.equal(a, b) for a, b in zip(got, value))
        else:
            assert type(got) is type(value) and got == value


def test_replay_through_the_checker(checker):
    kernel = Kernel("y = x.sum()\n", "y = x[1:].sum()\n", (InputSpec("x", ranks=(1,), dtypes=("float64",)),), ("y",))
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED and verdict.counterexample.witness
    again = checker.replay(kernel, verdict.counterexample.witness)
    assert again.outcome is Outcome.REJECTED and again.counterexample.where == verdict.counterexample.where
    assert checker.replay(Kernel(kernel.old, kernel.old, kernel.inputs, kernel.outputs), verdict.counterexample.witness).ok


# ----------------------------------------------------------------------------- cache


def test_persistent_cache_makes_a_rerun_cost_no_checks(tmp_path):
    kernel = Kernel("y = x * 2\n", "y = x + x\n", (InputSpec("x", ranks=(1,), dtypes=("float32",)),), ("y",))
    bad = Kernel("y = x * 2\n", "y = x * 3\n", kernel.inputs, ("y",))
    settings = CheckSettings(examples=20)
    with Checker(settings, cache_dir=tmp_path) as first:
        v1, b1 = first.check(kernel), first.check(bad)
        assert first.checks_run == 2
    with Checker(settings, cache_dir=tmp_path) as second:
        v2, b2 = second.check(kernel), second.check(bad)
        assert second.checks_run == 0 and second._process is None  # not even a worker started
    assert (v1.outcome, v1.examples, v1.signatures) == (v2.outcome, v2.examples, v2.signatures)
    assert b2.outcome is Outcome.REJECTED and b2.counterexample == b1.counterexample
    with Checker(CheckSettings(examples=21), cache_dir=tmp_path) as other:
        other.check(kernel)
        assert other.checks_run == 1  # settings are part of the key


def test_cache_defaults(monkeypatch, tmp_path):
    from torchfix.equivalence.cache import default_cache_dir

    monkeypatch.delenv("TORCHFIX_NO_CACHE", raising=False)
    monkeypatch.delenv("TORCHFIX_CACHE_DIR", raising=False)
    assert os.environ.get("PYTEST_CURRENT_TEST") and default_cache_dir() is None
    monkeypatch.setenv("TORCHFIX_CACHE_DIR", str(tmp_path))
    assert default_cache_dir() == tmp_path
    monkeypatch.setenv("TORCHFIX_NO_CACHE", "1")
    assert default_cache_dir() is None
    monkeypatch.delenv("TORCHFIX_NO_CACHE")
    monkeypatch.delenv("TORCHFIX_CACHE_DIR")
    monkeypatch.delenv("PYTEST_CURRENT_TEST")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_dir() == tmp_path / "torchfix"


# ----------------------------------------------------------------------------- CUDA


@pytest.mark.cuda
def test_cuda_leg_refutes_and_verifies_on_both_devices():
    spec = (InputSpec("x", ranks=(1, 2), dtypes=("float32",)),)
    with Checker(CheckSettings(examples=30, devices=("cpu", "cuda")), cache_dir=None) as checker:
        good = checker.check(Kernel("y = x * 2\n", "y = x + x\n", spec, ("y",), gradients=True))
        assert good.outcome is Outcome.VERIFIED and good.devices == ("cpu", "cuda")
        moved = checker.check(Kernel("y = x * 2\n", "y = (x * 2).cpu()\n", spec, ("y",)))
        assert moved.outcome is Outcome.REJECTED and moved.counterexample.device == "cuda"
        assert "device" in moved.counterexample.detail


@pytest.mark.cuda
def test_cuda_integer_scatter_under_deterministic_algorithms():
    kernel = Kernel(
        "for i in range(len(idx)):\n    out[idx[i]] += 1\n",
        "out.index_put_((idx.long(),), torch.ones_like(idx, dtype=out.dtype), accumulate=True)\n",
        (InputSpec("out", dtypes=("int64",), ranks=(1,)), InputSpec("idx", index=True, ranks=(1,))),
        (),
        # `idx` given as `out` too makes the loop read counts it wrote, a true difference (TFV006
        # says which names may be one array); this test is about the GPU's scatter alone
        may_alias=(),
    )
    with Checker(CheckSettings(examples=30, devices=("cpu", "cuda")), cache_dir=None) as checker:
        verdict = checker.check(kernel)
        assert verdict.outcome is Outcome.VERIFIED, verdict
        assert any("use_deterministic_algorithms" in n for n in verdict.notes)


@pytest.mark.cuda
def test_cli_defaults_to_every_available_device(files):
    proc = run_cli(files, "old.py:rowsum", "old.py:rowsum", "--examples", "10")
    assert proc.returncode == 0 and "devices: cpu, cuda" in proc.stdout
