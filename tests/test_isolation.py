"""The checker's two lines of defence, tested directly: the static policy refuses each payload by
name, the sandbox confines what runs in it, reports carry no exception text, and the verdict cache
trusts only its own entries. (tests/test_hostile.py drives the CLI over hostile files.)"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from process_probe import processes_with

from torchfix.equivalence import sandbox
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome, Verdict
from torchfix.equivalence.policy import (
    BUILTINS,
    CALLEES,
    NEVER_ATTRIBUTES,
    TABLE_MODULES,
    VALUE_ATTRIBUTES,
    binding_kind,
    vet,
    vet_snippets,
)

MODULES = (("torch", "torch"), ("np", "numpy"), ("F", "torch.nn.functional"), ("math", "math"))

# ----------------------------------------------------------------------------- the static line


@pytest.mark.parametrize(
    "payload,reason",
    [
        ("y = x * (1 + torch.os.system('touch /tmp/c'))", "calls `torch.os.system`, which is not a known pure callee"),
        ("for i in range(x.shape[0] + torch.os.system('id')):\n    pass", "calls `torch.os.system`"),
        ("y = torch.save(x, '/tmp/c')", "calls `torch.save`"),
        ("y = np.save('/tmp/c', x)", "calls `numpy.save`"),
        ("y = float(torch.os.environ['SECRET'])", "uses `torch.os.environ`"),
        ("y = torch.__builtins__['open']('/tmp/c', 'w')", "attribute `__builtins__`"),
        ("y = ().__class__.__base__.__subclasses__()", "attribute `__class__`"),
        ("y = x.numpy().tofile('/tmp/c')", "attribute `.tofile`"),
        ("y = x.untyped_storage()", "attribute `.untyped_storage`"),
        ("y = torch.load('/tmp/c')", "calls `torch.load`"),
        ("y = torch.hub.load('a', 'b')", "calls `torch.hub.load`"),
        ("y = torch.utils.data.DataLoader(x)", "`torch.utils.data.DataLoader`"),
        ("y = torch.ops.aten.add(x, x)", "`torch.ops.aten.add`"),
        ("y = torch.classes", "`torch.classes`"),
        ("y = torch._C", "attribute `_C`"),
        ("y = x._version", "attribute `_version`"),
        ("y = getattr(torch, 'save')", "calls `getattr`"),
        ("setattr(x, 'a', 1)\ny = x", "calls `setattr`"),
        ("y = type(x)", "calls `type`"),
        ("y = vars(x)", "calls `vars`"),
        ("y = globals()", "calls `globals`"),
        ("y = exec('1')", "calls `exec`"),
        ("y = eval('1')", "calls `eval`"),
        ("y = compile('1', 'a', 'exec')", "calls `compile`"),
        ("y = open('/etc/passwd')", "calls `open`"),
        ("y = breakpoint()", "calls `breakpoint`"),
        ("y = input()", "calls `input`"),
        ("print(x)\ny = x", "calls `print`"),
        ("y = __import__('os')", "dunder name `__import__`"),
        ("y = '{0.__class__}'.format(x)", "string with a dunder"),
        ("y = 'a{0}'.format(x)", "attribute `.format`"),
        ("import os\ny = x", "imports `os`"),
        ("from torch import save\ny = x", "imports `torch.save`"),
        ("from typing import get_type_hints\ny = x", "imports `typing.get_type_hints`"),
        ("import torch.utils\ny = x", "imports `torch.utils`"),
        ("global g\ng = x\ny = x", "declares `global g`"),
        ("del torch\ny = x", "rebinds `torch`"),
        ("torch = x\ny = x", "rebinds `torch`"),
        ("t = torch\ny = t.zeros(2)", "uses the module `torch` as a value"),
        ("y = F", "uses the module `torch.nn.functional` as a value"),
        ("class A:\n    pass\ny = x", "defines a class"),
        ("model = x\ny = model.tofile('/tmp/c')", "attribute `.tofile`"),
        ("torch.zeros = x\ny = x", "assigns to an attribute of the bound module"),
    ],
)
def test_the_policy_refuses_each_payload_by_name(payload, reason):
    refusal = vet_snippets(payload, "y = x", MODULES, ["x"], ["model"])
    assert refusal is not None and reason in refusal.reason, refusal
    assert refusal.snippet == "old"


@pytest.mark.parametrize(
    "code",
    [
        "y = torch.where(x > 0, x, torch.zeros_like(x))",
        "y = F.softmax(x, dim=-1)",
        "y = torch.vmap(lambda r: (r * 2.0).sum())(x)",
        "y = sum(v.item() for v in x)",
        "y = [float(v) for v in x.tolist()]",
        "y = torch.finfo(x.dtype).eps * x",
        "y = np.asarray(x.numpy()).astype(np.float64)",
        "y = math.sqrt(2.0) * x",
        "y = model(x).sum()",
        "y = model.net(x)",
        "import torch.nn.functional as G\ny = G.relu(x)",
        "from torch import zeros\ny = zeros(3)",
        "def f(a):\n    return a.sum()\ny = f(x)",
        "fc = torch.nn.Linear(3, 4)\ny = fc.weight.sum() + fc.bias.sum()",
        "with torch.no_grad():\n    y = x.clone()",
        "y = {'a': x}.get('a')",
    ],
)
def test_the_policy_accepts_ordinary_kernels(code):
    assert vet_snippets(code, "y = x", MODULES, ["x"], ["model"]) is None


def test_bindings_outside_the_table_are_refused_or_opaque():
    assert binding_kind("torch.nn.functional") == "module"
    assert binding_kind("torch.zeros") == "row"
    assert binding_kind("mypkg.helper") == "opaque"
    assert binding_kind("torch.save") == "refused"
    kernel = Kernel("y = s(x)\n", "y = x\n", (InputSpec("x"),), ("y",), modules=(("s", "torch.save"),))
    assert "calls `s`, bound to `torch.save`, which is not a known pure callee" in vet(kernel).reason
    chain = Kernel("y = mz.load_url('u')\n", "y = x\n", (InputSpec("x"),), ("y",), modules=(("mz", "torch.utils.model_zoo"),))
    assert "uses `mz`, bound to `torch.utils.model_zoo`" in vet(chain).reason
    # rules bind every module the file imports: one the kernel never reads refuses nothing
    unused = Kernel("y = x * 2\n", "y = x + x\n", (InputSpec("x"),), ("y",), modules=(("torch", "torch"), ("mz", "torch.utils.model_zoo")))
    assert vet(unused) is None


def test_the_table_is_data_and_needs_no_torch():
    import subprocess
    import sys

    code = "import sys; import torchfix.equivalence.policy as p; assert 'torch' not in sys.modules; print(len(p.CALLEES))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=Path(__file__).parent.parent)
    assert done.returncode == 0 and int(done.stdout) > 300
    assert not NEVER_ATTRIBUTES & VALUE_ATTRIBUTES
    assert not any(a.startswith("_") for a in VALUE_ATTRIBUTES)
    assert all(name.split(".")[0] in ("torch", "numpy", "math") for name in CALLEES)
    assert not {"open", "exec", "eval", "getattr", "setattr", "type", "vars", "globals", "print", "input", "compile"} & set(BUILTINS)


def test_every_row_names_a_real_object_and_no_row_is_a_module():
    """A typo in the table would refuse a pure callee; a module row would let a module escape
    into a value (and with it every one of its attributes)."""
    import importlib
    import types

    for row in CALLEES:
        module_name, _, attr = row.rpartition(".")
        module = importlib.import_module(module_name)
        assert hasattr(module, attr), row
        assert not isinstance(getattr(module, attr), types.ModuleType), row
    for module in TABLE_MODULES:
        assert isinstance(importlib.import_module(module), types.ModuleType)


def test_the_runtime_namespace_matches_the_policy():
    import torch

    from torchfix.equivalence.execute import SAFE_BUILTINS, base_namespace, run_snippet

    assert set(SAFE_BUILTINS) <= set(BUILTINS) | {"__import__"} and {"len", "range", "float"} <= set(SAFE_BUILTINS)
    kernel = Kernel("y = torch.save\n", "y = 1\n", (), ("y",))
    base = base_namespace(kernel)
    with pytest.raises(AttributeError, match="not a known pure callee"):
        base["torch"].os  # noqa: B018 - the proxy hands out table rows only
    # an import inside a kernel gets the same view as a binding
    run = run_snippet(compile("import torch as t\ny = t.save\n", "<old>", "exec"), kernel, base, {})
    assert isinstance(run.error, AttributeError)
    run = run_snippet(compile("import os\ny = 1\n", "<old>", "exec"), kernel, base, {})
    assert isinstance(run.error, ImportError)
    assert base["torch"].zeros(2).shape == torch.Size([2])


def test_refused_kernels_are_never_sent_to_a_worker(tmp_path):
    from torchfix.equivalence.checker import Checker, CheckSettings

    canary = tmp_path / "canary"
    with Checker(CheckSettings(examples=5, measure=False), cache_dir=None) as checker:
        verdict = checker.check(Kernel(f"y = x * torch.os.system('touch {canary}')\n", "y = x\n", (InputSpec("x"),), ("y",)))
        assert verdict.outcome is Outcome.SKIPPED and "torch.os.system" in verdict.reason
        assert checker._launch is None and checker.refused == 1 and checker.checks_run == 0
    assert not canary.exists()


# ----------------------------------------------------------------------------- no exception text


def test_verdicts_carry_the_exception_type_and_line_never_its_text(checker, monkeypatch):
    secret = f"s3cret-{uuid.uuid4().hex}"
    # the value reaches the kernel as a literal here (the environment never does): its text in a
    # ValueError must not come back
    old = f"y = x * 2\nz = float({secret!r})\n"
    verdict = checker.check(Kernel(old, "y = x * 2\nz = 1.0\n", (InputSpec("x", ranks=(1,)),), ("y", "z")))
    assert verdict.outcome is Outcome.UNVERIFIED
    assert secret not in json.dumps(verdict.__dict__, default=str)
    assert "ValueError at line 2 of the old code" in verdict.reason
    new_raises = Kernel("y = x * 2\n", f"y = x * 2\nz = float({secret!r})\n", (InputSpec("x", ranks=(1,), dtypes=("float32",)),), ("y",))
    verdict = checker.check(new_raises)
    assert verdict.outcome is Outcome.REJECTED
    assert secret not in json.dumps(verdict.__dict__, default=str)
    assert "raised ValueError at line 2 of the new code" in verdict.counterexample.new


def test_error_site_names_the_snippet_line():
    from torchfix.equivalence.execute import error_site

    try:
        exec(compile("a = 1\nb = int('secret')\n", "<new>", "exec"), {})
    except ValueError as exc:
        assert error_site(exc) == "ValueError at line 2 of the new code"


# ----------------------------------------------------------------------------- the sandbox


needs_sandbox = pytest.mark.skipif(not sandbox.isolation().sandboxed, reason="no bubblewrap sandbox on this machine")


@needs_sandbox
@pytest.mark.parametrize("seccomp", [True, False], ids=["seccomp", "namespaces-only"])
def test_the_sandbox_has_no_network(listener, seccomp):
    port, connected = listener
    code = (
        "import socket\n"
        "try:\n"
        f"    socket.create_connection(('127.0.0.1', {port}), timeout=2)\n"
        "    print('connected')\n"
        "except OSError as exc:\n"
        "    print('refused', type(exc).__name__)\n"
    )
    result = sandbox.run_probe(code, seccomp=seccomp)
    assert "refused" in result.stdout, result
    assert not connected


@needs_sandbox
def test_the_sandbox_environment_is_empty(monkeypatch):
    secret = f"s3cret-{uuid.uuid4().hex}"
    monkeypatch.setenv("TORCHFIX_TEST_SECRET", secret)
    result = sandbox.run_probe("import os, json; print(json.dumps(dict(os.environ)))")
    env = json.loads(result.stdout)
    assert secret not in result.stdout
    # bwrap sets PWD for its --chdir
    assert set(env) <= {
        "HOME", "TMPDIR", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONDONTWRITEBYTECODE", "LC_ALL",
        "PATH", "PWD", "USER", "LOGNAME",
        "CUDA_CACHE_DISABLE", "USE_PYTORCH_KERNEL_CACHE", *sandbox.PASSED_ENV,
    }
    assert env["HOME"] == env["PWD"] == "/tmp"


@needs_sandbox
@pytest.mark.parametrize("seccomp", [True, False], ids=["seccomp", "namespaces-only"])
def test_the_sandbox_file_system_is_read_only_and_hides_the_host(tmp_path, seccomp):
    host_file = tmp_path / "host-secret.txt"
    host_file.write_text("secret")
    canary = Path(sandbox.package_root()) / f"canary-{uuid.uuid4().hex}"
    code = (
        "import os\n"
        f"print('sees host file', os.path.exists({str(host_file)!r}))\n"
        f"print('sees home', os.path.exists(os.path.expanduser('~root/.bashrc')) or os.path.exists('/root/.bashrc'))\n"
        "try:\n"
        f"    open({str(canary)!r}, 'w').write('x')\n"
        "    print('wrote package')\n"
        "except OSError as exc:\n"
        "    print('package read-only', type(exc).__name__)\n"
        "print('pid', os.getpid())\n"
    )
    result = sandbox.run_probe(code, seccomp=seccomp)
    assert "sees host file False" in result.stdout, result
    assert "sees home False" in result.stdout
    assert "package read-only" in result.stdout
    assert not canary.exists()
    assert "pid 1\n" not in result.stdout and int(result.stdout.split("pid ")[1]) < 10  # its own PID namespace


@pytest.mark.parametrize("mode", ["auto", "off"])
def test_a_setsid_child_does_not_survive_the_deadline(monkeypatch, mode):
    """Without the seccomp filter (which would stop the fork): the PID namespace (sandbox) or the
    /proc tree sweep (fallback) ends a child that left the worker's session."""
    monkeypatch.setenv("TORCHFIX_SANDBOX", mode)
    if mode == "auto" and not sandbox.isolation().sandboxed:
        pytest.skip("no bubblewrap sandbox on this machine")
    marker = f"torchfix-test-marker-{uuid.uuid4().hex}"
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', 'import os, time; os.setsid(); time.sleep(600)', {marker!r}])\n"
        "print('started', flush=True)\n"
        "time.sleep(600)\n"
    )
    result = sandbox.run_probe(code, timeout=4, seccomp=False)
    assert result.timed_out
    import time

    for _ in range(20):  # the kernel reaps asynchronously
        if not processes_with(marker):
            break
        time.sleep(0.1)
    assert not processes_with(marker)


