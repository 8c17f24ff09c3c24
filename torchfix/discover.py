"""Which files a run looks at.

Files named on the command line are taken if they are Python (``.py``/``.pyi``); directories are
walked for ``*.py`` in sorted order, honouring ``.gitignore`` files (git's wildmatch rules, via
pathspec) and ``.git/info/exclude``, skipping hidden directories, virtualenvs, build folders and
caches, and never following a symlinked directory (it may point anywhere, or into a loop).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import pathspec

SKIP_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "env", ".env", ".tox", ".nox", "site-packages",
     "build", "dist", "node_modules", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".eggs"}
)
PYTHON_SUFFIXES = (".py", ".pyi")


class DiscoveryError(Exception):
    """A path given on the command line cannot be used (a usage error)."""


@dataclass
class _Ignore:
    base: Path
    spec: pathspec.PathSpec

    def matches(self, path: Path, is_dir: bool) -> bool:
        try:
            rel = path.relative_to(self.base).as_posix()
        except ValueError:
            return False
        return self.spec.match_file(rel + "/" if is_dir else rel)


def _load_ignore(directory: Path, name: str = ".gitignore") -> _Ignore | None:
    path = directory / name
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return _Ignore(directory, pathspec.PathSpec.from_lines("gitignore", lines))


def _repo_excludes(start: Path) -> list[_Ignore]:
    """``.git/info/exclude`` and parent ``.gitignore`` files of the repository holding ``start``."""
    found: list[_Ignore] = []
    current = start.resolve()
    for directory in [current, *current.parents]:
        if (directory / ".git").is_dir():
            exclude = directory / ".git" / "info"
            ignore = _load_ignore(exclude, "exclude")
            if ignore is not None:
                found.append(_Ignore(directory, ignore.spec))
            break
    return found


def _walk(root: Path, ignores: list[_Ignore], extra: pathspec.PathSpec | None) -> Iterator[Path]:
    local = list(ignores)
    own = _load_ignore(root)
    if own is not None:
        local.append(own)
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if any(ig.matches(path, is_dir) for ig in local) or (extra is not None and extra.match_file(path.as_posix())):
            continue
        if is_dir:
            if entry.name in SKIP_DIRS or entry.name.startswith(".") or (path / "pyvenv.cfg").exists():
                continue
            yield from _walk(path, local, extra)
        elif entry.name.endswith(".py"):
            yield path


def discover(paths: Sequence[str], exclude: Iterable[str] = ()) -> list[Path]:
    """The Python files under ``paths``, deduplicated, in a deterministic order."""
    extra = pathspec.PathSpec.from_lines("gitignore", list(exclude)) if exclude else None
    found: dict[str, Path] = {}
    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        if path.is_dir() and not path.is_symlink():
            for file in _walk(path, _repo_excludes(path), extra):
                found.setdefault(os.path.normpath(file), file)
        elif path.is_dir():
            raise DiscoveryError(f"{raw}: is a symlink to a directory (not followed)")
        elif path.suffix in PYTHON_SUFFIXES:
            found.setdefault(os.path.normpath(path), path)
        else:
            raise DiscoveryError(f"{raw}: not a Python file")
    return list(found.values())
