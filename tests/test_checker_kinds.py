"""The checker explores every kind an input may hold: tensors, ndarrays, lists, Python and NumPy
scalars, dicts, one-shot iterators (issue 17). Admission, generation, comparison, witnesses."""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import math
import random

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from torchfix.equivalence.compare import Tolerance, compare
from torchfix.equivalence.edges import edge_inputs
from torchfix.equivalence.engine import EngineSettings, check_kernel, replay_kernel
from torchfix.equivalence.execute import clone
from torchfix.equivalence.kernel import UNKNOWN_KINDS, InputSpec, Kernel, Kind, Outcome
from torchfix.equivalence.timing import measure_kernel
from torchfix.equivalence.values import (
    OneShot,
    Slot,
    candidate_signatures,
    decode_inputs,
    encode_inputs,
    inputs_strategy,
    sample_nonempty,
    slot_choices,
)

FAST = EngineSettings(examples=30)

#: for each kind: a test the old code makes so that it runs on that kind only (with the builtins a
#: kernel has: no `type`)
ONLY = {
    Kind.TENSOR: "repr(x).startswith('tensor(')",
    Kind.NDARRAY: "repr(x).startswith('array(')",
    Kind.LIST: "isinstance(x, list)",
    Kind.INT: "isinstance(x, int) and not isinstance(x, bool)",
    Kind.FLOAT: "isinstance(x, float) and not repr(x).startswith('np.')",
    Kind.BOOL: "isinstance(x, bool)",
    Kind.NUMPY_SCALAR: "repr(x).startswith('np.')",
    Kind.DICT: "isinstance(x, dict)",
    Kind.ITERATOR: "repr(x).startswith('<generator')",
}
EVERY_KIND = tuple(ONLY)


def only_kernel(kind: Kind) -> Kernel:
    old = f"if not ({ONLY[kind]}):\n    raise TypeError('not this kind')\nresult = 1\n"
    return Kernel(old, old, (InputSpec("x", kinds=EVERY_KIND),), ("result",))


@pytest.mark.parametrize("kind", EVERY_KIND, ids=[k.value for k in EVERY_KIND])
def test_each_kind_is_admitted_exactly_where_the_old_code_runs(kind):
    verdict = check_kernel(only_kernel(kind), FAST)
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason
    label = {Kind.TENSOR: "[rank", Kind.NDARRAY: "ndarray", Kind.LIST: "list of", Kind.INT: "x: int",
             Kind.FLOAT: "x: float", Kind.BOOL: "x: bool", Kind.NUMPY_SCALAR: "numpy.",
             Kind.DICT: "dict of", Kind.ITERATOR: "one-shot iterator"}[kind]
    assert verdict.signatures and all(label in s for s in verdict.signatures), verdict.signatures
    # every other kind was tried and found outside the old code's domain, and the verdict says so
    assert any("outside its domain" in note for note in verdict.notes)


def test_kind_defaults_keep_the_old_constructor_calls_working():
    assert InputSpec("x").allowed_kinds() == (Kind.TENSOR,)
    assert InputSpec("x", Kind.INT).allowed_kinds() == (Kind.INT,)
    assert InputSpec("x", Kind.ANY).allowed_kinds() == UNKNOWN_KINDS
    several = InputSpec("x", kinds=(Kind.LIST, Kind.TENSOR, Kind.LIST))
    assert several.kinds == (Kind.TENSOR, Kind.LIST) and several.kind is Kind.ANY
    assert InputSpec("x", kinds=(Kind.FLOAT,)).kind is Kind.FLOAT
    with pytest.raises(ValueError):
        InputSpec("f", kinds=(Kind.OPAQUE, Kind.TENSOR))


