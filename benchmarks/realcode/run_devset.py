"""Measure torchfix on the real-code dev set: recall on loops a reviewer would vectorize, traps kept.

The manifest (``manifest.tsv`` beside this file) holds references only: repository, commit, path,
line range and our own one-line hint. This script extracts the named files from local snapshots at
run time (never into the project), runs ``python -m torchfix`` over them once, and maps every
proposal of the JSON report back to the manifest row whose lines it touches.

    python benchmarks/realcode/run_devset.py                     # per-row table and summary
    python benchmarks/realcode/run_devset.py --show              # also every emitted hunk + its hint
    python benchmarks/realcode/run_devset.py --json out.json -- --jobs 2 --examples 50

Arguments this script does not know (or everything after ``--``) go to torchfix unchanged
(``--jobs``, ``--examples``, ``--unsafe``, ``--allow-slower``, ``--no-measure``, ``--seed``...).

Snapshots: ``github:OWNER/NAME`` rows read ``SNAPSHOTS/OWNER+NAME/repo`` (a git directory, or a
clone whose ``.git`` is there) with ``git show COMMIT:PATH``; ``pypi:NAME`` rows read the wheel or
sdist ``SNAPSHOTS/pypi/NAME/NAME-VERSION*`` that ``pip download --no-deps NAME==VERSION`` saved.
A missing snapshot or file is reported with the command that gets it, and its rows count as
missing -- not as misses.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

HERE = Path(__file__).resolve().parent
PROJECT_ROOT = HERE.parent.parent
MANIFEST = HERE / "manifest.tsv"
DEFAULT_SNAPSHOTS = Path(os.environ.get("TORCHFIX_SNAPSHOTS", "/work/.mirror"))

COLUMNS = ("id", "repo", "commit", "path", "lines", "family", "pattern", "lib", "expect", "hint")
FAMILIES = ("loop", "index")
PATTERNS = tuple(f"TFV00{n}" for n in range(1, 8))
LIBS = ("torch", "numpy")
EXPECTS = ("rewrite", "trap")
#: what became of a row, best first: a row with several proposals shows the best one
STATUSES = ("emitted", "rejected", "unverified", "unmeasured", "skipped", "no proposal")
_OUTCOME_RANK = {name: rank for rank, name in enumerate(STATUSES)}

_ID = re.compile(r"^[a-z0-9]+-[0-9]{2,}$")
_GITHUB = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PYPI = re.compile(r"^pypi:[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SHA = re.compile(r"^[0-9a-f]{40}$")
_VERSION = re.compile(r"^[0-9][0-9A-Za-z.+!-]*$")
_LINES = re.compile(r"^([1-9][0-9]*)-([1-9][0-9]*)$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", re.MULTILINE)


class ManifestError(ValueError):
    """A manifest line that does not say what a row must say (the message names the line)."""


@dataclass(frozen=True)
class Row:
    """One loop (or comprehension) of real code, by reference."""

    id: str
    repo: str
    commit: str
    path: str
    start: int
    end: int
    family: str
    pattern: str
    lib: str
    expect: str
    hint: str

    @property
    def lines(self) -> str:
        return f"{self.start}-{self.end}"

    @property
    def source_key(self) -> tuple[str, str, str]:
        return (self.repo, self.commit, self.path)

    @property
    def tree_path(self) -> str:
        """Where the extracted file lies inside the temporary tree (commit included: one
        repository can appear at several commits with the same path)."""
        owner_name = self.repo.removeprefix("pypi:").replace("/", "+")
        prefix = "pypi+" if self.repo.startswith("pypi:") else ""
        return f"{prefix}{owner_name}@{self.commit[:12]}/{self.path}"


def parse_row(fields: Sequence[str], where: str) -> Row:
    """One manifest line as a Row; ``ManifestError`` naming ``where`` for anything malformed."""
    if len(fields) != len(COLUMNS):
        raise ManifestError(f"{where}: {len(fields)} fields, expected {len(COLUMNS)} ({', '.join(COLUMNS)})")
    values = dict(zip(COLUMNS, (f.strip() for f in fields)))
    problems = []
    if not _ID.match(values["id"]):
        problems.append(f"id {values['id']!r} is not like 'abc-01'")
    repo, commit = values["repo"], values["commit"]
    if _PYPI.match(repo):
        if not _VERSION.match(commit):
            problems.append(f"commit {commit!r} of a pypi row must be a version")
    elif _GITHUB.match(repo):
        if not _SHA.match(commit):
            problems.append(f"commit {commit!r} must be a full 40-hex-digit commit")
    else:
        problems.append(f"repo {repo!r} is neither OWNER/NAME nor pypi:NAME")
    path = values["path"]
    if not path.endswith(".py") or path.startswith("/") or ".." in path.split("/"):
        problems.append(f"path {path!r} must be a relative .py path")
    match = _LINES.match(values["lines"])
    if not match:
        problems.append(f"lines {values['lines']!r} must be START-END")
    elif int(match.group(1)) > int(match.group(2)):
        problems.append(f"lines {values['lines']!r} end before they start")
    for column, allowed in (("family", FAMILIES), ("pattern", PATTERNS), ("lib", LIBS), ("expect", EXPECTS)):
        if values[column] not in allowed:
            problems.append(f"{column} {values[column]!r} is not one of {', '.join(allowed)}")
    if len(values["hint"]) < 20:
        problems.append("hint is missing or too short to say anything")
    if problems:
        raise ManifestError(f"{where}: " + "; ".join(problems))
    return Row(
        id=values["id"], repo=repo, commit=commit, path=path,
        start=int(match.group(1)), end=int(match.group(2)),  # type: ignore[union-attr]
        family=values["family"], pattern=values["pattern"], lib=values["lib"],
        expect=values["expect"], hint=values["hint"],
    )


def load_manifest(path: Path = MANIFEST) -> list[Row]:
    """Every row of the manifest; ``ManifestError`` on a bad header, line or duplicate id."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    if not lines or tuple(lines[0].split("\t")) != COLUMNS:
        raise ManifestError(f"{path}:1: header must be the tab-separated columns {', '.join(COLUMNS)}")
    rows: list[Row] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        row = parse_row(line.split("\t"), f"{path}:{number}")
        if row.id in seen:
            raise ManifestError(f"{path}:{number}: id {row.id} already used on line {seen[row.id]}")
        seen[row.id] = number
        rows.append(row)
    _check_overlaps(rows, path)
    return rows


