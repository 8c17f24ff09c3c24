"""The in-process check of one kernel: admit signatures, explore with hypothesis, shrink, judge.

This module runs untrusted snippets; call it only inside a boxed worker (``equivalence.worker``).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import functools
import itertools
import random
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterator

import numpy as np
import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.internal.conjecture import engine as conjecture_engine
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from torchfix.equivalence.edges import bound_inputs, cancellation_inputs, edge_inputs, long_inputs
from torchfix.equivalence import edges as _edges
from torchfix.equivalence.compare import Difference, Tolerance, compare, short
from torchfix.equivalence.execute import STEPS, Unbound, base_namespace, error_site, leaves, map_leaves, per_object, run_snippet
from torchfix.equivalence.kernel import FLOAT_DTYPES, NO_DOMAIN, Counterexample, InputSpec, Kernel, Kind, Outcome, Verdict
from torchfix.equivalence.values import (
    OneShot,
    ADMISSION_SIZES,
    Signature,
    Slot,
    candidate_signatures,
    describe,
    describe_value,
    decode_inputs,
    encode_inputs,
    inputs_strategy,
    is_narrow,
    is_primary,
    literal_need,
    MAX_DIM,
    primary_signatures,
    render_value,
    sizes_for_need,
    repeated_arrays,
    sample_nonempty,
    slot_choices,
)

#: fewer compared examples than this (the old code raising on the rest) is not evidence enough
MIN_EXAMPLES = 8
SIGNATURE_LIMIT = 48
ADMISSION_TRIES = 4
#: kind coverage: admitted signatures a missing kind is tried beside, and slots of it tried
COVERAGE_BASES = 3
COVERAGE_SLOTS = 3
#: edge-sweep inputs of a signature holding another kind than tensors and Python numbers
KIND_EDGES = 12
#: primary signatures walked when the candidate sample admitted none (about two seconds of
#: signatures the old code rejects in its first line, on this project's 2-core machine)
FALLBACK_SIGNATURES = 4000
#: CPU seconds of the checker's thread after which that walk stops early (old code slow to
#: reject): CPU time, not wall time, so that a loaded machine walks as far as an idle one
FALLBACK_CPU_SECONDS = 8.0


@dataclass(frozen=True)
class EngineSettings:
    examples: int = 60
    seed: int = 0
    device: str = "cpu"
    #: re-run the new code under ``torch.use_deterministic_algorithms(True)`` when the results
    #: hold integer tensors (scatter counts must be exact); None: on every device but the CPU
    deterministic: bool | None = None

    def rerun_deterministic(self) -> bool:
        return self.device != "cpu" if self.deterministic is None else self.deterministic


class _Refuted(Exception):
    def __init__(self, counterexample: Counterexample, kinds: str = "") -> None:
        super().__init__(counterexample.where)
        self.counterexample = counterexample
        self.kinds = kinds


#: seconds hypothesis may spend shrinking a counterexample before the smallest one found so far
#: is shown: each try runs both snippets, and on large inputs (a batch of 4-D images) shrinking
#: alone outran the check's timeout, turning a refuted rewrite into an unverified one. (Set
#: through ``MAX_SHRINKING_SECONDS``, which hypothesis keeps monkeypatchable for this.)
SHRINK_SECONDS = 5


@dataclass
class _Stats:
    compared: int = 0
    #: per loop and branch of the old code (by number), the examples it ran on that the old code
    #: accepted (counted as they are judged; one the new code differs on ends the check)
    exercised: Counter = field(default_factory=Counter)
    old_raised: int = 0
    signatures_seen: set[str] = field(default_factory=set)
    #: the old code's errors while admitting signatures, to explain an empty domain
    old_errors: Counter = field(default_factory=Counter)
    #: widenings applied: (dtype, rtol, atol, overflow, length)
    widenings: set = field(default_factory=set)
    grad_compared: int = 0
    grad_inputs: set[str] = field(default_factory=set)
    deterministic_runs: int = 0
    notes: list[str] = field(default_factory=list)
    #: the outputs the old code bound on some input it accepted
    bound: set[str] = field(default_factory=set)


_OLD_RAISED = object()


def _to_device(value: Any, device: str) -> Any:
    if device == "cpu":
        return value
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    if isinstance(value, dict):  # an example (name -> value), or a dict input
        return per_object(value, lambda v: _to_device(v, device))
    if isinstance(value, OneShot):
        return OneShot([_to_device(v, device) for v in value.items])
    return value


def _old_raises_on_cpu(old_code: Any, kernel: Kernel, base: dict[str, Any], raw: dict[str, Any], device: str) -> bool:
    """On a GPU leg: whether the old code raises on the CPU copy of an example. Such an example is
    outside the old code's domain anyway, and running it on the GPU can be destructive: an
    out-of-range index there is a device-side assert that poisons the process's CUDA context."""
    return device != "cpu" and run_snippet(old_code, kernel, base, raw).error is not None


def _floating_parts(value: Any) -> list[torch.Tensor]:
    """The floating data a reduction may run over in one input, whatever its kind, as float64
    tensors (for tolerances): arrays, and the numbers in lists, dicts and iterators -- not a
    lone scalar, which no reordered reduction sums."""
    if isinstance(value, torch.Tensor):
        return [value.detach().double().cpu()] if value.is_floating_point() else []
    if isinstance(value, np.ndarray):
        return [torch.from_numpy(value.astype(np.float64))] if value.dtype.kind == "f" else []
    if isinstance(value, OneShot):
        value = value.items
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        floats = [float(v) for v in value if isinstance(v, (float, np.floating))]
        parts = [torch.tensor(floats, dtype=torch.float64)] if floats else []
        return parts + [t for v in value if not isinstance(v, (float, np.floating)) for t in _floating_parts(v)]
    return []


def _reduction_length(value: Any) -> int:
    if isinstance(value, torch.Tensor):
        return value.numel()
    if isinstance(value, np.ndarray):
        return value.size
    if isinstance(value, OneShot):
        value = value.items
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return sum(max(_reduction_length(v), 1) for v in value)
    return 1


def _tolerance(kernel: Kernel, inputs: dict[str, Any]) -> Tolerance:
    if kernel.reorders_float_reduction:
        return _widened(kernel, inputs)
    if kernel.rounds_addends is not None and _wider_addends(inputs, *kernel.rounds_addends):
        return dataclasses.replace(_widened(kernel, inputs), overflow_exempt=False)
    return Tolerance()


def _float_dtype(value: Any) -> torch.dtype | None:
    """The float dtype of a tensor or ndarray (None for anything else: a Python float added to
    an array is rounded to its dtype by the loop as by the rewrite)."""
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return getattr(torch, value.dtype.name)  # (float16/32/64: the names torch gives them too)
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.dtype
    return None


def _narrower_floats(inputs: dict[str, Any], dtype: torch.dtype) -> bool:
    """Whether an input holds floats narrower than ``dtype``."""
    return dtype.is_floating_point and any(
        d is not None and torch.finfo(d).eps > torch.finfo(dtype).eps
        for v in inputs.values() for d in ([_float_dtype(x) for x in v] if isinstance(v, list) else [_float_dtype(v)])
    )


def _as_float64(value: Any) -> Any:
    """``value`` with its float tensors and ndarrays (a list's too) as float64."""
    if isinstance(value, list):
        return [_as_float64(v) for v in value]
    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().double()
    if isinstance(value, np.ndarray) and value.dtype.kind == "f":
        return value.astype(np.float64)
    return value


def _wider_addends(inputs: dict[str, Any], target: str, values: str) -> bool:
    """Whether ``values`` holds floats that ``target``'s dtype rounds in this example: a wider
    dtype, or one neither holds the other of (bfloat16 beside float16). Narrower values are cast
    exactly, and nothing is widened for them."""
    theirs, ours = _float_dtype(inputs.get(values)), _float_dtype(inputs.get(target))
    return theirs is not None and ours is not None and torch.promote_types(theirs, ours) != ours


def _widened(kernel: Kernel, inputs: dict[str, Any]) -> Tolerance:
    length, scale = 1, 0.0
    per_step = {s.name for s in kernel.inputs if s.per_step}
    # a loop over per-step values reduces across the steps too
    steps = max((len(v) for name, v in inputs.items() if name in per_step and isinstance(v, list)), default=1)
    for name, value in inputs.items():
        for step in (value if name in per_step and isinstance(value, list) else [value]):
            length = max(length, _reduction_length(step) * max(steps, 1))
            for t in _floating_parts(step):
                finite = t[torch.isfinite(t)]
                scale = max(scale, float(finite.abs().sum()) if finite.numel() else 0.0)
    if steps > 1:
        scale *= steps
    return Tolerance(True, length, scale)


