"""How the constructs a lift introduces are spelled for the array library the loop works on.

A lift mostly keeps the user's own calls (``x[i].sum(0)`` becomes ``x.sum(1)`` for a tensor and
an ndarray alike); what it adds -- an ``arange`` of the samples, a ``where``, a cast, moving an
axis, the keyword of a reduction's dimension -- is spelled differently in torch and NumPy.
:class:`Library` holds those spellings; a loop over tensors lifts with :data:`TORCH`, one over
ndarrays with :data:`NUMPY`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import libcst as cst

from torchfix.codemods.loops.nodes import attribute, call, full_slice, integer, method, subscript

#: spells a qualified library name (``numpy.arange``) as this module binds it
Spell = Callable[[str], cst.BaseExpression]

_TORCH_CASTS = {"int": "long", "float": "double", "bool": "bool", "float32": "float"}
_NUMPY_CASTS = {"int": "int64", "float": "float64", "bool": "bool_", "float32": "float32"}


@dataclass(frozen=True)
class Library:
    #: the root module: "torch" or "numpy"
    root: str
    #: the keyword of a reduction's dimension, and of keeping it
    dim_keyword: str
    keepdim_keyword: str

    @property
    def is_numpy(self) -> bool:
        return self.root == "numpy"

    def function(self, spell: Spell, name: str) -> cst.BaseExpression:
        """``torch.<name>`` / ``np.<name>`` as spelled here."""
        return spell(f"{self.root}.{name}")

    def arange(self, spell: Spell, *bounds: cst.BaseExpression, like: cst.BaseExpression | None) -> cst.Call:
        """The sample positions ``start..stop``, on the device of ``like`` (torch)."""
        if self.is_numpy or like is None:
            return call(self.function(spell, "arange"), *bounds)
        return call(self.function(spell, "arange"), *bounds, device=attribute(like, "device"))

    def numbers(self, spell: Spell, values: cst.BaseExpression, kind: str, like: cst.BaseExpression | None) -> cst.Call:
        """A list of Python numbers as an array of what Python computes them in: float64 for
        floats, int64 for ints (``torch.tensor`` would make floats float32), on the device of
        ``like`` (torch)."""
        dtype = attribute(spell(self.root), "float64" if kind == "float" else "int64")
        if self.is_numpy:
            return call(self.function(spell, "asarray"), values, dtype=dtype)
        if like is None:
            return call(self.function(spell, "tensor"), values, dtype=dtype)
        return call(self.function(spell, "tensor"), values, dtype=dtype, device=attribute(like, "device"))

    def where(self, spell: Spell, test: cst.BaseExpression, yes: cst.BaseExpression, no: cst.BaseExpression) -> cst.Call:
        return call(self.function(spell, "where"), test, yes, no)

    def as_weak_number(self, spell: Spell, numbers: cst.BaseExpression, array: cst.BaseExpression, kind: str) -> cst.BaseExpression:
        """Per-sample Python numbers (``numbers``, batched) cast to the dtype they take next to a
        sample of ``array``. Both libraries treat a Python number as weak: ``x[i] + i`` stays
        int8 for an int8 ``x`` in torch, ``np.float32(x) / (i + 1.)`` float32 in NumPy (NEP 50),
        and torch wraps the number into that dtype (``uint8 > 300`` compares with 44); the
        batched numbers are an array of their own (int64, float) and would promote instead."""
        zero = cst.Float("0.0") if kind == "float" else integer(0)
        dtype = call(self.function(spell, "result_type"), array, zero)
        return method(numbers, "astype" if self.is_numpy else "to", dtype)

    def move_axis(self, spell: Spell, value: cst.BaseExpression, source: int, destination: int) -> cst.BaseExpression:
        inner = _moved(value, cst.Module([]).code_for_node(self.function(spell, "moveaxis")) if self.is_numpy else None)
        if inner is not None and inner[2] == source:
            # a move of the axis a move just put there is one move (`x.movedim(2, 0).movedim(0, -1)`
            # is `x.movedim(2, -1)`): the axis ends where the second puts it, the others keep
            # their order
            value, source = inner[0], inner[1]
            if source == destination:
                return value
        if self.is_numpy:
            return call(self.function(spell, "moveaxis"), value, integer(source), integer(destination))
        return method(value, "movedim", integer(source), integer(destination))

    def cast(self, spell: Spell, value: cst.BaseExpression, kind: str) -> cst.BaseExpression:
        """``value`` as int64 ("int"), float64 ("float"), bool or float32 -- what Python's
        ``int()`` / ``float()`` / ``bool()`` of its elements make, batched."""
        if self.is_numpy:
            return method(value, "astype", attribute(spell("numpy"), _NUMPY_CASTS[kind]))
        return method(value, _TORCH_CASTS[kind])

    def max_values(self, reduced: cst.BaseExpression) -> cst.BaseExpression:
        """The values of ``x.max(dim)``: torch returns (values, indices), NumPy the values."""
        return reduced if self.is_numpy else attribute(reduced, "values")

    def extremum_over_dims(self, name: str) -> str:
        """The method reducing ``max``/``min`` over several dimensions at once."""
        return name if self.is_numpy else "a" + name

    def merge_first_two(self, value: cst.BaseExpression) -> cst.BaseExpression:
        """The batch's first two dimensions as one (what ``cat`` of the samples makes)."""
        if self.is_numpy:
            shape = attribute(value, "shape")
            rest = subscript(shape, [cst.SubscriptElement(cst.Slice(lower=integer(2), upper=None))])
            return method(value, "reshape", cst.BinaryOperation(cst.Tuple([cst.Element(integer(-1))]), cst.Add(), rest))
        return method(value, "flatten", integer(0), integer(1))

    def swap_last(self, spell: Spell, value: cst.BaseExpression) -> cst.BaseExpression:
        """Each sample matrix transposed."""
        if self.is_numpy:
            return call(self.function(spell, "swapaxes"), value, integer(-1), integer(-2))
        return attribute(value, "mT")

    def unsqueeze(self, spell: Spell, value: cst.BaseExpression, dim: int) -> cst.BaseExpression:
        if self.is_numpy:
            return call(self.function(spell, "expand_dims"), value, integer(dim))
        return method(value, "unsqueeze", integer(dim))

    def new_axis_after_batch(self, value: cst.BaseExpression, count: int) -> cst.BaseExpression:
        return subscript(value, [full_slice(), *[cst.SubscriptElement(cst.Index(cst.Name("None"))) for _ in range(count)]])


TORCH = Library("torch", "dim", "keepdim")
NUMPY = Library("numpy", "axis", "keepdims")


def _literal_int(node: cst.BaseExpression) -> int | None:
    if isinstance(node, cst.Integer):
        return int(node.value)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus) and isinstance(node.expression, cst.Integer):
        return -int(node.expression.value)
    return None


def _moved(node: cst.BaseExpression, moveaxis: str | None) -> tuple[cst.BaseExpression, int, int] | None:
    """``(x, source, destination)`` of ``x.movedim(source, destination)`` (torch, where
    ``moveaxis`` is None) or of ``np.moveaxis(x, source, destination)`` spelled exactly as
    ``moveaxis`` (NumPy), with literal axes; else None."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    args = node.args
    if any(a.keyword is not None or a.star for a in args):
        return None
    if moveaxis is None and node.func.attr.value == "movedim" and len(args) == 2:
        value = node.func.value
    elif moveaxis is not None and cst.Module([]).code_for_node(node.func) == moveaxis and len(args) == 3:
        value, args = args[0].value, args[1:]
    else:
        return None
    source, destination = _literal_int(args[0].value), _literal_int(args[1].value)
    if source is None or destination is None:
        return None
    return value, source, destination
