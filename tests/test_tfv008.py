"""TFV008: corpus cases (before -> after, traps unchanged), the rule's own examples, and the
checker's refutations of segment ids that look right and are not."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
from conftest import corpus_cases
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, propose

from torchfix.codemods.tfv008_segment_ids import SegmentIds
from torchfix.equivalence.kernel import Outcome

CASES = corpus_cases("TFV008")

DETR = """
import torch

def batch_index(indices):
    batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    return batch_idx
"""


def _kernel(source: str = DETR):
    (proposal,) = propose(SegmentIds, textwrap.dedent(source))
    assert proposal.skip_reason is None, proposal.skip_reason
    (candidate,) = proposal.candidates
    return candidate.kernel


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 3 and len(traps) >= 6
    for case in positives:
        assert case.with_name(case.stem + ".expected.py").exists(), case.name


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [SegmentIds], checker)


@pytest.mark.parametrize("example", SegmentIds.examples, ids=[e.id for e in SegmentIds.examples])
def test_rule_examples(example, checker):
    assert_rule_example(example, [SegmentIds], checker)


def test_docs_have_the_ruff_sections():
    assert_ruff_sections(SegmentIds)


def test_the_kernel_builds_pairs_and_walks_them_once():
    kernel = _kernel()
    assert kernel.old.startswith("indices = [(indices_part,) * 2 for indices_part in indices]\n")
    assert "batch_idx_parts = [src for src, _ in indices]" in kernel.new
    (spec,) = kernel.inputs
    assert spec.per_step and spec.ranks == (1, 2, 3)


@pytest.mark.parametrize(
    "wrong",
    [
        # every part as long as the first: parts have lengths of their own
        "batch_idx = torch.arange(len(indices)).repeat_interleave(len(indices[0][0]))\n",
        # int64 whatever the parts hold
        "batch_idx_parts = [src for src, _ in indices]\nbatch_idx = torch.arange(len(batch_idx_parts)).repeat_interleave("
        "torch.tensor([len(p) for p in batch_idx_parts]))\n",
        # one dimension whatever the parts' rank
        "batch_idx_parts = [src for src, _ in indices]\nbatch_idx = torch.arange(len(batch_idx_parts)).repeat_interleave("
        "torch.tensor([len(p) for p in batch_idx_parts])).to(batch_idx_parts[0].dtype)\n",
        # counted from 1
        "batch_idx = torch.cat([torch.full_like(src, i + 1) for i, (src, _) in enumerate(indices)])\n",
    ],
)
def test_segment_ids_that_look_right_are_refuted(checker, wrong: str):
    kernel = _kernel()
    prelude = kernel.old.splitlines(keepends=True)[0]
    verdict = checker.check(dataclasses.replace(kernel, new=prelude + wrong))
    assert verdict.outcome is Outcome.REJECTED, verdict.reason
    assert verdict.counterexample is not None


@pytest.mark.parametrize(
    "statement",
    [
        "ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)], 1)",
        "ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)], out=buffer)",
        "ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(self.parts)])",
        "ids = torch.cat([torch.full_like(buffer, i) for i, p in enumerate(parts)])",
        "ids = torch.cat([torch.full_like(p, i, dtype=p.dtype) for i, p in enumerate(parts)])",
        "ids = torch.cat([torch.full_like(p, i) for i, *p in enumerate(parts)])",
        "ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts) for q in p])",
        "ids = torch.cat([torch.full_like(p, i, device='cpu') for i, p in enumerate(parts)])",
        "ids, other = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)]), 1",
        "parts = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])",
        "return torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])",
    ],
)
def test_what_is_not_the_pattern_is_left_alone(statement: str):
    source = f"import torch\n\ndef f(self, parts, buffer):\n    {statement}\n"
    assert propose(SegmentIds, source) == []


def test_a_shadowed_enumerate_or_torch_is_left_alone():
    for source in (
        "import torch\nenumerate = reversed\n\ndef f(parts):\n    ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])\n",
        "import torch\n\ndef f(parts):\n    torch = other\n    ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])\n",
    ):
        assert propose(SegmentIds, source) == []


def test_fills_shaped_by_an_expression_of_the_item_and_its_position_are_verified(checker):
    kernel = _kernel("""
        import torch

        def tails(parts):
            ids = torch.cat([torch.full_like(p[i:], i) for i, p in enumerate(parts)])
            return ids
        """)
    assert "ids_parts = [p[i:] for i, p in enumerate(parts)]" in kernel.new
    assert checker.check(kernel).outcome is Outcome.VERIFIED
