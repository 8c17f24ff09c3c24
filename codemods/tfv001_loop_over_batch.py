"""TFV001 loop-over-batch: per-sample results computed in a Python loop over a batch."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    BUILTIN_NAMES,
    ELEMENTWISE_METHODS,
    RuleContext,
    assigned_names,
    comments_in,
    dotted,
    enclosing_scope,
    length_owner,
    module_nodes,
    name_nodes,
    names_used,
    statement_code,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.syntax import SyntaxIndex, assigned_name, is_range_call, single_statement
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV001"

_ELEMENTWISE_METHODS = (ELEMENTWISE_METHODS - {"cpu", "detach"}) | {"nan_to_num"}  # no device moves in a batched body
#: torch.* / F.* functions that act element-wise on all their tensor arguments
_ELEMENTWISE_FUNCTIONS = frozenset(
    {"abs", "exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu", "sign",
     "floor", "ceil", "round", "clamp", "clip", "where", "maximum", "minimum", "pow", "square", "erf",
     "softplus", "gelu", "silu", "elu", "leaky_relu", "relu6", "hardtanh", "mul", "add", "sub", "div",
     "isnan", "isfinite", "logical_not", "nan_to_num"}
)
#: reductions over a sample: ``dim`` is their first positional argument (``norm``: keyword only)
_REDUCTIONS = frozenset({"sum", "mean", "prod", "amax", "amin", "std", "var", "all", "any", "norm", "nansum",
                         "nanmean", "logsumexp", "max", "min"})
#: shape-preserving ops along one dimension
_ALONG_DIM = frozenset({"softmax", "log_softmax", "cumsum", "cumprod", "logcumsumexp"})
#: calls that draw random numbers: batching them reorders the draws
_RNG = frozenset(
    {"rand", "randn", "rand_like", "randn_like", "randint", "randint_like", "randperm", "bernoulli",
     "multinomial", "normal", "poisson", "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout",
     "feature_alpha_dropout", "gumbel_softmax", "rrelu", "uniform_", "normal_", "random_", "exponential_",
     "cauchy_", "log_normal_", "geometric_", "bernoulli_"}
)
#: methods a per-sample value must not call (host transfers, in-place writes, autograd side effects)
_FORBIDDEN_METHODS = frozenset({"item", "tolist", "numpy", "backward", "data_ptr", "register_hook"})
#: tensor methods that an invariant receiver may call without being an opaque object
_TENSOR_METHODS = frozenset({"matmul", "mm", "mv", "dot", "mul", "add", "sub", "div", "t", "pow"})
#: what keeps storage with its receiver: the batched value must not alias an input
_NON_ALLOCATING = frozenset({"float", "double", "long", "int", "half", "bool", "detach", "cpu", "to",
                             "contiguous", "view", "reshape", "flatten", "squeeze", "unsqueeze"})
_ALLOCATORS = frozenset({"zeros", "empty", "ones", "full", "zeros_like", "empty_like", "ones_like", "full_like"})
_SIMPLE_OPS = (cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
               cst.BitAnd, cst.BitOr, cst.BitXor)

V, S, R, C = "V", "S", "R", "C"  # per-sample tensor, per-sample scalar from a reduction, unknown rank, invariant


class _NoMatch(Exception):
    """The loop is not a batch computation this rule understands: stay silent."""


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _atomic(node: cst.BaseExpression) -> bool:
    return isinstance(node, (cst.Name, cst.Call, cst.Subscript, cst.Attribute, cst.Integer, cst.Float)) or bool(
        getattr(node, "lpar", None)
    )


def _paren(node: cst.BaseExpression) -> cst.BaseExpression:
    return node if _atomic(node) else node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _is_literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _int_literal(node: cst.BaseExpression) -> int | None:
    negative = False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        negative, node = True, node.expression
    if isinstance(node, cst.Integer):
        value = int(node.value, 0)
        return -value if negative else value
    return None


@dataclass
class _Axis:
    """One loop: the variable(s) it binds and the tensors they walk."""

    index: str | None  # ``for i in range(...)``: X[i] is a sample of X
    elements: dict[str, str]  # ``for r in x`` / ``for a, b in zip(x, y)``: element var -> tensor
    owner: str | None  # range(len(x)): x
    extent: cst.BaseExpression | None  # range(EXPR) as written (also for owner loops)
    #: tensors subscripted by the index, filled in by the scan
    indexed: set[str] = field(default_factory=set)

    @property
    def variables(self) -> set[str]:
        return ({self.index} if self.index else set()) | set(self.elements)


def _axis_of(target: cst.BaseExpression, iterable: cst.BaseExpression) -> _Axis | None:
    if isinstance(target, cst.Name) and isinstance(iterable, cst.Name):
        return _Axis(None, {target.value: iterable.value}, iterable.value, None)
    if isinstance(iterable, cst.Call) and isinstance(iterable.func, cst.Name):
        args = iterable.args
        if any(a.keyword is not None or a.star for a in args):
            return None
        if iterable.func.value == "zip" and isinstance(target, cst.Tuple) and len(args) == len(target.elements) >= 2:
            elements: dict[str, str] = {}
            for element, arg in zip(target.elements, args):
                if not isinstance(element.value, cst.Name) or not isinstance(arg.value, cst.Name):
                    return None
                elements[element.value.value] = arg.value.value
            if len(set(elements)) != len(elements):
                return None
            return _Axis(None, elements, None, None)
        if iterable.func.value == "range" and isinstance(target, cst.Name):
            if len(args) == 2 and _int_literal(args[0].value) == 0:
                args = args[1:]
            if len(args) != 1:
                return None
            extent = args[0].value
            return _Axis(target.value, {}, length_owner(extent), extent)
    return None


@dataclass
class _Translation:
    node: cst.BaseExpression
    cls: str
    keep: cst.BaseExpression | None = None  # the S value with keepdim=True, to broadcast against V


class _Batcher:
    """Turns the per-sample expression into a batched one, or says it cannot (None)."""

    def __init__(self, replace: Callable[[cst.BaseExpression], cst.BaseExpression | None],
                 loop_vars: set[str], torch_roots: set[str], opaque_ok: bool) -> None:
        self.replace = replace
        self.loop_vars = loop_vars
        self.torch_roots = torch_roots
        self.opaque_ok = opaque_ok

    def per_sample(self, node: cst.CSTNode) -> bool:
        return bool(names_used(node) & self.loop_vars)

    def __call__(self, node: cst.BaseExpression) -> _Translation | None:
        if not self.per_sample(node):
            return _Translation(node, C, node)
        swapped = self.replace(node)
        if swapped is not None:
            return _Translation(swapped, V)
        if isinstance(node, cst.BinaryOperation):
            return self.binary(node)
        if isinstance(node, cst.UnaryOperation):
            inner = self(node.expression)
            if inner is None:
                return None
            keep = node.with_changes(expression=inner.keep) if inner.keep is not None else None
            return _Translation(node.with_changes(expression=inner.node), inner.cls, keep)
        if isinstance(node, cst.Comparison) and len(node.comparisons) == 1:
            left, right = self(node.left), self(node.comparisons[0].comparator)
            if left is None or right is None:
                return None
            combined = self.combine(left, right, node.left, node.comparisons[0].comparator)
            if combined is None:
                return None
            (l, r), cls, keep = combined

            def build(a: cst.BaseExpression, b: cst.BaseExpression) -> cst.BaseExpression:
                return node.with_changes(left=a, comparisons=[node.comparisons[0].with_changes(comparator=b)])

            return _Translation(build(l, r), cls, build(*keep) if keep else None)
        if isinstance(node, cst.Call):
            return self.call(node)
        return None

    def combine(self, left: _Translation, right: _Translation, lsrc: cst.BaseExpression, rsrc: cst.BaseExpression):
        """Operands of an element-wise binary op: ((left, right), class, keep operands)."""
        classes = {left.cls, right.cls}
        if R in classes and classes - {R, C}:
            return None
        if S in classes and V in classes:
            l = left.keep if left.cls == S else left.node
            r = right.keep if right.cls == S else right.node
            if l is None or r is None:
                return None
            return (l, r), V, None
        if S in classes and C in classes:
            constant = lsrc if left.cls == C else rsrc
            if not _is_literal(constant):
                return None
        cls = R if R in classes else S if S in classes else V if V in classes else C
        keep = None
        if cls == S and left.keep is not None and right.keep is not None:
            keep = (left.keep, right.keep)
        return (left.node, right.node), cls, keep

    def binary(self, node: cst.BinaryOperation) -> _Translation | None:
        left, right = self(node.left), self(node.right)
        if left is None or right is None:
            return None
        if isinstance(node.operator, cst.MatrixMultiply):
            if left.cls == V and right.cls == C:
                return _Translation(node.with_changes(left=left.node), R)
            if left.cls == C and right.cls == V:
                # w @ x_i == x_i @ w.T for a matrix w and a vector sample: batched, x @ w.T
                weight = _paren(node.left)
                swapped = node.with_changes(left=right.node, right=cst.Attribute(weight, cst.Name("T")))
                return _Translation(swapped, R)
            return None
        if not isinstance(node.operator, _SIMPLE_OPS):
            return None
        combined = self.combine(left, right, node.left, node.right)
        if combined is None:
            return None
        (l, r), cls, keep = combined
        return _Translation(
            node.with_changes(left=l, right=r), cls, node.with_changes(left=keep[0], right=keep[1]) if keep else None
        )

    @staticmethod
    def _dim_arg(call: cst.Call, position: int | None) -> tuple[int | None, cst.Arg | None]:
        for index, arg in enumerate(call.args):
            if (arg.keyword is not None and arg.keyword.value == "dim") or (
                arg.keyword is None and position is not None and index == position
            ):
                return _int_literal(arg.value), arg
        return None, None

    @staticmethod
    def _shift(arg: cst.Arg, dim: int) -> cst.Arg:
        return arg.with_changes(value=cst.Integer(str(dim + 1))) if dim >= 0 else arg

    def _args_invariant(self, args: Sequence[cst.Arg]) -> bool:
        return not any(self.per_sample(a.value) or a.star for a in args)

    def call(self, node: cst.Call) -> _Translation | None:
        func = node.func
        root = dotted(func) or ""
        if isinstance(func, cst.Attribute) and self.per_sample(func.value) and root.split(".")[0] not in self.torch_roots:
            return self.method(node, func)
        if isinstance(func, cst.Attribute) and root.split(".")[0] in self.torch_roots:
            return self.function(node, func.attr.value)
        if isinstance(func, cst.Name) and func.value == "abs" and len(node.args) == 1:
            inner = self(node.args[0].value)
            if inner is None or inner.cls not in (V, R):
                return None
            return _Translation(node.with_changes(args=[node.args[0].with_changes(value=inner.node)]), inner.cls)
        if isinstance(func, cst.Name) and func.value in self.torch_roots:
            return self.function(node, func.value)
        if self.opaque_ok and not self.per_sample(func):
            # an opaque callable: applied to the whole batch (an unverifiable assumption)
            args = []
            for arg in node.args:
                inner = self(arg.value)
                if inner is None or inner.cls not in (V, C):
                    return None
                args.append(arg.with_changes(value=inner.node))
            return _Translation(node.with_changes(args=args), V)
        return None

    def method(self, node: cst.Call, func: cst.Attribute) -> _Translation | None:
        name = func.attr.value
        receiver = self(func.value)
        if receiver is None:
            return None
        if name in _ELEMENTWISE_METHODS:
            if not self._args_invariant(node.args) or receiver.cls == C:
                return None
            keep = node.with_changes(func=func.with_changes(value=receiver.keep)) if receiver.keep is not None else None
            return _Translation(node.with_changes(func=func.with_changes(value=receiver.node)), receiver.cls, keep)
        if receiver.cls != V or not self._args_invariant(node.args):
            if name == "dot" and receiver.cls == V and len(node.args) == 1:
                other = self(node.args[0].value)
                if other is not None and other.cls == V:
                    return self._dot(receiver.node, other.node, both=True)
            return None
        batched_receiver = func.with_changes(value=receiver.node)
        if name == "dot" and len(node.args) == 1:
            return self._dot(receiver.node, node.args[0].value, both=False)
        if name in _REDUCTIONS:
            position = None if name == "norm" else 0
            dim, dim_arg = self._dim_arg(node, position)
            if dim_arg is None:
                if name in ("max", "min"):
                    if node.args:
                        return None
                    batched_receiver = batched_receiver.with_changes(attr=cst.Name("a" + name))
                if name == "logsumexp":
                    return None
                plain = node.with_changes(func=batched_receiver, args=[*node.args, self._kw("dim", _expr("-1"))])
                keep = plain.with_changes(args=[*plain.args, self._kw("keepdim", cst.Name("True"))])
                return _Translation(plain, S, keep)
            if dim is None or name in ("max", "min"):
                return None
            args = [self._shift(a, dim) if a is dim_arg else a for a in node.args]
            keepdim = any(a.keyword is not None and a.keyword.value == "keepdim" for a in node.args)
            return _Translation(node.with_changes(func=batched_receiver, args=args), V if keepdim else R)
        if name in _ALONG_DIM:
            dim, dim_arg = self._dim_arg(node, 0)
            if dim is None or dim_arg is None:
                return None
            args = [self._shift(a, dim) if a is dim_arg else a for a in node.args]
            return _Translation(node.with_changes(func=batched_receiver, args=args), V)
        return None

    @staticmethod
    def _kw(name: str, value: cst.BaseExpression) -> cst.Arg:
        return cst.Arg(value=value, keyword=cst.Name(name), equal=cst.AssignEqual(
            whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")))

    def _dot(self, sample: cst.BaseExpression, other: cst.BaseExpression, both: bool) -> _Translation:
        if both:
            product = cst.BinaryOperation(_paren(sample), cst.Multiply(), _paren(other),
                                          lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
            plain = cst.Call(cst.Attribute(product, cst.Name("sum")), [self._kw("dim", _expr("-1"))])
            keep = plain.with_changes(args=[*plain.args, self._kw("keepdim", cst.Name("True"))])
            return _Translation(plain, S, keep)
        matmul = cst.BinaryOperation(_paren(sample), cst.MatrixMultiply(), _paren(other),
                                     lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        return _Translation(matmul, S, None)

    def function(self, node: cst.Call, name: str) -> _Translation | None:
        if name in _ELEMENTWISE_FUNCTIONS:
            args, classes = [], set()
            for arg in node.args:
                if arg.star:
                    return None
                inner = self(arg.value)
                if inner is None or inner.cls not in (V, C):
                    return None
                classes.add(inner.cls)
                args.append(arg.with_changes(value=inner.node))
            return _Translation(node.with_changes(args=args), V if V in classes else C)
        if not node.args or node.args[0].keyword is not None:
            return None
        first = self(node.args[0].value)
        if first is None or first.cls != V:
            return None
        rest = node.args[1:]
        if name == "dot" and len(rest) == 1 and rest[0].keyword is None:
            other = self(rest[0].value)
            if other is None or other.cls == S or other.cls == R:
                return None
            return self._dot(first.node, other.node, both=other.cls == V)
        defaults = {"normalize": 1, "cosine_similarity": 1}
        positions = {"softmax": 1, "log_softmax": 1, "cumsum": 1, "normalize": 2, "cosine_similarity": 2}
        if name not in positions:
            return None
        args = [node.args[0].with_changes(value=first.node)]
        if name == "cosine_similarity":
            if not rest:
                return None
            second = self(rest[0].value)
            if second is None or second.cls not in (V, C):
                return None
            args.append(rest[0].with_changes(value=second.node))
            rest = rest[1:]
        elif not self._args_invariant(rest):
            return None
        call = node.with_changes(args=[*args, *rest])
        dim, dim_arg = self._dim_arg(call, positions[name])
        if dim_arg is None:
            if name not in defaults:
                return None
            call = call.with_changes(args=[*call.args, self._kw("dim", cst.Integer(str(defaults[name] + 1)))])
        elif dim is None:
            return None
        else:
            call = call.with_changes(args=[self._shift(a, dim) if a is dim_arg else a for a in call.args])
        return _Translation(call, R if name == "cosine_similarity" else V)


@dataclass
class _Context(RuleContext):
    #: every name bound to torch or one of its submodules
    torch_roots: set[str] = field(default_factory=set)


@dataclass
class _Match:
    """One batch computation: where it is, what it computes, and how the result is stored."""

    kind: str  # "out" (out[i] = ...), "append" (list + stack), "stack" (stack of a comprehension)
    anchor: cst.CSTNode
    axes: list[_Axis]
    expr: cst.BaseExpression
    old_code: str
    #: code of the statement(s) the batched value goes into, with {value} for the value and
    #: {bounds} for out's slice
    store: str
    output: str
    edits: Callable[[str], tuple[Edit, ...]]
    #: code the new snippet starts with (shape unpacking before the loop, out's allocation)
    prefix: str
    out_name: str | None = None
    full_cover: bool = False


class LoopOverBatch(Rule):
    code = CODE
    tensor_code_only = True
    name = "loop-over-batch"
    summary = "A Python loop computes one sample of a batch at a time where one batched expression does."
    docs = """
    ## What it does
    Finds per-sample computations in a Python loop over the first dimension of a tensor:

    1. **A preallocated output filled row by row** -- `out = torch.zeros(n, d)` then
       `for i in range(n): out[i] = f(x[i], w)` (also `torch.empty`, `torch.zeros_like(x)`,
       `x.size(0)`, `x.shape[0]`, `len(x)`, `range(0, n)`); nested loops over two index sets,
       `d[i, j] = f(a[i], b[j])`, are handled by broadcasting `a[:, None]` against `b[None]`.
    2. **A list grown with `append` and stacked once** -- `res = []`, `res.append(f(x[i]))`,
       `out = torch.stack(res)`.
    3. **A stacked comprehension** -- `torch.stack([f(x[i]) for i in range(n)])`,
       `torch.stack([f(r) for r in x])`, `torch.stack([f(a, b) for a, b in zip(x, y)])`.

    The per-sample expression may use arithmetic, comparisons, element-wise tensor methods and
    `torch` / `torch.nn.functional` functions, reductions over the sample (`.sum()`, `.mean()`,
    `.norm()`, `.max()`, with or without `dim`), `softmax` / `log_softmax` / `F.normalize` /
    `F.cosine_similarity` along a dimension, dot and matrix products, and loop-invariant values.

    ## Why is this bad?
    Each iteration pays Python's interpreter, a tensor object per sample and one small kernel
    launch per operation; on a GPU the launches alone dominate. One batched expression runs the
    same arithmetic in a few large kernels.

    ## Example
    ```python
    n, d = x.shape
    out = torch.zeros(n)
    for i in range(n):
        out[i] = x[i].norm()

    rows = []
    for r in x:
        rows.append(r / r.norm())
    y = torch.stack(rows)
    ```

    ## Use instead
    ```python
    n, d = x.shape
    out = torch.zeros(n)
    out[:] = x[:n].norm(dim=-1)

    y = x / x.norm(dim=-1, keepdim=True)
    ```
    Dimensions shift by one (`dim=0` of a sample is `dim=1` of the batch; negative dims stay),
    and a reduction over the whole sample becomes one over the last dimension where the checker
    shows the samples are vectors (`n, d = x.shape` pins the rank). Where it cannot (the ranks
    are not pinned, `w @ x[i]` with a `w` of unknown rank), the rewrite is `torch.vmap` of the
    loop body, e.g. `torch.vmap(lambda xi: (xi * w).sum())(x)`, which is right for any rank.
    The output keeps its dtype and identity: it is written in place (`out[:] = ...`,
    `out[:n] = ...`) as the loop did; inputs are sliced to the loop's extent (`x[:n]`,
    `x[:max(n, 0)]` where `n` may be negative, `a[:len(b)]` for `zip`); and where an empty batch
    would let the loop accept operands the batched expression cannot broadcast, the store is
    guarded (`if n > 0:`), because the loop runs no iteration there.

    ## When it stays silent
    - The loop body is more than the one store (`out[i] = ...` / `res.append(...)`): a print,
      a log line or a second statement per sample stays as written.
    - The loop can leave early (`break`, `return`, `raise`), or the loop index is used other
      than as `x[i]` (`x[i - 1]`, `x[i] + i`): a recurrence such as `h = f(h, x[i])` or
      `x[i] = x[i] + x[i - 1]` is not a batch.
    - The result is read inside the loop, or the list is used anywhere but the `append` and the
      one `torch.stack` right after the loop.
    - The body draws random numbers (`torch.randn`, dropout): batching would reorder the draws.
    - Nothing shows that the iterated names are tensors -- a Python list of tensors may be
      ragged. Annotate it (`x: torch.Tensor`) or use a tensor method on it (`x.size(0)`).
    - The body calls a model, a module attribute (`self.net(x[i])`) or a helper defined
      elsewhere: one batched call assumes it treats samples independently (false for BatchNorm
      in training mode). Such rewrites are reported unverified and applied only with `--unsafe`.
    """
    examples = (
        Example(
            """
            import torch

            def row_norms(x: torch.Tensor) -> torch.Tensor:
                n, d = x.shape
                out = torch.zeros(n)
                for i in range(n):
                    out[i] = x[i].norm()
                return out
            """,
            """
            import torch

            def row_norms(x: torch.Tensor) -> torch.Tensor:
                n, d = x.shape
                out = torch.zeros(n)
                out[:] = x[:n].norm(dim=-1)
                return out
            """,
            id="row-norms",
        ),
        Example(
            """
            import torch

            def embed(model, x: torch.Tensor) -> torch.Tensor:
                return torch.stack([model(x[i]) for i in range(len(x))])
            """,
            None,
            id="model-per-sample",
        ),
    )

    @classmethod
    def might_match(cls, source: bytes) -> bool:
        return b"for " in source and (b"stack" in source or b"] =" in source)

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """A `range` loop (or two nested) whose one statement stores `out[...] = ...` with `out`
        assigned before the loop, or appends to a list stacked right after it; or `*.stack(<comprehension>)`."""
        for loop in index.fors:
            statement = single_statement(loop.body)
            if isinstance(statement, (ast.For, ast.AsyncFor)):
                statement = single_statement(statement.body)
            before, after = index.neighbours(loop)
            if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and is_range_call(loop.iter):
                target = statement.targets[0]
                while isinstance(target, ast.Subscript):  # out[i] / out[i, j] / out[i][j]
                    target = target.value
                if target is not statement.targets[0] and isinstance(target, ast.Name):
                    if any(assigned_name(s) == target.id for s in before):
                        return True
            elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call) and after:
                func = statement.value.func
                if isinstance(func, ast.Attribute) and func.attr == "append" and isinstance(func.value, ast.Name):
                    following = after[0]
                    value = following.value if isinstance(following, (ast.Assign, ast.Return)) else None
                    if (
                        isinstance(value, ast.Call)
                        and value.args
                        and isinstance(value.args[0], ast.Name)
                        and value.args[0].id == func.value.id
                    ):
                        return True
        for call in index.calls:
            if isinstance(call.func, ast.Attribute) and call.func.attr == "stack":
                first = call.args[0] if call.args else (call.keywords[0].value if call.keywords else None)
                if isinstance(first, ast.Starred):
                    first = first.value
                if isinstance(first, (ast.ListComp, ast.GeneratorExp)):
                    return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        module = wrapper.module
        nodes = module_nodes(module)
        loops: list[cst.For] = nodes.of_type(cst.For)  # type: ignore[assignment]
        stacks: list[cst.Call] = [
            node
            for node in nodes.of_type(cst.Call)
            if isinstance(node, cst.Call)
            and isinstance(node.func, cst.Attribute)
            and node.func.attr.value == "stack"
            and node.args
            and isinstance(node.args[0].value, (cst.ListComp, cst.GeneratorExp))
        ]
        if not loops and not stacks:
            return []
        ctx = _Context.from_wrapper(wrapper)
        ctx.torch_roots = {name for name, target in ctx.facts.bindings if target.split(".")[0] == "torch"} | {ctx.torch}
        proposals: list[Proposal] = []
        inner_loops: set[int] = set()
        for loop in loops:
            if id(loop) in inner_loops:
                continue
            for finder in (self._out_loop, self._append_loop):
                try:
                    match = finder(loop, ctx)
                    if isinstance(match, _Match):
                        self._loop_vars_dead_after(loop, match.axes, ctx)
                        match = self._proposal(match, ctx)
                except _NoMatch:
                    match = None
                if match is not None:
                    if isinstance(loop.body, cst.IndentedBlock) and isinstance(loop.body.body[0], cst.For):
                        inner_loops.add(id(loop.body.body[0]))
                    proposals.append(match)
                    break
        for call in stacks:
            try:
                match = self._stack_comprehension(call, ctx)
                if isinstance(match, _Match):
                    match = self._proposal(match, ctx)
            except _NoMatch:
                match = None
            if match is not None:
                proposals.append(match)
        proposals.sort(key=lambda p: (p.line, p.column))
        return proposals

    # ------------------------------------------------------------------ helpers

    def _position(self, node: cst.CSTNode, ctx: _Context) -> tuple[int, int]:
        pos = ctx.positions[node]
        return pos.start.line, pos.start.column + 1  # type: ignore[attr-defined]

    def _skip(self, node: cst.CSTNode, ctx: _Context, reason: str) -> Proposal:
        line, col = self._position(node, ctx)
        message = "a loop computes one sample at a time: one batched expression does"
        return Proposal(CODE, message, line, col, node, (), reason, statement_code(ctx.module, node))

    def _loop_vars_dead_after(self, loop: cst.For, axes: list[_Axis], ctx: _Context) -> None:
        """The loop variables must not be read after the loop: the rewrite no longer binds them."""
        loop_vars = set().union(*(a.variables for a in axes))
        scope = enclosing_scope(loop, ctx.parents)
        inside = sum(1 for n in name_nodes(loop) if n.value in loop_vars)
        if sum(1 for n in name_nodes(scope) if n.value in loop_vars) != inside:
            raise _NoMatch

    def _block(self, stmt: cst.CSTNode, ctx: _Context) -> list[cst.BaseStatement]:
        parent = ctx.parents.get(stmt)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return list(parent.body)
        raise _NoMatch

    def _single_statement(self, loop: cst.For) -> cst.BaseSmallStatement:
        if not isinstance(loop.body, cst.IndentedBlock) or len(loop.body.body) != 1:
            raise _NoMatch
        stmt = loop.body.body[0]
        if not isinstance(stmt, cst.SimpleStatementLine) or len(stmt.body) != 1:
            raise _NoMatch
        return stmt.body[0]

    def _loop_axis(self, loop: cst.For) -> _Axis:
        if loop.asynchronous is not None or loop.orelse is not None:
            raise _NoMatch
        axis = _axis_of(loop.target, loop.iter)
        if axis is None:
            raise _NoMatch
        return axis

    def _scan_uses(self, expr: cst.BaseExpression, axes: list[_Axis]) -> None:
        """Every use of a loop variable must be ``X[i]`` (index loops) or the element itself."""
        index_vars = {a.index: a for a in axes if a.index}
        ok = True

        class _Uses(cst.CSTVisitor):
            def visit_Subscript(self, node: cst.Subscript) -> bool:
                nonlocal ok
                if (
                    len(node.slice) == 1
                    and isinstance(node.slice[0].slice, cst.Index)
                    and isinstance(node.slice[0].slice.value, cst.Name)
                    and node.slice[0].slice.value.value in index_vars
                ):
                    if isinstance(node.value, cst.Name):
                        index_vars[node.slice[0].slice.value.value].indexed.add(node.value.value)
                        return False
                    ok = False
                return True

            def visit_Name(self, node: cst.Name) -> None:
                nonlocal ok
                if node.value in index_vars:
                    ok = False

            def visit_Lambda(self, node: cst.Lambda) -> None:
                nonlocal ok
                ok = False

        expr.visit(_Uses())
        if not ok or has_nested(expr):
            raise _NoMatch
        for axis in axes:
            if axis.index and not axis.indexed:
                raise _NoMatch
            if axis.index and any(t in axis.variables for t in axis.indexed):
                raise _NoMatch
        # the same tensor indexed by two loops is a diagonal, not a broadcast
        if len(axes) == 2 and axes[0].indexed & axes[1].indexed:
            raise _NoMatch

    def _tensors(self, axes: list[_Axis]) -> list[str]:
        names: list[str] = []
        for axis in axes:
            names += sorted(axis.indexed) + list(axis.elements.values())
        return list(dict.fromkeys(names))

    def _preconditions(self, anchor: cst.CSTNode, expr: cst.BaseExpression, axes: list[_Axis], ctx: _Context) -> Proposal | None:
        rng = [n for n in _called_names(expr) if n in _RNG]
        if rng:
            return self._skip(anchor, ctx, f"the body draws random numbers (`{rng[0]}`): batching would reorder the draws")
        evidence = ctx.evidence(enclosing_scope(anchor, ctx.parents))
        for name in self._tensors(axes):
            found = evidence.name(name, at=anchor)
            if not found.tensor:
                # a list of tensors may be ragged: batching it needs a tensor
                return self._skip(anchor, ctx, found.missing_tensor("batching its samples"))
        return None

    # ------------------------------------------------------------------ matchers

    def _out_loop(self, loop: cst.For, ctx: _Context) -> _Match | Proposal | None:
        axis = self._loop_axis(loop)
        if axis.index is None:
            raise _NoMatch
        axes = [axis]
        try:
            store = self._single_statement(loop)
        except _NoMatch:
            inner = loop.body.body[0] if isinstance(loop.body, cst.IndentedBlock) and len(loop.body.body) == 1 else None
            if not isinstance(inner, cst.For):
                raise
            inner_axis = self._loop_axis(inner)
            if inner_axis.index is None or inner_axis.index == axis.index:
                raise
            if axis.index in names_used(inner.iter):
                raise
            axes.append(inner_axis)
            store = self._single_statement(inner)
        if not isinstance(store, cst.Assign) or len(store.targets) != 1:
            raise _NoMatch
        target = store.targets[0].target
        indices = [a.index for a in axes]
        out = _store_target(target, indices)
        if out is None:
            raise _NoMatch
        expr = store.value
        if out in names_used(expr) or out in {a.owner for a in axes}:
            raise _NoMatch
        self._scan_uses(expr, axes)
        block = self._block(loop, ctx)
        position = block.index(loop)
        init = None
        for stmt in reversed(block[:position]):
            if out in names_used(stmt) or out in assigned_names(stmt):
                init = stmt
                break
        if init is None or not _is_allocation(init, out, ctx):
            raise _NoMatch
        skip = self._preconditions(loop, expr, axes, ctx)
        if skip is not None:
            return skip
        init_call = init.body[0].value  # type: ignore[attr-defined]
        old_code = statement_code(ctx.module, init) + statement_code(ctx.module, loop)
        comments = list(loop.leading_lines) + comments_in(loop.with_changes(leading_lines=()))

        def edits(new_code: str) -> tuple[Edit, ...]:
            new_stmt = cst.parse_statement(new_code, config=ctx.module.config_for_parsing)
            return (Edit(loop, new_stmt.with_changes(leading_lines=comments)),)

        full = len(axes) == 1 and _covers(init_call, axis)
        prelude = self._prelude(block, position, old_code, ctx)
        return _Match("out", loop, axes, expr, prelude + old_code, f"{out}[{{bounds}}] = {{value}}\n", out, edits,
                      prelude + statement_code(ctx.module, init), out, full)

    def _append_loop(self, loop: cst.For, ctx: _Context) -> _Match | Proposal | None:
        axis = self._loop_axis(loop)
        store = self._single_statement(loop)
        if not (
            isinstance(store, cst.Expr)
            and isinstance(store.value, cst.Call)
            and isinstance(store.value.func, cst.Attribute)
            and store.value.func.attr.value == "append"
            and isinstance(store.value.func.value, cst.Name)
            and len(store.value.args) == 1
            and store.value.args[0].keyword is None
            and not store.value.args[0].star
        ):
            raise _NoMatch
        res = store.value.func.value.value
        expr = store.value.args[0].value
        if res in axis.variables:
            raise _NoMatch
        self._scan_uses(expr, [axis])
        block = self._block(loop, ctx)
        position = block.index(loop)
        if position + 1 >= len(block) or position == 0:
            raise _NoMatch
        after = block[position + 1]
        init = next((s for s in reversed(block[:position]) if res in names_used(s)), None)
        if not (
            isinstance(init, cst.SimpleStatementLine)
            and len(init.body) == 1
            and isinstance(init.body[0], cst.Assign)
            and len(init.body[0].targets) == 1
            and isinstance(init.body[0].targets[0].target, cst.Name)
            and init.body[0].targets[0].target.value == res
            and isinstance(init.body[0].value, cst.List)
            and not init.body[0].value.elements
        ):
            raise _NoMatch
        if not isinstance(after, cst.SimpleStatementLine) or len(after.body) != 1:
            raise _NoMatch
        small = after.body[0]
        if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
            result_name = small.targets[0].target.value
            stack = small.value
            prefix = f"{result_name} = "
        elif isinstance(small, cst.Return) and small.value is not None:
            result_name, stack, prefix = "_result", small.value, "return "
        else:
            raise _NoMatch
        if not _is_stack_of(stack, res, ctx):
            raise _NoMatch
        scope = enclosing_scope(loop, ctx.parents)
        if sum(1 for n in name_nodes(scope) if n.value == res) != 3:
            raise _NoMatch  # the list is used elsewhere: it must stay a list
        skip = self._preconditions(loop, expr, [axis], ctx)
        if skip is not None:
            return skip
        old_code = (
            statement_code(ctx.module, init)
            + statement_code(ctx.module, loop)
            + f"{result_name} = {_code(stack)}\n"
        )
        comments = list(loop.leading_lines) + comments_in(loop.with_changes(leading_lines=()))
        init_comments = list(init.leading_lines)

        def edits(new_code: str) -> tuple[Edit, ...]:
            value = new_code.split(" = ", 1)[1]
            new_stmt = cst.parse_statement(prefix + value, config=ctx.module.config_for_parsing)
            new_stmt = new_stmt.with_changes(leading_lines=init_comments + comments + list(after.leading_lines))
            return (Edit(init, cst.RemovalSentinel.REMOVE), Edit(loop, cst.RemovalSentinel.REMOVE), Edit(after, new_stmt))

        prelude = self._prelude(block, position, old_code, ctx)
        return _Match("append", loop, [axis], expr, prelude + old_code, f"{result_name} = {{value}}\n", result_name,
                      edits, prelude)

    def _stack_comprehension(self, call: cst.Call, ctx: _Context) -> _Match | Proposal | None:
        root = dotted(call.func) or ""
        if root.split(".")[0] not in ctx.torch_roots or len(call.args) > 2:
            raise _NoMatch
        if len(call.args) == 2 and not (
            _int_literal(call.args[1].value) == 0
            and (call.args[1].keyword is None or call.args[1].keyword.value == "dim")
        ):
            raise _NoMatch
        comp = call.args[0].value
        assert isinstance(comp, (cst.ListComp, cst.GeneratorExp))
        clause = comp.for_in
        if clause.inner_for_in is not None or clause.ifs or clause.asynchronous is not None:
            raise _NoMatch
        axis = _axis_of(clause.target, clause.iter)
        if axis is None:
            raise _NoMatch
        expr = comp.elt
        self._scan_uses(expr, [axis])
        stmt = self._statement_of(call, ctx)
        skip = self._preconditions(stmt, expr, [axis], ctx)
        if skip is not None:
            return skip
        old_code = f"_result = {_code(call)}\n"
        parent = ctx.parents.get(call)

        def edits(new_code: str) -> tuple[Edit, ...]:
            value = cst.parse_expression(new_code.split(" = ", 1)[1])
            if not isinstance(parent, (cst.Assign, cst.Return, cst.Arg, cst.AnnAssign)):
                value = _paren(value)
            return (Edit(call, value),)

        prelude = ""
        parent_block = ctx.parents.get(stmt)
        if isinstance(parent_block, (cst.IndentedBlock, cst.Module)):
            body = list(parent_block.body)
            prelude = self._prelude(body, body.index(stmt), old_code, ctx)
        return _Match("stack", stmt, [axis], expr, prelude + old_code, "_result = {value}\n", "_result", edits, prelude)

    def _prelude(self, block: Sequence[cst.BaseStatement], position: int, code: str, ctx: _Context) -> str:
        """Shape statements before the loop that the kernel needs (``n, d = x.shape``): replayed
        verbatim, they pin the ranks the loop assumes, as the user's code does."""
        needed = names_used(cst.parse_module(code))
        chosen: list[str] = []
        later: set[str] = set()
        for stmt in reversed(block[:position]):
            if (
                isinstance(stmt, cst.SimpleStatementLine)
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], cst.Assign)
                and len(stmt.body[0].targets) == 1
                and _is_shape_query(stmt.body[0].value)
            ):
                targets = assigned_names(stmt)
                sources = names_used(stmt.body[0].value)
                if (targets | sources) & needed and not (targets | sources) & later:
                    chosen.append(statement_code(ctx.module, stmt))
                    needed |= sources
            later |= assigned_names(stmt)
        return "".join(reversed(chosen))

    def _statement_of(self, node: cst.CSTNode, ctx: _Context) -> cst.CSTNode:
        current = node
        while current in ctx.parents:
            current = ctx.parents[current]
            if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return current
        raise _NoMatch

    # ------------------------------------------------------------------ candidates

    def _proposal(self, match: _Match, ctx: _Context) -> Proposal:
        axes = match.axes
        loop_vars = set().union(*(a.variables for a in axes))
        opaque = [n for n in _opaque_callees(match.expr, ctx, loop_vars)]
        builtin_calls = [n for n in _builtin_callees(match.expr) if n != "abs"]
        line, col = self._position(match.anchor, ctx)
        snippet = statement_code(ctx.module, match.anchor)
        message = "a loop computes one sample at a time: one batched expression does"
        if builtin_calls:
            # host conversions (.item(), float()) are TFV002/TFV004's; in-place calls change inputs
            raise _NoMatch
        modes = [(mode, False) for mode in self._modes(axes)]
        if match.kind == "out":
            # an empty batch runs no iteration, so the loop accepts invariant operands of any shape;
            # the batched expression would still broadcast them: guard it where the checker says so
            guarded = [(mode, True) for mode in self._modes(axes) if mode != "max0"]
            operands = names_used(match.expr) - loop_vars - ctx.module_names - BUILTIN_NAMES
            # with two operands or more an empty batch almost always lets the loop accept shapes
            # that do not broadcast: guard from the start rather than count on the checker to
            # draw that degenerate input
            modes = guarded if len(operands) > 1 else modes + guarded
        candidates: list[Candidate] = []
        for mode, guard in modes:
            batched = self._batched(match, mode, ctx, opaque_ok=bool(opaque))
            if batched is None:
                continue
            if match.kind != "out" and _aliases(batched):
                continue
            reason = None
            if opaque:
                reason = f"assumes `{opaque[0]}` treats samples independently"
            candidates.append(self._candidate(match, mode, guard, batched, "batched expression", ctx, reason))
        if not opaque:
            for mode, guard in modes:
                vmapped = self._vmapped(match, mode, ctx)
                if match.kind != "out" and _aliases(match.expr):
                    continue
                candidates.append(self._candidate(match, mode, guard, vmapped, "torch.vmap of the loop body", ctx, None))
        unique: dict[tuple[str, str | None], Candidate] = {}
        for candidate in candidates:
            unique.setdefault((candidate.kernel.new, candidate.unverifiable), candidate)
        candidates = list(unique.values())
        if not candidates:
            return Proposal(CODE, message, line, col, match.anchor, (),
                            "the per-sample expression has no batched form this rule knows", snippet)
        return Proposal(CODE, message, line, col, match.anchor, tuple(candidates), None, snippet)

    def _modes(self, axes: list[_Axis]) -> list[str]:
        if all(a.index is None for a in axes):
            # zip stops at the shorter tensor: slice each to the other's length
            return ["whole", "sliced"] if any(len(a.elements) == 2 for a in axes) else ["whole"]
        if any(a.index and a.owner is None for a in axes):
            return ["plain", "max0"]
        return ["whole", "sliced"]

    def _bound(self, axis: _Axis, mode: str) -> str | None:
        """The slice bound for the tensors this axis walks (None: the whole tensor)."""
        if axis.extent is None:
            return None
        text = _code(axis.extent)
        if axis.owner is None:
            return f"max({text}, 0)" if mode == "max0" else text
        return text

    def _sample(self, axis: _Axis, name: str, mode: str) -> str:
        if axis.index is None:
            others = [t for t in axis.elements.values() if t != name]
            if mode == "sliced" and len(axis.elements) == 2 and len(others) == 1:
                return f"{name}[:len({others[0]})]"
            return name
        bound = self._bound(axis, mode)
        if bound is None or (axis.owner == name) or (axis.owner is not None and mode == "whole"):
            return name
        return f"{name}[:{bound}]"

    def _replacer(self, axes: list[_Axis], mode: str):
        def code_for(axis_index: int, name: str) -> str:
            axis = axes[axis_index]
            text = self._sample(axis, name, mode)
            if len(axes) == 1:
                return text
            rows = text[len(name) + 1:-1] if text != name else ":"
            return f"{name}[{rows}, None]" if axis_index == 0 else f"{name}[None, {rows}]"

        def replace(node: cst.BaseExpression) -> cst.BaseExpression | None:
            for k, axis in enumerate(axes):
                if (
                    axis.index
                    and isinstance(node, cst.Subscript)
                    and len(node.slice) == 1
                    and isinstance(node.slice[0].slice, cst.Index)
                    and isinstance(node.slice[0].slice.value, cst.Name)
                    and node.slice[0].slice.value.value == axis.index
                    and isinstance(node.value, cst.Name)
                ):
                    return _expr(code_for(k, node.value.value))
                if isinstance(node, cst.Name) and node.value in axis.elements:
                    return _expr(code_for(k, axis.elements[node.value]))
            return None

        return replace

    def _batched(self, match: _Match, mode: str, ctx: _Context, opaque_ok: bool) -> str | None:
        loop_vars = set().union(*(a.variables for a in match.axes))
        batcher = _Batcher(self._replacer(match.axes, mode), loop_vars, ctx.torch_roots, opaque_ok)
        result = batcher(match.expr)
        if result is None or result.cls == C:
            return None
        node = result.node
        node = node.with_changes(lpar=[], rpar=[]) if getattr(node, "lpar", None) else node
        return _code(node)

    def _vmapped(self, match: _Match, mode: str, ctx: _Context) -> str:
        taken = names_used(match.expr) | set(ctx.module_names)
        code = match.expr
        layers: list[tuple[list[str], list[str]]] = []
        for axis in match.axes:
            params, args = [], []
            if axis.index:
                mapping = {}
                for name in sorted(axis.indexed):
                    param = f"{name}{axis.index}" if f"{name}{axis.index}" not in taken else f"{name}_{axis.index}"
                    while param in taken:
                        param += "_"
                    taken.add(param)
                    mapping[name] = param
                    params.append(param)
                    args.append(self._sample(axis, name, mode))
                code = code.visit(_IndexToParam(axis.index, mapping))  # type: ignore[assignment]
            else:
                for var, tensor in axis.elements.items():
                    params.append(var)
                    args.append(self._sample(axis, tensor, mode))
            layers.append((params, args))
        text = _code(code)
        for params, args in reversed(layers):
            text = f"{ctx.torch}.vmap(lambda {', '.join(params)}: {text})({', '.join(args)})"
        return text

    def _candidate(self, match: _Match, mode: str, guard: bool, value: str, label: str, ctx: _Context,
                   reason: str | None) -> Candidate:
        bounds = ""
        if match.kind == "out":
            parts = []
            for axis in match.axes:
                bound = self._bound(axis, mode)
                parts.append(":" if (match.full_cover or bound is None) else f":{bound}")
            bounds = ", ".join(parts) if any(p != ":" for p in parts) else ":"
        new_store = match.store.format(bounds=bounds, value=value)
        if guard:
            condition = " and ".join(f"{_code(a.extent)} > 0" for a in match.axes if a.extent is not None)
            new_store = f"if {condition}:\n    {new_store}"
        new_code = match.prefix + new_store
        loop_vars = set().union(*(a.variables for a in match.axes))
        old_module = cst.parse_module(match.old_code)
        used = names_used(old_module)
        exclude_assigned = assigned_names(old_module)
        opaque = set(_opaque_callees(match.expr, ctx, loop_vars))
        evidence = ctx.evidence(enclosing_scope(match.anchor, ctx.parents))
        annotated = {n for n in used if evidence.name(n, at=match.anchor).tensor}
        exclude = loop_vars | exclude_assigned | {match.output, "_result"}
        tensors = set(self._tensors(match.axes))
        inputs = []
        for name in sorted(used - exclude):
            if name in BUILTIN_NAMES or name in ctx.module_names:
                continue
            if name in opaque:
                inputs.append(InputSpec(name, Kind.OPAQUE))
            elif name in tensors or name in annotated:  # positive tensor evidence for these
                ranks = _pinned_rank(old_module, name)
                inputs.append(InputSpec(name, Kind.TENSOR, ranks=ranks) if ranks else InputSpec(name, Kind.TENSOR))
            elif any(a.extent is not None and a.owner is None and name in names_used(a.extent) for a in match.axes):
                inputs.append(InputSpec(name, Kind.INT, count=True))
            else:
                # an owner only measured (`len(y)`), a weight, a scale: what the evidence allows
                ranks = _pinned_rank(old_module, name)
                found = evidence.name(name, at=match.anchor)
                inputs.append(found.spec(ranks=ranks) if ranks else found.spec())
        modules = list(ctx.facts.bindings)
        if not ctx.facts.torch:
            modules.append(("torch", "torch"))
        kernel = Kernel(
            old=match.old_code,
            new=new_code,
            inputs=tuple(inputs),
            outputs=(match.output,),
            modules=tuple(dict.fromkeys(modules)),
            reorders_float_reduction=True,
            note="the per-sample loop (with the output's allocation), verbatim",
        )
        description = label + {"max0": ", extent clamped at 0", "sliced": ", inputs sliced to the loop's extent"}.get(mode, "")
        if guard:
            description += ", guarded against an empty batch"
        uses_torch = label.startswith("torch.vmap") or value.startswith(ctx.torch)
        imports = ctx.imports if uses_torch else ()
        return Candidate(description, match.edits(new_store), kernel, imports, reason)


