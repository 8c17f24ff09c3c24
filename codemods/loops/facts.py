"""Facts about one loop, computed once and read by every loop rule.

:func:`loop_facts` answers, for a ``for`` statement: what it iterates (:class:`Domain`), what each
statement of its body does (:class:`Step`: a per-sample temporary, a store into a tensor at the
loop index, an accumulation into a name, an ``append``, a ``continue`` guard, a branch, or
something else), which names carry per-sample values, where the accumulators and outputs were
initialised (in the same block or an enclosing one: a ``with torch.no_grad():`` around the loop,
an outer loop's body), which names are read after the loop, and what stops the loop from being a
batch computation (a recurrence, an early exit, a global write). Rules never walk a loop body
themselves.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Callable, Iterator, Mapping, Sequence

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.analysis import (
    BOUND_TARGET, annotated_scalar, child_nodes, comprehension_variables, escaping_control_flow, parameter_names,
    rebound_elsewhere, target_names,
)
from torchfix.codemods.loops.domain import Domain, Measure, loop_domain, measure_of, shape_owner
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.nodes import assigned_names, bare_code, int_literal, is_number, name_nodes, names_used, python_number, same_code

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

    from torchfix.codemods.evidence import Evidence


class StepKind(enum.Enum):
    #: ``t = <expr>``: a name assigned in the body (per-sample when the value is)
    TEMP = "temporary"
    #: ``out[<index>] = <expr>`` or ``out[<index>] += <expr>`` (the index uses a loop variable)
    STORE = "store"
    #: ``acc += <expr>`` / ``acc = acc + <expr>`` (also ``-=``, ``*=``)
    ACCUMULATE = "accumulation"
    #: ``items.append(<expr>)``
    APPEND = "append"
    #: ``if <cond>: continue`` -- the rest of the body runs where ``cond`` is false
    GUARD = "guard"
    #: an ``if`` / ``elif`` / ``else`` whose branches are steps themselves
    BRANCH = "branch"
    #: anything else: a call for its effect, a nested loop, ``print``, ...
    OTHER = "other"


@dataclass(frozen=True)
class Step:
    kind: StepKind
    #: the body statement this step is (a simple line or a compound statement)
    statement: cst.BaseStatement
    #: the small statement, for simple lines
    small: cst.BaseSmallStatement | None = None
    #: the name the step writes: the temporary, the stored tensor, the accumulator, the list
    target: str | None = None
    value: cst.BaseExpression | None = None
    #: STORE: the subscript elements of the target (``out[i, :]`` -> (i, :))
    indices: tuple[cst.SubscriptElement, ...] = ()
    #: STORE: the target, chained subscripts flattened (``out[i][0]`` -> ``out[i, 0]``)
    subscript: cst.Subscript | None = None
    #: ACCUMULATE and augmented STORE: the binary operator (``+=`` -> Add)
    operator: cst.BaseBinaryOp | None = None
    #: GUARD: the condition under which the rest of the body is skipped (``if c: continue``),
    #: or -- ``keeps`` -- under which it runs (a comprehension's ``if c`` filter)
    condition: cst.BaseExpression | None = None
    keeps: bool = False


@dataclass(frozen=True)
class Definition:
    """The statement that last binds a name before the loop, in straight-line code."""

    name: str
    statement: cst.SimpleStatementLine
    value: cst.BaseExpression
    #: the block holding the statement, and whether it is the loop's own block
    block: Sequence[cst.BaseStatement]
    same_block: bool
    #: statements strictly between the definition and the loop (in the definition's block)
    between: tuple[cst.BaseStatement, ...]
    #: the other names the statement binds (``a, b = [], []``); empty for ``name = value``
    others: tuple[str, ...] = ()


@dataclass
class ShapeFacts:
    """What a function says about sizes and ranks: ``b = x.size(0)``, ``n, d = x.shape``."""

    #: a size name -> the dimension it measures
    measures: dict[str, Measure] = field(default_factory=dict)
    #: a tensor name -> its rank, where an unpacking of its shape pins it
    ranks: dict[str, int] = field(default_factory=dict)
    #: names bound once to a Python number (``f = math.ceil(n / 2)``): rank 0, and what a
    #: per-sample number combined with one stays
    numbers: set[str] = field(default_factory=set)
    #: array names whose dtype the code shows is bool (``m = a.eq(b)``), where a loop reads them
    bools: frozenset[str] = frozenset()
    #: array names -> the dtype a conversion gave them (``a = b.astype(np.int32)``), where a
    #: loop reads them
    dtypes: Mapping[str, str] = field(default_factory=dict)
    #: names -> a token, where the code shows names of one token have as many rows at the loop
    #: (``ids = pairs[:, 1]``; ``codemods.loops.ranks``)
    lengths: Mapping[str, int] = field(default_factory=dict)


@dataclass
class LoopFacts:
    #: the ``for`` statement, or the comprehension (``[f(r) for r in x]``)
    loop: cst.For | cst.ListComp | cst.GeneratorExp
    context: ModuleContext
    domain: Domain
    function: cst.FunctionDef | None
    steps: tuple[Step, ...]
    #: names holding per-sample values inside the body: loop variables and temporaries fed by them
    per_sample: frozenset[str]
    #: why the loop is not a batch computation (empty: it may be one)
    blockers: tuple[str, ...]
    shapes: ShapeFacts
    #: names read anywhere in the function outside the loop's body (the loop itself excluded):
    #: ``name in read_outside``
    read_outside: "ReadOutside | frozenset[str]"
    #: the statement holding the loop (the ``for`` itself, or the line holding a comprehension)
    statement: cst.CSTNode | None = None
    #: tensors an inner loop (already lifted into this loop's body) walks, and their dimension
    inner_walked: tuple[tuple[str, int], ...] = ()
    #: the body is an inner loop's lift that computed Python numbers of its index in float64:
    #: the outer index, which meets them, is lifted so too (``LoopRewrite.double_index``)
    double_index: bool = False

    @property
    def comprehension(self) -> cst.ListComp | cst.GeneratorExp | None:
        return self.loop if isinstance(self.loop, (cst.ListComp, cst.GeneratorExp)) else None

    @property
    def loop_variables(self) -> tuple[str, ...]:
        return self.domain.variables

    @property
    def scope(self) -> cst.CSTNode:
        """The function holding the loop, or the module for a loop at the top level."""
        return self.function if self.function is not None else self.context.module

    def evidence(self, name: str) -> "Evidence":
        """What the code shows ``name`` may hold at the loop (its ``isinstance`` branches
        included)."""
        return self.context.evidence(self.scope).name(name, at=self.loop)

    def entry_evidence(self, name: str) -> "Evidence":
        """What ``name`` may hold as the loop starts: the kernel's input (what the loop binds
        itself reaches only its later steps)."""
        return self.context.evidence(self.scope).name(name, at=self.loop, entering=True)

    def steps_of(self, kind: StepKind) -> list[Step]:
        return [s for s in self.steps if s.kind is kind]

    def definition(self, name: str, shared: bool = False) -> Definition | None:
        """Where ``name`` was last bound before the loop (see :func:`definition_before`); with
        ``shared``, also a tuple assignment binding it beside other names (``a, b = [], []``)."""
        anchor = self.statement or self.loop
        # (every rung of the loop's ladder asks again; the module does not change under them)
        return self.context.once(f"definition of {name}{' shared' if shared else ''}", anchor,
                                 lambda: definition_before(self.context, anchor, name, shared))

    def used_after(self, name: str) -> bool:
        """Whether ``name`` is read outside the loop (after it, or by a later iteration of an
        enclosing loop) -- conservatively: anywhere in the function but this loop."""
        return name in self.read_outside

    def number_list(self, source: cst.BaseExpression) -> cst.List | cst.Tuple | None:
        """The literal list (or tuple) of numbers ``source`` is -- written in place, or a name
        bound to one before the loop, touched neither in between nor inside the loop other than
        by reads of its items (``means[i]``) -- else None. Its length and values are in the code:
        it can be made an array of one number per position."""
        if isinstance(source, cst.Name):
            return self.context.once(f"number list {source.value}", self.loop, lambda: self._named_number_list(source))
        return _literal_numbers(source)

    def _named_number_list(self, source: cst.Name) -> cst.List | cst.Tuple | None:
        definition = self.definition(source.value)
        if definition is None or any(source.value in names_used(s) for s in definition.between):
            return None
        body = self.loop.body if isinstance(self.loop, cst.For) else self.loop.elt
        if not _only_item_reads(body, source.value):
            return None
        return _literal_numbers(definition.value)


def _literal_numbers(source: cst.BaseExpression) -> cst.List | cst.Tuple | None:
    """``source`` where it is a literal list (or tuple) of numbers, else None."""
    if isinstance(source, (cst.List, cst.Tuple)) and source.elements and all(
        isinstance(e, cst.Element) and is_number(e.value) for e in source.elements
    ):
        return source
    return None


# ----------------------------------------------------------------------------- shapes


def shape_facts(function: cst.FunctionDef | None, context: ModuleContext) -> ShapeFacts:
    """Sizes and ranks the function pins, from names it binds exactly once (once per function)."""
    if function is None:
        return ShapeFacts()
    return context.once("shape facts", function, lambda: _shape_facts(function))


def _shape_facts(function: cst.FunctionDef) -> ShapeFacts:
    facts = ShapeFacts()
    counts: dict[str, int] = {}
    nodes, counts = _nodes_and_binding_counts(function.body)  # three passes below: one walk
    for name in rebound_elsewhere(function):
        counts[name] = counts.get(name, 0) + 2  # a nested function's `nonlocal n` binds `n` too
    parameters = parameter_names(function)
    for node in nodes:
        if not isinstance(node, cst.Assign) or len(node.targets) != 1:
            continue
        target, value = node.targets[0].target, node.value
        if isinstance(target, cst.Name):
            measured = measure_of(value)
            if measured is not None and counts.get(target.value) == 1 and target.value not in parameters:
                facts.measures[target.value] = measured
        elif isinstance(target, (cst.Tuple, cst.List)):
            owner = shape_owner(value)
            if owner is None:
                continue
            source, _ = owner
            names = [e.value for e in target.elements]
            if any(isinstance(e, cst.StarredElement) for e in target.elements) or not all(isinstance(v, cst.Name) for v in names):
                continue
            # (the rank `h, w = x.shape` pins holds only past it: `ranks.ranks_at` follows it
            # where it runs before the loop on every path; a pin in a branch or after the loop
            # says nothing of the `x` the loop sees)
            for dim, element in enumerate(names):
                assert isinstance(element, cst.Name)
                if counts.get(element.value) == 1 and element.value not in parameters:
                    facts.measures[element.value] = (source, dim)
    # names bound once to a Python number (`f = math.ceil(w.size(2) / 2)`, `c = (2 * f - 1) / f`)
    # hold rank 0: what a per-sample number meets in `i / f` broadcasts as a scalar
    # (every binding must be one: an assignment of a number, or a `for` over `range(...)`)
    # (None stands for a `for` target over `range(...)`: an int whatever the bounds)
    values: dict[str, list[cst.BaseExpression | None]] = {}
    for node in nodes:
        if isinstance(node, cst.Assign) and len(node.targets) == 1 and isinstance(node.targets[0].target, cst.Name):
            values.setdefault(node.targets[0].target.value, []).append(node.value)
        elif isinstance(node, cst.For) and isinstance(node.target, cst.Name) and m.matches(node.iter, m.Call(func=m.Name("range"))):
            values.setdefault(node.target.value, []).append(None)
    numbers = set(facts.measures)
    # a parameter annotated as a Python number, and never rebound (the evidence the checker
    # draws it from says the same)
    for param in sorted(parameters):
        if annotated_scalar(function, param) is not None and not counts.get(param):
            numbers.add(param)
            facts.numbers.add(param)
            facts.ranks.setdefault(param, 0)
    changed = True
    while changed:
        changed = False
        for bound, bound_values in values.items():
            if bound in numbers or bound in parameters or counts.get(bound) != len(bound_values):
                continue
            if all(value is None or python_number(value, numbers) for value in bound_values):
                numbers.add(bound)
                facts.numbers.add(bound)
                facts.ranks.setdefault(bound, 0)
                changed = True
    return facts


#: the statements whose bindings :func:`_nodes_and_binding_counts` counts (a comprehension's
#: variable is its own scope's, but it shadows the function's name inside it: counted, so a
#: fact about the function's name is never read where the comprehension's is meant)
_BINDING_STATEMENTS = (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.For, cst.WithItem, cst.NamedExpr, cst.CompFor)


def _nodes_and_binding_counts(body: cst.CSTNode) -> tuple[list[cst.CSTNode], dict[str, int]]:
    """The nodes of ``body`` as :func:`_walk` lists them, and per name the number of binding
    statements among them (:data:`_BINDING_STATEMENTS`) that bind it anywhere inside, nested scopes
    included. A binding inside a loop so counts once more per binding statement around it (a loop
    runs it again): a name bound once at the top of a function counts 1, one bound in a loop 2.

    One walk: each binding adds the binding statements around it to its name's set (asking each
    statement for the names bound inside it walked a loop's body once per statement around it)."""
    nodes: list[cst.CSTNode] = []
    around_of: dict[str, set[int]] = {}
    # (node, ids of the binding statements around it and itself, inside a scope body defines)
    stack: list[tuple[cst.CSTNode, tuple[int, ...], bool]] = [(body, (), False)]
    while stack:
        node, around, nested = stack.pop()
        kind = type(node)
        if not nested:
            nodes.append(node)
            if isinstance(node, _BINDING_STATEMENTS):
                around = (*around, id(node))
        target = BOUND_TARGET.get(kind) or (_COMPREHENSION_TARGET if kind is cst.CompFor else None)
        if target is not None and around:
            bound = target(node)
            if bound is not None:
                for name in target_names(bound):
                    around_of.setdefault(name, set()).update(around)
        for child in child_nodes(node):
            stack.append((child, around, nested or type(child) in _OWN_SCOPES))
    return nodes, {name: len(ids) for name, ids in around_of.items()}


