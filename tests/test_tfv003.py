"""TFV003: corpus cases (before -> after, traps unchanged), the rule's own examples, and kernels
the checker must refute."""

from __future__ import annotations

import textwrap

import pytest
from conftest import corpus_cases
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, rewrite, propose

from torchfix.codemods.tfv003_cat_in_loop import CatInLoop
from torchfix.equivalence.kernel import Kernel, Outcome

CASES = corpus_cases("TFV003")


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 6
    for case in CASES:
        assert case.read_text().startswith("# "), f"{case.name}: the first line names the scenario"


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [CatInLoop], checker, quiet_second_pass=True)


@pytest.mark.parametrize("example", CatInLoop.examples, ids=[e.id for e in CatInLoop.examples])
def test_rule_examples(example, checker):
    assert_rule_example(example, [CatInLoop], checker)


def _proposals(source: str):
    return propose(CatInLoop, textwrap.dedent(source))


def _kernel(source: str) -> Kernel:
    (proposal,) = _proposals(source)
    assert proposal.skip_reason is None
    (candidate,) = proposal.candidates
    return candidate.kernel


_GROW = """
import torch
def f(x: torch.Tensor):
    out = torch.empty(0, 3)
    for i in range(len(x)):
        out = torch.cat([out, x[i:i + 1]], dim=0)
    return out
"""


def test_kernel_old_is_the_original_code_and_the_rewrite_verifies(checker):
    kernel = _kernel(_GROW)
    assert "out = torch.cat([out, x[i:i + 1]], dim=0)\n" in kernel.old
    assert kernel.new.endswith("out = torch.cat([out, *out_parts], dim=0)\n")
    assert kernel.outputs == ("out",)
    assert checker.check(kernel).ok


def test_checker_refutes_dropping_the_initial_value(checker):
    """`torch.cat(parts)` raises when the loop runs zero times, and loses the start's dtype."""
    kernel = _kernel(_GROW)
    wrong = Kernel(
        old=kernel.old,
        new=kernel.new.replace("torch.cat([out, *out_parts], dim=0)", "torch.cat(out_parts, dim=0)"),
        inputs=kernel.inputs,
        outputs=kernel.outputs,
        modules=kernel.modules,
    )
    assert wrong.new != kernel.new
    verdict = checker.check(wrong)
    assert verdict.outcome is Outcome.REJECTED


def test_checker_refutes_the_wrong_dim(checker):
    kernel = _kernel(
        """
        import torch
        def f(x, n):
            feats = torch.ones(n, 1)
            for k in range(3):
                feats = torch.cat([feats, x * k], dim=1)
            return feats
        """
    )
    assert kernel.new.endswith("feats = torch.cat([feats, *feats_parts], dim=1)\n")
    assert checker.check(kernel).ok
    wrong = Kernel(
        old=kernel.old,
        new=kernel.new.replace("*feats_parts], dim=1)", "*feats_parts], dim=0)"),
        inputs=kernel.inputs,
        outputs=kernel.outputs,
        modules=kernel.modules,
    )
    assert checker.check(wrong).outcome is Outcome.REJECTED


def test_none_form_keeps_none_for_zero_steps_and_refutes_a_missing_guard(checker):
    kernel = _kernel(
        """
        import torch
        def f(chunks):
            out = None
            for c in chunks:
                if out is None:
                    out = c
                else:
                    out = torch.cat([out, c])
            return out
        """
    )
    assert kernel.new.endswith("out = out_parts[0] if len(out_parts) == 1 else torch.cat(out_parts) if out_parts else None\n")
    assert checker.check(kernel).ok
    wrong = Kernel(
        old=kernel.old,
        new=kernel.new.replace(" if out_parts else None", ""),
        inputs=kernel.inputs,
        outputs=kernel.outputs,
        modules=kernel.modules,
    )
    assert checker.check(wrong).outcome is Outcome.REJECTED


def test_random_pieces_keep_their_order(checker):
    source = """
    import torch
    def noise(n, d):
        out = torch.empty(0, d)
        for _ in range(n):
            out = torch.cat([out, torch.randn(1, d)])
        return out
    """
    kernel = _kernel(source)
    assert kernel.old.startswith("torch.manual_seed(0)\n")
    result = rewrite(textwrap.dedent(source).encode(), [CatInLoop], checker)
    assert "out_parts.append(torch.randn(1, d))" in result.source.decode()


