"""The loop's domain in the checker: an example on which the loop runs zero times is judged only
where the same example with a non-empty extent is one the old code runs (issue 12, item 8)."""

from __future__ import annotations

from torchfix.equivalence.engine import EngineSettings, check_kernel
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome

FAST = EngineSettings(examples=40)
TORCH = (("torch", "torch"),)


def test_an_empty_batch_beside_a_weight_no_batch_could_take_is_not_a_counterexample():
    old = "out = torch.zeros(x.size(0), 1)\nfor i in range(x.size(0)):\n    out[i] = x[i] @ w\n"
    new = "out = torch.zeros(x.size(0), 1)\nout[:] = x @ w\n"
    inputs = (InputSpec("x", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),
              InputSpec("w", Kind.TENSOR, ranks=(2,), dtypes=("float32",)))
    # x = [0, 3] beside w = [5, 1]: the old loop runs zero times, the new matmul raises; but no
    # non-empty x of width 3 runs with that w, so the example is outside the domain
    assert check_kernel(Kernel(old, new, inputs, ("out",), modules=TORCH), FAST).outcome is Outcome.VERIFIED
    # without the loop's walked dimension the checker cannot tell: the same rewrite is refuted
    blind = tuple(InputSpec(s.name, s.kind, ranks=s.ranks, dtypes=s.dtypes) for s in inputs)
    assert check_kernel(Kernel(old, new, blind, ("out",), modules=TORCH), FAST).outcome is Outcome.REJECTED


def test_a_loop_from_one_runs_zero_times_on_a_single_row_and_the_rewrite_must_agree_there():
    old = "for c in range(1, w.size(0)):\n    w[c] = w[0]\n"
    spec = InputSpec("w", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0, batch_start=1)
    unguarded = Kernel(old, "w[1:] = w[0]\n", (spec,), ("w",), modules=TORCH)
    verdict = check_kernel(unguarded, FAST)
    # an empty w: the loop never reads w[0], the rewrite does -- and a longer w runs the loop
    assert verdict.outcome is Outcome.REJECTED
    assert "IndexError" in verdict.counterexample.render()
    guarded = Kernel(old, "if w.size(0) > 1:\n    w[1:] = w[0]\n", (spec,), ("w",), modules=TORCH)
    assert check_kernel(guarded, FAST).outcome is Outcome.VERIFIED


def _picked_sum(index_dtypes: tuple[str, ...]) -> Kernel:
    """``acc + x[i, idx[i]]`` over a list ``idx`` against a rewrite that needs a 2-D ``x``."""
    old = "acc = 0\nfor i in range(len(idx)):\n    acc = acc + x[i, idx[i]]\n"
    new = "assert x.dim() >= 2\nacc = 0\nif len(idx) > 0:\n    acc = acc + x[torch.arange(len(idx)), torch.tensor(idx)].sum(0)\n"
    inputs = (InputSpec("idx", kinds=(Kind.LIST,), ranks=(1,), dtypes=index_dtypes, index=True, batch_dim=0),
              InputSpec("x", Kind.TENSOR, ranks=(1, 2), dtypes=("float32",), batch_dim=0))
    return Kernel(old, new, inputs, ("acc",), modules=TORCH)


def test_an_empty_walked_list_makes_a_zero_extent_and_is_grown_like_the_arrays():
    import random

    import numpy as np
    import torch

    from torchfix.equivalence import engine

    kernel = _picked_sum(("int64",))
    empty = {"idx": [], "x": torch.zeros(3, 2)}
    assert engine._zero_extent(kernel, empty)
    assert not engine._zero_extent(kernel, {"idx": [0], "x": torch.zeros(3, 2)})
    grown = engine._with_extent(kernel, empty, 2, random.Random(0))
    assert len(grown["idx"]) == 2 and all(type(v) is int for v in grown["idx"])
    # one grower per element type the spec allows: an empty list shows none
    assert len(engine._list_elements(kernel, empty)) == 1
    assert len(engine._list_elements(_picked_sum(("int64", "float32", "bool")), empty)) == 3
    array = {"idx": np.zeros((0,), dtype=np.int64), "x": torch.zeros(3, 2)}
    assert engine._zero_extent(kernel, array)
    assert engine._with_extent(kernel, array, 3, random.Random(0))["idx"].shape == (3,)