def _check_overlaps(rows: Sequence[Row], path: Path) -> None:
    """Two rows of one file may nest (an inner loop inside an outer one) but not partly overlap:
    a proposal must map to one innermost row."""
    by_file: dict[tuple[str, str, str], list[Row]] = defaultdict(list)
    for row in rows:
        by_file[row.source_key].append(row)
    for same_file in by_file.values():
        for a in same_file:
            for b in same_file:
                if a.id < b.id and a.start <= b.end and b.start <= a.end:
                    nested = (a.start <= b.start and b.end <= a.end) or (b.start <= a.start and a.end <= b.end)
                    if not nested:
                        raise ManifestError(f"{path}: rows {a.id} and {b.id} overlap without nesting")


# --------------------------------------------------------------------------- extracting sources

@dataclass
class Missing:
    """A source that could not be read, with what gets it."""

    repo: str
    commit: str
    path: str
    reason: str
    remedy: str


def _git_dir(snapshots: Path, repo: str) -> Path | None:
    base = snapshots / repo.replace("/", "+") / "repo"
    if (base / ".git").is_dir():
        return base / ".git"
    if (base / "HEAD").is_file():
        return base
    return None


def _fetch_remedy(repo: str, commit: str) -> str:
    if repo.startswith("pypi:"):
        name = repo.removeprefix("pypi:")
        return f"pip download --no-deps {name}=={commit} -d SNAPSHOTS/pypi/{name}"
    return f"fetch github:{repo}"


def _read_pypi(snapshots: Path, name: str, version: str, path: str) -> bytes:
    folder = snapshots / "pypi" / name
    candidates = sorted(folder.glob(f"*-{version}-*.whl")) + sorted(folder.glob(f"*-{version}.tar.gz")) \
        + sorted(folder.glob(f"*-{version}.zip"))
    if not candidates:
        raise FileNotFoundError(f"no {name} {version} archive in {folder}")
    archive = candidates[0]
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as zf:
            for member in zf.namelist():
                if member == path or member.endswith("/" + path) and archive.suffix == ".zip":
                    return zf.read(member)
    else:
        with tarfile.open(archive) as tf:
            for member in tf.getmembers():
                if member.isfile() and member.name.split("/", 1)[-1] == path:
                    handle = tf.extractfile(member)
                    if handle is not None:
                        return handle.read()
    raise FileNotFoundError(f"{path} is not in {archive.name}")


