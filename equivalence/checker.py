"""The checker's front door: ``Checker(settings).check(kernel) -> Verdict``.

Kernels are untrusted code (bulk migration runs snippets from repositories nobody here wrote), so
each check runs in a worker process with a wall-clock limit and a memory limit. A crash, hang or
out-of-memory in a worker turns into an ``unverified`` verdict for that kernel, the worker is
replaced, and the run goes on. The worker is started lazily -- importing torch and hypothesis costs
a second or two, and a run with nothing to check should not pay it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from torchfix.equivalence.kernel import Kernel, Outcome, Verdict

#: ``Checker(cache_dir=...)``'s default: resolve from the environment (``equivalence.cache``)
DEFAULT_CACHE: Any = object()


@dataclass(frozen=True)
class CheckSettings:
    examples: int = 100
    #: seconds of wall-clock time one kernel may take (all devices together)
    timeout: float = 30.0
    seed: int = 0
    devices: tuple[str, ...] = ("cpu",)
    #: address-space limit of a worker, in MiB (0: none)
    memory_mb: int = 8192
    #: time old vs new at realistic sizes once a kernel is verified (``equivalence.timing``)
    measure: bool = True


def available_devices() -> tuple[str, ...]:
    """cpu, plus cuda when a GPU is present (imports torch: call only when a check will run)."""
    import torch

    return ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)


#: how the engine says a device leg found no input the old code runs on
NO_DOMAIN = "found no input on which the old code runs"


def merge_verdicts(verdicts: list[Verdict]) -> Verdict:
    """One verdict over several devices: the first non-verified one decides -- except a GPU leg on
    which the old code runs on no input at all (it converts to numpy, say): such code is not GPU
    code, that leg has no evidence either way, and the verdict says it was checked without it."""
    skipped_legs = []
    for k, verdict in enumerate(verdicts):
        if k > 0 and verdict.outcome is Outcome.UNVERIFIED and verdict.reason.startswith(NO_DOMAIN) and verdicts[0].ok:
            skipped_legs.append(verdict)
            continue
        if verdict.outcome is not Outcome.VERIFIED:
            return verdict
    verdicts = [v for v in verdicts if v not in skipped_legs]
    devices = tuple(d for v in verdicts for d in v.devices)
    examples = sum(v.examples for v in verdicts)
    signatures = tuple(sorted({s for v in verdicts for s in v.signatures}))
    notes = tuple(dict.fromkeys(n for v in verdicts for n in v.notes)) + tuple(
        f"not checked on {', '.join(v.devices) or 'the GPU'}: the old code runs on no input there ({v.reason[len(NO_DOMAIN):].lstrip('; ')[:160]})"
        for v in skipped_legs
    )
    return Verdict(
        Outcome.VERIFIED,
        f"no counterexample in {examples} examples on {', '.join(devices)}",
        None,
        examples,
        devices,
        signatures,
        notes,
    )


_TRANSIENT = ("the check timed out", "the checker worker died", "the check ran out of memory")

#: importing torch and hypothesis in a fresh worker, on a slow machine
_STARTUP_SECONDS = 120.0


def _package_root() -> str:
    """The directory holding the ``torchfix`` package the worker must import (this one's)."""
    top = sys.modules[__name__.split(".")[0]]
    return os.path.dirname(os.path.dirname(os.path.abspath(top.__file__ or "")))


def _scratch_dir() -> str:
    """An empty working directory for workers, so a relative path in a kernel touches nothing."""
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"torchfix-checker-{os.getuid() if hasattr(os, 'getuid') else 0}")
    os.makedirs(path, exist_ok=True)
    return path


