"""Lists of Python numbers a loop appends one ``.item()`` at a time, and methods of values the
loop does not change called with per-sample operands (``labels.eq(q)``)."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import pytest

from rewrite_helper import loop_candidates


_candidates = loop_candidates


_NORMS = """
    import torch
    def norms(x: torch.Tensor):
        x = x.reshape(x.size(0), -1)
        out = []
        for i in range(x.size(0)):
            out.append(x[i].norm().item())
        return out
    """


def test_a_list_of_item_numbers_is_one_tolist(checker) -> None:  # noqa: ANN001
    found, failure = _candidates(_NORMS)
    assert found, failure
    kernel = found[0].kernel
    assert kernel.new.endswith("out = x.norm(dim=1).tolist()\n")
    assert "out = []" in kernel.old
    assert checker.check(kernel).outcome.value == "verified"


@pytest.mark.parametrize(
    "wrong",
    [
        "out = x.norm(dim=1)\n",  # a tensor, not a list of numbers
        "out = x.norm(dim=1, keepdim=True).tolist()\n",  # a list of one-number lists
        "out = x.norm(dim=1)[1:].tolist()\n",  # the first row lost
        "out = x.norm(dim=1).tolist()[::-1]\n",  # another order
        "out = x.norm(dim=1).round().tolist()\n",  # other values
    ],
)
def test_wrong_number_lists_are_refuted(checker, wrong: str) -> None:  # noqa: ANN001
    found, failure = _candidates(_NORMS)
    assert found, failure
    kernel = found[0].kernel
    new = kernel.new.splitlines(keepends=True)
    new[-1] = wrong
    assert checker.check(replace(kernel, new="".join(new))).outcome.value == "rejected"


def test_integer_sums_stay_ints(checker) -> None:  # noqa: ANN001
    found, _ = _candidates(_NORMS.replace(".norm()", ".sum()"))
    kernel = found[0].kernel
    assert kernel.new.endswith("out = x.sum(1).tolist()\n")
    assert checker.check(kernel).outcome.value == "verified"
    # `.item()` of an int64 sum is an int: floats in its place are another list
    wrong = kernel.new.replace("out = x.sum(1).tolist()", "out = x.sum(1).double().tolist()")
    assert checker.check(replace(kernel, new=wrong)).outcome.value == "rejected"


@pytest.mark.parametrize(
    "between",
    [
        "log['norms'] = out",  # another holder of the list sees every append
        "keep = lambda: out",  # a closure reads the name when it runs
    ],
)
def test_a_list_seen_before_the_loop_ends_stays(between: str) -> None:
    source = _NORMS.replace("out = []\n", f"out = []\n        {between}\n")
    found, failure = _candidates(source)
    assert not found
    assert failure is not None


def test_a_list_read_by_a_nested_function_stays() -> None:
    source = """
    import torch
    def norms(x: torch.Tensor):
        def show():
            return out
        x = x.reshape(x.size(0), -1)
        out = []
        for i in range(x.size(0)):
            out.append(x[i].norm().item())
        return show()
    """
    found, _ = _candidates(source)
    assert not found


_COUNTS = """
    import torch
    def counts(labels, scores):
        out = []
        for q in range(len(scores)):
            out.append(labels.eq(q).sum().item())
        return out
    """


def test_an_index_compared_with_an_invariant_is_mapped_in_its_dtype(checker) -> None:  # noqa: ANN001
    found, failure = _candidates(_COUNTS)
    verdicts = {c.kernel.new.strip().splitlines()[-1]: checker.check(c.kernel).outcome.value for c in found}
    vmapped = [line for line in verdicts if "torch.vmap" in line]
    assert vmapped, failure
    assert "torch.arange(len(scores), device=labels.device).to(torch.result_type(labels, 0))" in vmapped[0]
    assert verdicts[vmapped[0]] == "verified"


@pytest.mark.parametrize(
    "positions",
    [
        # int64 positions: past 255 they no longer wrap as an int compared with uint8 labels does
        "torch.arange(len(scores), device=labels.device)",
        # the labels' own dtype: a bool tensor compares an int as an int64
        "torch.arange(len(scores), device=labels.device).to(labels.dtype)",
    ],
)
def test_positions_in_another_dtype_are_refuted(checker, positions: str) -> None:  # noqa: ANN001
    found, failure = _candidates(_COUNTS)
    kernel = next(c.kernel for c in found if "torch.vmap" in c.kernel.new)
    typed = "torch.arange(len(scores), device=labels.device).to(torch.result_type(labels, 0))"
    assert typed in kernel.new
    wrong = kernel.new.replace(typed, positions)
    assert checker.check(replace(kernel, new=wrong)).outcome.value == "rejected"


def test_an_in_place_method_of_an_invariant_is_not_batched() -> None:
    from pathlib import Path

    trap = Path(__file__).parent.parent / "corpus" / "TFV001" / "trap_inplace_method_on_invariant.py"
    found, _ = _candidates(trap.read_text())
    # only the unverifiable rung that calls the method once on the batch, never emitted by default
    assert all(c.unverifiable for c in found)


def test_an_item_of_a_whole_sample_of_unknown_rank_flattens_the_batch(checker) -> None:  # noqa: ANN001
    source = """
    import torch
    def values(x: torch.Tensor):
        out = []
        for i in range(x.size(0)):
            out.append(x[i].item())
        return out
    """
    found, failure = _candidates(source)
    assert found, failure
    kernel = found[0].kernel
    # `.item()` takes one element per sample whatever the rank: (n,) and (n, 1, 1) alike
    assert kernel.new.endswith("out = x.flatten().tolist()\n")
    assert checker.check(kernel).outcome.value == "verified"
    # without the flatten, (n, 1) samples become a list of lists
    wrong = kernel.new.replace("x.flatten().tolist()", "x.tolist()")
    assert checker.check(replace(kernel, new=wrong)).outcome.value == "rejected"


_MARK = """
    import torch
    def mark(last, eos: int):
        scores = torch.zeros(last.size(0))
        for i in range(last.size(0)):
            if last[i] == eos:
                scores[i] = -1e20
        return scores
    """


def test_a_guard_on_a_sample_of_unknown_rank_flattens_the_mask(checker) -> None:  # noqa: ANN001
    found, failure = _candidates(_MARK)
    verdicts = {c.kernel.new: checker.check(c.kernel).outcome.value for c in found}
    flat = [new for new in verdicts if "keep = (last == eos).flatten()\n" in new]
    # after the rank guesses: `if t:` takes the one element of each sample, whatever its rank
    assert flat, failure
    assert "verified" in {verdicts[new] for new in flat}
    verified = next(new for new in flat if verdicts[new] == "verified")
    # the plain mask is (n, 1, 1) where each sample is (1, 1): it selects nothing sensible
    wrong = verified.replace("keep = (last == eos).flatten()\n", "keep = last == eos\n")
    assert checker.check(replace(found[0].kernel, new=wrong)).outcome.value == "rejected"


def _run_both(source: str, function: str, checker, *args):  # noqa: ANN001, ANN202
    """The old and the rewritten ``function`` called on ``args`` (sizes past what the checker
    draws); the rewrite must be emitted."""
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from rewrite_helper import rewrite

    from torchfix.codemods.tfv001_loop_over_batch import LoopOverBatch

    source = textwrap.dedent(source)
    text = rewrite(source.encode(), [LoopOverBatch], checker).source.decode()
    assert text != source
    old, new = {}, {}
    exec(compile(source, "old", "exec"), old)  # noqa: S102 - our own test source
    exec(compile(text, "new", "exec"), new)  # noqa: S102
    return text, old[function](*args), new[function](*args)


def test_positions_take_a_bfloat16_receiver_dtype_as_each_int_does(checker) -> None:  # noqa: ANN001
    # `torch.arange(n, dtype=torch.bfloat16)` rounds 4113 to 4096, where the int 4113 compared
    # with a bfloat16 tensor rounds to 4128: the positions are cast, not made in that dtype
    import torch

    source = """
        import torch
        def levels(x: torch.Tensor, scores):
            x = x.reshape(-1)
            counts = []
            for q in range(len(scores)):
                counts.append(x.ge(q).float().mean().item())
            return counts
        """
    x = torch.tensor([4096.0], dtype=torch.bfloat16)
    text, old, new = _run_both(source, "levels", checker, x, torch.zeros(4200))
    assert ".to(torch.result_type(x, 0))" in text
    assert old == new


def test_arithmetic_of_the_index_meets_an_invariant_in_its_dtype(checker) -> None:  # noqa: ANN001
    # `q * 65536 + 4` compared with int16 labels wraps to 4 for every q
    import torch

    source = """
        import torch
        def counts(labels, scores):
            labels = labels.reshape(-1)
            out = []
            for q in range(len(scores)):
                out.append(labels.eq(q * 65536 + 4).sum().item())
            return out
        """
    labels = torch.tensor([4, 4, 1], dtype=torch.int16)
    text, old, new = _run_both(source, "counts", checker, labels, torch.zeros(3))
    assert old == new == [2, 2, 2]


@pytest.mark.parametrize(
    "body",
    [
        "out.append(x.ge(q / 10).sum().item())",  # a Python float of the index: float64, not a 0-d float32
        "out.append(x[q].eq(q).sum().item())",  # the receiver is the sample itself
    ],
)
def test_the_index_is_mapped_by_vmap_only_where_an_invariant_compares_it(body: str) -> None:
    source = f"""
    import torch
    def f(x):
        out = []
        for q in range(10):
            {body}
        return out
    """
    found, _ = _candidates(source)
    assert not any("torch.vmap" in c.kernel.new and "lambda" in c.kernel.new and "q:" in c.kernel.new for c in found)


_CAUGHT = {
    "TFV001": """
        import torch
        def sums(x: torch.Tensor, n: int):
            x = x.reshape(x.size(0), -1)
            out = []
            {open}
                for i in range(n):
                    out.append(x[i].sum())
                return torch.stack(out)
            {close}
        """,
    "TFV005": """
        import torch
        def relu(x: torch.Tensor, y: torch.Tensor, n: int):
            {open}
                for i in range(n):
                    if x[i] > 0:
                        y[i] = x[i]
                    else:
                        y[i] = 0
            {close}
            return y
        """,
    "TFV006": """
        import torch
        def counts(idx: torch.Tensor, hist: torch.Tensor, n: int):
            {open}
                for i in range(n):
                    hist[idx[i]] += 1
            {close}
            return hist
        """,
}


@pytest.mark.parametrize("code", sorted(_CAUGHT))
@pytest.mark.parametrize(
    "handler",
    [
        ("try:", "except IndexError:\n                pass"),
        ("with contextlib.suppress(IndexError):", ""),
        # a `return` in `finally` drops the error the body raised
        ("try:", "finally:\n                return None"),
        # an alias of what contextlib exports, a manager held in a variable
        ("with ignore(IndexError):", ""),
        ("with guard:", ""),
    ],
    ids=["try", "suppress", "finally-return", "alias", "variable"],
)
def test_code_where_the_function_catches_errors_stays(checker, code: str, handler: tuple[str, str]) -> None:  # noqa: ANN001
    # the checker compares runs where the old code does not raise; where the function catches
    # the error (`x[i]` past the end), raising is what it does, and `x[:n]` would not raise
    import sys

    sys.path.insert(0, str(__import__("pathlib").Path(__file__).parent))
    from rewrite_helper import rewrite

    from torchfix.codemods.registry import select_rules

    opening, closing = handler
    source = "import contextlib\nfrom contextlib import suppress as ignore\n" + textwrap.dedent(
        _CAUGHT[code].format(open=opening, close=closing)
    ).replace("n: int):", "n: int, guard=contextlib.suppress(IndexError)):")
    result = rewrite(source.encode(), select_rules(), checker)
    assert result.source == source.encode()
    reasons = [record.reason or "" for record, _, _ in result.proposals if record.rule == code]
    assert any("catches errors" in reason for reason in reasons), reasons


def test_true_division_by_the_index_takes_no_integer_wrap(checker) -> None:  # noqa: ANN001
    # an int16 tensor divided by a Python int promotes both to float: 32768 is not wrapped to
    # -32768 first, as a comparison would wrap it
    import torch

    source = """
        import torch
        def ratios(x: torch.Tensor, s: torch.Tensor):
            x = x.reshape(-1).short()
            return torch.stack([x.div(i + 1) for i in range(len(s))])
        """
    text, old, new = _run_both(source, "ratios", checker, torch.tensor([1000.0]), torch.zeros(32768))
    assert "result_type" not in text
    assert torch.equal(old, new)


@pytest.mark.parametrize(
    ("body", "consumer"),
    [
        # NumPy compares an out-of-range int exactly (uint8 == -1 is False): no cast nor int64
        # batch of the numbers does for every dtype
        ("out.append(a == i - 1)", "np.stack(out)"),
        # `2 ** i` / `1 << i` of Python ints never overflow; of an int64 batch, past 63 they do
        ("out.append(x > 2 ** i)", "torch.stack(out)"),
        ("out.append(x > (1 << i))", "torch.stack(out)"),
        # products the index makes past int64 (`i * i * i` past 2**21 steps)
        ("out.append(x > i * i * i)", "torch.stack(out)"),
        ("out.append(x > i * 18014398509481984 // 3)", "torch.stack(out)"),
    ],
)
def test_per_sample_numbers_no_batch_reproduces_are_not_lifted(body: str, consumer: str) -> None:
    source = f"""
    import numpy as np
    import torch
    def f(a: np.ndarray, x: torch.Tensor, s):
        a = np.asarray(a).reshape(-1)
        x = x.reshape(-1)
        out = []
        for i in range(len(s)):
            {body}
        return {consumer}
    """
    found, failure = _candidates(source)
    assert not found, [c.kernel.new for c in found]
    assert failure is not None


def test_a_finally_that_returns_drops_errors_of_the_handlers_too() -> None:
    # `torch.dot` raises on a 2-D `w` in the `except` block; the `finally` returns `out` anyway,
    # where `x @ w` would have filled it
    source = """
    import torch
    def f(x: torch.Tensor, w: torch.Tensor, y):
        out = torch.zeros(x.size(0))
        try:
            y = y + 1
        except TypeError:
            for i in range(x.size(0)):
                out[i] = torch.dot(x[i], w)
        finally:
            return out
    """
    found, failure = _candidates(source)
    assert not found
    assert failure is not None and "catches errors" in str(failure)
