"""One file through the data path: read -> parse -> propose -> verify -> apply.

``process_file`` returns plain, picklable data (a :class:`FileResult`), so files can later be
processed in worker processes. It never writes: emitting (a diff, or an in-place write) is the
caller's job.

Verification climbs each proposal's candidate ladder, most idiomatic first; the first candidate the
checker verifies wins. When none does, the proposal is ``rejected`` if any candidate was refuted
(the counterexample of the first refutation is kept) and ``unverified`` otherwise. A proposal
whose rule set ``skip_reason``, that a ``# torchfix: ignore`` comment suppresses, or whose edits
overlap a rewrite accepted earlier in the same file, is ``skipped`` without running the checker.
"""

from __future__ import annotations

import enum
import io
import re
import tokenize
import traceback
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import TENSOR_ONLY_ATTRS, positions
from torchfix.codemods.apply import add_imports, apply_edits, overlaps
from torchfix.codemods.base import Candidate, Edit, Proposal, Rule
from torchfix.codemods.loops.kernels import refuse_caught, refuse_shared_writes, with_alias_pairs, with_attribute_inputs
from torchfix.codemods.syntax import SyntaxIndex, parse_tree
from torchfix.equivalence.kernel import CLEARLY_FASTER, CLEARLY_SLOWER, Kernel, Outcome, SpeedClass, Verdict
from torchfix.limits import Budget, FileLimits
from torchfix.source import GaveUp, SkippedFile, SourceError, nesting, parse, read_bytes, stdlib_tree

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_SUPPRESSION = re.compile(r"#\s*torchfix:\s*ignore(?:\[([A-Za-z0-9, ]*)\])?", re.I)
OVERLAP_REASON = "overlaps another rewrite in this file; judged again on the rewritten code"
SUPPRESSED_REASON = "suppressed by a `# torchfix: ignore` comment"
DECLINED_REASON = "declined interactively"
SLOWER_REASON = (
    f"verified, but measured clearly slower than the original (below {CLEARLY_SLOWER:g}x): {{speed}}; "
    "emitted only with --allow-slower"
)
NOT_CLEARLY_FASTER_REASON = (
    f"verified, but not measured clearly faster (at least {CLEARLY_FASTER:g}x): {{speed}}; this form is not "
    "faster by construction, so it is emitted only with --allow-slower"
)
UNMEASURED_REASON = (
    "verified, but its speed was not measured ({why}): this form is not faster by construction, "
    "so it is emitted only with --allow-slower"
)

# The pre-filter that comes before every rule's own ``might_match``: a file that mentions no tensor
# library and no tensor-only method cannot give the real rules anything to rewrite (they need
# evidence that a name is a tensor: a torch/numpy binding, a ``Tensor`` annotation, ``.item()``,
# or a method that lists and numpy arrays lack, such as ``.size(``). Files failing it are counted
# as "skipped (no torch)" and never parsed. Conservative on purpose: ``.to(`` or ``.int(`` let
# plenty of unrelated files through, which only costs a parse.
_TENSOR_CODE = re.compile(
    rb"torch|numpy|\bnp\b|Tensor|\.item\b|\.(?:"
    + b"|".join(re.escape(a.encode()) for a in sorted(TENSOR_ONLY_ATTRS, key=len, reverse=True))
    + rb")\b"
)


def mentions_tensor_code(data: bytes) -> bool:
    """The cheap pre-filter: False means no rule of ``codemods/`` can match ``data``."""
    return _TENSOR_CODE.search(data) is not None


def gated(rule: type[Rule]) -> bool:
    """Whether ``rule`` only ever matches tensor code (so :func:`mentions_tensor_code` gates it)."""
    return rule.tensor_code_only


class ResultStore(Protocol):
    """Where whole files' results are kept between runs (``torchfix.file_cache.FileResultCache``)."""

    def get(self, display: str, rules: Sequence[str], data: bytes) -> "FileResult | None": ...

    def put(self, display: str, rules: Sequence[str], data: bytes, result: "FileResult") -> None: ...


class CheckerLike(Protocol):
    def check(self, kernel: Kernel) -> Verdict: ...


#: the interactive review: sees a rewrite about to be emitted, says whether to keep it
Chooser = Callable[["RewriteRecord"], bool]

#: returns the run's checker; called only when a candidate actually needs checking, so a run
#: with nothing to check never starts a worker (nor imports torch)
CheckerFactory = Callable[[], CheckerLike]


