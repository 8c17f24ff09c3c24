"""A masked reduction swept over thresholds: one comparison against all of them at once.

Evaluation code samples a curve at fixed thresholds -- PASCAL VOC's 11-point average precision
is the form copied into most detection repositories::

    for t in np.arange(0., 1.1, 0.1):
        if np.sum(rec >= t) == 0:
            p = 0
        else:
            p = np.max(prec[rec >= t])
        ap = ap + p / 11.

Each step compares the whole of ``rec`` with one threshold and reduces the ``prec`` values it
selects. The engine's lift batches per-sample values; here the per-step value is the comparison
of an array of any rank against a number, so the batch is the comparison against every
threshold at once (thresholds along a new first axis), and the selection becomes a fill::

    thresholds = np.arange(0., 1.1, 0.1)
    reached = rec >= thresholds.reshape((-1,) + (1,) * np.ndim(rec))
    if reached.any():
        p = np.where(reached.reshape(...), prec, -np.inf).reshape(len(thresholds), -1).max(1)
        p[~reached.reshape(len(thresholds), -1).any(1)] = 0
        ap = ap + (p / 11.).sum()

Why each part is there:

- ``reshape((-1,) + (1,) * np.ndim(rec))``: the thresholds broadcast against ``rec`` whatever its
  rank (a number, a vector, a grid), as each step's comparison did.
- ``if reached.any():``: where no threshold is reached the loop never evaluates ``prec[...]``
  (which may raise for it), and adds a Python ``0 / 11.`` each step, which leaves a Python float
  accumulator a Python float. The batched reduction would make it a NumPy scalar.
- the second ``reshape`` gives the selection mask the trailing axes ``prec`` has beyond
  ``rec``'s: ``prec[mask]`` selects rows there, and the reduction covers their elements.
- ``-np.inf`` (``np.inf`` for a minimum) fills what a step does not select; a step that
  selects nothing takes the loop's own value for it (only 0, so that the rows it adds are 0).

Only NumPy thresholds made by ``np.arange`` / ``np.linspace`` are swept: their elements are
float64 scalars, which NumPy compares like the float64 array of them (a list of Python floats
compares in the other operand's dtype, which one array of them does not). The checker decides
the rest: every kind and rank of the operands the old code runs on.
"""

from __future__ import annotations

from dataclasses import replace

import libcst as cst
import libcst.matchers as m
from libcst.helpers import parse_template_expression, parse_template_statement

from torchfix.codemods.base import Edit
from torchfix.codemods.loops.domain import Domain
from torchfix.codemods.analysis import BOUND_TARGET, all_nodes, comments_in, parameter_names, target_names
from torchfix.codemods.loops.facts import LoopFacts, Step, StepKind, _walk
from torchfix.codemods.loops.module import shadowed_builtins
from torchfix.codemods.loops.kernels import UnfaithfulKernel, build_kernel, is_replayable
from torchfix.codemods.loops.nodes import code_of, is_number, method, names_used, receiver, same_code
from torchfix.codemods.loops.rewrite import CannotRewrite, LoopRewrite, _fresh_name
from torchfix.equivalence.kernel import InputSpec, Kind

#: the threshold sources swept: NumPy's float64 ranges
_THRESHOLDS = frozenset({"numpy.arange", "numpy.linspace"})
#: reductions of a selection, and the fill that leaves unselected elements out of them
_FILLS = {"max": "-", "amax": "-", "min": "", "amin": ""}
#: comparisons a threshold mask is written with
_COMPARISONS = (cst.GreaterThan, cst.GreaterThanEqual, cst.LessThan, cst.LessThanEqual)


class _Sweep:
    """The parts of a recognised sweep, as written."""

    def __init__(self, threshold: str, source: cst.BaseExpression, value: str, mask: cst.Comparison,
                 selected: cst.BaseExpression, reducer: str, accumulator: cst.BaseExpression, addend: cst.BaseExpression,
                 accumulate: Step) -> None:
        self.threshold = threshold
        self.source = source
        #: the name each step binds the reduction (or its miss value) to
        self.value = value
        #: ``rec >= t``, as the loop writes it
        self.mask = mask
        #: ``prec``: the array the mask selects from
        self.selected = selected
        self.reducer = reducer
        #: ``ap`` or ``ap[l]``: what the steps add to
        self.accumulator = accumulator
        #: what each step adds to the accumulator (``p / 11.``)
        self.addend = addend
        self.accumulate = accumulate


