"""Building and reading LibCST nodes: the one place that knows about parentheses and spelling.

Candidates are built as trees, never as text that is parsed back: user code enters a candidate as
the nodes the user wrote, and :func:`operand` / :func:`receiver` parenthesize by node type, so a
rewrite cannot change how an expression groups.
"""

from __future__ import annotations

from typing import Iterable

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.analysis import assigned_names, comments_in, name_nodes, names_used  # noqa: F401 - re-exported

_EMPTY = cst.Module(body=[])

#: expressions that bind tighter than any operator: they take ``.attr``, ``[...]`` and ``(...)``
_ATOMS = (cst.Name, cst.Call, cst.Subscript, cst.Attribute, cst.Integer, cst.Float, cst.SimpleString,
          cst.List, cst.Tuple, cst.Dict, cst.Set, cst.ListComp, cst.GeneratorExp, cst.Ellipsis)


def code_of(node: cst.CSTNode) -> str:
    """The source text of ``node`` as it would print inside a module."""
    return _EMPTY.code_for_node(node)


def statement_code(module: cst.Module, node: cst.CSTNode) -> str:
    """Source of one statement, without its leading blank and comment lines, ending in a newline."""
    code = module.code_for_node(node.with_changes(leading_lines=()) if hasattr(node, "leading_lines") else node)
    return code if code.endswith("\n") else code + "\n"


def int_literal(node: cst.BaseExpression) -> int | None:
    """The value of ``3`` or ``-3``; None for anything else."""
    negative = False
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        negative, node = True, node.expression
    if isinstance(node, cst.Integer):
        value = int(node.value.replace("_", ""), 0)
        return -value if negative else value
    return None


