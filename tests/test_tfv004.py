"""TFV004: corpus cases (before -> after, traps unchanged) and the rule's own examples."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
from conftest import corpus_cases
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, rewrite

from torchfix.codemods.tfv004_item_accumulator import ItemAccumulator
from torchfix.equivalence.kernel import Kind, Outcome

CASES = corpus_cases("TFV004")


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 6


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [ItemAccumulator], checker)


@pytest.mark.parametrize("example", ItemAccumulator.examples, ids=[e.id for e in ItemAccumulator.examples])
def test_rule_examples(example, checker):
    assert_rule_example(example, [ItemAccumulator], checker)


def _single(source: str, checker):
    result = rewrite(textwrap.dedent(source).encode(), [ItemAccumulator], checker)
    return result


def test_range_n_ladder_rejects_plain_slice_then_clamps(checker):
    """`x[:n]` is wrong for negative n (the loop runs zero times): the checker must refute it and
    the ladder must fall back to `x[:max(n, 0)]`."""
    from libcst.metadata import MetadataWrapper
    import libcst as cst

    source = textwrap.dedent(
        """
        import torch
        def f(x: torch.Tensor, n):
            s = 0.0
            for i in range(n):
                s += x[i].item()
            return s
        """
    )
    (proposal,) = ItemAccumulator().propose(MetadataWrapper(cst.parse_module(source)))
    plain, *rest = proposal.candidates
    verdict = checker.check(plain.kernel)
    assert verdict.outcome is Outcome.REJECTED
    assert verdict.counterexample is not None and "n = -" in verdict.counterexample.render()
    assert any(checker.check(c.kernel).ok and "max(n, 0)" in c.kernel.new for c in rest)


def test_int_accumulator_keeps_int_type_for_empty_loader(checker):
    result = _single(
        """
        import torch
        def acc(model, loader):
            hits = 0
            for x, y in loader:
                hits += (model(x) == y).sum().item()
            return hits
        """,
        checker,
    )
    text = result.source.decode()
    assert "hits += (model(x) == y).sum()\n" in text and "hits = int(hits)" in text


def test_statement_with_other_reads_is_left_alone(checker):
    source = """
    import torch
    def f(x: torch.Tensor):
        t = 0.0
        for i in range(len(x)):
            t += x[i].item()
            print(t)
        return t
    """
    assert _single(source, checker).source == textwrap.dedent(source).encode()


def test_torch_import_added_when_missing(checker):
    result = _single(
        """
        from torch import Tensor
        def f(x: Tensor):
            t = 0.0
            for i in range(len(x)):
                t += x[i].item()
            return t
        """,
        checker,
    )
    text = result.source.decode()
    assert "\nimport torch\n" in text and "x.sum(dtype=torch.float64).item()" in text


def test_explain_has_ruff_sections():
    assert_ruff_sections(ItemAccumulator)


def _proposals(source: str):  # noqa: ANN202
    from libcst.metadata import MetadataWrapper
    import libcst as cst

    return list(ItemAccumulator().propose(MetadataWrapper(cst.parse_module(textwrap.dedent(source)))))


def test_int_of_python_numbers_is_no_device_sync():
    """Issue 17: `int(n * ratios[i])` over lists from sorted(...) is left alone, and the reason
    names the evidence -- it never asks to annotate a list."""
    (proposal,) = _proposals(
        """
        import torch

        def keep(sizes_by_name, names, ratio_list):
            sizes = sorted([sizes_by_name[name] for name in names])
            ratios = sorted(ratio_list)
            total = 0
            for i, n in enumerate(sizes):
                total += int(n * ratios[i])
            return total
        """
    )
    reason = proposal.skip_reason or ""
    assert not proposal.candidates and "device sync only when `n * ratios[i]` is a tensor" in reason
    assert "sorted(ratio_list)" in reason and "annotate" not in reason


def test_a_list_is_named_as_a_list_in_form_one_skips():
    (proposal,) = _proposals(
        """
        import torch

        def total(values):
            xs = sorted(values)
            s = 0.0
            for i in range(len(xs)):
                s += float(xs[i])
            return s
        """
    )
    assert proposal.skip_reason.startswith("`xs` is not a tensor (`sorted(values)` is a list)")
    assert "annotate" not in proposal.skip_reason


def test_form_two_kernels_carry_the_kinds_the_evidence_allows_and_are_speed_gated():
    (proposal,) = _proposals(
        """
        import torch

        def evaluate(model, loader):
            correct = 0
            for images, labels in loader:
                logits = model(images)
                correct += (logits.argmax(dim=1) == labels.long()).sum().item()
            return correct
        """
    )
    (candidate,) = proposal.candidates
    assert candidate.needs_measurement
    kinds = {spec.name: spec.allowed_kinds() for spec in candidate.kernel.inputs}
    # `.argmax` is an array method (tensors, ndarrays, NumPy scalars); `.long()` only tensors have
    assert kinds == {"labels": (Kind.TENSOR,), "logits": (Kind.TENSOR, Kind.NDARRAY, Kind.NUMPY_SCALAR)}


def test_an_unknown_per_step_value_is_explored_as_every_kind_and_a_kind_specific_bug_is_refuted(checker):
    """Dropping `.item()` keeps a one-element NumPy array where the comparison gave one, which
    int() rejects in NumPy 2: only the exploration of NumPy kinds finds it (corpus
    trap_numpy_scalar_scores)."""
    (proposal,) = _proposals(
        """
        def count(metric, batches, threshold):
            hits = 0
            for batch in batches:
                score = metric(batch)
                hits += (score > threshold).item()
            return hits
        """
    )
    (candidate,) = proposal.candidates
    assert all(Kind.NDARRAY in spec.allowed_kinds() for spec in candidate.kernel.inputs)
    verdict = checker.check(candidate.kernel)
    assert verdict.outcome is Outcome.REJECTED, verdict.reason
    # a NumPy comparison result with one element, which int() rejects: never a tensor
    assert "numpy" in verdict.reason or "ndarray" in verdict.reason
    assert "TypeError" in verdict.counterexample.new


def test_item_of_a_value_of_unknown_kind_sums_as_a_tensor_of_it_and_the_tensor_only_form_is_refuted(checker):
    """`loss` from a function the module cannot see into may be a tensor, an ndarray or a NumPy
    scalar (`.item()` works on all three): `torch.as_tensor(loss)` takes each of them, while
    `loss.detach()` exists only on tensors -- the checker's NumPy kinds refute that form."""
    (proposal,) = _proposals(
        """
        import torch

        def evaluate(model, loader, compute_loss):
            total = 0.0
            for images, targets in loader:
                loss = compute_loss(model(images), targets)
                total += loss.item()
            return total
        """
    )
    (candidate,) = proposal.candidates
    assert "total += torch.as_tensor(loss).detach().double()" in candidate.kernel.new
    (loss,) = [spec for spec in candidate.kernel.inputs if spec.name == "loss"]
    assert set(loss.allowed_kinds()) == {Kind.TENSOR, Kind.NDARRAY, Kind.NUMPY_SCALAR}
    verdict = checker.check(candidate.kernel)
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason
    tensor_only = dataclasses.replace(
        candidate.kernel, new=candidate.kernel.new.replace("torch.as_tensor(loss)", "loss")
    )
    refuted = checker.check(tensor_only)
    assert refuted.outcome is Outcome.REJECTED, refuted.reason
    assert "AttributeError" in refuted.counterexample.new
    # without the conversion after the loop, a tensor comes out where the loop gave a float
    unconverted = dataclasses.replace(candidate.kernel, new=candidate.kernel.new.replace("total = float(total)\n", ""))
    assert checker.check(unconverted).outcome is Outcome.REJECTED


def test_item_of_a_value_that_may_be_a_python_number_still_asks_for_a_tensor():
    """`float(t)` converts Python numbers too (no `.item()` to narrow the kinds): it stays."""
    (proposal,) = _proposals(
        """
        import torch

        def evaluate(model, loader, compute_loss):
            total = 0.0
            for images, targets in loader:
                loss = compute_loss(model(images), targets)
                total += float(loss)
            return total
        """
    )
    assert proposal.skip_reason is not None and not proposal.candidates
