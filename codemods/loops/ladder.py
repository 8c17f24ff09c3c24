"""From a loop's facts to a proposal: the candidate ladder, most idiomatic rung first.

Each rung is :func:`rewrite.lift_loop` under other :class:`rewrite.Options`: first what the
function shows (ranks it pins, a count that is a size, an allocation made only for the loop),
then the defensive forms (the allocation kept, the count clamped at zero, an empty batch
guarded). Rungs that come out the same are offered once. The checker decides which rung holds;
the pipeline emits the first one it cannot refute.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable

import libcst as cst

from torchfix.codemods.base import Candidate, Proposal
from torchfix.codemods.loops.lift import FLOAT32_NUMBERS
from torchfix.codemods.loops.facts import LoopFacts, StepKind, loop_facts, with_body
from torchfix.codemods.loops import sweep
from torchfix.codemods.loops.inplace import inplace_chain_loop, is_inplace_chain
from torchfix.codemods.loops.nodes import names_used
from torchfix.codemods.loops.nodes import statement_code
from torchfix.codemods.loops.ranks import fewest_dims
from torchfix.codemods.loops.rewrite import CannotRewrite, LoopRewrite, Options, lift_loop, vmap_loop
from torchfix.equivalence.kernel import Kind


def rungs(facts: LoopFacts) -> list[Options]:
    """The options to try, in order."""
    ladder = [Options(), Options(replace_allocation=False)]
    stop = facts.domain.stop
    if stop is not None and facts.domain.measures is None and not isinstance(stop, cst.Integer):
        ladder += [Options(clamp=True), Options(replace_allocation=False, clamp=True)]
    ladder += [Options(guard_empty=True), Options(replace_allocation=False, guard_empty=True)]
    if any(step.kind is StepKind.GUARD for step in facts.steps):
        # a guard's statements may evaluate invariant parts the loop reached only for some samples
        ladder += [replace(o, guard_any=True) for o in ladder]
    return ladder


#: ranks tried for a walked tensor whose rank nothing pins: rows of a matrix first (the usual
#: batch of vectors), then a vector of numbers, then a batch of matrices
HYPOTHETICAL_RANKS = (2, 1, 3)
#: ranks tried for an invariant operand whose rank nothing pins, after the rung that assumes it
#: broadcasts against a sample
INVARIANT_RANKS = (1, 2)


def hypotheses(
    names: frozenset[str], order: tuple[int, ...] = (), floors: dict[str, int] | None = None,
) -> list[tuple[tuple[str, int], ...]]:
    """Rank hypotheses for ``names``: every name of the same rank, in ``order`` (what the use
    suggests) else :data:`HYPOTHETICAL_RANKS` order -- but never below the dimensions the loop
    itself takes from a name (``floors``: ``x[i, :, :]`` is at least 3-D)."""
    ordered = sorted(names)
    floors = floors or {}
    found = [tuple((n, max(rank, floors.get(n, 0))) for n in ordered) for rank in order or HYPOTHETICAL_RANKS]
    return list(dict.fromkeys(found))


class _Reads:
    """A rung's :class:`Options` as :func:`lift_loop` sees them, noting each field it reads."""

    __slots__ = ("_options", "read")

    def __init__(self, options: Options) -> None:
        self._options = options
        self.read: dict[str, object] = {}

    def __getattr__(self, name: str) -> object:
        value = getattr(self._options, name)
        self.read[name] = value
        return value


def _lift(facts: LoopFacts, options: Options, torch_name: str, failures: list[tuple[dict[str, object], CannotRewrite]]) -> LoopRewrite:
    """:func:`lift_loop`, except where an earlier rung of the same loop failed having read only
    fields this rung holds the same values in: the lift is a function of the facts, the fields it
    reads and ``torch_name``, so it would fail the same way, and that failure is raised again.
    Most loops of a real tree lift under no rung; each of a dozen rungs and their rank
    hypotheses repeated the same walk up to the same early failure."""
    for read, exc in failures:
        if all(getattr(options, name) == value for name, value in read.items()):
            raise exc.with_traceback(None)
    reads = _Reads(options)
    try:
        return lift_loop(facts, reads, torch_name)  # type: ignore[arg-type]
    except CannotRewrite as exc:
        failures.append((reads.read, exc))
        raise