def test_an_empty_walked_list_is_grown_with_every_element_type_it_may_hold():
    # with bools allowed, x[i, True] runs on a 1-D x: the empty example is in the domain, and so
    # are the non-empty bool ones, where the rewrite takes the bools as integers
    verdict = check_kernel(_picked_sum(("int64", "bool")), FAST)
    assert verdict.outcome is Outcome.REJECTED


def test_a_loop_count_of_zero_or_less_is_a_zero_extent_too():
    # range(n) never evaluates the element: with n <= 0 a `scale` no non-empty loop accepts (a
    # tensor that `float` refuses) is outside the domain, not a counterexample
    old = "out = torch.tensor([float(scale) * t for t in range(n)])\n"
    new = "out = (float(scale) * torch.arange(max(n, 0), dtype=torch.float64)).to(torch.get_default_dtype())\n"
    inputs = (InputSpec("n", Kind.INT, count=True), InputSpec("scale", kinds=(Kind.FLOAT, Kind.TENSOR), ranks=(0, 2)))
    assert check_kernel(Kernel(old, new, inputs, ("out",), modules=TORCH), FAST).outcome is Outcome.VERIFIED
    # a rewrite that differs where the loop does run is still refuted
    wrong = "out = (float(scale) * torch.arange(max(n, 0) + 1, dtype=torch.float64))[1:].to(torch.get_default_dtype())\n"
    assert check_kernel(Kernel(old, wrong, inputs, ("out",), modules=TORCH), FAST).outcome is Outcome.REJECTED


def test_an_empty_dimension_an_inner_loop_walks_is_a_zero_extent_too():
    # the inner loop walks dim 2 of w: with it empty the loops store nothing, whatever dim 0 is;
    # a w with an empty dim 0 is accepted only because nothing is stored, and says nothing
    old = "for i in range(w.size(1)):\n    for j in range(w.size(2)):\n        w[0, i, j] = 1.0\n"
    new = "w[0, :w.size(1), :w.size(2)] = 1.0\n"
    outer_only = InputSpec("w", Kind.TENSOR, ranks=(3,), dtypes=("float32",), batch_dim=1)
    both = InputSpec("w", Kind.TENSOR, ranks=(3,), dtypes=("float32",), batch_dim=1, inner_dims=(2,))
    assert check_kernel(Kernel(old, new, (outer_only,), ("w",), modules=TORCH), FAST).outcome is Outcome.REJECTED
    assert check_kernel(Kernel(old, new, (both,), ("w",), modules=TORCH), FAST).outcome is Outcome.VERIFIED
    # where both loops run, a wrong fill is still refuted
    wrong = "w[0, :w.size(1), :w.size(2)] = 2.0\n"
    assert check_kernel(Kernel(old, wrong, (both,), ("w",), modules=TORCH), FAST).outcome is Outcome.REJECTED


def test_an_output_the_old_code_never_sets_is_not_verified_by_agreeing_on_nothing():
    # `total` is neither an input nor initialised: the old code accepts only the inputs on which
    # the guard never fires, where neither run sets `total` -- agreement about nothing
    old = "for i in range(len(v)):\n    if keep[i]:\n        total += v[i]\n"
    new = "keep_1 = keep[:len(v)] != 0\nif keep_1.any():\n    total += v[keep_1].sum(0)\n"
    inputs = (InputSpec("v", Kind.TENSOR, batch_dim=0), InputSpec("keep", Kind.TENSOR, batch_dim=0))
    verdict = check_kernel(Kernel(old, new, inputs, ("total",), modules=TORCH), FAST)
    assert verdict.outcome is Outcome.UNVERIFIED
    assert "set `total` on none of the" in verdict.reason
    # with its start given, the same loop is judged (and this rewrite refuted: `if keep[i]`
    # accepts a one-element row, the mask does not)
    started = Kernel("total = 0.0\n" + old, "total = 0.0\n" + new, inputs, ("total",), modules=TORCH)
    assert check_kernel(started, FAST).outcome is Outcome.REJECTED


