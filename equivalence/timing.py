"""What a verified rewrite buys: old and new code timed side by side at realistic sizes.

The checker proves equivalence on tiny inputs (sizes up to 5, where every edge case lives); speed
shows only at the sizes real code runs at. After a kernel is verified, the worker builds inputs of
one admitted signature with the loop extent scaled to each of :data:`SIZES` (every tensor's first
dimension, every per-step list, every list, dict or iterator input and every loop count become
``n``; other dimensions stay :data:`SMALL`), checks the old code runs on them, and times old and
new calls interleaved
(A B A B ..., fresh clones of the same inputs each call, one warm-up each, the median of several
runs), synchronising the device around each call.

Nothing here decides equivalence; a timing can only say "slower", which the pipeline uses to
withhold a rewrite by default. Kernels that call stand-ins for code the checker cannot build (a
model, a helper defined elsewhere) are not timed: the stand-in's cost would be the measurement.

Run only inside the boxed worker (``equivalence.worker``): it executes the kernels.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import itertools
import math
import random
import statistics
import time
from typing import Any, Callable, Iterator

import torch

from torchfix.equivalence.execute import Opaque, base_namespace, clone, error_site, exec_on_device, input_device
from torchfix.equivalence.kernel import CLEARLY_FASTER, CLEARLY_SLOWER, FLOAT_DTYPES, InputSpec, Kernel, Kind, Timing, Verdict
from torchfix.equivalence.values import OneShot, Signature, Slot, describe, numpy_scalar, to_ndarray

#: loop extents the speedup is measured at
SIZES: tuple[int, ...] = (256, 4096)
#: every dimension but the scaled one
SMALL = 8
#: seconds of timed calls per size (old and new together), after the warm-up
BUDGET = 0.25
MIN_RUNS = 3
MAX_RUNS = 50
#: a size whose old call is predicted to take longer than this is skipped, not timed
MAX_CALL_SECONDS = 1.5
#: tensors bigger than this are not built (an all-n layout of a rank-3 input, say)
MAX_ELEMENTS = 2**22
#: signatures x layouts tried, and seconds spent, before giving up on finding inputs the old
#: code accepts at scale (most tries fail fast, in the old code's first shape check)
MAX_TRIES = 200
SEARCH_SECONDS = 3.0
#: sizes probed with one untimed call to learn how the old code's time grows (a loop nested in a
#: loop, or a concatenation that copies everything so far, grows faster than linearly)
PROBE_FACTOR = 4


#: the layout key saying what loop counts are: "n" or "small"
_COUNTS = "__counts__"


class NotMeasured(Exception):
    """Why a kernel was not timed (a sentence for the report)."""


def _preferred_dtype(spec: InputSpec) -> str:
    allowed = spec.allowed_dtypes()
    preferred = "int64" if spec.index else "float32"
    return preferred if preferred in allowed else allowed[0]


def _preferred_element(spec: InputSpec) -> Kind:
    """The Python number a list, dict or iterator of this input usually holds."""
    dtype = _preferred_dtype(spec)
    return Kind.BOOL if dtype == "bool" else Kind.FLOAT if dtype in FLOAT_DTYPES else Kind.INT


def _timing_options(spec: InputSpec) -> list[Slot]:
    """The slots worth timing for one input, in order: each allowed kind in its usual form."""
    options: list[Slot] = []
    for kind in spec.allowed_kinds():
        if kind in (Kind.TENSOR, Kind.NDARRAY):
            options += [Slot(kind, rank, _preferred_dtype(spec)) for rank in spec.ranks]
        elif kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
            element = _preferred_element(spec)
            options.append(Slot(kind, 1, {Kind.FLOAT: "float64", Kind.INT: "int64"}.get(element, "bool"), element))
        elif kind is Kind.NUMPY_SCALAR:
            dtype = _preferred_dtype(spec)
            options.append(Slot(kind, 0, "float64" if dtype in FLOAT_DTYPES else "bool" if dtype == "bool" else "int64"))
        elif kind in (Kind.INT, Kind.FLOAT, Kind.BOOL):
            options.append(Slot(kind))
        else:
            options.append(Slot(Kind.OPAQUE))
    return options


def timing_signatures(specs: list[InputSpec], limit: int = 4096, arrays: Kind = Kind.TENSOR) -> list[Signature]:
    """Signatures to time, the usual ones first: each tensor in its usual dtype (float32 data,
    int64 indices), lowest ranks first, a tensor (an ndarray, for ``arrays=Kind.NDARRAY``) before
    any other kind where several may go."""
    choices = [_timing_options(spec) for spec in specs]
    combos = list(itertools.islice(itertools.product(*choices), limit))
    combos.sort(key=lambda combo: (sum(s.kind is not arrays for s in combo), sum(s.rank for s in combo)))
    names = [s.name for s in specs]
    return [tuple(zip(names, combo)) for combo in combos]


def _layouts(specs: list[InputSpec]) -> list[dict[str, str]]:
    """Shape layouts to try: every tensor batch-first, then one tensor at a time kept small (a
    weight vector beside a batch), then every dimension n; each with loop counts = n, then with
    counts small (a count that is a feature width, as in ``torch.empty(0, dim)``)."""
    arrays = (Kind.TENSOR, Kind.NDARRAY)
    tensors = [s.name for s in specs if any(k in arrays for k in s.allowed_kinds()) and not s.per_step]
    shapes = [{name: "batch" for name in tensors}]
    for small in tensors:
        shapes.append({name: "small" if name == small else "batch" for name in tensors})
    shapes.append({name: "all" for name in tensors})
    counts = ("n", "small") if any(s.count for s in specs) else ("n",)
    containers = (Kind.LIST, Kind.DICT, Kind.ITERATOR)
    # per-step inputs and containers (lists, dicts, iterators) are n long at every layout
    stepped = any(s.per_step or any(k in containers for k in s.allowed_kinds()) for s in specs)
    return [
        {**shape, _COUNTS: mode}
        for mode in counts
        for shape in shapes
        # something must grow with n, or every size would time the same small inputs
        if stepped or (mode == "n" and any(s.count for s in specs)) or any(v != "small" for v in shape.values())
    ]


def _shape(rank: int, n: int, layout: str) -> tuple[int, ...]:
    if layout == "all":
        return (n,) * rank
    if layout == "small" or rank == 0:
        return (SMALL,) * rank
    return (n,) + (SMALL,) * (rank - 1)


def _tensor(spec: InputSpec, slot: Slot, shape: tuple[int, ...], generator: torch.Generator) -> torch.Tensor:
    numel = 1
    for d in shape:
        numel *= d
    if numel > MAX_ELEMENTS:
        raise NotMeasured("inputs at this size would be too large")
    dtype = getattr(torch, slot.dtype)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) < 0.5
    if dtype.is_floating_point:
        return torch.randn(shape, generator=generator, dtype=torch.float64).to(dtype)
    if spec.index or spec.nonnegative or slot.dtype == "uint8":
        # in range of every dimension in play, so indexing never fails
        return torch.randint(0, SMALL, shape, generator=generator).to(dtype)
    return torch.randint(-3, 4, shape, generator=generator).to(dtype)


def _numbers(spec: InputSpec, element: Kind, count: int, rng: random.Random) -> list[Any]:
    if element is Kind.FLOAT:
        return [rng.gauss(0.0, 1.0) for _ in range(count)]
    if element is Kind.BOOL:
        return [rng.random() < 0.5 for _ in range(count)]
    if spec.nonnegative or spec.index:
        return [rng.randrange(SMALL) for _ in range(count)]
    return [rng.randint(1, 3) for _ in range(count)]


def scaled_inputs(
    specs: list[InputSpec], signature: Signature, n: int, layout: dict[str, str], seed: int, device: str
) -> dict[str, Any]:
    """One input of ``signature`` with the loop extent ``n`` (see the module docstring)."""
    generator = torch.Generator().manual_seed(seed)
    rng = random.Random(seed)
    slots = dict(signature)
    values: dict[str, Any] = {}

    def array(spec: InputSpec, slot: Slot, layout_name: str) -> Any:
        tensor = _tensor(spec, slot, _shape(slot.rank, n, layout_name), generator)
        return tensor.to(device) if slot.kind is Kind.TENSOR else to_ndarray(tensor)

    def container(spec: InputSpec, slot: Slot, count: int) -> Any:
        if count > MAX_ELEMENTS:
            raise NotMeasured("inputs at this size would be too large")
        items = _numbers(spec, slot.element or Kind.FLOAT, count, rng)
        if slot.kind is Kind.LIST:
            return items
        if slot.kind is Kind.ITERATOR:
            return OneShot(items)
        keys = list(spec.keys) + [f"k{j}" for j in range(count)]
        return {key: items[j % len(items)] if items else 0.0 for j, key in enumerate(keys)}

    def scalar(spec: InputSpec, slot: Slot) -> Any:
        if slot.kind is Kind.INT:
            if spec.count:
                return n if layout.get(_COUNTS, "n") == "n" else SMALL
            return rng.randrange(SMALL) if spec.nonnegative or spec.index else rng.randint(1, 3)
        if slot.kind is Kind.FLOAT:
            return 0.5
        if slot.kind is Kind.NUMPY_SCALAR:
            return numpy_scalar(0.5 if slot.dtype.startswith("float") else 1, slot.dtype)
        return True

    for spec in specs:
        slot = slots[spec.name]
        if slot.kind is Kind.OPAQUE:
            continue
        if spec.per_step:
            # one value per step: n steps of small values
            if slot.kind in (Kind.TENSOR, Kind.NDARRAY):
                value: Any = [array(spec, slot, "small") for _ in range(n)]
            elif slot.kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
                value = [container(spec, slot, SMALL) for _ in range(n)]
            else:
                value = [scalar(spec, slot) for _ in range(n)]
        elif slot.kind in (Kind.TENSOR, Kind.NDARRAY):
            value = array(spec, slot, layout.get(spec.name, "batch"))
        elif slot.kind in (Kind.LIST, Kind.DICT, Kind.ITERATOR):
            value = container(spec, slot, n)
        else:
            value = scalar(spec, slot)
        values[spec.name] = value
    return values


def _run(code: Any, base: dict[str, Any], inputs: dict[str, Any]) -> None:
    namespace = dict(base)
    namespace.update(inputs)
    exec_on_device(code, namespace, input_device(inputs))


def _time_pair(
    old: Any, new: Any, base: dict[str, Any], inputs: dict[str, Any], sync: Callable[[], None],
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[float, float, int]:
    def once(code: Any) -> float:
        own = {name: clone(value) for name, value in inputs.items()}
        sync()
        start = clock()
        _run(code, base, own)
        sync()
        return clock() - start

    first_old = once(old)  # warm-up: first-call allocations, lazy initialisation
    once(new)
    olds, news = [], []
    started = time.perf_counter()
    minimum = MIN_RUNS if first_old < MAX_CALL_SECONDS / 2 else 1
    while len(olds) < minimum or (time.perf_counter() - started < BUDGET and len(olds) < MAX_RUNS):
        olds.append(once(old))
        news.append(once(new))
    return statistics.median(olds), statistics.median(news), len(olds)


def _clock(device: str) -> Callable[[], float]:
    """What a timed call is measured with. On the CPU, the timing thread's own CPU time: the
    checker runs torch on one thread (``worker``), so every operation of the kernel runs on the
    thread that times it, and time spent descheduled -- what a loaded machine adds, unevenly to
    the old and the new code -- is not counted. Wall time made a verdict's band depend on the
    load beside it (a per-channel mean measured 0.23x to 0.67x under ``-j2``). On CUDA the work is
    the GPU's, which the CPU thread only waits for: wall time between synchronisations."""
    if device == "cuda" or time.get_clock_info("thread_time").resolution > 1e-6:
        return time.perf_counter  # (Windows counts thread time in scheduler ticks of ~15 ms)
    return time.thread_time


