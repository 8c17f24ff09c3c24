"""Input signatures and the hypothesis strategies that fill them with values.

A *signature* fixes, for every kernel input, what kind of value it is (``Kind``): a tensor's or an
ndarray's rank and dtype, the Python type of a number, the NumPy scalar type, or what a list, dict
or one-shot iterator holds. The old code defines its own domain: a signature is admitted only when
the old code runs on it with non-empty sizes (an empty loop accepts anything, and would make every
rewrite look wrong on, say, "an empty float tensor of labels"). Hypothesis then explores values and
sizes -- 0 and 1 included -- inside the admitted signatures, and shrinks any counterexample.

Every kind an input allows appears in at least one candidate signature (:func:`candidate_signatures`
samples the rest); the engine then tries, beside the admitted signatures, each kind no admitted
signature holds yet (``engine.admit_signatures``).

Sizes are drawn from a small pool shared by all inputs of one example, so that dimensions coincide
the way real batch dimensions do; the length of a list, dict or iterator is one of those sizes.
"""

from __future__ import annotations

import ast
import copy
import itertools
import json
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterator

import numpy as np
import torch
from hypothesis import strategies as st

from torchfix.equivalence.kernel import FLOAT_DTYPES, NARROW_DTYPES, NUMPY_SCALAR_DTYPES, InputSpec, Kind

MAX_STEPS = 4
POOL_SIZE = 3
MAX_DIM = 5
#: the most elements of one tensor drawn one by one (ranks up to 5 at :data:`MAX_DIM` stay
#: under it); past it, a drawn run is repeated
MAX_DRAWN_ELEMENTS = 4096

#: the dtype names that stand for Python numbers inside lists, dicts and iterators
_PYTHON_NUMBER_DTYPES = {Kind.FLOAT: "float64", Kind.INT: "int64", Kind.BOOL: "bool"}
#: a dict's or an iterator's tensor elements: float32, rank 0 (a loss) or 1 (a weight vector)
_TENSOR_ELEMENT_RANKS = (0, 1)


@dataclass(frozen=True)
class Slot:
    """The signature of one input.

    ``kind``: what it is. TENSOR / NDARRAY: ``rank`` and ``dtype`` (a torch dtype name).
    NUMPY_SCALAR: ``dtype`` is the NumPy scalar type's name. LIST / DICT / ITERATOR: ``element``
    says what they hold -- Kind.FLOAT / INT / BOOL for Python numbers, Kind.TENSOR for tensors of
    ``rank`` and ``dtype``.
    """

    kind: Kind
    rank: int = 0
    dtype: str = ""
    element: Kind | None = None

    def describe(self) -> str:
        if self.kind is Kind.TENSOR:
            return f"{self.dtype}[rank {self.rank}]"
        if self.kind is Kind.NDARRAY:
            return f"ndarray {self.dtype}[rank {self.rank}]"
        if self.kind is Kind.NUMPY_SCALAR:
            return f"numpy.{self.dtype}" if self.dtype != "bool" else "numpy.bool_"
        if self.kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
            what = f"{self.dtype}[rank {self.rank}] tensors" if self.element is Kind.TENSOR else (
                self.element.value if self.element else "values"
            )
            return f"{'one-shot iterator' if self.kind is Kind.ITERATOR else self.kind.value} of {what}"
        return self.kind.value


Signature = tuple[tuple[str, Slot], ...]


def describe(signature: Signature, specs: dict[str, InputSpec]) -> str:
    parts = []
    for name, slot in signature:
        text = slot.describe()
        parts.append(f"{name}: list of {text}" if specs[name].per_step else f"{name}: {text}")
    return ", ".join(parts)


def _number_elements(dtypes: tuple[str, ...]) -> list[Kind]:
    """The Python number types standing for ``dtypes``, in their order (float32 -> float, ...)."""
    found: list[Kind] = []
    for dtype in dtypes:
        kind = Kind.BOOL if dtype == "bool" else Kind.FLOAT if dtype in FLOAT_DTYPES else Kind.INT
        if kind not in found:
            found.append(kind)
    return found


def _numpy_scalar_dtypes(dtypes: tuple[str, ...]) -> list[str]:
    floats = any(d in FLOAT_DTYPES for d in dtypes)
    ints = any(d not in FLOAT_DTYPES and d != "bool" for d in dtypes)
    chosen = [d for d in NUMPY_SCALAR_DTYPES if (d.startswith("float") and floats) or (d.startswith("int") and ints)]
    return chosen or ["bool"]


