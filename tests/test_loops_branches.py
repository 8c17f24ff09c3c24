"""``if``/``elif``/``else`` in a loop body as conditional expressions (``facts.branch_as_expressions``),
lifted to ``where``; and loop counts that are sizes, drawn never negative."""

from __future__ import annotations

import textwrap
from pathlib import Path
from dataclasses import replace

import libcst as cst
import pytest
from hypothesis import given, settings, strategies as st

from rewrite_helper import loop_candidates
from torchfix.codemods.analysis import skippable_parts, without_skippable_parts
from torchfix.codemods.loops.facts import branch_as_expressions
from torchfix.codemods.loops.nodes import code_of
from torchfix.equivalence.kernel import InputSpec, Kind
from torchfix.equivalence.values import scalar_strategy, Slot


def _lines(source: str) -> list[str] | None:
    statement = cst.parse_module(textwrap.dedent(source)).body[0]
    lines = branch_as_expressions(statement)
    return None if lines is None else [code_of(line).strip() for line in lines]


def test_one_target_becomes_one_conditional() -> None:
    assert _lines("""
        if x[i] > 0:
            y = x[i] * 2
        else:
            y = 1.0
        """) == ["y = x[i] * 2 if x[i] > 0 else 1.0"]


def test_an_elif_chain_nests_to_the_right() -> None:
    assert _lines("""
        if a > 0:
            out[i] = 1
        elif a < -1:
            out[i] = a
        else:
            out[i] = 0
        """) == ["out[i] = 1 if a > 0 else a if a < -1 else 0"]


def test_accumulations_keep_their_operator() -> None:
    assert _lines("""
        if a > 0:
            total += a
            n = n + 1
        else:
            total += -a
            n = n + 2
        """) == ["total += a if a > 0 else -a", "n = n + (1 if a > 0 else 2)"]


def test_loose_values_are_parenthesised() -> None:
    assert _lines("""
        if c:
            f = lambda v: v
        else:
            f = 1, 2
        """) == ["f = (lambda v: v) if c else (1, 2)"]


@pytest.mark.parametrize(
    "source",
    [
        # no else: a sample that takes no branch keeps the previous sample's value
        "if c:\n    y = 1\n",
        # other targets, or the same ones in another order
        "if c:\n    y = 1\nelse:\n    z = 1\n",
        "if c:\n    y = 1\n    z = 2\nelse:\n    z = 2\n    y = 1\n",
        # another operator on the same target
        "if c:\n    t += 1\nelse:\n    t -= 1\n",
        # a store next to a binding of the same name
        "if c:\n    y = 1\nelse:\n    y += 1\n",
        # a test reading a name a branch binds is asked again after the first line
        "if y > 0:\n    y = 1\n    z = y\nelse:\n    y = 2\n    z = y\n",
        "if c:\n    y = 1\nelif y:\n    y = 2\nelse:\n    y = 3\n",
        # a test reading the array a branch writes, with more lines after the write
        "if out[i] > 0:\n    out[i] = 1\n    k = 1\nelse:\n    out[i] = 2\n    k = 2\n",
        # a store into something other than a named array: the tests are not checked against it
        "if a.b[0] > 0:\n    a.b[i] += 1\n    k = 1\nelse:\n    a.b[i] += 2\n    k = 2\n",
        "if x[0][0] > 0:\n    x[i][j] += 1\n    k = 1\nelse:\n    x[i][j] += 2\n    k = 2\n",
        # anything but single bindings
        "if c:\n    y = 1; z = 2\nelse:\n    y = 1; z = 2\n",
        "if c:\n    f(y)\nelse:\n    f(z)\n",
        "if c:\n    y = z = 1\nelse:\n    y = z = 2\n",
        "if c:\n    a.b = 1\nelse:\n    a.b = 2\n",
        "if c:\n    continue\nelse:\n    y = 1\n",
        "if c:\n    y = 1\nelse:\n    if d:\n        y = 2\n",
        "if c:\n    y: int = 1\nelse:\n    y: int = 2\n",
    ],
)
def test_other_branches_stay_branches(source: str) -> None:
    assert _lines(source) is None


