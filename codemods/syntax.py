"""The ast-level pre-filter: the skeleton of every rule's pattern, found with the stdlib ``ast``.

A bulk run spends its time in LibCST: parsing a module costs about ten times ``ast.parse``, and
the parent/position metadata the rules resolve costs more again. Most files of a repository hold
no loop any rule could rewrite, so the pipeline first parses each file with ``ast`` (fast, in C),
indexes the few node types the rules start from in one walk (:class:`SyntaxIndex`), and asks each
rule's ``might_match_tree`` whether the skeleton of its pattern is there. Only files where one
says yes are parsed by LibCST.

A skeleton is a *necessary* condition of the rule's LibCST matcher -- the statement shapes it
starts from -- never a sufficient one: a wrong "no" would silently lose a rewrite (and a skip
note), a loose "yes" only costs a parse. ``tests/test_syntax_prefilter.py`` holds every rule to
that on the whole corpus and on the rules' own examples.
"""

from __future__ import annotations

import ast
import warnings
from typing import Iterator

#: functions whose argument is a conversion of one tensor element to a Python number
_CONVERSION_BUILTINS = frozenset({"float", "int"})


def parse_tree(data: bytes) -> ast.Module | None:
    """``ast.parse`` of a file's bytes (its coding cookie and BOM honoured), None when it fails.

    A failure is not reported from here: LibCST's parse then runs and gives the real, user-facing
    reason (or succeeds where ``ast`` of this interpreter is stricter).
    """
    try:
        with warnings.catch_warnings():
            # invalid escape sequences and the like: the file's business, not this run's output
            warnings.simplefilter("ignore")
            return ast.parse(data)
    except (SyntaxError, ValueError, MemoryError, RecursionError, UnicodeDecodeError):
        return None


def is_conversion(node: ast.AST) -> bool:
    """``T.item()``, ``float(T)`` or ``int(T)`` (the calls a `.item()`-style rule starts from)."""
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr == "item" and not node.args and not node.keywords
    return (
        isinstance(func, ast.Name)
        and func.id in _CONVERSION_BUILTINS
        and len(node.args) == 1
        and not node.keywords
        and not isinstance(node.args[0], ast.Starred)
    )


def has_conversion(node: ast.AST) -> bool:
    return any(is_conversion(n) for n in ast.walk(node))


def is_range_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range"


def simple_loop(loop: ast.For | ast.AsyncFor) -> bool:
    """``for NAME in NAME`` or ``for NAME in range(...)``: the loops ``loop_shape`` recognises."""
    return (
        isinstance(loop, ast.For)
        and not loop.orelse
        and isinstance(loop.target, ast.Name)
        and (isinstance(loop.iter, ast.Name) or is_range_call(loop.iter))
    )


def assigned_name(statement: ast.stmt) -> str | None:
    """``NAME`` of ``NAME = ...`` / ``NAME: T = ...`` (one target), else None."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 and isinstance(statement.targets[0], ast.Name):
        return statement.targets[0].id
    if isinstance(statement, ast.AnnAssign) and statement.value is not None and isinstance(statement.target, ast.Name):
        return statement.target.id
    return None


def stores_into_subscript(statement: ast.stmt | None, augmented: tuple[type[ast.operator], ...]) -> bool:
    """``name[...] = ...`` (one target), or ``name[...] op= ...`` with ``op`` among ``augmented``."""
    if isinstance(statement, ast.AugAssign) and isinstance(statement.op, augmented):
        target: ast.expr = statement.target
    elif isinstance(statement, ast.Assign) and len(statement.targets) == 1:
        target = statement.targets[0]
    else:
        return False
    return isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)


def single_statement(body: list[ast.stmt]) -> ast.stmt | None:
    """The one statement of a block, or None (``a; b`` on one line is two statements here too)."""
    return body[0] if len(body) == 1 else None


#: fields that never hold a node worth visiting (names, operators, load/store contexts)
_LEAF_FIELDS = frozenset({"ctx", "op", "id", "attr", "arg", "kind", "type_comment", "name", "names", "module", "level", "conversion"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class SyntaxIndex:
    """One ``ast.walk`` of a module: the nodes rules start matching from."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self.fors: list[ast.For | ast.AsyncFor] = []
        self.loops: list[ast.For | ast.AsyncFor | ast.While] = []
        self.comprehensions: list[ast.ListComp | ast.GeneratorExp] = []
        self.calls: list[ast.Call] = []
        self.aug_assigns: list[ast.AugAssign] = []
        #: names bound to a comprehension (``rows = [f(x[i]) for i in ...]``)
        self.named_comprehensions: set[str] = set()
        #: id(loop) -> (the statement list holding it, its position there)
        self._blocks: dict[int, tuple[list[ast.stmt], int]] = {}
        calls, fors, loops, comps, augs, blocks = (
            self.calls, self.fors, self.loops, self.comprehensions, self.aug_assigns, self._blocks,
        )
        node_type, For, AsyncFor = ast.AST, ast.For, ast.AsyncFor
        # ast.walk, unrolled: this walk is a third of the cost of the pre-filter stage
        stack: list[ast.AST] = [tree]
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind is ast.Call:
                calls.append(node)  # type: ignore[arg-type]
            elif kind is For or kind is AsyncFor:
                # async loops too: a rule may still report them (skipped, with the reason)
                fors.append(node)  # type: ignore[arg-type]
                loops.append(node)  # type: ignore[arg-type]
            elif kind is ast.While:
                loops.append(node)  # type: ignore[arg-type]
            elif kind is ast.ListComp or kind is ast.GeneratorExp:
                comps.append(node)  # type: ignore[arg-type]
            elif kind is ast.AugAssign:
                augs.append(node)  # type: ignore[arg-type]
            elif kind is ast.Assign:
                value, targets = node.value, node.targets  # type: ignore[attr-defined]
                if (type(value) is ast.ListComp or type(value) is ast.GeneratorExp) and len(targets) == 1 and type(targets[0]) is ast.Name:
                    self.named_comprehensions.add(targets[0].id)
            names = _CHILD_FIELDS.get(kind)
            if names is None:
                names = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _LEAF_FIELDS)
            for name in names:
                value = getattr(node, name, None)
                if type(value) is list:
                    for position, child in enumerate(value):
                        if isinstance(child, node_type):
                            stack.append(child)
                            if type(child) is For or type(child) is AsyncFor:
                                blocks[id(child)] = (value, position)
                elif isinstance(value, node_type):
                    stack.append(value)

    def neighbours(self, loop: ast.For | ast.AsyncFor) -> tuple[list[ast.stmt], list[ast.stmt]]:
        """The statements before and after ``loop`` in its block (empty when unknown)."""
        block, position = self._blocks.get(id(loop), ([], 0))
        return block[:position], block[position + 1 :]

    def nodes_in_loops(self, kind: type[ast.AST]) -> Iterator[ast.AST]:
        """Every node of ``kind`` inside some ``for``/``while`` body (a node may come twice)."""
        for loop in self.loops:
            for statement in loop.body:
                for node in ast.walk(statement):
                    if isinstance(node, kind):
                        yield node