class _IndexToParam(cst.CSTTransformer):
    def __init__(self, index: str, mapping: dict[str, str]) -> None:
        super().__init__()
        self.index, self.mapping = index, mapping

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if (
            len(original.slice) == 1
            and isinstance(original.slice[0].slice, cst.Index)
            and isinstance(original.slice[0].slice.value, cst.Name)
            and original.slice[0].slice.value.value == self.index
            and isinstance(original.value, cst.Name)
            and original.value.value in self.mapping
        ):
            return cst.Name(self.mapping[original.value.value])
        return updated


def has_nested(node: cst.CSTNode) -> bool:
    found = False

    class _Nested(cst.CSTVisitor):
        def on_visit(self, n: cst.CSTNode) -> bool:
            nonlocal found
            if isinstance(n, (cst.Lambda, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp, cst.NamedExpr,
                              cst.Yield, cst.Await)):
                found = True
            return not found

    node.visit(_Nested())
    return found


def _called_names(expr: cst.CSTNode) -> list[str]:
    names: list[str] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Attribute):
                names.append(node.func.attr.value)
            elif isinstance(node.func, cst.Name):
                names.append(node.func.value)

    expr.visit(_Calls())
    return names


def _builtin_callees(expr: cst.CSTNode) -> list[str]:
    found: list[str] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if isinstance(node.func, cst.Name) and node.func.value in BUILTIN_NAMES:
                found.append(node.func.value)
            elif isinstance(node.func, cst.Attribute) and (
                node.func.attr.value in _FORBIDDEN_METHODS or node.func.attr.value.endswith("_")
            ):
                found.append("." + node.func.attr.value)

    expr.visit(_Calls())
    return found


