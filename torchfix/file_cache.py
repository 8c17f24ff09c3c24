"""Whole files' results kept between runs: a re-run over an unchanged tree costs what the
pre-filters cost, not what LibCST and the loop model cost.

The verdict cache (``equivalence.cache``) saves the checks of a re-run; what is left is the scan
itself -- LibCST's parse and the rules' analysis of every file that holds a candidate loop, tens
of milliseconds a loop. This cache keeps the whole :class:`~torchfix.pipeline.FileResult` of such
a file (records, verdicts, the rewritten bytes), as ruff keeps its diagnostics per file.

An entry stands for one file's bytes under one run's settings. Its key hashes:

- the display path, the rule codes and the SHA-256 of the bytes;
- the run's settings that change a result (``--unsafe``, ``--allow-slower``, unused-suppression
  reports, per-rewrite details, the file limits, the check settings) and the devices a check
  runs on;
- the source of torchfix itself (the rules, the pipeline, the checker) and the torch and numpy
  versions: a changed rule or checker never reuses an old result.

A result is stored only when it does not depend on the machine's load or a person: no check
timed out, crashed or ran out of memory, no measurement failed, no budget ran out, torchfix did
not crash, and no one was asked (``--interactive``). Only files LibCST parsed are stored: a file
the pre-filters drop costs less to drop again than to look up.

Entries live beside the verdicts (``<cache>/files/``) and are signed the same way
(:class:`~torchfix.equivalence.cache.SignedStore`): a cached result holds the bytes ``--apply``
writes, so an entry nobody but this user's torchfix could have written is the only one used.
``TORCHFIX_NO_CACHE=1`` turns this cache off with the verdict cache.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any, Sequence

from torchfix.journal import digest, file_result_from_json, file_result_to_json
from torchfix.pipeline import FileResult, FileStatus

#: bump when the stored form of a result changes
_FORMAT = 1
_SOURCES_HASH: str | None = None


def sources_version() -> str:
    """A hash of torchfix's own source: the application, the rules and the checker."""
    global _SOURCES_HASH
    if _SOURCES_HASH is None:
        from torchfix.equivalence.cache import source_digest

        folders = []
        for package in ("torchfix", "torchfix.codemods", "torchfix.equivalence"):
            spec = importlib.util.find_spec(package)
            locations = list(spec.submodule_search_locations or []) if spec is not None else []
            folders += [Path(location) for location in locations[:1]]  # its own folder (a checkout adds its root)
        _SOURCES_HASH = source_digest(*folders)
    return _SOURCES_HASH


def lasting(result: FileResult) -> bool:
    """Whether ``result`` would come out the same on an idle machine: nothing in it was decided
    by a timeout, a crash, an out-of-memory kill or a failed measurement."""
    from torchfix.equivalence.checker import transient

    if result.internal or result.status is not FileStatus.PARSED:
        return False
    for record in result.records:
        verdict = record.verdict
        if verdict is not None and (transient(verdict) or verdict.timing_note.startswith("speed not measured")):
            return False
    return True


class FileResultCache:
    """Results of whole files, under ``directory``/files. Pickles (it goes to ``--jobs`` workers):
    the store opens lazily in the process that uses it."""

    def __init__(self, directory: str | Path, settings: dict[str, Any]) -> None:
        self.directory = str(directory)
        #: the run's settings that change a result (JSON-able)
        self.settings = settings
        self._store: Any = None
        self._run_key: str | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": self.directory, "settings": self.settings, "_store": None, "_run_key": None}

    def _run(self) -> str:
        if self._run_key is None:
            from torchfix.equivalence.cache import library_versions
            from torchfix.equivalence.checker import available_devices

            run = {
                "format": _FORMAT, "sources": sources_version(), "libraries": library_versions(),
                "devices": list(available_devices()), "settings": self.settings,
            }
            self._run_key = hashlib.sha256(json.dumps(run, sort_keys=True, default=str).encode()).hexdigest()
        return self._run_key

    def _key(self, display: str, rules: Sequence[str], data: bytes) -> str:
        parts = [self._run(), display, ",".join(rules), digest(data)]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:40]

    def _open(self) -> Any:
        if self._store is None:
            from torchfix.equivalence.cache import SignedStore

            self._store = SignedStore(self.directory, "files", field="result")
        return self._store

    def get(self, display: str, rules: Sequence[str], data: bytes) -> FileResult | None:
        """The stored result of ``data`` shown as ``display`` under ``rules``, or None."""
        stored = self._open().get(self._key(display, rules, data))
        if stored is None:
            return None
        try:
            return file_result_from_json(stored, data)
        except (ValueError, KeyError, TypeError, IndexError):
            return None

    def put(self, display: str, rules: Sequence[str], data: bytes, result: FileResult) -> None:
        """Keep ``result`` when it is :func:`lasting`."""
        if lasting(result):
            self._open().put(self._key(display, rules, data), file_result_to_json(result))
