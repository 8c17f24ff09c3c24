"""What the checker's isolation costs: ``python benchmarks/bench_sandbox.py [--starts N] [--checks N]``.

Measures, alternating sandboxed (bubblewrap) and unsandboxed (``TORCHFIX_SANDBOX=off``) runs so
that machine noise hits both alike:

1. a bare start: ``python -I -c pass`` launched exactly as a worker is (``sandbox.launch``) and
   waited for -- the price of bwrap itself;
2. a worker start: launch until the worker says "ready" (confinement, seccomp filter, torch and
   hypothesis imports) -- paid once per checker, i.e. once per ``--jobs`` worker;
3. per-check time: the same corpus-like kernels checked by one warm checker in each mode
   (``--no-measure`` style: equivalence only), median per check;
4. the static line: ``policy.vet`` per kernel, median.

Run from the repository root. Medians are printed in milliseconds, with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from torchfix.equivalence import sandbox  # noqa: E402
from torchfix.equivalence.kernel import InputSpec, Kernel  # noqa: E402

KERNELS = [
    Kernel("total = 0.0\nfor i in range(len(x)):\n    total += x[i].item()\n", "total = x.sum(dtype=torch.float64).item()\n",
           (InputSpec("x", ranks=(1,)),), ("total",), reorders_float_reduction=True),
    Kernel("out = torch.empty_like(x)\nfor i in range(x.shape[0]):\n    out[i] = x[i] * 2\n", "out = x * 2\n",
           (InputSpec("x", dtypes=("float32", "float64")),), ("out",)),
    Kernel("for i in range(len(idx)):\n    h[idx[i]] += 1\n", "h.index_put_((idx,), torch.ones_like(idx, dtype=h.dtype), accumulate=True)\n",
           (InputSpec("h", ranks=(1,), dtypes=("int64",)), InputSpec("idx", ranks=(1,), index=True)), ()),
    Kernel("y = torch.stack([torch.where(r > 0, r, 0.0 * r) for r in x])\n", "y = torch.where(x > 0, x, 0.0 * x)\n",
           (InputSpec("x", ranks=(2,), dtypes=("float32",)),), ("y",)),
    Kernel("y = [v.item() for v in x]\n", "y = x.tolist()\n", (InputSpec("x", ranks=(1,)),), ("y",)),
]


def _mode(value: str) -> None:
    os.environ["TORCHFIX_SANDBOX"] = value
    sandbox._ISOLATION.clear()


def bare_start(sandboxed: bool) -> float:
    _mode("auto" if sandboxed else "off")
    started = time.perf_counter()
    launched = sandbox.launch(["0", "0", "0", "pass"], (), bootstrap=sandbox._PROBE_BOOTSTRAP.replace(
        "sandbox.confine(int(sys.argv[2]), sys.argv[3] == '1', sys.argv[4] == '1'); ", ""))
    launched.process.wait()
    elapsed = time.perf_counter() - started
    sandbox.kill(launched)
    return elapsed


def worker_start(sandboxed: bool) -> float:
    from torchfix.equivalence.checker import Checker, CheckSettings

    _mode("auto" if sandboxed else "off")
    checker = Checker(CheckSettings(measure=False), cache_dir=None)
    started = time.perf_counter()
    checker._start()
    elapsed = time.perf_counter() - started
    checker.close()
    return elapsed


def per_check(sandboxed: bool, rounds: int) -> list[float]:
    from torchfix.equivalence.checker import Checker, CheckSettings

    _mode("auto" if sandboxed else "off")
    times = []
    with Checker(CheckSettings(examples=60, measure=False), cache_dir=None) as checker:
        checker._start()
        for _ in range(rounds):
            for kernel in KERNELS:
                checker._cache.clear()
                started = time.perf_counter()
                verdict = checker.check(kernel)
                times.append(time.perf_counter() - started)
                assert verdict.ok, verdict.reason
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--starts", type=int, default=5, help="worker starts per mode (default 5)")
    parser.add_argument("--bare", type=int, default=20, help="bare starts per mode (default 20)")
    parser.add_argument("--checks", type=int, default=3, help="rounds over the kernels per mode (default 3)")
    args = parser.parse_args()
    _mode("auto")
    found = sandbox.isolation()
    print(f"isolation here: {found.describe()}")
    if not found.sandboxed:
        print("no sandbox on this machine: nothing to compare")
        return
    ms = lambda values: f"{statistics.median(values) * 1000:8.1f} ms"  # noqa: E731
    bare = {True: [], False: []}
    for _ in range(args.bare):
        for mode in (True, False):
            bare[mode].append(bare_start(mode))
    print(f"bare start (python -I, no torch)   sandboxed {ms(bare[True])}   plain {ms(bare[False])}   "
          f"bwrap adds {ms([statistics.median(bare[True]) - statistics.median(bare[False])])}")
    starts = {True: [], False: []}
    for _ in range(args.starts):
        for mode in (True, False):
            starts[mode].append(worker_start(mode))
    print(f"worker start (to 'ready', torch)   sandboxed {ms(starts[True])}   plain {ms(starts[False])}")
    checks = {True: [], False: []}
    for mode in (True, False, True, False):
        checks[mode] += per_check(mode, max(1, args.checks // 2))
    print(f"per check ({len(KERNELS)} kernels, 60 examples)  sandboxed {ms(checks[True])}   plain {ms(checks[False])}")
    from torchfix.equivalence.policy import vet

    vets = []
    for _ in range(200):
        for kernel in KERNELS:
            started = time.perf_counter()
            vet(kernel)
            vets.append(time.perf_counter() - started)
    print(f"static vetting per kernel          {statistics.median(vets) * 1e6:8.1f} us")
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
