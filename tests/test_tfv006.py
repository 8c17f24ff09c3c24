"""TFV006: corpus cases (before -> after, traps unchanged), the rule's own examples, and the
ladder's refutations (bincount on negative indices, `out[idx] += src` on repeated indices)."""

from __future__ import annotations

import ast
import dataclasses
import textwrap

import pytest
import torch
from conftest import corpus_cases
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, propose, rewrite

from torchfix.codemods.tfv006_index_accumulation import IndexAccumulation
from torchfix.equivalence.kernel import Kind, Outcome

CASES = corpus_cases("TFV006")


@pytest.fixture(scope="module")
def checker():
    from torchfix.equivalence.checker import Checker, CheckSettings

    with Checker(CheckSettings(examples=60)) as instance:
        yield instance


def _proposals(source: str):
    return propose(IndexAccumulation, textwrap.dedent(source))


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 6
    for case in positives:
        assert case.with_name(case.stem + ".expected.py").exists(), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [IndexAccumulation], checker)


@pytest.mark.parametrize("example", IndexAccumulation.examples, ids=[e.id for e in IndexAccumulation.examples])
def test_rule_examples(example, checker):
    assert_rule_example(example, [IndexAccumulation], checker)


SCATTER = """
import torch
def f(idx: torch.Tensor, src: torch.Tensor):
    idx = idx.view(-1)
    src = src.view(-1)
    out = torch.zeros(6)
    for i in range(len(idx)):
        out[idx[i]] += src[i]
    return out
"""


def _rendered_ints(counterexample, name: str) -> list[int]:
    text = dict(counterexample.inputs)[name]
    return ast.literal_eval(text.split("torch.tensor(", 1)[1].split(", dtype")[0])


def _assert_duplicate_counterexample(verdict):
    assert verdict.outcome is Outcome.REJECTED
    idx = _rendered_ints(verdict.counterexample, "idx")
    assert len(idx) > len(set(idx)), verdict.counterexample.render()


def test_checker_rejects_plain_advanced_index_increment(checker):
    """`hist[idx] += 1` adds 1 once per distinct position; the loop counts every repeat."""
    (proposal,) = _proposals(SCATTER.replace("+= src[i]", "+= 1"))
    kernel = dataclasses.replace(proposal.candidates[0].kernel, new="out[idx] += 1\n")
    _assert_duplicate_counterexample(checker.check(kernel))


def test_checker_rejects_plain_advanced_index_add():
    """`out[idx] += src` adds a repeated position once; the loop adds it every time.

    At 60 examples the checker finds this on some seeds only: index values are drawn in
    [-6, 6] whatever the sizes, so about two thirds of the examples index out of range and
    are discarded, and a repeat with non-zero values at it is rarer still. 200 examples find
    it on every seed tried (0-3)."""
    from torchfix.equivalence.checker import Checker, CheckSettings

    (proposal,) = _proposals(SCATTER)
    kernel = proposal.candidates[-1].kernel
    wrong = dataclasses.replace(kernel, new="out[idx] += src[:len(idx)]\n")
    with Checker(CheckSettings(examples=200)) as strict:
        _assert_duplicate_counterexample(strict.check(wrong))
        # ... while the accumulating form of the same kernel passes
        assert "accumulate=True" in kernel.new and strict.check(kernel).ok


def test_a_weighted_scatter_of_wider_weights_is_judged_as_a_sum_of_rounded_addends(checker):
    """The loop adds a float64 weight into a float32 bin in double and rounds the sum; the rewrite
    rounds the weight to float32 first. The cancellation sweep shows the two apart
    (1.00000002e20 - 1e20); within each addend's rounding, on those examples only, they agree."""
    (proposal,) = _proposals(SCATTER)
    kernel = proposal.candidates[-1].kernel
    assert "accumulate=True" in kernel.new and kernel.rounds_addends == ("out", "src")
    assert not kernel.reorders_float_reduction  # (weights of the bins' own dtype: compared exactly)
    assert checker.check(kernel).ok
    strict = checker.check(dataclasses.replace(kernel, rounds_addends=None))
    assert strict.outcome is Outcome.REJECTED and "float64" in strict.reason


