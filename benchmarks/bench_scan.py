"""How fast torchfix's dry run scans a repository, side by side with ``ast.parse`` and the PyPI linter.

    python benchmarks/bench_scan.py /tmp/scan/fairseq                   # 3 rounds, linter included
    python benchmarks/bench_scan.py PATH [PATH ...] [--repeat 3] [--jobs J] [--linter-venv DIR] [--no-linter]

PATH is a directory (a repository checkout). Every figure is the wall-clock time of a fresh
process -- interpreter start-up and imports included, stdout to a file -- and the tools take
turns round by round (A B C D E, A B C D E, ...) so that machine noise hits them alike. The
table shows, per tool, the median and the minimum of ``--repeat`` rounds and the median's ratio
to the baseline:

- ``ast.parse``: one process reads every ``*.py`` file under PATH as bytes (so encoding cookies
  work) and ``ast.parse``-s it; files that do not parse are counted, not timed apart. The floor:
  what any Python-aware tool must at least do.
- ``torchfix -j1, cold``: ``python -m torchfix PATH --jobs 1 --format json`` with
  ``TORCHFIX_NO_CACHE=1``: one process, every rewrite found is checked (and timed) again.
- ``torchfix -jN, cold``: the same with ``--jobs`` workers (default: the CPU count).
- ``torchfix -j1, warm``: a re-run over the unchanged tree, ``TORCHFIX_CACHE_DIR`` pointing at a
  cache one untimed run filled first: the results of files LibCST parsed come from the file cache
  (``torchfix.file_cache``), their verdicts too. What a re-run in CI pays.
- ``torchfix -j1, warm verdicts``: the same with the file cache emptied before each run, so
  every file is parsed and analysed again and only the checks come from the cache: what the scan
  itself costs.
- ``TorchFix (PyPI)``: pytorch-labs' linter, ``torchfix PATH``. It shares our name, so it lives in
  a virtual environment of its own (``--linter-venv``), made on first use with ``torch==2.13.0``
  installed before it (the CPU wheel; an unpinned torch would pull a CUDA build). Its non-zero
  exit is not a failure: it exits 1 when a file fails to parse or transform.

Our exit status 2 (usage or internal error) is a failure: the stderr tail is printed and that
run is left out of the figures. The header gives the tree's file counts (ours from the JSON
report's ``summary``: scanned, dropped by the byte pre-filter, dropped by the ast skeletons,
parsed by LibCST, rewritten). The last lines are the goal of a dry run in one process within 3x
``ast.parse``, cold, warm and with verdicts alone. On a tree with rewrites to make, checking them dominates the cold
figures; the warm one is what a re-run pays.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_VENV = ROOT / ".bench" / "pypi-torchfix"
#: the pin that keeps pip from pulling a CUDA torch into the linter's venv
LINTER_TORCH = "torch==2.13.0"
GOAL = 3.0
AST_SCRIPT = """
import ast, pathlib, sys, warnings
warnings.simplefilter("ignore")
files = failed = 0
for root in sys.argv[1:]:
    for path in sorted(pathlib.Path(root).rglob("*.py")):
        if not path.is_file():
            continue
        files += 1
        try:
            ast.parse(path.read_bytes(), str(path))
        except (SyntaxError, ValueError, RecursionError, MemoryError, OSError):
            failed += 1
print(files, failed)
"""


@dataclass
class Tool:
    name: str
    command: list[str]
    env: dict[str, str]
    #: whether an exit status is a success
    ok: Callable[[int], bool]
    cwd: Path = ROOT
    #: run, untimed, before each timed run
    prepare: Callable[[], None] | None = None
    seconds: list[float] = field(default_factory=list)
    failures: int = 0
    exit_codes: list[int] = field(default_factory=list)
    stdout_lines: list[int] = field(default_factory=list)


@dataclass
class Run:
    seconds: float
    returncode: int
    stdout: Path
    stderr: Path

    def stderr_tail(self, chars: int = 2000) -> str:
        return self.stderr.read_bytes()[-chars:].decode(errors="replace")


def timed(command: list[str], env: dict[str, str], cwd: Path, scratch: Path) -> Run:
    """Run ``command`` in a fresh process, stdout and stderr to files under ``scratch``."""
    out, err = scratch / "stdout", scratch / "stderr"
    with open(out, "wb") as stdout, open(err, "wb") as stderr:
        start = time.perf_counter()
        done = subprocess.run(command, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr, check=False)
        seconds = time.perf_counter() - start
    return Run(seconds, done.returncode, out, err)


def measure(tool: Tool, scratch: Path) -> Run:
    if tool.prepare is not None:
        tool.prepare()
    run = timed(tool.command, tool.env, tool.cwd, scratch)
    tool.exit_codes.append(run.returncode)
    if tool.ok(run.returncode):
        tool.seconds.append(run.seconds)
        with open(run.stdout, "rb") as stdout:
            tool.stdout_lines.append(sum(1 for _ in stdout))
    else:
        tool.failures += 1
        print(f"  !! {tool.name} exited {run.returncode} after {run.seconds:.1f} s (left out); stderr tail:")
        print("     " + run.stderr_tail().rstrip().replace("\n", "\n     "))
    return run


def clean_env(**extra: str) -> dict[str, str]:
    """The environment minus anything that would steer torchfix's cache, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in ("TORCHFIX_NO_CACHE", "TORCHFIX_CACHE_DIR")}
    env.update(extra)
    return env