#: statements whose branches read what earlier (and later) lines of the same branch bind
_ORDERED = [
    "if a > b:\n    p = a - b\n    q = p * 2\nelse:\n    p = b - a\n    q = p + a\n",
    "if a > b:\n    q = p + 1\n    p = a\nelse:\n    q = p - 1\n    p = b\n",
    "if a % 3 == 0:\n    out[0] = a\n    t += out[0]\nelif a % 3 == 1:\n    out[0] = b\n    t += a\nelse:\n    out[0] = -b\n    t += b\n",
    "if a:\n    t = 2 * t + a\n    p = t\nelse:\n    t = b - t\n    p = -t\n",
]


@settings(max_examples=60, deadline=None)
@given(a=st.integers(-5, 5), b=st.integers(-5, 5), p=st.integers(-5, 5), t=st.integers(-5, 5))
@pytest.mark.parametrize("source", _ORDERED)
def test_the_lines_run_what_the_statement_ran(source: str, a: int, b: int, p: int, t: int) -> None:
    lines = _lines(source)
    assert lines is not None
    before = {"a": a, "b": b, "p": p, "q": 0, "t": t}
    old, new = {**before, "out": [0]}, {**before, "out": [0]}
    exec(source, {}, old)  # noqa: S102 - our own statements
    exec("\n".join(lines), {}, new)  # noqa: S102
    assert old == new


#: the corpus case's loop (an elif chain into a weight per score)
_PIECEWISE = (Path(__file__).parent.parent / "corpus" / "TFV001" / "numpy_branch_piecewise_weights.py").read_text()


def test_an_elif_chain_lifts_to_nested_where(checker) -> None:  # noqa: ANN001
    found, failure = loop_candidates(_PIECEWISE)
    assert found, failure
    kernel = found[0].kernel
    assert "np.where(scores > 0.5, scores * 2.0, np.where(scores > 0.0, scores + 0.25, 1.0 - scores))" in kernel.new
    assert checker.check(kernel).outcome.value == "verified"


@pytest.mark.parametrize(
    "wrong",
    [
        # the branches swapped
        "np.where(scores > 0.5, np.where(scores > 0.0, scores + 0.25, 1.0 - scores), scores * 2.0)",
        # the elif's test asked first
        "np.where(scores > 0.0, scores + 0.25, np.where(scores > 0.5, scores * 2.0, 1.0 - scores))",
        # the else branch dropped
        "np.where(scores > 0.5, scores * 2.0, scores + 0.25)",
        # a boundary moved
        "np.where(scores >= 0.5, scores * 2.0, np.where(scores > 0.0, scores + 0.25, 1.0 - scores))",
    ],
)
def test_wrong_branch_forms_are_refuted(checker, wrong: str) -> None:  # noqa: ANN001
    found, failure = loop_candidates(_PIECEWISE)
    assert found, failure
    kernel = found[0].kernel
    right = "np.where(scores > 0.5, scores * 2.0, np.where(scores > 0.0, scores + 0.25, 1.0 - scores))"
    assert checker.check(replace(kernel, new=kernel.new.replace(right, wrong))).outcome.value == "rejected"


_TRAPEZOID = """
    import numpy as np

    def trapezoid(hits):
        ranks = np.flatnonzero(np.asarray(hits))
        count = len(ranks)
        ap = 0.0
        for k in range(count):
            step = 1.0 / count
            precision = (k + 1) / (ranks[k] + 1)
            if ranks[k] != 0:
                previous = k / ranks[k]
            else:
                previous = 1.0
            ap = ap + step * (previous + precision) / 2
        return ap
    """


def _verified_trapezoid(checker):  # noqa: ANN001, ANN202
    """The first candidate of the trapezoid loop the checker verifies."""
    found, failure = loop_candidates(_TRAPEZOID)
    assert found, failure
    verified = [c for c in found if checker.check(c.kernel).outcome.value == "verified"]
    assert verified
    return verified[0].kernel


def test_computed_once_statements_run_only_when_the_loop_runs(checker) -> None:  # noqa: ANN001
    """``1.0 / count`` computed once raises where ``count`` is 0 and the loop ran no step: the
    guard that keeps the sum from running keeps it too."""
    kernel = _verified_trapezoid(checker)
    new = kernel.new
    assert "if count > 0:\n    step = 1.0 / count\n" in new
    unguarded = new.replace("if count > 0:\n    step = 1.0 / count\n", "step = 1.0 / count if count else 0.0\nif count > 0:\n")
    assert unguarded != new
    hoisted = new.replace("if count > 0:\n    step = 1.0 / count\n", "step = 1.0 / count\nif count > 0:\n")
    assert checker.check(replace(kernel, new=hoisted)).outcome.value == "rejected"


