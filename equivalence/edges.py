"""A deterministic sweep of the inputs where rewrites usually break.

Hypothesis explores at random, and how well it does on a given budget depends on its version and
its seed. The boundary cases that refute most wrong rewrites are known in advance, so every check
also runs them, whatever hypothesis does: empty and one-element sizes, NaN at the first and at the
last position, values beyond int64, -0.0 and infinities, duplicate and negative indices, loop counts
of -1 and 0. The sweep is a pure function of the kernel's signature: the same inputs on every
machine and every hypothesis version.

Every kind gets the same fills: an ndarray holds what the tensor of its signature would, a list (a
dict, a one-shot iterator) of Python numbers holds the first row of it, as Python numbers, with the
batch size as its length; NumPy scalars take the scalar values.
"""

from __future__ import annotations

from typing import Any, Iterator

import torch

from torchfix.equivalence.kernel import FLOAT_DTYPES, InputSpec, Kind
from torchfix.equivalence.values import (
    LITERAL_MAX_DIM, MAX_DIM, MAX_DRAWN_ELEMENTS, POOL_SIZE, OneShot, Signature, Slot, numpy_scalar, repeated, to_ndarray,
)

#: (name, size pool, step count): shapes draw their sizes from the pool in order
_SHAPES: tuple[tuple[str, tuple[int, ...], int], ...] = (
    ("empty", (0, 0, 0), 0),
    ("single", (1, 1, 1), 1),
    ("small", (3, 2, 1), 2),
    ("square", (3, 3, 3), 3),
    # an empty batch with non-empty trailing sizes: the loop runs zero times and accepts
    # operands whose trailing sizes disagree, where a broadcast expression raises
    ("empty_batch", (0, 2, 3), 0),
    ("empty_inner", (2, 0, 3), 1),
    # leading sizes that differ between inputs (3 and 2, never 1, which broadcasts): a loop
    # that reads `counts[k]` only where `out[k] != 0` accepts a shorter `counts`, where a
    # mask over all of `out` raises
    ("ragged", (3, 2, 2), 2),
    # trailing sizes of one: a loop stores a (1,) sample into a one-number slot, or broadcasts it,
    # where the batch of them is (n, 1) and lines up otherwise
    ("trailing_one", (3, 1, 1), 2),
    # both at once: `out[i] = w * target[i + 1]` over `enumerate(weights)` runs on a (3, 1)
    # target beside two weights, where the batch of products is (2, 2) (a random draw needs
    # the one size and the longer lead together, and rarely has both)
    ("ragged_trailing_one", (3, 1, 1), 2),
)
#: shapes tried for their sizes alone, without the extreme fills (values that overflow where
#: they are summed in another order are the other shapes' business)
_PLAIN_FILL_SHAPES = frozenset({"trailing_one", "ragged_trailing_one"})
#: the shapes whose inputs' leading sizes differ (:data:`_RAGGED_LEADS`)
_RAGGED_SHAPES = frozenset({"ragged", "ragged_trailing_one"})
_EXTREME_FILLS = frozenset({"huge", "signed_zero_inf", "inexact", "-inf", "+inf"})
#: the leading sizes of the "ragged" shape, alternated by input position
_RAGGED_LEADS = (3, 2)
#: value fills for floating tensors
#: ("-inf" / "+inf": every element that infinity -- a reduction that fills what a mask leaves out
#: with an infinity ties with such data, and splits its gradient where the loop's did not)
_FLOAT_FILLS = ("ramp", "nan_last", "nan_first", "huge", "signed_zero_inf", "-inf", "+inf")
#: value fills for integer tensors
_INT_FILLS = ("ramp", "duplicates", "negative", "huge", "inexact")
#: the integer fill used beside each float fill (duplicate indices meet plain finite values, so
#: that a lost accumulation shows instead of drowning in a NaN)
_INT_FILL_BESIDE_FLOATS = {
    "ramp": "duplicates", "nan_last": "ramp", "nan_first": "negative", "huge": "huge", "signed_zero_inf": "duplicates",
    "-inf": "ramp", "+inf": "ramp",  # (varied labels: masks that leave elements out, to tie with)
}


