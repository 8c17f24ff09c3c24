"""Reading a file and parsing it, with a clear one-line reason when that fails.

LibCST parses bytes: it honours PEP 263 coding cookies and BOMs and round-trips them, together with
the file's line endings, through ``Module.bytes``. A file that cannot be read, decoded or parsed is
never modified; the reason is reported (``path: error: reason``) and the run goes on.
"""

from __future__ import annotations

import ast
import codecs
import errno
import io
import os
import re
import stat
import tokenize
import warnings
from pathlib import Path
from dataclasses import dataclass
from typing import Any

import libcst as cst


class SourceError(Exception):
    """Why a file was not processed: one line, fit for ``path: error: reason``."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self):  # keep it picklable for worker processes
        return (SourceError, (self.reason,))


def declared_encoding(data: bytes) -> str:
    """The encoding Python (and LibCST) would read ``data`` with: BOM, PEP 263 cookie, or utf-8.

    Uses the stdlib's own rules (``tokenize.detect_encoding``: cookie on line 1, or on line 2 when
    line 1 is a comment or blank) so the diff is emitted in exactly the encoding the file has.
    Returns "utf-8-sig" for a BOM. Raises SourceError for an unknown or contradictory declaration.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        message = str(exc.msg if hasattr(exc, "msg") else exc)
        if message.startswith("unknown encoding"):
            raise SourceError(f"{message} in its coding declaration") from None
        if message.startswith("encoding problem"):  # a BOM together with a non-utf-8 cookie
            raise SourceError("a UTF-8 BOM contradicts its coding declaration") from None
        # the first lines are not valid utf-8: decoding reports the exact byte
        return "utf-8"
    return encoding


#: the default of ``--max-file-size``: larger files are skipped unread. LibCST needs about 0.5 GB of
#: memory and 5-10 s per MB of ordinary code (a 0.93 MB file: 454 MB, 7 s); hand-written Python
#: files are far smaller, and generated ones (tables, protobuf) hold nothing to vectorize.
DEFAULT_MAX_BYTES = 2 * 1024 * 1024


class SkippedFile(SourceError):
    """A file that is not read at all: not a regular file (a FIFO, a device, a socket), or larger
    than the size limit. Reported as ``path: skipped: reason``, not as a failure."""

    def __reduce__(self):
        return (SkippedFile, (self.reason,))


