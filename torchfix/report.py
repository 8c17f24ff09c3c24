"""What a run tells the user on stderr, and the machine-readable JSON report.

Per-file lines are printed as each file finishes (a bulk run shows progress); the summary table
comes at the end. The table is drawn with rich only when stderr is a terminal: logs and pipes get
plain, stable text.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import IO, Any, Sequence, TextIO

from torchfix.equivalence.kernel import Outcome
from torchfix.pipeline import FileResult, FileStatus, RewriteRecord

#: the JSON report's format: 2 since a record's ``verdict`` is the checker's own serialisation
REPORT_VERSION = 2

#: every outcome, in the summary table's column order
OUTCOMES = (Outcome.VERIFIED, Outcome.REJECTED, Outcome.UNVERIFIED, Outcome.UNMEASURED, Outcome.SKIPPED)


def record_lines(result: FileResult, show_verified: bool = True, show_skipped: bool = True) -> list[str]:
    """One line per proposal, plus the counterexample under a rejection, in file order.
    ``show_skipped``: also the proposals skipped before any check (the default CLI leaves them
    out: on a real repository they are hundreds of lines nobody acts on; the summary counts them).

    ``path: error: reason`` for a file that failed (``path: skipped: reason`` for one that was not
    read, ``path: gave up: reason`` for one that ran out of budget); ``path:line:col: CODE outcome: ...`` for each
    proposal: the message for a verified rewrite, the reason for the others.
    """
    lines: list[str] = []
    if result.error:
        kind = {FileStatus.SKIPPED: "skipped", FileStatus.GAVE_UP: "gave up"}.get(result.status, "error")
        lines.append(f"{result.path}: {kind}: {result.error}")
    for r in result.records:
        where = f"{r.path}:{r.line}:{r.column}: {r.rule}"
        if r.outcome is Outcome.VERIFIED:
            if show_verified:
                speed = r.verdict.speed_text() if r.verdict is not None else ""
                lines.append(
                    f"{where} verified: {r.message}" + (f" [{r.candidate}]" if r.candidate else "")
                    + (f" -- measured {speed}" if speed else "")
                )
            continue
        if r.skipped_unchecked and not show_skipped:
            continue  # one the checker verified and the speed decision withheld is still shown
        lines.append(f"{where} {r.outcome}: {r.reason}")
        if r.outcome is Outcome.REJECTED and r.candidate:
            lines.append(f"  refuted rewrite: {r.candidate}")
        if r.outcome is Outcome.REJECTED and r.verdict is not None and r.verdict.counterexample is not None:
            lines.append("  counterexample (shrunk):")
            lines.append(r.verdict.counterexample.render(indent="    "))
        elif r.outcome is Outcome.UNVERIFIED and r.emitted:
            lines.append(f"  emitted anyway (--unsafe): {r.candidate}")
    for line, comment in result.unused_suppressions:
        lines.append(f"{result.path}:{line}:1: unused suppression: {comment!r} silenced nothing")
    return lines


@dataclass
class Summary:
    """Counts accumulated file by file, so results can be dropped once emitted."""

    scanned: int = 0
    rewritten: int = 0
    failed: int = 0
    skipped: int = 0  # not read: not a regular file, or over the size limit
    gave_up: int = 0  # over the per-file budget
    read_only: int = 0  # rewritten, but read-only: not written (set by the CLI)
    internal: int = 0
    written: int | None = None  # set by --apply
    write_failed: int = 0
    counts: Counter = field(default_factory=Counter)  # (rule, outcome) -> n
    parsed: int = 0
    no_torch: int = 0  # skipped by the tensor pre-filter
    no_candidate: int = 0  # skipped: no rule's might_match admitted the file
    unsafe_emitted: int = 0  # unverified rewrites emitted under --unsafe
    unused_suppressions: int = 0
    #: (device, n) -> measured speedups of the emitted, verified rewrites
    speedups: dict = field(default_factory=dict)
    not_measured: int = 0  # emitted, verified rewrites whose speed was not measured
    #: the devices the checks ran on (a GPU leg left out because the old code is not GPU code counts)
    devices: set = field(default_factory=set)
    #: said after the table when the checks had no GPU to run on (set by the caller, who knows why)
    gpu_note: str | None = None
    #: skipped proposals were left out of the per-rewrite lines (set by the caller)
    skipped_hidden: bool = False
    #: proposals skipped before any check (what ``skipped_hidden`` leaves out)
    skipped_unchecked: int = 0

    def add(self, result: FileResult) -> None:
        self.scanned += 1
        self.rewritten += result.changed
        self.skipped += result.status is FileStatus.SKIPPED
        self.gave_up += result.status is FileStatus.GAVE_UP
        self.failed += bool(result.error) and result.status not in (FileStatus.SKIPPED, FileStatus.GAVE_UP)
        self.internal += result.internal
        if result.status is FileStatus.NO_TORCH:
            self.no_torch += 1
        elif result.status is FileStatus.NO_CANDIDATE:
            self.no_candidate += 1
        elif result.status is FileStatus.PARSED and not result.error:
            self.parsed += 1
        self.unused_suppressions += len(result.unused_suppressions)
        for r in result.records:
            self.counts[(r.rule, r.outcome)] += 1
            self.skipped_unchecked += r.skipped_unchecked
            if r.verdict is not None:
                self.devices.update(r.verdict.devices)
                if any(note.startswith("not checked on") for note in r.verdict.notes):
                    self.devices.add("cuda")
            self.unsafe_emitted += r.outcome is Outcome.UNVERIFIED and r.emitted
            if r.outcome is Outcome.VERIFIED and r.emitted and r.verdict is not None:
                for timing in r.verdict.timings:
                    self.speedups.setdefault((timing.device, timing.size), []).append(timing.speedup)
                self.not_measured += not r.verdict.timings

    def files_line(self) -> str:
        return (
            f"files: {self.scanned} scanned, {self.parsed} parsed, {self.no_torch} skipped (no torch), "
            f"{self.no_candidate} skipped (no candidate), {self.failed} failed"
            + (f", {self.skipped} skipped (not a regular file, or over the size limit)" if self.skipped else "")
            + (f", {self.gave_up} gave up (over the per-file budget)" if self.gave_up else "")
        )

    def notes(self) -> list[str]:
        """Lines after the table: the file breakdown, unverified rewrites emitted, suppressions."""
        lines = [self.files_line()]
        lines.extend(self.speed_lines())
        if self.unsafe_emitted:
            lines.append(f"{self.unsafe_emitted} unverified rewrite(s) emitted (--unsafe): review them, the checker did not verify them")
        unmeasured = sum(n for (_, outcome), n in self.counts.items() if outcome is Outcome.UNMEASURED)
        if unmeasured:
            lines.append(
                f"{unmeasured} verified rewrite(s) of a speed-gated form withheld: their speed was not measured "
                "(emitted with --allow-slower)"
            )
        if self.skipped_unchecked and self.skipped_hidden:
            lines.append(f"{self.skipped_unchecked} skipped proposal(s) not listed above: see each one's reason with --show-skipped (-v)")
        if self.unused_suppressions:
            lines.append(f"{self.unused_suppressions} unused suppression comment(s)")
        if self.gpu_note:
            lines.append(self.gpu_note)
        return lines

    def speed_lines(self) -> list[str]:
        """The measured speedups of the emitted rewrites: median and range per device and size."""
        import statistics

        from torchfix.equivalence.kernel import format_speedup

        lines = []
        for (device, size), values in sorted(self.speedups.items()):
            lines.append(
                f"measured speedup of {len(values)} rewrite(s) on {device} at n={size}: median "
                f"{format_speedup(statistics.median(values))} (min {format_speedup(min(values))}, max {format_speedup(max(values))})"
            )
        if self.not_measured:
            lines.append(f"{self.not_measured} rewrite(s) emitted without a speed measurement (see each one's verdict)")
        return lines

    def headline(self, seconds: float) -> str:
        def plural(n: int, word: str) -> str:
            return f"{n} {word}{'' if n == 1 else 's'}"

        text = f"{plural(self.scanned, 'file')} scanned, {self.rewritten} rewritten, {self.failed} failed"
        if self.gave_up:
            text += f", {self.gave_up} gave up"
        if self.written is not None:
            text += f", {self.written} written"
        if self.read_only:
            text += f", {self.read_only} read-only left alone"
        if self.write_failed:
            text += f", {self.write_failed} could not be written"
        return text + f" ({seconds:.1f}s)"

    def rows(self) -> list[tuple[str, list[int]]]:
        rules = sorted({rule for rule, _ in self.counts})
        rows = [(rule, [self.counts[(rule, o)] for o in OUTCOMES]) for rule in rules]
        if len(rows) > 1:
            rows.append(("total", [sum(row[1][i] for row in rows) for i in range(len(OUTCOMES))]))
        return rows


def summary_text(summary: Summary, seconds: float) -> str:
    """The summary as plain text: a headline and a rule x outcome table."""
    lines = [summary.headline(seconds)]
    rows = summary.rows()
    if not rows:
        lines.append("no rewrites proposed")
    else:
        width = max(6, *(len(rule) for rule, _ in rows))
        lines.append(f"{'rule':<{width}}  " + "  ".join(f"{o.value:>10}" for o in OUTCOMES))
        for rule, values in rows:
            lines.append(f"{rule:<{width}}  " + "  ".join(f"{v:>10}" for v in values))
    lines.extend(summary.notes())
    return "\n".join(lines)


def print_summary(summary: Summary, seconds: float, stream: TextIO, color: bool | None = None) -> None:
    """The summary on ``stream``: a rich table on a terminal, plain text otherwise.
    ``color``: None lets rich decide (it honours ``NO_COLOR``); False/True force it."""
    if not _isatty(stream):
        stream.write(summary_text(summary, seconds) + "\n")
        stream.flush()
        return
    from rich.console import Console  # only a terminal pays for importing rich
    from rich.table import Table

    console = Console(file=stream, highlight=False, markup=False, no_color=color is False or None)
    console.print(summary.headline(seconds))
    rows = summary.rows()
    if not rows:
        console.print("no rewrites proposed")
    else:
        table = Table(show_edge=False)
        table.add_column("rule")
        for outcome in OUTCOMES:
            table.add_column(outcome.value, justify="right")
        for rule, values in rows:
            table.add_row(rule, *(str(v) for v in values))
        console.print(table)
    for line in summary.notes():
        console.print(line, soft_wrap=True)


def _isatty(stream: IO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def record_json(result: FileResult) -> list[dict]:
    """The proposals of one file as JSON-ready dicts (:func:`record_to_json`)."""
    return [record_to_json(rec) for rec in result.records]


def record_to_json(rec: RewriteRecord) -> dict[str, Any]:
    """One proposal as JSON: the report's entry and the journal's, read back by
    :func:`record_from_json`. Stable keys (consumers script against them); ``verdict`` is the
    checker's own serialisation (``equivalence.cache.verdict_to_json``), the keys beside it are
    conveniences derived from it. ``fix`` and ``diff`` are those of the deciding candidate: the
    emitted one, or the refuted one of a rejection (what a reviewer reads beside its witness)."""
    from torchfix.equivalence.cache import verdict_to_json

    verdict = rec.verdict
    return {
        "rule": rec.rule,
        "path": rec.path,
        "line": rec.line,
        "column": rec.column,
        "message": rec.message,
        "outcome": rec.outcome.value,
        "reason": rec.reason,
        "fix": rec.candidate,
        "counterexample": rec.counterexample,
        "examples": verdict.examples if verdict else 0,
        "devices": list(verdict.devices) if verdict else [],
        "emitted": rec.emitted,
        "verified": rec.outcome is Outcome.VERIFIED,
        "speedup": [
            {"device": t.device, "n": t.size, "speedup": round(t.speedup, 3)} for t in verdict.timings
        ] if verdict else [],
        "diff": rec.diff,
        "replacement": list(rec.replacement) if rec.replacement else None,
        "verdict": verdict_to_json(verdict) if verdict is not None else None,
    }


def record_from_json(data: dict[str, Any]) -> RewriteRecord:
    """The record :func:`record_to_json` wrote (the derived keys are not read back)."""
    from torchfix.equivalence.cache import verdict_from_json

    replacement = data.get("replacement")
    return RewriteRecord(
        rule=data["rule"], path=data["path"], line=int(data["line"]), column=int(data["column"]),
        message=data["message"], outcome=Outcome(data["outcome"]), reason=data["reason"],
        verdict=verdict_from_json(data["verdict"]) if data.get("verdict") else None,
        candidate=data.get("fix"), emitted=bool(data.get("emitted")), diff=data.get("diff"),
        replacement=(int(replacement[0]), int(replacement[1]), str(replacement[2])) if replacement else None,
    )


def unused_json(result: FileResult) -> list[dict]:
    return [{"path": result.path, "line": line, "comment": comment} for line, comment in result.unused_suppressions]


def json_report(
    files: Sequence[dict], rewrites: Sequence[dict], seconds: float,
    summary: Summary | None = None, unused: Sequence[dict] | None = None,
) -> dict:
    report = {"version": REPORT_VERSION, "seconds": round(seconds, 3), "files": list(files), "rewrites": list(rewrites)}
    if summary is not None:
        report["summary"] = {
            "scanned": summary.scanned, "parsed": summary.parsed, "skipped_no_torch": summary.no_torch,
            "skipped_no_candidate": summary.no_candidate, "failed": summary.failed, "rewritten": summary.rewritten,
            "skipped_unread": summary.skipped, "gave_up": summary.gave_up, "read_only": summary.read_only,
            "written": summary.written, "unsafe_emitted": summary.unsafe_emitted,
            "outcomes": {outcome.value: sum(n for (_, o), n in summary.counts.items() if o is outcome) for outcome in OUTCOMES},
            "rewrites": {f"{rule}/{outcome.value}": n for (rule, outcome), n in sorted(summary.counts.items())},
            "speedups": {f"{device}/n={size}": sorted(values) for (device, size), values in sorted(summary.speedups.items())},
        }
    if unused is not None:
        report["unused_suppressions"] = list(unused)
    return report


def write_json(report: dict, stream: IO[str]) -> None:
    json.dump(report, stream, indent=2)
    stream.write("\n")