def slot_choices(spec: InputSpec, coverage: bool = False) -> list[Slot]:
    """Every slot the spec allows, kind by kind in canonical order (tensors first). ``coverage``:
    with the dtypes only the checker's dtype coverage tries (``InputSpec.coverage_dtypes``)."""
    dtypes = spec.coverage_dtypes() if coverage else spec.allowed_dtypes()
    slots: list[Slot] = []
    for kind in spec.allowed_kinds():
        if kind is Kind.TENSOR:
            slots += [Slot(Kind.TENSOR, r, d) for d in dtypes for r in spec.ranks]
        elif kind is Kind.NDARRAY:
            slots += [Slot(Kind.NDARRAY, r, d) for d in dtypes if d != "bfloat16" for r in spec.ranks]
        elif kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
            slots += [Slot(kind, 1, _PYTHON_NUMBER_DTYPES[e], e) for e in _number_elements(dtypes)]
            if kind is not Kind.LIST and not spec.index:
                float_dtype = next((d for d in dtypes if d in FLOAT_DTYPES), None)
                if float_dtype is not None:
                    slots += [Slot(kind, r, float_dtype, Kind.TENSOR) for r in _TENSOR_ELEMENT_RANKS]
        elif kind is Kind.NUMPY_SCALAR:
            slots += [Slot(Kind.NUMPY_SCALAR, 0, d) for d in _numpy_scalar_dtypes(dtypes)]
        elif kind in (Kind.INT, Kind.FLOAT, Kind.BOOL):
            slots.append(Slot(kind))
        else:
            slots.append(Slot(Kind.OPAQUE))
    return slots


def _preferred(slots: list[Slot]) -> Slot:
    """The common case among ``slots``: a float32 tensor (else ndarray) where allowed, else the first."""
    for kind in (Kind.TENSOR, Kind.NDARRAY):
        found = next((s for s in slots if s.kind is kind and s.dtype == "float32"), None)
        if found is not None:
            return found
    return slots[0]


def _stratum(slot: Slot) -> tuple[Kind, Kind | None, str]:
    """What every candidate list must cover: each kind, each element type of a container, each
    NumPy scalar type, each rank of an ndarray (tensor ranks and dtypes are covered in pairs)."""
    if slot.kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
        return slot.kind, slot.element, ""
    if slot.kind is Kind.NUMPY_SCALAR:
        return slot.kind, None, slot.dtype
    if slot.kind is Kind.NDARRAY:
        return slot.kind, None, str(slot.rank)
    return slot.kind, None, ""


#: the kinds a random signature draws from first: tensors and Python numbers, what the checker
#: tried before it explored kinds (and still the common case of the code torchfix rewrites)
_PRIMARY_KINDS = (Kind.TENSOR, Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.OPAQUE)


def _aspects(slot: Slot) -> tuple[tuple, ...]:
    """What pairs of inputs are covered by: a slot's dtype and kind (what promotion and kind
    checks see), and an array's rank (what broadcasting sees)."""
    aspects: tuple[tuple, ...] = (("class", slot.kind, slot.dtype, slot.element),)
    if slot.kind in (Kind.TENSOR, Kind.NDARRAY):
        aspects += (("rank", slot.kind, slot.rank),)
    return aspects


def _kind_aspect(slot: Slot) -> tuple[tuple, ...]:
    """A slot's kind alone (a list of ints and a list of floats are both lists)."""
    return (("kind", slot.kind),)


def _pairwise(
    choices: list[list[Slot]], combos: list[tuple[Slot, ...]], seen: set[tuple[Slot, ...]], cap: int,
    rng: random.Random, aspects: Callable[[Slot], tuple[tuple, ...]] | None = None,
) -> None:
    """Add combos until, for every two inputs, every pair of their dtypes-and-kinds and every pair
    of their ranks is held by some combo -- or ``cap`` combos were added. A promotion bug (an int32
    tensor beside a float scalar) or a broadcasting one (rank 1 beside rank 3) needs one such pair,
    and a random sample can miss it. ``aspects``: what to pair (default: dtype-and-kind, rank)."""
    _aspects_of = aspects or _aspects
    options = [sorted({a for s in cs for a in _aspects_of(s)}, key=str) for cs in choices]
    uncovered: set[tuple] = {
        (i, a, j, b) for i in range(len(choices)) for j in range(i + 1, len(choices))
        for a in options[i] for b in options[j] if a[0] == b[0]
    }

    def pairs(combo: tuple[Slot, ...]) -> set[tuple]:
        return {
            (i, a, j, b) for i in range(len(combo)) for j in range(i + 1, len(combo))
            for a in _aspects_of(combo[i]) for b in _aspects_of(combo[j]) if a[0] == b[0]
        }

    for combo in combos:
        uncovered -= pairs(combo)
    added = 0
    while uncovered and added < cap:
        best: tuple[Slot, ...] | None = None
        best_gain = 0
        for target in rng.sample(sorted(uncovered, key=str), min(8, len(uncovered))):
            i, a, j, b = target
            combo = tuple(
                rng.choice([s for s in cs if (a if k == i else b) in _aspects_of(s)]) if k in (i, j) else rng.choice(cs)
                for k, cs in enumerate(choices)
            )
            gain = len(pairs(combo) & uncovered)
            if combo not in seen and gain > best_gain:
                best, best_gain = combo, gain
        if best is None:
            break
        seen.add(best)
        combos.append(best)
        uncovered -= pairs(best)
        added += 1


