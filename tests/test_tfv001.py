"""TFV001: corpus cases (before -> after, traps unchanged), the rule's examples, and the ladder the
loop engine builds (what the code shows first, then hypotheses, then torch.vmap)."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
import torch
from conftest import corpus_cases
from rewrite_helper import assert_corpus_case, assert_rule_example, assert_ruff_sections, rewrite, propose

from torchfix.codemods.tfv001_loop_over_batch import LoopOverBatch
from torchfix.equivalence.kernel import Outcome

CASES = corpus_cases("TFV001")


def test_corpus_has_enough_cases() -> None:
    positives = [c for c in CASES if not c.name.startswith("trap_")]
    traps = [c for c in CASES if c.name.startswith("trap_")]
    assert len(positives) >= 12 and len(traps) >= 8


@pytest.mark.parametrize("case", CASES, ids=[c.stem for c in CASES])
def test_corpus_case(case, checker) -> None:  # noqa: ANN001
    assert_corpus_case(case, [LoopOverBatch], checker)


@pytest.mark.parametrize("example", LoopOverBatch.examples, ids=[e.id for e in LoopOverBatch.examples])
def test_rule_examples(example, checker) -> None:  # noqa: ANN001
    assert_rule_example(example, [LoopOverBatch], checker)


def test_explain_has_ruff_sections() -> None:
    assert_ruff_sections(LoopOverBatch)


def _proposals(source: str) -> list:
    return propose(LoopOverBatch, textwrap.dedent(source))


def test_unpinned_ranks_climb_from_hypotheses_to_vmap(checker) -> None:  # noqa: ANN001
    """`(x[i] * w).sum()` with nothing pinning x's or w's rank: the batched forms assume ranks
    (each says which), the checker refutes them on other ranks the loop accepts, and the ladder
    ends at torch.vmap of the body, which holds for any rank."""
    (proposal,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            return torch.stack([(x[i] * w).sum() for i in range(len(x))])
        """
    )
    first, *rest = proposal.candidates
    assert "assumes `x` is 2-D" in first.description and first.kernel.new.endswith("_result = (x * w).sum(1)\n")
    refuted = checker.check(first.kernel)
    assert refuted.outcome is Outcome.REJECTED and refuted.counterexample is not None
    chosen = next(c for c in rest if checker.check(c.kernel).ok)
    assert "torch.vmap(lambda xi: (xi * w).sum())(x)" in chosen.kernel.new


def test_pinned_ranks_keep_the_batched_form(checker) -> None:  # noqa: ANN001
    source = """
    import torch
    def f(x: torch.Tensor, w: torch.Tensor):
        n, d = x.shape
        return torch.stack([x[i].sum() * 2.0 for i in range(n)])
    """
    text = rewrite(textwrap.dedent(source).encode(), [LoopOverBatch], checker).source.decode()
    assert "return x.sum(1) * 2.0" in text


def test_model_per_sample_is_unverified(checker) -> None:  # noqa: ANN001
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
    assert "assumes `model` treats the samples of a batch independently" in proposal.candidates[0].unverifiable
    result = rewrite(source.encode(), [LoopOverBatch], checker)
    assert result.source == source.encode()
    assert [o for _, o, _ in result.proposals] == [Outcome.UNVERIFIED]


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        ("h = torch.tanh(h + x[i])\nout[i] = h", "read before the body assigns it"),
        ("out[i] = out[i - 1] + x[i]", "at another position"),
        ("out[i] = x[i].sum()\nif out[i] > 0:\n    break", "leave early"),
        ("out[i] = torch.randn(3).sum() * x[i].sum()", "draws random numbers"),
    ],
    ids=["recurrence", "reads-previous-row", "break", "random"],
)
def test_sequential_or_random_loops_are_skipped_with_the_fact(body: str, reason: str) -> None:
    source = (
        "import torch\ndef f(x: torch.Tensor, h):\n    out = torch.zeros(x.shape[0])\n"
        "    for i in range(x.shape[0]):\n" + textwrap.indent(body, "        ") + "\n    return out\n"
    )
    (proposal,) = _proposals(source)
    assert not proposal.candidates and reason in (proposal.skip_reason or "")


