"""Checks on a Dask cluster (``--scheduler ADDRESS``): bulk migration beyond one machine.

**What stays local.** Discovery, reading, parsing, proposing, the ladder climb, diffs, the report
and every write stay in the torchfix process: they are cheap (LibCST on the files that can
match) and they need the files, which never leave this machine. **What goes to the cluster.**
Checking and measuring, the expensive part, as Dask tasks. A task carries a request of the
checker's worker protocol (``equivalence.worker``): the kernel (old and new code snippets, the
names they read with what the rule knows of them, no file path) and the check settings. It runs
:func:`answer` on a Dask worker, which hands the request to a :class:`Checker` of that worker
process -- the same class as a local run, so the kernel runs in the same boxed worker, behind
the same static vetting and the same OS sandbox (``equivalence.sandbox``) as locally.

**Same verdicts, same bytes.** The answer comes back as JSON text (``cache.verdict_to_json``),
never a pickled verdict, and is read with ``cache.verdict_from_json``. The client side is a
:class:`Checker` whose ``_request`` goes to the cluster, so the verdict cache, the static
refusal, the measurement budget and what is remembered are the local run's own code. With the
same seed, the output is byte-identical to a local run (``tests/test_cluster.py``).

**Device legs.** A kernel's CPU leg runs on any worker. When some worker declares a GPU
(``dask worker --resources GPU=1``), the run checks on ``cpu`` and ``cuda`` as a local run on a
GPU machine does: the CUDA leg is a second task that needs the ``GPU`` resource, sent once the
CPU leg verified (as the local worker stops at the first leg that fails), and the two verdicts
are merged by ``kernel.merge_verdicts``, as locally; timing a verified kernel then runs on a GPU
worker too. Each leg has the whole ``--timeout`` (a local check shares one across both).

**Working ahead.** The ladder needs verdicts in order, so each file is climbed by its own thread
(:func:`run_on_cluster`): many files are in flight at once, each asking for one verdict at a
time, and when a file's proposals are known its first rungs are sent at once
(:meth:`ClusterChecker.submit`). Only one thread runs pipeline code at a time -- the *baton*, let
go only while a thread waits for the cluster -- since rules share per-module state
(``codemods.analysis.module_nodes``) that is not made for threads.

**Faults.** A worker lost mid-check: the scheduler runs its tasks again elsewhere, up to its
``distributed.scheduler.allowed-failures`` (3 by default); past that the check is "the checker
worker died" (unverified, not remembered), as a local worker crash is. A scheduler that goes
away, a worker that runs another torchfix/torch version, a worker that declares a GPU it does not
have, or a cluster left without its GPU workers end the run with :class:`ClusterError`: the
caller writes nothing (``--apply`` writes only after every file is decided).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
from collections import deque
from concurrent.futures import CancelledError, ThreadPoolExecutor
from concurrent.futures import wait as wait_futures
from contextlib import contextmanager
from dataclasses import asdict, replace
from typing import Any, Iterator, Sequence

from torchfix.equivalence.checker import DEFAULT_CACHE, Checker, CheckSettings
from torchfix.equivalence.kernel import merge_verdicts
from torchfix.equivalence.kernel import Kernel, Outcome, Verdict

#: the Dask worker resource that marks a worker able to run CUDA legs
GPU_RESOURCE = "GPU"
#: seconds to wait for the scheduler, and for its first worker
CONNECT_SECONDS = 30.0
#: how often a waiting thread looks at the cluster's state
_POLL_SECONDS = 0.5
#: how long CUDA legs may wait with no GPU worker in the cluster before the run gives up
NO_GPU_GRACE_SECONDS = 60.0
#: the largest answer read from a task (a verdict with its counterexample is a few KiB)
_MAX_ANSWER_CHARS = 16 * 2**20
#: files in flight per thread the cluster has (each asks for one verdict at a time, plus its
#: first rungs sent ahead): enough to keep every worker thread busy while files are parsed here
FILES_PER_WORKER_THREAD = 2


class ClusterError(Exception):
    """The cluster cannot run this run's checks: the run ends, and nothing is written."""