@dataclass
class _Climb:
    """What the rungs tried so far produced."""

    found: list[Candidate] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    #: the failures of the loop's lifts so far, each with the option fields it read (``_lift``)
    failures: list[tuple[dict[str, object], CannotRewrite]] = field(default_factory=list)
    failure: CannotRewrite | None = None
    first: LoopRewrite | None = None
    #: some rung failed because a walked name is shown to be a NumPy array
    arrays: bool = False
    #: some rung needed the rank of a sample nothing pins
    needed_rank: bool = False

    def offer(self, rewrite: LoopRewrite) -> None:
        if rewrite.kernel.new in self.seen:
            return
        self.seen.add(rewrite.kernel.new)
        self.first = self.first or rewrite
        description = rewrite.description
        if rewrite.assumptions:
            description += " (assumes " + "; ".join(rewrite.assumptions) + ")"
        unverifiable = None
        if rewrite.opaque_callees:
            names = ", ".join(f"`{c}`" for c in rewrite.opaque_callees)
            unverifiable = f"assumes {names} treats the samples of a batch independently (false for BatchNorm in training mode)"
        self.found.append(Candidate(description, rewrite.edits, rewrite.kernel, rewrite.imports, unverifiable))

    def failed(self, exc: CannotRewrite) -> None:
        self.failure = self.failure or exc
        self.arrays = self.arrays or exc.arrays


def _with_ranks(options: Options, names: Iterable[str], rank: int, floors: dict[str, int] | None = None) -> Options:
    floors = floors or {}
    wanted = {n: max(rank, floors.get(n, 0)) for n in names}
    return replace(options, hypotheses=tuple(sorted({**dict(options.hypotheses), **wanted}.items())))


def _lift_rungs(facts: LoopFacts, base: list[Options], climb: _Climb, torch_name: str) -> None:
    """Lift under each rung of ``base``; a rung that needs ranks nobody pins spawns, in its
    place, the same rung under each rank hypothesis."""
    pending = list(base)
    floors = fewest_dims([facts.loop])
    tried: set[Options] = set()
    while pending:
        options = pending.pop(0)
        if options in tried:
            continue  # (two hypotheses a floor made one)
        tried.add(options)
        assumed = dict(options.hypotheses)
        try:
            rewrite = _lift(facts, options, torch_name, climb.failures)
        except CannotRewrite as exc:
            unpinned = [n for n in exc.assumed if n not in assumed]
            if unpinned and not exc.needs_rank:
                # it failed where it assumed an invariant broadcasts against a sample: the
                # invariant's rank spelled out may fare better
                pending[0:0] = [_with_ranks(options, unpinned, rank, floors) for rank in INVARIANT_RANKS]
            elif exc.needs_rank and not exc.needs_rank <= set(assumed):
                climb.needed_rank = True
                new = exc.needs_rank - set(assumed)
                if assumed:
                    # extend this rung's hypothesis to the names it now needs: the rank their use
                    # suggests, else the rank already assumed, then the other ranks (one loop may
                    # read a matrix of rows and a vector of positions)
                    same = next(iter(assumed.values()))
                    order = exc.rank_order or (same, *(r for r in HYPOTHETICAL_RANKS if r != same))
                    pending[0:0] = [_with_ranks(options, new, rank, floors) for rank in order]
                else:
                    pending[0:0] = [replace(options, hypotheses=h) for h in hypotheses(exc.needs_rank, exc.rank_order, floors)]
                continue
            climb.failed(exc)
            continue
        unpinned = [n for n in rewrite.assumed_invariants if n not in assumed]
        if unpinned:
            # right after a rung that assumed invariants broadcast against a sample, the same
            # rung with their ranks spelled out (a vector against one-number samples, ...)
            pending[0:0] = [_with_ranks(options, unpinned, rank, floors) for rank in INVARIANT_RANKS]
        climb.offer(rewrite)