def looks_like_a_sweep(steps: tuple[Step, ...], domain: Domain) -> bool:
    """The cheap shape test: one walked element and no index, a temporary then one addition."""
    return (
        domain.index is None and len(domain.walked) == 1 and len(steps) == 2 and steps[0].kind is StepKind.TEMP
        and isinstance(steps[0].value, cst.IfExp) and _accumulation(steps[1]) is not None
    )


def sweeps_thresholds(facts: LoopFacts) -> bool:
    """Whether the loop walks the elements of a 1-D ``np.arange`` or ``np.linspace``: NumPy
    scalars, each of the array's own dtype, which compare like that array does. (``linspace``
    with array endpoints makes rows; ``retstep=True`` a pair: only number literals there.)"""
    walked = facts.domain.walked
    if len(walked) != 1 or walked[0].keepdim:
        return False
    source = walked[0].source
    if isinstance(source, cst.Name):
        source = _named_range(facts, source.value)
    if not isinstance(source, cst.Call):
        return False
    called = facts.context.qualified(source.func)
    if called not in _THRESHOLDS or any(a.star for a in source.args):
        return False
    keywords = {a.keyword.value for a in source.args if a.keyword is not None}
    if called == "numpy.arange":
        return keywords <= {"dtype"}
    positional = [a.value for a in source.args if a.keyword is None]
    return keywords <= {"num", "dtype"} and len(positional) <= 3 and all(_number(v) for v in positional)


def _named_range(facts: LoopFacts, name: str) -> cst.BaseExpression | None:
    """What ``name`` is bound to, where the function binds it once, before the loop, and reads
    it only as this loop's iterable, in ``len(name)`` or as ``name[...]``: a name nothing can
    reshape or rebind in between (``thresholds = np.linspace(0, 1, 11)`` above the loop)."""
    function = facts.function
    if function is None or _bindings(function, name) != 1:
        return None
    definition = facts.definition(name)
    if definition is None:
        return None
    context = facts.context
    for node in all_nodes(function.body):
        if not (isinstance(node, cst.Name) and node.value == name):
            continue
        parent = context.parents.get(node)
        if isinstance(parent, cst.AssignTarget) and parent.target is node and parent in definition.statement.body[0].targets:  # type: ignore[attr-defined]
            continue
        if parent is facts.loop and isinstance(parent, cst.For) and parent.iter is node:
            continue
        if isinstance(parent, cst.Arg) and "len" not in shadowed_builtins(context) and m.matches(
            context.parents.get(parent), m.Call(func=m.Name("len"), args=[m.Arg()])
        ):
            continue
        if isinstance(parent, cst.Subscript) and parent.value is node and not _stored(parent, context):
            continue
        return None
    return definition.value


def _stored(node: cst.CSTNode, context) -> bool:  # noqa: ANN001
    """Whether ``node`` is written: an assignment, augmented assignment or ``del`` target."""
    parent = context.parents.get(node)
    return (isinstance(parent, cst.AssignTarget) and parent.target is node) or (
        isinstance(parent, (cst.AugAssign, cst.AnnAssign)) and parent.target is node) or isinstance(parent, (cst.Del, cst.Element))


