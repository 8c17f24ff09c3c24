"""Lifting per-sample expressions into batched ones.

Inside a loop, an expression computes one sample's value from the loop variables; its *lift* is
one expression whose leading dimension runs over the samples: ``lift(e)[k] == e`` at iteration
``k``. A :class:`Lifted` value knows whether it is per-sample at all (loop-invariant expressions
stay as written), the rank of one sample when that is known, whether a sample is a Python number
(``.item()``, ``float(...)``) and whether it keeps a length-one leading dimension
(``x[i:i + 1]``).

Lifting follows the broadcasting rules of each operation, and those depend on ranks:
``x[i] - x[i].mean()`` batches as ``x - x.mean(1, keepdim=True)`` when a sample is a vector and
as ``x - x.mean((1, 2), keepdim=True)`` when it is a matrix. Ranks come from the code where it
pins them (``n, d = x.shape``, an allocation's sizes); where a lift needs a rank nobody pinned it
raises :class:`NeedRank` naming the tensors whose rank decides, and the ladder retries under
explicit hypotheses ("`x` is 2-D"), which the candidate states and the checker -- exploring other
ranks -- confirms or refutes. An invariant operand of unknown rank is assumed to broadcast
against a sample (no more dimensions than one sample), and that assumption is recorded too.
:meth:`Lifter.lift` returns None, with :attr:`Lifter.why` set, for anything it cannot batch.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, ClassVar, Iterable, Iterator, Mapping, Sequence

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.loops import callees
from torchfix.codemods.loops.callees import Batching, Callee
from torchfix.codemods.loops.library import TORCH, Library
from torchfix.codemods.loops.nodes import (
    arg,
    attribute,
    binary,
    call,
    code_of,
    full_slice,
    index_of,
    int_literal,
    integer,
    is_float_literal,
    is_number,
    method,
    name,
    names_used,
    none_index,
    operand_of,
    python_number,
    receiver,
    slice_of,
    subscript,
)
from torchfix.codemods.loops.ranks import rank_of, same_rows

_ELEMENTWISE_OPERATORS = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
    cst.BitAnd, cst.BitOr, cst.BitXor,
)
#: the comparisons of numbers (``is`` and ``in`` ask other questions)
COMPARISONS = (cst.LessThan, cst.LessThanEqual, cst.GreaterThan, cst.GreaterThanEqual, cst.Equal, cst.NotEqual)
#: operators whose result of two Python ints is an int (and may pass int64 where Python's does not)
_INT_OPERATORS = (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Power, cst.LeftShift)


def _weak_kind(node: cst.CSTNode, kind: str | None) -> str | None:
    """The kind of zero whose dtype beside an array a per-sample Python number of ``kind`` takes
    in ``node`` (``torch.result_type(a, 0)`` / ``(a, 0.0)``), or None where it takes none: a
    comparison and ``+ - * // % **`` and the bitwise operators compute in the array's dtype
    (a Python int wraps into uint8); true division promotes an int array to a float one first,
    so the number takes the float dtype (``0.0``) -- never wrapped into the int array's."""
    if kind not in ("int", "float"):
        return None
    if isinstance(node, cst.Comparison):
        return kind
    if not isinstance(node, cst.BinaryOperation):
        return None
    if isinstance(node.operator, cst.Divide):
        return "float"
    if isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply, cst.FloorDivide, cst.Modulo, cst.Power,
                                  cst.BitAnd, cst.BitOr, cst.BitXor)):
        return kind
    return None


#: comparison methods: a Python number compared with a tensor is first cast to the tensor's dtype
#: (`labels.eq(300)` of uint8 labels compares with 44, a float16 `x.lt(2049)` with 2048)
COMPARISON_METHODS = frozenset("eq ne lt le gt ge greater less greater_equal less_equal not_equal".split())
#: methods that compute in the receiver's dtype, a Python number cast to it first (wrapped into
#: uint8, rounded to bfloat16); true division, powers and the like promote it instead
_IN_RECEIVER_DTYPE = COMPARISON_METHODS | frozenset(
    "mul multiply add sub subtract floor_divide remainder fmod maximum minimum fmax fmin bitwise_and bitwise_or "
    "bitwise_xor".split()
)
#: element-wise methods of two or more operands that a value the loop does not change may be
#: called with on per-sample ones (never in place: `w.add_(x[i])` accumulates into `w`)
_BINARY_METHODS = _IN_RECEIVER_DTYPE | frozenset(
    "isclose div divide true_divide pow float_power atan2 hypot logaddexp xlogy copysign".split()
)
#: math functions on per-sample numbers and their element-wise torch twins
_MATH_TO_TORCH = {
    "exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tanh": "tanh", "fabs": "abs",
    "log2": "log2", "log10": "log10", "log1p": "log1p", "expm1": "expm1", "atan2": "atan2",
}


@dataclass(frozen=True)
class Lifted:
    """A lifted expression. ``node`` is the batched expression (samples along dimension 0) when
    ``batched``, else the loop-invariant expression as written."""

    node: cst.BaseExpression
    batched: bool
    #: rank of one sample (batched) or of the value (invariant); None when unknown
    rank: int | None = None
    #: one sample is a Python number (``x[i].item()``, ``float(x[i])``, the loop index)
    scalar: bool = False
    #: one sample is ``batch[k:k + 1]`` rather than ``batch[k]`` (``x[i:i + 1]``)
    keepdim: bool = False
    #: the dtype kind when evident: "bool", "int" or "float"
    kind: str | None = None
    #: one Python number per sample converted from an element (``x[i].item()``): Python
    #: computes with it as with a Python number, in double where it meets a float
    converted: bool = False
    #: a (values, indices) pair per sample (``x[i].max(0)``)
    pair: bool = False
    #: the walked tensors whose rank decides this value's rank (for :class:`NeedRank`)
    sources: frozenset[str] = frozenset()
    #: for a reduction over a whole sample: the same reduction with ``keepdim=True``, the
    #: idiomatic way to broadcast it back against samples
    keep: cst.BaseExpression | None = None
    #: where ``rank`` is unknown: the fewest dimensions a sample can have (``x[:, i, :, :]``
    #: has at least 3, or the subscript raises)
    min_rank: int = 0
    #: a boolean selection per sample (``x[i][m[i]]``, ragged): ``node`` is then the batch of
    #: whole samples and this the batch of masks; only a whole reduction, element-wise
    #: operations with Python numbers and a concatenation take such a value
    selected: cst.BaseExpression | None = None
    #: a sample read along a later dimension (``x[:, i]``): the batch before that dimension was
    #: moved to the front, and where it stands. A reduction of whole samples reduces every other
    #: dimension of it -- one call that tensors and ndarrays spell alike, and no moved copy
    unmoved: cst.BaseExpression | None = None
    unmoved_axis: int = 0
    #: the name whose ``.ndim`` is the rank of ``unmoved`` (every other subscript element a slice)
    unmoved_rank_of: str | None = None
    #: for a whole-sample reduction over ``tuple(range(1, h.ndim))`` (NumPy, any rank): the
    #: batch ``h`` whose every axis but the first ``keep`` keeps -- broadcast back against ``h``
    #: itself whatever its rank
    keep_against: str | None = None


@dataclass(frozen=True)
class Extent:
    """How to slice a walked tensor to the loop's samples.

    ``full`` names the tensors whose whole first dimension the loop covers (``range(len(x))``,
    ``for v in x``); any other tensor indexed by the loop is sliced ``[start:stop]``, with
    ``stop`` clamped at 0 when the loop count may be negative (``range(n)`` with an ``n`` of
    unknown sign runs no iteration where ``x[:n]`` would drop rows from the end)."""

    start: int
    stop: cst.BaseExpression | None
    full: frozenset[str] = frozenset()
    clamp: bool = False
    #: the expression of the sample count, for ``torch.arange`` and sizes (``len(x)``, ``n``)
    count: cst.BaseExpression | None = None
    #: the tensor whose first dimension's size is ``stop`` (``range(1, w.size(0))``: ``w``): its
    #: rows from ``start`` on are ``w[1:]``
    measured: str | None = None
    #: a tensor whose size (along any dimension) is the count (``range(w.size(2))``: ``w``): the
    #: device an ``arange`` of the loop index is made on when no walked tensor gives one
    sized: str | None = None
    #: the samples become a tensor on the default device (``torch.tensor([...])`` of numbers):
    #: an ``arange`` of the loop index no tensor gives a device to is made there too
    default_device: bool = False
    #: the loop index, used as a number, is an ``arange`` of float64: where Python numbers of a
    #: comprehension meet ``/`` or ``math.*``, Python computes in double precision
    float_index: bool = False


#: why a torch lift refuses per-sample Python ints meeting a float (the ladder then tries NumPy)
FLOAT32_NUMBERS = "per-sample Python ints meet a float, which torch computes in float32 and Python in float64"

#: ranks to try for a walked name read as one number per sample, likeliest first
NUMBER_RANKS = (1, 2, 3)


class CannotLift(Exception):
    """The expression has no batched form the lifter knows."""


class NeedRank(CannotLift):
    """The lift depends on the rank of a sample of these tensors, which nothing pins."""

    def __init__(self, names: frozenset[str], what: str, ranks: tuple[int, ...] = ()) -> None:
        super().__init__(what)
        self.names = names
        #: the ranks to try for ``names``, likeliest first, when the use says (a per-sample number
        #: read from ``x[i]``: a vector first); empty: the ladder's usual order
        self.ranks = ranks


