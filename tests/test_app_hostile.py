"""Hostile or odd files cannot hang, crash or exhaust a run: the parse guard, special files,
symlinks, the size limit, the per-file budget, read-only files, and SIGTERM/SIGINT.

Runs that could hang or die if a guard failed (a FIFO, /dev/zero, a segfaulting parse, signals)
run in a process of their own (``tests/fake_cli.py``: the real CLI with a fake rule and checker)
under a timeout; the rest run in this process with the same fakes.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import torchfix.cli as cli_module
from cli_runner import run
from test_app_fakes import AssignOne, FakeChecker, fake_checker_factory

HERE = Path(__file__).resolve().parent
SRC = "def f():\n    x = 1\n    return x\n"
NEW = "def f():\n    x = 2\n    return x\n"
# a few thousand nested brackets: LibCST's native parser overflows its stack on them (SIGSEGV)
DEEP_BRACKETS = "x = 1\ny = " + "(" * 3000 + "1" + ")" * 3000 + "\n"
# an and-chain is flat for CPython's parser but 20,000 levels deep for LibCST; the syntax error
# at the end makes the stdlib reject the file, so it goes to LibCST -- which crashes on it
CRASHES_LIBCST = "x = 1\ny = " + " and ".join(["a"] * 20000) + '\nprint "python 2"\n'


@pytest.fixture
def hooks(monkeypatch):  # noqa: ANN001, ANN201
    monkeypatch.setattr(cli_module, "load_rules", lambda select, ignore: [AssignOne])
    monkeypatch.setattr(cli_module, "documented_rules", lambda: [AssignOne])
    monkeypatch.setattr(cli_module, "make_checker", fake_checker_factory)


def fake_cli(args: list[str], cwd: Path, timeout: float = 90, **env: str) -> subprocess.CompletedProcess:
    """``torchfix ARGS`` in its own process, with the fake rule and checker."""
    environment = dict(os.environ, **env)
    return subprocess.run(
        [sys.executable, str(HERE / "fake_cli.py"), *args], cwd=cwd, capture_output=True, text=True,
        timeout=timeout, env=environment,
    )


# --- the parse guard ---------------------------------------------------------------------------


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_nested_brackets_are_that_files_error_and_the_run_goes_on(tmp_path, jobs):
    (tmp_path / "deep.py").write_text(DEEP_BRACKETS)
    (tmp_path / "ok.py").write_text(SRC)
    done = fake_cli(["--jobs", jobs, "--apply", "."], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "deep.py: error: does not parse: nested too deeply: more than 200 nested brackets at line 2" in done.stderr
    assert (tmp_path / "ok.py").read_text() == NEW and (tmp_path / "deep.py").read_text() == DEEP_BRACKETS


def test_a_native_crash_of_the_parser_is_that_files_error(tmp_path):
    (tmp_path / "crash.py").write_text(CRASHES_LIBCST)
    (tmp_path / "ok.py").write_text(SRC)
    done = fake_cli(["--jobs", "1", "."], tmp_path)
    assert done.returncode == 0, done.stderr
    assert "crash.py: error: does not parse: LibCST's parser crashed on it (SIGSEGV)" in done.stderr
    assert "+    x = 2" in done.stdout, "the file next to it is still rewritten"


def test_code_nested_deeper_than_the_rules_can_walk_is_reported(tmp_path, capfdbinary, hooks):
    # within CPython's limits, but past what LibCST's visitors and the rules can recurse through
    (tmp_path / "chain.py").write_text("x = 1\ny = a" + "[0]" * 400 + "\n")
    (tmp_path / "ok.py").write_text(SRC)
    code, out, err = run(["--jobs", "1", "."], tmp_path, capfdbinary)
    assert code == 0 and "chain.py: error: does not parse: nested too deeply: 404 levels at line 2 (torchfix parses up to 200)" in err
    assert out.count(b"diff --git") == 1


# --- what is read, and how much -----------------------------------------------------------------


def test_fifos_devices_and_sockets_are_skipped_unread_walked_or_named(tmp_path):
    import socket

    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "zero.py").symlink_to("/dev/zero")
    (tmp_path / "sub").mkdir()
    os.mkfifo(tmp_path / "sub" / "inner.py")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(tmp_path / "sock.py"))
    (tmp_path / "ok.py").write_text(SRC)
    try:
        walked = fake_cli(["--jobs", "1", "."], tmp_path, timeout=60)
        named = fake_cli(["--jobs", "2", "fifo.py", "zero.py", "sock.py", "ok.py"], tmp_path, timeout=60)
    finally:
        server.close()
    for done in (walked, named):
        assert done.returncode == 0, done.stderr
        assert "fifo.py: skipped: not a regular file (a FIFO); not read" in done.stderr
        assert "zero.py: skipped: not a regular file (a character device); not read" in done.stderr
        assert "sock.py: skipped: not a regular file (a socket); not read" in done.stderr
        assert done.stdout.count("diff --git") == 1
    assert "sub/inner.py: skipped: not a regular file (a FIFO)" in walked.stderr
    assert "3 skipped (not a regular file, or over the size limit)" in named.stderr


def test_a_fifo_swapped_in_after_the_stat_is_caught_by_fstat(tmp_path, monkeypatch):
    from torchfix.source import SkippedFile, read_bytes
    import torchfix.source as source_module

    os.mkfifo(tmp_path / "fifo.py")
    real_stat = os.stat
    regular = real_stat(HERE / "fake_cli.py")
    # the check before opening sees a regular file; the descriptor says otherwise
    monkeypatch.setattr(source_module.os, "stat", lambda path, *a, **k: regular if str(path).endswith("fifo.py") else real_stat(path, *a, **k))
    with pytest.raises(SkippedFile, match="a FIFO"):
        read_bytes(tmp_path / "fifo.py")


def test_size_limit_option_and_configuration(tmp_path, capfdbinary, hooks):
    (tmp_path / "big.py").write_text(SRC + "# " + "x" * 3000 + "\n")
    (tmp_path / "ok.py").write_text(SRC)
    code, out, err = run(["--max-file-size", "2K", "."], tmp_path, capfdbinary)
    assert code == 0 and "big.py: skipped: 2.96 KB, over the size limit of 2 KB (--max-file-size); not read" in err
    assert out.count(b"diff --git") == 1
    (tmp_path / "pyproject.toml").write_text('[tool.torchfix]\nmax-file-size = "2K"\n')
    code, out, err = run(["--format", "json", "."], tmp_path, capfdbinary)
    files = {f["path"]: f for f in json.loads(out)["files"]}
    assert files["big.py"]["status"] == "skipped" and "over the size limit of 2 KB" in files["big.py"]["error"]
    code, out, err = run(["--max-file-size", "0", "."], tmp_path, capfdbinary)  # 0: no limit
    assert code == 0 and out.count(b"diff --git") == 2
    code, out, err = run(["--max-file-size", "lots", "."], tmp_path, capfdbinary)
    assert code == 2 and "not a size" in err
    (tmp_path / "pyproject.toml").write_text("[tool.torchfix]\nmax-file-size = -1\n")
    assert run(["."], tmp_path, capfdbinary)[0] == 2


def test_a_growing_file_is_read_no_further_than_the_limit(tmp_path, monkeypatch):
    from torchfix.source import SkippedFile, read_bytes
    import torchfix.source as source_module

    target = tmp_path / "m.py"
    target.write_bytes(b"x = 1\n")
    real_read = os.read
    served = []

    def endless(fd, n):  # noqa: ANN001, ANN202 - a file that keeps growing as it is read
        served.append(n)
        return b"#" * n

    monkeypatch.setattr(source_module.os, "read", endless)
    with pytest.raises(SkippedFile, match="over the size limit of 4 MB"):
        read_bytes(target, 4 << 20)
    monkeypatch.setattr(source_module.os, "read", real_read)
    assert sum(served) <= (4 << 20) + (1 << 20)


def test_dangling_and_looping_symlinks_are_reported_per_file_also_when_named(tmp_path, capfdbinary, hooks):
    (tmp_path / "dead.py").symlink_to(tmp_path / "nowhere.py")
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "ok.py").write_text(SRC)
    for args in (["."], ["dead.py", "a.py", "ok.py"]):
        code, out, err = run(args, tmp_path, capfdbinary)
        assert code == 0, err
        assert "dead.py: error: cannot read: a dangling symlink (to " in err
        assert "a.py: error: cannot read: a symlink loop" in err
        assert out.count(b"diff --git") == 1


# --- the per-file budget -------------------------------------------------------------------------


def test_a_file_over_its_time_budget_gives_up_and_the_run_goes_on(tmp_path, capfdbinary, hooks, monkeypatch):
    class Slow(FakeChecker):
        def check(self, kernel):  # noqa: ANN001, ANN201
            time.sleep(0.4)
            return super().check(kernel)

    monkeypatch.setattr(cli_module, "make_checker", lambda *a: Slow())
    # a name per function: equal kernels would be checked once
    (tmp_path / "many.py").write_text("".join(f"def f{i}():\n    x{i} = 1\n    return x{i}\n" for i in range(6)))
    (tmp_path / "ok.py").write_text(SRC)
    code, out, err = run(["--jobs", "1", "--file-budget", "1", "--apply", "."], tmp_path, capfdbinary)
    assert code == 0, err
    assert re.search(r"many.py: gave up: over the per-file time budget of 1s after [1-5] checked candidate\(s\) \(--file-budget\)", err)
    assert "1 gave up (over the per-file budget)" in err and ", 1 gave up," in err
    assert "x0 = 1" in (tmp_path / "many.py").read_text() and (tmp_path / "ok.py").read_text() == NEW


def test_a_file_with_too_many_candidates_gives_up_before_checking_them(tmp_path, capfdbinary, hooks, monkeypatch):
    checker = FakeChecker()
    monkeypatch.setattr(cli_module, "make_checker", lambda *a: checker)
    (tmp_path / "many.py").write_text("".join(f"def f{i}():\n    x{i} = 1\n    return x{i}\n" for i in range(12)))
    code, out, err = run(["--jobs", "1", "--max-candidates", "10", "--format", "json", "."], tmp_path, capfdbinary)
    report = json.loads(out)
    assert code == 0 and report["files"][0]["status"] == "gave-up"
    assert report["files"][0]["error"] == "more than 10 candidate rewrites in one file (--max-candidates)"
    assert report["rewrites"] == [] and report["summary"]["gave_up"] == 1
    assert len(checker.checked) == 10
    (tmp_path / "pyproject.toml").write_text("[tool.torchfix]\nmax-candidates = 0\n")  # 0: no limit
    assert len(re.findall(rb"\+    x\d+ = 2", run(["--jobs", "1", "."], tmp_path, capfdbinary)[1])) == 12


def test_a_file_over_its_memory_budget_gives_up(tmp_path, capfdbinary, hooks, monkeypatch):
    held = []

    class Hungry(FakeChecker):
        def check(self, kernel):  # noqa: ANN001, ANN201
            block = bytearray(64 << 20)
            block[:: 4096] = b"x" * len(block[:: 4096])  # touch every page: resident, not just reserved
            held.append(block)
            return super().check(kernel)

    monkeypatch.setattr(cli_module, "make_checker", lambda *a: Hungry())
    (tmp_path / "many.py").write_text("".join(f"def f{i}():\n    x{i} = 1\n    return x{i}\n" for i in range(4)))
    try:
        code, out, err = run(["--jobs", "1", "--file-memory", "100", "."], tmp_path, capfdbinary)
    finally:
        held.clear()
    assert code == 0 and "many.py: gave up: over the per-file memory budget of 100 MB after 2 checked candidate(s): grew by" in err


# --- read-only files ----------------------------------------------------------------------------


def test_read_only_files_are_left_alone_under_apply_unless_force(tmp_path, capfdbinary, hooks):
    (tmp_path / "ro.py").write_text(SRC)
    (tmp_path / "ro.py").chmod(0o444)
    (tmp_path / "rw.py").write_text(SRC)
    code, out, err = run(["--apply", "--format", "json", "."], tmp_path, capfdbinary)
    assert code == 0, err
    assert "ro.py: skipped: read-only file: not rewritten (--force rewrites it)" in err
    assert (tmp_path / "ro.py").read_text() == SRC and (tmp_path / "rw.py").read_text() == NEW
    report = json.loads(out)
    assert {f["path"]: f["status"] for f in report["files"]}["ro.py"] == "read-only"
    assert report["summary"]["read_only"] == 1 and report["summary"]["written"] == 1
    code, out, err = run(["--apply", "--force", "ro.py"], tmp_path, capfdbinary)
    assert code == 0 and (tmp_path / "ro.py").read_text() == NEW
    assert stat.S_IMODE((tmp_path / "ro.py").stat().st_mode) == 0o444, "--force keeps the mode"
    # a dry run and --check do not write: the diff is shown as for any file
    (tmp_path / "ro2.py").write_text(SRC)
    (tmp_path / "ro2.py").chmod(0o444)
    code, out, err = run(["--check", "ro2.py"], tmp_path, capfdbinary)
    assert code == 1 and b"+    x = 2" in out


# --- signals -------------------------------------------------------------------------------------


def _wait_for(progress: Path, word: str, count: int, proc: subprocess.Popen, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if progress.exists() and progress.read_text().split().count(word) >= count:
            return
        if proc.poll() is not None:
            raise AssertionError(f"the run ended first: {proc.communicate()}")
        time.sleep(0.02)
    raise AssertionError(f"no {count} {word}(s) within {limit}s")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_while_writing_stops_after_the_file_being_written_with_an_exact_count(tmp_path, signum):
    for i in range(40):
        (tmp_path / f"m{i:02d}.py").write_text(SRC)
    progress = tmp_path.parent / f"{tmp_path.name}.progress"
    env = dict(os.environ, FAKE_WRITE_SECONDS="0.05", FAKE_PROGRESS=str(progress))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "fake_cli.py"), "--jobs", "1", "--apply", "-q", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    _wait_for(progress, "write", 5, proc)
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    written = sum((tmp_path / f"m{i:02d}.py").read_text() == NEW for i in range(40))
    untouched = sum((tmp_path / f"m{i:02d}.py").read_text() == SRC for i in range(40))
    assert written + untouched == 40, "every file is old or new, never half-written"
    assert 5 <= written < 40
    name = "terminated (SIGTERM)" if signum == signal.SIGTERM else "interrupted"
    assert f"torchfix: {name} while writing: {written} of 40 rewritten files written; the other {40 - written} are unchanged" in err
    assert proc.returncode == 128 + signum
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".torchfix-tmp")]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sigterm_while_processing_writes_nothing_and_says_so(tmp_path, jobs):
    for i in range(30):
        (tmp_path / f"m{i:02d}.py").write_text(SRC)
    progress = tmp_path.parent / f"{tmp_path.name}.progress"
    # (0.3 s a check: the signal must land while checks still run, on a loaded 2-core machine
    # too -- at 0.1 s, two workers finished the 30 files first in one loaded run)
    env = dict(os.environ, FAKE_CHECK_SECONDS="0.3", FAKE_PROGRESS=str(progress))
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "fake_cli.py"), "--jobs", jobs, "--apply", "-q", "."],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    _wait_for(progress, "check", 3, proc)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "torchfix: terminated (SIGTERM) while processing (" in err and "nothing was written" in err
    assert all((tmp_path / f"m{i:02d}.py").read_text() == SRC for i in range(30))


def test_timeout_reaches_the_real_checker(tmp_path):
    checker = cli_module.make_checker(None, None, 7.5, False)
    try:
        assert checker.settings.timeout == 7.5 and checker.settings.measure is False
    finally:
        checker.close()


def test_github_and_sarif_report_skipped_files_as_warnings_and_failures_as_errors(tmp_path, capfdbinary, hooks):
    os.mkfifo(tmp_path / "fifo.py")
    (tmp_path / "bad.py").write_text("def f(:\n    x = 1\n")
    code, out, err = run(["--format", "github", "."], tmp_path, capfdbinary)
    lines = out.decode().splitlines()
    assert "::warning file=fifo.py,title=torchfix skipped::not a regular file (a FIFO); not read" in lines
    assert any(line.startswith("::error file=bad.py,title=torchfix::does not parse") for line in lines)
    code, out, err = run(["--format", "sarif", "."], tmp_path, capfdbinary)
    notes = json.loads(out)["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert {n["message"]["text"].split(":")[0]: n["level"] for n in notes} == {"bad.py": "error", "fifo.py": "warning"}


# --- a sample of benchmarks/fuzz_hostile.py -------------------------------------------------------


@pytest.mark.parametrize("seed,signal_chance", [(11, 0.0), (12, 1.0), (13, 1.0)])
def test_fuzz_sample(tmp_path, seed, signal_chance):
    import random

    sys.path.insert(0, str(HERE.parent / "benchmarks"))
    try:
        import fuzz_hostile
    finally:
        sys.path.pop(0)
    rng = random.Random(seed)
    outcome, tree, command, out, err = fuzz_hostile.run_once(
        0, tmp_path, rng, real=False, timeout=90, kinds=fuzz_hostile.FAST_KINDS, signal_chance=signal_chance,
    )
    assert outcome.ok, f"{outcome.why}\n{command}\n{err}"
    assert sum(tree.kinds.values()) >= 4


def test_a_child_parse_ends_with_the_process_that_started_it(tmp_path):
    # a pool worker stopped on Ctrl-C leaves with os._exit, which does not kill a parse it started
    script = (
        "import os, sys, threading, time\n"
        f"sys.path.insert(0, {str(HERE.parent)!r})\n"
        "from torchfix.source import probe\n"
        # a minute of parsing in a lean 2 GB (nested lists would hit the memory limit sooner)
        "slow = (b'x = a' + b'.b' * 190 + b'\\n') * 3000\n"
        "threading.Thread(target=lambda: probe(slow, seconds=600), daemon=True).start()\n"
        "time.sleep(2)\n"
        "os._exit(0)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], start_new_session=True)
    parent.wait(timeout=60)
    deadline = time.monotonic() + 3
    while _in_session(parent.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _in_session(parent.pid), "the child parse outlived its parent"


def _in_session(sid: int) -> list[int]:
    """Live processes of session ``sid`` (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            found.append(int(entry))
    return found


def test_a_signal_inside_an_import_is_a_clean_interruption(capsys):
    # a KeyboardInterrupt raised while a class body is built comes out of the import as the
    # RuntimeError it causes (`Error calling __set_name__ ...`): still an interruption, exit 130
    from torchfix.__main__ import main as entry

    def interrupted_import() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error calling __set_name__ on 'Field' instance") from exc

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(SystemExit) as stopped:
            entry(prepare=interrupted_import)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
    assert stopped.value.code == 130
    assert "interrupted while starting: nothing was read or written" in capsys.readouterr().err


def test_an_error_while_starting_without_a_signal_is_not_hidden():
    from torchfix.__main__ import main as entry

    def broken_import() -> None:
        raise RuntimeError("a real bug")

    previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        with pytest.raises(RuntimeError, match="a real bug"):
            entry(prepare=broken_import)
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)


def test_an_error_that_took_the_place_of_an_interrupt_stops_the_run_as_the_interrupt():
    """A signal landing inside LibCST's metadata computation unwinds it through a `finally` that
    fails in turn (a `KeyError` for a child never finished): that error carries the interrupt as
    its context, and the run stops as interrupted instead of reporting one file's internal error
    and going on (seen in a loaded run of the SIGTERM test)."""
    from torchfix.pipeline import _reraise_interrupt

    try:
        try:
            raise KeyboardInterrupt
        finally:
            {}["child"]  # noqa: B018 - the cleanup that fails
    except KeyError as exc:
        with pytest.raises(KeyboardInterrupt):
            _reraise_interrupt(exc)
    try:
        raise KeyError("a plain bug")
    except KeyError as exc:
        _reraise_interrupt(exc)  # nothing behind it: reported as the file's internal error
