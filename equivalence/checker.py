"""The checker's front door: ``Checker(settings).check(kernel) -> Verdict``.

Kernels are untrusted code (bulk migration runs snippets from repositories nobody here wrote).
Two lines of defence stand between them and the host:

1. static: ``policy.vet`` refuses a kernel that names anything outside the table of known-pure
   callees -- here, before it is sent anywhere, and again in the worker; a refused kernel is
   never run and its verdict is ``skipped`` with the reason;
2. dynamic: each check runs in a worker process inside an OS sandbox (``equivalence.sandbox``),
   with a hard wall-clock deadline per check (the whole worker tree is killed at it) and a memory
   limit. A crash, hang or out-of-memory turns into an ``unverified`` verdict for that kernel, the
   worker is replaced, and the run goes on.

After a verified check the worker times old against new (``equivalence.timing``) under a budget
of its own (``CheckSettings.measure_timeout``): a slow measurement leaves the verdict verified,
without timings, and says why. The worker is started lazily -- importing torch and hypothesis
costs a second or two, and a run with nothing to check should not pay it.
"""

from __future__ import annotations

import os

import socket
import sys
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection
from typing import Any

from torchfix.equivalence.kernel import Kernel, Outcome, Verdict

#: ``Checker(cache_dir=...)``'s default: resolve from the environment (``equivalence.cache``)
DEFAULT_CACHE: Any = object()


@dataclass(frozen=True)
class CheckSettings:
    examples: int = 100
    #: seconds of wall-clock time one kernel may take on each device: a check on the CPU and CUDA
    #: may take twice it (as on a Dask cluster, where each leg has the whole timeout). One
    #: budget for both let a GPU machine under load time out on the CUDA leg of a rung that a
    #: lighter moment verifies, and emit a later rung instead (a GPU run of the corpus did)
    timeout: float = 30.0
    seed: int = 0
    devices: tuple[str, ...] = ("cpu",)
    #: address-space limit of a worker, in MiB (0: none)
    memory_mb: int = 8192
    #: time old vs new at realistic sizes once a kernel is verified (``equivalence.timing``)
    measure: bool = True
    #: seconds the timing of one verified kernel may take (its own budget, not ``timeout``'s)
    measure_timeout: float = 30.0


#: what a GPU driver leaves on a machine (NVIDIA, WSL's GPU bridge, ROCm): without any of them
#: ``torch.cuda.is_available()`` is False, and importing torch to learn that costs 1.5 s
_GPU_DRIVER_PATHS = ("/proc/driver/nvidia", "/dev/nvidia0", "/dev/nvidiactl", "/dev/dxg", "/dev/kfd")


def available_devices() -> tuple[str, ...]:
    """cpu, plus cuda when a GPU is present. Imports torch only where a GPU driver is installed
    (call only when a check will run)."""
    if not any(os.path.exists(path) for path in _GPU_DRIVER_PATHS):
        return ("cpu",)
    import torch

    return ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",)


#: whether this process has said that a worker ran without its seccomp filter
_FILTER_WARNED = False

#: how the engine says a device leg found no input the old code runs on
_TRANSIENT = ("the check timed out", "the checker worker died", "the check ran out of memory")


def transient(verdict: Verdict) -> bool:
    """Whether ``verdict`` may depend on the machine's load (a timeout, a crash, an OOM kill):
    such a verdict is never remembered."""
    return verdict.reason.startswith(_TRANSIENT)


#: importing torch and hypothesis in a fresh worker, on a slow machine
_STARTUP_SECONDS = 120.0
#: the largest answer read from a worker (a verdict with its counterexample is a few KiB)
_MAX_REPLY_BYTES = 16 * 2**20


def _reply(conn: Connection) -> Any:
    """One answer from the worker, parsed as JSON -- never unpickled: the worker runs scanned
    code, and unpickling its bytes would let that code run here, outside the sandbox."""
    import json

    from torchfix.equivalence.cache import verdict_from_json

    data = json.loads(conn.recv_bytes(_MAX_REPLY_BYTES))
    if isinstance(data, dict) and isinstance(data.get("ready"), list) and len(data["ready"]) == 3:
        return tuple(data["ready"])
    if isinstance(data, dict) and isinstance(data.get("verdict"), dict):
        return verdict_from_json(data["verdict"])
    raise ValueError("not an answer")