def _rss_mb(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/statm") as handle:
            pages = int(handle.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


class Checker:
    """Checks kernels in a boxed worker process; caches verdicts by kernel content.

    ``cache_dir``: where verdicts persist between runs (``equivalence.cache``). Left out, the
    environment decides (``TORCHFIX_CACHE_DIR``, ``TORCHFIX_NO_CACHE``, off under pytest); None
    turns the persistent cache off. Verdicts are also remembered in memory for the checker's life.
    """

    def __init__(self, settings: CheckSettings | None = None, cache_dir: Any = DEFAULT_CACHE) -> None:
        from torchfix.equivalence.cache import VerdictCache, default_cache_dir

        self.settings = settings or CheckSettings()
        self._process: Any = None
        self._conn: Connection | None = None
        self._cache: dict[tuple[str, CheckSettings], Verdict] = {}
        directory = default_cache_dir() if cache_dir is DEFAULT_CACHE else cache_dir
        self.disk_cache = VerdictCache(directory) if directory else None
        #: checks actually run in the worker (not answered from a cache)
        self.checks_run = 0
        self._last_failure = Verdict(Outcome.UNVERIFIED, "the checker worker died")
        #: set when a worker could not start under the address-space limit
        self._unlimited = False

    def _start(self) -> None:
        try:
            self._spawn(self._address_space_mb())
        except RuntimeError:
            if not self._address_space_mb():
                raise
            # a CUDA build of torch maps gigabytes of libraries at import: under a small
            # address-space limit the worker dies before it is ready. Run it unlimited; the
            # parent still watches its resident memory (_wait).
            self._stop()
            self._unlimited = True
            self._spawn(0)

    def _spawn(self, address_space_mb: int) -> None:
        # A fresh interpreter (not multiprocessing's spawn, which re-imports the caller's
        # __main__) talking pickles over a socket pair.
        parent, child = socket.socketpair()
        env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=_package_root() + os.pathsep + os.environ.get("PYTHONPATH", ""))
        process = subprocess.Popen(
            [sys.executable, "-m", f"{__package__}.worker", str(child.fileno()), str(address_space_mb)],
            pass_fds=(child.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=_scratch_dir(),
        )
        child.close()
        self._process, self._conn = process, Connection(parent.detach())
        try:
            ready = self._conn.poll(_STARTUP_SECONDS) and self._conn.recv() == "ready"
        except (EOFError, OSError):
            ready = False
        if not ready:
            raise RuntimeError("the checker worker did not start")

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait(timeout=5)
        if self._conn is not None:
            self._conn.close()
        self._process, self._conn = None, None

    def _address_space_mb(self) -> int:
        # CUDA reserves far more address space than it uses: with a GPU in play the worker runs
        # without RLIMIT_AS and the parent watches its resident memory instead
        if self._unlimited or any(d != "cpu" for d in self.settings.devices):
            return 0
        return self.settings.memory_mb

    def check(self, kernel: Kernel) -> Verdict:
        key = (kernel.key(), self.settings)
        if key in self._cache:
            return self._cache[key]
        if self.disk_cache is not None:
            stored = self.disk_cache.get(kernel, self.settings)
            if stored is not None:
                self._cache[key] = stored
                return stored
        verdict = self._check_boxed((kernel, self.settings))
        self.checks_run += 1
        # a timeout or crash may be load-dependent: do not remember it
        if not verdict.reason.startswith(_TRANSIENT):
            self._cache[key] = verdict
            if self.disk_cache is not None:
                self.disk_cache.put(kernel, self.settings, verdict)
        return verdict

    def replay(self, kernel: Kernel, witness: str, device: str = "cpu") -> Verdict:
        """Judge ``kernel`` on the exact inputs of a witness (``Counterexample.witness``)."""
        return self._check_boxed(("replay", kernel, self.settings, witness, device))

    def _check_boxed(self, message: Any) -> Verdict:
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._start()
        assert self._conn is not None
        try:
            self._conn.send(message)
            if not self._wait(self.settings.timeout):
                return self._last_failure
            verdict = self._conn.recv()
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            code = self._process.poll() if self._process is not None else None
            self._stop()
            return Verdict(Outcome.UNVERIFIED, f"the checker worker died (exit code {code})")
        return verdict

    def _wait(self, timeout: float) -> bool:
        """Wait for the worker's answer; kill it on timeout or when it outgrows its memory."""
        import time

        assert self._conn is not None
        deadline = time.monotonic() + timeout
        limit = self.settings.memory_mb
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self._stop()
                self._last_failure = Verdict(Outcome.UNVERIFIED, f"the check timed out after {timeout:.0f}s")
                return False
            if self._conn.poll(min(remaining, 0.2)):
                return True
            if limit and self._process is not None and _rss_mb(self._process.pid) > limit:
                self._stop()
                self._last_failure = Verdict(
                    Outcome.UNVERIFIED, f"the checker worker died (out of memory: over {limit} MiB resident)"
                )
                return False

    def close(self) -> None:
        if self._conn is not None and self._process is not None and self._process.poll() is None:
            try:
                self._conn.send(None)
                self._process.wait(timeout=2)
            except (BrokenPipeError, OSError, subprocess.TimeoutExpired):
                pass
        self._stop()

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