def candidate_signatures(specs: list[InputSpec], limit: int, rng: random.Random) -> list[Signature]:
    """All signatures if there are few, else a seeded sample; stratified when inputs have kinds.

    Where no input has a choice of kind, the sample is the common case (float32 tensors where
    allowed) and random signatures up to ``limit``. Otherwise it starts with the common case, then holds every
    kind of every input (each container element type and NumPy scalar type too) beside the
    others' common case -- these strata are never sampled away -- then, among the primary kinds
    (tensors and Python numbers), every pair of dtypes and every pair of ranks of every two
    inputs, then every pair of kinds of every two inputs (up to ``limit`` signatures more each),
    then random signatures up to ``limit`` in all: half of them drawn from the primary kinds,
    whose ranks must line up for the old code to run at all, half from every kind.
    """
    choices = [slot_choices(s) for s in specs]
    total = 1
    for c in choices:
        total *= len(c)
    names = [s.name for s in specs]
    if total <= limit:
        combos = list(itertools.product(*choices))
    elif all(len({_stratum(s) for s in cs}) == 1 for cs in choices):
        # no input has a choice of kind: a seeded random sample, the common case first
        preferred = tuple(_preferred(cs) for cs in choices)
        combos = [preferred]
        seen: set[tuple[Slot, ...]] = {preferred}
        attempts = 0
        while len(combos) < limit and attempts < limit * 20:
            attempts += 1
            combo = tuple(rng.choice(cs) for cs in choices)
            if combo not in seen:
                seen.add(combo)
                combos.append(combo)
    else:
        preferred = tuple(_preferred(cs) for cs in choices)
        combos = [preferred]
        seen = {preferred}
        for position, cs in enumerate(choices):
            for stratum in dict.fromkeys(_stratum(s) for s in cs):
                if any(_stratum(c[position]) == stratum for c in combos):
                    continue
                slot = _preferred([s for s in cs if _stratum(s) == stratum])
                combo = preferred[:position] + (slot,) + preferred[position + 1 :]
                seen.add(combo)
                combos.append(combo)
        primary = [[s for s in cs if s.kind in _PRIMARY_KINDS] or cs for cs in choices]
        _pairwise(primary, combos, seen, limit, rng)
        # every pair of kinds of every two inputs (an ndarray beside a Python int: a bug the
        # tensors beside them never show)
        _pairwise(choices, combos, seen, limit, rng, _kind_aspect)
        attempts = 0
        while len(combos) < limit and attempts < limit * 20:
            attempts += 1
            pools = primary if attempts % 2 else choices
            combo = tuple(rng.choice(cs) for cs in pools)
            if combo not in seen:
                seen.add(combo)
                combos.append(combo)
    return [tuple(zip(names, combo)) for combo in combos]


def is_primary(signature: Signature) -> bool:
    """Whether every input of ``signature`` is a tensor, a Python number or opaque."""
    return all(slot.kind in _PRIMARY_KINDS for _, slot in signature)


def is_narrow(signature: Signature) -> bool:
    """Whether an array of ``signature`` has a dtype only dtype coverage tries (int8, float16...)."""
    return any(slot.kind in (Kind.TENSOR, Kind.NDARRAY) and slot.dtype in NARROW_DTYPES for _, slot in signature)


def primary_signatures(specs: list[InputSpec], cap: int = 20000, arrays: Kind = Kind.TENSOR) -> list[Signature]:
    """Every signature of the primary kinds (tensors and Python numbers), the likeliest first:
    lowest ranks, then float32 / int64 data. The fallback when no candidate signature admits:
    the ranks of several inputs must line up (a 2-D piece beside a 2-D accumulator, an int index),
    which a random sample can miss. At most ``cap`` of them. ``arrays``: the kind of array to
    walk (``Kind.NDARRAY`` for code that binds NumPy and not torch)."""
    primary = tuple(arrays if k is Kind.TENSOR else k for k in _PRIMARY_KINDS)
    choices = [[s for s in slot_choices(spec) if s.kind in primary] or slot_choices(spec) for spec in specs]
    combos = list(itertools.islice(itertools.product(*choices), cap))

    def cost(combo: tuple[Slot, ...]) -> tuple[int, int]:
        return sum(s.rank for s in combo), sum(s.dtype not in ("float32", "int64", "") for s in combo)

    combos.sort(key=cost)
    names = [s.name for s in specs]
    return [tuple(zip(names, combo)) for combo in combos]


# ----------------------------------------------------------------------------- one-shot iterators