def _predict(seen: list[tuple[int, float]], n: int) -> float:
    """Seconds of one old call at ``n``, from the calls seen: polynomial growth, its degree fitted
    to the last two sizes (assumed cubic from one size: the worst that turns up in loops)."""
    size, seconds = seen[-1]
    degree = 3.0
    if len(seen) >= 2:
        (s0, t0), (s1, t1) = seen[-2], seen[-1]
        if t0 > 0 and t1 > 0 and s1 > s0:
            degree = min(3.0, max(1.0, math.log(t1 / t0) / math.log(s1 / s0)))
    return seconds * (n / size) ** degree


def _affordable(
    seen: list[tuple[int, float]], n: int, specs: list[InputSpec], signature: Signature, layout: dict[str, str],
    seed: int, device: str, old: Any, base: dict[str, Any], sync: Callable[[], None],
    max_call_seconds: float = MAX_CALL_SECONDS, clock: Callable[[], float] = time.perf_counter,
) -> bool:
    """Whether one old call at ``n`` fits :data:`MAX_CALL_SECONDS`; probes an intermediate size
    (one untimed call, itself predicted to fit) when one size is all that was seen."""
    if _predict(seen, n) <= max_call_seconds:
        return True
    probe = seen[-1][0] * PROBE_FACTOR
    if len(seen) >= 2 or probe >= n or _predict(seen, probe) > max_call_seconds:
        return False
    inputs = scaled_inputs(specs, signature, probe, layout, seed, device)
    sync()
    start = clock()  # (the clock the timed calls in ``seen`` were measured with)
    _run(old, base, {k: clone(v) for k, v in inputs.items()})
    sync()
    seen.append((probe, clock() - start))
    return _predict(seen, n) <= max_call_seconds


