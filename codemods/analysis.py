"""Analysis helpers shared by the passes: imports, names, loop shapes, control flow, dtypes.

Everything here is static and conservative: when a helper cannot tell, it says so (returns None or
an "unknown" answer) and the pass stays silent or reports a skip.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, Sequence, TypeVar

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.base import Candidate, ModuleFacts, Proposal
from torchfix.codemods.positions import Positions

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

    from torchfix.codemods.evidence import ScopeEvidence

_WHITELISTED_ROOTS = ("torch", "numpy", "math")

#: tensor methods that act element-wise on their receiver: a per-element expression built from
#: them batches by substituting the whole tensor for the element (no in-place methods here)
ELEMENTWISE_METHODS = frozenset(
    {"abs", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "tanh",
     "sigmoid", "relu", "neg", "square", "sign", "floor", "ceil", "round", "trunc", "frac", "reciprocal",
     "clamp", "clip", "pow", "float", "double", "long", "int", "half", "bool", "detach", "cpu", "eq", "ne",
     "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "logical_not", "exp2", "erf", "mul", "add", "sub",
     "div", "maximum", "minimum"}
)
#: torch.nn.functional activations that act element-wise
ELEMENTWISE_FUNCTIONAL = frozenset({"relu", "sigmoid", "tanh", "softplus", "gelu", "silu", "elu", "leaky_relu"})
BUILTIN_NAMES = frozenset(dir(builtins))


def dotted(node: cst.BaseExpression) -> str | None:
    """``torch.nn.functional`` for the matching Attribute chain, else None."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted(node.value)
        return f"{base}.{node.attr.value}" if base else None
    return None


def module_facts(module: cst.Module) -> ModuleFacts:
    """How the module binds torch, torch.nn.functional, numpy and math (top-level imports)."""
    facts = ModuleFacts()
    for stmt in module.body:
        if not isinstance(stmt, cst.SimpleStatementLine):
            continue
        for small in stmt.body:
            if isinstance(small, cst.Import):
                for alias in small.names:
                    name = dotted(alias.name)
                    if not name or name.split(".")[0] not in _WHITELISTED_ROOTS:
                        continue
                    if alias.asname is not None:
                        bound = alias.asname.name
                        assert isinstance(bound, cst.Name)
                        facts.bindings.append((bound.value, name))
                    else:
                        root = name.split(".")[0]
                        facts.bindings.append((root, root))
            elif isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                base = dotted(small.module)
                if not base or base.split(".")[0] not in _WHITELISTED_ROOTS or isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    attr = dotted(alias.name)
                    bound_node = alias.asname.name if alias.asname else alias.name
                    if attr and isinstance(bound_node, cst.Name):
                        facts.bindings.append((bound_node.value, f"{base}.{attr}"))
    for name, target in facts.bindings:
        if target == "torch" and facts.torch is None:
            facts.torch = name
        elif target == "torch.nn.functional" and facts.functional is None:
            facts.functional = name
        elif target == "numpy" and facts.numpy is None:
            facts.numpy = name
    return facts


class _VariableVisitor(cst.CSTVisitor):
    """Visits only the names used as variables: not an attribute's name (``x.name``) nor a
    keyword argument's (``f(name=...)``)."""

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def name_nodes(node: cst.CSTNode) -> list[cst.Name]:
    """The names ``node`` uses as variables, in source order: not an attribute's name (``x.name``)
    nor a keyword argument's (``f(name=...)``). A walk of the fields (:func:`child_nodes`), not a
    LibCST visitor: the loop facts ask this of every loop, and a visitor costs ten times more."""
    found: list[cst.Name] = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Name):
            found.append(current)
        elif isinstance(current, (cst.Attribute, cst.Arg)):
            stack.append(current.value)
        else:
            stack.extend(reversed(child_nodes(current)))
    return found


#: expressions a per-element expression must not contain to batch by substitution: they hide
#: control flow, bind names, or build per-element collections
NOT_BATCHABLE = (
    cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.NamedExpr, cst.Await,
    cst.Yield,
)


def sole_statement(body: cst.BaseSuite) -> cst.BaseStatement | None:
    """The one statement of an indented block; None for several, or for a body written on the
    header's line (``for x in y: s``)."""
    if isinstance(body, cst.IndentedBlock) and len(body.body) == 1:
        return body.body[0]
    return None


def sole_small_statement(body: cst.BaseSuite) -> cst.BaseSmallStatement | None:
    """The one simple statement (``a += b``) of an indented block that holds nothing else."""
    statement = sole_statement(body)
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1:
        return statement.body[0]
    return None