def _kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, name in (
        (stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def format_size(n: int) -> str:
    """``n`` bytes for a message: 1.5 MB, 300 KB, 12 bytes (powers of 1024)."""
    for unit, scale in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} bytes"


def _open_error(path: Path, exc: OSError) -> SourceError:
    code = exc.errno
    if code == errno.ENOENT:
        if os.path.islink(path):
            try:
                target = os.readlink(path)
            except OSError:
                target = "?"
            return SourceError(f"cannot read: a dangling symlink (to {target!r}, which does not exist)")
        return SourceError("cannot read: no such file (removed during the run?)")
    if code == errno.ELOOP:
        return SourceError("cannot read: a symlink loop (the link resolves back to itself)")
    if code in (errno.EACCES, errno.EPERM):
        return SourceError("cannot read: permission denied")
    if code == errno.EISDIR:
        return SourceError("cannot read: is a directory")
    if code == errno.ENXIO:  # a socket, or a device without a driver
        return SkippedFile("not a regular file (a socket or a device); not read")
    return SourceError(f"cannot read: {exc.strerror or exc}")


def read_bytes(path: Path | str, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file at ``path`` (symlinks followed), or SourceError saying why not.

    Only regular files are read: a FIFO named ``x.py`` would block the run forever and a symlink
    to ``/dev/zero`` would never end, so anything else is :class:`SkippedFile`. The file is
    ``stat``-ed before it is opened (opening a device can have effects of its own), opened without
    blocking, and its descriptor checked again with ``fstat``: the path may have been swapped for a
    FIFO in between. ``max_bytes``: a larger file is :class:`SkippedFile` too, and at most that
    many bytes are ever read, even from a file that grows while it is read.
    """
    try:
        before = os.stat(path)
    except OSError as exc:
        raise _open_error(Path(path), exc) from None
    if not stat.S_ISREG(before.st_mode):
        if stat.S_ISDIR(before.st_mode):
            raise SourceError("cannot read: is a directory")
        raise SkippedFile(f"not a regular file ({_kind(before.st_mode)}); not read")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise _open_error(Path(path), exc) from None
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode):
            raise SkippedFile(f"not a regular file ({_kind(opened.st_mode)}); not read")
        _check_size(opened.st_size, max_bytes)
        chunks = []
        total = 0
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
            _check_size(total, max_bytes)  # it grew while being read
        return b"".join(chunks)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def _check_size(size: int, max_bytes: int | None) -> None:
    if max_bytes is not None and size > max_bytes:
        raise SkippedFile(f"{format_size(size)}, over the size limit of {format_size(max_bytes)} (--max-file-size); not read")


# Python 2 constructs that Python 3 rejects; matched on the failing line first, then on the file.
# "except X, e:" is not here: since PEP 758 LibCST parses it as an unparenthesized exception tuple.
_PY2_LINE = [
    re.compile(r"^\s*print\s+(?![\s(=.,)\[:+\-*/%<>!&|^]|$)"),  # print "x" / print x, y
    re.compile(r"^\s*print\s*>>"),  # print >>sys.stderr, x
    re.compile(r"^\s*exec\s+[\"'\w]"),  # exec "code"
    re.compile(r"`[^`\n]+`"),  # repr backticks
    re.compile(r"<>"),
    re.compile(r"\b[uU][rR][\"']"),  # ur"..." literals
    re.compile(r"(?<![\w.])0\d+[lL]?\b"),  # 0777 octal literals
    re.compile(r"\b\d+[lL]\b"),  # 10L long literals
    re.compile(r"^\s*raise\s+[\w.]+\s*,"),  # raise E, "msg"
]
_ERROR_AT = re.compile(r"error at (\d+):(\d+)")


def _looks_like_python2(text: str, line: int) -> bool:
    lines = text.splitlines()
    if 1 <= line <= len(lines) and any(p.search(lines[line - 1]) for p in _PY2_LINE):
        return True
    # the parser often reports the line after the culprit; fall back to statement-level markers
    return any(p.search(l) for l in lines for p in _PY2_LINE[:3])


def _position(exc: cst.ParserSyntaxError) -> tuple[int, int]:
    """line:col (1-based) of a syntax error; LibCST's message is more precise than its fields."""
    match = _ERROR_AT.search(exc.message)
    if match:
        return int(match.group(1)), int(match.group(2)) + 1
    return exc.raw_line, exc.raw_column + 1


def _decoded(data: bytes) -> str:
    """``data`` as text in its declared encoding, or SourceError naming the bad byte."""
    encoding = declared_encoding(data)
    try:
        codecs.lookup(encoding)
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r} in its coding declaration") from None
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise SourceError(
            f"not decodable as {encoding}: byte {exc.object[exc.start]:#04x} at line {line} (offset {exc.start})"
        ) from None


def _parse_here(data: bytes, text: str) -> cst.Module:
    """LibCST's parse in this process, its failures turned into one-line reasons."""
    try:
        return cst.parse_module(data)
    except cst.ParserSyntaxError as exc:
        line, col = _position(exc)
        hint = " (Python 2 syntax?)" if _looks_like_python2(text, line) else ""
        detail = exc.message.splitlines()[0] if exc.message else ""
        detail = re.sub(r"^(parser|tokenizer) error: (error at \d+:\d+: )?", "", detail)
        if len(detail) > 80:
            detail = detail[:77] + "..."
        raise SourceError(f"does not parse: syntax error at {line}:{col}{hint}: {detail}") from None
    except (RecursionError, MemoryError):
        raise SourceError("does not parse: too deeply nested") from None
    except Exception as exc:  # LibCST raises a few other types for odd inputs
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise SourceError(f"does not parse: {type(exc).__name__}: {first}") from None


# --- the parse guard ----------------------------------------------------------------------------
# LibCST's parser is native code: a few thousand nested brackets overflow its stack and kill the
# whole process (a segfault no ``except`` can catch), a long chain such as ``a[0][0]...`` 2,000
# deep takes minutes, and its Python side (metadata, visitors, the rules) hits the recursion limit
# at about 300 levels. CPython's own parser is safe on all of these: it refuses more than 200
# nested brackets and 100 indentation levels, and raises (never crashes) on deeper expressions.
# So every file is measured on the stdlib ``ast`` first (the pipeline has it anyway, for its
# pre-filter): too deep is reported, and what ``ast`` does not vouch for -- a file it rejects
# (Python 2, a syntax error, or syntax newer than this interpreter), or a large or deep one whose
# parse could take long -- is parsed by LibCST in a child process under the file's time and memory
# budget first, so a crash or a runaway parse there is that file's report and the run goes on.
# "Could take long" is judged on the tree's mass (see PROBE_MASS), not on its size: most large
# files are ordinary code, and a small one can be slow.

#: nesting (as :func:`nesting` counts it) beyond which a file is not given to LibCST at all: the
#: pipeline's recursion at about 270-320 levels, with room for the caller's own stack
MAX_NESTING = 200
#: LibCST's parse time follows a file's *mass* -- the sum of every node's depth -- at 0.5 to 10 s
#: per million, for ordinary code (60 files of torch, 60-500 KB) and for every nested shape tried
#: (lists, dicts, calls, subscripts, attribute / operator / unary chains, 20-180 deep), while
#: its time per byte varies 50-fold between them. Beyond this mass (about 5-10 s of parsing) the
#: parse is tried in a child process first, under the file's budget.
PROBE_MASS = 1_000_000
#: the child's budget when the caller gives none (a check of a rewritten file, a test)
DEFAULT_PROBE_SECONDS = 120.0
DEFAULT_PROBE_MEMORY_MB = 2048


class GaveUp(SourceError):
    """The file's budget ran out before it was processed (reported ``path: gave up: reason``)."""

    def __reduce__(self):
        return (GaveUp, (self.reason,))


#: (node type, field) whose children LibCST wraps in a node of its own (``Element``, ``Arg``,
#: ``SubscriptElement`` + ``Index``, ...): one ast level there is two or three LibCST levels
_WRAPPED = {
    (ast.List, "elts"): 2, (ast.Tuple, "elts"): 2, (ast.Set, "elts"): 2, (ast.Dict, "keys"): 2,
    (ast.Dict, "values"): 2, (ast.Call, "args"): 2, (ast.Call, "keywords"): 2, (ast.Subscript, "slice"): 3,
    (ast.Compare, "comparators"): 2,
}
@dataclass(frozen=True)
class Nesting:
    """How deep LibCST's tree of a module would go (``depth``, deepest at ``line``), and its
    ``mass``: the sum of every node's depth, which LibCST's parse time follows."""

    depth: int
    line: int
    mass: int


def nesting(tree: ast.AST) -> Nesting:
    """:class:`Nesting` of a module, estimated on its stdlib tree. ``a and b and c`` is flat in
    ``ast`` but a chain in LibCST: it counts one level per operand. Iterative: the tree may be
    too deep for Python's own recursion."""
    best, line, mass = 0, 0, 0
    stack: list[tuple[ast.AST, int, int]] = [(tree, 0, 0)]
    pop, push = stack.pop, stack.append
    node_type = ast.AST
    while stack:
        node, depth, at = pop()
        kind = type(node)
        at = getattr(node, "lineno", at)
        if kind is ast.BoolOp:
            depth += len(node.values) - 1  # type: ignore[attr-defined]
        mass += depth
        if depth > best:
            best, line = depth, at
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = _child_fields(kind)
        for name, step in fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, node_type):
                        push((item, depth + step, at))
            elif isinstance(value, node_type):
                push((value, depth + step, at))
    return Nesting(best, line, mass)


