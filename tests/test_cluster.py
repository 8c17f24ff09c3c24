"""Checks on a Dask cluster (``--scheduler``): a LocalCluster of worker processes shared by the
module; a fake GPU worker (``dask worker --resources GPU=1`` on a machine without CUDA) for
routing; a worker killed mid-check; a scheduler that vanishes mid-run, then ``--resume``.

Skipped when ``distributed`` is not installed (it is the optional extra ``torchfix-codemod[dask]``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("distributed")

from distributed import Client, LocalCluster  # noqa: E402

import torchfix.cli as cli_module  # noqa: E402
from cli_runner import run  # noqa: E402
from torchfix.cluster import (  # noqa: E402
    NO_GPU_NOTE, ClusterChecker, ClusterError, answer, cluster_settings, has_gpu_workers,
)
from torchfix.equivalence.checker import Checker, CheckSettings  # noqa: E402
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable
#: the worker processes must import this checkout's torchfix (the one the client runs)
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "TORCHFIX_NO_CACHE": "1"}

TOTAL = """\
import torch


def total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        total += x[i].item()
    return total
"""
# the first rung (``x.sum().item()``) is refuted on an empty float tensor; a later one holds
SUM_OF_ITEMS = """\
import torch


def f(x: torch.Tensor):
    return sum(v.item() for v in x)
"""
HISTOGRAM = """\
import torch


def histogram(labels: torch.Tensor, k: int) -> torch.Tensor:
    labels = labels.view(-1)
    counts = torch.zeros(k, dtype=torch.long)
    for i in range(labels.shape[0]):
        counts[labels[i]] += 1
    return counts
"""
# an opaque model per sample: reported, never emitted
PER_SAMPLE_MODEL = """\
import torch


def embed(model, x: torch.Tensor) -> torch.Tensor:
    out = torch.empty(x.shape[0], 4)
    for i in range(x.shape[0]):
        out[i] = model(x[i])
    return out
"""

TOTAL_KERNEL = Kernel(
    old="total = 0.0\nfor i in range(len(x)):\n    total += x[i].item()\n",
    new="total = x.sum(dtype=torch.float64).item()\n",
    inputs=(InputSpec("x", Kind.TENSOR, ranks=(1,), dtypes=("float32", "float64")),),
    outputs=("total",),
    reorders_float_reduction=True,
)
# refuted: an empty float tensor sums to the int 0 in the old code, to 0.0 in the new one
SUM_KERNEL = Kernel(
    old="result = sum(v.item() for v in x)\n",
    new="result = x.sum().item()\n",
    inputs=(InputSpec("x", Kind.TENSOR, ranks=(1,), dtypes=("float32",)),),
    outputs=("result",),
)
SETTINGS = CheckSettings(examples=40, measure=False)


@pytest.fixture(scope="module")
def cluster():
    """Two worker processes, one thread each: the module's cluster."""
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as local:
        with Client(local, set_as_default=False) as client:
            yield local, client


def _tree(root: Path) -> None:
    (root / "repo_a").mkdir()
    (root / "repo_b").mkdir()
    (root / "repo_a" / "total.py").write_text(TOTAL)
    (root / "repo_a" / "items.py").write_text(SUM_OF_ITEMS)
    (root / "repo_b" / "histogram.py").write_text(HISTOGRAM)
    (root / "repo_b" / "model.py").write_text(PER_SAMPLE_MODEL)


def _without_time(report: dict) -> dict:
    return {k: v for k, v in report.items() if k != "seconds"}


def _summary_lines(err: str) -> list[str]:
    """stderr without the lines that may differ: the cluster's opening line, the elapsed time,
    and the note on GPUs (which says why there was none)."""
    return [
        line for line in err.splitlines()
        if not line.startswith("torchfix: checking on the Dask cluster") and "scanned," not in line
        and not line.startswith(("no GPU on this machine", "no Dask worker declares"))
    ]


