"""One array given as two inputs: a caller may pass one tensor twice (``f(x, x)``), and a loop
that reads at a later step what an earlier step wrote is then no batched operation. The checker's
aliasing sweep gives such inputs one object; the codemods say which inputs may be one object."""

from __future__ import annotations

import json
from dataclasses import replace
import textwrap

import libcst as cst
import numpy as np
import torch
from libcst.metadata import MetadataWrapper

from torchfix.codemods.loops.kernels import alias_pairs
from torchfix.codemods.loops.module import ModuleContext
from torchfix.equivalence.engine import EngineSettings, check_kernel, replay_kernel
from torchfix.equivalence.execute import clone_example
from torchfix.equivalence.kernel import InputSpec, Kernel, Outcome
from torchfix.equivalence.values import decode_inputs, encode_inputs

FAST = EngineSettings(examples=30)

SPREAD_OLD = "for i in range(out.shape[0]):\n    out[i] = src[0] + 1.0\n"
SPREAD_NEW = "if out.shape[0] > 0:\n    out[:] = src[0] + 1.0\n"
SPREAD_INPUTS = (InputSpec("out", ranks=(1, 2)), InputSpec("src", ranks=(1, 2)))


def test_one_tensor_given_as_both_inputs_refutes_a_rewrite_that_reads_before_the_loop_writes():
    verdict = check_kernel(Kernel(SPREAD_OLD, SPREAD_NEW, SPREAD_INPUTS, ()), FAST)
    assert verdict.outcome is Outcome.REJECTED, verdict.reason
    assert "`src` is `out`" in verdict.reason
    rendered = verdict.counterexample.render()
    assert "src = out  # the same object as `out`" in rendered


def test_inputs_the_code_shows_are_distinct_are_not_aliased():
    kernel = Kernel(SPREAD_OLD, SPREAD_NEW, SPREAD_INPUTS, (), may_alias=())
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason


def test_the_sweep_leaves_alone_a_loop_that_reads_only_the_position_it_writes():
    kernel = Kernel(
        "for i in range(out.shape[0]):\n    out[i] = src[i] * 2.0\n",
        "out[:] = src[:out.shape[0]] * 2.0\n",
        (InputSpec("out", ranks=(1,), dtypes=("float32",)), InputSpec("src", ranks=(1,), dtypes=("float32",))),
        (),
    )
    verdict = check_kernel(kernel, FAST)
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason


def test_an_aliased_witness_replays_as_one_object():
    verdict = check_kernel(Kernel(SPREAD_OLD, SPREAD_NEW, SPREAD_INPUTS, ()), FAST)
    witness = verdict.counterexample.witness
    assert json.loads(witness)["inputs"]["src"] == {"same_as": "out"}
    decoded = decode_inputs(witness)
    assert decoded["src"] is decoded["out"]
    again = replay_kernel(Kernel(SPREAD_OLD, SPREAD_NEW, SPREAD_INPUTS, ()), witness, FAST)
    assert again.outcome is Outcome.REJECTED


def test_clones_keep_one_object_one_object_and_two_objects_two():
    shared = torch.zeros(3)
    array = np.zeros(2)
    clones = clone_example({"a": shared, "b": shared, "c": torch.zeros(3), "d": array, "e": array})
    assert clones["a"] is clones["b"] and clones["a"] is not shared and clones["c"] is not clones["a"]
    assert clones["d"] is clones["e"] and clones["d"] is not array
    back = decode_inputs(encode_inputs({"a": shared, "b": shared, "n": 3, "m": 3}))
    assert back["a"] is back["b"] and back["n"] == back["m"] == 3


def _pairs(source: str, names: list[str]) -> set[frozenset[str]]:
    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(source)))
    context = ModuleContext.of(wrapper)
    loop = next(n for n in context.nodes.of_type(cst.For))
    return {frozenset(p) for p in alias_pairs(context, loop, names)}


def test_parameters_may_be_one_object():
    assert _pairs("""
        def f(out, src):
            for i in range(len(out)):
                out[i] = src[0]
        """, ["out", "src"]) == {frozenset({"out", "src"})}