#: per node type, the fields that may hold child nodes, with the LibCST levels each one adds
_CHILD_FIELDS: dict[type, tuple[tuple[str, int], ...]] = {}
# operators and contexts are fields of their parent in LibCST, not levels
_LEAF_FIELDS = frozenset({"ctx", "op", "ops"})


def _child_fields(kind: type) -> tuple[tuple[str, int], ...]:
    return tuple((name, _WRAPPED.get((kind, name), 1)) for name in kind._fields if name not in _LEAF_FIELDS)


def stdlib_tree(data: bytes) -> ast.Module | None:
    """``ast.parse(data)``; None when it rejects the file for an ordinary reason (LibCST may still
    parse it, or says better why not); SourceError when it rejects it for its nesting."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escapes and the like: the file's business
            return ast.parse(data)
    except (RecursionError, MemoryError):
        raise SourceError("does not parse: nested too deeply for Python's own parser") from None
    except SyntaxError as exc:
        message = str(exc.msg if hasattr(exc, "msg") else exc)
        where = f" at line {exc.lineno}" if exc.lineno else ""
        if "too many nested parentheses" in message:
            raise SourceError(f"does not parse: nested too deeply: more than 200 nested brackets{where} (Python's own limit)") from None
        if "too many levels of indentation" in message:
            raise SourceError(f"does not parse: nested too deeply: more than 100 indentation levels{where} (Python's own limit)") from None
        return None
    except (ValueError, UnicodeDecodeError):
        return None


_UNSET: Any = object()


def guard(data: bytes, tree: ast.Module | None) -> bool:
    """Whether LibCST may parse ``data`` right here (True), or must be tried in a child process
    first (False); SourceError when it nests too deeply for LibCST at all. ``tree``: the stdlib
    tree of ``data`` (:func:`stdlib_tree`), None when the stdlib parser rejected it."""
    if tree is None:
        return False
    shape = nesting(tree)
    if shape.depth > MAX_NESTING:
        raise SourceError(
            f"does not parse: nested too deeply: {shape.depth} levels at line {shape.line} (torchfix parses up to {MAX_NESTING})"
        )
    return shape.mass <= PROBE_MASS


def probe(data: bytes, seconds: float | None = DEFAULT_PROBE_SECONDS, memory_mb: int = DEFAULT_PROBE_MEMORY_MB) -> None:
    """Parse ``data`` with LibCST in a child process, within ``seconds`` (None: no limit) and
    ``memory_mb`` (of address space; 0: no limit). Returns when it parses; otherwise raises the reason:
    SourceError for a syntax error or a crash of the parser, GaveUp when the budget ran out."""
    import signal
    import subprocess
    import sys

    root = str(Path(__file__).resolve().parent.parent)
    # not from the working directory, which may be the scanned repository (its `libcst.py` must
    # not be imported): safe path mode, and the checkout's root as the working directory
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""), PYTHONSAFEPATH="1")
    command = [sys.executable, "-c", "from torchfix.source import _probe_main; _probe_main()", str(int(memory_mb)), str(os.getpid())]
    if seconds is not None:
        seconds = max(seconds, 1.0)
    try:
        done = subprocess.run(command, input=data, capture_output=True, timeout=seconds, env=env, cwd=root)
    except subprocess.TimeoutExpired:
        raise GaveUp(f"LibCST did not parse it within {seconds:.0f}s (the file's time budget, --file-budget)") from None
    answer = done.stdout.decode("utf-8", "replace")
    if done.returncode == 0 and answer == "ok":
        return
    if done.returncode == 0 and answer.startswith("error:"):
        raise SourceError(answer[len("error:"):])
    if done.returncode == 0 and answer == "memory":
        raise GaveUp(f"parsing it needs more than {memory_mb} MB (the file's memory budget, --file-memory)")
    if done.returncode < 0:
        try:
            name = signal.Signals(-done.returncode).name
        except ValueError:
            name = f"signal {-done.returncode}"
        raise SourceError(f"does not parse: LibCST's parser crashed on it ({name})")
    raise SourceError(f"does not parse: LibCST's parser failed on it (exit code {done.returncode})")


def _probe_main() -> None:
    """The child of :func:`probe`: the file's bytes on stdin, one word on stdout."""
    import resource
    import sys

    memory_mb, parent = int(sys.argv[1]), int(sys.argv[2])
    _die_with(parent)
    if memory_mb > 0:
        limit = memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    data = sys.stdin.buffer.read()
    try:
        _parse_here(data, _decoded(data))
    except SourceError as exc:
        answer = f"error:{exc}"
    except MemoryError:
        answer = "memory"
    else:
        answer = "ok"
    sys.stdout.write(answer)
    sys.stdout.flush()


def _die_with(parent: int) -> None:
    """End this process when ``parent`` ends (Linux): a worker stopped on Ctrl-C leaves with
    ``os._exit``, which does not wait for -- nor kill -- a parse it started."""
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it ended before the request was in place
        os._exit(1)


def parse(
    data: bytes, tree: ast.Module | None = _UNSET, *,
    seconds: float | None = DEFAULT_PROBE_SECONDS, memory_mb: int = DEFAULT_PROBE_MEMORY_MB, isolate: bool = True,
) -> cst.Module:
    """Parse ``data`` or raise SourceError with the reason (encoding, decoding, syntax, nesting);
    GaveUp when a parse tried in a child process (see :func:`guard`) outran ``seconds`` or
    ``memory_mb``. ``tree``: the stdlib tree of ``data`` when the caller has it (None: the
    stdlib parser rejected it). ``isolate=False``: never the child process, for code known to
    be safe (a rewrite of a file that parsed); the nesting limit still holds."""
    text = _decoded(data)
    if tree is _UNSET or tree is None:
        tree = stdlib_tree(data)
    if not guard(data, tree) and isolate:
        probe(data, seconds, memory_mb)
    return _parse_here(data, text)