def test_a_cluster_run_prints_the_bytes_of_a_local_run(tmp_path, capfdbinary, cluster, monkeypatch):
    monkeypatch.setenv("TORCHFIX_NO_CACHE", "1")
    local_cluster, _ = cluster
    _tree(tmp_path)
    common = ["--no-measure", "--examples", "40", "--seed", "3", "repo_a", "repo_b"]
    local = run(["--jobs", "1", "--report", "local.json", *common], tmp_path, capfdbinary)
    remote = run(["--scheduler", local_cluster.scheduler_address, "--report", "remote.json", *common], tmp_path, capfdbinary)
    assert local[0] == remote[0] == 0
    assert local[1] == remote[1] and local[1].count(b"+++ b/") == 3, "the same diff, byte for byte"
    assert _summary_lines(local[2]) == _summary_lines(remote[2])
    assert "TFV001 unverified" in remote[2] and "repo_a: 2 files, 2 rewritten" in remote[2]
    assert NO_GPU_NOTE in remote[2], "a run without GPU workers says so"
    assert remote[2].startswith("torchfix: checking on the Dask cluster at tcp://")
    local_report = json.loads((tmp_path / "local.json").read_text())
    remote_report = json.loads((tmp_path / "remote.json").read_text())
    assert _without_time(local_report) == _without_time(remote_report)
    assert [r["path"] for r in remote_report["repositories"]] == ["repo_a", "repo_b"]


def test_a_refuted_verdict_comes_back_as_the_local_one(cluster):
    """The counterexample, the witness and every field survive the JSON answer."""
    _, client = cluster
    remote = ClusterChecker(client, SETTINGS, cache_dir=None)
    with Checker(SETTINGS, cache_dir=None) as local:
        expected = local.check(SUM_KERNEL)
    got = remote.check(SUM_KERNEL)
    assert got.outcome is Outcome.REJECTED and got.counterexample is not None and got.counterexample.witness
    assert got == expected
    assert remote._launch is None, "nothing ran in this process"


def test_measuring_is_a_task_too(cluster):
    _, client = cluster
    remote = ClusterChecker(client, CheckSettings(examples=20, measure=True), cache_dir=None)
    verdict = remote.check(TOTAL_KERNEL)
    assert verdict.ok and verdict.timings and {t.device for t in verdict.timings} == {"cpu"}
    assert remote.tasks == 2, "one check, one measurement"
    assert remote.check(TOTAL_KERNEL) is verdict and remote.tasks == 2, "remembered like a local verdict"


def test_submitting_ahead_sends_first_rungs_once(cluster):
    _, client = cluster
    remote = ClusterChecker(client, SETTINGS, cache_dir=None)
    remote.submit([[TOTAL_KERNEL, SUM_KERNEL], [TOTAL_KERNEL]])
    assert remote.tasks_ahead == 1, "only first rungs, and one task per distinct kernel"
    assert remote.check(TOTAL_KERNEL).ok and remote.tasks == 1, "the climb takes the task sent ahead"


def test_a_worker_from_another_version_is_refused():
    request = {"message": ("check", TOTAL_KERNEL, SETTINGS), "timeout": 10.0, "versions": "checker 0, torch=1.0", "require_sandbox": False}
    data = json.loads(answer(request))
    assert "verdict" not in data and "this run needs checker 0, torch=1.0" in data["error"]


