"""Does the rewrite a CPU-only machine emits hold on a GPU?

A machine without a GPU checks on the CPU alone and emits the first rung of each ladder that the
CPU verifies. A machine with one also checks on CUDA, with the GPU as the default device, and drops
a rung that CUDA refutes -- so the two machines can emit different patches, and the CPU-only one a
patch that is wrong on a GPU (a `.cpu()` where `torch.tensor` follows the default device, an
ndarray added into a GPU tensor). The report of a GPU run shows only the first refutation of a
climb that ends verified on a later rung, so such a divergence is easy to miss there.

This script finds them: for every proposal of every rule in the files given, it climbs the ladder
on the CPU alone, as a CPU-only machine does, and checks the rung the CPU picked on CUDA alone.
Each pick CUDA does not verify is printed with its verdict; the exit status is 1 when there is one.
Run it on a machine with a GPU (benchmarks/device_check.sh does):

    python benchmarks/gpu_divergence.py corpus/ --jobs 14 --json divergence.json

Without a GPU it only climbs on the CPU and says so (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from torchfix.codemods.base import Proposal  # noqa: E402
from torchfix.codemods.registry import select_rules  # noqa: E402
from torchfix.equivalence.checker import Checker, CheckSettings, available_devices  # noqa: E402
from torchfix.equivalence.kernel import Outcome  # noqa: E402
from torchfix.pipeline import propose_all  # noqa: E402


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.py") if not p.name.endswith(".expected.py"))
        else:
            found.append(path)
    return found


def _ladders(paths: list[Path], timeout: float) -> None:
    """Every rung of every ladder in ``paths`` checked as a machine with a GPU checks it (cpu, then
    cuda), with its verdict and time: where a GPU run emits another rung than a CPU-only one."""
    with Checker(CheckSettings(measure=False, timeout=timeout, devices=available_devices())) as checker:
        for path in paths:
            module = cst.parse_module(path.read_bytes())
            for proposal in propose_all(select_rules(), MetadataWrapper(module)):
                for candidate in proposal.candidates:
                    started = time.perf_counter()
                    verdict = checker.check(candidate.kernel)
                    print(
                        f"{path}:{proposal.line}: {proposal.rule} [{candidate.description}] {verdict.outcome.value} "
                        f"in {time.perf_counter() - started:.1f} s: {verdict.reason}"
                    )
                    if verdict.counterexample is not None:
                        print("    " + verdict.counterexample.render().replace("\n", "\n    "))


def _picks(paths: list[Path], gpu: bool, timeout: float) -> list[dict]:
    """Every proposal's CPU pick in ``paths``, and what CUDA makes of it (one worker of each kind
    for the whole share: starting one costs a second or two)."""
    rows: list[dict] = []
    with Checker(CheckSettings(measure=False, timeout=timeout)) as on_cpu, Checker(
        CheckSettings(measure=False, timeout=timeout, devices=("cuda",))
    ) as on_gpu:
        for path in paths:
            try:
                module = cst.parse_module(path.read_bytes())
            except (cst.ParserSyntaxError, UnicodeDecodeError, OSError):
                continue
            for proposal in propose_all(select_rules(), MetadataWrapper(module)):
                if not proposal.skip_reason:
                    rows += _pick(proposal, path, on_cpu, on_gpu if gpu else None)
    return rows


def _pick(proposal: Proposal, path: Path, on_cpu: Checker, on_gpu: Checker | None) -> list[dict]:
    for candidate in proposal.candidates:
        if candidate.unverifiable:
            continue
        cpu = on_cpu.check(candidate.kernel)
        if cpu.outcome is not Outcome.VERIFIED:
            continue
        # the CPU-only machine emits this rung
        row = {"path": str(path), "line": proposal.line, "rule": proposal.rule, "rung": candidate.description, "cpu": cpu.reason}
        if on_gpu is not None:
            cuda = on_gpu.check(candidate.kernel)
            row.update(
                cuda_outcome=cuda.outcome.value, cuda=cuda.reason,
                counterexample=cuda.counterexample.render() if cuda.counterexample else None,
            )
        return [row]
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="*", default=["corpus"])
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds one check may take")
    parser.add_argument("--json", help="write every pick and its CUDA verdict here")
    parser.add_argument("--ladders", action="store_true", help="instead: every rung's verdict on this machine's devices")
    args = parser.parse_args(argv)
    if args.ladders:
        _ladders(_files(args.paths), args.timeout)
        return 0
    gpu = "cuda" in available_devices()
    files = _files(args.paths)
    started = time.perf_counter()
    shares = [files[k:: args.jobs] for k in range(args.jobs)]
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(_picks, shares, [gpu] * len(shares), [args.timeout] * len(shares)))
    rows = [row for found in results for row in found]
    diverged = [row for row in rows if gpu and row["cuda_outcome"] != Outcome.VERIFIED.value]
    for row in diverged:
        print(f"{row['path']}:{row['line']}: {row['rule']} [{row['rung']}] verified on the CPU; on CUDA {row['cuda_outcome']}: {row['cuda']}")
        if row["counterexample"]:
            print("    " + row["counterexample"].replace("\n", "\n    "))
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": gpu, "picks": rows}, indent=1))
    elapsed = time.perf_counter() - started
    if not gpu:
        print(f"no GPU here: {len(rows)} CPU picks in {len(files)} files, none checked on CUDA ({elapsed:.0f} s)")
        return 2
    print(f"{len(rows)} CPU picks in {len(files)} files; {len(diverged)} not verified on CUDA ({elapsed:.0f} s)")
    return 1 if diverged else 0


if __name__ == "__main__":
    sys.exit(main())
