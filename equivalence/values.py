"""Input signatures and the hypothesis strategies that fill them with values.

A *signature* fixes, for every kernel input, what kind of value it is: a tensor's rank and dtype, or
the Python type of a number. The old code defines its own domain: a signature is admitted only when
the old code runs on it with non-empty sizes (an empty loop accepts anything, and would make every
rewrite look wrong on, say, "an empty float tensor of labels"). Hypothesis then explores values and
sizes -- 0 and 1 included -- inside the admitted signatures, and shrinks any counterexample.

Sizes are drawn from a small pool shared by all inputs of one example, so that dimensions coincide
the way real batch dimensions do.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from typing import Any

import torch
from hypothesis import strategies as st

from torchfix.equivalence.kernel import FLOAT_DTYPES, InputSpec, Kind

MAX_STEPS = 4
POOL_SIZE = 3
MAX_DIM = 5


@dataclass(frozen=True)
class Slot:
    """The signature of one input: ``kind`` is tensor/int/float/bool; rank and dtype for tensors."""

    kind: Kind
    rank: int = 0
    dtype: str = ""

    def describe(self) -> str:
        if self.kind is Kind.TENSOR:
            return f"{self.dtype}[rank {self.rank}]"
        return self.kind.value


Signature = tuple[tuple[str, Slot], ...]


def describe(signature: Signature, specs: dict[str, InputSpec]) -> str:
    parts = []
    for name, slot in signature:
        text = slot.describe()
        parts.append(f"{name}: list of {text}" if specs[name].per_step else f"{name}: {text}")
    return ", ".join(parts)


def slot_choices(spec: InputSpec) -> list[Slot]:
    if spec.kind is Kind.TENSOR:
        return [Slot(Kind.TENSOR, r, d) for d in spec.allowed_dtypes() for r in spec.ranks]
    if spec.kind is Kind.ANY:
        tensors = [Slot(Kind.TENSOR, r, d) for d in spec.allowed_dtypes() for r in spec.ranks]
        return [Slot(Kind.INT), Slot(Kind.FLOAT)] + tensors
    if spec.kind in (Kind.INT, Kind.FLOAT, Kind.BOOL):
        return [Slot(spec.kind)]
    return [Slot(Kind.OPAQUE)]


def candidate_signatures(specs: list[InputSpec], limit: int, rng: random.Random) -> list[Signature]:
    """All signatures if there are few, else a seeded sample (float32 ones first: the common case)."""
    choices = [slot_choices(s) for s in specs]
    total = 1
    for c in choices:
        total *= len(c)
    names = [s.name for s in specs]
    if total <= limit:
        combos = list(itertools.product(*choices))
    else:
        seen: set[tuple[Slot, ...]] = set()
        combos = []
        preferred = tuple(next((c for c in cs if c.dtype == "float32"), cs[0]) for cs in choices)
        combos.append(preferred)
        seen.add(preferred)
        attempts = 0
        while len(combos) < limit and attempts < limit * 20:
            attempts += 1
            combo = tuple(rng.choice(cs) for cs in choices)
            if combo not in seen:
                seen.add(combo)
                combos.append(combo)
    return [tuple(zip(names, combo)) for combo in combos]


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
    if spec.index and pool:
        # indices within the sizes in play (negative ones too), so that most examples index
        # in range and duplicates are common; one step outside now and then
        bound = max(max(pool), 1)
        low = 0 if (spec.nonnegative or dtype == "uint8") else -bound
        return st.one_of(st.integers(low, bound - 1), st.integers(low - 1, bound))
    return _int_values(spec, dtype)


@st.composite
def tensor_strategy(draw: st.DrawFn, spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> torch.Tensor:
    shape = tuple(draw(st.sampled_from(pool)) for _ in range(slot.rank))
    numel = 1
    for d in shape:
        numel *= d
    values = draw(st.lists(element_strategy(spec, slot.dtype, pool), min_size=numel, max_size=numel))
    dtype = getattr(torch, slot.dtype)
    if dtype.is_floating_point:
        data = torch.tensor(values, dtype=torch.float64).to(dtype)
    else:
        data = torch.tensor(values, dtype=torch.int64 if dtype != torch.bool else torch.bool).to(dtype)
    return data.reshape(shape)


def scalar_strategy(spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> st.SearchStrategy[Any]:
    if slot.kind is Kind.BOOL:
        return st.booleans()
    if slot.kind is Kind.FLOAT:
        return _float_values(64)
    if spec.count:
        # a loop bound: usually one of the sizes in play, sometimes off by one or negative
        return st.one_of(st.sampled_from(pool), st.sampled_from((-1, 0, 1)), st.integers(-2, MAX_DIM + 1))
    return st.integers(-8, 8) if not spec.nonnegative else st.integers(0, MAX_DIM + 1)


def value_strategy(spec: InputSpec, slot: Slot, pool: tuple[int, ...]) -> st.SearchStrategy[Any]:
    if slot.kind is Kind.TENSOR:
        return tensor_strategy(spec, slot, pool)
    if slot.kind is Kind.OPAQUE:
        return st.just(None)
    return scalar_strategy(spec, slot, pool)


def pool_strategy(nonempty: bool) -> st.SearchStrategy[tuple[int, ...]]:
    low = 2 if nonempty else 0
    return st.lists(st.integers(low, MAX_DIM), min_size=POOL_SIZE, max_size=POOL_SIZE).map(tuple)


@st.composite
def inputs_strategy(
    draw: st.DrawFn, specs: list[InputSpec], signature: Signature, nonempty: bool = False
) -> dict[str, Any]:
    """Values for every input of one example, sizes from one shared pool."""
    pool = draw(pool_strategy(nonempty))
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


def sample_nonempty(specs: list[InputSpec], signature: Signature, rng: random.Random) -> dict[str, Any]:
    """One concrete input with non-empty sizes, for admitting a signature (no hypothesis run)."""
    # 1 is a non-empty size too: an [N, 1] tensor iterates like a 1-D one in .item() code
    pool = tuple(rng.choice((1, 2, 3, 3, 4)) for _ in range(POOL_SIZE))
    steps = rng.randint(1, 3)
    slots = dict(signature)
    values: dict[str, Any] = {}

    def one(spec: InputSpec, slot: Slot) -> Any:
        if slot.kind is Kind.TENSOR:
            shape = tuple(rng.choice(pool) for _ in range(slot.rank))
            dtype = getattr(torch, slot.dtype)
            gen = torch.Generator().manual_seed(rng.randrange(2**31))
            if dtype == torch.bool:
                return torch.randint(0, 2, shape, generator=gen).bool()
            if dtype.is_floating_point:
                return torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
            low, high = (0, MAX_DIM) if (spec.nonnegative or slot.dtype == "uint8") else (-3, 4)
            if spec.index:
                low, high = 0, 2
            return torch.randint(low, high, shape, generator=gen).to(dtype)
        if slot.kind is Kind.INT:
            return rng.choice(pool) if spec.count else rng.randint(0 if spec.nonnegative else -3, 4)
        if slot.kind is Kind.FLOAT:
            return rng.uniform(-2, 2)
        if slot.kind is Kind.BOOL:
            return rng.random() < 0.5
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


def encode_value(value: Any) -> Any:
    """A JSON-able form of one input that decodes to the same bits."""
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu()
        flat = t.reshape(-1)
        if t.is_floating_point():
            data = [_encode_number(v) for v in flat.double().tolist()]
        else:
            data = flat.tolist()
        return {
            "tensor": {
                "dtype": str(t.dtype).replace("torch.", ""),
                "shape": list(t.shape),
                "device": value.device.type,
                "requires_grad": bool(value.requires_grad),
                "data": data,
            }
        }
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if isinstance(value, float):
        return {"float": _encode_number(value)}
    if isinstance(value, (list, tuple)):
        return {"list": [encode_value(v) for v in value]}
    if value is None:
        return {"none": None}
    raise TypeError(f"cannot encode a {type(value).__name__} input")


def decode_value(data: Any, device: str | None = None) -> Any:
    (tag, body), = data.items()
    if tag == "tensor":
        dtype = getattr(torch, body["dtype"])
        if dtype.is_floating_point:
            t = torch.tensor([float(v) for v in body["data"]], dtype=torch.float64).to(dtype)
        else:
            t = torch.tensor(body["data"], dtype=torch.int64 if dtype != torch.bool else torch.bool).to(dtype)
        t = t.reshape(body["shape"]).to(device or body["device"])
        return t.requires_grad_(bool(body.get("requires_grad")))
    if tag == "bool":
        return bool(body)
    if tag == "int":
        return int(body)
    if tag == "float":
        return float(body)
    if tag == "list":
        return [decode_value(v, device) for v in body]
    return None


def encode_inputs(inputs: dict[str, Any], **meta: Any) -> str:
    import json

    return json.dumps({**meta, "inputs": {k: encode_value(v) for k, v in inputs.items()}})


def decode_inputs(text: str, device: str | None = None) -> dict[str, Any]:
    import json

    return {k: decode_value(v, device) for k, v in json.loads(text)["inputs"].items()}


def render_value(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return (
            f"torch.tensor({value.tolist()!r}, dtype=torch.{str(value.dtype).replace('torch.', '')})"
            if value.numel() <= 24
            else f"<tensor shape={list(value.shape)} dtype={value.dtype}>"
        )
    if isinstance(value, list):
        return "[" + ", ".join(render_value(v) for v in value) + "]"
    return repr(value)