@pytest.mark.parametrize(
    "body, reason",
    [
        ("out = torch.cat([out, y])\n        print(len(out))", "elsewhere inside the loop"),
        ("out = torch.cat([out, y])\n        y.mul_(2)", "changed in place"),
        ("out = torch.cat([out, y])\n        if y.sum() < 0:\n            return None", "`return`"),
        ("out = torch.cat([out, y], dim=y.dim() - 1)", "change from step to step"),
    ],
    ids=["read", "in-place", "return", "step-dependent-dim"],
)
def test_preconditions_skip_with_a_reason(body, reason):
    source = f"""
import torch
def f(ys):
    out = torch.empty(0, 2)
    for y in ys:
        {body}
    return out
"""
    (proposal,) = _proposals(source)
    assert proposal.skip_reason is not None and reason in proposal.skip_reason
    assert not proposal.candidates


def test_other_concatenations_are_not_matches():
    assert not _proposals(
        """
        import torch
        def f(ys, base):
            for y in ys:
                z = torch.cat([base, y])
                w = torch.stack([y, y])
                h = torch.cat([y, base])
            return z, w, h
        """
    )


def test_explain_has_ruff_sections():
    assert_ruff_sections(CatInLoop)


_APPEND_FLAT = """
import numpy as np
def f(values):
    out = np.zeros((0,))
    for v in values:
        out = np.append(out, v)
    return out
"""


def test_np_append_without_axis_flattens_and_the_checker_refutes_forgetting_it(checker):
    """np.append ravels what it grows; a final concatenate along axis 0 would reject 2-D pieces."""
    kernel = _kernel(_APPEND_FLAT)
    assert kernel.new.endswith("out = np.concatenate([out, *out_parts], axis=None)\n")
    assert checker.check(kernel).ok
    wrong = Kernel(
        old=kernel.old, new=kernel.new.replace("axis=None", "axis=0"), inputs=kernel.inputs,
        outputs=kernel.outputs, modules=kernel.modules,
    )
    assert checker.check(wrong).outcome is Outcome.REJECTED


def test_np_append_axis_positional_becomes_the_concatenate_axis():
    source = _APPEND_FLAT.replace("np.append(out, v)", "np.append(out, v, 1)").replace("(0,)", "(2, 0)")
    assert _kernel(source).new.endswith("out = np.concatenate([out, *out_parts], axis=1)\n")


def test_one_name_grown_by_different_calls_is_left_alone():
    source = """
    import numpy as np
    def f(values, flag):
        out = np.zeros((0, 2))
        for v in values:
            if flag:
                out = np.append(out, v, axis=0)
            else:
                out = np.append(out, v)
        return out
    """
    (proposal,) = _proposals(source)
    assert proposal.skip_reason == "`out` grows by different calls in the loop"


def test_np_append_in_the_none_initial_form_is_not_matched():
    """`out = v` then np.append: the first piece is not flattened, the later ones are."""
    source = """
    import numpy as np
    def f(values):
        out = None
        for v in values:
            if out is None:
                out = v
            else:
                out = np.append(out, v)
        return out
    """
    assert _proposals(source) == []


def test_a_piece_filled_before_it_is_grown_is_fresh_only_if_allocated_each_step():
    fresh = """
    import numpy as np
    def f(values):
        out = np.zeros((0, 2))
        for v in values:
            row = np.zeros((1, 2))
            row[0, 0] = v
            out = np.append(out, row, axis=0)
        return out
    """
    assert _kernel(fresh).new.endswith("out = np.concatenate([out, *out_parts], axis=0)\n")
    shared = fresh.replace("        for v in values:\n            row = np.zeros((1, 2))\n", "        row = np.zeros((1, 2))\n        for v in values:\n")
    assert shared != fresh
    (proposal,) = _proposals(shared)
    assert proposal.skip_reason is not None and "changed in place" in proposal.skip_reason


def test_none_form_leaves_a_lone_piece_as_it_is(checker):
    """One step never concatenates: the loop leaves that piece itself, of any rank, along any
    dimension. A final `torch.cat` of the one piece would refuse a 0-d piece (or a 1-D one
    along dimension -2) that the loop returned."""
    kernel = _kernel(
        """
        import torch
        def f(rows):
            grid = None
            for r in rows:
                grid = r if grid is None else torch.cat((grid, r), -2)
            return grid
        """
    )
    assert checker.check(kernel).ok
    always_cat = Kernel(
        old=kernel.old,
        new=kernel.new.replace("out_parts[0] if len(grid_parts) == 1 else ", "").replace(
            "grid_parts[0] if len(grid_parts) == 1 else ", ""),
        inputs=kernel.inputs,
        outputs=kernel.outputs,
        modules=kernel.modules,
    )
    assert always_cat.new != kernel.new
    assert checker.check(always_cat).outcome is Outcome.REJECTED
