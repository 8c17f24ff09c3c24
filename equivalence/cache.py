"""A persistent verification cache: a re-run over an unchanged repository costs no checks.

A verdict is stored under a key made of the kernel's content (``Kernel.key()``), the settings that
change what a check can find (examples, seed, devices) and a hash of the checker's own source --
a new checker version never reuses an old version's verdicts. One small JSON file per verdict,
written atomically (temp file + rename), so parallel runs can share a cache directory.

Location: ``$TORCHFIX_CACHE_DIR``, else ``$XDG_CACHE_HOME/torchfix``, else ``~/.cache/torchfix``
(verdicts under ``verdicts/``). ``TORCHFIX_NO_CACHE=1`` turns it off. Under pytest
(``PYTEST_CURRENT_TEST`` is set) the default is off too, so that tests never read verdicts an
earlier checker left behind; a test that wants the cache passes ``cache_dir`` explicitly.
Timeouts and worker crashes are never stored (they may depend on the machine's load).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from torchfix.equivalence.kernel import Counterexample, Kernel, Outcome, Timing, Verdict

_SOURCE_HASH: str | None = None


def checker_version() -> str:
    """A hash of the checker's source files: verdicts of another checker version are not reused."""
    global _SOURCE_HASH
    if _SOURCE_HASH is None:
        digest = hashlib.sha256()
        here = Path(__file__).resolve().parent
        for path in sorted(here.glob("*.py")):
            digest.update(path.name.encode() + b"\0" + path.read_bytes())
        _SOURCE_HASH = digest.hexdigest()[:16]
    return _SOURCE_HASH


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


class VerdictCache:
    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory) / "verdicts"
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(kernel: Kernel, settings: Any) -> str:
        parts = [
            checker_version(),
            kernel.key(),
            str(getattr(settings, "examples", "")),
            str(getattr(settings, "seed", "")),
            ",".join(getattr(settings, "devices", ())),
            "timed" if getattr(settings, "measure", False) else "",
        ]
        return hashlib.sha256("|".join(parts).encode()).hexdigest()[:40]

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, kernel: Kernel, settings: Any) -> Verdict | None:
        path = self._path(self.key(kernel, settings))
        try:
            verdict = verdict_from_json(json.loads(path.read_text()))
        except (OSError, ValueError, KeyError, TypeError):
            self.misses += 1
            return None
        self.hits += 1
        return verdict

    def put(self, kernel: Kernel, settings: Any, verdict: Verdict) -> None:
        path = self._path(self.key(kernel, settings))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(fd, "w") as handle:
                json.dump(verdict_to_json(verdict), handle)
            os.replace(tmp, path)
        except OSError:  # a read-only or full disk costs speed, never correctness
            try:
                os.unlink(tmp)  # type: ignore[possibly-undefined]
            except (OSError, UnboundLocalError):
                pass