def _COMPREHENSION_TARGET(node: cst.CompFor) -> cst.BaseExpression:
    return node.target


# ----------------------------------------------------------------------------- definitions


def _walk(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself included), nested functions and classes excluded."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        # the children from the node's fields (``child_nodes``): LibCST's ``children`` runs a
        # visitor per call; and exact types, not isinstance (LibCST's node types are final, and
        # isinstance goes through ABCMeta millions of times a scan)
        stack.extend(child for child in child_nodes(current) if type(child) not in _OWN_SCOPES)


_OWN_SCOPES = frozenset({cst.FunctionDef, cst.ClassDef, cst.Lambda})


def _binds(statement: cst.CSTNode, name: str) -> bool:
    return name in assigned_names(statement) or any(
        isinstance(n, (cst.Global, cst.Nonlocal, cst.Del)) for n in _walk(statement)
    )


def definition_before(context: ModuleContext, loop: cst.CSTNode, name: str, shared: bool = False) -> Definition | None:
    """The ``name = <value>`` statement that binds ``name`` last before ``loop``, looking back
    through the loop's block and then through enclosing ``with`` / loop / ``if`` bodies up to
    the function. None when the last binding is not a plain assignment, or a compound statement
    in between may bind it (an ``if`` that assigns it in one branch)."""
    current: cst.CSTNode = loop
    same_block = True
    while True:
        located = context.block_of(current)
        if located is None:
            return None
        block, index = located
        for position in range(index - 1, -1, -1):
            statement = block[position]
            if not _binds(statement, name):
                continue
            if (
                isinstance(statement, cst.SimpleStatementLine)
                and len(statement.body) == 1
                and isinstance(statement.body[0], cst.Assign)
                and len(statement.body[0].targets) == 1
                and m.matches(statement.body[0].targets[0].target, m.Name(name))
            ):
                return Definition(name, statement, statement.body[0].value, block, same_block, tuple(block[position + 1 : index]))
            element = _tuple_element(statement, name) if shared else None
            if element is not None:
                value, others = element
                return Definition(name, statement, value, block, same_block, tuple(block[position + 1 : index]), others)
            return None
        parent = context.parents.get(context.parents.get(current))  # block -> owner
        if parent is None or isinstance(parent, (cst.FunctionDef, cst.Module, cst.ClassDef, cst.Lambda)):
            return None
        if not isinstance(parent, (cst.With, cst.For, cst.While, cst.If, cst.Try)):
            return None
        current = parent
        same_block = False