def all_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """``node`` and every node under it, nested scopes included (fields walked, as
    :func:`child_nodes`)."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(child_nodes(current))


def contains_node(node: cst.CSTNode, types: tuple[type[cst.CSTNode], ...]) -> bool:
    """Whether ``node`` has a descendant (or is itself) of one of ``types``."""
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, types):
            return True
        stack.extend(child_nodes(current))
    return False


#: binary operators that act element-wise on tensors and numbers alike
ARITHMETIC_OPERATORS: tuple[type[cst.BaseBinaryOp], ...] = (
    cst.Add, cst.Subtract, cst.Multiply, cst.Divide, cst.FloorDivide, cst.Modulo, cst.Power,
)


class _ElementwiseCheck(cst.CSTVisitor):
    """Finds a call, binary operation or comparison a rule does not batch (see ``elementwise_only``)."""

    def __init__(
        self,
        call_ok: Callable[[cst.Call], bool],
        binary_operators: tuple[type[cst.BaseBinaryOp], ...],
        comparison_operators: tuple[type[cst.BaseCompOp], ...] | None,
    ) -> None:
        self.call_ok = call_ok
        self.binary_operators = binary_operators
        self.comparison_operators = comparison_operators
        self.ok = True

    def visit_Call(self, node: cst.Call) -> None:
        if not self.call_ok(node):
            self.ok = False

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        if not isinstance(node.operator, self.binary_operators):
            self.ok = False

    def visit_Comparison(self, node: cst.Comparison) -> None:
        if self.comparison_operators is not None and not all(
            isinstance(target.operator, self.comparison_operators) for target in node.comparisons
        ):
            self.ok = False


def elementwise_only(
    expr: cst.BaseExpression,
    call_ok: Callable[[cst.Call], bool],
    *,
    binary_operators: tuple[type[cst.BaseBinaryOp], ...] = ARITHMETIC_OPERATORS,
    comparison_operators: tuple[type[cst.BaseCompOp], ...] | None = None,
    refused: tuple[type[cst.CSTNode], ...] = (),
) -> bool:
    """Whether the per-element expression ``expr`` batches by substituting whole tensors for its
    elements, as far as a rule allows: every call in it (nested ones too) passes the rule's
    ``call_ok``, every binary operation uses one of ``binary_operators``, every comparison one of
    ``comparison_operators`` (any comparison when None), and it holds nothing of ``NOT_BATCHABLE``
    nor of the rule's own ``refused`` node types."""
    check = _ElementwiseCheck(call_ok, binary_operators, comparison_operators)
    expr.visit(check)
    return check.ok and not contains_node(expr, NOT_BATCHABLE + refused)


def names_used(node: cst.CSTNode) -> set[str]:
    return {n.value for n in name_nodes(node)}


#: where each binding construct keeps its target (read by :func:`assigned_names` and ``_Assigned``)
BOUND_TARGET: dict[type, Callable[[Any], "cst.BaseExpression | None"]] = {
    cst.AssignTarget: lambda node: node.target,
    cst.AugAssign: lambda node: node.target,
    cst.AnnAssign: lambda node: node.target,
    cst.For: lambda node: node.target,
    cst.WithItem: lambda node: node.asname.name if node.asname is not None else None,
    cst.NamedExpr: lambda node: node.target,
}


