"""A whole loop lifted into batched statements, with the edits and the kernel that license it.

:func:`lift_loop` batches a loop body statement by statement: a per-sample temporary becomes a
batched temporary, ``out[i] = e`` a store of the batched ``e`` into the rows the loop covers
(or ``out = e`` in place of an allocation made for the loop), ``acc += e`` one reduction, and
``items.append(e)`` followed by ``torch.stack(items)`` / ``torch.cat(items)`` / ``torch.tensor(items)``
the batched ``e`` itself. :class:`Options` picks the rung of the candidate ladder: what to assume
about ranks the code does not pin, whether to replace the allocation, whether the loop count may
be negative. The checker decides which rung holds.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.analysis import child_nodes, skippable_parts, target_names, within
from torchfix.codemods.base import Edit
from torchfix.codemods.evidence import MATH_INTS
from torchfix.codemods.loops import callees
from torchfix.codemods.loops.domain import Domain, loop_domain
from torchfix.codemods.loops.facts import Definition, LoopFacts, Step, StepKind, _walk, lifted_inner_loop, loop_counts, loop_facts
from torchfix.codemods.loops.helpers import helpers_called, kernel_text
from torchfix.codemods.loops.kernels import FILLS, UnfaithfulKernel, alias_pairs, build_kernel, walkable_arrays
from torchfix.codemods.loops.library import NUMPY, TORCH
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.lift import COMPARISON_METHODS, COMPARISONS, FLOAT32_NUMBERS, element_effect, CannotLift, Extent, Lifted, Lifter, NeedRank, short as _short, unsqueeze_after_batch as _unsqueeze_after_batch
from torchfix.codemods.loops.ranks import bound_in, closed_over, followable
from torchfix.codemods.loops.nodes import (
    assign,
    attribute,
    binary,
    call,
    code_of,
    comments_in,
    full_slice,
    index_of,
    int_literal,
    integer,
    method,
    assigned_names,
    name,
    name_nodes,
    python_number,
    receiver,
    names_used,
    subscript,
)
from torchfix.equivalence.kernel import Kernel, Kind

LIBRARIES = {"torch": TORCH, "numpy": NUMPY}

#: constructors of a fresh tensor the loop fills: ``torch.zeros(n, d)``, ``x.new_zeros(...)``
_ALLOCATORS = frozenset({"zeros", "ones", "empty", "full"})
#: torch's legacy constructors of float tensors, whatever their arguments (sizes or data)
_LEGACY_FLOAT_CONSTRUCTORS = frozenset({"FloatTensor", "DoubleTensor", "Tensor"})
_LIKE_ALLOCATORS = frozenset({"zeros_like", "ones_like", "empty_like", "full_like"})
_NEW_ALLOCATORS = frozenset({"new_zeros", "new_ones", "new_empty", "new_full"})


@dataclass(frozen=True)
class Options:
    """One rung of the ladder."""

    #: ``out = <batched>`` in place of ``out = torch.zeros(n, ...)`` (else ``out[:] = ...``)
    replace_allocation: bool = True
    #: the loop count may be negative: slice with ``max(n, 0)``
    clamp: bool = False
    #: ranks assumed for walked tensors whose rank the code does not pin: ((name, rank), ...)
    hypotheses: tuple[tuple[str, int], ...] = ()
    #: guard accumulations into a Python number with ``if <count> > 0``
    guard_empty: bool = False
    #: the array library the loop works on ("torch" or "numpy")
    library: str = "torch"
    #: lift calls of callables torchfix cannot see into as one call on the batch (unverifiable)
    opaque_calls: bool = False
    #: after a guard, the batched statements run only ``if keep.any():``
    guard_any: bool = False
    #: a whole-sample reduction of a sample whose rank nothing pins reduces each flattened
    #: sample (``x[..., None].flatten(1).sum(1)``): right for every rank, one-number samples too
    any_rank_reductions: bool = False
    #: one number per sample broadcasts against a sample whose rank nothing pins with the batch
    #: axis last (``Lifter.any_rank_broadcast``)
    any_rank_broadcast: bool = False
    #: the inner loop of a nested pair, lifted for the outer loop to lift its statements (which
    #: judges what they evaluate once)
    nested_inner: bool = False


@dataclass
class LoopRewrite:
    facts: LoopFacts
    description: str
    edits: tuple[Edit, ...]
    kernel: Kernel
    imports: tuple[str, ...]
    assumptions: tuple[str, ...] = ()
    #: the node the rewrite reports at (the store or accumulation, not the loop header)
    anchor: cst.CSTNode | None = None
    #: the batched statements that replace the loop
    statements: tuple[cst.BaseStatement, ...] = ()
    #: tensors the loop walks, and the dimension it walks
    walked: tuple[tuple[str, int], ...] = ()
    #: invariant names of unknown rank assumed to broadcast against a sample
    assumed_invariants: tuple[str, ...] = ()
    #: callables torchfix cannot see into that the rewrite calls once on the batch
    opaque_callees: tuple[str, ...] = ()
    #: the index was lifted as float64 for a value of Python numbers (``_in_double_precision``)
    double_index: bool = False
    #: a store writes through a view with the batch axis moved last (``_store``): not a plain
    #: subscript store an outer loop can lift again
    batch_last: bool = False


class CannotRewrite(Exception):
    """The loop cannot be lifted; the message says which fact stopped it (and where)."""

    def __init__(self, reason: str, node: cst.CSTNode | None = None, needs_rank: frozenset[str] = frozenset(),
                 assumed: frozenset[str] = frozenset(), arrays: bool = False, rank_order: tuple[int, ...] = ()) -> None:
        super().__init__(reason)
        #: the ranks to try for ``needs_rank``, likeliest first (empty: the ladder's order)
        self.rank_order = rank_order
        self.node = node
        #: a walked name is shown to be a NumPy array, not a tensor: the NumPy spelling may lift it
        self.arrays = arrays
        #: the lift would go through under a hypothesis about these tensors' ranks
        self.needs_rank = needs_rank
        #: invariant names of unknown rank the failed lift assumed broadcast against a sample
        self.assumed = assumed


@dataclass
class _Consumer:
    """The statement after the loop that turns the appended list into a tensor."""

    statement: cst.SimpleStatementLine
    call: cst.Call
    form: str  # stack / cat / vstack / tensor / (default) float tensor / array
    dim: int
    #: a NumPy function (``np.stack``): it consumes the batch of a NumPy lift only
    numpy: bool = False
    #: the consumer follows the ``with torch.no_grad():`` that holds the loop: the batched value
    #: is computed outside the grad mode, which is the same only for NumPy
    after_grad_mode: bool = False


@dataclass
class _Plan:
    statements: list[cst.BaseStatement] = field(default_factory=list)
    edits: list[Edit] = field(default_factory=list)
    old: list[cst.CSTNode] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    exclude: list[cst.CSTNode] = field(default_factory=list)
    reorders: bool = False
    imports: set[str] = field(default_factory=set)
    descriptions: list[str] = field(default_factory=list)
    #: (old, new) kernel statements standing for the consumers after the loop
    consumers: list[tuple[cst.CSTNode, cst.CSTNode]] = field(default_factory=list)
    #: after an ``if ...: continue`` guard, the name of the mask of the samples it lets through
    mask: cst.BaseExpression | None = None
    double_index: bool = False
    batch_last: bool = False
    #: tuple assignments of lists (``a, b = [], []``) -> the statement and the names it loses
    shared: dict[int, tuple[cst.SimpleStatementLine, set[str]]] = field(default_factory=dict)
    #: leading lines of removed statements right above the loop, for the first new statement
    carried_lines: list[cst.EmptyLine] = field(default_factory=list)
    #: the pure helpers of the module the new code calls, as (name, definition) for the kernel
    definitions: list[tuple[str, str]] = field(default_factory=list)


def _shared_definitions(plan: "_Plan") -> None:
    """The edits of the tuple assignments the plan takes names out of: removed where every
    name goes, else rebuilt with the names that stay (``b = []``)."""
    for statement, gone in plan.shared.values():
        assign = statement.body[0]
        assert isinstance(assign, cst.Assign)
        target, value = assign.targets[0].target, assign.value
        pairs = [(t, v) for t, v in zip(target.elements, value.elements)  # type: ignore[attr-defined]
                 if t.value.value not in gone]
        if not pairs:
            plan.edits.append(Edit(statement, cst.RemovalSentinel.REMOVE))
            continue
        if len(pairs) == 1:
            kept: cst.BaseSmallStatement = cst.Assign([cst.AssignTarget(pairs[0][0].value)], pairs[0][1].value)
        else:
            kept = assign.with_changes(
                targets=[assign.targets[0].with_changes(target=target.with_changes(elements=_commas_of([t for t, _ in pairs])))],
                value=value.with_changes(elements=_commas_of([v for _, v in pairs])),
            )
        plan.edits.append(Edit(statement, statement.with_changes(body=[kept])))


def _commas_of(elements: list[cst.Element]) -> list[cst.Element]:
    """``elements`` separated by commas, the last without one."""
    return [e.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")) if k < len(elements) - 1 else cst.MaybeSentinel.DEFAULT)
            for k, e in enumerate(elements)]


def extent_of(facts: LoopFacts, options: Options) -> Extent:
    extent = _extent_of(facts, options)
    return replace(extent, float_index=True) if facts.double_index else extent


def _extent_of(facts: LoopFacts, options: Options) -> Extent:
    domain = facts.domain
    full: set[str] = set()
    count: cst.BaseExpression | None = None
    clamp = False
    if domain.is_range:
        if domain.measures is not None and domain.start == 0 and domain.measures[1] == 0:
            full.add(domain.measures[0])
        clamp = options.clamp and domain.measures is None and int_literal(domain.stop) is None  # type: ignore[arg-type]
        count = domain.stop if domain.start == 0 else None
        measured = domain.measures[0] if domain.measures is not None and domain.measures[1] == 0 else None
        sized = domain.measures[0] if domain.measures is not None else None
        return Extent(domain.start, domain.stop, frozenset(full), clamp, count, measured, sized, _builds_on_default_device(facts))
    # a loop over sequences: zip stops at the shortest
    names = [w.name for w in domain.walked]
    # one walked name (walked once or zipped with itself): its rows are the samples; any other
    # array the index reads is cut to as many rows (`for i, w in enumerate(weights): ...
    # target[i]` reads `target[:len(weights)]`)
    if all(n is not None for n in names) and len(set(names)) == 1:
        count = call(name("len"), name(names[0]))  # type: ignore[arg-type]
        return Extent(0, count, frozenset({names[0]}), False, count)  # type: ignore[arg-type]
    if len(domain.walked) == 1:
        # one walked expression (`np.arange(0., 1.1, 0.1)`): as many samples as it has rows
        count = call(name("len"), domain.walked[0].source)
        return Extent(0, count, frozenset(), False, count)
    # zip of several: each is cut to the shortest
    lengths = [call(name("len"), w.source) for w in domain.walked]
    stop = call(name("min"), *lengths)
    return Extent(0, stop, frozenset(), False, stop)


def _allocation_rank(value: cst.BaseExpression, facts: LoopFacts) -> int | None:
    """The rank of ``torch.zeros(n, d)`` (2), ``torch.zeros((n, d))``, ``x.new_zeros(n)``,
    ``torch.zeros_like(x)`` (x's), else None."""
    value = _unfilled(value)
    if not isinstance(value, cst.Call):
        return None
    qualified = facts.context.qualified(value.func) or ""
    last = qualified.rsplit(".", 1)[-1] if qualified else (value.func.attr.value if isinstance(value.func, cst.Attribute) else "")
    positional = [a for a in value.args if a.keyword is None]
    if qualified.startswith("torch.") and last in _LEGACY_FLOAT_CONSTRUCTORS and len(positional) >= 2:
        return len(positional)  # `torch.FloatTensor(n, 1, d)`: sizes (one argument may be data)
    if last in _ALLOCATORS or last in _NEW_ALLOCATORS:
        sizes = positional[:-1] if last in ("full", "new_full") else positional
        if len(sizes) == 1 and isinstance(sizes[0].value, (cst.Tuple, cst.List)):
            return len(sizes[0].value.elements)
        if len(sizes) == 1 and m.matches(sizes[0].value, m.Attribute(attr=m.Name("shape")) | m.Call(func=m.Attribute(attr=m.Name("size")), args=[])):
            return None
        return len(sizes) if sizes else None
    if last in _LIKE_ALLOCATORS and positional and isinstance(positional[0].value, cst.Name):
        return facts.shapes.ranks.get(positional[0].value.value)
    return None


def _unfilled(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``torch.FloatTensor(n, d).fill_(0)`` -> the allocation: filling in place returns it."""
    while isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in FILLS:
        value = value.func.value
    return value


def is_allocation(value: cst.BaseExpression, facts: LoopFacts) -> bool:
    if not isinstance(value, cst.Call):
        return False
    qualified = facts.context.qualified(value.func)
    if qualified is not None:
        return qualified.split(".")[0] == "torch" and qualified.rsplit(".", 1)[-1] in _ALLOCATORS | _LIKE_ALLOCATORS
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in _NEW_ALLOCATORS


def _covers_whole(allocation: cst.Call, extent: Extent, facts: LoopFacts) -> bool:
    """Whether the loop writes every row of the allocation: its first size is the loop count."""
    qualified = facts.context.qualified(allocation.func) or ""
    positional = [a for a in allocation.args if a.keyword is None]
    if qualified.rsplit(".", 1)[-1] in _LIKE_ALLOCATORS:
        return bool(positional) and isinstance(positional[0].value, cst.Name) and positional[0].value.value in extent.full
    if not positional:
        return False
    first = positional[0].value
    if isinstance(first, (cst.Tuple, cst.List)):
        if not first.elements:
            return False
        first = first.elements[0].value
    if extent.count is not None and code_of(first) == code_of(extent.count):
        return extent.start == 0
    measured = facts.domain.measures
    from torchfix.codemods.loops.domain import measure_of

    return extent.start == 0 and measured is not None and measure_of(first, facts.shapes.measures.get) == measured


def _device_follows(allocation: cst.Call, value: cst.BaseExpression, facts: LoopFacts) -> bool:
    """Whether ``allocation`` is made on the device of an array the batched ``value`` reads
    (``torch.zeros_like(x)``, ``x.new_zeros(n)``, ``torch.zeros(n, device=x.device)``), so that
    the value may take its place. One made on the default device (``torch.zeros(n)``) may not: a
    program's inputs may live on a GPU while its default device is the CPU, and then the loop
    leaves a CPU tensor where the value is a GPU one -- a case neither the CPU leg (all on the CPU)
    nor the CUDA leg (the GPU as the default device) draws. The value is stored into it instead.
    And the value must read no other array: one on another device whose samples are 0-d mixes
    into the loop's steps (a 0-d CPU tensor joins a GPU one), so the batch's device may be the
    other array's (a review found `zeros_like(x)` replaced by `y[:n] - x.mean()`)."""
    device = next((a.value for a in allocation.args if a.keyword is not None and a.keyword.value == "device"), None)
    qualified = facts.context.qualified(allocation.func) or ""
    follows: cst.BaseExpression | None = None
    if device is not None:
        follows = device.value if m.matches(device, m.Attribute(value=m.Name(), attr=m.Name("device"))) else None  # type: ignore[attr-defined]
    elif qualified.rsplit(".", 1)[-1] in _LIKE_ALLOCATORS:
        follows = allocation.args[0].value if allocation.args and allocation.args[0].keyword is None else None
    elif isinstance(allocation.func, cst.Attribute) and allocation.func.attr.value in _NEW_ALLOCATORS:
        follows = allocation.func.value
    if not isinstance(follows, cst.Name):
        return False
    reads = names_used(value) - set(facts.context.bindings) - _numbers(facts)
    return reads == {follows.value}


def _batched_target(lifter: Lifter, target: cst.Subscript, extent: Extent) -> tuple[cst.Subscript, int, int]:
    """``out[:n]`` for ``out[i]``, ``out[:, :n]`` for ``out[:, i]``: the target, the position of
    the batch axis within the stored slot, and how many dimensions the indices remove."""
    positions = [(k, lifter.index_form(e)) for k, e in enumerate(target.slice) if lifter.depends(e)]
    if len(positions) != 1 or positions[0][1] is None or positions[0][1][0] != "index":
        raise CannotRewrite(f"`{_short(target)}` stores at a position computed from the loop index other than `out[i]`", target)
    position, (_, offset) = positions[0]  # type: ignore[misc]
    before = target.slice[:position]
    if any(element_effect(e) not in ("keep", "remove") for e in before):
        raise CannotRewrite(f"`{_short(target)}` indexes with `None` or `...` before the loop index", target)
    after = target.slice[position + 1 :]
    if any(lifter.depends(e) for e in after) or any(element_effect(e) not in ("keep", "remove") for e in after):
        raise CannotRewrite(f"`{_short(target)}`: the other indices use the loop index, `None` or `...`", target)
    element = lifter.rows_element(offset, target.value if position == 0 else None)
    axis = sum(1 for e in before if element_effect(e) == "keep")
    removed = sum(1 for e in target.slice if element_effect(e) == "remove") - 1
    return target.with_changes(slice=[*before, element, *after]), axis, removed


def _whole_rows(target: cst.Subscript, batched: cst.Subscript, facts: LoopFacts, extent: Extent) -> cst.Subscript:
    """``out[:]`` rather than ``out[:n]`` where ``out`` was allocated with the loop's extent as its
    first size (the loop writes every row)."""
    if not isinstance(target.value, cst.Name) or len(batched.slice) != len(target.slice):
        return batched
    definition = facts.definition(target.value.value)
    first = target.slice[0].slice
    if (
        definition is not None
        and isinstance(first, cst.Index)
        and facts.domain.index is not None
        and m.matches(first.value, m.Name(facts.domain.index))
        and is_allocation(definition.value, facts)
        and _covers_whole(definition.value, extent, facts)  # type: ignore[arg-type]
        and not _loop_between(definition.statement, facts)
    ):
        return batched.with_changes(slice=[full_slice(), *batched.slice[1:]])
    return batched


def _loop_between(statement: cst.CSTNode, facts: LoopFacts) -> bool:
    """Whether an enclosing loop stands between ``statement`` and the loop: the kernel then
    takes the target as it enters the loop (any size), not as allocated, and only ``out[:n]``
    is right for every size."""
    parents = facts.context.parents
    current = parents.get(facts.statement or facts.loop)
    while current is not None and not within(statement, current, parents):
        if isinstance(current, (cst.For, cst.While)):
            return True
        current = parents.get(current)
    return False


def _plain(element: cst.SubscriptElement) -> bool:
    piece = element.slice
    return isinstance(piece, cst.Slice) and piece.lower is None and piece.upper is None and piece.step is None


def _integer(element: cst.SubscriptElement) -> bool:
    return isinstance(element.slice, cst.Index) and int_literal(element.slice.value) is not None


CONSUMER_FORMS = {
    "torch.stack": "stack", "torch.cat": "cat", "torch.concat": "cat", "torch.concatenate": "cat",
    "torch.tensor": "tensor", "numpy.array": "array", "numpy.stack": "stack", "numpy.concatenate": "cat",
    "numpy.asarray": "array", "torch.as_tensor": "tensor", "numpy.vstack": "vstack",
    # the legacy constructors make a float tensor of any list of numbers
    "torch.Tensor": "default float tensor", "torch.FloatTensor": "float tensor",
    # a NumPy scalar type called on a list makes an array of that dtype, as on an array
    **{f"numpy.{t}": "array" for t in ("float16", "float32", "float64", "int32", "int64", "uint8", "bool_")},
}
#: consumers that make one tensor of a list of numbers
_TENSOR_FORMS = ("tensor", "float tensor", "default float tensor")
#: consumers whose extra arguments go with the batched value unchanged (``np.array(items, dtype=...)``)
_PASS_THROUGH_FORMS = frozenset({"array"})


def _consumer_call(facts: LoopFacts, found: cst.Call, statement: cst.CSTNode) -> _Consumer:
    """What ``found`` (a call whose first argument is the collected list) makes of it."""
    qualified = facts.context.qualified(found.func) or ""
    form = CONSUMER_FORMS.get(qualified)
    if form is None:
        raise CannotRewrite(f"`{_short(found)}` is not a consumer torchfix knows (stack, cat, tensor)", statement)
    if found.args[0].star:
        raise CannotRewrite(f"`{_short(found)}` unpacks its argument", statement)
    dim = 0
    for position, a in enumerate(found.args[1:], start=1):
        if form in _PASS_THROUGH_FORMS and a.keyword is not None and a.keyword.value in ("dtype", "copy"):
            continue
        if (a.keyword is None and position == 1 and form in ("stack", "cat")) or (a.keyword is not None and a.keyword.value in ("dim", "axis")):
            literal = int_literal(a.value)
            if literal is None:
                raise CannotRewrite(f"`{_short(found)}`: the dimension is not a literal", statement)
            dim = literal
        else:
            raise CannotRewrite(f"`{_short(found)}` passes arguments torchfix does not batch", statement)
    return _Consumer(statement, found, form, dim, qualified.startswith("numpy"))  # type: ignore[arg-type]


def _numbers(facts: LoopFacts) -> frozenset[str]:
    return frozenset(facts.shapes.numbers) | loop_counts(facts)


def _ranks(facts: LoopFacts) -> dict[str, int]:
    ranks = dict(facts.shapes.ranks)
    for count in loop_counts(facts):
        ranks.setdefault(count, 0)
    return ranks


def _numbers_only(value: cst.BaseExpression, lifter: Lifter, facts: LoopFacts) -> bool:
    """Whether a lifted value is made of Python numbers and the library only: outside its
    Python-number parts (``float(2 * sigma ** 2)``, ``n // 2``) it reads module bindings
    (``torch``) and builtins of numbers only."""
    known = set(facts.context.bindings) | _CLAMPING_BUILTINS
    numbers = set(lifter.numbers)
    reads: list[str] = []

    class _Reads(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if isinstance(node, cst.BaseExpression) and python_number(node, numbers):
                return False
            if isinstance(node, cst.Attribute):
                node.value.visit(self)
                return False
            if isinstance(node, cst.Arg) and node.keyword is not None:
                node.value.visit(self)
                return False
            if isinstance(node, cst.Name):
                reads.append(node.value)
            return True

    value.visit(_Reads())
    return all(read in known for read in reads)


#: builtins of numbers that give back a number of the kind they are given (``max(n, 0)``,
#: ``abs(x)``): a lift may write them around a count, and number math may call them; what they
#: are given is checked apart (``int`` / ``float`` / ``len`` calls are Python-number parts already)
_CLAMPING_BUILTINS = frozenset({"max", "min", "abs"})


def _builds_on_default_device(facts: LoopFacts) -> bool:
    """Whether the comprehension's numbers become a tensor on the default device
    (``torch.tensor([...])`` with no ``device=``): so does an ``arange`` of its index."""
    if facts.comprehension is None:
        return False
    try:
        consumer = _comprehension_consumer(facts)
    except CannotRewrite:
        return False
    return consumer.form in _TENSOR_FORMS and not any(
        a.keyword is not None and a.keyword.value == "device" for a in consumer.call.args
    )


def _comprehension_consumer(facts: LoopFacts) -> _Consumer:
    return _comprehension_collected(facts)[1]


def _comprehension_collected(facts: LoopFacts) -> tuple[Definition | None, _Consumer]:
    """The consumer of a comprehension: the call it is the first argument of
    (``torch.stack([...])``), or -- for ``items = [...]`` -- the next statement's call on
    ``items`` (``np.asarray(items)``), with the comprehension's statement as the list's
    definition, which the rewrite removes."""
    comprehension = facts.comprehension
    assert comprehension is not None
    found = facts.context.call_taking(comprehension)
    if found is not None:
        return None, _consumer_call(facts, found, facts.statement or comprehension)
    named = _named_comprehension(facts)
    if named is None:
        raise CannotRewrite(
            "the comprehension is neither the first argument of `torch.stack`/`torch.cat`/`torch.tensor` "
            "nor a list that one call on the next line consumes", comprehension,
        )
    definition, consumer = named
    if not _list_read_only_by(facts, definition, consumer):
        raise CannotRewrite(f"`{definition.name}` is used elsewhere: it must stay a list", definition.statement)
    return definition, consumer


@dataclass(frozen=True)
class NamedList:
    """``items = [e for ...]``: the name, the comprehension's line and its block, the next line,
    and the calls there that take ``items`` first (and run with the line)."""

    items: str
    statement: cst.SimpleStatementLine
    block: Sequence[cst.BaseStatement]
    after: cst.SimpleStatementLine
    calls: list[cst.Call]


def named_list(context: ModuleContext, comprehension: cst.CSTNode) -> NamedList | None:
    """The comprehension as the value of ``items = ...`` with a simple line after it, or None."""
    parent = context.parents.get(comprehension)
    if not (isinstance(parent, cst.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0].target, cst.Name)):
        return None
    statement = context.parents.get(parent)
    located = context.block_of(statement) if statement is not None else None
    if located is None or located[1] + 1 >= len(located[0]):
        return None
    block, index = located
    after = block[index + 1]
    if not isinstance(statement, cst.SimpleStatementLine) or not isinstance(after, cst.SimpleStatementLine):
        return None
    items = parent.targets[0].target.value
    return NamedList(items, statement, block, after, _consumer_calls(after, items))


def _named_comprehension(facts: LoopFacts) -> tuple[Definition, _Consumer] | None:
    """``items = [e for ...]`` alone on its line, followed by a line that calls one consumer on
    ``items``."""
    assert facts.comprehension is not None
    named = named_list(facts.context, facts.comprehension)
    if named is None or len(named.statement.body) != 1 or len(named.after.body) != 1 or len(named.calls) != 1:
        return None
    consumer = _consumer_call(facts, named.calls[0], named.after)
    return Definition(named.items, named.statement, facts.comprehension, named.block, True, ()), consumer


def _list_read_only_by(facts: LoopFacts, definition: Definition, consumer: _Consumer) -> bool:
    """Whether the list ``items = [...]`` binds is read by the consumer's argument alone. A
    consumer that rebinds ``items`` (``items = np.asarray(items) * w``) ends the list: every other
    use of the name sees another value. Otherwise no use may follow the definition, nor precede
    it inside a loop around it (the next step would read the list). The comprehension's own reads
    (``enumerate(items)``) see the value before it."""
    items = definition.name
    argument = consumer.call.args[0].value
    rebinds = _rebinds(consumer, items)
    own = {id(n) for n in name_nodes(definition.statement)}
    in_consumer = {id(n) for n in name_nodes(consumer.statement)}
    target = _rebinding_target(consumer, items)
    start = facts.context.position(definition.statement)
    for node in name_nodes(facts.scope):
        if node.value != items or id(node) in own or node is argument or node is target:
            continue
        if id(node) in in_consumer:
            return False  # `items` read twice by its consumer
        if rebinds:
            continue
        if facts.context.position(node) > start or _in_loop_around(facts, definition.statement, node):
            return False
    return True


def _in_loop_around(facts: LoopFacts, statement: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether a loop holds both ``statement`` and ``node`` (a later read may run before the
    statement on the next step)."""
    parents = facts.context.parents
    holders: set[int] = set()
    current = parents.get(statement)
    while current is not None:
        if isinstance(current, (cst.For, cst.While)):
            holders.add(id(current))
        current = parents.get(current)
    current = parents.get(node)
    while current is not None:
        if id(current) in holders:
            return True
        current = parents.get(current)
    return False


def _consumer(facts: LoopFacts, list_name: str) -> _Consumer:
    """The statement right after the loop that turns ``list_name`` into one tensor."""
    located = facts.context.block_of(facts.loop)
    if located is None:
        raise CannotRewrite(f"`{list_name}` is not consumed right after the loop")
    block, index = located
    after_with = False
    if index + 1 >= len(block):
        # `with torch.no_grad(): items = []; for ...: items.append(...)` and the consumer after
        # the `with`: a grad mode changes nothing NumPy computes (checked where the lift's library
        # is known)
        outer = _grad_mode_block(facts, block)
        if outer is None:
            raise CannotRewrite(f"nothing after the loop turns `{list_name}` into a tensor")
        block, index = outer
        after_with = True
        if index + 1 >= len(block):
            raise CannotRewrite(f"nothing after the loop turns `{list_name}` into a tensor")
    index += 1
    # a loop that fills several lists turns them into tensors one line each: the lines before
    # this list's are other lists' consumers, which bind only their own list and mutate nothing
    # the batched value reads
    while index + 1 < len(block) and list_name not in names_used(block[index]) and _consumes_another_list(facts, block[index]):
        index += 1
    statement = block[index]
    if list_name not in names_used(statement):
        raise CannotRewrite(f"a statement between the loop and the use of `{list_name}` is not another list's consumer", statement)
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        raise CannotRewrite(f"the statement after the loop is not a simple use of `{list_name}`", statement)
    calls = _consumer_calls(statement, list_name)
    if len(calls) != 1:
        raise CannotRewrite(f"`{list_name}` is used after the loop other than as `torch.stack({list_name})`", statement)
    consumer = _consumer_call(facts, calls[0], statement)
    return replace(consumer, after_grad_mode=True) if after_with else consumer


def _consumes_another_list(facts: LoopFacts, statement: cst.BaseStatement) -> bool:
    """``other = torch.cat(other)``: one line that rebinds a list the loop appends to with a
    known consumer of it (pure: it reads the list and binds its name, nothing else)."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    line = statement.body[0]
    if not (isinstance(line, cst.Assign) and len(line.targets) == 1 and isinstance(line.targets[0].target, cst.Name)):
        return False
    other = line.targets[0].target.value
    value = line.value
    if not (isinstance(value, cst.Call) and value.args and m.matches(value.args[0].value, m.Name(other))):
        return False
    if (facts.context.qualified(value.func) or "") not in CONSUMER_FORMS:
        return False
    if any(not _plain_argument(a) for a in value.args[1:]):
        return False
    return any(step.kind is StepKind.APPEND and step.target == other for step in facts.steps)


def _plain_argument(argument: cst.Arg) -> bool:
    """A literal or a name: evaluating it runs nothing."""
    return not argument.star and isinstance(argument.value, (cst.Integer, cst.Name, cst.Attribute))


#: context managers that change autograd only (what NumPy code inside them computes is the same)
_GRAD_MODES = frozenset({"torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled",
                         "torch.autograd.no_grad", "torch.autograd.grad_mode.no_grad"})


def _grad_mode_block(facts: LoopFacts, body: Sequence[cst.BaseStatement]) -> tuple[Sequence[cst.BaseStatement], int] | None:
    """When ``body`` is the block of a ``with torch.no_grad():`` (grad modes only, no ``as``):
    the statement list holding that ``with`` and its index."""
    context = facts.context
    owner = context.parents.get(body[0]) if body else None
    statement = context.parents.get(owner) if isinstance(owner, cst.IndentedBlock) else None
    if not isinstance(statement, cst.With) or not statement.items:
        return None
    for item in statement.items:
        expression = item.item
        if item.asname is not None or not isinstance(expression, cst.Call):
            return None
        if (context.qualified(expression.func) or "") not in _GRAD_MODES:
            return None
    return context.block_of(statement)


def _consumer_calls(statement: cst.CSTNode, items: str) -> list[cst.Call]:
    """The calls of ``statement`` that take ``items`` as their first argument and run when the
    statement does: not one in a lambda or a generator expression, which runs later -- after
    the values the batched expression would read there may have changed."""
    found = []
    stack: list[cst.CSTNode] = [statement]
    while stack:
        current = stack.pop()
        if isinstance(current, (cst.Lambda, cst.GeneratorExp)):
            continue
        if isinstance(current, cst.Call) and current.args and m.matches(current.args[0].value, m.Name(items)):
            found.append(current)
        stack.extend(child_nodes(current))
    return found


def _calls_of(node: cst.CSTNode) -> list[cst.Call]:
    found = []
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, cst.Call):
            found.append(current)
        stack.extend(current.children)
    return found


def _uses(facts: LoopFacts, name_: str) -> int:
    return sum(1 for n in name_nodes(facts.scope) if n.value == name_)


def _rebinds(consumer: _Consumer, items: str) -> bool:
    """Whether the consumer's line assigns its value to ``items`` (``items = np.stack(items)``,
    or one name of an unpacking, ``items, order = torch.stack(items).sort(0)``)."""
    return _rebinding_target(consumer, items) is not None


def _rebinding_target(consumer: _Consumer, items: str) -> cst.Name | None:
    """The name node of the consumer's line that binds ``items``, if its one target does. The
    value is computed whole before any name is bound, so every later read sees the new value."""
    line = consumer.statement.body[0]
    if not (isinstance(line, cst.Assign) and len(line.targets) == 1):
        return None
    target = line.targets[0].target
    if m.matches(target, m.Name(items)):
        return target  # type: ignore[return-value]
    if isinstance(target, (cst.Tuple, cst.List)):
        names = [e.value for e in target.elements if isinstance(e.value, cst.Name) and e.value.value == items]
        # unpacked once, into plain names only (a starred or nested element binds it as a list)
        if len(names) == 1 and all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements):
            return names[0]
    return None


def _uses_of_list(facts: LoopFacts, items: str, consumer: _Consumer) -> int:
    """The reads and writes of the collected list ``items`` (its ``items = []``, its append and
    the consumer's argument make 3). A consumer that rebinds the name (``items = np.stack(items)``)
    ends the list: what reads ``items`` after it reads the consumer's value, which the rewrite
    keeps, so those uses (and the rebinding target) are not the list's."""
    line = consumer.statement.body[0]
    rebinds = _rebinds(consumer, items) and sum(1 for n in name_nodes(line) if n.value == items) == 2
    if not rebinds:
        return _uses(facts, items)
    end = facts.context.position(consumer.statement)
    count = 1  # the consumer's argument
    for node in name_nodes(facts.scope):
        if node.value == items and facts.context.position(node) < end:
            count += 1
    return count


def _speller(context: ModuleContext) -> tuple[Callable[[str], cst.BaseExpression], set[str]]:
    """How this module spells a qualified name (``torch.arange`` -> ``th.arange``), and the set
    the imports it needed are collected into."""
    imports: set[str] = set()

    def spell(qualified: str) -> cst.BaseExpression:
        node, needed = context.spelling(qualified)
        imports.update(needed)
        return node

    return spell, imports


def lift_loop(facts: LoopFacts, options: Options, torch_name: str = "torch") -> LoopRewrite:
    """The loop as batched statements under ``options``; raises :class:`CannotRewrite`."""
    if facts.blockers:
        raise CannotRewrite(facts.blockers[0], facts.loop)
    context = facts.context
    extent = extent_of(facts, options)
    spell, imports = _speller(context)

    layers = _layers_in_scope(facts)
    lifter = Lifter(context.qualified, spell, extent, index=facts.domain.index, ranks=_ranks(facts), numbers=_numbers(facts),
                    number_kind=lambda node: _python_type(node, set(_numbers(facts)), facts),
                    hypotheses=dict(options.hypotheses), layers=layers, library=LIBRARIES[options.library],
                    opaque_calls=options.opaque_calls, any_rank_reductions=options.any_rank_reductions,
                    any_rank_broadcast=options.any_rank_broadcast,
                    shown_array=lambda name: _shown_array(facts, name),
                    number_list=lambda name_: facts.number_list(cst.Name(name_)),
                    sized_by_count=lambda name_: _sized_by_count(facts, name_, extent),
                    lengths=facts.shapes.lengths, dtypes=facts.shapes.dtypes)
    for walked in facts.domain.walked:
        if lifter.depends(walked.source):
            raise CannotRewrite("the loop walks a value computed per sample", facts.loop)
        lifter.per_sample[walked.element] = lifter.walked(walked.source, walked.keepdim)
    for variable in facts.loop_variables:
        if facts.used_after(variable):
            raise CannotRewrite(f"the loop variable `{variable}` is read after the loop", facts.loop)

    plan = _Plan()
    steps = list(facts.steps)
    if not any(s.kind in (StepKind.STORE, StepKind.ACCUMULATE, StepKind.APPEND) for s in steps):
        raise CannotRewrite("the loop stores, accumulates or appends nothing", facts.loop)
    table = _number_table(facts, lifter)
    once = _computed_once(facts) if table is not None and not options.nested_inner else None
    if once is None and table is not None and not _counts_size_the_table(facts, table):
        # `table[:length, :width] = v` where the table has fewer rows than the outer loop runs:
        # an inner loop of no step never indexed the rows the batch slices
        once = facts.loop
    if once is not None and not options.guard_empty:
        raise CannotRewrite(f"`{_short(once)}` may raise, and the batch computes it even where the loop runs no step", facts.loop)
    if table is not None:
        # a body of Python-number math (temporaries included) filling one float array: its
        # batch goes on that array's device, in double precision where Python makes a float
        lifter.store_device = table
        if not extent.float_index and any(_makes_a_float(_inlined(s, facts), _number_names(facts, lifter), facts) for s in steps):
            extent = replace(extent, float_index=True)
            lifter.extent = extent
            plan.double_index = True
    anchor: cst.CSTNode | None = None
    for step in steps:
        try:
            anchor = _lift_step(step, lifter, facts, extent, options, plan, spell) or anchor
        except NeedRank as exc:
            raise CannotRewrite(str(exc), step.statement, exc.names, frozenset(lifter.assumed_invariants), rank_order=exc.ranks) from None
        except CannotLift as exc:
            raise CannotRewrite(str(exc), step.statement, assumed=frozenset(lifter.assumed_invariants)) from None
        except CannotRewrite as exc:
            exc.assumed = frozenset(lifter.assumed_invariants)
            raise
    if options.guard_any:
        _run_only_if_any(plan, facts)
    if options.guard_empty:
        _run_only_if_the_loop_runs(plan, facts, extent)
    if once is not None and not (len(plan.statements) == 1 and isinstance(plan.statements[0], cst.If)):
        raise CannotRewrite(f"`{_short(once)}` may raise, and no guard keeps the batch from computing it where the loop runs no step", facts.loop)
    return _finish(facts, plan, lifter, imports, anchor, torch_name)


def _sized_by_count(facts: LoopFacts, name: str, extent: Extent) -> bool:
    """Whether ``name`` was made right before the loop with the loop's count as its first size
    (``out = torch.zeros(b, d)`` for ``range(b)``; ``np.zeros((n, 3))``)."""
    definition = facts.definition(name)
    if definition is None or extent.start != 0 or extent.count is None or not definition.same_block:
        return False
    if facts.function is not None and (
        not followable(facts.function, facts.context) or name in closed_over(facts.function, facts.context)
    ):
        return False  # (a nested function may resize the array -- `z.t_()` -- or rebind the count: `nonlocal n`)
    # the count means what it meant at the allocation, and the array is the one allocated: no
    # line between rebinds a name of the count or so much as mentions the array (`z.resize_(2)`,
    # `grow(z)`), nor does the loop's header
    count_names = names_used(extent.count)
    for between in (*definition.between, facts.loop.iter if isinstance(facts.loop, cst.For) else facts.loop):
        if name in names_used(between) or count_names & bound_in(between):
            return False
    value = _unfilled(definition.value)
    if not isinstance(value, cst.Call) or facts.context.qualified(value.func) not in _COUNT_SIZED:
        return False
    positional = [a.value for a in value.args if a.keyword is None and not a.star]
    if not positional:
        return False
    first = positional[0]
    if isinstance(first, (cst.Tuple, cst.List)) and first.elements:
        first = first.elements[0].value
    return first.deep_equals(extent.count)


#: allocators whose first size is their first positional argument (or its first element)
_COUNT_SIZED = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full", "numpy.zeros", "numpy.ones",
                          "numpy.empty", "numpy.full", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor"})


def _run_only_if_the_loop_runs(plan: "_Plan", facts: LoopFacts, extent: Extent) -> None:
    """The batched stores run only ``if w.size(0) > 1:`` -- when the loop would have run once.
    A loop over no sample never evaluated its body; the batched store evaluates its loop-invariant
    parts (``w[0, 0]``, a tensor written into an ndarray) once, always, and they may raise where
    the loop did not. Only stores, augmented assignments and the body's own temporaries that
    nothing reads outside the loop are wrapped: a name bound in the block would be unbound after
    it (``d = 1.0 / n`` computed once raises where ``n`` is 0 and the loop ran no step)."""
    if facts.comprehension is not None or plan.consumers or not plan.statements:
        return
    test = _runs_test(facts, extent)
    if test is None:
        return
    # a statement the lift already guarded with the same test (an accumulation of a number)
    statements = [inner for s in plan.statements for inner in (
        s.body.body if isinstance(s, cst.If) and s.orelse is None and isinstance(s.body, cst.IndentedBlock) and code_of(s.test) == code_of(test)
        else (s,)
    )]
    if not all(_store_or_augmented(s) or _dead_temporary(s, facts) or _mask_or_its_block(s, plan) for s in statements):
        return
    plan.statements[:] = [cst.If(test=test, body=cst.IndentedBlock(body=list(statements)))]
    plan.descriptions.append("run only when the loop would run")


def _mask_or_its_block(statement: cst.BaseStatement, plan: "_Plan") -> bool:
    """The guard's mask (``keep = ...``, a fresh name nothing outside the loop reads), or the
    ``if keep.any():`` block of stores :func:`_run_only_if_any` made of the statements after it."""
    if plan.mask is None:
        return False
    if _assigns(statement, plan.mask):
        return True
    return (
        isinstance(statement, cst.If) and statement.orelse is None and isinstance(statement.body, cst.IndentedBlock)
        and statement.test.deep_equals(call(attribute(plan.mask, "any")))
        and all(_store_or_augmented(s) for s in statement.body.body)
    )


def _dead_temporary(statement: cst.BaseStatement, facts: LoopFacts) -> bool:
    """``t = ...`` binding a name the loop's body binds and nothing outside the loop reads."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign)):
        return False
    assign = statement.body[0]
    body_temporaries = {s.target for s in facts.steps if s.kind is StepKind.TEMP and s.target}
    return len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name) and (
        assign.targets[0].target.value in body_temporaries and not facts.used_after(assign.targets[0].target.value)
    )


def _runs_test(facts: LoopFacts, extent: Extent) -> cst.BaseExpression | None:
    """Whether the loop runs at least once: ``stop > start`` for ``range(start, stop)``, else
    ``count > 0``."""
    test = _range_runs(facts.domain)
    if test is None:
        test = _count_test(facts, extent)
    inner = lifted_inner_loop(facts)
    if test is None or inner is None:
        return test
    # two loops lifted at once: the statement runs only when the inner loop runs too
    inner_domain = loop_domain(inner, facts.shapes.measures.get, facts.context.qualified)
    inner_test = _range_runs(inner_domain) if inner_domain is not None else None
    if inner_test is None:
        return None
    return cst.BooleanOperation(left=test, operator=cst.And(), right=inner_test)


def _range_runs(domain: Domain) -> cst.BaseExpression | None:
    """``stop > start`` for ``range(start, stop)`` with a literal start; None for other domains."""
    if domain.is_range and isinstance(domain.start, int) and domain.stop is not None:
        return cst.Comparison(domain.stop, [cst.ComparisonTarget(cst.GreaterThan(), integer(domain.start))])
    return None


def _run_only_if_any(plan: _Plan, facts: LoopFacts) -> None:
    """The statements after a guard's mask run only ``if keep.any():``. The loop evaluates a
    guarded statement's loop-invariant parts (``len(self.vocab)``, a call) only when some sample
    passes the guard; the batched statement evaluates them once, always -- and where they raise
    for a value no sample ever reached, only this form keeps the loop's behaviour. Only stores
    and augmented assignments are wrapped: a name first bound inside the block would be unbound
    after it when no sample passes."""
    if plan.mask is None or plan.consumers:
        raise CannotRewrite("no guard to run the batched statements under", facts.loop)
    at = next((k for k, s in enumerate(plan.statements) if _assigns(s, plan.mask)), None)
    rest = plan.statements[at + 1 :] if at is not None else []
    if not rest or not all(_store_or_augmented(s) for s in rest):
        raise CannotRewrite("the guarded statements bind names", facts.loop)
    block = cst.If(test=call(attribute(plan.mask, "any")), body=cst.IndentedBlock(body=list(rest)))
    plan.statements[at + 1 :] = [block]  # type: ignore[index]
    plan.descriptions.append("run only when some sample passes the guard")


def _assigns(statement: cst.BaseStatement, target: cst.BaseExpression) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Assign) and statement.body[0].targets[0].target.deep_equals(target)
    )


def _store_or_augmented(statement: cst.BaseStatement) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.AugAssign):
        return True
    if (
        isinstance(small, cst.Assign) and len(small.targets) == 1 and isinstance(small.targets[0].target, cst.Name)
        and isinstance(small.value, cst.BinaryOperation) and m.matches(small.value.left, m.Name(small.targets[0].target.value))
    ):
        return True  # `acc = acc + total`: an accumulation spelled as the loop spelled it
    return isinstance(small, cst.Assign) and all(isinstance(t.target, cst.Subscript) for t in small.targets)


def _lift_step(step: Step, lifter: Lifter, facts: LoopFacts, extent: Extent, options: Options, plan: "_Plan", spell) -> cst.CSTNode | None:  # noqa: ANN001
    """Batch one statement of the body into ``plan``; the statement when it is a result."""
    if step.kind is StepKind.TEMP:
        _temporary(step, lifter, facts, plan)
        return None
    if step.kind is StepKind.STORE:
        _store(step, lifter, facts, extent, options, plan)
        return step.statement
    if step.kind is StepKind.ACCUMULATE:
        _accumulate(step, lifter, facts, extent, options, plan, spell)
        return step.statement
    if step.kind is StepKind.APPEND:
        _append(step, lifter, facts, plan, spell, options)
        return step.statement
    if step.kind is StepKind.GUARD:
        _guard(step, lifter, facts, plan)
        return None
    if step.kind is StepKind.BRANCH:
        raise CannotRewrite("an `if` in the body (TFV005 lifts element-wise branches)", step.statement)
    raise CannotRewrite(
        f"`{_short(step.statement)}` in the body is neither a temporary, a store, an accumulation nor an append", step.statement
    )


def _finish(facts: LoopFacts, plan: "_Plan", lifter: Lifter, imports: set[str], anchor: cst.CSTNode | None, torch_name: str) -> LoopRewrite:
    _shared_definitions(plan)
    # the rewritten loop: its comments go with the first new statement
    statements = plan.statements
    if facts.comprehension is not None:
        old = [*plan.old, *(old for old, _ in plan.consumers)]
        new = [new for _, new in plan.consumers]
        return _rewrite(facts, plan, lifter, imports, anchor, torch_name, tuple(plan.edits), old, new)
    leading = plan.carried_lines + list(facts.loop.leading_lines) + comments_in(facts.loop.with_changes(leading_lines=()))
    # a comment a new statement keeps at its end (a temporary's own line) is not repeated above
    kept = {c.value for statement in statements for c in _kept_comments(statement)}
    leading = [line for line in leading if line.comment is None or line.comment.value not in kept
               or line in facts.loop.leading_lines or line in plan.carried_lines]
    if statements:
        statements[0] = statements[0].with_changes(leading_lines=leading)
        loop_edit = Edit(facts.loop, cst.FlattenSentinel(statements) if len(statements) > 1 else statements[0])
    else:
        loop_edit = Edit(facts.loop, cst.RemovalSentinel.REMOVE)
    edits = (loop_edit, *plan.edits)
    old = [*plan.old, facts.loop, *(old for old, _ in plan.consumers)]
    new = [*statements, *(new for _, new in plan.consumers)]
    return _rewrite(facts, plan, lifter, imports, anchor, torch_name, edits, old, new)


def _kept_comments(statement: cst.CSTNode) -> list[cst.Comment]:
    """The comment at the end of a new simple statement (carried over from the line it lifts)."""
    if isinstance(statement, cst.SimpleStatementLine) and statement.trailing_whitespace.comment is not None:
        return [statement.trailing_whitespace.comment]
    return []


def _rewrite(facts: LoopFacts, plan: "_Plan", lifter: Lifter, imports: set[str], anchor: cst.CSTNode | None, torch_name: str,
             edits: tuple[Edit, ...], old: list[cst.CSTNode], new: list[cst.CSTNode]) -> LoopRewrite:
    context = facts.context
    if facts.domain.measures is not None:
        # the tensor whose size is the loop count is walked along that dimension too
        lifter.walked_dims.setdefault(*facts.domain.measures)

    try:
        full = build_kernel(
            facts, old, new, tuple(dict.fromkeys(plan.outputs)), exclude_from_prelude=plan.exclude,
            extra_modules=(torch_name,) if "torch" not in context.bindings.values() else (),
            library=lifter.library.root,
            reorders_float_reduction=plan.reorders or lifter.reorders,
            note="the loop (with what it initialises and consumes) against its batched form",
            gradients=True,
            walked={**dict(facts.inner_walked), **lifter.walked_dims},
            positions={n for n in lifter.position_reads if _only_positions(facts, lifter, n)},
            inner=dict(facts.inner_walked),
            assumed_ranks=dict(lifter.hypotheses),
            definitions=tuple(plan.definitions),
        )
    except UnfaithfulKernel as exc:
        raise CannotRewrite(str(exc), facts.loop) from None
    problem = _unbatchable_input(full, facts, lifter)
    if problem is not None:
        raise problem
    description = "; ".join(dict.fromkeys(plan.descriptions)) or "batched loop body"
    replacement = edits[0].replacement if edits else None
    statements = tuple(replacement.nodes) if isinstance(replacement, cst.FlattenSentinel) else (
        (replacement,) if isinstance(replacement, cst.BaseStatement) else ())
    walked = {**dict(facts.inner_walked), **lifter.walked_dims}
    return LoopRewrite(facts, description, edits, full, tuple(sorted(imports)), tuple(lifter.assumptions), anchor, statements,
                       tuple(sorted(walked.items())), tuple(sorted(lifter.assumed_invariants)),
                       tuple(dict.fromkeys(lifter.opaque_callees)), plan.double_index, plan.batch_last)


def _unbatchable_input(kernel: Kernel, facts: LoopFacts, lifter: Lifter) -> CannotRewrite | None:
    """Why an input the rewrite batches (a walked name) may not be an array of the library
    spelled, or None: a list of tensors (maybe ragged) iterates like a tensor but does not batch
    like one, so a walked name needs positive evidence that it is an array."""
    body_names = names_used(facts.loop.body) if isinstance(facts.loop, cst.For) else set()
    walked = {**dict(facts.inner_walked), **lifter.walked_dims}
    walked_inputs = [
        s.name for s in kernel.inputs
        if s.name in walked and not _only_positions(facts, lifter, s.name)
        # the tensor that only gives the loop count (`range(x.size(0))`) is never batched
        and not (facts.domain.measures is not None and s.name == facts.domain.measures[0] and s.name not in body_names)
    ]
    array_kind = Kind.NDARRAY if lifter.library.is_numpy else Kind.TENSOR
    if not lifter.library.is_numpy:
        # a walked name the function computes (not an input) the code shows is an ndarray:
        # torch spellings (`torch.arange(..., device=x.device)`) do not apply to it
        for walked_name in sorted(walked):
            kinds = set(facts.evidence(walked_name).kinds)
            if kinds and kinds <= {Kind.NDARRAY, Kind.NUMPY_SCALAR}:
                return CannotRewrite(f"`{walked_name}` is a NumPy array", facts.loop, arrays=True)
    for spec in kernel.inputs:
        if spec.name in walked_inputs and spec.allowed_kinds() != (array_kind,) and not (
            # a tensor-or-ndarray the library's array may be: the checker tries each kind
            spec.batch_dim is not None and array_kind in spec.allowed_kinds() and walkable_arrays(spec.allowed_kinds())
        ):
            found = facts.evidence(spec.name)
            if lifter.library.is_numpy:
                return CannotRewrite(f"`{spec.name}` is not shown to be a NumPy array ({found.describe()})", facts.loop)
            arrays = Kind.NDARRAY in found.kinds and Kind.TENSOR not in found.kinds and Kind.LIST not in found.kinds
            return CannotRewrite(found.missing_tensor("batching its samples"), facts.loop, arrays=arrays)
    return None


def _shown_array(facts: LoopFacts, name: str) -> bool:
    """Whether the code shows ``name`` holds a tensor or an ndarray (or a NumPy scalar, which
    raises when indexed whatever the index), and nothing else."""
    kinds = set(facts.evidence(name).kinds)
    return bool(kinds) and kinds <= {Kind.TENSOR, Kind.NDARRAY, Kind.NUMPY_SCALAR}


def _only_positions(facts: LoopFacts, lifter: Lifter, walked: str) -> bool:
    """Whether every read of ``walked`` in the loop is a per-sample position (``p[i, labels[i]]``):
    then ``labels`` sliced to the loop's samples indexes the batch the same way whether it is a
    tensor, an ndarray or a list of integers, and the checker tries each kind the code allows."""
    reads = lifter.position_reads.get(walked, 0)
    body = facts.loop.body if isinstance(facts.loop, cst.For) else facts.loop
    # the elements the loop binds from it (`for j, t in enumerate(sent)`) read it too
    readers = {walked} | {w.element for w in facts.domain.walked if w.name == walked}
    return reads > 0 and reads == sum(1 for n in name_nodes(body) if n.value in readers)


def _layers_in_scope(facts: LoopFacts) -> dict[str, str]:
    """``self.fc`` -> ``torch.nn.Linear`` for the batch-transparent layers the enclosing class
    builds once in ``__init__``."""
    if facts.function is None:
        return {}
    owner = facts.context.enclosing_class(facts.function)
    params = facts.function.params.params
    if owner is None or not params:
        return {}
    self_name = params[0].name.value
    found = {}
    for attribute_ in owner.attributes.values():
        if attribute_.constructor is None or attribute_.name in owner.reassigned:
            continue
        row = callees.layer(attribute_.constructor)
        if row is not None and row.batching is callees.Batching.LAYER:
            found[f"{self_name}.{attribute_.name}"] = attribute_.constructor
    return found


# ----------------------------------------------------------------------------- statements


def _temporary(step: Step, lifter: Lifter, facts: LoopFacts, plan: _Plan) -> None:
    assert step.value is not None and step.small is not None
    names = sorted(assigned_names(step.small))
    for bound in names:
        if facts.used_after(bound):
            raise CannotRewrite(f"`{bound}` is assigned in the loop and read after it", step.statement)
    lifted = lifter.lift_selectable(step.value) if step.target is not None else lifter.lift(step.value)
    if lifted is None:
        raise CannotRewrite(lifter.why, step.statement)
    if not lifted.batched:
        # the same value at every step: computed once, before the batched statements (the
        # checker confirms that computing it where the loop ran no step changes nothing) --
        # only when computing it has no effect to repeat
        from torchfix.codemods.loops.kernels import is_replayable

        if not is_replayable(step.value, facts.context):
            raise CannotRewrite(f"`{_short(step.value)}` calls something once per step that torchfix cannot see into", step.statement)
        plan.statements.append(assign(step.small.targets[0].target, lifted.node))  # type: ignore[union-attr]
        plan.descriptions.append("loop-invariant statements computed once")
        return
    if step.target is None:
        raise CannotRewrite(f"`{_short(step.small)}` unpacks a per-sample value", step.statement)
    # later statements read the batched temporary by its name
    lifter.per_sample[step.target] = replace(lifted, node=name(step.target), keep=None)
    statement = assign(name(step.target), lifted.node)
    plan.statements.append(statement.with_changes(trailing_whitespace=step.statement.trailing_whitespace) if isinstance(step.statement, cst.SimpleStatementLine) else statement)


def _guard(step: Step, lifter: Lifter, facts: LoopFacts, plan: _Plan) -> None:
    """``if cond: continue`` (or a comprehension's ``if cond``): the statements after it see only
    the samples the guard lets through. The mask is computed once into a fresh name, and every
    per-sample value from here on is taken at those rows only -- so nothing the loop never
    computed for a skipped sample (an index out of range, a division by zero) is computed for
    it now."""
    assert step.condition is not None
    if plan.mask is not None:
        raise CannotRewrite("a second guard in the body is not lifted", step.statement)
    test, batched = _mask_of(step.condition, lifter, step.statement)
    if not batched:
        raise CannotRewrite("a guard that does not depend on the sample", step.statement)
    keep_value = test if step.keeps else cst.UnaryOperation(cst.BitInvert(), receiver(test))
    keep = _fresh_name(facts, "keep")
    plan.statements.append(assign(name(keep), keep_value))
    plan.mask = name(keep)
    lifter.filter_rows(name(keep))
    plan.descriptions.append("the guard as a mask")


def _mask_of(condition: cst.BaseExpression, lifter: Lifter, statement: cst.CSTNode) -> tuple[cst.BaseExpression, bool]:
    """A per-sample test as a boolean mask over the samples, and whether it depends on the
    sample. ``a and b`` / ``a or b`` / ``not a`` become ``&`` / ``|`` / ``~`` of their operands'
    masks: a test only asks for truth, which is what those give. Both sides of ``and`` are
    computed for every sample where the loop may have skipped the right one: an array the right
    side reads must be shown to have a row for every sample (:meth:`Lifter.covers`); any other
    way that raises, the checker refutes."""
    if isinstance(condition, cst.BooleanOperation):
        left, left_batched = _mask_of(condition.left, lifter, statement)
        with lifter.skippable():
            # (`a and b` asks `b` only where `a` holds: what `b` reads may be shorter)
            right, right_batched = _mask_of(condition.right, lifter, statement)
        operator = cst.BitAnd() if isinstance(condition.operator, cst.And) else cst.BitOr()
        return binary(receiver(left), operator, receiver(right)), left_batched or right_batched
    if isinstance(condition, cst.UnaryOperation) and isinstance(condition.operator, cst.Not):
        inner, batched = _mask_of(condition.expression, lifter, statement)
        return cst.UnaryOperation(cst.BitInvert(), receiver(inner)), batched
    lifted = lifter.lift(condition)
    if lifted is None:
        raise CannotRewrite(lifter.why, statement)
    if not lifted.batched:
        raise CannotRewrite("a guard that does not depend on the sample", statement)
    # (a test of `x[-1][i]` names no array whose rank a hypothesis could pin, and stays
    # unlifted: `x` may be a list of lists, which the checker does not build, and a list
    # compares with a number as one `False`)
    flatten = lifter.any_rank_reductions and not lifted.scalar and (lifted.rank != 0 or lifted.keepdim)
    if not flatten and lifter._need(lifted, f"`if {_short(condition)}`: a guard needs one number per sample") != 0:  # noqa: SLF001
        raise CannotRewrite(f"`if {_short(condition)}` tests a per-sample value that is not one number", statement)
    test = lifted.node if lifted.kind == "bool" else cst.Comparison(
        receiver(lifted.node), [cst.ComparisonTarget(cst.NotEqual(), integer(0))])
    if flatten:
        # after the rank guesses: `if t:` takes the truth of a one-element tensor (and raises
        # for more), so whatever the rank of a sample, its one element is its place in the
        # batch flattened
        test = method(receiver(test), "flatten")
    return test, True


def _fresh_name(facts: LoopFacts, stem: str) -> str:
    taken = {n.value for n in name_nodes(facts.scope)} | set(facts.context.bindings)
    candidate, k = stem, 1
    while candidate in taken:
        candidate, k = f"{stem}_{k}", k + 1
    return candidate


def _store(step: Step, lifter: Lifter, facts: LoopFacts, extent: Extent, options: Options, plan: _Plan) -> None:
    assert step.target is not None and step.value is not None and step.small is not None
    small = step.small
    target = step.subscript
    assert isinstance(target, cst.Subscript)
    _require_array_target(facts, step)
    # what Python computes is judged on the value with the body's temporaries written out
    # (`angle = p / 10000 ** (2 * k / d)`; `pe[p, k] = math.sin(angle)`)
    analysed = replace(step, value=_inlined(step, facts))
    numbers = _python_numbers(lifter, facts, analysed.value)  # type: ignore[arg-type]
    _refuse_inexact_python_math(analysed, numbers, lifter, facts)
    # a value of Python numbers alone has no device: its batch is made where it is stored (a
    # value that reads a tensor takes that tensor's device, which may be another)
    per_sample = {facts.domain.index or ""}
    own = (
        _number_math(analysed.value, numbers, facts)  # type: ignore[arg-type]
        and not _number_table_refuses(analysed.value, per_sample, numbers, facts)  # type: ignore[arg-type]
        and _raising_part(analysed.value, per_sample, facts) is None  # type: ignore[arg-type]
    )
    # a batch made on the target's device reads the target: its allocation must stay
    on_target = own or lifter.store_device == step.target
    saved, lifter.store_device = lifter.store_device, (step.target if own else lifter.store_device)
    try:
        lifted = _in_double_precision(step, lifter.lift(step.value), numbers, lifter, facts, plan)  # type: ignore[arg-type]
    finally:
        lifter.store_device = saved
    if lifted is None:
        raise CannotRewrite(lifter.why, step.statement)
    try:
        batched_target, axis, removed = _batched_target(lifter, target, extent)
    except CannotRewrite:
        fill = _scatter_fill(step, lifter, lifted, facts, plan)
        if fill is None:
            raise
        plan.statements.append(fill)
        plan.descriptions.append(f"`{step.target}` filled at every position the loop writes")
        plan.outputs.append(step.target)
        return
    batched_target = _whole_rows(target, batched_target, facts, extent)
    lifter.walked_dims.setdefault(step.target, next(k for k, e in enumerate(target.slice) if lifter.depends(e)))
    definition = facts.definition(step.target)
    slot_rank = _slot_rank(facts, step.target, definition, removed)
    value = lifted.node
    value_rank = 0 if lifted.scalar else lifted.rank
    # one number per sample into a slot whose rank nothing pins: written with the batch axis
    # last (`w[0, 0, i, :n].movedim(0, -1)[...] = v`), it fills each sample's slot whatever its
    # rank, where `w[0, 0, i, :n] = v` would broadcast `v` along the slot's last axis instead
    batch_last = (
        lifted.batched and value_rank == 0 and slot_rank is None and not lifted.keepdim and plan.mask is None
        and _basic_elements(target, lifter)
    )
    if batch_last:
        plan.batch_last = True
        batched_target = cst.Subscript(  # type: ignore[assignment]
            lifter.library.move_axis(lifter.spell, batched_target, axis, -1), [cst.SubscriptElement(cst.Index(cst.Ellipsis()))]
        )
    elif lifted.batched:
        if value_rank is not None and slot_rank is not None and value_rank < slot_rank:
            if axis:
                raise CannotRewrite(f"`{_short(target)}`: a value broadcast into a slot whose loop dimension is not first", step.statement)
            if lifted.keepdim:
                raise CannotRewrite(f"`{_short(target)}`: a `x[i:i + 1]` sample broadcast into a larger slot", step.statement)
            value = _unsqueeze_after_batch(value, slot_rank - value_rank)
        elif value_rank is not None and slot_rank is not None and value_rank > slot_rank and not lifted.keepdim:
            raise CannotRewrite(f"`{_short(target)}`: a sample has more dimensions than the slot it is stored in", step.statement)
        elif value_rank is None or slot_rank is None:
            lifter._assume(f"a sample of `{_short(step.value)}` has as many dimensions as `{_short(target)}`")  # noqa: SLF001
        if axis:
            if lifted.keepdim:
                raise CannotRewrite(f"`{_short(target)}`: a `x[i:i + 1]` sample stored at a later dimension", step.statement)
            value = lifter.library.move_axis(lifter.spell, value, 0, axis)
    else:
        # an invariant stored in every row: a broadcast fill
        pass
    operator = step.operator
    if plan.mask is not None:
        number = _number_literal(step.value)
        if axis or step.operator is not None or not (lifted.batched or number):
            raise CannotRewrite(f"`{_short(target)}`: a guarded store of this form is not lifted", step.statement)
        walked = [(k, lifter.index_form(e)) for k, e in enumerate(target.slice) if lifter.depends(e)]
        if any(k != 0 for k, _ in walked):
            # (only an array's rows are ever shown to cover the loop)
            raise CannotRewrite(f"`{_short(target)}`: a guarded store along a later dimension", step.statement)
        shifts = [form[1] for _, form in walked if form is not None]
        if step.target is not None and not lifter.covers(step.target, max(shifts, default=0)):
            raise CannotRewrite(
                f"`{step.target}` is written only where the guard holds: it may have fewer rows than the loop runs "
                "(the loop never writes the others)", step.statement,
            )
        # only the rows the guard lets through are written (the value has those rows only)
        if m.matches(batched_target, m.Subscript(value=m.Name(), slice=[m.SubscriptElement(m.Slice(lower=None, upper=None, step=None))])):
            batched_target = batched_target.value  # type: ignore[attr-defined]  # `t[:][keep]` is `t[keep]`
        batched_target = subscript(batched_target, [index_of(plan.mask)])
        if not lifter.library.is_numpy and not number:
            # a masked store is an index_put, which wants the target's dtype (a store of one
            # sample, `t[i] = v`, casts; so does a Python number in either form)
            value = call(attribute(value, "to"), attribute(name(step.target), "dtype"))
    whole = (
        not batch_last
        and not on_target
        and plan.mask is None
        and options.replace_allocation
        and operator is None
        and definition is not None
        and definition.same_block
        and not definition.between
        and is_allocation(definition.value, facts)
        and len(target.slice) == 1
        and lifted.batched
        and not lifted.keepdim
        and _covers_whole(definition.value, extent, facts)  # type: ignore[arg-type]
        and _device_follows(definition.value, value, facts)  # type: ignore[arg-type]
        and sum(1 for s in facts.steps if s.target == step.target) == 1
    )
    if whole:
        assert definition is not None
        # the allocation existed only for the loop: the batched value takes its place
        plan.edits.append(Edit(definition.statement, cst.RemovalSentinel.REMOVE))
        plan.old.append(definition.statement)
        plan.exclude.append(definition.statement)
        plan.statements.append(assign(name(step.target), fresh(value, facts, lifter.library.is_numpy)))
        plan.descriptions.append(f"`{step.target}` computed at once")
    else:
        if operator is None:
            plan.statements.append(cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(batched_target)], value)]))
        else:
            augmented = {cst.Add: cst.AddAssign, cst.Subtract: cst.SubtractAssign, cst.Multiply: cst.MultiplyAssign,
                         cst.Divide: cst.DivideAssign}.get(type(operator))
            if augmented is None:
                raise CannotRewrite(f"`{_short(small)}`: this augmented store is not lifted", step.statement)
            may_be_ndarray = any(Kind.NDARRAY in facts.evidence(n).kinds for n in names_used(value))
            if may_be_ndarray and not lifter.library.is_numpy and step.target is not None:
                # a NumPy array of the batch meets a tensor: torch adds it into a CPU tensor but
                # raises for a GPU one (`mean[c] += images[:, c].mean()` adds a NumPy scalar, which
                # any device takes) -- so the batch is made a tensor on the target's device first
                value = call(
                    lifter.library.function(lifter.spell, "as_tensor"), value,
                    device=attribute(name(step.target), "device"),
                )
            plan.statements.append(cst.SimpleStatementLine([cst.AugAssign(batched_target, augmented(), value)]))
        plan.descriptions.append(f"`{step.target}` filled at once")
    plan.outputs.append(step.target)


#: math functions both Python and torch round correctly (or that are exact): the batch computes
#: the very numbers the loop does
_EXACT_MATH = frozenset({"fabs", "sqrt", "floor", "ceil", "trunc", "copysign"})
#: float dtypes an allocation may name
_FLOAT_DTYPES = frozenset({"float", "float32", "float64", "double", "half", "float16", "bfloat16"})


def _refuse_inexact_python_math(step: Step, numbers: set[str], lifter: Lifter, facts: LoopFacts) -> None:
    """A value of Python numbers computed with ``**`` or a transcendental ``math`` function
    (``math.exp``, ``i ** (1 / 3)``) may be stored only into an array shown to hold floats.
    Python's libm and torch's kernels may round such a result one unit in the last place apart:
    harmless in a float, but truncation into an int (``125 ** (1 / 3)`` is 4.999... in Python)
    or a bool turns it into another value; and ``(-1) ** (k / n)`` is complex in Python.
    ``numbers``: the names the value reads as Python numbers (:func:`_python_numbers`)."""
    if step.value is None or not _number_math(step.value, numbers, facts):
        return
    if not lifter.library.is_numpy and any(
        (facts.context.qualified(n.func) or "").startswith("numpy.") for n in _walk(step.value) if isinstance(n, cst.Call)
    ):
        # `np.exp(i / 100)`: on the batch, a NumPy function of a float32 tensor (and no GPU)
        raise CannotRewrite(f"`{_short(step.value)}`: a NumPy function of per-sample numbers in a torch loop", step.statement)
    if _python_type(step.value, numbers, facts) is None:
        ambiguous = sorted(n for n in names_used(step.value) & numbers if _number_type(n, facts) is None)
        raise CannotRewrite(
            f"`{_short(step.value)}` is an int or a float depending on what "
            + (f"`{ambiguous[0]}` holds" if ambiguous else "its numbers hold")
            + ": Python computes it exactly in ints or in float64, and no one dtype does both"
            + (f"; annotate `{ambiguous[0]}: int` or write `float({ambiguous[0]})`" if ambiguous else ""),
            step.statement,
        )
    inexact = None
    # the temporaries the value reads are part of it (`r = float(i) ** (1 / 3); out[i] = r`)
    temporaries = {t.target: t.value for t in facts.steps if t.kind is StepKind.TEMP and t.target and t.value is not None}
    parts, seen, pending = [step.value], set(), list(names_used(step.value) & set(temporaries))
    while pending:
        temp = pending.pop()
        if temp not in seen:
            seen.add(temp)
            parts.append(temporaries[temp])
            pending += list(names_used(temporaries[temp]) & set(temporaries))
    for node in (n for part in parts for n in _walk(part)):
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power):
            inexact = "`**`"
        elif isinstance(node, cst.Call):
            qualified = facts.context.qualified(node.func) or ""
            if qualified.startswith(("math.", "numpy.")) and qualified.rsplit(".", 1)[-1] not in _EXACT_MATH:
                inexact = f"`{qualified}`"
        if inexact:
            break
    if inexact is not None and not _shown_float_array(facts, step.target or ""):
        raise CannotRewrite(
            f"`{_short(step.value)}` uses {inexact} of Python numbers, which torch may round one unit in the last place "
            f"apart from Python; nothing shows `{step.target}` holds floats (an int or bool slot would truncate the difference)",
            step.statement,
        )


def _python_numbers(lifter: Lifter, facts: LoopFacts, value: cst.BaseExpression) -> set[str]:
    """The names a lift reads as Python numbers: the function's, the loop index, and the names
    of ``value`` the code shows hold Python numbers only (`lo = float(lo)`, `f: float`)."""
    found = set(lifter.numbers) | ({facts.domain.index} if facts.domain.index else set())
    for name_ in names_used(value):
        kinds = set(facts.evidence(name_).kinds)
        if kinds and kinds <= {Kind.INT, Kind.FLOAT, Kind.BOOL}:
            found.add(name_)
    return found


def _number_math(value: cst.BaseExpression, numbers: set[str], facts: LoopFacts) -> bool:
    """Whether ``value`` is made of Python numbers, arithmetic and ``math`` / NumPy functions of
    them (``np.exp(i / 100)`` is a NumPy float64 of a Python number)."""
    if python_number(value, numbers):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _number_math(value.expression, numbers, facts)
    if isinstance(value, cst.BinaryOperation):
        return _number_math(value.left, numbers, facts) and _number_math(value.right, numbers, facts)
    if isinstance(value, cst.IfExp):
        return all(_number_math(part, numbers, facts) for part in (value.test, value.body, value.orelse))
    if isinstance(value, cst.Comparison):
        return _number_math(value.left, numbers, facts) and all(
            isinstance(c.operator, COMPARISONS) and _number_math(c.comparator, numbers, facts) for c in value.comparisons
        )
    numeric = (facts.context.qualified(value.func) or "").startswith(("numpy.", "math.")) if isinstance(value, cst.Call) else False
    builtin = isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in _CLAMPING_BUILTINS
    if numeric or builtin:
        return bool(value.args) and all(a.keyword is None and not a.star and _number_math(a.value, numbers, facts) for a in value.args)  # type: ignore[attr-defined]
    return False


def _shown_float_array(facts: LoopFacts, target: str) -> bool:
    """Whether ``target`` was allocated just before as an array of a real float dtype:
    ``torch.zeros(n)`` (the default dtype), ``np.zeros(n)`` (float64), ``dtype=torch.float64``."""
    definition = facts.definition(target)
    value = definition.value if definition is not None else None
    value = _unfilled(value)
    if not isinstance(value, cst.Call):
        return False
    qualified = facts.context.qualified(value.func) or ""
    root, _, leaf = qualified.partition(".")
    legacy = root == "torch" and leaf in _LEGACY_FLOAT_CONSTRUCTORS  # float32 / float64 / the default float dtype
    if not legacy and (root not in ("torch", "numpy") or leaf not in _ALLOCATORS):
        return False
    if sum(1 for node in _walk(facts.scope) if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For))
           and target in target_names(node.target)) != 1:
        return False  # bound again elsewhere (`out = out.long()` in a loop around this one)
    if legacy:
        return True
    dtype = next((a.value for a in value.args if a.keyword is not None and a.keyword.value == "dtype"), None)
    positional = [a.value for a in value.args if a.keyword is None]
    if dtype is None and root == "numpy" and len(positional) > (2 if leaf == "full" else 1):
        dtype = positional[-1]  # `np.zeros(n, int)`: NumPy's dtype may be positional
    if dtype is None:
        return leaf != "full"  # `full` takes its dtype from the fill value
    dotted = facts.context.qualified(dtype) or ""
    return dotted.split(".")[0] in ("torch", "numpy") and dotted.rsplit(".", 1)[-1] in _FLOAT_DTYPES


def _works_with_big_integers(value: cst.BaseExpression) -> bool:
    """An integer literal past 2**24 or a bitwise operator: arithmetic only int64 keeps exact."""
    for node in _walk(value):
        if isinstance(node, cst.Integer) and abs(int_literal(node) or 0) > 2**24:
            return True
        if isinstance(node, cst.BinaryOperation) and isinstance(
            node.operator, (cst.BitAnd, cst.BitOr, cst.BitXor, cst.LeftShift, cst.RightShift)
        ):
            return True
    return False


def _python_type(value: cst.BaseExpression, numbers: set[str], facts: LoopFacts) -> str | None:
    """"int" or "float": what Python computes ``value`` (Python numbers, the index, arithmetic
    and ``math`` / NumPy functions) as, whatever its numbers hold; None where that depends on
    them (``base * i`` for a ``base: float`` that may be an int: exact in ints, float64 in
    floats). An int meeting a float becomes a float as in Python (exact below 2**53)."""
    if isinstance(value, cst.Integer):
        return "int"
    if isinstance(value, cst.Float):
        return "float"
    if isinstance(value, cst.Name):
        if value.value == facts.domain.index:
            return "int"
        return _number_type(value.value, facts) if value.value in numbers else None
    if isinstance(value, cst.UnaryOperation):
        return _python_type(value.expression, numbers, facts)
    if isinstance(value, cst.IfExp):
        # what Python computes depends on the test only where the two branches differ in type
        body, orelse = _python_type(value.body, numbers, facts), _python_type(value.orelse, numbers, facts)
        return body if body == orelse else None
    if isinstance(value, cst.BinaryOperation):
        left, right = _python_type(value.left, numbers, facts), _python_type(value.right, numbers, facts)
        if isinstance(value.operator, cst.Divide) or "float" in (left, right):
            return "float"  # whatever the other number is, it meets a float (or `/`) as a float
        if isinstance(value.operator, cst.Power):
            exponent = int_literal(value.right)  # int ** -1 is a float
            return "int" if left == "int" and exponent is not None and exponent >= 0 else None
        return "int" if left == right == "int" else None
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value in ("int", "len", "float"):
        return "float" if value.func.value == "float" else "int"  # whatever they are given
    if isinstance(value, cst.Call):
        qualified = facts.context.qualified(value.func) or ""
        args = [_python_type(a.value, numbers, facts) for a in value.args]
        if None in args:
            return None
        if qualified.startswith("math."):
            return "int" if qualified.rsplit(".", 1)[-1] in MATH_INTS else "float"
        if qualified.startswith("numpy."):
            return "float" if "float" in args else None
        if isinstance(value.func, cst.Name) and value.func.value in _CLAMPING_BUILTINS and args:
            return "float" if "float" in args else "int"
    return None


def _number_type(name_: str, facts: LoopFacts) -> str | None:
    """"int" or "float" where the code shows which Python number ``name_`` holds (a ``float``
    annotation admits ints as well: None)."""
    kinds = set(facts.evidence(name_).kinds) - {Kind.BOOL}
    if kinds == {Kind.INT}:
        return "int"
    if kinds == {Kind.FLOAT}:
        return "float"
    return None


def _slot_rank(facts: LoopFacts, target: str, definition: Definition | None, removed: int) -> int | None:
    """The rank of one slot ``target[i, ...]`` a store writes (``removed``: the other dimensions
    its indices remove): from the allocation that made ``target``, else a rank the code pins."""
    out_rank = _allocation_rank(definition.value, facts) if definition is not None else facts.shapes.ranks.get(target)
    return None if out_rank is None else out_rank - 1 - removed


def _basic_elements(target: cst.Subscript, lifter: Lifter) -> bool:
    """Whether every invariant index of ``target`` is an integer literal, a slice of literals or
    a name the code binds to a Python number: then the stored rows are a view, which a store
    through ``movedim`` writes into (a tensor or list index would select a copy)."""
    numbers = set(lifter.numbers)
    for element in target.slice:
        if lifter.depends(element):
            continue
        piece = element.slice
        if isinstance(piece, cst.Slice):
            bounds = [piece.lower, piece.upper, piece.step]
            if any(b is not None and int_literal(b) is None for b in bounds):
                return False
        elif not (int_literal(piece.value) is not None or (isinstance(piece.value, cst.Name) and piece.value.value in numbers)):
            return False
    return True


def _in_double_precision(step: Step, lifted: Lifted | None, numbers: set[str], lifter: Lifter, facts: LoopFacts, plan: _Plan) -> Lifted | None:
    """The stored value lifted with the loop index as float64 where it is made of Python numbers
    and makes a float somewhere (``(1 - math.fabs(j / f - c))``, ``int(j * 0.7)``): Python
    computes that in double precision and the store casts the result, where ``arange(n) * 0.7``
    would compute in float32 (the lift refuses that: ``Lifter._refuse_float32_numbers``).
    Only this value is lifted so: an index that meets an array elsewhere keeps its dtype."""
    if lifter.extent.float_index or not _number_math(step.value, numbers, facts) or not _makes_a_float(step.value, numbers, facts):  # type: ignore[arg-type]
        return lifted
    if _works_with_big_integers(step.value):  # type: ignore[arg-type]
        # `(i * 1000000000039 % 1000003) / 1000003`: exact ints, then a float -- neither int64 (a
        # float32 division) nor float64 (inexact products) computes what Python does
        raise CannotRewrite(f"`{_short(step.value)}` mixes integers past 2**24 with floats: no one dtype computes it as Python does", step.statement)
    saved = lifter.extent
    lifter.extent = replace(saved, float_index=True)
    try:
        again = lifter.lift(step.value)  # type: ignore[arg-type]
    finally:
        lifter.extent = saved
    if again is None:
        raise CannotRewrite(lifter.why, step.statement)
    plan.double_index = True
    return again


#: builtins of Python numbers a body of number math may call (what they return is a number)
_NUMBER_FUNCTIONS = _CLAMPING_BUILTINS | {"float", "int"}


def _number_table(facts: LoopFacts, lifter: Lifter) -> str | None:
    """The array a loop body of Python-number math fills, or None. The body is temporaries
    and plain stores only (``k = p / 10000 ** (2 * i / d)``; ``pe[p, i] = math.sin(k) if i % 2
    == 0 else math.cos(k)``); every value reads the loop index, Python numbers, earlier such
    temporaries, the libraries and number builtins, and -- in an outer loop over a lifted inner
    one -- the target's ``.device``; every store writes one array allocated with a float dtype
    (where Python's rounding and the batch's may differ in the last place, a float keeps both
    within tolerance, and truncation into an int would not)."""
    if facts.domain.walked or facts.comprehension is not None or facts.domain.index is None:
        return None
    targets = {s.target for s in facts.steps if s.kind is StepKind.STORE}
    if len(targets) != 1:
        return None
    target = targets.pop()
    if target is None or not _shown_float_array(facts, target):
        return None
    known = set(lifter.numbers) | {facts.domain.index} | set(facts.context.bindings) | _NUMBER_FUNCTIONS | _enclosing_counts(facts)
    temporaries: set[str] = set()
    for step in facts.steps:
        if step.value is None or step.kind not in (StepKind.TEMP, StepKind.STORE):
            return None
        if step.kind is StepKind.STORE and (step.operator is not None or any(target in names_used(e) for e in step.indices)):
            return None
        if step.kind is StepKind.TEMP and (step.target is None or step.target == target):
            return None
        numbers = _number_names(facts, lifter) | temporaries
        if not _number_reads(step.value, target) <= known | temporaries:
            return None
        # (an outer loop over a lifted inner one reads what that lift spelled: library calls)
        if not facts.double_index and not _number_math(_inlined(step, facts), numbers, facts):
            return None
        if _number_table_refuses(step.value, temporaries | {facts.domain.index}, numbers, facts):
            return None
        if step.kind is StepKind.TEMP:
            temporaries.add(step.target)  # type: ignore[arg-type]
    return target


def _enclosing_counts(facts: LoopFacts) -> set[str]:
    """The indices and ``range`` counts of the loops around ``facts.loop`` in its function: where
    the loop runs, each of them is an int (``range`` took it)."""
    found: set[str] = set()
    node = facts.context.parents.get(facts.loop)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        if isinstance(node, cst.For):
            domain = loop_domain(node, facts.shapes.measures.get, facts.context.qualified)
            if domain is not None and domain.is_range:
                found |= {v for v in domain.variables if v} | ({domain.stop.value} if isinstance(domain.stop, cst.Name) else set())
        node = facts.context.parents.get(node)
    return found


def _number_table_refuses(value: cst.BaseExpression, per_sample: set[str], numbers: set[str], facts: LoopFacts) -> bool:
    """What a batch in float64 does not compute as Python does, or may raise where the loop did
    not, in a value of a number table:

    - integers past 2**24 or bitwise operators (Python's ints are exact and unbounded, float64's
      are not, int64's wrap);
    - ``int(...)`` and the ``math`` functions that return ints: as int64 tensors they make float32
      of what they meet, and wrap where Python's ints grow;
    - ``a ** b`` with a base Python may compute in ints, unless ``b`` is 0 to 3 (``(k + 1) ** p``
      and ``p ** 20`` are exact in Python, inf or wrapped in float64 and int64);
    - a part that the index does not read and that may raise (``1.0 / scale``, ``w[0]``,
      ``math.log(s)``) inside a branch of a conditional whose test is per sample: ``torch.where``
      computes both branches."""
    if _works_with_big_integers(value) or _integer_degree(value, per_sample, numbers, facts) is None:
        return True
    for node in _walk(value):
        if isinstance(node, cst.Call):
            qualified = facts.context.qualified(node.func) or ""
            if m.matches(node.func, m.Name("int") | m.Name("round")) or (
                qualified.startswith("math.") and qualified.rsplit(".", 1)[-1] in MATH_INTS
            ):
                return True
        if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Power):
            small = int_literal(node.right) in (0, 1, 2, 3)
            if not small and _python_type(node.left, numbers, facts) != "float":
                return True  # (a literal exponent: `(p - c) ** 2` is exact in float64 and int64 alike)
        if isinstance(node, cst.IfExp) and names_used(node.test) & per_sample:
            if _raising_part(node.body, per_sample, facts) is not None or _raising_part(node.orelse, per_sample, facts) is not None:
                return True
    return False


def _counts_size_the_table(facts: LoopFacts, table: str) -> bool:
    """For a number table filled by two loops lifted together: whether each loop's ``range``
    count is the table's size along the dimension its index stores at (``pe = torch.zeros(L, D)``,
    ``pe[p, k]`` for ``p`` in ``range(L)``, ``k`` in ``range(D)``), so the batched store's slices
    cover exactly the rows and columns the loops do. A single loop needs nothing: its store
    indexes each row it slices."""
    inner = lifted_inner_loop(facts)
    if inner is None:
        return True
    inner_facts = loop_facts(inner, facts.context)
    definition = facts.definition(table)
    allocation = _unfilled(definition.value) if definition is not None else None
    if inner_facts is None or not isinstance(allocation, cst.Call):
        return False
    sizes = [a.value for a in allocation.args if a.keyword is None and not a.star]
    if len(sizes) == 1 and isinstance(sizes[0], (cst.Tuple, cst.List)):
        sizes = [e.value for e in sizes[0].elements]
    counts = {d.index: d.stop for d in (facts.domain, inner_facts.domain) if d.index is not None}
    stores = [s for s in inner_facts.steps if s.kind is StepKind.STORE and s.target == table]
    for store in stores:
        for position, element in enumerate(store.indices):
            if not isinstance(element.slice, cst.Index) or not isinstance(element.slice.value, cst.Name):
                continue
            index = element.slice.value.value
            if index not in counts:
                continue
            count = counts[index]
            if position >= len(sizes) or not isinstance(count, cst.Name) or not m.matches(sizes[position], m.Name(count.value)):
                return False
    return bool(stores)


def _computed_once(facts: LoopFacts) -> cst.BaseExpression | None:
    """The first part of a number table's values that the batch computes once and that may
    raise (:func:`_raising_part`): the batch may then run only where the loop runs a step."""
    per_sample = {facts.domain.index or ""} | {s.target for s in facts.steps if s.kind is StepKind.TEMP and s.target}
    for step in facts.steps:
        part = _raising_part(step.value, per_sample, facts) if step.value is not None else None
        if part is not None:
            return part
    return None


def _integer_degree(value: cst.BaseExpression, per_sample: set[str], numbers: set[str], facts: LoopFacts) -> int | None:
    """How many loop indices (or counts) an integer part of ``value`` multiplies at most, or None
    where that passes 2 or an integer of unbounded size takes part. Python's ints are exact and
    unbounded; a batch computes them in int64 (exact to 2**63) or float64 (to 2**53). An index
    or a count is bounded by the loop (its square stays exact for any table that fits in
    memory); a name the code shows is an ``int`` is not (``10 ** 20`` overflows a tensor, and
    ``p * big`` loses its last digits)."""
    counts = set(per_sample) | loop_counts(facts) | _enclosing_counts(facts)

    def degree(node: cst.BaseExpression) -> int | None:
        if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
            return 0
        if isinstance(node, cst.Name):
            if node.value in counts:
                return 1
            if _number_type(node.value, facts) == "float" or node.value in facts.context.bindings:
                return 0
            return 0 if node.value not in numbers and _python_type(node, numbers, facts) is None else None
        if isinstance(node, cst.BinaryOperation) and _python_type(node, numbers, facts) == "int":
            left, right = degree(node.left), degree(node.right)
            if left is None or right is None:
                return None
            if isinstance(node.operator, cst.Multiply):
                total = left + right
            elif isinstance(node.operator, cst.Power):
                exponent = int_literal(node.right)
                total = None if exponent is None else left * exponent
            else:
                total = max(left, right)
            return total if total is not None and total <= 2 else None
        if isinstance(node, cst.Call):
            # what a call is given counts too (`float(big)` of a huge int overflows)
            parts = [degree(a.value) for a in node.args]
            if None in parts:
                return None
            return max(parts, default=0) if isinstance(node.func, cst.Name) and node.func.value in _CLAMPING_BUILTINS else 0
        parts = [degree(child) for child in child_nodes(node) if isinstance(child, cst.BaseExpression)]
        return None if None in parts else max(parts, default=0)

    return degree(value)


def _raising_part(value: cst.BaseExpression, per_sample: set[str], facts: LoopFacts) -> cst.BaseExpression | None:
    """The first part of ``value`` that reads no per-sample name and may raise for some values:
    the loop computed it only in the steps it ran, the batch computes it once, even where the
    loop ran no step (what reads a sample becomes a tensor operation, which does not raise on
    values)."""
    if not names_used(value) & per_sample:
        return None if _cannot_raise(value, facts) else value
    for child in child_nodes(value):
        if isinstance(child, cst.BaseExpression):
            part = _raising_part(child, per_sample, facts)
            if part is not None:
                return part
    return None


def _cannot_raise(value: cst.BaseExpression, facts: LoopFacts) -> bool:
    """Literals, names, library constants, ``+`` / ``-`` / ``*`` of those, division by a
    non-zero literal, and ``float(name)``."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.Name)):
        return True
    if isinstance(value, cst.Attribute):
        return facts.context.qualified(value) is not None or value.attr.value in ("device", "dtype")
    if isinstance(value, cst.UnaryOperation):
        return _cannot_raise(value.expression, facts)
    if isinstance(value, cst.BinaryOperation):
        if isinstance(value.operator, (cst.Add, cst.Subtract, cst.Multiply)) or _array_valued(value.left, facts) or _array_valued(value.right, facts):
            # (arithmetic with an array -- a lifted inner loop's -- does not raise on values)
            return _cannot_raise(value.left, facts) and _cannot_raise(value.right, facts)
        if isinstance(value.operator, (cst.Divide, cst.FloorDivide, cst.Modulo)):
            divisor = value.right
            nonzero = isinstance(divisor, (cst.Integer, cst.Float)) and float(divisor.value.replace("_", "")) != 0
            return nonzero and _cannot_raise(value.left, facts)
        return False
    if isinstance(value, cst.Comparison):
        return _cannot_raise(value.left, facts) and all(_cannot_raise(c.comparator, facts) for c in value.comparisons)
    if isinstance(value, cst.Call) and m.matches(value.func, m.Name("float")) and len(value.args) == 1:
        return isinstance(value.args[0].value, cst.Name)
    if isinstance(value, cst.Call) and (facts.context.qualified(value.func) or "").startswith(("torch.", "numpy.")):
        # an array function (a lifted inner loop's arange, sin, where) raises on kinds, not on
        # values (a count below zero is the checker's to draw)
        return all(_cannot_raise(a.value, facts) for a in value.args)
    return False


def _array_valued(value: cst.BaseExpression, facts: LoopFacts) -> bool:
    """Whether ``value`` is computed from an array the lift made (an ``arange``)."""
    return any(
        isinstance(node, cst.Call) and (facts.context.qualified(node.func) or "") in ("torch.arange", "numpy.arange")
        for node in _walk(value)
    )


def _number_reads(node: cst.CSTNode, target: str) -> set[str]:
    """The names ``node`` reads, leaving out attribute and keyword names and ``target.device``
    (the device of the array being filled, which a lifted inner loop spells)."""
    reads: set[str] = set()
    stack: list[cst.CSTNode] = [node]
    while stack:
        current = stack.pop()
        if m.matches(current, m.Attribute(value=m.Name(target), attr=m.Name("device"))):
            continue
        if isinstance(current, cst.Attribute):
            stack.append(current.value)
            continue
        if isinstance(current, cst.Arg):
            stack.append(current.value)
            continue
        if isinstance(current, cst.Name):
            reads.add(current.value)
            continue
        stack.extend(child_nodes(current))
    return reads


def _number_names(facts: LoopFacts, lifter: Lifter) -> set[str]:
    """The names a body of number math reads as Python numbers: the function's and the index."""
    return set(lifter.numbers) | ({facts.domain.index} if facts.domain.index else set())


def _inlined(step: Step, facts: LoopFacts) -> cst.BaseExpression:
    """``step``'s value with the body's earlier temporaries written out (for the analysis of
    what Python computes; the rewrite keeps the temporaries)."""
    assert step.value is not None
    earlier: dict[str, cst.BaseExpression] = {}
    for other in facts.steps:
        if other is step:
            break
        if other.kind is StepKind.TEMP and other.target is not None and other.value is not None:
            earlier[other.target] = other.value.visit(_Substitute(earlier))  # type: ignore[assignment]
    return step.value.visit(_Substitute(earlier))  # type: ignore[return-value]


class _Substitute(cst.CSTTransformer):
    def __init__(self, values: dict[str, cst.BaseExpression]) -> None:
        self.values = values

    def leave_Name(self, original_node: cst.Name, updated_node: cst.Name) -> cst.BaseExpression:
        value = self.values.get(original_node.value)
        if value is None:
            return updated_node
        return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])

    # an attribute's or a keyword's name is no read of that name
    def leave_Attribute(self, original_node: cst.Attribute, updated_node: cst.Attribute) -> cst.Attribute:
        return updated_node.with_changes(attr=original_node.attr)

    def leave_Arg(self, original_node: cst.Arg, updated_node: cst.Arg) -> cst.Arg:
        return updated_node.with_changes(keyword=original_node.keyword)


