"""A persistent verification cache: a re-run over an unchanged repository costs no checks.

Whoever can write a cache entry decides what is "verified", so the cache is guarded:

- the directory is the user's own: created with mode 0700; an existing one that is a symlink,
  is owned by another user, or is group- or world-writable is refused (the cache is then off for
  the run, and :meth:`VerdictCache.problem` says why; the application prints it once);
- entries are written by the parent process only (the sandboxed worker cannot even see the
  directory), atomically (temp file + rename), so parallel runs can share it;
- an entry's key is a hash of the kernel's content (``Kernel.key()``), the settings that change
  what a check can find (examples, seed, devices, measuring), the checker's own source hash, and
  the versions of torchfix, torch and numpy -- a new checker or library never reuses an old
  verdict;
- every entry carries an HMAC-SHA256 over its key and its verdict, under a per-user secret kept
  in ``<cache>/secret`` (32 random bytes, mode 0600, refused when it is not the user's own or
  readable by others). An entry whose MAC does not verify -- tampered with, copied from another
  user's cache, or stored under another key -- is ignored and counted (``rejected``).

Location: ``$TORCHFIX_CACHE_DIR``, else ``$XDG_CACHE_HOME/torchfix``, else ``~/.cache/torchfix``
(verdicts under ``verdicts/``). ``TORCHFIX_NO_CACHE=1`` turns it off. Under pytest
(``PYTEST_CURRENT_TEST`` is set) the default is off too, so that tests never read verdicts an
earlier checker left behind; a test that wants the cache passes ``cache_dir`` explicitly.
Timeouts and worker crashes are never stored (they may depend on the machine's load).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import stat
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from torchfix.equivalence.kernel import Counterexample, Kernel, Outcome, Timing, Verdict

#: the per-user secret's file name, inside the cache directory
SECRET_NAME = "secret"
_SOURCE_HASH: str | None = None


def source_digest(*folders: Path) -> str:
    """A hash of the Python source under ``folders`` (each file's name and bytes): what one
    version of the code stored is not reused by another."""
    digest = hashlib.sha256()
    for folder in folders:
        for path in sorted(folder.rglob("*.py")):
            digest.update(str(path.relative_to(folder)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


def checker_version() -> str:
    """A hash of the checker's source files: verdicts of another checker version are not reused."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        _SOURCE_HASH = source_digest(Path(__file__).resolve().parent)
    return _SOURCE_HASH


_VERSIONS: str | None = None


def library_versions() -> str:
    """torchfix, torch and numpy versions (read from metadata: torch is not imported here)."""
    global _VERSIONS
    if _VERSIONS is None:
        from importlib import metadata

        from torchfix import __version__

        parts = [f"torchfix={__version__}"]
        for name in ("torch", "numpy"):
            try:
                parts.append(f"{name}={metadata.version(name)}")
            except metadata.PackageNotFoundError:
                parts.append(f"{name}=?")
        _VERSIONS = ",".join(parts)
    return _VERSIONS


def private_directory_problem(path: Path) -> str | None:
    """Why ``path`` may not hold this user's cache (None: it may), creating it (0700) if absent."""
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = os.lstat(path)
    except OSError as exc:
        return f"cannot create {path}: {exc.strerror or exc}"
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        return f"{path} is not a directory (a symlink?)"
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"{path} is owned by another user (uid {info.st_uid})"
    if info.st_mode & 0o022:
        return f"{path} is writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
    if info.st_mode & 0o077:
        try:
            os.chmod(path, 0o700)  # ours and not writable by others: make it private too
        except OSError:
            pass
    return None


def default_cache_dir() -> Path | None:
    """The cache directory the environment asks for, or None when caching is off."""
    if os.environ.get("TORCHFIX_NO_CACHE", "") not in ("", "0"):
        return None
    explicit = os.environ.get("TORCHFIX_CACHE_DIR")
    if explicit:
        return Path(explicit)
    if os.environ.get("PYTEST_CURRENT_TEST"):
        return None
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "torchfix"


def verdict_to_json(verdict: Verdict) -> dict[str, Any]:
    data = asdict(verdict)
    data["outcome"] = verdict.outcome.value
    return data


def verdict_from_json(data: dict[str, Any]) -> Verdict:
    cex = data.get("counterexample")
    counterexample = None
    if cex:
        known = {f.name for f in fields(Counterexample)}
        cex = {k: v for k, v in cex.items() if k in known}
        cex["inputs"] = tuple(tuple(pair) for pair in cex.get("inputs", ()))
        counterexample = Counterexample(**cex)
    return Verdict(
        Outcome(data["outcome"]),
        data["reason"],
        counterexample,
        int(data.get("examples", 0)),
        tuple(data.get("devices", ())),
        tuple(data.get("signatures", ())),
        tuple(data.get("notes", ())),
        tuple(Timing(**t) for t in data.get("timings", ())),
        str(data.get("timing_note", "")),
    )


def default_cache_problem() -> str | None:
    """The warning to print once when the default cache directory is refused (None: usable/off)."""
    directory = default_cache_dir()
    if directory is None:
        return None
    problem = private_directory_problem(directory)
    return f"torchfix: warning: verdict cache off: {problem}" if problem else None


def _canonical(data: Any) -> bytes:
    return json.dumps(data, sort_keys=True, separators=(",", ":")).encode()


class SignedStore:
    """JSON entries under ``<root>/<kind>/``, each signed with the per-user secret: what
    :class:`VerdictCache` keeps, and what ``torchfix.file_cache`` keeps for whole files.

    ``get`` answers only an entry stored under the same key whose MAC verifies; ``put`` writes
    atomically and never fails the run (a read-only or full disk costs speed, not correctness).
    """

    def __init__(self, directory: str | os.PathLike[str], kind: str, field: str = "data") -> None:
        self.root = Path(directory)
        self.directory = self.root / kind
        #: the entry's field that holds the data (``{"key": ..., field: ..., "mac": ...}``)
        self.field = field
        self.hits = 0
        self.misses = 0
        #: entries ignored because their MAC did not verify
        self.rejected = 0
        self._secret: bytes | None = None
        #: why the store is off (None: it is on)
        self.problem: str | None = None
        self._ready = False

    def _prepare(self) -> bool:
        if not self._ready:
            self._ready = True
            self.problem = private_directory_problem(self.root) or private_directory_problem(self.directory)
            if self.problem is None:
                self._secret, self.problem = _load_secret(self.root / SECRET_NAME)
        return self.problem is None

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def _mac(self, key: str, data: Any) -> str:
        assert self._secret is not None
        return hmac.new(self._secret, key.encode() + b"\n" + _canonical(data), hashlib.sha256).hexdigest()

    def get(self, key: str) -> Any:
        """The data stored under ``key``, or None (absent, unreadable, or not genuine)."""
        if not self._prepare():
            return None
        try:
            with open(self._path(key), "rb") as handle:
                entry = json.loads(handle.read(1 << 26))
        except (OSError, ValueError):
            self.misses += 1
            return None
        try:
            genuine = (
                isinstance(entry, dict) and entry.get("key") == key and isinstance(entry.get("mac"), str)
                and hmac.compare_digest(entry["mac"], self._mac(key, entry[self.field]))
            )
        except (KeyError, TypeError, ValueError):
            genuine = False
        if not genuine:
            self.rejected += 1
            self.misses += 1
            return None
        self.hits += 1
        return entry[self.field]

    def put(self, key: str, data: Any) -> None:
        if not self._prepare():
            return
        path = self._path(key)
        entry = {"key": key, self.field: data, "mac": self._mac(key, data)}
        tmp = None
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as handle:
                json.dump(entry, handle)
            os.replace(tmp, path)
        except OSError:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass


class VerdictCache:
    """The checker's verdicts, one signed entry per kernel and check settings."""

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.store = SignedStore(directory, "verdicts", field="verdict")

    @property
    def rejected(self) -> int:
        return self.store.rejected

    @property
    def problem(self) -> str | None:
        return self.store.problem

    @staticmethod
    def key(kernel: Kernel, settings: Any) -> str:
        parts = [
            checker_version(),
            library_versions(),
            kernel.key(),
            str(getattr(settings, "examples", "")),
            str(getattr(settings, "seed", "")),
            ",".join(getattr(settings, "devices", ())),
            "timed" if getattr(settings, "measure", False) else "",
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:40]

    def get(self, kernel: Kernel, settings: Any) -> Verdict | None:
        data = self.store.get(self.key(kernel, settings))
        if data is None:
            return None
        try:
            return verdict_from_json(data)
        except (ValueError, KeyError, TypeError, AttributeError):
            self.store.rejected += 1
            return None

    def put(self, kernel: Kernel, settings: Any, verdict: Verdict) -> None:
        self.store.put(self.key(kernel, settings), verdict_to_json(verdict))


def _load_secret(path: Path) -> tuple[bytes | None, str | None]:
    """The per-user MAC secret (created on first use), or why it cannot be trusted."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    except FileExistsError:
        pass
    except OSError as exc:
        return None, f"cannot create {path}: {exc.strerror or exc}"
    else:
        with os.fdopen(fd, "wb") as handle:
            handle.write(os.urandom(32).hex().encode())
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return None, f"cannot read {path}: {exc.strerror or exc}"
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if hasattr(os, "getuid") and info.st_uid != os.getuid():
            return None, f"{path} is owned by another user (uid {info.st_uid})"
        if info.st_mode & 0o077 or not stat.S_ISREG(info.st_mode):
            return None, f"{path} is readable or writable by other users (mode {stat.S_IMODE(info.st_mode):o})"
        secret = handle.read(256).strip()
    if len(secret) < 32:
        return None, f"{path} holds no usable secret"
    return secret, None