def _shape(rank: int, pool: tuple[int, ...], offset: int = 0) -> tuple[int, ...]:
    return tuple(pool[(i + offset) % len(pool)] for i in range(rank))


def _float_values(fill: str, numel: int) -> list[float]:
    base = [((i * 7) % 11 - 5) / 2 for i in range(numel)]  # -2.5 .. 2.5, varied, no zeros pattern
    if numel == 0:
        return base
    if fill == "nan_last":
        base[-1] = float("nan")
    elif fill == "nan_first":
        base[0] = float("nan")
    elif fill == "huge":
        base = [1e20 if i % 2 == 0 else -3e38 for i in range(numel)]
    elif fill == "signed_zero_inf":
        cycle = (-0.0, float("inf"), 0.0, float("-inf"))
        base = [cycle[i % 4] for i in range(numel)]
    elif fill in ("-inf", "+inf"):
        base = [float(fill[0] + "inf")] * numel
    return base


def _below_zero(spec: InputSpec) -> int:
    """The count an edge draws below zero: -1 (a loop of "minus one" steps runs none), or 0 for
    a size the code measured (``n = len(x)``), which never is negative."""
    return 0 if spec.nonnegative else -1


def _int_values(fill: str, numel: int, spec: InputSpec, size: int) -> list[int]:
    bound = max(size, 1)
    if spec.count:
        # sizes and loop bounds, whatever holds them: the sizes in play, off by one, -1 and 0
        start = _INT_FILLS.index(fill) if fill in _INT_FILLS else 0
        return [(bound, _below_zero(spec), 0, bound + 1, 1)[(i + start) % 5] for i in range(numel)]
    if fill == "duplicates":
        return [0] * numel
    if fill == "negative" and not spec.nonnegative:
        return [-(i % bound) - 1 for i in range(numel)]
    if fill == "huge" and not spec.index:
        return [2**40 if i % 2 == 0 else -(2**40) for i in range(numel)]
    if fill == "inexact" and not spec.index:
        # integers a float32 (2**24 + 1) or a float64 (2**53 + 1) cannot hold: a rewrite that
        # takes them through a float (a `torch.where` with a float branch) rounds them
        cycle = (2**24 + 1, 2**53 + 1) if spec.nonnegative else (2**24 + 1, -(2**24 + 1), 2**53 + 1)
        return [cycle[i % len(cycle)] for i in range(numel)]
    if spec.index or spec.nonnegative:
        return [(i * 2) % bound for i in range(numel)]
    return [(i * 3) % 7 - 3 for i in range(numel)]


def _tensor(slot: Slot, spec: InputSpec, pool: tuple[int, ...], fill: str, offset: int = 0, lead: int | None = None) -> torch.Tensor:
    # the first (batch) dimension is shared unless ``lead`` says otherwise; trailing ones rotate
    # per input so they can disagree
    first = _shape(slot.rank, pool)[:1] if lead is None or slot.rank == 0 else (lead,)
    shape = first + _shape(max(slot.rank - 1, 0), pool, 1 + offset)
    numel = 1
    for d in shape:
        numel *= d
    if numel > MAX_DRAWN_ELEMENTS:
        # (sizes widened past a literal's need, at a high rank: the pattern's first run, repeated)
        return repeated(_tensor(Slot(slot.kind, 1, slot.dtype), spec, (MAX_DRAWN_ELEMENTS,), fill), shape)
    dtype = getattr(torch, slot.dtype)
    if dtype == torch.bool:
        # uniform masks matter: a loop whose branch never runs never touches what it would index
        if fill in ("nan_first", "negative"):
            return torch.ones(shape, dtype=torch.bool)
        if fill in ("huge", "duplicates"):
            return torch.zeros(shape, dtype=torch.bool)
        return torch.tensor([i % 3 != 1 for i in range(numel)], dtype=torch.bool).reshape(shape)
    if slot.dtype in FLOAT_DTYPES:
        return torch.tensor(_float_values(fill, numel), dtype=torch.float64).to(dtype).reshape(shape)
    values = _int_values(fill, numel, spec, max(pool))
    info = torch.iinfo(dtype)
    values = [min(max(v, info.min), info.max) for v in values]
    return torch.tensor(values, dtype=torch.int64).to(dtype).reshape(shape)


