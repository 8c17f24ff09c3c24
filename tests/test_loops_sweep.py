"""A masked reduction swept over thresholds (``codemods/loops/sweep.py``): the spellings it takes,
what stops it, and the wrong forms of it the checker refutes."""

from __future__ import annotations

import textwrap
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.loops import sweep
from torchfix.codemods.loops.facts import loop_facts
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.rewrite import CannotRewrite
from torchfix.equivalence.checker import Checker, CheckSettings
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome

CORPUS = Path(__file__).resolve().parent.parent / "corpus" / "TFV001"


def _facts(source: str):  # noqa: ANN202
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))
    loops = context.nodes.of_type(cst.For)
    # the innermost loop: a sweep inside a loop over classes is the inner one
    facts = loop_facts(loops[-1], context)
    assert facts is not None
    return facts


def _sweep(test: str, hit: str, miss: str = "0", add: str = "score += best / 11", levels: str = "np.linspace(0, 1, 11)") -> str:
    return f"""
    import numpy as np
    def f(recall, precision):
        score = 0.0
        for level in {levels}:
            if {test}:
                best = {miss}
            else:
                best = {hit}
            {add}
        return score
    """


SPELLINGS = [
    ("np.sum(recall >= level) == 0", "np.max(precision[recall >= level])", "score += best / 11"),
    ("recall[recall >= level].size == 0", "np.max(precision[recall >= level])", "score += best / 11"),
    ("(recall >= level).sum() == 0", "precision[recall >= level].max()", "score = score + best / 11"),
    ("np.count_nonzero(level <= recall) == 0", "np.amax(precision[level <= recall])", "score = score + best * 0.5"),
    ("not (recall > level).any()", "np.min(precision[recall > level])", "score -= best"),
    ("not np.any(recall > level)", "precision[recall > level].min()", "score += 2.0 * best"),
]


@pytest.mark.parametrize("test, hit, add", SPELLINGS, ids=[s[0] for s in SPELLINGS])
def test_the_spellings_of_a_sweep_are_one_sweep(test: str, hit: str, add: str) -> None:
    source = _sweep(test, hit, add=add)
    if ".size == 0" in test:
        # a size of the selection is not a count of the mask the sweep reads
        with pytest.raises(CannotRewrite):
            sweep.threshold_sweep(_facts(source))
        return
    rewrite = sweep.threshold_sweep(_facts(source))
    assert "reached = " in rewrite.kernel.new and ".reshape(reached.shape[0], -1)" in rewrite.kernel.new
    assert ("np.inf" in rewrite.kernel.new) and ("-np.inf" in rewrite.kernel.new) == ("max" in hit)


def test_a_test_true_where_something_is_reached_takes_the_other_branch() -> None:
    source = """
    import numpy as np
    def f(recall, precision):
        score = 0.0
        for level in np.arange(0.0, 1.1, 0.1):
            best = np.max(precision[recall >= level]) if np.sum(recall >= level) > 0 else 0
            score += best / 11
        return score
    """
    assert "score += (best / 11).sum()" in sweep.threshold_sweep(_facts(source)).kernel.new


@pytest.mark.parametrize("trap, reason", [
    ("trap_threshold_sweep_best_kept.py", "`best` is read after the loop"),
    ("trap_threshold_sweep_integer_slots.py", "an integer array truncates each step's `+=`"),
    ("trap_threshold_sweep_listed_levels.py", "not an `np.arange` or `np.linspace`"),
    ("trap_threshold_sweep_miss_counts.py", "takes another value than 0"),
    ("trap_threshold_sweep_noisy_precision.py", "may do something at each step"),
    ("trap_threshold_sweep_two_masks.py", "of the same mask"),
    ("trap_threshold_sweep_wrapping_product.py", "with a float `c`"),
    ("trap_threshold_sweep_rebound_later.py", "an integer array truncates each step's `+=`"),
    ("trap_threshold_sweep_at_module_level.py", "outside a function"),
    ("trap_threshold_sweep_levels_reshaped.py", "not an `np.arange` or `np.linspace`"),
])
def test_each_trap_is_stopped_by_its_own_fact(trap: str, reason: str) -> None:
    with pytest.raises(CannotRewrite) as raised:
        sweep.threshold_sweep(_facts((CORPUS / trap).read_text()))
    assert reason in str(raised.value)


@pytest.mark.parametrize("add", ["score += best + 1", "score += best / 0.0", "score += best / level", "score += best * best",
                                 "score += best / len(gt)", "score += best / recall.shape[0]",
                                 "score += best * 2", "score += 3 * best"])
def test_an_addend_that_is_not_zero_at_a_miss_or_may_wrap_is_refused(add: str) -> None:
    with pytest.raises(CannotRewrite, match="something else than"):
        sweep.threshold_sweep(_facts(_sweep("np.sum(recall >= level) == 0", "np.max(precision[recall >= level])", add=add)))