def _opaque_callees(expr: cst.CSTNode, ctx: _Context, loop_vars: set[str]) -> list[str]:
    """Callables the checker cannot build: a model, ``self.net``, a helper defined elsewhere."""
    found: list[str] = []

    class _Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            func = node.func
            if isinstance(func, cst.Name):
                if func.value not in BUILTIN_NAMES and func.value not in ctx.module_names:
                    found.append(func.value)
            elif isinstance(func, cst.Attribute):
                root = dotted(func) or ""
                if root.split(".")[0] in ctx.module_names:
                    return
                if names_used(func.value) & loop_vars:
                    return  # a method of a per-sample tensor
                if func.attr.value in _TENSOR_METHODS and isinstance(func.value, cst.Name):
                    return
                found.append(dotted(func) or _code(func))

    expr.visit(_Calls())
    return list(dict.fromkeys(found))


def _store_target(target: cst.BaseExpression, indices: list[str | None]) -> str | None:
    """``out`` for ``out[i]`` (one loop) or ``out[i, j]`` / ``out[i][j]`` (two)."""
    if not isinstance(target, cst.Subscript):
        return None

    def is_index(element: cst.SubscriptElement, name: str | None) -> bool:
        return isinstance(element.slice, cst.Index) and isinstance(element.slice.value, cst.Name) and element.slice.value.value == name

    if len(indices) == 1:
        if len(target.slice) == 1 and is_index(target.slice[0], indices[0]) and isinstance(target.value, cst.Name):
            return target.value.value
        return None
    if len(target.slice) == 2 and all(is_index(e, n) for e, n in zip(target.slice, indices)):
        return target.value.value if isinstance(target.value, cst.Name) else None
    inner = target.value
    if (
        len(target.slice) == 1
        and is_index(target.slice[0], indices[1])
        and isinstance(inner, cst.Subscript)
        and len(inner.slice) == 1
        and is_index(inner.slice[0], indices[0])
        and isinstance(inner.value, cst.Name)
    ):
        return inner.value.value
    return None


