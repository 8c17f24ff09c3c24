"""The boxed worker, started by ``Checker`` through ``equivalence.sandbox.launch`` as
``python -I -c BOOTSTRAP PACKAGE_ROOT FD MEMORY_MB SANDBOXED``.

First it confines itself (``sandbox.confine``: rlimits, the seccomp filter), then imports torch
and answers ``("ready", seccomp_loaded)``. It then receives pickled requests on the socket FD:

- ``("check", kernel, settings)`` -> a Verdict, without timings;
- ``("measure", kernel, verdict, settings)`` -> the verdict with timings (or why not): the parent
  gives this its own budget, so a slow measurement never costs a verified kernel its verdict;
- ``("replay", kernel, settings, witness, device)`` -> a Verdict on that witness alone;
- ``None`` -> exit.

Requests come from the parent as pickles (the worker trusts its parent); answers go back as JSON
(``cache.verdict_to_json``), never pickles: the parent must not unpickle what a process running
scanned code sends it, or a compromised worker would run code in the parent, outside the sandbox.

Every kernel is vetted again here (``policy.vet``) before it runs: the parent's vetting is not
trusted to have happened. Verdicts carry exception types and kernel lines, never exception text.
"""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection
from typing import Any

from torchfix.equivalence.kernel import Outcome, Verdict


def send(conn: Connection, message: Any) -> None:
    """Answer the parent: a Verdict or the ready tuple, as JSON."""
    import json

    from torchfix.equivalence.cache import verdict_to_json

    payload = {"verdict": verdict_to_json(message)} if isinstance(message, Verdict) else {"ready": list(message)}
    conn.send_bytes(json.dumps(payload).encode())


def _refused(kernel: Any) -> Verdict | None:
    from torchfix.equivalence.policy import vet

    refusal = vet(kernel)
    return Verdict(Outcome.SKIPPED, f"not run: {refusal.reason}") if refusal else None


def _checker_error(exc: BaseException) -> Verdict:
    # the type only: the message may quote values the kernel computed
    return Verdict(Outcome.UNVERIFIED, f"checker error ({type(exc).__name__})")


def serve(conn: Connection, memory_mb: int, sandboxed: bool = False, gpu: bool = False) -> None:
    """Worker loop (see the module docstring)."""
    from torchfix.equivalence.sandbox import confine

    filtered = confine(memory_mb, sandboxed, gpu=gpu)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # cuBLAS needs this to honour torch.use_deterministic_algorithms(True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    torch.set_num_threads(1)
    from torchfix.equivalence.kernel import merge_verdicts
    from torchfix.equivalence.engine import EngineSettings, check_kernel, replay_kernel
    from torchfix.equivalence.execute import is_device_failure
    from torchfix.equivalence.timing import with_timings

    # the parent times checks from here on, not the imports; it needs to know whether CUDA works
    # in here (a sandbox that hides something the driver needs would fail every GPU leg)
    cuda = False
    if gpu:
        try:
            cuda = torch.cuda.is_available() and torch.zeros(1, device="cuda").item() == 0
        except Exception:  # noqa: BLE001 - any driver failure means: not usable here
            cuda = False
    send(conn, ("ready", filtered, cuda))

    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        kind, kernel = message[0], message[1]
        refused = _refused(kernel)
        if refused is not None:
            send(conn, refused)
            continue
        try:
            if kind == "replay":
                _, _, settings, witness, device = message
                send(conn, replay_kernel(kernel, witness, EngineSettings(settings.examples, settings.seed, device)))
            elif kind == "measure":
                _, _, verdict, settings = message
                send(conn, with_timings(kernel, verdict, settings.devices, settings.seed))
            else:
                _, _, settings = message
                verdicts = []
                for device in settings.devices:
                    verdicts.append(check_kernel(kernel, EngineSettings(settings.examples, settings.seed, device)))
                    if verdicts[-1].outcome is not Outcome.VERIFIED:
                        break
                send(conn, merge_verdicts(verdicts))
        except MemoryError:
            send(conn, Verdict(Outcome.UNVERIFIED, "the check ran out of memory"))
        except Exception as exc:  # a checker bug must not take the run down
            send(conn, _checker_error(exc))
            if is_device_failure(exc):
                return  # a CUDA error outlives the check: the parent starts a fresh worker


def main(argv: list[str]) -> None:
    fd, memory_mb = int(argv[0]), int(argv[1])
    sandboxed = len(argv) > 2 and argv[2] == "1"
    gpu = len(argv) > 3 and argv[3] == "1"
    serve(Connection(fd), memory_mb, sandboxed, gpu)


if __name__ == "__main__":
    main(sys.argv[1:])
