"""Reading and parsing: one clear reason per failure, and what parses round-trips exactly."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import torchfix.source as source_module
from torchfix.source import SourceError, declared_encoding, parse, read_bytes


@pytest.mark.parametrize(
    "data,expected",
    [
        (b'print "hello"\nx = 1\n', "Python 2 syntax?"),
        (b"x = 1\nprint x, y\n", "Python 2 syntax?"),
        (b"x = `y`\n", "Python 2 syntax?"),
        (b"mode = 0777\n", "Python 2 syntax?"),
        (b"def f(:\n    pass\n", "does not parse: syntax error at 2:"),
        (b"x = '\xff'\n", "not decodable as utf-8: byte 0xff at line 1"),
        (b"# coding: latin-1\nx = 1\ny = '\xe9'\n\xa7 = 2\n", "does not parse"),
        (b"# -*- coding: klingon -*-\nx = 1\n", "unknown encoding: klingon"),
        (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", "BOM contradicts"),
    ],
)
def test_failures_have_a_one_line_reason(data, expected):
    with pytest.raises(SourceError) as info:
        parse(data)
    reason = str(info.value)
    assert expected in reason and "\n" not in reason


def test_python3_syntax_error_gets_no_python2_hint():
    with pytest.raises(SourceError) as info:
        parse(b"def f(:\n    pass\n")
    assert "Python 2" not in str(info.value)


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"\n",
        b"x = 1",
        b"x = 1\r\ny = 2\r\n",
        b"\xef\xbb\xbfx = 1\n",
        "# -*- coding: latin-1 -*-\ns = 'caf\xe9'\n".encode("latin-1"),
        "# vim: set fileencoding=cp1252 :\ns = '\u20ac'\n".encode("cp1252"),
    ],
)
def test_round_trip(data):
    assert parse(data).bytes == data


def test_declared_encoding():
    assert declared_encoding(b"# coding: latin-1\n") == "iso-8859-1"
    assert declared_encoding(b"#!/usr/bin/env python\n# -*- coding: cp1252 -*-\n") == "cp1252"
    assert declared_encoding(b"x = 1\n# coding: latin-1\n") == "utf-8", "a cookie after code does not count"
    assert declared_encoding(b"\xef\xbb\xbfx = 1\n") == "utf-8-sig"


def test_read_errors(tmp_path, monkeypatch):
    (tmp_path / "d.py").mkdir()
    with pytest.raises(SourceError, match="is a directory"):
        read_bytes(tmp_path / "d.py")
    with pytest.raises(SourceError, match="no such file"):
        read_bytes(tmp_path / "gone.py")

    (tmp_path / "x.py").write_text("x = 1\n")
    real_open = source_module.os.open

    def deny(path, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN202 - we run as root: chmod 000 would not stop us
        if str(path).endswith("x.py"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(source_module.os, "open", deny)
    with pytest.raises(SourceError, match="cannot read: permission denied"):
        read_bytes(tmp_path / "x.py")


def test_source_error_pickles():
    import pickle

    assert str(pickle.loads(pickle.dumps(SourceError("why")))) == "why"


# --- the parse guard ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "code,depth",
    [
        ("x = 1\n", 2),  # Module -> Assign -> Constant
        ("x = a.b.c.d\n", 5),
        ("x = f(f(f(1)))\n", 8),  # each argument is wrapped (Arg): two levels per call
        ("x = a and b and c and d\n", 6),  # flat in ast (3), a chain of three more in LibCST
        ("x = " + "[" * 50 + "]" * 50 + "\n", 100),
    ],
)
def test_nesting_estimates_libcst_depth(code, depth):
    from torchfix.source import nesting

    assert nesting(ast.parse(code)).depth == depth


def test_guard_refuses_parses_here_or_sends_to_the_child(monkeypatch):
    from torchfix.source import MAX_NESTING, guard, nesting

    small = b"x = 1\n"
    assert guard(small, ast.parse(small)) is True
    assert guard(small, None) is False, "what the stdlib rejects goes to the child"
    # the cost estimate is the mass (the sum of every node's depth), not the size: 30 KB of plain
    # statements weigh less than 3 KB of nested lists
    plain = b"x = 1\n" * 5_000
    nested = (b"x = " + b"[" * 90 + b"]" * 90 + b"\n") * 16
    assert len(plain) > 10 * len(nested)
    assert nesting(ast.parse(plain)).mass == 25_000 and nesting(ast.parse(nested)).mass == 131_088
    monkeypatch.setattr(source_module, "PROBE_MASS", 100_000)
    assert guard(plain, ast.parse(plain)) is True and guard(nested, ast.parse(nested)) is False
    deep = b"x = a" + b".b" * (MAX_NESTING + 5) + b"\n"
    with pytest.raises(SourceError, match=r"nested too deeply: \d+ levels at line 1"):
        guard(deep, ast.parse(deep))


def test_the_child_parse_gives_up_when_its_time_runs_out():
    from torchfix.source import GaveUp, probe

    slow = (b"x = " + b"[" * 100 + b"]" * 100 + b"\n") * 400  # nested lists: LibCST parses ~3 KB/s
    with pytest.raises(GaveUp, match="did not parse it within 1s"):
        probe(slow, seconds=1.0)


def test_the_child_parse_reports_syntax_errors_like_the_parent():
    from torchfix.source import probe

    with pytest.raises(SourceError, match=r"syntax error at 1:\d+ \(Python 2 syntax\?\)") as info:
        probe(b'print "x"\n')
    assert type(info.value) is SourceError
    probe(b"type Alias = int\n")  # newer than this interpreter's ast, fine for LibCST


def test_sizes():
    from torchfix.limits import parse_size

    assert [parse_size(v) for v in ("2M", "500k", "1.5MB", "4096", 7, "0", "1G")] == [
        2 << 20, 500 << 10, 3 << 19, 4096, 7, 0, 1 << 30,
    ]
    for bad in ("lots", "-1", "2T", "", True, -3, "nan"):
        with pytest.raises(ValueError):
            parse_size(bad)