def _scalar(kind: Kind, spec: InputSpec, pool: tuple[int, ...], variant: int) -> Any:
    if kind is Kind.BOOL:
        return variant % 2 == 0
    if kind is Kind.FLOAT:
        return (0.5, -1.5, float("nan"), 0.0)[variant % 4]
    if spec.count:
        return (max(pool), _below_zero(spec), 0, max(pool) + 1, 1)[variant % 5]
    return (2, -1, 0, 3)[variant % 4]


def _numbers(element: Kind, spec: InputSpec, pool: tuple[int, ...], fill: str, int_fill: str) -> list[Any]:
    """A list's (dict's, iterator's) Python numbers: the batch size of them, with the fill's values."""
    length = pool[0]
    if element is Kind.FLOAT:
        return [float(v) for v in _float_values(fill, length)]
    if element is Kind.BOOL:
        if fill in ("nan_first", "negative"):
            return [True] * length
        if fill in ("huge", "duplicates"):
            return [False] * length
        return [i % 3 != 1 for i in range(length)]
    if spec.count:
        return [max(pool), _below_zero(spec), 0, 1][:length] + [max(pool)] * max(0, length - 4)
    return [int(v) for v in _int_values(int_fill, length, spec, max(pool))]


def _elements(slot: Slot, spec: InputSpec, pool: tuple[int, ...], fill: str, int_fill: str, offset: int) -> list[Any]:
    if slot.element is Kind.TENSOR:
        element = Slot(Kind.TENSOR, slot.rank, slot.dtype)
        own = fill if slot.dtype in FLOAT_DTYPES else int_fill
        first = _tensor(element, spec, pool, own, offset)
        # rolled per position: the element tensors of one container are not all the same
        return [torch.roll(first.reshape(-1), i).reshape(first.shape) for i in range(pool[0])]
    return _numbers(slot.element or Kind.FLOAT, spec, pool, fill, int_fill)


def _floating(slot: Slot) -> bool:
    """Whether the slot holds floating data that the float fills should shape."""
    if slot.kind in (Kind.TENSOR, Kind.NDARRAY):
        return slot.dtype in FLOAT_DTYPES
    if slot.kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
        return slot.element is Kind.FLOAT or (slot.element is Kind.TENSOR and slot.dtype in FLOAT_DTYPES)
    return False