def _is_allocation(stmt: cst.CSTNode, name: str, ctx: _Context) -> bool:
    """``name = torch.zeros(...)`` (or empty / ones / full / *_like): a fresh tensor."""
    if not (isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1 and isinstance(stmt.body[0], cst.Assign)):
        return False
    assign = stmt.body[0]
    if len(assign.targets) != 1 or not isinstance(assign.targets[0].target, cst.Name) or assign.targets[0].target.value != name:
        return False
    value = assign.value
    if not isinstance(value, cst.Call):
        return False
    root = dotted(value.func) or ""
    parts = root.split(".")
    return len(parts) == 2 and parts[0] in ctx.torch_roots and parts[1] in _ALLOCATORS


def _covers(init: cst.Call, axis: _Axis) -> bool:
    """Whether the allocation's first dimension is, as written, the loop's extent."""
    if axis.extent is None or not init.args:
        return False
    root = dotted(init.func) or ""
    first = init.args[0].value
    if root.endswith("_like"):
        return axis.owner is not None and isinstance(first, cst.Name) and first.value == axis.owner
    if isinstance(first, (cst.Tuple, cst.List)):
        if not first.elements:
            return False
        first = first.elements[0].value
    if _code(first) == _code(axis.extent):
        return axis.owner is not None or isinstance(axis.extent, cst.Name)
    return axis.owner is not None and length_owner(first) == axis.owner