def _names_in(code: str) -> set[str]:
    """Every name ``code`` reads or binds."""
    return {node.id for node in ast.walk(ast.parse(code)) if isinstance(node, ast.Name)}


def measure_kernel(
    kernel: Kernel, device: str = "cpu", sizes: tuple[int, ...] = SIZES, seed: int = 0,
    max_call_seconds: float = MAX_CALL_SECONDS,
) -> tuple[Timing, ...]:
    """Time old vs new at each of ``sizes`` on ``device``; raises :class:`NotMeasured`."""
    specs = list(kernel.inputs)
    if any(s.kind is Kind.OPAQUE for s in specs):
        raise NotMeasured("the kernel calls a stand-in for code the checker cannot build")
    base = base_namespace(kernel)
    # a binding of the module the kernel never names (`from torch.utils.data import DataLoader`
    # beside the loop) is a stand-in nobody calls: it does not make the timing meaningless
    named = _names_in(kernel.old) | _names_in(kernel.new)
    if any(isinstance(v, Opaque) and name in named for name, v in base.items()):
        raise NotMeasured("the kernel calls a stand-in for code the checker cannot build")
    old, new = compile(kernel.old, "<old>", "exec"), compile(kernel.new, "<new>", "exec")
    by_name = {s.name: s for s in specs}
    chosen: tuple[Signature, dict[str, str]] | None = None
    # the search's guard is CPU time: on a busy machine a wall-clock bound gave up sooner, and a
    # rewrite went unmeasured (withheld, for a speed-gated form) where an idle run measured it
    clock = _clock(device)
    tries, started = 0, clock()
    for signature in timing_signatures(specs, arrays=kernel.array_kind()):
        for layout in _layouts(specs):
            tries += 1
            if tries > MAX_TRIES or clock() - started > SEARCH_SECONDS:
                break
            try:
                inputs = scaled_inputs(specs, signature, sizes[0], layout, seed, device)
                _run(old, base, {k: clone(v) for k, v in inputs.items()})
                _run(new, base, {k: clone(v) for k, v in inputs.items()})
            except Exception:  # noqa: BLE001 - outside the old code's domain at this scale: next
                continue
            chosen = (signature, layout)
            break
        if chosen is not None or tries > MAX_TRIES or clock() - started > SEARCH_SECONDS:
            break
    if chosen is None:
        raise NotMeasured(f"found no input of size {sizes[0]} the old code accepts")
    signature, layout = chosen
    described = describe(signature, by_name)
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    timings: list[Timing] = []
    #: (size, seconds of one old call): what the growth of the old code's time is learnt from
    seen: list[tuple[int, float]] = []
    with _one_cpu_thread(device):
        for n in sizes:
            try:
                if seen and not _affordable(seen, n, specs, signature, layout, seed, device, old, base, sync, max_call_seconds, clock):
                    break  # a loop this long would cost the run more than the figure is worth
                inputs = scaled_inputs(specs, signature, n, layout, seed, device)
                old_s, new_s, runs = _time_pair(old, new, base, inputs, sync, clock)
            except Exception:  # noqa: BLE001 - too large, out of memory at the larger size, ...
                break
            seen.append((n, old_s))
            timings.append(Timing(device, n, old_s, new_s, runs, described))
        return tuple(_settle_edges(timings, lambda n: _time_pair(old, new, base, scaled_inputs(specs, signature, n, layout, seed, device), sync, clock)))


