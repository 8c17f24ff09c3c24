"""What a ``for`` loop iterates over: its domain.

The spellings real code uses for "every sample of a batch" -- ``range(n)``, ``range(0, n)``,
``range(len(x))``, ``range(x.shape[0])``, ``range(x.size(0))``, ``range(x.size()[0])``,
``range(b)`` after ``b = x.size(0)`` or ``b, c, h, w = x.shape``, ``for v in x``,
``for i, v in enumerate(x)``, ``for a, b in zip(x, y)``, ``for i, (a, b) in enumerate(zip(x, y))``
-- become one :class:`Domain`: an optional integer index, the sequences walked element by
element, and the extent (``start``/``stop``, and the tensor dimension it measures when known).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.loops.nodes import int_literal

#: ``(name, dim)``: the extent is the size of dimension ``dim`` of the tensor bound to ``name``
Measure = tuple[str, int]
#: resolves a name used as an extent (``b`` after ``b = x.size(0)``) to what it measures
SizeResolver = Callable[[str], Optional[Measure]]


@dataclass(frozen=True)
class Walked:
    """A sequence the loop walks element by element: ``element`` is bound to ``source[k]``."""

    element: str
    #: the iterated expression as written (``x``, ``x.t()``, ``boxes``)
    source: cst.BaseExpression
    #: the iterated name when ``source`` is a plain name
    name: str | None
    #: ``element`` is ``source[k:k + 1]``, not ``source[k]``: the loop walks one-row chunks
    #: (``torch.chunk(x, x.size(0))``), and ``source`` is the chunked tensor
    keepdim: bool = False


@dataclass(frozen=True)
class Domain:
    """The loop's iteration domain. Iteration ``k`` binds ``index = start + k`` (when there is an
    index) and each walked element to ``source[k]``."""

    index: str | None
    walked: tuple[Walked, ...]
    #: ``range(start, stop)``; 0 and None for loops over sequences
    start: int = 0
    stop: cst.BaseExpression | None = None
    #: what the extent measures, when known: the size of a dimension of a named tensor
    measures: Measure | None = None

    @property
    def variables(self) -> tuple[str, ...]:
        names = [self.index] if self.index else []
        return tuple(names + [w.element for w in self.walked])

    @property
    def is_range(self) -> bool:
        return self.stop is not None


def measure_of(expr: cst.BaseExpression, sizes: SizeResolver | None = None) -> Measure | None:
    """``(x, k)`` for ``len(x)`` (k = 0), ``x.shape[k]``, ``x.size(k)``, ``x.size()[k]``,
    ``x.shape[-1]`` stays unresolved (the rank is unknown); ``b`` when ``sizes`` resolves it."""
    if isinstance(expr, cst.Name):
        return sizes(expr.value) if sizes else None
    if m.matches(expr, m.Call(func=m.Name("len"), args=[m.Arg(value=m.Name(), keyword=None, star="")])):
        return expr.args[0].value.value, 0  # type: ignore[attr-defined]
    if isinstance(expr, cst.Subscript) and len(expr.slice) == 1 and isinstance(expr.slice[0].slice, cst.Index):
        dim = int_literal(expr.slice[0].slice.value)
        inner = expr.value
        if dim is None or dim < 0:
            return None
        if m.matches(inner, m.Attribute(value=m.Name(), attr=m.Name("shape"))):
            return inner.value.value, dim  # type: ignore[attr-defined]
        if m.matches(inner, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("size")), args=[])):
            return inner.func.value.value, dim  # type: ignore[attr-defined]
        return None
    if m.matches(expr, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("size")), args=[m.Arg(keyword=None) | m.Arg(keyword=m.Name("dim"))])):
        dim = int_literal(expr.args[0].value)  # type: ignore[attr-defined]
        if dim is not None and dim >= 0:
            return expr.func.value.value, dim  # type: ignore[attr-defined]
    return None


#: resolves a dotted callee (``th.chunk``) to its qualified name (``torch.chunk``), else None
Qualifier = Callable[[cst.BaseExpression], Optional[str]]


def _dim_zero(args: list[cst.Arg]) -> bool:
    """Whether the optional ``dim`` among ``args`` (positional or keyword) is 0."""
    if not args:
        return True
    if len(args) > 1 or args[0].star:
        return False
    keyword = args[0].keyword
    return (keyword is None or keyword.value == "dim") and int_literal(args[0].value) == 0


def unbatched_source(source: cst.BaseExpression, sizes: SizeResolver | None = None,
                     qualify: Qualifier | None = None) -> tuple[str, bool] | None:
    """``(x, keepdim)`` where ``for v in source`` walks the rows of the tensor ``x``:
    ``x.unbind()`` / ``torch.unbind(x, 0)`` bind ``v = x[k]``, and one-row chunks --
    ``torch.chunk(x, x.size(0), dim=0)``, ``x.chunk(len(x))`` -- bind ``v = x[k:k + 1]``
    (``keepdim``). Chunks of another count, or of another dimension, are not rows; nor is
    ``split(1)``, which gives one empty chunk of an empty ``x`` where ``chunk`` raises."""
    if not isinstance(source, cst.Call) or not isinstance(source.func, cst.Attribute):
        return None
    attr = source.func.attr.value
    if attr not in ("chunk", "unbind") or any(a.star for a in source.args):
        return None
    args = list(source.args)
    if qualify is not None and qualify(source.func) in ("torch.chunk", "torch.unbind"):
        if not args or args[0].keyword is not None or not isinstance(args[0].value, cst.Name):
            return None
        tensor, args = args[0].value.value, args[1:]
    elif isinstance(source.func.value, cst.Name):
        tensor = source.func.value.value  # a method: only a tensor has `.chunk` / `.unbind`
    else:
        return None
    if attr == "unbind":
        return (tensor, False) if _dim_zero(args) else None
    if not args or args[0].star or (args[0].keyword is not None and args[0].keyword.value != "chunks"):
        return None
    if measure_of(args[0].value, sizes) != (tensor, 0) or not _dim_zero(args[1:]):
        return None
    return tensor, True


def _walked(target: cst.BaseExpression, source: cst.BaseExpression, sizes: SizeResolver | None = None,
            qualify: Qualifier | None = None) -> list[Walked] | None:
    """Element variables bound by ``for target in source`` where ``source`` is one sequence
    (a name or another expression, the rows of :func:`unbatched_source`) or ``zip(a, b, ...)``."""
    if m.matches(source, m.Call(func=m.Name("zip"))):
        assert isinstance(source, cst.Call)
        if not isinstance(target, (cst.Tuple, cst.List)) or len(target.elements) != len(source.args):
            return None
        walked = []
        for element, argument in zip(target.elements, source.args):
            if argument.keyword is not None or argument.star or not isinstance(element.value, cst.Name):
                return None
            walked += _walked(element.value, argument.value, sizes, qualify) or [None]  # type: ignore[list-item]
        if None in walked or len({w.element for w in walked}) != len(walked):
            return None
        return walked
    if isinstance(target, cst.Name):
        if isinstance(source, cst.Call) and isinstance(source.func, cst.Name) and source.func.value in ("range", "enumerate", "zip", "reversed", "sorted"):
            return None
        rows = unbatched_source(source, sizes, qualify)
        if rows is not None:
            return [Walked(target.value, cst.Name(rows[0]), rows[0], keepdim=rows[1])]
        return [Walked(target.value, source, source.value if isinstance(source, cst.Name) else None)]
    return None


def loop_domain(loop: cst.For | cst.CompFor, sizes: SizeResolver | None = None,
                qualify: Qualifier | None = None) -> Domain | None:
    """The domain of ``loop`` (a ``for`` statement or a comprehension's ``for``), or None when it
    iterates over something else (a dict, ``range`` with a step, a reversed range, ...).
    ``qualify`` resolves ``th.chunk`` to ``torch.chunk``; without it only the method spellings of
    :func:`unbatched_source` are known."""
    if isinstance(loop, cst.For) and (loop.asynchronous is not None or loop.orelse is not None):
        return None
    if isinstance(loop, cst.CompFor) and loop.asynchronous is not None:
        return None
    target, source = loop.target, loop.iter
    if m.matches(source, m.Call(func=m.Name("range"))):
        assert isinstance(source, cst.Call)
        args = source.args
        if not isinstance(target, cst.Name) or any(a.keyword is not None or a.star for a in args) or not 1 <= len(args) <= 2:
            return None
        start = 0
        if len(args) == 2:
            literal = int_literal(args[0].value)
            if literal is None or literal < 0:
                return None
            start = literal
        stop = args[-1].value
        return Domain(target.value, (), start, stop, measure_of(stop, sizes))
    if m.matches(source, m.Call(func=m.Name("enumerate"))):
        assert isinstance(source, cst.Call)
        if len(source.args) != 1 or source.args[0].keyword is not None or source.args[0].star:
            return None
        if not isinstance(target, cst.Tuple) or len(target.elements) != 2 or not isinstance(target.elements[0].value, cst.Name):
            return None
        walked = _walked(target.elements[1].value, source.args[0].value, sizes, qualify)
        index = target.elements[0].value.value
        if walked is None or index in {w.element for w in walked}:
            return None
        return Domain(index, tuple(walked))
    walked = _walked(target, source, sizes, qualify)
    if walked is None:
        return None
    return Domain(None, tuple(walked))


def shape_owner(value: cst.BaseExpression) -> tuple[str, bool] | None:
    """``(x, False)`` for ``x.shape`` / ``x.size()``; ``(x, True)`` for ``x.shape[:k]``."""
    if m.matches(value, m.Attribute(value=m.Name(), attr=m.Name("shape"))):
        return value.value.value, False  # type: ignore[attr-defined]
    if m.matches(value, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("size")), args=[])):
        return value.func.value.value, False  # type: ignore[attr-defined]
    if isinstance(value, cst.Subscript) and len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Slice):
        piece = value.slice[0].slice
        if piece.lower is None and piece.step is None and piece.upper is not None and int_literal(piece.upper) is not None:
            inner = shape_owner(value.value)
            if inner is not None:
                return inner[0], True
    return None