def _versions() -> str:
    """What a worker must run to give the verdicts this process would: the checker's source hash,
    torchfix, torch and numpy versions (the verdict cache's own notion of "the same checker")."""
    from torchfix.equivalence.cache import checker_version, library_versions

    return f"checker {checker_version()}, {library_versions()}"


# --- the Dask worker side -------------------------------------------------------------------------

_local = threading.local()
_started: list[Checker] = []
_started_lock = threading.Lock()


def _close_started() -> None:
    with _started_lock:
        for checker in _started:
            checker.close()
        _started.clear()


def _worker_checker(settings: CheckSettings, gpu: bool) -> Checker:
    """This worker thread's checker for requests with (``gpu``) or without a CUDA leg. One boxed
    worker per Dask worker thread and kind, started on first use and kept for the process's life:
    a worker start (torch and hypothesis imports) costs seconds."""
    checkers = getattr(_local, "checkers", None)
    if checkers is None:
        checkers = _local.checkers = {}
    devices = ("cpu", "cuda") if gpu else ("cpu",)
    key = (devices, settings.memory_mb)
    if key not in checkers:
        # no verdict cache here: the client keeps its own, and a worker host's cache must not
        # decide what a remote run calls verified
        checkers[key] = Checker(replace(settings, devices=devices), cache_dir=None)
        with _started_lock:
            if not _started:
                import atexit

                atexit.register(_close_started)
            _started.append(checkers[key])
    return checkers[key]


def _cuda_usable() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def answer(request: dict[str, Any]) -> str:
    """Runs on a Dask worker: one request of the checker's worker protocol, answered as JSON text.

    ``request``: ``message`` (the protocol tuple: ``("check", kernel, settings)`` or
    ``("measure", kernel, verdict, settings)``), ``timeout`` (seconds), ``versions`` (the client's
    :func:`_versions`), ``require_sandbox`` (the client runs with ``TORCHFIX_SANDBOX=require``).
    The answer: ``{"verdict": ..., "worker": ..., "notice": ...}`` or ``{"error": ..., "worker": ...}``
    for a worker that cannot give this client's verdicts (another version, no sandbox where one is
    required, a declared GPU without CUDA)."""
    from torchfix.equivalence.cache import verdict_to_json
    from torchfix.equivalence.sandbox import SandboxUnavailable, isolation

    try:
        from distributed import get_worker

        worker = get_worker().address
    except (ImportError, ValueError):  # called outside a Dask worker (a test)
        worker = f"pid {os.getpid()}"

    def error(text: str) -> str:
        return json.dumps({"error": text, "worker": worker})

    mine = _versions()
    if request.get("versions") != mine:
        return error(f"it runs {mine}; this run needs {request.get('versions')}: install the same versions on the workers")
    message = tuple(request["message"])
    settings = next((part for part in message if isinstance(part, CheckSettings)), None)
    if settings is None:
        return error("the request carries no check settings")
    gpu = any(d != "cpu" for d in settings.devices)
    if gpu and not _cuda_usable():
        return error(f"it declares a {GPU_RESOURCE} resource, but CUDA is not available there")
    try:
        found = isolation(("cpu", "cuda") if gpu else ("cpu",))
    except SandboxUnavailable as exc:
        return error(str(exc))
    if request.get("require_sandbox") and not found.sandboxed:
        return error(f"no sandbox could be set up there ({found.reason}) and this run has TORCHFIX_SANDBOX=require")
    checker = _worker_checker(settings, gpu)
    verdict = checker.run_request(message, float(request["timeout"]))
    notice = found.warning() or (
        f"torchfix: warning: {checker.sandbox_off_reason}; GPU checks run without it" if checker.sandbox_off_reason else None
    )
    return json.dumps({"verdict": verdict_to_json(verdict), "worker": worker, "notice": notice})


# --- the client side ------------------------------------------------------------------------------


def _quiet_dask_logs() -> None:
    """Dask logs every lost connection with a traceback; the run says what happened in one line.
    ``TORCHFIX_DEBUG=1`` keeps the logs."""
    from torchfix.equivalence.sandbox import debugging

    if debugging():
        return
    for name in list(logging.root.manager.loggerDict):
        if name == "distributed" or name.startswith("distributed."):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