def test_new_values_are_no_other_object():
    assert _pairs("""
        import torch
        def f(x):
            out = torch.zeros(len(x))
            src = x * 2
            for i in range(len(out)):
                out[i] = src[0]
        """, ["out", "src", "x"]) == set()


def test_a_default_that_falls_back_to_another_input_links_them():
    assert frozenset({"out", "src"}) in _pairs("""
        import torch
        def f(n, src=None):
            out = torch.zeros(n)
            src = out if src is None else src
            for i in range(len(out)):
                out[i] = src[0]
        """, ["out", "src"])


def test_attributes_globals_and_results_of_unknown_calls_may_be_one_object():
    found = _pairs("""
        import torch
        def f(self_out):
            a = load_buffer()
            b = load_buffer()
            for i in range(len(a)):
                a[i] = b[0] + BUF[0] + self_out[0]
        """, ["a", "b", "BUF", "self_out"])
    assert found == {frozenset(p) for p in [("a", "b"), ("a", "BUF"), ("a", "self_out"), ("b", "BUF"), ("b", "self_out"), ("BUF", "self_out")]}


def test_links_made_inside_the_loop_are_the_kernels_own():
    # `out[i] = x[i]` copies values: it does not make `out` hold `x`
    assert _pairs("""
        import torch
        def f(n):
            x = torch.ones(n)
            out = torch.zeros(n)
            for i in range(n):
                out[i] = x[i]
        """, ["out", "x"]) == set()


def test_aliasing_is_drawn_beyond_the_edge_shapes():
    # given one tensor as both, the loop reads a row it wrote only from five rows up: larger than
    # any shape of the edge sweep, so the random phase aliases its inputs too
    kernel = Kernel(
        "n = out.shape[0]\nfor i in range(n - 2):\n    out[i + 2] = src[i] * 2.0\n",
        "n = out.shape[0]\nif n > 2:\n    out[2:n] = src[:n - 2] * 2.0\n",
        (InputSpec("out", ranks=(1,), dtypes=("float32",)), InputSpec("src", ranks=(1,), dtypes=("float32",))),
        (),
    )
    verdict = check_kernel(kernel, EngineSettings(examples=100))
    assert verdict.outcome is Outcome.REJECTED, verdict.reason
    assert "`src` is `out`" in verdict.reason
    assert check_kernel(replace(kernel, may_alias=()), EngineSettings(examples=100)).outcome is Outcome.VERIFIED


def test_calls_that_may_return_their_input_keep_the_link():
    # every name is a new tensor or array or may be one: only the links pair them
    found = _pairs("""
        import numpy as np
        import torch
        import torch.nn.functional as F
        def f(n, p):
            dst = torch.zeros(n)
            arr = np.zeros(n)
            src = dst.float()
            act = F.relu(dst, True)
            kept = F.dropout(dst, p=p)
            same = +dst
            unbound = torch.Tensor.float(dst)
            prod = np.multiply(arr, 2.0, arr)
            root = np.sqrt(arr, arr)
            clipped = arr.clip(0.0, 1.0, arr)
            for i in range(len(dst)):
                dst[i] = src[0] + act[0] + kept[0] + same[0] + unbound[0] + prod[0] + root[0] + clipped[0]
        """, ["dst", "src", "act", "kept", "same", "unbound", "arr", "prod", "root", "clipped"])
    for name in ["src", "act", "kept", "same", "unbound"]:
        assert frozenset({"dst", name}) in found, name
    for name in ["prod", "root", "clipped"]:
        assert frozenset({"arr", name}) in found, name
    assert frozenset({"dst", "arr"}) not in found


def test_a_new_value_moved_or_cast_is_still_new():
    assert _pairs("""
        import numpy as np
        import torch
        def f(src, device):
            out = torch.zeros(src.shape[0]).to(device)
            arr = np.zeros(3).astype(np.float32)
            for i in range(len(out)):
                out[i] = src[0] + arr[0]
        """, ["out", "src", "arr"]) == set()
