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


def test_a_worker_dying_while_the_consumer_is_busy_restarts_the_pool(tmp_path) -> None:  # noqa: ANN001
    """A later file kills its worker (an OOM kill: here the checker factory exits) while the
    consumer is still busy with an earlier result: the next submit meets a broken pool. That
    aborted the run (a review found it); the pool is restarted, and only the file that killed
    its worker is reported so."""
    from pathlib import Path

    from torchfix.codemods.registry import ALL_RULES

    rules = tuple(r for r in ALL_RULES if r.code == "TFV005")
    case = Path(__file__).resolve().parent.parent / "corpus" / "TFV005" / "masked_sum.py"
    jobs = []
    for i in range(12):
        path = tmp_path / f"f{i}.py"
        path.write_bytes(case.read_bytes() if i == 2 else b"import torch\nx = 1\n")  # only f2 builds a checker
        jobs.append(parallel.Job(str(path), f"f{i}.py", rules))
    settings = parallel.Settings(checker_factory=functools.partial(os._exit, 3))
    results = parallel.parallel(jobs, settings, 2)
    taken = []
    try:
        for k in range(len(jobs)):
            taken.append(next(results))
            if k == 0:
                time.sleep(3)  # a slow consumer (printing a diff, writing JSON)
    finally:
        results.close()
    assert [r.path for r in taken] == [f"f{i}.py" for i in range(12)]
    assert [r.path for r in taken if r.error] == ["f2.py"] and "worker process died" in (taken[2].error or "")
