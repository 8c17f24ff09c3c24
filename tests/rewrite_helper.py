"""Test helper: run rules + the checker over one source and apply the first verified candidates.

This is the pipeline's core without files, so rule tests do not depend on the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from codemods.apply import add_imports, apply_edits, overlaps
from codemods.base import Edit, Proposal, Rule
from equivalence.kernel import Outcome, Verdict


@dataclass
class Outcomes:
    source: bytes
    proposals: list[tuple[Proposal, Outcome, Verdict | None]] = field(default_factory=list)


def rewrite(source: bytes, rules: Sequence[type[Rule]], checker) -> Outcomes:  # noqa: ANN001
    wrapper = MetadataWrapper(cst.parse_module(source))
    edits: list[Edit] = []
    imports: list[str] = []
    result = Outcomes(source)
    for rule in rules:
        for proposal in rule().propose(wrapper):
            if proposal.skip_reason:
                result.proposals.append((proposal, Outcome.SKIPPED, None))
                continue
            chosen, last = None, None
            for candidate in proposal.candidates:
                last = checker.check(candidate.kernel)
                if last.ok:
                    chosen = candidate
                    break
            if chosen is None:
                result.proposals.append((proposal, last.outcome if last else Outcome.UNVERIFIED, last))
                continue
            if any(overlaps(e.target, new.target) for e in edits for new in chosen.edits):
                result.proposals.append((proposal, Outcome.SKIPPED, last))
                continue
            edits.extend(chosen.edits)
            imports.extend(chosen.imports)
            result.proposals.append((proposal, Outcome.VERIFIED, last))
    if edits:
        module = add_imports(apply_edits(wrapper.module, edits), imports)
        result.source = module.bytes
    return result