def is_number(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def is_float_literal(node: cst.BaseExpression) -> bool:
    """``0.5``, ``-0.5``, ``+1e-3``: a float literal, signed or not."""
    while isinstance(node, cst.UnaryOperation) and isinstance(node.operator, (cst.Minus, cst.Plus)):
        node = node.expression
    return isinstance(node, cst.Float)


def is_atomic(node: cst.BaseExpression) -> bool:
    return isinstance(node, _ATOMS) or bool(getattr(node, "lpar", None))


def parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    if getattr(node, "lpar", None):
        return node
    return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def receiver(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` ready to take ``.attr`` / ``[...]`` / ``(...)``: parenthesized unless atomic.
    (A negative number literal is not atomic: ``-1 .abs()`` is ``-(1 .abs())``.)"""
    return node if is_atomic(node) else parenthesized(node)


def operand(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` ready to be an operand of a binary or unary operator: parenthesized unless it is
    an atom (a unary minus of an atom is fine on either side of ``*`` but not of ``**``: callers
    that build ``**`` pass both operands through :func:`receiver`)."""
    return node if is_atomic(node) else parenthesized(node)


def name(value: str) -> cst.Name:
    return cst.Name(value)


def integer(value: int) -> cst.BaseExpression:
    if value < 0:
        return cst.UnaryOperation(cst.Minus(), cst.Integer(str(-value)))
    return cst.Integer(str(value))


def dotted_name(path: str) -> cst.BaseExpression:
    """``torch.nn.functional`` as an Attribute chain."""
    parts = path.split(".")
    node: cst.BaseExpression = cst.Name(parts[0])
    for part in parts[1:]:
        node = cst.Attribute(node, cst.Name(part))
    return node


def arg(value: cst.BaseExpression, keyword: str | None = None) -> cst.Arg:
    if keyword is None:
        return cst.Arg(value=value)
    return cst.Arg(
        value=value,
        keyword=cst.Name(keyword),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )


def call(func: cst.BaseExpression, *args: cst.BaseExpression | cst.Arg, **kwargs: cst.BaseExpression) -> cst.Call:
    items = [a if isinstance(a, cst.Arg) else arg(a) for a in args]
    items += [arg(value, key) for key, value in kwargs.items()]
    return cst.Call(func=func, args=items)


def method(value: cst.BaseExpression, attr: str, *args: cst.BaseExpression | cst.Arg, **kwargs: cst.BaseExpression) -> cst.Call:
    return call(cst.Attribute(receiver(value), cst.Name(attr)), *args, **kwargs)


def attribute(value: cst.BaseExpression, attr: str) -> cst.Attribute:
    return cst.Attribute(receiver(value), cst.Name(attr))


def binary(left: cst.BaseExpression, op: cst.BaseBinaryOp, right: cst.BaseExpression) -> cst.BinaryOperation:
    if isinstance(op, cst.Power):
        return cst.BinaryOperation(receiver(left), op, receiver(right))
    return cst.BinaryOperation(operand(left), op, operand(right))


def slice_of(lower: cst.BaseExpression | None = None, upper: cst.BaseExpression | None = None) -> cst.SubscriptElement:
    return cst.SubscriptElement(slice=cst.Slice(lower=lower, upper=upper))


def index_of(value: cst.BaseExpression) -> cst.SubscriptElement:
    return cst.SubscriptElement(slice=cst.Index(value=value))


def subscript(value: cst.BaseExpression, elements: Iterable[cst.SubscriptElement]) -> cst.Subscript:
    return cst.Subscript(value=receiver(value), slice=list(elements))


def none_index() -> cst.SubscriptElement:
    return index_of(cst.Name("None"))


def full_slice() -> cst.SubscriptElement:
    return slice_of()


def assign(target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Assign(targets=[cst.AssignTarget(target=target)], value=value)])


def same_code(a: cst.CSTNode, b: cst.CSTNode) -> bool:
    """Whether two nodes print the same (ignoring their own parentheses)."""
    return bare_code(a) == bare_code(b)


def bare_code(node: cst.CSTNode) -> str:
    """The code of ``node`` without its own parentheses (``(x[i])`` and ``x[i]`` alike)."""
    if getattr(node, "lpar", None):
        node = node.with_changes(lpar=(), rpar=())
    return code_of(node)


# ----------------------------------------------------------------------------- precedence

_BINARY_PRECEDENCE = {
    cst.BitOr: 6, cst.BitXor: 7, cst.BitAnd: 8, cst.LeftShift: 9, cst.RightShift: 9,
    cst.Add: 10, cst.Subtract: 10, cst.Multiply: 11, cst.MatrixMultiply: 11, cst.Divide: 11,
    cst.FloorDivide: 11, cst.Modulo: 11, cst.Power: 13,
}
#: unary + - ~ bind between the multiplicative operators and ``**``
_UNARY = 12
_COMPARISON = 5
_ATOM = 20


def precedence(node: cst.BaseExpression) -> int:
    """How tightly ``node``'s outermost operator binds (higher: tighter)."""
    if getattr(node, "lpar", None) or is_atomic(node):
        return _ATOM
    if isinstance(node, cst.BinaryOperation):
        return _BINARY_PRECEDENCE[type(node.operator)]
    if isinstance(node, cst.UnaryOperation):
        return 4 if isinstance(node.operator, cst.Not) else _UNARY
    if isinstance(node, cst.Comparison):
        return _COMPARISON
    if isinstance(node, cst.BooleanOperation):
        return 3 if isinstance(node.operator, cst.And) else 2
    if isinstance(node, cst.Await):
        return 14
    return 0  # lambda, conditional expression, named expression


def operand_of(node: cst.BaseExpression, parent: cst.BaseExpression, right: bool) -> cst.BaseExpression:
    """``node`` parenthesized as needed to be the left (or right) operand of ``parent`` (a
    binary operation, comparison or unary operation), whose operator decides."""
    if getattr(node, "lpar", None):
        return node
    mine = precedence(node)
    if isinstance(parent, cst.BinaryOperation):
        theirs = _BINARY_PRECEDENCE[type(parent.operator)]
        if isinstance(parent.operator, cst.Power):
            # right-associative; a unary operand is fine on the right (2 ** -1), not on the left
            needs = mine <= theirs if not right else mine < _UNARY
        else:
            needs = mine < theirs or (right and mine == theirs)
    elif isinstance(parent, cst.Comparison):
        needs = mine <= _COMPARISON
    elif isinstance(parent, cst.UnaryOperation):
        needs = mine < (4 if isinstance(parent.operator, cst.Not) else _UNARY)
    else:
        needs = not is_atomic(node)
    return parenthesized(node) if needs else node


#: builtins whose result is a Python number whatever they are given (``round`` and ``abs`` of a
#: tensor are tensors)
_NUMBER_BUILTINS = frozenset({"int", "float", "len"})


def python_number(value: cst.BaseExpression, numbers: set[str]) -> bool:
    """Whether ``value`` is a Python number: a literal, a name in ``numbers``, a ``math.*``
    function's result, ``int()`` / ``float()`` / ``len()``, or arithmetic of those."""
    if isinstance(value, (cst.Integer, cst.Float)):
        return True
    if isinstance(value, cst.Name):
        return value.value in numbers
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        return python_number(value.expression, numbers)
    if isinstance(value, cst.BinaryOperation) and not isinstance(value.operator, cst.MatrixMultiply):
        return python_number(value.left, numbers) and python_number(value.right, numbers)
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name):
            return func.value in _NUMBER_BUILTINS
        return m.matches(func, m.Attribute(value=m.Name("math")))
    return False