def test_admission_samples_reach_the_sizes_literal_indices_need():
    """`d[4]` runs only on rows of 5: admission draws that size too (up to MAX_DIM), or it
    would find no input on which such code runs."""
    from torchfix.equivalence.values import MAX_DIM, literal_index_sizes

    assert literal_index_sizes("s = d[4]\n") == (5,)
    assert literal_index_sizes("s = d[0, -5]\n") == (5,)
    assert literal_index_sizes("s = d[1]\n") == ()
    assert literal_index_sizes("s = d[40]\n") == tuple(range(5, MAX_DIM + 1))
    kernel = Kernel("s = d[4] * 2\n", "s = d[4] + d[4]\n", (InputSpec("d", ranks=(1,), dtypes=("float32",)),), ("s",), modules=TORCH)
    assert check_kernel(kernel, FAST).outcome is Outcome.VERIFIED


def test_columns_past_the_random_sizes_are_reached_and_still_judged():
    """Real code reads a class column after four coordinates and a score (`t[i, 5]`) and slices
    past the random sizes (`p[i, 4:6]`): admission and the draws use the size such a literal
    needs, and a few more, so the check runs -- and a rewrite that reads the wrong column is
    still refuted there."""
    from torchfix.equivalence.values import literal_index_sizes

    assert literal_index_sizes("s = t[i, 5]\n") == (6, 7, 9)
    assert literal_index_sizes("s = p[i, 4:6]\n") == (6, 7, 9)
    assert literal_index_sizes("s = p[5:]\n") == (6, 7, 9)
    assert literal_index_sizes("s = p[:, -7]\n") == (7, 8, 10)
    assert literal_index_sizes("s = p[i, 2:-5]\n") == (8, 9, 11)  # two in front, five behind, one between
    assert literal_index_sizes("s = p[i, ::6]\n") == (7, 8, 10)  # a second element
    assert literal_index_sizes("s = p[i, ::-6]\n") == (7, 8, 10)
    assert literal_index_sizes("s = p[:, 2:5]\n") == (5,)
    assert literal_index_sizes("s = p[:4]\n") == ()
    assert literal_index_sizes("s = p[:, 99]\n") == (5,)  # past any size worth drawing: as before
    targets = (InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),)
    old = "out = t.new_zeros(t.size(0))\nfor i in range(t.size(0)):\n    out[i] = t[i, 5] * t[i, 4]\n"
    right = Kernel(old, "out = t[:, 5] * t[:, 4]\n", targets, ("out",), modules=TORCH)
    assert check_kernel(right, FAST).outcome is Outcome.VERIFIED
    # (the last column is the sixth only where a row has six: the sizes drawn must differ)
    wrong = Kernel(old, "out = t[:, -1] * t[:, 4]\n", targets, ("out",), modules=TORCH)
    verdict = check_kernel(wrong, FAST)
    assert verdict.outcome is Outcome.REJECTED, verdict.reason


