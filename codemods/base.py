"""What a pass is and what it hands to the pipeline.

A pass (a :class:`Rule`) reads one parsed module and proposes :class:`Proposal` objects. It never
writes files and never runs code. Each proposal holds a ladder of :class:`Candidate` rewrites, most
idiomatic first; each candidate carries the node edits that make it and the verification kernel
that the checker must fail to refute before the edits may be applied.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, Iterable, Sequence, Union

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.equivalence.kernel import Kernel

if TYPE_CHECKING:
    from torchfix.codemods.syntax import SyntaxIndex

#: what an original node is replaced by (LibCST's own vocabulary)
Replacement = Union[cst.CSTNode, cst.FlattenSentinel, cst.RemovalSentinel]


@dataclass(frozen=True)
class Edit:
    """Replace ``target`` (a node of the wrapper's module, by identity) with ``replacement``."""

    target: cst.CSTNode
    replacement: Replacement


@dataclass(frozen=True)
class Candidate:
    """One way to rewrite a match, with the proof obligation that licenses it."""

    description: str
    edits: tuple[Edit, ...]
    kernel: Kernel
    #: modules the new code needs bound at module level (e.g. "torch"); the pipeline adds
    #: ``import X`` where the file does not bind the name already
    imports: tuple[str, ...] = ()
    #: set when correctness rests on something no check can establish, e.g. that a model treats
    #: samples independently (false for BatchNorm in training mode): the candidate is reported
    #: ``unverified`` with this reason, never checked, and emitted only with ``--unsafe``
    unverifiable: str | None = None
    #: set for a form that is not faster by construction (TFV004's device accumulator trades one
    #: sync per step for two small device operations): the pipeline emits it by default only when
    #: the checker measured it and found it no slower; verified but unmeasured, it is reported
    #: ``unmeasured`` and emitted only with ``--allow-slower``
    needs_measurement: bool = False


@dataclass
class Proposal:
    """A match of one rule at one place, and what could replace it."""

    rule: str
    message: str
    line: int
    column: int
    #: the statement a ``# torchfix: ignore`` comment is looked for on
    anchor: cst.CSTNode
    candidates: tuple[Candidate, ...] = ()
    #: set when a precondition failed: the proposal is reported as skipped, never emitted
    skip_reason: str | None = None
    #: the original source of the matched code, for reports
    snippet: str = ""


@dataclass(frozen=True)
class Example:
    """A rule's own example: ``after is None`` means the code must stay untouched."""

    before: str
    after: str | None = None
    id: str = ""

    def dedented(self) -> tuple[str, str | None]:
        before = textwrap.dedent(self.before).lstrip("\n")
        after = None if self.after is None else textwrap.dedent(self.after).lstrip("\n")
        return before, after


class Rule:
    """Base class of a pass. Subclasses set the class attributes and implement ``propose``."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    #: ruff-style documentation in Markdown: what it does / why it is slow / example /
    #: use instead / when it stays silent
    docs: ClassVar[str]
    examples: ClassVar[Sequence[Example]] = ()
    #: the rule only ever matches code that shows tensor evidence (a torch/numpy binding, a
    #: ``Tensor`` annotation, ``.item()``, a tensor-only method), so the pipeline's cheap byte
    #: pre-filter (``torchfix.pipeline.mentions_tensor_code``) may keep files from it unparsed
    tensor_code_only: ClassVar[bool] = False
    #: what ``might_match`` looks for in the raw bytes: each group must have one of its strings
    #: in the file (``((b"for",), (b".item()", b"float("))``: a ``for`` and a conversion); with
    #: no groups every file passes
    required_bytes: ClassVar[tuple[tuple[bytes, ...], ...]] = ()

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        raise NotImplementedError

    @classmethod
    def might_match(cls, source: bytes) -> bool:
        """A cheap test on the raw bytes: False means the rule cannot match this file, so the
        pipeline need not parse it for this rule. Must never say False for a file it matches."""
        return all(any(token in source for token in group) for group in cls.required_bytes)

    @classmethod
    def might_match_tree(cls, index: "SyntaxIndex") -> bool:
        """The skeleton test on the stdlib ``ast`` of the file (``codemods.syntax``): False means
        the rule cannot match, so LibCST need not parse the file for it. A necessary condition of
        ``propose`` -- skip proposals included -- never a sufficient one."""
        return True

    @classmethod
    def explain(cls) -> str:
        return f"# {cls.code} {cls.name}\n\n{cls.summary}\n\n{textwrap.dedent(cls.docs).strip()}\n"


@dataclass
class ModuleFacts:
    """How a module binds the libraries rewrites need (``import torch as th`` -> torch='th')."""

    torch: str | None = None
    functional: str | None = None
    numpy: str | None = None
    #: every module-level binding of a whitelisted module, for kernels: (name, dotted module)
    bindings: list[tuple[str, str]] = field(default_factory=list)
