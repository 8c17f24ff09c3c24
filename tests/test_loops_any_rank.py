"""Forms right for every rank of a sample nothing pins: one number per sample broadcast with the
batch axis last, moves of an axis composed into one, and the literal lists of numbers a kernel
holds as the code wrote them."""

from __future__ import annotations

import libcst as cst
import pytest

from rewrite_helper import loop_candidates
from torchfix.codemods.loops.library import NUMPY, TORCH


def _spell(qualified: str) -> cst.BaseExpression:
    return cst.parse_expression({"numpy.moveaxis": "np.moveaxis"}.get(qualified, qualified))


def _code(node: cst.BaseExpression) -> str:
    return cst.Module([]).code_for_node(node)


@pytest.mark.parametrize(
    ("library", "value", "source", "destination", "expected"),
    [
        (TORCH, "x.movedim(2, 0)", 0, -1, "x.movedim(2, -1)"),
        (TORCH, "x.movedim(2, -1)", -1, 2, "x"),
        (TORCH, "x.movedim(2, 0)", 1, -1, "x.movedim(2, 0).movedim(1, -1)"),  # another axis
        (TORCH, "x.movedim(d, 0)", 0, -1, "x.movedim(d, 0).movedim(0, -1)"),  # not a literal
        (NUMPY, "np.moveaxis(x, 2, 0)", 0, -1, "np.moveaxis(x, 2, -1)"),
        (NUMPY, "np.moveaxis(x, 1, -1)", -1, 1, "x"),
        # a `moveaxis` of something else is left alone
        (NUMPY, "other.moveaxis(x, 2, 0)", 0, -1, "np.moveaxis(other.moveaxis(x, 2, 0), 0, -1)"),
    ],
)
def test_a_move_of_the_axis_a_move_just_placed_is_one_move(library, value, source, destination, expected) -> None:  # noqa: ANN001
    moved = library.move_axis(_spell, cst.parse_expression(value), source, destination)
    assert _code(moved) == expected


_CHANNEL_MEANS = """
    import numpy as np
    def preprocess(img):
        means = [0.485, 0.456, 0.406]
        out = img.copy()[:, :, ::-1]
        for i in range(3):
            out[:, :, i] = out[:, :, i] - means[i]
        return out
    """


def test_one_number_per_sample_meets_samples_of_any_rank_with_the_batch_axis_last(checker) -> None:  # noqa: ANN001
    """The rank-3 guess lines the means up with the wrong axis of a 4-D image, and the checker
    refutes it; the batch-last form is right for every rank and verifies."""
    found, failure = loop_candidates(_CHANNEL_MEANS)
    assert found, failure
    verdicts = {c.kernel.new.splitlines()[-1].strip(): checker.check(c.kernel).outcome.value for c in found}
    guessed = [v for new, v in verdicts.items() if "[:, None, None]" in new]
    last = [v for new, v in verdicts.items() if "np.moveaxis(out[:, :, :3], 2, -1) - " in new]
    assert guessed and set(guessed) == {"rejected"}
    assert last and "verified" in last


def test_a_literal_list_of_numbers_is_held_by_the_kernel_above_a_statement_it_cannot_replay() -> None:
    """`img.copy()` is not replayed, so the prelude stops there; the means are still the literal
    the loop reads (nothing else names them), and the kernel holds them as written instead of
    drawing any list -- of bools, of ints -- that the function never makes."""
    found, failure = loop_candidates(_CHANNEL_MEANS)
    assert found, failure
    for candidate in found:
        assert candidate.kernel.old.startswith("means = [0.485, 0.456, 0.406]\n")
        assert "means" not in {spec.name for spec in candidate.kernel.inputs}


@pytest.mark.parametrize(
    "spoiler",
    [
        "means = [m * 2 for m in means]",  # a later pass of the outer loop reads other means
        "means[0] = 0.5",
        "log(means)",
    ],
)
def test_a_literal_list_named_anywhere_else_is_an_input(spoiler: str) -> None:
    """After the inner loop, inside the outer one: the literal holds for the first pass only."""
    source = (
        "import numpy as np\n"
        "def preprocess(img, k):\n"
        "    means = [0.485, 0.456, 0.406]\n"
        "    out = img.copy()[:, :, ::-1]\n"
        "    for _ in range(k):\n"
        "        for i in range(3):\n"
        "            out[:, :, i] = out[:, :, i] - means[i]\n"
        f"        {spoiler}\n"
        "    return out\n"
    )
    import textwrap

    from libcst.metadata import MetadataWrapper

    from torchfix.codemods.loops import ladder
    from torchfix.codemods.loops.facts import loop_facts
    from torchfix.codemods.loops.module import ModuleContext

    context = ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))
    inner = context.nodes.of_type(cst.For)[1]
    facts = loop_facts(inner, context)
    assert facts is not None
    found, _, _ = ladder.candidates(facts)
    assert found
    for candidate in found:
        assert not candidate.kernel.old.startswith("means =")
        assert "means" in {spec.name for spec in candidate.kernel.inputs}


def test_numpy_compares_a_per_sample_python_int_exactly_so_the_batch_last_form_refuses_it() -> None:
    """NEP 50: `uint8 == 356` is False in NumPy, where a batch of the numbers cast to uint8
    compares with 100. The rank-guessing rungs refuse this; the batch-last rung must too."""
    found, failure = loop_candidates(
        """
        import numpy as np
        def hits(img):
            out = img.copy()[:, :, ::-1]
            mask = np.zeros(out.shape, dtype=bool)
            for i in range(3):
                mask[:, :, i] = out[:, :, i] == i * 256 + 100
            return mask
        """
    )
    assert not found
    assert "NumPy compares a per-sample Python number" in str(failure)


@pytest.mark.parametrize("spoiler", ['exec("scale[0] = 2.5")', 'locals()["scale"][0] = 2.5', "sys._getframe().f_locals"])
def test_a_literal_list_the_function_may_reach_without_naming_it_is_an_input(spoiler: str) -> None:
    found, failure = loop_candidates(
        f"""
        import numpy as np
        def scale_channels(img):
            scale = [2, 3, 4]
            {spoiler}
            out = img.copy()[:, :, ::-1]
            for i in range(3):
                out[:, :, i] = out[:, :, i] * scale[i]
            return out
        """
    )
    assert found, failure
    for candidate in found:
        assert not candidate.kernel.old.startswith("scale =")
        assert "scale" in {spec.name for spec in candidate.kernel.inputs}
