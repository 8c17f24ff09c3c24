"""Many repositories in one run: the list of them, a summary per repository, and resumed files
merged back into the run's order.

A *repository* is one PATH of the command line or one line of ``--repos FILE``: every file found
under it is counted in its summary (a file reachable from two of them counts for the first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from torchfix.pipeline import FileResult
from torchfix.report import OUTCOMES, Summary


class ReposFileError(Exception):
    """A ``--repos`` file that cannot be used (a usage error)."""


def read_repos_file(path: str) -> list[str]:
    """The repositories ``path`` lists: one path a line, ``#`` comments and blank lines ignored,
    relative paths taken from the listing file's folder (so the list can live with the repos)."""
    listing = Path(path)
    try:
        text = listing.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReposFileError(f"--repos {path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    repos = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        repo = Path(line) if Path(line).is_absolute() else listing.parent / line
        if not repo.exists():
            raise ReposFileError(f"--repos {path}:{number}: {line}: no such file or directory")
        repos.append(str(repo))
    if not repos:
        raise ReposFileError(f"--repos {path}: lists no repository")
    return repos


class RepoSummaries:
    """One :class:`Summary` per repository, in the order the repositories were given."""

    def __init__(self, repos: Sequence[str]) -> None:
        self.by_repo: dict[str, Summary] = {repo: Summary() for repo in repos}

    def add(self, repo: str, result: FileResult) -> None:
        self.by_repo.setdefault(repo, Summary()).add(result)

    def lines(self) -> list[str]:
        """``repo: 120 files, 3 rewritten, 0 failed; verified 5, rejected 1, unverified 0, skipped 7``"""
        lines = []
        for repo, s in self.by_repo.items():
            totals = {o: sum(n for (_, outcome), n in s.counts.items() if outcome is o) for o in OUTCOMES}
            lines.append(
                f"{repo}: {s.scanned} file{'s' if s.scanned != 1 else ''}, {s.rewritten} rewritten, {s.failed} failed; "
                + ", ".join(f"{o} {totals[o]}" for o in OUTCOMES)
            )
        return lines

    def json(self) -> list[dict[str, Any]]:
        return [
            {
                "path": repo, "scanned": s.scanned, "parsed": s.parsed, "failed": s.failed, "rewritten": s.rewritten,
                "rewrites": {f"{rule}/{outcome}": n for (rule, outcome), n in sorted(s.counts.items())},
            }
            for repo, s in self.by_repo.items()
        ]


class InOrder:
    """The results of every job in order: resumed ones from ``resumed`` (job index -> result), the
    rest from ``process`` run over the remaining jobs (which yields them in their order)."""

    def __init__(self, jobs: Sequence[Any], resumed: dict[int, FileResult], process: Callable[[list[Any]], Iterable[FileResult]]) -> None:
        self._jobs = jobs
        self._resumed = resumed
        self._rest = [job for i, job in enumerate(jobs) if i not in resumed]
        self._processed = process(self._rest) if self._rest else iter(())
        #: how many results came from the resumed run
        self.carried = len(resumed)

    def __iter__(self) -> Iterator[FileResult]:
        processed = iter(self._processed)
        for index in range(len(self._jobs)):
            if index in self._resumed:
                yield self._resumed.pop(index)
            else:
                yield next(processed)

    def close(self) -> None:
        close = getattr(self._processed, "close", None)
        if close is not None:
            close()