def test_the_fixed_sweep_reaches_code_whose_literal_indices_need_large_sizes():
    """A review found three ways the larger sizes let a wrong rewrite through, each fixed here:
    the edge sweep (sizes of 1 to 3) never ran such code, so cancellation went unchecked; an
    empty batch was judged outside the domain because only extents of 1 to 3 were tried
    against a literal along the walked dimension; and the sizes between were never drawn where a
    test on the width picks a branch. No seed verifies any of these."""
    mixed = (
        InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",)),
        InputSpec("s", Kind.FLOAT),
        InputSpec("m", Kind.TENSOR, ranks=(1,), dtypes=("float64",)),
    )
    cancel_old = "out = t[:, 5].clone()\nout.mul_(s).add_(m)\n"
    cancel_new = "out = t[:, 5].clone()\nout.mul_(s).add_(m.float())\n"  # rounds m to float32 first
    walked = (InputSpec("t", Kind.TENSOR, ranks=(1,), dtypes=("float32",), batch_dim=0),)
    empty_old = "out = torch.zeros_like(t)\nfor i in range(t.size(0)):\n    out[i] = t[i] - t[5]\n"
    empty_new = "out = t - t[5]\n"  # raises on an empty `t`, where the loop runs zero times
    wide = (InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),)
    branch_old = (
        "out = torch.zeros(t.size(0))\nfor i in range(t.size(0)):\n"
        "    out[i] = t[i, 9] if t.size(1) > 9 else t[i, 4]\n"
    )
    # the narrow branch reads a wrong column
    branch_new = "out = t[:, 9].clone() if t.size(1) > 9 else t[:, 3].clone()\n"
    for old, new, inputs in ((cancel_old, cancel_new, mixed), (empty_old, empty_new, walked), (branch_old, branch_new, wide)):
        kernel = Kernel(old, new, inputs, ("out",), modules=TORCH)
        for seed in range(2):
            verdict = check_kernel(kernel, EngineSettings(examples=30, seed=seed))
            assert verdict.outcome is not Outcome.VERIFIED, (new, seed)


def test_sizes_of_one_stay_beside_the_wide_ones():
    """A second review: widening every size of the sweep lost its ones, so a `b` of (n, 1),
    whose rows a one-number slot takes and whose batch broadcasts to (n, n), was never swept
    beside a six-column `t` (and never admitted), and a rewrite wrong only for one row
    verified. One place of the pool is widened at a time, and admission tries the inputs at
    their own places (a (3, 6) `t` beside a (6, 1) `b`) -- for every literal need past 2."""
    pair = (
        InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),
        InputSpec("b", Kind.TENSOR, ranks=(1, 2), dtypes=("float32",), batch_dim=0),
    )
    broadcast_old = "out = torch.zeros(t.size(0))\nfor i in range(t.size(0)):\n    out[i] = t[i, 5] + b[i]\n"
    broadcast_new = "out = t[:, 5] + b[:t.size(0)]\n"
    # (the same below the random sizes' top: `t[i, 2]` runs on the sweep's threes only, where no
    # other input had its one; 5 seeds of 10 verified it before)
    narrow_old, narrow_new = broadcast_old.replace("t[i, 5]", "t[i, 2]"), broadcast_new.replace("t[:, 5]", "t[:, 2]")
    single = (InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),)
    squeeze_old = "out = torch.zeros(t.size(0))\nfor i in range(t.size(0)):\n    out[i] = t[i, 5]\n"
    squeeze_new = "out = t[:, 5:6].squeeze().clone()\n"  # a 0-d result for one row
    cases = ((broadcast_old, broadcast_new, pair), (narrow_old, narrow_new, pair), (squeeze_old, squeeze_new, single))
    for old, new, inputs in cases:
        for seed in range(2):
            verdict = check_kernel(Kernel(old, new, inputs, ("out",), modules=TORCH), EngineSettings(examples=60, seed=seed))
            assert verdict.outcome is Outcome.REJECTED, (new, seed, verdict.reason)