def _copy_item(item: Any) -> Any:
    if isinstance(item, torch.Tensor):
        return item.detach().clone().requires_grad_(item.requires_grad)
    return copy.copy(item)


class OneShot:
    """A one-shot iterator input, kept as its items: every copy of it (``copy.copy``, which is how
    ``execute.clone`` copies values it does not know) is a fresh generator over copies of the same
    items. The old and the new code each consume their own; a second pass over it, in either,
    sees nothing -- as a real generator would."""

    __slots__ = ("items",)

    def __init__(self, items: list[Any]) -> None:
        self.items = list(items)

    def fresh(self) -> Iterator[Any]:
        items = [_copy_item(item) for item in self.items]
        return (item for item in items)

    def __copy__(self) -> Iterator[Any]:
        return self.fresh()

    def __deepcopy__(self, memo: dict) -> Iterator[Any]:
        return self.fresh()

    def __repr__(self) -> str:
        return f"iter({render_value(self.items)})"


# ----------------------------------------------------------------------------- concrete values

_FLOAT_SPECIALS = (0.0, -0.0, 1.0, -1.0, 0.5, float("inf"), float("-inf"), 1e20, -1e20, 3e38)


def _float_values(width: int) -> st.SearchStrategy[float]:
    # NaN gets a branch of its own: it must turn up at every position, not only the first, to
    # tell apart reductions that skip it (Python's max) from ones that propagate it (torch.max);
    # 1e20 and 3e38 overflow int64 conversions that Python's int() survives
    return st.one_of(
        st.floats(-10, 10, width=width),
        st.sampled_from(_FLOAT_SPECIALS),
        st.just(float("nan")),
        st.floats(width=width, allow_nan=True, allow_infinity=True),
    )


#: integers where float32 / int32 arithmetic stops being exact (2**24 + 1 is the first integer a
#: float32 cannot hold); drawn now and then for plain integer data, never for indices or counts
_INT_SPECIALS = (2**24 + 1, -(2**24 + 1), 2**31 - 1, -(2**31), 2**53 + 1)


def _int_values(spec: InputSpec, dtype: str) -> st.SearchStrategy[int]:
    if dtype == "uint8" or spec.nonnegative:
        return st.integers(0, MAX_DIM + 1)
    if spec.index:
        return st.integers(-(MAX_DIM + 1), MAX_DIM + 1)
    if dtype in ("int64", "int32"):
        info = torch.iinfo(getattr(torch, dtype))
        specials = tuple(min(max(v, info.min), info.max) for v in _INT_SPECIALS)
        return st.one_of(st.integers(-8, 8), st.integers(-8, 8), st.integers(-8, 8), st.sampled_from(specials))
    return st.integers(-8, 8)


def element_strategy(spec: InputSpec, dtype: str, pool: tuple[int, ...] = ()) -> st.SearchStrategy[Any]:
    if dtype == "bool":
        return st.booleans()
    if dtype in FLOAT_DTYPES:
        # float16 draws half-precision values (its own boundaries: 65504, subnormals); bfloat16
        # has float32's range and rounds on the cast
        return _float_values({"float64": 64, "float16": 16}.get(dtype, 32))
    if spec.count:
        # a size or a loop bound, whatever holds it (an int, a 0-d tensor, a NumPy int): one of
        # the sizes in play, sometimes off by one or negative -- never 2**53
        return st.one_of(st.sampled_from(pool or (1,)), st.sampled_from((-1, 0, 1)), st.integers(-2, MAX_DIM + 1))
    if spec.index and pool:
        # indices within the sizes in play (negative ones too), so that most examples index
        # in range and duplicates are common; one step outside now and then
        bound = max(max(pool), 1)
        if spec.nonnegative or dtype == "uint8":
            # (a nonnegative index steps outside above only: never below 0)
            return st.one_of(st.integers(0, bound - 1), st.integers(0, bound))
        return st.one_of(st.integers(-bound, bound - 1), st.integers(-bound - 1, bound))
    return _int_values(spec, dtype)


def _tensor_from(values: list[Any], dtype_name: str, shape: tuple[int, ...]) -> torch.Tensor:
    dtype = getattr(torch, dtype_name)
    if dtype.is_floating_point:
        data = torch.tensor(values, dtype=torch.float64).to(dtype)
    else:
        data = torch.tensor(values, dtype=torch.int64 if dtype != torch.bool else torch.bool).to(dtype)
    return data.reshape(shape)


