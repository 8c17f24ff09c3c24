"""Same-file helpers: the small pure functions a module defines and its loops call.

``iou = [wh_iou(a, gwh) for a in anchors]`` calls a function torchfix cannot batch by its name,
but the module defines it, in plain sight: a function of its arguments that only computes (torch
/ NumPy calls, tensor methods, arithmetic). Such a *pure helper* is mapped with ``torch.vmap``
like any known callee, and the verification kernel holds its definition, so the checker runs the
helper itself -- the user's code is left calling it, never inlined.

What makes a helper pure here (all checked on the code, nothing assumed):

- a ``def`` at the module's top level, the only binding of its name in the module (no other
  ``def``, assignment, import or ``global`` of it anywhere), without decorators, ``*args`` or
  ``**kwargs``, and with literal defaults only;
- a body of assignments to plain names, ``if``/``else`` and ``return`` (no loops, ``with``,
  ``try``, ``raise``, ``yield``, ``global``/``nonlocal``, nested ``def`` or ``class``, ``del``,
  augmented assignments -- ``a += b`` writes into a tensor argument -- and no store into a
  subscript or an attribute);
- every name it reads is a parameter, a name it assigns, a module binding of torch / NumPy /
  math, a builtin of the callee table, or another pure helper;
- every call is a known callee (``codemods.loops.callees``) that neither draws random numbers
  nor has an effect nor converts to Python numbers, a method of that table not ending in ``_``
  (in place), or a pure helper (recursion is refused).

The kernel holds each helper as it is written, less its decorators (none), annotations and
docstring; the checker's static policy vets it like every other line of a kernel.
"""

from __future__ import annotations

import libcst as cst

from torchfix.codemods.analysis import all_nodes, contains_node
from torchfix.codemods.loops import callees
from torchfix.codemods.loops.callees import Batching
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.nodes import names_used

#: what a helper's call may not do under torch.vmap (or at all, for a batch of samples)
_REFUSED = (Batching.RANDOM, Batching.EFFECT, Batching.CONVERT, Batching.STATEFUL_LAYER)
#: the literal defaults a helper's parameters may have
_LITERALS = (cst.Integer, cst.Float, cst.SimpleString, cst.Name)


def pure_helper(context: ModuleContext, name: str) -> cst.FunctionDef | None:
    """The module's definition of ``name`` where it is a pure helper, else None."""
    return _pure(context, name, frozenset())


def helpers_called(context: ModuleContext, node: cst.CSTNode, at: cst.CSTNode | None = None) -> list[cst.FunctionDef] | None:
    """The pure helpers ``node`` calls by name, with the helpers they call, callees first; None
    when a call by a bare name is to a function of the module that is not a pure helper. ``at``:
    where ``node`` runs (a loop); a name a function around it uses otherwise than to call it
    is not the module's function there, and ``node``'s calls of it are left out (a helper's own
    calls resolve in the module, where a pure helper is bound once)."""
    found: dict[str, cst.FunctionDef] = {}

    def visit(current: cst.CSTNode) -> bool:
        for call in _calls(current):
            if not isinstance(call.func, cst.Name) or call.func.value not in context.functions:
                continue
            if current is node and at is not None and not _called_as_module_function(context, call.func.value, at):
                continue
            helper = pure_helper(context, call.func.value)
            if helper is None:
                return False
            if helper.name.value in found:
                continue
            if not visit(helper.body):
                return False
            found[helper.name.value] = helper
        return True

    return list(found.values()) if visit(node) else None


def _called_as_module_function(context: ModuleContext, name: str, at: cst.CSTNode) -> bool:
    """Whether ``name`` at ``at`` (a loop) is the module's function: no function around ``at``
    uses the name but to call it -- a parameter, local, import, nested ``def``, ``global``
    declaration or attribute of that name in any of them could make it another callable."""
    current: cst.CSTNode | None = at
    while current is not None:
        if isinstance(current, (cst.FunctionDef, cst.Lambda)):
            for node in all_nodes(current):
                if isinstance(node, cst.Name) and node.value == name:
                    parent = context.parents.get(node)
                    if not (isinstance(parent, cst.Call) and parent.func is node):
                        return False
        current = context.parents.get(current)
    return True


def kernel_text(context: ModuleContext, helper: cst.FunctionDef) -> str:
    """``helper`` as the kernel holds it: without annotations and docstring."""
    stripped = helper.visit(_StripAnnotations())
    assert isinstance(stripped, cst.FunctionDef)
    body = stripped.body
    if isinstance(body, cst.IndentedBlock) and body.body and _docstring(body.body[0]):
        rest = body.body[1:] or [cst.SimpleStatementLine([cst.Pass()])]
        stripped = stripped.with_changes(body=body.with_changes(body=rest))
    return context.module.code_for_node(stripped.with_changes(leading_lines=()))


# ----------------------------------------------------------------------------- purity


