"""The stderr report: per-proposal lines, and the summary table (rich only on a terminal)."""

from __future__ import annotations

import io

from test_app_fakes import rejected, unverified, verified
from torchfix.pipeline import FileResult, RewriteRecord
from torchfix.report import Summary, print_summary, record_lines, summary_text


def _record(outcome: str, reason: str = "why", verdict=None, candidate=None) -> RewriteRecord:  # noqa: ANN001
    return RewriteRecord("TFV004", "m.py", 3, 5, "a message", outcome, reason, verdict, candidate)


def _result() -> FileResult:
    return FileResult(
        "m.py", b"a", b"b",
        records=[
            _record("verified", verdict=verified(), candidate="sum"),
            _record("rejected", "differs", rejected()),
            _record("unverified", "timed out", unverified()),
            _record("skipped", "the loop breaks"),
        ],
    )


def test_record_lines():
    lines = "\n".join(record_lines(_result()))
    assert "m.py:3:5: TFV004 verified: a message [sum]" in lines
    assert "m.py:3:5: TFV004 rejected: differs\n  counterexample (shrunk):\n    inputs:\n      x = tensor([-1])" in lines
    assert "m.py:3:5: TFV004 unverified: timed out" in lines
    assert "m.py:3:5: TFV004 skipped: the loop breaks" in lines
    assert "verified" not in "\n".join(record_lines(_result(), show_verified=False)).split("rejected")[0]
    assert record_lines(FileResult("x.py", error="cannot read: permission denied")) == ["x.py: error: cannot read: permission denied"]


def test_summary_counts_and_plain_table():
    summary = Summary()
    summary.add(_result())
    summary.add(FileResult("bad.py", error="does not parse"))
    text = summary_text(summary, 1.25)
    assert text.splitlines()[0] == "2 files scanned, 1 rewritten, 1 failed (1.2s)"
    header, row = text.splitlines()[1:3]
    assert header.split() == ["rule", "verified", "rejected", "unverified", "unmeasured", "skipped"]
    assert row.split() == ["TFV004", "1", "1", "1", "0", "1"]


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_rich_table_only_on_a_terminal():
    summary = Summary()
    summary.add(_result())
    plain = io.StringIO()
    print_summary(summary, 0.5, plain)
    assert plain.getvalue() == summary_text(summary, 0.5) + "\n"
    tty = _Tty()
    print_summary(summary, 0.5, tty)
    out = tty.getvalue()
    assert "1 file scanned" in out and "TFV004" in out and "verified" in out
    assert out != plain.getvalue() and any(ch in out for ch in "│┃━─")
