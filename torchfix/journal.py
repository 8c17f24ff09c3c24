"""The report written as the run goes, so that a long run that dies can be resumed.

With ``--report FILE``, ``FILE`` holds a *journal* while the run goes on: JSON Lines, a header
(what decides the verdicts: torchfix, checker, torch and numpy versions, the check settings)
then one line per decided file, appended and flushed to disk as each file is decided, in the
order the output shows them. When the run ends, the complete JSON report replaces the journal
(atomically). A run that dies -- a lost scheduler, a killed job, a crash -- leaves the journal.

``--resume FILE`` reads such a journal and goes on: a file whose entry matches (same display
path, same bytes by SHA-256, same rules) is not processed again -- its result, rewritten bytes
included, comes from the entry -- and every other file is processed as usual. So nothing already
decided is checked again, and the output is what one uninterrupted run would have given. The
journal is trusted as the files being rewritten are: it is the user's own file, named on the
command line (unlike the verdict cache, which other processes could share).

Each file's result is stored whole (``file_result_to_json``; its records as the report writes
them, ``report.record_to_json``, verdicts within them as the checker does), with the
rewritten bytes in base64 when the file changed: ``--apply`` writes only after every file is
decided, so a resumed ``--apply`` must still be able to write the files decided before the stop.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Sequence

from torchfix.pipeline import FileResult, FileStatus
from torchfix.report import record_from_json, record_to_json

JOURNAL_FORMAT = "torchfix-journal"
JOURNAL_VERSION = 2


class ResumeError(Exception):
    """A ``--resume`` file that cannot be resumed (a usage error: the message says why)."""


def run_identity(settings: dict[str, Any]) -> dict[str, Any]:
    """What must be equal for verdicts of an earlier run to stand in this one."""
    from torchfix import __version__
    from torchfix.equivalence.cache import checker_version, library_versions

    return {"torchfix": __version__, "checker": checker_version(), "libraries": library_versions(), "settings": settings}


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# --- FileResult <-> JSON ------------------------------------------------------------------------


def file_result_to_json(result: FileResult) -> dict[str, Any]:
    """Everything of ``result`` but the original bytes (the file on disk has them)."""
    return {
        "path": result.path, "status": result.status.value, "error": result.error, "internal": result.internal,
        "new": base64.b64encode(result.new).decode("ascii") if result.changed else None,
        "records": [record_to_json(r) for r in result.records],
        "unused_suppressions": [[line, comment] for line, comment in result.unused_suppressions],
    }


def file_result_from_json(data: dict[str, Any], original: bytes) -> FileResult:
    new = data.get("new")
    return FileResult(
        path=data["path"], original=original,
        new=base64.b64decode(new) if new else None,
        error=data.get("error"), internal=bool(data.get("internal")),
        records=[record_from_json(r) for r in data.get("records", [])],
        status=FileStatus(data.get("status", FileStatus.PARSED.value)),
        unused_suppressions=[(int(line), str(comment)) for line, comment in data.get("unused_suppressions", [])],
    )


# --- reading a journal --------------------------------------------------------------------------


@dataclass(frozen=True)
class Entry:
    """One decided file of a journal: its line (carried into the new journal as it is) and fields."""

    line: str
    path: str
    rules: tuple[str, ...]
    sha256: str
    result: dict[str, Any]


def load(path: Path | str, identity: dict[str, Any]) -> dict[str, Entry]:
    """The entries of the journal at ``path`` by display path; ResumeError when it is not a
    journal, or was made by another torchfix/checker/torch or with other check settings. A last
    line cut short by the stop is ignored."""
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.read().split("\n")
    except FileNotFoundError:
        raise ResumeError(f"{path}: no such report to resume") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ResumeError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        header = json.loads(lines[0])
    except ValueError:
        header = None
    if not isinstance(header, dict) or header.get("format") != JOURNAL_FORMAT:
        if lines[0].strip() == "{":
            raise ResumeError(f"{path} is the report of a run that finished: there is nothing to resume")
        raise ResumeError(f"{path} is not a torchfix report journal")
    if header.get("version") != JOURNAL_VERSION:
        raise ResumeError(f"{path}: journal version {header.get('version')!r}, this torchfix reads {JOURNAL_VERSION}")
    theirs = header.get("identity", {})
    for key in ("torchfix", "checker", "libraries", "settings"):
        if theirs.get(key) != identity[key]:
            raise ResumeError(
                f"{path} was made with other {'check settings' if key == 'settings' else key + ' versions'} "
                f"({_difference(theirs.get(key), identity[key])}): resume with the same flags and versions, or start afresh"
            )
    entries: dict[str, Entry] = {}
    for line in lines[1:]:
        if not line.strip():
            continue
        try:
            data = json.loads(line)
            entry = Entry(line, str(data["path"]), tuple(data["rules"]), str(data["sha256"]), dict(data["result"]))
        except (ValueError, KeyError, TypeError):
            continue  # the line the stop cut short
        entries[entry.path] = entry
    return entries


def _difference(theirs: Any, ours: Any) -> str:
    if isinstance(theirs, dict) and isinstance(ours, dict):
        keys = sorted(k for k in set(theirs) | set(ours) if theirs.get(k) != ours.get(k))
        return ", ".join(f"{k}: {theirs.get(k)!r} then, {ours.get(k)!r} now" for k in keys)
    return f"{theirs!r} then, {ours!r} now"


def resumed_result(entry: Entry, path: str, rules: Sequence[str]) -> FileResult | None:
    """The entry's result when it still holds for the file at ``path`` with these ``rules``."""
    if tuple(rules) != entry.rules:
        return None
    try:
        data = Path(path).read_bytes()
    except OSError:
        return None
    if digest(data) != entry.sha256:
        return None
    try:
        return file_result_from_json(entry.result, data)
    except (ValueError, KeyError, TypeError, IndexError):
        return None


# --- writing ------------------------------------------------------------------------------------


def write_atomically(path: Path | str, text: str) -> None:
    """``path`` holds ``text`` or what it held before, never a part of it."""
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".torchfix-tmp", dir=target.parent or Path("."))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class Journal:
    """The journal of this run at ``path`` (see the module docstring): started with the header
    and the ``carried`` entries of the run it resumes, then one line per decided file."""

    def __init__(self, path: Path | str, identity: dict[str, Any], carried: Sequence[Entry] = ()) -> None:
        self.path = Path(path)
        header = json.dumps({"format": JOURNAL_FORMAT, "version": JOURNAL_VERSION, "identity": identity})
        write_atomically(self.path, "".join(line + "\n" for line in [header, *(e.line for e in carried)]))
        self._handle: IO[str] | None = open(self.path, "a", encoding="utf-8")

    def record(self, result: FileResult, rules: Sequence[str]) -> None:
        """Append ``result`` (a decided file) and put it on disk before the run goes on."""
        if self._handle is None or result.original is None:
            return  # a file that could not be read is cheap to look at again
        line = json.dumps({
            "path": result.path, "rules": list(rules), "sha256": digest(result.original), "result": file_result_to_json(result),
        })
        self._handle.write(line + "\n")
        self._handle.flush()
        os.fsync(self._handle.fileno())

    def finish(self, report_text: str) -> None:
        """Replace the journal by the complete report."""
        self.close()
        write_atomically(self.path, report_text)

    def close(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