class _Assigned(cst.CSTVisitor):
    def __init__(self) -> None:
        self.names: set[str] = set()

    def _targets(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.names.add(target.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._targets(element.value)
        elif isinstance(target, cst.StarredElement):
            self._targets(target.value)

    def on_visit(self, node: cst.CSTNode) -> bool:
        target = BOUND_TARGET.get(type(node))
        if target is not None:
            bound = target(node)
            if bound is not None:
                self._targets(bound)
        return super().on_visit(node)


class _Bindings(_Assigned):
    """Every binding in a function body, counted per name (``_Assigned`` keeps a set), without
    looking into the scopes it defines; imports, ``del``, ``except ... as`` and ``global`` /
    ``nonlocal`` count too."""

    def __init__(self) -> None:
        super().__init__()
        self.counts: dict[str, int] = {}

    def _targets(self, target: cst.BaseExpression) -> None:
        if isinstance(target, cst.Name):
            self.counts[target.value] = self.counts.get(target.value, 0) + 1
        else:
            super()._targets(target)

    def visit_Del(self, node: cst.Del) -> None:
        self._targets(node.target)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None:
            self._targets(node.name.name)

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname is not None else node.name
        while isinstance(bound, cst.Attribute):  # `import a.b` binds `a`
            bound = bound.value
        self._targets(bound)  # type: ignore[arg-type]

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._targets(item.name)

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._targets(item.name)

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        self._targets(node.name)
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        self._targets(node.name)
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False


def sole_binding(body: cst.CSTNode, name: str) -> cst.BaseExpression | None:
    """The value of ``name = <value>`` when that is the only binding of ``name`` in ``body`` (a
    function's body: the caller checks the parameters), else None."""
    bindings = _Bindings()
    body.visit(bindings)
    if bindings.counts.get(name) != 1:
        return None
    for node in own_nodes(body):
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and m.matches(node.targets[0].target, m.Name(name)):
            return node.value
    return None


def own_nodes(body: cst.CSTNode) -> list[cst.CSTNode]:
    """The nodes of ``body`` outside the scopes it defines."""
    found: list[cst.CSTNode] = []
    stack = [body]
    while stack:
        node = stack.pop()
        found.append(node)
        if node is body or not isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            stack.extend(child_nodes(node))
    return found


def target_names(target: cst.BaseExpression) -> set[str]:
    """The names an assignment or loop target binds (``i``, ``(a, b)``, ``[x, *rest]``)."""
    if isinstance(target, cst.Name):
        return {target.value}
    if isinstance(target, (cst.Tuple, cst.List)):
        return set().union(*(target_names(e.value) for e in target.elements)) if target.elements else set()
    if isinstance(target, cst.StarredElement):
        return target_names(target.value)
    return set()


def comprehension_variables(node: "cst.ListComp | cst.SetComp | cst.DictComp | cst.GeneratorExp") -> set[str]:
    """The names the ``for`` clauses of a comprehension bind (its own scope's variables)."""
    names: set[str] = set()
    clause: cst.CompFor | None = node.for_in
    while clause is not None:
        names |= target_names(clause.target)
        clause = clause.inner_for_in
    return names


def assigned_names(node: cst.CSTNode) -> set[str]:
    """Names bound anywhere inside ``node`` (assignments, loop targets, with-as, walrus), nested
    scopes included; a walk of the fields, as :func:`name_nodes`."""
    names: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        target = BOUND_TARGET.get(type(current))
        if target is not None:
            bound = target(current)
            if bound is not None:
                names |= target_names(bound)
        stack.extend(child_nodes(current))
    return names


#: statements and expressions that leave the loop body (or rebind outside it) wherever they stand
_ESCAPES: dict[type[cst.CSTNode], str] = {
    cst.Return: "return", cst.Raise: "raise", cst.Yield: "yield", cst.Await: "await",
    cst.Global: "global", cst.Nonlocal: "nonlocal",
}
#: statements that leave the loop body only outside a loop nested in it
_LOOP_EXITS: dict[type[cst.CSTNode], str] = {cst.Break: "break", cst.Continue: "continue"}


def escaping_control_flow(body: cst.CSTNode) -> list[str]:
    """``break``/``continue``/``return``/``raise``/``yield``/``await``/``global``/``nonlocal``
    that would leave (or rebind outside) a loop whose body is ``body``, in source order; not
    looking into the functions, lambdas and classes it defines (their control flow is their own).
    A ``break``/``continue`` counts only outside a loop nested in ``body``."""
    found: list[str] = []
    stack: list[tuple[cst.CSTNode, int]] = [(body, 0)]
    while stack:
        node, loops = stack.pop()
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        if isinstance(node, (cst.For, cst.While)):
            loops += 1
        escape = _ESCAPES.get(type(node)) or (_LOOP_EXITS.get(type(node)) if loops == 0 else None)
        if escape is not None:
            found.append(escape)
        stack.extend((child, loops) for child in reversed(child_nodes(node)))
    return found


# ----------------------------------------------------------------------------- loop shapes


@dataclass(frozen=True)
class LoopShape:
    """What a ``for`` loop iterates over, when it walks the first dimension of a tensor.

    ``index``: the loop variable used as ``X[i]`` (``for i in range(...)``), or None.
    ``element``: the loop variable bound to ``X[i]`` itself (``for v in X``), or None.
    ``owner``: the tensor whose length is the extent (``len(x)``, ``x.shape[0]``, ...), or None.
    ``extent``: the code of the extent when it is not the owner's full length (``n``), else None.
    """

    index: str | None
    element: str | None
    owner: str | None
    extent: cst.BaseExpression | None


def length_owner(expr: cst.BaseExpression) -> str | None:
    """``x`` for ``len(x)``, ``x.shape[0]``, ``x.size(0)``, ``x.size()[0]``, ``x.numel()``."""
    if m.matches(expr, m.Call(func=m.Name("len"), args=[m.Arg(value=m.Name(), keyword=None)])):
        return expr.args[0].value.value  # type: ignore[attr-defined]
    if m.matches(
        expr,
        m.Subscript(
            value=m.Attribute(value=m.Name(), attr=m.Name("shape"))
            | m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("size")), args=[]),
            slice=[m.SubscriptElement(slice=m.Index(value=m.Integer("0")))],
        ),
    ):
        inner = expr.value  # type: ignore[attr-defined]
        base = inner.value if isinstance(inner, cst.Attribute) else inner.func.value
        return base.value
    if m.matches(
        expr,
        m.Call(
            func=m.Attribute(value=m.Name(), attr=m.Name("size")),
            args=[m.Arg(value=m.Integer("0"), keyword=None) | m.Arg(value=m.Integer("0"), keyword=m.Name("dim"))],
        ),
    ):
        return expr.func.value.value  # type: ignore[attr-defined]
    if m.matches(expr, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("numel")), args=[])):
        return expr.func.value.value  # type: ignore[attr-defined]
    return None


def loop_shape(node: cst.For) -> LoopShape | None:
    """Recognise ``for i in range(EXT)``, ``range(0, EXT)`` and ``for v in X``."""
    if node.asynchronous is not None or node.orelse is not None:
        return None
    target, it = node.target, node.iter
    if not isinstance(target, cst.Name):
        return None
    if isinstance(it, cst.Name):
        return LoopShape(None, target.value, it.value, None)
    if not m.matches(it, m.Call(func=m.Name("range"))):
        return None
    args = it.args  # type: ignore[attr-defined]
    if any(a.keyword is not None or a.star for a in args):
        return None
    if len(args) == 2 and m.matches(args[0].value, m.Integer("0")):
        args = args[1:]
    if len(args) != 1:
        return None
    extent = args[0].value
    owner = length_owner(extent)
    if owner is not None:
        return LoopShape(target.value, None, owner, None)
    return LoopShape(target.value, None, None, extent)


# ----------------------------------------------------------------------------- dtype inference

_BOOL_METHODS = frozenset(
    {"eq", "ne", "lt", "le", "gt", "ge", "isnan", "isinf", "isfinite", "logical_and", "logical_or",
     "logical_not", "logical_xor", "all", "any", "bool", "isclose"}
)
_INT_METHODS = frozenset({"long", "int", "short", "byte", "char", "argmax", "argmin", "count_nonzero", "numel"})
_FLOAT_METHODS = frozenset({"float", "double", "half", "bfloat16", "mean", "std", "var", "norm"})
_KEEP_METHODS = frozenset({"detach", "cpu", "cuda", "clone", "contiguous", "squeeze", "flatten", "view", "reshape"})


