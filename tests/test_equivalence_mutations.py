"""A sample of the mutation suite (benchmarks/mutation_suite.py) that CI runs: 20 wrong rewrites
must be refuted and 10 correct alternatives verified. The full suite: see that script."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

from mutants import build_cases  # noqa: E402

from torchfix.equivalence.kernel import Outcome  # noqa: E402

_CASES = build_cases()


def _sample(expect: str, count: int) -> list:
    """Spread over templates and categories: round-robin by template, stable order."""
    by_template: dict[str, list] = {}
    for case in _CASES:
        if case.expect == expect:
            by_template.setdefault(case.template, []).append(case)
    picked: list = []
    depth = 0
    while len(picked) < count:
        for cases in by_template.values():
            # step through categories rather than dtype twins
            if depth < len(cases):
                picked.append(cases[(depth * 3) % len(cases)])
            if len(picked) == count:
                break
        depth += 1
    return picked


WRONG = _sample("refute", 20)
RIGHT = _sample("verify", 10)


@pytest.mark.parametrize("case", WRONG, ids=[c.id for c in WRONG])
def test_wrong_rewrite_is_refuted(case, checker):
    verdict = checker.check(case.kernel)
    assert verdict.outcome is Outcome.REJECTED, f"{case.category}: {verdict.reason}"
    assert verdict.counterexample is not None and verdict.counterexample.witness


@pytest.mark.parametrize("case", RIGHT, ids=[c.id for c in RIGHT])
def test_correct_rewrite_is_verified(case, checker):
    verdict = checker.check(case.kernel)
    assert verdict.outcome is Outcome.VERIFIED, verdict.counterexample.render() if verdict.counterexample else verdict.reason


def test_sample_covers_the_mutation_categories():
    categories = {c.category for c in WRONG}
    assert len(categories) >= 8
    assert any(c.category == "detach-kills-gradient" for c in _CASES)
    assert len([c for c in _CASES if c.expect == "refute"]) >= 150
    assert len([c for c in _CASES if c.expect == "verify"]) >= 50
    reorders = {c.kernel.inputs[0].dtypes[0] for c in _CASES if c.category == "correct-reorder"}
    assert {"float16", "bfloat16", "float32", "float64"} <= reorders
