"""TFV002: corpus cases (before -> after, traps unchanged), the rule's own examples, and the
places where the checker has to pick the right rung of the candidate ladder."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from conftest import corpus_cases
from libcst.metadata import MetadataWrapper
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, rewrite

from torchfix.codemods.tfv002_comprehension import ComprehensionOverTensor
from torchfix.equivalence.kernel import InputSpec, Kernel, Outcome

CASES = corpus_cases("TFV002")


@pytest.fixture(scope="module", autouse=True)
def _primed(checker):
    """Work around a checker issue: ``torch.tensor(<list>)`` inside a kernel fails with an
    internal assert until the worker process has built a tensor from a list outside the
    restricted namespace (which hypothesis's input generation does). Check one trivial kernel
    first so the order of the tests does not matter."""
    checker.check(Kernel(old="result = t + 0\n", new="result = t + 0\n", inputs=(InputSpec("t"),), outputs=("result",)))


def test_corpus_has_enough_cases():
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 6


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker):
    assert_corpus_case(case, [ComprehensionOverTensor], checker)


@pytest.mark.parametrize(
    "example", ComprehensionOverTensor.examples, ids=[e.id for e in ComprehensionOverTensor.examples]
)
def test_rule_examples(example, checker):
    assert_rule_example(example, [ComprehensionOverTensor], checker)


def _proposal(source: str):
    (proposal,) = ComprehensionOverTensor().propose(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))
    return proposal


def test_column_tensor_rejects_plain_tolist_and_flattens(checker):
    """`[v.item() for v in t]` is flat for an [N, 1] `t`; `t.tolist()` nests: the checker refutes
    the plain candidate and the ladder picks the flattening one."""
    proposal = _proposal(
        """
        import torch
        def f(t: torch.Tensor):
            return [v.item() for v in t]
        """
    )
    plain, *rest = proposal.candidates
    assert plain.kernel.new == "result = t.tolist()\n"
    verdict = checker.check(plain.kernel)
    assert verdict.outcome is Outcome.REJECTED
    rendered = verdict.counterexample.render()
    assert ", 1]" in rendered and "Python type: old float, new list" in rendered
    chosen = next(c for c in rest if checker.check(c.kernel).ok)
    assert chosen.kernel.new == "result = t.flatten().tolist()\n"


def test_float_sum_from_int_zero_is_rejected_on_empty_tensor(checker):
    """`sum(...)` starts at the int 0: an empty float tensor sums to `0`, not `0.0`, so the
    device reduction is refuted and the rewrite keeps Python's sum over one `.tolist()`."""
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor):
            return sum(v.item() for v in x)
        """
    )
    device, *rest = proposal.candidates
    assert device.kernel.new == "result = x.sum().item()\n"
    verdict = checker.check(device.kernel)
    assert verdict.outcome is Outcome.REJECTED
    rendered = verdict.counterexample.render()
    assert "shape [0]" in rendered and "Python type" in rendered
    chosen = next(c for c in rest if checker.check(c.kernel).ok)
    assert chosen.kernel.new == "result = sum(x.flatten().tolist())\n"


def test_range_n_clamps_negative_extent(checker):
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor, n: int):
            return [x[i].item() for i in range(n)]
        """
    )
    plain = proposal.candidates[0]
    assert plain.kernel.new == "result = x[:n].tolist()\n"
    verdict = checker.check(plain.kernel)
    assert verdict.outcome is Outcome.REJECTED
    assert any("max(n, 0)" in c.kernel.new for c in proposal.candidates)


def test_torch_tensor_of_ints_keeps_float_dtype_when_empty(checker):
    """`torch.tensor([])` is float32: a bool/int cast of the vectorized values is never proposed;
    the faithful rewrite rebuilds from one `.tolist()`."""
    result = rewrite(
        textwrap.dedent(
            """
            import torch
            def f(x: torch.Tensor):
                return torch.tensor([int(v) for v in x])
            """
        ).encode(),
        [ComprehensionOverTensor],
        checker,
    )
    assert "torch.tensor(x.flatten().long().tolist())" in result.source.decode()


def test_max_of_floats_never_reduces_on_device():
    """Python's max of floats depends on where a NaN sits; torch.max propagates it."""
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor):
            return max(x[i].item() for i in range(len(x)))
        """
    )
    assert all(".max()" not in c.kernel.new for c in proposal.candidates)


def test_kernel_old_is_the_original_expression():
    proposal = _proposal(
        """
        import torch as th
        def f(x: th.Tensor):
            return th.tensor([x[i].item() * 2.0 for i in range(0, x.size(0))], device="cpu")
        """
    )
    for candidate in proposal.candidates:
        assert candidate.kernel.old == 'result = th.tensor([x[i].item() * 2.0 for i in range(0, x.size(0))], device="cpu")\n'
    assert proposal.candidates[0].kernel.new == 'result = (x * 2.0).detach().to("cpu", th.get_default_dtype())\n'
    assert proposal.candidates[1].kernel.new == 'result = (x.flatten() * 2.0).detach().to("cpu", th.get_default_dtype())\n'


def test_a_tensor_of_numbers_stays_on_the_default_device():
    """`torch.tensor(numbers)` is made on the default device, which a program may have moved
    (`torch.set_default_device("cuda")`): with no `device=`, no rung moves the batch to the CPU;
    the one left rebuilds the list with the same call."""
    proposal = _proposal(
        """
        import torch
        def f(x: torch.Tensor):
            return torch.tensor([x[i].item() / 2 for i in range(len(x))])
        """
    )
    assert proposal.candidates
    for candidate in proposal.candidates:
        assert "cpu" not in candidate.kernel.new and candidate.kernel.new.startswith("result = torch.tensor(")


def test_untyped_name_is_skipped_with_reason():
    proposal = _proposal(
        """
        def f(values):
            return [v.item() for v in values]
        """
    )
    assert proposal.skip_reason and "values" in proposal.skip_reason and not proposal.candidates


def test_might_match_never_misses_a_corpus_case():
    for case in CASES:
        if not case.name.startswith("trap_"):
            assert ComprehensionOverTensor.might_match(case.read_bytes()), case.name
    assert not ComprehensionOverTensor.might_match(b"import torch\nx = torch.zeros(3)\n")


def test_rebound_builtin_is_left_alone():
    source = """
    import torch
    def f(x: torch.Tensor):
        sum = torch.sum
        return sum(v.item() for v in x)
    """
    assert ComprehensionOverTensor().propose(MetadataWrapper(cst.parse_module(textwrap.dedent(source)))) == []


def test_explain_has_ruff_sections():
    assert_ruff_sections(ComprehensionOverTensor)
