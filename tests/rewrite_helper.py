"""Test helper: run rules + the checker over one source and apply the first verified candidates.

This is the pipeline's core without files, so rule tests do not depend on the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.apply import add_imports, apply_edits, overlaps
from torchfix.codemods.base import Edit, Proposal, Rule
from torchfix.equivalence.kernel import Outcome, Verdict


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


def assert_corpus_case(case, rules: Sequence[type[Rule]], checker, quiet_second_pass: bool = False) -> None:  # noqa: ANN001
    """A corpus case behaves as declared (corpus/README.md).

    A trap stays byte-identical and nothing in it verifies. A positive case becomes its
    ``.expected.py`` exactly: a verified rewrite, or -- where the checker refutes every candidate
    and the expected file equals the input -- a rejection that shows its counterexample (never
    silence). A second pass over the result changes nothing (with ``quiet_second_pass``: proposes
    nothing at all).
    """
    before = case.read_bytes()
    assert before.startswith(b"# "), "the first line says what the scenario is"
    result = rewrite(before, rules, checker)
    if case.name.startswith("trap_"):
        assert result.source == before, "a trap was rewritten"
        assert all(outcome is not Outcome.VERIFIED for _, outcome, _ in result.proposals)
        return
    expected = case.with_name(case.stem + ".expected.py").read_bytes()
    assert result.source == expected
    if expected == before:
        assert any(o is Outcome.REJECTED and v and v.counterexample for _, o, v in result.proposals)
    else:
        assert any(outcome is Outcome.VERIFIED for _, outcome, _ in result.proposals)
    again = rewrite(result.source, rules, checker)
    assert again.source == result.source
    if quiet_second_pass:
        assert not again.proposals


def assert_rule_example(example, rules: Sequence[type[Rule]], checker) -> None:  # noqa: ANN001
    """A rule's own Example: ``after`` is what the rule makes of ``before`` (None: untouched)."""
    before, after = example.dedented()
    result = rewrite(before.encode(), rules, checker)
    assert result.source.decode() == (after if after is not None else before)


def assert_ruff_sections(rule: type[Rule]) -> None:
    text = rule.explain()
    for section in ("What it does", "Why is this bad?", "Example", "Use instead", "When it stays silent"):
        assert f"## {section}" in text