def _start_worker(address: str, *extra: str) -> subprocess.Popen:
    return subprocess.Popen(
        [PYTHON, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard", *extra],
        env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGKILL)  # its own session: the worker and what it started
    process.wait(timeout=30)


def test_cuda_legs_go_to_workers_that_declare_a_gpu(cluster):
    """A worker declaring ``GPU=1`` on this CUDA-less machine: CUDA legs are routed to it, and it
    says it cannot run them -- the run ends rather than check without the GPU it promised."""
    local_cluster, client = cluster
    gpu_worker = _start_worker(local_cluster.scheduler_address, "--resources", "GPU=1", "--name", "fake-gpu")
    try:
        deadline = time.monotonic() + 60
        while not has_gpu_workers(client):
            assert time.monotonic() < deadline, "the GPU worker did not join"
            time.sleep(0.2)
        settings = cluster_settings(client, SETTINGS)
        assert settings.devices == ("cpu", "cuda")
        gpu_address = next(a for a, w in client.scheduler_info()["workers"].items() if w.get("name") == "fake-gpu")
        remote = ClusterChecker(client, settings, cache_dir=None)
        refuted = remote.check(SUM_KERNEL)
        assert refuted.outcome is Outcome.REJECTED and remote.tasks == 1, "no CUDA leg after a CPU leg that failed"
        with pytest.raises(ClusterError, match="declares a GPU resource, but CUDA is not available") as error:
            remote.check(TOTAL_KERNEL)
        assert gpu_address in str(error.value), "the CUDA leg ran on the GPU worker"
        with pytest.raises(ClusterError):
            remote.check(TOTAL_KERNEL)  # the run is over: every later request says so at once
    finally:
        _stop(gpu_worker)
        # the scheduler notices a killed worker only later: until it does, a client.run in the
        # next test would address the dead worker and fail with CommClosedError
        deadline = time.monotonic() + 60
        while any(w.get("name") == "fake-gpu" for w in client.scheduler_info()["workers"].values()):
            assert time.monotonic() < deadline, "the scheduler never dropped the stopped GPU worker"
            time.sleep(0.2)


def test_a_worker_killed_mid_check_is_retried_elsewhere(cluster):
    _, client = cluster
    settings = CheckSettings(examples=60, measure=False, seed=11)
    remote = ClusterChecker(client, settings, cache_dir=None)
    verdicts = []
    checking = threading.Thread(target=lambda: verdicts.append(remote.check(TOTAL_KERNEL)))
    checking.start()
    deadline = time.monotonic() + 60
    busy: list[str] = []
    pids: dict[str, int] = {}
    # on a loaded machine a worker can be processing before it answers client.run: wait for both
    while not busy or busy[0] not in pids:
        assert time.monotonic() < deadline, "the check never started"
        busy = [address for address, keys in client.processing().items() if keys]
        # ask only the busy worker: another may be gone (a stopped worker lingers in the scheduler)
        pids = client.run(os.getpid, workers=busy[:1], on_error="return") if busy else {}
        pids = {address: pid for address, pid in pids.items() if isinstance(pid, int)}
        time.sleep(0.05)
    os.kill(pids[busy[0]], signal.SIGKILL)  # the Dask worker process running the check
    checking.join(timeout=240)
    assert verdicts and verdicts[0].ok, verdicts
    assert busy[0] not in client.scheduler_info()["workers"], "the killed worker is gone (its nanny starts a new one)"
    with Checker(settings, cache_dir=None) as local:
        assert local.check(TOTAL_KERNEL) == verdicts[0], "the retry gives the verdict a local check gives"


def test_a_vanished_scheduler_ends_the_run_writes_nothing_and_resume_finishes_it(tmp_path, cluster):
    local_cluster, _ = cluster
    for i in range(6):  # distinct kernels: each file costs a check of its own
        (tmp_path / f"m{i}.py").write_text(TOTAL.replace("x[i].item()", f"x[i].item() * {i + 2}"))
    before = {p.name: p.read_bytes() for p in tmp_path.glob("*.py")}
    scheduler = subprocess.Popen(
        [PYTHON, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
         "--scheduler-file", str(tmp_path / "scheduler.json")],
        env=ENV, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    worker = None
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "scheduler.json").exists():
            assert time.monotonic() < deadline, "the scheduler did not start"
            time.sleep(0.1)
        time.sleep(0.2)  # the file is written before it is complete
        address = json.loads((tmp_path / "scheduler.json").read_text())["address"]
        worker = _start_worker(address)
        cmd = [PYTHON, "-m", "torchfix", "--apply", "--no-measure", "--examples", "30", "--scheduler", address,
               "--report", "r.json", "."]
        torchfix = subprocess.Popen(cmd, env=ENV, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        journal = tmp_path / "r.json"
        while not (journal.exists() and len(journal.read_text().splitlines()) >= 3):  # the header and two files
            assert torchfix.poll() is None and time.monotonic() < deadline + 120, "the run ended before the stop"
            time.sleep(0.05)
        os.killpg(scheduler.pid, signal.SIGKILL)
        out, err = torchfix.communicate(timeout=120)
    finally:
        _stop(scheduler)
        if worker is not None:
            _stop(worker)
    assert torchfix.returncode == 2, err
    assert "lost the connection to the Dask scheduler" in err and "nothing was written" in err
    assert "--resume r.json" in err
    assert {p.name: p.read_bytes() for p in tmp_path.glob("*.py")} == before, "no file written"
    decided = len(journal.read_text().splitlines()) - 1
    assert 2 <= decided < 6

    # resumed on the module's cluster: every file is decided and written
    resumed = subprocess.run(
        [PYTHON, "-m", "torchfix", "--apply", "--no-measure", "--examples", "30", "--scheduler",
         local_cluster.scheduler_address, "--resume", "r.json", "."],
        env=ENV, cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "6 files scanned, 6 rewritten, 0 failed, 6 written" in resumed.stderr
    assert all(b"for i in range" not in p.read_bytes() for p in tmp_path.glob("m*.py"))
    report = json.loads(journal.read_text())
    assert report["summary"]["rewrites"] == {"TFV004/verified": 6}, "the journal became the full report"