def test_a_chained_comparison_is_not_one_threshold_mask() -> None:
    source = _sweep("np.sum(recall >= level > 0.5) == 0", "np.max(precision[recall >= level > 0.5])")
    with pytest.raises(CannotRewrite, match="not an order comparison"):
        sweep.threshold_sweep(_facts(source))


def test_what_the_steps_read_must_not_change_from_step_to_step() -> None:
    source = _sweep("np.sum(recall >= level) == 0", "np.max(score + precision[recall >= level])")
    with pytest.raises(CannotRewrite):
        sweep.threshold_sweep(_facts(source))


@pytest.mark.parametrize("allocation, floats", [
    ("np.zeros(len(recalls))", True),
    ("np.empty(len(recalls), dtype=np.float32)", True),
    ("np.zeros(len(recalls), dtype=float)", True),
    ("np.zeros(len(recalls), dtype=np.int64)", False),
    ("np.zeros(len(recalls), np.float64)", False),  # (positional: not read)
    ("list(np.zeros(len(recalls)))", False),
])
def test_an_element_accumulator_needs_an_allocation_of_floats(allocation: str, floats: bool) -> None:
    source = (CORPUS / "threshold_sweep_per_class_slot.py").read_text().replace("np.zeros(len(recalls))", allocation)
    if floats:
        sweep.threshold_sweep(_facts(source))
        return
    with pytest.raises(CannotRewrite, match="holds floats"):
        sweep.threshold_sweep(_facts(source))


@pytest.mark.parametrize("shadow", ["def per_class(recalls, precisions, float=int):", "def per_class(recalls, precisions):\n    float = int"])
def test_a_shadowed_float_is_not_a_float_dtype(shadow: str) -> None:
    source = (CORPUS / "threshold_sweep_per_class_slot.py").read_text().replace("np.zeros(len(recalls))", "np.zeros(len(recalls), dtype=float)")
    source = source.replace("def per_class(recalls: np.ndarray, precisions: np.ndarray) -> np.ndarray:", shadow)
    with pytest.raises(CannotRewrite, match="holds floats"):
        sweep.threshold_sweep(_facts(source))


def test_names_the_function_declares_global_are_read_elsewhere() -> None:
    source = _sweep("np.sum(recall >= level) == 0", "np.max(precision[recall >= level])").replace(
        "score = 0.0", "global best\n        score = 0.0")
    with pytest.raises(CannotRewrite, match="read after the loop"):
        sweep.threshold_sweep(_facts(source))


@pytest.mark.parametrize("levels, swept", [
    ("np.linspace(0, 1, 11)", True),
    ("np.linspace(0.0, -1.0, num=5, dtype=np.float32)", True),
    ("np.arange(0, 11)", True),
    ("np.linspace(lo, hi, 11)", False),  # (array end points make rows)
    ("np.linspace(0, 1, 11, retstep=True)", False),
    ("np.linspace(0, 1, 11, axis=0)", False),
    ("np.arange(*bounds)", False),
    ("[0.5, 0.75]", False),
])
def test_only_one_dimensional_numpy_ranges_are_swept(levels: str, swept: bool) -> None:
    facts = _facts(_sweep("np.sum(recall >= level) == 0", "np.max(precision[recall >= level])", levels=levels))
    assert sweep.sweeps_thresholds(facts) is swept


def test_the_rewrite_calls_no_builtin_the_module_may_rebind() -> None:
    rewrite = sweep.threshold_sweep(_facts(_sweep("np.sum(recall >= level) == 0", "np.max(precision[recall >= level])")))
    assert "len(" not in rewrite.kernel.new and "range(" not in rewrite.kernel.new


def test_a_float_array_of_the_code_is_drawn_as_one() -> None:
    source = (CORPUS / "threshold_sweep_per_class_slot.py").read_text()
    kernel = sweep.threshold_sweep(_facts(source)).kernel
    (out,) = [s for s in kernel.inputs if s.name == "out"]
    assert out.allowed_kinds() == (Kind.NDARRAY,) and out.dtypes == ("float64",)