@dataclass
class Lifter:
    """Lifts the expressions of one loop body. ``per_sample`` maps the loop's element variables
    and lifted temporaries to their lifted values; ``index`` is the integer loop variable."""

    #: qualified name of a callee (``F.softmax`` -> ``torch.nn.functional.softmax``), or None
    qualify: Callable[[cst.BaseExpression], str | None]
    #: how to spell a library name here (``torch.arange``) -> node
    spell: Callable[[str], cst.BaseExpression]
    extent: Extent
    per_sample: dict[str, Lifted] = field(default_factory=dict)
    index: str | None = None
    #: ranks the code pins
    ranks: Mapping[str, int] = field(default_factory=dict)
    #: ranks assumed for tensors the code does not pin (a rung of the ladder)
    hypotheses: Mapping[str, int] = field(default_factory=dict)
    #: callables that are known batch-transparent layers (``self.fc`` -> "torch.nn.Linear")
    layers: Mapping[str, str] = field(default_factory=dict)
    #: what the lift assumed (shown with the candidate)
    assumptions: list[str] = field(default_factory=list)
    #: invariant tensors the loop walks, and the dimension it walks (``x[:, i]`` -> 1)
    walked_dims: dict[str, int] = field(default_factory=dict)
    #: the lift sums floating values in another order than the loop (reductions, products)
    reorders: bool = False
    #: why the last lift failed
    why: str = ""
    #: after a guard, the rows (of the loop's samples) that reach the statements being lifted
    row_filter: cst.BaseExpression | None = None
    #: the names read at the loop's rows (shifted by an offset: ``x[i + 1]``) before a guard
    #: filtered them, at every sample, and the largest such offset: each has that many rows
    #: past the loop's last, or the loop raised on it
    read_unguarded: dict[str, int] = field(default_factory=dict)
    #: whether the function shows ``name`` has as many rows as the loop runs (made with the
    #: count as its first size): a guarded read of it is safe
    sized_by_count: Callable[[str], bool] = lambda name: False
    #: names -> a token: names of one token have as many rows (``ShapeFacts.lengths``)
    lengths: Mapping[str, int] = field(default_factory=dict)
    #: how many enclosing parts of the expression being lifted the loop may skip for a sample
    #: (the right side of ``and`` / ``or``, a branch of ``a if c else b``): what they read must
    #: have a row for every sample, as the batched form reads every row
    conditional: int = 0
    #: how many enclosing parts the loop may skip for every sample at once (a branch of ``a if
    #: flag else b`` on a loop-invariant ``flag``): the batched form skips them too, and what they
    #: read shows nothing about the rows of what other parts read
    unobserved: int = 0
    #: the array library the loop works on: how the constructs a lift adds are spelled
    library: Library = TORCH
    #: invariant names of unknown rank the lift assumed broadcast against a sample (the ladder
    #: offers rungs with their ranks spelled out too)
    assumed_invariants: set[str] = field(default_factory=set)
    #: lift calls of callables torchfix cannot see into (a model passed in) as one call on the
    #: batch -- an assumption no check can discharge; the callees are recorded
    opaque_calls: bool = False
    opaque_callees: list[str] = field(default_factory=list)
    #: reduce a whole sample of unpinned rank over its flattened elements (a ladder rung)
    any_rank_reductions: bool = False
    #: broadcast one number per sample against a sample whose rank nothing pins with the batch
    #: axis last (``(s * x.movedim(0, -1)).movedim(-1, 0)``): right for every rank (a ladder rung)
    any_rank_broadcast: bool = False
    #: array names -> the dtype a conversion gave them (``ShapeFacts.dtypes``): what kind of
    #: Python number ``x[i].item()`` is
    dtypes: Mapping[str, str] = field(default_factory=dict)
    #: walked names read as ``x[i]`` where the read is itself a per-sample position
    #: (``p[i, labels[i]]``), counted per read: a list of numbers indexes the same way
    position_reads: dict[str, int] = field(default_factory=dict)
    #: invariant names the function binds to Python numbers (``ShapeFacts.numbers``)
    numbers: frozenset[str] = frozenset()
    #: whether the code shows ``name`` holds an array (a tensor or an ndarray) and nothing else:
    #: a list or a dict indexed by an array of positions raises, a tuple of positions indexes
    #: several dimensions
    shown_array: Callable[[str], bool] = lambda name: False
    #: the literal list of numbers a name holds where the loop only reads its items
    #: (``LoopFacts.number_list``): ``means[i]`` is then one Python number per sample
    number_list: Callable[[str], "cst.List | cst.Tuple | None"] = lambda name: None
    #: "int" / "float" for an invariant Python-number expression the code types, else None
    number_kind: Callable[[cst.BaseExpression], "str | None"] = lambda node: None
    #: the tensor whose device arrays the lift makes go on before any other (a scatter's
    #: target: its positions index it, whatever kind of sequence the loop walks)
    device_of: str | None = None
    #: the tensor a value made of Python numbers alone is stored into: the device of last resort
    #: (the loop's numbers go where they land, e.g. ``pe[j, 0, i] = math.sin(...)`` over
    #: ``range(max_len)``, where no walked tensor gives one)
    store_device: str | None = None
    #: ids of the nodes that may lift to a boolean selection (:attr:`Lifted.selected`): what
    #: takes one asks for it, anything else that meets one raises
    selectable: set[int] = field(default_factory=set)

    # ------------------------------------------------------------------ entry points

    def lift_selectable(self, node: cst.BaseExpression) -> Lifted | None:
        """:meth:`lift`, where ``node`` may be a boolean selection per sample (a temporary, the
        value a ``torch.cat`` of the appended samples concatenates)."""
        self.selectable.add(id(node))
        try:
            return self.lift(node)
        finally:
            self.selectable.discard(id(node))

    def lift(self, node: cst.BaseExpression) -> Lifted | None:
        """The lift of ``node``, or None with :attr:`why` set. :class:`NeedRank` propagates: the
        caller may retry under a rank hypothesis."""
        self.why = ""
        try:
            return self._lift(node)
        except NeedRank:
            raise
        except CannotLift as exc:
            self.why = str(exc)
            return None

    def depends(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` reads a per-sample name (so it is not loop-invariant)."""
        names = names_used(node)
        return bool(names & set(self.per_sample)) or (self.index is not None and self.index in names)

    def filter_rows(self, mask: cst.BaseExpression) -> None:
        """From now on, lift over the samples where ``mask`` holds only: the values lifted so far
        and every walked tensor read from here on are taken at those rows."""
        self.row_filter = mask
        for variable, value in list(self.per_sample.items()):
            self.per_sample[variable] = replace(value, node=subscript(value.node, [index_of(mask)]), keep=None)

    def rank_of(self, tensor: str) -> int | None:
        """The rank the code pins for ``tensor``, else the hypothesis of this rung (recorded)."""
        if tensor in self.ranks:
            return self.ranks[tensor]
        if tensor in self.hypotheses:
            self._assume(f"`{tensor}` is {self.hypotheses[tensor]}-D")
            return self.hypotheses[tensor]
        return None

    def walked(self, source: cst.BaseExpression, keepdim: bool = False) -> Lifted:
        """The lift of ``for v in source``'s element ``v``: ``source`` sliced to the samples
        (``keepdim``: each ``v`` is a one-row chunk ``source[k:k + 1]``)."""
        rank = None
        sources: frozenset[str] = frozenset()
        if isinstance(source, cst.Name):
            self.walked_dims.setdefault(source.value, 0)
            full = self.rank_of(source.value)
            rank = None if full is None else full - (0 if keepdim else 1)
            sources = frozenset({source.value})
            if keepdim:
                return Lifted(self._slice_rows(source), True, rank, keepdim=True, sources=sources, min_rank=1)
        else:
            # an array the loop header builds (`np.arange(0., 1.1, 0.1)`): its rank is in the code
            found = rank_of(source, self.ranks, self.qualify, self.numbers)
            if found is not None and found[1] and found[0] >= 1:
                rank = found[0] - 1
        return Lifted(self._slice_rows(source), True, rank, sources=sources)

    def _assume(self, text: str) -> None:
        if text not in self.assumptions:
            self.assumptions.append(text)

    def _need(self, value: Lifted, what: str, ranks: tuple[int, ...] = ()) -> int:
        """The sample rank of ``value``, which the lift cannot do without (``ranks``: the ranks
        the use suggests for its sources, likeliest first)."""
        if value.scalar:
            return 0
        if value.rank is not None:
            return value.rank
        if value.sources:
            raise NeedRank(value.sources, what, ranks)
        raise CannotLift(what)

    def _need_all(self, values: Sequence[Lifted], what: str) -> None:
        """Raise one :class:`NeedRank` for every unknown rank among ``values`` at once."""
        unknown = frozenset().union(*(v.sources for v in values if not v.scalar and v.rank is None))
        if unknown:
            raise NeedRank(unknown, what)

    # ------------------------------------------------------------------ dispatch

    def _lift(self, node: cst.BaseExpression) -> Lifted:
        if not self.depends(node):
            return Lifted(node, False, self._invariant_rank(node), kind=_literal_kind(node))
        for kind, lift in self._LIFTERS.items():  # (the table stands at the end of the class)
            if isinstance(node, kind):
                return lift(self, node)
        raise CannotLift(f"`{short(node)}` is not an expression torchfix can batch")

    # ------------------------------------------------------------------ names and indexing

    def _invariant_rank(self, node: cst.BaseExpression) -> int | None:
        if is_number(node) or python_number(node, set(self.numbers)):
            return 0
        if isinstance(node, cst.Name):
            return self.rank_of(node.value)
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name) and node.value.value in self.ranks:
            effects = [element_effect(e) for e in node.slice]
            if None in effects:
                return None
            return self.ranks[node.value.value] - effects.count("remove") + effects.count("add")
        # what the lift of an inner loop leaves for the outer one: `1 - torch.abs(torch.arange(n) / f)`
        if isinstance(node, cst.UnaryOperation) and not isinstance(node.operator, cst.Not):
            return self._invariant_rank(node.expression)
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, _ELEMENTWISE_OPERATORS):
            left, right = self._invariant_rank(node.left), self._invariant_rank(node.right)
            return None if left is None or right is None else max(left, right)
        if isinstance(node, cst.Call) and not any(a.star for a in node.args):
            qualified = self.qualify(node.func) or ""
            positional = [a for a in node.args if a.keyword is None]
            keywords = {a.keyword.value for a in node.args if a.keyword is not None}
            if qualified in ("torch.arange", "numpy.arange") and 1 <= len(positional) <= 3 and keywords <= {"device", "dtype"}:
                return 1
            if keywords:
                return None
            callee = callees.FUNCTIONS.get(qualified)
            if callee is not None and callee.batching is Batching.ELEMENTWISE and len(node.args) == 1:
                return self._invariant_rank(node.args[0].value)
        return None

    def _name(self, node: cst.Name) -> Lifted:
        if node.value in self.per_sample:
            found = self.per_sample[node.value]
            if found.selected is not None and id(node) not in self.selectable:
                raise CannotLift(f"`{node.value}` is a boolean selection per sample: lifted only where it is summed whole or concatenated")
            return found
        if node.value == self.index:
            return self._arange()
        raise CannotLift(f"`{node.value}` is per-sample but not lifted")  # pragma: no cover - guarded by depends()

    def _arange(self) -> Lifted:
        count = self.extent.count
        if count is None:
            raise CannotLift("the loop index is used as a number, and no tensor gives its device")
        device = self._batch_device("the loop index is used as a number, and no tensor gives its device")
        start = self.extent.start
        if self.extent.clamp:
            count = call(name("max"), count, integer(0))  # range(n) of a negative n is empty; arange raises
        args: list[cst.BaseExpression] = [count] if start == 0 else [integer(start), self.extent.stop]  # type: ignore[list-item]
        built: cst.BaseExpression = self.library.arange(self.spell, *args, like=name(device) if device is not None else None)
        if self.extent.float_index:
            built = built.with_changes(args=[*built.args, arg(self.library.function(self.spell, "float64"), "dtype")])
        if self.row_filter is not None:
            built = subscript(built, [index_of(self.row_filter)])
        return Lifted(built, True, 0, scalar=True, kind="float" if self.extent.float_index else "int")

    def _batch_device(self, why: str, also: Iterable[str] = ()) -> str | None:
        """The tensor whose device the arrays a lift makes go on: one the loop covers, the one
        that sizes it, else one of ``also``. None where none is needed (NumPy, or a loop whose
        tensors are made on the default device); raises :class:`CannotLift` with ``why`` where
        torch needs one and there is none."""
        device = (
            self.device_of or next(iter(sorted(self.extent.full)), None) or self.extent.sized
            or next(iter(sorted(also)), None) or self.store_device
        )
        if device is None and not self.library.is_numpy and not self.extent.default_device:
            raise CannotLift(why)
        return device

    def _slice_rows(self, base: cst.BaseExpression, offset: int = 0) -> cst.BaseExpression:
        """``base`` restricted to rows ``start + offset .. stop + offset`` of the loop."""
        extent = self.extent
        base_name = base.value if isinstance(base, cst.Name) else None
        if base_name is None and (self.row_filter is not None or self.conditional):
            # (`x.float()[i]`, `x.T[i, 0]`, `x[0][i]`: nothing shows how many rows that has)
            raise CannotLift(f"`{short(base)}` is read only where a condition holds, and is not an array by name")
        if base_name is not None:
            if self.row_filter is None and not self.conditional:
                if not self.unobserved:
                    self.read_unguarded[base_name] = max(offset, self.read_unguarded.get(base_name, offset))
            elif not self.covers(base_name, offset):
                where = "the guard holds" if self.conditional == 0 else "a condition holds"
                raise CannotLift(
                    f"`{base_name}` is read only where {where}: it may have fewer rows than the loop runs "
                    "(the loop never reads the others)"
                )
        if offset == 0 and extent.start == 0 and base_name in extent.full:
            return base if self.row_filter is None else subscript(base, [index_of(self.row_filter)])
        lower = integer(extent.start + offset) if extent.start + offset else None
        upper: cst.BaseExpression | None = extent.stop
        if offset == 0 and base_name is not None and base_name == extent.measured:
            upper = None  # `w[1:w.size(0)]` is `w[1:]`
        if offset == 0 and upper is not None and upper.deep_equals(call(name("len"), base)):
            upper = None  # the one walked expression: `np.arange(3)[:len(np.arange(3))]` is itself
        if upper is not None and extent.clamp:
            upper = call(name("max"), upper, integer(0))
        if upper is not None and offset:
            upper = _shifted(upper, offset)
        rows = base if upper is None and lower is None else subscript(base, [slice_of(lower, upper)])
        return rows if self.row_filter is None else subscript(rows, [index_of(self.row_filter)])

    def covers(self, name: str, offset: int = 0) -> bool:
        """Whether ``name`` surely has a row for every sample, shifted by ``offset`` (``x[i + 1]``):
        the loop walks or measures it, it was read at the samples' rows (shifted as far) before
        any guard, it was made with the count as its first size, or it has the rows of one of
        those. (The checker draws the arrays a loop indexes at least as long as it runs: a
        guarded read of a shorter one, which the loop never makes, is for the code to show.)"""
        extent = self.extent

        def rows_past_the_last(candidate: str) -> int | None:
            shown = [self.read_unguarded[candidate]] if candidate in self.read_unguarded else []
            if candidate in extent.full or candidate == extent.measured or self.sized_by_count(candidate):
                shown.append(0)
            return max(shown) if shown else None

        return any((found := rows_past_the_last(peer)) is not None and found >= offset for peer in same_rows({name}, self.lengths))

    @contextmanager
    def skippable(self) -> Iterator[None]:
        """Lift a part of the expression the loop evaluates for some samples only."""
        self.conditional += 1
        try:
            yield
        finally:
            self.conditional -= 1

    @contextmanager
    def unobservable(self) -> Iterator[None]:
        """Lift a part whose reads show nothing of the arrays' rows (:attr:`unobserved`)."""
        self.unobserved += 1
        try:
            yield
        finally:
            self.unobserved -= 1

    def index_form(self, element: cst.SubscriptElement) -> tuple[str, int] | None:
        """("index", offset) for ``i`` / ``i + c`` / ``i - c``; ("keep", 0) for ``i:i + 1``."""
        piece = element.slice
        index = m.Name(self.index or "\0")
        if isinstance(piece, cst.Index):
            value = piece.value
            if m.matches(value, index):
                return "index", 0
            if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, (cst.Add, cst.Subtract)):
                left, right = value.left, value.right
                if m.matches(left, index) and int_literal(right) is not None:
                    shift = int_literal(right) or 0
                    return "index", shift if isinstance(value.operator, cst.Add) else -shift
                if isinstance(value.operator, cst.Add) and m.matches(right, index) and int_literal(left) is not None:
                    return "index", int_literal(left) or 0
            return None
        if isinstance(piece, cst.Slice) and piece.step is None and piece.lower is not None and piece.upper is not None:
            one_more = m.BinaryOperation(left=index, operator=m.Add(), right=m.Integer("1")) | m.BinaryOperation(
                left=m.Integer("1"), operator=m.Add(), right=index
            )
            if m.matches(piece.lower, index) and m.matches(piece.upper, one_more):
                return "keep", 0
        return None

    def rows_element(self, offset: int, base: cst.BaseExpression | None = None) -> cst.SubscriptElement:
        """The subscript element selecting the loop's rows of ``base`` (``:n``, ``1:n + 1``,
        ``:`` when the loop covers all of them), before any guard's filter."""
        # (a store's position, or a later dimension: no evidence of the array's rows)
        saved, self.row_filter = self.row_filter, None
        try:
            with self.unobservable():
                rows = self._slice_rows(base if isinstance(base, cst.Name) else name("_"), offset)
        finally:
            self.row_filter = saved
        return rows.slice[0] if isinstance(rows, cst.Subscript) else full_slice()

    def _subscript(self, node: cst.Subscript) -> Lifted:
        if not self.depends(node.value):
            return self._gather(node)
        # a per-sample value indexed at invariant positions: ``x[i][0]``, ``row[:, 1]``
        inner = self._lift(node.value)
        if inner.pair:
            if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
                which = int_literal(node.slice[0].slice.value)
                if which in (0, 1):
                    return replace(inner, node=subscript(inner.node, node.slice), pair=False,
                                   kind="int" if which == 1 else inner.kind)
            raise CannotLift(f"`{short(node)}` indexes a (values, indices) pair")
        if inner.scalar:
            raise CannotLift(f"`{short(node)}` indexes a per-sample number")
        if inner.selected is not None:
            raise CannotLift(f"`{short(node)}` indexes a boolean selection per sample")
        if any(isinstance(e.slice, cst.Index) and isinstance(e.slice.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
               for e in node.slice):
            raise CannotLift(f"`{short(node)}` reads a field by its name: the samples are records, not rows of an array")
        if any(self.depends(element) for element in node.slice):
            masked = self._masked(node, inner)
            return masked if masked is not None else self._select(node, inner)
        if any(isinstance(e.slice, cst.Index) and m.matches(e.slice.value, m.Ellipsis()) for e in node.slice):
            raise CannotLift(f"`{short(node)}` uses `...`")
        if inner.keepdim:
            if not _is_plain_slice(node.slice[0]):
                raise CannotLift(f"`{short(node)}` indexes the length-one leading dimension of a sample")
            return replace(inner, node=subscript(inner.node, node.slice), rank=_rank_after(inner.rank, node.slice), keep=None)
        batched = subscript(inner.node, [full_slice(), *node.slice])
        rank = _rank_after(inner.rank, node.slice)
        if rank is not None and rank < 0:
            raise CannotLift(f"`{short(node)}` indexes a sample with more indices than it has dimensions")
        return Lifted(batched, True, rank, kind=inner.kind, sources=inner.sources)

    def _masked(self, node: cst.Subscript, inner: Lifted) -> Lifted | None:
        """``x[i][m[i]]`` with a per-sample mask of the sample's whole shape: each sample's
        selected elements, ragged. Lifted as the batch of whole samples beside the batch of
        masks (:attr:`Lifted.selected`), for a whole reduction or a concatenation to take. None
        where the index is one number per sample (a position, for :meth:`_select`) or its rank
        is not known."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
            return None
        mask = self._lift(node.slice[0].slice.value)
        if not mask.batched or mask.scalar or mask.pair or mask.keepdim or mask.rank is None or mask.rank == 0:
            return None
        if mask.kind not in ("bool", None):
            raise CannotLift(f"`{short(node)}`: the per-sample index is an array of positions")
        if names_used(mask.node) & set(self.per_sample):
            # the mask is kept as an expression until the selection is consumed: a temporary
            # it reads could be rebound by then
            raise CannotLift(f"`{short(node)}`: the mask is a temporary of the loop (name what it reads outside it)")
        if id(node) not in self.selectable:
            raise CannotLift(f"`{short(node)}` selects a different number of elements per sample: lifted only where it is summed whole or concatenated")
        if self.library.is_numpy or self.row_filter is not None or inner.keepdim or inner.pair:
            raise CannotLift(f"`{short(node)}`: a boolean selection per sample is lifted on torch tensors of a whole batch only")
        if self._need(inner, f"`{short(node)}`: the rank of a sample decides what the mask selects") != mask.rank:
            raise CannotLift(f"`{short(node)}`: the mask does not cover a sample's whole shape")
        return Lifted(inner.node, True, inner.rank, kind=inner.kind, sources=inner.sources | mask.sources, selected=mask.node)

    #: the whole reductions of a boolean selection that are batched: ``sum`` (filling what the
    #: mask leaves out with 0). Not ``max``/``min``: a masked ``amax`` has the values, but where a
    #: row holds NaN its gradient is NaN where ``.max()`` of the selection gives the NaN its
    #: gradient, and a NaN the mask leaves out reaches the row's other gradients through the fill
    #: (``.max(dim)`` gives ties one element)
    _MASKED_REDUCERS: ClassVar[frozenset[str]] = frozenset({"sum"})

    def _masked_method(self, node: cst.Call, func: cst.Attribute, value: Lifted) -> Lifted:
        """A method of a boolean selection per sample: a whole sum (``.sum()`` of each sample's
        selected elements: the sum of the masked batch over every dimension but the first), or
        an element-wise method with Python numbers (applied to whole samples; what the mask
        leaves out is never read)."""
        attr = func.attr.value
        assert value.selected is not None and value.rank is not None
        if attr in self._MASKED_REDUCERS and not node.args:
            filled = method(value.node, "masked_fill", _complement(value.selected), integer(0))
            dims = integer(1) if value.rank == 1 else cst.Tuple([cst.Element(integer(d)) for d in range(1, value.rank + 1)])
            self.reorders = True  # floats summed in another order than the loop's
            return Lifted(method(filled, attr, dims), True, 0, kind=value.kind, sources=value.sources)
        row = callees.method(attr)
        numbers = set(self.numbers)
        if (
            id(node) in self.selectable and row is not None and row.batching is Batching.ELEMENTWISE
            and all(not a.star and python_number(a.value, numbers) for a in node.args)
        ):
            rebuilt = node.with_changes(func=func.with_changes(value=receiver(value.node)))
            return replace(value, node=rebuilt, kind=row.result or value.kind)
        raise CannotLift(f"`{short(node)}`: a boolean selection per sample is lifted only where it is summed whole or concatenated")

    def _select(self, node: cst.Subscript, inner: Lifted) -> Lifted:
        """``p[labels[i]]``: each sample indexed at its own position -- one advanced index over
        the batch (``p[torch.arange(n), labels]``), which takes negative and out-of-range
        positions as the per-sample index does."""
        if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index) or inner.keepdim:
            raise CannotLift(f"`{short(node)}` indexes a per-sample value at a per-sample position")
        position = self._position(node, node.slice[0].slice.value)
        if not isinstance(inner.node, (cst.Name, cst.Attribute)) and not (isinstance(inner.node, cst.Subscript) and isinstance(inner.node.value, cst.Name)):
            raise CannotLift(f"`{short(node)}`: the indexed value is an expression (name it first)")
        rows = self.library.arange(self.spell, call(name("len"), inner.node), like=inner.node)
        batched = subscript(inner.node, [index_of(rows), index_of(position.node)])
        rank = None if inner.rank is None else inner.rank - 1
        return Lifted(batched, True, rank, kind=inner.kind, sources=inner.sources)

    def _select_rows(self, node: cst.Subscript, rows_value: Lifted) -> Lifted:
        """``x[i, labels[i]]`` -> ``x[torch.arange(n), labels]`` (``x[:n]`` rows first when the loop
        covers only part of ``x``); the other indices must be invariant."""
        if len(node.slice) != 2 or not isinstance(node.slice[1].slice, cst.Index):
            raise CannotLift(f"`{short(node)}` uses the loop index other than as one index")
        position = self._position(node, node.slice[1].slice.value)
        base = rows_value.node
        rows = self.library.arange(self.spell, call(name("len"), base), like=base)
        leading = base.slice[0].slice if isinstance(base, cst.Subscript) and len(base.slice) == 1 else None
        if (
            self.row_filter is None and isinstance(leading, cst.Slice) and isinstance(base.value, cst.Name)  # type: ignore[union-attr]
            and leading.lower is None and leading.step is None and leading.upper is not None
        ):
            # x[:n][arange(len(x[:n])), p] is x[arange(n), p]: both raise where n passes x's rows
            base = base.value  # type: ignore[union-attr]
            rows = self.library.arange(self.spell, leading.upper, like=base)
        batched = subscript(base, [index_of(rows), index_of(position.node)])
        rank = None if rows_value.rank is None else rows_value.rank - 1
        return Lifted(batched, True, rank, kind=rows_value.kind, sources=rows_value.sources)

    def _position(self, node: cst.Subscript, expression: cst.BaseExpression) -> Lifted:
        """The lift of ``expression``, a per-sample position in ``node`` (``labels[i]`` in
        ``p[i, labels[i]]``): one integer per sample, or the lift fails. A position that is
        ``labels[i]`` itself is counted in :attr:`position_reads`."""
        position = self._lift(expression)
        if not position.batched or self._need(position, f"`{short(node)}`: a per-sample index must be one number", NUMBER_RANKS) != 0:
            raise CannotLift(f"`{short(node)}`: the per-sample index is not one number per sample")
        if position.kind not in ("int", None):
            raise CannotLift(f"`{short(node)}`: the per-sample index is not an integer")
        self._count_position_read(expression)
        return position

    def _count_position_read(self, expression: cst.BaseExpression) -> None:
        """A position that is ``labels[i]`` itself counts in :attr:`position_reads`."""
        if (
            isinstance(expression, cst.Subscript) and isinstance(expression.value, cst.Name) and len(expression.slice) == 1
            and self.index_form(expression.slice[0]) == ("index", 0)
        ):
            base = expression.value.value
            self.position_reads[base] = self.position_reads.get(base, 0) + 1

    def _gather(self, node: cst.Subscript) -> Lifted:
        """``X[..., i, ...]`` with an invariant ``X``: the samples are a slice of ``X``."""
        positions = [(k, self.index_form(e)) for k, e in enumerate(node.slice) if self.depends(e)]
        if isinstance(node.value, cst.Name) and len(node.slice) == 1 and positions and positions[0][1] is not None:
            literal = self.number_list(node.value.value)
            if literal is not None and positions[0][1][0] == "index":
                return self._numbers_at_rows(node.value, literal, positions[0][1][1])
        if len(positions) == 2 and positions[0][0] == 0 and positions[0][1] == ("index", 0) and positions[1][1] is None:
            # x[i, labels[i]]: row i at its own column
            return self._select_rows(node, self._gather(node.with_changes(slice=[node.slice[0]])))
        if len(positions) == 1 and positions[0] == (0, None) and isinstance(node.slice[0].slice, cst.Index):
            # `scales[int(inds[i])]`, `V[rank[i, :k]]`: rows of an invariant array at per-sample
            # positions
            return self._take(node)
        if len(positions) != 1 or positions[0][1] is None:
            raise CannotLift(
                f"`{short(node)}` uses the loop index other than as one index (`x[i]`, `x[:, i]`, `x[i + 1]`, `x[i:i + 1]`)"
            )
        position, (form, offset) = positions[0]  # type: ignore[misc]
        if self.extent.start + offset < 0:
            raise CannotLift(f"`{short(node)}` reads before the first row (a negative index wraps around)")
        before = node.slice[:position]
        if any(element_effect(e) not in ("keep", "remove") for e in before):
            raise CannotLift(f"`{short(node)}` indexes with `None` or `...` before the loop index")
        if any(self.depends(e) for e in node.slice[position + 1 :]):
            raise CannotLift(f"`{short(node)}` uses the loop index twice")
        base = node.value
        # `x.data` is `x` without autograd: same values, same rank, walked the same way
        named = base.value if m.matches(base, m.Attribute(value=m.Name(), attr=m.Name("data"))) else base
        base_name = named.value if isinstance(named, cst.Name) else None
        axis = sum(1 for e in before if element_effect(e) == "keep")
        if base_name is not None:
            self.walked_dims.setdefault(base_name, position)
        if position == 0:
            rows = self._slice_rows(base, offset)
            rest = list(node.slice[1:])
            batched: cst.BaseExpression = rows if not rest else subscript(rows, [full_slice(), *rest])
            if rest and isinstance(rows, cst.Subscript) and rows.value is base and len(rows.slice) == 1:
                batched = subscript(base, [rows.slice[0], *rest])  # `x[:n, j]`, not `x[:n][:, j]`
        else:
            if self.row_filter is not None or self.conditional:
                # (only an array's rows are ever shown to cover the loop)
                raise CannotLift(f"`{short(node)}`: a guarded or conditional read along a later dimension")
            batched = subscript(base, [*before, self.rows_element(offset, base if position == 0 else None), *node.slice[position + 1 :]])
        base_rank = self.rank_of(base_name) if base_name is not None else None
        sample_rank = None if base_rank is None else _rank_after(base_rank - 1, [e for k, e in enumerate(node.slice) if k != position])
        unmoved, rank_of = None, None
        if axis:
            unmoved = batched
            if base_name is not None and all(element_effect(e) == "keep" for k, e in enumerate(node.slice) if k != position):
                rank_of = base_name
            batched = self.library.move_axis(self.spell, batched, axis, 0)
        keep = form == "keep"
        if keep and sample_rank is not None:
            sample_rank += 1
        sources = frozenset({base_name}) if base_name is not None and base_rank is None else frozenset()
        return Lifted(batched, True, sample_rank, keepdim=keep, sources=sources,
                      min_rank=_fewest_sample_dims(node.slice, position) + (1 if keep else 0),
                      unmoved=unmoved, unmoved_axis=axis, unmoved_rank_of=rank_of,
                      kind=_dtype_kind(self.dtypes.get(base_name or "")))

    def _numbers_at_rows(self, numbers: cst.Name, literal: cst.List | cst.Tuple, offset: int) -> Lifted:
        """``means[i]`` of a literal list of numbers: the list as an array of Python's numbers
        (float64 or int64) on the batch's device, sliced to the loop's rows -- one Python number
        per sample, cast where it meets an array as a Python number is (:meth:`_align`)."""
        kind = "float" if any(is_float_literal(e.value) for e in literal.elements) else "int"
        # the numbers meet the samples of the arrays the loop walks: on their device
        device = self._batch_device(f"`{numbers.value}` becomes a tensor, and no tensor gives its device", self.walked_dims)
        if self.extent.start + offset < 0:
            raise CannotLift(f"`{numbers.value}[...]` reads before the first item (a negative index wraps around)")
        array = self.library.numbers(self.spell, numbers, kind, like=name(device) if device is not None else None)
        return Lifted(self._slice_rows(array, offset), True, 0, scalar=True, kind=kind)

    def _take(self, node: cst.Subscript) -> Lifted:
        """``X[p, ...]`` with an invariant ``X`` and integer positions ``p`` per sample (one number
        or an array): ``X[P, ...]`` with ``P`` the batch of positions. An advanced index in front
        puts its own dimensions first, so each sample ``X[p_k, ...]`` is row ``k`` of the result,
        negative and out-of-range positions included."""
        expression = node.slice[0].slice.value  # type: ignore[attr-defined]
        if not (isinstance(node.value, cst.Name) and self.shown_array(node.value.value)):
            raise CannotLift(f"`{short(node)}`: nothing shows `{short(node.value)}` is an array (a list is indexed one position at a time)")
        base = node.value.value
        if (
            isinstance(expression, cst.Subscript) and isinstance(expression.value, cst.Name)
            and not self.shown_array(expression.value.value)
        ):
            raise CannotLift(f"`{short(node)}`: nothing shows `{expression.value.value}` is an array (a tuple of positions indexes several dimensions)")
        position = self._lift(expression)
        if not position.batched or position.keepdim or position.pair:
            raise CannotLift(f"`{short(node)}`: the per-sample positions are not one array per sample")
        if position.kind not in ("int", None):
            raise CannotLift(f"`{short(node)}`: the per-sample positions are not integers")
        rest = list(node.slice[1:])
        if any(element_effect(e) not in ("keep", "remove") for e in rest):
            raise CannotLift(f"`{short(node)}` indexes with `None` or `...` after the per-sample positions")
        self._count_position_read(expression)
        base_rank = self.rank_of(base)
        if base_rank is None:
            # a table looked up by position: a vector of values first, then rows of a matrix
            raise NeedRank(frozenset({base}), f"`{short(node)}`: the rank of `{base}` decides a sample's", NUMBER_RANKS)
        position_rank = 0 if position.scalar else position.rank
        rank = None if position_rank is None else position_rank + _rank_after(base_rank - 1, rest)  # type: ignore[operator]
        batched = subscript(node.value, [index_of(position.node), *rest])
        return Lifted(batched, True, rank, sources=position.sources)

    def _attribute(self, node: cst.Attribute) -> Lifted:
        inner = self._lift(node.value)
        attr = node.attr.value
        if inner.scalar:
            raise CannotLift(f"`.{attr}` of a per-sample number")
        if attr == "shape" and not inner.keepdim and not inner.pair:
            # every sample has the same shape: the batch's, without its first dimension
            return Lifted(subscript(attribute(inner.node, "shape"), [slice_of(integer(1), None)]), False, 1)
        if attr == "data":
            return replace(inner, node=attribute(inner.node, "data"), keep=None)
        if attr in ("T", "mT") and not inner.keepdim:
            rank = self._need(inner, f"`{short(node)}`: the rank of a sample decides what `.T` does")
            if rank == 2 or attr == "mT":
                return replace(inner, node=self.library.swap_last(self.spell, inner.node), keep=None)
            if rank <= 1:
                return inner
            raise CannotLift(f"`{short(node)}` of a sample with {rank} dimensions")
        if attr in ("values", "indices") and inner.pair:
            return replace(inner, node=attribute(inner.node, attr), pair=False, kind="int" if attr == "indices" else inner.kind)
        raise CannotLift(f"`.{attr}` of a per-sample value")

    # ------------------------------------------------------------------ operators

    def _binary(self, node: cst.BinaryOperation) -> Lifted:
        left, right = self._lift(node.left), self._lift(node.right)
        if isinstance(node.operator, cst.MatrixMultiply):
            return self._matmul(left, right, node)
        left, right = self._as_python_floats(node, left, right)
        self._refuse_float32_numbers(node, left, right)
        if (left.batched or right.batched) and isinstance(node.operator, _INT_OPERATORS) and self._python_ints(left) and (
            self._python_ints(right)
        ) and (isinstance(node.operator, (cst.Power, cst.LeftShift)) and right.batched or self._int_bound(node) >= 2**63):
            # Python's ints never overflow; an int64 batch of them does: `2 ** i` past 63,
            # `i * i * i` past 2**21 steps, `i * 2**54 // 3` from the eighth
            raise CannotLift(f"`{short(node)}`: per-sample Python ints may pass int64 here, which Python's ints never do")
        if not isinstance(node.operator, _ELEMENTWISE_OPERATORS):
            raise CannotLift(f"the operator of `{short(node)}`")
        a, b, rank = self._align(left, right, node)
        built = node.with_changes(left=a, right=b)
        built = built.with_changes(left=operand_of(a, built, right=False), right=operand_of(b, built, right=True))
        return self._combined(self._batch_first(built, left, right), left, right, rank, _combined_kind(left, right, node.operator))

    #: the largest loop index taken for granted (16M steps of a Python loop): the checker draws
    #: short loops only, so what the index may reach is bounded here, not by a check
    _INDEX_BOUND = 2**24
    #: any other int (a stride, an offset): the checker draws huge ones, but not beside a long loop
    _NAME_BOUND = 2**31

    def _int_bound(self, node: cst.BaseExpression) -> int:
        """An upper bound of ``|node|`` for an int expression of the loop index, literals and
        names, taking the index below :attr:`_INDEX_BOUND` (a huge bound where it cannot say)."""
        huge = 2**200
        if isinstance(node, cst.Name):
            return self._INDEX_BOUND if node.value == self.index else self._NAME_BOUND
        if isinstance(node, cst.Integer):
            return abs(int(node.evaluated_value))
        if isinstance(node, cst.UnaryOperation):
            return self._int_bound(node.expression)
        if isinstance(node, cst.BinaryOperation):
            a, b = self._int_bound(node.left), self._int_bound(node.right)
            operator = node.operator
            if isinstance(operator, (cst.Add, cst.Subtract)):
                return a + b
            if isinstance(operator, cst.Multiply):
                return a * b
            if isinstance(operator, (cst.FloorDivide, cst.Modulo)):
                return a  # what reaches the result is the dividend's size at most
            if isinstance(operator, cst.Power):
                return a ** min(b, 8) if b <= 8 else huge
            return huge
        if isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value in ("len", "int", "abs"):
            return self._NAME_BOUND
        return huge

    def _python_ints(self, value: Lifted) -> bool:
        """Whether ``value`` may be Python ints: per-sample numbers not known to be floats, or an
        invariant Python number not known to be a float."""
        if value.batched:
            return value.scalar and value.kind != "float"
        return python_number(value.node, set(self.numbers)) and self.number_kind(value.node) != "float"

    def _as_python_floats(self, node: cst.BinaryOperation, left: Lifted, right: Lifted) -> tuple[Lifted, Lifted]:
        """``x[i].item()`` meeting a float (``/``, a float literal or name, a per-sample float)
        makes a double in Python whatever ``x`` holds -- an int converted exactly as Python
        converts it, a float32 value exactly: the batch of such numbers is made float64 first
        (torch would compute an int64 batch's in float32, and a float32 batch's in float32)."""
        if self.library.is_numpy:
            return left, right
        operands = [left, right]
        for k, (sample, other) in enumerate(((left, right), (right, left))):
            if not (sample.batched and sample.scalar and sample.converted and sample.kind != "float"):
                continue
            if self._meets_a_float(node, other, maybe=False):
                operands[k] = replace(sample, node=self.library.cast(self.spell, sample.node, "float"), kind="float")
        return operands[0], operands[1]

    def _refuse_float32_numbers(self, node: cst.BinaryOperation, left: Lifted, right: Lifted) -> None:
        """Per-sample Python ints (the index) meeting a float -- ``/``, a float literal, a number
        that may be a float -- make float64 in Python and, from an int64 batch, the default
        float32 in torch. Only a lift that took the index as float64 (``Extent.float_index``, for
        a stored value of Python numbers) batches them; any other raises."""
        if self.library.is_numpy:
            return  # NumPy makes float64 of an int64 batch and a Python float, as Python does
        # (a lift that took the index as float64 has made it a float: what is still an int here
        # is another per-sample int, `x[i].item()` of an int64 `x`, which it did not)
        for sample, other in ((left, right), (right, left)):
            if not (sample.batched and sample.scalar and sample.kind == "int"):
                continue
            if other.batched and other.scalar and other.kind == "float":
                continue  # per-sample Python floats are batched in float64: so is the result
            if self._meets_a_float(node, other, maybe=True):
                raise CannotLift(f"`{short(node)}`: {FLOAT32_NUMBERS}")

    def _meets_a_float(self, node: cst.BinaryOperation, other: Lifted, maybe: bool) -> bool:
        """Whether a per-sample number meets a float in ``node``: true division, a Python number
        that is a float, or a per-sample float -- with ``maybe``, also one that may be a float."""
        if isinstance(node.operator, cst.Divide):
            return True
        if other.batched:
            return other.scalar and (other.kind != "int" if maybe else other.kind == "float")
        if not python_number(other.node, set(self.numbers)):
            return False
        kind = self.number_kind(other.node)
        return kind != "int" if maybe else kind == "float"

    def _combined(self, built: cst.BaseExpression, left: Lifted, right: Lifted, rank: int | None, kind: str | None) -> Lifted:
        if left.batched and right.batched:
            scalar = left.scalar and right.scalar
        else:
            sample, other = (left, right) if left.batched else (right, left)
            number = is_number(other.node) or python_number(other.node, set(self.numbers))
            scalar = sample.scalar and number
        return Lifted(built, True, 0 if scalar else rank, scalar=scalar, keepdim=left.keepdim or right.keepdim, kind=kind,
                      sources=left.sources | right.sources)

    def _unary(self, node: cst.UnaryOperation) -> Lifted:
        inner = self._lift(node.expression)
        if isinstance(node.operator, cst.Not):
            if inner.scalar:
                return replace(inner, node=method(inner.node, "logical_not"), kind="bool", keep=None)
            raise CannotLift("`not` of a per-sample tensor")
        built = node.with_changes(expression=inner.node)
        return replace(inner, node=built.with_changes(expression=operand_of(inner.node, built, right=True)), keep=None)

    def _comparison(self, node: cst.Comparison) -> Lifted:
        if len(node.comparisons) != 1:
            raise CannotLift(f"the chained comparison `{short(node)}`")
        target = node.comparisons[0]
        if not isinstance(target.operator, COMPARISONS):
            raise CannotLift(f"the comparison `{short(node)}`")
        left, right = self._lift(node.left), self._lift(target.comparator)
        a, b, rank = self._align(left, right, node)
        built = node.with_changes(left=a, comparisons=[target.with_changes(comparator=b)])
        built = built.with_changes(left=operand_of(a, built, False), comparisons=[target.with_changes(comparator=operand_of(b, built, True))])
        return self._combined(self._batch_first(built, left, right), left, right, rank, "bool")

    def _if_expression(self, node: cst.IfExp) -> Lifted:
        if self.library.is_numpy:
            # `where` computes both branches at every sample: a divisor the test keeps from zero
            # must be kept from it where the branch is not taken as well, or NumPy signals a
            # division by zero (a warning; an error under np.seterr) that the loop never made
            guard = _DivisorGuard(node.test, self.depends, self.spell("numpy.ones_like"), self.spell("numpy.zeros_like"))
            node = node.with_changes(body=guard.kept(node.body, taken=True), orelse=guard.kept(node.orelse, taken=False))
        test = self._lift(node.test)
        if test.batched:
            with self.skippable():
                body, orelse = self._lift(node.body), self._lift(node.orelse)
        else:
            with self.unobservable():
                body, orelse = self._lift(node.body), self._lift(node.orelse)
        if not test.batched:
            # the same branch for every sample: the test is asked once, for both batched branches
            if not (body.batched and orelse.batched) or (body.scalar, body.keepdim, body.kind) != (orelse.scalar, orelse.keepdim, orelse.kind):
                raise CannotLift("a conditional expression with a loop-invariant test")
            rank = self._need(body, "the ranks of a conditional's branches")
            if self._need(orelse, "the ranks of a conditional's branches") != rank:
                raise CannotLift("the branches of a conditional differ in rank")
            return replace(body, node=node.with_changes(body=body.node, orelse=orelse.node), rank=rank,
                           sources=body.sources | orelse.sources, keep=None)
        if test.kind != "bool":
            raise CannotLift(f"the test `{short(node.test)}` is not evidently a comparison")
        branches = [v for v in (body, orelse) if v.batched]
        ranks = {self._need(v, "the ranks of a per-sample conditional") for v in branches}
        test_rank = self._need(test, "the ranks of a per-sample conditional")
        if len(ranks) > 1 or (ranks and test_rank not in (0, *ranks)):
            raise CannotLift("the parts of a per-sample conditional differ in rank")
        rank = ranks.pop() if ranks else test_rank
        # one test per sample picks that sample's whole branch: it broadcasts over the sample
        condition = self._expand(test, rank) if test_rank == 0 and rank > 0 else test.node
        where = self.library.where(self.spell, condition, body.node, orelse.node)
        return Lifted(where, True, rank, kind=body.kind or orelse.kind,
                      sources=test.sources | body.sources | orelse.sources)

    @staticmethod
    def _rank_zero(value: Lifted) -> bool:
        return not value.keepdim and (value.scalar or value.rank == 0)

    def _batch_last(self, left: Lifted, right: Lifted) -> bool:
        """Whether two batched operands meet as one number per sample against samples whose
        rank nothing pins, on the rung that broadcasts those with the batch axis last."""
        if not (self.any_rank_broadcast and left.batched and right.batched):
            return False
        if left.keepdim or right.keepdim or self._kept_against(left, right) is not None:
            return False
        return (self._rank_zero(left) and right.rank is None and not right.scalar) or (
            self._rank_zero(right) and left.rank is None and not left.scalar
        )

    @staticmethod
    def _kept_against(left: Lifted, right: Lifted) -> cst.BaseExpression | None:
        """The keepdims form of one operand where it reduces every axis of the other's batch
        but the first (:attr:`Lifted.keep_against`): then it broadcasts against it."""
        for reduced, other in ((left, right), (right, left)):
            if (
                reduced.keep is not None and reduced.keep_against is not None and reduced.rank == 0 and not reduced.keepdim
                and isinstance(other.node, cst.Name) and other.node.value == reduced.keep_against and not other.keepdim
            ):
                return reduced.keep
        return None

    def _batch_first(self, built: cst.BaseExpression, left: Lifted, right: Lifted) -> cst.BaseExpression:
        """``built``, computed from ``left`` and ``right``, with its batch axis back in front
        where :meth:`_align` put it last."""
        if self._batch_last(left, right):
            return self.library.move_axis(self.spell, built, -1, 0)
        return built

    def _expand(self, value: Lifted, count: int) -> cst.BaseExpression:
        """``value`` with ``count`` length-one dimensions after the batch dimension (its keepdim
        form where it is a whole-sample reduction of exactly that many dimensions)."""
        if value.keep is not None and count == self._reduced_rank(value):
            return value.keep
        return unsqueeze_after_batch(value.node, count)

    @staticmethod
    def _reduced_rank(value: Lifted) -> int:
        return _keep_rank(value.keep)

    def _align(self, left: Lifted, right: Lifted, node: cst.CSTNode) -> tuple[cst.BaseExpression, cst.BaseExpression, int | None]:
        """Operands of an element-wise operation between two lifted values, broadcast as the
        per-sample operation broadcasts, and the rank of a sample of the result."""
        if left.batched and right.batched:
            if left.keepdim != right.keepdim:
                raise CannotLift(f"`{short(node)}` mixes `x[i]` and `x[i:i + 1]` samples")
            what = f"`{short(node)}`: the ranks of the samples decide how they broadcast"
            rank: int | None
            kept = self._kept_against(left, right)
            if kept is not None:
                # `a - a.min()` of samples of any rank: the reduction with its axes kept has the
                # batch's rank, and broadcasts against it as one number per sample
                return (kept, right.node, right.rank) if kept is left.keep else (left.node, kept, left.rank)
            if self._batch_last(left, right):
                # one number per sample against samples of any rank: with the batch axis last,
                # the numbers broadcast along it whatever the rank (`_batch_first` moves it back)
                if self._rank_zero(left):
                    a, b, rank = left.node, self.library.move_axis(self.spell, right.node, 0, -1), None
                else:
                    a, b, rank = self.library.move_axis(self.spell, left.node, 0, -1), right.node, None
            else:
                if self.any_rank_broadcast and left.sources and right.sources and left.rank is None and right.rank is None:
                    # neither rank is pinned: ask for one side's alone -- where it holds one
                    # number per sample, the other may keep any rank
                    raise NeedRank(left.sources, what)
                self._need_all((left, right), what)
                lr, rr = self._need(left, what), self._need(right, what)
                if lr == rr:
                    a, b, rank = left.node, right.node, lr
                elif lr < rr:
                    a, b, rank = self._expand(left, rr - lr), right.node, rr
                else:
                    a, b, rank = left.node, self._expand(right, lr - rr), lr
            if left.scalar != right.scalar:
                if self.library.is_numpy and isinstance(node, cst.Comparison):
                    # NumPy compares a Python int with a float array in the array's dtype, with an
                    # int array exactly (`uint64 > -1`, NEP 50: `uint8 == 356` is False); a batch
                    # of numbers compares in neither way
                    raise CannotLift(f"`{short(node)}`: NumPy compares a per-sample Python number unlike a batch of them")
                numbers, array = (left, right) if left.scalar else (right, left)
                carrier = self._dtype_carrier(array.node)
                weak_kind = _weak_kind(node, numbers.kind)
                if weak_kind is not None and carrier is not None:
                    weak = self.library.as_weak_number(self.spell, a if left.scalar else b, carrier, weak_kind)
                    a, b = (weak, b) if left.scalar else (a, weak)
            return a, b, rank
        sample, other = (left, right) if left.batched else (right, left)
        if other.rank is None:
            if isinstance(other.node, cst.Name):
                self.assumed_invariants.add(other.node.value)
            if sample.scalar:
                raise CannotLift(f"`{short(node)}`: a per-sample number meets a value of unknown rank")
            self._assume(f"`{short(other.node)}` has no more dimensions than one sample")
            return left.node, right.node, sample.rank
        weak_kind = _weak_kind(node, sample.kind) if sample.scalar and other.rank > 0 else None
        carrier = self._dtype_carrier(other.node) if weak_kind is not None else None
        if carrier is not None and weak_kind is not None:
            # per-sample Python numbers meet an array the code holds in its dtype (uint8
            # `labels == q * 256 + 4` compares with 4 wrapped): cast the batch of them so
            if self.library.is_numpy and isinstance(node, cst.Comparison):
                # NEP 50: NumPy compares an out-of-range int exactly (uint8 == -1 is False), which
                # neither a cast nor an int64 batch of them reproduces for every dtype
                raise CannotLift(f"`{short(node)}`: NumPy compares a per-sample Python number unlike a batch of them")
            weak = self.library.as_weak_number(self.spell, sample.node, carrier, weak_kind)
            expanded = self._expand(replace(sample, node=weak), other.rank)
            return (expanded, other.node, other.rank) if left.batched else (other.node, expanded, other.rank)
        if other.rank == 0:
            return left.node, right.node, 0 if sample.scalar else sample.rank
        sample_rank = self._need(sample, f"`{short(node)}`: the rank of a sample decides how `{short(other.node)}` broadcasts")
        if other.rank > sample_rank:
            # the invariant outranks a sample: the samples' values sit in front of its dimensions
            expanded = self._expand(sample, other.rank - sample_rank)
            return (expanded, other.node, other.rank) if left.batched else (other.node, expanded, other.rank)
        return left.node, right.node, sample_rank

    def _filler(self, node: cst.BaseExpression) -> bool:
        """``np.ones_like(x)`` / ``np.zeros_like(x)``: what a kept divisor or dividend holds
        where its branch is not taken, in its own dtype."""
        return isinstance(node, cst.Call) and self.qualify(node.func) in ("numpy.ones_like", "numpy.zeros_like")

    def _dtype_carrier(self, node: cst.BaseExpression) -> cst.BaseExpression | None:
        """A cheap expression of ``node``'s dtype: ``node`` itself, or the name it indexes or
        views (``x[:, :3].movedim(2, 0)``, ``np.moveaxis(x[:, :3], 2, 0)`` have ``x``'s dtype);
        None when there is none."""
        while True:
            if _cheap(node) and not self.qualify(node):
                return node
            if isinstance(node, cst.Subscript):
                node = node.value
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.func.attr.value in _SAME_DTYPE_VIEWS:
                if self.qualify(node.func):
                    # a library function (`np.moveaxis(x, 2, 0)`): the array is its first argument
                    if not node.args or node.args[0].keyword is not None or node.args[0].star:
                        return None
                    node = node.args[0].value
                else:
                    node = node.func.value
            elif (
                isinstance(node, cst.BinaryOperation) and isinstance(node.operator, (cst.Add, cst.Subtract, cst.Multiply))
                and isinstance(node.right, cst.Integer)
            ):
                # `x + 1`: a Python int beside an array keeps the array's dtype (bool's aside,
                # which the zero of `result_type` promotes alike)
                node = node.left
            elif isinstance(node, cst.Call) and self.qualify(node.func) in ("numpy.where", "torch.where") and len(node.args) == 3:
                # a divisor kept from zero, `where(t, x, np.ones_like(x))`: `x`'s dtype
                _, body, orelse = (a.value for a in node.args)
                if self._filler(orelse):
                    node = body
                elif self._filler(body):
                    node = orelse
                else:
                    return None
            else:
                return None

    def _matmul(self, left: Lifted, right: Lifted, node: cst.CSTNode) -> Lifted:
        if left.scalar or right.scalar or left.keepdim or right.keepdim:
            raise CannotLift(f"`{short(node)}` multiplies per-sample numbers as matrices")
        self.reorders = True
        what = f"`{short(node)}`: the rank of a sample decides what `@` does"
        if left.batched and not right.batched:
            sample = self._need(left, what)
            if right.rank is None:
                self._assume(f"`{short(right.node)}` has at most two dimensions")
            elif right.rank > 2 or right.rank == 0:
                raise CannotLift(f"`{short(node)}`: a batched matrix product against a {right.rank}-D operand")
            if sample == 0:
                raise CannotLift(f"`{short(node)}` of one-number samples")
            rank = sample + (right.rank if right.rank is not None else 2) - 2
            return Lifted(binary(left.node, cst.MatrixMultiply(), right.node), True, rank, sources=left.sources)
        if right.batched and not left.batched:
            sample = self._need(right, what)
            if left.rank is None:
                self._assume(f"`{short(left.node)}` is a matrix")
            elif left.rank != 2:
                raise CannotLift(f"`{short(node)}`: a {left.rank}-D operand times a batch")
            if sample == 1:
                return Lifted(binary(right.node, cst.MatrixMultiply(), attribute(left.node, "T")), True, 1, sources=right.sources)
            if sample >= 2:
                return Lifted(binary(left.node, cst.MatrixMultiply(), right.node), True, sample, sources=right.sources)
            raise CannotLift(f"`{short(node)}` of one-number samples")
        self._need_all((left, right), what)
        lr, rr = self._need(left, what), self._need(right, what)
        if (lr, rr) == (1, 1):
            product = binary(left.node, cst.Multiply(), right.node)
            return Lifted(method(product, "sum", integer(-1)), True, 0, sources=left.sources | right.sources)
        if lr >= 2 and rr >= 2:
            return Lifted(binary(left.node, cst.MatrixMultiply(), right.node), True, max(lr, rr), sources=left.sources | right.sources)
        raise CannotLift(f"`{short(node)}`: a per-sample product of a vector and a matrix")

    # ------------------------------------------------------------------ calls

    def _call(self, node: cst.Call) -> Lifted:
        func = node.func
        if any(a.star for a in node.args):
            raise CannotLift(f"`{short(node)}` passes `*args`")
        invariant_func = not self.depends(func)
        qualified = self.qualify(func) if invariant_func else None
        if qualified is not None:
            row = callees.function(qualified)
            if row is None:
                layer = callees.layer(qualified)
                raise CannotLift(f"`{qualified}` is not a callee torchfix knows how to batch" + (" (it builds a module)" if layer else ""))
            return self._function(node, qualified, row)
        if isinstance(func, cst.Name) and invariant_func:
            if func.value in ("float", "int", "bool"):
                return self._convert(node, func.value)
            if func.value == "abs" and len(node.args) == 1:
                inner = self._lift(node.args[0].value)
                return replace(inner, node=call(name("abs"), inner.node), keep=None)
            if func.value in ("max", "min") and len(node.args) == 2 and not any(a.keyword for a in node.args):
                return self._python_extremum(node, func.value)
        layer = self.layers.get(code_of(func)) if invariant_func else None
        if layer is not None:
            return self._layer(node, layer)
        if isinstance(func, cst.Attribute) and self.depends(func.value):
            return self._method(node, func)
        if isinstance(func, cst.Attribute) and invariant_func and qualified is None:
            row = callees.method(func.attr.value)
            if row is not None and row.batching is Batching.ELEMENTWISE and func.attr.value in _BINARY_METHODS:
                # `m_id.eq(i)`, `w.mul(x[i])`: a method of a value the loop does not change, given
                # per-sample operands, broadcasts them as the function form would; the numbers
                # the loop index makes go where the receiver is
                saved = self.device_of
                if isinstance(func.value, cst.Name) and self.device_of is None:
                    self.device_of = func.value.value
                try:
                    args = self._args(node)
                finally:
                    self.device_of = saved
                if func.attr.value in _IN_RECEIVER_DTYPE and any(l.scalar and l.batched for _, l in args):
                    carrier = self._dtype_carrier(func.value)
                    if carrier is None or any(l.scalar and l.batched and l.kind not in ("int", "float") for _, l in args):
                        raise CannotLift(f"`{short(node)}`: per-sample Python numbers of unknown kind meet a tensor")
                    # a Python number meets the receiver in the receiver's dtype (`labels.eq(300)` of
                    # uint8 labels compares with 44): so must the batch of them, which would promote
                    args = [(a, replace(l, node=self.library.as_weak_number(self.spell, l.node, carrier, l.kind or "int")))
                            if l.scalar and l.batched else (a, l) for a, l in args]
                return self._elementwise(node, args, row, receiver_value=self._lift(func.value))
        if self.opaque_calls and invariant_func and isinstance(func, (cst.Name, cst.Attribute)) and qualified is None:
            return self._opaque(node)
        raise CannotLift(f"`{short(func)}` is a call torchfix cannot see into")

    def _opaque(self, node: cst.Call) -> Lifted:
        """``model(x[i])`` -> ``model(x)``: right only if ``model`` treats the samples of a batch
        independently (false for BatchNorm in training mode), which no check can show."""
        args = self._args(node)
        batched = [l for _, l in args if l.batched]
        if not batched or any(l.scalar or l.keepdim or l.pair for l in batched):
            raise CannotLift(f"`{short(node)}`: only tensors of samples can go to one call on the batch")
        self.opaque_callees.append(code_of(node.func))
        built = node.with_changes(args=[a.with_changes(value=l.node) for a, l in args])
        return Lifted(built, True, None, sources=frozenset().union(*(l.sources for l in batched)))

    def _args(self, node: cst.Call) -> list[tuple[cst.Arg, Lifted]]:
        return [(a, self._lift(a.value)) for a in node.args]

    def _function(self, node: cst.Call, qualified: str, row: Callee) -> Lifted:
        args = self._args(node)
        batching = row.batching
        if qualified.startswith("math."):
            return self._math(node, qualified, args)
        if batching is Batching.ELEMENTWISE:
            return self._elementwise(node, args, row)
        if batching in (Batching.REDUCTION, Batching.ALONG_DIM):
            if not args or args[0][0].keyword is not None:
                raise CannotLift(f"`{short(node)}`: the tensor is not the first argument")
            first = args[0][1]
            pairwise = qualified.endswith("cosine_similarity")
            if not first.batched or (not pairwise and any(lifted.batched for _, lifted in args[1:])):
                raise CannotLift(f"`{short(node)}`: per-sample values beyond the first argument")
            return self._along(node, args, row, first, short_name=qualified.rsplit(".", 1)[1])
        if batching is Batching.MATMUL:
            if len(args) != 2 or any(a.keyword for a, _ in args):
                raise CannotLift(f"`{short(node)}`")
            (_, a), (_, b) = args
            kind = qualified.rsplit(".", 1)[1]
            if kind == "mv":
                return self._matmul(replace(a, rank=2) if not a.batched else a, replace(b, rank=1) if b.batched else b, node)
            if kind in ("dot", "inner"):
                return self._matmul(replace(a, rank=1), replace(b, rank=1), node)
            if kind == "mm":
                return self._matmul(replace(a, rank=2), replace(b, rank=2), node)
            if kind == "outer":
                raise CannotLift(f"`{short(node)}`: per-sample outer products are not lifted")
            return self._matmul(a, b, node)
        if batching is Batching.ALLOCATE_LIKE and args and args[0][1].batched and all(not l.batched for _, l in args[1:]):
            first = args[0][1]
            return replace(first, node=node.with_changes(args=[args[0][0].with_changes(value=first.node), *node.args[1:]]), keep=None)
        if batching is Batching.RANDOM:
            raise CannotLift(f"`{qualified}` draws random numbers: batching would reorder the draws")
        raise CannotLift(f"`{qualified}` on a per-sample value")

    def _math(self, node: cst.Call, qualified: str, args: list[tuple[cst.Arg, Lifted]]) -> Lifted:
        twin = _MATH_TO_TORCH.get(qualified.split(".", 1)[1])
        if twin is None or any(a.keyword for a, _ in args) or not all(l.scalar or not l.batched for _, l in args):
            raise CannotLift(f"`{short(node)}` on per-sample values")
        # Python's math computes in double: so does the batch (torch computes an int64 batch's
        # square root in float32; a review found `math.sqrt(k[i].item())` emitted so)
        operands = [
            self.library.cast(self.spell, l.node, "float") if l.batched and l.kind != "float" and not self.library.is_numpy else l.node
            for _, l in args
        ]
        built = call(self.library.function(self.spell, twin), *operands)
        return Lifted(built, True, 0, scalar=True, kind="float")

    def _assume_within_sample(self, invariant: cst.BaseExpression) -> None:
        """Assume an invariant operand of unknown rank broadcasts no wider than a sample (the
        ladder then tries its ranks spelled out, :attr:`assumed_invariants`)."""
        if isinstance(invariant, cst.Name):
            self.assumed_invariants.add(invariant.value)
        self._assume(f"`{short(invariant)}` has no more dimensions than one sample")

    def _elementwise(self, node: cst.Call, args: list[tuple[cst.Arg, Lifted]], row: Callee, receiver_value: Lifted | None = None) -> Lifted:
        operands = ([receiver_value] if receiver_value is not None else []) + [l for _, l in args]
        batched = [o for o in operands if o.batched]
        if any(o.keepdim for o in batched) and not all(o.keepdim for o in batched):
            raise CannotLift(f"`{short(node)}` mixes `x[i]` and `x[i:i + 1]` samples")
        if receiver_value is not None and receiver_value.scalar:
            raise CannotLift(f"`{short(node)}`: a method of a per-sample number")
        what = f"`{short(node)}`: the ranks of its per-sample operands decide how they broadcast"
        if len(batched) > 1:
            self._need_all(batched, what)
            ranks = {self._need(o, what) for o in batched}
            if len(ranks) > 1:
                raise CannotLift(f"`{short(node)}` combines samples of different ranks")
        rank = batched[0].rank if batched and not batched[0].scalar else (0 if batched else None)
        # the invariant operands (an invariant receiver among them) may outrank a sample
        invariants = [l for a, l in args if not l.batched and a.keyword is None]
        invariant_receiver = receiver_value is not None and not receiver_value.batched
        if invariant_receiver:
            assert receiver_value is not None
            invariants.append(receiver_value)
            if receiver_value.rank is None:
                self._assume_within_sample(receiver_value.node)
        widest = max((l.rank for l in invariants if l.rank is not None), default=0)
        if batched and widest > 0:
            rank = self._need(batched[0], what)
        lift_by = max(widest - rank, 0) if rank is not None else 0
        new_args = []
        for a, lifted in args:
            if not lifted.batched and a.keyword is None and not is_number(a.value) and lifted.rank is None:
                self._assume_within_sample(lifted.node)
            value = self._expand(lifted, lift_by) if lifted.batched and lift_by else lifted.node
            new_args.append(a.with_changes(value=value))
        if receiver_value is not None and receiver_value.batched and lift_by:
            receiver_value = replace(receiver_value, node=self._expand(receiver_value, lift_by))
        if rank is not None:
            rank += lift_by
        kind = row.result or next((o.kind for o in batched if o.kind), None)
        if receiver_value is not None:
            func = node.func
            assert isinstance(func, cst.Attribute)
            built = node.with_changes(func=func.with_changes(value=receiver(receiver_value.node)), args=new_args)
        else:
            built = node.with_changes(args=new_args)
        sources = frozenset().union(*(o.sources for o in batched)) if batched else frozenset()
        return Lifted(built, True, rank, keepdim=bool(batched) and batched[0].keepdim, kind=kind, sources=sources)

    def _dim_argument(self, node: cst.Call, row: Callee) -> tuple[int | None, cst.Arg | None]:
        """The dim argument of a call: (its value when a literal, the Arg)."""
        for position, a in enumerate(node.args):
            if a.keyword is not None and a.keyword.value in (row.dim_keyword, "dim", "axis"):
                return int_literal(a.value), a
            if a.keyword is None and row.dim_position is not None and position == row.dim_position:
                return int_literal(a.value), a
        return None, None

    def _along(self, node: cst.Call, args: list[tuple[cst.Arg, Lifted]], row: Callee, first: Lifted, short_name: str,
               receiver_node: cst.Attribute | None = None) -> Lifted:
        """A reduction or along-dim op (softmax) of a per-sample tensor."""
        if first.scalar:
            raise CannotLift(f"`{short(node)}` of a per-sample number")
        self.reorders = self.reorders or row.batching is Batching.REDUCTION
        dim, dim_arg = self._dim_argument(node, row)
        keepdim = any(a.keyword is not None and a.keyword.value == "keepdim" and m.matches(a.value, m.Name("True")) for a in node.args)
        new_args = [a.with_changes(value=lifted.node) for a, lifted in args if a is not dim_arg]
        start = 0 if receiver_node is not None else 1  # where the arguments after the tensor begin
        if dim_arg is not None:
            if dim is None:
                raise CannotLift(f"`{short(node)}`: the dimension is not a literal")
            position = list(node.args).index(dim_arg)
            new_args.insert(position, dim_arg.with_changes(value=integer(dim + 1 if dim >= 0 else dim)))
            built = self._rebuild(node, new_args, first, receiver_node)
            if row.batching is Batching.ALONG_DIM or keepdim:
                return Lifted(built, True, first.rank, keepdim=first.keepdim, kind=row.result or first.kind, sources=first.sources)
            rank = None if first.rank is None else first.rank - 1
            return Lifted(built, True, rank, keepdim=first.keepdim, kind=row.result or first.kind,
                          pair=row.pair_with_dim and not self.library.is_numpy, sources=first.sources)
        if row.batching is Batching.ALONG_DIM:
            if row.default_dim is None:
                raise CannotLift(f"`{short(node)}` without a dimension")
            new_args.append(arg(integer(row.default_dim + 1), row.dim_keyword))
            return Lifted(self._rebuild(node, new_args, first, receiver_node), True, first.rank, keepdim=first.keepdim,
                          kind=first.kind, sources=first.sources)
        if row.default_dim is not None:  # cosine_similarity reduces dim 1 of a sample by default
            new_args.append(arg(integer(row.default_dim + 1), row.dim_keyword))
            rank = None if first.rank is None else first.rank - 1
            return Lifted(self._rebuild(node, new_args, first, receiver_node), True, rank, kind=row.result or first.kind,
                          sources=first.sources)
        # a reduction over the whole sample: over every dimension but the batch's
        if first.keepdim:
            raise CannotLift(f"`{short(node)}` reduces a whole `x[i:i + 1]` sample")
        if any(a.keyword is None for a in new_args[start:]):
            raise CannotLift(f"`{short(node)}`: a whole-sample reduction with more arguments")
        around = self._reduction_around_batch(new_args[start:], first, short_name, row, receiver_node)
        if around is not None:
            return around
        flat = self._flat_reduction(node, new_args, first, short_name, row, receiver_node)
        if flat is not None:
            return flat
        axes = self._all_axes_but_the_batch(first, short_name)
        if axes is not None:
            with_axes = [*new_args[:start], arg(axes, "axis"), *new_args[start:]]
            plain = self._rebuild(node, with_axes, first, receiver_node)
            keep = self._rebuild(node, [*with_axes, arg(name("True"), "keepdims")], first, receiver_node)
            self.reorders = True  # (each sample's elements summed in NumPy's order for those axes)
            against = first.node.value if isinstance(first.node, cst.Name) else None
            return Lifted(plain, True, 0, kind=_reduced_kind(row, short_name, first), sources=first.sources, keep=keep,
                          keep_against=against)
        rank = self._need(first, f"`{short(node)}` reduces a whole sample: its rank says over which dimensions")
        if rank == 0:
            raise CannotLift(f"`{short(node)}` reduces a sample that is a single number")
        dims: cst.BaseExpression = integer(1) if rank == 1 else cst.Tuple([cst.Element(integer(k)) for k in range(1, rank + 1)])
        reducer = short_name
        if reducer in ("max", "min") and rank > 1:
            reducer = self.library.extremum_over_dims(reducer)
        if reducer in ("norm",) and rank > 1:
            raise CannotLift("`norm` of a sample with more than one dimension")
        if reducer in ("argmax", "argmin") and rank > 1:
            raise CannotLift(f"`{reducer}` of a sample with more than one dimension")
        keyword = None if rank == 1 and reducer not in ("norm",) else (self.library.dim_keyword if receiver_node is not None else row.dim_keyword)
        renamed = self._renamed(node, receiver_node, reducer)
        # the dimensions go before the keyword arguments (`x.sum(dtype=torch.float64)`)
        with_dims = [*new_args[:start], arg(dims, keyword), *new_args[start:]]
        plain = self._rebuild(renamed[0], with_dims, first, renamed[1])
        kind = _reduced_kind(row, reducer, first)
        if short_name in ("max", "min") and rank == 1:
            # without dim, .max() is a value; with dim, a (values, indices) pair in torch
            return Lifted(self.library.max_values(plain), True, 0, kind=kind, sources=first.sources)
        keep = None
        if reducer not in ("argmax", "argmin"):
            keep = self._rebuild(renamed[0], [*with_dims, arg(name("True"), self.library.keepdim_keyword)], first, renamed[1])
        return Lifted(plain, True, 0, kind=kind, sources=first.sources, keep=keep)

    #: whole-sample reductions that take a tuple of dimensions, positionally, in torch and NumPy
    #: alike, with the same meaning (``std``/``var``: each library's own default correction, as
    #: in the loop)
    _SHARED_REDUCERS = frozenset({"sum", "mean", "std", "var"})

    def _reduction_around_batch(self, keywords: list[cst.Arg], first: Lifted, short_name: str, row: Callee,
                                receiver_node: cst.Attribute | None) -> Lifted | None:
        """``x[:, i, :, :].mean()``: the reduction of the batch before its dimension moved, over
        every dimension but the batch's -- ``x[:, :n].mean((0, 2, 3))``, or
        ``x[:, :n].mean((0, *range(2, x.ndim)))`` where no rank is pinned. Right for a tensor
        and an ndarray alike (both take the dimensions positionally)."""
        if first.unmoved is None or receiver_node is None or short_name not in self._SHARED_REDUCERS:
            return None
        axis = first.unmoved_axis
        before = [cst.Element(integer(k)) for k in range(axis)]
        if first.rank is not None:
            after = [cst.Element(integer(k)) for k in range(axis + 1, first.rank + 1)]
            dims: cst.BaseExpression = cst.Tuple([*before, *after])
        elif first.unmoved_rank_of is not None:
            rest = call(name("range"), integer(axis + 1), attribute(name(first.unmoved_rank_of), "ndim"))
            dims = cst.Tuple([*before, cst.StarredElement(rest)])
        else:
            return None
        self.reorders = True  # each sample's elements summed in another order
        built = cst.Call(func=attribute(first.unmoved, short_name), args=_commas([arg(dims), *keywords]))
        return Lifted(built, True, 0, kind=_reduced_kind(row, short_name, first))

    #: whole-sample reductions that equal the same reduction of the flattened sample
    _FLAT_REDUCERS = {"sum": "sum", "mean": "mean", "std": "std", "var": "var", "prod": "prod",
                      "max": "amax", "min": "amin", "amax": "amax", "amin": "amin"}

    def _flat_reduction(self, node: cst.Call, new_args: list[cst.Arg], first: Lifted, short_name: str, row: Callee,
                        receiver_node: cst.Attribute | None) -> Lifted | None:
        """``x[:, i, :, :].mean()`` whose sample rank nothing pins, but which has at least one
        dimension: the reduction of each flattened sample, ``....flatten(1).mean(1)`` -- right
        for every rank the subscript allows (torch only: NumPy cannot reshape an empty batch to
        ``(0, -1)``)."""
        reducer = self._FLAT_REDUCERS.get(short_name)
        if first.rank is not None or reducer is None or self.library.is_numpy or receiver_node is None:
            return None
        if first.min_rank >= 1:
            flattened = method(first.node, "flatten", integer(1))
            self._assume(f"a sample of `{short(receiver_node.value)}` has at least {first.min_rank} dimension(s), as its subscript requires")
        elif self.any_rank_reductions:
            # `.flatten(1)` of a batch of one-number samples (1-D) raises; with a trailing length-one
            # dimension every batch has at least two, and each sample is one row of its elements
            flattened = method(subscript(first.node, [cst.SubscriptElement(cst.Index(cst.Ellipsis())), none_index()]), "flatten", integer(1))
        else:
            return None
        built = cst.Call(func=attribute(flattened, reducer), args=_commas([arg(integer(1)), *new_args]))
        kind = _reduced_kind(row, reducer, first)
        return Lifted(built, True, 0, kind=kind)

    #: NumPy's whole-sample reductions that take a tuple of axes (the empty one too: each
    #: one-number sample is then its own reduction)
    _AXES_REDUCERS = frozenset({"sum", "mean", "std", "var", "prod", "max", "min", "amax", "amin"})

    def _all_axes_but_the_batch(self, first: Lifted, short_name: str) -> cst.BaseExpression | None:
        """``tuple(range(1, x.ndim))``: the axes of every sample of the NumPy batch ``x`` whose
        sample rank nothing pins -- right for every rank, one-number samples (no axis) and an
        empty batch included, where the flattening torch uses is not (NumPy cannot reshape an
        empty batch to ``(0, -1)``). After the rungs that guess a rank. The rank is read from a
        name, never by computing the batch twice: the batch's own, else the one array whose
        rank decides it, walked along its first dimension (``(w * a).sum()`` of ``for a in
        acts``: ``acts.ndim``) -- where another operand broadcasts wider, or a subscript drops
        a dimension, that rank is wrong and the checker refutes the form (a NumPy reduction
        over an axis the batch lacks raises)."""
        if not (self.library.is_numpy and first.rank is None and short_name in self._AXES_REDUCERS):
            return None
        if not (self.any_rank_reductions or first.min_rank >= 1):
            return None
        if isinstance(first.node, cst.Name):
            holder = first.node.value
        elif len(first.sources) == 1 and self.walked_dims.get(next(iter(first.sources))) == 0:
            holder = next(iter(first.sources))
        else:
            return None
        return call(name("tuple"), call(name("range"), integer(1), attribute(name(holder), "ndim")))

    @staticmethod
    def _renamed(node: cst.Call, receiver_node: cst.Attribute | None, reducer: str) -> tuple[cst.Call, cst.Attribute | None]:
        if receiver_node is not None:
            if receiver_node.attr.value == reducer:
                return node, receiver_node
            return node, receiver_node.with_changes(attr=cst.Name(reducer))
        func = node.func
        if isinstance(func, cst.Attribute) and func.attr.value != reducer:
            return node.with_changes(func=func.with_changes(attr=cst.Name(reducer))), None
        return node, None

    @staticmethod
    def _rebuild(node: cst.Call, new_args: list[cst.Arg], first: Lifted, receiver_node: cst.Attribute | None) -> cst.Call:
        args = _commas(new_args)
        if receiver_node is not None:
            return node.with_changes(func=receiver_node.with_changes(value=receiver(first.node)), args=args)
        return node.with_changes(args=args)

    def _method(self, node: cst.Call, func: cst.Attribute) -> Lifted:
        attr = func.attr.value
        # the receiver may be a boolean selection where this call reduces it whole, or passes
        # it on element-wise to what asked for a selection
        takes_selection = (attr in self._MASKED_REDUCERS and not node.args) or id(node) in self.selectable
        if takes_selection:
            self.selectable.add(id(func.value))
        try:
            value = self._lift(func.value)
        finally:
            self.selectable.discard(id(func.value))
        if value.selected is not None:
            return self._masked_method(node, func, value)
        row = callees.method(attr)
        if row is None:
            raise CannotLift(f"`.{attr}()` is not a method torchfix knows how to batch")
        args = self._args(node)
        batching = row.batching
        if any(lifted.batched for _, lifted in args) and batching not in (Batching.ELEMENTWISE, Batching.MATMUL):
            raise CannotLift(f"`.{attr}()` with per-sample arguments")
        if batching is Batching.CONVERT:
            if attr == "item" and not node.args:
                return self._to_number(value, func.value, value.kind)
            raise CannotLift(f"`.{attr}()` of a per-sample value")
        if value.scalar:
            raise CannotLift(f"`.{attr}()` of a per-sample number")
        if batching is Batching.ELEMENTWISE:
            return self._elementwise(node, args, row, receiver_value=value)
        if batching in (Batching.REDUCTION, Batching.ALONG_DIM):
            return self._along(node, args, row, value, short_name=attr, receiver_node=func)
        if batching is Batching.MATMUL:
            if len(args) != 1 or args[0][0].keyword is not None:
                raise CannotLift(f"`{short(node)}`")
            other = args[0][1]
            if attr == "dot":
                return self._matmul(replace(value, rank=1), replace(other, rank=1), node)
            if attr == "mv":
                return self._matmul(replace(value, rank=2), replace(other, rank=1) if other.batched else other, node)
            return self._matmul(value, other, node)
        if batching is Batching.SHAPE:
            return self._reshape(node, func, value, args)
        if batching is Batching.RANDOM:
            raise CannotLift(f"`.{attr}()` draws random numbers: batching would reorder the draws")
        raise CannotLift(f"`.{attr}()` of a per-sample value")

    def _to_number(self, value: Lifted, source: cst.BaseExpression, kind: str | None) -> Lifted:
        """A per-sample tensor converted to a Python number (``.item()``). A Python float is a
        double, and Python computes with it in double: so does the batch of an array known to
        hold floats (`x[i].item() * 0.1 - y[i].item() * 0.1` of float32 values cancels otherwise)."""
        if value.scalar:
            return value
        if value.keepdim:
            rank = self._need(value, f"`{short(source)}`: a number per sample needs one element per sample")
            if rank != 1:
                raise CannotLift(f"`{short(source)}` has more than one element per sample")
            node: cst.BaseExpression = method(value.node, "flatten")
        else:
            # one number per sample: a vector of them is the likeliest reading
            rank = self._need(value, f"`{short(source)}`: a number per sample needs one element per sample", NUMBER_RANKS)
            if rank != 0:
                raise CannotLift(f"`{short(source)}` has {rank} dimensions per sample, not one number")
            node = value.node
        if not self.library.is_numpy:
            # a Python number carries no graph: `targets[i] = s[i].item() * 0.9` is a constant
            # (a review found the batch backpropagating into `s`)
            node = method(node, "detach")
        if kind == "float":
            node = self.library.cast(self.spell, node, "float")
        return Lifted(node, True, 0, scalar=True, kind=kind, sources=value.sources, converted=True)

    def _reshape(self, node: cst.Call, func: cst.Attribute, value: Lifted, args: list[tuple[cst.Arg, Lifted]]) -> Lifted:
        attr = func.attr.value
        if value.keepdim and attr == "squeeze" and len(args) == 1 and int_literal(args[0][0].value) == 0 and (
            args[0][0].keyword is None or args[0][0].keyword.value == "dim"
        ):
            # `x[i:i + 1].squeeze(0)` drops the length-one leading dimension: it is `x[i]`
            rank = None if value.rank is None else value.rank - 1
            return replace(value, keepdim=False, rank=rank, min_rank=max(value.min_rank - 1, 0), keep=None)
        if value.keepdim:
            raise CannotLift(f"`.{attr}()` of an `x[i:i + 1]` sample")
        literals = [int_literal(a.value) if a.keyword is None else None for a, _ in args]
        rank = value.rank
        keep = dict(kind=value.kind, sources=value.sources)
        if attr in ("unsqueeze", "squeeze") and len(args) == 1 and literals[0] is not None:
            dim = literals[0]
            assert dim is not None
            shifted = dim + 1 if dim >= 0 else dim
            new_rank = None if rank is None else rank + (1 if attr == "unsqueeze" else -1)
            return Lifted(method(value.node, attr, integer(shifted)), True, new_rank, **keep)  # type: ignore[arg-type]
        if (attr == "flatten" and not args) or (attr in ("view", "reshape") and literals == [-1]):
            rank = self._need(value, f"`{short(node)}`: the rank of a sample decides how it flattens")
            if rank == 0:
                return Lifted(self.library.unsqueeze(self.spell, value.node, 1), True, 1, **keep)  # type: ignore[arg-type]
            if rank == 1:
                return replace(value, keep=None)
            return Lifted(method(value.node, "flatten", integer(1)), True, 1, **keep)  # type: ignore[arg-type]
        if attr == "permute" and args and all(l is not None and l >= 0 for l in literals):
            dims = [integer(0)] + [integer((l or 0) + 1) for l in literals]
            return Lifted(method(value.node, "permute", *dims), True, rank, **keep)  # type: ignore[arg-type]
        if attr == "transpose" and len(args) == 2 and all(l is not None for l in literals):
            first, second = (l + 1 if l >= 0 else l for l in literals)  # type: ignore[operator]
            return Lifted(method(value.node, "transpose", integer(first), integer(second)), True, rank, **keep)  # type: ignore[arg-type]
        if attr == "t" and not args:
            rank = self._need(value, f"`{short(node)}`: the rank of a sample decides what `.t()` does")
            if rank <= 1:
                return value
            if rank == 2:
                return Lifted(self.library.swap_last(self.spell, value.node), True, 2, **keep)  # type: ignore[arg-type]
        if attr in ("view", "reshape") and args and all(l is not None and (l > 0 or l == -1) for l in literals) and literals.count(-1) <= 1:
            sizes = [integer(l) for l in literals if l is not None]
            if -1 in literals:
                raise CannotLift(f"`{short(node)}`: `-1` among other sizes needs the batch size spelled out")
            return Lifted(method(value.node, attr, integer(-1), *sizes), True, len(sizes), **keep)  # type: ignore[arg-type]
        raise CannotLift(f"`.{attr}()` of a per-sample value with these arguments")

    def _convert(self, node: cst.Call, kind: str) -> Lifted:
        if len(node.args) != 1 or node.args[0].keyword is not None:
            raise CannotLift(f"`{short(node)}`")
        inner = self._lift(node.args[0].value)
        number = self._to_number(inner, node.args[0].value, inner.kind)
        converted = number.node
        if inner.kind != kind:
            converted = self.library.cast(self.spell, converted, kind)
        return Lifted(converted, True, 0, scalar=True, kind=kind, sources=inner.sources)

    def _python_extremum(self, node: cst.Call, which: str) -> Lifted:
        """``max(a, b)`` of per-sample numbers: Python returns ``b`` when ``b > a`` (``b < a`` for
        ``min``) and ``a`` otherwise -- NaN included -- which is ``torch.where(b > a, b, a)``."""
        a, b = (self._lift(x.value) for x in node.args)
        if not (a.scalar or b.scalar):
            raise CannotLift(f"`{which}(...)` of per-sample tensors")
        x, y, rank = self._align(a, b, node)
        operator = cst.GreaterThan() if which == "max" else cst.LessThan()
        test = cst.Comparison(left=y, comparisons=[cst.ComparisonTarget(operator, x)])
        test = test.with_changes(left=operand_of(y, test, False), comparisons=[cst.ComparisonTarget(operator, operand_of(x, test, True))])
        where = self._batch_first(self.library.where(self.spell, test, y, x), a, b)
        return Lifted(where, True, rank, scalar=True, kind=a.kind or b.kind, sources=a.sources | b.sources)

    def _layer(self, node: cst.Call, layer: str) -> Lifted:
        args = self._args(node)
        if len(args) != 1 or args[0][0].keyword is not None:
            raise CannotLift(f"`{short(node)}` calls a layer with several arguments")
        (a, value), = args
        if not value.batched or value.scalar:
            raise CannotLift(f"`{short(node)}`")
        return Lifted(node.with_changes(args=[a.with_changes(value=value.node)]), True, None, keepdim=value.keepdim)

    # ------------------------------------------------------------------ dispatch table

    #: the method that lifts each kind of loop-dependent expression, for ``_lift`` (here, after
    #: the methods it names); an expression of another kind does not lift
    _LIFTERS: ClassVar[dict[type[cst.BaseExpression], Callable[..., Lifted]]] = {
        cst.Name: _name,
        cst.Subscript: _subscript,
        cst.Attribute: _attribute,
        cst.Call: _call,
        cst.BinaryOperation: _binary,
        cst.UnaryOperation: _unary,
        cst.Comparison: _comparison,
        cst.IfExp: _if_expression,
    }


# ----------------------------------------------------------------------------- small helpers


#: methods that return a view of their receiver in its dtype (``analysis.VIEW_METHODS`` holds casts
#: too, which share memory but not the dtype)
_SAME_DTYPE_VIEWS = frozenset({"movedim", "moveaxis", "unsqueeze", "transpose", "permute", "reshape", "view", "flatten", "squeeze", "swapaxes"})


def _cheap(node: cst.BaseExpression) -> bool:
    """A name or an attribute of one (``x``, ``self.w``): cheap and safe to read twice."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _shifted(bound: cst.BaseExpression, offset: int) -> cst.BaseExpression:
    """``bound + offset`` with the constants folded: ``(n - 1) + 1`` is ``n``, ``(n + 2) - 1`` is
    ``n + 1`` (the same integer arithmetic on a Python int, which a loop bound is)."""
    if isinstance(bound, cst.BinaryOperation) and isinstance(bound.operator, (cst.Add, cst.Subtract)) and not bound.lpar:
        constant = int_literal(bound.right)
        if constant is not None:
            offset += constant if isinstance(bound.operator, cst.Add) else -constant
            bound = bound.left
    if offset == 0:
        return bound
    return binary(bound, cst.Add() if offset > 0 else cst.Subtract(), integer(abs(offset)))


def _complement(mask: cst.BaseExpression) -> cst.BaseExpression:
    """The elements ``mask`` leaves out: ``m != 0`` for ``m == 0`` (and back), which is exact
    for NaN too (neither compares equal to 0); ``~mask`` otherwise (``~(a < b)`` is not
    ``a >= b`` where either is NaN)."""
    if isinstance(mask, cst.Comparison) and len(mask.comparisons) == 1:
        operator = mask.comparisons[0].operator
        if isinstance(operator, (cst.Equal, cst.NotEqual)):
            flipped = cst.NotEqual() if isinstance(operator, cst.Equal) else cst.Equal()
            return mask.with_changes(comparisons=[mask.comparisons[0].with_changes(operator=flipped)])
    return cst.UnaryOperation(cst.BitInvert(), receiver(mask))


def short(node: cst.CSTNode) -> str:
    """The code of ``node`` on one line, cut at 60 characters (for reasons and assumptions)."""
    text = " ".join(code_of(node).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _commas(args: list[cst.Arg]) -> list[cst.Arg]:
    """Arguments with the separators a call needs (rebuilt argument lists lose the last one's)."""
    fixed = []
    for position, a in enumerate(args):
        last = position == len(args) - 1
        if last:
            fixed.append(a.with_changes(comma=cst.MaybeSentinel.DEFAULT))
        elif a.comma is cst.MaybeSentinel.DEFAULT:
            fixed.append(a.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))))
        else:
            fixed.append(a)
    return fixed


