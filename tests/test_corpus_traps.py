"""Every corpus trap under every rule at once, as the CLI runs them: a trap written for one rule
must not be rewritten by another. (Each rule's own tests run its cases under that rule alone; a
loop the engine of TFV001 lifts can look like another rule's trap.) A trap whose first line names
another rule as the one that rewrites it (``trap_prefix_sum``: "TFV007 turns it into the scan it
is") is held to that under the remaining rules."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from rewrite_helper import rewrite

from torchfix.codemods.registry import ALL_RULES
from torchfix.equivalence.kernel import Outcome

CORPUS = Path(__file__).resolve().parent.parent / "corpus"
TRAPS = sorted(CORPUS.glob("*/trap_*.py"))


def test_there_are_traps_of_every_rule():
    assert {trap.parent.name for trap in TRAPS} >= {rule.code for rule in ALL_RULES}


@pytest.mark.parametrize("trap", TRAPS, ids=[f"{t.parent.name}/{t.stem}" for t in TRAPS])
def test_no_rule_rewrites_a_trap(trap, checker):
    before = trap.read_bytes()
    first_line = before.split(b"\n", 1)[0].decode()
    others = set(re.findall(r"TFV\d{3}", first_line)) - {trap.parent.name}
    result = rewrite(before, [rule for rule in ALL_RULES if rule.code not in others], checker)
    assert result.source == before, "a trap was rewritten"
    assert not [record.rule for record, outcome, _ in result.proposals if outcome is Outcome.VERIFIED]
