"""Output formats besides the diff: SARIF 2.1.0 and GitHub workflow annotations; diff colouring.

SARIF: one ``run`` whose ``tool.driver.rules`` lists every rule (code, name, summary, the
``--explain`` text as help); one ``result`` per proposal. A rewrite that is emitted is a
``warning`` carrying a ``fixes`` entry (the replaced lines and the new text); the others are
``note``s. ``properties`` hold the outcome, whether the rewrite was verified, the checker's verdict,
and the rewrite's diff. A file that failed is a tool execution notification. The run's
``properties.outcomes`` count the proposals by outcome, as the summary table does.

GitHub: ``::warning file=F,line=L,col=C,title=T::message`` for each rewrite that would be made,
``::notice`` for rejected / unverified / unmeasured ones, ``::error`` for files that failed,
``::warning`` for files skipped unread, read-only or over their budget (skipped proposals are not
annotated: they are noise in a pull request).
"""

from __future__ import annotations

import os
import re
from typing import Any, Sequence

from torchfix.equivalence.kernel import Outcome

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/torchfix/torchfix"


def sarif_report(rules: Sequence[type], rewrites: Sequence[dict], files: Sequence[dict], version: str, successful: bool = True) -> dict:
    """A SARIF 2.1.0 log from the JSON records (:func:`torchfix.report.record_json`)."""
    driver_rules = []
    index: dict[str, int] = {}
    for rule in rules:
        index[rule.code] = len(driver_rules)
        driver_rules.append(
            {
                "id": rule.code,
                "name": rule.name,
                "shortDescription": {"text": rule.summary},
                "fullDescription": {"text": rule.summary},
                "help": {"text": rule.explain(), "markdown": rule.explain()},
                "defaultConfiguration": {"level": "warning"},
            }
        )
    results = []
    for rec in rewrites:
        location = {
            "physicalLocation": {
                "artifactLocation": {"uri": rec["path"], "uriBaseId": "%SRCROOT%"},
                "region": {"startLine": rec["line"], "startColumn": rec["column"]},
            }
        }
        text = rec["message"] if rec["outcome"] == Outcome.VERIFIED else f"{rec['message']} -- {rec['outcome']}: {rec['reason']}"
        if rec["outcome"] == Outcome.VERIFIED and rec.get("speedup"):
            text += " (measured " + ", ".join(f"{s['speedup']:.3g}x on {s['device']} at n={s['n']}" for s in rec["speedup"]) + ")"
        if rec["outcome"] == Outcome.UNVERIFIED and rec["emitted"]:
            text += " (emitted UNVERIFIED under --unsafe)"
        result: dict[str, Any] = {
            "ruleId": rec["rule"],
            "level": "warning" if rec["emitted"] else "note",
            "message": {"text": text},
            "locations": [location],
            "properties": {
                "outcome": rec["outcome"],
                "verified": rec["outcome"] == Outcome.VERIFIED,
                "emitted": rec["emitted"],
                "reason": rec["reason"],
                "fix": rec["fix"],
                "diff": rec["diff"],
                "verdict": rec["verdict"],
            },
        }
        if rec["rule"] in index:
            result["ruleIndex"] = index[rec["rule"]]
        replacement = rec.get("replacement")
        if rec["emitted"] and replacement:
            start, end, inserted = replacement
            result["fixes"] = [
                {
                    "description": {"text": rec["fix"] or "rewrite"},
                    "artifactChanges": [
                        {
                            "artifactLocation": {"uri": rec["path"], "uriBaseId": "%SRCROOT%"},
                            "replacements": [
                                {
                                    "deletedRegion": {"startLine": start, "startColumn": 1, "endLine": end, "endColumn": 1},
                                    "insertedContent": {"text": inserted},
                                }
                            ],
                        }
                    ],
                }
            ]
        results.append(result)
    notifications = [
        {
            "level": _file_level(f),
            "message": {"text": f"{f['path']}: {f['error']}"},
            "locations": [{"physicalLocation": {"artifactLocation": {"uri": f["path"], "uriBaseId": "%SRCROOT%"}}}],
        }
        for f in files
        if f.get("error")
    ]
    root = os.getcwd().replace(os.sep, "/")
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "torchfix", "version": version, "informationUri": INFO_URI, "rules": driver_rules}},
                "originalUriBaseIds": {"%SRCROOT%": {"uri": "file://" + ("" if root.startswith("/") else "/") + root + "/"}},
                "invocations": [{"executionSuccessful": successful, "toolExecutionNotifications": notifications}],
                "results": results,
                # the summary table's counts: every outcome, unmeasured and skipped included
                "properties": {"outcomes": _outcome_counts(rewrites)},
            }
        ],
    }


