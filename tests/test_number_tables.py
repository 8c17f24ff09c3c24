"""Tables of Python-number math (position encodings, sinusoid tables): the loop body computes
every element from the loop indices and Python numbers, through temporaries and a parity branch,
and stores it into one float array. The batch is computed in double precision as Python does,
on the device of the array it fills; the legacy ``torch.FloatTensor(n, d).fill_(0)`` allocation
is read like ``torch.zeros``. These pin what the engine proposes and what the checker refutes;
the corpus cases (``corpus/TFV001/positional_encoding_*``, ``sinusoid_table_one_store``, the
``trap_number_*`` traps) run them end to end."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.loops import ladder
from torchfix.codemods.loops.facts import loop_facts
from torchfix.codemods.loops.kernels import _inert_print, _may_be, alias_pairs, is_replayable
from torchfix.codemods.loops.module import ModuleContext
from torchfix.equivalence.checker import Checker, CheckSettings
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome


def _context(source: str) -> ModuleContext:
    return ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))


def _candidates(source: str, which: int = 0):  # noqa: ANN202
    """The ladder's candidates for a loop (the first: the outer one, lifted with its inner loop
    where both lift; ``which=1``: the inner one alone), and why none."""
    context = _context(source)
    facts = loop_facts(context.nodes.of_type(cst.For)[which], context)
    assert facts is not None
    if which == 0:
        facts = ladder.nested(facts) or facts
    found, failure, _ = ladder.candidates(facts)
    return found, failure


_ENCODINGS = """
    import math
    import torch
    def encodings(length, width):
        table = {allocation}
        for p in range(length):
            for k in range(width):
                angle = p / (10000.0 ** (2.0 * k / width))
                table[p, k] = {value}
        return table
    """


def test_a_table_of_python_math_is_computed_in_double_on_the_tables_device() -> None:
    found, failure = _candidates(_ENCODINGS.format(
        allocation="torch.zeros(length, width)", value="math.sin(angle) if k % 2 == 0 else math.cos(angle)"))
    assert found, failure
    new = found[0].kernel.new
    # the temporary stays a temporary, batched over both indices, in float64 on the table's device
    assert "angle = torch.arange(length, device=table.device, dtype=torch.float64)[:, None] / " in new
    assert "torch.where(torch.arange(width, device=table.device, dtype=torch.float64) % 2 == 0, torch.sin(angle), torch.cos(angle))" in new


def test_a_parity_test_of_the_outer_index_picks_a_whole_column() -> None:
    found, failure = _candidates("""
        import math
        import torch
        def encodings(width, length):
            table = torch.zeros(length, width)
            for k in range(width):
                for p in range(length):
                    table[p, k] = math.cos(p / (k + 1.0)) if k % 2 == 1 else math.sin(p / (k + 1.0))
            return table
        """)
    assert found, failure
    # one test per column, broadcast over that column's rows
    assert "torch.where((torch.arange(width, device=table.device, dtype=torch.float64) % 2 == 1)[:, None]," in found[0].kernel.new


@pytest.mark.parametrize(
    "allocation, value, why",
    [
        # an integer table would truncate a last-place difference between libm and torch
        ("torch.zeros(length, width, dtype=torch.long)", "math.sin(angle) * 1000", "no tensor gives its device"),
        # a tensor read beside the numbers may live on another device than the table
        ("torch.zeros(length, width)", "math.sin(angle) * scale[k]", ""),
        # the branches differ in type: an int or a float depending on the parity
        ("torch.zeros(length, width)", "1 if k % 2 == 0 else angle", ""),
    ],
    ids=["int table", "reads a tensor", "int or float branch"],
)
def test_what_is_not_a_float_table_of_python_numbers_is_not_lifted_as_one(allocation: str, value: str, why: str) -> None:
    source = _ENCODINGS.format(allocation=allocation, value=value)
    if "scale" in value:
        source = source.replace("def encodings(length, width):", "def encodings(length, width, scale):")
    found, failure = _candidates(source, which=1)
    assert all("device=table.device" not in c.kernel.new for c in found), [c.kernel.new for c in found]
    if why:
        assert not found and why in str(failure), failure


def test_an_augmented_store_is_not_a_table_fill() -> None:
    found, failure = _candidates(_ENCODINGS.format(allocation="torch.zeros(length, width)", value="math.sin(angle)").replace(
        "table[p, k] = ", "table[p, k] += "), which=1)
    assert all("device=table.device" not in c.kernel.new for c in found)


def test_the_legacy_float_constructor_is_a_float_allocation_of_its_sizes() -> None:
    found, failure = _candidates(_ENCODINGS.format(
        allocation="torch.FloatTensor(length, width).fill_(0)", value="math.sin(angle)"))
    assert found, failure
    old = found[0].kernel.old
    # replayed: the table is made from the drawn sizes, not drawn apart from them
    assert "table = torch.FloatTensor(length, width).fill_(0)" in old


# ----------------------------------------------------------------------------- the facts beneath


def test_a_legacy_constructor_of_one_tensor_may_be_that_tensor() -> None:
    context = _context("import torch\n")
    assert _may_be(cst.parse_expression("torch.FloatTensor(n, d)"), context) == set()
    assert _may_be(cst.parse_expression("torch.FloatTensor(x)"), context) == {"x"}
    assert _may_be(cst.parse_expression("torch.Tensor(x).fill_(0)"), context) == {"x"}


def test_a_legacy_constructor_of_one_tensor_links_it_to_the_tensor() -> None:
    source = """
        import torch
        def shifted(x: torch.Tensor):
            buf = torch.FloatTensor(x)
            for i in range(1, len(x)):
                buf[i] = x[i - 1]
            return buf
        """
    context = _context(source)
    loop = context.nodes.of_type(cst.For)[0]
    assert {frozenset(pair) for pair in alias_pairs(context, loop, ["buf", "x"])} == {frozenset({"buf", "x"})}


@pytest.mark.parametrize(
    "statement, replayable",
    [
        ("table = torch.FloatTensor(n, d).fill_(0)", True),
        ("table = torch.zeros(n, d).zero_()", True),
        ("table = x.view(-1).fill_(0)", False),  # fills the tensor it views
        ("table = torch.FloatTensor(x).fill_(0)", False),  # of one tensor: that tensor
        ("table = torch.as_tensor(x).fill_(0)", False),
    ],
)
def test_a_fill_is_replayed_only_on_the_allocation_it_follows(statement: str, replayable: bool) -> None:
    context = _context("import torch\n")
    assert is_replayable(cst.parse_statement(statement), context) is replayable


@pytest.mark.parametrize(
    "statement, inert",
    [
        ("print(table.size())", True),
        ("print('sizes', table.shape, len(table), table.size(0))", True),
        ("print(table)", False),  # a bare name: anyone's __str__
        ("print(table.add_(1))", False),  # writes what it prints
        ("print(table.abs_().shape)", False),
        ("print(torch.add(y, 1, out=table).shape)", False),  # resizes and writes `table`
        ("print(np.add(x, 1, out=x).shape)", False),
        ("print(table.sum().item())", False),
        ("print(table.size(), file=log)", False),
        ("log(table.size())", False),
    ],
)
def test_a_print_of_what_replayable_expressions_compute_changes_no_value(statement: str, inert: bool) -> None:
    context = _context("import torch\n")
    assert _inert_print(cst.parse_statement(statement), context) is inert


def test_a_print_that_rebinds_print_is_not_inert() -> None:
    context = _context("import torch\nprint = lambda *a: None\n")
    assert not _inert_print(cst.parse_statement("print(table.size())"), context)


# ----------------------------------------------------------------------------- the checker


_OLD = """table = torch.zeros(length, width)
for p in range(length):
    for k in range(width):
        angle = p / (10000.0 ** (2.0 * k / width))
        table[p, k] = math.sin(angle) if k % 2 == 0 else math.cos(angle)