_MEASURED = """
    import numpy as np

    def running_precision(index, good):
        n = len(good)
        if n == 0:
            return 0.0
        ranks = np.flatnonzero(np.isin(index, good))
        ap = 0.0
        for k in range(n):
            ap = ap + (k + 1) / (ranks[k] + 1)
        return ap
    """


def test_a_measured_count_is_drawn_never_negative() -> None:
    """``n = len(good)`` bound once is a size: the loop it bounds may run no step, never "minus
    one" steps (a count of unknown origin is still drawn negative too)."""
    found, failure = loop_candidates(_MEASURED)
    assert found, failure
    count = next(spec for spec in found[0].kernel.inputs if spec.name == "n")
    assert count.count and count.nonnegative
    drawn = scalar_strategy(count, Slot(Kind.INT), (0, 1, 3))
    assert all(drawn.example() >= 0 for _ in range(50))
    unknown = scalar_strategy(InputSpec("n", Kind.INT, count=True), Slot(Kind.INT), (0, 1, 3))
    assert any(unknown.example() < 0 for _ in range(200))


# ----------------------------------------------------------------------------- what `where` computes


def test_a_numpy_branch_keeps_its_divisor_from_zero_where_it_is_not_taken(checker) -> None:  # noqa: ANN001
    """`np.where` computes both branches at every sample: `k / ranks[k]` under `ranks[k] != 0`
    divides by `np.where(ranks != 0, ranks, np.ones_like(ranks))`. The plain divisor makes NumPy
    signal a division by zero the loop never made (a warning; under np.seterr(all="raise") an
    error), and the checker, which records NumPy's floating-point signals in both runs, refutes it."""
    kernel = _verified_trapezoid(checker)
    new = kernel.new
    assert "/ np.where(ranks != 0, ranks, np.ones_like(ranks)), 1.0)" in new
    plain = new.replace("/ np.where(ranks != 0, ranks, np.ones_like(ranks)), 1.0)", "/ ranks, 1.0)")
    assert plain != new
    verdict = checker.check(replace(kernel, new=plain))
    assert verdict.outcome.value == "rejected"
    assert "divide by zero" in verdict.counterexample.new


def test_a_torch_branch_divides_as_written() -> None:
    """torch signals nothing on a division by zero: its `where` keeps the plain divisor."""
    found, failure = loop_candidates(
        """
        import torch

        def ratios(num: torch.Tensor, den: torch.Tensor):
            out = torch.empty(len(num))
            for i in range(len(num)):
                out[i] = num[i] / den[i] if den[i] != 0 else 0.0
            return out
        """
    )
    assert found, failure
    assert "num[:len(num)] / den[:len(num)]" in found[0].kernel.new or "/ den" in found[0].kernel.new
    assert "torch.where(den" not in found[0].kernel.new.split("/", 1)[1].split(",", 1)[0]