def _makes_a_float(value: cst.BaseExpression, numbers: set[str], facts: LoopFacts) -> bool:
    """Whether some part of ``value`` (Python numbers) is a float in Python."""
    return any(
        isinstance(node, cst.BaseExpression) and _python_type(node, numbers, facts) == "float" for node in _walk(value)
    )


def _scatter_fill(step: Step, lifter: Lifter, lifted: Lifted, facts: LoopFacts, plan: _Plan) -> cst.SimpleStatementLine | None:
    """``t[P, c, Q] = v`` for a loop that stores one loop-invariant number at per-sample positions
    (``alignment[j, i, t] = 1`` for ``j, t in enumerate(sent)``), or None where the store is not
    of that form.

    The same value lands at every position, so repeated positions need no order (the last write
    writes what the first did), and the set of elements written is the same whatever dimensions
    the advanced indices move. The value must be one number: a slot-shaped value would broadcast
    against the moved dimensions. The target must be stored only here, unguarded: a second store
    into it, or a mask, would make the order of the writes matter."""
    target = step.subscript
    if (
        not isinstance(target, cst.Subscript) or step.operator is not None or plan.mask is not None
        or lifted.batched or lifted.rank != 0 or not _plain_value(step.value)  # type: ignore[arg-type]
        or step.target in names_used(step.value)  # type: ignore[arg-type]
        or sum(1 for s in facts.steps if s.target == step.target) != 1
    ):
        return None
    # the loop reads each position after the earlier writes: positions that may be the target
    # itself (`zap(t, t)`) would be read before all writes when batched
    sources = sorted({n for e in target.slice if lifter.depends(e) for n in names_used(e)} - {facts.domain.index or ""})
    readers = sorted({w.name for w in facts.domain.walked if w.name and w.element in sources} | set(sources))
    if any(step.target in pair for pair in alias_pairs(facts.context, facts.loop, [step.target, *readers])):
        return None
    elements: list[cst.SubscriptElement] = []
    saved, lifter.device_of = lifter.device_of, step.target
    try:
        for element in target.slice:
            if not lifter.depends(element):
                elements.append(element)
                continue
            piece = element.slice
            if not isinstance(piece, cst.Index) or piece.star is not None:
                return None  # `t[i:i + 2] = v` writes a range per sample
            position = lifter.lift(piece.value)
            if position is None:
                raise CannotRewrite(lifter.why, step.statement)
            if not position.batched or position.keepdim or position.pair:
                return None
            # a row of positions per sample writes several elements: the rank decides
            if lifter._need(position, f"`{_short(target)}`: the rank of a position decides what a store writes", (1,)) != 0:  # noqa: SLF001
                return None
            if position.kind not in ("int", None):
                return None
            node = position.node
            if not lifter.library.is_numpy and not (isinstance(piece.value, cst.Name) and piece.value.value == facts.domain.index):
                # a 0-d int8 or int16 tensor indexes one position; a batch of them must be int64
                # (an ndarray or a list of positions is made one, on the target's device)
                if isinstance(node, cst.Name) and facts.evidence(node.value).tensor:
                    node = method(node, "long")
                else:
                    node = call(lifter.spell("torch.as_tensor"), node, dtype=lifter.spell("torch.long"),
                                device=attribute(name(step.target), "device"))
            elements.append(element.with_changes(slice=cst.Index(node)))
            # a walked sequence read only as positions may be a list of integers as well
            lifter._count_position_read(piece.value)  # noqa: SLF001
            for walked in facts.domain.walked:
                if walked.name is not None and m.matches(piece.value, m.Name(walked.element)):
                    lifter.position_reads[walked.name] = lifter.position_reads.get(walked.name, 0) + 1
    finally:
        lifter.device_of = saved
    return cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(target.with_changes(slice=elements))], step.value)])  # type: ignore[arg-type]


