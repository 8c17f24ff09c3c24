"""TFV007: corpus cases (before -> after, traps unchanged), the rule's own examples, the checker's
refutations of scans that look right and are not, and the dead-index proof that lets the loop
go when its index is rebound right after it."""

from __future__ import annotations

import dataclasses
import textwrap

import libcst as cst
import pytest
from conftest import corpus_cases
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, propose

from torchfix.codemods.analysis import loop_variable_used_outside, parent_map
from torchfix.codemods.tfv007_running_scan import RunningScan
from torchfix.equivalence.kernel import InputSpec, Kind, Outcome

CASES = corpus_cases("TFV007")


def _proposals(source: str):
    return propose(RunningScan, textwrap.dedent(source))


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 7 and len(traps) >= 8
    for case in positives:
        assert case.with_name(case.stem + ".expected.py").exists(), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [RunningScan], checker)


@pytest.mark.parametrize("example", RunningScan.examples, ids=[e.id for e in RunningScan.examples])
def test_rule_examples(example, checker):
    assert_rule_example(example, [RunningScan], checker)


def test_docs_have_the_ruff_sections():
    assert_ruff_sections(RunningScan)


ENVELOPE = """
import numpy as np
def envelope(precision):
    mpre = np.concatenate(([0.0], precision, [0.0]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
    return mpre
"""


def _kernel(source: str = ENVELOPE):
    (proposal,) = _proposals(source)
    assert proposal.skip_reason is None, proposal.skip_reason
    (candidate,) = proposal.candidates
    return candidate.kernel


def _assert_refuted(checker, kernel) -> None:
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED, verdict.reason
    assert verdict.counterexample is not None


def test_the_rule_s_own_envelope_is_verified(checker):
    kernel = _kernel()
    assert kernel.new.strip() == "mpre[:] = np.maximum.accumulate(mpre[::-1])[::-1]"
    assert checker.check(kernel).outcome is Outcome.VERIFIED


def test_a_scan_in_the_wrong_direction_is_refuted(checker):
    """The loop walks from the end: a forward accumulate differs as soon as two elements do."""
    _assert_refuted(checker, dataclasses.replace(_kernel(), new="mpre[:] = np.maximum.accumulate(mpre)\n"))


def test_a_scan_of_the_original_values_only_is_refuted(checker):
    """`np.maximum(mpre[:-1], mpre[1:])` is what the loop would do if no step saw an earlier write."""
    wrong = "mpre[:-1] = np.maximum(mpre[:-1], mpre[1:])\n"
    _assert_refuted(checker, dataclasses.replace(_kernel(), new=wrong))


def test_python_max_is_not_a_scan_on_nan(checker):
    """The trap's reason, checked: builtin `max` keeps its first argument against NaN."""
    kernel = dataclasses.replace(
        _kernel(),
        old="for i in range(1, len(x)):\n    x[i] = max(x[i], x[i - 1])\n",
        new="x[:] = np.maximum.accumulate(x)\n",
        inputs=(InputSpec("x", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float32", "float64")),),
    )
    _assert_refuted(checker, kernel)


def test_a_zero_dimensional_array_refutes_the_scan_where_nothing_shows_dimensions(checker):
    """`x.size` is 1 for a 0-d array: the loop does nothing, `x[::-1]` raises. The rule only
    drops rank 0 where the function binds the array to a result that has dimensions."""
    unbound = ENVELOPE.replace("def envelope(precision):\n    mpre = np.concatenate(([0.0], precision, [0.0]))\n",
                               "def envelope(mpre: np.ndarray):\n")
    kernel = _kernel(unbound)
    assert kernel.inputs[0].ranks == (0, 1, 2, 3)
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED
    assert "rank 0" in verdict.reason or "float64" in verdict.reason, verdict.reason
    assert _kernel().inputs[0].ranks == (1, 2, 3) and _kernel().inputs[0].kinds == (Kind.NDARRAY,)


def test_a_reverse_sum_needs_its_flips(checker):
    source = """
    import torch
    def suffix(x: torch.Tensor) -> torch.Tensor:
        for i in range(len(x) - 2, -1, -1):
            x[i] += x[i + 1]
        return x
    """
    kernel = _kernel(source)
    assert kernel.new.strip() == "x[:] = x.flip(0).cumsum(0).flip(0)"
    assert checker.check(kernel).outcome is Outcome.VERIFIED
    _assert_refuted(checker, dataclasses.replace(kernel, new="x[:] = x.cumsum(0)\n"))


@pytest.mark.parametrize(
    "loop",
    [
        "for i in range(1, len(x)):\n        x[i] = np.maximum(x[i], x[i + 1])",  # not the previous step's element
        "for i in range(len(x) - 1, 0, -1):\n        x[i] = np.maximum(x[i], x[i - 1])",  # reads unwritten elements
        "for i in range(1, len(x), 2):\n        x[i] = np.maximum(x[i], x[i - 1])",  # every other element
        "for i in range(1, len(y)):\n        x[i] = np.maximum(x[i], x[i - 1])",  # another array's length
        "for i in range(0, len(x)):\n        x[i] = np.maximum(x[i], x[i - 1])",  # x[-1] at the first step
        "for i in range(1, len(x)):\n        x[i] = np.maximum(x[i], x[i - 1], out=x[i])",
        "for i in range(1, len(x)):\n        x[i] = np.maximum(x[i], x[i - 1])\n        print(i)",
        "for i in range(1, len(x)):\n        x[i] -= x[i - 1]",  # not associative
    ],
)
def test_shapes_that_are_not_a_whole_scan_are_not_matched(loop):
    source = f"import numpy as np\ndef f(x: np.ndarray, y: np.ndarray):\n    {loop}\n    return x\n"
    assert _proposals(source) == []


def _loop_and_scope(source: str):
    module = cst.parse_module(textwrap.dedent(source))
    function = module.body[0]
    loop = next(s for s in function.body.body if isinstance(s, cst.For))
    return loop, function, parent_map(module)


@pytest.mark.parametrize(
    "after, used",
    [
        ("i = 0\n    return i", False),  # rebound before any read
        ("y = 1\n    i = y\n    return i", False),  # statements in between that do not name it
        ("i = i + 1\n    return i", True),  # the rebinding reads the loop's value
        ("return i", True),
        ("if x:\n        i = 0\n    return i", True),  # rebound on one path only
        ("print(locals())\n    i = 0\n    return i", True),  # read without its name
        ("a, i = 0, 1\n    return i", True),  # a tuple target: not the simple form the proof takes
    ],
)
def test_the_index_is_dead_only_when_rebound_first(after, used):
    source = f"def f(x):\n    for i in range(3):\n        x[i] = 0\n    {after}\n"
    loop, scope, parents = _loop_and_scope(source)
    assert loop_variable_used_outside("i", loop, scope, parents) is used


def test_a_closure_or_an_outer_loop_keeps_the_index_alive():
    closure = "def f(x):\n    g = lambda: i\n    for i in range(3):\n        x[i] = 0\n    g()\n    i = 0\n    return i\n"
    loop, scope, parents = _loop_and_scope(closure)
    assert loop_variable_used_outside("i", loop, scope, parents)
    outer = "def f(x):\n    while x:\n        print(i)\n        for i in range(3):\n            x[i] = 0\n        i = 0\n"
    module = cst.parse_module(outer)
    scope = module.body[0]
    loop = scope.body.body[0].body.body[1]
    assert isinstance(loop, cst.For)
    assert loop_variable_used_outside("i", loop, scope, parent_map(module))
