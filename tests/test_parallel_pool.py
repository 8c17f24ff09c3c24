"""The worker pool of `--jobs N` always ends: a stuck worker cannot hang the run at shutdown."""

from __future__ import annotations

import functools
import os
import signal
import time

import torchfix.parallel as parallel
from torchfix.cli import make_checker


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_a_stuck_worker_is_ended_and_the_pool_stops(monkeypatch) -> None:  # noqa: ANN001
    """An idle worker waits for work holding the call queue's lock: one ended then leaves the lock
    taken, and a sibling that waits for it never exits, so `shutdown(wait=True)` hung a run (the
    test that scans a repository with `--jobs 2` did). A worker that does not end (stopped here)
    is given a grace period, then SIGTERM, then SIGKILL."""
    monkeypatch.setattr(parallel, "_GRACE_SECONDS", 0.5)
    settings = parallel.Settings(checker_factory=functools.partial(make_checker, 5, 0, 10.0, False))
    pool = parallel._Pool(2, settings)  # noqa: SLF001
    pids = {pool.executor.submit(os.getpid).result(timeout=120) for _ in range(8)}
    stuck = next(iter(pids))
    os.kill(stuck, signal.SIGSTOP)  # deaf to everything but SIGKILL
    started = time.monotonic()
    pool.stop()
    assert time.monotonic() - started < 30
    assert not any(_alive(pid) for pid in pids)


def test_the_pool_ends_normally_once_the_last_result_is_taken(monkeypatch, tmp_path) -> None:  # noqa: ANN001
    """The consumer stops asking once it has every result (`InOrder` pulls exactly one per job):
    the generator is closed at its last `yield`, which must stop the pool normally, not kill
    workers that may be waiting for work."""
    stops: list[bool] = []
    real = parallel._Pool.stop  # noqa: SLF001

    def stop(self, kill: bool = False) -> None:  # noqa: ANN001
        stops.append(kill)
        real(self, kill)

    monkeypatch.setattr(parallel._Pool, "stop", stop)  # noqa: SLF001
    settings = parallel.Settings(checker_factory=functools.partial(make_checker, 5, 0, 10.0, False))
    jobs = []
    for i in range(3):
        (tmp_path / f"f{i}.py").write_text("x = 1\n")
        jobs.append(parallel.Job(str(tmp_path / f"f{i}.py"), f"f{i}.py", ()))
    results = parallel.parallel(jobs, settings, 2)
    taken = [next(results) for _ in jobs]
    results.close()
    assert [r.path for r in taken] == ["f0.py", "f1.py", "f2.py"] and stops == [False]