def _plain_value(value: cst.BaseExpression) -> bool:
    """A number written out, ``True``/``False``, or a name or attribute read: evaluated once or
    once per step, it is the same value (no call, so nothing drawn or counted)."""
    if _number_literal(value):
        return True
    while isinstance(value, cst.Attribute):
        value = value.value
    return isinstance(value, cst.Name)


def _require_array_target(facts: LoopFacts, step: Step) -> None:
    """A store's target must be able to be an array: a list filled by position (``pieces =
    [None] * n``) stays a list of per-sample values, which no batched store reproduces."""
    holds = facts.evidence(step.target or "")
    if Kind.TENSOR not in holds.kinds and Kind.NDARRAY not in holds.kinds:
        raise CannotRewrite(f"`{step.target}` is not an array ({holds.describe()}): its rows are not batched", step.statement)


def _number_literal(node: cst.BaseExpression) -> bool:
    """``2``, ``-1e20``, ``0.5``: a Python number written out."""
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        node = node.expression
    return isinstance(node, (cst.Integer, cst.Float))


def _count_test(facts: LoopFacts, extent: Extent) -> cst.BaseExpression | None:
    """``n > 0`` / ``len(x) > 0``: whether the loop runs at least once."""
    if extent.count is None:
        return None
    return cst.Comparison(extent.count, [cst.ComparisonTarget(cst.GreaterThan(), integer(0))])