def infer_dtype_kind(expr: cst.BaseExpression) -> str | None:
    """"bool", "int" or "float" when the expression's tensor dtype kind is evident, else None."""
    if isinstance(expr, cst.Comparison):
        return "bool"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not):
        return "bool"
    if isinstance(expr, cst.Call) and isinstance(expr.func, cst.Attribute):
        method = expr.func.attr.value
        receiver = expr.func.value
        if method in _BOOL_METHODS:
            return "bool"
        if method in _INT_METHODS:
            return "int"
        if method in _FLOAT_METHODS:
            return "float"
        if method == "sum" and not any(a.keyword and a.keyword.value == "dtype" for a in expr.args):
            inner = infer_dtype_kind(receiver)
            return "int" if inner in ("int", "bool") else inner
        if method in _KEEP_METHODS or method == "item":
            return infer_dtype_kind(receiver)
        # torch.sum(x) / torch.eq(a, b) style
        if dotted(receiver) in ("torch",) and expr.args:
            if method in _BOOL_METHODS:
                return "bool"
            if method == "sum":
                inner = infer_dtype_kind(expr.args[0].value)
                return "int" if inner in ("int", "bool") else inner
    if isinstance(expr, cst.BinaryOperation) and isinstance(expr.operator, (cst.BitAnd, cst.BitOr, cst.BitXor)):
        left, right = infer_dtype_kind(expr.left), infer_dtype_kind(expr.right)
        return "bool" if left == right == "bool" else None
    return None


def statement_code(module: cst.Module, node: cst.CSTNode) -> str:
    """Source of one statement, dedented to column 0, ending in a newline."""
    code = module.code_for_node(node.with_changes(leading_lines=()) if hasattr(node, "leading_lines") else node)
    return code if code.endswith("\n") else code + "\n"


def comments_in(node: cst.CSTNode) -> list[cst.EmptyLine]:
    """Every comment inside ``node``, as standalone comment lines (to carry over a rewrite)."""
    found: list[cst.EmptyLine] = []

    class _Comments(cst.CSTVisitor):
        def visit_Comment(self, comment: cst.Comment) -> None:
            found.append(cst.EmptyLine(comment=comment))

    node.visit(_Comments())
    return found


# ----------------------------------------------------------------------------- tensor evidence

#: methods and attributes that lists, tuples and numpy arrays do not have
TENSOR_ONLY_ATTRS = frozenset(
    {"size", "numel", "dim", "ndimension", "detach", "cpu", "cuda", "to", "backward", "requires_grad",
     "device", "is_cuda", "unsqueeze", "float", "double", "long", "int", "half", "bool", "softmax",
     "log_softmax", "masked_fill", "index_select", "new_zeros", "new_ones", "new_empty", "new_full",
     "element_size", "data_ptr", "grad", "clone", "contiguous", "is_floating_point", "type_as",
     "expand", "permute", "narrow", "scatter_add_", "index_add_", "bincount", "topk"}
)
_TENSOR_ANNOTATIONS = frozenset({"torch.Tensor", "Tensor", "torch.FloatTensor", "torch.LongTensor"})


def within(node: cst.CSTNode, outer: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    """Whether ``node`` is ``outer`` or lies inside it."""
    while node is not outer:
        if node not in parents:
            return False
        node = parents[node]
    return True


def enclosing_scope(node: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> cst.CSTNode:
    """The innermost function (or the module) that holds ``node``."""
    current = node
    while current in parents:
        current = parents[current]
        if isinstance(current, (cst.FunctionDef, cst.Module)):
            return current
    return current


def loop_variable_used_outside(
    name: str, loop: cst.For, scope: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode],
) -> bool:
    """Whether ``scope`` uses ``name`` (the variable of ``loop``) outside ``loop``: then the value the
    loop leaves in it is observable and a rewrite without the loop must not drop it. Uses inside
    other loops that bind ``name`` as their own variable are not counted (those loops rebind it),
    nor is anything after a rebinding that kills the loop's value (``_rebound_right_after``)."""
    inside = {id(n) for n in name_nodes(loop)}
    other_loops: set[int] = set()

    class _Rebinding(cst.CSTVisitor):
        def visit_For(self, node: cst.For) -> None:
            if node is not loop and name in names_used(node.target):
                other_loops.update(id(n) for n in name_nodes(node))

    scope.visit(_Rebinding())
    if not any(n.value == name and id(n) not in inside and id(n) not in other_loops for n in name_nodes(scope)):
        return False
    return not _rebound_right_after(name, loop, scope, parents)


#: calls that read a function's locals without naming them
_LOCALS_READERS = frozenset({"locals", "vars", "eval", "exec", "dir"})


def _rebound_right_after(name: str, loop: cst.For, scope: cst.CSTNode, parents: Mapping[cst.CSTNode, cst.CSTNode]) -> bool:
    """Whether the value ``loop`` leaves in ``name`` is dead: the first statement after the loop
    in its block that mentions ``name`` is ``name = <expression without name>``, so every later
    read sees that binding. Proven only where nothing else can see the value in between: no
    enclosing loop (a back edge reaches earlier reads), no enclosing ``try`` (a handler may read
    it after an exception), no nested function or class that names it (a closure could be
    called), no ``locals()``-style call in between."""
    block = parents.get(loop)
    current = block
    while current is not None and current is not scope:
        if isinstance(current, (cst.For, cst.While, cst.Try, cst.TryStar)):
            return False
        current = parents.get(current)
    if current is None:
        return False
    nested = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
    if any(node is not scope and isinstance(node, nested) and any(n.value == name for n in name_nodes(node))
           for node in own_nodes(scope)):
        return False
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)) or loop not in body:
        return False
    for statement in body[body.index(loop) + 1:]:
        mentioned = {n.value for n in name_nodes(statement)}
        if mentioned & _LOCALS_READERS:
            return False
        if name not in mentioned:
            continue
        small = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 else None
        return (
            isinstance(small, cst.Assign)
            and all(isinstance(t.target, cst.Name) for t in small.targets)
            and any(t.target.value == name for t in small.targets)  # type: ignore[attr-defined]
            and name not in {n.value for n in name_nodes(small.value)}
        )
    return False