def _keep_rank(keep: cst.BaseExpression | None) -> int:
    """How many dimensions a whole-sample reduction's keepdim form keeps (its ``dim``)."""
    if not isinstance(keep, cst.Call):
        return -1
    for a in keep.args:
        if a.keyword is not None and a.keyword.value == "keepdim":
            continue
        if isinstance(a.value, cst.Tuple):
            return len(a.value.elements)
        if int_literal(a.value) is not None and a.keyword is None or (a.keyword is not None and a.keyword.value in ("dim", "axis")):
            return 1
    return -1


def element_effect(element: cst.SubscriptElement) -> str | None:
    """What one subscript element does to the indexed value's rank: "keep" (a slice), "remove"
    (a scalar index), "add" (``None``); None for ``...`` (the position of what follows is
    unknown)."""
    piece = element.slice
    if isinstance(piece, cst.Slice):
        return "keep"
    if m.matches(piece.value, m.Name("None")):
        return "add"
    if m.matches(piece.value, m.Ellipsis()):
        return None
    return "remove"


def _reduced_kind(row: Callee, reducer: str, sample: Lifted) -> str | None:
    """The dtype kind of a whole-sample reduction: the callee's own, else an integer sum or
    product of integers or bools, else the sample's."""
    return row.result or ("int" if reducer in ("sum", "prod") and sample.kind in ("int", "bool") else sample.kind)