def _accumulate(step: Step, lifter: Lifter, facts: LoopFacts, extent: Extent, options: Options, plan: _Plan, spell) -> None:  # noqa: ANN001
    assert step.target is not None and step.value is not None and step.operator is not None
    acc = step.target
    lifted = lifter.lift(step.value)
    if lifted is None:
        raise CannotRewrite(lifter.why, step.statement)
    if not lifted.batched:
        raise CannotRewrite(f"`{acc}` accumulates a loop-invariant value", step.statement)
    definition = facts.definition(acc)
    operator = step.operator
    if isinstance(operator, (cst.Add, cst.Subtract)):
        reducer = "sum"
    elif isinstance(operator, cst.Multiply):
        reducer = "prod"
    else:
        raise CannotRewrite(f"`{acc}` accumulates with an operator that is not `+`, `-` or `*`", step.statement)
    number_init = definition is not None and _number(definition.value)
    if lifted.scalar:
        if definition is None or not number_init:
            raise CannotRewrite(f"`{acc}` accumulates Python numbers from a start torchfix cannot see", step.statement)
        float_result = _literal_is_float(definition.value) or lifted.kind == "float"
        if not float_result and lifted.kind not in ("int", "bool"):
            raise CannotRewrite(
                f"`{acc}` starts as an int but the values' dtype is unknown: the sum is an int for integer tensors and a float otherwise",
                step.statement,
            )
        if reducer == "prod":
            raise CannotRewrite(f"`{acc}` multiplies Python numbers: the product would be computed in another precision", step.statement)
        if float_result:
            total = method(method(lifted.node, "sum", dtype=attribute(spell(lifter.library.root), "float64")), "item")
            plan.reorders = True
        else:
            total = method(method(lifted.node, "sum"), "item")
        plan.descriptions.append(f"`{acc}` as one reduction")
    else:
        if lifted.keepdim:
            total = method(lifted.node, reducer, integer(0), **{lifter.library.keepdim_keyword: name("True")})
        else:
            total = method(lifted.node, reducer, integer(0))
        plan.reorders = True
        plan.descriptions.append(f"`{acc}` as one reduction over the samples")
    statement: cst.BaseStatement
    if isinstance(step.small, cst.Assign):
        # `acc = acc + e` makes a new value where `acc += e` would write into a tensor `acc`
        # (which may be shared, or of a dtype the sum does not fit): the same spelling
        statement = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(name(acc))], binary(name(acc), operator, total))])
    else:
        augmented = {cst.Add: cst.AddAssign, cst.Subtract: cst.SubtractAssign, cst.Multiply: cst.MultiplyAssign}[type(operator)]
        statement = cst.SimpleStatementLine([cst.AugAssign(name(acc), augmented(), total)])
    if not lifted.scalar and number_init and options.guard_empty:
        test = _count_test(facts, extent)
        if test is None:
            raise CannotRewrite("the loop count is not known", step.statement)
        statement = cst.If(test=test, body=cst.IndentedBlock([statement]))
    plan.statements.append(statement)
    plan.outputs.append(acc)