def _lift_rungs_any_rank(facts: LoopFacts, base: list[Options], climb: _Climb, torch_name: str) -> None:
    """:func:`_lift_rungs`, and where a rung needed a rank nothing pins, after the rungs that
    guess one: the forms right for every rank (the checker explores the ranks the guesses miss,
    one-number samples among them) -- whole-sample reductions over the flattened sample, then
    one number per sample broadcast with the batch axis last."""
    _lift_rungs(facts, base, climb, torch_name)
    if climb.needed_rank:
        _lift_rungs(facts, [replace(o, any_rank_reductions=True) for o in base], climb, torch_name)
        _lift_rungs(facts, [replace(o, any_rank_reductions=True, any_rank_broadcast=True) for o in base], climb, torch_name)


def _vmap_rungs(facts: LoopFacts, base: list[Options], climb: _Climb, torch_name: str) -> None:
    """The general rung: ``torch.vmap`` of the body, right for any ranks vmap supports."""
    rungs_ = [Options(replace_allocation=False), Options(replace_allocation=False, guard_empty=True)]
    if any(o.clamp for o in base):
        rungs_ += [replace(o, clamp=True) for o in rungs_]
    for options in rungs_:
        try:
            climb.offer(vmap_loop(facts, options, torch_name))
        except CannotRewrite as exc:
            climb.failed(exc)


def candidates(facts: LoopFacts, ladder: Iterable[Options] | None = None) -> tuple[list[Candidate], CannotRewrite | None, LoopRewrite | None]:
    """The candidates of every rung that lifts, the first failure (when none does), and the
    first rewrite (for the proposal's anchor). Order: batched operations under what the code
    shows, then under rank hypotheses, then torch.vmap; and only when nothing else lifts, the
    unverifiable rung that calls an opaque callable once on the batch."""
    base = list(ladder if ladder is not None else rungs(facts))
    torch_name, _ = facts.context.torch_spelling()
    climb = _Climb()
    swept: CannotRewrite | None = None
    if sweep.looks_like_a_sweep(facts.steps, facts.domain):
        # a masked reduction swept over thresholds: its own form, which the lift has no rung for
        try:
            climb.offer(sweep.threshold_sweep(facts))
            return climb.found, None, climb.first
        except CannotRewrite as exc:
            # over thresholds a sweep takes, what stopped the sweep says more than the lift
            swept = exc if sweep.sweeps_thresholds(facts) else None
    if is_inplace_chain(facts):
        # `t.mul_(s).add_(m)` on each channel: one chain on the channels, or nothing
        try:
            climb.offer(inplace_chain_loop(facts))
        except CannotRewrite as exc:
            climb.failed(exc)
        return climb.found, (None if climb.found else climb.failure), climb.first
    _lift_rungs_any_rank(facts, base, climb, torch_name)
    bound = set(facts.context.bindings.values())
    # a module of NumPy code that never imports torch: NumPy's failure is the one to report
    numpy_only = "numpy" in bound and not any(b == "torch" or b.startswith("torch.") for b in bound)
    if climb.found and _may_walk_ndarrays(facts, climb):
        # nothing shows the walked arrays are tensors and the module uses NumPy: after the torch
        # rungs, the same rungs spelled with numpy (the checker tries both kinds on each)
        numpy = _Climb(seen=climb.seen, failures=climb.failures)
        _lift_rungs_any_rank(facts, [replace(o, library="numpy") for o in base], numpy, torch_name)
        climb.found += numpy.found
    elif not climb.found and (climb.arrays or numpy_only or (
        # torch would compute the per-sample numbers in float32; NumPy computes them as Python
        "numpy" in bound and climb.failure is not None and FLOAT32_NUMBERS in str(climb.failure)
    )):
        # the walked arrays are NumPy's: the same rungs spelled with numpy (no vmap for those)
        numpy = _Climb(failures=climb.failures)
        _lift_rungs_any_rank(facts, [replace(o, library="numpy") for o in base], numpy, torch_name)
        if numpy.found or (climb.failure is not None and climb.failure.arrays):
            return numpy.found, (None if numpy.found else numpy.failure), numpy.first
        if numpy_only and numpy.failure is not None:
            climb.failure = numpy.failure  # (the opaque rungs below may still offer one)
        # only a rung under some hypothesis met an ndarray: the torch rungs' failure stands
    _vmap_rungs(facts, base, climb, torch_name)
    if not climb.found and climb.failure is not None and "cannot see into" in str(climb.failure):
        opaque = _Climb(failures=climb.failures)
        _lift_rungs(facts, [replace(o, opaque_calls=True) for o in base], opaque, torch_name)
        if not opaque.found and opaque.arrays:
            _lift_rungs(facts, [replace(o, opaque_calls=True, library="numpy") for o in base], opaque, torch_name)
        if opaque.found:
            return opaque.found, None, opaque.first
    return climb.found, (None if climb.found else swept or climb.failure), climb.first


