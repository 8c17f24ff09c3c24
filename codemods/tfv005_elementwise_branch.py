"""TFV005 elementwise-branch: an ``if``/``elif``/``else`` on tensor elements inside a loop."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterable, Mapping

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    ARITHMETIC_OPERATORS,
    BUILTIN_NAMES,
    all_nodes,
    ELEMENTWISE_FUNCTIONAL,
    ELEMENTWISE_METHODS,
    LoopShape,
    RuleContext,
    comments_in,
    dotted,
    element_of,
    elementwise_only,
    enclosing_scope,
    find_init,
    infer_dtype_kind,
    loop_proposals,
    loop_shape,
    loop_variable_used_outside,
    name_nodes,
    names_used,
    sole_small_statement,
    skippable_parts,
    sole_statement,
    statement_code,
    without_skippable_parts,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.loops.facts import pinned_ranks_in
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.ranks import ranks_at, same_rows
from torchfix.codemods.syntax import SyntaxIndex, is_range_call, simple_loop, single_statement
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV005"

_ELEMENTWISE_METHODS = (ELEMENTWISE_METHODS - {"cpu"}) | {"clamp_min", "clamp_max", "logical_and", "logical_or"}
#: ``torch.<fn>(...)`` functions that act element-wise
_ELEMENTWISE_TORCH = frozenset(
    {"abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "neg",
     "square", "sign", "floor", "ceil", "round", "trunc", "clamp", "clip", "pow", "isnan", "isinf",
     "isfinite", "maximum", "minimum", "logical_not", "logical_and", "logical_or", "erf", "exp2"}
)
_COMPARE = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
_AUG_TO_BIN = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power,
}
#: a tensor accumulator's starting value: ``torch.zeros(())``, ``x.new_zeros(())`` ...
_TENSOR_INIT_METHODS = frozenset({"new_zeros", "new_tensor", "new_full", "new_ones"})


def _elementwise_call(node: cst.Call) -> bool:
    """A call a branch's condition or value may make: one-argument ``abs``, ``len`` of a name or of
    an array reached from one, an element-wise ``torch`` / ``torch.nn.functional`` function, or an
    element-wise tensor method."""
    func = node.func
    if isinstance(func, cst.Name) and func.value == "abs" and len(node.args) == 1:
        return True
    if (
        isinstance(func, cst.Name) and func.value == "len" and len(node.args) == 1 and node.args[0].keyword is None
        and not node.args[0].star and (isinstance(node.args[0].value, cst.Name) or _invariant_array(node.args[0].value))
    ):
        return True  # `len(self.vocab)`: one number for every step (never of an element: `len(x[i])`)
    if isinstance(func, cst.Attribute):
        name = func.attr.value
        root = dotted(func.value)
        if root in ("torch", "th") or (root is not None and root.endswith(".functional")) or root == "F":
            return name in _ELEMENTWISE_TORCH or name in ELEMENTWISE_FUNCTIONAL
        return name in _ELEMENTWISE_METHODS
    return False


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _atomic(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Call, cst.Subscript, cst.Attribute, cst.Integer, cst.Float)) or bool(
        getattr(node, "lpar", None)
    )


def _wrap(text: str, atomic: bool) -> str:
    return text if atomic else f"({text})"


def _and_parts(test: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The operands of an unparenthesised chain of ``and`` (``a and b and c``), in order."""
    parts: list[cst.BaseExpression] = []
    while isinstance(test, cst.BooleanOperation) and isinstance(test.operator, cst.And) and not test.lpar:
        parts.insert(0, test.right)
        test = test.left
    return [test, *parts]


#: attributes that describe an array rather than hold its elements
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "layout", "itemsize", "nbytes"})


def _invariant_array(node: cst.BaseExpression) -> bool:
    """An array reached from a name by attributes and constant positions (``align.data``,
    ``self.next_ys[-1]``): the same object at every step of a loop that binds none of its names
    (the matcher checks that), read as the name would be."""
    steps = 0
    while True:
        if isinstance(node, cst.Attribute) and not node.attr.value.startswith("__") and node.attr.value not in _METADATA:
            node = node.value
        elif (
            isinstance(node, cst.Subscript) and len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index)
            and m.matches(node.slice[0].slice.value, m.Integer() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer()))
        ):
            node = node.value
        else:
            break
        steps += 1
    return steps > 0 and isinstance(node, cst.Name)


def _root(node: cst.BaseExpression) -> str | None:
    while isinstance(node, (cst.Attribute, cst.Subscript)):
        node = node.value
    return node.value if isinstance(node, cst.Name) else None


def _read_of(node: cst.CSTNode, index: str | None) -> str | None:
    """The array (its code) of which ``node`` reads one element ``X[index]``: a name, or an
    array reached from one (:func:`_invariant_array`); None otherwise."""
    name = element_of(node, index)
    if name is not None:
        return name
    if (
        isinstance(node, cst.Subscript) and index is not None and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index) and m.matches(node.slice[0].slice.value, m.Name(index))
        and _invariant_array(node.value)
    ):
        return _code(node.value)
    return None


@dataclass
class _Match:
    """A loop whose body is one element-wise ``if`` chain.

    ``kind`` "assign": every branch writes ``target[i]``; ``values[k] is None`` keeps the element
    (the chain has no ``else``). ``kind`` "accumulate": one ``if`` adding to the name ``target``.
    ``conditions`` has one entry per ``if``/``elif``; ``values`` one more when there is an ``else``.
    """

    loop: cst.For
    shape: LoopShape
    branch: cst.If
    kind: str
    target: str
    conditions: list[cst.BaseExpression]
    values: list[cst.BaseExpression | None]
    op: str = "="
    reads: set[str] = field(default_factory=set)