@st.composite
def tensor_strategy(draw: st.DrawFn, spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> torch.Tensor:
    shape = tuple(draw(st.sampled_from(pool)) for _ in range(slot.rank))
    numel = 1
    for d in shape:
        numel *= d
    if numel <= MAX_DRAWN_ELEMENTS:
        values = draw(st.lists(element_strategy(spec, slot.dtype, pool), min_size=numel, max_size=numel))
        return _tensor_from(values, slot.dtype, shape)
    # sizes a literal index asks for (`t[:, :, :, :, 15]`) make tensors hypothesis cannot draw
    # element by element (it refuses lists past 8192): a drawn run of values, repeated
    values = draw(st.lists(element_strategy(spec, slot.dtype, pool), min_size=MAX_DRAWN_ELEMENTS, max_size=MAX_DRAWN_ELEMENTS))
    return repeated(_tensor_from(values, slot.dtype, (MAX_DRAWN_ELEMENTS,)), shape)


def repeated(run: torch.Tensor, shape: tuple[int, ...]) -> torch.Tensor:
    """A tensor of ``shape`` filled with the 1-D ``run`` over and over (for sizes past
    :data:`MAX_DRAWN_ELEMENTS`)."""
    numel = 1
    for d in shape:
        numel *= d
    return run.repeat(-(-numel // len(run)))[:numel].reshape(shape)


def to_ndarray(tensor: torch.Tensor) -> np.ndarray:
    """The ndarray with a tensor's dtype, shape and values (its own memory)."""
    return tensor.detach().cpu().numpy().copy()


def numpy_scalar(value: Any, dtype: str) -> np.generic:
    if dtype == "int64":
        info = np.iinfo(np.int64)
        return np.int64(min(max(int(value), int(info.min)), int(info.max)))
    if dtype == "bool":
        return np.bool_(value)
    return getattr(np, dtype)(value)


def _python_number(value: Any, element: Kind) -> Any:
    return {Kind.FLOAT: float, Kind.INT: int, Kind.BOOL: bool}[element](value)


def scalar_strategy(spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> st.SearchStrategy[Any]:
    if slot.kind is Kind.BOOL:
        return st.booleans()
    if slot.kind is Kind.FLOAT:
        return _float_values(64)
    if spec.count:
        # a loop bound: usually one of the sizes in play, sometimes off by one or negative (a
        # size the code measured never is)
        low = 0 if spec.nonnegative else -2
        return st.one_of(st.sampled_from(pool), st.sampled_from((max(low, -1), 0, 1)), st.integers(low, MAX_DIM + 1))
    return st.integers(-8, 8) if not spec.nonnegative else st.integers(0, MAX_DIM + 1)


def _element_strategy(spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> st.SearchStrategy[Any]:
    """One element of a list, dict or iterator slot."""
    if slot.element is Kind.TENSOR:
        return tensor_strategy(spec, Slot(Kind.TENSOR, slot.rank, slot.dtype), pool)
    element = slot.element or Kind.FLOAT
    if spec.count and element is Kind.INT:
        return scalar_strategy(spec, Slot(Kind.INT), pool)
    return element_strategy(spec, slot.dtype, pool).map(lambda v: _python_number(v, element))


@st.composite
def _dict_strategy(draw: st.DrawFn, spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> dict[str, Any]:
    extra = draw(st.sampled_from(pool))
    keys = list(spec.keys) + [f"k{j}" for j in range(extra)]
    return {key: draw(_element_strategy(spec, slot, pool)) for key in keys}


def value_strategy(spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> st.SearchStrategy[Any]:
    if slot.kind is Kind.TENSOR:
        return tensor_strategy(spec, slot, pool)
    if slot.kind is Kind.NDARRAY:
        return tensor_strategy(spec, Slot(Kind.TENSOR, slot.rank, slot.dtype), pool).map(to_ndarray)
    if slot.kind is Kind.NUMPY_SCALAR:
        return element_strategy(spec, slot.dtype, pool).map(lambda v: numpy_scalar(v, slot.dtype))
    if slot.kind in (Kind.LIST, Kind.ITERATOR):
        items = st.sampled_from(pool).flatmap(
            lambda n: st.lists(_element_strategy(spec, slot, pool), min_size=n, max_size=n)
        )
        return items if slot.kind is Kind.LIST else items.map(OneShot)
    if slot.kind is Kind.DICT:
        return _dict_strategy(spec, slot, pool)
    if slot.kind is Kind.OPAQUE:
        return st.just(None)
    return scalar_strategy(spec, slot, pool)


#: the largest size a literal index may ask for: real code reads ``targets[:, 5]`` (a class
#: column after four box coordinates and a score) and ``pred[i, 4:6]``, past :data:`MAX_DIM`
LITERAL_MAX_DIM = 16
#: past :data:`MAX_DIM`, the sizes drawn beside the one a literal needs: one more keeps
#: ``d[:, -1]`` apart from ``d[:, 5]``; three more, ``d[:, 5:]`` apart from ``d[:, 5:7]``
LITERAL_MARGINS = (0, 1, 3)


def _literal(node: ast.expr | None) -> int | None:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant):
        return -node.operand.value if type(node.operand.value) is int else None
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    return None


def _slice_need(part: ast.Slice) -> int:
    """The size at which a slice of literal bounds holds something (two elements, with a step)."""
    lower, upper, step = _literal(part.lower), _literal(part.upper), _literal(part.step)
    need = 0
    if lower is not None:
        need = max(need, lower + 1 if lower >= 0 else -lower)
    if upper is not None:
        need = max(need, upper if upper >= 0 else -upper + 1)
    if lower is not None and lower >= 0 and upper is not None and upper < 0:
        need = max(need, lower - upper + 1)  # `2:-5`: two from the front, five from the back, one between
    if step is not None and abs(step) > 1:
        need = max(need, max(lower or 0, 0) + abs(step) + 1)  # `::6`, `::-6`: a second element
    return need


def literal_need(source: str) -> int:
    """The largest size a literal index of ``source`` needs: ``d[4]`` 5; ``d[:, 4:6]`` 6,
    ``d[5:]`` 6, ``d[2:-5]`` 8, ``d[::6]`` 7, for a slice to hold something."""
    needed = 0
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Subscript):
            continue
        elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        for element in elements:
            if isinstance(element, ast.Slice):
                needed = max(needed, _slice_need(element))
                continue
            value = _literal(element)
            if value is not None:
                needed = max(needed, value + 1 if value >= 0 else -value)
    return needed


def literal_index_sizes(source: str) -> tuple[int, ...]:
    """Sizes the code's literal indices need (:func:`literal_need`): :func:`sizes_for_need`."""
    return sizes_for_need(literal_need(source))


def sizes_for_need(needed: int) -> tuple[int, ...]:
    """The sizes drawn beside the usual ones for a literal need of ``needed``: beyond
    :data:`ADMISSION_SIZES`, up to :data:`MAX_DIM`; past it, up to :data:`LITERAL_MAX_DIM`, the
    need with the :data:`LITERAL_MARGINS`. An admission sample of only small sizes would never
    run such code."""
    if MAX_DIM < needed <= LITERAL_MAX_DIM:
        return tuple(needed + margin for margin in LITERAL_MARGINS)
    return tuple(range(max(ADMISSION_SIZES) + 1, min(needed, MAX_DIM) + 1))


def pool_strategy(nonempty: bool, wanted: tuple[int, ...] = ()) -> st.SearchStrategy[tuple[int, ...]]:
    """The sizes of one example's dimensions. ``wanted`` sizes (what literal indices need) fill
    one of the pool's places, so that code indexing ``d[4]`` runs on a good share of examples."""
    low = 2 if nonempty else 0

    def sizes(count: int) -> st.SearchStrategy[list[int]]:
        return st.lists(st.integers(low, MAX_DIM), min_size=count, max_size=count)

    if not wanted:
        return sizes(POOL_SIZE).map(tuple)
    if max(wanted) > MAX_DIM:
        # sizes past the random ones lead the pool: hypothesis draws (and shrinks towards) a
        # pool's first places most, and only those sizes run the code at all. Two of them, drawn
        # apart: two dimensions that each need a literal column may differ (`a[i, 5] + b[i, 5]`
        # against `(a + b)[:, 5]`)
        return st.tuples(st.sampled_from(wanted), st.sampled_from(wanted), sizes(POOL_SIZE - 2)).map(
            lambda drawn: (drawn[0], drawn[1], *drawn[2]))
    return st.tuples(sizes(POOL_SIZE - 1), st.sampled_from(wanted)).map(lambda drawn: (*drawn[0], drawn[1]))


@st.composite
def inputs_strategy(
    draw: st.DrawFn, specs: list[InputSpec], signature: Signature, nonempty: bool = False, wanted: tuple[int, ...] = (),
) -> dict[str, Any]:
    """Values for every input of one example, sizes from one shared pool."""
    pool = draw(pool_strategy(nonempty, wanted))
    steps = draw(st.integers(1 if nonempty else 0, MAX_STEPS))
    slots = dict(signature)
    values: dict[str, Any] = {}
    for spec in specs:
        slot = slots[spec.name]
        if slot.kind is Kind.OPAQUE:
            continue  # bound to its stand-in by the namespace, never generated
        if spec.per_step:
            values[spec.name] = [draw(value_strategy(spec, slot, pool)) for _ in range(steps)]
        else:
            values[spec.name] = draw(value_strategy(spec, slot, pool))
    return values


#: the sizes an admission sample draws from: 1 is a non-empty size too (an [N, 1] tensor
#: iterates like a 1-D one in .item() code)
ADMISSION_SIZES = (1, 2, 3, 3, 4)


def sample_nonempty(
    specs: list[InputSpec], signature: Signature, rng: random.Random, sizes: tuple[int, ...] = ADMISSION_SIZES,
) -> dict[str, Any]:
    """One concrete input with non-empty sizes, for admitting a signature (no hypothesis run)."""
    pool = tuple(rng.choice(sizes) for _ in range(POOL_SIZE))
    steps = rng.randint(1, 3)
    slots = dict(signature)
    values: dict[str, Any] = {}

    def tensor(spec: InputSpec, rank: int, dtype_name: str) -> torch.Tensor:
        shape = tuple(rng.choice(pool) for _ in range(rank))
        dtype = getattr(torch, dtype_name)
        gen = torch.Generator().manual_seed(rng.randrange(2**31))
        if dtype == torch.bool:
            return torch.randint(0, 2, shape, generator=gen).bool()
        if dtype.is_floating_point:
            return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
        low, high = (0, MAX_DIM) if (spec.nonnegative or dtype_name == "uint8") else (-3, 4)
        if spec.index:
            low, high = 0, 2
        if spec.count:
            low, high = 1, max(pool) + 1
        return torch.randint(low, high, shape, generator=gen).to(dtype)

    def number(spec: InputSpec, kind: Kind) -> Any:
        if kind is Kind.INT:
            if spec.count:
                return rng.choice(pool)
            return rng.randint(0, 1) if spec.index else rng.randint(0 if spec.nonnegative else -3, 4)
        if kind is Kind.FLOAT:
            return rng.uniform(-2, 2)
        return rng.random() < 0.5

    def element(spec: InputSpec, slot: Slot) -> Any:
        if slot.element is Kind.TENSOR:
            return tensor(spec, slot.rank, slot.dtype)
        return number(spec, slot.element or Kind.FLOAT)

    def one(spec: InputSpec, slot: Slot) -> Any:
        if slot.kind is Kind.TENSOR:
            return tensor(spec, slot.rank, slot.dtype)
        if slot.kind is Kind.NDARRAY:
            return to_ndarray(tensor(spec, slot.rank, slot.dtype))
        if slot.kind is Kind.NUMPY_SCALAR:
            kind = Kind.BOOL if slot.dtype == "bool" else Kind.FLOAT if slot.dtype.startswith("float") else Kind.INT
            return numpy_scalar(number(spec, kind), slot.dtype)
        if slot.kind in (Kind.LIST, Kind.ITERATOR):
            items = [element(spec, slot) for _ in range(rng.choice(pool))]
            return items if slot.kind is Kind.LIST else OneShot(items)
        if slot.kind is Kind.DICT:
            keys = list(spec.keys) + [f"k{j}" for j in range(rng.choice(pool))]
            return {key: element(spec, slot) for key in keys}
        if slot.kind in (Kind.INT, Kind.FLOAT, Kind.BOOL):
            return number(spec, slot.kind)
        return None

    for spec in specs:
        slot = slots[spec.name]
        if slot.kind is Kind.OPAQUE:
            continue
        values[spec.name] = [one(spec, slot) for _ in range(steps)] if spec.per_step else one(spec, slot)
    return values


# ----------------------------------------------------------------------------- witnesses


def _encode_number(v: float) -> Any:
    # repr keeps -0.0, inf and nan exactly; JSON numbers would not
    return repr(float(v))


def _encode_array(dtype: str, shape: list[int], flat: list[Any], floating: bool) -> dict[str, Any]:
    return {"dtype": dtype, "shape": shape, "data": [_encode_number(v) for v in flat] if floating else flat}


def encode_value(value: Any) -> Any:
    """A JSON-able form of one input that decodes to the same bits (and the same Python types)."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        flat = t.reshape(-1)
        body = _encode_array(
            str(t.dtype).replace("torch.", ""), list(t.shape),
            flat.double().tolist() if t.is_floating_point() else flat.tolist(), t.is_floating_point(),
        )
        return {"tensor": {**body, "device": value.device.type, "requires_grad": bool(value.requires_grad)}}
    if isinstance(value, np.ndarray):
        floating = value.dtype.kind == "f"
        flat = value.reshape(-1).astype(np.float64 if floating else value.dtype).tolist()
        return {"ndarray": _encode_array(str(value.dtype), list(value.shape), flat, floating)}
    if isinstance(value, np.generic):  # before float: numpy.float64 is a float subclass
        floating = value.dtype.kind == "f"
        item = value.item()
        return {"numpy": {"dtype": str(value.dtype), "value": _encode_number(item) if floating else item}}
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": _encode_number(value)}
    if isinstance(value, OneShot):
        return {"iterator": [encode_value(v) for v in value.items]}
    if isinstance(value, dict):
        if not all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
            raise TypeError("cannot encode a dict whose keys are not str or int")
        return {"dict": [[k, encode_value(v)] for k, v in value.items()]}
    if isinstance(value, (list, tuple)):
        return {"list": [encode_value(v) for v in value]}
    if value is None:
        return {"none": None}
    raise TypeError(f"cannot encode a {type(value).__name__} input")


def _decode_floats(data: list[Any]) -> list[float]:
    return [float(v) for v in data]


def decode_value(data: Any, device: str | None = None) -> Any:
    (tag, body), = data.items()
    if tag == "tensor":
        dtype = getattr(torch, body["dtype"])
        values = _decode_floats(body["data"]) if dtype.is_floating_point else body["data"]
        t = _tensor_from(values, body["dtype"], tuple(body["shape"]))
        t = t.to(device or body["device"])
        return t.requires_grad_(bool(body.get("requires_grad")))
    if tag == "ndarray":
        dtype = np.dtype(body["dtype"])
        values = _decode_floats(body["data"]) if dtype.kind == "f" else body["data"]
        return np.array(values, dtype=np.float64 if dtype.kind == "f" else dtype).astype(dtype).reshape(body["shape"])
    if tag == "numpy":
        dtype = np.dtype(body["dtype"])
        return dtype.type(float(body["value"]) if dtype.kind == "f" else body["value"])
    if tag == "bool":
        return bool(body)
    if tag == "int":
        return int(body)
    if tag == "float":
        return float(body)
    if tag == "list":
        return [decode_value(v, device) for v in body]
    if tag == "dict":
        return {k: decode_value(v, device) for k, v in body}
    if tag == "iterator":
        return OneShot([decode_value(v, device) for v in body])
    return None


def repeated_arrays(inputs: dict[str, Any]) -> dict[str, str]:
    """Each input that is the same array (tensor or ndarray) as an earlier one -> that one's name:
    what the aliasing sweep makes (``engine.aliased_variants``)."""
    first_names: dict[int, str] = {}
    found: dict[str, str] = {}
    for name, value in inputs.items():
        same = first_names.setdefault(id(value), name)
        if same != name and isinstance(value, (torch.Tensor, np.ndarray)):
            found[name] = same
    return found


def encode_inputs(inputs: dict[str, Any], **meta: Any) -> str:
    """The example as JSON; an array given as two inputs (the aliasing sweep) is written once and
    named again as ``{"same_as": first name}``, so that a replay passes one object twice too."""
    repeated = repeated_arrays(inputs)
    encoded = {
        name: {"same_as": repeated[name]} if name in repeated else encode_value(value) for name, value in inputs.items()
    }
    return json.dumps({**meta, "inputs": encoded})


def decode_inputs(text: str, device: str | None = None) -> dict[str, Any]:
    decoded: dict[str, Any] = {}
    for name, body in json.loads(text)["inputs"].items():
        if isinstance(body, dict) and set(body) == {"same_as"}:
            decoded[name] = decoded[body["same_as"]]
        else:
            decoded[name] = decode_value(body, device)
    return decoded


def render_value(value: Any) -> str:
    """The value as code (what a user would type to reproduce it)."""
    if isinstance(value, torch.Tensor):
        return (
            f"torch.tensor({value.tolist()!r}, dtype=torch.{str(value.dtype).replace('torch.', '')})"
            if value.numel() <= 24
            else f"<tensor shape={list(value.shape)} dtype={value.dtype}>"
        )
    if isinstance(value, np.ndarray):
        return (
            f"np.array({value.tolist()!r}, dtype=np.{value.dtype})"
            if value.size <= 24
            else f"<ndarray shape={list(value.shape)} dtype={value.dtype}>"
        )
    if isinstance(value, np.generic):
        return f"np.{type(value).__name__}({value.item()!r})"
    if isinstance(value, OneShot):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k!r}: {render_value(v)}" for k, v in value.items()) + "}"
    return repr(value)


def _type_name(value: Any) -> str:
    if isinstance(value, np.generic):
        return f"numpy.{type(value).__name__}"
    if isinstance(value, torch.Tensor):
        return "tensor"
    if isinstance(value, np.ndarray):
        return "ndarray"
    return type(value).__name__


def _elements_text(items: list[Any]) -> str:
    if not items:
        return "nothing"
    names = list(dict.fromkeys(_type_name(v) for v in items))
    if names == ["tensor"]:
        first = items[0]
        return f"{len(items)} tensors, shape {list(first.shape)}, {str(first.dtype).replace('torch.', '')}, {first.device}"
    return " / ".join(names)


def describe_value(value: Any) -> str:
    """What kind of value ``value`` is, for a counterexample (``list of float``, ``numpy.float64``)."""
    if isinstance(value, torch.Tensor):
        return f"shape {list(value.shape)}, {str(value.dtype).replace('torch.', '')}, {value.device}"
    if isinstance(value, np.ndarray):
        return f"ndarray, shape {list(value.shape)}, {value.dtype}"
    if isinstance(value, OneShot):
        return f"one-shot iterator of {_elements_text(value.items)}"
    if isinstance(value, list):
        if value and all(isinstance(v, torch.Tensor) for v in value):
            return _elements_text(value)
        return f"list of {_elements_text(value)}" if value else "empty list"
    if isinstance(value, dict):
        return f"dict of {_elements_text(list(value.values()))}"
    return _type_name(value)
