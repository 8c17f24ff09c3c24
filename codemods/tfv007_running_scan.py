"""TFV007 running-scan: ``x[i - 1] = np.maximum(x[i - 1], x[i])`` carried along an array one
element at a time is one ``np.maximum.accumulate`` / ``cummax`` / ``cumsum``."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    RuleContext,
    comments_in,
    dotted,
    enclosing_scope,
    length_owner,
    loop_proposals,
    loop_variable_used_outside,
    parameter_names,
    sole_binding,
    sole_small_statement,
    statement_code,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.loops.nodes import int_literal
from torchfix.codemods.syntax import SyntaxIndex, is_range_call, single_statement, stores_into_subscript
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

if TYPE_CHECKING:
    from torchfix.codemods.evidence import Evidence

CODE = "TFV007"

#: NumPy binary ufuncs whose ``.accumulate`` is the running form of ``f(x[i], x[i - 1])``
_NUMPY_UFUNCS = frozenset({"maximum", "minimum", "fmax", "fmin"})
#: torch's two-tensor functions and the scan method that carries them along a dimension
_TORCH_FUNCTIONS = {"maximum": "max", "max": "max", "minimum": "min", "min": "min"}
#: the operator scans: ``x[i] += x[i - 1]`` (or ``x[i] = x[i] + x[i - 1]``)
_OPERATORS = {cst.Add: "sum", cst.Multiply: "prod", cst.AddAssign: "sum", cst.MultiplyAssign: "prod"}
#: library functions whose result always has at least one dimension (a 0-d array cannot be
#: concatenated, stacked or appended to; ``arange`` / ``linspace`` / ``cumsum`` give 1-D)
_AT_LEAST_1D = frozenset({
    "concatenate", "hstack", "vstack", "stack", "append", "arange", "linspace", "cumsum", "cumprod", "cat",
})


@dataclass(frozen=True)
class _Bound:
    """A range argument as ``len(owner) + offset`` (``owner`` None: the integer ``offset``)."""

    owner: str | None
    offset: int


@dataclass(frozen=True)
class _Scan:
    """One recognised scan loop.

    ``combine``: "call" (``P.f(a, b)``, ``P`` the module prefix) or "operator";
    ``op``: the ufunc / torch function name, or "sum" / "prod" for operators;
    ``reverse``: the loop walks from the end (each element combines with the one after it).
    """

    loop: cst.For
    target: str
    index: str
    combine: str
    prefix: str
    op: str
    reverse: bool


def _measured(expr: cst.BaseExpression) -> str | None:
    """``x`` for ``len(x)``, ``x.shape[0]``, ``x.size(0)``, ``x.numel()`` and NumPy's ``x.size``."""
    owner = length_owner(expr)
    if owner is not None:
        return owner
    if m.matches(expr, m.Attribute(value=m.Name(), attr=m.Name("size"))):
        return expr.value.value  # type: ignore[attr-defined]
    return None


def _bound(expr: cst.BaseExpression) -> _Bound | None:
    number = int_literal(expr)
    if number is not None:
        return _Bound(None, number)
    owner = _measured(expr)
    if owner is not None:
        return _Bound(owner, 0)
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.Add, cst.Subtract)) and not expr.lpar:
        owner, number = _measured(expr.left), int_literal(expr.right)
        if owner is not None and number is not None:
            return _Bound(owner, number if isinstance(expr.operator, cst.Add) else -number)
    return None


def _offset(expr: cst.BaseExpression, index: str) -> int | None:
    """0 for ``i``, -1 for ``i - 1``, +1 for ``i + 1``; None for anything else."""
    if m.matches(expr, m.Name(index)):
        return 0
    if (
        isinstance(expr, cst.BinaryOperation)
        and m.matches(expr.left, m.Name(index))
        and m.matches(expr.right, m.Integer("1"))
        and isinstance(expr.operator, (cst.Add, cst.Subtract))
    ):
        return 1 if isinstance(expr.operator, cst.Add) else -1
    return None


def _element(expr: cst.BaseExpression, index: str) -> tuple[str, int] | None:
    """``(x, offset)`` for ``x[i + offset]``: one plain index, no slice."""
    if not (isinstance(expr, cst.Subscript) and isinstance(expr.value, cst.Name) and len(expr.slice) == 1):
        return None
    element = expr.slice[0].slice
    if not isinstance(element, cst.Index) or element.star is not None:
        return None
    offset = _offset(element.value, index)
    return None if offset is None else (expr.value.value, offset)


