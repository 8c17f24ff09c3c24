"""Checks per second on a Dask cluster against the number of workers, and the output against a
local run: ``python benchmarks/bench_dask.py [--repos 3] [--copies 2] [--workers 1,2,4]``.

1. generates a multi-repository tree from the corpus cases (``corpus/<CODE>/<case>.py``, traps
   included): ``--repos`` repositories, each holding ``--copies`` copies of the chosen cases,
   every copy with the names its functions bind renamed (``x`` -> ``x_c3``), so that every copy
   proposes kernels of its own -- copies with equal kernels would be answered from memory and
   flatter the figures;
2. runs ``torchfix`` over it locally (``--jobs 1``: one boxed worker, and the default jobs);
3. for each worker count, starts a ``LocalCluster`` of that many worker processes (one thread
   each), starts every worker's checker (torch imports, as a long-lived cluster has them), then
   runs ``torchfix --scheduler`` over the same tree, with ``speculate`` = 1 (first rungs sent
   ahead: the default); at the largest count also 0 (no rung sent ahead) and all rungs;
4. prints, per run: wall seconds, checks run (cache misses; the verdict cache is off), checks per
   second, tasks sent, and whether stdout and the JSON report (its ``seconds`` aside) are
   byte-identical to the local ``--jobs 1`` run.

The CLI runs in this process (its hooks are wrapped to count checks), with ``--no-measure`` by
default: timing noise around 1.0x may flip a decision between two runs of anything (issue 15), and
this compares outputs. ``--measure`` times verified rewrites too (each a task of its own).
"""

from __future__ import annotations

import argparse
import ast
import io
import json
import os
import re
import shutil
import sys
import tempfile
import time
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

#: cases whose checks are typical (single-digit seconds each); TFV001's vmap and TFV003's list
#: kernels are slower and would make the runs long on a 2-core machine
DEFAULT_RULES = ("TFV002", "TFV004", "TFV005", "TFV006")


