"""Where each node of a module starts and ends: LibCST's ``PositionProvider`` ranges, for a
fraction of their cost.

``PositionProvider`` regenerates the whole module's code, and for every node it pushes a
``CodePosition``, builds a ``CodeRange`` and enters a generator-based context manager. On a
repository of real code that was the largest single cost of a dry run (29 s of 93 s over the
406 files of fairseq that reach LibCST), larger than parsing them. The same code generation with
plain tuples, a class-based context manager and a newline test before the regular expression
gives the same ranges at a sixth of the cost or less; a ``CodeRange`` is built only for the nodes
someone asks about (a module asks about a handful: the statements it reports).

The ranges are LibCST's by construction -- the same ``_codegen`` walk, the same rules for a
syntactic position and for hoisting one from a child -- and ``tests/test_positions.py`` holds
them equal to ``PositionProvider``'s on every node of the corpus and of awkward sources (CR and
CRLF line ends, tabs, non-ASCII text, decorators, parentheses, f-strings).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

# what LibCST counts as a line break (libcst.metadata.position_provider.NEWLINE_RE)
_NEWLINE = re.compile(r"\r\n?|\n")

#: (start line, start column, end line, end column): lines 1-based, columns 0-based, as LibCST
Span = tuple[int, int, int, int]


class _TrackingState(CodegenState):
    """A code generation that records each node's span, as ``PositionProvidingCodegenState`` does."""

    __slots__ = ("line", "column", "_starts", "spans")

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.line = 1
        self.column = 0
        self._starts: list[tuple[int, int]] = []
        # by id, not by node: a node's hash is a Python-level method, called a million times a
        # scan; the module keeps its nodes alive, so their ids stay theirs
        self.spans: dict[int, Span] = {}

    def _advance(self, value: str) -> None:
        if "\n" in value or "\r" in value:
            segments = _NEWLINE.split(value)
            self.line += len(segments) - 1
            self.column = len(segments[-1])
        else:
            self.column += len(value)

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def before_codegen(self, node: cst.CSTNode) -> None:
        self._starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        line, column = self._starts.pop()
        # a syntactic position recorded inside the node's own generation wins, as in LibCST
        key = id(node)
        if key not in self.spans:
            self.spans[key] = (line, column, self.line, self.column)

    def record_syntactic_position(  # type: ignore[override]
        self, node: cst.CSTNode, *, start_node: cst.CSTNode | None = None, end_node: cst.CSTNode | None = None
    ) -> "_Syntactic":
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """``record_syntactic_position`` without a generator: the span of what is generated inside,
    its start or end taken from a child's span where LibCST hoists one."""

    __slots__ = ("state", "node", "start_node", "end_node", "start")

    def __init__(
        self, state: _TrackingState, node: cst.CSTNode, start_node: cst.CSTNode | None, end_node: cst.CSTNode | None
    ) -> None:
        self.state, self.node, self.start_node, self.end_node = state, node, start_node, end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *exc: object) -> None:
        state = self.state
        spans = state.spans
        start = spans[id(self.start_node)][:2] if self.start_node is not None else self.start
        end = spans[id(self.end_node)][2:] if self.end_node is not None else (state.line, state.column)
        spans[id(self.node)] = (*start, *end)


class _NodeList(CodegenState):
    """A code generation that lists the nodes it generates (a node held twice: twice)."""

    __slots__ = ("nodes",)

    def __init__(self, module: cst.Module) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.nodes: list[cst.CSTNode] = []

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.nodes.append(node)


class Positions(Mapping):
    """Node -> ``CodeRange`` of one module, computed in one code generation on first use (most
    modules a rule reads end with nothing to report, and need no line numbers at all)."""

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self._spans: dict[int, Span] | None = None

    def spans(self) -> dict[int, Span]:
        """Every node's span, as plain tuples, by the node's id."""
        if self._spans is None:
            state = _TrackingState(self.module)
            self.module._codegen(state)
            self._spans = state.spans
        return self._spans

    def __getitem__(self, node: cst.CSTNode) -> CodeRange:
        # a node of another tree never shares an id with one of this module's: both are alive
        start_line, start_column, end_line, end_column = self.spans()[id(node)]
        return CodeRange(CodePosition(start_line, start_column), CodePosition(end_line, end_column))

    def __contains__(self, node: object) -> bool:
        return id(node) in self.spans()

    def __iter__(self) -> Iterator[cst.CSTNode]:
        # the spans are keyed by id; the nodes themselves take a generation of their own, paid
        # only by who iterates (the tests): the scan looks nodes up, it never lists them
        listing = _NodeList(self.module)
        self.module._codegen(listing)
        return iter(dict.fromkeys(listing.nodes))

    def __len__(self) -> int:
        return len(self.spans())