def _number(node: cst.BaseExpression) -> bool:
    from torchfix.codemods.loops.nodes import is_number

    return is_number(node)


def _literal_is_float(node: cst.BaseExpression) -> bool:
    if isinstance(node, cst.UnaryOperation):
        node = node.expression
    return isinstance(node, cst.Float)


def _collected(facts: LoopFacts, step: Step, numpy: bool) -> tuple[str, Definition | None, _Consumer]:
    """What an append collects into -- its name (or "the comprehension"), the list's own
    ``items = []`` and the consumer after the loop that makes it a tensor; only a list created
    empty right before the loop and used nowhere else, and a consumer that fits the library the
    loop is lifted with (``numpy``): a NumPy function consumes NumPy lifts only, and a consumer
    after the loop's ``with torch.no_grad():`` block would compute a torch batch outside it."""
    if facts.comprehension is not None:
        definition, consumer = _comprehension_collected(facts)
        items = "the comprehension" if definition is None else definition.name
    else:
        items = step.target or ""
        definition = _empty_list_definition(facts, items, shared=True)
        # statements between the list and the loop may stay where they are: the three uses
        # counted below (made, appended to, consumed) leave none of them a read of the list
        if definition is None:
            raise CannotRewrite(f"`{items}` is not a list created empty before the loop, in its block", step.statement)
        consumer = _consumer(facts, items)
        if _uses_of_list(facts, items, consumer) != 3:
            raise CannotRewrite(f"`{items}` is used elsewhere: it must stay a list", step.statement)
    if consumer.numpy and not numpy:
        raise CannotRewrite(f"`{_short(consumer.call)}` makes a NumPy array of what the loop computes with torch", consumer.statement, arrays=True)
    if consumer.after_grad_mode and not numpy:
        raise CannotRewrite(f"`{items}` is turned into a tensor outside the grad mode the loop runs in", consumer.statement)
    return items, definition, consumer