class FileStatus(str, enum.Enum):
    """How far a file got through the data path (its ``FileResult.error`` says why it stopped)."""

    PARSED = "parsed"
    #: the tensor pre-filter (:func:`mentions_tensor_code`) left it unparsed
    NO_TORCH = "no-torch"
    #: no rule's ``might_match`` / ``might_match_tree`` admitted it
    NO_CANDIDATE = "no-candidate"
    #: unreadable, undecodable or unparsable, or torchfix crashed on it (``FileResult.internal``)
    ERROR = "error"
    #: not read: not a regular file, or over the size limit
    SKIPPED = "skipped"
    #: its budget ran out (``torchfix.limits``)
    GAVE_UP = "gave-up"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class RewriteRecord:
    """What became of one proposal (plain data: it crosses process boundaries and goes to JSON)."""

    rule: str
    path: str
    line: int
    column: int
    message: str
    outcome: Outcome
    reason: str
    #: the checker's verdict on the deciding candidate; None when nothing was checked
    verdict: Verdict | None = None
    #: description of the deciding candidate: the one applied, or the refuted one of a rejection
    candidate: str | None = None
    #: the candidate's edits are in the output (verified, or unverified under ``--unsafe``)
    emitted: bool = False
    #: the unified diff of this rewrite alone against the original file (text): the emitted one,
    #: or the refuted one of a rejection
    diff: str | None = None
    #: this rewrite alone as one replacement of whole lines: (first line, end line exclusive,
    #: the new text of those lines), 1-based -- what SARIF's ``fixes`` need
    replacement: tuple[int, int, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "outcome", Outcome(self.outcome))  # "verified" from JSON or a test

    @property
    def skipped_unchecked(self) -> bool:
        """Skipped before any check (a precondition, a suppression, an overlap): nothing a
        reviewer acts on, so the default output counts these rather than listing them."""
        return self.outcome is Outcome.SKIPPED and self.verdict is None

    @property
    def counterexample(self) -> str | None:
        if self.verdict is None or self.verdict.counterexample is None:
            return None
        return self.verdict.counterexample.render()


@dataclass
class FileResult:
    """One file's outcome. ``path`` is the display path (relative to the working directory)."""

    path: str
    original: bytes | None = None
    #: the rewritten bytes; None when nothing was accepted (or the file failed)
    new: bytes | None = None
    #: one-line reason the file was not processed (unreadable, undecodable, unparsable, internal)
    error: str | None = None
    #: the error is a bug in torchfix (a rule or checker crashed, or the output did not parse)
    internal: bool = False
    records: list[RewriteRecord] = field(default_factory=list)
    #: how far the file got; ``error`` holds the reason when it stopped short
    status: FileStatus = FileStatus.PARSED
    #: ``(line, comment)`` of suppression comments that silenced nothing (only when asked for)
    unused_suppressions: list[tuple[int, str]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.status = FileStatus(self.status)

    @property
    def changed(self) -> bool:
        return self.new is not None and self.original is not None and self.new != self.original


def _suppressed(lines: Sequence[str], candidates: Iterable[int], code: str) -> int | None:
    """The line of a ``# torchfix: ignore`` (all rules) or ``# torchfix: ignore[TFV004,TFV00]``
    that silences ``code`` among the ``candidates`` lines, or None."""
    for line in candidates:
        if not 1 <= line <= len(lines):
            continue
        match = _SUPPRESSION.search(lines[line - 1])
        if match is None:
            continue
        codes = match.group(1)
        if codes is None or any(code.startswith(c.strip().upper()) for c in codes.split(",") if c.strip()):
            return line
    return None


def suppression_comments(data: bytes) -> list[tuple[int, str]]:
    """``(line, comment text)`` of every ``# torchfix: ignore`` comment (real comments only, not
    text inside strings); empty when the file does not tokenize."""
    if b"torchfix:" not in data:
        return []
    found = []
    try:
        for token in tokenize.tokenize(io.BytesIO(data).readline):
            if token.type == tokenize.COMMENT and _SUPPRESSION.search(token.string):
                found.append((token.start[0], token.string.strip()))
    except (tokenize.TokenError, SyntaxError, UnicodeDecodeError):
        return []
    return found


def _alone(module: cst.Module, data: bytes, path: str, candidate: Candidate) -> tuple[str | None, tuple[int, int, str] | None]:
    """The diff and the line replacement of one candidate applied alone to the original module."""
    import difflib

    from torchfix.diff import split_lines, unified_diff
    from torchfix.source import declared_encoding

    new = _final_newline_kept(data, add_imports(apply_edits(module, candidate.edits), candidate.imports).bytes)
    encoding = declared_encoding(data)
    encoding = "utf-8" if encoding == "utf-8-sig" else encoding
    diff = unified_diff(data, new, path).decode(encoding)
    old_lines = split_lines(data.decode(encoding))
    new_lines = split_lines(new.decode(encoding))
    changes = [op for op in difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False).get_opcodes() if op[0] != "equal"]
    if not changes:
        return diff or None, None
    first, last = changes[0], changes[-1]
    start, end = first[1], last[2]
    inserted = "".join(new_lines[first[3] : last[4]])
    return diff, (start + 1, end + 1, inserted)