def test_every_allowed_kind_of_every_input_is_in_the_candidate_signatures():
    """Stratified: with far more combinations than the limit, no kind is sampled away."""
    specs = [InputSpec(name, kinds=EVERY_KIND) for name in "abcdef"]
    signatures = candidate_signatures(specs, 48, random.Random(0))
    for position, spec in enumerate(specs):
        seen = {sig[position][1].kind for sig in signatures}
        assert seen == set(EVERY_KIND), spec.name
        # each element type of a list is covered too, and each NumPy scalar type
        elements = {sig[position][1].element for sig in signatures if sig[position][1].kind is Kind.LIST}
        assert elements == {Kind.FLOAT, Kind.INT, Kind.BOOL}
        scalars = {sig[position][1].dtype for sig in signatures if sig[position][1].kind is Kind.NUMPY_SCALAR}
        assert scalars == {"float64", "int64", "float32"}


def test_a_kind_the_sample_pairs_badly_is_still_tried_beside_the_admitted_signatures():
    """`a` may be a list only when `b` is a tensor: the admission's kind coverage finds it."""
    old = "if isinstance(a, list) and not isinstance(b, torch.Tensor):\n    raise TypeError\nresult = len(a)\n"
    kernel = Kernel(old, old, (InputSpec("a", kinds=(Kind.TENSOR, Kind.LIST)), InputSpec("b", kinds=EVERY_KIND)),
                    ("result",), modules=(("torch", "torch"),))
    verdict = check_kernel(kernel, FAST)
    assert verdict.ok
    assert any("a: list of" in s and "b: float32" in s for s in verdict.signatures), verdict.signatures


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_generated_values_are_of_their_slot_kind(data):
    spec = InputSpec("x", kinds=EVERY_KIND, keys=("loss",))
    slot = data.draw(st.sampled_from(slot_choices(spec)))
    value = data.draw(inputs_strategy([spec], (("x", slot),)))["x"]
    if slot.kind is Kind.TENSOR:
        assert isinstance(value, torch.Tensor) and value.dim() == slot.rank and str(value.dtype) == f"torch.{slot.dtype}"
    elif slot.kind is Kind.NDARRAY:
        assert type(value) is np.ndarray and value.ndim == slot.rank and str(value.dtype) == slot.dtype
    elif slot.kind is Kind.NUMPY_SCALAR:
        assert type(value) is {"float64": np.float64, "int64": np.int64, "float32": np.float32}[slot.dtype]
    elif slot.kind is Kind.LIST:
        python = {Kind.FLOAT: float, Kind.INT: int, Kind.BOOL: bool}[slot.element]
        assert type(value) is list and all(type(v) is python for v in value)
    elif slot.kind is Kind.DICT:
        assert type(value) is dict and "loss" in value
    elif slot.kind is Kind.ITERATOR:
        assert isinstance(value, OneShot)
    else:
        assert type(value) is {Kind.INT: int, Kind.FLOAT: float, Kind.BOOL: bool}[slot.kind]


def test_lists_take_their_lengths_from_the_shared_size_pool():
    spec = InputSpec("xs", kinds=(Kind.LIST,))
    other = InputSpec("t", kinds=(Kind.TENSOR,), ranks=(1,), dtypes=("float32",))
    signature = (("xs", Slot(Kind.LIST, 1, "float64", Kind.FLOAT)), ("t", Slot(Kind.TENSOR, 1, "float32")))
    rng = random.Random(1)
    lengths = set()
    for _ in range(30):
        values = sample_nonempty([spec, other], signature, rng)
        lengths.add(len(values["xs"]))
        assert len(values["xs"]) >= 1
    assert lengths <= {1, 2, 3, 4} and len(lengths) > 1


def test_the_old_and_the_new_code_each_get_their_own_iterator_over_the_same_values():
    holder = OneShot([1.0, 2.0, 3.0])
    first, second = clone(holder), clone(holder)
    assert inspect.isgenerator(first) and first is not second
    assert list(first) == [1.0, 2.0, 3.0] == list(second)
    assert list(copy.deepcopy(holder)) == [1.0, 2.0, 3.0]


