"""How fast torchfix scans a repository, side by side with ``ast.parse`` and the PyPI linter.

    python benchmarks/bench_scan.py PATH [PATH ...] [--repeat 3] [--no-linter]

Every figure is the wall-clock time of a fresh process (interpreter start-up and imports
included), and the tools take turns round by round (A B C D E, A B C D E, ...) so machine noise
hits them alike; the table shows the median of ``--repeat`` rounds and the ratio to the baseline:

- ``ast.parse``: one process reads and ``ast.parse``-s every ``*.py`` file under PATH (the floor:
  what any Python-aware tool must at least do);
- ``torchfix -j1, cold``: our dry run in one process with the verification cache off, so every
  rewrite it finds is checked (and timed) again;
- ``torchfix, cold``: the same with the default worker count (the CPU count);
- ``torchfix -j1, warm``: a re-run over the unchanged tree, verdicts from the cache;
- ``TorchFix (PyPI)``: pytorch-labs' linter (it shares our name, so it lives in a virtual
  environment of its own, made on first use: ``--linter-venv``, torch pinned to the CPU wheel).

The goal (issue 7) is a cold dry run within 3x ``ast.parse`` on a tree with no rewrite to make; on
a tree with rewrites, checking them dominates and the warm figure is the one a re-run pays.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VENV = ROOT / ".bench" / "pypi-torchfix"
AST_SCRIPT = """
import ast, pathlib, sys, warnings
warnings.simplefilter("ignore")
files = failed = 0
for root in sys.argv[1:]:
    for path in sorted(pathlib.Path(root).rglob("*.py")):
        files += 1
        try:
            ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            failed += 1
print(files, failed)
"""


def run(command: list[str], env: dict[str, str] | None = None, ok: tuple[int, ...] = (0,)) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seconds = time.perf_counter() - start
    if ok and done.returncode not in ok:
        tail = done.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError(f"{' '.join(command[:4])}... exited {done.returncode}:\n{tail}")
    return seconds, done


def linter(venv: Path) -> Path | None:
    """The PyPI TorchFix's entry point, installing it into ``venv`` first if needed."""
    exe = venv / "bin" / "torchfix"
    if exe.exists():
        return exe
    print(f"installing the PyPI linter into {venv} (torch==2.13.0 first: the CPU wheel) ...", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        subprocess.run(pip + ["torch==2.13.0"], check=True)
        subprocess.run(pip + ["torchfix"], check=True)
    except (subprocess.CalledProcessError, OSError) as exc:
        print(f"could not install the PyPI linter ({exc}): measuring without it")
        return None
    return exe if exe.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--linter-venv", type=Path, default=DEFAULT_VENV)
    parser.add_argument("--no-linter", action="store_true")
    args = parser.parse_args(argv)
    paths = [str(p.resolve()) for p in args.paths]
    base_env = dict(os.environ, PYTHONPATH=str(ROOT))
    cold = dict(base_env, TORCHFIX_NO_CACHE="1")
    cache = tempfile.mkdtemp(prefix="torchfix-bench-cache-")
    warm = dict(base_env, TORCHFIX_CACHE_DIR=cache)
    ours = [sys.executable, "-m", "torchfix", *paths, "--quiet"]
    tools: list[tuple[str, list[str], dict[str, str], tuple[int, ...]]] = [
        ("ast.parse", [sys.executable, "-c", AST_SCRIPT, *paths], base_env, (0,)),
        ("torchfix -j1, cold", ours + ["-j", "1"], cold, (0,)),
        ("torchfix, cold", ours, cold, (0,)),
        ("torchfix -j1, warm", ours + ["-j", "1"], warm, (0,)),
    ]
    exe = None if args.no_linter else linter(args.linter_venv)
    if exe is not None:
        # the linter exits non-zero when it reports something: that is its normal output
        tools.append(("TorchFix (PyPI linter)", [str(exe), *paths], dict(os.environ), ()))

    import torch  # only for the header: versions

    print(f"{datetime.date.today()}  python {platform.python_version()}  torch {torch.__version__}  {os.cpu_count()} CPUs")
    _, listing = run(tools[0][1])
    files, failed = (int(v) for v in listing.stdout.split())
    print(f"tree: {', '.join(paths)}: {files} .py files ({failed} ast.parse cannot read)")
    _, report = run([sys.executable, "-m", "torchfix", *paths, "--format", "json", "-j", "1"], warm)  # also fills the cache
    summary = json.loads(report.stdout)["summary"]
    print(
        "torchfix: {scanned} scanned, {skipped_no_torch} skipped by the byte pre-filter, {skipped_no_candidate} by the "
        "ast skeletons, {parsed} parsed by LibCST, {rewritten} rewritten".format(**summary)
    )
    times: dict[str, list[float]] = {name: [] for name, *_ in tools}
    for round_ in range(args.repeat):
        for name, command, env, ok in tools:
            seconds, _ = run(command, env, ok)
            times[name].append(seconds)
        print(f"  round {round_ + 1}/{args.repeat} done", flush=True)
    base = statistics.median(times["ast.parse"])
    print()
    print(f"{'tool':<26} {'median s':>9} {'min s':>8} {'x ast.parse':>12}")
    for name, *_ in tools:
        median = statistics.median(times[name])
        print(f"{name:<26} {median:>9.2f} {min(times[name]):>8.2f} {median / base:>11.1f}x")
    ratio = statistics.median(times["torchfix -j1, cold"]) / base
    verdict = "met" if ratio <= 3 else "NOT met"
    print(f"\ngoal: torchfix dry run (cold, one process) <= 3x ast.parse: {ratio:.1f}x -- {verdict}"
          + ("" if summary["parsed"] == 0 else f" (this tree has {summary['parsed']} files with candidates: see the docstring)"))
    if exe is not None:
        linter_s = statistics.median(times["TorchFix (PyPI linter)"])
        print(f"the PyPI linter (default jobs) / torchfix (default jobs, cold): {linter_s / statistics.median(times['torchfix, cold']):.1f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