def _tuple_element(statement: cst.BaseStatement, name: str) -> tuple[cst.BaseExpression, tuple[str, ...]] | None:
    """For ``a, b = x, y``: the value ``name`` gets and the other names bound; None for any
    other statement (a starred element, an unpacked call, lengths that differ)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign)):
        return None
    assign = statement.body[0]
    if len(assign.targets) != 1:
        return None
    target, value = assign.targets[0].target, assign.value
    if not (isinstance(target, (cst.Tuple, cst.List)) and isinstance(value, (cst.Tuple, cst.List))):
        return None
    if len(target.elements) != len(value.elements) or any(
        isinstance(e, cst.StarredElement) for e in (*target.elements, *value.elements)
    ):
        return None
    names = [e.value.value if isinstance(e.value, cst.Name) else None for e in target.elements]
    if None in names or names.count(name) != 1:
        return None
    position = names.index(name)
    return value.elements[position].value, tuple(n for n in names if n != name)  # type: ignore[misc]


# ----------------------------------------------------------------------------- the body


_AUG = {
    cst.AddAssign: cst.Add, cst.SubtractAssign: cst.Subtract, cst.MultiplyAssign: cst.Multiply,
    cst.DivideAssign: cst.Divide, cst.FloorDivideAssign: cst.FloorDivide, cst.ModuloAssign: cst.Modulo,
    cst.PowerAssign: cst.Power, cst.BitOrAssign: cst.BitOr, cst.BitAndAssign: cst.BitAnd,
    cst.MatrixMultiplyAssign: cst.MatrixMultiply,
}


def _binary_of(operator: cst.BaseAugOp) -> cst.BaseBinaryOp | None:
    kind = _AUG.get(type(operator))
    return kind() if kind else None


def _uses_any(node: cst.CSTNode, names: frozenset[str] | set[str]) -> bool:
    return bool(names_used(node) & names)


def _body_steps(body: Sequence[cst.BaseStatement], loop_vars: set[str]) -> tuple[Step, ...]:
    """The steps of a loop body. A trailing ``if c:`` without ``else`` whose block is plain
    statements is the same as ``if not c: continue`` followed by that block (nothing comes after
    it), so it becomes a guard that keeps the samples where ``c`` holds, then the block's steps:
    ``if t[i] == 0 and a[i] != 0: t[i] = a[i] + k`` is a store at the rows of a mask."""
    body = [line for statement in body for line in (branch_as_expressions(statement) or (statement,))]
    steps = [_classify(s, loop_vars) for s in body]
    last = body[-1] if body else None
    if (
        isinstance(last, cst.If)
        and last.orelse is None
        and steps[-1].kind is StepKind.BRANCH
        and isinstance(last.body, cst.IndentedBlock)
        and last.body.body
        and all(isinstance(s, cst.SimpleStatementLine) for s in last.body.body)
        and not any(m.findall(last.body, m.Continue() | m.Break() | m.Return()))
    ):
        inner = [_classify(s, loop_vars) for s in last.body.body]
        if all(step.kind in (StepKind.TEMP, StepKind.STORE, StepKind.ACCUMULATE) for step in inner):
            steps[-1:] = [Step(StepKind.GUARD, last, condition=last.test, keeps=True), *inner]
    return tuple(steps)


def branch_as_expressions(statement: cst.BaseStatement) -> list[cst.SimpleStatementLine] | None:
    """An ``if``/``elif``/``else`` whose every branch binds the same targets in the same order,
    one simple line each, as one line per target that picks its value with a conditional
    expression::

        if rows[i] != 0:                        p = i / rows[i] if rows[i] != 0 else 1.0
            p = i / rows[i]              ->     total += (p if rows[i] != 0 else 0.5)
            total += p
        else:
            p = 1.0
            total += 0.5

    Python evaluates only the branch the test picks, in both spellings, so the lines run what
    the statement ran. That holds because the tests read none of the names the branches bind
    (each line asks the tests again, after the lines before it), and because the k-th line of
    every branch binds the same target with the same operator: a value that reads a target bound
    earlier in its branch reads the value that branch bound (the line before picked it under the
    same test), and one bound later reads the binding from before the statement in both
    spellings. None for any other statement: the lift then treats it as a branch it does not
    know (and the checker compares whatever is lifted with the loop as written)."""
    if not isinstance(statement, cst.If):
        return None
    tests: list[cst.BaseExpression] = []
    blocks: list[cst.BaseSuite] = []
    current: cst.If | cst.Else | None = statement
    while isinstance(current, cst.If):
        tests.append(current.test)
        blocks.append(current.body)
        current = current.orelse
    if current is None:
        return None  # (a branch that may bind nothing keeps the previous step's value)
    blocks.append(current.body)
    branches = [_branch_lines(block) for block in blocks]
    if any(lines is None or not lines for lines in branches):
        return None
    shapes = {tuple((kind, same_key, type(op)) for kind, same_key, op, _, _ in lines) for lines in branches}  # type: ignore[union-attr]
    if len(shapes) != 1:
        return None
    bound = {key for kind, key, _, _, _ in branches[0] if kind != "store"}  # type: ignore[union-attr]
    if any(names_used(test) & bound for test in tests):
        return None
    stored = {target.value.value for kind, _, _, target, _ in branches[0] if kind == "store"}  # type: ignore[union-attr]
    if len(branches[0]) > 1 and any(names_used(test) & stored for test in tests):  # type: ignore[arg-type]
        return None  # (a test reading the array a branch writes would ask again after the write)
    lines = []
    for position, (kind, _, operator, target, _) in enumerate(branches[0]):  # type: ignore[arg-type]
        values = [lines_[position][4] for lines_ in branches]  # type: ignore[index]
        picked: cst.BaseExpression = _parenthesized(values[-1])
        for test, value in zip(reversed(tests), reversed(values[:-1])):
            picked = cst.IfExp(test=_parenthesized(test), body=_parenthesized(value), orelse=picked)
        picked = picked.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()]) if kind == "accumulate" else picked
        small: cst.BaseSmallStatement
        if kind == "augmented":
            small = cst.AugAssign(target=target, operator=operator, value=picked)
        elif kind == "accumulate":
            small = cst.Assign([cst.AssignTarget(target)], cst.BinaryOperation(target, operator, picked))
        else:
            small = cst.Assign([cst.AssignTarget(target)], picked)
        lines.append(cst.SimpleStatementLine([small]))
    return lines


def _branch_lines(block: cst.BaseSuite) -> list[tuple[str, str, cst.CSTNode | None, cst.BaseExpression, cst.BaseExpression]] | None:
    """Each line of a branch as (kind, target key, operator, target, value); None where a line is
    not one binding of a name or one store at a subscript of a name."""
    if not isinstance(block, cst.IndentedBlock):
        return None
    found = []
    for line in block.body:
        if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
            return None
        small = line.body[0]
        if isinstance(small, cst.AugAssign) and _bound_target(small.target):
            target = small.target
            found.append(("augmented" if isinstance(target, cst.Name) else "store", bare_code(target), small.operator, target, small.value))
        elif isinstance(small, cst.Assign) and len(small.targets) == 1 and _bound_target(small.targets[0].target):
            target, value = small.targets[0].target, small.value
            if isinstance(target, cst.Subscript):
                found.append(("store", bare_code(target), None, target, value))
            elif isinstance(value, cst.BinaryOperation) and m.matches(value.left, m.Name(target.value)) and target.value not in names_used(value.right):
                found.append(("accumulate", target.value, value.operator, target, value.right))
            else:
                found.append(("assign", target.value, None, target, value))
        else:
            return None
    return found


def _bound_target(target: cst.BaseExpression) -> bool:
    """A name, or a subscript of a name (``out[i]``: the stored array is that name, which the
    tests are checked against; ``a.b[i]`` or ``x[i][j]`` store into something else)."""
    return isinstance(target, cst.Name) or (isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name))


def _parenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    """``node`` as an operand of a conditional expression (its own parentheses where it binds
    more loosely: a lambda, a conditional, an unparenthesised tuple, an assignment expression)."""
    loose = (cst.IfExp, cst.Lambda, cst.NamedExpr, cst.Tuple, cst.Yield)
    if isinstance(node, loose) and not node.lpar:
        return node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return node


def _classify(statement: cst.BaseStatement, loop_vars: set[str]) -> Step:
    if isinstance(statement, cst.If):
        body = statement.body
        if (
            statement.orelse is None
            and isinstance(body, cst.IndentedBlock)
            and len(body.body) == 1
            and m.matches(body.body[0], m.SimpleStatementLine(body=[m.Continue()]))
        ):
            return Step(StepKind.GUARD, statement, condition=statement.test)
        return Step(StepKind.BRANCH, statement)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return Step(StepKind.OTHER, statement)
    small = statement.body[0]
    if isinstance(small, cst.Assign) and len(small.targets) == 1:
        target = flat_subscript(small.targets[0].target)
        if isinstance(target, (cst.Tuple, cst.List)) and target_names(target) and all(
            isinstance(e.value, cst.Name) for e in target.elements
        ):
            # ``h, w = x[i].shape``: a temporary of several names (lifted when loop-invariant)
            return Step(StepKind.TEMP, statement, small, None, small.value)
        if isinstance(target, cst.Name):
            value = small.value
            if isinstance(value, cst.BinaryOperation) and m.matches(value.left, m.Name(target.value)) and target.value not in names_used(value.right):
                return Step(StepKind.ACCUMULATE, statement, small, target.value, value.right, operator=value.operator)
            return Step(StepKind.TEMP, statement, small, target.value, value)
        if isinstance(target, cst.Subscript) and isinstance(target.value, cst.Name) and _uses_any(target, loop_vars):
            return Step(StepKind.STORE, statement, small, target.value.value, small.value, tuple(target.slice), subscript=target)
        return Step(StepKind.OTHER, statement, small)
    if isinstance(small, cst.AugAssign):
        operator = _binary_of(small.operator)
        target = flat_subscript(small.target)
        if isinstance(target, cst.Name) and operator is not None:
            return Step(StepKind.ACCUMULATE, statement, small, target.value, small.value, operator=operator)
        if (
            isinstance(target, cst.Subscript)
            and isinstance(target.value, cst.Name)
            and operator is not None
            and _uses_any(target, loop_vars)
        ):
            return Step(StepKind.STORE, statement, small, target.value.value, small.value, tuple(target.slice),
                        subscript=target, operator=operator)
        return Step(StepKind.OTHER, statement, small)
    if (
        isinstance(small, cst.Expr)
        and m.matches(small.value, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("append")), args=[m.Arg(keyword=None, star="")]))
    ):
        call = small.value
        assert isinstance(call, cst.Call) and isinstance(call.func, cst.Attribute) and isinstance(call.func.value, cst.Name)
        return Step(StepKind.APPEND, statement, small, call.func.value.value, call.args[0].value)
    return Step(StepKind.OTHER, statement, small)


def flat_subscript(target: cst.BaseExpression) -> cst.BaseExpression:
    """``x[i][j]`` as ``x[i, j]`` (each link one index, no slice): the same element of a tensor or
    an ndarray. (A list of lists differs; the checker, which builds lists, tells.)"""
    if not isinstance(target, cst.Subscript) or not isinstance(target.value, cst.Subscript):
        return target
    inner = flat_subscript(target.value)
    if not isinstance(inner, cst.Subscript) or not isinstance(inner.value, cst.Name):
        return target
    if any(not isinstance(e.slice, cst.Index) for e in (*inner.slice, *target.slice)):
        return target
    return inner.with_changes(slice=[*inner.slice, *target.slice])


def _effects(loop: cst.CSTNode, context: ModuleContext | None) -> list[str]:
    """Calls in the loop body that draw random numbers or act on the world: once per step, they
    cannot become one batched call (nor be computed once, even when they read nothing per
    sample)."""
    from torchfix.codemods.loops import callees

    found = []
    for node in _walk(loop):
        if not isinstance(node, cst.Call):
            continue
        qualified = context.qualified(node.func) if context is not None else None
        row = callees.of_call(node.func, qualified)
        if row is None and m.matches(node.func, m.Attribute(value=m.Name("random"))):
            # Python's own `random` module (never bound for kernels): every call draws or reseeds
            row = callees.Callee(callees.Batching.RANDOM)
        if row is not None and row.batching is callees.Batching.RANDOM:
            found.append(f"the body draws random numbers (`{qualified or code_of_call(node)}`): batching would reorder the draws")
        elif row is not None and row.batching is callees.Batching.EFFECT and not _is_append(node):
            found.append(f"the body has an effect per step (`{code_of_call(node)}`)")
    return found


def code_of_call(node: cst.Call) -> str:
    from torchfix.codemods.loops.nodes import code_of

    return code_of(node.func)


def _is_append(node: cst.Call) -> bool:
    return isinstance(node.func, cst.Attribute) and node.func.attr.value == "append"


IN_HANDLER = "the loop runs where the function catches errors (`try` / `except`, `contextlib.suppress`, a `with` that may): where it raises is part of what the function does"


#: context managers that swallow the errors their block raises, by their last name
#: (`contextlib.suppress`, `pytest.raises`, `self.assertRaises`; an `ExitStack` may hold one)
_CATCHING_MANAGERS = frozenset({"suppress", "raises", "assertRaises", "assertRaisesRegex", "assertWarns", "ExitStack",
                                "AsyncExitStack", "assert_raises", "assert_raises_regex"})
#: what `contextlib` exports that never swallows an error
_PLAIN_CONTEXTLIB = frozenset({"nullcontext", "closing", "aclosing", "redirect_stdout", "redirect_stderr", "chdir",
                               "contextmanager", "asynccontextmanager"})


def _catches(manager: cst.BaseExpression, context: ModuleContext) -> bool:
    """Whether a ``with`` item may swallow an error of its block: a catching manager by name, any
    name imported from ``contextlib`` under an alias (``from contextlib import suppress as
    ignore``), or a manager held in a variable (``sup = contextlib.suppress(...)``) that is not
    torch's."""
    func = manager.func if isinstance(manager, cst.Call) else manager
    last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
    if last in _CATCHING_MANAGERS:
        return True
    if isinstance(func, cst.Name) and context.imported_from("contextlib", func.value) not in (None, *_PLAIN_CONTEXTLIB):
        return True
    if not isinstance(manager, cst.Call):
        return not (context.qualified(manager) or "").startswith("torch.")
    return False


