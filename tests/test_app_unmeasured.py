"""The speed gate (issue 17): a verified rewrite of a form that is not faster by construction
(``Candidate.needs_measurement``) whose verdict carries no timing is ``unmeasured``: counted in
every summary, not emitted by default, emitted with --allow-slower. Fake rule, fake checker."""

from __future__ import annotations

import dataclasses
import json

import pytest

import torchfix.cli as cli_module
from cli_runner import run
from test_app_fakes import AssignOne, FakeChecker, by_new_code, variant, verified
from torchfix.equivalence.kernel import Timing
from torchfix.pipeline import process_source
from torchfix.report import Summary, summary_text

SRC = b"def f():\n    x = 1\n    return x\n"
GATED = variant(AssignOne, needs_measurement=True)
NOT_TIMED = dataclasses.replace(verified(), timing_note="speed not measured: found no input of size 256 the old code accepts")


def test_a_gated_rewrite_without_a_timing_is_unmeasured_and_not_emitted():
    result = process_source(SRC, "m.py", [GATED], lambda: FakeChecker(lambda kernel: NOT_TIMED))
    assert not result.changed
    (record,) = result.records
    assert record.outcome == "unmeasured" and not record.emitted
    assert "found no input of size 256" in record.reason and "--allow-slower" in record.reason
    assert record.verdict is NOT_TIMED


def test_allow_slower_emits_an_unmeasured_rewrite():
    result = process_source(SRC, "m.py", [GATED], lambda: FakeChecker(lambda kernel: NOT_TIMED), allow_slower=True)
    assert result.changed and result.records[0].outcome == "verified" and result.records[0].emitted


def test_with_measurement_off_the_reason_says_so():
    result = process_source(SRC, "m.py", [GATED], lambda: FakeChecker(lambda kernel: verified()))
    assert result.records[0].outcome == "unmeasured" and "--no-measure" in result.records[0].reason


def test_a_measured_gated_rewrite_that_is_no_slower_is_emitted():
    timed = dataclasses.replace(verified(), timings=(Timing("cpu", 256, 1.0, 0.5),))
    result = process_source(SRC, "m.py", [GATED], lambda: FakeChecker(lambda kernel: timed))
    assert result.changed and result.records[0].outcome == "verified"


def test_an_ungated_rewrite_without_a_timing_is_still_emitted():
    result = process_source(SRC, "m.py", [AssignOne], lambda: FakeChecker(lambda kernel: NOT_TIMED))
    assert result.changed and result.records[0].outcome == "verified"


def test_the_ladder_climbs_past_an_unmeasured_rung():
    class TwoRungs(AssignOne):
        ladder = ("2", "3")

        def propose(self, wrapper):  # noqa: ANN001, ANN201 - the first rung gated, the second not
            for proposal in super().propose(wrapper):
                first, second = proposal.candidates
                proposal.candidates = (dataclasses.replace(first, needs_measurement=True), second)
                yield proposal

    checker = FakeChecker(by_new_code({"x = 2": NOT_TIMED, "x = 3": verified()}))
    result = process_source(SRC, "m.py", [TwoRungs], lambda: checker)
    assert result.new == SRC.replace(b"x = 1", b"x = 3") and result.records[0].outcome == "verified"


def test_the_summary_table_has_an_unmeasured_column():
    summary = Summary()
    summary.add(process_source(SRC, "m.py", [GATED], lambda: FakeChecker(lambda kernel: NOT_TIMED)))
    text = summary_text(summary, 0.1)
    header, row = text.splitlines()[1:3]
    assert header.split() == ["rule", "verified", "rejected", "unverified", "unmeasured", "skipped"]
    assert row.split() == ["TFV901", "0", "0", "0", "1", "0"]
    assert "withheld: their speed was not measured" in text


@pytest.fixture
def gated_cli(monkeypatch):  # noqa: ANN001, ANN201
    checker = FakeChecker(lambda kernel: NOT_TIMED)
    monkeypatch.setattr(cli_module, "load_rules", lambda select, ignore: [GATED])
    monkeypatch.setattr(cli_module, "find_rule", lambda code: GATED if code.upper() == "TFV901" else None)
    monkeypatch.setattr(cli_module, "known_codes", lambda: ["TFV901"])
    monkeypatch.setattr(cli_module, "documented_rules", lambda: [GATED])
    monkeypatch.setattr(cli_module, "make_checker", lambda *args, **kwargs: checker)
    return checker


def test_end_to_end_in_every_format(tmp_path, capfdbinary, gated_cli):
    (tmp_path / "m.py").write_bytes(SRC)
    code, out, err = run(["m.py", "--jobs", "1"], tmp_path, capfdbinary)
    assert code == 0 and out == b"", "nothing is emitted by default"
    assert "m.py:2:5: TFV901 unmeasured: verified, but its speed was not measured" in err
    assert err.split("TFV901  ")[-1].split()[:5] == ["0", "0", "0", "1", "0"]

    code, out, err = run(["m.py", "--jobs", "1", "--format", "json"], tmp_path, capfdbinary)
    report = json.loads(out)
    (rewrite,) = report["rewrites"]
    assert rewrite["outcome"] == "unmeasured" and not rewrite["emitted"] and rewrite["diff"] is None
    assert report["summary"]["rewrites"] == {"TFV901/unmeasured": 1}
    assert report["summary"]["outcomes"]["unmeasured"] == 1

    code, out, err = run(["m.py", "--jobs", "1", "--format", "sarif"], tmp_path, capfdbinary)
    sarif = json.loads(out)
    (result,) = sarif["runs"][0]["results"]
    assert result["level"] == "note" and "fixes" not in result
    assert "-- unmeasured: verified, but" in result["message"]["text"]
    assert result["properties"]["outcome"] == "unmeasured"
    assert sarif["runs"][0]["properties"]["outcomes"]["unmeasured"] == 1

    code, out, err = run(["m.py", "--jobs", "1", "--format", "github"], tmp_path, capfdbinary)
    assert out.decode().startswith("::notice file=m.py,line=2,col=5,title=TFV901 unmeasured::")

    code, out, err = run(["m.py", "--jobs", "1", "--allow-slower"], tmp_path, capfdbinary)
    assert code == 0 and b"+    x = 2" in out

    code, out, err = run(["m.py", "--jobs", "1", "--check"], tmp_path, capfdbinary)
    assert code == 0, "an unmeasured rewrite is not one that would be made"