def _example(
    specs: list[InputSpec], slots: dict[str, Slot], shape: tuple[str, tuple[int, ...], int], fill: str,
    int_fill: str, variant: int, k: int, bounds: int | None = None, long: int | None = None,
    flip: int | None = None, widen: tuple[int, ...] | None = None,
) -> dict[str, Any]:
    """One input of the sweep. ``bounds``: None, or the parity that sets Python float scalars to
    +inf / -inf by position (a pair of bounds wide open in one of the two parities). ``long``:
    the position of the one input whose sizes come from :data:`_LONG_POOL` instead."""
    label, shared_pool, steps = shape
    values: dict[str, Any] = {}

    def float_bound(position: int) -> float:
        return float("inf") if (position + (bounds or 0)) % 2 == 0 else float("-inf")

    for position, spec in enumerate(specs):
        slot = slots[spec.name]
        if slot.kind is Kind.OPAQUE:
            continue
        offset = position if k % 2 else 0  # half the sweep keeps shapes aligned
        pool = _LONG_POOL if position == long else shared_pool
        if widen is not None:
            # some places of the pool past what the code's literal indices need (``t[:, 5]``),
            # the others as they were: the ones of "single" and "trailing_one" stay ones
            pool = tuple(size + widen[j] if size else size for j, size in enumerate(pool))
        # which input is the longer one flips with each pass over the fills (or as ``flip`` says)
        parity = k // len(_SHAPES) if flip is None else flip
        lead = _RAGGED_LEADS[(position + parity) % 2] if label in _RAGGED_SHAPES else None

        def one(step: int) -> Any:
            if slot.kind in (Kind.TENSOR, Kind.NDARRAY):
                own = fill if slot.dtype in FLOAT_DTYPES else int_fill
                tensor = _tensor(Slot(Kind.TENSOR, slot.rank, slot.dtype), spec, pool, own, offset, lead)
                return tensor if slot.kind is Kind.TENSOR else to_ndarray(tensor)
            if slot.kind is Kind.LIST:
                return _elements(slot, spec, pool, fill, int_fill, offset)
            if slot.kind is Kind.ITERATOR:
                return OneShot(_elements(slot, spec, pool, fill, int_fill, offset))
            if slot.kind is Kind.DICT:
                items = _elements(slot, spec, pool, fill, int_fill, offset)
                keys = list(spec.keys) + [f"k{j}" for j in range(len(items))]
                # every key the code reads is present (with a one-element fill when the shape is
                # empty); the others take the fill's values
                values_ = items or _elements(slot, spec, (1, 1, 1), fill, int_fill, offset)
                return {key: values_[j % len(values_)] for j, key in enumerate(keys)}
            if slot.kind is Kind.NUMPY_SCALAR:
                kind = Kind.BOOL if slot.dtype == "bool" else Kind.FLOAT if slot.dtype.startswith("float") else Kind.INT
                number = float_bound(position) if kind is Kind.FLOAT and bounds is not None else _scalar(
                    kind, spec, pool, variant + step
                )
                return numpy_scalar(number, slot.dtype)
            if slot.kind is Kind.FLOAT and bounds is not None:
                return float_bound(position)
            return _scalar(slot.kind, spec, pool, variant + step)

        values[spec.name] = [one(step) for step in range(steps)] if spec.per_step else one(0)
    return values


def widenings(need: int, between: bool = False) -> list[tuple[int, ...] | None]:
    """The pools a sweep runs with for code whose literal indices need ``need`` (``t[i, 2]``:
    3): as it is; one place at a time widened past the need (the other places keep their ones);
    two places at a time, one size apart (two dimensions that each need a literal may differ);
    with ``between``, the same again at sizes of 5 to 7 (where `t.size(1) > 9` takes the other
    branch). Only the pool as it is for needs the sweep's sizes meet (1) or that are past
    drawing (over :data:`LITERAL_MAX_DIM`)."""
    found: list[tuple[int, ...] | None] = [None]
    if not 1 < need <= LITERAL_MAX_DIM:
        return found
    for amount in dict.fromkeys(([MAX_DIM - 1] if between else []) + [need - 1]):
        for place in range(POOL_SIZE):
            found.append(tuple(amount if j == place else 0 for j in range(POOL_SIZE)))
        for first in range(POOL_SIZE):
            second = (first + 1) % POOL_SIZE
            found.append(tuple(amount if j == first else amount + 1 if j == second else 0 for j in range(POOL_SIZE)))
    return found