def _swallows(block: cst.BaseSuite | None) -> bool:
    """Whether a ``finally`` block leaves by ``return`` / ``break`` / ``continue``: that drops the
    error the ``try`` body raised."""
    if block is None:
        return False
    stack: list[cst.CSTNode] = [block]
    while stack:
        node = stack.pop()
        if isinstance(node, (cst.Return, cst.Break, cst.Continue)):
            return True
        if not isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            stack.extend(node.children)
    return False


def inside_handler(node: cst.CSTNode, context: ModuleContext) -> bool:
    """Whether ``node`` runs where its function catches errors: in the body of a ``try`` with
    ``except`` clauses, or of ``with contextlib.suppress(...)`` (or ``pytest.raises``). There an error the code raises
    is behaviour the function shows, not an input it rejects -- and the checker compares only
    runs on which the old code does not raise. (An error caught by a caller is outside what
    any check of the function can see.)"""
    child, parent = node, context.parents.get(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.Module)):
        if isinstance(parent, (cst.Try, cst.TryStar)):
            if child is parent.body and parent.handlers:
                return True
            # a `finally` that returns drops an error of the body, of a handler and of `else`
            if child is not parent.finalbody and _swallows(parent.finalbody.body if parent.finalbody is not None else None):
                return True
        if isinstance(parent, cst.With) and child is parent.body and any(_catches(item.item, context) for item in parent.items):
            return True
        child, parent = parent, context.parents.get(parent)
    return False