def compare_runs(kernel: Kernel, old: Any, new: Any, inputs: dict[str, Any], tol: Tolerance | None = None) -> Difference | None:
    tol = tol if tol is not None else _tolerance(kernel, inputs)
    for name in kernel.outputs:
        diff = compare(old.outputs[name], new.outputs[name], name, tol)
        if diff:
            return diff
    for spec in kernel.inputs:
        if spec.kind is Kind.OPAQUE or spec.name in kernel.outputs:
            continue
        if spec.name not in old.inputs_after:
            continue
        diff = compare(old.inputs_after[spec.name], new.inputs_after[spec.name], f"input {spec.name} after the run", tol)
        if diff:
            return diff
    return _sharing_difference(kernel, old, new)


def _sharing_difference(kernel: Kernel, old: Any, new: Any) -> Difference | None:
    """Where an output of one side shares memory with an input, or with an array both sides
    bound (``w = x * 2`` before the loop), and the other side's does not: equal values, but a
    write into one later (``out += 1`` after ``out = torch.cat(pieces)``) would reach that array
    on one side only -- code after the kernel the checker never runs."""
    inputs = [s.name for s in kernel.inputs if s.name not in kernel.outputs]
    # the arrays both sides bound beside the outputs (the lines before the loop they share)
    bound = sorted((set(old.arrays) & set(new.arrays)) - set(kernel.outputs))
    for output in kernel.outputs:
        if output in old.inputs_after:
            continue  # an input written in place is itself, on both sides
        before = {n for n in inputs if _shares_memory(old.outputs.get(output), old.inputs_after.get(n))}
        after = {n for n in inputs if _shares_memory(new.outputs.get(output), new.inputs_after.get(n))}
        before |= {n for n in bound if _shares_memory(old.outputs.get(output), old.arrays[n])}
        after |= {n for n in bound if _shares_memory(new.outputs.get(output), new.arrays[n])}
        if before != after:
            def said(names: set[str]) -> str:
                return "shares memory with " + ", ".join(f"`{n}`" for n in sorted(names)) if names else "has memory of its own"
            return Difference(f"{output}'s memory", said(before), said(after),
                              "a later write into it would reach an input on one side only")
    return None


def _shares_memory(first: Any, second: Any) -> bool:
    """Whether two arrays of one family (tensors, ndarrays) overlap in memory."""
    if isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor):
        if first.numel() == 0 or second.numel() == 0 or first.device != second.device:
            return False
        a, b = first.untyped_storage(), second.untyped_storage()
        return a.data_ptr() == b.data_ptr() and a.nbytes() > 0
    if isinstance(first, np.ndarray) and isinstance(second, np.ndarray):
        return first.size > 0 and second.size > 0 and bool(np.may_share_memory(first, second))
    return False


def _counterexample(
    inputs: dict[str, Any], diff: Difference, seed_value: int, device: str = "cpu", kinds: str = ""
) -> Counterexample:
    aliases = repeated_arrays(inputs)
    rendered = [
        (name, f"{aliases[name]}  # the same object as `{aliases[name]}`: one array given as both")
        if name in aliases else (name, f"{render_value(value)}  # {describe_value(value)}")
        for name, value in inputs.items()
    ]
    try:
        witness = encode_inputs(inputs, device=device, seed=seed_value)
    except TypeError:
        witness = ""
    detail = diff.detail
    if kinds:
        detail = f"{detail}; kinds: {kinds}" if detail else f"kinds: {kinds}"
    return Counterexample(tuple(rendered), diff.where, diff.old, diff.new, detail, seed_value, witness, device)


def _refutation(cex: Counterexample, kinds: str) -> str:
    """The verdict's reason: what differs, and on which kinds of input (the kinds that broke it)."""
    return f"counterexample: {cex.where} differs" + (f" (on {kinds})" if kinds else "")


def _new_code_raised(where: str, error: BaseException, detail: str = "") -> Difference:
    """The difference when the new code raised ``error`` (in its run ``where``) on an input the
    old code ran on."""
    return Difference(where, "ran without error", f"raised {error_site(error)}", detail)


def _rejected(refuted: _Refuted, stats: _Stats, device: str) -> Verdict:
    """The verdict of a kernel that ``refuted`` refutes, with what the search saw before it."""
    return Verdict(
        Outcome.REJECTED,
        _refutation(refuted.counterexample, refuted.kinds),
        refuted.counterexample,
        stats.compared,
        (device,),
        tuple(sorted(stats.signatures_seen)),
    )


# ----------------------------------------------------------------------------- gradients


def _is_float_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor) and value.is_floating_point()


def _is_half_precision(value: Any) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(isinstance(v, torch.Tensor) and v.dtype in (torch.float16, torch.bfloat16) for v in values)


def _grad_names(inputs: dict[str, Any]) -> list[str]:
    names = []
    for name, value in inputs.items():
        if _is_float_tensor(value) or (isinstance(value, list) and value and all(_is_float_tensor(v) for v in value)):
            names.append(name)
    return names


def _requiring_grad(inputs: dict[str, Any], names: list[str]) -> dict[str, Any]:
    out = dict(inputs)
    for name in names:
        value = inputs[name]
        if isinstance(value, list):
            out[name] = [v.detach().clone().requires_grad_(True) for v in value]
        else:
            out[name] = value.detach().clone().requires_grad_(True)
    return out


def _leaves(run: Any, names: list[str]) -> list[tuple[str, torch.Tensor]]:
    leaves = []
    for name in names:
        value = run.leaves.get(name, run.inputs_after[name])
        if isinstance(value, list):
            leaves += [(f"{name}[{i}]", v) for i, v in enumerate(value)]
        else:
            leaves.append((name, value))
    return leaves


def _differentiable_outputs(value: Any) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value] if value.requires_grad and value.is_floating_point() else []
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _differentiable_outputs(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in _differentiable_outputs(v)]
    return []


def _gradient_results(kernel: Kernel, run: Any, computed: Collection[str]) -> list[torch.Tensor]:
    """The differentiable results of ``run``: its outputs', and its ``computed`` inputs' after
    the run (what an in-place code writes is its result)."""
    results = [t for name in kernel.outputs for t in _differentiable_outputs(run.outputs[name])]
    return results + [t for name in computed if name not in kernel.outputs for t in _differentiable_outputs(run.inputs_after[name])]


def _weighted_sum(outputs: list[torch.Tensor], seed_value: int) -> torch.Tensor:
    """A random (but for old and new the same) weighted sum of all differentiable outputs."""
    generator = torch.Generator().manual_seed(seed_value)
    total = None
    for out in outputs:
        weights = torch.randn(out.shape, generator=generator, dtype=torch.float64).to(out.device)
        term = (weights * out.double()).sum()
        total = term if total is None else total + term
    assert total is not None
    return total


def _rounding_noise(
    kernel: Kernel, old_code: Any, base: dict[str, Any], inputs: dict[str, Any], names: list[str], label: str,
    group: int, seed_value: int, g_old: torch.Tensor, computed: Collection[str] = (),
) -> torch.Tensor | None:
    """How far the old code's own gradient ``g_old`` w.r.t. ``label`` moves when every float
    input is float64 instead (the same outputs' weighted sum ``group``): the rounding the narrower floats
    put into it. A float64 weight times float32 samples: autograd sums the parts of its gradient
    in an order of its own, a batch in another, each rounding to float32 -- a difference within
    that rounding is no difference. Only the old code is run so: a review showed a relaxed
    tolerance letting a wrong float64 gradient through, and a new code judged again on other
    dtypes could branch on them. None where the old code does not run so. (An old code that
    branches on its inputs' dtypes widens the bound: its outputs in float64 are not compared
    with its outputs as drawn -- a documented limit.)"""
    again = run_snippet(old_code, kernel, base, _requiring_grad({n: _as_float64(v) for n, v in inputs.items()}, names), computed)
    if again.error is not None:
        return None
    outs = _gradient_results(kernel, again, computed)
    if len(outs) > 1:
        outs = outs[group:group + 1]
    leaves = dict(_leaves(again, names))
    if not outs or label not in leaves:
        return None
    try:
        (g,) = torch.autograd.grad(_weighted_sum(outs, seed_value + group), [leaves[label]], allow_unused=True)
    except RuntimeError:
        return None
    widened = torch.zeros_like(leaves[label]) if g is None else g
    if widened.shape != g_old.shape:
        return None
    return (g_old.detach().double() - widened.double()).abs()


