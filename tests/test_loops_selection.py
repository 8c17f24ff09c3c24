"""Boolean selections per sample (``x[i][m[i]]``) and results that must not share an input's memory."""

from __future__ import annotations

import textwrap
from dataclasses import replace

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.loops import ladder
from torchfix.codemods.loops.facts import loop_facts
from torchfix.codemods.loops.module import ModuleContext
from rewrite_helper import loop_candidates


_candidates = loop_candidates


_MASS = """
    import torch
    def mass(x, labels):
        n = x.size(0)
        x = x.view(n, -1)
        dist = (x.unsqueeze(1) - x.unsqueeze(0)).pow(2).sum(2).sqrt()
        same = labels.expand(n, n).eq(labels.expand(n, n).t())
        own, other = [], []
        for i in range(n):
            own.append(dist[i][same[i]].sum().unsqueeze(0))
        own = torch.cat(own)
        return own, other
    """


def test_a_whole_sum_of_a_selection_is_a_masked_sum(checker) -> None:  # noqa: ANN001
    found, failure = _candidates(_MASS)
    assert found, failure
    kernel = found[0].kernel
    assert "_result = dist[:n].masked_fill(~same[:n], 0).sum(1)\n" in kernel.new
    assert checker.check(kernel).outcome.value == "verified"


def test_a_pair_of_lists_loses_only_the_one_the_rewrite_builds() -> None:
    from torchfix.codemods.apply import apply_edits

    context = ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(_MASS))))
    facts = loop_facts(context.nodes.of_type(cst.For)[0], context)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert found, failure
    code = apply_edits(context.module, found[0].edits).code
    assert "    other = []\n" in code and "own, other" not in code.split("return")[0]
    assert "own = dist[:n].masked_fill(~same[:n], 0).sum(1)\n" in code


@pytest.mark.parametrize(
    "wrong",
    [
        "_result = dist[:n].sum(1)\n",  # no mask at all
        "_result = dist[:n].masked_fill(same[:n], 0).sum(1)\n",  # the complement
        "_result = (dist[:n] * same[:n]).sum(1)\n",  # NaN * 0 is NaN where the loop left it out
        "_result = dist[:n][same[:n]].sum().unsqueeze(0)\n",  # one number, not one per row
    ],
)
def test_wrong_masked_sums_are_refuted(checker, wrong: str) -> None:  # noqa: ANN001
    found, failure = _candidates(_MASS)
    assert found, failure
    kernel = found[0].kernel
    new = kernel.new.splitlines(keepends=True)
    new[-1] = wrong
    assert checker.check(replace(kernel, new="".join(new))).outcome.value == "rejected"


def test_a_maximum_of_a_selection_stays() -> None:
    # a masked amax has the values but not `.max()`'s gradients where a row holds NaN
    found, failure = _candidates(_MASS.replace(".sum().unsqueeze(0)", ".max().unsqueeze(0)"))
    assert not found and "summed whole or concatenated" in str(failure)


_SELECTED = """
    import torch
    def below(cost, limit: float):
        n = cost.size(0)
        cost = cost.view(n, -1)
        keep = cost < limit
        picked = []
        for i in range(n):
            picked.append(cost[i][keep[i]])
        return torch.cat(picked)
    """


def test_concatenated_selections_are_the_batch_selection(checker) -> None:  # noqa: ANN001
    found, failure = _candidates(_SELECTED)
    assert found, failure
    # (`n` is the size of `cost`'s first dimension: the loop covers all of its rows)
    assert "_result = cost[keep[:n]]\n" in found[0].kernel.new
    assert checker.check(found[0].kernel).outcome.value == "verified"
    for wrong in ("_result = (cost * keep).flatten()\n",  # zeros where the mask drops
                  "_result = cost.T[keep.T]\n",  # column-major order
                  "_result = cost[~keep]\n"):  # the complement
        kernel = found[0].kernel
        assert checker.check(replace(kernel, new=kernel.new.replace("_result = cost[keep[:n]]\n", wrong))).outcome.value == "rejected"


def test_a_selection_is_lifted_only_where_it_is_summed_whole_or_concatenated() -> None:
    found, failure = _candidates(_SELECTED.replace("picked.append(cost[i][keep[i]])", "picked.append(cost[i][keep[i]].mean())"))
    assert not found and "summed whole or concatenated" in str(failure)
    found, failure = _candidates(_SELECTED.replace("picked.append(cost[i][keep[i]])", "picked.append(cost[i][keep[i]] + cost[i])"))
    assert not found


def test_an_integer_index_row_is_not_taken_for_a_mask(checker) -> None:  # noqa: ANN001
    found, _ = _candidates(_SELECTED.replace("keep = cost < limit", "keep = (cost < limit).long()"))
    assert all(checker.check(c.kernel).outcome.value != "verified" for c in found)


def test_a_result_that_views_an_input_is_copied(checker) -> None:  # noqa: ANN001
    source = """
        import torch
        def rows(x: torch.Tensor, n: int):
            pieces = []
            for i in range(n):
                pieces.append(x[i])
            return torch.cat(pieces)
        """
    found, failure = _candidates(source)
    assert found, failure
    kernel = found[0].kernel
    assert "_result = x[:n].flatten(0, 1).clone()\n" in kernel.new
    assert checker.check(kernel).outcome.value == "verified"
    # without the copy, the result is a view of `x`: a later write into it would write into `x`
    # (the old result was the concatenation's own memory), which the checker refutes
    verdict = checker.check(replace(kernel, new=kernel.new.replace(".clone()", "")))
    assert verdict.outcome.value == "rejected" and "memory" in verdict.reason


def test_a_basic_index_of_an_array_the_function_made_is_copied(checker) -> None:  # noqa: ANN001
    # `cols[0]` is one number (a list's item): `w[:n][:, cols[0]]` is a view of `w`, which the
    # function writes into after the loop, where the old stacked rows were a copy
    source = """
        import torch
        def first_column(x: torch.Tensor, cols, n: int):
            w = x * 2
            rows = []
            for i in range(n):
                rows.append(w[i][cols[0]])
            out = torch.stack(rows)
            w += 1
            return out, w
        """
    found, failure = _candidates(source)
    assert found, failure
    kernel = found[0].kernel
    assert kernel.new.rstrip().endswith(".clone()")
    assert checker.check(kernel).outcome.value == "verified"
    # without the copy: a view of `w`, which both sides bound before the loop -- refuted
    verdict = checker.check(replace(kernel, new=kernel.new.replace(".clone()", "")))
    assert verdict.outcome.value == "rejected" and "memory" in verdict.reason