def _blockers(loop: cst.For, steps: Sequence[Step], domain: Domain, per_sample: set[str], context: ModuleContext | None = None) -> list[str]:
    found: list[str] = _effects(loop.body, context)
    if context is not None and inside_handler(loop, context):
        # the checker compares runs where the old code does not raise; a handler around the loop
        # turns a raise into a result, which a batched form may not reproduce
        found.append(IN_HANDLER)
    escapes = [e for e in escaping_control_flow(loop.body) if e != "continue"]
    if escapes:
        found.append(f"the loop can leave early or rebind names outside (`{escapes[0]}`)")
    loop_vars = set(domain.variables)
    assigned_in_body = assigned_names(loop.body)
    rebound = loop_vars & assigned_in_body
    if rebound:
        found.append(f"the body assigns the loop variable `{sorted(rebound)[0]}`")
    # a temporary read before the body assigns it reads the previous iteration's value
    seen: set[str] = set()
    temporaries = {s.target for s in steps if s.kind is StepKind.TEMP and s.target}
    for step in steps:
        reads = names_used(step.value) if step.value is not None else names_used(step.statement)
        early = (reads & temporaries) - seen
        if step.kind is StepKind.ACCUMULATE:
            early.discard(step.target or "")
        if early:
            found.append(f"`{sorted(early)[0]}` is read before the body assigns it: each step depends on the previous one")
            break
        if step.kind is StepKind.TEMP and step.target:
            seen.add(step.target)
    # accumulators, stored tensors and lists must not be read elsewhere in the body
    for step in steps:
        if step.kind not in (StepKind.ACCUMULATE, StepKind.STORE, StepKind.APPEND) or not step.target:
            continue
        for other in steps:
            if other is step:
                continue
            guard = other.kind is StepKind.GUARD and other.condition is not None
            # a guard's statement may hold the guarded steps themselves: only its test is read
            read = other.condition if guard else other.statement
            if step.target in names_used(read):  # type: ignore[arg-type]
                if _metadata_reads(read, step.target) == sum(1 for n in name_nodes(read) if n.value == step.target):  # type: ignore[arg-type]
                    continue  # only its device, dtype or shape: what the writes do not change
                if step.kind is StepKind.STORE and other.kind is StepKind.STORE and other.target == step.target:
                    if _apart(step.subscript, other.subscript):
                        continue  # two stores into one output (out[i, 0] = ..., out[i, 1] = ...)
                    # `out[i] = a; out[i + 7] = b`: a later step overwrites what an earlier one
                    # stored, an order the batched stores do not keep
                    found.append(f"two stores into `{step.target}` may write one element in different steps")
                    break
                if step.kind is StepKind.STORE and guard and _reads_only_at(other.condition, step.target, step.subscript):  # type: ignore[arg-type]
                    continue  # the test reads the sample's own element: `if t[i] == 0: t[i] = ...`
                found.append(f"`{step.target}` is read inside the loop while the loop writes it")
                break
        if step.kind is StepKind.STORE and step.value is not None and step.target in names_used(step.value):
            target = step.subscript
            reads = [n for n in _subscripts_of(step.value, step.target)]
            if any(not (same_code(r, target) or _unwritten_row(r, target, domain, loop_vars)) for r in reads) or len(reads) != sum(
                1 for n in name_nodes(step.value) if n.value == step.target
            ) - _metadata_reads(step.value, step.target):
                found.append(f"`{step.target}` is read at another position than the one the loop writes")
    return found