def _number(node: cst.BaseExpression) -> bool:
    """A number literal, or minus one."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _accumulation(step: Step) -> tuple[cst.BaseExpression, cst.BaseExpression] | None:
    """(the accumulator as written, the addend) of ``acc += v`` / ``acc = acc + v`` /
    ``acc[k] += v``; None for any other step."""
    if step.kind is StepKind.ACCUMULATE and isinstance(step.operator, (cst.Add, cst.Subtract)) and step.value is not None:
        assert step.target is not None
        return cst.Name(step.target), step.value
    small = step.small
    if step.kind is StepKind.OTHER and isinstance(small, cst.AugAssign) and isinstance(small.operator, (cst.AddAssign, cst.SubtractAssign)):
        if m.matches(small.target, m.Subscript(value=m.Name())):
            return small.target, small.value
    return None


def _mask_of_count(test: cst.BaseExpression, qualified) -> tuple[cst.Comparison, bool] | None:  # noqa: ANN001
    """The mask a test counts, and whether the test is true where the mask selects nothing:
    ``np.sum(m) == 0``, ``m.sum() == 0``, ``np.count_nonzero(m) == 0``, ``not m.any()`` (empty),
    ``np.sum(m) > 0``, ``np.sum(m) != 0``, ``m.any()`` (not empty)."""
    empty_when_true = False
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        test, empty_when_true = test.expression, True
    counted: cst.BaseExpression | None = None
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1:
        target = test.comparisons[0]
        if not (isinstance(target.comparator, cst.Integer) and target.comparator.value == "0"):
            return None
        operator = target.operator
        if isinstance(operator, cst.Equal):
            flips = True
        elif isinstance(operator, (cst.NotEqual, cst.GreaterThan)):
            flips = False
        else:
            return None
        counted = _counted(test.left, qualified, ("sum", "count_nonzero"))
        empty_when_true = empty_when_true != flips
    else:
        counted = _counted(test, qualified, ("any",))
    if not isinstance(counted, cst.Comparison):
        return None
    return counted, empty_when_true


def _counted(node: cst.BaseExpression, qualified, reducers: tuple[str, ...]) -> cst.BaseExpression | None:  # noqa: ANN001
    """``m`` of ``np.sum(m)`` / ``m.sum()`` (for the reducers named), else None."""
    if not isinstance(node, cst.Call):
        return None
    func = node.func
    if not isinstance(func, cst.Attribute) or func.attr.value not in reducers:
        return None
    if qualified(func) == f"numpy.{func.attr.value}":
        if len(node.args) == 1 and node.args[0].keyword is None and not node.args[0].star:
            return _unparenthesized(node.args[0].value)
        return None
    if node.args or qualified(func.value):
        return None
    return _unparenthesized(func.value)


def _unparenthesized(node: cst.BaseExpression) -> cst.BaseExpression:
    return node.with_changes(lpar=(), rpar=()) if getattr(node, "lpar", None) else node


def _reduction(node: cst.BaseExpression, qualified) -> tuple[str, cst.BaseExpression, cst.BaseExpression] | None:  # noqa: ANN001
    """(reducer, selected array, mask) of ``np.max(x[m])`` / ``x[m].max()``, else None."""
    if not isinstance(node, cst.Call) or not isinstance(node.func, cst.Attribute):
        return None
    reducer = node.func.attr.value
    if reducer not in _FILLS:
        return None
    if qualified(node.func) == f"numpy.{reducer}":
        if len(node.args) != 1 or node.args[0].keyword is not None or node.args[0].star:
            return None
        selection = _unparenthesized(node.args[0].value)
    elif not node.args and reducer in ("max", "min") and not qualified(node.func.value):
        selection = _unparenthesized(node.func.value)
    else:
        return None
    if not (isinstance(selection, cst.Subscript) and len(selection.slice) == 1 and isinstance(selection.slice[0].slice, cst.Index)):
        return None
    return reducer, selection.value, _unparenthesized(selection.slice[0].slice.value)


def _zero(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Integer) and node.value == "0") or (isinstance(node, cst.Float) and float(node.value) == 0.0)


def _scaled(addend: cst.BaseExpression, value: str) -> bool:
    """``p``, ``p / c``, or ``p * c`` / ``c * p`` with a float ``c``, ``c`` a non-zero number
    literal: what each step adds is 0 where ``p`` is the miss value 0, so the steps that reach
    nothing add 0; and it is a float whatever ``p``'s dtype -- the batched ``p`` is a float array
    (the fill is an infinity), where a step's ``p`` of a uint8 array times an int wraps round."""
    if m.matches(addend, m.Name(value)):
        return True
    if not isinstance(addend, cst.BinaryOperation) or not isinstance(addend.operator, (cst.Divide, cst.Multiply)):
        return False
    left, right = addend.left, addend.right
    if isinstance(addend.operator, cst.Multiply) and m.matches(right, m.Name(value)):
        left, right = right, left
    if isinstance(addend.operator, cst.Multiply) and not isinstance(right, cst.Float):
        return False
    # (a literal: `p / len(gt)` divides the miss value 0 too, a Python `0 / 0` that raises where
    # `len(gt)` is 0 -- a review found the sweep, which divides only what is reached, return nan)
    return m.matches(left, m.Name(value)) and is_number(right) and not _zero(right) and not isinstance(right, cst.UnaryOperation)


