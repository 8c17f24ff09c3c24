"""TFV005: corpus cases (before -> after, traps unchanged), the rule's examples, and refutations
the checker must find for plausible but wrong vectorizations."""

from __future__ import annotations

import dataclasses
import textwrap

import libcst as cst
import pytest
import torch
from conftest import corpus_cases
from libcst.metadata import MetadataWrapper
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, rewrite

from torchfix.codemods.tfv005_elementwise_branch import ElementwiseBranch
from torchfix.equivalence.kernel import Outcome

CASES = corpus_cases("TFV005")


@pytest.fixture(scope="module")
def checker():
    from torchfix.equivalence.checker import Checker, CheckSettings

    with Checker(CheckSettings(examples=60)) as instance:
        yield instance


def _proposal(source: str):
    (proposal,) = ElementwiseBranch().propose(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))
    return proposal


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 6
    for case in positives:
        assert case.with_name(case.stem + ".expected.py").exists(), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [ElementwiseBranch], checker)


@pytest.mark.parametrize("example", ElementwiseBranch.examples, ids=[e.id for e in ElementwiseBranch.examples])
def test_rule_examples(example, checker):
    assert_rule_example(example, [ElementwiseBranch], checker)


MASKED_SUM = """
import torch
def f(v: torch.Tensor, keep: torch.Tensor):
    v = v.view(-1)
    keep = keep.view(-1)
    total = torch.zeros(())
    for i in range(len(v)):
        if keep[i]:
            total += v[i]
    return total
"""


def _floats_only(kernel):
    """The kernel restricted to floating tensors: on int32 data beyond 2**24 torch.where and
    masked sums promote through float32 and the checker (rightly) refutes them; these tests are
    about the refutations below, on the data the rewrite is meant for."""
    inputs = tuple(
        dataclasses.replace(s, dtypes=("float32", "float64")) if s.kind.value == "tensor" and not s.dtypes else s
        for s in kernel.inputs
    )
    return dataclasses.replace(kernel, inputs=inputs)


def test_checker_rejects_multiplying_by_the_mask(checker):
    """`(v * keep).sum()` turns inf * 0 into NaN (and NaN * 0 stays NaN) where keep is false."""
    proposal = _proposal(MASKED_SUM)
    kernel = _floats_only(proposal.candidates[0].kernel)
    assert checker.check(kernel).ok
    cast = ".to(torch.promote_types(v.dtype, total.dtype))"
    wrong = dataclasses.replace(kernel, new=kernel.new.replace(
        f"total += v[keep[:len(v)].bool()]{cast}.sum()", f"total += (v * keep[:len(v)]){cast}.sum()"))
    assert wrong.new != kernel.new
    verdict = checker.check(wrong)
    assert verdict.outcome is Outcome.REJECTED
    assert verdict.counterexample is not None


def test_checker_rejects_an_integer_mask_used_as_an_index(checker):
    """`if mask[i]:` tests truthiness; indexing with a 0/1 integer tensor gathers rows 0 and 1."""
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor, mask: torch.Tensor):
            for i in range(len(x)):
                if mask[i]:
                    x[i] = 0
        """
    )
    kernel = proposal.candidates[0].kernel
    assert "x[mask[:len(x)].bool()] = 0" in kernel.new
    wrong = dataclasses.replace(kernel, new=kernel.new.replace(".bool()", ""))
    assert checker.check(wrong).outcome is Outcome.REJECTED


def test_range_n_ladder_rejects_plain_slice_then_clamps(checker):
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor, y: torch.Tensor, n: int):
            x = x.view(-1)
            y = y.view(-1)
            for i in range(n):
                if x[i] > 0:
                    y[i] = x[i]
                else:
                    y[i] = 0.0
        """
    )
    plain, clamped = (_floats_only(c.kernel) for c in proposal.candidates[:2])
    verdict = checker.check(plain)
    assert verdict.outcome is Outcome.REJECTED
    assert "max(n, 0)" in clamped.new and checker.check(clamped).ok


LEAKY = """
import torch
def f(x: torch.Tensor, y: torch.Tensor, a: float):
    x = x.view(-1)
    y = y.view(-1)
    for i in range(len(x)):
        if x[i] > 0:
            y[i] = x[i]
        else:
            y[i] = a * x[i]
"""


