"""``codemods.positions`` gives LibCST's ``PositionProvider`` ranges, node for node."""

from __future__ import annotations

from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from torchfix.codemods.analysis import positions
from torchfix.codemods.positions import Positions

CORPUS = Path(__file__).resolve().parent.parent / "corpus"

AWKWARD = {
    "crlf": "import torch\r\nfor i in range(n):\r\n    y[i] = x[i] * 2\r\n",
    "lone cr": "a = 1\rfor i in range(n):\r    y[i] = x[i]\r",
    "no final newline": "for i in range(n):\n    y[i] = x[i]",
    "tabs": "def f(x):\n\tfor i in range(len(x)):\n\t\tx[i] = (x[i]\n\t\t\t+ 1)\n",
    "non-ascii": "s = 'héllo wörld'; t = [ord(c) for c in s]  # naïve\nclass Ünïcode:\n    pass\n",
    "decorators and comments": (
        "# header\n\n@decorator(\n    arg,\n)\n# between\n@other\nasync def f(a, /, b, *, c=1) -> int:\n"
        "    '''doc\n    string'''\n    async for x in y:\n        await z\n    return (\n        a  # c\n    )\n"
    ),
    "parentheses and f-strings": (
        "y = ((a + b) * (c))[0:2, ...]\nz = f'{x!r:>{w}} and {y=}'\nw = lambda q, *r, **s: (q if r else s)\n"
        "with (open(p) as f, open(q) as g):\n    pass\n"
    ),
    "match and walrus": (
        "match point:\n    case (0, 0) if (n := 1):\n        pass\n    case {'x': x, **rest}:\n        pass\n"
        "    case _:\n        pass\n"
    ),
    "continuations": "x = 1 + \\\n    2\nif (a and\n        b):\n    del x[0], y\n",
    "empty": "",
    "only comments": "# a\n# b\n",
}


def _sources() -> list[tuple[str, str]]:
    found = [(name, source) for name, source in AWKWARD.items()]
    found += [(str(path.relative_to(CORPUS)), path.read_text(encoding="utf-8")) for path in sorted(CORPUS.rglob("*.py"))]
    return found


def test_every_node_of_every_source_has_libcsts_range() -> None:
    sources = _sources()
    assert len(sources) > 100  # the corpus is there: the comparison is not vacuous
    for name, source in sources:
        module = cst.parse_module(source)
        expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
        ours = Positions(module)
        assert set(ours) == set(expected), name
        for node, where in expected.items():
            assert ours[node] == where, (name, type(node).__name__)


def test_a_node_of_another_module_has_no_position() -> None:
    ours = positions(cst.parse_module("x = 1\n"))
    stranger = cst.parse_module("x = 1\n").body[0]
    with pytest.raises(KeyError):
        ours[stranger]
    assert stranger not in ours


def test_the_positions_of_one_module_are_computed_once() -> None:
    module = cst.parse_module("for i in range(n):\n    y[i] = x[i]\n")
    first = positions(module)
    assert positions(module) is first
    assert first[module.body[0]].start.line == 1
    assert positions(cst.parse_module("pass\n")) is not first