def recognise(facts: LoopFacts) -> _Sweep:
    """The sweep's parts; raises :class:`CannotRewrite` saying which part is missing."""
    loop, domain, context = facts.loop, facts.domain, facts.context
    if not isinstance(loop, cst.For) or facts.comprehension is not None or not looks_like_a_sweep(facts.steps, domain):
        raise CannotRewrite("not a threshold sweep", loop)
    if not sweeps_thresholds(facts):
        raise CannotRewrite("the thresholds are not an `np.arange` or `np.linspace`", loop)
    walked = domain.walked[0]
    source = walked.source
    temporary, accumulation = facts.steps
    found = _accumulation(accumulation)
    assert found is not None and isinstance(temporary.value, cst.IfExp) and temporary.target is not None
    accumulator, addend = found
    test = _mask_of_count(temporary.value.test, context.qualified)
    if test is None:
        raise CannotRewrite("the test does not count a threshold mask", temporary.statement)
    mask, empty_when_true = test
    miss, hit = (temporary.value.body, temporary.value.orelse) if empty_when_true else (temporary.value.orelse, temporary.value.body)
    if not _zero(miss):
        raise CannotRewrite("a step that selects nothing takes another value than 0", temporary.statement)
    reduction = _reduction(hit, context.qualified)
    if reduction is None or not same_code(reduction[2], mask):
        raise CannotRewrite("the reached values are not reduced by `max` or `min` of the same mask", temporary.statement)
    reducer, selected, _ = reduction
    threshold, value = walked.element, temporary.target
    if not _scaled(addend, value):
        raise CannotRewrite(f"the step adds something else than `{value}`, `{value} / c` or `{value} * c` with a float `c`",
                            accumulation.statement)
    compared = mask.comparisons[0]
    if len(mask.comparisons) != 1 or not isinstance(compared.operator, _COMPARISONS):
        raise CannotRewrite("the mask is not an order comparison", temporary.statement)
    operands = (mask.left, compared.comparator)
    if sum(m.matches(o, m.Name(threshold)) for o in operands) != 1:
        raise CannotRewrite(f"the mask does not compare `{threshold}` with an array", temporary.statement)
    # what the steps read besides the threshold is the same at every step: nothing the loop binds
    bound = {threshold, value, _root(accumulator)}
    slot = cst.Tuple([cst.Element(e.slice.value) for e in accumulator.slice if isinstance(e.slice, cst.Index)]) if (
        isinstance(accumulator, cst.Subscript)) else None
    if isinstance(accumulator, cst.Subscript) and (slot is None or len(slot.elements) != len(accumulator.slice)):
        raise CannotRewrite(f"`{code_of(accumulator)}` is not one element", accumulation.statement)
    array = operands[1] if m.matches(operands[0], m.Name(threshold)) else operands[0]
    for part in (array, selected, slot):
        if part is not None and names_used(part) & bound:
            raise CannotRewrite(f"`{code_of(part)}` changes from step to step", temporary.statement)
        # (evaluated once where the loop evaluated it at every step: no draw, no effect)
        if part is not None and not is_replayable(part, context):
            raise CannotRewrite(f"`{code_of(part)}` may do something at each step", temporary.statement)
    if isinstance(accumulator, cst.Subscript) and _float_array(facts, _root(accumulator)) is None:
        # an element of an integer array truncates what each `+=` adds, a step at a time; one
        # sum truncates once (the checker, drawing small values, may not tell them apart)
        raise CannotRewrite(f"nothing shows `{_root(accumulator)}` holds floats: an integer array truncates each step's `+=`",
                            accumulation.statement)
    if facts.function is None:
        # (at module or class level the loop's names are attributes other code may read)
        raise CannotRewrite("a sweep outside a function binds names other modules may read", loop)
    declared = {n.name.value for node in all_nodes(facts.function.body) if isinstance(node, (cst.Global, cst.Nonlocal)) for n in node.names}
    for name in (threshold, value):
        if facts.used_after(name) or name in declared:
            raise CannotRewrite(f"`{name}` is read after the loop", loop)
    if facts.blockers:
        raise CannotRewrite(facts.blockers[0], loop)
    return _Sweep(threshold, source, value, mask, selected, reducer, accumulator, addend, accumulation)