def test_a_float_error_the_old_code_signals_too_is_no_difference(checker) -> None:  # noqa: ANN001
    """Only a signal the new code adds counts: both runs divide by zero where `a` holds a zero."""
    from torchfix.equivalence.kernel import Kernel

    kernel = Kernel(
        old="out = np.empty(len(a))\nfor i in range(len(a)):\n    out[i] = 1.0 / a[i]\n",
        new="out = 1.0 / a\n",
        inputs=(InputSpec("a", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float64",)),),
        outputs=("out",), modules=(("np", "numpy"),),
    )
    import numpy as np

    from torchfix.equivalence.execute import base_namespace, run_snippet

    base, zero = base_namespace(kernel), {"a": np.array([0.0, 2.0])}
    for code in (kernel.old, kernel.new):
        assert run_snippet(compile(code, "<k>", "exec"), kernel, base, zero).float_errors == {"divide by zero"}
    verdict = checker.check(kernel)
    assert verdict.outcome.value == "verified", verdict.reason


def test_a_numpy_remainder_keeps_its_dividend_from_inf_where_the_branch_is_not_taken() -> None:
    """`inf % 1` signals an invalid value: keeping only the divisor from zero is not enough for
    `//` and `%`, whose dividend is kept at 0 where the branch is not taken."""
    import numpy as np

    from torchfix.equivalence.execute import base_namespace, run_snippet

    found, failure = loop_candidates(
        """
        import numpy as np

        def wrapped(x, p):
            x = np.asarray(x, dtype=np.float64).reshape(-1)
            p = np.asarray(p, dtype=np.float64).reshape(-1)
            out = np.zeros(len(x))
            for i in range(len(x)):
                if p[i] != 0:
                    out[i] = x[i] % p[i]
                else:
                    out[i] = x[i]
            return out
        """
    )
    assert found, failure
    kernel = found[0].kernel
    assert "np.where(p[:len(x)] != 0, x, np.zeros_like(x)) % np.where(p[:len(x)] != 0, p[:len(x)], np.ones_like(p[:len(x)]))" in kernel.new
    inputs = {"x": np.array([np.inf, 5.0]), "p": np.array([0.0, 3.0])}
    base = base_namespace(kernel)

    def signals(code: str) -> frozenset[str]:
        run = run_snippet(compile(code, "<k>", "exec"), kernel, base, inputs)
        assert run.error is None
        return run.float_errors

    assert signals(kernel.old) == signals(kernel.new) == frozenset()
    divisor_only = kernel.new.replace("np.where(p[:len(x)] != 0, x, np.zeros_like(x)) %", "x %")
    assert divisor_only != kernel.new and signals(divisor_only) == {"invalid value"}


def test_a_kept_divisor_keeps_its_dtype_and_a_loop_invariant_one_stays_as_written() -> None:
    """`np.where(t, d, 1)` would make a bool divisor int64 and a Python number an array of
    float64, widening a float16 division: the filler is `np.ones_like(d)`, in `d`'s dtype, and an
    invariant divisor (`x % m`) is not guarded at all."""
    import numpy as np

    from torchfix.equivalence.execute import base_namespace, run_snippet

    found, failure = loop_candidates(
        """
        import numpy as np

        def wrapped(x, d, m):
            x = np.asarray(x, dtype=np.float16).reshape(-1)
            d = np.asarray(d, dtype=bool).reshape(-1)
            m = float(m)
            out = np.zeros(len(x), dtype=np.float16)
            for i in range(len(x)):
                if d[i] != 0:
                    out[i] = x[i] % d[i] + x[i] % m
                else:
                    out[i] = -1.0
            return out
        """
    )
    assert found, failure
    kernel = found[0].kernel
    assert "np.where(d[:len(x)] != 0, d[:len(x)], np.ones_like(d[:len(x)]))" in kernel.new
    assert "% m" in kernel.new and "np.where(d[:len(x)] != 0, m" not in kernel.new
    inputs = {"x": np.array([-0.04376220703125, 4.8046875], dtype=np.float16), "d": np.array([True, False]), "m": 0.001}
    base = base_namespace(kernel)
    old, new = (run_snippet(compile(code, "<k>", "exec"), kernel, base, inputs) for code in (kernel.old, kernel.new))
    assert old.error is None and new.error is None
    assert old.outputs["out"].dtype == new.outputs["out"].dtype == np.float16
    assert old.outputs["out"].tobytes() == new.outputs["out"].tobytes()


@pytest.mark.parametrize(
    ("expression", "skippable"),
    [
        ("a[i] > 0 and b[i] < 0", ["b[i] < 0"]),
        ("not (a[i] > 0 or b[i] < 0)", ["b[i] < 0"]),
        ("0 < a[i] < b[i] <= c[i]", ["b[i]", "c[i]"]),
        ("b[i] if a[i] > 0 else c[i]", ["b[i]", "c[i]"]),
        ("f(a[i], b[i] and c[i])", ["c[i]"]),
        ("a[i] + b[i]", []),
        ("any(v > 0 for v in a)", ["v > 0 for v in a"]),
    ],
)
def test_the_parts_python_may_skip_are_found_at_any_depth(expression: str, skippable: list[str]) -> None:
    parsed = cst.parse_expression(expression)
    found = sorted(cst.Module(body=[]).code_for_node(part) for part in skippable_parts(parsed))
    assert found == sorted(skippable)
    # what is left is evaluated whenever the expression is
    left = cst.Module(body=[]).code_for_node(without_skippable_parts(parsed))
    assert all(part not in left for part in skippable)