def ensure_ignored(venv: Path) -> None:
    """Keep a venv made inside the checkout out of ``git status`` (``.git/info/exclude``, not .gitignore)."""
    try:
        relative = venv.resolve().relative_to(ROOT)
    except ValueError:
        return
    git = ["git", "-C", str(ROOT)]
    if subprocess.run(git + ["check-ignore", "-q", str(venv)], capture_output=True, check=False).returncode == 0:
        return
    found = subprocess.run(git + ["rev-parse", "--git-path", "info/exclude"], capture_output=True, text=True, check=False)
    if found.returncode != 0:
        return
    exclude = Path(found.stdout.strip())
    exclude = exclude if exclude.is_absolute() else ROOT / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a") as stream:
        stream.write(f"/{relative.parts[0]}/\n")
    print(f"added /{relative.parts[0]}/ to {exclude}")


def venv_versions(venv: Path) -> dict[str, str] | None:
    """The versions of TorchFix and torch installed in ``venv``, or None when it has no PyPI TorchFix."""
    python = venv / "bin" / "python"
    if not (venv / "bin" / "torchfix").exists() or not python.exists():
        return None
    script = "import importlib.metadata as m, json; print(json.dumps({n: m.version(n) for n in ('TorchFix', 'torch')}))"
    done = subprocess.run([str(python), "-I", "-c", script], capture_output=True, text=True, check=False)
    return json.loads(done.stdout) if done.returncode == 0 else None


def linter(venv: Path) -> tuple[Path, dict[str, str]] | None:
    """The PyPI TorchFix's entry point and versions, installing it into ``venv`` first if needed."""
    ensure_ignored(venv)
    versions = venv_versions(venv)
    if versions is None:
        print(f"installing the PyPI linter into {venv} ({LINTER_TORCH} first, then torchfix) ...", flush=True)
        start = time.perf_counter()
        pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
        for step in ([sys.executable, "-m", "venv", str(venv)], pip + [LINTER_TORCH], pip + ["torchfix"]):
            try:
                done = subprocess.run(step, capture_output=True, text=True, check=False)
            except OSError as exc:
                print(f"could not install the PyPI linter ({' '.join(step[-2:])}: {exc}): measuring without it")
                return None
            if done.returncode != 0:
                tail = (done.stderr or done.stdout)[-1500:].rstrip()
                print(f"could not install the PyPI linter ({' '.join(step[-2:])} exited {done.returncode}):\n{tail}\n"
                      "measuring without it")
                return None
        versions = venv_versions(venv)
        if versions is None:
            print(f"the install left no torchfix in {venv / 'bin'}: measuring without it")
            return None
        print(f"installed in {time.perf_counter() - start:.0f} s", flush=True)
    return venv / "bin" / "torchfix", versions


