"""``[tool.torchfix]`` in ``pyproject.toml``.

The configuration of a path is the nearest ``pyproject.toml`` holding a ``[tool.torchfix]`` table,
found by walking up from the path (a file's own directory first), as ruff does. Keys::

    [tool.torchfix]
    select = ["TFV00"]            # rule codes or prefixes (a list, or a comma string)
    ignore = ["TFV003"]
    exclude = ["legacy/", "*_pb2.py"]   # gitignore-style, relative to this pyproject.toml
    unsafe = false                # also emit unverified rewrites
    allow-slower = false          # also emit verified rewrites measured slower than the original
    measure = true                # time each verified rewrite, old vs new, at n = 256 and 4096
    examples = 100                # hypothesis examples per check
    timeout = 30                  # seconds per check
    seed = 0
    jobs = 4                      # worker processes
    max-file-size = "2M"          # larger files are skipped unread (bytes, or K/M/G; 0: no limit)
    file-budget = 300             # seconds one file may take, its checks included (0: no limit)
    file-memory = 2048            # MB this process may grow by while processing one file (0: no limit)
    max-candidates = 200          # candidate rewrites checked per file (0: no limit)
    scheduler = "tcp://host:8786" # check on this Dask cluster (--scheduler)

    [tool.torchfix.per-file-ignores]
    "tests/**" = ["TFV001", "TFV004"]   # gitignore-style glob -> rule codes or prefixes

Command-line flags override these. An unknown key or a value of the wrong type is a usage error:
a typo must not be silently ignored.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # pragma: no cover - Python 3.10
    try:
        import tomli as tomllib  # type: ignore[no-redef]
    except ImportError:
        tomllib = None  # type: ignore[assignment]


class ConfigError(Exception):
    """A configuration that cannot be used (a usage error, exit 2)."""


_KEYS = {
    "select": "codes", "ignore": "codes", "exclude": "globs", "per-file-ignores": "table",
    "unsafe": bool, "allow-slower": bool, "measure": bool, "examples": int, "timeout": (int, float), "seed": int, "jobs": int,
    "max-file-size": "size", "file-budget": (int, float), "file-memory": int, "max-candidates": int,
    "scheduler": str,
}


@dataclass(frozen=True)
class Config:
    """One ``[tool.torchfix]`` table (or the empty default). ``root``: the folder it applies from."""

    root: Path | None = None
    source: Path | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] | None = None
    exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unsafe: bool | None = None
    allow_slower: bool | None = None
    measure: bool | None = None
    examples: int | None = None
    timeout: float | None = None
    seed: int | None = None
    jobs: int | None = None
    max_file_size: int | None = None
    file_budget: float | None = None
    file_memory: int | None = None
    max_candidates: int | None = None
    #: the Dask scheduler that checks run on (``--scheduler``)
    scheduler: str | None = None
    _specs: dict = field(default_factory=dict, compare=False, hash=False, repr=False)

    def _relative(self, path: Path) -> str | None:
        if self.root is None:
            return None
        try:
            return Path(os.path.abspath(path)).relative_to(self.root).as_posix()
        except ValueError:
            return None

    def _spec(self, patterns: tuple[str, ...]) -> Any:
        spec = self._specs.get(patterns)
        if spec is None:
            import pathspec

            spec = self._specs[patterns] = pathspec.GitIgnoreSpec.from_lines(patterns)
        return spec

    def excluded(self, path: Path) -> bool:
        """Whether ``exclude`` drops ``path`` (a file)."""
        rel = self._relative(path)
        return bool(self.exclude) and rel is not None and self._spec(self.exclude).match_file(rel)

    def ignored_codes(self, path: Path) -> tuple[str, ...]:
        """The rule codes (prefixes) ``per-file-ignores`` turns off for ``path``."""
        rel = self._relative(path)
        if rel is None:
            return ()
        codes: list[str] = []
        for pattern, ignored in self.per_file_ignores:
            if self._spec((pattern,)).match_file(rel):
                codes.extend(ignored)
        return tuple(dict.fromkeys(codes))


def _codes(value: Any, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where}: expected a list of rule codes")
    return tuple(v.strip().upper() for v in value if v.strip())


def parse_config(table: dict, source: Path) -> Config:
    """A :class:`Config` from the ``[tool.torchfix]`` table of ``source``."""
    values: dict[str, Any] = {}
    for key, value in table.items():
        kind = _KEYS.get(key)
        where = f"{source}: [tool.torchfix] {key}"
        if kind is None:
            raise ConfigError(f"{source}: unknown key {key!r} in [tool.torchfix] (known: {', '.join(_KEYS)})")
        if kind == "codes":
            values[key] = _codes(value, where)
        elif kind == "globs":
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ConfigError(f"{where}: expected a list of glob patterns")
            values[key] = tuple(value)
        elif kind == "size":
            from torchfix.limits import parse_size

            try:
                values["max_file_size"] = parse_size(value)
            except ValueError as exc:
                raise ConfigError(f"{where}: {exc}") from None
        elif kind == "table":
            if not isinstance(value, dict):
                raise ConfigError(f"{where}: expected a table of glob = [codes]")
            values["per_file_ignores"] = tuple((glob, _codes(codes, f"{where}.{glob!r}")) for glob, codes in value.items())
        else:
            ok = isinstance(value, kind) and not (kind is not bool and isinstance(value, bool))
            if not ok:
                raise ConfigError(f"{where}: expected {'a number' if isinstance(kind, tuple) else kind.__name__}, got {value!r}")
            if key in ("examples", "jobs") and value < 1 or key == "timeout" and value <= 0:
                raise ConfigError(f"{where}: must be positive, got {value!r}")
            if key in ("file-budget", "file-memory", "max-candidates") and value < 0:
                raise ConfigError(f"{where}: must be 0 (no limit) or more, got {value!r}")
            values[key.replace("-", "_")] = float(value) if key in ("timeout", "file-budget") else value
    return Config(root=Path(os.path.abspath(source.parent)), source=source, **values)


_cache: dict[Path, Config] = {}
_MAX_PYPROJECT_BYTES = 16 * 1024 * 1024


def _read(pyproject: Path) -> dict | None:
    """The ``[tool.torchfix]`` table of ``pyproject``, or None when it has none."""
    if tomllib is None:  # pragma: no cover
        raise ConfigError(f"{pyproject}: reading pyproject.toml needs Python 3.11 or the tomli package")
    from torchfix.source import SourceError, read_bytes

    try:
        # a regular file of bounded size only: the tree being scanned may be hostile
        raw = read_bytes(pyproject, _MAX_PYPROJECT_BYTES)
    except SourceError as exc:
        raise ConfigError(f"{pyproject}: {exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: not UTF-8 ({exc.reason} at offset {exc.start})") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{pyproject}: invalid TOML: {exc}") from None
    tool = data.get("tool", {})
    table = tool.get("torchfix") if isinstance(tool, dict) else None
    if table is None:
        return None
    if not isinstance(table, dict):
        raise ConfigError(f"{pyproject}: [tool.torchfix] must be a table")
    return table


def find_config(path: Path | str) -> Config:
    """The configuration that applies to ``path``: the nearest ``pyproject.toml`` with a
    ``[tool.torchfix]`` table at or above it; the empty default when there is none."""
    start = Path(os.path.abspath(path))
    if not start.is_dir():
        start = start.parent
    visited: list[Path] = []
    found = Config()
    for directory in [start, *start.parents]:
        if directory in _cache:
            found = _cache[directory]
            break
        visited.append(directory)
        candidate = directory / "pyproject.toml"
        if candidate.is_file():
            table = _read(candidate)
            if table is not None:
                found = parse_config(table, candidate)
                break
    for directory in visited:
        _cache[directory] = found
    return found


def clear_cache() -> None:
    """Forget what :func:`find_config` read (tests; a long-lived process whose files changed)."""
    _cache.clear()
