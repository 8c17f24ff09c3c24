"""What one file may cost a run: its size, time, memory and number of candidate rewrites.

A run goes over code nobody vetted: one file must not be able to stop it. Each file is processed
under a :class:`Budget` made from the run's :class:`FileLimits`:

- ``max_bytes`` (``--max-file-size``): a larger file is not read at all (``path: skipped: ...``);
- ``seconds`` (``--file-budget``): wall-clock time for the whole file -- parsing, the rules, and
  every check of its candidates;
- ``memory_mb`` (``--file-memory``): how much this process's resident memory may grow while the
  file is processed (a check runs in the checker's own process, under its own limit);
- ``max_candidates`` (``--max-candidates``): candidate rewrites sent to the checker.

When one runs out the file is reported ``path: gave up: reason``, left unchanged, and the run goes
on. Time and memory are checked between the stages of a file (after the parse, before each
check, before the rewrite is assembled), so a file can overrun its budget by one stage: a check
is bounded by ``--timeout``, and the one stage that cannot be interrupted -- LibCST's native parse
-- runs in a child process under the remaining budget whenever its cost is not bounded by the
file's size and nesting (:func:`torchfix.source.guard`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from torchfix.source import DEFAULT_MAX_BYTES, GaveUp, format_size

DEFAULT_SECONDS = 300.0
DEFAULT_MEMORY_MB = 2048
#: ordinary files propose a handful; a generated file with thousands of loops is not worth
#: minutes of checking (one made of 39,000 took 6.6 minutes and 4.5 GB before this limit)
DEFAULT_MAX_CANDIDATES = 200


@dataclass(frozen=True)
class FileLimits:
    """The per-file limits of a run (None: unlimited). Picklable: it travels to worker processes."""

    max_bytes: int | None = DEFAULT_MAX_BYTES
    seconds: float | None = DEFAULT_SECONDS
    memory_mb: int | None = DEFAULT_MEMORY_MB
    max_candidates: int | None = DEFAULT_MAX_CANDIDATES


UNLIMITED = FileLimits(None, None, None, None)


def resident_mb() -> float | None:
    """This process's resident memory in MiB, or None where it cannot be read cheaply."""
    try:
        with open("/proc/self/statm", "rb") as handle:
            pages = int(handle.read().split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / (1 << 20)


class Budget:
    """One file's limits, spent as the file is processed. :meth:`charge` raises GaveUp."""

    def __init__(self, limits: FileLimits) -> None:
        self.limits = limits
        self.started = time.monotonic()
        self.baseline_mb = resident_mb() if limits.memory_mb is not None else None
        self.candidates = 0

    def remaining(self) -> float | None:
        """Seconds left, or None without a time limit."""
        if self.limits.seconds is None:
            return None
        return self.limits.seconds - (time.monotonic() - self.started)

    def charge(self, stage: str) -> None:
        """Raise GaveUp if the file ran out of time or memory; ``stage`` says where it stood."""
        left = self.remaining()
        if left is not None and left < 0:
            raise GaveUp(f"over the per-file time budget of {self.limits.seconds:g}s {stage} (--file-budget)")
        if self.baseline_mb is not None and self.limits.memory_mb is not None:
            now = resident_mb()
            if now is not None and now - self.baseline_mb > self.limits.memory_mb:
                grown = format_size(int((now - self.baseline_mb) * (1 << 20)))
                raise GaveUp(f"over the per-file memory budget of {self.limits.memory_mb} MB {stage}: grew by {grown} (--file-memory)")

    def candidate(self) -> None:
        """Count one candidate about to be checked; GaveUp past ``max_candidates``."""
        self.candidates += 1
        limit = self.limits.max_candidates
        if limit is not None and self.candidates > limit:
            raise GaveUp(f"more than {limit} candidate rewrites in one file (--max-candidates)")


_UNITS = {"": 1, "B": 1, "K": 1 << 10, "KB": 1 << 10, "M": 1 << 20, "MB": 1 << 20, "G": 1 << 30, "GB": 1 << 30}


def parse_size(value: str | int) -> int:
    """A size in bytes from ``2M``, ``500K``, ``1.5MB``, ``4096`` (K, M, G are powers of 1024);
    ValueError for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"not a size: {value!r}")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"a size cannot be negative: {value}")
        return value
    text = str(value).strip().upper()
    number = text.rstrip("BKMG")
    unit = text[len(number):]
    if unit not in _UNITS:
        raise ValueError(f"not a size: {value!r} (use bytes, or a number with K, M or G)")
    try:
        amount = float(number)
    except ValueError:
        raise ValueError(f"not a size: {value!r} (use bytes, or a number with K, M or G)") from None
    if amount < 0 or amount != amount or amount == float("inf"):
        raise ValueError(f"not a size: {value!r}")
    return int(amount * _UNITS[unit])