def test_literal_needs_count_the_new_code_and_big_tensors_are_drawn():
    """The new code's literals count too (`t[:, 5:]` for a loop reading `t[i, -1]`); a 4-D
    tensor of up to 19 elements a side is drawn as a repeated run rather than refused by
    hypothesis (a checker error before); past 4 dimensions such sizes are not checked at all (a
    review verified a wrong rewrite of two 6-D inputs, at seconds an example)."""
    row = (InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),)
    old = "out = torch.zeros(t.size(0))\nfor i in range(t.size(0)):\n    out[i] = t[i, -1]\n"
    wrong = Kernel(old, "out = t[:, -1] + t[:, 5:].sum(1)\n", row, ("out",), modules=TORCH)
    assert check_kernel(wrong, EngineSettings(examples=40, seed=0)).outcome is Outcome.REJECTED
    old = "out = torch.zeros(w.size(0))\nfor c in range(w.size(0)):\n    out[c] = w[c, 5, :, :].sum()\n"
    new = "out = w[:, 5].sum(tuple(range(1, w.dim() - 1)))\n"
    blocks = (InputSpec("w", Kind.TENSOR, ranks=(4,), dtypes=("float32",), batch_dim=0),)
    verdict = check_kernel(Kernel(old, new, blocks, ("out",), modules=TORCH), EngineSettings(examples=40, seed=0))
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason
    wrong = Kernel(old, "out = w[:, 5, :, :].sum((1, 2)) * 2\n", blocks, ("out",), modules=TORCH)
    assert check_kernel(wrong, EngineSettings(examples=40, seed=0)).outcome is Outcome.REJECTED
    deep = (InputSpec("w", Kind.TENSOR, ranks=(4, 5), dtypes=("float32",), batch_dim=0),)
    verdict = check_kernel(Kernel(old, new, deep, ("out",), modules=TORCH), EngineSettings(examples=40, seed=0))
    assert verdict.outcome is Outcome.UNVERIFIED and "more than 4 dimensions" in verdict.reason


def test_two_dimensions_that_each_need_a_literal_may_differ():
    """A third review: every dimension that needed a size past 5 got the same one (one place of
    the pool), so `(a + b)[:, L]` -- which raises where `a` and `b` differ in width -- verified
    against `a[i, L] + b[i, L]`. Two places are drawn, and swept, apart; and literal 1 (a need
    of 2) widens too, where a `b` of (n, 1) beside `t[i, 1]` was admitted by luck."""
    pair = (
        InputSpec("a", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),
        InputSpec("b", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),
    )
    for column in (4, 6):
        old = f"out = torch.zeros(a.size(0))\nfor i in range(a.size(0)):\n    out[i] = a[i, {column}] + b[i, {column}]\n"
        kernel = Kernel(old, f"out = (a + b[:a.size(0)])[:, {column}]\n", pair, ("out",), modules=TORCH)
        for seed in range(2):
            assert check_kernel(kernel, EngineSettings(examples=60, seed=seed)).outcome is Outcome.REJECTED, (column, seed)
    mixed = (
        InputSpec("b", Kind.TENSOR, ranks=(1, 2), dtypes=("float32",), batch_dim=0),
        InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",), batch_dim=0),
    )
    old = "out = torch.zeros(t.size(0))\nfor i in range(t.size(0)):\n    out[i] = t[i, 1] + b[i]\n"
    kernel = Kernel(old, "out = t[:, 1] + b[:t.size(0)]\n", mixed, ("out",), modules=TORCH)
    for seed in range(2):
        assert check_kernel(kernel, EngineSettings(examples=60, seed=seed)).outcome is Outcome.REJECTED, seed


