"""The boxed worker: ``python -m torchfix.equivalence.worker FD MEMORY_MB``.

It receives ``(kernel, settings)`` pickles on the socket FD and answers each with a Verdict. The
parent kills it on timeout; the address-space limit turns a runaway allocation into a MemoryError.
"""

from __future__ import annotations

import os
import sys
from multiprocessing.connection import Connection

from torchfix.equivalence.checker import merge_verdicts
from torchfix.equivalence.kernel import Outcome, Verdict


def serve(conn: Connection, memory_mb: int) -> None:
    """Worker loop: receive (kernel, settings), send back a Verdict."""
    if memory_mb:
        try:
            import resource

            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (ImportError, ValueError, OSError):  # pragma: no cover - not on every platform
            pass
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    # cuBLAS needs this to honour torch.use_deterministic_algorithms(True)
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    torch.set_num_threads(1)
    from torchfix.equivalence.engine import EngineSettings, check_kernel, replay_kernel
    from torchfix.equivalence.execute import is_device_failure
    from torchfix.equivalence.timing import with_timings

    # the parent times checks from here on, not the imports
    conn.send("ready")

    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        if message[0] == "replay":
            _, kernel, settings, witness, device = message
            try:
                conn.send(replay_kernel(kernel, witness, EngineSettings(settings.examples, settings.seed, device)))
            except MemoryError:
                conn.send(Verdict(Outcome.UNVERIFIED, "the check ran out of memory"))
            except Exception as exc:
                conn.send(Verdict(Outcome.UNVERIFIED, f"checker error: {type(exc).__name__}: {exc}"))
            continue
        kernel, settings = message
        verdicts = []
        try:
            for device in settings.devices:
                verdicts.append(check_kernel(kernel, EngineSettings(settings.examples, settings.seed, device)))
                if verdicts[-1].outcome is not Outcome.VERIFIED:
                    break
            verdict = merge_verdicts(verdicts)
            if verdict.ok and getattr(settings, "measure", False):
                verdict = with_timings(kernel, verdict, settings.devices, settings.seed)
            conn.send(verdict)
        except MemoryError:
            conn.send(Verdict(Outcome.UNVERIFIED, "the check ran out of memory"))
        except Exception as exc:  # a checker bug must not take the run down
            conn.send(Verdict(Outcome.UNVERIFIED, f"checker error: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"))
            if is_device_failure(exc):
                return  # a CUDA error outlives the check: the parent starts a fresh worker




if __name__ == "__main__":
    serve(Connection(int(sys.argv[1])), int(sys.argv[2]))