_SCALAR_ANNOTATIONS = {"int": "int", "float": "float", "bool": "bool"}


def parameter_names(function: cst.FunctionDef) -> set[str]:
    """Every name ``function``'s parameters bind, ``*args`` and ``**kwargs`` included."""
    params = function.params
    every = [*params.posonly_params, *params.params, *params.kwonly_params]
    every += [p for p in (params.star_arg, params.star_kwarg) if isinstance(p, cst.Param)]
    return {p.name.value for p in every}


def annotated_scalar(scope: cst.CSTNode, name: str) -> str | None:
    """"int", "float" or "bool" when ``name`` is a parameter of ``scope`` annotated so."""
    if not isinstance(scope, cst.FunctionDef):
        return None
    params = scope.params
    for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
        if param.name.value == name and param.annotation is not None:
            return _SCALAR_ANNOTATIONS.get(dotted(param.annotation.annotation) or "")
    return None


def find_init(
    block: Sequence[cst.BaseStatement], before: cst.BaseStatement, name: str
) -> tuple[cst.SimpleStatementLine, cst.BaseExpression, bool] | None:
    """The ``name = <number>`` statement that last sets ``name`` before ``before`` in ``block``.

    Returns (statement, literal, adjacent) when every statement between them leaves ``name``
    alone; None when there is no such statement or something in between touches ``name``.
    ``loss, p, r = 0., 0., 0.`` (numbers unpacked from a tuple of literals) sets ``name`` too: the
    statement returned is then ``name = <number>`` alone, made for the kernel (nothing of the
    source's statement is rewritten through it, so ``adjacent`` is False).
    """
    index = next((i for i, s in enumerate(block) if s is before), None)
    if index is None:
        return None
    for j in range(index - 1, -1, -1):
        stmt = block[j]
        if isinstance(stmt, cst.SimpleStatementLine) and len(stmt.body) == 1:
            small = stmt.body[0]
            if m.matches(small, m.Assign(targets=[m.AssignTarget(target=m.Name(name))], value=_NUMBER_LITERAL)):
                return stmt, small.value, j == index - 1  # type: ignore[attr-defined]
            unpacked = _unpacked_literal(small, name)
            if unpacked is not None:
                made = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], unpacked)])
                return made, unpacked, False
        if name in names_used(stmt):
            return None
    return None


_NUMBER_LITERAL = m.Integer() | m.Float() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())


def _unpacked_literal(small: cst.BaseSmallStatement, name: str) -> cst.BaseExpression | None:
    """The number literal ``a, name, b = 0, 0., 1`` gives ``name``: a flat tuple of names that
    binds ``name`` once, from a tuple of as many literals (no call, so nothing runs)."""
    if not (isinstance(small, cst.Assign) and len(small.targets) == 1):
        return None
    target, value = small.targets[0].target, small.value
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    names = [e.value for e in target.elements]
    if len(names) != len(value.elements) or any(isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)):
        return None
    if not all(isinstance(n, cst.Name) for n in names) or [n.value for n in names].count(name) != 1:  # type: ignore[attr-defined]
        return None
    literal = value.elements[[n.value for n in names].index(name)].value  # type: ignore[attr-defined]
    return literal if m.matches(literal, _NUMBER_LITERAL) else None


def literal_kind(literal: cst.BaseExpression) -> str:
    inner = literal.expression if isinstance(literal, cst.UnaryOperation) else literal
    return "float" if isinstance(inner, cst.Float) else "int"


def is_zero(literal: cst.BaseExpression) -> bool:
    inner = literal.expression if isinstance(literal, cst.UnaryOperation) else literal
    return isinstance(inner, (cst.Integer, cst.Float)) and float(inner.value.replace("_", "")) == 0.0


def element_of(node: cst.CSTNode, index: str | None) -> str | None:
    """``X`` when ``node`` reads one element ``X[index]``: a plain name subscripted by the bare
    loop index and nothing else; None otherwise."""
    if (
        isinstance(node, cst.Subscript)
        and isinstance(node.value, cst.Name)
        and len(node.slice) == 1
        and isinstance(node.slice[0].slice, cst.Index)
        and isinstance(node.slice[0].slice.value, cst.Name)
        and node.slice[0].slice.value.value == index
    ):
        return node.value.value
    return None


