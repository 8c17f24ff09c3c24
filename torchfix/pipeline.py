"""One file through the data path: parse -> propose -> verify -> apply.

``process_file`` returns plain, picklable data (a ``FileResult``) so files can be processed in
worker processes. It never writes: emitting (diff or write) is the caller's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from codemods.apply import add_imports, apply_edits, overlaps
from codemods.base import Candidate, Edit, Proposal, Rule
from equivalence.kernel import Kernel, Outcome, Verdict
from torchfix.source import SourceError, parse, read_bytes

_SUPPRESSION = re.compile(r"#\s*torchfix:\s*ignore(?:\[([A-Z0-9, ]+)\])?", re.I)


class CheckerLike(Protocol):
    def check(self, kernel: Kernel) -> Verdict: ...


@dataclass(frozen=True)
class RewriteRecord:
    """What became of one proposal."""

    rule: str
    path: str
    line: int
    column: int
    message: str
    outcome: str
    reason: str
    candidate: str | None = None
    counterexample: str | None = None
    examples: int = 0
    devices: tuple[str, ...] = ()


@dataclass
class FileResult:
    path: str
    original: bytes | None = None
    new: bytes | None = None
    error: str | None = None
    records: list[RewriteRecord] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.new is not None and self.original is not None and self.new != self.original


def suppressed(source_lines: Sequence[str], line: int, code: str) -> bool:
    """``# torchfix: ignore`` or ``# torchfix: ignore[TFV004,...]`` on the match's first line."""
    if not 1 <= line <= len(source_lines):
        return False
    match = _SUPPRESSION.search(source_lines[line - 1])
    if match is None:
        return False
    codes = match.group(1)
    return codes is None or any(code.startswith(c.strip().upper()) for c in codes.split(",") if c.strip())


def _judge(proposal: Proposal, checker: CheckerLike, unsafe: bool) -> tuple[str, str, Candidate | None, Verdict | None]:
    """Climb the candidate ladder: the first verified candidate wins."""
    first_rejection: Verdict | None = None
    unverified: tuple[Candidate, str, Verdict | None] | None = None
    for candidate in proposal.candidates:
        if candidate.unverifiable:
            unverified = unverified or (candidate, candidate.unverifiable, None)
            continue
        verdict = checker.check(candidate.kernel)
        if verdict.outcome is Outcome.VERIFIED:
            return Outcome.VERIFIED.value, verdict.reason, candidate, verdict
        if verdict.outcome is Outcome.REJECTED:
            first_rejection = first_rejection or verdict
        elif unverified is None:
            unverified = (candidate, verdict.reason, verdict)
    if unverified is not None and unsafe:
        candidate, reason, verdict = unverified
        return Outcome.UNVERIFIED.value, reason, candidate, verdict
    if first_rejection is not None:
        return Outcome.REJECTED.value, first_rejection.reason, None, first_rejection
    if unverified is not None:
        return Outcome.UNVERIFIED.value, unverified[1], None, unverified[2]
    return Outcome.UNVERIFIED.value, "no candidate rewrite", None, None


def process_source(
    data: bytes,
    path: str,
    rules: Sequence[type[Rule]],
    checker: Callable[[], CheckerLike],
    unsafe: bool = False,
) -> FileResult:
    """Run ``rules`` over ``data``; ``checker`` is called (once) only if something needs checking."""
    result = FileResult(path, original=data)
    active = [rule for rule in rules if rule.might_match(data)]
    if not active:
        return result
    try:
        module = parse(data)
    except SourceError as exc:
        result.error = str(exc)
        return result
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    lines = module.code.splitlines()
    accepted: list[Edit] = []
    imports: list[str] = []
    for rule in active:
        for proposal in rule().propose(wrapper):
            record = dict(rule=proposal.rule, path=path, line=proposal.line, column=proposal.column, message=proposal.message)
            if suppressed(lines, proposal.line, proposal.rule):
                result.records.append(RewriteRecord(**record, outcome=Outcome.SKIPPED.value, reason="suppressed by a `# torchfix: ignore` comment"))
                continue
            if proposal.skip_reason:
                result.records.append(RewriteRecord(**record, outcome=Outcome.SKIPPED.value, reason=proposal.skip_reason))
                continue
            outcome, reason, candidate, verdict = _judge(proposal, checker(), unsafe)
            counter = verdict.counterexample.render() if verdict is not None and verdict.counterexample else None
            extra = dict(examples=verdict.examples if verdict else 0, devices=verdict.devices if verdict else ())
            if candidate is not None and any(overlaps(e.target, new.target) for e in accepted for new in candidate.edits):
                # the next run picks it up once the overlapping rewrite is in place
                result.records.append(RewriteRecord(**record, outcome=Outcome.SKIPPED.value, reason="overlaps another rewrite in this run; run torchfix again", **extra))
                continue
            if candidate is not None:
                accepted.extend(candidate.edits)
                imports.extend(candidate.imports)
            result.records.append(
                RewriteRecord(**record, outcome=outcome, reason=reason, candidate=candidate.description if candidate else None, counterexample=counter, **extra)
            )
    if accepted:
        new_module = add_imports(apply_edits(wrapper.module, accepted), imports)
        new = new_module.bytes
        try:
            parse(new)  # output always parses, or the file is left alone
        except SourceError as exc:
            result.error = f"internal error: the rewritten file does not parse ({exc}); left unchanged"
            return result
        result.new = new
    return result


def process_file(
    path: Path,
    rules: Sequence[type[Rule]],
    checker: Callable[[], CheckerLike],
    unsafe: bool = False,
    display: str | None = None,
) -> FileResult:
    name = display or str(path)
    try:
        data = read_bytes(path)
    except SourceError as exc:
        return FileResult(name, error=str(exc))
    return process_source(data, name, rules, checker, unsafe)
