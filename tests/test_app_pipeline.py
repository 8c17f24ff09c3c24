"""The pipeline with fake rules and a fake checker: the ladder, outcomes, overlaps, imports,
suppression, containment of buggy rules, and picklable results."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path

import pytest

from torchfix.equivalence.kernel import Outcome
import dataclasses

import libcst as cst
from test_app_fakes import (
    AssignOne, AssignTwo, BrokenOutput, FunctionOfAssignments, Crashing, FakeChecker, NeverMatches, WholeFunction, by_new_code, rejected, unverified,
    variant, verified,
)
from torchfix.pipeline import OVERLAP_REASON, SUPPRESSED_REASON, FileResult, process_file, process_source

SRC = b"import torch\n\n\ndef f():\n    x = 1\n    return x\n"


def run(data: bytes, rules, checker: FakeChecker | None = None, **kw) -> FileResult:  # noqa: ANN001
    checker = checker or FakeChecker()
    return process_source(data, "m.py", rules, lambda: checker, **kw)


def test_verified_rewrite_is_applied_and_recorded():
    checker = FakeChecker()
    result = run(SRC, [AssignOne], checker)
    assert result.changed and result.new == SRC.replace(b"x = 1", b"x = 2")
    (record,) = result.records
    assert (record.rule, record.path, record.line, record.column) == ("TFV901", "m.py", 5, 5)
    assert record.outcome == "verified" and record.candidate == "assign 2" and record.verdict.ok
    assert [k.new for k in checker.checked] == ["x = 2"]


def test_ladder_takes_the_first_verified_candidate():
    rule = variant(AssignOne, ladder=("2", "3", "4"))
    checker = FakeChecker(by_new_code({"x = 2": rejected()}))
    result = run(SRC, [rule], checker)
    assert b"x = 3" in result.new
    assert result.records[0].outcome == "verified" and result.records[0].candidate == "assign 3"
    assert [k.new for k in checker.checked] == ["x = 2", "x = 3"], "the ladder stops at the first verified rung"


def test_rejected_when_any_rung_is_refuted_else_unverified():
    rule = variant(AssignOne, ladder=("2", "3"))
    result = run(SRC, [rule], FakeChecker(by_new_code({"x = 2": unverified(), "x = 3": rejected("differs")})))
    (record,) = result.records
    assert not result.changed and record.outcome == "rejected" and record.reason == "differs"
    assert record.verdict.counterexample is not None and "tensor([-1])" in record.counterexample
    result = run(SRC, [rule], FakeChecker(lambda k: unverified("timed out")))
    assert not result.changed and result.records[0].outcome == "unverified" and result.records[0].reason == "timed out"


def test_unverified_candidates_are_emitted_only_when_unsafe():
    rule = variant(AssignOne, unverifiable="rests on what model() does")
    checker = FakeChecker()
    result = run(SRC, [rule], checker)
    assert not result.changed and result.records[0].outcome == "unverified"
    assert result.records[0].reason == "rests on what model() does" and checker.checked == [], "never checked"
    result = run(SRC, [rule], checker, unsafe=True)
    assert result.changed and result.records[0].outcome == "unverified" and result.records[0].candidate == "assign 2"


def test_skip_reason_is_reported_without_checking():
    checker = FakeChecker()
    result = run(SRC, [variant(AssignOne, skip_reason="the loop breaks")], checker)
    assert not result.changed and checker.checked == []
    (record,) = result.records
    assert record.outcome == "skipped" and record.reason == "the loop breaks" and record.verdict is None


def test_an_overlapping_proposal_is_judged_again_on_the_rewritten_code():
    checker = FakeChecker()
    # WholeFunction matches only while `x = 1` is there: once AssignOne's rewrite is in, the
    # next round finds nothing to say about it, and nothing of it is reported or checked
    result = run(SRC, [AssignOne, WholeFunction], checker)
    assert [(r.rule, r.outcome) for r in result.records] == [("TFV901", "verified")]
    assert len(checker.checked) == 1, "the overlapping proposal is not sent to the checker"
    assert b"x = 2" in result.new and b"def f" in result.new
    # the other order: the function rewrite wins, and the inner statement is gone with it
    result = run(SRC, [WholeFunction, AssignOne], FakeChecker())
    assert [(r.rule, r.outcome) for r in result.records] == [("TFV902", "verified")]
    assert b"def f" not in result.new


def test_one_run_reaches_the_fixpoint_and_a_second_run_changes_nothing():
    # FunctionOfAssignments overlaps AssignOne and still applies to its output: the second
    # round rewrites it, verified again; AssignTwo applies to what AssignOne wrote (a chain)
    checker = FakeChecker()
    result = run(SRC, [AssignOne, FunctionOfAssignments], checker)
    assert [(r.rule, r.outcome) for r in result.records] == [("TFV901", "verified"), ("TFV905", "verified")]
    assert result.new == b"import torch\npass\n"
    assert result.records[1].line == 4, "a later round's record points at the original file's line"
    assert [k.new for k in checker.checked] == ["x = 2", "pass"], "each rewrite verified once, in its round"
    again = run(result.new, [AssignOne, FunctionOfAssignments])
    assert not again.changed

    chain = run(SRC, [AssignOne, AssignTwo])
    assert chain.new == SRC.replace(b"x = 1", b"x = 3")
    assert [(r.rule, r.outcome, r.line) for r in chain.records] == [("TFV901", "verified", 5), ("TFV904", "verified", 5)]
    assert not run(chain.new, [AssignOne, AssignTwo]).changed


def test_a_later_round_reports_what_no_round_changed_once_and_checks_it_once():
    two = SRC + b"\n\ndef g():\n    y = 1\n    return y\n"
    checker = FakeChecker(by_new_code({"y = 2": rejected()}))
    result = run(two, [AssignOne, AssignTwo], checker)
    assert [(r.rule, r.outcome) for r in result.records] == [
        ("TFV901", "verified"), ("TFV901", "rejected"), ("TFV904", "verified"),
    ]
    assert [k.new for k in checker.checked] == ["x = 2", "y = 2", "x = 3"]


def test_a_later_round_does_not_spend_the_candidate_budget_on_what_it_judged_before():
    from torchfix.limits import Budget, FileLimits

    # round 1 checks 6 candidates: `x = 1` is rewritten, the five `yN = 1` are refuted; round 2
    # checks 1 new one (AssignTwo on `x = 2`) and meets the five refuted findings again, already
    # judged: 7 candidates in all, within --max-candidates 7
    src = b"def f():\n    x = 1\n" + b"".join(b"    y%d = 1\n" % i for i in range(5))
    checker = FakeChecker(by_new_code({f"y{i} = 2": rejected() for i in range(5)}))
    result = process_source(src, "m.py", [AssignOne, AssignTwo], lambda: checker, budget=Budget(FileLimits(max_candidates=7)))
    assert result.status == "parsed" and result.new.count(b"x = 3") == 1
    assert [r.outcome for r in result.records].count("rejected") == 5 and len(checker.checked) == 7


TWO_FUNCTIONS = b"def f():\n    x = 1\n    return x\n\n\ndef g():\n    x = 1\n    return x\n"


def test_the_same_finding_at_two_places_is_reported_at_both():
    for rule, checker in ((AssignOne, FakeChecker(lambda kernel: rejected())), (variant(AssignOne, skip_reason="no"), FakeChecker())):
        result = run(TWO_FUNCTIONS, [rule], checker)
        assert [(r.line, r.outcome) for r in result.records] in ([(2, "rejected"), (7, "rejected")], [(2, "skipped"), (7, "skipped")])


def test_declining_one_rewrite_interactively_does_not_decline_its_twin():
    asked = []

    def choose(record):  # noqa: ANN001, ANN202 - decline the first, accept the second
        asked.append(record.line)
        return record.line != 2

    result = run(TWO_FUNCTIONS, [AssignOne], choose=choose)
    assert asked == [2, 7] and result.new == TWO_FUNCTIONS.replace(b"x = 1", b"x = 2").replace(b"x = 2", b"x = 1", 1)
    assert [(r.line, r.outcome, r.emitted) for r in result.records] == [(2, "skipped", False), (7, "verified", True)]


class _RemoveFive(AssignOne):
    """Deletes every `NAME = 5` line (a rewrite that removes lines, as TFV004's does)."""

    code = "TFV908"
    value = "5"

    def propose(self, wrapper):  # noqa: ANN001, ANN201
        for proposal in super().propose(wrapper):
            (candidate,) = proposal.candidates
            (edit,) = candidate.edits
            gone = dataclasses.replace(edit, replacement=cst.RemovalSentinel.REMOVE)
            yield dataclasses.replace(proposal, candidates=(dataclasses.replace(candidate, edits=(gone,)),))


def test_a_later_round_points_at_the_original_line_after_a_deletion_and_keeps_its_suppression():
    # round 1 deletes line 2; round 2's TFV904 finding is on what was line 3 and is silenced by
    # the comment written there: the record says line 3, and the comment counts as used
    src = b"def f():\n    z = 5\n    x = 1  # torchfix: ignore[TFV904]\n    return x\n"
    result = run(src, [_RemoveFive, AssignOne, AssignTwo], report_unused=True)
    assert [(r.rule, r.line, r.outcome) for r in result.records] == [
        ("TFV908", 2, "verified"), ("TFV901", 3, "verified"), ("TFV904", 3, "skipped"),
    ]
    assert result.unused_suppressions == []
    from torchfix.pipeline import _line_map

    back = _line_map(b"a\nd\ne\n", b"a\nb\nc\nd\ne\n")
    assert [back(n) for n in (1, 2, 3)] == [1, 4, 5]


def test_a_budget_that_runs_out_in_a_later_round_keeps_the_earlier_rounds():
    from torchfix.limits import Budget, FileLimits

    result = run(SRC, [AssignOne, AssignTwo], budget=Budget(FileLimits(max_candidates=1)))
    assert result.new == SRC.replace(b"x = 1", b"x = 2") and [r.rule for r in result.records] == ["TFV901"]


def test_a_rewrite_that_changes_nothing_ends_the_rounds():
    checker = FakeChecker()
    result = run(SRC, [variant(AssignOne, ladder=("1",))], checker)
    assert not result.changed and len(result.records) == 1 and len(checker.checked) == 1


def test_a_file_with_lone_cr_line_endings_keeps_its_last_one():
    src = b"import os\rdef f():\r    x = 1\r    return x\r"
    assert run(src, [AssignOne]).new == src.replace(b"x = 1", b"x = 2")
    assert run(src, [variant(AssignOne, imports=("numpy",))]).new.endswith(b"    return x\r")


def test_rounds_are_bounded():
    from torchfix.pipeline import MAX_ROUNDS

    class Forever(AssignOne):  # `x = 1` -> `x = 1` plus a comment: it always applies again
        code = "TFV907"

        def propose(self, wrapper):  # noqa: ANN001, ANN201
            for proposal in super().propose(wrapper):
                (candidate,) = proposal.candidates
                (edit,) = candidate.edits
                again = edit.target.with_changes(leading_lines=[*edit.target.leading_lines, cst.EmptyLine(comment=cst.Comment("# again"))])
                yield dataclasses.replace(proposal, candidates=(dataclasses.replace(candidate, edits=(dataclasses.replace(edit, replacement=again),)),))

    result = run(SRC, [Forever])
    assert result.new.count(b"# again") == MAX_ROUNDS and len(result.records) == MAX_ROUNDS


def test_a_rejected_proposal_does_not_block_an_overlapping_one():
    result = run(SRC, [AssignOne, WholeFunction], FakeChecker(by_new_code({"x = 2": rejected()})))
    assert [(r.rule, r.outcome) for r in result.records] == [("TFV901", "rejected"), ("TFV902", "verified")]


def test_needed_imports_are_added_only_when_unbound():
    rule = variant(AssignOne, imports=("torch",))
    assert run(SRC, [rule]).new.count(b"import torch") == 1
    bare = b"def f():\n    x = 1\n"
    new = run(bare, [rule]).new
    assert new.startswith(b"import torch\n") and b"x = 2" in new


def test_suppression_comments():
    for line in (b"    x = 1  # torchfix: ignore\n", b"    x = 1  # torchfix: ignore[TFV9]\n", b"    # torchfix: ignore[TFV901]\n    x = 1\n"):
        data = b"def f():\n" + line
        result = run(data, [AssignOne])
        assert not result.changed and result.records[0].outcome == "skipped" and result.records[0].reason == SUPPRESSED_REASON
    result = run(b"\x0c\ny = '\x0b'\ndef f():\n    x = 1  # torchfix: ignore\n", [AssignOne])
    assert not result.changed, "form feeds and vertical tabs do not shift line numbers"
    result = run(b"def f():\n    x = 1  # torchfix: ignore[TFV004]\n", [AssignOne])
    assert result.changed, "a comment naming another rule does not suppress this one"


def test_output_that_does_not_parse_is_an_internal_error_and_nothing_changes():
    result = run(SRC, [BrokenOutput])
    assert result.new is None and not result.changed and result.internal
    assert result.error.startswith("internal error: the rewritten file does not parse")


def test_a_crashing_rule_is_contained_to_its_file(tmp_path):
    path = tmp_path / "m.py"
    path.write_bytes(SRC)
    result = process_file(path, [Crashing], lambda: FakeChecker(), display="m.py")
    assert result.internal and "RuntimeError: kaboom" in result.error and not result.changed
    assert result.path == "m.py"


def test_bad_files_are_errors_not_internal(tmp_path):
    (tmp_path / "py2.py").write_bytes(b'print "hi"\nx = 1\n')
    result = process_file(tmp_path / "py2.py", [AssignOne], lambda: FakeChecker())
    assert result.error and "Python 2 syntax?" in result.error and not result.internal and not result.changed
    (tmp_path / "dir.py").mkdir()
    result = process_file(tmp_path / "dir.py", [AssignOne], lambda: FakeChecker())
    assert result.error == "cannot read: is a directory"


def test_the_checker_is_not_started_when_nothing_needs_checking():
    calls = []

    def factory():  # noqa: ANN202
        calls.append(1)
        return FakeChecker()

    process_source(b"y = 5\n", "m.py", [AssignOne], factory)
    process_source(SRC, "m.py", [NeverMatches], factory)
    process_source(SRC, "m.py", [variant(AssignOne, skip_reason="no")], factory)
    assert calls == []


def test_might_match_false_means_no_parse():
    result = process_source(b'print "py2"\n', "m.py", [NeverMatches], lambda: FakeChecker())
    assert result.error is None and result.records == []


def test_empty_file_is_fine():
    result = run(b"", [AssignOne])
    assert result.error is None and not result.changed


def test_file_result_is_picklable():
    result = run(SRC, [AssignOne], FakeChecker(by_new_code({"x = 2": rejected()})))
    clone = pickle.loads(pickle.dumps(result))
    assert clone == result and clone.records[0].verdict.outcome is Outcome.REJECTED


@pytest.mark.parametrize("data", [SRC.replace(b"\n", b"\r\n"), b"\xef\xbb\xbf" + SRC, SRC.rstrip(b"\n")])
def test_bytes_round_trip_outside_the_edit(data):
    result = run(data, [AssignOne])
    assert result.new == data.replace(b"x = 1", b"x = 2")


def test_verdict_none_only_when_nothing_was_checked():
    result = run(SRC, [AssignOne], FakeChecker(lambda k: verified("ok")))
    assert result.records[0].verdict is not None and result.records[0].reason == "ok"


def test_a_refutation_found_only_on_the_gpu_is_the_one_reported():
    import dataclasses

    def on(device: str, reason: str):  # noqa: ANN202
        verdict = rejected(reason)
        return dataclasses.replace(verdict, counterexample=dataclasses.replace(verdict.counterexample, device=device))

    rule = variant(AssignOne, ladder=("2", "3"))
    result = run(SRC, [rule], FakeChecker(by_new_code({"x = 2": on("cpu", "first rung"), "x = 3": on("cuda", "second rung")})))
    assert result.records[0].outcome == "rejected" and result.records[0].reason == "second rung"
    result = run(SRC, [rule], FakeChecker(by_new_code({"x = 2": on("cpu", "first rung"), "x = 3": on("cpu", "second rung")})))
    assert result.records[0].reason == "first rung"


def test_views_of_one_array_written_and_read_are_refused_for_every_rule() -> None:
    """Two names the function binds to overlapping views of one array (`dst = y[1:]`, `src =
    y[:-1]`) are independent inputs to a kernel that starts at the loop: the checker cannot see
    that a step reads what the step before wrote. Every rule's proposal is turned into a skip;
    views that are only read, or arrays the function does not link, keep their candidates."""
    from libcst.metadata import MetadataWrapper
    import libcst as cst

    from torchfix.codemods.registry import select_rules
    from torchfix.pipeline import propose_all

    def proposals(source: str) -> list:
        return [p for p in propose_all(select_rules(), MetadataWrapper(cst.parse_module(textwrap.dedent(source))))
                if p.rule == "TFV005"]

    # (the corpus trap: `dst = y[1:]`, `src = y[:-1]`, a loop writing `dst` from `src`)
    shifted = (Path(__file__).parent.parent / "corpus" / "TFV005" / "trap_shifted_views_of_one_array.py").read_text()
    (refused,) = proposals(shifted)
    assert not refused.candidates and "`dst` and `src` may be views of one array" in refused.skip_reason
    shifted = shifted.replace("def propagate(", "def f(")
    (kept,) = proposals(shifted.replace("dst = y[1:]", "dst = torch.zeros(len(y) - 1)"))
    assert kept.candidates
    # two results of a call torchfix cannot see into may be views of one global buffer
    (unseen,) = proposals(shifted.replace("dst = y[1:]", "dst = window(1).view(-1)").replace("src = y[:-1]", "src = window(0).view(-1)"))
    assert not unseen.candidates and "may be" in unseen.skip_reason
    # a parameter rebound to such a call is no longer the caller's array
    rebound = shifted.replace("keep: torch.Tensor)", "keep: torch.Tensor, dst=None)")
    rebound = rebound.replace("dst = y[1:]", "dst = window(1).view(-1)").replace("src = y[:-1]", "src = window(0).view(-1)")
    (param,) = proposals(rebound)
    assert not param.candidates and "may be" in param.skip_reason


def test_a_view_whose_elements_overlap_is_refused_when_written() -> None:
    from libcst.metadata import MetadataWrapper
    import libcst as cst

    from torchfix.codemods.registry import select_rules
    from torchfix.pipeline import propose_all

    for made in ("w = y.unfold(0, 2, 1)", "u = y.unfold(0, 2, 1)\n    w = u[1:]", "win = y.unfold\n    w = win(0, 2, 1)"):
        source = ("import torch\ndef scale(y):\n    y = y.view(-1)\n    " + made
                  + "\n    for i in range(len(w)):\n        w[i] = w[i] * 2\n    return y\n")
        found = [p for p in propose_all(select_rules(), MetadataWrapper(cst.parse_module(source))) if p.rule == "TFV001"]
        assert found and not any(p.candidates for p in found), made