def test_the_seccomp_filter_stops_forks_sockets_writes_and_exec(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCHFIX_SANDBOX", "off")  # the filter alone, in the fallback
    if not sandbox.seccomp_available():
        pytest.skip("libseccomp is not available")
    target = tmp_path / "written"
    code = (
        "import os, socket, subprocess\n"
        "def attempt(name, fn):\n"
        "    try:\n"
        "        fn()\n"
        "        print(name, 'ALLOWED')\n"
        "    except OSError as exc:\n"
        "        print(name, 'denied', exc.errno)\n"
        "attempt('fork', os.fork)\n"
        "attempt('socket', socket.socket)\n"
        f"attempt('write', lambda: open({str(target)!r}, 'w'))\n"
        "attempt('exec', lambda: subprocess.run(['true']))\n"
        "attempt('kill', lambda: os.kill(1, 0))\n"
        "attempt('mkdir', lambda: os.mkdir('x'))\n"
        "print('read ok', len(open('/proc/self/status').read()) > 0)\n"
    )
    result = sandbox.run_probe(code)
    assert "ALLOWED" not in result.stdout, result
    assert result.stdout.count("denied") == 6 and "read ok True" in result.stdout
    assert not target.exists()


def test_the_fallback_is_reported_and_require_fails(monkeypatch):
    monkeypatch.setattr(sandbox, "_ISOLATION", {})
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    monkeypatch.setenv("TORCHFIX_SANDBOX", "auto")
    found = sandbox.isolation()
    assert not found.sandboxed and "bwrap" in found.reason
    assert "without an OS sandbox" in found.warning()
    monkeypatch.setenv("TORCHFIX_SANDBOX", "require")
    with pytest.raises(sandbox.SandboxUnavailable, match="TORCHFIX_SANDBOX=require"):
        sandbox.isolation()
    monkeypatch.setenv("TORCHFIX_SANDBOX", "bogus")
    with pytest.raises(sandbox.SandboxUnavailable):
        sandbox.isolation()


def test_a_fallback_worker_gets_a_private_scratch_directory_removed_at_stop(monkeypatch):
    monkeypatch.setenv("TORCHFIX_SANDBOX", "off")
    launched = sandbox.launch(["0", "0", "0", "import os; print(os.getcwd())"], (), bootstrap=sandbox._PROBE_BOOTSTRAP, capture=True)
    out, _ = launched.process.communicate(timeout=60)
    scratch = launched.scratch
    assert scratch and out.decode().strip() == scratch
    assert (os.stat(scratch).st_mode & 0o777) == 0o700
    sandbox.kill(launched)
    assert not os.path.exists(scratch)


# ----------------------------------------------------------------------------- the cache


def _kernel() -> Kernel:
    return Kernel("y = x * 2\n", "y = x + x\n", (InputSpec("x"),), ("y",))


def _settings():
    from torchfix.equivalence.checker import CheckSettings

    return CheckSettings(examples=5, measure=False)


def test_cache_entries_are_bound_to_their_key_by_a_mac(tmp_path):
    from torchfix.equivalence.cache import VerdictCache

    cache = VerdictCache(tmp_path / "c")
    verified = Verdict(Outcome.VERIFIED, "no counterexample in 5 examples", examples=5, devices=("cpu",))
    cache.put(_kernel(), _settings(), verified)
    assert cache.get(_kernel(), _settings()) == verified
    assert (os.stat(tmp_path / "c").st_mode & 0o777) == 0o700
    assert (os.stat(tmp_path / "c" / "secret").st_mode & 0o777) == 0o600
    (entry,) = (tmp_path / "c" / "verdicts").rglob("*.json")
    # an attacker who can write the entry flips a rejection into "verified": the MAC says no
    data = json.loads(entry.read_text())
    data["verdict"]["outcome"] = "rejected"
    entry.write_text(json.dumps(data))
    assert cache.get(_kernel(), _settings()) is None and cache.rejected == 1
    # an entry from another user's cache (another secret) is ignored too
    other = VerdictCache(tmp_path / "other")
    other.put(_kernel(), _settings(), verified)
    (foreign,) = (tmp_path / "other" / "verdicts").rglob("*.json")
    entry.write_text(foreign.read_text())
    assert cache.get(_kernel(), _settings()) is None and cache.rejected == 2


def test_a_cache_directory_writable_by_others_is_refused(tmp_path):
    from torchfix.equivalence.cache import VerdictCache, private_directory_problem

    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    assert "writable by other users" in private_directory_problem(shared)
    cache = VerdictCache(shared)
    cache.put(_kernel(), _settings(), Verdict(Outcome.VERIFIED, "x"))
    assert cache.get(_kernel(), _settings()) is None and "writable by other users" in cache.problem
    assert not (shared / "verdicts").exists()
    link = tmp_path / "link"
    link.symlink_to(tmp_path)
    assert "not a directory" in private_directory_problem(link)


def test_a_secret_readable_by_others_is_refused(tmp_path):
    from torchfix.equivalence.cache import VerdictCache

    cache = VerdictCache(tmp_path / "c")
    cache.put(_kernel(), _settings(), Verdict(Outcome.VERIFIED, "x"))
    (tmp_path / "c" / "secret").chmod(0o644)
    again = VerdictCache(tmp_path / "c")
    assert again.get(_kernel(), _settings()) is None and "secret" in again.problem


def test_cache_keys_change_with_library_versions(monkeypatch):
    from torchfix.equivalence import cache

    key = cache.VerdictCache.key(_kernel(), _settings())
    monkeypatch.setattr(cache, "_VERSIONS", "torchfix=0,torch=0,numpy=0")
    assert cache.VerdictCache.key(_kernel(), _settings()) != key


# ----------------------------------------------------------------------------- the measurement budget


def test_a_slow_measurement_leaves_the_verdict_verified_and_untimed():
    """The old code is fast on the checker's tiny inputs and very slow at n = 256: timing it runs
    past its own budget, which must cost the rewrite its timings only."""
    from torchfix.equivalence.checker import Checker, CheckSettings

    old = "y = 0.0\nfor i in range(len(x)):\n    for j in range(len(x) ** 3):\n        y += 0.0\n    y += x[i].item()\n"
    new = "y = 0.0\nfor i in range(len(x)):\n    for j in range(len(x) ** 3):\n        y += 0.0\n    y += x[i].item()\n"
    kernel = Kernel(old, new, (InputSpec("x", ranks=(1,), dtypes=("float64",)),), ("y",))
    with Checker(CheckSettings(examples=10, timeout=60, measure=True, measure_timeout=2), cache_dir=None) as checker:
        verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason
    assert not verdict.timings and "ran past its budget of 2s" in verdict.timing_note


@needs_sandbox
def test_a_gpu_worker_that_finds_no_cuda_in_the_sandbox_is_restarted_without_it(capfd):
    """On a GPU machine whose driver needs something the sandbox hides, every GPU leg would fail:
    the worker says so at start and the checker runs GPU workers outside the namespaces, with a
    warning. Simulated here on a machine without a GPU (so CUDA is unusable everywhere)."""
    import torch

    from torchfix.equivalence.checker import Checker, CheckSettings

    if torch.cuda.is_available():
        pytest.skip("a real GPU is present")
    with Checker(CheckSettings(devices=("cpu", "cuda"), measure=False), cache_dir=None) as checker:
        checker._start()
        assert checker.sandbox_off_reason == "CUDA is not usable inside the bubblewrap sandbox"
        assert not checker._launch.isolation.sandboxed and checker._launch.scratch
    assert "GPU checks run without it" in capfd.readouterr().err


def test_the_parent_never_unpickles_what_a_worker_sends(tmp_path, monkeypatch):
    """A worker that runs scanned code may be compromised: if the parent unpickled its answers, a
    crafted pickle would run code in the parent, outside the sandbox. Here a fake worker answers
    "ready" properly, then sends a pickle whose loading would write a canary."""
    import pickle

    from torchfix.equivalence.checker import Checker, CheckSettings

    canary = tmp_path / "canary"

    class Payload:
        def __reduce__(self):  # noqa: ANN204
            return (open, (str(canary), "w"))

    evil = pickle.dumps(Payload())
    fake_worker = (
        "import sys, json; from multiprocessing.connection import Connection; "
        "conn = Connection(int(sys.argv[2])); "
        "conn.send_bytes(json.dumps({'ready': ['ready', False, False]}).encode()); "
        f"conn.recv_bytes(); conn.send_bytes({evil!r}); conn.recv_bytes()"
    )
    real_launch = sandbox.launch
    monkeypatch.setattr(sandbox, "launch", lambda *a, **k: real_launch(*a, **{**k, "bootstrap": fake_worker}))
    with Checker(CheckSettings(examples=5, measure=False, timeout=20), cache_dir=None) as checker:
        verdict = checker.check(Kernel("y = x\n", "y = x\n", (InputSpec("x"),), ("y",)))
    assert verdict.outcome is Outcome.UNVERIFIED and "not a verdict" in verdict.reason
    assert not canary.exists()


def test_the_worker_loads_its_filter_after_its_imports_and_cuda_and_before_any_request(monkeypatch):
    """The filter denies what a CUDA build of torch does at import (a temporary file, through
    ctypes.util.find_library) and what the CUDA driver does when it starts (a listening UNIX
    socket), so both come first; no request, hence no scanned code, is read before it."""
    from torchfix.equivalence import worker

    order: list[str] = []

    class Conn:
        def recv(self):
            order.append("request")
            return None

    monkeypatch.setattr(sandbox, "limit", lambda memory_mb, sandboxed: order.append("limits"))
    monkeypatch.setattr(sandbox, "load_filter", lambda gpu, sandboxed: order.append("filter") or True)
    monkeypatch.setattr(worker, "start_runtime", lambda gpu: order.append("imports and cuda") or gpu)
    monkeypatch.setattr(worker, "send", lambda conn, message: order.append(f"send {message[0]}"))
    worker.serve(Conn(), 0, sandboxed=True, gpu=True)
    assert order == ["limits", "imports and cuda", "filter", "send ready", "request"]


def test_a_worker_without_its_filter_is_reported_and_require_fails(monkeypatch, capsys):
    """libseccomp loads in the parent but the worker's `python -I` could not load the filter (a
    pyseccomp that only PYTHONPATH provides): never silently."""
    from torchfix.equivalence import checker as checker_module
    from torchfix.equivalence.checker import Checker, CheckSettings

    monkeypatch.setattr(checker_module, "_FILTER_WARNED", False)
    with Checker(CheckSettings(devices=("cpu",), measure=False), cache_dir=None) as checker:
        monkeypatch.setenv("TORCHFIX_SANDBOX", "auto")
        checker._filter_missing()
        checker._filter_missing()
        assert capsys.readouterr().err.count("could not load its seccomp filter") == 1
        monkeypatch.setenv("TORCHFIX_SANDBOX", "require")
        with pytest.raises(sandbox.SandboxUnavailable, match="seccomp filter"):
            checker._filter_missing()


def test_the_worker_environment_names_a_user(monkeypatch):
    # getpass.getuser() falls back to the password database, which the sandbox does not bind:
    # torch's compiler stack (imported by use_deterministic_algorithms on a GPU leg) asks for it
    monkeypatch.delenv("USER", raising=False)
    env = sandbox._worker_env("/tmp")
    assert env["USER"] and env["LOGNAME"]
    probe = sandbox.run_probe("import getpass; print(getpass.getuser())", seccomp=False)
    assert probe.stdout.strip() == "torchfix", probe


def test_threads_started_before_the_filter_are_filtered_too():
    """The worker starts torch (and CUDA, with threads of its own) before its filter: the filter
    must reach every thread of the process, not only the one that loads it (libseccomp's TSYNC)."""
    if not sandbox.seccomp_available():
        pytest.skip("libseccomp is not available")
    code = (
        "import os, sys, threading, tempfile\n"
        "sys.path.insert(0, sys.argv[1])\n"
        "from torchfix.equivalence import sandbox\n"
        "go, result, where = threading.Event(), {}, tempfile.mkdtemp()\n"
        "def early():\n"
        "    go.wait()\n"
        "    try:\n"
        "        os.mkdir(os.path.join(where, 'x'))\n"
        "        result['mkdir'] = 'ALLOWED'\n"
        "    except OSError as exc:\n"
        "        result['mkdir'] = f'denied {exc.errno}'\n"
        "thread = threading.Thread(target=early)\n"
        "thread.start()\n"
        "loaded = sandbox.load_filter(False)\n"
        "go.set()\n"
        "thread.join()\n"
        "print(loaded, result['mkdir'])\n"
    )
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", code, str(Path(sandbox.__file__).resolve().parent.parent)], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "denied", "1"], (done.stdout, done.stderr[-2000:])


def test_a_pyseccomp_that_cannot_find_libseccomp_means_no_filter_not_a_dead_worker(tmp_path, monkeypatch):
    # pyseccomp raises RuntimeError at import where libseccomp is missing: the worker must say
    # "no filter" (the parent then warns, or fails under require), not die at start
    (tmp_path / "pyseccomp.py").write_text("raise RuntimeError('Unable to find libseccomp')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(__import__("sys").modules, "pyseccomp", raising=False)
    assert sandbox._load_seccomp() is False


def test_debug_mode_passes_the_worker_stderr_escaped_and_never_its_stdout(monkeypatch, capfd):
    """TORCHFIX_DEBUG=1: the worker's stderr reaches the user, its stdout (where a JSON or SARIF
    report goes) does not; `0` is off."""
    code = "import sys; print('REPORT-INJECTION'); print('worker-says', file=sys.stderr)"
    for value, shown in (("0", False), ("1", True)):
        monkeypatch.setenv("TORCHFIX_DEBUG", value)
        monkeypatch.setenv("TORCHFIX_SANDBOX", "off")
        launched = sandbox.launch(["0", "0", "0", code], (), bootstrap=sandbox._PROBE_BOOTSTRAP)
        launched.process.wait(timeout=60)
        sandbox.kill(launched)
        out, err = capfd.readouterr()
        assert "REPORT-INJECTION" not in out
        assert ("worker-says" in err) is shown, (value, err)


def test_a_checker_error_traceback_is_escaped_in_debug_mode(monkeypatch, capsys):
    from torchfix.equivalence import worker

    monkeypatch.setenv("TORCHFIX_DEBUG", "1")
    try:
        raise ValueError("value \x1b]0;owned\x07 made by a kernel")
    except ValueError as exc:
        verdict = worker._checker_error(exc)
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err and "\\x1b]0;owned\\x07" in err
    assert verdict.reason == "checker error (ValueError)"


@pytest.mark.parametrize("how", ["console script", "python -m"])
def test_nothing_is_imported_from_the_directory_torchfix_runs_in(tmp_path, how):
    """Run from inside a scanned repository: its `difflib.py` (the fork server's and the
    workers' imports) or `libcst.py` (the parse probe's) must never be imported -- they would
    run with the user's rights, outside any sandbox."""
    import subprocess
    import sys

    canary = tmp_path / "CANARY"
    payload = f"open({str(canary)!r}, 'a').write(__name__ + '\\n')\n"
    repo = tmp_path / "repo"
    repo.mkdir()
    for module in ("difflib", "libcst", "tokenize", "dataclasses", "click", "rich"):
        (repo / f"{module}.py").write_text(payload)
    loop = "import torch\n\ndef f(x):\n    out = torch.empty_like(x)\n    for i in range(len(x)):\n        out[i] = x[i] * 2\n    return out\n"
    for i in range(3):
        (repo / f"m{i}.py").write_text(loop)
    # Python 2 syntax: the stdlib parser rejects it, so LibCST is tried in the probe child first
    (repo / "legacy.py").write_text("import torch\nprint 'loss', torch.zeros(1)\nfor i in range(3):\n    x[i] += 1\n")
    torchfix = Path(sys.executable).with_name("torchfix")
    if how == "console script" and not torchfix.exists():
        pytest.skip("no console script beside this interpreter")
    command = [str(torchfix)] if how == "console script" else [sys.executable, "-m", "torchfix"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    if how == "python -m":  # from a source checkout not installed, as a developer runs it
        env["PYTHONPATH"] = str(Path(sandbox.__file__).resolve().parent.parent)
    done = subprocess.run(
        [*command, ".", "--jobs", "2", "--no-measure", "--examples", "5"], cwd=repo, capture_output=True, text=True,
        timeout=600, env=env,
    )
    assert not canary.exists(), canary.read_text()
    assert done.returncode in (0, 1), done.stderr[-2000:]