def _fewest_sample_dims(elements: Sequence[cst.SubscriptElement], position: int) -> int:
    """The fewest dimensions the sample ``x[..., i, ...]`` has: every element but ``None``
    takes a dimension of ``x``, so ``x`` has at least that many; the sample keeps those a slice
    takes and gains one per ``None``. 0 where ``...`` makes it unknowable."""
    effects = [element_effect(e) for k, e in enumerate(elements) if k != position]
    if None in effects or any(isinstance(e.slice, cst.Index) and m.matches(e.slice.value, m.Ellipsis()) for e in elements):
        return 0
    return effects.count("keep") + effects.count("add")


def _is_plain_slice(element: cst.SubscriptElement) -> bool:
    piece = element.slice
    return isinstance(piece, cst.Slice) and piece.lower is None and piece.upper is None and piece.step is None


def _is_integer_index(element: cst.SubscriptElement) -> bool:
    return isinstance(element.slice, cst.Index) and int_literal(element.slice.value) is not None


def _rank_after(rank: int | None, elements: Sequence[cst.SubscriptElement]) -> int | None:
    """The rank left after indexing with ``elements`` (a number removes a dimension, ``None``
    adds one, a slice keeps it)."""
    if rank is None:
        return None
    for element in elements:
        piece = element.slice
        if isinstance(piece, cst.Index):
            rank += 1 if m.matches(piece.value, m.Name("None")) else -1
    return rank


