"""TFV001: corpus cases (before -> after, traps unchanged), the rule's examples, the ladder."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from conftest import corpus_cases
from libcst.metadata import MetadataWrapper
from rewrite_helper import Outcomes
from rewrite_helper import rewrite as _rewrite

from torchfix.codemods.tfv001_loop_over_batch import LoopOverBatch
from torchfix.equivalence.kernel import Outcome, Verdict

CASES = corpus_cases("TFV001")


class _HonourUnverifiable:
    """The checker as the pipeline uses it: a candidate marked ``unverifiable`` is never checked
    (the helper does not know the field yet), it ends the proposal as UNVERIFIED."""

    def __init__(self, checker) -> None:  # noqa: ANN001
        self.checker = checker
        self.pending: dict[str, str] = {}

    def check(self, kernel):  # noqa: ANN001, ANN201
        if kernel.key() in self.pending:
            return Verdict(Outcome.UNVERIFIED, self.pending[kernel.key()])
        return self.checker.check(kernel)


def rewrite(source: bytes, checker) -> Outcomes:  # noqa: ANN001
    wrapped = _HonourUnverifiable(checker)
    for proposal in LoopOverBatch().propose(MetadataWrapper(cst.parse_module(source))):
        for candidate in proposal.candidates:
            if candidate.unverifiable:
                wrapped.pending[candidate.kernel.key()] = candidate.unverifiable
    return _rewrite(source, [LoopOverBatch], wrapped)


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 6


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    before = case.read_bytes()
    assert before.startswith(b"# ")
    result = rewrite(before, checker)
    if case.name.startswith("trap_"):
        assert result.source == before, "a trap was rewritten"
        assert all(outcome is not Outcome.VERIFIED for _, outcome, _ in result.proposals)
    else:
        assert b"# bench: " in before
        expected = case.with_name(case.stem + ".expected.py").read_bytes()
        assert result.source == expected
        if expected == before:
            # the checker refutes every rung of the ladder here: it must say so with a counterexample
            assert any(o is Outcome.REJECTED and v and v.counterexample for _, o, v in result.proposals)
        again = rewrite(result.source, checker)
        assert again.source == result.source


@pytest.mark.parametrize("example", LoopOverBatch.examples, ids=[e.id for e in LoopOverBatch.examples])
def test_rule_examples(example, checker):
    before, after = example.dedented()
    result = rewrite(before.encode(), checker)
    assert result.source.decode() == (after if after is not None else before)


def _proposals(source: str):
    return list(LoopOverBatch().propose(MetadataWrapper(cst.parse_module(textwrap.dedent(source)))))


def test_ladder_falls_back_to_vmap_when_ranks_are_not_pinned(checker):
    """`(x * w).sum(dim=-1)` is right only for vector samples; with x of any rank the checker
    refutes it and the ladder emits `torch.vmap` of the loop body."""
    (proposal,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            return torch.stack([(x[i] * w).sum() for i in range(len(x))])
        """
    )
    first, *rest = proposal.candidates
    assert first.kernel.new.strip().endswith("(x * w).sum(dim=-1)")
    refuted = checker.check(first.kernel)
    assert refuted.outcome is Outcome.REJECTED and refuted.counterexample is not None
    chosen = next(c for c in rest if checker.check(c.kernel).ok)
    assert "torch.vmap(lambda xi: (xi * w).sum())(x)" in chosen.kernel.new


def test_pinned_ranks_keep_the_batched_form(checker):
    source = """
    import torch
    def f(x: torch.Tensor, w: torch.Tensor):
        n, d = x.shape
        return torch.stack([x[i].sum() * 2.0 for i in range(n)])
    """
    text = rewrite(textwrap.dedent(source).encode(), checker).source.decode()
    assert "return x[:n].sum(dim=-1) * 2.0" in text


def test_model_per_sample_is_unverified(checker):
    source = textwrap.dedent(
        """
        import torch
        def f(model, x: torch.Tensor):
            out = torch.zeros(x.shape[0], 4)
            for i in range(x.shape[0]):
                out[i] = model(x[i])
            return out
        """
    )
    (proposal,) = _proposals(source)
    assert proposal.candidates and all(c.unverifiable for c in proposal.candidates)
    assert "assumes `model` treats samples independently" in proposal.candidates[0].unverifiable
    result = rewrite(source.encode(), checker)
    assert result.source == source.encode()
    assert [o for _, o, _ in result.proposals] == [Outcome.UNVERIFIED]


@pytest.mark.parametrize(
    "body",
    [
        "h = torch.tanh(h + x[i])\n            out[i] = h",
        "out[i] = out[i - 1] + x[i]",
        "out[i] = x[i].sum()\n            if out[i] > 0:\n                break",
        "out[i] = x[i] * i",
    ],
    ids=["recurrence", "reads-previous-row", "break", "index-used-as-value"],
)
def test_sequential_or_index_dependent_loops_are_silent(body):
    source = f"""
    import torch
    def f(x: torch.Tensor, h):
        out = torch.zeros(x.shape[0])
        for i in range(x.shape[0]):
            {body}
        return out
    """
    assert "for i in range" in textwrap.dedent(source) and _proposals(source) == []


def test_list_used_after_the_stack_stays_a_list():
    source = """
    import torch
    def f(x: torch.Tensor):
        rows = []
        for r in x:
            rows.append(r * 2)
        y = torch.stack(rows)
        return y, rows
    """
    assert _proposals(source) == []


def test_explain_has_ruff_sections():
    text = LoopOverBatch.explain()
    for section in ("What it does", "Why is this bad?", "Example", "Use instead", "When it stays silent"):
        assert f"## {section}" in text


def test_loop_variable_read_after_the_loop_stays():
    source = """
    import torch
    def f(x: torch.Tensor):
        out = torch.zeros(x.shape[0])
        for i in range(x.shape[0]):
            out[i] = x[i].sum()
        return out, i
    """
    assert _proposals(source) == []


def test_item_inside_the_body_is_left_to_other_rules():
    source = """
    import torch
    def f(x: torch.Tensor):
        return torch.stack([torch.tensor(x[i].item()) for i in range(len(x))])
    """
    assert _proposals(source) == []
