"""Is the diff the same run after run, whatever the machine's load? (issue 15's "same input, same output")

    python benchmarks/determinism.py TREE [--runs 5] [--max-load 4] [-- torchfix options...]

Runs ``python -m torchfix TREE`` ``--runs`` times with the verdict cache off (so every rewrite is
checked and timed again), each under a different background load: run k has ``k mod
(max-load + 1)`` busy processes spinning beside it (pure-Python loops, one per process). Prints
per run the load, the wall time, the SHA-256 of stdout and the measured speedups the summary
reported (those may move; the diff may not), then whether every stdout was byte-identical. Exit
status 1 when they differ, with a unified diff of the first two that do.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import multiprocessing
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _spin(stop: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    x = 0
    while not stop.is_set():
        for _ in range(100_000):
            x = (x * 31 + 7) % 1_000_003


def run_once(tree: str, extra: list[str], load: int) -> tuple[bytes, str, float]:
    stop = multiprocessing.Event()
    spinners = [multiprocessing.Process(target=_spin, args=(stop,), daemon=True) for _ in range(load)]
    for p in spinners:
        p.start()
    env = {**os.environ, "TORCHFIX_NO_CACHE": "1", "PYTHONPATH": str(ROOT)}
    try:
        started = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "torchfix", tree, *extra], capture_output=True, env=env)
        seconds = time.perf_counter() - started
    finally:
        stop.set()
        for p in spinners:
            p.join(5)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr.decode(errors="replace")[-3000:])
        raise SystemExit(f"torchfix exited {proc.returncode}")
    speed = " | ".join(
        m.group(0) for m in re.finditer(r"measured speedup of \d+ rewrite\(s\) on \w+ at n=\d+: median [\d.]+x", proc.stderr.decode())
    )
    return proc.stdout, speed, seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tree")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--max-load", type=int, default=4, help="the most busy processes beside a run")
    argv = sys.argv[1:] if argv is None else argv
    # everything after `--` goes to torchfix (argparse would take `-j2` for an option of ours)
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.extra = extra
    outputs = []
    print(f"{'run':>3}  {'load':>4}  {'seconds':>7}  {'stdout sha256':<16}  measured (may vary)")
    for k in range(args.runs):
        load = k % (args.max_load + 1)
        out, speed, seconds = run_once(args.tree, args.extra, load)
        outputs.append(out)
        print(f"{k + 1:>3}  {load:>4}  {seconds:>7.1f}  {hashlib.sha256(out).hexdigest()[:16]:<16}  {speed}", flush=True)
    same = all(o == outputs[0] for o in outputs)
    print(f"stdout byte-identical over {args.runs} runs: {'yes' if same else 'NO'} ({len(outputs[0])} bytes)")
    if not same:
        other = next(o for o in outputs if o != outputs[0])
        sys.stdout.writelines(difflib.unified_diff(
            outputs[0].decode(errors="replace").splitlines(True), other.decode(errors="replace").splitlines(True), "run 1", "differing run",
        ))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