def read_source(snapshots: Path, repo: str, commit: str, path: str) -> bytes:
    """The bytes of ``path`` at ``commit``; ``FileNotFoundError`` saying why it cannot be had."""
    if repo.startswith("pypi:"):
        return _read_pypi(snapshots, repo.removeprefix("pypi:"), commit, path)
    git_dir = _git_dir(snapshots, repo)
    if git_dir is None:
        raise FileNotFoundError(f"no snapshot of {repo} under {snapshots}")
    done = subprocess.run(
        ["git", "--git-dir", str(git_dir), "show", f"{commit}:{path}"], capture_output=True, check=False
    )
    if done.returncode != 0:
        raise FileNotFoundError(f"{repo}@{commit[:12]}: {done.stderr.decode(errors='replace').strip()}")
    return done.stdout


def extract(rows: Sequence[Row], snapshots: Path, tree: Path) -> tuple[dict[str, tuple], list[Missing]]:
    """Write each row's whole file into ``tree``; the tree paths written, and what was missing."""
    written: dict[str, tuple] = {}
    missing: list[Missing] = []
    for key in dict.fromkeys(row.source_key for row in rows):
        repo, commit, path = key
        row = next(r for r in rows if r.source_key == key)
        try:
            data = read_source(snapshots, repo, commit, path)
        except FileNotFoundError as exc:
            missing.append(Missing(repo, commit, path, str(exc), _fetch_remedy(repo, commit)))
            continue
        target = tree / row.tree_path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        written[row.tree_path] = key
    return written, missing


# --------------------------------------------------------------------------- mapping proposals

def hunk_ranges(diff: str | None) -> list[tuple[int, int]]:
    """The original-file line ranges (first, last; inclusive) of a unified diff's hunks."""
    ranges = []
    for match in _HUNK.finditer(diff or ""):
        first = int(match.group(1))
        count = 1 if match.group(2) is None else int(match.group(2))
        ranges.append((first, first + max(count, 1) - 1))
    return ranges


def _touched_ranges(record: dict) -> list[tuple[int, int]]:
    """Lines a proposal touches: its reported line, its replacement span, its diff hunks."""
    ranges = [(int(record["line"]), int(record["line"]))]
    replacement = record.get("replacement")
    if replacement:
        first, end_exclusive = int(replacement[0]), int(replacement[1])
        ranges.append((first, max(first, end_exclusive - 1)))
    ranges.extend(hunk_ranges(record.get("diff")))
    return ranges


def _status_of(record: dict) -> str:
    if record.get("emitted"):
        return "emitted"
    outcome = str(record.get("outcome", ""))
    return outcome if outcome in _OUTCOME_RANK else "skipped"


@dataclass
class RowResult:
    """What happened to one row."""

    row: Row
    status: str = "no proposal"
    missing: str | None = None
    #: each proposal mapped to this row: rule, outcome, reason, candidate, diff
    proposals: list[dict] = field(default_factory=list)
    #: emitted rewrites that touch this row's lines (for a trap: each one breaks it)
    touching_emitted: list[dict] = field(default_factory=list)

    @property
    def hit(self) -> bool:
        return self.status == "emitted"


def map_records(rows: Sequence[Row], records: Iterable[dict], path_of: dict[str, tuple]) -> tuple[list[RowResult], list[dict]]:
    """Map report records to rows. ``path_of`` maps a record's file (tree-relative) to its source
    key. A record belongs to the innermost row containing its reported line, else to the innermost
    row one of its hunks overlaps. Returns the row results and the emitted records that touch no
    row (rewrites of code outside the dev set, to read)."""
    results = {row.id: RowResult(row) for row in rows}
    by_key: dict[tuple, list[Row]] = defaultdict(list)
    for row in rows:
        by_key[row.source_key].append(row)
    outside: list[dict] = []
    for record in records:
        key = path_of.get(record["path"])
        candidates = by_key.get(key, []) if key is not None else []
        line = int(record["line"])
        touched = _touched_ranges(record)
        containing = [r for r in candidates if r.start <= line <= r.end]
        overlapping = [r for r in candidates if any(a <= r.end and r.start <= b for a, b in touched)]
        owner_rows = containing or overlapping
        status = _status_of(record)
        if status == "emitted":
            for r in overlapping or containing:
                results[r.id].touching_emitted.append(record)
            if not owner_rows:
                outside.append(record)
        if owner_rows:
            owner = min(owner_rows, key=lambda r: (r.end - r.start, r.start))
            result = results[owner.id]
            result.proposals.append(record)
            if _OUTCOME_RANK[status] < _OUTCOME_RANK[result.status]:
                result.status = status
    return [results[row.id] for row in rows], outside


