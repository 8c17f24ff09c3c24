"""Reading and parsing: one clear reason per failure, and what parses round-trips exactly."""

from __future__ import annotations

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