def _empty_list_definition(facts: LoopFacts, items: str, shared: bool = False) -> Definition | None:
    """``items = []`` bound last before the loop, in the loop's own block (with ``shared``, also
    ``items, other = [], []``), else None."""
    definition = facts.definition(items, shared=shared)
    if definition is None or not m.matches(definition.value, m.List(elements=[])) or not definition.same_block:
        return None
    return definition


def _item_of(value: cst.BaseExpression | None) -> cst.BaseExpression | None:
    """``e`` of ``e.item()``, else None."""
    if isinstance(value, cst.Call) and not value.args and m.matches(value.func, m.Attribute(attr=m.Name("item"))):
        return value.func.value  # type: ignore[attr-defined]
    return None


def _kept_number_list(facts: LoopFacts, step: Step) -> Definition | None:
    """``items = []`` for a loop whose one append is ``items.append(e.item())`` and after which
    ``items`` stays a list of Python numbers (no consumer makes it one tensor): then the list is
    ``batch.tolist()`` at once -- the same numbers, of the same Python types (``.item()`` and
    ``.tolist()`` convert alike), in one sync instead of one per sample.

    Only where nothing can see the list between its ``items = []`` and the loop's end (the
    rewrite binds it there): every other use of the name follows the loop, and none sits in a
    nested function or lambda, which may run at any time."""
    items = step.target
    if facts.comprehension is not None or items is None or _item_of(step.value) is None:
        return None
    definition = _empty_list_definition(facts, items)
    if definition is None or any(items in names_used(s) for s in definition.between):
        return None
    appends = [s for s in facts.steps if s.kind is StepKind.APPEND and s.target == items]
    if len(appends) != 1:
        return None
    if _consumed(facts, items):
        return None  # a consumer makes it one tensor: that form is the batch itself
    context = facts.context
    own = {id(n) for statement in (definition.statement, step.statement) for n in name_nodes(statement)}
    start = context.position(facts.loop)
    for node in name_nodes(facts.scope):
        if node.value != items or id(node) in own:
            continue
        if context.position(node) <= start or _in_nested_function(facts, node):
            return None
    return definition


