"""Fake rules and a fake checker for the application tests (no torch, no worker processes).

This module holds no tests; the ``test_app_*`` modules import it (tests/ is on sys.path).
"""

from __future__ import annotations

from typing import Callable, Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from torchfix.codemods.base import Candidate, Edit, Proposal, Rule
from torchfix.equivalence.kernel import Counterexample, InputSpec, Kernel, Kind, Outcome, Verdict


def verified(reason: str = "no counterexample in 60 examples on cpu") -> Verdict:
    return Verdict(Outcome.VERIFIED, reason, examples=60, devices=("cpu",))


def rejected(reason: str = "old and new differ") -> Verdict:
    cex = Counterexample(inputs=(("x", "tensor([-1])"),), where="out", old="tensor([1])", new="tensor([2])")
    return Verdict(Outcome.REJECTED, reason, counterexample=cex, examples=3, devices=("cpu",))


def unverified(reason: str = "the old code never ran") -> Verdict:
    return Verdict(Outcome.UNVERIFIED, reason)


class FakeChecker:
    """Judges kernels with ``decide(kernel)`` (default: everything verifies) and records them."""

    def __init__(self, decide: Callable[[Kernel], Verdict] | None = None) -> None:
        self.decide = decide or (lambda kernel: verified())
        self.checked: list[Kernel] = []
        self.closed = False

    def check(self, kernel: Kernel) -> Verdict:
        self.checked.append(kernel)
        return self.decide(kernel)

    def close(self) -> None:
        self.closed = True


def by_new_code(table: dict[str, Verdict], default: Verdict | None = None) -> Callable[[Kernel], Verdict]:
    """A ``decide`` function keyed on the kernel's new snippet."""
    return lambda kernel: table.get(kernel.new, default or verified())


def _is_assign_int(node: cst.CSTNode, value: str | None = None) -> bool:
    """``NAME = <int>`` (``NAME = value`` when given) as a statement line of its own."""
    if not isinstance(node, cst.SimpleStatementLine) or len(node.body) != 1:
        return False
    stmt = node.body[0]
    return (
        isinstance(stmt, cst.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0].target, cst.Name)
        and isinstance(stmt.value, cst.Integer)
        and (value is None or stmt.value.value == value)
    )


def _is_assign_one(node: cst.CSTNode) -> bool:
    return _is_assign_int(node, "1")


class _Collect(cst.CSTVisitor):
    def __init__(self, want: Callable[[cst.CSTNode], bool]) -> None:
        self.want = want
        self.found: list[cst.CSTNode] = []

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.want(node):
            self.found.append(node)
        return True


def find(module: cst.Module, want: Callable[[cst.CSTNode], bool]) -> list[cst.CSTNode]:
    collector = _Collect(want)
    module.visit(collector)
    return collector.found


class AssignOne(Rule):
    """Proposes ``NAME = 1`` -> ``NAME = 2`` (ladder: ``= 2`` first, then ``= 3``)."""

    code = "TFV901"
    name = "assign-one"
    summary = "A fake rule: `x = 1` becomes `x = 2`."
    docs = """
        ## What it does
        Rewrites `x = 1` into `x = 2`.

        ## When it stays silent
        Never.
    """
    #: values tried, in ladder order
    ladder: tuple[str, ...] = ("2",)
    imports: tuple[str, ...] = ()
    skip_reason: str | None = None
    unverifiable: str | None = None
    #: the candidates are of a speed-gated form (``Candidate.needs_measurement``)
    needs_measurement: bool = False
    #: the value it rewrites
    value = "1"

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        positions = wrapper.resolve(PositionProvider)
        for node in find(wrapper.module, lambda n: _is_assign_int(n, self.value)):
            assert isinstance(node, cst.SimpleStatementLine)
            stmt = node.body[0]
            assert isinstance(stmt, cst.Assign)
            name = stmt.targets[0].target.value  # type: ignore[union-attr]
            candidates = []
            for value in self.ladder:
                new_stmt = node.with_changes(body=[stmt.with_changes(value=cst.Integer(value))])
                kernel = Kernel(
                    old=f"{name} = {self.value}", new=f"{name} = {value}", inputs=(InputSpec("unused", Kind.INT),), outputs=(name,)
                )
                candidates.append(
                    Candidate(f"assign {value}", (Edit(node, new_stmt),), kernel, self.imports, self.unverifiable,
                              needs_measurement=self.needs_measurement)
                )
            pos = positions[node].start
            yield Proposal(
                self.code, f"`{name} = {self.value}` can be `{name} = {self.ladder[0]}`", pos.line, pos.column + 1, node,
                tuple(candidates), self.skip_reason, snippet=f"{name} = {self.value}",
            )


