"""The pipeline on generated programs (hypothesmith): no crash, every output parses, and a second
run changes nothing. The checker verifies everything, so this is about the rewriting machinery;
``benchmarks/robustness.py`` runs the same over thousands of programs and real trees."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

hypothesmith = pytest.importorskip("hypothesmith")
from hypothesis import HealthCheck, given, settings, strategies as st  # noqa: E402

from torchfix.codemods.registry import ALL_RULES  # noqa: E402
from test_app_fakes import FakeChecker  # noqa: E402
from torchfix.pipeline import OVERLAP_REASON, process_source  # noqa: E402
from torchfix.source import parse  # noqa: E402

CORPUS = sorted(
    p.read_text() for p in (Path(__file__).resolve().parent.parent / "corpus").glob("TFV*/*.py") if not p.name.endswith(".expected.py")
)
CHECKER = FakeChecker()


@settings(max_examples=50, deadline=None, database=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(program=hypothesmith.from_grammar(), case=st.sampled_from(CORPUS), splice=st.booleans())
def test_generated_programs_never_crash_parse_after_rewriting_and_are_idempotent(program, case, splice):
    source = (case.rstrip("\n") + "\n\n" + program) if splice else "import torch\n" + program
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        first = process_source(source.encode(), "gen.py", ALL_RULES, lambda: CHECKER, unsafe=True)
        assert not first.internal, first.error
        if first.new is None:
            return
        parse(first.new)
        second = process_source(first.new, "gen.py", ALL_RULES, lambda: CHECKER, unsafe=True)
    assert not second.internal, second.error
    if not any(r.reason == OVERLAP_REASON for r in first.records):
        assert second.new in (None, first.new), "a second run rewrote the output again"
