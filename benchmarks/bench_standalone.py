"""How long ``python -m torchfix.equivalence OLD.py:f NEW.py:f`` takes as a whole process.

    python benchmarks/bench_standalone.py [--runs 5] [--baseline CHECKOUT]

Issue 15's goal is at most 3 s for a small pair. The pair is a four-line ``.item()`` accumulator
and its one-reduction rewrite (written to a temporary folder); every run is a fresh process with
the verdict cache off, so the boxed worker starts, imports torch and checks every time. With
``--baseline`` (another checkout of torchfix, e.g. a ``git worktree`` of an older commit) the two
take turns run by run, so machine noise hits both alike, and the table shows both medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OLD = "import torch\n\ndef f(x: torch.Tensor) -> float:\n    total = 0.0\n    for i in range(len(x)):\n        total += x[i].item()\n    return total\n"
NEW = "import torch\n\ndef f(x: torch.Tensor) -> float:\n    return x.sum(dtype=torch.float64).item()\n"


def one_run(checkout: Path, folder: Path) -> float:
    env = {**os.environ, "PYTHONPATH": str(checkout), "TORCHFIX_NO_CACHE": "1"}
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "torchfix.equivalence", "old.py:f", "new.py:f"], cwd=folder, env=env, capture_output=True
    )
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{checkout}: exit {proc.returncode}\n{proc.stderr.decode(errors='replace')[-2000:]}")
    return seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--baseline", type=Path, help="another torchfix checkout, timed in turns with this one")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "old.py").write_text(OLD)
        (folder / "new.py").write_text(NEW)
        checkouts = {"this checkout": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
        times: dict[str, list[float]] = {name: [] for name in checkouts}
        for _ in range(args.runs):
            for name, checkout in checkouts.items():
                times[name].append(one_run(checkout, folder))
    for name, values in times.items():
        print(f"{name:>14}: median {statistics.median(values):.2f} s (min {min(values):.2f}, max {max(values):.2f}) over {len(values)} runs")
    median = statistics.median(times["this checkout"])
    print(f"goal: at most 3 s -- {'met' if median <= 3.0 else 'not met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