def _kept_row_list(facts: LoopFacts, step: Step) -> Definition | None:
    """``items = [...]`` (empty or not) for a loop whose one step is ``items.append(v)`` of the
    walked row itself -- ``for v in x``, ``x.unbind()``, or a one-row chunk ``c`` of
    ``torch.chunk(x, len(x))`` as ``c.squeeze(0)`` -- and after which ``items`` stays a list: it
    is ``items.extend(x.unbind(0))`` at once. Only rows the loop got by iterating: those are
    outputs of one op that returns many views, as ``unbind``'s are, so the list's tensors are
    the same views, refusing the same in-place writes under autograd (``x[i]`` is a view that
    takes them). Nothing may see the list between its binding and the loop's end."""
    items = step.target
    if facts.comprehension is not None or items is None or step.value is None or len(facts.steps) != 1:
        return None
    walked = {w.element: w for w in facts.domain.walked}
    value = step.value
    if m.matches(value, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("squeeze")), args=[m.Arg(value=m.Integer("0"), keyword=None)])):
        row = walked.get(value.func.value.value)  # type: ignore[attr-defined]
        if row is None or not row.keepdim:
            return None
    elif not isinstance(value, cst.Name) or value.value not in walked or walked[value.value].keepdim:
        return None
    definition = facts.definition(items)
    if definition is None or not isinstance(definition.value, cst.List) or not definition.same_block:
        return None
    if any(items in names_used(s) for s in definition.between) or any(items in names_used(e.value) for e in definition.value.elements):
        return None
    if not definition.value.elements and _consumed(facts, items):
        return None  # a consumer makes it one tensor: that form is the batch itself
    context = facts.context
    own = {id(n) for n in name_nodes(step.statement)} | {id(definition.statement.body[0].targets[0].target)}  # type: ignore[attr-defined]
    start, end = context.position(definition.statement), context.position(facts.loop)
    loop_nodes = {id(n) for n in name_nodes(facts.loop)}
    for node in name_nodes(facts.scope):
        if node.value != items or id(node) in own:
            continue
        if id(node) in loop_nodes or start <= context.position(node) <= end or _in_nested_function(facts, node):
            return None
    return definition


def _consumed(facts: LoopFacts, items: str) -> bool:
    """Whether a consumer after the loop makes the list ``items`` one array."""
    try:
        _consumer(facts, items)
    except CannotRewrite:
        return False
    return True


def _in_nested_function(facts: LoopFacts, node: cst.CSTNode) -> bool:
    """Whether ``node`` sits in a function or lambda inside the loop's scope."""
    current = facts.context.parents.get(node)
    while current is not None and current is not facts.scope:
        if isinstance(current, (cst.FunctionDef, cst.Lambda)):
            return True
        current = facts.context.parents.get(current)
    return False


def _number_list(step: Step, definition: Definition, value: cst.BaseExpression, facts: LoopFacts, plan: _Plan, description: str) -> None:
    """``items = []`` goes and the loop becomes ``items = value.tolist()``."""
    items = definition.name
    _drop_definition(plan, definition)
    plan.statements.append(assign(name(items), method(value, "tolist")))
    plan.outputs.append(items)
    plan.descriptions.append(description)


def _append(step: Step, lifter: Lifter, facts: LoopFacts, plan: _Plan, spell, options: Options) -> None:  # noqa: ANN001
    assert step.value is not None
    kept = _kept_number_list(facts, step)
    if kept is not None:
        # `e` of `e.item()`: one element per sample, whatever its rank (`.item()` raises else)
        lifted = lifter.lift(_item_of(step.value))  # type: ignore[arg-type]
        if lifted is None:
            raise CannotRewrite(lifter.why, step.statement)
        if not lifted.batched or lifted.scalar:
            raise CannotRewrite(f"`{kept.name}` collects a loop-invariant value or Python numbers", step.statement)
        value = lifted.node
        if lifted.rank != 0 or lifted.keepdim:
            # each sample's one element, in order: the batch flattened (`x[i].item()` where `x`
            # may be (n,) or (n, 1, 1))
            value = method(value, "flatten")
        _number_list(step, kept, value, facts, plan, f"`{kept.name}` as one list of numbers")
        return
    rows = _kept_row_list(facts, step) if not lifter.library.is_numpy else None
    if rows is not None:
        lifted = lifter.lift(step.value)
        if lifted is None:
            raise CannotRewrite(lifter.why, step.statement)
        if not lifted.batched or lifted.scalar or lifted.keepdim or lifted.pair or lifted.selected is not None:
            raise CannotRewrite(f"`{rows.name}` collects something else than the walked rows", step.statement)
        extend = method(name(rows.name), "extend", method(lifted.node, "unbind", integer(0)))
        plan.statements.append(cst.SimpleStatementLine([cst.Expr(extend)]))
        plan.outputs.append(rows.name)
        plan.descriptions.append(f"`{rows.name}` extended by the rows at once")
        return
    items, definition, consumer = _collected(facts, step, lifter.library.is_numpy)
    concatenated = consumer.form == "cat" and consumer.dim == 0
    lifted = lifter.lift_selectable(step.value) if concatenated else lifter.lift(step.value)
    if lifted is not None and lifted.selected is not None:
        # each sample's selected elements, concatenated in order: the batch's, row-major
        value = subscript(receiver(lifted.node), [index_of(lifted.selected)])
        _replace_consumer(plan, facts, consumer, definition, value, f"`{items}` selected at once")
        return
    if lifted is None and FLOAT32_NUMBERS in lifter.why and consumer.form in _TENSOR_FORMS:
        # a table of Python numbers (`torch.tensor([math.exp(-rate * t) ...])`): the index in
        # float64, as Python computes (the consumer below makes the table's dtype)
        lifter.extent = replace(lifter.extent, float_index=True)
        lifted = lifter.lift(step.value)
    if lifted is None:
        raise CannotRewrite(lifter.why, step.statement)
    if not lifted.batched:
        raise CannotRewrite(f"`{items}` collects a loop-invariant value", step.statement)
    value = lifted.node
    if consumer.form == "vstack":
        # np.vstack stacks 1-D samples as rows and concatenates samples of more dimensions
        rank = lifter._need(lifted, f"`{_short(consumer.call)}` of samples of unknown rank")  # noqa: SLF001
        if lifted.keepdim or rank == 0:
            raise CannotRewrite(f"`{_short(consumer.call)}` of one-number samples is not lifted", consumer.statement)
        value = value if rank == 1 else lifter.library.merge_first_two(value)
    elif consumer.form == "array":
        # np.array(items, dtype=...) of the samples is np.array(batch, dtype=...): same dtype
        # rules for NumPy scalars and arrays, and it still makes a copy. Only for one-number
        # samples: an empty list of rows would lose the rows' shape (np.array([]) is 1-D)
        if lifter._need(lifted, f"`{_short(consumer.call)}` of samples of unknown rank") != 0:  # noqa: SLF001
            raise CannotRewrite(f"`{_short(consumer.call)}` of samples with dimensions is not lifted", consumer.statement)
        value = consumer.call.with_changes(args=[consumer.call.args[0].with_changes(value=value), *consumer.call.args[1:]])
        typed = any(a.keyword is not None and a.keyword.value == "dtype" for a in consumer.call.args) or consumer.form != "array" or (
            isinstance(consumer.call.func, cst.Attribute) and consumer.call.func.attr.value not in ("array", "asarray"))
        if options.guard_empty and not typed and not (lifted.scalar and lifted.kind == "float"):
            # an empty list makes a float64 array whatever the batch's dtype (np.asarray([]))
            test = _runs_test(facts, lifter.extent)
            if test is None:
                raise CannotRewrite("the loop count is not known", consumer.statement)
            empty = consumer.call.with_changes(args=[consumer.call.args[0].with_changes(value=cst.List([])), *consumer.call.args[1:]])
            value = cst.IfExp(test=test, body=value, orelse=empty)
    elif consumer.form == "stack":
        if lifted.scalar:
            raise CannotRewrite(f"`{items}` collects Python numbers: `torch.stack` of them raises", step.statement)
        if lifted.keepdim:
            value = lifter.library.unsqueeze(spell, value, 1)
        if consumer.dim not in (0,):
            if consumer.dim < 0:
                raise CannotRewrite("stacking along a negative dimension is not lifted", consumer.statement)
            value = lifter.library.move_axis(spell, value, 0, consumer.dim)
    elif consumer.form == "cat":
        if lifted.scalar:
            raise CannotRewrite(f"`{items}` collects Python numbers: `torch.cat` of them raises", step.statement)
        if consumer.dim != 0:
            raise CannotRewrite("concatenating along another dimension than 0 is not lifted yet", consumer.statement)
        if not lifted.keepdim:
            if lifted.rank == 0:
                raise CannotRewrite("`torch.cat` of one-number samples raises", consumer.statement)
            if lifted.rank is None:
                lifter._assume(f"a sample of `{_short(step.value)}` has at least one dimension")  # noqa: SLF001
            if lifted.rank == 1 and m.matches(value, m.Call(func=m.Attribute(attr=m.Name("unsqueeze")), args=[m.Arg(m.Integer("1"))])):
                # `v.unsqueeze(0)` of one number per sample, concatenated: the batch of numbers
                value = value.func.value  # type: ignore[attr-defined]
            else:
                value = lifter.library.merge_first_two(value)
    elif consumer.form in _TENSOR_FORMS:
        if not lifted.scalar:
            raise CannotRewrite(f"`{_short(consumer.call.func)}({items})` of tensors", consumer.statement)
        numbers_only = lifter.extent.default_device and _numbers_only(lifted.node, lifter, facts)
        if numbers_only and lifted.kind == "float" and not lifter.extent.float_index:
            # Python numbers meet `/` or `math.*` in double precision: so does the batch
            lifter.extent = replace(lifter.extent, float_index=True)
            lifted = lifter.lift(step.value)
            if lifted is None:
                raise CannotRewrite(lifter.why, step.statement)
            value = lifted.node
        cast = "float" if consumer.form != "tensor" else {"float": "float", "int": "long", "bool": "bool"}.get(lifted.kind or "")
        if cast is None and numbers_only:
            raise CannotRewrite("the dtype of the collected numbers is not evident", step.statement)
        # the table lands where the consumer puts one: `torch.tensor` on the default device, in
        # the default float dtype for floats; the legacy constructors ignore the default device
        # (`torch.set_default_device("cuda")`): `torch.FloatTensor` is a CPU float32 tensor, and
        # `torch.Tensor` one of the default tensor type, as `torch.Tensor()` is
        def legacy() -> cst.Call:
            return call(lifter.library.function(spell, "Tensor"))

        if numbers_only:
            # made of Python numbers and an `arange` on the default device: no graph; int64 and
            # bool are what the numbers give already
            if consumer.form == "float tensor":
                value = method(method(value, "float"), "cpu")
            elif consumer.form == "default float tensor":
                value = method(value, "to", legacy())
            elif cast == "float":
                value = method(value, "to", call(lifter.library.function(spell, "get_default_dtype")))
        elif consumer.form == "float tensor":
            value = method(method(method(value, "detach"), cast), "cpu")
        elif consumer.form == "default float tensor":
            value = method(method(value, "detach"), "to", legacy())
        else:
            # the numbers the loop collected, as one list, made a tensor by the same call: the
            # same dtype and device on every machine. `.tolist()` gives the Python numbers
            # `.item()` gives (a float batch the very floats, whatever its float dtype), and no
            # graph; an int or bool kind is cast as `int()` / `bool()` made it
            listed = method(value, cast) if cast in ("long", "bool") else value
            listed = method(listed, "tolist")
            value = consumer.call.with_changes(args=[consumer.call.args[0].with_changes(value=listed)])
    _replace_consumer(plan, facts, consumer, definition, value, f"{items if definition is None else '`' + items + '`'} built at once")


def _replace_consumer(
    plan: _Plan, facts: LoopFacts, consumer: _Consumer, definition: Definition | None, value: cst.BaseExpression,
    description: str,
) -> None:
    """The collected list's consumer (``torch.stack(items)``) becomes ``value``; the list's own
    definition (``items = []``) goes, and both join the kernel's old side."""
    # each consumer's value is an output of its own: a loop that fills two lists is compared on both
    result = "_result" if not plan.consumers else f"_result_{len(plan.consumers) + 1}"
    value = fresh(value, facts, consumer.numpy)
    old_statement, new_statement = _consumer_kernel(consumer, value, result)
    if definition is not None and definition.others:
        # `a, b = [], []`: the names the rewrite makes at once leave the statement (all of them:
        # it goes), once every list is planned (:func:`_shared_definitions`)
        if not any(s is definition.statement for s in plan.old):
            plan.old.insert(0, definition.statement)
            plan.exclude.append(definition.statement)
        plan.shared.setdefault(id(definition.statement), (definition.statement, set()))[1].add(definition.name)
    elif definition is not None:
        _drop_definition(plan, definition)
    plan.edits.append(Edit(consumer.call, _in_context(value, facts, consumer.call)))
    plan.consumers.append((old_statement, new_statement))
    plan.outputs.append(result)
    plan.descriptions.append(description)


def _drop_definition(plan: _Plan, definition: Definition) -> None:
    """``items = []`` leaves the code and opens the kernel's old side."""
    plan.old.insert(0, definition.statement)
    plan.exclude.append(definition.statement)
    plan.edits.append(Edit(definition.statement, cst.RemovalSentinel.REMOVE))
    if definition.same_block and not definition.between:
        # the blank lines and comments above `items = []` stay above what replaces the loop
        plan.carried_lines.extend(definition.statement.leading_lines)


def _in_context(value: cst.BaseExpression, facts: LoopFacts, replaced: cst.CSTNode) -> cst.BaseExpression:
    """``value`` parenthesized where it replaces a call inside a larger expression (a call binds
    tighter than any operator)."""
    from torchfix.codemods.loops.nodes import is_atomic, parenthesized

    parent = facts.context.parents.get(replaced)
    if is_atomic(value) or isinstance(parent, (cst.Assign, cst.Return, cst.Arg, cst.AnnAssign, cst.Expr, cst.Element)):
        return value
    return parenthesized(value)


def _consumer_kernel(consumer: _Consumer, value: cst.BaseExpression, result: str) -> tuple[cst.SimpleStatementLine, cst.SimpleStatementLine]:
    return assign(name(result), consumer.call), assign(name(result), value)


# ----------------------------------------------------------------------------- fresh arrays


#: methods that may give back their receiver or a view of it (a cast to the dtype it has, a move
#: to the device it is on, a reshape): what they return is as fresh as the receiver
_MAY_SHARE_METHODS = frozenset({
    "view", "reshape", "flatten", "ravel", "squeeze", "unsqueeze", "permute", "transpose", "t", "movedim", "moveaxis",
    "swapaxes", "swapdims", "expand", "expand_as", "view_as", "reshape_as", "narrow", "select", "diagonal", "unfold",
    "float", "double", "half", "bfloat16", "long", "int", "short", "byte", "char", "bool", "type", "type_as", "to", "cpu",
    "cuda", "detach", "contiguous", "numpy", "as_strided", "real", "imag", "conj",
})
#: functions that may give back their argument (``torch.as_tensor(t)`` is ``t``)
_MAY_SHARE_FUNCTIONS = frozenset({"torch.as_tensor", "torch.asarray", "torch.from_numpy", "numpy.asarray",
                                  "numpy.asanyarray", "numpy.ascontiguousarray", "torch.vmap",
                                  # a NumPy scalar type called on an array of its dtype gives back the array
                                  *(f"numpy.{t}" for t in ("float16", "float32", "float64", "int32", "int64", "uint8", "bool_")),
                                  # a legacy constructor of one tensor is that tensor
                                  "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor",
                                  "torch.IntTensor", "torch.ByteTensor", "torch.BoolTensor", "torch.HalfTensor"})


def is_fresh(value: cst.BaseExpression, facts: LoopFacts) -> bool:
    """Whether ``value`` evidently evaluates to a new array that nothing else holds (or a Python
    number): an operator's result, an allocating call, an advanced index, or a view of such a
    value. A name, an attribute, a slice of one, a call that may give back its argument: not."""
    if isinstance(value, (cst.BinaryOperation, cst.Comparison, cst.Integer, cst.Float, cst.List, cst.Tuple)):
        return True
    if isinstance(value, cst.UnaryOperation):
        return not isinstance(value.operator, cst.Plus) or is_fresh(value.expression, facts)
    if isinstance(value, cst.Subscript):
        if is_fresh(value.value, facts):
            return True
        # an array of positions or a mask copies what it selects
        return any(isinstance(e.slice, cst.Index) and _an_array_index(e.slice.value, facts) for e in value.slice)
    if isinstance(value, cst.IfExp):
        return is_fresh(value.body, facts) and is_fresh(value.orelse, facts)
    if not isinstance(value, cst.Call):
        return False
    if any(a.keyword is not None and a.keyword.value in ("out", "inplace") for a in value.args):
        return False  # `F.relu(x, inplace=True)` is `x`; `torch.add(a, b, out=c)` is `c`
    qualified = facts.context.qualified(value.func)
    if qualified is not None:
        if qualified in _MAY_SHARE_FUNCTIONS:
            # `np.asarray(a)` is `a` itself where `a` is an array: as fresh as `a`
            positional = [a.value for a in value.args if a.keyword is None and not a.star]
            return qualified != "torch.vmap" and bool(positional) and is_fresh(positional[0], facts)
        if qualified == "numpy.array":
            return not any(a.keyword is not None and a.keyword.value == "copy" for a in value.args)
        row = callees.function(qualified)
        return row is not None and row.batching in _ALLOCATING
    if isinstance(value.func, cst.Call) and (facts.context.qualified(value.func.func) or "") == "torch.vmap":
        # `torch.vmap(f)(x)`: as fresh as what `f` gives back
        function = value.func.args[0].value if value.func.args else None
        return isinstance(function, cst.Lambda) and is_fresh(function.body, facts)
    if isinstance(value.func, cst.Attribute):
        attr = value.func.attr.value
        if attr.endswith("_") or attr in _MAY_SHARE_METHODS:
            return is_fresh(value.func.value, facts)  # in place, or maybe the receiver itself
        if attr in ("clone", "copy", "tolist", "masked_fill", "index_select", "gather", "repeat", "nonzero"):
            return True
        row = callees.method(attr)
        return row is not None and row.batching in _ALLOCATING
    return False