# --------------------------------------------------------------------------- summaries

def _ratio(hits: int, total: int) -> str:
    return f"{hits}/{total} ({100.0 * hits / total:.0f}%)" if total else "0/0"


def summarize(results: Sequence[RowResult]) -> dict:
    """Recall overall and per family/pattern/lib over present rewrite rows; traps kept."""
    present = [r for r in results if r.missing is None]
    rewrites = [r for r in present if r.row.expect == "rewrite"]
    traps = [r for r in present if r.row.expect == "trap"]
    summary: dict = {
        "rows": len(results),
        "missing_rows": len(results) - len(present),
        "rewrite_rows": len(rewrites),
        "emitted": sum(r.hit for r in rewrites),
        "recall": {"overall": [sum(r.hit for r in rewrites), len(rewrites)]},
        "outcomes": dict(Counter(r.status for r in rewrites)),
        "trap_rows": len(traps),
        "traps_kept": sum(not r.touching_emitted for r in traps),
        "traps_broken": [r.row.id for r in traps if r.touching_emitted],
    }
    for column in ("family", "pattern", "lib"):
        groups: dict[str, list[RowResult]] = defaultdict(list)
        for r in rewrites:
            groups[getattr(r.row, column)].append(r)
        summary["recall"][column] = {k: [sum(r.hit for r in v), len(v)] for k, v in sorted(groups.items())}
    return summary


def _first_reason(result: RowResult) -> str:
    for record in sorted(result.proposals, key=lambda rec: _OUTCOME_RANK[_status_of(rec)]):
        if _status_of(record) == result.status:
            reason = record.get("reason") or record.get("fix") or ""
            return f"{record.get('rule', '?')} line {record.get('line')}: {reason}"
    return ""


def render(results: Sequence[RowResult], summary: dict, outside: Sequence[dict], missing: Sequence[Missing],
           file_errors: Sequence[dict], show: bool) -> str:
    out: list[str] = []
    out.append(f"{'id':8} {'expect':7} {'family':6} {'pattern':7} {'lib':5} {'status':12} detail")
    for r in results:
        if r.missing is not None:
            status, detail = "missing", r.missing
        elif r.row.expect == "trap":
            status = "BROKEN" if r.touching_emitted else "kept"
            detail = ", ".join(f"{rec['rule']} line {rec['line']}" for rec in r.touching_emitted) or _first_reason(r)
        else:
            status, detail = r.status, _first_reason(r)
        out.append(f"{r.row.id:8} {r.row.expect:7} {r.row.family:6} {r.row.pattern:7} {r.row.lib:5} {status:12} {detail[:160]}")
    out.append("")
    overall = summary["recall"]["overall"]
    out.append(f"recall (emitted / rewrite rows): {_ratio(*overall)}")
    for column in ("family", "pattern", "lib"):
        parts = ", ".join(f"{k} {_ratio(*v)}" for k, v in summary["recall"][column].items())
        out.append(f"  per {column}: {parts}")
    out.append("  rewrite rows by status: " + ", ".join(f"{k} {v}" for k, v in sorted(summary["outcomes"].items())))
    out.append(f"traps kept: {summary['traps_kept']}/{summary['trap_rows']}"
               + (f" (BROKEN: {', '.join(summary['traps_broken'])})" if summary["traps_broken"] else ""))
    if missing:
        out.append(f"missing: {summary['missing_rows']} row(s) not measured (counted neither as hits nor as misses):")
        for m in missing:
            out.append(f"  {m.repo}@{m.commit[:12]} {m.path}: {m.reason} -- get it with: {m.remedy}")
    for error in file_errors:
        out.append(f"file error: {error['path']}: {error['error']}")
    out.append(f"emitted rewrites outside every row: {len(outside)}")
    for record in outside:
        out.append(f"  {record['path']}:{record['line']} {record['rule']}: {record.get('fix') or ''}")
    if show:
        out.append("")
        for r in results:
            for record in r.touching_emitted:
                out.append(f"=== {r.row.id} ({r.row.expect}) {r.row.repo} {r.row.path}:{r.row.lines}")
                out.append(f"hint: {r.row.hint}")
                out.append(record.get("diff") or "(no diff in the report)")
        for record in outside:
            out.append(f"=== outside every row: {record['path']}:{record['line']}")
            out.append(record.get("diff") or "(no diff in the report)")
    return "\n".join(out)