def _is_stack_of(call: cst.BaseExpression, res: str, ctx: _Context) -> bool:
    if not isinstance(call, cst.Call) or not call.args:
        return False
    root = dotted(call.func) or ""
    parts = root.split(".")
    if len(parts) != 2 or parts[0] not in ctx.torch_roots or parts[1] != "stack":
        return False
    if not (isinstance(call.args[0].value, cst.Name) and call.args[0].value.value == res and call.args[0].keyword is None):
        return False
    if len(call.args) == 2:
        arg = call.args[1]
        return _int_literal(arg.value) == 0 and (arg.keyword is None or arg.keyword.value == "dim")
    return len(call.args) == 1


def _pinned_rank(module: cst.Module, name: str) -> tuple[int, ...] | None:
    """``(2,)`` when the kernel unpacks ``a, b = name.shape`` (the old code raises for other ranks)."""
    for stmt in module.body:
        if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[0], cst.Assign):
            assign = stmt.body[0]
            target = assign.targets[0].target
            value = assign.value
            if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value == "size" and not value.args:
                value = value.func
            if (
                isinstance(target, cst.Tuple)
                and isinstance(value, cst.Attribute)
                and value.attr.value in ("shape", "size")
                and isinstance(value.value, cst.Name)
                and value.value.value == name
                and all(isinstance(e, cst.Element) and not isinstance(e.value, cst.StarredElement) for e in target.elements)
            ):
                return (len(target.elements),)
    return None