def test_a_generator_consumed_twice_is_a_difference():
    """The second pass over a one-shot iterator sees nothing; a rewrite that lists it first does."""
    old = "a = sum(values)\nb = sum(values)\n"
    new = "items = list(values)\na = sum(items)\nb = sum(items)\n"
    kernel = Kernel(old, new, (InputSpec("values", kinds=(Kind.LIST, Kind.ITERATOR), dtypes=("int64",)),), ("a", "b"))
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.REJECTED
    assert "one-shot iterator" in verdict.reason and "b differs" in verdict.reason
    # on lists alone the two agree
    lists = Kernel(old, new, (InputSpec("values", kinds=(Kind.LIST,), dtypes=("int64",)),), ("a", "b"))
    assert check_kernel(lists, FAST).ok


def test_items_left_in_an_iterator_are_compared():
    old = "first = next(values)\n"
    new = "first = list(values)[0]\n"
    kernel = Kernel(old, new, (InputSpec("values", kinds=(Kind.ITERATOR,), dtypes=("int64",)),), ("first",))
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.REJECTED and "items left in the iterator" in verdict.counterexample.where


@pytest.mark.parametrize(
    "old,new,detail",
    [
        (np.float64(1.5), 1.5, "Python type: old numpy.float64, new float"),
        (1.5, np.float64(1.5), "Python type: old float, new numpy.float64"),
        (np.zeros(2, np.float32), torch.zeros(2), "Python type"),
        (np.zeros(2, np.float32), [0.0, 0.0], "Python type"),
        (np.zeros(2, np.float32), np.zeros(2, np.float64), "numpy dtype"),
        (np.zeros(2, np.float32), np.zeros((1, 2), np.float32), "shape"),
        (np.array([1.0, np.nan]), np.array([1.0, 2.0]), "first difference at index [1]"),
        (np.array([1, 2]), np.array([1, 3]), "first difference at index [1]"),
        (np.float32(1.0), np.float32(1.5), "first difference"),
        (np.int64(2), np.int64(3), "first difference"),
        ({"a": [1.0]}, {"a": [1.5]}, "abs error"),
    ],
)
def test_compare_holds_numpy_values_lists_and_dicts_to_the_tensor_strictness(old, new, detail):
    diff = compare(old, new, "v", Tolerance())
    assert diff is not None and detail in diff.detail, diff


def test_compare_accepts_equal_numpy_values_and_nan_where_nan():
    assert compare(np.array([1.0, np.nan]), np.array([1.0, np.nan]), "v", Tolerance()) is None
    assert compare(np.float32(1.0), np.float32(1.0 + 1e-8), "v", Tolerance()) is None
    assert compare(np.float64(0.1 + 0.2), np.float64(0.3), "v", Tolerance()) is None


@pytest.mark.parametrize("kind", [Kind.LIST, Kind.NDARRAY, Kind.DICT])
def test_a_mutated_input_of_any_container_kind_is_compared_after_the_run(kind):
    old = "result = 0\n"
    mutate = {Kind.LIST: "x.append(0.0)", Kind.NDARRAY: "x *= 2", Kind.DICT: "x['extra'] = 1.0"}[kind]
    kernel = Kernel(old, f"{mutate}\nresult = 0\n", (InputSpec("x", kinds=(kind,)),), ("result",))
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.REJECTED and "input x after the run" in verdict.counterexample.where