def connect(address: str, timeout: float | None = None) -> Any:
    """A Dask client of the scheduler at ``address`` with at least one worker; ClusterError if not."""
    timeout = CONNECT_SECONDS if timeout is None else timeout
    try:
        from distributed import Client
    except ImportError:
        raise ClusterError(
            "--scheduler needs Dask's `distributed` package: pip install 'torchfix-codemod[dask]'"
        ) from None
    _quiet_dask_logs()
    try:
        client = Client(address, timeout=timeout, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ClusterError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    _quiet_dask_logs()
    try:
        client.wait_for_workers(1, timeout=timeout)
    except (OSError, TimeoutError):
        client.close()
        raise ClusterError(
            f"the Dask scheduler at {address} has no workers (start some: dask worker {address})"
        ) from None
    return client


def workers_info(client: Any) -> dict[str, dict]:
    return dict(client.scheduler_info().get("workers", {}))


def has_gpu_workers(client: Any) -> bool:
    return any((w.get("resources") or {}).get(GPU_RESOURCE, 0) > 0 for w in workers_info(client).values())


def worker_threads(client: Any) -> int:
    return sum(int(w.get("nthreads", 1)) for w in workers_info(client).values()) or 1


class ClusterChecker(Checker):
    """A :class:`Checker` whose requests run on a Dask cluster; also the pipeline's check service
    (``torchfix.service.CheckService``): ``submit`` sends first rungs ahead, ``check`` climbs.

    ``speculate``: how many rungs of each ladder ``submit`` sends ahead (1: the first; 0: none).
    """

    def __init__(
        self, client: Any, settings: CheckSettings, cache_dir: Any = DEFAULT_CACHE, speculate: int = 1,
        address: str = "",
    ) -> None:
        from torchfix.equivalence.sandbox import sandbox_mode

        super().__init__(settings, cache_dir)
        self.client = client
        self.address = address or str(getattr(client, "scheduler", None) and client.scheduler.address or "")
        self.speculate = speculate
        #: held by the thread that runs pipeline code; let go while waiting (see the module doc)
        self.baton: threading.Lock | None = None
        #: the error that ended the run (every later request raises it at once)
        self.failure: ClusterError | None = None
        #: tasks sent to the cluster, and of them those sent ahead of the climb
        self.tasks = 0
        self.tasks_ahead = 0
        self._ahead: dict[str, Any] = {}
        self._closing = threading.Event()
        self._versions = _versions()
        self._require_sandbox = sandbox_mode() == "require"
        self._notices: list[str] = []
        self._noticed: set[str] = set()

    # the pipeline's CheckerFactory and CheckService

    def __call__(self) -> "ClusterChecker":
        return self

    def submit(self, ladders: Sequence[Sequence[Kernel]]) -> None:
        for ladder in ladders:
            for kernel in ladder[: self.speculate]:
                if self.failure is not None or self._answered_here(kernel):
                    continue
                key = self._key("check", kernel, self.settings, "cpu")
                if key not in self._ahead:
                    self._ahead[key] = self._send(self._leg_message(kernel, "cpu"), self.settings.timeout, False, key)
                    self.tasks_ahead += 1

    def pending_notices(self) -> list[str]:
        """Warnings workers sent (no sandbox there, ...), each once; drained by the caller."""
        notices, self._notices = self._notices, []
        return notices

    def close(self) -> None:
        self._closing.set()
        ahead, self._ahead = self._ahead, {}
        for future in ahead.values():
            future.release()

    # Checker's hook

    def _request(self, message: Any, timeout: float) -> Verdict:
        if self.failure is not None:
            raise self.failure
        if message[0] == "check":
            _, kernel, settings = message
            verdicts: list[Verdict] = []
            for device in settings.devices:  # as the local worker does: stop at the first failing leg
                key = self._key("check", kernel, settings, device)
                future = self._ahead.pop(key, None) or self._send(
                    self._leg_message(kernel, device, settings), timeout, device != "cpu", key
                )
                verdicts.append(self._result(future, gpu=device != "cpu"))
                if verdicts[-1].outcome is not Outcome.VERIFIED:
                    break
            return merge_verdicts(verdicts)
        settings = next(part for part in message if isinstance(part, CheckSettings))
        gpu = any(d != "cpu" for d in settings.devices)
        return self._result(self._send(message, timeout, gpu, None), gpu)

    # internals

    def _answered_here(self, kernel: Kernel) -> bool:
        """Whether ``check`` will answer ``kernel`` without the cluster: remembered, refused by the
        static line, or in the verdict cache (then remembered, so ``check`` does not read it twice)."""
        from torchfix.equivalence.policy import vet

        key = (kernel.key(), self.settings)
        if key in self._cache or vet(kernel) is not None:
            return True
        if self.disk_cache is not None:
            stored = self.disk_cache.get(kernel, self.settings)
            if stored is not None:
                self._cache[key] = stored
                return True
        return False

    def _leg_message(self, kernel: Kernel, device: str, settings: CheckSettings | None = None) -> tuple:
        return ("check", kernel, replace(settings or self.settings, devices=(device,)))

    def _key(self, kind: str, kernel: Kernel, settings: CheckSettings, device: str) -> str:
        """A task key from content alone: equal requests share one task, and no path is in it."""
        payload = json.dumps([self._versions, kind, kernel.key(), asdict(settings), device], sort_keys=True, default=str)
        return f"torchfix-{kind}-{device}-{hashlib.sha256(payload.encode()).hexdigest()[:32]}"

    def _send(self, message: tuple, timeout: float, gpu: bool, key: str | None) -> Any:
        from torchfix.cluster import answer  # by module name, as the workers import it

        request = {"message": message, "timeout": timeout, "versions": self._versions, "require_sandbox": self._require_sandbox}
        self.tasks += 1
        options: dict[str, Any] = {"pure": False}
        if key is not None:
            options["key"] = key
        if gpu:
            options["resources"] = {GPU_RESOURCE: 1}
        return self.client.submit(answer, request, **options)

    @contextmanager
    def _baton_released(self) -> Iterator[None]:
        baton = self.baton
        if baton is None:
            yield
            return
        baton.release()
        try:
            yield
        finally:
            baton.acquire()

    def _fail(self, error: ClusterError) -> ClusterError:
        if self.failure is None:
            self.failure = error
        return self.failure

    def _result(self, future: Any, gpu: bool) -> Verdict:
        from torchfix.equivalence.cache import verdict_from_json

        with self._baton_released():
            text = self._wait(future, gpu)
        try:
            if not isinstance(text, str) or len(text) > _MAX_ANSWER_CHARS:
                raise ValueError("not an answer")
            data = json.loads(text)
            if "error" in data:
                raise self._fail(ClusterError(f"Dask worker {data.get('worker')} cannot run this run's checks: {data['error']}"))
            verdict = verdict_from_json(data["verdict"])
        except (ValueError, KeyError, TypeError, AttributeError):
            raise self._fail(ClusterError("a Dask worker answered something that is not a verdict")) from None
        notice = data.get("notice")
        if isinstance(notice, str) and notice not in self._noticed:
            self._noticed.add(notice)
            self._notices.append(f"{notice} [Dask worker {data.get('worker')}]")
        return verdict

    def _wait(self, future: Any, gpu: bool) -> Any:
        from distributed import KilledWorker

        # wait on a plain event set by the future's done callback, and read the result only once
        # it is done: ``Future.result(timeout=...)`` polled in a loop can surface a cancelled
        # internal wait as an UnboundLocalError on Python 3.11
        done = threading.Event()
        future.add_done_callback(lambda _: done.set())
        no_gpu_since: float | None = None
        while not done.wait(_POLL_SECONDS):
            if self._closing.is_set():
                raise self._fail(ClusterError("the run was stopped"))
            if self.client.status not in ("running", "connecting"):
                raise self._fail(ClusterError(f"lost the connection to the Dask scheduler at {self.address}"))
            if gpu:
                if has_gpu_workers(self.client):
                    no_gpu_since = None
                elif no_gpu_since is None:
                    no_gpu_since = time.monotonic()
                elif time.monotonic() - no_gpu_since > NO_GPU_GRACE_SECONDS:
                    raise self._fail(ClusterError(
                        f"no Dask worker declares a {GPU_RESOURCE} resource any more: the CUDA legs of this run cannot run"
                    ))
        if self._closing.is_set():
            raise self._fail(ClusterError("the run was stopped"))
        try:
            return future.result()
        except KilledWorker:
            # the scheduler ran the task again after each lost worker, up to its limit: the
            # check itself may kill workers (memory), so it ends as a local worker crash does
            return json.dumps({"verdict": {
                "outcome": Outcome.UNVERIFIED.value,
                "reason": "the checker worker died (the Dask workers running this check were lost, "
                          "as many times as the scheduler's allowed-failures)",
            }})
        except CancelledError:
            if self.client.status == "running":
                raise self._fail(ClusterError("a check task was cancelled on the cluster (by the scheduler or another client)")) from None
            raise self._fail(ClusterError(f"lost the connection to the Dask scheduler at {self.address}")) from None
        except Exception as exc:  # noqa: BLE001 - the task itself raised on the worker
            raise self._fail(ClusterError(f"a check task failed on the cluster ({type(exc).__name__}: {exc})")) from None


def files_in_flight(client: Any, files: int) -> int:
    """How many files :func:`run_on_cluster` keeps in flight for this cluster."""
    return max(1, min(files, FILES_PER_WORKER_THREAD * worker_threads(client) + 2))


def cluster_settings(client: Any, settings: CheckSettings) -> CheckSettings:
    """``settings`` with the devices the cluster offers: cpu, plus cuda when a worker declares a GPU."""
    return replace(settings, devices=("cpu", "cuda") if has_gpu_workers(client) else ("cpu",))


NO_GPU_NOTE = (
    f"no Dask worker declares a {GPU_RESOURCE} resource (dask worker --resources {GPU_RESOURCE}=1): "
    "every check ran on the CPU only"
)


def run_on_cluster(jobs: Sequence[Any], settings: Any, checker: ClusterChecker, files_in_flight: int) -> Iterator[Any]:
    """Process ``jobs`` (``parallel.Job``) here, their checks on the cluster; results in input order.

    Each file is climbed by its own thread, ``files_in_flight`` at a time, one of them running
    pipeline code at a time (the baton). Raises the checker's :class:`ClusterError` as soon as one
    is recorded, before yielding anything decided after it."""
    from torchfix.parallel import run_one

    baton = threading.Lock()
    checker.baton = baton
    pool = ThreadPoolExecutor(max(1, files_in_flight), thread_name_prefix="torchfix-file")

    def work(job: Any) -> Any:
        with baton:
            return run_one(job, settings, checker)

    queued: deque = deque()
    upcoming = iter(jobs)

    def fill() -> None:
        while len(queued) < max(1, files_in_flight):
            job = next(upcoming, None)
            if job is None:
                return
            queued.append(pool.submit(work, job))

    try:
        fill()
        while queued:
            head = queued[0]
            while not wait_futures([head], timeout=_POLL_SECONDS).done:
                if checker.failure is not None:
                    raise checker.failure
            queued.popleft()
            result = head.result()
            if checker.failure is not None:
                # this file may have been decided with a check cut short: never report it
                raise checker.failure
            fill()
            yield result
    finally:
        checker.close()  # wakes every waiting thread
        pool.shutdown(wait=True, cancel_futures=True)
        checker.baton = None


def describe_cluster(client: Any) -> str:
    """``3 workers, 6 threads, 1 with a GPU`` (for the run's opening line)."""
    info = workers_info(client)
    gpus = sum(1 for w in info.values() if (w.get("resources") or {}).get(GPU_RESOURCE, 0) > 0)
    threads = sum(int(w.get("nthreads", 1)) for w in info.values())
    return f"{len(info)} worker(s), {threads} thread(s), {gpus} with a {GPU_RESOURCE}"


def close_client(client: Any) -> None:
    """Close ``client`` without waiting long for a scheduler that may be gone."""
    try:
        client.close(timeout=2)
    except Exception:  # noqa: BLE001 - already closed, or the scheduler went away
        pass