#: attributes that read what a store into elements leaves alone (``w.size(3)``, ``w.device``)
_METADATA = frozenset({"size", "shape", "device", "dtype", "ndim", "dim"})


def _apart(first: cst.Subscript | None, second: cst.Subscript | None) -> bool:
    """Whether two stores of a step write the same elements (the same subscript, in order) or
    elements no step of the other writes: distinct integer literals at some position."""
    if first is None or second is None:
        return False
    if same_code(first, second):
        return True
    for a, b in zip(first.slice, second.slice):
        left = int_literal(a.slice.value) if isinstance(a.slice, cst.Index) else None
        right = int_literal(b.slice.value) if isinstance(b.slice, cst.Index) else None
        if left is not None and right is not None and left != right and left >= 0 and right >= 0:
            return True
    return False


def _metadata_reads(value: cst.BaseExpression, target: str) -> int:
    """How many times ``value`` reads ``target`` only for its shape, device or dtype."""
    return sum(
        1 for node in _walk(value)
        if isinstance(node, cst.Attribute) and node.attr.value in _METADATA and m.matches(node.value, m.Name(target))
    )


def _unwritten_row(read: cst.Subscript, store: cst.BaseExpression | None, domain: Domain, loop_vars: set[str]) -> bool:
    """``w[0, 0]`` read by a loop that stores ``w[c, 0] = ...`` for ``c`` in ``range(1, n)``: a
    row before the first one written, indexed by constants, so every step reads the same,
    never-written value (a broadcast of it is the same)."""
    if not isinstance(store, cst.Subscript) or not store.slice or domain.index is None:
        return False
    first = store.slice[0].slice
    if not (isinstance(first, cst.Index) and m.matches(first.value, m.Name(domain.index))):
        return False
    if not read.slice or not isinstance(read.slice[0].slice, cst.Index):
        return False
    row = int_literal(read.slice[0].slice.value)
    return row is not None and 0 <= row < domain.start and not (names_used(read) & loop_vars)


def _reads_only_at(node: cst.CSTNode, name: str, position: cst.CSTNode | None) -> bool:
    """Whether every read of ``name`` in ``node`` is the subscript ``position`` (``t[i]``)."""
    reads = _subscripts_of(node, name)
    return position is not None and all(same_code(r, position) for r in reads) and len(reads) == sum(
        1 for n in name_nodes(node) if n.value == name
    )


def _subscripts_of(node: cst.CSTNode, name: str) -> list[cst.Subscript]:
    return [n for n in _walk(node) if isinstance(n, cst.Subscript) and m.matches(n.value, m.Name(name))]


def _per_sample(steps: Sequence[Step], loop_vars: set[str]) -> set[str]:
    names = set(loop_vars)
    changed = True
    while changed:  # a temporary fed by a later temporary is still per-sample (a blocker says why)
        changed = False
        for step in steps:
            if step.kind is StepKind.TEMP and step.target and step.target not in names and step.value is not None:
                if names_used(step.value) & names:
                    names.add(step.target)
                    changed = True
    return names


