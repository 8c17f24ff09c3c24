"""Comparing what the old and the new code left behind.

"Equivalent" (DESIGN.md): the same Python type, the same tensor dtype, shape and device, integer and
bool values exactly equal, floating values within ``torch.testing.assert_close``'s default tolerance
for the dtype, NaN where the old value had NaN. The tolerance is widened only when the kernel says
the new code reorders a floating reduction, and then by the reduction length and the data's scale.

Python type identity is strict: ``numpy.float64`` is not ``float`` (though it subclasses it), an
ndarray is not a tensor, a list is not a tuple. NumPy arrays and scalars are held to the same
dtype, shape and value strictness as tensors. An iterator is compared by what is left in it.
"""

from __future__ import annotations

import inspect
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

# assert_close's defaults, per dtype: (rtol, atol)
_DEFAULT_TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float16: (1e-3, 1e-5),
    torch.bfloat16: (1.6e-2, 1e-5),
    torch.float32: (1.3e-6, 1e-5),
    torch.float64: (1e-7, 1e-7),
    torch.complex64: (1.3e-6, 1e-5),
    torch.complex128: (1e-7, 1e-7),
}


@dataclass(frozen=True)
class Tolerance:
    """How far floating results may drift when a reduction is reordered.

    ``length`` is the longest reduction the example could contain; ``scale`` the largest sum of
    absolute finite values of any floating input (the classic bound on a reordered sum's error is
    ``length * eps * sum(|x_i|)``). When ``scale`` reaches the dtype's largest finite value, a
    partial sum may overflow in one order and not in the other: positions where either result is
    not finite are then not compared (NaN positions included -- ``inf - inf`` depends on the
    order). Every widening used is recorded in ``events`` so that the verdict can say so.
    """

    reordered: bool = False
    length: int = 0
    scale: float = 0.0
    #: whether positions that overflow in either result go uncompared where the scale reaches the
    #: dtype's largest value (a reordered sum); not for rounded addends (``Kernel.rounds_addends``)
    overflow_exempt: bool = True
    #: (dtype name, rtol, atol, overflow) for each widening actually applied
    events: set = field(default_factory=set, compare=False, hash=False)

    def for_dtype(self, dtype: torch.dtype) -> tuple[float, float]:
        rtol, atol = _DEFAULT_TOLERANCES.get(dtype, (1e-7, 1e-7))
        if self.reordered and self.length > 1:
            eps = torch.finfo(dtype).eps
            rtol += self.length * eps
            atol += 2 * self.length * eps * self.scale
        return rtol, atol

    def may_overflow(self, dtype: torch.dtype) -> bool:
        if not (self.reordered and self.length > 1 and self.overflow_exempt) or not dtype.is_floating_point:
            return False
        return self.scale * (1 + self.length * torch.finfo(dtype).eps) >= torch.finfo(dtype).max

    def _record(self, dtype: torch.dtype, rtol: float, atol: float, overflow: bool) -> None:
        if self.reordered and self.length > 1:
            self.events.add((str(dtype).replace("torch.", ""), rtol, atol, overflow, self.length))


@dataclass(frozen=True)
class Difference:
    where: str
    old: str
    new: str
    detail: str = ""


def short(value: Any, limit: int = 160) -> str:
    """A compact, readable rendering of a value for reports."""
    if isinstance(value, torch.Tensor):
        data = value.detach().cpu()
        body = repr(data.tolist()) if data.numel() <= 12 else f"<{data.numel()} elements>"
        extra = "" if value.device.type == "cpu" else f", device={value.device}"
        text = f"tensor({body}, dtype={str(value.dtype).replace('torch.', '')}, shape={list(value.shape)}{extra})"
    elif isinstance(value, np.ndarray):
        body = repr(value.tolist()) if value.size <= 12 else f"<{value.size} elements>"
        text = f"ndarray({body}, dtype={value.dtype}, shape={list(value.shape)})"
    elif isinstance(value, np.generic):
        text = f"numpy.{type(value).__name__}({value.item()!r})"
    else:
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def compare(old: Any, new: Any, where: str, tol: Tolerance) -> Difference | None:
    """Return the first difference between ``old`` and ``new``, or None when they agree."""
    if type(old) is not type(new):
        return Difference(
            where, short(old), short(new), f"Python type: old {_type_name(old)}, new {_type_name(new)}"
        )
    if isinstance(old, torch.Tensor):
        return _compare_tensors(old, new, where, tol)
    if isinstance(old, np.ndarray):
        return _compare_arrays(old, new, where, tol)
    if isinstance(old, np.generic):
        return _compare_arrays(np.asarray(old), np.asarray(new), where, tol)
    if isinstance(old, float):
        return _compare_floats(old, new, where, tol)
    if isinstance(old, (list, tuple)):
        if len(old) != len(new):
            return Difference(where, short(old), short(new), f"length: old {len(old)}, new {len(new)}")
        for i, (a, b) in enumerate(zip(old, new)):
            diff = compare(a, b, f"{where}[{i}]", tol)
            if diff:
                return diff
        return None
    if isinstance(old, dict):
        if list(old) != list(new):
            return Difference(where, short(list(old)), short(list(new)), "keys differ")
        for key in old:
            diff = compare(old[key], new[key], f"{where}[{key!r}]", tol)
            if diff:
                return diff
        return None
    if inspect.isgenerator(old):
        # an iterator input: the code consumed some of it; what is left must agree (the caller's
        # next read of it sees exactly that). Draining is safe: the checker built it.
        left_old, left_new = list(old), list(new)
        if len(left_old) != len(left_new):
            return Difference(
                f"{where} (items left in the iterator)", short(left_old), short(left_new),
                f"old code left {len(left_old)} item(s) unconsumed, new code {len(left_new)}",
            )
        return compare(left_old, left_new, f"{where} (items left in the iterator)", tol)
    if old == new or old is new:
        return None
    return Difference(where, short(old), short(new))


