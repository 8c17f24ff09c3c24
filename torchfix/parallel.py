"""Processing many files: in this process, or in a pool of worker processes (``--jobs N``).

Results come back in the order of the input whatever the number of workers, so output is the same
bytes for ``--jobs 1`` and ``--jobs 8``. Each worker builds its own checker lazily, on the first
candidate it has to check (a checker runs its own boxed worker process, so a pool of N workers
may hold up to 2N processes; N is capped at the CPU count and at the number of files).

Workers are started with ``forkserver`` where the platform has it (the server preloads the
pipeline once, so each worker starts in milliseconds) and ``spawn`` elsewhere -- never ``fork``,
which would copy a parent holding threads and an open checker. A worker that dies (a segfault in
a native extension, the OOM killer) breaks the pool: the files in flight are run again in a fresh
pool, and a file that kills a worker running it alone is reported as that file's error.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import pickle
import signal
import time
from collections import deque
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from multiprocessing.connection import wait as wait_for
from typing import Callable, Iterable, Iterator, Sequence

from torchfix import forget_working_directory
from torchfix.limits import FileLimits
from torchfix.pipeline import CheckerFactory, FileResult, FileStatus, ResultStore, process_file
from torchfix.service import CheckService, LocalCheckService

#: how many files may wait in the pool per worker: enough to keep workers busy, few enough that a
#: bulk run does not hold every finished-but-not-yet-printed result in memory
_WINDOW_PER_WORKER = 4
WORKER_DIED = "internal error: the worker process died while processing this file (a crash in a native extension, or out of memory); file left unchanged"


@dataclass(frozen=True)
class Job:
    """One file to process: where it is, how it is shown, and the rules that apply to it."""

    path: str
    display: str
    rules: tuple[type, ...]


@dataclass(frozen=True)
class Settings:
    """What every file of a run shares. Must pickle for ``--jobs`` > 1 (the factory too)."""

    checker_factory: CheckerFactory
    unsafe: bool = False
    report_unused: bool = False
    allow_slower: bool = False
    limits: FileLimits = FileLimits()
    #: per-rewrite diffs in the records (JSON, SARIF, --interactive): a pass over the file each
    details: bool = True
    #: whole files' results kept between runs (``torchfix.file_cache``); None: off
    results: ResultStore | None = None


def run_one(job: Job, settings: Settings, checker: CheckService, choose=None) -> FileResult:  # noqa: ANN001
    return process_file(
        job.path, job.rules, checker, unsafe=settings.unsafe, display=job.display,
        report_unused=settings.report_unused, choose=choose, allow_slower=settings.allow_slower,
        limits=settings.limits, details=settings.details, results=settings.results,
    )


def serial(jobs: Iterable[Job], settings: Settings, choose=None) -> Iterator[FileResult]:  # noqa: ANN001
    """Process ``jobs`` one after the other in this process."""
    checker = LocalCheckService(settings.checker_factory)
    try:
        for job in jobs:
            yield run_one(job, settings, checker, choose)
    finally:
        checker.close()


# --- the worker side -----------------------------------------------------------------------------

_worker: tuple[Settings, LocalCheckService] | None = None


def _init_worker(settings: Settings) -> None:
    global _worker
    # what a worker imports later must not come from the working directory either (see _context)
    forget_working_directory()
    # Ctrl-C is the parent's to handle: it stops the pool; a worker must not die mid-file on it
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    checker = LocalCheckService(settings.checker_factory)
    atexit.register(checker.close)

    def stop(signum, frame):  # noqa: ANN001, ANN202 - the parent terminates the pool on Ctrl-C
        checker.close()  # kills the checker's own process, which would otherwise run on
        os._exit(1)

    signal.signal(signal.SIGTERM, stop)
    _worker = (settings, checker)


def _run_job(job: Job) -> FileResult:
    assert _worker is not None, "worker not initialised"
    settings, checker = _worker
    return run_one(job, settings, checker)


# --- the parent side -----------------------------------------------------------------------------


def picklable(*things: object) -> bool:
    """Whether ``things`` can go to a worker process (rules and hooks replaced by a test, a
    lambda, a class made at run time cannot: such runs stay in this process)."""
    try:
        pickle.dumps(things)
    except Exception:  # noqa: BLE001 - PicklingError, AttributeError, TypeError alike
        return False
    return True


def effective_jobs(requested: int | None, files: int) -> int:
    cpus = os.cpu_count() or 1
    wanted = cpus if requested is None else requested
    return max(1, min(wanted, cpus, files))


def _context() -> multiprocessing.context.BaseContext:
    # the fork server and spawned workers run `python -c ...`, which puts the working directory
    # first on sys.path: run from inside a scanned repository, its `difflib.py` would be imported
    # (and run, unsandboxed) in place of the standard library's. Safe path mode leaves it out.
    os.environ["PYTHONSAFEPATH"] = "1"
    if "forkserver" in multiprocessing.get_all_start_methods():
        _forkserver_imports_this_torchfix()
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["torchfix.pipeline"])
        return ctx
    return multiprocessing.get_context("spawn")


def _forkserver_imports_this_torchfix() -> None:
    """Run from a source checkout, make the fork server import *this* torchfix.

    The server preloads ``torchfix.pipeline`` before it applies the parent's ``sys.path`` (Python
    3.11 ignores it there), so it searches the default path -- the working directory, then
    site-packages -- and can load another copy of torchfix (an installed one, or none) than the
    one running here; every worker forked from it then runs that other code. The server inherits
    the environment, so the checkout's root goes first on ``PYTHONPATH``. An installed torchfix
    is found on the default path already and needs nothing."""
    import torchfix

    package = os.path.dirname(os.path.abspath(torchfix.__file__))
    root = os.path.dirname(package)
    if not (os.path.isdir(os.path.join(root, "codemods")) and os.path.isdir(os.path.join(root, "equivalence"))):
        return  # not a checkout
    current = os.environ.get("PYTHONPATH", "")
    if root not in current.split(os.pathsep):
        os.environ["PYTHONPATH"] = root + (os.pathsep + current if current else "")


#: seconds the workers of a pool that is shut down have to end before they are made to (a worker
#: ends in milliseconds once it is told to; the last result was already taken)
_GRACE_SECONDS = 10.0


class _Pool:
    def __init__(self, workers: int, settings: Settings) -> None:
        self.executor = ProcessPoolExecutor(workers, mp_context=_context(), initializer=_init_worker, initargs=(settings,))

    def stop(self, kill: bool = False) -> None:
        """Shut the pool down; with ``kill``, end the workers at once (Ctrl-C: processes still
        running a check must not keep the user waiting).

        Never waits forever. An idle worker waits for work holding the call queue's lock, so one
        ended then (by ``kill``, or the OOM killer) leaves the lock taken for good, and a sibling
        that waits for it never reads the signal to exit: ``shutdown(wait=True)`` then hung (a
        test run from a scanned repository did). So the workers get a grace period to end, then
        SIGTERM (the worker closes its checker on it), then SIGKILL."""
        executor = self.executor
        # the executor forgets these at shutdown
        processes = list((getattr(executor, "_processes", None) or {}).values())
        manager = getattr(executor, "_executor_manager_thread", None)
        results = getattr(executor, "_result_queue", None)
        if kill:
            _signal_all(processes, "terminate")
        executor.shutdown(wait=False, cancel_futures=True)
        left = _wait_ended(processes, 2.0 if kill else _GRACE_SECONDS)
        if left:
            _signal_all(left, "terminate")
            _signal_all(_wait_ended(left, 2.0), "kill")
        if (kill or left) and results is not None:
            # a worker ended while it sent a result leaves the executor's thread waiting for the
            # rest of it, and this process's own end of the pipe keeps the end of file away:
            # with every worker gone, closing it ends that wait (a review made it hang so)
            _wait_ended(processes, 2.0)
            try:
                results._writer.close()  # noqa: SLF001
            except Exception:  # noqa: BLE001 - closed already
                pass
        if manager is not None:
            manager.join()


def _signal_all(processes: list, how: str) -> None:
    for process in processes:
        try:
            getattr(process, how)()
        except Exception:  # noqa: BLE001 - already gone
            pass


def _wait_ended(processes: list, seconds: float) -> list:
    """Wait up to ``seconds`` for ``processes`` to end; those still running. Waits on their
    sentinels without reading them: the executor's own thread reaps them."""
    deadline = time.monotonic() + seconds
    running = list(processes)
    while running:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        ended = set(wait_for([p.sentinel for p in running], timeout=left))
        running = [p for p in running if p.sentinel not in ended]
    return running