def _bound_names(tree: ast.AST) -> set[str]:
    """Names the module's functions bind: parameters, assignment and loop targets."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.update(a.arg for a in node.args.args + node.args.kwonlyargs + node.args.posonlyargs)
            names.update(a.arg for a in (node.args.vararg, node.args.kwarg) if a is not None)
            for inner in ast.walk(node):
                if isinstance(inner, ast.Name) and isinstance(inner.ctx, ast.Store):
                    names.add(inner.id)
    return names


def renamed(source: str, suffix: str) -> str:
    """``source`` with every name its functions bind renamed to ``name + suffix`` (function names
    too, so copies differ in their diffs): attributes and keyword-argument names are left alone."""
    tree = ast.parse(source)
    names = _bound_names(tree) | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out = []
    depth = 0
    for k, tok in enumerate(tokens):
        if tok.type == tokenize.OP and tok.string in "([{":
            depth += 1
        elif tok.type == tokenize.OP and tok.string in ")]}":
            depth -= 1
        if tok.type == tokenize.NAME and tok.string in names:
            before = tokens[k - 1].string if k else ""
            after = next((t.string for t in tokens[k + 1:] if t.type != tokenize.NL), "")
            keyword_argument = depth > 0 and after == "=" and before in ("(", ",")
            if before != "." and not keyword_argument:
                tok = tok._replace(string=tok.string + suffix)
        out.append(tok)
    return tokenize.untokenize(out)


def generate(root: Path, repos: int, copies: int, rules: tuple[str, ...]) -> int:
    # cases with f-strings are left out: Python 3.11 tokenizes an f-string as one string, so the
    # names inside it would keep their old spelling (and a trap could stop being one)
    cases = sorted(
        p for code in rules for p in (ROOT / "corpus" / code).glob("*.py")
        if not p.name.endswith((".expected.py", ".optimum.py")) and not re.search(r"\b[fF][rR]?[\"']", p.read_text())
    )
    count = 0
    for r in range(repos):
        for c in range(copies):
            for case in cases:
                target = root / f"repo{r}" / case.parent.name / f"{case.stem}_c{c}.py"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(renamed(case.read_text(), f"_r{r}c{c}"))
                count += 1
    return count


def _run_cli(argv: list[str], cwd: Path) -> tuple[int, bytes, str]:
    from torchfix.cli import main

    old_out, old_err, old_cwd = sys.stdout, sys.stderr, os.getcwd()
    out, err = io.BytesIO(), io.StringIO()
    wrapper = io.TextIOWrapper(out, encoding="utf-8")
    sys.stdout, sys.stderr = wrapper, err
    os.chdir(cwd)
    try:
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = int(exc.code or 0)
    finally:
        sys.stdout, sys.stderr = old_out, old_err
        os.chdir(old_cwd)
        wrapper.flush()
        wrapper.detach()  # keeps ``out`` open
    return code, out.getvalue(), err.getvalue()


def _report(path: Path) -> dict:
    report = json.loads(path.read_text())
    report.pop("seconds", None)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repos", type=int, default=3)
    parser.add_argument("--copies", type=int, default=1)
    parser.add_argument("--rules", default=",".join(DEFAULT_RULES))
    parser.add_argument("--workers", default="1,2,4")
    parser.add_argument("--measure", action="store_true", help="also time verified rewrites (tasks of their own)")
    parser.add_argument("--keep", help="generate the tree here and keep it")
    args = parser.parse_args()
    os.environ["TORCHFIX_NO_CACHE"] = "1"  # every run checks everything

    import torchfix.cli as cli
    from distributed import Client, LocalCluster

    from torchfix.cluster import _quiet_dask_logs
    from torchfix.equivalence.kernel import InputSpec, Kernel

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-dask-"))
    tree = work / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    files = generate(tree, args.repos, args.copies, tuple(args.rules.split(",")))
    common = ["--examples", "100", "--seed", "0"] + ([] if args.measure else ["--no-measure"])
    common += [f"repo{r}" for r in range(args.repos)]
    print(f"tree: {files} files in {args.repos} repositories ({args.rules}); load {os.getloadavg()[0]:.1f}; "
          f"{os.cpu_count()} cores; {'with' if args.measure else 'without'} measurement", flush=True)

    rows = []
    checkers: list = []
    real_make_checker, real_make_cluster = cli.make_checker, cli.make_cluster_checker

    def counting_checker(*a, **k):  # noqa: ANN002, ANN003, ANN202
        checkers.append(real_make_checker(*a, **k))
        return checkers[-1]

    cli.make_checker = counting_checker
    started = time.perf_counter()
    code, base_out, base_err = _run_cli(["--jobs", "1", "--report", str(work / "local.json"), *common], tree)
    wall = time.perf_counter() - started
    assert code == 0, base_err[-2000:]
    checks = sum(c.checks_run for c in checkers)
    rows.append(("local --jobs 1", wall, checks, "-", True))
    print("\n".join(line for line in base_err.splitlines() if line.startswith(("TFV", "total", "rule", "files:"))), flush=True)
    print(f"  local --jobs 1: {wall:.1f}s", flush=True)
    cli.make_checker = real_make_checker
    started = time.perf_counter()
    code, out, _ = _run_cli(["--report", str(work / "local-jobs.json"), *common], tree)
    wall = time.perf_counter() - started
    rows.append((f"local --jobs {os.cpu_count()}", wall, checks, "-",
                 out == base_out and _report(work / "local-jobs.json") == _report(work / "local.json")))

    _quiet_dask_logs()
    counts = [int(w) for w in args.workers.split(",")]
    warm = Kernel("s = 0\nfor v in x:\n    s += v\n", "s = x.sum()\n", (InputSpec("x", ranks=(1,), dtypes=("int64",)),), ("s",))
    for n in counts:
        strategies = [1] + ([0, 99] if n == max(counts) else [])
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as local:
            with Client(local, set_as_default=False) as client:
                from torchfix.cluster import answer, _versions
                from torchfix.equivalence.checker import CheckSettings

                # every worker starts its checker once (torch imports), as on a long-lived cluster
                warm_request = {"message": ("check", warm, CheckSettings(examples=5, measure=False)), "timeout": 60.0,
                                "versions": _versions(), "require_sandbox": False}
                client.gather([client.submit(answer, warm_request, pure=False, workers=[w]) for w in client.scheduler_info()["workers"]])
                for speculate in strategies:
                    made: list = []

                    def cluster_checker(*a, **k):  # noqa: ANN002, ANN003, ANN202
                        made.append(real_make_cluster(*a, **k))
                        made[-1].speculate = speculate
                        return made[-1]

                    cli.make_cluster_checker = cluster_checker
                    name = f"dask {n} worker(s)" + ("" if speculate == 1 else f", speculate {'all' if speculate > 1 else 0}")
                    report = work / f"dask-{n}-{speculate}.json"
                    started = time.perf_counter()
                    code, out, err = _run_cli(["--scheduler", local.scheduler_address, "--report", str(report), *common], tree)
                    wall = time.perf_counter() - started
                    assert code == 0, err[-2000:]
                    same = out == base_out and _report(report) == _report(work / "local.json")
                    rows.append((name, wall, made[0].checks_run, made[0].tasks, same))
                    print(f"  {name}: {wall:.1f}s", flush=True)
                    cli.make_cluster_checker = real_make_cluster

    print(f"\n{'run':<34} {'seconds':>8} {'checks':>7} {'checks/s':>9} {'tasks':>6}  identical to local --jobs 1")
    for name, wall, checks, tasks, same in rows:
        print(f"{name:<34} {wall:>8.1f} {checks:>7} {checks / wall:>9.2f} {tasks!s:>6}  {'yes' if same else 'NO'}")
    print(f"load after: {os.getloadavg()[0]:.1f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