def loop_indexed_tensors(value: cst.BaseExpression, shape: LoopShape) -> set[str] | None:
    """Names the loop reads element-wise in ``value``: subscripted by the loop index as ``X[i]`` /
    ``X[i, ...]``, or the iterated name for ``for v in X``. None when the loop variable appears any
    other way (an index computed from it, a bare use): then the loop is not an element loop."""
    loop_var = shape.index or shape.element
    found: set[str] = set()
    ok = True

    class _Uses(_VariableVisitor):
        def visit_Subscript(self, node: cst.Subscript) -> bool:
            nonlocal ok
            first = node.slice[0].slice if node.slice else None
            if (
                shape.index
                and isinstance(first, cst.Index)
                and isinstance(first.value, cst.Name)
                and first.value.value == shape.index
            ):
                if not isinstance(node.value, cst.Name) or len(node.slice) != 1:
                    ok = False
                    return False
                found.add(node.value.value)
                return False
            return True

        def visit_Name(self, node: cst.Name) -> None:
            nonlocal ok
            if node.value == loop_var:
                if shape.element:
                    found.add(shape.owner or "")
                else:
                    ok = False

    value.visit(_Uses())
    if shape.element:
        found.discard("")
        if found:
            found = {shape.owner or ""}
    return found if ok else None


class WholeTensorSubstitution(cst.CSTTransformer):
    """Turns a per-element expression of the loop ``shape`` into one on whole tensors: ``X[i]`` ->
    ``whole("X")`` (``X[i, j]`` -> ``whole("X")[:, j]``) and, for ``for v in X``, ``v`` ->
    ``whole("X")``; ``whole`` says how a rule spells a whole (sliced, flattened) tensor. The names
    it replaces are those :func:`loop_indexed_tensors` reports. A rule subclasses it to rewrite
    the rest of the expression too (its conversions)."""

    def __init__(self, shape: LoopShape, whole: Callable[[str], str]) -> None:
        super().__init__()
        self.shape = shape
        self.whole = whole

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        first = original.slice[0].slice if original.slice else None
        if (
            self.shape.index
            and isinstance(first, cst.Index)
            and isinstance(first.value, cst.Name)
            and first.value.value == self.shape.index
            and isinstance(original.value, cst.Name)
        ):
            base = cst.parse_expression(self.whole(original.value.value))
            if len(original.slice) == 1:
                return base
            rest = [cst.SubscriptElement(cst.Slice(lower=None, upper=None))] + list(updated.slice[1:])
            return cst.Subscript(value=base, slice=rest)
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        # `X[i].v`: the attribute's name is no variable to replace, even when it is spelled `v`
        return updated.with_changes(attr=original.attr)

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if self.shape.element and original.value == self.shape.element and self.shape.owner:
            return cst.parse_expression(self.whole(self.shape.owner))
        return updated


# ----------------------------------------------------------------------------- rule context


_FIELDS: dict[type, tuple[str, ...]] = {}


class ModuleNodes:
    """Every node of a module, walked once: parents, and the nodes of each type in pre-order.

    The parents are what ``ParentNodeProvider`` resolves -- the same mapping -- and the lists are
    what a ``CSTVisitor`` collecting one node type would gather, parents before their children.
    Walking the nodes' dataclass fields is an order of magnitude faster than a batched visitor,
    and one walk serves every rule (:func:`module_nodes` keeps the last module's).
    """

    def __init__(self, module: cst.Module) -> None:
        self.module = module
        self.parents: dict[cst.CSTNode, cst.CSTNode] = {}
        #: id(node) -> its rank in the walk: statements rank in source order (a compound statement's
        #: header fields come before its body), so "before the loop" needs no positions
        self.order: dict[int, int] = {}
        self._by_type: dict[type, list[cst.CSTNode]] = {}
        self._positions: Positions | None = None
        #: id(node) -> its children (:func:`child_nodes` answers from here for this module's
        #: nodes). By id, not by node: a node's hash is a Python-level method, and the module
        #: keeps every one of its nodes alive, so no other live object shares their ids.
        self.children: dict[int, list[cst.CSTNode]] = {}
        parents, by_type, order, known = self.parents, self._by_type, self.order, self.children
        stack: list[cst.CSTNode] = [module]
        while stack:
            node = stack.pop()
            order[id(node)] = len(order)
            by_type.setdefault(type(node), []).append(node)
            children = child_nodes(node)
            known[id(node)] = children
            for child in children:
                parents[child] = node
            stack.extend(reversed(children))  # pre-order: the first child is walked first

    @property
    def positions(self) -> Positions:
        """Where each node starts and ends (``codemods.positions``), computed on first use."""
        if self._positions is None:
            self._positions = Positions(self.module)
        return self._positions

    def of_type(self, *kinds: type) -> list[cst.CSTNode]:
        """The nodes of exactly these types (not subclasses), in pre-order per type."""
        if len(kinds) == 1:
            return list(self._by_type.get(kinds[0], ()))
        return [node for kind in kinds for node in self._by_type.get(kind, ())]


#: the fields a node type declares after others that precede them in the source (``a if c else b``
#: declares ``test`` first; a function its body before its decorators): these come first
_SOURCE_FIRST: dict[str, tuple[str, ...]] = {
    "IfExp": ("body",),
    "ExceptHandler": ("type", "name"),
    "ExceptStarHandler": ("type", "name"),
    "FunctionDef": ("leading_lines", "decorators", "name", "type_parameters", "params", "returns"),
    "ClassDef": ("leading_lines", "decorators", "name", "type_parameters", "bases", "keywords"),
    "Parameters": ("posonly_params", "posonly_ind"),
    "MatchCase": ("pattern", "guard"),
    "ImportFrom": ("relative", "module"),
    "Arg": ("keyword",),
}