def _suppression_lines(wrapper: MetadataWrapper, lines: Sequence[str], proposal: Proposal) -> list[int]:
    """Where a suppression comment for ``proposal`` may sit: the reported line, the anchor
    statement's first line (a compound statement's header), a simple statement's last line
    (its trailing comment), and a comment-only line right above the anchor."""
    found = [proposal.line]
    try:
        position = positions(wrapper.module)[proposal.anchor]
    except KeyError:  # an anchor outside the module (a rule bug): use the reported line only
        return found
    start, end = position.start.line, position.end.line
    found.append(start)
    if isinstance(proposal.anchor, cst.SimpleStatementLine):
        found.append(end)
    if start >= 2 and lines[start - 2].lstrip().startswith("#"):
        found.append(start - 1)
    return found


@dataclass(frozen=True)
class Judgement:
    """What the climb of one proposal's ladder decided."""

    outcome: Outcome
    reason: str
    #: the candidate to apply; None when nothing is emitted
    candidate: Candidate | None
    #: the checker's verdict on the deciding candidate; None when nothing was checked
    verdict: Verdict | None
    #: the candidate a reviewer is shown beside the verdict: the applied one, or the refuted one
    #: of a rejection (whose diff goes next to its counterexample)
    shown: Candidate | None = None


def judge_proposal(proposal: Proposal, checker: CheckerFactory, unsafe: bool, allow_slower: bool = False) -> Judgement:
    """Climb the ladder, most idiomatic rung first.

    A verified candidate withheld for its speed (:func:`_withheld_for_speed`) does not end the
    climb: a later rung may be both verified and faster. If no rung is emitted, the first such one
    decides: ``skipped`` with the measurement as its reason, or ``unmeasured`` -- unless
    ``allow_slower``.
    """
    first_rejection: tuple[Candidate, Verdict] | None = None
    unverified: tuple[Candidate, str, Verdict | None] | None = None
    withheld: Judgement | None = None
    for candidate in proposal.candidates:
        if candidate.unverifiable:  # rests on an opaque callable's behaviour: never checked
            unverified = unverified or (candidate, candidate.unverifiable, None)
            continue
        verdict = checker().check(candidate.kernel)
        if verdict.outcome is Outcome.VERIFIED:
            held = None if allow_slower else _withheld_for_speed(candidate, verdict)
            if held is not None:
                withheld = withheld or held
                continue
            return Judgement(Outcome.VERIFIED, verdict.reason + _refuted_on_a_gpu_only(first_rejection), candidate, verdict, candidate)
        if verdict.outcome is Outcome.REJECTED:
            # the first refutation explains the climb; one found only on a GPU explains why a
            # rung that holds on the CPU was dropped there, so it is the one worth showing
            if first_rejection is None or (_refuted_on_a_gpu(verdict) and not _refuted_on_a_gpu(first_rejection[1])):
                first_rejection = (candidate, verdict)
        elif unverified is None:
            unverified = (candidate, verdict.reason, verdict)
    if withheld is not None:
        return withheld
    if first_rejection is not None:
        refuted, verdict = first_rejection
        return Judgement(Outcome.REJECTED, verdict.reason, None, verdict, refuted)
    if unverified is not None:
        candidate, reason, verdict = unverified
        # emitted only on explicit request (--unsafe)
        return Judgement(Outcome.UNVERIFIED, reason, candidate if unsafe else None, verdict, candidate)
    return Judgement(Outcome.UNVERIFIED, "the rule offered no candidate rewrite", None, None)