def edge_inputs(
    specs: list[InputSpec], signature: Signature, widen: tuple[int, ...] | None = None,
) -> Iterator[dict[str, Any]]:
    """The sweep's inputs for one admitted signature; with ``widen`` (an amount per place of the
    pool, :func:`widenings`), every shape's non-empty sizes that much larger (for code whose
    literal indices need more than the sweep's sizes of 1 to 3)."""
    slots = dict(signature)
    has_float = any(_floating(s) for s in slots.values())
    fills = _FLOAT_FILLS if has_float else _INT_FILLS
    scalar_variants = 5 if any(s.count for s in specs) else 2
    total = len(_SHAPES) * len(fills) * scalar_variants
    # interleaved so that any prefix mixes shapes, fills and scalar values
    for k in range(total):
        shape = _SHAPES[k % len(_SHAPES)]
        fill = fills[(k // len(_SHAPES)) % len(fills)]
        if shape[0] in _PLAIN_FILL_SHAPES and fill in _EXTREME_FILLS:
            continue  # a shape for its sizes alone: with finite, moderate values
        # beside floating data, integer tensors (indices) still cycle through their own
        # fills -- duplicates and negatives above all -- one per float fill
        int_fill = fill if fill in _INT_FILLS else _INT_FILL_BESIDE_FLOATS.get(fill, "ramp")
        yield _example(specs, slots, shape, fill, int_fill, k % scalar_variants, k, widen=widen)


def admission_inputs(
    specs: list[InputSpec], signature: Signature, widen: tuple[int, ...] | None = None,
) -> Iterator[dict[str, Any]]:
    """Non-empty inputs of sizes a random sample rarely draws together, for admitting a signature
    its random tries missed: trailing sizes of one, with the inputs' leading sizes equal and
    differing either way round. (An old code that runs only there still has a domain, and a
    rewrite wrong only there must meet it.) With ``widen`` (see :func:`edge_inputs`), also with
    each input's sizes taken from its own place of the pool: a (3, 6) `t` beside a (6, 1) `b`."""
    slots = dict(signature)
    shapes = {shape[0]: shape for shape in _SHAPES}
    for k in (0, 1) if widen is not None else (0,):
        yield _example(specs, slots, shapes["trailing_one"], "ramp", "ramp", 0, k, widen=widen)
        for flip in (0, 1):
            yield _example(specs, slots, shapes["ragged_trailing_one"], "ramp", "ramp", 0, k, flip=flip, widen=widen)


#: (float fill, integer fill) of the wide-open-bounds examples
_BOUNDS_FILLS = (("huge", "huge"), ("ramp", "inexact"))


def bound_inputs(
    specs: list[InputSpec], signature: Signature, widen: tuple[int, ...] | None = None,
) -> Iterator[dict[str, Any]]:
    """A few more inputs per signature, after the sweep: every Python float scalar at +inf or
    -inf (alternating by position, both ways), beside huge values and integers no float holds
    exactly. A condition like `lo < x[i] < hi` lets such values through only when its bounds
    are wide open -- and there a rewrite that takes integers through a float rounds them. Only
    for signatures with a Python float scalar; four inputs at most."""
    slots = dict(signature)
    if not any(s.kind is Kind.FLOAT or (s.kind is Kind.NUMPY_SCALAR and s.dtype.startswith("float")) for s in slots.values()):
        return
    shape = _SHAPES[2]  # "small": non-empty, sizes that differ
    for fill, int_fill in _BOUNDS_FILLS:
        for parity in (0, 1):
            yield _example(specs, slots, shape, fill, int_fill, 0, 0, bounds=parity, widen=widen)


#: sizes longer than an 8-bit integer's range: a Python int meets an int8 / uint8 array in the
#: array's dtype (``labels.eq(300)`` compares with 300 wrapped to 44), where a batch of the
#: loop's positions is int64 and does not wrap
_LONG_POOL = (260, 1, 1)
_ONES = ("long", (1, 1, 1), 1)


def long_inputs(specs: list[InputSpec], signature: Signature) -> Iterator[dict[str, Any]]:
    """For signatures with an int8 or uint8 array only (where positions past 255 wrap): per
    input, two examples where that input's leading size (a list's length, a count) is 260 and
    every other size is 1 -- so that nested loops stay 260 steps long."""
    slots = dict(signature)
    if not any(s.kind in (Kind.TENSOR, Kind.NDARRAY) and s.dtype in ("int8", "uint8") for s in slots.values()):
        return
    for position in range(len(specs)):
        for int_fill in ("ramp", "negative"):
            yield _example(specs, slots, _ONES, "ramp", int_fill, 0, 0, long=position)


#: the precision each floating slot computes in, for :func:`cancellation_inputs`: a Python
#: float (alone, in a list, or a NumPy float64) holds a double
_PRECISION = {"float64": 53, "float32": 24, "bfloat16": 8, "float16": 11}


def _precision(slot: Slot) -> int | None:
    # (``element`` is set for the containers only: a list, dict or iterator of what it says)
    if slot.kind is Kind.FLOAT or slot.element is Kind.FLOAT:
        return 53
    if slot.kind in (Kind.TENSOR, Kind.NDARRAY, Kind.NUMPY_SCALAR) or slot.element is Kind.TENSOR:
        return _PRECISION.get(slot.dtype)
    return None


def _filled(value: Any, slot: Slot, number: float) -> Any:
    """``value`` (an input of the sweep) with every float in it ``number``, in its own dtype."""
    if slot.kind is Kind.TENSOR:
        return torch.full_like(value, number)
    if slot.kind is Kind.NDARRAY:
        return to_ndarray(torch.full(tuple(value.shape), number, dtype=getattr(torch, slot.dtype)))
    if slot.kind is Kind.FLOAT:
        return number
    if slot.kind is Kind.NUMPY_SCALAR:
        return numpy_scalar(number, slot.dtype)
    as_list = Slot(Kind.LIST, slot.rank, slot.dtype, slot.element)
    if slot.kind is Kind.DICT:
        return dict(zip(value, _filled(list(value.values()), as_list, number)))
    if slot.kind is Kind.ITERATOR:
        return OneShot(_filled(value.items, as_list, number))
    if slot.element is Kind.TENSOR:
        return [torch.full_like(v, number) for v in value]
    return [number] * len(value)


def cancellation_inputs(
    specs: list[InputSpec], signature: Signature, widen: tuple[int, ...] | None = None,
) -> Iterator[dict[str, Any]]:
    """For signatures whose floating inputs differ in precision (a float32 array beside a float64
    one, a Python float, a list, dict or iterator of them): per ordered pair of floating inputs, one
    example with the first all ``V``, the second all ``-V`` and every other floating input all
    ``1.0``, where ``V`` is a number the lower precision cannot hold (``1e20``; ``1000.1`` beside
    a float16 or bfloat16 array).

    ``t * s + m`` then cancels to what rounding left of ``V``: a double leaves ``2e12`` of a
    float32 ``1e20`` minus ``1e20``, where a rewrite that rounds ``m`` to the array's dtype first
    (or computes in the other precision) leaves ``0``. Random draws rarely make three inputs take
    the three values at once; a review found a rewrite they let through."""
    slots = dict(signature)
    floating = [spec for spec in specs if slots[spec.name].kind is not Kind.OPAQUE and _precision(slots[spec.name]) is not None]
    precisions = {_precision(slots[spec.name]) for spec in floating}
    if len(floating) < 2 or len(precisions) < 2:
        return
    big = 1000.1 if min(p for p in precisions if p is not None) < 24 else 1e20
    base = _example(specs, slots, _SHAPES[2], "ramp", "ramp", 0, 0, widen=widen)  # "small": non-empty, sizes that differ
    for high in floating:
        for low in floating:
            if low is high:
                continue
            example = dict(base)
            for spec in floating:
                number = big if spec is high else -big if spec is low else 1.0
                example[spec.name] = (
                    [_filled(v, slots[spec.name], number) for v in base[spec.name]] if spec.per_step
                    else _filled(base[spec.name], slots[spec.name], number)
                )
            yield example
