"""The summary on stderr and the machine-readable JSON report."""

from __future__ import annotations

import json
from collections import Counter
from typing import IO, Sequence

from torchfix.pipeline import FileResult

OUTCOMES = ("verified", "rejected", "unverified", "skipped")


def record_lines(results: Sequence[FileResult], verbose_verified: bool = True) -> list[str]:
    """One line per proposal (and the counterexample under a rejection), in file order."""
    lines: list[str] = []
    for result in results:
        if result.error:
            lines.append(f"{result.path}: error: {result.error}")
        for r in result.records:
            if r.outcome == "verified" and not verbose_verified:
                continue
            lines.append(f"{r.path}:{r.line}:{r.column}: {r.rule} {r.outcome}: {r.message}")
            if r.outcome != "verified":
                lines.append(f"    reason: {r.reason}")
            if r.counterexample:
                lines.append("    counterexample (shrunk):")
                lines.extend("    " + text for text in r.counterexample.splitlines())
    return lines


def summary_table(results: Sequence[FileResult], seconds: float, written: int | None) -> str:
    counts: Counter[tuple[str, str]] = Counter()
    for result in results:
        for r in result.records:
            counts[(r.rule, r.outcome)] += 1
    rules = sorted({rule for rule, _ in counts})
    scanned = len(results)
    failed = sum(1 for r in results if r.error)
    changed = sum(1 for r in results if r.changed)
    lines = [
        f"{scanned} file{'s' if scanned != 1 else ''} scanned, {changed} with rewrites, {failed} failed"
        + (f", {written} written" if written is not None else "")
        + f" ({seconds:.1f}s)"
    ]
    if rules:
        width = max(6, *(len(r) for r in rules))
        lines.append(f"{'rule':<{width}}  " + "  ".join(f"{o:>10}" for o in OUTCOMES))
        for rule in rules:
            lines.append(f"{rule:<{width}}  " + "  ".join(f"{counts[(rule, o)]:>10}" for o in OUTCOMES))
        totals = "  ".join(f"{sum(counts[(r, o)] for r in rules):>10}" for o in OUTCOMES)
        lines.append(f"{'total':<{width}}  {totals}")
    else:
        lines.append("no rewrites proposed")
    return "\n".join(lines)


def json_report(results: Sequence[FileResult], seconds: float) -> dict:
    return {
        "version": 1,
        "seconds": round(seconds, 3),
        "files": [
            {
                "path": r.path,
                "changed": r.changed,
                "error": r.error,
            }
            for r in results
        ],
        "rewrites": [
            {
                "rule": rec.rule,
                "path": rec.path,
                "line": rec.line,
                "column": rec.column,
                "message": rec.message,
                "outcome": rec.outcome,
                "reason": rec.reason,
                "fix": rec.candidate,
                "counterexample": rec.counterexample,
                "examples": rec.examples,
                "devices": list(rec.devices),
            }
            for r in results
            for rec in r.records
        ],
    }


def write_json(results: Sequence[FileResult], seconds: float, stream: IO[str]) -> None:
    json.dump(json_report(results, seconds), stream, indent=2)
    stream.write("\n")