def test_code_the_fixed_sweep_cannot_run_is_not_verified_on_random_draws_alone():
    """`t[:, 5].view(2, 2)` runs only on four rows of six columns or more: no input of the sweep
    has both (its sizes are 1 to 3, widened to 5 to 7 or past the need), and random draws alone
    do not verify."""
    inputs = (InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",)),)
    kernel = Kernel("out = t[:, 5].view(2, 2)\n", "out = t[:, 5].reshape(2, 2)\n", inputs, ("out",), modules=TORCH)
    verdict = check_kernel(kernel, EngineSettings(examples=60, seed=0))
    assert verdict.outcome is Outcome.UNVERIFIED
    assert "the fixed sweep ran on no input of t: float32[rank 2] that the old code accepts" in verdict.reason


def test_inputs_of_different_lengths_are_swept_whatever_the_seed():
    """`counts[k]` is read only where `out[k] != 0`: the loop accepts a `counts` shorter than
    `out` where the tail of `out` is zero, and a mask over all of `out` raises there. The edge
    sweep gives inputs leading sizes that differ (3 and 2, each way round), so no seed and no
    hypothesis budget can miss it."""
    old = "for k in range(out.size(0)):\n    if out[k] != 0 and counts[k] > 0:\n        out[k] = 2\n"
    new = "out[(out != 0) & (counts[:out.size(0)] > 0)] = 2\n"
    inputs = (InputSpec("counts", Kind.TENSOR, ranks=(1,)), InputSpec("out", Kind.TENSOR, ranks=(1,)))
    kernel = Kernel(old, new, inputs, ("out",), modules=TORCH, may_alias=())
    for seed in range(4):
        verdict = check_kernel(kernel, EngineSettings(examples=1, seed=seed))
        assert verdict.outcome is Outcome.REJECTED, verdict.reason
        assert "the new code's run differs" in verdict.reason


def test_a_domain_of_trailing_ones_and_a_longer_second_input_is_admitted_whatever_the_seed():
    """`out[i] = w * t[i + 1]` over `enumerate(w)` runs on a 2-D `t` only where its rows are
    (1,) (torch stores a (1,) product into a one-number slot) and it has more rows than `w` --
    sizes a random admission sample rarely has at once. The structured admission inputs have
    them, so the (n, n) product of the batched form meets that domain on every seed, even with
    one hypothesis example."""
    old = "out = torch.zeros(w.shape[0])\nfor i, wi in enumerate(w):\n    out[i] = wi * t[i + 1]\n"
    new = "out = torch.zeros(w.shape[0])\nout[:len(w)] = w * t[1:len(w) + 1]\n"
    inputs = (InputSpec("w", Kind.TENSOR, ranks=(1,), dtypes=("float32",)),
              InputSpec("t", Kind.TENSOR, ranks=(2,), dtypes=("float32",)))
    kernel = Kernel(old, new, inputs, ("out",), modules=TORCH, may_alias=())
    for seed in range(4):
        verdict = check_kernel(kernel, EngineSettings(examples=1, seed=seed))
        assert verdict.outcome is Outcome.REJECTED, verdict.reason


def test_the_structured_admission_inputs_have_trailing_ones_and_both_orders_of_leading_sizes():
    from torchfix.equivalence.edges import admission_inputs
    from torchfix.equivalence.values import Slot

    specs = [InputSpec("a", Kind.TENSOR, ranks=(2,)), InputSpec("b", Kind.TENSOR, ranks=(3,))]
    signature = (("a", Slot(Kind.TENSOR, 2, "float32")), ("b", Slot(Kind.TENSOR, 3, "float32")))
    shapes = [(tuple(x["a"].shape), tuple(x["b"].shape)) for x in admission_inputs(specs, signature)]
    assert shapes == [((3, 1), (3, 1, 1)), ((3, 1), (2, 1, 1)), ((2, 1), (3, 1, 1))]


def test_every_rank_the_old_code_runs_on_is_tried_when_the_sample_pairs_others():
    # the inputs of a NumPy query expansion whose `k` may be any kind: the candidate sample
    # spends its pairs on `k`, and drew a 3-D `V` beside a 2-D `order` but never a 2-D `V`, the
    # rank the code has in practice. Rank coverage tries each missing rank in the admitted
    # signatures, as dtype coverage does each missing dtype
    numpy_ = (("np", "numpy"),)
    old = ("expanded = np.zeros_like(V)\nfor i in range(n):\n"
           "    expanded[i, :] = np.mean(V[order[i, :k], :], axis=0)\n")
    new = ("expanded = np.zeros_like(V)\nif n > 0:\n"
           "    expanded[:n, :] = np.mean(V[order[:n, :k], :], axis=1)\n")
    inputs = (
        InputSpec("V", kinds=(Kind.NDARRAY, Kind.NUMPY_SCALAR), ranks=(0, 1, 2, 3), dtypes=("float32",)),
        InputSpec("n", Kind.INT, count=True),
        InputSpec("order", kinds=(Kind.NDARRAY,), ranks=(1, 2, 3), dtypes=("int32",), batch_dim=0),
        InputSpec("k", Kind.ANY),
    )
    verdict = check_kernel(Kernel(old, new, inputs, ("expanded",), modules=numpy_), FAST)
    assert verdict.outcome is Outcome.VERIFIED
    ranks_of_v = {s.split(",")[0] for s in verdict.signatures}
    assert {"V: ndarray float32[rank 2]", "V: ndarray float32[rank 3]"} <= ranks_of_v


def _judge(kernel: Kernel, inputs: dict) -> object:
    from torchfix.equivalence.engine import _Stats, judge_example
    from torchfix.equivalence.execute import base_namespace

    old, new = compile(kernel.old, "<old>", "exec"), compile(kernel.new, "<new>", "exec")
    return judge_example(kernel, old, new, base_namespace(kernel), inputs, EngineSettings(), _Stats())


def test_a_reordered_sum_may_meet_inf_minus_inf_where_the_loop_met_a_nan_first():
    """NumPy's sum of 16 numbers adds x[0] + x[8] first: `inf - inf` signals an invalid value
    there, where the loop had met the NaN at x[1] and NaN plus anything signals nothing. Both
    results are NaN: in a rewrite that reorders a float reduction the signal is the order of the
    additions, like the last bits of a finite sum. Elsewhere it stays a difference."""
    import dataclasses

    import numpy as np

    summed = Kernel(
        old="s = 0.0\nfor v in x:\n    s = s + v\n",
        new="s = 0.0 + x.sum()\n",
        inputs=(InputSpec("x", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float64",)),),
        outputs=("s",), modules=(("np", "numpy"),), reorders_float_reduction=True,
    )
    x = np.array([np.inf, np.nan] + [0.0] * 6 + [-np.inf] + [0.0] * 7)
    assert _judge(summed, {"x": x}) is None
    not_reordering = dataclasses.replace(summed, reorders_float_reduction=False)
    assert "invalid value" in _judge(not_reordering, {"x": x}).new
    # a finite result the loop reached without a signal: the reordered sum's signal still counts
    finite = dataclasses.replace(summed, new="s = 0.0 + x.sum() + float(np.float64(np.inf) - np.inf == 0)\n")
    assert "invalid value" in _judge(finite, {"x": np.zeros(3)}).new


def test_hypothesis_draws_its_constants_from_the_kernel_not_from_torchfix_source():
    """Hypothesis draws some numbers from the literals of the modules it takes for the code under
    test: torchfix's own source when run from a checkout, nothing when installed. A check draws
    from the kernel's literals (and their negations) instead, and the pool comes back after."""
    from hypothesis.internal.conjecture import providers

    from torchfix.equivalence.engine import _constants_of

    kernel = Kernel(old="for i in range(n):\n    out[i] = x[i] * 0.25 + 3\n", new="out[:n] = x[:n] * 0.25 + 3\n",
                    inputs=(InputSpec("x"), InputSpec("out"), InputSpec("n", kinds=(Kind.INT,))), outputs=("out",))
    before = providers._get_local_constants
    with _constants_of(kernel):
        pool = providers._get_local_constants()
        assert set(pool.floats) == {0.25, -0.25, 3.0, -3.0}
        assert set(pool.integers) == {3, -3}
    assert providers._get_local_constants is before


def test_an_invalid_value_of_another_operation_stays_a_difference_beside_a_reordered_sum():
    """The exemption is for the reordered sum's own `inf - inf`: a cast of NaN to an integer in
    the new code signals on inputs holding a NaN and no infinity, where the loop (which casts
    only the numbers) signals nothing, and the check refutes it."""
    old = (
        "s = 0.0\nq = np.zeros(x.shape[0], dtype=np.int64)\nfor i in range(x.shape[0]):\n"
        "    s = s + x[i]\n    if x[i] == x[i]:\n        q[i] = x[i]\n"
    )
    new = "s = 0.0\nif x.shape[0] > 0:\n    s = s + x.sum()\nq = np.where(x == x, x.astype(np.int64), 0)\n"
    kernel = Kernel(
        old=old, new=new, inputs=(InputSpec("x", kinds=(Kind.NDARRAY,), ranks=(1,), dtypes=("float64",), batch_dim=0),),
        outputs=("s", "q"), modules=(("np", "numpy"),), reorders_float_reduction=True,
    )
    import numpy as np

    assert "invalid value" in _judge(kernel, {"x": np.array([np.nan, 1.0])}).new
    verdict = check_kernel(kernel, EngineSettings(examples=60))
    assert verdict.outcome is Outcome.REJECTED, verdict.reason


def test_a_zero_d_operand_of_a_wider_dtype_beside_a_batch_is_tried(monkeypatch):
    """`z[i] + t` adds two 0-d tensors, which promote as their dtypes say (int32 and int64 make
    int64); `z[rows] + t` of a batch demotes the 0-d `t` to the batch's dtype and wraps. The
    promotion coverage makes that signature (a 0-d int64 or float64 beside an int32 or float32
    batch, the stored-into array wide), which a random sample and the one-dtype-at-a-time
    coverage missed in a review (TFV005's kernel, `t = w.sum()` pinning `t` 0-d); without it
    the wrong rewrite passes."""
    import textwrap

    import libcst as cst
    from libcst.metadata import MetadataWrapper

    from torchfix.codemods.tfv005_elementwise_branch import ElementwiseBranch
    from torchfix.equivalence import engine

    source = textwrap.dedent("""
        import torch
        def f(x: torch.Tensor, z: torch.Tensor, y: torch.Tensor, w: torch.Tensor):
            x = x.view(-1)
            z = z.view(-1)
            y = y.view(-1)
            t = w.sum()
            for i in range(len(x)):
                if x[i] > 0 and z[i] != 0:
                    y[i] = z[i] + t
            return y
        """)
    (proposal,) = ElementwiseBranch().propose(MetadataWrapper(cst.parse_module(source)))
    (candidate,) = proposal.candidates
    verdict = check_kernel(candidate.kernel, FAST)
    assert verdict.outcome is Outcome.REJECTED
    assert "t: int64[rank 0]" in verdict.reason or "t: float64[rank 0]" in verdict.reason
    monkeypatch.setattr(engine, "PROMOTION_TRIES", 0)
    assert check_kernel(candidate.kernel, FAST).outcome is Outcome.VERIFIED


def test_a_gradient_apart_by_more_than_the_old_codes_own_rounding_is_a_difference():
    """A float64 weight's gradient through a float32 result: where the old code's own gradient
    moves by float32 rounding when its inputs are float64 instead, a new code's within that
    rounding is the same (a batch sums the parts in another order); one that moves by more than
    the old code's rounding (1e-4 of it here; float32 rounding is about 1e-7 a part) is refuted --
    a relaxed tolerance let such a gradient through in a review."""
    old = "out = (x * w).float().sum(0)\n"
    inputs = (InputSpec("x", Kind.TENSOR, ranks=(1,), dtypes=("float32",)),
              InputSpec("w", Kind.TENSOR, ranks=(0,), dtypes=("float64",)))
    reordered = Kernel(old, "out = (x * w).float().flip(0).sum(0)\n", inputs, ("out",), modules=TORCH, gradients=True)
    assert check_kernel(reordered, FAST).outcome is Outcome.VERIFIED
    nudged = Kernel(old, "out = (x * (w + (w - w.detach()).nan_to_num(0.0, 0.0, 0.0) * 1e-4)).float().sum(0)\n", inputs, ("out",), modules=TORCH, gradients=True)
    verdict = check_kernel(nudged, FAST)
    assert verdict.outcome is Outcome.REJECTED and "gradient w.r.t. w" in verdict.reason