def _refuted_on_a_gpu(verdict: Verdict) -> bool:
    """Whether ``verdict``'s counterexample ran on a GPU: the legs run CPU first, so its CPU leg
    verified the rung."""
    return verdict.counterexample is not None and verdict.counterexample.device not in ("", "cpu")


def _refuted_on_a_gpu_only(rejection: tuple[Candidate, Verdict] | None) -> str:
    """What to add to a verified rung's reason where a rung above it was refuted on a GPU only:
    a machine without a GPU emits that one -- wrongly for a GPU user
    (``benchmarks/gpu_divergence.py`` looks for such rungs in bulk)."""
    if rejection is None or not _refuted_on_a_gpu(rejection[1]):
        return ""
    candidate, verdict = rejection
    device = verdict.counterexample.device  # type: ignore[union-attr]
    return f"; a rung above it, {candidate.description}, was refuted on {device} only: a machine without a GPU emits that one"


def _withheld_for_speed(candidate: Candidate, verdict: Verdict) -> Judgement | None:
    """Why a verified ``candidate`` is not emitted for its speed, or None: the decision band of
    ``equivalence.kernel`` (a measurement decides only far from 1.0x), and between its edges the
    static cost model -- a rewrite that removes a Python-level loop is faster by construction, a
    speed-gated form (``Candidate.needs_measurement``) is not. So the diff never depends on how
    loaded the machine was; only the figures in the message do."""
    speed = verdict.speed_class()
    if speed is SpeedClass.CLEARLY_SLOWER:
        return Judgement(Outcome.SKIPPED, SLOWER_REASON.format(speed=verdict.speed_text()), None, verdict, candidate)
    if not candidate.needs_measurement or speed is SpeedClass.CLEARLY_FASTER:
        return None
    if speed is SpeedClass.NOT_MEASURED:
        why = verdict.timing_note.removeprefix("speed not measured: ") or "timing is off (--no-measure)"
        return Judgement(Outcome.UNMEASURED, UNMEASURED_REASON.format(why=why), None, verdict, candidate)
    return Judgement(Outcome.SKIPPED, NOT_CLEARLY_FASTER_REASON.format(speed=verdict.speed_text()), None, verdict, candidate)


def _submit_ahead(checker: CheckerFactory, proposals: Sequence[Proposal]) -> None:
    """Hand a service that can work ahead (``torchfix.service.CheckService.submit``) the ladder of
    each proposal the climb below will judge, as the kernels of its checkable rungs in order. The
    service decides how far ahead to go; the verdicts are still asked for one by one, in order."""
    ladders = [[c.kernel for c in p.candidates if not c.unverifiable] for p in proposals if not p.skip_reason]
    _submit_ahead_kernels(checker, [ladder for ladder in ladders if ladder])


def _submit_ahead_kernels(checker: CheckerFactory, ladders: list[list[Kernel]]) -> None:
    submit = getattr(checker, "submit", None)
    if submit is not None:
        submit(ladders)


def _overlaps_accepted(proposal: Proposal, accepted: Sequence[Edit], wrapper: MetadataWrapper | None = None) -> bool:
    """Whether an edit of ``proposal`` holds, or lies inside, an accepted edit's target.

    Two nodes of one tree overlap exactly when their source spans intersect, so positions answer
    it without walking subtrees (walking made a file with many candidates quadratic: 100 loops
    took 10 s here); a target without a position (not in the module) is walked as before."""
    spans = None
    if wrapper is not None:
        try:
            spans = positions(wrapper.module)
            spans.spans()  # computed here, where a failure falls back to walking
        except Exception:  # noqa: BLE001 - positions are an optimisation only
            spans = None
    for candidate in proposal.candidates:
        for edit in candidate.edits:
            for done in accepted:
                mine = _span(spans, edit.target)
                theirs = _span(spans, done.target)
                if mine is None or theirs is None:
                    if overlaps(done.target, edit.target):
                        return True
                elif mine[0] < theirs[1] and theirs[0] < mine[1]:
                    return True
    return False


def _span(spans, node: cst.CSTNode) -> tuple[tuple[int, int], tuple[int, int]] | None:  # noqa: ANN001
    """(start, end) of ``node`` as (line, column) pairs; None when unknown or empty."""
    if spans is None:
        return None
    where = spans.get(node)
    if where is None:
        return None
    start, end = (where.start.line, where.start.column), (where.end.line, where.end.column)
    return (start, end) if start < end else None