def _stored_names(scope: cst.CSTNode) -> set[int]:
    """ids of the Name nodes that are only written (assignment and loop targets), not read."""
    written: set[int] = set()

    def targets(node: cst.BaseExpression) -> None:
        if isinstance(node, cst.Name):
            written.add(id(node))
        elif isinstance(node, (cst.Tuple, cst.List)):
            for element in node.elements:
                targets(element.value)
        elif isinstance(node, cst.StarredElement):
            targets(node.value)

    for node in _walk(scope):
        if isinstance(node, cst.AssignTarget):
            targets(node.target)
        elif isinstance(node, (cst.For, cst.CompFor)):
            targets(node.target)
        elif isinstance(node, cst.AnnAssign):
            targets(node.target)
    return written


class ReadOutside:
    """Names whose value the loop leaves behind may be read: reads outside the loop, except
    reads that see another binding -- inside another loop or comprehension whose target binds
    the name, or before the loop in a function where no enclosing loop runs it again.

    Asked name by name (``name in facts.read_outside``), and each answer reads only that name's
    occurrences: the rules ask about the few names a loop binds, and the set of every name read
    around each loop of a long function made its scan quadratic."""

    def __init__(self, loop: cst.For, scope: cst.CSTNode, context: ModuleContext) -> None:
        self.loop, self.scope, self.context = loop, scope, context
        self._answers: dict[str, bool] = {}
        self._inside: set[int] | None = None
        in_outer_loop = False
        current: cst.CSTNode | None = context.parents.get(loop)
        while current is not None and current is not scope:
            if isinstance(current, (cst.For, cst.While)):
                in_outer_loop = True
            current = context.parents.get(current)
        self._in_outer_loop = in_outer_loop

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        answer = self._answers.get(name)
        if answer is None:
            answer = self._answers[name] = self._read(name)
        return answer

    def _read(self, name: str) -> bool:
        loop, scope, context = self.loop, self.scope, self.context
        if self._inside is None:
            self._inside = {id(n) for n in name_nodes(loop)} | context.once(
                "stored names", scope, lambda: _stored_names(scope)
            )
        # the walk's order, not positions (a whole-module code generation): a name outside the
        # loop ranks below it exactly when its statement comes first -- or, conservatively, never,
        # for the few fields LibCST lists after a body they precede (decorators, annotations, bases)
        order = context.nodes.order
        loop_rank = order.get(id(loop))
        for node in context.once("names by value", scope, lambda: _names_by_value(scope)).get(name, ()):
            if id(node) in self._inside:
                continue
            if _rebound_around(node, loop, scope, context):
                continue
            if not self._in_outer_loop and loop_rank is not None and order.get(id(node), loop_rank) < loop_rank:
                continue
            return True
        return False


def _names_by_value(scope: cst.CSTNode) -> dict[str, list[cst.Name]]:
    """The names ``scope`` uses as variables (:func:`name_nodes`), grouped by spelling."""
    grouped: dict[str, list[cst.Name]] = {}
    for node in name_nodes(scope):
        grouped.setdefault(node.value, []).append(node)
    return grouped


def _rebound_around(read: cst.Name, loop: cst.CSTNode, scope: cst.CSTNode, context: ModuleContext) -> bool:
    """Whether ``read`` sits in the body of another ``for`` or comprehension that binds its name."""
    current: cst.CSTNode | None = context.parents.get(read)
    child: cst.CSTNode = read
    while current is not None and current is not scope:
        if current is not loop:
            if isinstance(current, cst.For) and child is not current.iter and read.value in target_names(current.target):
                return True
            if isinstance(current, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)) and (
                read.value in comprehension_variables(current)
            ):
                return True
        child = current
        current = context.parents.get(current)
    return False


def loop_facts(
    loop: cst.For, context: ModuleContext, wanted: Callable[[tuple[Step, ...], Domain], bool] | None = None,
) -> LoopFacts | None:
    """The facts of ``loop``; None when it does not iterate a domain the model knows, or when
    ``wanted`` says its body steps are none of the caller's business. ``wanted`` is asked before
    the costly facts (ranks the flow pins, blockers, reads outside): most loops of a real tree
    are not the kind of loop a rule lifts, and they paid for all of them."""
    function = context.enclosing_function(loop)
    shapes = shape_facts(function, context)
    if not isinstance(loop.body, cst.IndentedBlock):
        return None
    sketch = loop_domain(loop, shapes.measures.get, context.qualified)
    if sketch is None:
        return None
    steps = _body_steps(loop.body.body, set(sketch.variables))
    if wanted is not None and not wanted(steps, sketch):
        return None
    shapes = _with_flow_ranks(shapes, loop, function, context)
    # (the domain again, for the measures the flow keeps; its variables are the loop target's
    # names, which no measure changes, so the steps stand)
    domain = loop_domain(loop, shapes.measures.get, context.qualified)
    assert domain is not None
    loop_vars = set(domain.variables)
    per_sample = _per_sample(steps, loop_vars)
    blockers = _blockers(loop, steps, domain, per_sample, context)
    blockers += _enclosing_variables(loop, context)
    scope = function if function is not None else context.module
    read_outside = ReadOutside(loop, scope, context)
    return LoopFacts(loop, context, domain, function, steps, frozenset(per_sample), tuple(blockers), shapes, read_outside, loop)


def pinned_ranks(node: cst.CSTNode, context: ModuleContext) -> dict[str, int]:
    """The ranks the enclosing function's code pins right before the statement that holds
    ``node`` (a loop, or a comprehension in a line): those a shape unpacking pins (``n, d =
    x.shape``) and those the flow follows (``t = t.view(-1)``, ``hist = torch.zeros(k)`` with
    ``k`` a number); none outside a function."""
    statement = context.statement_of(node)
    function = context.enclosing_function(node)
    if statement is None or function is None:
        return {}
    return dict(_with_flow_ranks(shape_facts(function, context), statement, function, context).ranks)


def pinned_ranks_in(wrapper: "MetadataWrapper") -> Callable[[cst.CSTNode], dict[str, int]]:
    """:func:`pinned_ranks` for the nodes of one module, for the rules that are not built on the
    loop model: the model is built on the first call (``ModuleContext.of`` keeps it), so a
    module where no rule matched never pays for it."""
    return lambda node: pinned_ranks(node, ModuleContext.of(wrapper))