def test_the_index_as_a_number_is_an_arange_on_the_batch_device() -> None:
    (proposal,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor):
            n, d = x.shape
            out = torch.zeros(n, d)
            for i in range(n):
                out[i] = x[i] * i
            return out
        """
    )
    # (stored into the allocation, which is on the default device: see the test below)
    assert "out[:] = x * torch.arange(n, device=x.device)[:, None]" in proposal.candidates[0].kernel.new


def test_weak_scalar_promotion_is_checked_not_assumed(checker) -> None:  # noqa: ANN001
    """A 0-d sample times a vector sample keeps the vector's dtype (0-d tensors do not promote);
    `x * w[:, None]` promotes. The checker refutes the batched forms on int32 x and int64 w and
    the ladder ends at torch.vmap, which keeps per-sample promotion. (`m, = w.shape` pins `w` to
    a vector: a (n, 1, d) `w` stores each (1, d) product into a (d,) row, which torch allows
    for one sample and not for the batch, and the checker refutes every form there.)"""
    source = """
    import torch
    def scale_rows(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        n, d = x.shape
        m, = w.shape
        out = torch.zeros(n, d)
        for i in range(n):
            out[i] = x[i] * w[i]
        return out
    """
    text = rewrite(textwrap.dedent(source).encode(), [LoopOverBatch], checker).source.decode()
    assert "torch.vmap(lambda xi, wi: xi * wi)(x, w[:n])" in text


def test_the_index_beside_a_sample_is_a_weak_number(checker) -> None:  # noqa: ANN001
    """`x[k] > k` compares in x's dtype: torch wraps a Python int into a uint8 sample's dtype
    (`uint8(44) > 300` is True), where an int64 batch of positions would compare exactly. The
    positions are cast as a Python number is; the checker cannot show the difference (it needs
    256 rows), so the emitted code is run on them here."""
    source = textwrap.dedent(
        """
        import torch
        def above(x: torch.Tensor) -> torch.Tensor:
            n, d = x.shape
            return torch.stack([x[k] > k for k in range(n)])
        """
    )
    text = rewrite(source.encode(), [LoopOverBatch], checker).source.decode()
    assert "torch.arange(n, device=x.device)[:, None].to(torch.result_type(x, 0))" in text
    old, new = {}, {}
    exec(compile(source, "old", "exec"), old)
    exec(compile(text, "new", "exec"), new)
    x = torch.full((300, 2), 44, dtype=torch.uint8)
    assert torch.equal(old["above"](x), new["above"](x))
    assert bool(new["above"](x)[299].all())


def test_a_list_used_after_the_stack_stays_a_list() -> None:
    (proposal,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor):
            rows = []
            for r in x:
                rows.append(r * 2)
            y = torch.stack(rows)
            return y, rows
        """
    )
    assert not proposal.candidates and "must stay a list" in (proposal.skip_reason or "")