def test_where_refuted_on_int_data_then_per_branch_masks_verify(checker):
    """`a * x` promotes the whole torch.where to float32 (int32 beyond 2**24 rounds); the loop
    casts each branch into y on its own, and so does one mask assignment per branch."""
    proposal = _proposal(LEAKY)
    where, branches = proposal.candidates
    assert "torch.where" in where.kernel.new
    verdict = checker.check(where.kernel)
    assert verdict.outcome is Outcome.REJECTED and verdict.counterexample is not None
    assert branches.kernel.new == (
        "y_mask = x > 0\n"
        "y_else = a * x\n"
        "y[:len(x)][y_mask] = x[y_mask].to(y.dtype)\n"
        "y[:len(x)][~y_mask] = y_else[~y_mask].to(y.dtype)\n"
    )
    assert checker.check(branches.kernel).ok
    assert isinstance(branches.edits[0].replacement, cst.FlattenSentinel)


def test_per_branch_masks_need_the_cast_and_the_precomputed_mask(checker):
    """Without `.to(y.dtype)` mask assignment raises on a dtype mismatch; a mask recomputed after
    the first write (the target is the condition's input) selects the wrong elements."""
    branches = _proposal(LEAKY).candidates[-1].kernel
    no_cast = dataclasses.replace(branches, new=branches.new.replace(".to(y.dtype)", ""))
    assert checker.check(no_cast).outcome is Outcome.REJECTED
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor):
            for i in range(len(x)):
                if x[i] > 0:
                    x[i] = 0
                else:
                    x[i] = 1
        """
    )
    kernel = proposal.candidates[-1].kernel
    assert checker.check(kernel).ok
    late = dataclasses.replace(kernel, new=kernel.new.replace("~x_mask", "~(x > 0)"))
    assert late.new != kernel.new and checker.check(late).outcome is Outcome.REJECTED


def test_chain_without_else_writes_by_index(checker):
    """Without an else the loop indexes `y` only where a branch runs, so `y` may be shorter than
    `x`: a mask over `y[:len(x)]` raises there, positions from `nonzero()` do not. Fresh names
    avoid a clash with `y_mask1`, and comments are kept."""
    source = textwrap.dedent(
        """
        import torch
        def f(x: torch.Tensor, y: torch.Tensor, y_mask1: int):
            x = x.view(-1)
            y = y.view(-1)
            for i in range(len(x)):
                if x[i] > 1:  # big
                    y[i] = x[i] * 0.5
                elif x[i] < -1:
                    y[i] = x[i] + 1
        """
    )
    candidates = _proposal(source).candidates
    # the mask forms are not offered at all: the checker only now and then draws a `y` whose
    # missing rows the conditions all skip
    assert candidates and all("nonzero()" in c.kernel.new for c in candidates)
    result = rewrite(source.encode(), [ElementwiseBranch], checker)
    assert result.source.decode().endswith(
        "    # big\n"
        "    y_mask1_2 = x > 1\n"
        "    y_mask2 = ~y_mask1_2 & (x < -1)\n"
        "    y_value2 = x + 1\n"
        "    y[y_mask1_2.nonzero().squeeze(1)] = (x * 0.5)[y_mask1_2].to(y.dtype)\n"
        "    y[y_mask2.nonzero().squeeze(1)] = y_value2[y_mask2].to(y.dtype)\n"
    )
    assert candidates[-1].kernel.new in result.source.decode().replace("\n    ", "\n")


NARROWING = """
import torch
def f(x: torch.Tensor, z: torch.Tensor, w: torch.Tensor, y: torch.Tensor):
    x = x.view(-1)
    z = z.view(-1)
    w = w.view(-1)
    y = y.view(-1)
    for i in range(len(x)):
        if x[i] > 0 and z[i] != 0 and w[i] < 1:
            y[i] = z[i] * 2