class WholeFunction(Rule):
    """Proposes replacing every function holding ``x = 1`` with ``pass`` (overlaps AssignOne)."""

    code = "TFV902"
    name = "whole-function"
    summary = "A fake rule that rewrites whole functions."
    docs = "Fake."
    #: the statements that make a function a match
    matches = staticmethod(_is_assign_one)
    skip_reason: str | None = None

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        positions = wrapper.resolve(PositionProvider)
        for node in find(wrapper.module, lambda n: isinstance(n, cst.FunctionDef) and bool(find(n, self.matches))):
            replacement = cst.SimpleStatementLine([cst.Pass()])
            kernel = Kernel(old="pass", new="pass", inputs=(), outputs=())
            pos = positions[node].start
            yield Proposal(
                self.code, "whole function", pos.line, pos.column + 1, node,
                (Candidate("pass", (Edit(node, replacement),), kernel),), self.skip_reason,
            )


class AssignTwo(AssignOne):
    """Proposes ``NAME = 2`` -> ``NAME = 3``: it applies to what AssignOne writes (a chain)."""

    code = "TFV904"
    name = "assign-two"
    summary = "A fake rule: `x = 2` becomes `x = 3`."
    docs = "Fake."
    ladder = ("3",)
    value = "2"


class FunctionOfAssignments(WholeFunction):
    """Proposes replacing every function holding ``NAME = <int>`` with ``pass``: it overlaps
    AssignOne and still applies once AssignOne's rewrite is in."""

    code = "TFV905"
    name = "function-of-assignments"
    matches = staticmethod(_is_assign_int)


class BrokenOutput(Rule):
    """Replaces ``x = 1`` with a statement whose code does not parse (a buggy rule)."""

    code = "TFV903"
    name = "broken-output"
    summary = "A buggy fake rule."
    docs = "Fake."

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        for node in find(wrapper.module, _is_assign_one):
            bad = cst.SimpleStatementLine([cst.Expr(cst.Name("def"))])
            kernel = Kernel(old="pass", new="broken", inputs=(), outputs=())
            yield Proposal(self.code, "broken", 1, 1, node, (Candidate("broken", (Edit(node, bad),), kernel),))


class Crashing(Rule):
    """Raises inside ``propose`` (a rule bug)."""

    code = "TFV904"
    name = "crashing"
    summary = "A crashing fake rule."
    docs = "Fake."

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        raise RuntimeError("kaboom")


class NeverMatches(Rule):
    """Says no file can match: the pipeline must not even parse."""

    code = "TFV905"
    name = "never"
    summary = "Never matches."
    docs = "Fake."

    @classmethod
    def might_match(cls, source: bytes) -> bool:
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:  # pragma: no cover
        raise AssertionError("propose called although might_match said no")


def variant(base: type[AssignOne], **attrs: object) -> type[AssignOne]:
    """A subclass of ``base`` with some class attributes changed (ladder, imports, ...)."""
    return type(base.__name__ + "Variant", (base,), dict(attrs))


def fake_checker_factory(examples=None, seed=None, timeout=None) -> FakeChecker:  # noqa: ANN001
    """A ``make_checker`` hook that pickles by name: ``--jobs N`` workers each build their own."""
    return FakeChecker()


class CrashesWorker(AssignOne):
    """Kills its process outright (as a segfault in a native extension would) on files saying
    CRASH-THE-WORKER; otherwise behaves like AssignOne."""

    code = "TFV906"
    name = "crashes-worker"

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        import os

        if "CRASH-THE-WORKER" in wrapper.module.code:
            os._exit(3)
        yield from super().propose(wrapper)


class Unverifiable(AssignOne):
    """AssignOne whose only candidate rests on an opaque callable: never checked, unverified."""

    code = "TFV907"
    name = "unverifiable"
    unverifiable = "assumes `model` treats samples independently"


class PacedChecker(FakeChecker):
    """Verifies everything, taking ``$FAKE_CHECK_SECONDS`` per check; appends ``check`` to the
    file ``$FAKE_PROGRESS`` after each (for tests that time a signal against a run)."""

    def check(self, kernel: Kernel) -> Verdict:
        import os
        import time

        time.sleep(float(os.environ.get("FAKE_CHECK_SECONDS", "0")))
        verdict = super().check(kernel)
        progress = os.environ.get("FAKE_PROGRESS")
        if progress:
            with open(progress, "a") as handle:
                handle.write("check\n")
        return verdict


def paced_checker_factory(examples=None, seed=None, timeout=None, measure=None) -> FakeChecker:  # noqa: ANN001
    """A ``make_checker`` hook that pickles by name (``--jobs N``): a :class:`PacedChecker`."""
    return PacedChecker()
