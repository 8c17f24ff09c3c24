"""``python -m torchfix.equivalence OLD.py:func NEW.py:func`` -- check that two functions agree.

The old function defines its own domain: every input on which it runs must give the same result
(value, Python type, dtype, shape, device), leave its tensor arguments in the same state, and --
unless ``--no-gradients`` -- give the same gradients.

This runs the two files' code (every top-level statement, then the functions): it is for code
you trust. This process only parses the files; the code runs in the checker's worker, after the
same static vetting as a rewrite's kernel (``equivalence.policy``: only torch / numpy / math
callees from its table, no other imports, no dunders) and inside the same sandbox
(``equivalence.sandbox``).

Exit codes: 0 equivalent, 1 refuted, 3 inconclusive (no admitted input, too few examples, the
budget ran out), 2 usage error.
"""

from __future__ import annotations

import argparse
import json
import re
import shlex
import sys
import tempfile
from pathlib import Path

from torchfix.equivalence.functions import UsageError, kernel_from_functions
from torchfix.equivalence.kernel import Outcome, Verdict

EXIT = {Outcome.VERIFIED: 0, Outcome.REJECTED: 1, Outcome.UNVERIFIED: 3, Outcome.SKIPPED: 3}
_DTYPE = re.compile(r"\b(bfloat16|float16|float32|float64|int64|int32|int16|int8|uint8|bool|int|float)\b")


def _split(target: str) -> tuple[Path, str]:
    path, sep, func = target.rpartition(":")
    if not sep or not path or not func.isidentifier():
        raise UsageError(f"{target!r}: expected FILE.py:function")
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path}: no such file")
    return file, func


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m torchfix.equivalence",
        description="Check that NEW computes what OLD computes on every input OLD accepts.",
        epilog=(
            "This executes the code of both files (every top-level statement, then the functions): use it "
            "on code you trust. The code runs only in the checker's worker, after static vetting (known "
            "torch/numpy/math callees only) and inside its OS sandbox (bubblewrap) where one can be set up."
        ),
    )
    parser.add_argument("old", metavar="OLD.py:func")
    parser.add_argument("new", metavar="NEW.py:func")
    parser.add_argument("--device", choices=("cpu", "cuda", "all"), default=None,
                        help="where to run (default: all available: cpu, plus cuda with a GPU)")
    parser.add_argument("--examples", type=int, default=200, help="hypothesis examples per device (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="seed for input generation (default 0)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds for the whole check (default 120)")
    parser.add_argument("--no-gradients", action="store_true", help="do not compare gradients")
    parser.add_argument("--reorders-float-reduction", action="store_true",
                        help="NEW sums floats in another order: widen float tolerances by reduction length")
    parser.add_argument("--replay", metavar="WITNESS.json", help="re-run old and new on a stored witness only")
    parser.add_argument("--witness", metavar="PATH", help="where to write the witness of a refutation")
    parser.add_argument("--no-cache", action="store_true", help="do not use the verification cache")
    return parser


def _devices(choice: str | None) -> tuple[str, ...]:
    from torchfix.equivalence.checker import available_devices

    available = available_devices()
    if choice in (None, "all"):
        return available
    if choice not in available:
        raise UsageError(f"--device {choice}: no such device here (available: {', '.join(available)})")
    return (choice,)


def _witness_path(args: argparse.Namespace, key: str) -> Path:
    if args.witness:
        return Path(args.witness)
    from torchfix.equivalence.cache import default_cache_dir

    base = default_cache_dir() or Path(tempfile.gettempdir()) / "torchfix"
    return base / "witnesses" / f"{key}.json"


def _dtypes(verdict: Verdict) -> list[str]:
    found = {m for s in verdict.signatures for m in _DTYPE.findall(s)}
    return sorted(found)


def report(verdict: Verdict, args: argparse.Namespace, out=sys.stdout) -> None:
    label = {Outcome.VERIFIED: "EQUIVALENT", Outcome.REJECTED: "REFUTED"}.get(verdict.outcome, "INCONCLUSIVE")
    print(f"verdict: {label} -- {verdict.reason}", file=out)
    print(f"devices: {', '.join(verdict.devices) or '-'}", file=out)
    print(f"examples compared: {verdict.examples}", file=out)
    if verdict.signatures:
        print(f"dtypes covered: {', '.join(_dtypes(verdict))}", file=out)
        print("signatures:", file=out)
        for sig in verdict.signatures:
            print(f"  {sig or '(no inputs)'}", file=out)
    for note in verdict.notes:
        print(f"note: {note}", file=out)
    cex = verdict.counterexample
    if cex is None:
        return
    print("witness (shrunk to a minimal input):", file=out)
    print(cex.render("  "), file=out)
    if cex.witness:
        path = Path(args.replay) if args.replay else _witness_path(args, _witness_key(cex.witness))
        if not args.replay:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(cex.witness)
        cmd = ["python", "-m", "torchfix.equivalence", args.old, args.new, "--replay", str(path)]
        print(f"replay: {shlex.join(cmd)}", file=out)
    if not args.replay:
        again = ["python", "-m", "torchfix.equivalence", args.old, args.new, "--seed", str(args.seed),
                 "--examples", str(args.examples)]
        if args.device:
            again += ["--device", args.device]
        print(f"re-run the search: {shlex.join(again)}", file=out)


def _witness_key(witness: str) -> str:
    import hashlib

    return "witness-" + hashlib.sha256(witness.encode()).hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        old_file, old_func = _split(args.old)
        new_file, new_func = _split(args.new)
        if args.examples < 1:
            raise UsageError("--examples must be at least 1")
        kernel = kernel_from_functions(
            old_file.read_text(), old_func, new_file.read_text(), new_func,
            gradients=not args.no_gradients, old_label=str(old_file), new_label=str(new_file),
        )
        if args.reorders_float_reduction:
            from dataclasses import replace

            kernel = replace(kernel, reorders_float_reduction=True)
        witness = None
        if args.replay:
            try:
                witness = Path(args.replay).read_text()
                meta = json.loads(witness)
            except (OSError, ValueError) as exc:
                raise UsageError(f"--replay {args.replay}: {exc}") from None
            device = args.device if args.device not in (None, "all") else meta.get("device", "cpu")
            devices = _devices(device)
        else:
            devices = _devices(args.device)
    except UsageError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    from torchfix.equivalence.checker import Checker, CheckSettings
    from torchfix.equivalence.sandbox import SandboxUnavailable

    # the report says nothing of speed: timing old vs new would only cost the wait
    settings = CheckSettings(examples=args.examples, timeout=args.timeout, seed=args.seed, devices=devices, measure=False)
    cache = None if args.no_cache or args.replay else ...
    with Checker(settings, **({} if cache is ... else {"cache_dir": None})) as checker:
        try:
            warning = checker.isolation().warning()
        except SandboxUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if warning:
            print(warning, file=sys.stderr)
        verdict = checker.replay(kernel, witness, devices[0]) if witness is not None else checker.check(kernel)
    report(verdict, args)
    return EXIT[verdict.outcome]


if __name__ == "__main__":
    sys.exit(main())
