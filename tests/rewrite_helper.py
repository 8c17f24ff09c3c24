"""Test helper: run rules + the checker over one source through the pipeline's own path, and hold
corpus cases and rule examples to what they declare."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence


import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.base import Proposal, Rule
from torchfix.codemods.loops.kernels import with_alias_pairs
from torchfix.equivalence.kernel import Outcome, Verdict
from torchfix.pipeline import RewriteRecord, process_source


@dataclass
class Outcomes:
    """What the pipeline made of one source: the bytes it would emit, and per proposal the
    record, its outcome and the deciding verdict."""

    source: bytes
    proposals: list[tuple[RewriteRecord, Outcome, Verdict | None]] = field(default_factory=list)


def rewrite(source: bytes, rules: Sequence[type[Rule]], checker) -> Outcomes:  # noqa: ANN001
    """``source`` through the pipeline's own path (``torchfix.pipeline.process_source``): the
    same ladder climb, suppression, overlap and re-parse the CLI uses, with ``checker``."""
    # allow_slower: the checkers of the rule tests do not time rewrites, so a speed-gated form
    # (TFV004's device accumulator) would be withheld as unmeasured; a corpus case shows what
    # the rule makes of the code when it is emitted (--allow-slower), and the gate has its own
    # tests (test_timing, test_app_unmeasured)
    result = process_source(source, "case.py", rules, lambda: checker, allow_slower=True)
    assert result.error is None, result.error
    outcomes = Outcomes(result.new if result.new is not None else source)
    for record in result.records:
        outcomes.proposals.append((record, Outcome(record.outcome), record.verdict))
    return outcomes


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


def propose(rule: type[Rule], source: str) -> list[Proposal]:
    """``rule``'s proposals for ``source`` as the pipeline receives them: each kernel told which
    of its inputs may be one object (``codemods.loops.kernels.with_alias_pairs``)."""
    wrapper = MetadataWrapper(cst.parse_module(source))
    return with_alias_pairs(rule().propose(wrapper), wrapper)


def loop_candidates(source: str):  # noqa: ANN201
    """The loop engine's candidates for the first ``for`` loop of ``source`` (dedented), and its
    first failure: the ladder's climb, without the checker."""
    import textwrap

    from torchfix.codemods.loops import ladder
    from torchfix.codemods.loops.facts import loop_facts
    from torchfix.codemods.loops.module import ModuleContext

    context = ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))
    facts = loop_facts(context.nodes.of_type(cst.For)[0], context)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    return found, failure