def unsqueeze_after_batch(node: cst.BaseExpression, count: int) -> cst.BaseExpression:
    """``node[:, None, None]``: ``count`` length-one dimensions after the batch dimension."""
    return subscript(node, [full_slice(), *[none_index() for _ in range(count)]])


def _literal_kind(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    if isinstance(node, cst.Float):
        return "float"
    if isinstance(node, cst.Integer):
        return "int"
    if m.matches(node, m.Name("True") | m.Name("False")):
        return "bool"
    return None


def _combined_kind(left: Lifted, right: Lifted, operator: cst.BaseBinaryOp) -> str | None:
    kinds = {left.kind, right.kind}
    if isinstance(operator, cst.Divide):
        return "float"
    if "float" in kinds:
        return "float"
    if None in kinds:
        return None
    if isinstance(operator, (cst.BitAnd, cst.BitOr, cst.BitXor)) and kinds == {"bool"}:
        return "bool"
    return "int"


_DIVISIONS = (cst.Divide, cst.FloorDivide, cst.Modulo)
#: expressions that bind names of their own
_OWN_SCOPES = (cst.Lambda, cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass
class _DivisorGuard:
    """A branch of a NumPy conditional with each per-sample divisor ``d`` read as
    ``d if test else np.ones_like(d)`` (the other way round in the branch taken when ``test``
    fails): the same value wherever the branch is taken, and 1 of ``d``'s own dtype where it is
    not. The dividend of ``//`` and ``%`` likewise, with ``np.zeros_like``: ``inf // 1`` signals
    an invalid value. A loop-invariant operand is left as written: made an array of ones it
    would widen the division's dtype (``float16 % 0.3`` stays float16, a float64 array would not),
    and its value does not depend on the branch a sample takes. Lambdas and comprehensions keep
    their own."""

    test: cst.BaseExpression
    depends: Callable[[cst.CSTNode], bool]
    ones_like: cst.BaseExpression
    zeros_like: cst.BaseExpression

    def kept(self, branch: cst.BaseExpression, taken: bool) -> cst.BaseExpression:
        guard = self

        class _Guard(cst.CSTTransformer):
            def on_visit(self, node: cst.CSTNode) -> bool:
                return not isinstance(node, _OWN_SCOPES)

            def leave_BinaryOperation(self, original: cst.BinaryOperation, updated: cst.BinaryOperation) -> cst.BaseExpression:
                if not isinstance(updated.operator, _DIVISIONS):
                    return updated
                if guard.depends(original.right):
                    updated = updated.with_changes(right=guard._kept(updated.right, guard.ones_like, taken))
                if isinstance(updated.operator, (cst.FloorDivide, cst.Modulo)) and guard.depends(original.left):
                    updated = updated.with_changes(left=guard._kept(updated.left, guard.zeros_like, taken))
                return updated

        return branch.visit(_Guard())  # type: ignore[return-value]

    def _kept(self, value: cst.BaseExpression, like: cst.BaseExpression, taken: bool) -> cst.IfExp:
        bare = value.with_changes(lpar=[], rpar=[])
        filler = call(like, bare)
        return cst.IfExp(test=self.test, body=bare if taken else filler, orelse=filler if taken else bare,
                         lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _dtype_kind(dtype: str | None) -> str | None:
    """The kind of Python number an element of an array of ``dtype`` converts to (``.item()``)."""
    if dtype is None:
        return None
    if dtype == "bool":  # (`ShapeFacts.dtypes` spells NumPy's `bool_` so too)
        return "bool"
    if "float" in dtype:
        return "float"
    return "int" if "int" in dtype else None