class ElementwiseBranch(Rule):
    code = CODE
    tensor_code_only = True
    name = "elementwise-branch"
    summary = "An `if`/`else` on tensor elements inside a Python loop: one Python branch per element."
    docs = """
    ## What it does
    Finds loops over the elements of a tensor (`for i in range(len(x))`, `x.shape[0]`,
    `x.size(0)`, `range(n)`, `range(0, n)`) whose whole body is one `if`/`elif`/`else` on element
    values, and rewrites it into one tensor expression:

    - `if x[i] > 0: y[i] = x[i] else: y[i] = a * x[i]` becomes
      `y[:len(x)] = torch.where(x > 0, x, a * x)`; an `elif` chain becomes nested `torch.where`;
    - a clamping chain (`if x[i] > hi: y[i] = hi elif x[i] < lo: y[i] = lo else: y[i] = x[i]`)
      becomes `x.clamp(lo, hi)` where that is faithful (it is not when `lo > hi`), else nested
      `torch.where`;
    - masking (`if mask[i]: x[i] = 0`, `if x[i] < 0: x[i] = 0`) becomes one boolean-mask
      assignment (`x[mask.bool()] = 0`, `x[x < 0] = 0`);
    - `if x[i] > 0 and z[i] != 0: y[i] = z[i] + k`, where `z` may be shorter than the loop
      (`and` reads it only where `x[i] > 0`), narrows the selected positions test by test and
      reads `z` only at those left:
      `y_rows = (x > 0).nonzero().squeeze(1)`, then `y_rows = y_rows[z[y_rows] != 0]` and
      `y[y_rows] = (z[y_rows] + k).to(y.dtype)`, each under `if y_rows.numel() > 0:`;
    - an element may be read from an array reached from a name by attributes and constant
      positions (legacy `align.data[i]`, `self.next_ys[-1][i]`), and `len()` of a name or of such
      an array (`len(self.vocab)`) is one number for every step; both stay as written. Not an
      array reached from the target (`y.data[i]`, `y.T[i]` beside a store into `y[i]`);
    - conditional accumulation (`if keep[i]: total += v[i]`) becomes a masked reduction
      (`total += v[keep.bool()].sum()`), and conditional counting (`if x[i] > t: count += 1`)
      becomes `count += int((x > t).sum())`.

    ## Why is this bad?
    Each iteration indexes single elements, converts a 0-d tensor to a Python `bool` to take the
    branch (a device sync on a GPU) and launches a kernel or two per element. The vectorized form
    does the same work in a handful of kernels.

    ## Example
    ```python
    for i in range(len(x)):
        if x[i] > 0:
            y[i] = x[i]
        else:
            y[i] = 0.01 * x[i]
    ```

    ## Use instead
    ```python
    y[:len(x)] = torch.where(x > 0, x, 0.01 * x)
    ```
    The rewrite keeps what the loop did, not just what it meant: the result is written into `y`
    with slice assignment, which casts to `y`'s dtype as `y[i] = ...` did (`torch.where` alone
    would promote); tensors are sliced to the loop's extent (`x[:n]`, `x[:max(n, 0)]` for a count
    that may be negative); a bare element condition (`if mask[i]:`) tests truthiness, so an
    integer or float mask becomes `mask.bool()` (indexing with a 0/1 integer tensor would gather
    rows 0 and 1 instead); comparisons with NaN are false in both forms. A masked sum is
    `v[mask].sum()`, never `(v * mask).sum()`, which turns `inf * 0` into NaN.
    The check draws a tensor indexed by the loop variable at the rank the function pins
    (`x = x.view(-1)`, `y = torch.zeros(n)`, `n, = x.shape`), else as a vector and as a matrix:
    `if x[i] > 0` runs on a column `x` of shape (n, 1) too, where the batched mask has the wrong
    shape, so without a pin the rewrite is rejected with that counterexample. A mask assignment
    (`x[mask.bool()] = 0`) is also checked against targets of any rank.

    Where the tensors may be integers, `torch.where` is not faithful (see below) and the rewrite
    falls back to one boolean-mask assignment per branch. The condition and the branch values are
    computed from the unmodified inputs first (the target may be one of them), then each branch
    writes only its own elements, cast into `y`'s dtype on its own as `y[i] = ...` does:
    ```python
    y_mask = x > 0
    y_else = a * x
    y[:len(x)][y_mask] = x[y_mask].to(y.dtype)
    y[:len(x)][~y_mask] = y_else[~y_mask].to(y.dtype)
    ```
    An `elif` chain gets one mask per branch (`m2 = ~m1 & c2`, `m3 = ~(m1 | m2)`); a branch value
    that reads no element (`0.0`) is assigned as is. A chain without `else` writes only where a
    branch runs, so a target shorter than the loop is no error: there it writes at the positions
    `y[y_mask.nonzero().squeeze(1)] = ...` instead. A mask under `range(n)`, where the loop
    indexes the target only where the branch runs, becomes
    `x.index_fill_(0, x_mask.nonzero().squeeze(1), 0.0)`; a masked sum into a tensor
    accumulator sums in the dtype each step `total += v[i]` adds in (the two promoted), then
    casts into `total` as that step does:
    `total += v[keep.bool()].to(torch.promote_types(v.dtype, total.dtype)).sum()`.

    ## When it stays silent
    - The loop body is anything but one `if` chain whose branches each write element `i` of the
      same tensor (or add to one accumulator); a branch that prints, logs, draws random numbers,
      writes another index (`y[i + 1]`) or reads another element (`y[i - 1]`: a recurrence).
    - A condition does not depend on the element (`if flag:`).
    - An array is read only where a condition holds -- in an `elif` test, a branch's value, the
      right side of `and` / `or`, a later comparison of a chain (`0 < x[i] < z[i]`) -- and nothing
      shows it has an element for every step (the loop measures it, reads it in the first test
      or in every branch, or it has the rows of such an array: `lo = bounds[:, 0]` beside
      `hi = bounds[:, 1]`). It may be shorter than the loop, which never reads the rest, where a
      batched form reads all of it and raises. The one exception is an `if` without `elif` or
      `else` whose test is a chain of `and`, each later test one comparison or one value: the
      positions are then narrowed test by test (above).
    - The loop can leave early (`break`, `return`) or its index is used after the loop.
    - Nothing shows that an indexed name is a tensor (it could be a list or a numpy array);
      annotate it `x: torch.Tensor`.
    - The checker refutes the `torch.where` form whenever the tensors may be integers: one branch
      that is a float expression promotes the whole `torch.where` to float32, which rounds int32
      values beyond 2**24, while the loop assigns each branch separately. Nothing in a function
      signature says `x` is floating, so such loops get the per-branch mask assignments above
      instead; a loop is reported `rejected` (with the counterexample) only when that fallback is
      refuted too, e.g. a branch value that broadcasts to another shape than the condition.
    - A conditional sum starts from a Python number (`total = 0.0; ... total += v[i]`): the
      result stays a Python float when nothing is selected and becomes a tensor otherwise, which
      no single vectorized form reproduces; start from `total = torch.zeros(())`.
    """
    examples = (
        Example(
            """
            import torch

            def leaky(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
                x = x.view(-1)
                y = y.view(-1)
                for i in range(len(x)):
                    if x[i] > 0:
                        y[i] = x[i]
                    else:
                        y[i] = a * x[i]
                return y
            """,
            # torch.where is refuted: for int32 data beyond 2**24, `a * x` promotes the whole
            # torch.where to float32 and `y[i] = x[i]` does not; the per-branch fallback verifies
            """
            import torch

            def leaky(x: torch.Tensor, y: torch.Tensor, a: float) -> torch.Tensor:
                x = x.view(-1)
                y = y.view(-1)
                y_mask = x > 0
                y_else = a * x
                y[:len(x)][y_mask] = x[y_mask].to(y.dtype)
                y[:len(x)][~y_mask] = y_else[~y_mask].to(y.dtype)
                return y
            """,
            id="where-falls-back-per-branch",
        ),
        Example(
            """
            import torch

            def zero_negatives(x: torch.Tensor) -> torch.Tensor:
                for i in range(x.shape[0]):
                    if x[i] < 0:
                        x[i] = 0
                return x
            """,
            """
            import torch

            def zero_negatives(x: torch.Tensor) -> torch.Tensor:
                x[x < 0] = 0
                return x
            """,
            id="mask-in-place",
        ),
        Example(
            """
            import torch

            def smooth(y: torch.Tensor) -> torch.Tensor:
                for i in range(1, len(y)):
                    if y[i] < y[i - 1]:
                        y[i] = y[i - 1]
                return y
            """,
            None,
            id="recurrence",
        ),
    )

    required_bytes = ((b"for ",), (b"if ",), (b"range(",))

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """`for i in range(...)` whose one statement is an `if`."""
        return any(
            simple_loop(loop) and is_range_call(loop.iter) and isinstance(single_statement(loop.body), ast.If)
            for loop in index.fors
        )

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        def lengths(loop: cst.For) -> Mapping[str, int]:
            # (the module's loop model, built where a loop matched: once per module, and shared)
            context = ModuleContext.of(wrapper)
            function = context.enclosing_function(loop)
            return {} if function is None else ranks_at(loop, function, context).lengths

        ranks = pinned_ranks_in(wrapper)
        return loop_proposals(wrapper, self._match, lambda mt, ctx: self._propose(mt, ctx, lengths, ranks))

    # ------------------------------------------------------------------ matching

    def _match(self, loop: cst.For) -> _Match | None:
        shape = loop_shape(loop)
        if shape is None or shape.index is None:
            return None
        branch = sole_statement(loop.body)
        if not isinstance(branch, cst.If):
            return None
        conditions: list[cst.BaseExpression] = []
        statements: list[cst.BaseSmallStatement | None] = []
        node: cst.If | cst.Else | None = branch
        while node is not None:
            if isinstance(node, cst.If):
                conditions.append(node.test)
                statements.append(self._single(node.body))
                node = node.orelse
            else:
                statements.append(self._single(node.body))
                node = None
        if any(s is None for s in statements):
            return None
        index = shape.index
        kinds = set()
        targets = set()
        values: list[cst.BaseExpression | None] = []
        op = "="
        for small in statements:
            if isinstance(small, cst.Assign) and len(small.targets) == 1:
                name = element_of(small.targets[0].target, index)
                if name is None:
                    return None
                kinds.add("assign")
                targets.add(name)
                values.append(small.value)
            elif isinstance(small, cst.AugAssign) and isinstance(small.target, cst.Name):
                if not isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)):
                    return None
                kinds.add("accumulate")
                targets.add(small.target.value)
                op = "+=" if isinstance(small.operator, cst.AddAssign) else "-="
                values.append(small.value)
            elif isinstance(small, cst.AugAssign) and type(small.operator) in _AUG_TO_BIN:
                name = element_of(small.target, index)
                if name is None:
                    return None
                kinds.add("assign")
                targets.add(name)
                binop = _AUG_TO_BIN[type(small.operator)]()
                values.append(cst.BinaryOperation(small.target, binop, small.value.with_changes(
                    lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if not _atomic(small.value) else small.value))
            else:
                return None
        if len(kinds) != 1 or len(targets) != 1:
            return None
        kind, target = kinds.pop(), targets.pop()
        if kind == "accumulate" and (len(conditions) != 1 or len(values) != 1):
            return None
        if len(values) == len(conditions):
            values.append(None)  # no else: the element keeps its value
        reads: set[str] = set()
        for cond in conditions:
            found = self._element_reads(cond, index)
            if not found:
                return None  # a condition on something else than the element: not this pattern
            reads |= found
        for value in values:
            if value is None:
                continue
            found = self._element_reads(value, index, allow_none=True)
            if found is None:
                return None
            reads |= found
        exprs = [*conditions, *(v for v in values if v is not None)]
        for expr in exprs:
            if not self._elementwise(expr):
                return None
            # the target may be read only as its own element i (anything else is a recurrence)
            if target in self._free_names(expr, index):
                return None
        if kind == "accumulate" and target in reads:
            return None
        if target == index or index in reads:
            return None
        if any(_root(cst.parse_expression(r)) in (target, index) for r in reads if not r.isidentifier()):
            return None  # (`y.data[i]`, `y.T[i]` beside a store into `y[i]`: another view of the target)
        return _Match(loop, shape, branch, kind, target, conditions, values, op, reads)

    @staticmethod
    def _single(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
        if isinstance(body, cst.SimpleStatementSuite):
            return body.body[0] if len(body.body) == 1 else None
        return sole_small_statement(body)

    def _element_reads(self, expr: cst.BaseExpression, index: str, allow_none: bool = False) -> set[str] | None:
        """Names read as ``X[i]``; None when the index appears any other way."""
        found: set[str] = set()
        ok = True

        class _Uses(cst.CSTVisitor):
            def visit_Subscript(self, node: cst.Subscript) -> bool:
                name = _read_of(node, index)
                if name is not None:
                    found.add(name)
                    return False
                return True

            def visit_Attribute(self, node: cst.Attribute) -> bool:
                node.value.visit(self)
                return False

            def visit_Name(self, node: cst.Name) -> None:
                nonlocal ok
                if node.value == index:
                    ok = False

        expr.visit(_Uses())
        if not ok:
            return None
        return found

    def _free_names(self, expr: cst.BaseExpression, index: str) -> set[str]:
        """Names used outside ``X[i]`` element reads."""
        inside: set[int] = set()

        class _Elements(cst.CSTVisitor):
            def visit_Subscript(self, node: cst.Subscript) -> None:
                if _read_of(node, index) is not None:
                    inside.update(id(n) for n in name_nodes(node))

        expr.visit(_Elements())
        return {n.value for n in name_nodes(expr) if id(n) not in inside}

    def _elementwise(self, expr: cst.BaseExpression) -> bool:
        """Only arithmetic, comparisons, boolean logic and element-wise calls."""
        # `&` / `|` combine masks; `~` is refused (logical on a bool tensor, bitwise on an integer one)
        return elementwise_only(
            expr, _elementwise_call, binary_operators=ARITHMETIC_OPERATORS + (cst.BitAnd, cst.BitOr),
            comparison_operators=_COMPARE, refused=(cst.IfExp, cst.BitInvert),
        )

    # ------------------------------------------------------------------ proposing

    def _skip(self, mt: _Match, ctx: RuleContext, message: str, reason: str) -> Proposal:
        return ctx.proposal(CODE, mt.loop, message, skip_reason=reason)

    def _number_init(self, mt: _Match, ctx: RuleContext) -> cst.SimpleStatementLine | None:
        """``count = 0`` before the loop, with nothing in between touching ``count``."""
        parent = ctx.parents.get(mt.loop)
        if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return None
        found = find_init(list(parent.body), mt.loop, mt.target)
        return found[0] if found is not None else None

    def _tensor_init(self, mt: _Match, ctx: RuleContext) -> cst.SimpleStatementLine | None:
        """``acc = torch.zeros(())`` (or ``x.new_zeros(())``...) before the loop, with nothing in
        between touching ``acc``."""
        parent = ctx.parents.get(mt.loop)
        if not isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return None
        block = list(parent.body)
        index = next(i for i, s in enumerate(block) if s is mt.loop)
        for stmt in reversed(block[:index]):
            if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
                small = stmt.body[0]
                if (
                    isinstance(small, cst.Assign)
                    and len(small.targets) == 1
                    and isinstance(small.targets[0].target, cst.Name)
                    and small.targets[0].target.value == mt.target
                ):
                    value = small.value
                    if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute):
                        root = dotted(value.func.value)
                        if root == ctx.torch or value.func.attr.value in _TENSOR_INIT_METHODS:
                            return stmt
                    return None
            if mt.target in names_used(stmt):
                return None
        return None

    def _propose(self, mt: _Match, ctx: RuleContext, lengths: Callable[[cst.For], Mapping[str, int]],
                 ranks: Callable[[cst.For], Mapping[str, int]]) -> Proposal | None:
        what = "a conditional sum" if mt.kind == "accumulate" else f"`{mt.target}`"
        message = f"{what} is computed one element at a time with an `if`: one tensor expression does it"
        scope = enclosing_scope(mt.loop, ctx.parents)
        evidence = ctx.evidence(scope)
        vectorized = sorted(mt.reads) + ([mt.target] if mt.kind == "assign" else [])
        for name in dict.fromkeys(vectorized):
            if name.isidentifier():
                found = evidence.name(name, at=mt.loop)
            else:
                found = evidence.expression(cst.parse_expression(name), at=mt.loop)
                if not found.tensor and self._sized(mt, name):
                    continue  # `range(E.size(0))`: only a tensor has a `size` method taking a dimension
            if not found.tensor:
                return self._skip(mt, ctx, message, found.missing_tensor(f"a `{ctx.torch}.where` over `{name}`"))
        index = mt.shape.index or ""
        if loop_variable_used_outside(index, mt.loop, scope, ctx.parents):
            return self._skip(mt, ctx, message, f"the loop variable `{index}` is used outside the loop")
        init: cst.SimpleStatementLine | None = None
        if mt.kind == "accumulate":
            value = mt.values[0]
            assert value is not None
            if self._element_reads(value, index):
                init = self._tensor_init(mt, ctx)
                if init is None:
                    return self._skip(
                        mt, ctx, message,
                        f"`{mt.target}` does not start from a tensor just before the loop: a sum that starts "
                        "from a Python number stays a number until the first selected element, which no "
                        f"vectorized form reproduces; start from `{mt.target} = {ctx.torch}.zeros(())`",
                    )
            elif isinstance(value, cst.Integer) and value.value == "1":
                init = self._number_init(mt, ctx)
            else:
                return None
        always, sometimes = self._split_reads(mt)
        covered = self._covered(mt, always, lengths(mt.loop))
        shorter = sorted(sometimes - covered)
        if shorter and not self._narrowing_chain(mt, set(shorter)):
            return self._skip(
                mt, ctx, message,
                f"`{shorter[0]}` is read only where a condition holds: it may have fewer elements than the loop "
                "runs (the loop never reads the others), which a batched read of every element raises on",
            )
        if shorter:
            # read each later test and the value only at the positions the tests before it kept,
            # as Python's `and` does
            forms = ["narrowing_rows"]
        else:
            forms = self._forms(mt, may_be_shorter=mt.kind == "assign" and mt.target not in covered)
        extents = ["full"] if mt.shape.extent is None else ["plain", "max0"]
        pinned = ranks(mt.loop)
        candidates = [self._candidate(mt, form, extent, init, ctx, pinned) for form in forms for extent in extents]
        candidates = [c for c in candidates if c is not None]
        if not candidates:
            return None
        return ctx.proposal(CODE, mt.loop, message, tuple(candidates))

    def _forms(self, mt: _Match, may_be_shorter: bool) -> list[str]:
        if mt.kind == "accumulate":
            value = mt.values[0]
            if isinstance(value, cst.Integer):
                return ["count"]
            # `total += v[i]` adds two 0-d tensors in the dtype they promote to, then casts the sum
            # back into `total`: the batch sums in that dtype, not in v's (int64 values near 2**63
            # wrap there, into a float total) nor in total's (float32 values overflow a float16
            # one) -- values the checker's draws do not reach. It is still a reordered float sum,
            # and in half precision more: the CPU sums float16 in float32 where the loop rounds
            # every step to float16 (README, known gaps)
            promoted = ["masked_sum_promoted"] if self._array_read(value) is not None else []
            return promoted + ["masked_sum", "masked_sum_cast"]
        forms = []
        index = mt.shape.index or ""
        if len(mt.conditions) == 1 and mt.values[1] is None and not self._element_reads(mt.values[0], index):
            forms.append("mask")
        if self._clamp_bounds(mt) is not None:
            forms.append("clamp")
        forms.append("where")
        # dtype-faithful fallback: each branch written with its own mask, so each branch value is
        # cast into the target on its own as `y[i] = value` does (torch.where promotes them together)
        forms.append("branches")
        if (
            forms[0] == "mask" and mt.shape.extent is not None
            and self._element_reads(mt.values[0], index) == set()  # type: ignore[arg-type]
        ):
            # `range(n)` with a mask: the loop indexes the target only where the branch runs
            forms.append("index_fill")
        elif mt.values[-1] is None and forms[0] != "mask":
            # no else: the loop indexes the target only where a branch runs, so a target shorter
            # than the loop is fine as long as nothing past its end is selected
            forms.append("branches_index")
        if may_be_shorter:
            # `scores[:b][mask] = ...` raises where `scores` has fewer rows than the mask, and the
            # loop never indexed those rows: only the forms that index the selected rows hold
            # (the checker rarely draws a guard false on exactly the rows past the target's end)
            forms = [f for f in forms if f in ("index_fill", "branches_index")] or ["branches_index"]
        return forms

    def _narrowing_chain(self, mt: _Match, shorter: set[str]) -> list[cst.BaseExpression] | None:
        """The tests of ``if a and b and c: y[i] = v`` (no ``elif``, no ``else``), where the arrays
        that may be shorter than the loop (``shorter``) are read only by ``b``, ``c`` and ``v``,
        and not where those may skip a part of themselves: narrowing the selected positions test
        by test, and reading each array only there, reads what the loop reads. Else None."""
        if mt.kind != "assign" or len(mt.conditions) != 1 or mt.values[-1] is not None:
            return None
        index = mt.shape.index or ""
        parts = _and_parts(mt.conditions[0])
        if len(parts) < 2:
            return None

        def reads(node: cst.BaseExpression) -> set[str]:
            return self._element_reads(node, index, allow_none=True) or set()

        if reads(parts[0]) & shorter:
            return None
        for part in parts[1:]:
            # a later test is read at the kept positions as it is written: one comparison, or one
            # value tested bare (`and`, `not` and chained comparisons there would need the rows
            # narrowed again, part by part)
            if skippable_parts(part) or any(
                isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Not)
                for node in all_nodes(part)
            ):
                return None
        return parts

    @staticmethod
    def _array_read(value: cst.BaseExpression) -> str | None:
        """The array of an element read ``v[i]``: the sample has its dtype."""
        if m.matches(value, m.Subscript(value=m.Name())):
            return value.value.value  # type: ignore[attr-defined]
        return None

    def _split_reads(self, mt: _Match) -> tuple[set[str], set[str]]:
        """The arrays the loop reads at every step (in the first test, where Python surely
        evaluates it, or in every branch's value), and those it reads at some steps only (in a
        later test, a value, a part of a test Python may skip: :func:`skippable_parts`)."""
        index = mt.shape.index or ""

        def reads(nodes: Iterable[cst.BaseExpression]) -> set[str]:
            return set().union(*(self._element_reads(node, index, allow_none=True) or set() for node in nodes))

        first = mt.conditions[0]
        always = reads([without_skippable_parts(first)])
        values = [v for v in mt.values if v is not None]
        if mt.values[-1] is not None and values:
            # read by every branch: read at every step, whichever branch runs
            always |= set.intersection(*(reads([without_skippable_parts(v)]) for v in values))
        sometimes = reads([*skippable_parts(first), *mt.conditions[1:], *values])
        return always, sometimes - always

    @staticmethod
    def _sized(mt: _Match, array: str) -> bool:
        """Whether the loop's extent is ``array.size(k)``."""
        iter_args = mt.loop.iter.args  # type: ignore[attr-defined]
        return bool(iter_args) and m.matches(
            iter_args[-1].value, m.Call(func=m.Attribute(attr=m.Name("size")), args=[m.Arg(keyword=None)])
        ) and _code(iter_args[-1].value.func.value) == array  # type: ignore[attr-defined]

    @staticmethod
    def _counts_elements(mt: _Match) -> bool:
        """Whether the loop's extent is ``x.numel()``: every element of ``x``, not its rows."""
        iter_args = mt.loop.iter.args  # type: ignore[attr-defined]
        return bool(iter_args) and m.matches(iter_args[-1].value, m.Call(func=m.Attribute(attr=m.Name("numel"))))

    def _covered(self, mt: _Match, always: set[str], lengths: Mapping[str, int]) -> set[str]:
        """The arrays shown to have an element for every step: what the loop measures, what it
        reads at every step (``always``; or it raised), the target where every branch writes it,
        and any array the code shows has as many rows as one of those."""
        shown = set(always)
        if mt.shape.extent is None and mt.shape.owner is not None and not self._counts_elements(mt):
            shown.add(mt.shape.owner)
        if mt.kind == "assign" and mt.values[-1] is not None:
            shown.add(mt.target)
        return same_rows(shown, lengths)

    def _clamp_bounds(self, mt: _Match) -> tuple[str | None, str | None, str] | None:
        """(lower, upper, X) for ``if X[i] > hi: T[i] = hi elif X[i] < lo: T[i] = lo else: T[i] = X[i]``."""
        index = mt.shape.index or ""
        last = mt.values[-1]
        if last is None or mt.kind != "assign":
            return None
        source = element_of(last, index) if isinstance(last, cst.Subscript) else None
        if source is None:
            return None
        lower = upper = None
        for cond, value in zip(mt.conditions, mt.values):
            if not isinstance(cond, cst.Comparison) or len(cond.comparisons) != 1 or value is None:
                return None
            op = cond.comparisons[0].operator
            left, right = cond.left, cond.comparisons[0].comparator
            if element_of(left, index) == source and isinstance(left, cst.Subscript):
                bound, flipped = right, False
            elif isinstance(right, cst.Subscript) and element_of(right, index) == source:
                bound, flipped = left, True
            else:
                return None
            if self._element_reads(bound, index) or _code(bound) != _code(value):
                return None
            if isinstance(op, (cst.GreaterThan, cst.GreaterThanEqual)):
                side = "lower" if flipped else "upper"
            elif isinstance(op, (cst.LessThan, cst.LessThanEqual)):
                side = "upper" if flipped else "lower"
            else:
                return None
            if side == "upper":
                if upper is not None:
                    return None
                upper = _code(bound)
            else:
                if lower is not None:
                    return None
                lower = _code(bound)
        return lower, upper, source

    # ------------------------------------------------------------------ building

    def _candidate(
        self, mt: _Match, form: str, extent: str, init: cst.SimpleStatementLine | None, ctx: RuleContext,
        ranks: Mapping[str, int],
    ) -> Candidate | None:
        torch = ctx.torch
        shape = mt.shape
        index = shape.index or ""
        iter_args = mt.loop.iter.args  # type: ignore[attr-defined]
        bound = _code(shape.extent) if shape.extent is not None else _code(iter_args[-1].value)
        if shape.extent is not None and extent == "max0":
            bound = f"max({bound}, 0)"

        def whole(name: str) -> str:
            # the loop touches only the first `extent` elements of every tensor but the one it measures
            sliced = shape.extent is not None or name != shape.owner
            return f"{name}[:{bound}]" if sliced else name

        class _Vectorize(cst.CSTTransformer):
            def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
                name = _read_of(original, index)
                if name is not None:
                    return cst.parse_expression(whole(name))
                return updated

        def vec(expr: cst.BaseExpression) -> tuple[str, bool]:
            new = expr.visit(_Vectorize())
            assert isinstance(new, cst.BaseExpression)
            return _code(new), _atomic(new)

        def cond(expr: cst.BaseExpression) -> tuple[str, bool]:
            """A bool tensor with the truth value the ``if`` gave each element."""
            if isinstance(expr, cst.BooleanOperation):
                left, right = cond(expr.left), cond(expr.right)
                op = "&" if isinstance(expr.operator, cst.And) else "|"
                text = f"{_wrap(*left)} {op} {_wrap(*right)}"
                return (f"({text})", True) if expr.lpar else (text, False)
            if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
                inner = cond(expr.expression)
                return f"~{_wrap(*inner)}", True
            if isinstance(expr, cst.Comparison) and len(expr.comparisons) > 1:
                parts = []
                left = expr.left
                for comparison in expr.comparisons:
                    pair = cst.Comparison(left=left, comparisons=[comparison.with_changes(
                        comparator=comparison.comparator.with_changes(lpar=[], rpar=[])
                        if not isinstance(comparison.comparator, cst.Comparison) else comparison.comparator)])
                    parts.append(f"({vec(pair)[0]})")
                    left = comparison.comparator
                return " & ".join(parts), False
            if isinstance(expr, cst.Comparison) or infer_dtype_kind(expr) == "bool":
                return vec(expr)
            text, atomic = vec(expr)
            return f"{_wrap(text, atomic)}.bool()", True

        target = mt.target
        tgt = f"{target}[:]" if whole(target) == target else whole(target)
        description = ""
        if form == "mask":
            c = cond(mt.conditions[0])[0]
            value = mt.values[0]
            assert value is not None
            new = f"{whole(target)}[{c}] = {_code(value)}"
            description = "boolean-mask assignment"
        elif form == "clamp":
            bounds = self._clamp_bounds(mt)
            assert bounds is not None
            lower, upper, source = bounds
            if lower is not None and upper is not None:
                args = f"{lower}, {upper}"
            elif lower is not None:
                args = f"min={lower}"
            else:
                args = f"max={upper}"
            new = f"{tgt} = {whole(source)}.clamp({args})"
            description = "clamp (holds when the lower bound is at most the upper one)"
        elif form == "where":
            text = None
            for c_expr, v_expr in zip(reversed(mt.conditions), reversed(mt.values[:-1])):
                if text is None:
                    last = mt.values[-1]
                    text = vec(last)[0] if last is not None else whole(target)
                v = vec(v_expr)[0] if v_expr is not None else whole(target)
                text = f"{torch}.where({cond(c_expr)[0]}, {v}, {text})"
            new = f"{tgt} = {text}"
            description = "torch.where, written into the target with slice assignment (keeps its dtype)"
        elif form == "count":
            c = cond(mt.conditions[0])
            new = f"{target} {mt.op} int({_wrap(*c)}.sum())"
            description = "count of the selected elements"
        elif form == "branches_index":
            new = "\n".join(self._branch_lines(mt, target, cond, vec, ctx, by_index=True))
            description = "one index assignment per branch, at the positions it selects"
        elif form == "branches":
            new = "\n".join(self._branch_lines(mt, whole(target), cond, vec, ctx))
            description = "one boolean-mask assignment per branch (casts each branch into the target on its own)"
        elif form == "narrowing_rows":
            new = "\n".join(self._narrowing_lines(mt, cond, ctx))
            description = "the selected positions narrowed test by test (reads each array where `and` reads it)"
        elif form == "index_fill":
            c = cond(mt.conditions[0])
            value = mt.values[0]
            assert value is not None
            names = names_used(enclosing_scope(mt.loop, ctx.parents)) | ctx.module_names | set(BUILTIN_NAMES)
            mask = next(n for n in (f"{target}_mask{k or ''}" for k in range(100)) if n not in names)
            new = f"{mask} = {c[0]}\n{target}.index_fill_(0, {mask}.nonzero().squeeze(1), {_code(value)})"
            description = "index_fill_ at the selected positions (indexes the target only where the branch runs)"
        else:  # "masked_sum", "masked_sum_cast" (the selected values cast to the accumulator's dtype
            # first) or "masked_sum_promoted" (to the dtype `total += v[i]` adds in)
            c = cond(mt.conditions[0])[0]
            value = mt.values[0]
            assert value is not None
            v = vec(value)
            cast = {
                "masked_sum_cast": f".to({target}.dtype)",
                "masked_sum_promoted": f".to({torch}.promote_types({self._array_read(value)}.dtype, {target}.dtype))",
            }.get(form, "")
            new = f"{target} {mt.op} {_wrap(*v)}[{c}]{cast}.sum()"
            description = {
                "masked_sum_cast": "masked reduction in the accumulator's dtype",
                "masked_sum_promoted": "masked reduction in the dtype each step adds in",
            }.get(form, "masked reduction")
        if extent == "max0":
            description += ", extent clamped at 0"
        new_module = cst.parse_module(new + "\n", config=ctx.module.config_for_parsing)
        new_stmts = list(new_module.body)
        leading = list(mt.loop.leading_lines) + comments_in(mt.loop.with_changes(leading_lines=()))
        new_stmts[0] = new_stmts[0].with_changes(leading_lines=leading)
        new_stmt = new_stmts[0]
        init_code = statement_code(ctx.module, init) if init is not None else ""
        outputs: tuple[str, ...] = ()
        note = (
            f"the loop, verbatim; `{target}` is compared after the run (it is written in place); tensors "
            "indexed by the loop variable at the rank the function pins, else as vectors and as columns "
            "(one element per step, or one row)"
        )
        if mt.kind == "accumulate":
            outputs = (target,)
            note = f"the loop, verbatim{', after its tensor initializer' if init is not None else ''}"
        kernel = Kernel(
            old=init_code + statement_code(ctx.module, mt.loop),
            new=init_code + "".join(statement_code(ctx.module, stmt) for stmt in new_stmts),
            inputs=self._inputs(mt, init, form, ctx, ranks),
            outputs=outputs,
            modules=ctx.kernel_modules(),
            # (the cast form sums float values too, in another order than the loop adds them)
            reorders_float_reduction=form in ("masked_sum", "masked_sum_cast", "masked_sum_promoted"),
            note=note,
        )
        imports = ctx.imports if f"{torch}." in new else ()
        replacement: cst.CSTNode | cst.FlattenSentinel = (
            new_stmt if len(new_stmts) == 1 else cst.FlattenSentinel(new_stmts)
        )
        return Candidate(description, (Edit(mt.loop, replacement),), kernel, imports)

    def _branch_lines(  # noqa: ANN001
        self, mt: _Match, view: str, cond, vec, ctx: RuleContext, by_index: bool = False
    ) -> list[str]:
        """``y[:n][m_k] = v_k[m_k]`` per branch, after computing every mask and every branch value
        but the first from the unmodified inputs (the target may be one of them, or share memory
        with one). ``m_k`` holds where branch ``k`` is the first whose condition holds."""
        index = mt.shape.index or ""
        scope = enclosing_scope(mt.loop, ctx.parents)
        taken = names_used(scope) | ctx.module_names | set(BUILTIN_NAMES)

        def fresh(base: str) -> str:
            name, k = base, 1
            while name in taken:
                k += 1
                name = f"{base}_{k}"
            taken.add(name)
            return name

        target = mt.target
        chain = len(mt.conditions) > 1
        branches = len(mt.values) if mt.values[-1] is not None else len(mt.conditions)
        masks: list[str] = []
        lines: list[str] = []
        for k in range(branches):
            name = fresh(f"{target}_mask{k + 1}" if chain else f"{target}_mask")
            if k < len(mt.conditions):
                text = cond(mt.conditions[k])[0]
                if target in self._element_reads(mt.conditions[k], index) and not isinstance(
                    mt.conditions[k], (cst.Comparison, cst.BooleanOperation, cst.UnaryOperation)
                ):
                    text = f"{text}.clone()"  # `y.bool()` is `y` itself for a bool `y`, which the writes change
                if k == 0:
                    lines.append(f"{name} = {text}")
                else:
                    rest = f"({text})" if not cond(mt.conditions[k])[1] else text
                    lines.append(f"{name} = ~{masks[-1]} & {rest}" if k == 1 else
                                 f"{name} = ~({' | '.join(masks)}) & {rest}")
                masks.append(name)
            else:
                # the else branch: where no condition held
                if len(masks) == 1:
                    masks.append(f"~{masks[0]}")
                else:
                    lines.append(f"{name} = ~({' | '.join(masks)})")
                    masks.append(name)
        values: list[str] = []
        for k in range(branches):
            value = mt.values[k]
            assert value is not None
            text, atomic = vec(value)
            if self._element_reads(value, index):
                if k > 0 and element_of(value, index) is None:
                    # computed before the first write; a plain element read needs no copy: the
                    # masks are disjoint, so the writes before never touch what it reads
                    name = fresh(f"{target}_value{k + 1}" if chain else f"{target}_else")
                    lines.append(f"{name} = {text}")
                    text, atomic = name, True
                # mask assignment wants the target's dtype: cast as `y[i] = v` does
                values.append(f"{_wrap(text, atomic)}[{masks[k]}].to({target}.dtype)")
            else:
                values.append(text)  # loop-invariant: assigned as is, broadcast as `y[i] = v` does
        for k in range(branches):
            where = f"{masks[k]}.nonzero().squeeze(1)" if by_index else masks[k]
            lines.append(f"{view}[{where}] = {values[k]}")
        return lines

    def _narrowing_lines(self, mt: _Match, cond, ctx: RuleContext) -> list[str]:  # noqa: ANN001
        """``rows = a.nonzero().squeeze(1)``, then ``rows = rows[b(rows)]`` per later test, then
        ``y[rows] = v(rows)``. Each later step runs only where some position is left: the loop
        evaluates a later test, or the value, only at a position the tests before it selected
        (an empty index still reads a 0-d array, or a `len()` of something without one, and a
        write of nothing into a leaf that needs grad raises where the loop wrote nothing)."""
        parts = _and_parts(mt.conditions[0])
        index = mt.shape.index or ""
        taken = names_used(enclosing_scope(mt.loop, ctx.parents)) | ctx.module_names | set(BUILTIN_NAMES)
        rows = next(n for n in (f"{mt.target}_rows{k or ''}" for k in range(100)) if n not in taken)

        class _AtRows(cst.CSTTransformer):
            def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
                name = _read_of(original, index)
                if name is not None:
                    return cst.parse_expression(f"{name}[{rows}]")
                return updated

        def at_rows(expr: cst.BaseExpression) -> tuple[str, bool]:
            new = expr.visit(_AtRows())
            assert isinstance(new, cst.BaseExpression)
            return _code(new), _atomic(new)

        first = cond(parts[0])
        lines = [f"{rows} = {_wrap(*first)}.nonzero().squeeze(1)"]
        guard = f"if {rows}.numel() > 0:\n    "
        for part in parts[1:]:
            text, atomic = at_rows(part)
            # (a value tested bare is its truth: `-z[i]` or `z[i] * 2` must not index by position)
            if not (isinstance(part, cst.Comparison) or infer_dtype_kind(part) == "bool"):
                text, atomic = f"{_wrap(text, atomic)}.bool()", True
            lines.append(f"{guard}{rows} = {rows}[{text}]")
        value = mt.values[0]
        assert value is not None
        text, atomic = at_rows(value)
        if self._element_reads(value, index):
            text = f"{_wrap(text, atomic)}.to({mt.target}.dtype)"  # cast as `y[i] = v` does
        lines.append(f"{guard}{mt.target}[{rows}] = {text}")
        return lines

    def _inputs(
        self, mt: _Match, init: cst.SimpleStatementLine | None, form: str, ctx: RuleContext,
        ranks: Mapping[str, int],
    ) -> tuple[InputSpec, ...]:
        index = mt.shape.index
        used = names_used(mt.loop.iter) | names_used(mt.branch) | (names_used(init) if init is not None else set())
        exclude = {index}
        if init is not None:
            exclude.add(mt.target)
        free = sorted(n for n in used - exclude if n not in BUILTIN_NAMES and n not in ctx.module_names)
        tensors = set(mt.reads) | ({mt.target} if mt.kind == "assign" else set())
        # (`align.data[i]` reads the elements of `align`)
        tensors |= {r[: -len(".data")] for r in mt.reads if r.endswith(".data") and r[: -len(".data")].isidentifier()}
        extent = mt.shape.extent.value if isinstance(mt.shape.extent, cst.Name) else None
        scope = enclosing_scope(mt.loop, ctx.parents)
        specs = []
        for name in free:
            # the array the loop measures is walked along its first dimension: an example on which
            # it is empty (no step) is judged only where the old code runs on it grown non-empty
            walked = {"batch_dim": 0} if mt.shape.extent is None and name == mt.shape.owner else {}
            if name in tensors:
                # element-wise: a tensor indexed by the loop variable holds one element per step
                # where the function pins it 1-D; else it may as well be a column (`scores` of
                # shape (n, 1): `if scores[i] > t` tests its one element) or rows of a target, and
                # the checker draws those too (a mask assignment writes whole rows of a target of
                # any rank); conditions used bare (`if mask[i]:`) draw bool, integer and float masks
                whole_rows = form in ("mask", "index_fill") and name == mt.target and name not in mt.reads
                if whole_rows:
                    specs.append(InputSpec(name, Kind.TENSOR, **walked))
                else:
                    specs.append(InputSpec(name, Kind.TENSOR, ranks=(ranks[name],) if name in ranks else (1, 2), **walked))
            elif name == extent:
                specs.append(InputSpec(name, Kind.INT, count=True))
            else:
                # the owner of `len(y)` that is not read, a threshold: what the evidence allows
                # (an `int`/`float`/`bool` annotation among it)
                specs.append(ctx.evidence(scope).name(name, at=mt.loop).spec())
        return tuple(specs)
