"""Applying accepted edits to a module: pure CST work, no files, no checks.

Edits name their targets by identity in the wrapper's module, so the transformer swaps a node when
``original_node is target``. Inner edits are applied before outer ones (LibCST leaves children
first); rules avoid proposing an edit inside another edit's target.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst
from libcst.codemod import CodemodContext
from libcst.codemod.visitors import AddImportsVisitor

from torchfix.codemods.analysis import module_facts
from torchfix.codemods.base import Edit, Replacement


class _ApplyEdits(cst.CSTTransformer):
    def __init__(self, edits: Iterable[Edit]) -> None:
        super().__init__()
        self._by_id: dict[int, Replacement] = {id(e.target): e.replacement for e in edits}

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
        return self._by_id.get(id(original_node), updated_node)  # type: ignore[return-value]


def apply_edits(module: cst.Module, edits: Iterable[Edit]) -> cst.Module:
    result = module.visit(_ApplyEdits(edits))
    assert isinstance(result, cst.Module)
    return result


def add_imports(module: cst.Module, modules: Iterable[str]) -> cst.Module:
    """``import X`` for every X the new code needs and the module does not bind at top level."""
    bound = {name for name, _ in module_facts(module).bindings}
    missing = [name for name in dict.fromkeys(modules) if name not in bound]
    if not missing:
        return module
    context = CodemodContext()
    for name in missing:
        AddImportsVisitor.add_needed_import(context, name)
    return AddImportsVisitor(context).transform_module(module)


def overlaps(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """Whether one node contains the other (or they are the same node)."""
    if a is b:
        return True
    found = False

    class _Find(cst.CSTVisitor):
        def __init__(self, needle: cst.CSTNode) -> None:
            self.needle = needle

        def on_visit(self, node: cst.CSTNode) -> bool:
            nonlocal found
            if node is self.needle:
                found = True
            return not found

    a.visit(_Find(b))
    if not found:
        b.visit(_Find(a))
    return found