def _operands(value: cst.BaseExpression) -> tuple[str, str, str, list[cst.BaseExpression]] | None:
    """``(combine, prefix, op, [a, b])`` for ``P.f(a, b)`` or ``a + b`` / ``a * b``."""
    if isinstance(value, cst.Call):
        func = value.func
        if not (isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name)):
            return None
        if len(value.args) != 2 or any(a.keyword is not None or a.star for a in value.args):
            return None
        return "call", func.value.value, func.attr.value, [a.value for a in value.args]
    if isinstance(value, cst.BinaryOperation) and type(value.operator) in _OPERATORS:
        return "operator", "", _OPERATORS[type(value.operator)], [value.left, value.right]
    return None


def _array_binding(name: str, scope: cst.CSTNode, numpy: str | None, torch: str | None) -> Kind | None:
    """The kind of array -- NDARRAY or TENSOR -- the function binds ``name`` to, when it binds it
    exactly once, to a result that has dimensions (``mpre = np.concatenate(...)``): then neither a
    0-d array nor a NumPy scalar reaches the loop."""
    if not isinstance(scope, cst.FunctionDef):
        return None
    if name in parameter_names(scope):
        return None
    value = sole_binding(scope.body, name)
    if not isinstance(value, cst.Call):
        return None
    library, _, function = (dotted(value.func) or "").rpartition(".")
    if not library or function not in _AT_LEAST_1D:
        return None
    return Kind.NDARRAY if library == numpy else Kind.TENSOR if library == torch else None