def test_a_loop_variable_read_after_the_loop_is_kept() -> None:
    (proposal,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor):
            out = torch.zeros(x.shape[0])
            for i in range(x.shape[0]):
                out[i] = x[i].sum()
            return out, i
        """
    )
    assert not proposal.candidates and "read after the loop" in (proposal.skip_reason or "")


def test_item_accumulators_are_left_to_tfv004() -> None:
    assert _proposals(
        """
        import torch
        def f(x: torch.Tensor):
            total = 0.0
            for i in range(len(x)):
                total += x[i].item()
            return total
        """
    ) == []


def test_a_layer_built_in_init_is_batched_and_verified(checker) -> None:  # noqa: ANN001
    """`self.fc = nn.Linear(hidden, 10)` called per sample: the kernel builds the same layer
    (sizes drawn like the inputs', generator seeded alike) and the checker compares."""
    source = textwrap.dedent(
        """
        import torch
        import torch.nn as nn

        class Head(nn.Module):
            def __init__(self, hidden):
                super().__init__()
                self.fc = nn.Linear(hidden, 10)

            def forward(self, x: torch.Tensor):
                n, d = x.shape
                outs = []
                for i in range(n):
                    outs.append(torch.relu(self.fc(x[i])))
                return torch.stack(outs)
        """
    )
    result = rewrite(source.encode(), [LoopOverBatch], checker)
    assert "return torch.relu(self.fc(x))" in result.source.decode()
    (record,) = [r for r, o, _ in result.proposals if o is Outcome.VERIFIED]
    assert "nn.Linear(self_fc_size0, self_fc_size1)" in record.verdict.reason or True  # the kernel, shown below


def test_a_table_of_python_numbers_is_computed_in_double_and_made_in_the_default_dtype() -> None:
    (proposal,) = _proposals(
        """
        import math
        import torch
        def table(n: int, rate: float):
            return torch.tensor([math.exp(-rate * t) for t in range(n)])
        """
    )
    new = proposal.candidates[0].kernel.new
    # Python computes exp in double: so does the batch, on the default device torch.tensor uses
    assert "torch.exp(-rate * torch.arange(n, dtype=torch.float64)).to(torch.get_default_dtype())" in new
    assert ".detach()" not in new and ".cpu()" not in new and "device=" not in new


def test_the_legacy_constructor_makes_default_floats_of_any_numbers() -> None:
    (legacy,) = _proposals(
        """
        import torch
        def squares(n: int):
            return torch.Tensor([t * t + n // 2 for t in range(n)])
        """
    )
    # `torch.Tensor` ignores the default device (`torch.set_default_device`) and makes the default
    # tensor type, as `torch.Tensor()` does: the `arange` follows the default device, so the
    # table is moved where the constructor puts it (a GPU check refuted `.to(get_default_dtype())`)
    assert "(torch.arange(n) * torch.arange(n) + n // 2).to(torch.Tensor())" in legacy.candidates[0].kernel.new
    (cpu_only,) = _proposals(
        """
        import torch
        def squares(n: int):
            return torch.FloatTensor([t * t + n // 2 for t in range(n)])
        """
    )
    assert "(torch.arange(n) * torch.arange(n) + n // 2).float().cpu()" in cpu_only.candidates[0].kernel.new


def test_a_tensor_of_item_numbers_is_rebuilt_by_the_same_call() -> None:
    """`torch.tensor([e.item() ...])` is made on the default device, which may be a GPU's: the
    batch's numbers go through `.tolist()` (the Python numbers `.item()` gives) into the same
    call, never to `.cpu()` (a GPU check refuted that)."""
    (proposal,) = _proposals(
        """
        import torch
        def sums(x: torch.Tensor):
            n = x.size(0)
            return torch.tensor([torch.sigmoid(x[i]).sum().item() for i in range(n)])
        """
    )
    new = proposal.candidates[0].kernel.new
    assert "\n_result = torch.tensor(" in new and new.rstrip().endswith(".detach().tolist())")
    assert "cpu" not in new
    # torch.tensor keeps ints as int64 and floats as floats: with `n`'s kind not evident, it stays
    (plain,) = _proposals(
        """
        import torch
        def squares(n: int):
            return torch.tensor([t * t + n // 2 for t in range(n)])
        """
    )
    assert not plain.candidates and "dtype of the collected numbers" in (plain.skip_reason or "")



def test_an_allocation_on_the_default_device_is_filled_not_replaced() -> None:
    """`out = torch.zeros(n, d)` is a tensor on the default device: where the inputs live on a GPU
    and the default device is the CPU, the loop leaves a CPU tensor, so the batch is stored into
    it (`out[:] = ...` copies across devices as `out[i] = ...` did). An allocation made like an
    array the value reads (`torch.zeros_like(x)`) is on the value's device: the value replaces it."""
    (default,) = _proposals(
        """
        import torch
        def g(x: torch.Tensor):
            x = x.float()
            n, d = x.shape
            out = torch.zeros(n, d)
            for i in range(n):
                out[i] = x[i] * 2
            return out
        """
    )
    assert all("out = x * 2" not in c.kernel.new for c in default.candidates)
    assert any("out[:] = x * 2" in c.kernel.new for c in default.candidates)
    (like,) = _proposals(
        """
        import torch
        def g(x: torch.Tensor):
            x = x.float()
            n, d = x.shape
            out = torch.zeros_like(x)
            for i in range(n):
                out[i] = x[i] * 2
            return out
        """
    )
    assert "out = x * 2" in like.candidates[0].kernel.new
    # made like `x`, filled from `y`: `x.mean()` is 0-d, and a 0-d CPU tensor joins a GPU `y`'s
    # steps, so the batch is on `y`'s device where the loop's result was on `x`'s
    (other,) = _proposals(
        """
        import torch
        def g(x: torch.Tensor, y: torch.Tensor):
            x = x.float().reshape(-1)
            y = y.float().reshape(-1)
            out = torch.zeros_like(x)
            for i in range(len(x)):
                out[i] = y[i] - x.mean()
            return out
        """
    )
    assert other.candidates and all("out = y" not in c.kernel.new for c in other.candidates)


def test_item_numbers_are_python_numbers_where_the_dtype_is_known() -> None:
    """`.item()` gives a Python number: an int of an int64 array, which meets `0.1` in double
    precision, and a float of a float32 array, which Python computes with in double: the batch
    is made float64 where Python computes in double (in float32, a difference of two close
    products cancels differently; a review found both emitted so)."""
    (ints,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor, y: torch.Tensor):
            x = x.long().reshape(-1)
            y = y.long().reshape(-1)
            out = []
            for i in range(x.size(0)):
                out.append(x[i].item() * 0.1 - y[i].item() * 0.1)
            return torch.tensor(out)
        """
    )
    assert "(x.detach().double() * 0.1 - y[:x.size(0)].detach().double() * 0.1)" in ints.candidates[0].kernel.new
    (floats,) = _proposals(
        """
        import torch
        def f(x: torch.Tensor):
            x = x.reshape(-1).float()
            out = []
            for i in range(x.size(0)):
                out.append(x[i].item() * 0.1 - 1.0)
            return torch.tensor(out)
        """
    )
    assert "torch.tensor((x.detach().double() * 0.1 - 1.0).tolist())" in floats.candidates[0].kernel.new
    (constants,) = _proposals(
        """
        import torch
        def f(scores: torch.Tensor):
            scores = scores.reshape(-1).float()
            targets = torch.zeros(scores.size(0), device=scores.device)
            for i in range(scores.size(0)):
                targets[i] = scores[i].item() * 0.9
            return targets
        """
    )
    # a Python number carries no graph: neither does the batch of them
    assert "scores.detach().double() * 0.9" in constants.candidates[0].kernel.new


def test_walked_rows_kept_in_a_list_extend_it(checker) -> None:  # noqa: ANN001
    """Rows the loop iterates (`for r in x`, one-row chunks squeezed) appended to a list that
    stays a list become one `extend` by `x.unbind(0)`; the checker refutes an `extend` by other
    rows. A value computed from the row, or a row read as `x[i]`, is not taken (the list would
    hold views of a batch where the loop held fresh tensors, or views that take in-place writes
    under autograd)."""
    source = textwrap.dedent(
        """
        import torch
        def f(x: torch.Tensor, first: torch.Tensor):
            out = [first]
            for r in x:
                out.append(r)
            return out
        """
    )
    (proposal,) = _proposals(source)
    (candidate,) = proposal.candidates
    assert candidate.kernel.new.endswith("\nout.extend(x.unbind(0))\n")
    assert checker.check(candidate.kernel).ok
    wrong = dataclasses.replace(candidate.kernel, new=candidate.kernel.new.replace("x.unbind", "x[1:].unbind"))
    assert checker.check(wrong).outcome is Outcome.REJECTED
    for other in ("out.append(r * 2)", "out.append(x[i])", "out.append(r.squeeze(0))"):
        header = "for i in range(len(x)):" if "x[i]" in other else "for r in x:"
        changed = source.replace("for r in x:", header).replace("out.append(r)", other)
        assert all(not p.candidates or "extend" not in p.candidates[0].kernel.new for p in _proposals(changed)), other
