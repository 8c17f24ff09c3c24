"""Two torchfix installs scanning one tree, side by side: what a change did to the scan's speed.

    python benchmarks/ab_scan.py --before /tmp/basevenv/bin/python --after .venv/bin/python TREE [--rounds 2]

Each interpreter must import its own torchfix (for the version before a change:
``git worktree add /tmp/base REV``, then ``python -m venv /tmp/basevenv`` and
``/tmp/basevenv/bin/pip install torch==2.13.0 -e /tmp/base``). One untimed run fills the cache, and a
copy of it serves the other install (the same verdicts, the same measured speedups); every timed
run then empties the file cache (``TORCHFIX_CACHE_DIR/files``) so that
every file is parsed and analysed again while checks come from the verdict cache: the cost of the
scan itself, as bench_scan.py's "warm verdicts" column. The two take turns round by round
(before, after, before, after, ...) so that this machine's drifting speed hits both alike; the
last lines give the medians, their ratio, and whether the two JSON reports list the same rewrites.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def scan(python: str, tree: Path, cache: Path, report: Path) -> float:
    env = {**os.environ, "TORCHFIX_CACHE_DIR": str(cache)}
    env.pop("TORCHFIX_NO_CACHE", None)
    start = time.perf_counter()
    with report.open("wb") as out:
        done = subprocess.run(
            [python, "-m", "torchfix", str(tree), "--jobs", "1", "--format", "json"],
            stdout=out, stderr=subprocess.DEVNULL, env=env, cwd=tempfile.gettempdir(),
        )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # (1: rewrites found; "No module named torchfix" exits 1 too,
        sys.exit(f"{python}: torchfix failed (exit {done.returncode})")  # but writes no report)
    if not report.stat().st_size:
        sys.exit(f"{python}: torchfix wrote no report (is torchfix installed in that environment?)")
    return elapsed


def rewrites(report: Path) -> str:
    return json.dumps(json.loads(report.read_text())["rewrites"], sort_keys=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tree", type=Path, help="a directory (a repository checkout)")
    parser.add_argument("--before", required=True, help="the interpreter of the install before the change")
    parser.add_argument("--after", required=True, help="the interpreter of the install after it")
    parser.add_argument("--rounds", type=int, default=2, help="timed runs of each [2]")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="torchfix-ab-") as scratch:
        root = Path(scratch)
        # the runs start in the temporary directory: paths given relative to here are made absolute
        sides = {side: str(Path(python).absolute()) if os.sep in python else python
                 for side, python in (("before", args.before), ("after", args.after))}
        tree = args.tree.resolve()
        times: dict[str, list[float]] = {side: [] for side in sides}
        # one set of verdicts for both: each install measuring its own speedups would make the
        # two reports differ by those figures alone
        print("filling the cache (one untimed run of before, then of after on a copy) ...", flush=True)
        scan(sides["before"], tree, root / "before", root / "before.json")
        shutil.copytree(root / "before", root / "after")
        scan(sides["after"], tree, root / "after", root / "after.json")
        for round_ in range(1, args.rounds + 1):
            for side, python in sides.items():
                shutil.rmtree(root / side / "files", ignore_errors=True)
                times[side].append(scan(python, tree, root / side, root / f"{side}.json"))
            print(f"  round {round_}: " + ", ".join(f"{s} {times[s][-1]:.1f}s" for s in sides), flush=True)
        before, after = statistics.median(times["before"]), statistics.median(times["after"])
        print(f"before {before:.1f} s, after {after:.1f} s (medians of {args.rounds}): {before / after:.2f}x")
        same = rewrites(root / "before.json") == rewrites(root / "after.json")
        print("rewrites: " + ("identical" if same else "DIFFERENT: compare the two reports"))
        return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
