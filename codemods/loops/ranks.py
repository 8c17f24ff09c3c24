"""Ranks a function's straight-line code pins at a loop: ``t = t.view(-1)``, ``m = a.eq(b.expand(n, n))``.

A legacy function rarely annotates or unpacks the shape of what its loop reads, but it often
computes it on the lines above: ``target = target.view(-1)``, ``dist = x.pow(2).sum(1, keepdim=True)
.expand(n, n)``, ``w = torch.zeros(c, k)``. Each such binding fixes the rank of the array the name
holds from then on, until the name is bound again. :func:`ranks_at` follows the bindings from the
function's start down to the loop, through the blocks that hold it, and answers the rank of each
name the flow pins there; the checker then draws that rank only, and the lift writes the batched
form for it, as it does for ranks a shape unpacking pins.

What it follows, and why that is exact:

- only bindings whose value has an evident rank (:func:`rank_of`): allocations of sizes, views
  and reshapes of literal sizes, element-wise arithmetic of arrays of known rank (broadcasting
  gives the larger rank), whole or one-dimension reductions, subscripts of slices and literals;
  a name bound to anything else, or bound inside a block the flow cannot see through (a loop
  body that may run again, an ``except`` handler, a branch not on the path), has no rank;
- a name bound inside the loop itself has none (it may change from step to step);
- a function that changes an array's rank in place (``unsqueeze_``, ``resize_``, an assignment to
  ``.data`` or ``.shape``), or declares ``global``/``nonlocal`` names, pins nothing: an alias or
  another scope could change what a name holds behind the flow's back. A call torchfix cannot see
  into that changes the rank of an array it is given in place is the documented limit it shares
  with the ranks that ``n, d = x.shape`` pins.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Collection, Container, Mapping, NamedTuple, Sequence

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.analysis import BOUND_TARGET, all_nodes, assigned_names, child_nodes, target_names
from torchfix.codemods.loops import callees
from torchfix.codemods.loops.callees import Batching
from torchfix.codemods.loops.domain import measure_of, shape_owner
from torchfix.codemods.loops.module import BUILTINS, shadowed_builtins
from torchfix.codemods.loops.nodes import int_literal
from torchfix.equivalence import policy

if TYPE_CHECKING:
    from torchfix.codemods.loops.module import ModuleContext

#: in-place methods that change an array's rank (torch; ``resize`` is NumPy's)
RANK_CHANGING_IN_PLACE = frozenset({"unsqueeze_", "squeeze_", "resize_", "resize_as_", "as_strided_", "set_", "resize"})
#: attributes whose assignment changes what an array is (``x.data = y``, ``a.shape = (2, 3)``,
#: ``a.dtype = np.int32``)
_REPLACING_ATTRIBUTES = frozenset({"data", "shape", "dtype"})

#: allocators of sizes given one per positional argument (or one tuple): torch's
_TORCH_SIZED = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn"})
#: allocators whose first argument alone is the size (an int or a tuple): NumPy's
_NUMPY_SIZED = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty"})
#: one dimension, whatever the arguments
_VECTORS = frozenset({"torch.arange", "numpy.arange", "torch.linspace", "torch.randperm", "numpy.flatnonzero"})  # (np.linspace of arrays is not 1-D)
#: a new array of another's shape
_LIKE = frozenset({"torch.zeros_like", "torch.ones_like", "torch.empty_like", "torch.full_like", "torch.rand_like",
                   "torch.randn_like", "numpy.zeros_like", "numpy.ones_like", "numpy.empty_like", "numpy.full_like",
                   "torch.from_numpy"})
#: sorts along one axis: the result has the array's shape (``numpy.argsort(d, axis=1)``)
_SORTS = frozenset({"numpy.argsort", "numpy.sort", "torch.argsort"})
#: methods that keep the receiver's shape whatever their arguments (moves, casts, copies)
_SAME_SHAPE_METHODS = frozenset({"cpu", "cuda", "to", "numpy", "detach", "clone", "contiguous", "type_as", "copy",
                                 "astype", "pin_memory", "requires_grad_", "float", "double", "half", "long", "int",
                                 "bool", "byte", "short", "char", "bfloat16"})
#: attributes of an array with its own shape
_SAME_SHAPE_ATTRIBUTES = frozenset({"data", "real", "imag"})
_VIEWS = frozenset({"view", "reshape"})
#: callees the table calls element-wise for batching that do not broadcast their operands
#: (``F.linear(x, w)`` has the rank of ``x``, not the larger of the two)
_NOT_BROADCASTING = frozenset({"torch.nn.functional.linear"})
#: reductions that give a bool only of a bool array (``torch.any`` of uint8 is uint8)
_DTYPE_KEEPING_REDUCTIONS = frozenset({"all", "any"})
#: methods whose result has the receiver's dtype
_BOOL_KEEPING = frozenset({"view", "reshape", "flatten", "ravel", "expand", "expand_as", "view_as", "reshape_as", "permute",
                           "transpose", "t", "unsqueeze", "clone", "detach", "contiguous", "cpu", "cuda", "copy"})
_WHOLE_REDUCTIONS = frozenset({"sum", "mean", "prod", "std", "var", "amax", "amin", "all", "any", "max", "min",
                               "argmax", "argmin", "median", "nansum", "nanmean", "logsumexp", "norm"})
#: reductions whose form with one literal dimension is an array of one dimension fewer (``max`` and
#: ``min`` with a dimension give torch a pair)
_DIM_REDUCTIONS = frozenset({"sum", "mean", "prod", "std", "var", "amax", "amin", "all", "any", "argmax", "argmin",
                             "nansum", "nanmean", "logsumexp"})

Rank = tuple[int, bool]  # (rank, is an array rather than a Python number)


def rank_of(value: cst.BaseExpression, ranks: dict[str, int], qualified: Callable[[cst.CSTNode], str | None],
            numbers: frozenset[str] = frozenset()) -> Rank | None:
    """The rank of ``value`` and whether it is an array, or None when not evident. ``ranks``: the
    array names of known rank; ``numbers``: names holding Python numbers."""
    return _Ranks(ranks, qualified, numbers).of(value)


class _Ranks:
    def __init__(self, ranks: dict[str, int], qualified: Callable[[cst.CSTNode], str | None], numbers: frozenset[str],
                 bools: set[str] | None = None) -> None:
        self.ranks = ranks
        self.qualified = qualified
        self.numbers = numbers
        #: the array names whose dtype is bool
        self.bools = bools if bools is not None else set()
        #: array names -> the dtype a conversion gave them (``a = b.astype(np.int32)``,
        #: ``t = t.long()``), whatever their rank
        self.dtypes: dict[str, str] = {}
        #: builtin names the module rebinds somewhere (a call of one may be of anything)
        self.shadowed: frozenset[str] = frozenset(BUILTINS)
        #: arrays the function made itself (`mean = torch.zeros(3)`) that nothing else has been
        #: given since -- no call, no container, no second name: a call torchfix cannot see into
        #: cannot reach them
        self.private: set[str] = set()
        self.bound_in: Callable[[cst.CSTNode], set[str]] = bound_in
        self.mentioned: Callable[[cst.CSTNode], set[str]] = _mentioned
        #: names -> a token: names with one token surely have as many rows (``ids = pairs[:, 1]``,
        #: ``target = pairs[:, 0].clone()``): one was made from the other's rows since either
        #: was bound, and nothing that could resize either in place ran since
        self.lengths: dict[str, int] = {}
        self._tokens = 0
        #: sizes and the arrays they measure (``n = x.size(0)``; ``h, w = x.shape``), until
        #: either name is bound again or an array is resized in place (a call torchfix cannot
        #: see into that resizes its argument in place is the documented limit)
        self.measured: dict[str, str] = {}
        #: names that hold an array (a store into one keeps its shape): kept until the name is
        #: bound again, where a rank is forgotten at any mention
        self.arrays: set[str] = set()
        #: names a function or lambda nested in this one mentions: a call torchfix cannot see
        #: into may be that closure, and reach them
        self.closed_over: set[str] = set()

    def token(self, name: str) -> int:
        """The length token of ``name``'s current value (a new one if it has none)."""
        found = self.lengths.get(name)
        if found is None:
            self._tokens += 1
            found = self.lengths[name] = self._tokens
        return found

    def is_bool(self, node: cst.BaseExpression) -> bool:
        """Whether ``node`` is evidently a bool array (of an evident rank): a comparison, a
        bool-valued callee, a logical operation of bool arrays, a view of one."""
        found = self.of(node)
        if found is None or not found[1]:
            return False
        if isinstance(node, cst.Name):
            return node.value in self.bools
        if isinstance(node, cst.Comparison):
            return True
        if isinstance(node, cst.UnaryOperation):
            return isinstance(node.operator, cst.BitInvert) and self.is_bool(node.expression)
        if isinstance(node, cst.BinaryOperation):
            return isinstance(node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and self.is_bool(node.left) and self.is_bool(node.right)
        if isinstance(node, cst.Subscript) or (isinstance(node, cst.Attribute) and node.attr.value == "data"):
            return self.is_bool(node.value)
        if isinstance(node, cst.Call) and not any(a.star for a in node.args):
            qualified = self.qualified(node.func)
            if qualified is not None:
                if qualified.rsplit(".", 1)[-1] in _DTYPE_KEEPING_REDUCTIONS:
                    return bool(node.args) and self.is_bool(node.args[0].value)
                row = callees.function(qualified)
                return row is not None and row.result == "bool"
            if isinstance(node.func, cst.Attribute):
                attr = node.func.attr.value
                if attr in _BOOL_KEEPING or attr in _DTYPE_KEEPING_REDUCTIONS:
                    return self.is_bool(node.func.value)
                row = callees.method(attr)
                return row is not None and row.result == "bool"
        return False

    def calls_unknown(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` calls something torchfix cannot see into: it may change the rank of
        any array it can reach in place (``resize_``, ``unsqueeze_``, ``a.shape = ...``) -- one it
        is handed, or one it reaches through ``self``, a global, a list. Library functions and
        the callee table's methods (none changes a rank: ``_unfollowable`` stops the flow where
        an in-place rank change is written), shape reads, and builtins nothing rebinds (given no
        ``key=`` to call) change none."""
        for inner in all_nodes(node):
            if not isinstance(inner, cst.Call):
                continue
            if any(isinstance(a.value, cst.Lambda) or (a.keyword is not None and a.keyword.value == "key") for a in inner.args):
                return True  # a callable handed over: whatever it is runs on what it is given
            qualified = self.qualified(inner.func)
            if qualified is not None:
                if not policy.is_known_callee(qualified) and not qualified.startswith("math."):
                    return True
            elif isinstance(inner.func, cst.Attribute):
                attr = inner.func.attr.value
                if attr not in policy.VALUE_ATTRIBUTES or attr in policy.NEVER_ATTRIBUTES:
                    return True
            elif isinstance(inner.func, cst.Name):
                if inner.func.value not in _PURE_BUILTINS or inner.func.value in self.shadowed or any(a.keyword is not None for a in inner.args):
                    return True
            else:
                return True
        return False

    def of(self, node: cst.BaseExpression) -> Rank | None:
        if isinstance(node, (cst.Integer, cst.Float)):
            return 0, False
        if isinstance(node, cst.Name):
            if node.value in self.ranks:
                return self.ranks[node.value], True
            return (0, False) if node.value in self.numbers else None
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self.of(node.expression)
        if isinstance(node, cst.BinaryOperation):
            if isinstance(node.operator, cst.MatrixMultiply):
                return None
            return self._broadcast([node.left, node.right])
        if isinstance(node, cst.Comparison):
            if len(node.comparisons) != 1 or isinstance(node.comparisons[0].operator, (cst.In, cst.NotIn, cst.Is, cst.IsNot)):
                return None
            return self._broadcast([node.left, node.comparisons[0].comparator])
        if isinstance(node, cst.Attribute):
            if node.attr.value in _SAME_SHAPE_ATTRIBUTES or (node.attr.value == "T" and self.qualified(node) is None):
                inner = self.of(node.value)
                return inner if inner is not None and inner[1] else None
            return None
        if isinstance(node, cst.Subscript):
            return self._subscript(node)
        if isinstance(node, cst.IfExp):
            body, orelse = self.of(node.body), self.of(node.orelse)
            return body if body is not None and body == orelse else None
        if isinstance(node, cst.Call):
            return self._call(node)
        return None

    def _broadcast(self, operands: Sequence[cst.BaseExpression]) -> Rank | None:
        found = [self.of(o) for o in operands]
        if any(f is None for f in found):
            return None
        return max(f[0] for f in found), any(f[1] for f in found)  # type: ignore[index]

    def _array(self, node: cst.BaseExpression) -> int | None:
        found = self.of(node)
        return found[0] if found is not None and found[1] else None

    def _subscript(self, node: cst.Subscript) -> Rank | None:
        rank = self._array(node.value)
        if rank is None:
            return None
        consumed = removed = added = 0
        for element in node.slice:
            piece = element.slice
            if isinstance(piece, cst.Slice):
                consumed += 1
            elif m.matches(piece.value, m.Name("None")):
                added += 1
            elif int_literal(piece.value) is not None:
                consumed += 1
                removed += 1
            else:
                return None  # an array, a name, `...`: what it selects is not evident here
        if consumed > rank:
            return None  # it raises
        return rank - removed + added, True

    def _call(self, node: cst.Call) -> Rank | None:
        if any(a.star for a in node.args):
            return None
        positional = [a.value for a in node.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in node.args if a.keyword is not None}
        qualified = self.qualified(node.func)
        if qualified is not None:
            return self._function(qualified, positional, keywords)
        if isinstance(node.func, cst.Attribute):
            return self._method(node.func.value, node.func.attr.value, positional, keywords)
        if isinstance(node.func, cst.Name) and node.func.value in ("len", "int", "float", "bool", "round"):
            return 0, False
        if isinstance(node.func, cst.Name) and node.func.value == "abs" and len(positional) == 1:
            return self.of(positional[0])
        return None

    def _function(self, qualified: str, positional: list[cst.BaseExpression], keywords: dict[str, cst.BaseExpression]) -> Rank | None:
        if qualified in _VECTORS:
            return 1, True
        if qualified in ("torch.eye", "numpy.eye"):
            return 2, True
        if qualified in _TORCH_SIZED or qualified == "torch.full":
            sizes = positional[:-1] if qualified == "torch.full" else positional
            found = _sizes_rank(sizes, self.numbers)
            return (found, True) if found is not None else None
        if qualified in _NUMPY_SIZED or qualified == "numpy.full":
            found = _sizes_rank(positional[:1], self.numbers) if positional else None
            return (found, True) if found is not None else None
        if qualified in _LIKE and positional and "shape" not in keywords:
            rank = self._array(positional[0])
            return (rank, True) if rank is not None else None
        if qualified in _SORTS and len(positional) == 1 and set(keywords) <= {"axis", "dim", "kind", "descending", "stable"}:
            # an order along one axis has its array's shape; `axis=None` sorts it flattened
            axis = keywords.get("axis", keywords.get("dim"))
            if axis is not None and int_literal(axis) is None:
                return None
            rank = self._array(positional[0])
            # (NumPy's argsort of a 0-d array is 1-D)
            return (rank, True) if rank else None
        if qualified.startswith("math.") or qualified in _NOT_BROADCASTING:
            return None
        row = callees.function(qualified)
        if row is None:
            return None
        if row.batching is Batching.ELEMENTWISE and positional and not ({"out"} & set(keywords)):
            if qualified.endswith(".where") and len(positional) != 3:
                return None  # `where(c)` gives a tuple of index arrays
            found = self._broadcast([*positional, *(v for k, v in keywords.items() if k not in ("dtype",))])
            return found if found is not None and found[1] else None
        if (row.batching is Batching.REDUCTION and positional and not row.pair_with_dim and row.dim_position == 1
                and qualified.rsplit(".", 1)[-1] not in ("median", "nanmedian")):  # (torch's give a pair with a dim)
            return self._reduced(positional[0], positional[1:], keywords)
        return None

    def _method(self, receiver: cst.BaseExpression, name: str, positional: list[cst.BaseExpression],
                keywords: dict[str, cst.BaseExpression]) -> Rank | None:
        rank = self._array(receiver)
        if name in _VIEWS:
            if keywords:
                return None
            found = _sizes_rank(positional, self.numbers)
            return (found, True) if found is not None else None
        if name in ("flatten", "ravel") and not positional and not keywords:
            return 1, True
        if name == "expand" and positional and not keywords:
            found = _sizes_rank(positional, self.numbers)
            return (found, True) if found is not None else None
        if name in ("permute", "transpose", "t", "swapaxes", "swapdims") and rank is not None:
            return rank, True
        if name in ("view_as", "reshape_as", "expand_as") and len(positional) == 1:
            other = self._array(positional[0])
            return (other, True) if other is not None else None
        if rank is None:
            return None
        if name == "unsqueeze" and len(positional) == 1 and not keywords:
            return rank + 1, True
        if name in _SAME_SHAPE_METHODS:
            return rank, True
        if name in _WHOLE_REDUCTIONS or name in _DIM_REDUCTIONS:
            return self._reduced(receiver, positional, keywords, method=name)
        row = callees.method(name)
        if row is not None and row.batching is Batching.ELEMENTWISE and "out" not in keywords:
            return self._broadcast([receiver, *positional, *(v for k, v in keywords.items() if k != "dtype")])
        return None

    def _reduced(self, array: cst.BaseExpression, dims: list[cst.BaseExpression], keywords: dict[str, cst.BaseExpression],
                 method: str | None = None) -> Rank | None:
        """A reduction of ``array``: over everything (one number), or over literal dimensions."""
        rank = self._array(array)
        if rank is None:
            return None
        dim_keyword = next((k for k in ("dim", "axis") if k in keywords), None)
        keep = keywords.get("keepdim", keywords.get("keepdims"))
        if keep is not None and not m.matches(keep, m.Name("True") | m.Name("False")):
            return None
        kept = keep is not None and m.matches(keep, m.Name("True"))
        given = ([keywords[dim_keyword]] if dim_keyword else []) + dims[:1]
        if len(dims) > 1 or len(given) > 1 or set(keywords) - {"dim", "axis", "keepdim", "keepdims", "dtype"}:
            return None
        if not given:
            if method is not None and method not in _WHOLE_REDUCTIONS:
                return None
            return (rank, True) if kept else (0, True)
        if method is not None and method not in _DIM_REDUCTIONS:
            return None  # `max`/`min`/`median` give torch a (values, indices) pair; `norm(2)` is a p
        dim = given[0]
        if isinstance(dim, (cst.Tuple, cst.List)) and not dim.elements:
            return None  # `sum(dim=())`: torch reduces every dimension, NumPy none
        count = len(dim.elements) if isinstance(dim, (cst.Tuple, cst.List)) else 1
        literal = all(int_literal(e.value) is not None for e in dim.elements) if isinstance(dim, (cst.Tuple, cst.List)) else (
            int_literal(dim) is not None)
        if not literal or count > rank:
            return None
        return (rank, True) if kept else (rank - count, True)


def _sizes_rank(sizes: list[cst.BaseExpression], numbers: frozenset[str]) -> int | None:
    """The rank an allocation or view of ``sizes`` has: one tuple of sizes, or several sizes (a
    single size must be evidently one number: a name may hold a shape tuple)."""
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        elements = sizes[0].elements
        if any(isinstance(e, cst.StarredElement) for e in elements):
            return None
        return len(elements)
    if len(sizes) == 1:
        return 1 if _one_number(sizes[0], numbers) else None
    if not sizes or any(isinstance(s, (cst.Tuple, cst.List)) for s in sizes):
        return None
    return len(sizes)


def _one_number(size: cst.BaseExpression, numbers: frozenset[str]) -> bool:
    """Whether ``size`` is one integer, not a shape: a literal, a number name, ``len(...)``,
    ``x.size(k)``, ``x.shape[k]``, ``x.numel()``, or arithmetic of those."""
    if int_literal(size) is not None:
        return True
    if isinstance(size, cst.Name):
        return size.value in numbers
    if isinstance(size, cst.BinaryOperation):
        return _one_number(size.left, numbers) and _one_number(size.right, numbers)
    if m.matches(size, m.Call(func=m.Name("len") | m.Name("int"))):
        return True
    if m.matches(size, m.Call(func=m.Attribute(attr=m.Name("size")), args=[m.Arg(keyword=None)])):
        return True
    if m.matches(size, m.Call(func=m.Attribute(attr=m.Name("numel")), args=[])):
        return True
    return m.matches(size, m.Subscript(value=m.Attribute(attr=m.Name("shape")), slice=[m.SubscriptElement(m.Index())])) and (
        int_literal(size.slice[0].slice.value) is not None  # type: ignore[attr-defined]
    )


# ----------------------------------------------------------------------------- the flow


class Flow(NamedTuple):
    """What the function's code shows right before a statement (:func:`ranks_at`)."""

    #: array names -> the rank the code pins
    ranks: dict[str, int]
    #: which of those arrays are evidently bool
    bools: frozenset[str]
    #: array names -> the dtype a conversion gave them (:func:`converted_dtype`)
    dtypes: dict[str, str]
    #: names -> a token; two names with one token have as many rows (:attr:`_Ranks.lengths`)
    lengths: dict[str, int]
    #: the sizes that still measure their array at the statement (``n = len(x)`` with no
    #: rebinding of either, nor an in-place resize since): size name -> array name
    measures: dict[str, str]


_NOTHING = Flow({}, frozenset(), {}, {}, {})


def ranks_at(statement: cst.CSTNode, function: cst.FunctionDef, context: "ModuleContext",
             numbers: frozenset[str] = frozenset()) -> Flow:
    """The ranks of the arrays the function's code pins right before ``statement`` (a statement
    of ``function``, nested in any blocks), names ``statement`` itself binds excluded; which
    of those arrays are evidently bool; and which names surely have as many rows."""
    if not followable(function, context):
        return _NOTHING
    parents = context.parents
    path: list[cst.CSTNode] = []
    current: cst.CSTNode | None = statement
    while current is not None and current is not function:
        path.append(current)
        current = parents.get(current)
    if current is None:
        return _NOTHING
    path.reverse()
    ranks: dict[str, int] = {}
    flow = _Ranks(ranks, context.qualified, numbers)
    flow.shadowed = shadowed_builtins(context)
    # what a statement binds or mentions is asked again for every loop after it: once each
    flow.bound_in = lambda node: context.once("names bound", node, lambda: bound_in(node))
    flow.mentioned = lambda node: context.once("names written", node, lambda: _mentioned(node))
    flow.closed_over = closed_over(function, context)
    for parent, child in zip([function, *path], path):
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            # `child` is a statement of the block: the statements before it ran first
            for earlier in parent.body:
                if earlier is child:
                    break
                _follow(earlier, flow)
        elif not _enter(parent, child, flow):
            return _NOTHING
    # what the statement itself runs before its loop: a `for`'s header, or a whole simple
    # statement (`_, out = add_axis(x), torch.stack([... x[i] ...])`)
    _disturb(flow, statement.iter if isinstance(statement, cst.For) else statement, flow.bound_in(statement))
    _unmeasure(flow, flow.bound_in(statement))  # (a body that binds `x` reads another `x`)
    return Flow(ranks, frozenset(flow.bools), flow.dtypes, flow.lengths, flow.measured)


def _enter(parent: cst.CSTNode, child: cst.CSTNode, flow: "_Ranks") -> bool:
    """Update ``flow`` on entering the part ``child`` of the compound statement ``parent``;
    False where the flow cannot be followed into it."""
    # what runs before `child` -- a loop's whole body (it may run again after any of its lines),
    # a test, a `with`'s managers, a `try` body that raised anywhere -- may call what torchfix
    # cannot see into: every rank is forgotten
    if isinstance(parent, (cst.For, cst.While)):
        if child is not parent.body:
            return False  # an `else:` after a loop: the loop ran some steps
        _disturb(flow, parent, flow.bound_in(parent))
    elif isinstance(parent, cst.If):
        _disturb(flow, parent.test, assigned_names(parent.test))  # (an expression binds by walrus only)
    elif isinstance(parent, cst.With):
        if child is not parent.body:
            return False
        for item in parent.items:
            _disturb(flow, item, assigned_names(item))
    elif isinstance(parent, (cst.Try, cst.TryStar)):
        if child is not parent.body:
            _disturb(flow, parent.body, flow.bound_in(parent))  # after a part of the body, or all of it
    elif isinstance(parent, cst.ExceptHandler):
        _forget(flow, _mentioned(parent.name) if parent.name is not None else set())
    elif not isinstance(parent, (cst.Else, cst.Finally, cst.FunctionDef)):
        return False
    return True


def _follow(statement: cst.BaseStatement, flow: _Ranks) -> None:
    """Update ``flow.ranks`` past ``statement``. Only ``name = value`` is followed; anything
    else forgets every name it mentions (a binding writes its name: a ``match`` capture, an
    ``except ... as``, a walrus, an import, a nested ``def``), which over-forgets but never
    misses one."""
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            # `loss = criterion(out, target)` may run `target.unsqueeze_(1)`, and a helper reaches
            # arrays through `self`, a global, a list as well as through its arguments
            measured_before = dict(flow.measured)
            disturbed = _disturb(flow, small, set())
            if isinstance(small, cst.AnnAssign) and small.value is not None and isinstance(small.target, cst.Name):
                # `out: Tensor = zeros(n, 3)`: a local's annotation is never evaluated, so the
                # line binds as `out = zeros(n, 3)` does
                small = cst.Assign(targets=[cst.AssignTarget(small.target)], value=small.value)
            if isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name):
                target = small.targets[0].target.value
                # a walrus in the value binds too (`k = (x := x.view(2, -1)).size(1)`): then no
                # fact of the value is kept for the target
                walrus = assigned_names(small.value)
                rows_of = _rows_source(small.value, flow.qualified) if not walrus else None
                if not walrus and not disturbed:
                    _keep_measures(flow, measured_before, small, rows_of)
                found = flow.of(small.value)
                is_bool = found is not None and found[1] and flow.is_bool(small.value)
                dtype = converted_dtype(small.value, flow.qualified)
                token = flow.token(rows_of) if rows_of is not None else None
                _forget(flow, {target} | walrus)
                flow.private -= {target} | walrus
                flow.arrays.discard(target)
                if walrus:
                    continue
                if token is not None:
                    flow.lengths[target] = token
                measured = measure_of(small.value)
                if measured is not None:
                    flow.measured[target] = measured[0]
                if dtype is not None:
                    # (a conversion gives an array, or a NumPy scalar, which takes no store)
                    flow.dtypes[target] = dtype
                    flow.arrays.add(target)
                    if small.value.func.attr.value == "astype" and len(small.value.args) == 1:  # type: ignore[attr-defined]
                        flow.private.add(target)  # (`astype` copies unless told `copy=False`)
                if found is not None and found[1]:
                    flow.arrays.add(target)
                    flow.ranks[target] = found[0]
                    if is_bool:
                        flow.bools.add(target)
                    if isinstance(small.value, cst.Call) and flow.qualified(small.value.func) in _ALLOCATORS:
                        flow.private.add(target)
            elif (rows := _unpacked_rows(small, flow)) is not None:
                # `b, j = pairs.t()` of an array of rank r >= 2: each name holds one of its rows,
                # of rank r - 1 and as many rows as the others (else the unpacking raised)
                targets, rank = rows
                dtype = converted_dtype(small.value, flow.qualified)  # type: ignore[union-attr]
                is_bool = flow.is_bool(small.value)  # type: ignore[union-attr]
                _forget(flow, set(targets))
                flow.private -= set(targets)
                token = flow.token(targets[0])  # (a new one: the names were just forgotten)
                for row in targets:
                    flow.arrays.add(row)
                    flow.ranks[row] = rank
                    flow.lengths[row] = token
                    if dtype is not None:
                        flow.dtypes[row] = dtype
                    if is_bool:
                        flow.bools.add(row)
            elif (unpacked := _unpacked_shape(small)) is not None:
                # `h, w = x.shape`: past it, `x` has as many dimensions as names (else it raised)
                owner, targets = unpacked
                _forget(flow, set(targets))
                flow.private -= set(targets)
                flow.measured.update((size, owner) for size in targets if size != owner)
                if owner not in targets:
                    flow.ranks[owner] = len(targets)
            else:
                # a store into items of an array (`pairs[0, 0] = 1`, `hist[k] += 1`) changes no
                # rank nor length (`_disturb` saw to calls, to what the value gives away); only a
                # walrus in it binds. A store into anything else runs its `__setitem__`, given
                # the value (`log["x"] = x`): every name the line mentions is forgotten
                gone = assigned_names(small) if _stores_items(small, flow.arrays) else _mentioned(small)
                _forget(flow, gone)
                flow.private -= gone
        return
    # a compound statement that binds an array of a converted dtype to no name again leaves its
    # dtype as it was where nothing torchfix cannot see into may reach the array (no such call,
    # or the array is still the function's alone): a store into its items (`V[i, idx] = w` in
    # an earlier loop) casts the value, not the array
    rebound = flow.bound_in(statement)
    converted = {n: d for n, d in flow.dtypes.items() if n not in rebound}
    alone = {n for n in converted if n in flow.private and n not in flow.closed_over and not _escapes(n, statement)}
    disturbed = _disturb(flow, statement, flow.mentioned(statement))
    if converted:
        disturbed = disturbed or _may_convert(statement)
        flow.dtypes.update((n, d) for n, d in converted.items() if not disturbed or n in alone)


#: builtins that change none of their arguments
_PURE_BUILTINS = frozenset({"len", "int", "float", "bool", "abs", "round", "min", "max", "range", "tuple", "list", "sum",
                            "isinstance", "print", "str", "repr", "type", "enumerate", "zip", "sorted", "reversed"})


def _keep_measures(flow: _Ranks, before: dict[str, str], small: cst.Assign, rows_of: str | None) -> None:
    """Keep the sizes of the array ``small`` binds again where its new value has as many rows
    (``rows_of``, its :func:`_rows_source`, is the array itself): ``x = x.float()``, ``x = x[:, 0]``,
    or ``x = x.view(n, -1)`` with ``n`` measuring it. Only for a line that neither calls what
    torchfix cannot see into nor resizes anything (:func:`_disturb`)."""
    target = small.targets[0].target.value  # type: ignore[attr-defined]
    for size, owner in before.items():
        if owner != target or size == target or size in flow.measured:
            continue
        if rows_of == target or _viewed_with_rows(small.value, target, size):
            flow.measured[size] = target


def _viewed_with_rows(value: cst.BaseExpression, array: str, size: str) -> bool:
    """Whether ``value`` is ``array.view(size, ...)`` / ``array.reshape((size, ...))``."""
    if not (
        isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _VIEWS
        and isinstance(value.func.value, cst.Name) and value.func.value.value == array and value.args
        and value.args[0].keyword is None and not value.args[0].star
    ):
        return False
    first = value.args[0].value
    if isinstance(first, (cst.Tuple, cst.List)):
        if not first.elements or not isinstance(first.elements[0], cst.Element):
            return False
        first = first.elements[0].value
    return isinstance(first, cst.Name) and first.value == size


def _stores_items(small: cst.BaseSmallStatement, arrays: Container[str]) -> bool:
    """Whether ``small`` only stores into items (``a[k] = v``, ``a[k, 0] += v``) of ``arrays``."""
    targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else (
        [small.target] if isinstance(small, cst.AugAssign) else [])
    return bool(targets) and all(
        type(t) is cst.Subscript and type(t.value) is cst.Name and t.value.value in arrays  # type: ignore[attr-defined]
        for t in targets
    )


def _unpacked_rows(small: cst.BaseSmallStatement, flow: "_Ranks") -> tuple[list[str], int] | None:
    """``(["b", "j"], 1)`` for ``b, j = pairs.t()`` where the value is an array of a known rank of
    2 or more (distinct plain names, no star, nothing bound inside the value), else None."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, (cst.Tuple, cst.List))):
        return None
    elements = small.targets[0].target.elements
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in elements):
        return None
    names = [e.value.value for e in elements]  # type: ignore[attr-defined]
    if len(set(names)) != len(names) or assigned_names(small.value) or shape_owner(small.value) is not None:
        return None
    found = flow.of(small.value)
    if found is None or not found[1] or found[0] < 2:
        return None
    return names, found[0] - 1


def _unpacked_shape(small: cst.BaseSmallStatement) -> tuple[str, list[str]] | None:
    """``("x", ["h", "w"])`` for ``h, w = x.shape`` or ``h, w = x.size()`` (names only, no star)."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, (cst.Tuple, cst.List))):
        return None
    elements = small.targets[0].target.elements
    if not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in elements):
        return None
    owner = shape_owner(small.value)
    if owner is None or owner[1]:
        return None  # (`h, w = x.shape[:2]` leaves the rank open)
    return owner[0], [e.value.value for e in elements]  # type: ignore[attr-defined]


def _mentioned(node: cst.CSTNode) -> set[str]:
    """Every name written anywhere in ``node`` (bound or read, nested scopes included)."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is cst.Name:  # (type checks: isinstance of a LibCST class is an ABC check)
            found.add(current.value)  # type: ignore[attr-defined]
        stack.extend(child_nodes(current))
    return found


def bound_in(node: cst.CSTNode) -> set[str]:
    """Every name a binding inside ``node`` may write: assignments, loop and ``with`` targets,
    walrus (as :func:`assigned_names`), and ``match`` captures, ``except ... as``, imports,
    nested ``def`` / ``class`` names, ``del`` targets, and the variables of comprehensions and
    lambdas (which shadow the name in their own scope). One walk."""
    found: set[str] = set()
    stack = [node]
    while stack:
        current = stack.pop()
        kind = type(current)
        target = BOUND_TARGET.get(kind)
        if target is not None:
            bound_target = target(current)
            if bound_target is not None:
                found |= target_names(bound_target)
        elif kind in _NAMED_BINDERS:
            name = _NAMED_BINDERS[kind](current)
            if type(name) is cst.Name:
                found.add(name.value)  # type: ignore[union-attr]
        elif kind in _MENTIONING_BINDERS:
            found |= _mentioned(_MENTIONING_BINDERS[kind](current))
        stack.extend(child_nodes(current))
    return found


#: nodes that bind the one name they hold
_NAMED_BINDERS: dict[type, Callable[[Any], Any]] = {
    cst.MatchAs: lambda n: n.name, cst.MatchStar: lambda n: n.name, cst.MatchMapping: lambda n: n.rest,
    cst.ExceptHandler: lambda n: n.name.name if n.name is not None else None,
    cst.ExceptStarHandler: lambda n: n.name.name if n.name is not None else None,
    cst.FunctionDef: lambda n: n.name, cst.ClassDef: lambda n: n.name,
}
#: nodes whose part binds every name written in it (a comprehension's variable shadows the
#: name inside it: `[a[i] for a in ys]`)
_MENTIONING_BINDERS: dict[type, Callable[[Any], cst.CSTNode]] = {
    cst.Import: lambda n: n, cst.ImportFrom: lambda n: n, cst.Del: lambda n: n,
    cst.CompFor: lambda n: n.target, cst.Lambda: lambda n: n.params,
}


def _disturb(flow: "_Ranks", node: cst.CSTNode, bound: set[str]) -> bool:
    """Forget what ``node`` binds (``bound``), and every rank a call in it that torchfix cannot
    see into may reach: all but the arrays still private to the function (see
    :attr:`_Ranks.private`). (A second name for an array -- ``y = x``, ``box = [x]`` -- makes it
    no longer private; only such a call or an in-place rank change, which stops the flow, could
    change the array through it.) Whether ``node`` made such a call or may resize a container
    in place: then nothing but what is left may be kept."""
    flow.private -= {n for n in flow.private if _escapes(n, node)}
    unknown = flow.calls_unknown(node)
    if flow.dtypes and (unknown or _may_convert(node)):
        # an unknown call may give an array a new dtype in place (`t.data = t.data.half()`), as
        # `model.half()` converts the parameters a pinned name may be (`w = model.scale.float()`
        # is the parameter itself) -- a call the callee table takes for a pure conversion of its
        # receiver; a closure may reach any array it mentions
        _forget(flow, set(flow.dtypes) - (flow.private - flow.closed_over))
    if unknown:
        _forget(flow, set(flow.ranks) - flow.private)
        # (a closure the function defines reaches a private array too, and may transpose it in
        # place, which keeps its rank and changes its rows)
        flow.lengths.clear()
        for size, owner in list(flow.measured.items()):
            if owner in flow.closed_over or size in flow.closed_over:
                del flow.measured[size]
    resizes = (flow.lengths or flow.measured) and _may_resize(node, flow.arrays)
    if resizes:
        # a list grows or shrinks in place through any name for it (`ids = labels` first, or
        # `box = [labels]`): no length is known past it but those of arrays no one else holds
        for other in set(flow.lengths) - flow.private:
            del flow.lengths[other]
        flow.measured.clear()
    if flow.measured or flow.arrays:
        rebound = flow.bound_in(node)
        _unmeasure(flow, rebound)
        flow.arrays -= rebound
    _forget(flow, bound)
    flow.private -= bound
    return unknown or bool(resizes)


def _unmeasure(flow: "_Ranks", rebound: set[str]) -> None:
    """Forget the sizes of arrays bound again, and the sizes bound again."""
    for size, owner in list(flow.measured.items()):
        if size in rebound or owner in rebound:
            del flow.measured[size]


#: methods that may convert, in place, the arrays their receiver holds (a module's parameters)
_IN_PLACE_CONVERSIONS = frozenset({"half", "float", "double", "bfloat16", "to", "type", "type_as", "apply", "_apply",
                                   "load_state_dict", "set_", "share_memory_"})


def _may_convert(node: cst.CSTNode) -> bool:
    """Whether ``node`` calls a method that may convert its receiver's arrays in place."""
    return any(
        type(inner) is cst.Call and type(inner.func) is cst.Attribute  # type: ignore[attr-defined]
        and inner.func.attr.value in _IN_PLACE_CONVERSIONS  # type: ignore[attr-defined]
        for inner in all_nodes(node)
    )


#: tensor conversions without arguments and the dtype each gives
_CONVERSIONS = {"float": "float32", "double": "float64", "half": "float16", "long": "int64", "int": "int32",
                "short": "int16", "byte": "uint8", "char": "int8", "bool": "bool"}
#: the dtypes a conversion may name and the checker draws (``np.bool_`` is NumPy's bool)
_DTYPE_NAMES = {"float32": "float32", "float64": "float64", "float16": "float16", "int64": "int64", "int32": "int32",
                "int16": "int16", "int8": "int8", "uint8": "uint8", "bool_": "bool", "bool": "bool"}


def converted_dtype(value: cst.BaseExpression, qualified: Callable[[cst.CSTNode], str | None]) -> str | None:
    """The dtype ``value`` has whatever it converts: ``a.astype(np.int32)`` (or ``"int32"``),
    ``t.long()``, ``t.float()``; None for anything else. (An object that is no array raises on
    these, or is not drawn as one: the kinds come from the evidence, not from here.)"""
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)) or any(a.star for a in value.args):
        return None
    method = value.func.attr.value
    if method in _CONVERSIONS:
        return _CONVERSIONS[method] if not value.args else None
    if method in _DTYPE_KEEPING:
        # `x.long().reshape(-1)`: the conversion's dtype, whatever the shape
        return converted_dtype(value.func.value, qualified)
    if method != "astype" or not value.args or value.args[0].keyword is not None:
        return None
    if any(a.keyword is None or a.keyword.value not in ("copy", "order") for a in value.args[1:]):
        return None
    dtype = value.args[0].value
    if isinstance(dtype, cst.SimpleString) and dtype.prefix == "":
        return _DTYPE_NAMES.get(dtype.raw_value) if dtype.raw_value != "bool_" else None
    spelled = qualified(dtype)
    if spelled is not None and spelled.startswith("numpy."):
        return _DTYPE_NAMES.get(spelled[len("numpy."):])
    return None


#: methods that keep their receiver's dtype, whatever they do to its shape (not `view`, which
#: given a dtype reinterprets the bytes)
_DTYPE_KEEPING = frozenset({"reshape", "flatten", "ravel", "squeeze", "unsqueeze", "contiguous", "detach", "clone", "copy",
                            "cpu", "cuda"})
#: methods whose result may be their receiver itself (`y = x.to(device)` may be `x`)
_MAY_BE_SELF = frozenset({"to", "cuda", "cpu", "type", "type_as", "half", "float", "double", "int", "long", "bool",
                          "byte", "char", "short", "bfloat16", "contiguous", "requires_grad_", "flatten", "ravel",
                          "reshape", "squeeze", "view_as", "expand_as", "detach_", "data"})
#: what makes a new array the function holds alone
_ALLOCATORS = frozenset({
    f"{lib}.{f}" for lib in ("torch", "numpy")
    for f in ("zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "eye", "linspace")
} | {"torch.tensor", "torch.rand", "torch.randn", "numpy.array"})


def _escapes(name: str, node: cst.CSTNode) -> bool:
    """Whether ``node`` may give the array ``name`` to other code or another name: any read of
    it but as the base of a subscript (``mean[c] += v``) or the receiver of a method or
    attribute whose result is a new object (``mean.sum()``, ``mean.shape``)."""
    stack: list[tuple[cst.CSTNode, cst.CSTNode | None]] = [(node, None)]
    while stack:
        current, parent = stack.pop()
        if isinstance(current, cst.Name) and current.value == name:
            if isinstance(parent, cst.Subscript) and parent.value is current:
                continue
            if (
                isinstance(parent, cst.Attribute) and parent.value is current and parent.attr.value not in _MAY_BE_SELF
                and not parent.attr.value.endswith("_")  # (an in-place method returns its receiver)
            ):
                continue
            if isinstance(parent, cst.Attribute) and parent.attr is current:
                continue
            return True
        stack.extend((child, current) for child in child_nodes(current))
    return False


def _forget(flow: "_Ranks", names: set[str]) -> None:
    for bound in names:
        flow.ranks.pop(bound, None)
        flow.bools.discard(bound)
        flow.dtypes.pop(bound, None)
        flow.lengths.pop(bound, None)


#: methods the callee table knows that change how many items a container holds
_RESIZING_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault", "add",
                               "discard", "popitem", "resize", "resize_", "set_", "appendleft", "extendleft", "popleft",
                               # an array's rows change in place by a transposition or a new view of it
                               "t_", "transpose_", "swapaxes_", "swapdims_", "squeeze_", "unsqueeze_", "as_strided_",
                               "resize_as_"})


def _may_resize(node: cst.CSTNode, arrays: Container[str]) -> bool:
    """Whether ``node`` may change how many items a container holds in place: a resizing method
    (``labels.pop()``), an augmented assignment (``ids += [k]``), a ``del``, or a store into one
    slice (``ids[2:] = []``) -- but the last two into ``arrays`` (names that hold arrays: a store
    into one keeps its shape, or raises)."""
    for inner in all_nodes(node):
        kind = type(inner)
        if kind is cst.Call:
            func = inner.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value in _RESIZING_METHODS:
                return True
        elif kind is cst.Del:
            return True
        elif kind is cst.AugAssign or kind is cst.AssignTarget:
            target = inner.target  # type: ignore[attr-defined]
            base = target.value if type(target) is cst.Subscript else target
            if type(base) is cst.Name and base.value in arrays:
                continue
            if type(target) is not cst.Subscript:
                if kind is cst.AugAssign:
                    return True  # `ids += [k]` extends a list
            elif len(target.slice) == 1 and type(target.slice[0].slice) is cst.Slice:
                return True
    return False


#: keywords of those calls that leave the shape alone
_SHAPE_KEEPING_KEYWORDS = frozenset({"dtype", "device", "requires_grad", "pin_memory", "memory_format", "layout",
                                     "order", "copy", "subok"})
#: calls whose result has the rows of their one array argument
_SAME_ROWS_CALLS = _LIKE | {"torch.as_tensor", "torch.tensor", "numpy.asarray", "numpy.array", "numpy.copy",
                            "torch.clone"}


def _rows_source(value: cst.BaseExpression, qualified: Callable[[cst.CSTNode], str | None]) -> str | None:
    """The name whose rows ``value`` has, one for one: ``pairs[:, 1]``, ``pairs[:, 0].clone()``,
    ``x.float().to(device)``, ``torch.zeros_like(x)``, ``x[:]``; else None. Not a second name for
    the same object, nor ``.copy()``: a dict has those too, and a store into a dict adds a key,
    where a store into an item keeps every other length."""
    derived = False
    while True:
        if isinstance(value, cst.Name):
            return value.value if derived else None
        derived = True
        if isinstance(value, cst.Attribute) and value.attr.value in _SAME_SHAPE_ATTRIBUTES and qualified(value) is None:
            value = value.value
        elif (
            isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute)
            and value.func.attr.value in _SAME_SHAPE_METHODS and value.func.attr.value != "copy"
            and qualified(value.func) is None  # (`torch.clone(y)` is a function of `y`, not a method of `torch`)
        ):
            value = value.func.value
        elif isinstance(value, cst.Call) and qualified(value.func) in _SAME_ROWS_CALLS:
            positional = [a for a in value.args if a.keyword is None]
            keywords = {a.keyword.value for a in value.args if a.keyword is not None}
            # (`np.ones_like(x, shape=2)`, `np.array(x, ndmin=2)` make other shapes)
            if len(positional) != 1 or positional[0].star or not keywords <= _SHAPE_KEEPING_KEYWORDS:
                return None
            value = positional[0].value
        elif isinstance(value, cst.Subscript) and _keeps_rows(value):
            value = value.value
        else:
            return None


def _keeps_rows(node: cst.Subscript) -> bool:
    """Whether ``a[:, ...]`` keeps ``a``'s rows: a whole first slice, then at most one index
    that may be an array (two may move the indexed dimensions first, as NumPy does where a
    slice separates them)."""
    first = node.slice[0].slice
    if not (isinstance(first, cst.Slice) and first.lower is None and first.upper is None and first.step is None):
        return False
    arrays = integers = 0
    for element in node.slice[1:]:
        piece = element.slice
        if isinstance(piece, cst.Slice):
            continue
        value = piece.value
        if isinstance(value, cst.Ellipsis) or (isinstance(value, cst.Name) and value.value == "None"):
            continue
        if isinstance(value, cst.Integer) or (isinstance(value, cst.UnaryOperation) and isinstance(value.expression, cst.Integer)):
            integers += 1
            continue
        arrays += 1
    # (beside an array, NumPy indexes with an integer as with an array: `t[:, 0, :, idx]` puts
    # the two indexed dimensions first)
    return arrays == 0 or (arrays == 1 and integers == 0)


def same_rows(names: Collection[str], lengths: Mapping[str, int]) -> set[str]:
    """``names`` and every name the length tokens (:attr:`Flow.lengths`) show has the rows of one
    of them."""
    tokens = {lengths[n] for n in names if n in lengths}
    return set(names) | {n for n, token in lengths.items() if token in tokens}


def closed_over(function: cst.FunctionDef, context: "ModuleContext") -> set[str]:
    """Every name written in a function, lambda or generator expression nested in ``function``
    (code that may run later, when something calls it); asked once per function."""
    return context.once("names closures mention", function, lambda: _closed_over(function))


def _closed_over(function: cst.FunctionDef) -> set[str]:
    """Every name written in a function, lambda or generator expression nested in ``function``."""
    found: set[str] = set()
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        if type(node) is cst.FunctionDef or type(node) is cst.Lambda or type(node) is cst.GeneratorExp:
            found |= _mentioned(node)  # (a generator's body runs when it is next asked, later)
            continue
        stack.extend(child_nodes(node))
    return found


def followable(function: cst.FunctionDef, context: "ModuleContext") -> bool:
    """Whether nothing in ``function`` -- nested functions included -- changes a rank or rebinds
    a name behind the flow (:func:`_unfollowable`); asked once per function."""
    return not context.once("rank-changing code", function, lambda: _unfollowable(function))


#: builtins that write attributes or names behind the code's back
_REFLECTIVE = frozenset({"setattr", "locals", "vars", "globals", "exec", "eval"})


def _unfollowable(function: cst.FunctionDef) -> bool:
    """Whether something in ``function`` may change a rank behind the flow: an in-place rank
    change, an ``out=`` argument, an assignment to ``.data`` / ``.shape`` / ``.dtype``, a
    ``global`` or ``nonlocal`` declaration."""
    stack: list[cst.CSTNode] = [function.body]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is cst.Global or kind is cst.Nonlocal:
            return True
        if kind is cst.Call:
            func = node.func  # type: ignore[attr-defined]
            if type(func) is cst.Attribute and func.attr.value in RANK_CHANGING_IN_PLACE:
                return True
            if (type(func) is cst.Name and func.value in _REFLECTIVE) or (type(func) is cst.Attribute and func.attr.value == "__setattr__"):
                return True  # `setattr(a, "shape", ...)`, a write through `locals()`: no flow sees them
            if any(a.keyword is not None and a.keyword.value == "out" for a in node.args):  # type: ignore[attr-defined]
                return True  # torch resizes an `out=` tensor to the result's shape
        elif kind is cst.AssignTarget or kind is cst.AugAssign or kind is cst.AnnAssign:
            target = node.target  # type: ignore[attr-defined]
            if type(target) is cst.Attribute and target.attr.value in _REPLACING_ATTRIBUTES:
                return True
        stack.extend(child_nodes(node))
    return False


#: keywords that name a dimension of the array a call reads
_DIMENSION_KEYWORDS = frozenset({"axis", "dim", "axes", "dims"})


def _literal_dims(node: cst.BaseExpression) -> list[int]:
    """The non-negative integer literals of ``3`` or ``(2, 3)``; empty for anything else."""
    items = [e.value for e in node.elements] if isinstance(node, (cst.Tuple, cst.List)) else [node]
    found = [int_literal(item) for item in items]
    return [k for k in found if k is not None and k >= 0]


def fewest_dims(statements: Sequence[cst.CSTNode]) -> dict[str, int]:
    """The fewest dimensions each name must have for ``statements`` to run at all, by what they
    do to it: ``x[i, :, :]`` needs three, ``np.mean(g, axis=(2, 3))`` and ``g.sum(dim=3)`` four.
    A floor, never a rank: a name with more dimensions runs the same code."""
    floors: dict[str, int] = {}

    def need(target: cst.BaseExpression, rank: int) -> None:
        if isinstance(target, cst.Name):
            floors[target.value] = max(floors.get(target.value, 0), rank)

    pending = list(statements)
    while pending:
        node = pending.pop()
        pending.extend(child_nodes(node))
        if isinstance(node, cst.Call):
            dims = [k for a in node.args if a.keyword is not None and a.keyword.value in _DIMENSION_KEYWORDS
                    for k in _literal_dims(a.value)]
            if not dims:
                continue
            if node.args and node.args[0].keyword is None:
                need(node.args[0].value, max(dims) + 1)  # np.sum(x, axis=3)
            elif isinstance(node.func, cst.Attribute):
                need(node.func.value, max(dims) + 1)  # x.sum(axis=3)
        elif isinstance(node, cst.Subscript):
            taken = dims_taken(node)
            if taken is not None:
                need(node.value, taken)
    return floors


def dims_taken(node: cst.Subscript) -> int | None:
    """How many dimensions ``x[...]`` takes from ``x`` -- one per element -- where that is
    certain: None when an element is ``None``, ``...`` or starred, which take some other number."""
    for element in node.slice:
        piece = element.slice
        if isinstance(piece, cst.Index) and (
            piece.star is not None or isinstance(piece.value, cst.Ellipsis) or m.matches(piece.value, m.Name("None"))
        ):
            return None
    return len(node.slice)