def propose_all(rules: Sequence[type[Rule]], wrapper: MetadataWrapper) -> list[Proposal]:
    """Every rule's proposals for one module, as the checker is to judge them: each kernel told
    which of its inputs the code may pass as one array, and refused where the code catches what
    the old code raises."""
    proposals = with_alias_pairs((proposal for rule in rules for proposal in rule().propose(wrapper)), wrapper)
    return with_attribute_inputs(refuse_caught(refuse_shared_writes(proposals, wrapper), wrapper), wrapper)


def process_source(
    data: bytes,
    path: str,
    rules: Sequence[type[Rule]],
    checker: CheckerFactory,
    unsafe: bool = False,
    report_unused: bool = False,
    choose: Chooser | None = None,
    allow_slower: bool = False,
    budget: Budget | None = None,
    details: bool = True,
) -> FileResult:
    """Run ``rules`` over ``data`` (the bytes of the file shown as ``path``).

    Files no rule can match are not parsed by LibCST at all -- the cost of a bulk run is
    dominated by LibCST -- so a syntax error in such a file goes unreported: first the tensor
    pre-filter (:func:`mentions_tensor_code`, for the rules :func:`gated` says it applies to),
    then each rule's ``might_match`` on the raw bytes, then each rule's ``might_match_tree`` on
    the file's stdlib ``ast`` (:mod:`codemods.syntax`).

    ``report_unused``: list the suppression comments that silenced nothing
    (``FileResult.unused_suppressions``). ``choose``: asked before each rewrite is emitted (the
    interactive review); a rewrite it declines is reported ``skipped``. ``allow_slower``: emit
    verified rewrites even when they were measured slower than the original. ``budget``: the
    file's limits (``torchfix.limits``), checked between stages; GaveUp propagates when one runs
    out. ``details``: give each emitted record its own diff and line replacement (JSON, SARIF,
    the interactive review); each costs a pass over the whole file.

    A round that rewrites something is followed by another over its output (at most
    :data:`MAX_ROUNDS`), each rewrite verified in its own round, so that rewrites which overlapped
    one accepted earlier are judged on the code it left: the result is the final text, and a
    second run over it changes nothing. Records of later rounds point at the original file's lines.
    """
    result = FileResult(path, original=data)
    active, tensor_code, tree = _admitted(data, rules)
    if not active:
        result.status = (
            FileStatus.NO_TORCH if tensor_code is False and not any(not gated(r) for r in rules) else FileStatus.NO_CANDIDATE
        )
        if report_unused:
            result.unused_suppressions = suppression_comments(data)
        return result
    current, seen, used_suppressions = data, set(), set()
    # a later round meets again every kernel of the code no round changed: it is judged once
    checker = _RememberingChecker(checker)
    declined: set[tuple[str, int, str]] = set()
    for round_ in range(MAX_ROUNDS):
        lines_back = _line_map(current, data) if round_ else None
        try:
            done = _one_round(
                current, tree, path, active, checker, unsafe, choose, allow_slower, budget, details, declined, lines_back
            )
        except GaveUp:
            if not round_:
                raise
            break  # the budget ran out in a later round: the earlier rounds' verified output stands
        if done.error is not None:
            # nothing of the file is applied, whatever round failed (a later one failing is a rule's bug)
            result.records = [replace(r, emitted=False) if r.emitted else r for r in result.records]
            result.records += [replace(r, emitted=False) if r.emitted else r for _, r in done.records]
            result.error, result.internal, result.new = done.error, done.internal, None
            if not done.internal:  # the file itself does not parse
                result.status = FileStatus.ERROR
            return result
        if round_:
            # the rounds before this one are re-judged here: a rewrite they left out for overlapping
            # an accepted one is either proposed again (with its own outcome) or gone with the code
            result.records = [r for r in result.records if r.reason != OVERLAP_REASON]
        for key, record in done.records:
            if round_ and key in seen:
                continue  # the same finding at the same place, on code no round changed: said once
            seen.add(key)
            if round_:
                # what an earlier round said of this place without acting on it is superseded
                result.records = [
                    r for r in result.records if r.emitted or (r.rule, r.line) != (record.rule, record.line)
                ]
            result.records.append(record)
        used_suppressions.update(done.used_suppressions)
        if done.new is None or done.new == current:
            break
        # a round that rewrote something runs the rules again on its output, as ruff does, until
        # none applies: one run gives the final diff, and a second run changes nothing
        current = result.new = done.new
        active, _, tree = _admitted(current, rules)
        if not active:
            break
    if report_unused:
        result.unused_suppressions = [(n, text) for n, text in suppression_comments(data) if n not in used_suppressions]
    return result