def _same(a, b) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, torch.Tensor):
        return a.dtype == b.dtype and a.shape == b.shape and torch.equal(torch.nan_to_num(a), torch.nan_to_num(b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    if isinstance(a, OneShot):
        return _same(a.items, b.items)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) or isinstance(a, np.floating):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return a == b


def test_witnesses_encode_and_decode_every_kind_exactly():
    values = {
        "t": torch.tensor([1.5, float("nan"), -0.0]),
        "a": np.array([[1.5, -0.0], [float("inf"), float("nan")]], dtype=np.float32),
        "ai": np.array([1, -2], dtype=np.int32),
        "ab": np.array([True, False]),
        "l": [0.5, 1.5, float("nan")],
        "li": [2**53 + 1, -3],
        "i": 3, "f": -0.0, "b": True,
        "s64": np.float64(0.1), "s32": np.float32(-0.0), "si": np.int64(-7),
        "d": {"loss": 0.25, "k0": float("inf")},
        "dt": {"w": torch.tensor([1.0, 2.0])},
        "g": OneShot([1.0, 2.0]),
        "steps": [np.float64(1.0), np.float64(2.5)],
    }
    back = decode_inputs(encode_inputs(values, device="cpu"))
    assert back.keys() == values.keys()
    for name in values:
        assert _same(values[name], back[name]), name


def test_a_refutation_on_a_list_input_replays_exactly():
    kernel = Kernel("s = sum(xs)\n", "s = torch.tensor(xs).sum().item()\n",
                    (InputSpec("xs", kinds=(Kind.LIST,), dtypes=("int64",)),), ("s",))
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.REJECTED, verdict.reason
    witness = verdict.counterexample.witness
    assert "list" in json.loads(witness)["inputs"]["xs"]
    again = replay_kernel(kernel, witness, FAST)
    assert again.outcome is Outcome.REJECTED and again.counterexample.where == verdict.counterexample.where


def test_the_edge_sweep_builds_every_kind_with_the_usual_fills():
    spec = InputSpec("x", kinds=EVERY_KIND, keys=("loss",))
    found: set[Kind] = set()
    nan_in_list = False
    for slot in slot_choices(spec):
        for example in edge_inputs([spec], (("x", slot),)):
            value = example["x"]
            found.add(slot.kind)
            if slot.kind is Kind.LIST and slot.element is Kind.FLOAT:
                nan_in_list |= any(isinstance(v, float) and math.isnan(v) for v in value)
            if slot.kind is Kind.DICT:
                assert "loss" in value
            if slot.kind is Kind.NDARRAY:
                assert type(value) is np.ndarray
    assert found == set(EVERY_KIND) and nan_in_list


def test_list_kernels_are_timed_with_lists_of_the_loop_extent():
    kernel = Kernel("s = 0.0\nfor v in xs:\n    s += v\n", "s = float(sum(xs))\n",
                    (InputSpec("xs", kinds=(Kind.LIST,), dtypes=("float64",)),), ("s",))
    timings = measure_kernel(kernel, sizes=(64,))
    assert timings and "xs: list of float" in timings[0].signature


# ----------------------------------------------------------------------------- issue 17

OLD_RECONSTRUCTED = "total = 0\nfor i, n in zip(i, n):\n    total += int(n * ratios[i])\n"
LONG_REWRITE = "total = 0\nfor i, n in zip(i, n):\n    total += (n * ratios[i]).long()\ntotal = int(total)\n"


def test_the_long_rewrite_of_int_over_python_lists_is_refuted_with_a_python_float_witness():
    """Issue 17: `int(n * ratios[i])` over Python lists became `(n * ratios[i]).long()`. With the
    kinds the code holds -- int sizes, a list of float ratios -- the checker refutes it."""
    kernel = Kernel(
        OLD_RECONSTRUCTED,
        LONG_REWRITE,
        (
            InputSpec("i", kinds=(Kind.INT,), per_step=True, index=True, nonnegative=True),
            InputSpec("n", kinds=(Kind.INT,), per_step=True, nonnegative=True),
            InputSpec("ratios", kinds=(Kind.LIST,), dtypes=("float64",)),
        ),
        ("total",),
    )
    verdict = check_kernel(kernel, EngineSettings(examples=60))
    assert verdict.outcome is Outcome.REJECTED
    cex = verdict.counterexample
    assert "AttributeError" in cex.new  # `.long()` of a Python float
    assert "ratios: list of float" in verdict.reason
    rendered = dict(cex.inputs)
    assert rendered["ratios"].endswith("# list of float")
    assert all(type(v) is float for v in decode_inputs(cex.witness)["ratios"])


def test_the_long_rewrite_is_refuted_whatever_n_holds_once_lists_are_explored():
    """With nothing known about `n`, the refutation comes from some kind the old code accepts."""
    unknown = Kernel(
        OLD_RECONSTRUCTED, LONG_REWRITE,
        (InputSpec("i", kinds=(Kind.INT,), per_step=True, index=True, nonnegative=True),
         InputSpec("n", Kind.ANY, per_step=True), InputSpec("ratios", kinds=(Kind.LIST,))),
        ("total",),
    )
    assert check_kernel(unknown, FAST).outcome is Outcome.REJECTED


def test_a_dtype_the_sample_admits_nowhere_is_tried_jointly_in_an_admitted_signature():
    # torch.dot wants equal dtypes, so float64 runs only when x and w are both float64, a joint
    # choice the random sample of ranks x dtypes can miss; the rewrite drops the float32 cast of
    # `torch.empty`, which shows only there
    old = "out = torch.empty(x.size(0))\nfor i in range(x.size(0)):\n    out[i] = torch.dot(x[i], w)\n"
    kernel = Kernel(
        old, "out = x @ w\n",
        (InputSpec("x", Kind.TENSOR, ranks=(1, 2, 3), batch_dim=0), InputSpec("w", Kind.TENSOR, ranks=(0, 1, 2, 3))),
        ("out",), modules=(("torch", "torch"),),
    )
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.REJECTED
    assert "dtype" in verdict.counterexample.render()
    fixed = Kernel(old, "out = torch.empty(x.size(0))\nout[:] = x @ w\n", kernel.inputs, ("out",), modules=kernel.modules)
    assert check_kernel(fixed, FAST).outcome is Outcome.VERIFIED


def test_an_8_bit_array_brings_one_long_input_at_a_time():
    from torchfix.equivalence.edges import long_inputs

    specs = [InputSpec("scores"), InputSpec("labels")]
    signature = (("scores", Slot(Kind.LIST, 1, "float64", Kind.FLOAT)), ("labels", Slot(Kind.TENSOR, 2, "uint8")))
    examples = list(long_inputs(specs, signature))
    # per input, two fills; the long one is 260 long (a list's length, a tensor's first size),
    # every other size is 1, so that two nested loops stay 260 steps
    assert [len(e["scores"]) for e in examples] == [260, 260, 1, 1]
    assert [tuple(e["labels"].shape) for e in examples] == [(1, 1), (1, 1), (260, 1), (260, 1)]
    wide = (("scores", Slot(Kind.LIST, 1, "float64", Kind.FLOAT)), ("labels", Slot(Kind.TENSOR, 2, "int64")))
    assert list(long_inputs(specs, wide)) == []


def test_a_float64_operand_rounded_to_float32_first_is_refuted_by_the_cancellation_sweep():
    # `out += m` of a float64 `m` computes in double and rounds once; the rewrite rounds `m` to
    # float32 first. Equal but where `t * s` nearly cancels `m`: 1e20 in float32 is 1.00000002e20,
    # and in double 1.00000002e20 - 1e20 is 2e12 where the rewrite gets 0. Random draws rarely
    # make all three inputs take those values at once (two seeds of three let it through)
    specs = (
        InputSpec("t", Kind.TENSOR, ranks=(1,), dtypes=("float32",)),
        InputSpec("s", Kind.FLOAT),
        InputSpec("m", Kind.TENSOR, ranks=(1,), dtypes=("float64",)),
    )
    old = "out = t.clone()\nout.mul_(s).add_(m)\n"
    kernel = Kernel(old, "out = t.clone()\nout.mul_(s).add_(m.float())\n", specs, ("out",), modules=(("torch", "torch"),))
    for seed in range(3):
        verdict = check_kernel(kernel, EngineSettings(examples=30, seed=seed))
        assert verdict.outcome is Outcome.REJECTED
        assert "1e+20" in verdict.counterexample.render()
    # the same computation spelled otherwise stands
    same = Kernel(old, "out = t.clone()\nout.copy_(t * s + m)\n", specs, ("out",), modules=kernel.modules)
    assert check_kernel(same, FAST).outcome is Outcome.VERIFIED


def test_the_cancellation_sweep_pairs_floating_inputs_of_different_precisions():
    from torchfix.equivalence.edges import cancellation_inputs

    specs = [InputSpec("t"), InputSpec("s"), InputSpec("m"), InputSpec("k")]
    signature = (
        ("t", Slot(Kind.TENSOR, 2, "float32")), ("s", Slot(Kind.FLOAT)),
        ("m", Slot(Kind.LIST, 1, "float64", Kind.FLOAT)), ("k", Slot(Kind.TENSOR, 1, "int64")),
    )
    examples = list(cancellation_inputs(specs, signature))
    # one per ordered pair of the three floating inputs; the int input keeps its sweep values
    assert len(examples) == 6
    first = examples[0]
    assert torch.all(first["t"] == torch.tensor(1e20, dtype=torch.float32)) and first["s"] == -1e20
    assert first["m"] == [1.0] * len(first["m"]) and first["k"].dtype == torch.int64
    assert {(float(e["t"].flatten()[0]), e["s"], e["m"][0]) for e in examples} >= {(1.0, 1e20, -1e20), (1.0, -1e20, 1e20)}
    # beside a float16 array, a number float16 cannot hold exactly but can hold approximately
    half = (("t", Slot(Kind.TENSOR, 1, "float16")), ("s", Slot(Kind.FLOAT)), ("m", Slot(Kind.TENSOR, 1, "float32")),
            ("k", Slot(Kind.INT)))
    assert {e["s"] for e in cancellation_inputs(specs, half)} == {1000.1, -1000.1, 1.0}
    # a dict or a one-shot iterator of floats takes the numbers too, keys and kind kept
    held = (("t", Slot(Kind.TENSOR, 1, "float32")), ("s", Slot(Kind.DICT, 1, "float64", Kind.FLOAT)),
            ("m", Slot(Kind.ITERATOR, 1, "float32", Kind.TENSOR)), ("k", Slot(Kind.INT)))
    (first, *_) = cancellation_inputs([InputSpec("t"), InputSpec("s", keys=("a",)), InputSpec("m"), InputSpec("k")], held)
    assert set(first["s"].values()) == {-1e20} and "a" in first["s"]
    assert isinstance(first["m"], OneShot) and all(bool((v == 1.0).all()) for v in first["m"].items)
    # one precision alone: no rounding to expose, no examples
    alike = (("t", Slot(Kind.TENSOR, 2, "float32")), ("s", Slot(Kind.NDARRAY, 1, "float32")),
             ("m", Slot(Kind.TENSOR, 1, "float32")), ("k", Slot(Kind.INT)))
    assert list(cancellation_inputs(specs, alike)) == []


def test_rounded_addends_widen_only_where_the_target_rounds_them():
    from torchfix.equivalence.engine import _tolerance

    specs = (InputSpec("out", Kind.TENSOR, ranks=(1,)), InputSpec("w", Kind.TENSOR, ranks=(1,)))
    kernel = Kernel("out += w\n", "out += w.to(out.dtype)\n", specs, (), rounds_addends=("out", "w"))

    def widened(target: torch.dtype, values: torch.dtype) -> bool:
        return _tolerance(kernel, {"out": torch.zeros(3, dtype=target), "w": torch.ones(3, dtype=values)}).reordered

    assert widened(torch.float32, torch.float64) and widened(torch.float16, torch.bfloat16)
    # narrower weights are cast exactly; weights of the bins' own dtype are the loop's addends
    assert not widened(torch.float64, torch.float32) and not widened(torch.float32, torch.float32)
    # a Python number is rounded to the bins' dtype by the loop as by the rewrite
    assert not _tolerance(kernel, {"out": torch.zeros(3), "w": 0.1}).reordered
    # overflowing positions stay compared: a weight past float32's range is inf once cast
    huge = {"out": torch.zeros(3), "w": torch.full((3,), 3e38, dtype=torch.float64)}
    assert _tolerance(kernel, huge).reordered and not _tolerance(kernel, huge).may_overflow(torch.float32)
    reordering = dataclasses.replace(kernel, rounds_addends=None, reorders_float_reduction=True)
    assert _tolerance(reordering, huge).may_overflow(torch.float32)  # (a reordered sum's exemption)