"""


def test_and_chain_narrows_the_positions_test_by_test(checker):
    """`z` and `w` are read only where the tests before them hold, so either may be shorter than
    `x`: the rewrite keeps the positions of `x > 0`, reads `z` there, then `w` at what is left.
    Reading a later test over the whole of `x`'s positions (as `&` would) is refuted on a shorter
    array, and so is a value written without the cast `y[i] = v` makes."""
    (candidate,) = _proposal(NARROWING).candidates
    new = candidate.kernel.new
    assert "y_rows = (x > 0).nonzero().squeeze(1)\n" in new
    assert "    y_rows = y_rows[z[y_rows] != 0]\n" in new
    assert "    y_rows = y_rows[w[y_rows] < 1]\n" in new
    assert "    y[y_rows] = (z[y_rows] * 2).to(y.dtype)\n" in new
    assert checker.check(candidate.kernel).ok
    eager = dataclasses.replace(candidate.kernel, new=(
        "y_rows = ((x > 0) & (z[:len(x)] != 0) & (w[:len(x)] < 1)).nonzero().squeeze(1)\n"
        + new[new.index("if y_rows.numel() > 0:\n    y[y_rows]"):]
    ))
    verdict = checker.check(eager)
    assert verdict.outcome is Outcome.REJECTED and "raise" in verdict.counterexample.detail
    uncast = dataclasses.replace(candidate.kernel, new=new.replace(".to(y.dtype)", ""))
    assert checker.check(uncast).outcome is Outcome.REJECTED


def test_a_later_test_used_bare_is_narrowed_by_its_truth() -> None:
    """`and -z[i]` tests the truth of `-z[i]`: indexing the kept positions with it as it is
    would take its values as positions (a review found the form doing so)."""
    (candidate,) = _proposal(NARROWING.replace("z[i] != 0 and w[i] < 1", "-z[i]")).candidates
    assert "    y_rows = y_rows[(-z[y_rows]).bool()]\n" in candidate.kernel.new


@pytest.mark.parametrize("condition", [
    "x[i] > 0 or z[i] != 0",  # `or` asks `z` where the first test fails
    "x[i] > 0 and (z[i] != 0 or w[i] < 1)",  # `w` only where `z[i] == 0`
    "x[i] > 0 and not z[i] != 0",
    "x[i] > 0 and 0 < z[i] < w[i]",  # `w` only where `0 < z[i]`
    "z[i] != 0 and x[i] > 0",  # `z` read at every step but not measured: may be shorter still
])
def test_and_chain_is_not_narrowed_past_what_it_models(condition):
    source = NARROWING.replace("x[i] > 0 and z[i] != 0 and w[i] < 1", condition)
    proposal = _proposal(source)
    assert not any("_rows" in c.kernel.new for c in proposal.candidates)
    if "or" in condition or "not" in condition or "<" in condition.split("and")[-1]:
        assert proposal.skip_reason is not None and "read only where a condition holds" in proposal.skip_reason


def test_masked_sum_adds_in_the_dtype_each_step_adds_in(checker):
    """`total += v[i]` adds two 0-d tensors in the dtype they promote to and casts the sum back:
    the batch sums in that dtype. Summed in `v`'s own dtype, int64 values near 2**63 wrap where a
    float32 total does not; cast to `total`'s dtype first, float32 values overflow a float16 total
    where the loop's float32 steps do not -- values the checker's draws do not reach, so both
    forms are only fallbacks (for a value that is not an array's element)."""
    promoted, plain, cast = _proposal(MASKED_SUM).candidates
    assert "total += v[keep[:len(v)].bool()].to(torch.promote_types(v.dtype, total.dtype)).sum()" in promoted.kernel.new
    assert "total += v[keep[:len(v)].bool()].sum()" in plain.kernel.new
    assert "total += v[keep[:len(v)].bool()].to(total.dtype).sum()" in cast.kernel.new
    assert checker.check(promoted.kernel).ok

    def total(code: str, v: torch.Tensor, start: str) -> float:
        space = {"torch": torch, "v": v, "keep": torch.ones(len(v), dtype=torch.bool)}
        exec(code.replace("total = torch.zeros(())", f"total = {start}"), space)  # noqa: S102 - our kernels
        return float(space["total"])

    for v, start in ((torch.tensor([2**62, 2**62]), "torch.zeros(())"),
                     (torch.tensor([70000.0]), "torch.full((), -60000.0, dtype=torch.float16)")):
        loop = total(promoted.kernel.old, v, start)
        assert total(promoted.kernel.new, v, start) == loop
        wrong = plain if v.dtype == torch.int64 else cast
        assert total(wrong.kernel.new, v, start) != loop


def test_clamp_chain_with_parameter_bounds_is_not_clamp(checker):
    """`x.clamp(lo, hi)` gives hi everywhere when lo > hi; the loop does not."""
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor, y: torch.Tensor, lo, hi):
            for i in range(len(x)):
                if x[i] > hi:
                    y[i] = hi
                elif x[i] < lo:
                    y[i] = lo
                else:
                    y[i] = x[i]
        """
    )
    first, *rest = proposal.candidates
    assert "clamp(lo, hi)" in first.kernel.new
    assert checker.check(first.kernel).outcome is Outcome.REJECTED
    assert any("torch.where" in c.kernel.new for c in rest)


def test_old_code_is_in_the_kernel_verbatim():
    proposal = _proposal(MASKED_SUM)
    kernel = proposal.candidates[0].kernel
    assert kernel.old == "total = torch.zeros(())\nfor i in range(len(v)):\n    if keep[i]:\n        total += v[i]\n"
    assert kernel.outputs == ("total",)


@pytest.mark.parametrize(
    "body",
    [
        "if x[i] > 0:\n    y[i] = x[i]\n    print(i)",  # two statements in a branch
        "if x[i] > 0:\n    y[i] = x[i]\nelse:\n    z[i] = x[i]",  # two targets
        "if x[i] > 0:\n    y[i] = x[i + 1]",  # reads another element
        "if x[i] > y[0]:\n    y[i] = x[i]",  # reads an element the loop writes
        "if x[i] > 0:\n    y[i] = x[i].item()",  # not element-wise
    ],
)
def test_not_this_pattern(body):
    source = "import torch\ndef f(x: torch.Tensor, y: torch.Tensor, z: torch.Tensor):\n" \
        "    for i in range(len(x)):\n" + textwrap.indent(body, "        ") + "\n"
    assert list(ElementwiseBranch().propose(MetadataWrapper(cst.parse_module(source)))) == []


def test_explain_has_ruff_sections():
    assert_ruff_sections(ElementwiseBranch)


def test_might_match():
    assert ElementwiseBranch.might_match(b"for i in range(n):\n    if x[i]:\n        y[i] = 0\n")
    assert not ElementwiseBranch.might_match(b"x = 1\n")


_READS = """
    import torch
    class Copy:
        def run(self, target, align):
            target = target.view(-1)
            align = align.view(-1)
            out = target.clone()
            for i in range(out.size(0)):
                if {test}:
                    out[i] = {value}
            self.log(out)
            return out
    """


@pytest.mark.parametrize("test, value", [
    ("out[i] == 0 and align.data[i] != 0", "align.data[i] + len(self.vocab)"),
    ("align.data[i] != 0", "align.data[i] * 2"),
    ("align[i] > 0", "align[i] + self.offset"),
])
def test_arrays_reached_from_a_name_are_read_as_elements_and_the_object_becomes_inputs(test: str, value: str):
    # `.data[i]`, `len(self.vocab)` and `self.offset` are one array and one number for every step;
    # `out` is made just before the loop, so what `self.log(out)` links to the object afterwards
    # is no sharing when the loop runs; the kernel reads `self`'s attributes as inputs of their own
    from torchfix.pipeline import propose_all

    wrapper = MetadataWrapper(cst.parse_module(textwrap.dedent(_READS.format(test=test, value=value))))
    (proposal,) = [p for p in propose_all([ElementwiseBranch], wrapper)]
    assert proposal.candidates, proposal.skip_reason
    kernel = proposal.candidates[0].kernel
    assert "self" not in {s.name for s in kernel.inputs} and "self." not in kernel.old + kernel.new, kernel.old


@pytest.mark.parametrize("test, value", [
    ("out.data[i] > 0", "0"),          # another view of the target (`out.T[i]` is a column)
    ("out.T[i] > 0", "0"),
    ("align[i] > 0", "len(out[i])"),   # a length of an element is no number for every step
    ("align[i] > 0", "len(out)"),
])
def test_reads_through_the_target_or_lengths_of_elements_are_not_this_pattern(test: str, value: str):
    source = textwrap.dedent(_READS.format(test=test, value=value))
    assert not list(ElementwiseBranch().propose(MetadataWrapper(cst.parse_module(source))))


def test_a_target_not_made_just_before_the_loop_keeps_the_sharing_check():
    # `self.keep(out)` between the copy and the loop may leave `out` in the object, which the
    # loop reads: the whole object counts as sharing with it
    from torchfix.pipeline import propose_all

    source = textwrap.dedent(_READS.format(test="align[i] > 0", value="align[i] + self.offset")).replace(
        "out = target.clone()\n", "out = target.clone()\n        self.keep(out)\n")
    (proposal,) = propose_all([ElementwiseBranch], MetadataWrapper(cst.parse_module(source)))
    assert not proposal.candidates and "may be views of one array" in proposal.skip_reason