class RunningScan(Rule):
    code = CODE
    tensor_code_only = True
    name = "running-scan"
    summary = "A running maximum, minimum, sum or product carried along an array one element at a time."
    docs = """
    ## What it does
    Finds loops whose whole body carries a value from one element of an array to the next, in
    place:

    - `x[i] = np.maximum(x[i], x[i - 1])` over `range(1, len(x))` (also `np.minimum`, `np.fmax`,
      `np.fmin`, and torch's `torch.maximum` / `torch.max(a, b)` / `torch.minimum` / `torch.min(a, b)`);
    - the same from the end: `x[i - 1] = np.maximum(x[i - 1], x[i])` over
      `range(len(x) - 1, 0, -1)` (the precision envelope of every average-precision metric), or
      `x[i] = f(x[i], x[i + 1])` over `range(len(x) - 2, -1, -1)`;
    - prefix sums and products: `x[i] += x[i - 1]`, `x[i] = x[i] * x[i - 1]`;

    where the extent measures the written array itself (`len(x)`, `x.shape[0]`, `x.size(0)`,
    NumPy's `x.size`). It rewrites them into one scan: `np.maximum.accumulate`, `np.cumsum`,
    `Tensor.cummax`, `Tensor.cumsum`, reversed with `[::-1]` / `.flip(0)` for the loops that walk
    from the end.

    ## Why is this bad?
    Each step is a Python-level index, a call and a store: thousands of interpreter round trips
    (on a GPU, a kernel launch each) for what one scan kernel does.

    ## Example
    ```python
    mpre = np.concatenate(([0.0], precision, [0.0]))
    for i in range(mpre.size - 1, 0, -1):
        mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
    ```

    ## Use instead
    ```python
    mpre = np.concatenate(([0.0], precision, [0.0]))
    mpre[:] = np.maximum.accumulate(mpre[::-1])[::-1]
    ```
    The array is still updated in place (other references to it see the result, as they saw the
    loop's) and keeps its dtype. `np.maximum.accumulate` applies the same ufunc in the same order
    as the loop, NaN included; a torch sum or product scan may add in another order on a GPU,
    which the check allows for.

    ## When it stays silent
    - The range does not cover the whole array from its first (or last) element, or its extent
      measures another array: the part the loop leaves alone would be scanned too.
    - The combining function is Python's `max` / `min`: they do not propagate NaN as
      `np.maximum` does, so no scan reproduces them.
    - The array may be a tensor for a NumPy ufunc, or may be something other than a tensor for a
      torch function (the scan would have to change library); with `+` / `*`, nothing shows
      whether it is a tensor or a NumPy array.
    - The loop index is used after the loop.
    """
    examples = (
        Example(
            """
            import numpy as np

            def envelope(precision):
                mpre = np.concatenate(([0.0], precision, [0.0]))
                for i in range(mpre.size - 1, 0, -1):
                    mpre[i - 1] = np.maximum(mpre[i - 1], mpre[i])
                return mpre
            """,
            """
            import numpy as np

            def envelope(precision):
                mpre = np.concatenate(([0.0], precision, [0.0]))
                mpre[:] = np.maximum.accumulate(mpre[::-1])[::-1]
                return mpre
            """,
            id="reverse-envelope",
        ),
        Example(
            """
            import torch

            def prefix(x: torch.Tensor) -> torch.Tensor:
                for i in range(1, x.shape[0]):
                    x[i] += x[i - 1]
                return x
            """,
            """
            import torch

            def prefix(x: torch.Tensor) -> torch.Tensor:
                x[:] = x.cumsum(0)
                return x
            """,
            id="prefix-sum",
        ),
        Example(
            """
            import numpy as np

            def tail(x: np.ndarray) -> np.ndarray:
                for i in range(2, len(x)):
                    x[i] = np.maximum(x[i], x[i - 1])
                return x
            """,
            None,
            id="partial-range",
        ),
    )

    required_bytes = ((b"for ",), (b"range",))

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """`for i in range(...)` whose one statement stores into `name[...]`."""
        for loop in index.fors:
            if not (isinstance(loop, ast.For) and not loop.orelse and isinstance(loop.target, ast.Name)
                    and is_range_call(loop.iter)):
                continue
            if stores_into_subscript(single_statement(loop.body), (ast.Add, ast.Mult)):
                return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        return loop_proposals(wrapper, self._match, self._propose)

    # ------------------------------------------------------------------ matching

    def _match(self, loop: cst.For) -> _Scan | None:
        if loop.asynchronous is not None or loop.orelse is not None or not isinstance(loop.target, cst.Name):
            return None
        if not m.matches(loop.iter, m.Call(func=m.Name("range"))):
            return None
        args = loop.iter.args  # type: ignore[attr-defined]
        if len(args) not in (2, 3) or any(a.keyword is not None or a.star for a in args):
            return None
        step = 1 if len(args) == 2 else int_literal(args[2].value)
        if step not in (1, -1):
            return None
        index = loop.target.value
        small = sole_small_statement(loop.body)
        if isinstance(small, cst.AugAssign) and type(small.operator) in _OPERATORS:
            written, combine, prefix, op = small.target, "operator", "", _OPERATORS[type(small.operator)]
            operands: list[cst.BaseExpression] = [small.target, small.value]
        elif isinstance(small, cst.Assign) and len(small.targets) == 1:
            found = _operands(small.value)
            if found is None:
                return None
            written = small.targets[0].target
            combine, prefix, op, operands = found
        else:
            return None
        store = _element(written, index)
        reads = [_element(operand, index) for operand in operands]
        if store is None or any(read is None for read in reads):
            return None
        target, offset = store
        if target == index or any(read[0] != target for read in reads):  # type: ignore[index]
            return None
        # one operand is the element being written, the other the one the previous step wrote
        if sorted(read[1] for read in reads) != sorted((offset, offset - step)):  # type: ignore[index]
            return None
        start, stop = _bound(args[0].value), _bound(args[1].value)
        if start is None or stop is None:
            return None
        written_first = _Bound(start.owner, start.offset + offset)
        written_stop = _Bound(stop.owner, stop.offset + offset)
        if step == 1:
            # writes x[1], ..., x[len(x) - 1]
            whole = written_first == _Bound(None, 1) and written_stop == _Bound(target, 0)
        else:
            # writes x[len(x) - 2], ..., x[0]
            whole = written_first == _Bound(target, -2) and written_stop == _Bound(None, -1)
        if not whole:
            return None
        return _Scan(loop, target, index, combine, prefix, op, reverse=step == -1)

    # ------------------------------------------------------------------ proposing

    def _propose(self, scan: _Scan, ctx: RuleContext) -> Proposal | None:
        loop = scan.loop
        scope = enclosing_scope(loop, ctx.parents)
        evidence = ctx.evidence(scope).name(scan.target, at=loop)
        library = self._library(scan, evidence, ctx)
        if library is None:
            return None  # `P.f` is neither the file's numpy nor its torch
        running = {"max": "maximum", "min": "minimum", "sum": "sum", "prod": "product"}.get(
            _TORCH_FUNCTIONS.get(scan.op, scan.op), scan.op)
        message = f"`{scan.target}` carries a running {running} one element at a time: one scan does it"
        if library == "torch" and not evidence.tensor:
            return ctx.proposal(CODE, loop, message, skip_reason=evidence.missing_tensor("a tensor scan"))
        if library == "numpy" and evidence.may_be(Kind.TENSOR):
            reason = (
                f"`{scan.target}` may be a tensor ({evidence.describe()}): a NumPy scan of it would leave "
                "its device and its autograd graph"
            )
            return ctx.proposal(CODE, loop, message, skip_reason=reason)
        if loop_variable_used_outside(scan.index, loop, scope, ctx.parents):
            return ctx.proposal(CODE, loop, message, skip_reason=f"the loop variable `{scan.index}` is used outside the loop")
        new, description = self._scan_code(scan, library, ctx)
        new_stmt = cst.parse_statement(new + "\n", config=ctx.module.config_for_parsing)
        leading = list(loop.leading_lines) + comments_in(loop.with_changes(leading_lines=()))
        new_stmt = new_stmt.with_changes(leading_lines=leading)
        kernel = Kernel(
            old=statement_code(ctx.module, loop),
            new=statement_code(ctx.module, new_stmt),
            inputs=(self._input(scan, evidence, scope, ctx),),
            outputs=(),
            modules=ctx.kernel_modules(),
            # a torch sum / product scan is a parallel scan on a GPU: another order of additions
            reorders_float_reduction=library == "torch" and scan.op in ("sum", "prod"),
            note=f"the loop, verbatim; `{scan.target}` is compared after the run (it is written in place)",
        )
        candidate = Candidate(description, (Edit(loop, new_stmt),), kernel)
        return ctx.proposal(CODE, loop, message, (candidate,))

    def _input(self, scan: _Scan, evidence: Evidence, scope: cst.CSTNode, ctx: RuleContext) -> InputSpec:
        """The written array, as its evidence allows; without a 0-d value where the function shows
        it has dimensions (a NumPy ``x.size`` extent lets a 0-d array through the loop untouched)."""
        kind = _array_binding(scan.target, scope, ctx.facts.numpy, ctx.facts.torch)
        if kind is not None and evidence.may_be(kind):
            return InputSpec(scan.target, kinds=(kind,), ranks=(1, 2, 3))
        return evidence.spec()

    def _library(self, scan: _Scan, evidence: Evidence, ctx: RuleContext) -> str | None:
        """"numpy" or "torch": the library the scan is written in."""
        if scan.combine == "call":
            if scan.prefix == ctx.facts.numpy and scan.op in _NUMPY_UFUNCS:
                return "numpy"
            if ctx.facts.torch is not None and scan.prefix == ctx.facts.torch and scan.op in _TORCH_FUNCTIONS:
                return "torch"
            return None
        if evidence.tensor:
            return "torch"
        if ctx.facts.numpy is not None and not evidence.may_be(Kind.TENSOR) and evidence.may_be(Kind.NDARRAY):
            return "numpy"
        return None

    def _scan_code(self, scan: _Scan, library: str, ctx: RuleContext) -> tuple[str, str]:
        x = scan.target
        if library == "numpy":
            np = scan.prefix or ctx.facts.numpy
            source = f"{x}[::-1]" if scan.reverse else x
            if scan.op in _NUMPY_UFUNCS:
                scanned = f"{np}.{scan.op}.accumulate({source})"
                description = f"{np}.{scan.op}.accumulate"
            else:
                function = "cumsum" if scan.op == "sum" else "cumprod"
                scanned = f"{np}.{function}({source}, axis=0)"
                description = f"{np}.{function}"
            if scan.reverse:
                scanned += "[::-1]"
        else:
            source = f"{x}.flip(0)" if scan.reverse else x
            op = _TORCH_FUNCTIONS.get(scan.op, scan.op)
            if op in ("max", "min"):
                scanned = f"{source}.cum{op}(0).values"
                description = f"Tensor.cum{op}"
            else:
                scanned = f"{source}.cum{op}(0)"
                description = f"Tensor.cum{op}"
            if scan.reverse:
                scanned += ".flip(0)"
        if scan.reverse:
            description += ", reversed"
        return f"{x}[:] = {scanned}", description