def _admitted(data: bytes, rules: Sequence[type[Rule]]) -> tuple[list[type[Rule]], bool | None, object]:
    """The rules the pre-filters let look at ``data`` (the tensor pre-filter, each rule's
    ``might_match`` on the bytes, then its ``might_match_tree`` on the stdlib ``ast``); whether the
    tensor pre-filter passed (None: not asked); the ``ast`` tree, for the LibCST parse to reuse."""
    tensor_code: bool | None = None
    active = []
    for rule in rules:
        if gated(rule):
            if tensor_code is None:
                tensor_code = mentions_tensor_code(data)
            if not tensor_code:
                continue
        if rule.might_match(data):
            active.append(rule)
    tree = None
    if active:
        # the skeleton of each pattern, on the stdlib ast (codemods/syntax.py): about a tenth of
        # a LibCST parse. A file ast cannot parse goes on to LibCST, which says why.
        tree = parse_tree(data)
        if tree is not None:
            index = SyntaxIndex(tree)
            active = [rule for rule in active if rule.might_match_tree(index)]
    return active, tensor_code, tree


#: the most rounds of rules one file gets (each round only when the one before rewrote something)
MAX_ROUNDS = 4


@dataclass
class _Round:
    """One pass of the rules over one version of the file."""

    #: (what identifies the finding across rounds, the record)
    records: list[tuple[tuple, RewriteRecord]] = field(default_factory=list)
    #: the rewritten bytes, None when nothing was accepted
    new: bytes | None = None
    error: str | None = None
    internal: bool = False
    used_suppressions: set[int] = field(default_factory=set)


class _RememberingChecker:
    """The run's checker, asked once per kernel within one file's rounds."""

    def __init__(self, factory: CheckerFactory) -> None:
        self.factory = factory
        self.verdicts: dict[str, Verdict] = {}

    def __call__(self) -> "_RememberingChecker":
        return self

    def check(self, kernel: Kernel) -> Verdict:
        key = kernel.key()
        if key not in self.verdicts:
            self.verdicts[key] = self.factory().check(kernel)
        return self.verdicts[key]

    def judged(self, proposal: Proposal) -> bool:
        """Whether every checkable rung of ``proposal`` already has its verdict."""
        return all(c.kernel.key() in self.verdicts for c in proposal.candidates if not c.unverifiable)

    def submit(self, ladders: list[list[Kernel]]) -> None:
        # only what has not been judged yet goes ahead to a service that works ahead
        fresh = [[k for k in ladder if k.key() not in self.verdicts] for ladder in ladders]
        fresh = [ladder for ladder in fresh if ladder]
        if fresh:
            _submit_ahead_kernels(self.factory, fresh)