def _may_walk_ndarrays(facts: LoopFacts, climb: _Climb) -> bool:
    """Whether the module binds NumPy and an array the first rewrite walks may be an ndarray."""
    if climb.first is None or "numpy" not in facts.context.bindings.values():
        return False
    return any(Kind.NDARRAY in facts.evidence(walked).kinds for walked, _ in climb.first.walked)


def inner_loop(loop: cst.CSTNode) -> cst.For | None:
    """The one statement of a ``for`` loop's body where it is itself a ``for`` loop, else None."""
    if not isinstance(loop, cst.For) or not isinstance(loop.body, cst.IndentedBlock) or len(loop.body.body) != 1:
        return None
    inner = loop.body.body[0]
    return inner if isinstance(inner, cst.For) else None


def nested(facts: LoopFacts) -> LoopFacts | None:
    """For a loop whose body is one inner loop (``for i ...: for j ...: d[i, j] = f(a[i], b[j])``):
    the outer loop's facts with the inner loop already lifted, so that lifting the outer loop
    batches both indices. None when the inner loop does not lift."""
    loop = facts.loop
    inner = inner_loop(loop)
    if inner is None:
        return None
    inner_facts = loop_facts(inner, facts.context)
    if inner_facts is None or any(v in names_used(inner.iter) for v in facts.domain.variables):
        return None
    torch_name, _ = facts.context.torch_spelling()
    pending = [Options(replace_allocation=False, nested_inner=True)]
    while pending:
        options = pending.pop(0)
        try:
            rewrite = lift_loop(inner_facts, options, torch_name)
        except CannotRewrite as exc:
            if exc.needs_rank and not options.hypotheses:
                pending = [replace(options, hypotheses=h) for h in hypotheses(exc.needs_rank, exc.rank_order)]
                continue
            return None
        statements = rewrite.statements
        if not statements or len(rewrite.edits) != 1 or rewrite.batch_last:
            return None  # (a store through a moved view is the inner loop's to propose alone)
        return with_body(facts, statements, dict(rewrite.walked), double_index=rewrite.double_index)
    return None


def proposal(code: str, message: str, facts: LoopFacts) -> Proposal | None:
    """The rule ``code``'s proposal for the loop: its candidates, or a skip saying which fact
    stopped the lift (reported at the statement that has it)."""
    found, failure, first = candidates(facts)
    context = facts.context
    snippet = statement_code(context.module, facts.statement or facts.loop)
    anchor = facts.statement or facts.loop
    if found:
        line, column = _position(facts, first.anchor if first is not None else None)
        return Proposal(code, message, line, column, anchor, tuple(found), None, snippet)
    if failure is None:
        return None
    line, column = _position(facts, failure.node)
    return Proposal(code, message, line, column, anchor, (), str(failure), snippet)


def _position(facts: LoopFacts, node: cst.CSTNode | None) -> tuple[int, int]:
    """Where to report: the statement that decides (a store, the line a lift failed at), else
    the loop; a node built by the lift (a nested loop's batched store) has no position."""
    for where in (node, facts.statement, facts.loop):
        if where is None:
            continue
        try:
            return facts.context.position(where)
        except KeyError:
            continue
    return 1, 1
