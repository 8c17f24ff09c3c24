"""The boxed worker, started by ``Checker`` through ``equivalence.sandbox.launch`` as
``python -I -c BOOTSTRAP PACKAGE_ROOT FD MEMORY_MB SANDBOXED``.

First it sets its rlimits (``sandbox.limit``), imports torch and the engine and starts CUDA where
asked (:func:`start_runtime`), then loads its seccomp filter (``sandbox.load_filter``) and answers
``("ready", seccomp_loaded, cuda_works)``: no scanned code reaches it before the filter. It then
receives pickled requests on the socket FD:

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
import traceback
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


def _debug_traceback() -> None:
    """Under TORCHFIX_DEBUG (the parent then passes our stderr through, ``sandbox.launch``): the
    current exception's traceback, its control characters escaped -- its text may quote values
    the kernel made, and they must not reach the user's terminal as escape sequences."""
    from torchfix.equivalence.sandbox import debugging

    if debugging():
        text = traceback.format_exc()
        sys.stderr.write("".join(c if c.isprintable() or c == "\n" else repr(c)[1:-1] for c in text))
        sys.stderr.flush()


def _checker_error(exc: BaseException) -> Verdict:
    _debug_traceback()
    # the type only: the message may quote values the kernel computed
    return Verdict(Outcome.UNVERIFIED, f"checker error ({type(exc).__name__})")


def start_runtime(gpu: bool) -> bool:
    """Import what checks run on, and start CUDA where asked; returns whether CUDA works here.

    This runs after the rlimits and before the seccomp filter (:func:`serve`). Only trusted code
    runs in this window: the interpreter's own imports (``python -I``, the working directory a
    private scratch one) and the CUDA driver's start-up; no scanned code has been received yet.
    The filter would break both: a CUDA build of torch looks its libraries up at import through
    ``ctypes.util.find_library``, which makes a temporary file, and the CUDA driver opens a
    listening UNIX socket when it starts (``socket``/``bind``/``listen``, all denied later). The
    filter then covers every thread, those started in this window too (``sandbox.load_filter``).

    Trusted as far as the installation is: a scanned project installed into the same environment,
    editable, could stand in for an optional module torch tries to import -- as a ``.pth`` file of
    it would run at any interpreter's start, before any confinement."""
    # one thread for every math library: timings count the timing thread's CPU time alone
    # (``timing._clock``), which work handed to a BLAS thread pool would escape
    for pool in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[pool] = "1"
    # cuBLAS needs this to honour torch.use_deterministic_algorithms(True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    torch.set_num_threads(1)
    import torchfix.equivalence.engine  # noqa: F401 - numpy, hypothesis and the engine, imported now
    import torchfix.equivalence.timing  # noqa: F401

    if not gpu:
        return False
    # whether CUDA works in here (a sandbox that hides something the driver needs would fail
    # every GPU leg), and the driver started while it still may
    try:
        if not (torch.cuda.is_available() and torch.zeros(1, device="cuda").item() == 0):
            return False
        # the GPU legs re-run under deterministic algorithms; some torch versions import their
        # compiler stack the first time that switch is touched: now, not under the filter
        torch.use_deterministic_algorithms(torch.are_deterministic_algorithms_enabled())
    except Exception:  # noqa: BLE001 - any driver failure means: not usable here
        _debug_traceback()
        return False
    return True


def serve(conn: Connection, memory_mb: int, sandboxed: bool = False, gpu: bool = False) -> None:
    """Worker loop (see the module docstring)."""
    from torchfix.equivalence.sandbox import limit, load_filter

    limit(memory_mb, sandboxed)
    cuda = start_runtime(gpu)
    filtered = load_filter(gpu, sandboxed)
    from torchfix.equivalence.engine import EngineSettings, check_kernel, replay_kernel
    from torchfix.equivalence.execute import is_device_failure
    from torchfix.equivalence.kernel import merge_verdicts
    from torchfix.equivalence.timing import with_timings

    # the parent times checks from here on, not the imports
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