def _one_round(
    data: bytes, tree: object, path: str, rules: Sequence[type[Rule]], checker: "_RememberingChecker", unsafe: bool,
    choose: Chooser | None, allow_slower: bool, budget: Budget | None, details: bool,
    declined: set[tuple[str, int, str]], lines_back: Callable[[int], int] | None = None,
) -> _Round:
    """Parse ``data``, let ``rules`` propose, judge each proposal, apply the accepted ones.
    ``declined``: (rule, line, code) of the rewrites the interactive review declined in an
    earlier round; they are not asked about again. ``lines_back``: a later round's map from the
    lines of ``data`` to the original file's, which every record and suppression reports."""
    done = _Round()
    try:
        if budget is None:
            module = parse(data, tree)
        else:
            module = parse(data, tree, seconds=budget.remaining(), memory_mb=budget.limits.memory_mb or 0)
    except SourceError as exc:
        if isinstance(exc, GaveUp):
            raise
        done.error = str(exc)
        return done
    if budget is not None:
        budget.charge("after parsing")
    # the module was parsed here and is not shared: no need for the wrapper's deep copy
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    may_suppress = b"torchfix:" in data
    # line numbers as LibCST counts them (\n, \r\n, \r; str.splitlines() also splits at \f etc.),
    # only where a suppression comment may be: the module's code is a pass over the whole tree
    lines = _LINE_BREAK.split(module.code) if may_suppress else []
    accepted: list[Edit] = []
    imports: list[str] = []
    proposals = propose_all(rules, wrapper)
    suppressed_by = [
        _suppressed(lines, _suppression_lines(wrapper, lines, p), p.rule) if may_suppress else None for p in proposals
    ]
    ahead = [p for p, by in zip(proposals, suppressed_by) if by is None and not p.skip_reason]
    if budget is not None and budget.limits.max_candidates is not None:
        ahead = ahead[: budget.limits.max_candidates]  # the file gives up past them anyway
    _submit_ahead(checker, ahead)
    for proposal, by in zip(proposals, suppressed_by):
        line = lines_back(proposal.line) if lines_back else proposal.line
        base = dict(rule=proposal.rule, path=path, line=line, column=proposal.column, message=proposal.message)
        code = wrapper.module.code_for_node(proposal.anchor)

        def add(record: RewriteRecord) -> None:
            if lines_back is not None:
                # its diff is against the file as the round before left it; a whole-line
                # replacement of the original file it does not have
                record = replace(record, replacement=None)
            done.records.append(((record.rule, record.outcome, record.reason, record.line, code), record))

        if by is not None:
            done.used_suppressions.add(lines_back(by) if lines_back else by)
            add(RewriteRecord(**base, outcome=Outcome.SKIPPED, reason=SUPPRESSED_REASON))
            continue
        if proposal.skip_reason:
            add(RewriteRecord(**base, outcome=Outcome.SKIPPED, reason=proposal.skip_reason))
            continue
        # checked before verifying: a check costs seconds, and the loser would be dropped anyway
        if _overlaps_accepted(proposal, accepted, wrapper):
            add(RewriteRecord(**base, outcome=Outcome.SKIPPED, reason=OVERLAP_REASON))
            continue
        # a proposal an earlier round judged costs nothing again: it does not count against
        # --max-candidates (a file with many findings and one rewrite would give up in round 2)
        if budget is not None and not checker.judged(proposal):
            budget.candidate()
            budget.charge(f"after {budget.candidates - 1} checked candidate(s)")
        judged = judge_proposal(proposal, checker, unsafe, allow_slower)
        candidate, verdict = judged.candidate, judged.verdict
        if candidate is not None:
            diff, replacement = _alone(wrapper.module, data, path, candidate) if details else (None, None)
            record = RewriteRecord(
                **base, outcome=judged.outcome, reason=judged.reason, verdict=verdict, candidate=candidate.description,
                emitted=True, diff=diff, replacement=replacement,
            )
            asked = (proposal.rule, line, code)
            if choose is not None and (asked in declined or not choose(record)):
                declined.add(asked)
                add(RewriteRecord(**base, outcome=Outcome.SKIPPED, reason=DECLINED_REASON, verdict=verdict))
                continue
            accepted.extend(candidate.edits)
            imports.extend(candidate.imports)
            add(record)
            continue
        # a rejection shows the refuted rewrite (its diff beside the counterexample); nothing else
        # that is not emitted has a diff a reviewer would act on
        shown = judged.shown if judged.outcome is Outcome.REJECTED else None
        diff = _alone(wrapper.module, data, path, shown)[0] if shown is not None and details else None
        add(
            RewriteRecord(
                **base, outcome=judged.outcome, reason=judged.reason, verdict=verdict,
                candidate=shown.description if shown is not None else None, diff=diff,
            )
        )
    if accepted:
        if budget is not None:
            budget.charge("before the rewrite was assembled")
        new = _final_newline_kept(data, add_imports(apply_edits(wrapper.module, accepted), imports).bytes)
        try:
            parse(new, isolate=False)  # the output always parses, or the file is left alone
        except SourceError as exc:
            done.error = f"internal error: the rewritten file does not parse ({exc}); file left unchanged"
            done.internal = True
            return done
        done.new = new
    return done


def _final_newline_kept(original: bytes, new: bytes) -> bytes:
    """``new``, ending as ``original`` did: LibCST drops the last ``\r`` of a file whose lines end
    in a lone CR (old Mac line endings), a byte change no rewrite asked for."""
    if original.endswith(b"\r") and not new.endswith((b"\r", b"\n")):
        return new + b"\r"
    return new


