"""Does the rewrite a CPU-only machine emits hold on a GPU?

A machine without a GPU checks on the CPU alone and emits the first rung of each ladder that the
CPU verifies. A machine with one also checks on CUDA, with the GPU as the default device, and drops
a rung that CUDA refutes -- so the two machines can emit different patches, and the CPU-only one a
patch that is wrong on a GPU (a `.cpu()` where `torch.tensor` follows the default device, an
ndarray added into a GPU tensor). The report of a GPU run shows only the first refutation of a
climb that ends verified on a later rung, so such a divergence is easy to miss there.

This script finds them: for every proposal of every rule in the files given, it judges the ladder
as the pipeline does on a CPU-only machine (``pipeline.judge_proposal``: rungs in order, a
speed-gated one withheld unmeasured) and checks the rung it emits on CUDA alone. Each pick CUDA
does not verify is printed with its verdict; the exit status is 1 when CUDA refutes one. It
judges the proposals of the file as written (the pipeline's first round): a proposal that
overlaps an emitted one is judged here too, and what later rounds propose on the rewritten file
is not; suppression comments are not read.
Run it on a machine with a GPU (benchmarks/device_check.sh does):

    python benchmarks/gpu_divergence.py corpus/ --jobs 14 --json divergence.json

Without a GPU it only climbs on the CPU and says so (exit status 2).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
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
from torchfix.pipeline import judge_proposal, propose_all  # noqa: E402


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.py") if not p.name.endswith((".expected.py", ".optimum.py")))
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
                for proposal in propose_all(select_rules(), MetadataWrapper(module)):
                    if not proposal.skip_reason:
                        rows += _pick(proposal, path, on_cpu, on_gpu if gpu else None)
            except (cst.ParserSyntaxError, UnicodeDecodeError, OSError):
                continue
            except Exception as exc:  # noqa: BLE001 - one file's failure is reported, not the share's
                rows.append({"path": str(path), "line": 0, "rule": "", "rung": "", "cpu": "",
                             "error": f"{type(exc).__name__}: {exc}"})
    return rows


def _pick(proposal: Proposal, path: Path, on_cpu: Checker, on_gpu: Checker | None) -> list[dict]:
    """The rung the pipeline emits for ``proposal`` on a CPU-only machine (its own judgement:
    the ladder climbed in order, a speed-gated rung withheld unmeasured), checked on CUDA."""
    judged = judge_proposal(proposal, lambda: on_cpu, unsafe=False)
    if judged.outcome is not Outcome.VERIFIED or judged.candidate is None:
        return []
    candidate = judged.candidate
    row = {"path": str(path), "line": proposal.line, "rule": proposal.rule, "rung": candidate.description, "cpu": judged.reason}
    if on_gpu is not None:
        cuda = on_gpu.check(candidate.kernel)
        row.update(
            cuda_outcome=cuda.outcome.value, cuda=cuda.reason,
            counterexample=cuda.counterexample.render() if cuda.counterexample else None,
        )
    return [row]


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
    # spawn: this process may have started CUDA (to ask whether there is a GPU), which a forked
    # child cannot use
    with ProcessPoolExecutor(max_workers=args.jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = list(pool.map(_picks, shares, [gpu] * len(shares), [args.timeout] * len(shares)))
    rows = [row for found in results for row in found]
    for row in rows:
        if "error" in row:
            print(f"{row['path']}: not examined: {row['error']}")
    rows = [row for row in rows if "error" not in row]
    refuted = [row for row in rows if gpu and row["cuda_outcome"] == Outcome.REJECTED.value]
    unverified = [row for row in rows if gpu and row["cuda_outcome"] not in (Outcome.VERIFIED.value, Outcome.REJECTED.value)]
    for row in refuted + unverified:
        print(f"{row['path']}:{row['line']}: {row['rule']} [{row['rung']}] verified on the CPU; on CUDA {row['cuda_outcome']}: {row['cuda']}")
        if row["counterexample"]:
            print("    " + row["counterexample"].replace("\n", "\n    "))
    if args.json:
        Path(args.json).write_text(json.dumps({"gpu": gpu, "picks": rows}, indent=1))
    elapsed = time.perf_counter() - started
    if not gpu:
        print(f"no GPU here: {len(rows)} CPU picks in {len(files)} files, none checked on CUDA ({elapsed:.0f} s)")
        return 2
    print(f"{len(rows)} CPU picks in {len(files)} files; {len(refuted)} refuted on CUDA, {len(unverified)} not verified there"
          f" (a timeout, or an old code that raises on every CUDA input) ({elapsed:.0f} s)")
    return 1 if refuted else 0


if __name__ == "__main__":
    sys.exit(main())