def _with_flow_ranks(shapes: ShapeFacts, statement: cst.CSTNode, function: cst.FunctionDef | None, context: ModuleContext) -> ShapeFacts:
    """``shapes`` with the ranks the function's code pins right before ``statement``
    (``codemods.loops.ranks``); a rank a shape unpacking pins stands."""
    if function is None:
        return shapes
    from torchfix.codemods.loops.ranks import ranks_at

    flow = ranks_at(statement, function, context, frozenset(shapes.numbers) | frozenset(shapes.measures))
    # a size measures its array at the loop only where neither was bound again since, nor the
    # array resized in place (`n = len(x); x = x[:2]`: `range(n)` no longer walks all of `x`)
    measures = {size: measured for size, measured in shapes.measures.items() if flow.measures.get(size) == measured[0]}
    return replace(shapes, ranks={**flow.ranks, **shapes.ranks}, bools=flow.bools, dtypes=flow.dtypes, lengths=flow.lengths, measures=measures)


def _enclosing_variables(loop: cst.CSTNode, context: ModuleContext) -> list[str]:
    """Why ``loop`` cannot be checked where it reads a variable of a comprehension or a lambda
    around it (``[torch.cat([a[i] for i in range(n)]) for a in ys]``): the kernel would take the
    function's binding of that name (or draw it), not the one the loop sees."""
    read = names_used(loop)
    current = context.parents.get(loop)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.Module, cst.ClassDef)):
        bound: set[str] = set()
        if isinstance(current, (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)):
            bound = comprehension_variables(current)
        elif isinstance(current, cst.Lambda):
            bound = {p.name.value for p in (*current.params.params, *current.params.posonly_params, *current.params.kwonly_params)}
            for star in (current.params.star_arg, current.params.star_kwarg):
                if isinstance(star, cst.Param):
                    bound.add(star.name.value)
        shadowed = sorted(read & bound)
        if shadowed:
            return [f"the loop reads `{shadowed[0]}`, a variable of a comprehension or lambda around it"]
        current = context.parents.get(current)
    return []


def lifted_inner_loop(facts: LoopFacts) -> cst.For | None:
    """The inner loop of a loop lifted together with it (``ladder.nested``): the loop's own body
    is that one loop, which its steps -- the inner loop's batched statements -- stand for."""
    loop = facts.loop
    if isinstance(loop, cst.For) and isinstance(loop.body, cst.IndentedBlock) and len(loop.body.body) == 1:
        inner = loop.body.body[0]
        if isinstance(inner, cst.For) and all(step.statement is not inner for step in facts.steps):
            return inner
    return None


def loop_counts(facts: LoopFacts) -> frozenset[str]:
    """The names ``range(n)`` counts with where no size measures them -- the loop's own and,
    lifted together with it, its inner loop's: the kernel draws each as a Python int (a loop
    count), so the lift may treat it as one number."""
    domains = [facts.domain]
    inner = lifted_inner_loop(facts)
    if inner is not None:
        inner_domain = loop_domain(inner, facts.shapes.measures.get, facts.context.qualified)
        if inner_domain is not None:
            domains.append(inner_domain)
    return frozenset(d.stop.value for d in domains if isinstance(d.stop, cst.Name) and d.measures is None)


def with_body(facts: LoopFacts, body: Sequence[cst.BaseStatement], inner_walked: dict[str, int] | None = None,
              double_index: bool = False) -> LoopFacts:
    """``facts`` of the same loop, as if its body were ``body`` (statements not in the module):
    how a loop over two indices is lifted, the inner loop first and then the outer one over
    the inner loop's batched statements."""
    loop_vars = set(facts.domain.variables)
    steps = _body_steps(body, loop_vars)
    per_sample = _per_sample(steps, loop_vars)
    synthetic = facts.loop.with_changes(body=cst.IndentedBlock(body=list(body))) if isinstance(facts.loop, cst.For) else facts.loop
    blockers = _blockers(synthetic, steps, facts.domain, per_sample, facts.context)  # type: ignore[arg-type]
    if IN_HANDLER not in blockers and inside_handler(facts.loop, facts.context):
        blockers.append(IN_HANDLER)  # the synthetic loop has no place in the module to look from
    return replace(facts, steps=steps, per_sample=frozenset(per_sample), blockers=tuple(blockers),
                   inner_walked=tuple(sorted((inner_walked or {}).items())), double_index=double_index)


def comprehension_facts(comprehension: cst.ListComp | cst.GeneratorExp, context: ModuleContext) -> LoopFacts | None:
    """The facts of a comprehension, as a loop whose body appends its element: one clause, no
    filters (they are guards, not lifted yet)."""
    clause = comprehension.for_in
    if clause.inner_for_in is not None:
        return None
    function = context.enclosing_function(comprehension)
    shapes = shape_facts(function, context)
    statement = context.statement_of(comprehension)
    if statement is None or loop_domain(clause, shapes.measures.get, context.qualified) is None:
        return None
    shapes = _with_flow_ranks(shapes, statement, function, context)
    domain = loop_domain(clause, shapes.measures.get, context.qualified)
    assert domain is not None
    blockers = _effects(comprehension.elt, context)
    blockers += _enclosing_variables(comprehension, context)
    if inside_handler(comprehension, context):
        blockers.append(IN_HANDLER)
    if any(isinstance(n, (cst.NamedExpr, cst.Yield, cst.Await, cst.Lambda)) for n in _walk(comprehension.elt)):
        blockers.append("the element binds names or yields")
    filters = tuple(Step(StepKind.GUARD, statement, condition=f.test, keeps=True) for f in clause.ifs)  # type: ignore[arg-type]
    step = Step(StepKind.APPEND, statement, None, None, comprehension.elt)  # type: ignore[arg-type]
    return LoopFacts(comprehension, context, domain, function, (*filters, step), frozenset(domain.variables), tuple(blockers),
                     shapes, frozenset(), statement)


def _only_item_reads(body: cst.CSTNode, name: str) -> bool:
    """Whether every use of ``name`` in a loop's ``body`` reads one item of it (``name[...]``),
    never a store into it, a method of it or the name alone (which may reach code that changes
    it)."""
    reads = 0
    for node in _walk(body):
        if isinstance(node, cst.Subscript) and m.matches(node.value, m.Name(name)):
            reads += 1
        if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign, cst.Del)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            if any(name in names_used(t) for t in targets):
                return False
    return reads == sum(1 for n in name_nodes(body) if n.value == name)

