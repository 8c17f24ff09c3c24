"""Which files a run looks at.

Files named on the command line are taken if they are Python (``.py``/``.pyi``), whatever ignore
rules say (naming a file is asking for it). Directories are walked for ``*.py`` in sorted order,
honouring ``.gitignore`` files (git's wildmatch rules, via pathspec) -- those inside the walked tree
and those between it and the root of its git repository -- and ``.git/info/exclude``; hidden
directories, virtualenvs, build folders and caches are skipped, and a symlinked directory is never
followed (it may point anywhere, or into a loop). Files are not opened here: a FIFO, a device, a
dangling or looping symlink named ``*.py`` is reported when it is read, for that file alone.
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
_MAX_IGNORE_BYTES = 4 * 1024 * 1024


class DiscoveryError(Exception):
    """A path given on the command line cannot be used (a usage error, exit 2)."""


@dataclass
class _Ignore:
    """One ignore file: its patterns are relative to the directory holding it."""

    base: Path
    spec: pathspec.PathSpec

    def matches(self, path: Path, is_dir: bool) -> bool:
        try:
            rel = Path(os.path.abspath(path)).relative_to(self.base).as_posix()
        except ValueError:
            return False
        # a trailing slash lets directory-only patterns ("build/") match
        return self.spec.match_file(rel + "/" if is_dir else rel)


def _load_ignore(file: Path, base: Path) -> _Ignore | None:
    from torchfix.source import SourceError, read_bytes

    try:
        # a FIFO named .gitignore must not block the walk, nor /dev/zero behind a link exhaust it
        lines = read_bytes(file, _MAX_IGNORE_BYTES).decode("utf-8", errors="replace").splitlines()
    except SourceError:
        return None
    return _Ignore(Path(os.path.abspath(base)), pathspec.GitIgnoreSpec.from_lines(lines))


def _enclosing_ignores(start: Path) -> list[_Ignore]:
    """Ignore files above ``start`` that apply to it: parent ``.gitignore`` files up to the root of
    the git repository holding ``start``, and that repository's ``.git/info/exclude``."""
    current = Path(os.path.abspath(start))  # lexical, like the walked paths
    chain: list[Path] = []
    for directory in [current, *current.parents]:
        chain.append(directory)
        if (directory / ".git").exists():
            break
    else:
        return []  # not inside a git repository: no parent ignore file applies
    found: list[_Ignore] = []
    root = chain[-1]
    exclude = _load_ignore(root / ".git" / "info" / "exclude", root)
    if exclude is not None:
        found.append(exclude)
    # outermost first, as git reads them; ``start``'s own .gitignore is read by the walk
    for directory in reversed(chain[1:]):
        ignore = _load_ignore(directory / ".gitignore", directory)
        if ignore is not None:
            found.append(ignore)
    return found


def _ignored(path: Path, is_dir: bool, ignores: Sequence[_Ignore]) -> bool:
    return any(ig.matches(path, is_dir) for ig in ignores)


def _listing(directory: Path, ignores: list[_Ignore]) -> tuple[Iterator[os.DirEntry], list[_Ignore]]:
    """A directory's entries in sorted order, and the ignore files that apply inside it."""
    local = list(ignores)
    own = _load_ignore(directory / ".gitignore", directory)
    if own is not None:
        local.append(own)
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        entries = []
    return iter(entries), local


def _walk(root: Path, ignores: list[_Ignore], extra: pathspec.PathSpec | None) -> Iterator[Path]:
    # depth first, in sorted order, with a stack of its own: a tree thousands of directories deep
    # must not exhaust Python's recursion
    stack = [_listing(root, ignores)]
    while stack:
        entries, local = stack[-1]
        entry = next(entries, None)
        if entry is None:
            stack.pop()
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if _ignored(path, is_dir, local) or (extra is not None and extra.match_file(path.as_posix() + ("/" if is_dir else ""))):
            continue
        if is_dir:
            if entry.name in SKIP_DIRS or entry.name.startswith(".") or (path / "pyvenv.cfg").exists():
                continue
            stack.append(_listing(path, local))
        elif entry.name.endswith(".py"):
            try:
                # a symlink in the tree that points at a directory named "*.py" is not a file
                if entry.is_symlink() and entry.is_dir():
                    continue
            except OSError:
                pass
            # everything else is yielded, and reading it says what it is: a dangling or looping
            # symlink, a FIFO or a device is reported for that file (never opened, never read)
            yield path


def discover(paths: Sequence[str], exclude: Iterable[str] = ()) -> list[Path]:
    """The Python files under ``paths``, each once (by resolved path), in a deterministic order.

    Raises DiscoveryError for a path that does not exist or names a non-Python file. A dangling
    or looping symlink, a FIFO or a device named ``*.py`` is returned like any file: reading it
    reports it for that file alone (:func:`torchfix.source.read_bytes`), and the run goes on.
    """
    patterns = list(exclude)
    extra = pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None
    found: dict[str, Path] = {}

    def add(file: Path) -> None:
        # the same file reached twice (a symlink, or overlapping PATHs) would be rewritten twice
        found.setdefault(os.path.realpath(file), file)

    for raw in paths:
        path = Path(raw)
        if not os.path.lexists(path):
            raise DiscoveryError(f"{raw}: no such file or directory")
        if path.is_dir():
            # a symlinked directory named explicitly is walked (the user asked for it); symlinked
            # directories found inside are not
            for file in _walk(path, _enclosing_ignores(path), extra):
                add(file)
        elif path.suffix in PYTHON_SUFFIXES:
            add(path)
        else:
            raise DiscoveryError(f"{raw}: not a Python file (expected .py or .pyi)")
    return list(found.values())