"""
_RIGHT = """table = torch.zeros(length, width)
angle = torch.arange(length, device=table.device, dtype=torch.float64)[:, None] / (10000.0 ** (2.0 * torch.arange(width, device=table.device, dtype=torch.float64) / width))
table[:, :width] = torch.where(torch.arange(width, device=table.device, dtype=torch.float64) % 2 == 0, torch.sin(angle), torch.cos(angle))
"""
_INPUTS = (InputSpec("length", Kind.INT, count=True), InputSpec("width", Kind.INT, count=True))
_MODULES = (("torch", "torch"), ("math", "math"))


@pytest.mark.parametrize(
    "wrong",
    [
        _RIGHT.replace("torch.sin(angle), torch.cos(angle)", "torch.cos(angle), torch.sin(angle)"),  # parity swapped
        _RIGHT.replace("[:, None] / (10000.0", " / (10000.0").replace("/ width))\n", "/ width))[:, None]\n", 1),  # transposed
        _RIGHT.replace("2.0 * torch.arange", "torch.arange"),  # a frequency dropped
    ],
    ids=["parity swapped", "positions along the columns", "frequency off by two"],
)
def test_the_wrong_tables_are_refuted_and_the_right_one_verified(wrong: str) -> None:
    with Checker(CheckSettings(examples=60, measure=False), cache_dir=None) as checker:
        refuted = checker.check(Kernel(_OLD, wrong, _INPUTS, ("table",), modules=_MODULES))
        assert refuted.outcome is Outcome.REJECTED, refuted.reason
        verified = checker.check(Kernel(_OLD, _RIGHT, _INPUTS, ("table",), modules=_MODULES))
        assert verified.outcome is Outcome.VERIFIED, verified.reason


# ----------------------------------------------------------------------------- what float64 does not compute as Python does
# (each of these was an emitted wrong patch in review, confirmed by running old against new at
# sizes past the ones the checker draws)

_ONE_LOOP = """
    import math
    import torch
    def table_of(length, width, scale: float, big: int):
        table = torch.zeros(length, width, dtype=torch.float64)
        for p in range(length):
            for k in range(width):
                table[p, k] = {value}
        return table
    """


@pytest.mark.parametrize(
    "value",
    [
        "(p * 1125899906842624 + k) % 3 / 2.0",  # exact big ints in Python, rounded in float64
        "(p * 1125899906842624 + k) % 3",  # an int64 batch would wrap past 2**63
        "int(p * 3e6 + k) * 2.0 - (p * 6e6 + 2.0 * k)",  # int() as int64 meets a float in float32
        "int(p * 1e18 + k) % 7",  # int64 wraps where Python's int grows
        "round(p / 4 + k / 2)",
        "(k + 1) ** p / (k + 2) ** p",  # exact in Python, inf / inf in float64
        "p ** 20 % 7",
        "math.sin(p + k) if k % 2 == 0 else 1.0 / scale",  # torch.where computes both branches
        "p * p * p * p * p * p * p % 1000",  # p ** 7 wraps int64 from p = 512 on
        "(p * k) ** 3 % 7",
        "(p * big + 1) - p * big",  # an int of unbounded size: 10 ** 20 overflows a tensor
        "(p * big + k) % 7 / 2.0",  # inexact in float64 past 2 ** 53
        "math.sin(p / (k + 1.0)) * float(big)",  # float(10 ** 400) overflows, once, even with no step
    ],
)
def test_values_float64_does_not_compute_as_python_are_no_table(value: str) -> None:
    source = _ONE_LOOP.format(value=value)
    for which in (0, 1):
        found, failure = _candidates(source, which=which)
        assert all("device=table.device" not in c.kernel.new for c in found), (value, [c.kernel.new for c in found])


# (a name annotated `float` admits ints of any size too: `scale: float` is no table's number)
@pytest.mark.parametrize(
    "value", ["(p + 1.0) ** (-k)", "(p - k) ** 2 * 0.5", "math.exp(-(p - k * 0.5) ** 2)", "p * k % 7 + 0.5"]
)
def test_powers_python_computes_in_floats_or_small_stay_tables(value: str) -> None:
    found, failure = _candidates(_ONE_LOOP.format(value=value))
    assert any("device=table.device" in c.kernel.new for c in found), failure


def test_a_part_computed_once_that_may_raise_is_batched_only_under_the_loops_guard() -> None:
    # `1.0 / width` is asked once by the batch: where the loop runs no step (and width is 0)
    # the loop never divided
    found, failure = _candidates(_ONE_LOOP.format(value="math.sin(p / (k + 1.0)) if 1.0 / width > 0 else math.cos(p / (k + 1.0))"))
    tables = [c.kernel.new for c in found if "device=table.device" in c.kernel.new]
    assert tables, failure
    assert all("if length > 0 and width > 0:" in new for new in tables), tables


def test_rows_the_loops_do_not_size_are_batched_only_under_the_loops_guard() -> None:
    # the table has `rows` rows, the outer loop runs `length` times: where the inner loop runs no
    # step the loop never indexed a row, and `table[:length, :width]` of a shorter table raises
    found, failure = _candidates("""
        import math
        import torch
        def bigger(rows, length, width):
            table = torch.zeros(rows, width)
            for p in range(length):
                for k in range(width):
                    table[p, k] = math.sin(p + k * 0.5)
            return table
        """)
    assert found, failure
    assert all("if length > 0 and width > 0:" in c.kernel.new for c in found)


def test_two_stores_a_later_step_may_overwrite_keep_the_loop() -> None:
    # `table[p, k + 7]` of step k is `table[p, k]` of step k + 7: the batch would keep the first
    found, failure = _candidates("""
        import math
        import torch
        def overlap(length, width):
            table = torch.zeros(length, width + 7)
            for p in range(length):
                for k in range(width):
                    table[p, k] = math.sin(p + k * 0.5)
                    table[p, k + 7] = math.cos(p + k * 0.5)
            return table
        """, which=1)
    assert not found and "may write one element in different steps" in str(failure), failure


def test_a_one_dimensional_table_keeps_the_allocation_its_device_comes_from() -> None:
    # the batch is made on `table.device`: replacing the allocation by it would read `table`
    # before it is bound (UnboundLocalError on every input)
    found, failure = _candidates("""
        import math
        import torch
        def plain(length):
            table = torch.zeros(length, dtype=torch.float64)
            for p in range(length):
                table[p] = math.sin(p * 0.5)
            return table
        """)
    assert found, failure
    for candidate in found:
        assert "table = torch.zeros(length, dtype=torch.float64)" in candidate.kernel.new, candidate.kernel.new


def test_a_kernel_whose_new_code_reads_what_the_old_code_binds_first_is_refused() -> None:
    # the rewrite that replaced `table`'s allocation by a batch made on `table.device` read the
    # table before binding it; the kernel drew `table` as an input, so the check passed
    from torchfix.codemods.loops.kernels import ReadBeforeBound, build_kernel

    context = _context("""
        import math
        import torch
        def plain(length):
            table = torch.zeros(length, dtype=torch.float64)
            for p in range(length):
                table[p] = math.sin(p * 0.5)
            return table
        """)
    loop = context.nodes.of_type(cst.For)[0]
    facts = loop_facts(loop, context)
    assert facts is not None
    allocation = context.module.body[2].body.body[0]  # type: ignore[attr-defined]
    wrong = cst.parse_statement("table = torch.sin(torch.arange(length, device=table.device, dtype=torch.float64) * 0.5)\n")
    right = cst.parse_statement("table[:] = torch.sin(torch.arange(length, device=table.device, dtype=torch.float64) * 0.5)\n")
    with pytest.raises(ReadBeforeBound, match="`table`"):
        build_kernel(facts, [allocation, loop], [wrong], ("table",), exclude_from_prelude=[allocation])
    kernel = build_kernel(facts, [loop], [right], ("table",))
    assert "table = torch.zeros(length, dtype=torch.float64)" in kernel.old