def _line_map(current: bytes, original: bytes) -> Callable[[int], int]:
    """Line ``n`` of ``current`` (a later round's input) as the line of ``original`` it stands
    for: the same line where the rounds between left it alone; in code they changed, the most
    similar line of the original code replaced, else its first line -- so every record points
    into the file the diff applies to."""
    import difflib

    old = _LINE_BREAK.split(original.decode("latin-1"))
    new = _LINE_BREAK.split(current.decode("latin-1"))
    blocks = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()

    def back(line: int) -> int:
        index = line - 1
        for tag, o1, o2, n1, n2 in blocks:
            if not n1 <= index < n2:
                continue  # (a deleted block holds no line of ``current``)
            if tag == "equal":
                return o1 + (index - n1) + 1
            # a changed block: the original line of the block most like this one (the same text,
            # or the line whose value a rewrite changed and whose comment it kept), else where
            # the block starts
            scored = [(difflib.SequenceMatcher(None, old[j], new[index]).ratio(), -j) for j in range(o1, o2)]
            best = max(scored, default=(0.0, -o1))
            return -best[1] + 1 if best[0] >= 0.6 else o1 + 1
        return len(old)

    return back


def _describe_crash(exc: BaseException) -> str:
    """``Type: message (at file:line)`` -- where in torchfix it broke, for a bug report."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
    message = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {message}{where}"


def process_file(
    path: Path | str,
    rules: Sequence[type[Rule]],
    checker_factory: CheckerFactory,
    unsafe: bool = False,
    display: str | None = None,
    report_unused: bool = False,
    choose: Chooser | None = None,
    allow_slower: bool = False,
    limits: FileLimits | None = None,
    details: bool = True,
    results: ResultStore | None = None,
) -> FileResult:
    """Read and process one file. Never raises for a bad file or a crash in a rule or the checker:
    such failures come back as ``FileResult.error`` (``internal=True`` for crashes), so one bad
    file never stops a bulk run; nor for a file that outruns ``limits`` (status "skipped" or
    "gave-up"). KeyboardInterrupt still propagates.

    ``results``: whole files' results kept between runs (``torchfix.file_cache``), asked before
    anything is parsed and given every result; not used when someone is asked (``choose``)."""
    name = display or str(path)
    limits = limits if limits is not None else FileLimits()
    try:
        data = read_bytes(Path(path), limits.max_bytes)
    except SkippedFile as exc:
        return FileResult(name, error=str(exc), status=FileStatus.SKIPPED)
    except SourceError as exc:
        return FileResult(name, error=str(exc), status=FileStatus.ERROR)
    codes = [rule.code for rule in rules]
    if results is not None and choose is None:
        stored = results.get(name, codes, data)
        if stored is not None:
            return stored
    try:
        result = process_source(
            data, name, rules, checker_factory, unsafe, report_unused, choose, allow_slower, Budget(limits), details
        )
    except GaveUp as exc:
        # what was checked so far is dropped with the file: nothing of it is emitted
        return FileResult(name, error=str(exc), status=FileStatus.GAVE_UP)
    except RecursionError as exc:
        _reraise_interrupt(exc)
        # deep code the parse guard let through can still be too deep for a rule's own recursion
        depth = _nesting_of(data)
        if depth is not None and depth > 100:
            return FileResult(name, error=f"does not parse: nested too deeply for torchfix's rules ({depth} levels)", status=FileStatus.ERROR)
        return FileResult(name, original=data, error=f"internal error: {_describe_crash(exc)}", internal=True, status=FileStatus.ERROR)
    except Exception as exc:  # a bug in a rule, the applier or the checker, not in the user's file
        _reraise_interrupt(exc)
        return FileResult(name, original=data, error=f"internal error: {_describe_crash(exc)}", internal=True, status=FileStatus.ERROR)
    if results is not None and choose is None:
        results.put(name, codes, data, result)
    return result


def _reraise_interrupt(exc: BaseException) -> None:
    """Raise the KeyboardInterrupt (Ctrl-C, or the SIGTERM handler's) that ``exc`` took the place
    of, if any: a library's cleanup that fails while the interrupt unwinds it raises its own error
    instead (LibCST's position provider looks up a child it never finished: a `KeyError`), which
    must stop the run, not be reported as one file's internal error while the run goes on."""
    seen: set[int] = set()
    current = exc.__context__
    while current is not None and id(current) not in seen:
        if isinstance(current, KeyboardInterrupt):
            raise current
        seen.add(id(current))
        current = current.__context__


def _nesting_of(data: bytes) -> int | None:
    try:
        tree = stdlib_tree(data)
    except SourceError:
        return None
    return nesting(tree).depth if tree is not None else None