def parallel(
    jobs: Sequence[Job], settings: Settings, workers: int, on_restart: Callable[[], None] | None = None
) -> Iterator[FileResult]:
    """Process ``jobs`` in ``workers`` processes; results in input order."""
    pool = _Pool(workers, settings)
    window = workers * _WINDOW_PER_WORKER
    queued: deque = deque()
    upcoming = iter(jobs)
    finished = False

    def fill() -> None:
        while len(queued) < window:
            job = next(upcoming, None)
            if job is None:
                return
            queued.append((job, _submit(pool, job)))

    try:
        fill()
        while queued:
            job, future = queued.popleft()
            try:
                result = future.result()
            except BrokenProcessPool:
                # a worker died: start again with a fresh pool; the file at the head is run alone
                # in its own pool so that a file that kills its worker is told apart from the
                # files that merely shared the pool with it
                pool.stop()
                if on_restart is not None:
                    on_restart()
                result = _alone(job, settings)
                pool = _Pool(workers, settings)
                rest = list(queued)
                queued.clear()
                for other, previous in rest:
                    # a result that came back before the pool broke is kept, not computed again
                    kept = previous.done() and not previous.cancelled() and previous.exception() is None
                    queued.append((other, previous if kept else _submit(pool, other)))
            except Exception as exc:  # noqa: BLE001 - e.g. a result that does not unpickle
                result = FileResult(job.display, error=f"internal error: {type(exc).__name__}: {exc}", internal=True, status=FileStatus.ERROR)
            fill()
            # the consumer may stop asking once it has every result: the pool then ends normally
            finished = not queued
            yield result
        finished = True
    finally:
        pool.stop(kill=not finished)


def _submit(pool: _Pool, job: Job) -> Future:
    """``job`` submitted to ``pool``; a pool a worker's death broke meanwhile gives a failed
    future, which the caller's restart handles (raised here, it aborted the run: a review found
    it, with a later file killing its worker while the consumer was busy)."""
    try:
        return pool.executor.submit(_run_job, job)
    except BrokenProcessPool as exc:
        future: Future = Future()
        future.set_exception(exc)
        return future


def _alone(job: Job, settings: Settings) -> FileResult:
    pool = _Pool(1, settings)
    try:
        return pool.executor.submit(_run_job, job).result()
    except BrokenProcessPool:
        return FileResult(job.display, error=WORKER_DIED, internal=True, status=FileStatus.ERROR)
    except Exception as exc:  # noqa: BLE001
        return FileResult(job.display, error=f"internal error: {type(exc).__name__}: {exc}", internal=True, status=FileStatus.ERROR)
    finally:
        pool.stop()