def _is_shape_query(value: cst.BaseExpression) -> bool:
    """``x.shape``, ``x.size()``, ``x.shape[k]``, ``x.size(k)``, ``len(x)`` of a name."""
    if isinstance(value, cst.Attribute):
        return value.attr.value == "shape" and isinstance(value.value, cst.Name)
    if isinstance(value, cst.Subscript):
        return _is_shape_query(value.value) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index) and _int_literal(value.slice[0].slice.value) is not None
    if isinstance(value, cst.Call):
        if isinstance(value.func, cst.Name) and value.func.value == "len":
            return len(value.args) == 1 and isinstance(value.args[0].value, cst.Name)
        if isinstance(value.func, cst.Attribute) and value.func.attr.value == "size" and isinstance(value.func.value, cst.Name):
            return len(value.args) <= 1 and all(_int_literal(a.value) is not None for a in value.args)
    return False


def _aliases(value: str | cst.BaseExpression) -> bool:
    """Whether the value may be (a view of) an input: a bare name, subscript or view method."""
    node = _expr(value) if isinstance(value, str) else value
    while True:
        if isinstance(node, (cst.Name, cst.Subscript)):
            return True
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _NON_ALLOCATING:
            node = node.func.value
            continue
        if isinstance(node, cst.Attribute):
            return True
        return False