#: callee kinds that always allocate their result
_ALLOCATING = frozenset({callees.Batching.ELEMENTWISE, callees.Batching.REDUCTION, callees.Batching.ALONG_DIM,
                         callees.Batching.MATMUL, callees.Batching.ALLOCATE, callees.Batching.ALLOCATE_LIKE})


def _an_array_index(index: cst.BaseExpression, facts: LoopFacts) -> bool:
    """Whether ``index`` is evidently an array of positions or a mask of at least one dimension
    (an advanced index, which copies): an array the code pins a rank of, or one the loop reads a
    sample of (``labels[i]``) that the code shows is an array. Not a number, a 0-d tensor, a bool
    or a tuple of positions, which index basically (a view)."""
    from torchfix.codemods.loops.ranks import rank_of

    found = rank_of(index, facts.shapes.ranks, facts.context.qualified, frozenset(facts.shapes.numbers) | frozenset(facts.shapes.measures))
    if found is not None and found[1] and found[0] >= 1:
        return True
    if isinstance(index, cst.Name):
        body = facts.loop.body if isinstance(facts.loop, cst.For) else facts.loop
        return _shown_array(facts, index.value) and any(
            isinstance(n, cst.Subscript) and m.matches(n.value, m.Name(index.value)) for n in _walk(body)
        )
    return False


def fresh(value: cst.BaseExpression, facts: LoopFacts, numpy: bool) -> cst.BaseExpression:
    """``value``, copied unless it is evidently a new array: what replaces a consumer
    (``torch.cat(items)``, ``np.array(items)``) or an allocation made for the loop must not share
    memory with an array the function holds (``x[:n].flatten(0, 1)`` is a view of ``x``: writing
    into it would write into ``x``, where the old result was a copy)."""
    if is_fresh(value, facts):
        return value
    return method(receiver(value), "copy" if numpy else "clone")


# ----------------------------------------------------------------------------- the vmap rung


class _ToSample(cst.CSTTransformer):
    """The body expression rewritten over one sample: ``x[i, ...]`` -> ``xi[...]``, temporaries
    replaced by their (parenthesized) definitions."""

    def __init__(self, index: str | None, parameters: dict[str, str], temporaries: dict[str, cst.BaseExpression]) -> None:
        super().__init__()
        self.index = index
        self.parameters = parameters
        self.temporaries = temporaries
        self.unsupported = ""

    def leave_Subscript(self, original: cst.Subscript, updated: cst.Subscript) -> cst.BaseExpression:
        if self.index is None or not isinstance(original.value, cst.Name):
            return updated
        first = original.slice[0].slice
        if not (isinstance(first, cst.Index) and m.matches(first.value, m.Name(self.index))):
            if self.index in names_used(original.slice[0]) or any(self.index in names_used(e) for e in original.slice[1:]):
                self.unsupported = f"`{_short(original)}`"
            return updated
        if any(self.index in names_used(e) for e in original.slice[1:]):
            self.unsupported = f"`{_short(original)}`"
            return updated
        parameter = name(self.parameters[original.value.value])
        rest = list(updated.slice[1:])
        return subscript(parameter, rest) if rest else parameter

    def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
        if original.value in self.temporaries:
            from torchfix.codemods.loops.nodes import parenthesized, is_atomic

            value = self.temporaries[original.value]
            return value if is_atomic(value) else parenthesized(value)
        return updated


def vmap_loop(facts: LoopFacts, options: Options, torch_name: str = "torch") -> LoopRewrite:
    """The loop as ``torch.vmap`` of its body, for a body that computes one result (a store or
    an append) from per-sample reads: right for any ranks vmap supports, where the batched
    operations would need ranks the code does not pin."""
    if facts.blockers:
        raise CannotRewrite(facts.blockers[0], facts.loop)
    results = [s for s in facts.steps if s.kind in (StepKind.STORE, StepKind.APPEND)]
    if len(results) != 1 or any(s.kind not in (StepKind.TEMP, StepKind.STORE, StepKind.APPEND) for s in facts.steps):
        raise CannotRewrite("only a body with one store or append is mapped with torch.vmap", facts.loop)
    result = results[0]
    assert result.value is not None
    if result.kind is StepKind.STORE:
        _require_array_target(facts, result)
    context = facts.context
    extent = extent_of(facts, options)
    spell, imports = _speller(context)

    lifter = Lifter(context.qualified, spell, extent, index=facts.domain.index, ranks=_ranks(facts), numbers=_numbers(facts),
                    number_kind=lambda node: _python_type(node, set(_numbers(facts)), facts),
                    library=LIBRARIES[options.library])
    if lifter.library.is_numpy or not any(t == "torch" or t.startswith("torch.") for t in context.bindings.values()):
        raise CannotRewrite("torch.vmap maps tensors, not NumPy arrays", facts.loop)
    for walked in facts.domain.walked:
        if walked.keepdim:
            raise CannotRewrite("torch.vmap maps rows, and the loop walks one-row chunks", facts.loop)
        lifter.per_sample[walked.element] = lifter.walked(walked.source)
    for variable in facts.loop_variables:
        if facts.used_after(variable):
            raise CannotRewrite(f"the loop variable `{variable}` is read after the loop", facts.loop)
    temporaries: dict[str, cst.BaseExpression] = {}
    for step in facts.steps:
        if step.kind is StepKind.TEMP:
            if step.target is None:
                raise CannotRewrite("a body that unpacks several names is not mapped with torch.vmap", step.statement)
            assert step.value is not None
            if facts.used_after(step.target):
                raise CannotRewrite(f"`{step.target}` is assigned in the loop and read after it", step.statement)
            temporaries[step.target] = step.value.visit(_ToSample(None, {}, temporaries))  # type: ignore[assignment]
    # the mapped arguments: each tensor read as x[i, ...], and each walked sequence
    parameters: dict[str, str] = {}
    arguments: list[cst.BaseExpression] = []
    taken = set(names_used(facts.loop)) | set(context.bindings)
    index = facts.domain.index
    body_reads = [result.value, *(s.value for s in facts.steps if s.kind is StepKind.TEMP)]
    skippable = {id(node) for expression in body_reads for node in _skippable_subscripts(expression, index)}  # type: ignore[arg-type]
    read_always = {
        node.value.value for expression in body_reads for node in _subscripts_at_index(expression, index)  # type: ignore[attr-defined,arg-type]
        if id(node) not in skippable
    }
    rows: dict[str, cst.BaseExpression] = {}
    for base in sorted(read_always):  # (first: what they read shows which rows the others have)
        rows[base] = lifter._slice_rows(name(base))  # noqa: SLF001 - the rows the loop reads
    for expression in body_reads:
        assert expression is not None
        for node in _subscripts_at_index(expression, index):
            base = node.value.value  # type: ignore[attr-defined]
            if base in parameters:
                continue
            parameter = f"{base}_{index}" if f"{base}{index}" in taken else f"{base}{index}"
            while parameter in taken:
                parameter += "_"
            taken.add(parameter)
            parameters[base] = parameter
            lifter.walked_dims.setdefault(base, 0)
            if base not in rows:
                # read only by a branch the loop may skip: torch.vmap maps every row of it
                with lifter.skippable():
                    try:
                        rows[base] = lifter._slice_rows(name(base))  # noqa: SLF001
                    except CannotLift as exc:
                        raise CannotRewrite(str(exc), facts.loop) from exc
            arguments.append(rows[base])
    mapped_names = [parameters[b] for b in parameters]
    for walked in facts.domain.walked:
        mapped_names.append(walked.element)
        arguments.append(lifter._slice_rows(walked.source))  # noqa: SLF001
    kept = _kept_number_list(facts, result) if result.kind is StepKind.APPEND else None
    converter = _ToSample(index, parameters, temporaries)
    # `items.append(e.item())` kept a list: vmap maps `e`, and one `.tolist()` converts
    body = (_item_of(result.value) if kept is not None else result.value).visit(converter)  # type: ignore[union-attr]
    if converter.unsupported:
        raise CannotRewrite(f"{converter.unsupported} cannot be mapped with torch.vmap", result.statement)
    if index is not None and index in names_used(body):
        # the loop index as a number: mapped too, only where each use compares it with one
        # invariant tensor (`m.eq(i)`), which casts the int to its own dtype first -- so are the
        # mapped positions. Anywhere else a 0-d tensor is not the Python int it stands for
        # (`i / 10` would be float32, not float64)
        receiver = _compared_with(body, index)
        if receiver is None or receiver in mapped_names:
            raise CannotRewrite(f"the loop index `{index}` used as a number cannot be mapped with torch.vmap", result.statement)
        arguments.append(_mapped_index(facts, lifter, receiver, result.statement))
        mapped_names.append(index)
    if not mapped_names:
        raise CannotRewrite("the body reads no sample", facts.loop)
    helpers = helpers_called(context, body, at=facts.loop) or []
    helper_names = {h.name.value for h in helpers}
    for callee in _calls_of(body):
        if isinstance(callee.func, cst.Name) and callee.func.value in helper_names:
            continue  # a pure helper of the module: the kernel holds its definition
        row = callees.of_call(callee.func, context.qualified(callee.func))
        if row is not None and row.batching is callees.Batching.CONVERT and not set(names_used(callee)) & set(mapped_names):
            continue  # `float(num_pos)` of a loop invariant: one number, the same on every sample
        if row is None or row.batching in (callees.Batching.RANDOM, callees.Batching.EFFECT, callees.Batching.CONVERT):
            raise CannotRewrite(f"`{_short(callee)}` cannot run under torch.vmap", result.statement)
    function = cst.Lambda(
        params=cst.Parameters(params=[cst.Param(name(p)) for p in mapped_names]),
        body=body,
    )
    mapped = call(attribute(spell("torch"), "vmap"), function)
    value: cst.BaseExpression = call(mapped, *arguments)
    plan = _Plan()
    plan.reorders = True
    plan.definitions = [(h.name.value, kernel_text(context, h)) for h in helpers]
    anchor: cst.CSTNode = result.statement
    if result.kind is StepKind.STORE:
        target = result.subscript
        assert isinstance(target, cst.Subscript)
        batched_target, axis, removed = _batched_target(lifter, target, extent)
        batched_target = _whole_rows(target, batched_target, facts, extent)
        if result.operator is not None:
            raise CannotRewrite("torch.vmap is offered for `out[i] = ...` stores only", result.statement)
        slot_rank = _slot_rank(facts, result.target or "", facts.definition(result.target or ""), removed)
        if slot_rank != 0 and _one_number_per_sample(result.value, facts) and _basic_elements(target, lifter):
            # one number per sample into a slot of unknown or several dimensions: stored with the
            # batch axis last, it fills each sample's slot (`out[:] = v` would broadcast `v`
            # along the slot's last axis instead)
            plan.batch_last = True
            batched_target = cst.Subscript(  # type: ignore[assignment]
                lifter.library.move_axis(lifter.spell, batched_target, axis, -1), [cst.SubscriptElement(cst.Index(cst.Ellipsis()))]
            )
        elif axis:
            raise CannotRewrite("torch.vmap is offered for `out[i] = ...` stores only", result.statement)
        statement: cst.BaseStatement = cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(batched_target)], value)])
        if options.guard_empty:
            # torch.vmap cannot map some functions over an empty batch: the loop ran no step there
            test = _count_test(facts, extent)
            if test is None:
                raise CannotRewrite("the loop count is not known", result.statement)
            statement = cst.If(test=test, body=cst.IndentedBlock([statement]))
        plan.statements.append(statement)
        plan.outputs.append(result.target or "")
        plan.descriptions.append(f"`{result.target}` filled by torch.vmap of the loop body"
                                 + (", guarded against an empty batch" if options.guard_empty else ""))
    elif kept is not None:
        if options.guard_empty:
            raise CannotRewrite("a list of numbers has no guarded form", result.statement)
        _number_list(result, kept, value, facts, plan, f"`{kept.name}` as one list of numbers by torch.vmap of the loop body")
    else:
        items, definition, consumer = _collected(facts, result, numpy=False)
        if consumer.form != "stack" or consumer.dim != 0:
            raise CannotRewrite("torch.vmap is offered for `torch.stack(items)` only", consumer.statement)
        if options.guard_empty:
            raise CannotRewrite("a stacked result has no guarded form", result.statement)
        _replace_consumer(
            plan, facts, consumer, definition, value,
            f"{items if definition is None else '`' + items + '`'} built by torch.vmap of the loop body",
        )
    return _finish(facts, plan, lifter, imports, anchor, torch_name)


def _mapped_index(facts: LoopFacts, lifter: Lifter, receiver: str, statement: cst.CSTNode) -> cst.BaseExpression:
    """The loop's positions as one tensor on ``receiver``'s device, in the dtype a Python int
    takes beside it (``torch.arange(n, device=m.device).to(torch.result_type(m, 0))``)."""
    saved, lifter.device_of = lifter.device_of, receiver
    try:
        positions = lifter._arange()  # noqa: SLF001 - the lifter's own spelling of the loop's range
    except CannotLift as exc:
        raise CannotRewrite(str(exc), statement) from None
    finally:
        lifter.device_of = saved
    if lifter.extent.float_index or lifter.row_filter is not None:
        raise CannotRewrite("the loop index is mapped as an int64 position only", statement)
    return lifter.library.as_weak_number(lifter.spell, positions.node, name(receiver), "int")


def _compared_with(body: cst.BaseExpression, index: str) -> str | None:
    """``m`` where every use of ``index`` in ``body`` is ``m.eq(index)`` (or another comparison
    method) of one named receiver ``m``, else None."""
    receivers: set[str] = set()
    uses = [n for n in name_nodes(body) if n.value == index]
    compared = 0
    for node in _calls_of(body):
        func = node.func
        if (isinstance(func, cst.Attribute) and func.attr.value in COMPARISON_METHODS and isinstance(func.value, cst.Name)
                and len(node.args) == 1 and node.args[0].keyword is None and m.matches(node.args[0].value, m.Name(index))):
            receivers.add(func.value.value)
            compared += 1
    return receivers.pop() if len(receivers) == 1 and compared == len(uses) and uses else None


#: whole-sample reductions' keywords that keep a dimension or pick one (then not one number)
_DIM_KEYWORDS = frozenset({"dim", "axis", "keepdim", "keepdims", "out"})


def _one_number_per_sample(value: cst.BaseExpression, facts: LoopFacts) -> bool:
    """Whether ``value`` is one number whatever rank a sample has: a whole-sample reduction
    (``t.sum()``, ``torch.mean(t)``), a Python number, a shape-keeping conversion of one, or
    arithmetic of those alone (an invariant tensor operand could broadcast it to its own rank)."""
    if python_number(value, set(_numbers(facts))):
        return True
    if isinstance(value, cst.UnaryOperation):
        return _one_number_per_sample(value.expression, facts)
    if isinstance(value, cst.BinaryOperation):
        return not isinstance(value.operator, cst.MatrixMultiply) and all(
            _one_number_per_sample(side, facts) for side in (value.left, value.right)
        )
    if not isinstance(value, cst.Call) or any(a.star for a in value.args):
        return False
    row = callees.of_call(value.func, facts.context.qualified(value.func))
    if row is None or any(a.keyword is not None and a.keyword.value in _DIM_KEYWORDS for a in value.args):
        return False
    positional = [a.value for a in value.args if a.keyword is None]
    method_call = isinstance(value.func, cst.Attribute) and facts.context.qualified(value.func) is None
    if row.batching is callees.Batching.REDUCTION:
        # no dimension given: every dimension is reduced (a method's first positional argument,
        # a function's second, would be one)
        return not positional if method_call else len(positional) == 1
    if row.batching is callees.Batching.ELEMENTWISE and method_call and not positional:
        return _one_number_per_sample(value.func.value, facts)  # type: ignore[attr-defined]  # `.float()` of one number
    return False


def _skippable_subscripts(expression: cst.CSTNode, index: str | None) -> list[cst.Subscript]:
    """The ``x[i, ...]`` reads of ``expression`` that Python may skip for a sample (in a part
    :func:`skippable_parts` finds: a branch of ``a if c else b``, the right side of ``and``)."""
    assert isinstance(expression, cst.BaseExpression)
    return [read for part in skippable_parts(expression) for read in _subscripts_at_index(part, index)]


def _subscripts_at_index(expression: cst.CSTNode, index: str | None) -> list[cst.Subscript]:
    if index is None:
        return []
    found = []
    stack = [expression]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Subscript) and isinstance(node.value, cst.Name):
            first = node.slice[0].slice
            if isinstance(first, cst.Index) and m.matches(first.value, m.Name(index)):
                found.append(node)
        stack.extend(reversed(node.children))
    return found