def _outcome_counts(rewrites: Sequence[dict]) -> dict[str, int]:
    from torchfix.report import OUTCOMES

    return {outcome.value: sum(1 for rec in rewrites if rec["outcome"] == outcome) for outcome in OUTCOMES}


#: file statuses that are reported but are no failure: not read, out of budget, read-only
_NOTED = {"skipped": "skipped", "gave-up": "gave up", "read-only": "read-only"}


def _file_level(entry: dict) -> str:
    """How loudly a file's problem is reported: a failure is an error, a file that was skipped or
    ran out of budget a warning."""
    return "warning" if entry.get("status") in _NOTED else "error"


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github_annotations(rewrites: Sequence[dict], files: Sequence[dict]) -> list[str]:
    """GitHub Actions workflow commands, one a line."""
    lines = []
    for f in files:
        if f.get("error"):
            title = f"torchfix {_NOTED[f['status']]}" if f.get("status") in _NOTED else "torchfix"
            lines.append(f"::{_file_level(f)} file={_escape_property(f['path'])},title={_escape_property(title)}::{_escape_data(f['error'])}")
    for rec in rewrites:
        if rec["outcome"] == Outcome.SKIPPED:
            continue
        kind = "warning" if rec["emitted"] else "notice"
        title = f"{rec['rule']} {rec['outcome']}"
        if rec["outcome"] == Outcome.UNVERIFIED and rec["emitted"]:
            title += " (emitted, --unsafe)"
        message = rec["message"] if rec["outcome"] == Outcome.VERIFIED else f"{rec['message']}: {rec['reason']}"
        if rec["emitted"] and rec.get("fix"):
            message += f" [{rec['fix']}]"
        lines.append(
            f"::{kind} file={_escape_property(rec['path'])},line={rec['line']},col={rec['column']},"
            f"title={_escape_property(title)}::{_escape_data(message)}"
        )
    return lines


# --- colour --------------------------------------------------------------------------------------

_RESET = b"\x1b[0m"
_STYLES = ((b"diff --git", b"\x1b[1m"), (b"--- ", b"\x1b[1m"), (b"+++ ", b"\x1b[1m"), (b"@@", b"\x1b[36m"),
           (b"+", b"\x1b[32m"), (b"-", b"\x1b[31m"))
_DIFF_LINE = re.compile(rb"[^\n]*\n|[^\n]+\Z")


def color_diff(diff: bytes) -> bytes:
    """``diff`` with ANSI colours (headers bold, hunks cyan, added green, removed red); line
    endings stay outside the escapes."""
    out = []
    in_header = False
    for line in _DIFF_LINE.findall(diff):
        body = line.rstrip(b"\r\n")
        ending = line[len(body):]
        if body.startswith(b"diff --git"):
            in_header = True
        elif body.startswith(b"@@"):
            in_header = False
        style = None
        for prefix, code in _STYLES:
            if body.startswith(prefix) and (in_header or prefix not in (b"--- ", b"+++ ", b"diff --git")):
                style = code
                break
        out.append(style + body + _RESET + ending if style and body else line)
    return b"".join(out)


def use_color(choice: str, stream: Any) -> bool:
    """``--color``: always / never, or auto: a terminal, and ``NO_COLOR`` unset or empty."""
    if choice == "always":
        return True
    if choice == "never" or os.environ.get("NO_COLOR"):
        return False
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False