def torch_version() -> str:
    try:
        import torch
    except ImportError:
        return "not installed"
    return torch.__version__


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="a directory (a repository checkout)")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the table shows medians [3]")
    parser.add_argument("--jobs", type=int, default=None, help="workers of the second torchfix run and of the linter [the CPU count]")
    parser.add_argument("--linter-venv", type=Path, default=DEFAULT_VENV, help=f"the PyPI TorchFix's venv [{DEFAULT_VENV}]")
    parser.add_argument("--no-linter", action="store_true", help="leave the PyPI linter out")
    args = parser.parse_args(argv)
    for path in args.paths:
        if not path.is_dir():
            parser.error(f"{path} is not a directory")
    if args.repeat < 1 or (args.jobs is not None and args.jobs < 1):
        parser.error("--repeat and --jobs must be >= 1")
    paths = [str(p.resolve()) for p in args.paths]
    jobs = args.jobs or os.cpu_count() or 1

    found = None if args.no_linter else linter(args.linter_venv.resolve())
    print(f"{datetime.datetime.now():%Y-%m-%d %H:%M}  python {platform.python_version()}  torch {torch_version()}  "
          f"{os.cpu_count()} CPUs  ({sys.executable})")
    if found is not None:
        print(f"PyPI linter: TorchFix {found[1]['TorchFix']} with torch {found[1]['torch']} ({found[0]})")
    elif not args.no_linter:
        print("PyPI linter: not available")

    with tempfile.TemporaryDirectory(prefix="torchfix-bench-") as tmp:
        scratch, cache = Path(tmp) / "out", Path(tmp) / "cache"
        scratch.mkdir()
        ours_env = clean_env(PYTHONPATH=os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]))
        cold = dict(ours_env, TORCHFIX_NO_CACHE="1")
        warm = dict(ours_env, TORCHFIX_CACHE_DIR=str(cache))
        ours = [sys.executable, "-m", "torchfix", *paths, "--format", "json"]
        ok_ours: Callable[[int], bool] = lambda code: code == 0  # 1 only comes with --check; 2 is an error
        tools = [
            Tool("ast.parse", [sys.executable, "-c", AST_SCRIPT, *paths], clean_env(), lambda code: code == 0),
            Tool("torchfix -j1, cold", ours + ["--jobs", "1"], cold, ok_ours),
            Tool(f"torchfix -j{jobs}, cold", ours + ["--jobs", str(jobs)], cold, ok_ours),
            Tool("torchfix -j1, warm", ours + ["--jobs", "1"], warm, ok_ours),
            # the verdicts kept, the files' results dropped: what the scan itself costs
            Tool("torchfix -j1, warm verdicts", ours + ["--jobs", "1"], warm, ok_ours,
                 prepare=lambda: shutil.rmtree(cache / "files", ignore_errors=True)),
        ]
        if found is not None:
            # its own environment: no PYTHONPATH (ours would shadow it), run away from our checkout
            env = {k: v for k, v in clean_env().items() if k != "PYTHONPATH"}
            jobs_flag = [] if args.jobs is None else ["--jobs", str(args.jobs)]
            # exit 1 = some file failed to parse/transform, its normal output; 2 = usage; < 0 = killed
            tools.append(Tool(f"TorchFix {found[1]['TorchFix']} (PyPI)", [str(found[0]), *paths, *jobs_flag], env,
                              lambda code: code in (0, 1), cwd=Path(tmp)))

        # untimed: the file counts, and the warm tool's cache filled by one run
        listing = timed(tools[0].command, tools[0].env, ROOT, scratch)
        if listing.returncode != 0:
            print(f"the ast.parse baseline failed (exit {listing.returncode}):\n{listing.stderr_tail()}")
            return 2
        files, failed = (int(v) for v in listing.stdout.read_text().split())
        print(f"tree: {', '.join(paths)}: {files} .py files, {failed} of them ast.parse cannot read")
        print("filling the warm cache (one untimed torchfix -j1 run) ...", flush=True)
        filling = timed(ours + ["--jobs", "1"], warm, ROOT, scratch)
        summary = None
        if filling.returncode == 0:
            summary = json.loads(filling.stdout.read_text()).get("summary")
        else:
            print(f"  !! it exited {filling.returncode} after {filling.seconds:.1f} s; stderr tail:\n{filling.stderr_tail()}")
        if summary:
            print("torchfix: {scanned} scanned, {skipped_no_torch} dropped by the byte pre-filter, {skipped_no_candidate} by "
                  "the ast skeletons, {parsed} parsed by LibCST, {failed} failed, {rewritten} rewritten "
                  "(untimed run: {s:.1f} s)".format(s=filling.seconds, **summary))

        for round_ in range(args.repeat):
            figures = []
            for tool in tools:
                run = measure(tool, scratch)
                figures.append(f"{tool.name} {run.seconds:.1f}s" + ("" if tool.ok(run.returncode) else " (failed)"))
            print(f"  round {round_ + 1}/{args.repeat}: " + ", ".join(figures), flush=True)

    base = statistics.median(tools[0].seconds) if tools[0].seconds else None
    print()
    print(f"{'tool':<28} {'median s':>9} {'min s':>8} {'x ast.parse':>12}")
    for tool in tools:
        if not tool.seconds:
            print(f"{tool.name:<28} {'failed':>9}")
            continue
        median = statistics.median(tool.seconds)
        ratio = f"{median / base:>11.1f}x" if base else f"{'-':>12}"
        note = f"  ({tool.failures} failed run(s) left out)" if tool.failures else ""
        print(f"{tool.name:<28} {median:>9.2f} {min(tool.seconds):>8.2f} {ratio}{note}")
    if found is not None:
        lint = tools[-1]
        print(f"\n{lint.name}: exit status {sorted(set(lint.exit_codes))}, {max(lint.stdout_lines, default=0)} lines on stdout"
              + (f"; vs torchfix -j{jobs}, cold: {statistics.median(lint.seconds) / statistics.median(tools[2].seconds):.1f}x"
                 if lint.seconds and tools[2].seconds else ""))

    print()
    for tool in (tools[1], tools[3], tools[4]):
        goal = f"{tool.name} <= {GOAL:g}x ast.parse"
        if base and tool.seconds:
            ratio = statistics.median(tool.seconds) / base
            print(f"goal: {goal}: {ratio:.1f}x -- {'met' if ratio <= GOAL else 'NOT met'}")
        else:
            print(f"goal: {goal}: unknown (a run failed)")
    return 0 if all(tool.seconds for tool in tools) else 1


if __name__ == "__main__":
    sys.exit(main())
