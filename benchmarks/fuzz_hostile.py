"""Fuzz the CLI with hostile trees: every run must end cleanly, every file must be old or new.

    python benchmarks/fuzz_hostile.py --runs 300 --seed 0            # fake rule and checker (fast)
    python benchmarks/fuzz_hostile.py --runs 20 --real --seed 1      # real rules and checker (torch)

Each run builds a random tree from the case kinds in :data:`KINDS` -- nesting that crashes or
stalls LibCST, files over the size limit, FIFOs, sockets, links to /dev/zero, dangling links,
symlink loops, links to directories, read-only files, undecodable bytes, CRLF / CR / BOM mixes,
Python 2, null bytes, files with more candidates than the per-file limit, a FIFO ``.gitignore``,
a sub-project's ``pyproject.toml``, directories 1,200 deep -- next to ordinary candidates, and runs the CLI on it in a
fresh process and session: a dry run, ``--check``, ``--apply`` (with or without ``--force``),
``--format json`` or ``sarif``, ``--jobs 1`` or ``2``, sometimes with tight per-file limits. Half
the runs get a SIGTERM or a SIGINT at a random moment, sent to the process or to its whole
process group (as a terminal's Ctrl-C or a cancelled CI job does).

A run passes when:

- it ends within ``--timeout`` (a hang fails), with an exit code it may have -- 0, 1 for
  ``--check``, 130 / 143 when signalled -- never killed by a signal, never 2;
- a signalled run says so on stderr (``torchfix: interrupted ...`` / ``terminated (SIGTERM)``);
  one that was not prints its summary;
- every regular file is byte-identical to the original or exactly the rewrite (computed here by
  the same pipeline); special files, links and their targets are untouched; no temporary file is
  left behind;
- the counts it prints are the truth: ``N written`` of a finished ``--apply``, and ``K of M
  rewritten files written`` of one interrupted while writing, equal the files changed on disk;
- no process of the run's session outlives it (workers, checkers, parse children).

A signal that lands before the interpreter has installed torchfix's handler (its first fraction
of a second) kills the process by signal before it has read anything: such runs are counted
apart, and they must have changed nothing. Failing trees are kept (``--keep-failures``, default
on) under the work directory with the run's command, output and the reason.

``--real`` uses the real rules and checker on TFV004 accumulator loops (each check takes seconds:
use fewer runs). The default uses ``tests/fake_cli.py``: the real CLI with the fake rule
AssignOne (``x = 1`` -> ``x = 2``) and a checker that verifies everything.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

CANDIDATE_FAKE = "def f{i}():\n    x = 1\n    return x\n"
CANDIDATE_REAL = (
    "def total_{i}(x: torch.Tensor) -> float:\n    total = 0.0\n    for i in range(len(x)):\n"
    "        total += x[i].item()\n    return total\n"
)


@dataclass
class Tree:
    root: Path
    real: bool
    rng: random.Random
    kinds: Counter = field(default_factory=Counter)
    #: paths (relative) of regular files and their original bytes
    originals: dict[str, bytes] = field(default_factory=dict)
    #: paths of special entries (links, FIFOs, sockets) and what they were: (kind, link target)
    specials: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    sockets: list[socket.socket] = field(default_factory=list)

    def candidates(self, n: int) -> str:
        body = "".join((CANDIDATE_REAL if self.real else CANDIDATE_FAKE).format(i=i) for i in range(n))
        return ("import torch\n" if self.real else "") + body

    def write(self, rel: str, data: bytes, mode: int | None = None) -> None:
        path = self.root / rel
        _makedirs(path.parent)
        path.write_bytes(data)
        if mode is not None:
            path.chmod(mode)
        self.originals[rel] = data

    def special(self, rel: str, kind: str, target: str | None = None) -> None:
        path = self.root / rel
        _makedirs(path.parent)
        if kind == "fifo":
            os.mkfifo(path)
        elif kind == "socket":
            sock = socket.socket(socket.AF_UNIX)
            sock.bind(str(path))
            self.sockets.append(sock)
        elif kind == "symlink":
            os.symlink(target, path)  # type: ignore[arg-type]
        elif kind == "dir":
            path.mkdir()
        self.specials[rel] = (kind, target)

    def close(self) -> None:
        for sock in self.sockets:
            sock.close()


def _makedirs(directory: Path) -> None:
    """``mkdir -p`` without recursion (pathlib's and os.makedirs recurse: trees here go 1,200 deep)."""
    current = Path(directory.anchor) if directory.is_absolute() else Path()
    for part in directory.parts[1:] if directory.is_absolute() else directory.parts:
        current = current / part
        try:
            os.mkdir(current)
        except FileExistsError:
            pass


def _remove(root: Path) -> None:
    """``rm -rf`` that copes with read-only files and trees deeper than shutil.rmtree's recursion."""
    subprocess.run(["chmod", "-R", "u+rwX", str(root)], capture_output=True)
    subprocess.run(["rm", "-rf", str(root)], capture_output=True)


def _name(tree: Tree, kind: str, suffix: str = "") -> str:
    sub = tree.rng.choice(["", "", "pkg/", "pkg/sub/", "other/"])
    return f"{sub}{kind}_{len(tree.originals) + len(tree.specials)}{suffix}.py"


# --- case kinds: each adds one hostile or odd entry to the tree -----------------------------------


def candidate(tree: Tree) -> None:
    tree.write(_name(tree, "candidate"), tree.candidates(tree.rng.randint(1, 4)).encode())


def many_candidates(tree: Tree) -> None:  # more than the default --max-candidates (200)
    tree.write(_name(tree, "many"), tree.candidates(230 if not tree.real else 30).encode())


def deep_brackets(tree: Tree) -> None:  # segfaults LibCST's parser
    depth = tree.rng.choice([250, 3000, 50000])
    tree.write(_name(tree, "brackets"), (tree.candidates(1) + "y = " + "(" * depth + "1" + ")" * depth + "\n").encode())


def libcst_crash(tree: Tree) -> None:  # flat for CPython, 20,000 deep for LibCST; rejected by ast
    chain = " and ".join(["a"] * tree.rng.choice([15000, 40000]))
    tree.write(_name(tree, "andchain"), (tree.candidates(1) + f"y = {chain}\nprint 'python 2'\n").encode())


def deep_chain(tree: Tree) -> None:  # past the nesting limit, within CPython's
    tree.write(_name(tree, "chain"), (tree.candidates(1) + "y = a" + "[0]" * tree.rng.choice([150, 400, 2500]) + "\n").encode())


def slow_lists(tree: Tree) -> None:  # LibCST parses nested lists at a few KB/s
    one = "y = " + "[" * 90 + "]" * 90 + "\n"
    tree.write(_name(tree, "lists"), (tree.candidates(1) + one * tree.rng.choice([20, 200])).encode())


def huge(tree: Tree) -> None:  # over the default size limit
    line = "# " + "z" * 78 + "\n"
    tree.write(_name(tree, "huge"), (tree.candidates(1) + line * (3 * 2**20 // len(line))).encode())


def big(tree: Tree) -> None:  # under the limit, over the in-process parse threshold
    filler = "".join(f"def g{i}(a, b):\n    return a + b * {i}\n\n" for i in range(4000))
    tree.write(_name(tree, "big"), (tree.candidates(2) + filler).encode())


def fifo(tree: Tree) -> None:
    tree.special(_name(tree, "fifo"), "fifo")


def unix_socket(tree: Tree) -> None:
    tree.special(_name(tree, "socket"), "socket")


def dev_zero(tree: Tree) -> None:
    tree.special(_name(tree, "zero"), "symlink", tree.rng.choice(["/dev/zero", "/dev/urandom", "/dev/null"]))


def dangling(tree: Tree) -> None:
    tree.special(_name(tree, "dangling"), "symlink", "does/not/exist.py")


def symlink_loop(tree: Tree) -> None:
    name = _name(tree, "loop", "a")
    other = str(Path(name).parent / Path(name).name.replace("a.py", "b.py"))
    tree.special(name, "symlink", os.path.basename(other))
    tree.special(other, "symlink", os.path.basename(name))


def link_to_dir(tree: Tree) -> None:
    tree.special(_name(tree, "dirlink"), "symlink", tree.rng.choice([".", "..", "/"]))


def dir_named_py(tree: Tree) -> None:
    tree.special(_name(tree, "dir"), "dir")


def read_only(tree: Tree) -> None:
    tree.write(_name(tree, "readonly"), tree.candidates(2).encode(), mode=0o444)


def undecodable(tree: Tree) -> None:
    tree.write(_name(tree, "undecodable"), tree.candidates(1).encode() + b"s = '\xff\xfe'\n")


def bad_cookie(tree: Tree) -> None:
    tree.write(_name(tree, "cookie"), b"# -*- coding: klingon -*-\n" + tree.candidates(1).encode())


def line_endings(tree: Tree) -> None:
    text = tree.candidates(2)
    choice = tree.rng.choice(["crlf", "cr", "mixed", "bom-crlf", "latin1"])
    if choice == "crlf":
        data = text.replace("\n", "\r\n").encode()
    elif choice == "cr":
        data = text.replace("\n", "\r").encode()
    elif choice == "mixed":
        data = "".join(line + ("\r\n" if k % 2 else "\n") for k, line in enumerate(text.splitlines())).encode()
    elif choice == "bom-crlf":
        data = b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode()
    else:
        data = b"# -*- coding: latin-1 -*-\n" + (text + "s = 'caf\xe9'\n").encode("latin-1")
    tree.write(_name(tree, choice), data)


def python2(tree: Tree) -> None:
    tree.write(_name(tree, "py2"), b'print "hello"\nx = 1\nexec "y = 2"\nz = 0777\n')


def null_bytes(tree: Tree) -> None:
    tree.write(_name(tree, "nul"), tree.candidates(1).encode() + b"s = 1\x00\n")


def empty(tree: Tree) -> None:
    tree.write(_name(tree, "empty"), b"")


def fifo_gitignore(tree: Tree) -> None:
    sub = tree.rng.choice(["pkg", "other"])
    if f"{sub}/.gitignore" not in tree.specials:
        tree.special(f"{sub}/.gitignore", "fifo")


def sub_project(tree: Tree) -> None:
    # a sub-project's own configuration, valid: tighter limits inside it
    rel = "proj/pyproject.toml"
    if rel not in tree.originals:
        tree.write(rel, b'[tool.torchfix]\nmax-candidates = 1\nmax-file-size = "64K"\n')
    tree.write(f"proj/m_{len(tree.originals)}.py", tree.candidates(2).encode())


def deep_dirs(tree: Tree) -> None:  # deeper than Python's recursion limit
    rel = "/".join(["d"] * tree.rng.choice([300, 1200])) + f"/deep_{tree.kinds['deep-dirs']}.py"
    tree.write(rel, tree.candidates(1).encode())


KINDS: dict[str, Callable[[Tree], None]] = {
    "candidate": candidate, "many-candidates": many_candidates, "deep-brackets": deep_brackets,
    "libcst-crash": libcst_crash, "deep-chain": deep_chain, "slow-lists": slow_lists, "huge": huge, "big": big,
    "fifo": fifo, "socket": unix_socket, "device-link": dev_zero, "dangling": dangling, "symlink-loop": symlink_loop,
    "link-to-dir": link_to_dir, "dir-named-py": dir_named_py, "read-only": read_only, "undecodable": undecodable,
    "bad-cookie": bad_cookie, "line-endings": line_endings, "python2": python2, "null-bytes": null_bytes,
    "empty": empty, "fifo-gitignore": fifo_gitignore, "sub-project": sub_project, "deep-dirs": deep_dirs,
}
#: slow kinds are drawn less often (they cost seconds each)
WEIGHTS = {"slow-lists": 0.3, "huge": 0.5, "big": 0.5, "libcst-crash": 0.7, "many-candidates": 0.6}


#: the kinds that cost well under a second each (the test suite's sample draws from these)
FAST_KINDS = tuple(name for name in KINDS if name not in ("slow-lists", "huge", "big", "many-candidates", "deep-dirs"))


def build(root: Path, rng: random.Random, real: bool, kinds: tuple[str, ...] | None = None) -> Tree:
    tree = Tree(root, real, rng)
    names = list(kinds or KINDS)
    weights = [WEIGHTS.get(n, 1.0) for n in names]
    for kind in ["candidate"] + rng.choices(names, weights, k=rng.randint(3, 9)):
        KINDS[kind](tree)
        tree.kinds[kind] += 1
    return tree


# --- expected output -------------------------------------------------------------------------------


def rewrites(tree: Tree) -> dict[str, bytes]:
    """What each regular file becomes when rewritten (its original when nothing applies)."""
    from torchfix.pipeline import process_source

    if tree.real:
        from torchfix.codemods.registry import ALL_RULES as rules
        from torchfix.equivalence.kernel import Outcome, Verdict

        class Checker:
            def check(self, kernel):  # noqa: ANN001, ANN202 - the real checker verifies these loops
                return Verdict(Outcome.VERIFIED, "assumed")
    else:
        from test_app_fakes import AssignOne, FakeChecker as Checker

        rules = [AssignOne]
    expected = {}
    for rel, data in tree.originals.items():
        if not rel.endswith(".py"):
            expected[rel] = data
            continue
        result = process_source(data, rel, rules, lambda: Checker(), budget=None, details=False)
        expected[rel] = result.new if result.new is not None else data
    return expected


# --- one run ---------------------------------------------------------------------------------------


@dataclass
class Outcome:
    ok: bool
    why: str
    code: int | None
    signalled: str | None
    early_death: bool = False
    seconds: float = 0.0


def _session_processes(sid: int) -> list[str]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            if int(fields[3]) == sid and fields[0] != "Z":
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    cmdline = handle.read().replace(b"\0", b" ")[:120]
                found.append(f"{entry}: {cmdline!r}")
        except (OSError, IndexError, ValueError):
            continue
    return found


def run_once(
    index: int, work: Path, rng: random.Random, real: bool, timeout: float,
    kinds: tuple[str, ...] | None = None, signal_chance: float = 0.5,
) -> tuple[Outcome, Tree, list[str], str, str]:
    """Build one random tree under ``work``, run the CLI over it, judge the result."""
    root = work / f"run{index:04d}"
    tree = build(root, rng, real, kinds)
    expected = rewrites(tree)
    mode = rng.choice(["dry", "check", "apply", "apply", "apply-force", "json", "sarif"])
    args = {"dry": [], "check": ["--check"], "apply": ["--apply"], "apply-force": ["--apply", "--force"],
            "json": ["--format", "json"], "sarif": ["--format", "sarif"]}[mode]
    if mode == "json" and rng.random() < 0.5:
        args = ["--apply", "--format", "json"]
    args += ["--jobs", rng.choice(["1", "2"])]
    if rng.random() < 0.3:
        args += rng.choice([["--max-candidates", "3"], ["--file-budget", "4"], ["--max-file-size", "100K"], ["--file-memory", "300"]])
    if real:
        args += ["--no-measure", "--examples", "20"]
    args.append(rng.choice([".", "."] + [rel for rel in list(tree.originals) + list(tree.specials) if rel.endswith(".py")][:1]))
    command = [sys.executable, "-m", "torchfix"] if real else [sys.executable, str(ROOT / "tests" / "fake_cli.py")]
    command += args
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    if real:
        env["TORCHFIX_CACHE_DIR"] = str(work / "cache")
    signalled = None
    sent_at = None
    proc = subprocess.Popen(command, cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, start_new_session=True)
    started = time.monotonic()
    if rng.random() < signal_chance:
        delay = rng.uniform(0.0, 6.0 if real else 3.0)
        signum = rng.choice([signal.SIGTERM, signal.SIGINT])
        group = rng.random() < 0.4
        try:
            proc.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            try:
                (os.killpg if group else os.kill)(proc.pid, signum)
                signalled = f"{signal.Signals(signum).name}{' (group)' if group else ''} at {delay:.2f}s"
                sent_at = delay
            except ProcessLookupError:
                pass
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        tree.close()
        return Outcome(False, f"hang: no exit within {timeout:.0f}s", None, signalled), tree, command, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    seconds = time.monotonic() - started
    time.sleep(0.2)  # let killed children be reaped
    leftover = _session_processes(proc.pid)
    tree.close()
    stdout, stderr = out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    outcome = judge(tree, expected, proc.returncode, signalled, mode, args, stdout, stderr, leftover, sent_at)
    if outcome.ok and leftover:
        outcome = Outcome(False, f"processes outlived the run: {leftover}", proc.returncode, signalled)
    outcome.seconds = seconds
    return outcome, tree, command, stdout, stderr


def judge(tree: Tree, expected: dict[str, bytes], code: int, signalled: str | None, mode: str, args: list[str],
          stdout: str, stderr: str, leftover: list[str], sent_at: float | None) -> Outcome:
    def fail(why: str) -> Outcome:
        return Outcome(False, why, code, signalled)

    changed = []
    for rel, data in tree.originals.items():
        now = (tree.root / rel).read_bytes()
        if now == data:
            continue
        if now != expected[rel]:
            return fail(f"{rel}: neither the original nor the rewrite ({len(now)} bytes)")
        if "--apply" not in args:
            return fail(f"{rel}: written without --apply")
        changed.append(rel)
    for rel, (kind, target) in tree.specials.items():
        path = tree.root / rel
        mode_now = os.lstat(path).st_mode
        if kind == "symlink" and (not stat.S_ISLNK(mode_now) or os.readlink(path) != target):
            return fail(f"{rel}: the symlink changed")
        if kind == "fifo" and not stat.S_ISFIFO(mode_now):
            return fail(f"{rel}: no longer a FIFO")
    temps = subprocess.run(["find", str(tree.root), "-name", "*.torchfix-tmp"], capture_output=True, text=True).stdout.split()
    if temps:
        return fail(f"temporary files left: {temps}")
    if code is not None and code < 0:
        # killed by a signal: only acceptable before torchfix's handler existed, with nothing done
        if signalled and sent_at is not None and sent_at < 1.0 and not changed and not stdout:
            return Outcome(True, "killed before the handler was installed", code, signalled, early_death=True)
        return fail(f"killed by signal {-code}")
    allowed = {0} | ({1} if "--check" in args else set()) | ({130, 143} if signalled else set())
    if code not in allowed:
        return fail(f"exit code {code}")
    if code in (130, 143):
        if not re.search(r"^torchfix: (interrupted|terminated \(SIGTERM\))", stderr, re.M):
            return fail("signalled exit without a message")
        if (code == 143) != ("SIGTERM" in (signalled or "")):
            return fail(f"exit {code} for {signalled}")
        written = re.search(r"while writing: (\d+) of (\d+) rewritten files written", stderr)
        if written and int(written.group(1)) != len(changed):
            return fail(f"said {written.group(1)} written, {len(changed)} changed on disk")
        if "nothing was written" in stderr and changed:
            return fail(f"said nothing was written, {len(changed)} changed on disk")
        return Outcome(True, "signalled", code, signalled)
    headline = re.search(r"^\d+ files? scanned, .*\((\d+\.\d)s\)$", stderr, re.M)
    if not headline:
        return fail("no summary")
    if "--apply" in args:
        written = re.search(r", (\d+) written", headline.group(0))
        if not written or int(written.group(1)) != len(changed):
            return fail(f"summary says {written.group(1) if written else '?'} written, {len(changed)} changed on disk")
    if "--format" in args and "json" in args:
        json.loads(stdout)  # a whole report, parsable
    return Outcome(True, "finished", code, signalled)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--real", action="store_true", help="the real rules and checker (slow)")
    parser.add_argument("--timeout", type=float, default=180.0, help="seconds before a run counts as hung")
    parser.add_argument("--work", type=Path, default=None, help="where trees are built (default: a temporary directory)")
    parser.add_argument("--keep-failures", action=argparse.BooleanOptionalAction, default=True)
    options = parser.parse_args()
    work = options.work or Path(tempfile.mkdtemp(prefix="torchfix-fuzz-"))
    work.mkdir(parents=True, exist_ok=True)
    rng = random.Random(options.seed)
    tally: Counter = Counter()
    kinds: Counter = Counter()
    codes: Counter = Counter()
    failures = []
    started = time.monotonic()
    for index in range(options.runs):
        outcome, tree, command, stdout, stderr = run_once(index, work, rng, options.real, options.timeout)
        kinds.update(tree.kinds)
        codes[outcome.code] += 1
        tally["signalled" if outcome.signalled else "plain"] += 1
        tally["early death" if outcome.early_death else ("passed" if outcome.ok else "FAILED")] += 1
        line = f"run {index:4d}: {'ok  ' if outcome.ok else 'FAIL'} exit {outcome.code} {outcome.why}" + (
            f" [{outcome.signalled}]" if outcome.signalled else "") + f" ({' '.join(command[2:])}) {outcome.seconds:.1f}s"
        line += " " + ",".join(sorted(tree.kinds))
        print(line, flush=True)
        if not outcome.ok:
            failures.append(line)
            if options.keep_failures:
                (tree.root.parent / f"{tree.root.name}.log").write_text(f"{command}\n{outcome.why}\n--- stdout\n{stdout}\n--- stderr\n{stderr}\n")
                continue
        _remove(tree.root)
    seconds = time.monotonic() - started
    print(f"\n{options.runs} runs in {seconds:.0f}s ({'real' if options.real else 'fake'} rule and checker, seed {options.seed}): "
          f"{tally['passed']} passed, {tally['early death']} killed before the handler existed (nothing changed), {tally['FAILED']} failed")
    print(f"signalled runs: {tally['signalled']}; exit codes: {dict(sorted(codes.items(), key=lambda kv: (kv[0] is None, kv[0] or 0)))}")
    print(f"cases: {sum(kinds.values())} ({', '.join(f'{k} {n}' for k, n in kinds.most_common())})")
    for line in failures:
        print("FAILED", line)
    if failures:
        print(f"failing trees kept under {work}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