def _type_name(value: Any) -> str:
    if isinstance(value, np.generic):
        return f"numpy.{type(value).__name__}"
    if isinstance(value, np.ndarray):
        return "numpy.ndarray"
    return type(value).__name__


def _compare_arrays(old: np.ndarray, new: np.ndarray, where: str, tol: Tolerance) -> Difference | None:
    """NumPy arrays (and scalars, as 0-d arrays): dtype and shape exactly, then values with the
    tensor rules (exact for integers and bools, the dtype's tolerance for floats, NaN where NaN)."""
    if old.dtype != new.dtype:
        return Difference(where, short(old), short(new), f"numpy dtype: old {old.dtype}, new {new.dtype}")
    if old.shape != new.shape:
        return Difference(where, short(old), short(new), f"shape: old {list(old.shape)}, new {list(new.shape)}")
    try:
        a, b = torch.from_numpy(np.array(old, copy=True)), torch.from_numpy(np.array(new, copy=True))
    except (TypeError, ValueError):  # a dtype torch has no counterpart for (object, str, uint64...)
        same = old.tolist() == new.tolist()
        return None if same else Difference(where, short(old), short(new), "values differ")
    diff = _compare_tensors(a, b, where, tol)
    if diff is None:
        return None
    # the tensor comparison's wording, with the NumPy values shown
    return Difference(where, short(old), short(new), diff.detail)


def _compare_floats(old: float, new: float, where: str, tol: Tolerance) -> Difference | None:
    if math.isnan(old) or math.isnan(new):
        if math.isnan(old) and math.isnan(new):
            return None
        return Difference(where, repr(old), repr(new), "NaN in one result only")
    if old == new:
        return None
    rtol, atol = tol.for_dtype(torch.float64)
    overflow = tol.may_overflow(torch.float64)
    tol._record(torch.float64, rtol, atol, overflow)
    if overflow and (math.isinf(old) or math.isinf(new)):
        return None
    if math.isinf(old) or math.isinf(new) or abs(old - new) > atol + rtol * abs(old):
        rel = abs(old - new) / abs(old) if old else float("inf")
        return Difference(
            where,
            repr(old),
            repr(new),
            f"abs error {abs(old - new):.3g}, rel error {rel:.3g} > tolerance (rtol={rtol:.3g}, atol={atol:.3g})",
        )
    return None


def _compare_tensors(old: torch.Tensor, new: torch.Tensor, where: str, tol: Tolerance) -> Difference | None:
    if old.dtype != new.dtype:
        return Difference(where, short(old), short(new), f"dtype: old {old.dtype}, new {new.dtype}")
    if old.shape != new.shape:
        return Difference(where, short(old), short(new), f"shape: old {list(old.shape)}, new {list(new.shape)}")
    if old.device != new.device:
        return Difference(where, short(old), short(new), f"device: old {old.device}, new {new.device}")
    # a new result that is differentiable where the old one was not refines it (the old code has
    # no gradient there to agree with); the reverse loses a gradient
    if old.requires_grad and not new.requires_grad:
        return Difference(
            where,
            short(old),
            short(new),
            f"requires_grad: old {old.requires_grad}, new {new.requires_grad}"
            + (" (the new code cuts the gradient, e.g. with .detach())" if old.requires_grad else ""),
        )
    a = old.detach().cpu()
    b = new.detach().cpu()
    if a.is_floating_point() or a.is_complex():
        rtol, atol = tol.for_dtype(a.dtype)
        overflow = tol.may_overflow(a.dtype) if a.is_floating_point() else False
        if a.numel():
            tol._record(a.dtype, rtol, atol, overflow)
        wide_a = a.to(torch.complex128 if a.is_complex() else torch.float64)
        wide_b = b.to(wide_a.dtype)
        nan_a, nan_b = torch.isnan(wide_a), torch.isnan(wide_b)
        close = torch.isclose(wide_a, wide_b, rtol=rtol, atol=atol, equal_nan=True)
        bad = ~close | (nan_a != nan_b)
        if overflow:
            bad &= torch.isfinite(wide_a) & torch.isfinite(wide_b)
        if bool(bad.any()):
            pos = tuple(int(i) for i in bad.nonzero()[0]) if a.dim() else ()
            va, vb = wide_a[pos].item(), wide_b[pos].item()
            finite = torch.isfinite(wide_a) & torch.isfinite(wide_b)
            abs_err = (wide_a - wide_b).abs()[finite]
            max_abs = float(abs_err.max()) if abs_err.numel() else float("nan")
            denom = wide_a.abs()[finite].clamp_min(torch.finfo(torch.float64).tiny)
            max_rel = float((abs_err / denom).max()) if abs_err.numel() else float("nan")
            return Difference(
                where,
                short(old),
                short(new),
                f"first difference at index {list(pos)}: old {va!r}, new {vb!r}; "
                f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g} (rtol={rtol:.3g}, atol={atol:.3g})",
            )
        return None
    if not torch.equal(a, b):
        bad = a != b
        pos = tuple(int(i) for i in bad.nonzero()[0]) if a.dim() else ()
        if a.dtype == torch.bool:
            extra = f"; {int(bad.sum())} of {a.numel()} elements differ"
        else:
            err = (a.to(torch.float64) - b.to(torch.float64)).abs()
            extra = f"; max abs error {float(err.max()):.3g}, {int(bad.sum())} of {a.numel()} elements differ (exact dtype)"
        return Difference(
            where,
            short(old),
            short(new),
            f"first difference at index {list(pos)}: old {a[pos].item()!r}, new {b[pos].item()!r}{extra}",
        )
    return None