# --------------------------------------------------------------------------- running

def run_torchfix(tree: Path, report: Path, passthrough: Sequence[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    """``python -m torchfix TREE --format json --report REPORT`` from the project root, so that
    the checkout's own code is the one imported."""
    command = [sys.executable, "-m", "torchfix", str(tree), "--format", "json", "--report", str(report), *passthrough]
    return subprocess.run(command, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True, check=False)


def _tree_relative(record_path: str, tree: Path) -> str:
    absolute = (PROJECT_ROOT / record_path).resolve()
    try:
        return absolute.relative_to(tree.resolve()).as_posix()
    except ValueError:
        return record_path


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--manifest", type=Path, default=MANIFEST)
    parser.add_argument("--snapshots", type=Path, default=DEFAULT_SNAPSHOTS,
                        help="folder of snapshots (OWNER+NAME/repo, pypi/NAME); default $TORCHFIX_SNAPSHOTS or /work/.mirror")
    parser.add_argument("--only", default="", help="comma list of row ids or id prefixes to measure")
    parser.add_argument("--show", action="store_true", help="print every emitted hunk next to its row's hint")
    parser.add_argument("--json", type=Path, help="write rows, summary and records to this file")
    parser.add_argument("--keep-tree", type=Path, help="extract into this folder (kept) instead of a temporary one")
    parser.add_argument("--no-cache", action="store_true", help="run torchfix with TORCHFIX_NO_CACHE=1")
    args, passthrough = parser.parse_known_args(argv)
    passthrough = [a for a in passthrough if a != "--"]

    try:
        rows = load_manifest(args.manifest)
    except (OSError, ManifestError) as exc:
        print(f"run_devset: {exc}", file=sys.stderr)
        return 2
    if args.only:
        wanted = [w.strip() for w in args.only.split(",") if w.strip()]
        rows = [r for r in rows if any(r.id == w or r.id.startswith(w) for w in wanted)]
        if not rows:
            print(f"run_devset: --only {args.only!r} selects no row", file=sys.stderr)
            return 2

    with tempfile.TemporaryDirectory(prefix="torchfix-devset-") as scratch:
        tree = args.keep_tree.resolve() if args.keep_tree else Path(scratch) / "tree"
        tree.mkdir(parents=True, exist_ok=True)
        written, missing = extract(rows, args.snapshots, tree)
        report_path = Path(scratch) / "report.json"
        env = dict(os.environ)
        if args.no_cache:
            env["TORCHFIX_NO_CACHE"] = "1"
        records: list[dict] = []
        file_errors: list[dict] = []
        if written:
            done = run_torchfix(tree, report_path, passthrough, env)
            if done.returncode not in (0, 1) or not report_path.is_file():
                print(f"run_devset: torchfix exited {done.returncode}\n{done.stderr[-4000:]}", file=sys.stderr)
                return 2
            report = json.loads(report_path.read_text(encoding="utf-8"))
            for record in report.get("rewrites", []):
                record = dict(record, path=_tree_relative(record["path"], tree))
                records.append(record)
            for entry in report.get("files", []):
                if entry.get("error"):
                    file_errors.append({"path": _tree_relative(entry["path"], tree), "error": entry["error"]})

    missing_keys = {(m.repo, m.commit, m.path): m for m in missing}
    results, outside = map_records(rows, records, written)
    for result in results:
        gone = missing_keys.get(result.row.source_key)
        if gone is not None:
            result.missing = f"{gone.reason} ({gone.remedy})"
    summary = summarize(results)
    print(render(results, summary, outside, missing, file_errors, args.show))
    if args.json:
        payload = {
            "summary": summary,
            "rows": [
                {**asdict(r.row), "status": ("missing" if r.missing else r.status), "missing": r.missing,
                 "trap_broken_by": [f"{x['rule']}:{x['line']}" for x in r.touching_emitted] if r.row.expect == "trap" else [],
                 "proposals": r.proposals}
                for r in results
            ],
            "outside_rows": outside,
            "missing": [asdict(m) for m in missing],
            "file_errors": file_errors,
            "torchfix_args": list(passthrough),
        }
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