def _refuses_a_leaf_write(error: BaseException) -> bool:
    """Whether ``error`` is torch refusing an in-place write into a leaf that requires grad (or
    into a view of one)."""
    return isinstance(error, RuntimeError) and "leaf Variable that requires grad is being used in an in-place operation" in str(error)


def _within_noise(g_old: torch.Tensor, g_new: torch.Tensor, noise: torch.Tensor, tol: Tolerance) -> bool:
    """Whether ``g_new`` is ``g_old`` up to the leaf dtype's tolerance and twice ``noise``
    (element-wise), with NaN and infinities where ``g_old`` has them."""
    if g_old.shape != g_new.shape or noise.shape != g_old.shape:
        return False
    old, new = g_old.detach().double(), g_new.detach().double()
    finite = torch.isfinite(old)
    if not torch.equal(finite, torch.isfinite(new)) or not torch.equal(old[~finite].nan_to_num(0.0, 1.0, -1.0), new[~finite].nan_to_num(0.0, 1.0, -1.0)):
        return False
    rtol, atol = tol.for_dtype(g_old.dtype)
    bound = atol + rtol * old.abs() + 2 * noise.nan_to_num(0.0, 0.0, 0.0)
    return bool(((old - new).abs() <= bound)[finite].all())


def _gradient_leg(
    kernel: Kernel, old_code: Any, new_code: Any, base: dict[str, Any], inputs: dict[str, Any],
    tol: Tolerance, seed_value: int, stats: _Stats,
) -> Difference | None:
    names = _grad_names(inputs)
    if not names or any(_is_half_precision(inputs[name]) for name in names):
        # a gradient is a sum over the uses of an input, in an order autograd picks; in half
        # precision that order alone moves it past the dtype's tolerance (a row looked up twice
        # by `table[labels]` and by a loop of `table[labels[i]]`). Gradients are compared on
        # float32 and float64 inputs, the values on every dtype
        return None
    g_inputs = _requiring_grad(inputs, names)
    # torch refuses an in-place write into a leaf that requires grad: where the old code writes
    # into its inputs, the two are judged on the same values given as tensors computed from the
    # leaves (`leaf.clone()`), as a model's output is, and the inputs they wrote count among
    # their results. (A new code that raises on a leaf where the old one ran stays a difference:
    # a guard that rarely fires, `if torch.isnan(w[i]): w[i] = 0` on an `nn.Parameter`, writes
    # nothing at most steps, where a batched store into the parameter raises at every one)
    computed: tuple[str, ...] = ()
    old = run_snippet(old_code, kernel, base, g_inputs)
    if old.error is not None and _refuses_a_leaf_write(old.error):
        computed = tuple(names)
        old = run_snippet(old_code, kernel, base, g_inputs, computed)
    if old.error is not None:
        return None  # the old code is not differentiable here
    new = run_snippet(new_code, kernel, base, g_inputs, computed)
    if _zero_extent(kernel, inputs):
        # a loop that runs no step says nothing about differentiating it: judged only where the
        # old code is differentiable with a non-empty extent too
        rng = random.Random(seed_value)
        grown = _requiring_grad(_with_extent(kernel, inputs, 2, rng), names)
        if run_snippet(old_code, kernel, base, grown, computed).error is not None:
            return None
    if new.error is not None:
        return _new_code_raised(
            "the new code's run on inputs that require grad", new.error,
            "the old code accepts inputs that require grad, the new code raises",
        )
    diff = compare_runs(kernel, old, new, g_inputs, tol)
    if diff is not None:
        return Difference(diff.where + " (inputs requiring grad)", diff.old, diff.new, diff.detail)
    old_outs, new_outs = _gradient_results(kernel, old, computed), _gradient_results(kernel, new, computed)
    if not old_outs and not new_outs:
        return None  # neither code is differentiable: nothing to compare
    # where the old results are constants, their gradient w.r.t. every input is zero, and so must
    # the new results' be (`t[i] = s[i].item() * 0.9` made `t[:] = s * 0.9` backpropagates into
    # `s`: a review found it verified); a batch of no rows that requires grad has zero gradients
    old_leaves, new_leaves = _leaves(old, names), _leaves(new, names)
    # each result's gradients on their own where the two codes have the same differentiable
    # results: summed, one result's NaN or infinite gradient (`x.exp().log()` at -inf) would
    # hide how another's differs
    groups = [(old_outs, new_outs, "the outputs" if old_outs else "the outputs; the old results are constants")]
    if len(old_outs) > 1 and len(new_outs) == len(old_outs):
        groups = [([o], [n], f"output {k + 1} of {len(old_outs)}") for k, (o, n) in enumerate(zip(old_outs, new_outs))]
    for k, (olds, news, which) in enumerate(groups):
        try:
            old_grads = torch.autograd.grad(
                _weighted_sum(olds, seed_value + k), [t for _, t in old_leaves], allow_unused=True, retain_graph=True
            ) if olds else [None] * len(old_leaves)
        except RuntimeError:
            return None  # no backward for the old code here
        try:
            new_grads = torch.autograd.grad(
                _weighted_sum(news, seed_value + k), [t for _, t in new_leaves], allow_unused=True, retain_graph=True
            ) if news else [None] * len(new_leaves)
        except RuntimeError as exc:
            return Difference("the gradient", "computed", f"backward raised {error_site(exc)}")
        for (label, leaf), g_old, g_new in zip(old_leaves, old_grads, new_grads):
            g_old = torch.zeros_like(leaf) if g_old is None else g_old
            g_new = torch.zeros_like(leaf) if g_new is None else g_new
            diff = compare(g_old, g_new, f"gradient w.r.t. {label} (of a random weighted sum of {which})", tol)
            if diff is not None:
                noise = (_rounding_noise(kernel, old_code, base, inputs, names, label, k, seed_value, g_old, computed)
                         if _narrower_floats(inputs, leaf.dtype) else None)
                if noise is None or not _within_noise(g_old, g_new, noise, tol):
                    return diff
            if old_outs:  # (what the notes count: gradients of a differentiable old code)
                stats.grad_inputs.add(label.split("[")[0])
    if old_outs:
        stats.grad_compared += 1
    return None


# ----------------------------------------------------------------------------- one example


def _reordered_past_a_nan(kernel: Kernel, old_code: Any, base: dict[str, Any], inputs: dict[str, Any], old: Any) -> bool:
    """Whether a new `invalid value` is a reordered reduction meeting ``inf - inf`` before a NaN
    the loop's order met first (NaN plus anything signals nothing): the kernel reorders a float
    reduction, the old result holds a NaN, and the old code itself signals `invalid value` on
    the same inputs with their NaNs made 0 -- so it too meets ``inf - inf`` where no NaN comes
    first. Then the signal is the order of the additions, as a finite sum's last bits are (the
    values are still compared). An invalid value of another operation (a cast of NaN to an
    integer) stays a difference: the old code without NaNs does not signal it, and inputs
    holding a NaN but no infinity show it alone."""
    if not kernel.reorders_float_reduction or not _holds_nan(old.outputs.values()):
        return False
    # (once per distinct object: two names given one array stay one array)
    cleared = per_object(inputs, lambda value: map_leaves(value, _nan_to_zero))
    return "invalid value" in run_snippet(old_code, kernel, base, cleared).float_errors


def _nan_to_zero(value: Any) -> Any:
    if isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
        return torch.nan_to_num(value.detach(), nan=0.0, posinf=float("inf"), neginf=float("-inf")).requires_grad_(value.requires_grad)
    if isinstance(value, (np.ndarray, np.generic)) and value.dtype.kind in "fc":
        return np.nan_to_num(value, nan=0.0, posinf=np.inf, neginf=-np.inf)
    if isinstance(value, float) and value != value:
        return 0.0
    return value


def _holds_nan(values: Any) -> bool:
    """Whether any of ``values`` (numbers, tensors, arrays, and lists, tuples and dicts of them) is
    or holds a NaN."""
    return any(_is_or_holds_nan(leaf) for value in values for leaf in leaves(value))