#: NumPy's allocators, float64 unless told otherwise
_ALLOCATORS = frozenset({"numpy.empty", "numpy.zeros", "numpy.ones"})
#: float dtypes as the allocators are told them
_FLOAT_DTYPES = {"float": "float64", "numpy.float64": "float64", "numpy.float32": "float32", "numpy.double": "float64",
                 "'float64'": "float64", "'float32'": "float32", '"float64"': "float64", '"float32"': "float32"}


def _float_array(facts: LoopFacts, name: str) -> str | None:
    """The float dtype of the array ``name`` where the code last binds it, before the loop, to
    ``np.empty(n)`` / ``np.zeros(n)`` / ``np.ones(n)`` (float64, or the float dtype they are
    given); else None. (Stores into its elements keep its dtype.)"""
    definition = facts.definition(name)
    if definition is None or not isinstance(definition.value, cst.Call) or facts.function is None:
        return None
    if _bindings(facts.function, name) != 1:
        # (rebound after the loop in an enclosing loop's body, `out = out.astype(int)` reaches
        # the next step of that loop: the allocation must be the name's only binding)
        return None
    allocation = definition.value
    if facts.context.qualified(allocation.func) not in _ALLOCATORS or not allocation.args or allocation.args[0].keyword is not None:
        return None
    dtype = "float64"
    for argument in allocation.args[1:]:
        if argument.star or argument.keyword is None or argument.keyword.value != "dtype":
            return None
        spelled = facts.context.qualified(argument.value) or code_of(argument.value)
        if spelled not in _FLOAT_DTYPES or (spelled == "float" and "float" in shadowed_builtins(facts.context)):
            return None
        dtype = _FLOAT_DTYPES[spelled]
    return dtype


def _bindings(function: cst.FunctionDef, name: str) -> int:
    """How many places in ``function`` (nested scopes included, conservatively) bind ``name``:
    assignments, loop and ``with`` targets, augmented assignments, ``del``, imports, definitions,
    parameters; a ``global`` / ``nonlocal`` of it counts twice (it is bound elsewhere too)."""
    count = int(name in parameter_names(function))
    for node in all_nodes(function.body):
        target = BOUND_TARGET.get(type(node))
        if target is not None:
            bound = target(node)
            count += bound is not None and name in target_names(bound)
        elif isinstance(node, cst.Del):
            count += name in target_names(node.target)
        elif isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            count += node.name.value == name
        elif isinstance(node, cst.ImportAlias):
            count += name in names_used(node.asname.name if node.asname else node.name)
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            count += 2 * any(n.name.value == name for n in node.names)
    return count


def _root(node: cst.BaseExpression) -> str:
    """``ap`` of ``ap`` and of ``ap[l]``."""
    while isinstance(node, cst.Subscript):
        node = node.value
    assert isinstance(node, cst.Name)
    return node.value


