"""The classic wrong vectorizations of index loops, which the checker must refute, beside the
right ones, which it must verify (issue 13). Kernels are written out here, not proposed by a
rule: these are the mistakes a hand-written (or a future rule's) rewrite makes."""

from __future__ import annotations

import pytest

from torchfix.equivalence.checker import Checker, CheckSettings
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome

TORCH = (("torch", "torch"),)
NUMPY = (("np", "numpy"),)

_COUNT_LOOP = "hist = torch.zeros(k)\nfor i in range(len(idx)):\n    hist[idx[i]] += 1\n"
_COUNT_INPUTS = (
    InputSpec("idx", Kind.TENSOR, ranks=(1,), index=True, nonnegative=True),
    InputSpec("k", Kind.INT, count=True),
)
_CONFUSION_LOOP = "m = torch.zeros(c, c)\nfor i in range(len(t)):\n    m[t[i], p[i]] += 1\n"
_CONFUSION_INPUTS = (
    InputSpec("t", Kind.TENSOR, ranks=(1,), index=True, nonnegative=True),
    InputSpec("p", Kind.TENSOR, ranks=(1,), index=True, nonnegative=True),
    InputSpec("c", Kind.INT, count=True),
)
_NUMPY_ADD_LOOP = "for i in range(len(idx)):\n    out[idx[i]] += w[i]\n"
_NUMPY_ADD_INPUTS = (
    InputSpec("out", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float64",)),
    InputSpec("idx", kinds=(Kind.NDARRAY,), ranks=(1,), index=True),
    InputSpec("w", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float64",)),
)

#: (what it is, old, wrong new, right new, inputs, outputs, modules)
CASES = [
    ("bincount without minlength", _COUNT_LOOP, "hist = torch.zeros(k)\nhist += torch.bincount(idx)\n",
     "hist = torch.zeros(k)\nhist += torch.bincount(idx, minlength=k)\n", _COUNT_INPUTS, ("hist",), TORCH),
    ("flattened index with the wrong stride", _CONFUSION_LOOP,
     "m = torch.zeros(c, c)\nm += torch.bincount(t + p[:len(t)] * c, minlength=c * c).reshape(c, c)\n",
     "m = torch.zeros(c, c)\nm += torch.bincount(t * c + p[:len(t)], minlength=c * c).reshape(c, c)\n",
     _CONFUSION_INPUTS, ("m",), TORCH),
    ("np.add on a fancy index instead of np.add.at", _NUMPY_ADD_LOOP,
     "out[idx] = np.add(out[idx], w[:len(idx)])\n", "np.add.at(out, idx, w[:len(idx)])\n",
     _NUMPY_ADD_INPUTS, ("out",), NUMPY),
]


@pytest.fixture(scope="module")
def strict():
    # duplicates with non-zero weights at them are a small share of the examples: 200 find them
    with Checker(CheckSettings(examples=200, measure=False), cache_dir=None) as checker:
        yield checker


@pytest.mark.parametrize("what, old, wrong, right, inputs, outputs, modules", CASES, ids=[c[0] for c in CASES])
def test_the_wrong_form_is_refuted_and_the_right_one_verified(strict, what, old, wrong, right, inputs, outputs, modules):
    # the inputs are distinct arrays here (the aliasing sweep has tests of its own)
    refuted = strict.check(Kernel(old, wrong, inputs, outputs, modules=modules, may_alias=()))
    assert refuted.outcome is Outcome.REJECTED, f"{what}: {refuted.reason}"
    assert refuted.counterexample is not None and refuted.counterexample.witness
    verified = strict.check(Kernel(old, right, inputs, outputs, modules=modules, may_alias=()))
    assert verified.outcome is Outcome.VERIFIED, verified.counterexample.render() if verified.counterexample else verified.reason