class Checker:
    """Checks kernels in a sandboxed worker process; caches verdicts by kernel content.

    ``cache_dir``: where verdicts persist between runs (``equivalence.cache``). Left out, the
    environment decides (``TORCHFIX_CACHE_DIR``, ``TORCHFIX_NO_CACHE``, off under pytest); None
    turns the persistent cache off. Verdicts are also remembered in memory for the checker's life.
    """

    def __init__(self, settings: CheckSettings | None = None, cache_dir: Any = DEFAULT_CACHE) -> None:
        from torchfix.equivalence.cache import VerdictCache, default_cache_dir

        self.settings = settings or CheckSettings()
        self._launch: Any = None
        self._conn: Connection | None = None
        self._cache: dict[tuple[str, CheckSettings], Verdict] = {}
        directory = default_cache_dir() if cache_dir is DEFAULT_CACHE else cache_dir
        self.disk_cache = VerdictCache(directory) if directory else None
        #: checks actually run in the worker (not answered from a cache)
        self.checks_run = 0
        #: kernels the static line refused (never sent to a worker)
        self.refused = 0
        self._last_failure = Verdict(Outcome.UNVERIFIED, "the checker worker died")
        #: set when a worker could not start under the address-space limit
        self._unlimited = False
        #: whether the running worker loaded its seccomp filter
        self.seccomp_loaded: bool | None = None
        #: set when CUDA did not work inside the sandbox and GPU workers run without it
        self.sandbox_off_reason = ""

    def isolation(self) -> Any:
        """How this checker's workers are isolated (``sandbox.Isolation``); raises
        ``sandbox.SandboxUnavailable`` under ``TORCHFIX_SANDBOX=require`` when there is none."""
        from torchfix.equivalence.sandbox import isolation

        return isolation(self.settings.devices)

    @property
    def _process(self) -> Any:
        return self._launch.process if self._launch is not None else None

    def _start(self) -> None:
        from torchfix.equivalence.sandbox import SandboxUnavailable

        try:
            self._spawn(self._address_space_mb())
        except SandboxUnavailable:
            raise
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
        # __main__) talking pickles over a socket pair, which passes into the sandbox.
        from torchfix.equivalence.sandbox import launch

        found = self.isolation()
        sandboxed = found.sandboxed and not self.sandbox_off_reason
        gpu = any(d != "cpu" for d in self.settings.devices)
        parent, child = socket.socketpair()
        try:
            self._launch = launch(
                [str(child.fileno()), str(address_space_mb), "1" if sandboxed else "0", "1" if gpu else "0"],
                (child.fileno(),), self.settings.devices, sandboxed=sandboxed, fallback_reason=self.sandbox_off_reason,
            )
        finally:
            child.close()
        self._conn = Connection(parent.detach())
        try:
            ready = self._conn.poll(_STARTUP_SECONDS) and _reply(self._conn)
        except (EOFError, OSError, ValueError, TypeError, KeyError):
            ready = None
        if not (isinstance(ready, tuple) and ready[0] == "ready"):
            raise RuntimeError("the checker worker did not start")
        self.seccomp_loaded = bool(ready[1])
        if found.seccomp and not self.seccomp_loaded:
            self._filter_missing()
        if gpu and sandboxed and not ready[2]:
            # the parent sees a GPU, the sandboxed worker does not: rather than fail every GPU
            # leg, run GPU workers outside the namespaces (still vetted, filtered and limited),
            # and say so once
            self._stop()
            self.sandbox_off_reason = "CUDA is not usable inside the bubblewrap sandbox"
            sys.stderr.write(f"torchfix: warning: {self.sandbox_off_reason}; GPU checks run without it\n")
            self._spawn(address_space_mb)

    def _filter_missing(self) -> None:
        """libseccomp loads here but the worker could not load its filter (its ``python -I``
        does not see a pyseccomp that only ``PYTHONPATH`` provides, say): never silently."""
        from torchfix.equivalence.sandbox import SandboxUnavailable, sandbox_mode

        reason = "the checker's worker could not load its seccomp filter (is pyseccomp installed beside torch?)"
        if sandbox_mode() == "require":
            self._stop()
            raise SandboxUnavailable(f"{reason} and TORCHFIX_SANDBOX=require")
        global _FILTER_WARNED
        if not _FILTER_WARNED:
            _FILTER_WARNED = True
            sys.stderr.write(f"torchfix: warning: {reason}; checks run with the other limits only\n")

    def _stop(self) -> None:
        from torchfix.equivalence.sandbox import kill

        if self._launch is not None:
            kill(self._launch)
        if self._conn is not None:
            self._conn.close()
        self._launch, self._conn = None, None

    def _address_space_mb(self) -> int:
        # CUDA reserves far more address space than it uses: with a GPU in play the worker runs
        # without RLIMIT_AS and the parent watches its resident memory instead
        if self._unlimited or any(d != "cpu" for d in self.settings.devices):
            return 0
        return self.settings.memory_mb

    def check(self, kernel: Kernel) -> Verdict:
        from torchfix.equivalence.policy import vet

        key = (kernel.key(), self.settings)
        if key in self._cache:
            return self._cache[key]
        refusal = vet(kernel)
        if refusal is not None:
            self.refused += 1
            verdict = Verdict(Outcome.SKIPPED, f"not run: {refusal.reason}")
            self._cache[key] = verdict
            return verdict
        if self.disk_cache is not None:
            stored = self.disk_cache.get(kernel, self.settings)
            if stored is not None:
                self._cache[key] = stored
                return stored
        verdict = self._request(("check", kernel, self.settings), self.settings.timeout * len(self.settings.devices))
        self.checks_run += 1
        fleeting = transient(verdict)
        if verdict.ok and self.settings.measure:
            verdict, measured = self._measure(kernel, verdict)
            fleeting = fleeting or not measured
        # a timeout or crash may be load-dependent: do not remember it
        if not fleeting:
            self._cache[key] = verdict
            if self.disk_cache is not None:
                self.disk_cache.put(kernel, self.settings, verdict)
        return verdict

    def _measure(self, kernel: Kernel, verdict: Verdict) -> tuple[Verdict, bool]:
        """``verdict`` with timings; False when the measurement itself failed (not cached)."""
        budget = self.settings.measure_timeout
        timed = self._request(("measure", kernel, verdict, self.settings), budget)
        if timed.outcome is Outcome.VERIFIED and timed.reason == verdict.reason:
            return timed, True
        why = "it ran past its budget of {:.0f}s".format(budget) if timed.reason.startswith("the check timed out") else (
            "the worker died while timing" if transient(timed) else timed.reason
        )
        return replace(verdict, timings=(), timing_note=f"speed not measured: {why}"), False

    def replay(self, kernel: Kernel, witness: str, device: str = "cpu") -> Verdict:
        """Judge ``kernel`` on the exact inputs of a witness (``Counterexample.witness``)."""
        from torchfix.equivalence.policy import vet

        refusal = vet(kernel)
        if refusal is not None:
            return Verdict(Outcome.SKIPPED, f"not run: {refusal.reason}")
        return self._request(("replay", kernel, self.settings, witness, device), self.settings.timeout)

    def run_request(self, message: Any, timeout: float) -> Verdict:
        """Answer one request of the worker protocol (``equivalence.worker``) with this checker's
        boxed worker, caches bypassed: how a Dask worker (``torchfix.cluster``) runs the requests
        a remote run sends it, in the same sandbox as a local check."""
        return self._request(message, timeout)

    def _request(self, message: Any, timeout: float) -> Verdict:
        # the one place a request leaves this process: ``torchfix.cluster.ClusterChecker``
        # overrides it to send requests to a Dask cluster, keeping ``check``'s caching as is
        if self._process is None or self._process.poll() is not None:
            self._stop()
            self._start()
        assert self._conn is not None
        try:
            self._conn.send(message)
            if not self._wait(timeout):
                return self._last_failure
            verdict = _reply(self._conn)
        except (EOFError, BrokenPipeError, ConnectionResetError, OSError):
            code = self._process.poll() if self._process is not None else None
            self._stop()
            return Verdict(Outcome.UNVERIFIED, f"the checker worker died (exit code {code})")
        except (ValueError, TypeError, KeyError, AttributeError):
            verdict = None
        if not isinstance(verdict, Verdict):
            self._stop()
            return Verdict(Outcome.UNVERIFIED, "the checker worker died (it answered something that is not a verdict)")
        return verdict

    def _wait(self, timeout: float) -> bool:
        """Wait for the worker's answer; kill it at the deadline or when it outgrows its memory."""
        import time

        from torchfix.equivalence.sandbox import resident_mb

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
            if limit and self._launch is not None and resident_mb(self._launch) > limit:
                self._stop()
                self._last_failure = Verdict(
                    Outcome.UNVERIFIED, f"the checker worker died (out of memory: over {limit} MiB resident)"
                )
                return False

    def close(self) -> None:
        # the worker holds nothing to flush (verdicts are cached here, its scratch space is its
        # sandbox's): it is stopped at once, not asked to exit -- an interpreter with torch loaded
        # takes 0.6 s to shut down, paid at the end of every run
        self._stop()

    def __enter__(self) -> "Checker":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