_ARRAYS = (
    InputSpec("recall", kinds=(Kind.NDARRAY,), ranks=(0, 1, 2)),
    InputSpec("precision", kinds=(Kind.NDARRAY,), ranks=(0, 1, 2, 3)),
)
_OLD = """score = 0.0
for level in np.linspace(0, 1, 11):
    if np.sum(recall >= level) == 0:
        best = 0
    else:
        best = np.max(precision[recall >= level])
    score += best / 11
"""
_RIGHT = """score = 0.0
thresholds = np.linspace(0, 1, 11)
reached = recall >= thresholds.reshape((-1,) + (1,) * np.ndim(recall))
if reached.any():
    selects = reached.reshape(reached.shape + (1,) * (np.ndim(precision) - np.ndim(recall)))
    best = np.where(selects, precision, -np.inf).reshape(len(thresholds), -1).max(1)
    best[~reached.reshape(len(thresholds), -1).any(1)] = 0
    score += (best / 11).sum()
"""
#: (what it is, the wrong form): each differs from ``_RIGHT`` in one part the module says is needed
WRONG = [
    ("no guard: a sweep that reaches nothing makes a NumPy float of the Python one",
     _RIGHT.replace("if reached.any():\n", "if True:\n")),
    ("no trailing axes: a precision of higher rank than the recall does not line up",
     _RIGHT.replace("selects = reached.reshape(reached.shape + (1,) * (np.ndim(precision) - np.ndim(recall)))", "selects = reached")),
    ("a fill of 0: a negative precision loses to it", _RIGHT.replace("-np.inf", "0")),
    ("no miss value: a level no recall reaches adds minus infinity", _RIGHT.replace("    best[~reached.reshape(len(thresholds), -1).any(1)] = 0\n", "")),
]


@pytest.fixture(scope="module")
def strict():
    with Checker(CheckSettings(examples=150, measure=False), cache_dir=None) as checker:
        yield checker


@pytest.mark.parametrize("what, wrong", WRONG, ids=[w[0].split(":")[0] for w in WRONG])
def test_the_wrong_forms_are_refuted(strict, what: str, wrong: str) -> None:  # noqa: ANN001
    verdict = strict.check(Kernel(_OLD, wrong, _ARRAYS, ("score",), modules=(("np", "numpy"),)))
    assert verdict.outcome is Outcome.REJECTED, f"{what}: {verdict.reason}"


def test_the_right_form_is_verified(strict) -> None:  # noqa: ANN001
    verdict = strict.check(Kernel(_OLD, _RIGHT, _ARRAYS, ("score",), modules=(("np", "numpy"),)))
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason


def test_a_float64_slot_sums_in_its_own_dtype(strict) -> None:  # noqa: ANN001
    # float16 values added one at a time into a float64 element are exact there: one float16 sum
    # of them is not
    inputs = (
        InputSpec("recall", kinds=(Kind.NDARRAY,), ranks=(1,)),
        InputSpec("precision", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float16",)),
        InputSpec("out", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float64",)),
    )
    old = _OLD.replace("score = 0.0\n", "").replace("score += best / 11", "out[0] += best / 11")
    right = _RIGHT.replace("score = 0.0\n", "").replace("score += (best / 11).sum()", "out[0] += (best / 11).sum(dtype=out.dtype)")
    wrong = right.replace("(dtype=out.dtype)", "()")
    numpy = (("np", "numpy"),)
    # (`out` is an array of its own, as the allocation the rule asks for makes it)
    for new, outcome in ((wrong, Outcome.REJECTED), (right, Outcome.VERIFIED)):
        kernel = Kernel(old, new, inputs, ("out",), modules=numpy, reorders_float_reduction=True, may_alias=())
        assert strict.check(kernel).outcome is outcome


@pytest.mark.parametrize("header, nonnegative", [
    ("def f(recs, precs, out):", True),
    ("def f(recs, precs, out, range=range):", False),     # a parameter may be any callable
])
def test_the_variable_of_an_enclosing_range_loop_is_drawn_never_negative(header: str, nonnegative: bool) -> None:
    from torchfix.codemods.loops.kernels import input_specs

    source = f"""
    import numpy as np
    {header}
        for c in range(len(recs)):
            for t in np.arange(0.0, 1.1, 0.1):
                p = 0 if np.sum(recs[c] >= t) == 0 else np.max(precs[c][recs[c] >= t])
                out[c] += p / 11
    """
    (spec,) = input_specs(["c"], _facts(source))
    assert spec.nonnegative is nonnegative


@pytest.mark.parametrize("between, swept", [
    ("", True),
    ("k = len(levels)", True),
    ("first = levels[0]", True),
    ("levels[0] = -1.0", False),               # written through
    ("levels = levels[::-1]", False),          # bound twice
    ("levels += 0.5", False),
    ("np.random.shuffle(levels)", False),      # given to a call
    ("n = levels.size", False),                # (an attribute: not read)
])
def test_a_named_range_is_swept_where_nothing_can_reshape_it(between: str, swept: bool) -> None:
    source = f"""
    import numpy as np
    def f(recall, precision):
        levels = np.linspace(0, 1, 11)
        {between}
        score = 0.0
        for level in levels:
            best = 0 if np.sum(recall >= level) == 0 else np.max(precision[recall >= level])
            score += best / 11
        return score
    """
    assert sweep.sweeps_thresholds(_facts(source)) is swept