def threshold_sweep(facts: LoopFacts) -> LoopRewrite:
    """The loop as one comparison against every threshold; raises :class:`CannotRewrite`."""
    sweep = recognise(facts)
    context = facts.context
    numpy, imports = context.spelling("numpy")
    # (the stems differ, so names fresh one at a time are fresh together)
    thresholds = sweep.source.value if isinstance(sweep.source, cst.Name) else _fresh_name(facts, "thresholds")
    reached = _fresh_name(facts, "reached")
    compared = sweep.mask.comparisons[0]
    compared_first = m.matches(sweep.mask.left, m.Name(sweep.threshold))
    array = compared.comparator if compared_first else sweep.mask.left
    rows = parse_template_expression(
        "{t}.reshape((-1,) + (1,) * {np}.ndim({a}))", t=cst.Name(thresholds), np=numpy, a=array)
    swept = sweep.mask.with_changes(left=rows) if compared_first else sweep.mask.with_changes(
        comparisons=[compared.with_changes(comparator=rows)])
    statements: list[cst.BaseStatement] = [parse_template_statement("{r} = {mask}\n", r=cst.Name(reached), mask=swept)]
    if not isinstance(sweep.source, cst.Name):
        # (a name bound to the range above the loop is the array itself)
        statements.insert(0, parse_template_statement("{t} = {source}\n", t=cst.Name(thresholds), source=sweep.source))
    selected = sweep.selected
    guarded: list[cst.BaseStatement] = []
    if any(isinstance(n, cst.Call) for n in _walk(selected)):
        # (the loop computed it at each step that reached something; once is enough)
        values = _fresh_name(facts, "values")
        guarded.append(parse_template_statement("{v} = {x}\n", v=cst.Name(values), x=selected))
        selected = cst.Name(values)
    selects = _fresh_name(facts, "selects")
    fill = parse_template_expression(f"{_FILLS[sweep.reducer]}{{np}}.inf", np=numpy)
    reducer = "max" if sweep.reducer in ("max", "amax") else "min"
    p, r = cst.Name(sweep.value), cst.Name(reached)
    guarded += [
        # the mask with the axes `selected` has beyond `array`'s: `selected[mask]` picks rows there
        parse_template_statement("{s} = {r}.reshape({r}.shape + (1,) * ({np}.ndim({x}) - {np}.ndim({a})))\n",
                                 s=cst.Name(selects), r=r, np=numpy, x=selected, a=array),
        # (one row per threshold: `reached.shape[0]`, not `len(...)`, which the module may bind)
        parse_template_statement(f"{{p}} = {{np}}.where({{s}}, {{x}}, {{fill}}).reshape({{r}}.shape[0], -1).{reducer}(1)\n",
                                 p=p, np=numpy, s=cst.Name(selects), x=selected, fill=fill, r=r),
        parse_template_statement("{p}[~{r}.reshape({r}.shape[0], -1).any(1)] = 0\n", p=p, r=r),
        _accumulate(sweep),
    ]
    statements.append(cst.If(test=parse_template_expression("{r}.any()", r=cst.Name(reached)), body=cst.IndentedBlock(body=guarded)))
    loop = facts.loop
    assert isinstance(loop, cst.For)
    # the loop's comments go above the statements that replace it
    statements[0] = statements[0].with_changes(leading_lines=[*loop.leading_lines, *comments_in(loop.with_changes(leading_lines=()))])
    edits = (Edit(loop, cst.FlattenSentinel(statements)),)
    outputs = (_root(sweep.accumulator),)
    try:
        kernel = build_kernel(
            facts, [loop], statements, outputs, extra_modules=(), library="numpy", reorders_float_reduction=True,
            note="the sweep over the thresholds against one comparison with all of them", gradients=False, walked={},
        )
    except UnfaithfulKernel as exc:
        raise CannotRewrite(str(exc), loop) from None
    if isinstance(sweep.accumulator, cst.Subscript):
        # what the code shows of the array the steps add into: a float array of that dtype
        dtype = _float_array(facts, outputs[0])
        kernel = replace(kernel, inputs=tuple(
            InputSpec(s.name, kinds=(Kind.NDARRAY,), ranks=s.ranks, dtypes=(dtype,)) if s.name == outputs[0] and dtype else s
            for s in kernel.inputs))
    description = f"`{outputs[0]}` from one comparison against every threshold"
    return LoopRewrite(facts, description, edits, kernel, tuple(sorted(imports)), anchor=sweep.accumulate.statement,
                       statements=tuple(statements))


def _accumulate(sweep: _Sweep) -> cst.BaseStatement:
    """``acc = acc + (p / 11.).sum()`` or ``acc += ...``: the loop's own spelling, once."""
    small = sweep.accumulate.small
    total = method(receiver(sweep.addend), "sum")
    if isinstance(sweep.accumulator, cst.Subscript):
        # each step adds its value to the element exactly (a float16 value into a float64
        # array): the sum too is the array's dtype, not the values' own
        total = method(receiver(sweep.addend), "sum", dtype=parse_template_expression("{a}.dtype", a=cst.Name(_root(sweep.accumulator))))
    if isinstance(small, cst.AugAssign):
        return cst.SimpleStatementLine(body=[small.with_changes(value=total)])
    # (`acc = acc + v`: the facts take the accumulator on the left only)
    assert isinstance(small, cst.Assign) and isinstance(small.value, cst.BinaryOperation)
    return cst.SimpleStatementLine(body=[small.with_changes(value=small.value.with_changes(right=total))])