@contextlib.contextmanager
def _one_cpu_thread(device: str) -> Iterator[None]:
    """torch on one intra-op thread while CPU timings are taken, as the worker always runs it:
    :func:`_clock` counts the timing thread's CPU time, which work on other threads would escape."""
    threads = torch.get_num_threads()
    if device == "cuda" or threads == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


#: a measured speedup within this factor of a band edge is measured twice more (see _settle_edges)
EDGE_MARGIN = 1.35


def _settle_edges(timings: list[Timing], again: Callable[[int], tuple[float, float, int]]) -> list[Timing]:
    """The timings, each that decides the emit band (``Verdict.speed_class``: the largest size
    against ``CLEARLY_SLOWER``, every size against ``CLEARLY_FASTER``) and lies within
    :data:`EDGE_MARGIN` of its edge measured twice more, keeping the run whose speedup is the
    median of the three. One noisy run of a busy machine near an edge would otherwise flip the
    emitted diff; three runs flip it only if two of them are off the same way."""
    settled = list(timings)
    largest = max(range(len(settled)), key=lambda k: settled[k].size, default=None)
    for k, timing in enumerate(settled):
        edges = [CLEARLY_FASTER] + ([CLEARLY_SLOWER] if k == largest else [])
        if not any(edge / EDGE_MARGIN <= timing.speedup <= edge * EDGE_MARGIN for edge in edges):
            continue
        runs = [timing]
        for _ in range(2):
            try:
                old_s, new_s, count = again(timing.size)
            except Exception:  # noqa: BLE001 - keep what was measured
                break
            runs.append(dataclasses.replace(timing, old_seconds=old_s, new_seconds=new_s, runs=count))
        settled[k] = sorted(runs, key=lambda t: t.speedup)[len(runs) // 2]
    return settled


def with_timings(kernel: Kernel, verdict: Verdict, devices: tuple[str, ...], seed: int = 0) -> Verdict:
    """``verdict`` with the kernel timed on each of ``devices`` (or the reason it was not)."""
    timings: list[Timing] = []
    note = ""
    for device in devices:
        try:
            timings += measure_kernel(kernel, device, seed=seed)
        except NotMeasured as exc:
            note = f"speed not measured: {exc}"
            break
        except Exception as exc:  # noqa: BLE001 - timing is a report, never a reason to fail a check
            # the type and kernel line only: scanned code chooses exception messages
            note = f"speed not measured: {error_site(exc)}"
            break
    if not timings and not note:
        note = "speed not measured: the old code did not run at any realistic size"
    return dataclasses.replace(verdict, timings=tuple(timings), timing_note=note)


__all__ = ["SIZES", "NotMeasured", "measure_kernel", "scaled_inputs", "with_timings"]
