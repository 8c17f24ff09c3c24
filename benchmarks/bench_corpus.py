"""Time every runnable corpus case, old vs new vs optimum, side by side in one process.

    python benchmarks/bench_corpus.py                 # n = 16, 256, 4096 on CPU (+ CUDA when present)
    python benchmarks/bench_corpus.py --sizes 256 --rules TFV004 --device cpu
    python benchmarks/bench_corpus.py --json results.json   # every measurement, for quoting

A case is runnable when its first lines carry a ``# bench: func(arg=SPEC, ...)`` header and it has
an ``.expected.py`` twin that differs from it (see corpus/README.md). Old and new calls alternate
(A B A B ...), each on fresh clones of the same inputs, so machine noise hits both alike; the
figure is the ratio of the medians.

The optimum is ``<case>.optimum.py``, the same function as an expert writes it by hand, where the
case has one: it joins the rotation (old, new, optimum, old, new, optimum, ...) and the table's
``new/opt`` column is median(new) / median(optimum) -- 1.00: torchfix matches the expert; the goal
is <= 1.2. A case without one has the rewrite as its optimum: it is not timed twice, its ratio is
1.00 by definition, and the column shows ``=``.

After the per-rule table, one line per device and size covers all cases: the median speedup and
the median and worst ``new/opt`` (over all cases, and over the hand-written optima alone); then
issue 7's goals, each met or NOT met with the offending cases named:

    median speedup >= 50x at n=256 on the CPU        >= 100x at n=256 on CUDA (when CUDA ran)
    no case slower (old/new < 1) at n=16             new within 1.2x of the optimum, every size

``--json FILE`` writes every measurement (rule, case, device, n, old_s, new_s, opt_s, speedup,
new_over_opt, optimum = "hand-written" or "expected"), so results taken on a GPU machine can be
brought back and quoted. Inputs are generated from the header:

    float32[n,8]      a tensor of that dtype and shape (sizes may use n)
    int64[n]<10>      integers in [0, 10)           bool[n]     random booleans
    int[n]            the Python int n              float[0.5]  the Python float 0.5
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import math
import re
import statistics
import sys
import time
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
#: a size at which one old call takes longer than this (x3 repeats) is skipped, not timed
MAX_SECONDS = 20.0
#: issue 7's goals: median speedup at n = 256 per device, and the rewrite's distance from the optimum
MEDIAN_GOAL = {"cpu": 50.0, "cuda": 100.0}
GOAL_N = 256
OPTIMUM_GOAL = 1.2
HEADER = re.compile(r"^#\s*bench:\s*(\w+)\((.*)\)\s*$")
SPEC = re.compile(r"^(\w+)\[([^\]]*)\](?:<([^>]*)>)?$")


@dataclass
class Case:
    rule: str
    name: str
    func: str
    args: list[tuple[str, str]]
    old: Callable[..., Any]
    new: Callable[..., Any]
    #: the hand-written optimum, when the case has one
    optimum: Callable[..., Any] | None = None


def _split_args(text: str) -> list[tuple[str, str]]:
    args, depth, current = [], 0, ""
    for char in text:
        if char in "[<(":
            depth += 1
        elif char in "]>)":
            depth -= 1
        if char == "," and depth == 0:
            args.append(current)
            current = ""
        else:
            current += char
    if current.strip():
        args.append(current)
    out = []
    for arg in args:
        name, _, spec = arg.partition("=")
        out.append((name.strip(), spec.strip()))
    return out


def _load(path: Path, func: str) -> Callable[..., Any]:
    module = types.ModuleType(f"bench_{path.stem}")
    module.__file__ = str(path)
    exec(compile(path.read_text(), str(path), "exec"), module.__dict__)  # our own corpus files
    return getattr(module, func)


def discover(rules: list[str] | None) -> list[Case]:
    cases = []
    for before in sorted(CORPUS.glob("TFV*/*.py")):
        if before.name.endswith((".expected.py", ".optimum.py")) or before.name.startswith("trap_"):
            continue
        rule = before.parent.name
        if rules and not any(rule.startswith(r) for r in rules):
            continue
        after = before.with_name(before.stem + ".expected.py")
        comments = itertools.takewhile(lambda line: line.startswith("#"), before.read_text().splitlines())
        header = next((HEADER.match(line) for line in comments if HEADER.match(line)), None)
        if header is None or not after.exists() or after.read_bytes() == before.read_bytes():
            continue  # not runnable, or the checker refuted the rewrite: nothing to time
        func, args = header.group(1), _split_args(header.group(2))
        best = before.with_name(before.stem + ".optimum.py")
        optimum = _load(best, func) if best.exists() else None
        cases.append(Case(rule, before.stem, func, args, _load(before, func), _load(after, func), optimum))
    return cases


def make_input(spec: str, n: int, device: str, generator: torch.Generator) -> Any:
    if spec in ("int", "float"):  # the size itself
        return n if spec == "int" else float(n)
    match = SPEC.match(spec)
    if not match:
        raise ValueError(f"bad bench spec {spec!r}")
    kind, dims_text, bound_text = match.groups()
    env = {"n": n, "math": math}
    if kind == "int":
        return int(eval(dims_text, env))  # noqa: S307 - our own corpus headers
    if kind == "float":
        return float(eval(dims_text, env))  # noqa: S307
    if kind.startswith("np_"):  # a NumPy array (NumPy code runs on the host whatever the device)
        return make_input(spec.removeprefix("np_"), n, "cpu", generator).numpy()
    shape = tuple(int(eval(d, env)) for d in dims_text.split(",") if d.strip())  # noqa: S307
    if kind == "bool":
        value = torch.rand(shape, generator=generator) < 0.5
    elif kind.startswith(("int", "uint", "index")):
        dtype = getattr(torch, kind.replace("index", "int"))
        high = int(eval(bound_text, env)) if bound_text else 10  # noqa: S307
        value = torch.randint(0, max(high, 1), shape, generator=generator, dtype=torch.int64).to(dtype)
    else:
        value = torch.randn(shape, generator=generator, dtype=torch.float64).to(getattr(torch, kind))
    return value.to(device)


def _clone(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return value.copy()
    return value.clone() if isinstance(value, torch.Tensor) else value


def time_pair(case: Case, n: int, device: str, budget: float) -> tuple[float, float, float | None]:
    generator = torch.Generator().manual_seed(n)
    inputs = {name: make_input(spec, n, device, generator) for name, spec in case.args}
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)

    def once(fn: Callable[..., Any]) -> float:
        args = {k: _clone(v) for k, v in inputs.items()}
        # corpus functions allocate with factory defaults (`torch.zeros(k)`): on a GPU they run
        # with it as the default device, as such code does when it is moved there. On the CPU
        # that is the default already, and the device context (a Python-level function mode)
        # would add about a microsecond to every torch call, old, new and optimum alike.
        context = contextlib.nullcontext() if device == "cpu" else torch.device(device)
        sync()
        start = time.perf_counter()
        with context:
            fn(**args)
        sync()
        return time.perf_counter() - start

    first_old = once(case.old)  # warm-up (and first-call allocations)
    once(case.new)
    if case.optimum is not None:
        once(case.optimum)
    if first_old * 3 > MAX_SECONDS:
        raise TimeoutError(f"the old code takes {first_old:.1f}s per call at this size: skipped")
    old_times, new_times, opt_times = [], [], []
    started = time.perf_counter()
    minimum = 5 if first_old < 1.0 else 2
    while len(old_times) < minimum or (time.perf_counter() - started < budget and len(old_times) < 200):
        old_times.append(once(case.old))
        new_times.append(once(case.new))
        if case.optimum is not None:
            opt_times.append(once(case.optimum))
    optimum = statistics.median(opt_times) if opt_times else None
    return statistics.median(old_times), statistics.median(new_times), optimum


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="16,256,4096")
    parser.add_argument("--rules", default="", help="comma list of rule code prefixes")
    parser.add_argument("--cases", default="", help="comma list of substrings of case names (all cases when empty)")
    parser.add_argument("--device", choices=["cpu", "cuda", "all"], default="all")
    parser.add_argument("--budget", type=float, default=0.3, help="seconds per case and size")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path, help="also write every measurement to this JSON file")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    sizes = [int(s) for s in args.sizes.split(",")]
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    devices = [d for d in devices if d == "cpu" or torch.cuda.is_available()]
    cases = discover([r for r in args.rules.split(",") if r] or None)
    wanted = [c for c in args.cases.split(",") if c]
    if wanted:
        cases = [c for c in cases if any(w in c.name for w in wanted)]
    print(f"torch {torch.__version__}, {args.threads} thread(s), devices: {', '.join(devices)}, {len(cases)} cases")
    speedups: dict[tuple[str, str, int], list[float]] = {}
    rows: list[dict[str, Any]] = []
    header = f"{'case':<40} {'dev':<4} {'n':>5} {'old us':>10} {'new us':>10} {'speedup':>8} {'new/opt':>8}"
    print(header)
    print("-" * len(header))
    for case in cases:
        for device in devices:
            previous: tuple[int, float] | None = None
            for n in sizes:
                # a nested loop grows quadratically: predict before running one call
                if previous is not None and previous[1] * (n / previous[0]) ** 2 > MAX_SECONDS:
                    print(f"{case.rule + '/' + case.name:<40} {device:<4} {n:>5}  skipped: old code predicted "
                          f"> {MAX_SECONDS:.0f}s per call")
                    continue
                try:
                    old, new, opt = time_pair(case, n, device, args.budget)
                    previous = (n, old)
                except Exception as exc:  # a case that cannot run at this size is reported, not fatal
                    print(f"{case.rule + '/' + case.name:<40} {device:<4} {n:>5}  error: {type(exc).__name__}: {exc}")
                    continue
                ratio = old / new if new > 0 else float("inf")
                if opt is None:  # the rewrite is the optimum: 1.00 by definition, not timed twice
                    opt, over_opt, source = new, 1.0, "expected"
                else:
                    over_opt, source = (new / opt if opt > 0 else float("inf")), "hand-written"
                speedups.setdefault((case.rule, device, n), []).append(ratio)
                rows.append({
                    "rule": case.rule, "case": case.name, "device": device, "n": n, "old_s": old, "new_s": new,
                    "opt_s": opt, "speedup": ratio, "new_over_opt": over_opt, "optimum": source,
                })
                print(f"{case.rule + '/' + case.name:<40} {device:<4} {n:>5} {old * 1e6:>10.1f} {new * 1e6:>10.1f} {ratio:>7.1f}x"
                      + (f" {over_opt:>7.2f}" if source == "hand-written" else f" {'=':>7}"))
    print()
    print("median speedup per rule")
    print(f"{'rule':<8} {'dev':<4} " + " ".join(f"{'n=' + str(n):>9}" for n in sizes) + "   slower at any n?")
    for rule in sorted({k[0] for k in speedups}):
        for device in devices:
            cells, slower = [], False
            for n in sizes:
                values = speedups.get((rule, device, n), [])
                cells.append(f"{statistics.median(values):>8.1f}x" if values else f"{'-':>9}")
                slower |= any(v < 1.0 for v in values)
            print(f"{rule:<8} {device:<4} " + " ".join(cells) + f"   {'yes' if slower else 'no'}")
    print()
    print_goals(rows, devices, sizes)
    if args.json:
        args.json.write_text(json.dumps({
            "torch": torch.__version__,
            "threads": args.threads,
            "sizes": sizes,
            "budget_s": args.budget,
            "devices": {d: (torch.cuda.get_device_name() if d == "cuda" else "cpu") for d in devices},
            "rows": rows,
        }, indent=1) + "\n")
        print(f"\n{len(rows)} measurements written to {args.json}")
    return 0


def print_goals(rows: list[dict[str, Any]], devices: list[str], sizes: list[int]) -> None:
    """All cases together, per device and size, then issue 7's goals, met or not, with offenders."""

    def name(row: dict[str, Any]) -> str:
        return f"{row['rule']}/{row['case']}"

    print("all cases (new/opt: a case without a hand-written optimum counts 1.00)")
    for device in devices:
        for n in sizes:
            here = [r for r in rows if r["device"] == device and r["n"] == n]
            if not here:
                continue
            worst = max(here, key=lambda r: r["new_over_opt"])
            hand = [r["new_over_opt"] for r in here if r["optimum"] == "hand-written"]
            line = (f"  {device:<4} n={n:<5} {len(here):>3} cases: median speedup {statistics.median(r['speedup'] for r in here):.1f}x;"
                    f" new/opt median {statistics.median(r['new_over_opt'] for r in here):.2f},"
                    f" worst {worst['new_over_opt']:.2f} ({name(worst)})")
            if hand:
                line += f"; over the {len(hand)} hand-written optima: median {statistics.median(hand):.2f}"
            print(line)

    def goal(text: str, offenders: list[str] | None) -> None:
        """``offenders`` None: the goal could not be measured in this run."""
        if offenders is None:
            state = "not measured"
        else:
            state = "met" if not offenders else f"NOT met ({len(offenders)}): " + "; ".join(offenders)
        print(f"  {text}: {state}")

    print()
    print("goals (issue 7)")
    for device in devices:
        target = MEDIAN_GOAL[device]
        here = [r for r in rows if r["device"] == device and r["n"] == GOAL_N]
        if not here:
            goal(f"median >= {target:.0f}x at n={GOAL_N} on {device.upper()}", None)
            continue
        median = statistics.median(r["speedup"] for r in here)
        goal(f"median >= {target:.0f}x at n={GOAL_N} on {device.upper()} (measured {median:.1f}x)",
             [] if median >= target else [f"median {median:.1f}x over {len(here)} cases"])
    at_16 = [r for r in rows if r["n"] == 16]
    goal("no case slower at n=16",
         [f"{name(r)} ({r['device']}, {r['speedup']:.2f}x)" for r in at_16 if r["speedup"] < 1.0] if at_16 else None)
    # one entry per case, listing the device/size cells over the bound
    over: dict[str, list[str]] = {}
    for r in rows:
        if r["new_over_opt"] > OPTIMUM_GOAL:
            over.setdefault(name(r), []).append(f"{r['device']} n={r['n']}: {r['new_over_opt']:.2f}")
    goal(f"new within {OPTIMUM_GOAL}x of the optimum", [f"{case} ({', '.join(cells)})" for case, cells in over.items()] if rows else None)


if __name__ == "__main__":
    sys.exit(main())