def _pure(context: ModuleContext, name: str, visiting: frozenset[str]) -> cst.FunctionDef | None:
    """Memoised per module and name: a helper on a cycle of calls is impure from wherever the
    cycle is entered, so a verdict reached while ``visiting`` others holds for every caller."""
    if name in visiting:
        return None
    cache: dict[str, cst.FunctionDef | None] = context.once("pure helpers", context.module, dict)
    if name not in cache:
        cache[name] = _judge(context, name, visiting)
    return cache[name]


def _judge(context: ModuleContext, name: str, visiting: frozenset[str]) -> cst.FunctionDef | None:
    helper = context.functions.get(name)
    if helper is None or context.rebinds_by_string or context.scope_counts.get(name) != 1:
        return None
    if _declared_global(context, name):
        return None
    if helper.decorators or helper.asynchronous is not None or not isinstance(helper.body, cst.IndentedBlock):
        return None
    params = helper.params
    if isinstance(params.star_arg, cst.Param) or params.star_kwarg is not None:
        return None
    parameters = [*params.posonly_params, *params.params, *params.kwonly_params]
    if any(p.default is not None and not _literal(p.default) for p in parameters):
        return None
    local = {p.name.value for p in parameters}
    statements = list(helper.body.body)
    if statements and _docstring(statements[0]):
        statements = statements[1:]
    for statement in statements:
        if not _plain_statement(statement, local):
            return None
    if contains_node(helper.body, (cst.NamedExpr, cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
        return None  # names bound inside expressions (and scopes of their own)
    # a library name counts where one import at the module's own scope binds it, and nothing else
    libraries = {n for n in context.bindings if context.scope_counts.get(n) == 1 and n not in context.rebound}
    allowed = local | libraries | {b for b in callees.BUILTINS if b not in context.scope_counts}
    for read in names_used(helper.body):
        if read in allowed:
            continue
        if read in context.functions and _pure(context, read, visiting | {name}) is not None:
            continue
        return None
    for call in _calls(helper.body):
        if not _pure_call(context, call, visiting | {name}):
            return None
    return helper


def _plain_statement(statement: cst.BaseStatement, local: set[str]) -> bool:
    """Assignments to plain names (recorded in ``local``), ``return``, ``pass``, and ``if``
    blocks of those."""
    if isinstance(statement, cst.SimpleStatementLine):
        for small in statement.body:
            if isinstance(small, cst.Assign):
                for target in small.targets:
                    names = _plain_targets(target.target)
                    if names is None:
                        return False
                    local.update(names)
            elif isinstance(small, (cst.Return, cst.Pass)):
                continue
            elif isinstance(small, cst.Expr) and isinstance(small.value, (cst.SimpleString, cst.ConcatenatedString)):
                continue  # a string as a comment
            else:
                return False
        return True
    if isinstance(statement, cst.If):
        blocks = [statement.body]
        orelse = statement.orelse
        while orelse is not None:
            blocks.append(orelse.body)
            orelse = orelse.orelse if isinstance(orelse, cst.If) else None
        return all(isinstance(b, cst.IndentedBlock) and all(_plain_statement(s, local) for s in b.body) for b in blocks)
    return False


def _plain_targets(target: cst.BaseAssignTargetExpression) -> list[str] | None:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names: list[str] = []
        for element in target.elements:
            if not isinstance(element, cst.Element):
                return None  # a starred target
            inner = _plain_targets(element.value)  # type: ignore[arg-type]
            if inner is None:
                return None
            names += inner
        return names
    return None


def _pure_call(context: ModuleContext, call: cst.Call, visiting: frozenset[str]) -> bool:
    func = call.func
    if any(a.star for a in call.args) or any(a.keyword is not None and a.keyword.value == "out" for a in call.args):
        return False  # `out=` writes into what it is given
    if isinstance(func, cst.Name) and func.value in context.functions:
        return _pure(context, func.value, visiting) is not None
    qualified = context.qualified(func)
    if isinstance(func, cst.Attribute) and func.attr.value.endswith("_"):
        return False  # in place (`x.clamp_()`, `torch.relu_(x)`, `torch.Tensor.sigmoid_(x)`)
    row = callees.of_call(func, qualified)
    return row is not None and row.batching not in _REFUSED


def _declared_global(context: ModuleContext, name: str) -> bool:
    """Whether a ``global`` statement anywhere names ``name``, or a star import may bind it
    (both recorded by ``module.scope_bindings``)."""
    return name in context.declared_global or "*" in context.declared_global


def _calls(node: cst.CSTNode) -> list[cst.Call]:
    return [n for n in all_nodes(node) if isinstance(n, cst.Call)]


def _literal(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    if isinstance(node, cst.Name):
        return node.value in ("None", "True", "False")
    return isinstance(node, _LITERALS) and "__" not in getattr(node, "value", "")


def _docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )


class _StripAnnotations(cst.CSTTransformer):
    def leave_Param(self, original: cst.Param, updated: cst.Param) -> cst.Param:
        return updated.with_changes(annotation=None)

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        return updated.with_changes(returns=None)