def test_bincount_refuted_by_negative_index(checker):
    (proposal,) = _proposals(
        """
        import torch
        def f(labels: torch.Tensor):
            labels = labels.view(-1)
            hist = torch.zeros(5)
            for i in range(len(labels)):
                hist[labels[i]] += 1
            return hist
        """
    )
    first, *rest = proposal.candidates
    assert "bincount" in first.kernel.new
    verdict = checker.check(first.kernel)
    assert verdict.outcome is Outcome.REJECTED
    assert "index_put_" in rest[0].kernel.new and checker.check(rest[0].kernel).ok


def test_range_n_plain_slice_refuted_then_clamped(checker):
    (proposal,) = _proposals(
        """
        import torch
        def f(labels: torch.Tensor, n: int):
            labels = labels.view(-1)
            hist = torch.zeros(5)
            for i in range(n):
                hist[labels[i]] += 1.0
            return hist
        """
    )
    plain = [c for c in proposal.candidates if "max(n, 0)" not in c.kernel.new]
    clamped = [c for c in proposal.candidates if "max(n, 0)" in c.kernel.new]
    verdict = checker.check(plain[-1].kernel)
    assert verdict.outcome is Outcome.REJECTED and "n = -" in verdict.counterexample.render()
    assert checker.check(clamped[-1].kernel).ok


@pytest.mark.parametrize(
    "body",
    [
        "out[idx[i]] = src[i]",  # repeated positions: last write wins
        "out[idx[i]] -= src[i]",
        "out[idx[i] // 2] += 1",
        "out[idx[i]] += out[i]",
        "out[idx[i]] *= 2",
        "out[i] += src[i]",  # per-sample loop, not a scatter
    ],
)
def test_not_matched(body):
    source = f"""
    import torch
    def f(idx: torch.Tensor, src: torch.Tensor):
        out = torch.zeros(6)
        for i in range(len(idx)):
            {body}
        return out
    """
    assert _proposals(source) == []


def test_kernel_declares_mutated_target_as_input():
    (proposal,) = _proposals(SCATTER)
    kernel = proposal.candidates[-1].kernel
    specs = {s.name: s for s in kernel.inputs}
    # written in place: an input the checker compares after the run, not an output
    assert kernel.outputs == () and specs["out"].kind is Kind.TENSOR and not specs["out"].index
    assert specs["idx"].index and specs["idx"].ranks == (1,)  # `idx = idx.view(-1)` pins it
    assert "for i in range(len(idx)):\n    out[idx[i]] += src[i]\n" == kernel.old


def test_index_tensors_of_unpinned_rank_are_drawn_at_every_rank(checker):
    """Nothing pins `idx`: `idx[i]` may be a row of positions, which the loop writes once each per
    step -- a repeated one too -- where `accumulate=True` counts it twice. The checker draws rows
    and refutes every rung."""
    source = SCATTER.replace("    idx = idx.view(-1)\n", "").replace("+= src[i]", "+= 1")
    (proposal,) = _proposals(source)
    assert all(2 in {s.name: s for s in c.kernel.inputs}["idx"].ranks for c in proposal.candidates)
    result = rewrite(source.encode(), [IndexAccumulation], checker)
    assert result.source == source.encode()
    assert [o for _, o, _ in result.proposals] == [Outcome.REJECTED]
    old_loop = torch.tensor([[1, 1], [0, 2]])
    hist = torch.zeros(3)
    for row in old_loop:
        hist[row] += 1
    batched = torch.zeros(3).index_put_((old_loop,), torch.ones(()), accumulate=True)
    assert hist.tolist() == [1, 1, 1] and batched.tolist() == [1, 2, 1]


def test_explain_has_ruff_sections():
    assert_ruff_sections(IndexAccumulation)