def _is_or_holds_nan(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return (value.is_floating_point() or value.is_complex()) and bool(torch.isnan(value.detach()).any())
    if isinstance(value, (np.ndarray, np.generic)):
        return value.dtype.kind in "fc" and bool(np.isnan(value).any())
    return isinstance(value, (float, complex)) and value != value


def _has_integer_tensor(value: Any) -> bool:
    if isinstance(value, torch.Tensor):
        return not value.is_floating_point() and not value.is_complex()
    if isinstance(value, (list, tuple)):
        return any(_has_integer_tensor(v) for v in value)
    if isinstance(value, dict):
        return any(_has_integer_tensor(v) for v in value.values())
    return False


def _zero_extent(kernel: Kernel, inputs: dict[str, Any]) -> bool:
    """Whether the example makes some loop of the kernel run zero times: a walked dimension is
    empty, or a loop count is at most 0 (only for kernels that say which inputs loops walk or
    count with)."""
    for spec in kernel.inputs:
        value = inputs.get(spec.name)
        if spec.batch_dim is not None and isinstance(value, torch.Tensor) and value.dim() > spec.batch_dim:
            if value.shape[spec.batch_dim] <= spec.batch_start or _empty_inner_dims(spec, value):
                return True
        elif spec.batch_dim == 0 and isinstance(value, (list, np.ndarray)) and len(value) <= spec.batch_start:
            return True
        elif spec.count and isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            return True
    return False


def _empty_inner_dims(spec: InputSpec, value: torch.Tensor) -> list[int]:
    """The dimensions of ``value`` that inner loops walk and that are empty."""
    return [d for d in spec.inner_dims if value.dim() > d and value.shape[d] == 0]


def _with_extent(kernel: Kernel, inputs: dict[str, Any], extent: int, rng: random.Random,
                 element: Callable[[random.Random], Any] | None = None) -> dict[str, Any]:
    """The example with every empty walked dimension grown to ``extent`` (fresh values along it,
    drawn like the rest; an empty walked list gets ``element``-s) and every loop count of at
    most 0 set to ``extent``."""
    element = element or _LIST_ELEMENTS["int"]
    grown = dict(inputs)
    for spec in kernel.inputs:
        value = inputs.get(spec.name)
        if spec.batch_dim is not None and isinstance(value, torch.Tensor) and value.dim() > spec.batch_dim:
            empty_inner = _empty_inner_dims(spec, value)
            if value.shape[spec.batch_dim] > spec.batch_start and not empty_inner:
                continue
            shape = list(value.shape)
            shape[spec.batch_dim] = max(shape[spec.batch_dim], spec.batch_start + extent)
            for d in empty_inner:
                shape[d] = extent
            gen = torch.Generator().manual_seed(rng.randrange(2**31))
            if value.dtype == torch.bool:
                fresh = torch.randint(0, 2, shape, generator=gen).bool()
            elif value.is_floating_point():
                fresh = torch.randn(shape, generator=gen, dtype=torch.float64).to(value.dtype)
            else:
                low = 0 if (spec.index or spec.nonnegative) else -3
                fresh = torch.randint(low, 4, shape, generator=gen).to(value.dtype)
            grown[spec.name] = fresh.to(value.device)
        elif spec.batch_dim == 0 and isinstance(value, np.ndarray) and value.ndim > 0 and len(value) <= spec.batch_start:
            tensor = _with_extent(kernel, {spec.name: torch.from_numpy(value.copy())}, extent, rng)[spec.name]
            grown[spec.name] = tensor.numpy()
        elif spec.batch_dim == 0 and isinstance(value, list) and len(value) <= spec.batch_start:
            # an empty list shows no element type: the caller tries each one
            grown[spec.name] = [element(rng) for _ in range(spec.batch_start + extent)]
        elif spec.count and isinstance(value, int) and not isinstance(value, bool) and value <= 0:
            grown[spec.name] = extent
    return grown


#: the elements an empty walked list is grown with, by element type: small integers (some
#: negative, as indices), floats, bools -- the element types of the lists the checker builds
_LIST_ELEMENTS: dict[str, Callable[[random.Random], Any]] = {
    "int": lambda rng: rng.randrange(-3, 4),
    "float": lambda rng: rng.uniform(-3.0, 3.0),
    "bool": lambda rng: rng.random() < 0.5,
}


def _list_elements(kernel: Kernel, inputs: dict[str, Any]) -> list[Callable[[random.Random], Any]]:
    """One grower per element type the empty walked lists of ``inputs`` may hold (their specs'
    dtypes), each tried in turn: an empty list shows no element type, and the example is in the
    domain if the old code runs with any of them. One grower when no list is empty."""
    kinds: set[str] = set()
    for spec in kernel.inputs:
        if isinstance(inputs.get(spec.name), list) and not inputs[spec.name]:
            for dtype in spec.allowed_dtypes():
                kinds.add("bool" if dtype == "bool" else "float" if dtype in FLOAT_DTYPES else "int")
    return [_LIST_ELEMENTS[k] for k in ("int", "float", "bool") if k in kinds] or [_LIST_ELEMENTS["int"]]


#: the most dimensions an array may have where a kernel's literal indices need sizes past 5
WIDE_RANK_LIMIT = 4


@functools.lru_cache(maxsize=256)
def _literal_needs(old: str, new: str) -> tuple[int, int]:
    """:func:`literal_need` of the old and of the new code, parsed once per kernel (a rewrite
    may slice where the loop indexes: `t[:, 5:]` for `t[i, -1]`)."""
    return literal_need(old), literal_need(new)


def _literal_need(kernel: Kernel) -> int:
    """The largest size a literal index of the kernel needs (``t[i, 2]``: 3)."""
    return max(_literal_needs(kernel.old, kernel.new))


def _literal_sizes(kernel: Kernel) -> tuple[int, ...]:
    """The sizes drawn for the kernel's literal indices: those of the code whose need asks for
    the largest (:func:`sizes_for_need`)."""
    per_code = (sizes_for_need(need) for need in _literal_needs(kernel.old, kernel.new))
    return max(per_code, key=lambda sizes: (max(sizes, default=0), sizes))


def _beyond(kernel: Kernel) -> tuple[int, ...]:
    """The sizes past :data:`MAX_DIM` that the kernel's literal indices need, smallest first."""
    return tuple(size for size in _literal_sizes(kernel) if size > MAX_DIM)


def _outside_nonempty_domain(kernel: Kernel, old_code: Any, base: dict[str, Any], inputs: dict[str, Any], seed_value: int) -> bool:
    """An example on which the loop runs zero times is in the domain only when the old code
    accepts it with a non-empty extent (the other inputs' shapes unchanged): otherwise its
    shapes are ones no run of the loop could take (an empty batch beside a weight of the wrong
    width), and any rewrite that computes anything would look wrong on it."""
    if not _zero_extent(kernel, inputs):
        return False
    rng = random.Random(seed_value)
    # (and the sizes the code's literal indices need: `t[3]` along the walked dimension runs only
    # on four samples or more, `t[5]` on six)
    for extent in dict.fromkeys((1, 2, 3, 4, *_literal_sizes(kernel))):
        for element in _list_elements(kernel, inputs):
            for _ in range(2):
                if run_snippet(old_code, kernel, base, _with_extent(kernel, inputs, extent, rng, element)).error is None:
                    return False
    return True


#: edge inputs per signature scanned for inputs the old code writes into, and how many of those
#: the aliasing sweep varies
ALIAS_SCAN = 12
ALIAS_EXAMPLES = 3


def _changed(before: Any, after: Any) -> bool:
    """Whether a run changed an array input, exactly (NaN where NaN was is no change)."""
    family = _array_family(before)
    if family is None:
        return False
    if not isinstance(after, family) or before.shape != after.shape or before.dtype != after.dtype:
        return True
    if family is torch.Tensor:
        before, after = before.detach(), after.detach()
    return not bool(((after == before) | ((after != after) & (before != before))).all())


def _may_alias(kernel: Kernel, first: str, second: str) -> bool:
    return kernel.may_alias is None or (first, second) in kernel.may_alias or (second, first) in kernel.may_alias


def _array_family(value: Any) -> type | None:
    return torch.Tensor if isinstance(value, torch.Tensor) else np.ndarray if isinstance(value, np.ndarray) else None


def aliased_inputs(
    kernel: Kernel, old_code: Any, base: dict[str, Any], specs: list[InputSpec], signature: Signature,
) -> Iterator[dict[str, Any]]:
    """The aliasing sweep's examples of ``signature``: :func:`aliased_variants` of the first
    few edge inputs the old code writes an input of."""
    if not _aliasable(kernel, specs):
        return
    varied = 0
    for raw in itertools.islice(edge_inputs(specs, signature), ALIAS_SCAN):
        variants = aliased_variants(kernel, old_code, base, raw)
        if variants:
            varied += 1
            yield from variants
            if varied == ALIAS_EXAMPLES:
                return


def _aliasable(kernel: Kernel, specs: list[InputSpec]) -> bool:
    return kernel.may_alias != () and len(specs) >= 2


def aliased_variants(kernel: Kernel, old_code: Any, base: dict[str, Any], raw: dict[str, Any]) -> list[dict[str, Any]]:
    """``raw`` with one array given as two inputs: for each input the old code writes into and
    each other input of the same family (tensor, ndarray) that ``kernel.may_alias`` allows, that
    input replaced by the written one's object. The checker draws inputs as independent values,
    but a caller may pass one tensor twice, and then a loop that reads what it wrote at an earlier
    step (``out[i] = src[n - 1 - i]``) is no longer a batched operation. An example the old code
    rejects so aliased proves nothing, as ever; where the old code writes no input, aliasing
    changes no value read. (Views that overlap only in part, ``f(x[1:], x[:-1])``, are not
    built: a documented limit.)"""
    run = run_snippet(old_code, kernel, base, raw)
    if run.error is not None:
        return []
    written = [n for n, v in raw.items() if _array_family(v) is not None and _changed(v, run.inputs_after.get(n))]
    specs = {spec.name: spec for spec in kernel.inputs}
    variants = []
    for target in written:
        family = _array_family(raw[target])
        for other, value in raw.items():
            if other != target and _array_family(value) is family and _may_alias(kernel, target, other):
                # both ways: the written array's values as the other input's (a weight, say),
                # and the other's as the written one's (an index array's positions, which the
                # loop then reads after it has written them) -- where the one object has a rank
                # both inputs may have: a rank the code pins (`keep = keep.view(-1)`) makes an
                # array of another rank a view of it at most, not the object
                if _rank_fits(specs.get(other), raw[target]):
                    variants.append({**raw, other: raw[target]})
                if _rank_fits(specs.get(target), value):
                    variants.append({**raw, target: value})
    return variants


def _rank_fits(spec: InputSpec | None, value: Any) -> bool:
    return spec is None or not spec.ranks or getattr(value, "ndim", 0) in spec.ranks


def judge_example(
    kernel: Kernel, old_code: Any, new_code: Any, base: dict[str, Any], inputs: dict[str, Any],
    config: EngineSettings, stats: _Stats,
) -> Any:
    """_OLD_RAISED, a Difference, or None when old and new agree on ``inputs``."""
    old = run_snippet(old_code, kernel, base, inputs)
    if old.error is not None:
        return _OLD_RAISED
    if _outside_nonempty_domain(kernel, old_code, base, inputs, config.seed):
        return _OLD_RAISED
    stats.bound.update(name for name, value in old.outputs.items() if not isinstance(value, Unbound))
    stats.exercised.update(old.steps)
    new = run_snippet(new_code, kernel, base, inputs)
    if new.error is not None:
        return _new_code_raised("the new code's run", new.error, "the old code accepts this input, the new code raises")
    signalled = new.float_errors - old.float_errors
    if signalled == {"invalid value"} and _reordered_past_a_nan(kernel, old_code, base, inputs, old):
        signalled = frozenset()
    if signalled:
        return Difference(
            "the new code's run", "signalled no floating-point error",
            f"signalled NumPy's `{sorted(signalled)[0]}`",
            "a warning by default and an exception under np.seterr(all='raise'), where the old code does neither",
        )
    tol = _tolerance(kernel, inputs)
    diff = compare_runs(kernel, old, new, inputs, tol)
    if diff is None and config.rerun_deterministic() and (
        any(_has_integer_tensor(v) for v in old.outputs.values())
        or any(_has_integer_tensor(v) for v in old.inputs_after.values())
    ):
        previous = torch.are_deterministic_algorithms_enabled()
        torch.use_deterministic_algorithms(True)
        try:
            det = run_snippet(new_code, kernel, base, inputs)
        finally:
            torch.use_deterministic_algorithms(previous)
        stats.deterministic_runs += 1
        if det.error is not None:
            if "determinis" in str(det.error):
                note = f"the new code has no deterministic implementation on {config.device} ({error_site(det.error)})"
                if note not in stats.notes:
                    stats.notes.append(note)
            else:
                return _new_code_raised("the new code's run under torch.use_deterministic_algorithms(True)", det.error)
        else:
            diff = compare_runs(kernel, old, det, inputs, tol)
            if diff is not None:
                diff = Difference(diff.where + " (under torch.use_deterministic_algorithms(True))", diff.old, diff.new, diff.detail)
    if diff is None and kernel.gradients:
        diff = _gradient_leg(kernel, old_code, new_code, base, inputs, tol, config.seed, stats)
    stats.widenings |= tol.events
    return diff


def edge_cycle() -> int:
    return len(_edges._SHAPES) * max(len(_edges._FLOAT_FILLS), len(_edges._INT_FILLS))


def _admits(
    kernel: Kernel, old_code: Any, base: dict[str, Any], rng: random.Random, device: str,
    signature: Signature, errors: Counter | None = None, sizes: tuple[int, ...] = ADMISSION_SIZES,
) -> bool:
    """Whether the old code runs on some non-empty input of ``signature`` (a few tries), its
    sizes drawn from ``sizes``."""
    specs = list(kernel.inputs)
    for _ in range(ADMISSION_TRIES):
        error = _old_error(old_code, kernel, base, sample_nonempty(specs, signature, rng, sizes), device)
        if error is None:
            return True
        if errors is not None:
            errors[error_site(error)] += 1
    # (and the fixed shapes with sizes past what a literal needs at one or two places of the
    # pool, ones beside them: `t[i, 2]` beside a `b` of (n, 1))
    return any(
        _old_error(old_code, kernel, base, raw, device) is None
        for widen in _edges.widenings(_literal_need(kernel)) for raw in _edges.admission_inputs(specs, signature, widen)
    )


def _old_error(old_code: Any, kernel: Kernel, base: dict[str, Any], raw: dict[str, Any], device: str) -> BaseException | None:
    """What the old code raises on ``raw`` on ``device``, or None. On a GPU leg the CPU copy
    runs first, and an example that raises there never reaches the GPU (as in
    :func:`_old_raises_on_cpu`, whose error this keeps instead of running it again)."""
    if device != "cpu":
        error = run_snippet(old_code, kernel, base, raw).error
        if error is not None:
            return error
    return run_snippet(old_code, kernel, base, _to_device(raw, device)).error


def admit_signatures(
    kernel: Kernel, old_code: Any, base: dict[str, Any], rng: random.Random, device: str,
    errors: Counter | None = None, wanted: tuple[int, ...] = (),
) -> list[Signature]:
    """The candidate signatures the old code runs on, then kind coverage: each kind of each input
    that no admitted signature holds is tried beside the admitted ones (the old code may take a
    list for ``a`` only when ``b`` is a tensor, a case the sample need not contain). ``wanted``:
    sizes the code's literal indices need, drawn beside the usual small ones."""
    specs = list(kernel.inputs)
    sizes = ADMISSION_SIZES + wanted
    admitted: list[Signature] = []
    tried: set[Signature] = set()

    def admit(signature: Signature) -> bool:
        tried.add(signature)
        if _admits(kernel, old_code, base, rng, device, signature, errors, sizes):
            admitted.append(signature)
            return True
        return False

    for signature in candidate_signatures(specs, SIGNATURE_LIMIT, rng):
        admit(signature)
    if not admitted:
        # nothing in the sample: walk the tensor-and-number signatures, lowest ranks first, for a
        # while (most fail in the old code's first line). How far is counted, not timed: a walk
        # bounded by the wall clock admitted fewer signatures on a busy machine, and a verdict
        # moved with the load beside it
        deadline = time.thread_time() + FALLBACK_CPU_SECONDS
        for signature in itertools.islice(primary_signatures(specs, arrays=kernel.array_kind()), FALLBACK_SIGNATURES):
            if time.thread_time() > deadline:
                break
            if signature not in tried and admit(signature):
                break
    if not admitted:
        return admitted
    for position, spec in enumerate(specs):
        slots = slot_choices(spec)
        for kind in dict.fromkeys(slot.kind for slot in slots):
            if any(sig[position][1].kind is kind for sig in admitted):
                continue
            found = False
            for base_signature in admitted[:COVERAGE_BASES]:
                for slot in _coverage_slots([s for s in slots if s.kind is kind]):
                    signature = base_signature[:position] + ((spec.name, slot),) + base_signature[position + 1 :]
                    if signature not in tried and admit(signature):
                        found = True
                        break
                if found:
                    break
    _cover_ranks(specs, admitted, tried, admit)
    _cover_dtypes(specs, admitted, tried, admit)
    _cover_promotion(specs, admitted, tried, admit)
    return admitted


def _cover_ranks(
    specs: list[InputSpec], admitted: list[Signature], tried: set[Signature], admit: Callable[[Signature], bool],
) -> None:
    """Rank coverage: each rank of each array input that no admitted signature holds is tried
    in the admitted ones -- alone, and together with every array input that shared the replaced
    rank. The candidate sample pairs ranks within its budget only, and a kernel of many inputs
    of many kinds spends it elsewhere: a 2-D ``V`` beside a 2-D ``order`` (``V[order[i, :k]]``)
    was never drawn while a 3-D one was, so a rewrite wrong for the rank the code has in
    practice could pass."""
    for position, spec in enumerate(specs):
        for rank in spec.ranks:
            if any(sig[position][1].kind in _ARRAY_KINDS and sig[position][1].rank == rank for sig in admitted):
                continue
            _try_in_bases(position, "rank", rank, admitted[:COVERAGE_BASES], lambda k, _slot, r: r in specs[k].ranks,
                          tried, admit)


def _cover_dtypes(
    specs: list[InputSpec], admitted: list[Signature], tried: set[Signature], admit: Callable[[Signature], bool],
) -> None:
    """Dtype coverage: each dtype of each array input that no admitted signature holds is tried
    in the admitted ones -- alone, and together with every array input that shared the replaced
    dtype. An op that wants equal dtypes (``torch.dot(x[i], w)``) admits float64 only when both
    inputs are float64, a joint choice a random sample can miss, and a rewrite that drops a cast
    (``out = torch.empty(n); out[i] = ...`` -> ``out = x @ w``) shows only off float32. The
    narrow dtypes (int8, float16, ...: ``kernel.NARROW_DTYPES``) are tried here only."""
    choices = [slot_choices(spec, coverage=True) for spec in specs]
    allowed = [{(s.kind, s.dtype) for s in slots} for slots in choices]

    def allows(k: int, slot: Slot, dtype: str) -> bool:
        return (slot.kind, dtype) in allowed[k]

    for position in range(len(specs)):
        wanted = dict.fromkeys(s.dtype for s in choices[position] if s.kind in _ARRAY_KINDS)
        for dtype in wanted:
            if any(sig[position][1].kind in _ARRAY_KINDS and sig[position][1].dtype == dtype for sig in admitted):
                continue
            # in bases of different ranks, those where this input's rank differs from another's
            # first: a dtype's promotion changes with the ranks (`a[i]` of a column `a` is 1-D, and
            # an int8 1-D operand keeps int8 against a 0-d int64 `b[i]`, where a batched form of
            # two 1-D operands computes in int64)
            _try_in_bases(position, "dtype", dtype, _coverage_bases(admitted, position), allows, tried, admit)


#: the kinds whose rank and dtype coverage tries
_ARRAY_KINDS = (Kind.TENSOR, Kind.NDARRAY)
#: (wide, narrow) dtypes of one category, for :func:`_cover_promotion`
_PROMOTION_PAIRS = (("int64", "int32"), ("float64", "float32"))
#: signatures :func:`_cover_promotion` tries at most, per check
PROMOTION_TRIES = 8


def _cover_promotion(
    specs: list[InputSpec], admitted: list[Signature], tried: set[Signature], admit: Callable[[Signature], bool],
) -> None:
    """Promotion coverage: a 0-d tensor of a wide dtype (int64, float64) beside an array of the
    narrow dtype of its category (int32, float32), the other arrays of that category wide. Two
    0-d operands promote as their dtypes say, where a 0-d operand beside a batch takes the
    batch's dtype: `z[i] + t` of an int32 `z` and a 0-d int64 `t` computes in int64 at every
    step, where `z + t` computes in int32 and wraps. The edge sweep's large and cancelling
    values then show it -- in signatures that a random sample, and the dtype coverage that
    replaces one dtype at a time, rarely make (a review found a rewrite they let through)."""
    choices = [slot_choices(spec, coverage=True) for spec in specs]
    allowed = [{(s.kind, s.dtype) for s in slots} for slots in choices]
    tries = 0
    for base_signature in admitted[:COVERAGE_BASES]:
        for p, (name_p, slot_p) in enumerate(base_signature):
            if 0 not in specs[p].ranks or (Kind.TENSOR, "int64") not in allowed[p] and (Kind.TENSOR, "float64") not in allowed[p]:
                continue
            for wide, narrow in _PROMOTION_PAIRS:
                if (Kind.TENSOR, wide) not in allowed[p]:
                    continue
                for q, (_, slot_q) in enumerate(base_signature):
                    if q == p or slot_q.kind not in _ARRAY_KINDS or slot_q.rank == 0 or (slot_q.kind, narrow) not in allowed[q]:
                        continue
                    signature = tuple(
                        (name, Slot(Kind.TENSOR, 0, wide)) if k == p
                        else (name, dataclasses.replace(slot, dtype=narrow)) if k == q
                        else (name, dataclasses.replace(slot, dtype=wide))
                        if slot.kind in _ARRAY_KINDS and (slot.dtype in FLOAT_DTYPES) == (wide in FLOAT_DTYPES)
                        and slot.dtype != "bool" and (slot.kind, wide) in allowed[k]
                        else (name, slot)
                        for k, (name, slot) in enumerate(base_signature)
                    )
                    if signature in tried:
                        continue
                    if tries == PROMOTION_TRIES:
                        return
                    tries += 1
                    admit(signature)


def _try_in_bases(
    position: int, aspect: str, value: Any, bases: list[Signature], allows: Callable[[int, Slot, Any], bool],
    tried: set[Signature], admit: Callable[[Signature], bool],
) -> None:
    """Try input ``position`` with its ``aspect`` ("rank" or "dtype") set to ``value`` in each of
    ``bases`` until one is admitted: alone, and together with every array input that shared the
    replaced value (where ``allows`` says that input may hold ``value``)."""
    for base_signature in bases:
        name_, slot = base_signature[position]
        if slot.kind not in _ARRAY_KINDS or not allows(position, slot, value):
            continue
        alone = base_signature[:position] + ((name_, dataclasses.replace(slot, **{aspect: value})),) + base_signature[position + 1 :]
        together = tuple(
            (name, dataclasses.replace(other, **{aspect: value}))
            if other.kind in _ARRAY_KINDS and getattr(other, aspect) == getattr(slot, aspect) and allows(k, other, value)
            else (name, other)
            for k, (name, other) in enumerate(base_signature)
        )
        if any(candidate not in tried and admit(candidate) for candidate in dict.fromkeys((alone, together))):
            return


def _coverage_bases(admitted: list[Signature], position: int) -> list[Signature]:
    """Up to :data:`COVERAGE_BASES` admitted signatures to try a missing dtype of input
    ``position`` in: one per pattern of ranks, those where that input's rank differs from
    another array's first, in the order they were admitted."""
    by_ranks: dict[tuple[int, ...], Signature] = {}
    for signature in admitted:
        by_ranks.setdefault(tuple(slot.rank for _, slot in signature), signature)

    def mixed(signature: Signature) -> bool:
        own = signature[position][1]
        return any(slot.rank != own.rank for k, (_, slot) in enumerate(signature) if k != position and slot.rank > 0)

    ordered = sorted(by_ranks.values(), key=lambda sig: not mixed(sig))
    return ordered[:COVERAGE_BASES]


def _coverage_slots(slots: list[Slot]) -> list[Slot]:
    """A few slots of one kind, the common ones first: float32 and int64 data, lowest ranks."""
    ordered = sorted(slots, key=lambda s: (s.dtype not in ("float32", "float64", "int64"), s.rank))
    return ordered[:COVERAGE_SLOTS]


def _kinds_outside(kernel: Kernel, admitted: list[Signature]) -> list[str]:
    """``name: kind`` for each kind an input allows on which the old code never ran."""
    outside = []
    for position, spec in enumerate(kernel.inputs):
        seen = {sig[position][1].kind for sig in admitted}
        missing = [k.value for k in dict.fromkeys(s.kind for s in slot_choices(spec)) if k not in seen]
        if missing:
            outside.append(f"{spec.name}: {', '.join(missing)}")
    return outside


def _notes(kernel: Kernel, stats: _Stats) -> list[str]:
    notes = []
    if kernel.reorders_float_reduction or kernel.rounds_addends is not None:
        widest: dict[str, tuple[float, float, int]] = {}
        overflowed: set[str] = set()
        for dtype, rtol, atol, overflow, length in stats.widenings:
            r, a, n = widest.get(dtype, (0.0, 0.0, 0))
            widest[dtype] = (max(r, rtol), max(a, atol), max(n, length))
            if overflow:
                overflowed.add(dtype)
        if widest:
            parts = [f"{d}: up to rtol={r:.3g}, atol={a:.3g} (reductions of up to {n} elements)" for d, (r, a, n) in sorted(widest.items())]
            if kernel.rounds_addends is not None and not kernel.reorders_float_reduction:
                target, values = kernel.rounds_addends
                why = f"rounds `{values}` to `{target}`'s dtype before adding it, where `{values}` held a wider float dtype"
            else:
                why = "sums in another order"
            notes.append(
                f"float tolerance widened beyond assert_close's defaults because the new code {why} "
                "(by reduction length x eps x input scale): " + "; ".join(parts)
            )
        elif kernel.reorders_float_reduction:
            notes.append("reorders_float_reduction is set, but no floating result was compared: tolerance not widened")
        if overflowed:
            notes.append(
                "on examples whose partial sums may overflow " + ", ".join(sorted(overflowed))
                + ", only positions finite in both results were compared (overflow depends on the summation order)"
            )
    if kernel.gradients:
        if stats.grad_compared:
            notes.append(
                f"gradients compared on {stats.grad_compared} examples, w.r.t. "
                + (", ".join(sorted(stats.grad_inputs)) or "no input")
            )
        else:
            notes.append("gradients requested, but the old code was differentiable on no example")
    if stats.deterministic_runs:
        notes.append(f"integer results re-checked under torch.use_deterministic_algorithms(True) on {stats.deterministic_runs} examples")
    notes += stats.notes
    return notes


def _compile(kernel: Kernel) -> tuple[Any, Any, list[str]]:
    """The old snippet counting its loop steps and branches (:func:`counting_steps`), the new
    one, and where each counted loop or branch is."""
    old, places = counting_steps(kernel.old, "<old>")
    return old, compile(kernel.new, "<new>", "exec"), places


class _CountSteps(ast.NodeTransformer):
    """Each loop and each ``if`` branch of the snippet's own code (not of a function it defines:
    a def runs when it is called, and the file a standalone check reads may define others)
    appends its number to ``execute.STEPS`` whenever it runs: a ``for`` / ``while`` as its body
    starts, a comprehension after its own filters (an element they drop is no step), a branch as
    it is taken. Nothing else changes: the same values, the same line numbers (a run that raises
    is reported where it raised)."""

    def __init__(self) -> None:
        #: what each count is, by its number: "loop at line 3", "branch at line 5"
        self.places: list[str] = []

    def _step(self, where: ast.AST, what: str = "loop") -> ast.expr:
        self.places.append(f"{what} at line {getattr(where, 'lineno', 0)}")
        append = ast.Attribute(ast.Name(STEPS, ast.Load()), "append", ast.Load())
        return ast.copy_location(ast.Call(append, [ast.Constant(len(self.places) - 1)], []), where)

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # (its loops run when it is called, if ever)

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_For(self, node: ast.For | ast.While) -> ast.AST:
        step = ast.copy_location(ast.Expr(self._step(node)), node.body[0])
        self.generic_visit(node)
        node.body.insert(0, step)
        return node

    visit_While = visit_For

    def visit_If(self, node: ast.If) -> ast.AST:
        # each branch too: a step whose body reaches what the rewrite changes only behind a test
        # that no accepted input passes compared nothing of it. A branch that ends in `raise` is
        # where the old code's domain stops: no accepted input takes it, by definition
        taken = other = None
        if not _raises(node.body):
            taken = ast.copy_location(ast.Expr(self._step(node.body[0], "branch")), node.body[0])
        if node.orelse and not _raises(node.orelse):
            other = ast.copy_location(ast.Expr(self._step(node.orelse[0], "branch")), node.orelse[0])
        self.generic_visit(node)
        if taken is not None:
            node.body.insert(0, taken)
        if other is not None:
            node.orelse.insert(0, other)
        return node

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        self.generic_visit(node)
        node.ifs.append(ast.copy_location(ast.Compare(self._step(node.iter), [ast.Is()], [ast.Constant(None)]), node.iter))
        return node


def _raises(block: list[ast.stmt]) -> bool:
    """Whether ``block`` ends in ``raise`` (or ``assert False``)."""
    last = block[-1] if block else None
    return isinstance(last, ast.Raise) or (
        isinstance(last, ast.Assert) and isinstance(last.test, ast.Constant) and not last.test.value
    )


def counting_steps(source: str, filename: str) -> tuple[Any, list[str]]:
    """``source`` compiled so that each run records which of its loops and branches ran
    (``RunResult.steps``), and where each is. A check where the old code's loop took no step,
    or a branch of it was never taken, on the inputs it accepted compared nothing of what runs
    there."""
    counter = _CountSteps()
    tree = ast.fix_missing_locations(counter.visit(ast.parse(source, filename)))
    return compile(tree, filename, "exec"), counter.places


def check_kernel(kernel: Kernel, config: EngineSettings) -> Verdict:
    """Try to refute ``kernel``; a verdict, never an exception (but for bugs in the checker)."""
    with warnings.catch_warnings():
        # NumPy warns on the NaN and inf arithmetic the examples do on purpose
        warnings.simplefilter("ignore")
        return _check_kernel(kernel, config)


@contextlib.contextmanager
def _constants_of(kernel: Kernel) -> Iterator[None]:
    """Hypothesis draws some numbers (about one in twenty) from the literals of "the code under
    test", which it takes to be every module loaded from outside site-packages and the standard
    library. Here that is torchfix's own source when it runs from a checkout or an editable
    install, and nothing when it is installed: a literal added to an unrelated module of the
    checker changed which examples a check drew, and so its verdict (a corpus case's rung verified
    after ``timing.py`` gained a ``1e-6``), and an installed torchfix drew other examples than its
    tests. The code under test is the kernel: its literals, and their negations, are the pool.
    (Hypothesis's private hook; without it, as in versions before the pool, nothing changes.)"""
    try:
        from hypothesis.internal.conjecture import providers
        from hypothesis.internal.constants_ast import Constants
    except ImportError:  # pragma: no cover - a hypothesis without a constant pool
        yield
        return
    mine = getattr(providers, "_get_local_constants", None)
    cache = getattr(getattr(providers, "CONSTANTS_CACHE", None), "cache", None)
    if mine is None or cache is None:  # pragma: no cover - the same, or a pool cached elsewhere
        yield
        return
    integers: set[int] = set()
    floats: set[float] = set()
    for code in (kernel.old, kernel.new):
        for node in ast.walk(ast.parse(code)):
            if isinstance(node, ast.Constant) and type(node.value) is int and abs(node.value) < 2**63:
                integers.update((node.value, -node.value))
            if isinstance(node, ast.Constant) and type(node.value) in (int, float) and abs(node.value) < 2**1023:
                floats.update((float(node.value), -float(node.value)))
    try:
        pool = Constants(integers=integers, floats=floats)
    except TypeError:  # pragma: no cover - another hypothesis's pool
        yield
        return
    # (a cache of the pool's values per kind of draw: filled from the pool in force when it fills)
    cache.clear()
    providers._get_local_constants = lambda: pool
    try:
        yield
    finally:
        providers._get_local_constants = mine
        cache.clear()


def _check_kernel(kernel: Kernel, config: EngineSettings) -> Verdict:
    started = time.perf_counter()
    try:
        old_code, new_code, places = _compile(kernel)
    except SyntaxError as exc:
        return Verdict(Outcome.UNVERIFIED, f"kernel does not compile (SyntaxError at line {exc.lineno} of the {str(exc.filename).strip('<>')} code)")
    base = base_namespace(kernel)
    rng = random.Random(config.seed)
    specs = list(kernel.inputs)
    spec_by_name = {s.name: s for s in specs}
    stats = _Stats()
    wanted = _literal_sizes(kernel)
    admitted = admit_signatures(kernel, old_code, base, rng, config.device, stats.old_errors, wanted)
    if not admitted:
        why = ""
        if stats.old_errors:
            (common, _), = stats.old_errors.most_common(1)
            why = f"; the old code raised {common}"
        return Verdict(
            Outcome.UNVERIFIED,
            f"{NO_DOMAIN} (it may depend on names the checker cannot build)" + why,
            devices=(config.device,),
        )

    beyond = _beyond(kernel)
    if beyond and any(
        slot.kind in (Kind.TENSOR, Kind.NDARRAY) and slot.rank > WIDE_RANK_LIMIT for signature in admitted for _, slot in signature
    ):
        # sizes past 5 at five dimensions and more: the sweep's places cannot line up what such
        # arrays broadcast (a review verified a wrong rewrite of two 6-D inputs), and each example
        # costs seconds
        return Verdict(
            Outcome.UNVERIFIED,
            f"its literal indices need sizes of {beyond[0]} and more, and an input may have more than "
            f"{WIDE_RANK_LIMIT} dimensions: not checked at those sizes",
            devices=(config.device,),
        )

    outside = _kinds_outside(kernel, admitted)
    if outside:
        stats.notes.append(
            "kinds the evidence allows on which the checker got the old code to run on no input (taken as "
            "outside its domain): " + "; ".join(outside)
        )

    def refute(raw: dict[str, Any], signature: Signature) -> _Refuted | None:
        """Run the old and the new code on one input of ``signature`` (counted in ``stats``): the
        refutation when they differ; None when they agree, or when the old code raises on it (an
        input outside its domain proves nothing)."""
        if _old_raises_on_cpu(old_code, kernel, base, raw, config.device):
            stats.old_raised += 1
            return None
        inputs = _to_device(raw, config.device)
        result = judge_example(kernel, old_code, new_code, base, inputs, config, stats)
        if result is _OLD_RAISED:
            stats.old_raised += 1
            return None
        kinds = describe(signature, spec_by_name)
        aliases = repeated_arrays(raw)
        if aliases:
            kinds += "".join(f"; `{name}` is `{same}`" for name, same in aliases.items())
        stats.signatures_seen.add(kinds)
        if result is not None:
            return _Refuted(_counterexample(inputs, result, config.seed, config.device, kinds), kinds)
        stats.compared += 1
        return None

    # a deterministic sweep of the usual breaking points first (equivalence.edges): the same
    # inputs whatever hypothesis's version or luck
    # every shape x fill combination at least once per signature, more when the budget allows
    per_signature = max(edge_cycle(), min(80, (2 * config.examples) // len(admitted)))
    # code whose literal indices need more than the sweep's sizes (`t[:, 5]`) raises on every
    # input of it, and `t[i, 2]` runs on its threes only, where no other input has its one: the
    # sweep runs again with places of the pool widened past the need (:func:`edges.widenings`)
    widenings = _edges.widenings(_literal_need(kernel), between=bool(beyond))
    for signature in admitted:
        # a signature with a list, an ndarray, an int8 tensor... in it: every shape with two
        # fills; the tensor and number signatures get the whole cycle
        budget = per_signature if is_primary(signature) and not is_narrow(signature) else min(per_signature, KIND_EDGES)
        before_sweep = stats.compared
        for widen in widenings:
            sweep = itertools.islice(edge_inputs(specs, signature, widen), budget)
            for edge in itertools.chain(
                sweep, bound_inputs(specs, signature, widen), long_inputs(specs, signature) if widen is None else (),
                cancellation_inputs(specs, signature, widen),
            ):
                refuted = refute(edge, signature)
                if refuted is not None:
                    return _rejected(refuted, stats, config.device)
        if beyond and stats.compared == before_sweep:
            # the random draws alone would judge this signature: NaN at fixed places,
            # infinities, sizes of one, cancellation -- what the sweep is for -- unchecked
            return Verdict(
                Outcome.UNVERIFIED,
                f"the fixed sweep ran on no input of {describe(signature, spec_by_name)} that the old code accepts, "
                f"even with sizes of {beyond[0]} and more (what its literal indices need): random draws alone do not verify",
                examples=stats.compared, devices=(config.device,),
            )

    # a caller may pass one array as two inputs (`fill(out, out)`, `self.src = self.out`): where
    # the old code writes into an input, the same object given as each other input of its kind
    for signature in admitted:
        for aliased in aliased_inputs(kernel, old_code, base, specs, signature):
            refuted = refute(aliased, signature)
            if refuted is not None:
                return _rejected(refuted, stats, config.device)

    aliasable = _aliasable(kernel, specs)

    @settings(
        max_examples=config.examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
    )
    @seed(config.seed)
    @given(st.data())
    def explore(data: st.DataObject) -> None:
        signature = data.draw(st.sampled_from(admitted), label="signature")
        raw = data.draw(inputs_strategy(specs, signature, wanted=wanted), label="inputs")
        refuted = refute(raw, signature)
        if refuted is None and aliasable:
            # the edge sweep aliases small shapes only; some loops differ from five rows up
            variants = aliased_variants(kernel, old_code, base, raw)
            if variants:
                refuted = refute(data.draw(st.sampled_from(variants), label="aliased"), signature)
        if refuted is not None:
            raise refuted

    shrink_budget = conjecture_engine.MAX_SHRINKING_SECONDS
    conjecture_engine.MAX_SHRINKING_SECONDS = SHRINK_SECONDS
    try:
        with _constants_of(kernel):
            explore()
    except _Refuted as refuted:
        return _rejected(refuted, stats, config.device)
    except HypothesisException as exc:  # pragma: no cover - defensive
        return Verdict(Outcome.UNVERIFIED, f"checker error ({type(exc).__name__})", devices=(config.device,))
    finally:
        conjecture_engine.MAX_SHRINKING_SECONDS = shrink_budget

    notes = _notes(kernel, stats)
    never = [name for name in kernel.outputs if name not in stats.bound]
    insufficient = None
    if never and stats.compared:
        # both runs leaving a name unset agree vacuously: nothing about it was compared
        listed = ", ".join(f"`{name}`" for name in never)
        insufficient = f"the old code set {listed} on none of the {stats.compared} inputs it accepted: nothing about it was compared"
    elif stats.compared < MIN_EXAMPLES:
        insufficient = f"only {stats.compared} examples compared (the old code raised on {stats.old_raised}): not enough evidence"
    elif any(stats.exercised[k] < MIN_EXAMPLES for k in range(len(places))):
        # every loop and branch of the code the rewrite replaces, not just some: a loop that
        # always runs (a comprehension of sizes) beside one that never does compared nothing of
        # the second
        k = next(k for k in range(len(places)) if stats.exercised[k] < MIN_EXAMPLES)
        insufficient = (
            f"the old code's {places[k]} ran on {stats.exercised[k]} of the {stats.compared} inputs it accepted "
            f"(at least {MIN_EXAMPLES} needed): nothing it computes there was compared"
        )
    if insufficient is not None:
        return Verdict(
            Outcome.UNVERIFIED,
            insufficient,
            examples=stats.compared,
            devices=(config.device,),
            signatures=tuple(sorted(stats.signatures_seen)),
            notes=tuple(notes),
        )
    elapsed = time.perf_counter() - started
    return Verdict(
        Outcome.VERIFIED,
        f"no counterexample in {stats.compared} examples ({elapsed:.1f}s)",
        None,
        stats.compared,
        (config.device,),
        tuple(sorted(stats.signatures_seen)),
        tuple(notes),
    )


def replay_kernel(kernel: Kernel, witness: str, config: EngineSettings) -> Verdict:
    """Run old and new once on the exact inputs of a stored witness and judge them."""
    try:
        old_code, new_code, _ = _compile(kernel)
    except SyntaxError as exc:
        return Verdict(Outcome.UNVERIFIED, f"kernel does not compile (SyntaxError at line {exc.lineno} of the {str(exc.filename).strip('<>')} code)")
    base = base_namespace(kernel)
    inputs = decode_inputs(witness, config.device)
    stats = _Stats()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = judge_example(kernel, old_code, new_code, base, inputs, config, stats)
    if result is _OLD_RAISED:
        return Verdict(Outcome.UNVERIFIED, "the old code raises on the witness: it is outside the old code's domain", devices=(config.device,))
    if result is not None:
        cex = _counterexample(inputs, result, config.seed, config.device)
        return Verdict(Outcome.REJECTED, f"{_refutation(cex, '')} (replayed)", cex, 1, (config.device,))
    return Verdict(Outcome.VERIFIED, "old and new agree on the witness", None, 1, (config.device,), (), tuple(_notes(kernel, stats)))


__all__ = ["EngineSettings", "check_kernel", "replay_kernel", "judge_example", "compare_runs", "short", "InputSpec"]