def skippable_parts(expression: cst.BaseExpression) -> list[cst.BaseExpression]:
    """The parts of ``expression`` Python may skip when it evaluates ``expression``: the right
    side of ``and`` / ``or``, the comparisons of a chain after the first (``0 < a < b`` asks
    ``b`` only where ``0 < a``), the branches of ``a if c else b``, the body of a comprehension
    or a lambda -- at any depth (``not (a and b)``, ``f(a or b)``). Each part comes whole (what
    is under it is skippable too)."""
    skippable: list[cst.BaseExpression] = []
    pending: list[cst.CSTNode] = [expression]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.BooleanOperation):
            pending.append(node.left)
            skippable.append(node.right)
        elif isinstance(node, cst.Comparison) and len(node.comparisons) > 1:
            pending += [node.left, node.comparisons[0].comparator]
            skippable += [later.comparator for later in node.comparisons[1:]]
        elif isinstance(node, cst.IfExp):
            pending.append(node.test)
            skippable += [node.body, node.orelse]
        elif isinstance(node, (cst.Lambda, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            skippable.append(node)
        else:
            pending += child_nodes(node)
    return skippable


def without_skippable_parts(expression: cst.BaseExpression) -> cst.BaseExpression:
    """``expression`` with every part :func:`skippable_parts` finds replaced by ``None``: what
    is left, Python evaluates whenever it evaluates ``expression``."""
    ids = {id(node) for node in skippable_parts(expression)}
    if not ids:
        return expression

    class _Cut(cst.CSTTransformer):
        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
            return cst.Name("None") if id(original) in ids else updated

    cut = expression.visit(_Cut())
    assert isinstance(cut, cst.BaseExpression)
    return cut


def child_nodes(node: cst.CSTNode) -> list[cst.CSTNode]:
    """The children of ``node`` in source order, read from its dataclass fields: what LibCST's
    ``node.children`` gives, an order of magnitude faster (that property runs a visitor)."""
    # the rules walk the same subtrees again and again (a function per loop in it, a loop's body
    # per question): the walk of the module remembered each node's children once
    if _LAST_NODES is not None:
        known = _LAST_NODES.children.get(id(node))
        if known is not None:
            return known
    kind = type(node)
    names = _FIELDS.get(kind)
    if names is None:
        import dataclasses

        declared = [f.name for f in dataclasses.fields(kind)]
        first = [name for name in _SOURCE_FIRST.get(kind.__name__, ()) if name in declared]
        names = _FIELDS[kind] = (*first, *(name for name in declared if name not in first))
    children: list[cst.CSTNode] = []
    # ``isinstance(value, cst.CSTNode)`` goes through ABCMeta, and this runs millions of times a
    # scan: the answer is remembered per type
    is_node = _IS_NODE
    for name in names:
        value = getattr(node, name)
        kind = type(value)
        for item in value if kind is tuple or kind is list else (value,):
            item_kind = type(item)
            node_kind = is_node.get(item_kind)
            if node_kind is None:
                node_kind = is_node[item_kind] = issubclass(item_kind, cst.CSTNode)
            if node_kind:
                children.append(item)
    return children


_IS_NODE: dict[type, bool] = {}


_LAST_NODES: ModuleNodes | None = None


def module_nodes(module: cst.Module) -> ModuleNodes:
    """The :class:`ModuleNodes` of ``module``, shared by every rule that looks at it."""
    global _LAST_NODES
    if _LAST_NODES is None or _LAST_NODES.module is not module:
        _LAST_NODES = ModuleNodes(module)
    return _LAST_NODES


def positions(module: cst.Module) -> Positions:
    """The positions of ``module``, shared by every rule and by the pipeline that reads it."""
    return module_nodes(module).positions


def parent_map(root: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Every node of ``root`` -> its parent (what ``ParentNodeProvider`` resolves)."""
    return module_nodes(root).parents


@dataclass
class RuleContext:
    """What a rule needs to know about the module it is matching in, resolved once."""

    module: cst.Module
    parents: Mapping[cst.CSTNode, cst.CSTNode]
    positions: Mapping[cst.CSTNode, object]
    facts: ModuleFacts
    #: the name torch is bound to here (``torch`` when the module does not import it)
    torch: str
    #: modules the rewrite must import: ``("torch",)`` when the module does not bind torch
    imports: tuple[str, ...]
    module_names: set[str] = field(default_factory=set)
    #: the evidence of each scope asked about, by id (``evidence``)
    _evidence: dict[int, Any] = field(default_factory=dict)

    def evidence(self, scope: cst.CSTNode) -> "ScopeEvidence":
        """What the code of ``scope`` shows about the kinds of its names (``codemods.evidence``),
        with this module's torch / numpy / functional bindings; computed once per scope."""
        from torchfix.codemods.evidence import ScopeEvidence

        found = self._evidence.get(id(scope))
        if found is None:
            found = self._evidence[id(scope)] = ScopeEvidence(
                scope,
                torch_names={self.torch},
                numpy_names={self.facts.numpy} if self.facts.numpy else {"np", "numpy"},
                functional_names={self.facts.functional} if self.facts.functional else (),
                tensor_annotations={bound for bound, target in self.facts.bindings if target == "torch.Tensor"},
                math_names={bound for bound, target in self.facts.bindings if target == "math"},
                parents=self.parents,
                module=self.module,
            )
        return found

    def position(self, node: cst.CSTNode) -> tuple[int, int]:
        """(line, column) where ``node`` starts, both 1-based as reports count them."""
        pos = self.positions[node]
        return pos.start.line, pos.start.column + 1  # type: ignore[attr-defined]

    def proposal(
        self,
        rule: str,
        node: cst.CSTNode,
        message: str,
        candidates: tuple[Candidate, ...] = (),
        skip_reason: str | None = None,
    ) -> Proposal:
        """The proposal of ``rule`` for the statement ``node``: reported where it starts, anchored on
        it (a ``# torchfix: ignore`` there silences it), with its source as the snippet. With a
        ``skip_reason`` and no candidates it is a skip."""
        line, column = self.position(node)
        return Proposal(rule, message, line, column, node, candidates, skip_reason, statement_code(self.module, node))

    def kernel_modules(self) -> tuple[tuple[str, str], ...]:
        """The module bindings a kernel runs with: every whitelisted module bound here, plus
        ``torch`` itself where the module does not bind it (the rewrite imports it then)."""
        bindings = list(self.facts.bindings)
        if not self.facts.torch:
            bindings.append(("torch", "torch"))
        return tuple(dict.fromkeys(bindings))

    @classmethod
    def from_wrapper(cls, wrapper: "MetadataWrapper", facts: ModuleFacts | None = None, **extra: Any) -> "RuleContext":
        """The context of ``wrapper``'s module; ``facts``: its :func:`module_facts` where the rule
        has read them already; ``extra``: a subclass's own fields."""
        module = wrapper.module
        if facts is None:
            facts = module_facts(module)
        fields: dict[str, Any] = dict(
            module=module,
            parents=parent_map(module),
            positions=positions(module),
            facts=facts,
            torch=facts.torch or "torch",
            imports=() if facts.torch else ("torch",),
            module_names={name for name, _ in facts.bindings},
        )
        fields.update(extra)
        return cls(**fields)


#: what a loop rule's matcher found in one loop
LoopMatch = TypeVar("LoopMatch")


def loop_proposals(
    wrapper: "MetadataWrapper",
    match: Callable[[cst.For], LoopMatch | None],
    propose: Callable[[LoopMatch, RuleContext], Proposal | None],
) -> list[Proposal]:
    """The proposals of a rule that looks at each ``for`` loop on its own: ``match`` every loop of
    the module, then ``propose`` on each match, in source order. The context is built only when
    something matched: its metadata is the expensive part."""
    loops: list[cst.For] = module_nodes(wrapper.module).of_type(cst.For)  # type: ignore[assignment]
    matches = [found for found in (match(loop) for loop in loops) if found is not None]
    if not matches:
        return []
    ctx = RuleContext.from_wrapper(wrapper)
    proposals = [proposal for proposal in (propose(found, ctx) for found in matches) if proposal is not None]
    proposals.sort(key=lambda p: (p.line, p.column))
    return proposals


# ----------------------------------------------------------------------------- conversions


#: methods whose result may share memory with the value they are called on (``.float()`` of a
#: float tensor is the tensor itself)
VIEW_METHODS = frozenset(
    {"view", "view_as", "reshape", "reshape_as", "transpose", "permute", "squeeze", "unsqueeze", "expand",
     "expand_as", "flatten", "ravel", "narrow", "select", "unfold", "detach", "contiguous", "t", "swapaxes",
     "movedim", "moveaxis", "as_strided", "diagonal", "numpy", "cpu", "to", "type_as", "float", "double",
     "long", "int", "astype", "squeeze_", "unsqueeze_", "get", "copy_"}
)


def is_in_place_method(name: str) -> bool:
    """``add_``, ``relu_``: torch's spelling of a method that changes its receiver and returns it."""
    return name.endswith("_") and not name.startswith("__")


def is_conversion(node: cst.CSTNode) -> bool:
    """``T.item()``, ``float(T)`` or ``int(T)`` with one positional argument."""
    if not isinstance(node, cst.Call):
        return False
    if isinstance(node.func, cst.Attribute) and node.func.attr.value == "item" and not node.args:
        return True
    return (
        isinstance(node.func, cst.Name)
        and node.func.value in ("float", "int")
        and len(node.args) == 1
        and node.args[0].keyword is None
        and not node.args[0].star
    )


def conversion_operand(conversion: cst.Call) -> cst.BaseExpression:
    """``T`` of ``T.item()`` / ``float(T)`` / ``int(T)``."""
    return conversion.func.value if isinstance(conversion.func, cst.Attribute) else conversion.args[0].value  # type: ignore[union-attr]


def conversions_in(expr: cst.BaseExpression) -> list[cst.Call]:
    """Every conversion call inside ``expr``, outermost first."""
    found: list[cst.Call] = []

    class _Find(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            if is_conversion(node):
                found.append(node)

    expr.visit(_Find())
    return found


def rebound_elsewhere(scope: cst.CSTNode) -> frozenset[str]:
    """The names of ``scope`` that code in other scopes rebinds: for a module, every name some
    function declares ``global``; for a function, every name a function nested in it declares
    ``nonlocal`` (its own ``global`` / ``nonlocal`` are its own bindings)."""
    wanted = cst.Global if isinstance(scope, cst.Module) else cst.Nonlocal
    found: set[str] = set()
    stack: list[tuple[cst.CSTNode, bool]] = [(scope, False)]  # (node, inside a scope nested in `scope`)
    while stack:
        node, nested = stack.pop()
        if nested and isinstance(node, wanted):
            found |= {item.name.value for item in node.names}
        inner = nested or (node is not scope and isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda)))
        stack.extend((child, inner) for child in child_nodes(node))
    return frozenset(found)
