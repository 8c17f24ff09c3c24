"""The verification kernel of a loop rewrite: what the checker runs, old against new.

A kernel is the loop as the user wrote it (with the statements that initialise what it writes and
the one that consumes its list) against the rewrite, both preceded by the same *prelude*: the
pure statements of the function that compute what the loop reads (``b, c = x.shape``,
``w = torch.zeros(c)``, ``feats = x.view(b, -1)``). Replaying them pins what the function itself
pins -- ranks, sizes shared between tensors -- so the checker explores the inputs the function
can see rather than any tensor at all. Only the unbroken run of such statements right before the
loop is replayed: a statement the checker could not run safely (a call to anything outside the
callee table, an attribute of ``self``, an in-place change) may change what earlier ones bound,
so it ends the prelude, and the names still needed become inputs of the kernel instead.
"""

from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Collection, Iterable, Sequence

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.analysis import VIEW_METHODS, all_nodes, child_nodes, comprehension_variables, dotted, is_in_place_method, parameter_names, target_names
from torchfix.codemods.loops import callees
from torchfix.codemods.loops.callees import Batching
from torchfix.codemods.loops.domain import loop_domain
from torchfix.codemods.loops.facts import IN_HANDLER, LoopFacts, _walk, inside_handler, loop_counts
from torchfix.codemods.loops.module import BUILTINS, FRAME_ATTRIBUTES, ModuleContext, shadowed_builtins
from torchfix.codemods.loops.nodes import assigned_names, names_used, statement_code
from torchfix.codemods.loops.ranks import dims_taken, fewest_dims
from torchfix.codemods.base import Proposal
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

if TYPE_CHECKING:
    from libcst.metadata import MetadataWrapper

#: builtins a replayed statement may call
_PURE_BUILTINS = frozenset({"len", "range", "int", "float", "bool", "abs", "min", "max", "round", "tuple", "list", "sum"})
#: tensor attributes a replayed statement may read
_PURE_ATTRIBUTES = frozenset({"shape", "dtype", "device", "T", "mT", "data", "ndim", "is_cuda", "real"})
#: in-place fills a replayed statement may apply to the allocation it makes
FILLS = frozenset({"fill_", "zero_"})
#: tensor methods that only read the shape
_SHAPE_METHODS = frozenset({"size", "dim", "numel", "ndimension"})


@dataclass(frozen=True)
class KernelParts:
    """The statements of a kernel before they become text."""

    prelude: tuple[cst.BaseStatement, ...]
    old: tuple[cst.CSTNode, ...]
    new: tuple[cst.CSTNode, ...]
    outputs: tuple[str, ...]


def is_replayable(node: cst.CSTNode, context: ModuleContext) -> bool:
    """Whether the checker may run ``node``: every call is a library function or method of the
    callee table (no random draws, no effects) or a pure builtin, and every other attribute
    read is a tensor attribute or a library name."""
    called = {id(n.func) for n in _walk(node) if isinstance(n, cst.Call)}
    for inner in _walk(node):
        if isinstance(inner, (cst.Lambda, cst.Await, cst.Yield, cst.NamedExpr)):
            return False
        if isinstance(inner, cst.Call):
            func = inner.func
            qualified = context.qualified(func)
            if qualified is not None:
                row = callees.function(qualified)
                if row is None or row.batching in (Batching.RANDOM, Batching.EFFECT):
                    return False
            elif isinstance(func, cst.Name):
                if func.value not in _PURE_BUILTINS:
                    return False
            elif isinstance(func, cst.Attribute):
                row = callees.method(func.attr.value)
                pure = row is not None and row.batching not in (Batching.RANDOM, Batching.EFFECT)
                # `torch.FloatTensor(n, d).fill_(0)`: filling what the statement itself just made
                fills_its_own = func.attr.value in FILLS and _fresh_allocation(func.value, context)
                if not pure and not fills_its_own and func.attr.value not in _SHAPE_METHODS:
                    return False
            else:
                return False
        elif isinstance(inner, cst.Attribute) and id(inner) not in called:
            if context.qualified(inner) is None and inner.attr.value not in _PURE_ATTRIBUTES:
                return False
    return True


def _single_assignment(statement: cst.BaseStatement) -> cst.Assign | None:
    if isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Assign):
        assign = statement.body[0]
        if all(isinstance(t.target, (cst.Name, cst.Tuple, cst.List)) for t in assign.targets):
            return assign
    return None


class UnfaithfulKernel(Exception):
    """The kernel would not run what the function runs: the rewrite cannot be checked."""


class SharedInputs(UnfaithfulKernel):
    """Names the kernel would take as independent inputs may share memory in the function."""


class ReadBeforeBound(UnfaithfulKernel):
    """The new code reads a name that the old code binds before any read of it: in the function
    that name would be unbound there (or hold a stale value), which a kernel drawing it as an
    input would never show."""


def prelude_for(facts: LoopFacts, needed: set[str], exclude: Sequence[cst.CSTNode] = (),
                given: Collection[str] = ()) -> tuple[tuple[cst.BaseStatement, ...], frozenset[str]]:
    """The statements right before the loop that compute ``needed`` (transitively), in program
    order. ``exclude``: statements the kernel holds already (inits it rewrites); ``given``: names
    the kernel takes as inputs however the function computed them.

    Only an unbroken run of replayable single assignments is read back, walking out of the
    ``if``/``with`` blocks around the loop: such statements have no effects, so what they bind
    reaches the loop unchanged -- and in-place arithmetic on a value the prelude itself made new
    (``dist = d + d.t()``, then ``dist.addmm_(x, x.t(), beta=1, alpha=-2)``), which changes
    nothing but that value, and the kernel replays it as the function runs it. Any other
    statement (``t[0] = -1``, ``t.neg_()`` of what may be an argument, a call torchfix cannot see
    into) may change a value, so from there on the names still needed are inputs: they are
    returned beside the statements (all but the parameters where the prelude reached the
    function's start)."""
    found = _prelude(facts, needed, exclude, given, in_place=True)
    if found is None:  # an in-place change whose target the prelude did not show new
        found = _prelude(facts, needed, exclude, given, in_place=False)
    assert found is not None
    return found


def _prelude(facts: LoopFacts, needed: set[str], exclude: Sequence[cst.CSTNode], given: Collection[str],
             in_place: bool) -> tuple[tuple[cst.BaseStatement, ...], frozenset[str]] | None:
    """:func:`prelude_for`; with ``in_place``, None where a replayed in-place change reaches a
    value the prelude does not bind new."""
    context = facts.context
    chosen: list[cst.BaseStatement] = []
    needed = set(needed) - set(given)
    current: cst.CSTNode = facts.statement or facts.loop
    excluded = {id(s) for s in exclude}
    cut: frozenset[str] = frozenset()
    #: names changed in place by a replayed statement: their binding must be a new value
    changed: set[str] = set()
    while needed:
        located = context.block_of(current)
        if located is None:  # an `elif` body, a statement on its header's line: stop here
            cut = frozenset(needed)
            break
        block, index = located
        broken = False
        for statement in reversed(block[:index]):
            if id(statement) in excluded or _inert_print(statement, context):
                continue
            assign = _single_assignment(statement)
            target = _in_place_arithmetic(statement, context) if in_place and assign is None and not _under_a_with(statement, context) else None
            if target is not None and target in needed:
                chosen.append(statement)
                changed.add(target)
                needed |= names_used(statement) - set(given)
                continue
            if assign is None or not is_replayable(statement, context):
                broken = True
                break
            hit = assigned_names(statement) & needed
            if hit & changed:
                fresh = (
                    len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)
                    and not _may_be(assign.value, context)
                )
                if not fresh:
                    return None
                changed -= hit
            if hit:
                chosen.append(statement)
                needed = (needed - hit) | (names_used(assign.value) - set(given))
        owner = context.parents.get(context.parents.get(current))
        if broken or not _crossable(owner, context):
            if isinstance(owner, cst.FunctionDef) and not broken:
                # the function's start: what is still needed and not a parameter is a closure
                # variable or a global, bound where the prelude does not look
                cut = frozenset(needed - set(parameter_names(owner)))
            else:
                cut = frozenset(needed)
            break
        current = owner  # type: ignore[assignment]
    if changed:
        return None  # changed in place, and bound before the prelude: it may be an argument
    chosen.reverse()
    return tuple(chosen), cut


#: in-place methods a prelude may replay on a value it made, beside those whose out-of-place
#: form is in the callee table (``clamp_``): products that write into their receiver
_IN_PLACE_PRODUCTS = frozenset({"addmm_", "addmv_", "addr_", "addbmm_", "baddbmm_", "addcmul_", "addcdiv_"})


def _under_a_with(statement: cst.CSTNode, context: ModuleContext) -> bool:
    """Whether a ``with`` holds ``statement`` inside its function: an in-place change under
    ``torch.no_grad()`` leaves no trace in autograd, where its replay in the kernel (which runs
    without the ``with``) would give it a backward of its own."""
    node = context.parents.get(statement)
    while node is not None and not isinstance(node, (cst.FunctionDef, cst.Module)):
        if isinstance(node, cst.With):
            return True
        node = context.parents.get(node)
    return False


def _in_place_arithmetic(statement: cst.BaseStatement, context: ModuleContext) -> str | None:
    """``x`` for a statement ``x.m_(...)`` that only changes ``x``: an in-place method of
    arithmetic (the callee table's element-wise methods, or a product that writes into its
    receiver) whose arguments are replayable."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1 and isinstance(statement.body[0], cst.Expr)):
        return None
    call_ = statement.body[0].value
    if not (isinstance(call_, cst.Call) and isinstance(call_.func, cst.Attribute) and isinstance(call_.func.value, cst.Name)):
        return None
    if context.qualified(call_.func) is not None:
        return None  # `torch.manual_seed_`, a module's function: not a method of a value
    leaf = call_.func.attr.value
    if not is_in_place_method(leaf):
        return None
    row = callees.method(leaf[:-1])
    if leaf not in _IN_PLACE_PRODUCTS and (row is None or row.batching is not Batching.ELEMENTWISE):
        return None
    if any(a.star for a in call_.args) or not all(is_replayable(a.value, context) for a in call_.args):
        return None
    return call_.func.value.value


#: allocations of new storage whatever their arguments (``torch.Tensor(n, d)`` only of sizes)
_FRESH_ALLOCATIONS = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.full"})


def _fresh_allocation(node: cst.BaseExpression, context: ModuleContext) -> bool:
    """Whether ``node`` allocates new storage: ``torch.zeros(n)``, ``torch.FloatTensor(n, d)``
    (a legacy constructor of one tensor is that tensor)."""
    if not isinstance(node, cst.Call) or any(a.star for a in node.args):
        return False
    qualified = context.qualified(node.func) or ""
    if qualified in _LEGACY_CONSTRUCTORS:
        return sum(1 for a in node.args if a.keyword is None) >= 2
    return qualified in _FRESH_ALLOCATIONS


def _inert_print(statement: cst.BaseStatement, context: ModuleContext) -> bool:
    """``print(pe.size())``: a statement that only prints what replayable expressions compute
    (no bare name, whose ``__str__`` could be anyone's) changes no value the loop reads."""
    if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
        return False
    expression = statement.body[0]
    if not (isinstance(expression, cst.Expr) and isinstance(expression.value, cst.Call)):
        return False
    call_ = expression.value
    if not m.matches(call_.func, m.Name("print")) or "print" in shadowed_builtins(context):
        return False
    return all(a.keyword is None and not a.star and _describes(a.value, context) for a in call_.args)


def _describes(value: cst.BaseExpression, context: ModuleContext) -> bool:
    """A string or a number literal, or what a name's shape, dtype, device or size is
    (``t.shape``, ``t.size(0)``, ``len(t)``): printing it runs nothing of the user's and writes
    nothing."""
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.Integer, cst.Float)):
        return True
    if m.matches(value, m.Attribute(value=m.Name(), attr=m.Name("shape") | m.Name("dtype") | m.Name("device") | m.Name("ndim"))):
        return True
    if m.matches(value, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("size") | m.Name("dim") | m.Name("numel")))):
        return all(a.keyword is None and not a.star and isinstance(a.value, cst.Integer) for a in value.args)  # type: ignore[union-attr]
    return m.matches(value, m.Call(func=m.Name("len"), args=[m.Arg(value=m.Name(), keyword=None, star="")])) and "len" not in shadowed_builtins(context)


def _refuse_shared(facts: LoopFacts, names: Collection[str], written: Collection[str]) -> None:
    """Raise :class:`SharedInputs` when two of ``names`` (inputs where the prelude stops), one of
    them ``written`` by the kernel, may share memory: bound, in the function, to values that may
    be a common object or views of it (``v = buf``; ``a = base.view(-1)`` and ``b = base[0]``).
    The checker draws inputs as independent values, so a write through one that the other reads
    would be invisible to it. Where nothing is written, sharing changes no value read."""
    context = facts.context
    ignored = set(context.bindings) | BUILTINS | set(facts.shapes.numbers) | set(facts.shapes.measures)
    candidates = sorted(n for n in names if n not in ignored)
    if len(candidates) < 2 or not set(candidates) & set(written):
        return
    # the kernel runs the loop itself: what its body binds or stores is not a sharing to model
    roots = _Sharing(context, facts.scope, (facts.loop,), ignored).roots
    found = {n: roots(n) for n in candidates}
    for k, first in enumerate(candidates):
        for second in candidates[k + 1:]:
            if (first in written or second in written) and found[first] & found[second]:
                raise SharedInputs(f"`{first}` and `{second}` may share memory where the replayed lines before the loop stop")


class _Sharing:
    """What the names of ``scope`` may refer to, from the links its code makes (``v = buf``,
    ``for src in bufs``, ``bufs.append(out)``), in it, the functions around it (closure
    variables) and the module (globals) -- but the links made inside ``inside`` (the code the
    kernel runs itself)."""

    def __init__(self, context: ModuleContext, scope: cst.CSTNode, inside: Sequence[cst.CSTNode], ignored: Collection[str] = ()) -> None:
        self.reads: dict[str, set[str]] = {}
        scopes: list[cst.CSTNode] = [scope]
        parent = context.parents.get(scope)
        while parent is not None:
            if isinstance(parent, (cst.FunctionDef, cst.Module)):
                scopes.append(parent)
            parent = context.parents.get(parent)
        skipped = {id(n) for node in inside for n in _walk(node)}
        for each in scopes:
            for node_id, names_, sources in context.once("sharing links", each, lambda each=each: _sharing_links(each, context)):
                if node_id not in skipped:
                    for name_ in names_:
                        self.reads.setdefault(name_, set()).update(set(sources) - set(ignored))

    def roots(self, name: str) -> set[str]:
        """``name`` and every name its object may be (or view) through the links."""
        seen, pending = {name}, [name]
        while pending:
            for read in self.reads.get(pending.pop(), ()):
                if read not in seen:
                    seen.add(read)
                    pending.append(read)
        return seen


def with_alias_pairs(proposals: Iterable[Proposal], wrapper: "MetadataWrapper") -> list[Proposal]:
    """``proposals`` with each candidate's kernel told which of its inputs may be one object
    (:func:`alias_pairs`): one place for every rule, so that no rule can forget it."""
    proposals = list(proposals)
    if not any(p.candidates for p in proposals):
        return proposals
    context = ModuleContext.of(wrapper)
    for proposal in proposals:
        proposal.candidates = tuple(
            replace(c, kernel=replace(c.kernel, may_alias=alias_pairs(
                context, proposal.anchor, [s.name for s in c.kernel.inputs], [e.target for e in c.edits],
            ))) if c.kernel.may_alias is None else c
            for c in proposal.candidates
        )
    return proposals


def _written_roots(code: str) -> set[str]:
    """The names whose arrays ``code`` writes into: stored through a subscript or an attribute
    chain (``a[i] = v``, ``a.data[i] += v``), augmented (``total += v``: in place for an array),
    or the receiver of an in-place method (``a[i].add_(v)``)."""

    def root(node: ast.expr) -> str | None:
        while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
            node = node.func if isinstance(node, ast.Call) else node.value
        return node.id if isinstance(node, ast.Name) else None

    written: set[str] = set()
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return written
    # `w = u[1:]` in the kernel's own lines: a write through `w` is a write into `u`
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            source = root(node.value)
            if source is not None and source != node.targets[0].id:
                aliases[node.targets[0].id] = source
    for node in ast.walk(tree):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [t for t in node.targets if isinstance(t, (ast.Subscript, ast.Attribute))]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and is_in_place_method(node.func.attr):
            targets = [node.func.value]
        for target in targets:
            name_ = root(target)
            seen: set[str] = set()
            while name_ is not None and name_ not in seen:
                seen.add(name_)
                written.add(name_)
                name_ = aliases.get(name_)
    return written


def refuse_shared_writes(proposals: list[Proposal], wrapper: "MetadataWrapper") -> list[Proposal]:
    """``proposals`` whose kernels take as independent inputs two names that the function binds
    to one array or to views of it (``a = y[1:]``, ``b = y[:-1]``), one of them written by the
    loop, turned into skips: one place for every rule. The checker draws inputs as independent
    values, and tries one object passed twice (:func:`with_alias_pairs`), but not views that
    overlap in part, where the loop reads at step ``i`` what step ``i - 1`` wrote. (The loop
    engine refuses the same where its replayed prelude stops: ``_refuse_shared``.)"""
    if not any(p.candidates for p in proposals):
        return proposals
    context = ModuleContext.of(wrapper)
    ignored = set(context.bindings) | BUILTINS
    for proposal in proposals:
        reason = None
        # what the function links, once per proposal: its rungs' kernels share their code
        scope = _function_of(proposal.anchor, context)
        sharing: _Sharing | None = None
        origins = context.once("origins", scope, lambda scope=scope: _origins(scope, context))
        # (a parameter whose default is computed, `before=CELLS[:-1]`, may be a global's view)
        params = _plain_parameters(scope) if isinstance(scope, cst.FunctionDef) else set()
        self_name = _method_self(proposal.anchor, context)
        escaped: set[str] | None = None
        for candidate in proposal.candidates:
            names = sorted(s.name for s in candidate.kernel.inputs if s.name not in ignored)
            written = _written_roots(candidate.kernel.old) & set(names)
            if not written:
                continue
            sharing = sharing or _Sharing(context, scope, (proposal.anchor,), ignored)
            found = {n: sharing.roots(n) for n in names}
            # what a call torchfix cannot see into returned, and a global or closure variable,
            # may be a view of anything else such (`dst = window(1)`, `src = window(0)` of a
            # global buffer, a parameter rebound so too); parameters as passed too, but there
            # the caller's overlapping views are the documented limit (the checker tries one
            # object passed twice)
            # (the object a method runs on holds what its other methods stored: its attributes,
            # which the kernel reads as inputs of their own, may view a global buffer)
            # (what an escaped name may hold escaped with it: `args = (self, row[:-1])`, `stash(*args)`)
            escaped = escaped if escaped is not None else set().union(*(sharing.roots(e) for e in origins.escaped))
            unseen = {n: any(r in origins.called or r in escaped
                                 or (origins.from_outside(r) and (r not in params or r == self_name))
                             for r in found[n])
                      for n in names}
            # a view whose elements overlap: made anywhere in the function (the written name may
            # reach it through aliases, slices or loop targets), or handed back by a call torchfix
            # cannot see into (a helper returning `y.unfold(0, 2, 1)`)
            overlapping = next((n for n in sorted(written) if found[n] & (origins.self_overlapping | origins.called)), None)
            if overlapping is not None:
                reason = (f"`{overlapping}` may be a view whose elements overlap (the function makes one with `unfold`, "
                          "`expand`, `as_strided`..., or it comes from a call torchfix cannot see into): a step may read "
                          "what an earlier one wrote through another position")
                break
            for first in sorted(written):
                if _made_just_before(first, proposal.anchor, context):
                    continue
                shared = next((other for other in names if other != first and found[first] & found[other]), None)
                if shared is None and unseen[first]:
                    shared = next((other for other in names if other != first and unseen[other]), None)
                if shared is not None:
                    reason = (f"`{first}` and `{shared}` may be views of one array in the function: the loop writes "
                              f"`{first}`, and a step may read what an earlier one wrote")
                    break
            if reason is not None:
                break
        if reason is not None:
            proposal.candidates = ()
            proposal.skip_reason = reason
    return proposals


def _plain_parameters(function: cst.FunctionDef) -> set[str]:
    """The parameters of ``function`` with no default or a literal one: what a caller passes."""
    every = function.params
    params = [*every.posonly_params, *every.params, *every.kwonly_params]
    computed = {p.name.value for p in params if p.default is not None and not _literal(p.default)}
    return parameter_names(function) - computed


def _made_just_before(name: str, anchor: cst.CSTNode, context: ModuleContext) -> bool:
    """Whether the statement right before ``anchor``, in its block, binds ``name`` alone to a
    new array that torch or NumPy allocates or copies (``target_data = target.data.clone()``,
    ``out = torch.zeros(n)``): when the loop starts, nothing else can hold that object, or view
    it, whatever the rest of the function links to the name. Only an allocation or a copy as
    the whole value: a call torchfix cannot see into may return a view of anything (a review
    found `out = window(1)` let through), and a view of a new array may overlap itself
    (`torch.zeros(1).expand(n)`)."""
    block = context.parents.get(anchor)
    body = getattr(block, "body", None)
    if not isinstance(body, (list, tuple)):
        return False
    position = next((k for k, statement in enumerate(body) if statement is anchor), None)
    if not position:
        return False
    before = body[position - 1]
    if not (isinstance(before, cst.SimpleStatementLine) and len(before.body) == 1 and isinstance(before.body[0], cst.Assign)):
        return False
    assign = before.body[0]
    if len(assign.targets) != 1 or not m.matches(assign.targets[0].target, m.Name(name)):
        return False
    value = assign.value
    if not isinstance(value, cst.Call) or any(a.keyword is not None and a.keyword.value == "out" for a in value.args):
        return False  # (`torch.zeros(n, out=row[1:])` gives back the view it was given)
    qualified = context.qualified(value.func)
    if qualified is not None:
        root, _, leaf = qualified.partition(".")
        return root in ("torch", "numpy") and "." not in leaf and leaf in _ALLOCATIONS
    return isinstance(value.func, cst.Attribute) and value.func.attr.value in _COPIES


#: torch / NumPy functions whose result is a new array, never one of their arguments or a view
_ALLOCATIONS = frozenset({"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
                          "arange", "linspace", "eye", "tensor", "clone", "copy"})
#: tensor methods that make a new array (``x.clone()``, ``x.new_zeros(n)``; not ``.copy()``, which is
#: also a list's or a dict's, shallow)
_COPIES = frozenset({"clone", "new_zeros", "new_ones", "new_full", "new_empty", "new_tensor"})


def with_attribute_inputs(proposals: list[Proposal], wrapper: "MetadataWrapper") -> list[Proposal]:
    """``proposals`` whose kernels read data attributes of the object a method runs on
    (``self.eos``, ``self.next_ys[-1][i]``) with each attribute an input of its own
    (``self_eos``), which the checker builds where it cannot build ``self``: one place for every
    rule (the loop engine does the same in :class:`_AttributesAsInputs`). Only where ``self`` is
    used for nothing else in the kernel: not called, passed, rebound, nor an attribute of it
    stored or called (those are the object's behaviour). Runs after the sharing checks, which
    reason about ``self`` as a whole; the pairs that may alias follow it to its attributes."""
    if not any(p.candidates for p in proposals):
        return proposals
    context = ModuleContext.of(wrapper)
    for proposal in proposals:
        if not proposal.candidates:
            continue
        self_name = _method_self(proposal.anchor, context)
        if self_name is None:
            continue
        proposal.candidates = tuple(
            replace(c, kernel=_attributes_as_inputs(c.kernel, self_name, set(context.bindings))) for c in proposal.candidates
        )
    return proposals


def _method_self(node: cst.CSTNode, context: ModuleContext) -> str | None:
    """The name of the object parameter of the method ``node`` is in (``self``), if any."""
    function = context.enclosing_function(node)
    if function is None or not function.params.params:
        return None
    block = context.parents.get(function)
    if not (isinstance(block, cst.IndentedBlock) and isinstance(context.parents.get(block), cst.ClassDef)):
        return None
    if any(_makes_a_plain_function(d.decorator) for d in function.decorators):
        return None
    owner = context.parents.get(block)
    assert isinstance(owner, cst.ClassDef)
    for statement in owner.body.body:
        # `shift = staticmethod(shift)` further down the class
        for small in statement.body if isinstance(statement, cst.SimpleStatementLine) else ():
            if isinstance(small, cst.Assign) and isinstance(small.value, cst.Call) and _makes_a_plain_function(small.value.func) and any(
                m.matches(t.target, m.Name(function.name.value)) for t in small.targets
            ):
                return None
    return function.params.params[0].name.value


def _makes_a_plain_function(node: cst.BaseExpression) -> bool:
    """``staticmethod`` / ``classmethod``, bare or reached through a module (``builtins.staticmethod``)."""
    return m.matches(node, m.Name("staticmethod") | m.Name("classmethod") | m.Attribute(attr=m.Name("staticmethod") | m.Name("classmethod")))


def _attributes_as_inputs(kernel: Kernel, self_name: str, taken: set[str]) -> Kernel:
    """``kernel`` with ``self.x`` read as the input ``self_x``, where every use of ``self`` in
    it is such a read; else ``kernel`` itself."""
    if not any(spec.name == self_name for spec in kernel.inputs):
        return kernel
    try:
        old, new = cst.parse_module(kernel.old), cst.parse_module(kernel.new)
    except cst.ParserSyntaxError:
        return kernel
    attributes: set[str] = set()
    for module in (old, new):
        found = _data_attributes(module, self_name)
        if found is None:
            return kernel
        attributes |= found
    taken = taken | names_used(old) | names_used(new) | {spec.name for spec in kernel.inputs}
    local: dict[str, str] = {}
    for attribute in sorted(attributes):
        name = f"{self_name}_{attribute}".replace("__", "_")
        while name in taken:
            name += "_"
        taken.add(name)
        local[attribute] = name
    renamed = _ReadAttributes(self_name, local)
    inputs: list[InputSpec] = []
    for spec in kernel.inputs:
        if spec.name == self_name:
            inputs += [InputSpec(local[a], Kind.ANY) for a in sorted(local)]
        else:
            inputs.append(spec)
    may_alias = kernel.may_alias
    if may_alias is not None:
        # an attribute may be what any other input the object may be is, or another attribute
        partners = {b if a == self_name else a for a, b in may_alias if self_name in (a, b)}
        kept = [pair for pair in may_alias if self_name not in pair]
        names = [local[a] for a in sorted(local)]
        kept += [(n, other) for n in names for other in sorted(partners)]
        kept += [(a, b) for k, a in enumerate(names) for b in names[k + 1:]]
        may_alias = tuple(kept)
    note = "; ".join(n for n in (kernel.note, f"the attributes of `{self_name}` it reads are inputs of their own") if n)
    return replace(kernel, old=old.visit(renamed).code, new=new.visit(renamed).code, inputs=tuple(inputs),
                   may_alias=may_alias, note=note)


def _data_attributes(module: cst.Module, self_name: str) -> set[str] | None:
    """The attributes of ``self_name`` that ``module`` reads (``self.eos``), or None where it
    uses ``self_name`` any other way: bare, called (``self.net(x)``), stored or deleted
    (``self.eos = 2``, ``self.buf[i] = 0``), or rebound."""
    found: set[str] = set()
    stored: set[int] = set()
    called: set[int] = set()
    for node in all_nodes(module):
        if isinstance(node, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.Del)):
            target = node.target
            stored.update(id(n) for n in all_nodes(target))
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            stored.update(id(n) for n in all_nodes(node.asname))
        elif isinstance(node, (cst.CompFor,)):
            stored.update(id(n) for n in all_nodes(node.target))
        elif isinstance(node, cst.NamedExpr):
            stored.update(id(n) for n in all_nodes(node.target))
        elif isinstance(node, cst.Call):
            called.add(id(node.func))
        elif isinstance(node, (cst.Global, cst.Nonlocal, cst.Lambda, cst.FunctionDef, cst.ClassDef)):
            return None  # (a scope of its own may bind `self` apart)
    reads: set[int] = set()
    for node in all_nodes(module):
        if isinstance(node, cst.Attribute) and m.matches(node.value, m.Name(self_name)):
            attribute = node.attr.value
            if attribute.startswith("__") or id(node) in called or id(node) in stored:
                return None
            found.add(attribute)
            reads.add(id(node.value))
    for node in all_nodes(module):
        if isinstance(node, cst.Name) and node.value == self_name and id(node) not in reads:
            return None
    return found


class _ReadAttributes(cst.CSTTransformer):
    def __init__(self, self_name: str, local: dict[str, str]) -> None:
        super().__init__()
        self.self_name = self_name
        self.local = local

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if m.matches(original.value, m.Name(self.self_name)) and original.attr.value in self.local:
            return cst.Name(self.local[original.attr.value]).with_changes(lpar=original.lpar, rpar=original.rpar)
        return updated


def refuse_caught(proposals: list[Proposal], wrapper: "MetadataWrapper") -> list[Proposal]:
    """``proposals`` whose edits fall where the function catches errors, turned into skips:
    one place for every rule (see :func:`torchfix.codemods.loops.facts.inside_handler`)."""
    if not any(p.candidates for p in proposals):
        return proposals
    context = ModuleContext.of(wrapper)
    for proposal in proposals:
        if proposal.candidates and any(inside_handler(e.target, context) for c in proposal.candidates for e in c.edits):
            proposal.candidates = ()
            proposal.skip_reason = IN_HANDLER
    return proposals


def alias_pairs(
    context: ModuleContext, anchor: cst.CSTNode, names: Sequence[str], ran: Sequence[cst.CSTNode] = (),
) -> tuple[tuple[str, str], ...]:
    """The pairs of a kernel's inputs ``names`` that may be one object when the code at
    ``anchor`` runs (``ran``: the statements the kernel runs itself, whose links are its own),
    for the checker's aliasing sweep (``Kernel.may_alias``). Two inputs may be
    one object when the links of the function make them so (``src = out if src is None else
    src``), or when both may come from outside the function: a parameter (a caller may pass one
    tensor twice: ``rev(x, x)``), a global or closure variable, an attribute (``self.src =
    self.out``), the result of a call torchfix cannot see into, a loop or ``with`` target. A
    name every binding of which makes a new value (``torch.zeros(n)``, ``x * 2``) comes from
    nowhere else."""
    scope = _function_of(anchor, context)
    sharing = _Sharing(context, scope, (anchor, *ran))
    origins = context.once("origins", scope, lambda: _origins(scope, context))
    roots = {n: sharing.roots(n) for n in names}
    external = {n: any(origins.from_outside(r) for r in roots[n]) for n in names}
    pairs = []
    for k, first in enumerate(names):
        for second in names[k + 1:]:
            if roots[first] & roots[second] or (external[first] and external[second]):
                pairs.append((first, second))
    return tuple(pairs)


def _function_of(node: cst.CSTNode, context: ModuleContext) -> cst.CSTNode:
    parent = context.parents.get(node)
    while parent is not None and not isinstance(parent, (cst.FunctionDef, cst.Module)):
        parent = context.parents.get(parent)
    return parent if parent is not None else context.module


@dataclass(frozen=True)
class _Origins:
    """Of the names a scope binds: ``bound``, all of them (a name outside it is a global or a
    closure variable), and ``outside``, those bound to a value that may come from outside it."""

    bound: frozenset[str]
    outside: frozenset[str]
    #: names bound to what a call torchfix cannot see into returned (parameters rebound so too)
    called: frozenset[str] = frozenset()
    #: names bound to a view whose elements may overlap one another (``x.unfold(0, 2, 1)``)
    self_overlapping: frozenset[str] = frozenset()
    #: names handed to code torchfix cannot see into, which may keep what they hold anywhere (a
    #: global, a class, the object of a method): an argument of such a call, a closure variable
    escaped: frozenset[str] = frozenset()

    def from_outside(self, name: str) -> bool:
        return name in self.outside or name not in self.bound


def _origins(scope: cst.CSTNode, context: ModuleContext) -> _Origins:
    """Which names ``scope`` binds from outside it: parameters, loop and ``with`` targets,
    imports, ``global`` / ``nonlocal`` names, exception names, assignments of a call torchfix
    cannot see into. (``v = buf`` binds nothing from outside itself: ``v`` comes from outside
    where ``buf`` does, which :class:`_Sharing` follows.)"""
    bound: set[str] = set()
    outside: set[str] = set()
    called: set[str] = set()
    overlapping: set[str] = set()

    def add(names: Iterable[str], from_outside: bool = True) -> None:
        bound.update(names)
        if from_outside:
            outside.update(names)

    if isinstance(scope, cst.FunctionDef):
        add(parameter_names(scope))
    for node in _walk(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.NamedExpr, cst.AugAssign)):
            targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
            names = set().union(*(target_names(t) for t in targets if isinstance(t, (cst.Name, cst.Tuple, cst.List))))
            value = None if isinstance(node, cst.AugAssign) else node.value
            unknown = value is not None and _calls_unknown(value, context)
            add(names, unknown)
            if unknown:
                called.update(names)
            if value is not None and _overlapping_view(value, overlapping):
                overlapping.update(names)
        elif isinstance(node, (cst.For, cst.CompFor)):
            add(target_names(node.target))
            if _overlapping_view(node.iter, overlapping):
                overlapping.update(target_names(node.target))
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            add(target_names(node.asname.name))
        elif isinstance(node, cst.ExceptHandler) and node.name is not None:
            add(target_names(node.name.name))
        elif isinstance(node, (cst.Import, cst.ImportFrom)) and not isinstance(node.names, cst.ImportStar):
            for alias in node.names:
                add(target_names(alias.asname.name) if alias.asname is not None else {(dotted(alias.name) or "").split(".")[0]})
        elif isinstance(node, (cst.Global, cst.Nonlocal)):
            outside.update(item.name.value for item in node.names)
        elif isinstance(node, (cst.MatchAs, cst.MatchStar)) and node.name is not None:
            add(target_names(node.name))  # (a capture of a `match`: what the subject holds)
        elif isinstance(node, cst.MatchMapping) and node.rest is not None:
            add(target_names(node.rest))
    return _Origins(frozenset(bound), frozenset(outside), frozenset(called), frozenset(overlapping),
                    frozenset(_escaped(scope, context, bound)))


def _escaped(scope: cst.CSTNode, context: ModuleContext, bound: Collection[str] = ()) -> set[str]:
    """The names ``scope`` hands to code torchfix cannot see into: every name in the arguments of
    a call of something that is not a builtin, torch's, NumPy's or math's, nor a known method of
    a value (`keep(row[:-1])`, `holder.remember(self, x)`, `partial(stash, self)(x)`,
    `stash(*args)`), and the names a nested function or lambda reads (it may run any time and
    store them anywhere). Such code may keep a view of one where another input is later read
    from (a review found views kept on the object, in a global, in a class)."""
    escaped: set[str] = set()
    body = scope.body if isinstance(scope, cst.FunctionDef) else scope
    for node in all_nodes(body):
        if isinstance(node, (cst.FunctionDef, cst.Lambda)):
            escaped |= names_used(node)
        elif isinstance(node, cst.Call) and _may_keep_arguments(node, context):
            for argument in node.args:
                escaped |= names_used(argument.value)
        elif isinstance(node, (cst.Assign, cst.AugAssign)) and any(
            _untracked_store(target, context, bound) for target in
            ([t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target])
        ):
            # `globals()["B"] = x[:-1]`, `type(self).held = x[:-1]`, `sys.modules[...].B = ...`:
            # a store into something the links do not follow
            escaped |= names_used(node.value)
        elif isinstance(node, cst.Match):
            escaped |= names_used(node.subject)  # (its captures are bound from outside: `_origins`)
    return escaped


def _untracked_store(target: cst.BaseExpression, context: ModuleContext, bound: Collection[str]) -> bool:
    """Whether a store into ``target`` puts its value where the links do not follow it: an
    element or attribute of what a call returned, of a module or a name the function does not
    bind (a global: other code reads it by other names), or of nothing a name of it may be."""
    if not isinstance(target, (cst.Subscript, cst.Attribute)):
        return False
    base: cst.BaseExpression = target
    while isinstance(base, (cst.Subscript, cst.Attribute)):
        base = base.value
    if not isinstance(base, cst.Name) or context.qualified(base) is not None or base.value not in bound:
        return True
    return not _may_be(target, context)


#: builtins that may keep an argument where any code can reach it (or run code that does)
_KEEPING_BUILTINS = frozenset({"setattr", "exec", "eval", "vars", "globals", "locals", "compile", "__import__"})


def _exception_class(name: str) -> bool:
    """Whether the builtin ``name`` is an exception class (``ValueError(x)`` keeps ``x`` in ``args``)."""
    value = getattr(builtins, name, None)
    return isinstance(value, type) and issubclass(value, BaseException)


def _may_keep_arguments(call: cst.Call, context: ModuleContext) -> bool:
    """Whether ``call`` may keep a reference to an argument where torchfix does not follow it."""
    func = call.func
    qualified = context.qualified(func)
    if qualified is not None:
        return qualified.split(".", 1)[0] not in _KNOWN_LIBRARIES
    if isinstance(func, cst.Name):
        return func.value not in _PURE_BUILTINS and func.value not in _NEW_VALUES and (
            func.value not in BUILTINS or func.value in _KEEPING_BUILTINS or _exception_class(func.value))
    if isinstance(func, cst.Attribute):
        attr = func.attr.value
        return not (callees.method(attr) is not None or attr in _NEW_VALUES | _SHAPE_METHODS | _MAY_RETURN_ITS_INPUT
                    or _copies_values(attr))
    return True  # `partial(f, self)(x)`, `(lambda: ...)()`


#: methods and functions whose view may hold one element at several positions
_OVERLAPPING_VIEWS = frozenset({"unfold", "as_strided", "expand", "expand_as", "broadcast_to", "broadcast_tensors",
                                "sliding_window_view", "as_strided_", "empty_strided"})


def _overlapping_view(value: cst.BaseExpression, known: Collection[str] = ()) -> bool:
    """Whether ``value`` may be (or hold) a view whose elements overlap: it names a maker of one
    (``y.unfold(0, 2, 1)``, the bound method ``y.unfold``, ``torch.empty_strided``) or a name
    bound to one (``known``)."""
    return any(
        (isinstance(n, cst.Attribute) and n.attr.value in _OVERLAPPING_VIEWS)
        or (isinstance(n, cst.Name) and (n.value in _OVERLAPPING_VIEWS or n.value in known))
        for n in _walk(value)
    )


def _unknown_function(call: cst.Call, context: ModuleContext) -> bool:
    """Whether ``call`` calls a function (not a method of a value) torchfix cannot see into: a
    name of the module or of another module of the user's, not a builtin nor torch's, NumPy's or
    math's."""
    qualified = context.qualified(call.func)
    if qualified is not None:
        return qualified.split(".", 1)[0] not in _KNOWN_LIBRARIES
    if isinstance(call.func, cst.Name):
        return call.func.value not in _PURE_BUILTINS and call.func.value not in _NEW_VALUES
    return False


def _calls_unknown(value: cst.BaseExpression, context: ModuleContext) -> bool:
    """Whether ``value`` calls something torchfix cannot see into (which may return any object)."""
    for node in _walk(value):
        if isinstance(node, cst.Call):
            func = node.func
            qualified = context.qualified(func)
            if qualified is not None:
                if callees.function(qualified) is None and qualified.rsplit(".", 1)[-1] not in _NEW_VALUES:
                    return True
            elif isinstance(func, cst.Name):
                if func.value not in _PURE_BUILTINS and func.value not in _NEW_VALUES:
                    return True
            elif isinstance(func, cst.Attribute):
                attr = func.attr.value
                if callees.method(attr) is None and attr not in _NEW_VALUES | _SHAPE_METHODS | _MAY_RETURN_ITS_INPUT:
                    return True
            else:
                return True
    return False


#: displays and comprehensions: `held += [x]` puts `x` itself in `held`
_DISPLAYS = (cst.List, cst.Tuple, cst.Set, cst.Dict, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


def _joins_containers(operation: cst.BinaryOperation, context: ModuleContext) -> bool:
    """Whether ``operation`` may join lists, tuples or dicts: ``+``, ``*`` or ``|`` with a side
    that may be one -- a display or comprehension, ``list(...)`` / ``tuple(...)`` / ``dict(...)``,
    a name the module binds to such a value anywhere, or such a join itself (reviews found views
    kept by `steps + (x,)`, `a + b` of two lists, `tuple(a) + tuple(b)`, `a * 1`). Arithmetic of
    arrays and numbers makes new values."""
    containers = context.once("container names", context.module, lambda: _container_names(context))
    return _may_be_a_container(operation, containers, context)


def _may_be_a_container(node: cst.BaseExpression, containers: Collection[str], context: ModuleContext) -> bool:
    if isinstance(node, _DISPLAYS):
        return True
    if isinstance(node, cst.BinaryOperation):
        return isinstance(node.operator, (cst.Add, cst.Multiply, cst.BitOr)) and any(
            _may_be_a_container(side, containers, context) for side in (node.left, node.right)
        )
    if isinstance(node, cst.Call) and isinstance(node.func, cst.Name):
        return node.func.value in _CONTAINER_BUILTINS and node.func.value not in shadowed_builtins(context)
    return isinstance(node, cst.Name) and node.value in containers


#: the operator module's functions that may join containers
_OPERATOR_JOINS = frozenset({f"operator.{name}" for name in (
    "add", "iadd", "concat", "iconcat", "mul", "imul", "or_", "ior", "__add__", "__iadd__", "__concat__", "__or__")})
#: builtins that make a list, tuple or dict holding what they were given
_CONTAINER_BUILTINS = frozenset({"list", "tuple", "dict", "sorted", "set", "frozenset"})


def _container_names(context: ModuleContext) -> frozenset[str]:
    """The names the module binds, anywhere, to a display, a comprehension or a container
    builtin's result (``a = [x]``, ``b = list(y)``), and, once more, to a join of those."""
    found: set[str] = set()
    for _ in range(2):
        for node in all_nodes(context.module):
            if isinstance(node, (cst.Assign, cst.AugAssign, cst.AnnAssign)) and node.value is not None:
                if _may_be_a_container(node.value, found, context):
                    targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                    found |= set().union(*(target_names(t) for t in targets if isinstance(t, (cst.Name, cst.Tuple, cst.List))))
    return frozenset(found)


def _sharing_links(scope: cst.CSTNode, context: ModuleContext) -> list[tuple[int, set[str], set[str]]]:
    """Per node of ``scope`` (its own, not nested functions'): the names it makes refer to what
    the other names may be -- ``v = buf`` binds ``v`` to ``buf``, ``for src in bufs`` binds
    ``src`` to an element of ``bufs``, ``bufs.append(out)`` and ``d[k] = out`` make a container
    hold ``out``. Once per scope: every rung of every loop in it asks."""
    links: list[tuple[int, set[str], set[str]]] = []
    for node in _walk(scope.body if isinstance(scope, cst.FunctionDef) else scope):
        if isinstance(node, (cst.Assign, cst.AnnAssign, cst.NamedExpr)) and node.value is not None:
            value = _may_be(node.value, context)
            links.append((id(node), assigned_names(node), value))
            if isinstance(node, cst.Assign):
                for target in node.targets:
                    if isinstance(target.target, (cst.Subscript, cst.Attribute)):
                        links.append((id(node), _may_be(target.target, context), value))
        elif isinstance(node, cst.AugAssign) and isinstance(node.operator, (cst.AddAssign, cst.MultiplyAssign, cst.BitOrAssign)) and (
            isinstance(node.value, (*_DISPLAYS, cst.Name, cst.Attribute, cst.Subscript))
        ):
            # `held += [row[:-1]]`, `results += batch`, `d |= other` extend the container in place
            # (a tensor's `acc += v` copies values: linking it too is only conservative)
            links.append((id(node), _may_be(node.target, context), _may_be(node.value, context)))
        elif isinstance(node, (cst.For, cst.CompFor)):
            links.append((id(node), target_names(node.target), _may_be(node.iter, context)))
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            links.append((id(node), target_names(node.asname.name), _may_be(node.item, context)))
        elif isinstance(node, cst.Call) and len(node.args) > 1 and _unknown_function(node, context):
            # `remember(self, y[:-1])` may store one argument in another (`obj.prev = prev`): a
            # function torchfix cannot see into links each argument to the others (a review found
            # a view stored on `self` so missed)
            each = [_may_be(a.value, context) for a in node.args]
            for k, names_ in enumerate(each):
                links.append((id(node), names_, set().union(*(other for j, other in enumerate(each) if j != k))))
        elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute) and node.args and not _copies_values(node.func.attr.value):
            held = set().union(*(_may_be(a.value, context) for a in node.args))
            links.append((id(node), _may_be(node.func.value, context), held))
    return links


#: torch's in-place methods that copy their arguments' values into the receiver and keep no
#: reference to them (``t.copy_(src)``; ``t.set_(src)`` shares ``src``'s storage and is not one)
_VALUE_COPYING_IN_PLACE = frozenset(
    {"copy_", "fill_", "zero_", "masked_fill_", "index_put_", "index_copy_", "index_fill_", "index_add_",
     "scatter_", "scatter_add_", "scatter_reduce_", "masked_scatter_", "put_", "clamp_", "clamp_min_", "clamp_max_"}
)


def _copies_values(method: str) -> bool:
    """Whether ``x.method(args)`` leaves ``x`` holding none of ``args``: a torch in-place method
    (``mean.div_(n)``) copies values, where ``bufs.append(out)`` keeps ``out`` itself."""
    if method in _VALUE_COPYING_IN_PLACE:
        return True
    if not is_in_place_method(method) or method == "set_":
        return False
    row = callees.method(method[:-1])  # `div_` is `div` written into its receiver
    return row is not None and row.batching not in (Batching.EFFECT, Batching.RANDOM)


#: methods and functions whose result may be their argument or a view of it (``np.asarray`` of an
#: array is the array; ``x.float()`` of a float32 tensor is ``x``)
_MAY_RETURN_ITS_INPUT = VIEW_METHODS | frozenset(
    {"cuda", "type", "half", "bool", "byte", "char", "short", "bfloat16", "asarray", "asanyarray", "as_tensor",
     "from_numpy", "real", "imag", "unbind", "split", "chunk", "atleast_1d", "atleast_2d", "atleast_3d",
     "broadcast_to", "requires_grad_", "resize_", "data", "array", "asfortranarray", "ascontiguousarray",
     "view_as_real", "view_as_complex", "conj", "resolve_conj", "resolve_neg", "align_to", "rename",
     "refine_names", "pin_memory", "share_memory_", "mT", "mH", "H", "T",
     # the input itself when it drops nothing (eval mode, p=0) or replaces nothing (copy=False)
     "dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout", "nan_to_num"}
)
#: attributes that describe a value rather than hold it
_METADATA = frozenset({"shape", "dtype", "device", "ndim", "is_cuda", "itemsize", "nbytes"})
#: libraries whose functions' names say what they return (a module of the user's may call its
#: own helper `copy` or `tensor`; and the stdlib's `copy.copy` of a tensor shares its storage)
_KNOWN_LIBRARIES = frozenset({"torch", "numpy", "math", "builtins"})
#: functions that make a new value (or a Python number) whatever they are given (as methods,
#: ``x.float()``, ``x.int()`` may return ``x`` itself: :data:`_MAY_RETURN_ITS_INPUT` is asked first)
_NEW_VALUES = frozenset(
    {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange", "linspace",
     "eye", "tensor", "copy", "clone", "concatenate", "cat", "stack", "vstack", "hstack", "len", "size", "numel",
     "dim", "item", "tolist", "int", "float", "bool", "range", "round", "abs"}
)
#: torch's legacy constructors: of several sizes, a new tensor; of one tensor, that tensor itself
_LEGACY_CONSTRUCTORS = frozenset({"torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.LongTensor",
                                  "torch.IntTensor", "torch.ByteTensor", "torch.BoolTensor", "torch.HalfTensor"})
#: what a call of these kinds returns is a new value, never one of its arguments
_FRESH = frozenset({Batching.ELEMENTWISE, Batching.REDUCTION, Batching.ALONG_DIM, Batching.MATMUL,
                    Batching.ALLOCATE, Batching.ALLOCATE_LIKE, Batching.RANDOM})
#: NumPy functions of three positional arguments with no ``out`` among them
_NUMPY_THREE_ARGUMENTS = frozenset({"where", "clip", "linspace", "full", "arange", "einsum"})


def _writes_into_an_argument(call_: cst.Call, qualified: str | None, leaf: str) -> bool:
    """Whether the call may write into an argument and return it: an in-place method, ``out=``,
    ``inplace=``/``copy=False`` given by keyword or by position (``F.relu(x, True)``,
    ``np.multiply(a, b, a)``)."""
    if is_in_place_method(leaf):
        return True
    for a in call_.args:
        if a.keyword is None:
            continue
        if a.keyword.value == "out":
            return True
        if a.keyword.value == "inplace" and not m.matches(a.value, m.Name("False")):
            return True
        if a.keyword.value == "copy" and not m.matches(a.value, m.Name("True")):
            return True
    positional = [a for a in call_.args if a.keyword is None and not a.star]
    if qualified is not None and qualified.startswith("torch.nn.functional.") and leaf in _FUNCTIONAL_INPLACE:
        # the `inplace` flag by position (`F.relu(x, True)`): anything but False may be true
        return any(not m.matches(a.value, m.Name("False") | m.Integer() | m.Float()) for a in positional[1:])
    if qualified is not None and qualified.startswith("numpy."):
        # a ufunc's `out` by position: one past its operands (`np.sqrt(a, a)`, `np.add(a, b, a)`)
        import numpy  # here: a scan of files with no candidate never imports NumPy

        ufunc = getattr(numpy, leaf, None)
        if isinstance(ufunc, numpy.ufunc):
            return len(positional) > ufunc.nin
        return len(positional) >= (4 if leaf in _NUMPY_THREE_ARGUMENTS else 3)
    if qualified is None and isinstance(call_.func, cst.Attribute) and leaf in _NUMPY_METHODS_WITH_OUT:
        # `a.clip(lo, hi, a)`, `a.sum(0, None, a)`: any argument that may be an array may be `out`
        return any(not isinstance(a.value, (cst.BaseNumber, cst.BaseString)) and not m.matches(a.value, m.Name("None") | m.Name("True") | m.Name("False"))
                   for a in positional)
    return False


#: ndarray methods that take an ``out`` array by position
_NUMPY_METHODS_WITH_OUT = frozenset(
    {"clip", "round", "cumsum", "cumprod", "sum", "mean", "std", "var", "prod", "max", "min", "any", "all", "argmax",
     "argmin", "ptp", "take", "choose", "compress", "trace", "dot", "conj", "conjugate"}
)


#: torch.nn.functional functions with an `inplace` parameter
_FUNCTIONAL_INPLACE = frozenset(
    {"relu", "relu6", "elu", "selu", "celu", "leaky_relu", "rrelu", "hardtanh", "dropout", "dropout1d", "dropout2d",
     "dropout3d", "alpha_dropout", "feature_alpha_dropout", "threshold", "silu", "hardsigmoid", "hardswish", "mish"}
)


def _may_be(value: cst.BaseExpression, context: ModuleContext) -> set[str]:
    """The names whose object ``value`` may be, or view (conservative): ``v = buf``,
    ``out = buf.view(-1)``, ``row = x[0]``, ``x.float()``, a call torchfix cannot see into of
    ``x``. A new value (``x + 1``, ``torch.zeros(n)``, ``x.sum()``) is none of them, nor is a
    module or a name in one (``np.float32``)."""
    qualified = context.qualified(value) if isinstance(value, (cst.Name, cst.Attribute)) else None
    if qualified is not None:
        if qualified.split(".", 1)[0] in _KNOWN_LIBRARIES:
            return set()  # a module, or a function, class or constant of one (`np.float32`)
        # `BUF` of `from buffers import BUF`, `buffers.BUF`: a global of another module, where
        # two views of one array may come from (the name it is reached by stands for it)
        root = value
        while isinstance(root, cst.Attribute):
            root = root.value
        return {root.value} if isinstance(root, cst.Name) else set()
    if isinstance(value, cst.Name):
        return {value.value}
    if isinstance(value, cst.Attribute) and value.attr.value in _METADATA:
        return set()
    if isinstance(value, (cst.Attribute, cst.Subscript)):
        return _may_be(value.value, context)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Plus):
        return _may_be(value.expression, context)  # `+t` is `t` itself for a tensor
    if isinstance(value, cst.BinaryOperation) and _joins_containers(value, context):
        # `steps + (x[:-1],)`, `parts + [x]`, `[x] * 2`, `d | {"k": x}`: the result holds the
        # items it was given (a review found per-step views kept so); arithmetic makes new values
        return _may_be(value.left, context) | _may_be(value.right, context)
    if isinstance(value, (cst.BinaryOperation, cst.Comparison, cst.UnaryOperation, cst.BaseNumber, cst.BaseString)):
        return set()
    if isinstance(value, cst.BooleanOperation):
        return _may_be(value.left, context) | _may_be(value.right, context)
    if isinstance(value, cst.IfExp):
        return _may_be(value.body, context) | _may_be(value.orelse, context)
    if isinstance(value, (cst.Tuple, cst.List, cst.Set)):
        return set().union(*(_may_be(e.value, context) for e in value.elements))
    if isinstance(value, cst.Call):
        func = value.func
        qualified = context.qualified(func)
        method = isinstance(func, cst.Attribute) and qualified is None
        row = callees.function(qualified) if qualified else None
        leaf = qualified.rsplit(".", 1)[-1] if qualified else (func.attr.value if isinstance(func, cst.Attribute) else "")
        if qualified is not None and qualified.split(".", 1)[0] not in _KNOWN_LIBRARIES:
            leaf = ""  # `from helpers import copy`: the module's own `copy` may return its argument
        if isinstance(func, cst.Name) and qualified is None and func.value in BUILTINS and func.value not in shadowed_builtins(context):
            leaf = func.value  # `range(n)`, `len(x)`: the builtin, which nothing in the module rebinds
        if row is None and method:
            row = callees.method(leaf)
        # `torch.Tensor.float(x)` is the method `x.float()` spelled as a function
        unbound = qualified is not None and qualified.startswith(("torch.Tensor.", "numpy.ndarray."))
        if qualified in _OPERATOR_JOINS or dotted(func) in _OPERATOR_JOINS:
            # `operator.add(a, b)` of two lists holds what both hold (a review found a view so)
            return set().union(*(_may_be(a.value, context) for a in value.args))
        if _writes_into_an_argument(value, qualified, leaf):
            pass  # below: what it was given
        elif method and leaf in _MAY_RETURN_ITS_INPUT:
            # `x.float()`, `x.to(device)`, `x.astype(np.float32)`: the receiver, or a new value
            return _may_be(func.value, context)
        elif unbound and (leaf in _MAY_RETURN_ITS_INPUT or is_in_place_method(leaf)):
            pass
        elif method and leaf == "copy" and value.args:
            pass  # `copy.copy(t)` (the module unbound here): a tensor's shallow copy shares its storage
        elif method and leaf == "copy":
            # `held.copy()` of a list or a dict holds the same items (an ndarray's copy is new,
            # but nothing here says which the receiver is: a review found a view kept so)
            return _may_be(func.value, context)
        elif qualified in _LEGACY_CONSTRUCTORS:
            if sum(1 for a in value.args if a.keyword is None) >= 2:
                return set()  # `torch.FloatTensor(n, d)`: sizes
            # `torch.FloatTensor(t)` of a float32 tensor is `t` itself: below, what it was given
        elif leaf in _NEW_VALUES or (row is not None and row.batching in _FRESH and leaf not in _MAY_RETURN_ITS_INPUT):
            return set()  # `int(x)`, `torch.zeros(n)`, `x.clone()`, `x.sum()`, `F.relu(x)`
        found = set().union(*(_may_be(a.value, context) for a in value.args))
        if method:
            found |= _may_be(func.value, context)  # the receiver of a method
        return found
    return set(names_used(value))


def _written_through(prelude: Sequence[cst.BaseStatement], code: Sequence[cst.CSTNode], context: ModuleContext) -> set[str]:
    """Names ``code`` may write into (``t[i] = v``, ``t += v``, ``t.add_(v)``), and the names the
    prelude's values for them may be (``out = buf.view(-1)`` written makes ``buf`` written)."""
    written: set[str] = set()
    for statement in code:
        for node in _walk(statement):
            if isinstance(node, (cst.Assign, cst.AugAssign)):
                targets = [t.target for t in node.targets] if isinstance(node, cst.Assign) else [node.target]
                for target in targets:
                    if isinstance(target, (cst.Subscript, cst.Attribute)) or isinstance(node, cst.AugAssign):
                        written |= _may_be(target, context)
            elif isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
                attr = node.func.attr.value
                if is_in_place_method(attr) or attr in ("at", "put", "fill", "sort", "resize"):
                    written |= _may_be(node.func.value, context)
            if isinstance(node, cst.Call):
                for a in node.args:
                    if a.keyword is not None and a.keyword.value == "out":
                        written |= _may_be(a.value, context)
    for statement in reversed(prelude):
        assign = _single_assignment(statement)
        if assign is not None and assigned_names(statement) & written:
            written |= _may_be(assign.value, context)
    return written


#: context managers a prelude may be read back across: they only set the grad mode
_GRAD_MODES = frozenset({"torch.no_grad", "torch.enable_grad", "torch.inference_mode", "torch.set_grad_enabled"})


def _crossable(owner: cst.CSTNode | None, context: ModuleContext) -> bool:
    """Whether the statements before ``owner`` (the block around the loop) still reach the loop
    unchanged: an ``if`` whose test has no effect, a ``with`` that only sets the grad mode."""
    if isinstance(owner, cst.If):
        return is_replayable(owner.test, context)
    if isinstance(owner, cst.With):
        return all(
            isinstance(item.item, cst.Call) and context.qualified(item.item.func) in _GRAD_MODES and item.asname is None
            and all(is_replayable(a.value, context) for a in item.item.args)
            for item in owner.items
        )
    return False


def free_names(statements: Iterable[cst.CSTNode], module_names: set[str], shadowed: Collection[str] = ()) -> list[str]:
    """Names the statements read before binding them, in first-use order; builtins and library
    bindings excluded, except the builtins in ``shadowed`` (``input = ...`` in the function makes
    ``input`` a variable). Compound statements are followed in order: a temporary a loop body
    binds before reading it is not free, an accumulator it reads before rebinding it
    (``loss = loss + ...``, ``if n > 0: loss += ...``) is -- its start comes from before."""
    builtin_names = BUILTINS - set(shadowed)
    bound: set[str] = set()
    free: dict[str, None] = {}

    def read(node: cst.CSTNode, inner: Collection[str] = ()) -> None:
        for name in _reads(node):
            if name not in bound and name not in inner and name not in builtin_names and name not in module_names:
                free.setdefault(name)

    def line(smalls: Sequence[cst.BaseSmallStatement]) -> None:
        for small in smalls:
            read(small)
            bound.update(assigned_names(small))

    def block(body: cst.BaseSuite) -> None:
        if isinstance(body, cst.IndentedBlock):
            for statement in body.body:
                visit(statement)
        else:
            line(body.body)  # type: ignore[attr-defined]

    def visit(statement: cst.CSTNode) -> None:
        if isinstance(statement, (cst.SimpleStatementLine, cst.SimpleStatementSuite)):
            line(statement.body)
        elif isinstance(statement, cst.If):
            read(statement.test)
            block(statement.body)
            if statement.orelse is not None:
                visit(statement.orelse)
        elif isinstance(statement, cst.Else):
            block(statement.body)
        elif isinstance(statement, (cst.For, cst.While)):
            read(statement.iter if isinstance(statement, cst.For) else statement.test)
            if isinstance(statement, cst.For):
                bound.update(target_names(statement.target))
            block(statement.body)
            if statement.orelse is not None:
                visit(statement.orelse)
        elif isinstance(statement, cst.With):
            for item in statement.items:
                read(item.item)
                if item.asname is not None:
                    bound.update(target_names(item.asname.name))
            block(statement.body)
        else:
            # anything else (a def, a try) as one statement: what it binds inside is not free
            read(statement, assigned_names(statement) if isinstance(statement, cst.BaseCompoundStatement) else ())
            bound.update(assigned_names(statement))

    for statement in statements:
        visit(statement)
    return list(free)


def _shadowed_builtins(scope: cst.CSTNode) -> frozenset[str]:
    """Builtin names the function binds itself (a parameter or a local ``input``, ``filter``):
    there they are the function's variables, not the builtins."""
    bound = assigned_names(scope)
    if isinstance(scope, cst.FunctionDef):
        bound |= parameter_names(scope)
    return frozenset(bound) & BUILTINS


def _reads(statement: cst.CSTNode) -> list[str]:
    """Names read in ``statement``, in order (assignment targets are not reads)."""
    from torchfix.codemods.loops.facts import _stored_names
    from torchfix.codemods.loops.nodes import name_nodes

    written = _stored_names(statement)
    # a lambda's parameters, and their uses in its body, are not reads of the enclosing scope
    for node in all_nodes(statement):
        if isinstance(node, cst.Lambda):
            bound = {p.name.value for p in node.params.params}
            written |= {id(p.name) for p in node.params.params}
            written |= {id(n) for n in name_nodes(node.body) if n.value in bound}
        elif isinstance(node, (cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)):
            # the comprehension's own variables (a comprehension is a scope of its own)
            bound = comprehension_variables(node)
            written |= {id(n) for n in name_nodes(node) if n.value in bound}
    return [n.value for n in name_nodes(statement) if id(n) not in written]


def _fixed_number_list(facts: LoopFacts, name: str) -> bool:
    """Whether ``name`` holds the literal list of numbers it is bound to before the loop
    (:meth:`LoopFacts.number_list`) wherever the loop reads it: the function names it nowhere
    else than in that binding and in item reads inside the loop -- never passed, aliased,
    mutated or rebound, so no call in between can have changed it."""
    if facts.number_list(cst.Name(name)) is None:
        return False
    definition = facts.definition(name)
    if definition is None or definition.others:
        return False
    scope = facts.scope
    if facts.context.once("reaches locals", scope, lambda: _reaches_locals(scope)):
        return False
    bound = {id(n) for n in all_nodes(definition.statement)}
    inside = {id(n) for n in all_nodes(facts.loop)}
    parents = facts.context.parents
    for node in all_nodes(scope):
        if not (isinstance(node, cst.Name) and node.value == name) or id(node) in bound:
            continue
        parent = parents.get(node)
        if not (id(node) in inside and isinstance(parent, cst.Subscript) and parent.value is node):
            return False
    return True


#: names through which code reaches a function's local variables without naming them
_LOCALS_BY_STRING = frozenset({"exec", "eval", "locals", "vars", "globals", "compile", "__import__", "breakpoint"})


def _reaches_locals(scope: cst.CSTNode) -> bool:
    """Whether ``scope`` may change a local variable without naming it: ``exec``/``eval``/
    ``locals()``/``vars()``, frame access (``sys._getframe().f_locals``), a star import."""
    stack: list[cst.CSTNode] = [scope]
    while stack:
        node = stack.pop()
        if isinstance(node, cst.Name) and node.value in _LOCALS_BY_STRING:
            return True
        if isinstance(node, cst.ImportStar):
            return True
        if isinstance(node, cst.Attribute):
            if node.attr.value in FRAME_ATTRIBUTES:
                return True
            stack.append(node.value)  # (`model.eval()` is a method, not the builtin)
            continue
        stack.extend(child_nodes(node))
    return False




def input_specs(
    names: Sequence[str], facts: LoopFacts, opaque: set[str] = frozenset(), counts: set[str] = frozenset(),  # type: ignore[assignment]
    walked: dict[str, int] | None = None, library: str = "torch", positions: Collection[str] = (),
    rebound: Collection[str] = (), held_counts: Collection[str] = (),
) -> tuple[InputSpec, ...]:
    """What the kernel knows about each input: a tensor where the function shows it is one,
    an opaque stand-in for callables, a loop count, else every kind the code allows (the
    checker tries each: a name is never assumed to hold a tensor without evidence).

    A rank the function's code pins at the loop (``facts.shapes.ranks``) is the only rank an
    array input is drawn with -- unless the kernel's prelude binds the name (``rebound``): the
    input is then the value before that binding, which the pin says nothing of.

    A count is drawn as a Python int where only ``range()`` and allocations read it; one of
    ``held_counts`` (read otherwise too) also as a NumPy int and a 0-d integer tensor."""
    pins = {n: r for n, r in facts.shapes.ranks.items() if n not in rebound}
    specs = []
    for input_name in names:
        if input_name in opaque:
            specs.append(InputSpec(input_name, Kind.OPAQUE))
            continue
        if input_name in counts:
            if input_name not in held_counts or _int_only(facts.entry_evidence(input_name).kinds):
                specs.append(InputSpec(input_name, Kind.INT, count=True))
            else:
                # `range(window_size)` takes whatever holds an integer: a Python int, a NumPy
                # int, a 0-d integer tensor -- and the code's arithmetic on it differs by holder
                # (`x - window_size // 2` wraps round in a uint8 tensor)
                specs.append(InputSpec(input_name, kinds=COUNT_HOLDERS, ranks=(0,), dtypes=COUNT_DTYPES, count=True))
            continue
        found = facts.entry_evidence(input_name)
        dim = (walked or {}).get(input_name)
        if found.tensor:
            specs.append(InputSpec(input_name, Kind.TENSOR, ranks=_array_ranks(facts, input_name, dim, pins), batch_dim=dim,
                                   batch_start=_start(facts, input_name, dim)))
        elif library == "numpy" and dim is not None and Kind.NDARRAY in found.kinds and not (
            {Kind.TENSOR, Kind.LIST} & set(found.kinds)
        ):
            # a walked NumPy array: only arrays are walked (a NumPy scalar is not)
            rank = pins.get(input_name)
            ranks = (rank,) if rank is not None else tuple(r for r in (1, 2, 3) if r > dim)
            specs.append(InputSpec(input_name, kinds=(Kind.NDARRAY,), ranks=ranks, batch_dim=dim))
        elif dim is not None and walkable_arrays(found.kinds):
            # a walked tensor-or-ndarray: the checker tries both, walked along `dim` (the
            # other kinds the evidence leaves -- NumPy scalars, numbers -- raise on `x[i]`)
            specs.append(InputSpec(input_name, kinds=found.kinds, ranks=_array_ranks(facts, input_name, dim, pins), batch_dim=dim,
                                   batch_start=_start(facts, input_name, dim), index=input_name in positions))
        elif dim == 0 and Kind.LIST in found.kinds and not (set(found.kinds) - {Kind.TENSOR, Kind.NDARRAY, Kind.LIST}):
            # a walked sequence that may be a list (of numbers: what the checker builds), walked
            # along its only dimension -- the rewrite reads it only as per-sample positions
            specs.append(InputSpec(input_name, kinds=found.kinds, ranks=_array_ranks(facts, input_name, dim, pins), batch_dim=dim,
                                   index=input_name in positions))
        else:
            specs.append(found.spec())
            if pins.get(input_name, 0) > 0 and specs[-1].kind is not Kind.OPAQUE:
                # `target = target.view(-1)` before the loop: a 1-D array there, or the code raised
                specs[-1] = replace(specs[-1], ranks=(pins[input_name],))
            if specs[-1].kind is Kind.INT and _size_of_array(facts, input_name):
                # `n = len(x)` bound once: a size, never negative (the loop it bounds may run
                # zero times, never "minus one" times)
                specs[-1] = replace(specs[-1], count=True, nonnegative=True)
            elif specs[-1].kind is Kind.INT and _enclosing_range_variable(facts, input_name):
                # `for l in range(n):` around the loop: `l` is a position from 0 on, never
                # negative (drawn so, it indexes the arrays the loop reads at `l` far more often)
                specs[-1] = replace(specs[-1], nonnegative=True)
        if input_name in facts.shapes.bools and input_name not in rebound and specs[-1].kind is not Kind.OPAQUE:
            # the function's code makes it a bool array (`m = a.eq(b)`): drawn so -- unless the
            # prelude is what makes it one (`m = m.view(-1) > 0`: the input is the `m` before)
            specs[-1] = replace(specs[-1], dtypes=("bool",))
        elif (
            input_name in facts.shapes.dtypes and input_name not in rebound and specs[-1].kind is not Kind.OPAQUE
            and not specs[-1].count
        ):
            # the function's code converts it (`rank = order.astype(np.int32)`): drawn so
            specs[-1] = replace(specs[-1], dtypes=(facts.shapes.dtypes[input_name],))
    return tuple(specs)


def _enclosing_range_variable(facts: LoopFacts, name: str) -> bool:
    """Whether ``name`` is the variable of a ``for name in range(...)`` around the loop, with a
    start of 0 or more, that nothing else in that loop's body binds: its value there is never
    negative."""
    context = facts.context
    if "range" in shadowed_builtins(context):
        return False
    current = context.parents.get(facts.loop)
    while current is not None and not isinstance(current, (cst.FunctionDef, cst.ClassDef, cst.Module, cst.Lambda)):
        if isinstance(current, cst.For) and name in target_names(current.target):
            domain = loop_domain(current)
            # (a `range` domain starts at a literal of 0 or more, or at 0)
            return domain is not None and domain.is_range and domain.index == name and name not in assigned_names(current.body)
        current = context.parents.get(current)
    return False


def _int_only(kinds: Sequence[Kind]) -> bool:
    """Whether the evidence allows a Python int (or bool) only: an annotated ``int``."""
    return bool(kinds) and set(kinds) <= {Kind.INT, Kind.BOOL}


#: what a loop count may be held in, where nothing annotates it an int (``range`` takes any)
COUNT_HOLDERS = (Kind.INT, Kind.NUMPY_SCALAR, Kind.TENSOR)
COUNT_DTYPES = ("int64", "int32", "uint8")


def _size_of_array(facts: LoopFacts, name: str) -> bool:
    """Whether ``name`` is bound once, to a size of an array or a sequence (``len(x)``,
    ``x.shape[0]``, ``x.size(1)``) whose evidence allows only kinds whose sizes are never
    negative."""
    measured = facts.shapes.measures.get(name)
    if measured is None:
        return False
    kinds = set(facts.evidence(measured[0]).kinds)
    return bool(kinds) and kinds <= {Kind.TENSOR, Kind.NDARRAY, Kind.LIST}


#: allocators whose positional arguments are the sizes, one per dimension (with two or more of
#: them, none can be a shape tuple); NumPy's take one tuple of sizes
_SIZED_ALLOCATORS = frozenset({"torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn", "torch.Tensor",
                               "torch.FloatTensor", "torch.LongTensor", "torch.BoolTensor"})
_TUPLE_ALLOCATORS = frozenset({"numpy.zeros", "numpy.ones", "numpy.empty", "torch.zeros", "torch.ones", "torch.empty",
                               "torch.full", "numpy.full"})
_SIZED_METHODS = frozenset({"new_zeros", "new_ones", "new_empty"})


def _read_as_numbers(counts: Collection[str], code: Sequence[cst.CSTNode], range_shadowed: bool) -> set[str]:
    """The loop counts ``code`` reads other than as a bound of ``range(...)``: in arithmetic,
    a comparison, an index -- where what holds the integer changes what the code computes
    (every one of them, where the module binds ``range`` to something else)."""
    reads: dict[str, int] = {}
    bounds: dict[str, int] = {}
    for statement in code:
        for node in _walk(statement):
            if isinstance(node, cst.Name) and node.value in counts:
                reads[node.value] = reads.get(node.value, 0) + 1
            elif isinstance(node, cst.Call) and not range_shadowed and m.matches(node.func, m.Name("range")):
                for argument in node.args:
                    if isinstance(argument.value, cst.Name) and argument.value.value in counts:
                        bounds[argument.value.value] = bounds.get(argument.value.value, 0) + 1
    return {n for n, k in reads.items() if k > bounds.get(n, 0)}


def _only_sizes(names: Sequence[str], code: Sequence[cst.CSTNode], context: ModuleContext) -> set[str]:
    """The names ``code`` reads only as one size among several of an allocation
    (``torch.zeros(len(x), k)``, ``np.zeros((n, k))``): an integer whatever holds it (an int, a
    0-d tensor and a NumPy integer allocate alike), so the checker draws it as a count -- a
    size in play -- not as any value (a 0-d tensor holding 2**31 - 1 allocates gigabytes)."""
    reads: dict[str, int] = {}
    sizes: dict[str, int] = {}
    for statement in code:
        for node in _walk(statement):
            if isinstance(node, cst.Name):
                reads[node.value] = reads.get(node.value, 0) + 1
            if not isinstance(node, cst.Call):
                continue
            qualified = context.qualified(node.func) or ""
            method = node.func.attr.value if isinstance(node.func, cst.Attribute) and not qualified else ""
            positional = [a.value for a in node.args if a.keyword is None and not a.star]
            candidates: list[cst.BaseExpression] = []
            if (qualified in _SIZED_ALLOCATORS or method in _SIZED_METHODS) and len(positional) >= 2:
                candidates = positional
            elif (qualified in _TUPLE_ALLOCATORS or method in _SIZED_METHODS) and positional and isinstance(positional[0], (cst.Tuple, cst.List)):
                elements = positional[0].elements  # type: ignore[attr-defined]
                if len(elements) >= 2 and not any(isinstance(e, cst.StarredElement) for e in elements):
                    candidates = [e.value for e in elements]
            for size in candidates:
                if isinstance(size, cst.Name):
                    sizes[size.value] = sizes.get(size.value, 0) + 1
    # reads inside the call's own name (`torch.zeros`) are not of the inputs
    return {n for n in names if sizes.get(n, 0) and sizes[n] == reads.get(n, 0)}


def _array_ranks(facts: LoopFacts, input_name: str, dim: int | None, pins: dict[str, int]) -> tuple[int, ...]:
    """The ranks an array input may have: the one the code pins (``pins``), else every rank up
    to 3 that has the walked dimension -- or, where the loop indexes it with four subscripts
    (``w[c, 0, :, :]``), only 4-D or deeper ones, which alone run there."""
    rank = pins.get(input_name)
    if rank is not None:
        return (rank,)
    deepest = _indexed_rank(facts.loop, input_name)
    if deepest > 3:
        return (deepest, deepest + 1)
    return tuple(r for r in (0, 1, 2, 3) if dim is None or r > dim)


def walkable_arrays(kinds: Sequence[Kind]) -> bool:
    """Kinds a loop may walk that the checker builds whole: tensors and ndarrays (with NumPy
    scalars and numbers, which raise where they are walked). A list or a dict is left out: a list
    of tensors walks like a tensor but batches like nothing, and the checker builds lists of
    numbers only."""
    return bool({Kind.TENSOR, Kind.NDARRAY} & set(kinds)) and not (
        {Kind.LIST, Kind.DICT, Kind.ITERATOR, Kind.OPAQUE, Kind.ANY} & set(kinds)
    )


def _indexed_rank(loop: cst.CSTNode, input_name: str) -> int:
    """The most dimensions the loop indexes ``input_name`` with at once (``w[c, 0, :, :]``: 4):
    a tensor of fewer raises there."""
    deepest = 0
    for node in _walk(loop):
        if isinstance(node, cst.Subscript) and m.matches(node.value, m.Name(input_name)):
            deepest = max(deepest, dims_taken(node) or 0)
    return deepest


def _start(facts: LoopFacts, input_name: str, dim: int | None) -> int:
    """Where the loop starts along the dimension whose size is its count (``range(1, x.size(0))``
    walks ``x`` from 1); 0 for every other walked dimension."""
    measures = facts.domain.measures
    if measures is not None and measures == (input_name, dim) and isinstance(facts.domain.start, int):
        return max(facts.domain.start, 0)
    return 0


def build_kernel(
    facts: LoopFacts,
    old: Sequence[cst.CSTNode],
    new: Sequence[cst.CSTNode],
    outputs: Sequence[str],
    exclude_from_prelude: Sequence[cst.CSTNode] = (),
    extra_modules: Sequence[str] = ("torch",),
    reorders_float_reduction: bool = False,
    note: str = "",
    gradients: bool = False,
    walked: dict[str, int] | None = None,
    library: str = "torch",
    given: Collection[str] = (),
    positions: Collection[str] = (),
    inner: dict[str, int] | None = None,
    assumed_ranks: dict[str, int] | None = None,
    definitions: Sequence[tuple[str, str]] = (),
) -> Kernel:
    """A kernel whose old snippet is ``old`` and new snippet is ``new``, both after the prelude
    that computes what they read -- except the names in ``given``, which are inputs drawn from
    what the code shows about them (a superset of the values the function can compute).
    ``positions``: walked names read only as per-sample positions (``p[i, labels[i]]``), drawn as
    integers (a bool there would select, not index: a different operation the code cannot mean).
    ``inner``: the dimension an inner loop walks, for names an outer loop walks along another.
    ``definitions``: (name, source) of the module's pure helpers the code calls
    (``codemods.loops.helpers``): both snippets start with them, so the checker runs the helper
    itself rather than a stand-in.
    Raises :class:`SharedInputs` where the inputs would lose a sharing the function has."""
    context = facts.context
    module_names = set(context.bindings) | {n for n, _ in definitions}
    scope = facts.scope
    # (once per function: every rung of every loop in it asked again, walking the whole function)
    shadowed = facts.context.once("shadowed builtins", scope, lambda: _shadowed_builtins(scope))
    reads = set(free_names(old, module_names, shadowed)) | set(free_names(new, module_names, shadowed))
    prelude, cut = prelude_for(facts, reads, exclude_from_prelude, given)
    fixed = [n for n in sorted(cut) if n not in given and _fixed_number_list(facts, n)]
    if fixed:
        # `means = [0.485, 0.456, 0.406]` above a statement the prelude cannot replay: the
        # literal is what the loop reads, whatever ran in between (nothing else touches it)
        prelude = (*(facts.definition(n).statement for n in fixed), *prelude)  # type: ignore[union-attr]
        cut = cut - set(fixed)
    if cut:
        _refuse_shared(facts, cut, _written_through(prelude, [*old, *new], context))
    old_all = [*prelude, *old]
    new_all = [*prelude, *new]
    renamed = _AttributesAsInputs.for_function(facts, [*old_all, *new_all])
    attribute_kinds: dict[str, Kind] = {}
    if renamed is not None:
        old_all = [s.visit(renamed) for s in old_all]
        new_all = [s.visit(renamed) for s in new_all]
        attribute_kinds = renamed.kinds
        # the layers the loop calls, built by the kernel itself (same seed for old and new)
        old_all = [*renamed.constructions, *old_all]
        new_all = [*renamed.constructions, *new_all]
    names = free_names(old_all, module_names, shadowed)
    new_only = [n for n in free_names(new_all, module_names, shadowed) if n not in names]
    old_binds = set().union(*(assigned_names(s) for s in old_all))
    unbound = [n for n in new_only if n in old_binds]
    if unbound:
        raise ReadBeforeBound(f"the rewrite reads `{unbound[0]}` before the code binds it")
    names += new_only
    called = {
        n.func.value for statement in old_all for n in _walk(statement)
        if isinstance(n, cst.Call) and isinstance(n.func, cst.Name) and n.func.value in names
    }
    counts = set(loop_counts(facts))
    if renamed is not None:
        counts |= renamed.sizes
    held_counts = _read_as_numbers(counts, old_all, "range" in shadowed_builtins(context))
    counts |= _only_sizes([n for n in names if n not in called], [*old_all, *new_all], context)
    rebound = set().union(*(assigned_names(s) for s in prelude))
    specs = input_specs(names, facts, opaque=called, counts=counts, walked=walked, library=library, positions=positions,
                        rebound=rebound, held_counts=held_counts)
    specs = tuple(
        replace(s, inner_dims=(inner[s.name],)) if inner and s.name in inner and s.batch_dim is not None and s.batch_dim != inner[s.name] else s
        for s in specs
    )
    specs = tuple(
        InputSpec(s.name, attribute_kinds[s.name], batch_dim=s.batch_dim) if s.name in attribute_kinds and s.kind is not Kind.OPAQUE else s
        for s in specs
    )
    # the checker draws ranks 0..3 unless told more. A name the code needs three or more
    # dimensions of (`x[:, j, :]`, `np.mean(g, axis=(2, 3))`), or that a rung assumed of some
    # rank, is drawn one rank past that too: the code runs there as well (`x[:, j, :]` of a 4-D
    # `x`), and a batched form written for the rank assumed may line it up otherwise
    floors = fewest_dims(old_all)
    for assumed, rank in (assumed_ranks or {}).items():
        floors[assumed] = max(floors.get(assumed, 0), rank)
    pinned = set(facts.shapes.ranks) - rebound  # (a rank the code pins is the only one there is)
    specs = tuple(_with_rank_floor(s, floors[s.name]) if s.name in floors and s.name not in pinned else s for s in specs)
    module = context.module
    helpers = "".join(text if text.endswith("\n") else text + "\n" for _, text in definitions)
    return Kernel(
        old=helpers + "".join(_text(module, s) for s in old_all),
        new=helpers + "".join(_text(module, s) for s in new_all),
        inputs=specs,
        outputs=tuple(outputs),
        modules=context.kernel_modules(extra_modules),
        reorders_float_reduction=reorders_float_reduction,
        note=note,
        gradients=gradients,
    )


def _with_rank_floor(spec: InputSpec, floor: int) -> InputSpec:
    """``spec`` also drawn with the ranks up to one past ``floor`` (never fewer ranks than
    before): the code runs on the floor's rank and on more, which may batch otherwise."""
    if spec.kind is Kind.OPAQUE or floor + 1 <= max(spec.ranks):
        return spec
    return replace(spec, ranks=tuple(sorted({*spec.ranks, *range(max(spec.ranks) + 1, floor + 2)})))


class _AttributesAsInputs(cst.CSTTransformer):
    """``self.eos`` -> ``self_eos`` in a kernel: a data attribute of the object a method runs on
    becomes an input of its own, which the checker builds (``self`` itself cannot be built).
    A called attribute that the class builds in ``__init__`` as a batch-transparent layer
    (``self.fc = nn.Linear(hidden, 10)``) becomes ``self_fc``, built by the kernel from the same
    constructor with its sizes drawn like the inputs' dimensions and torch's generator seeded,
    so the old and the new code call the same layer. Other called attributes (``self.net(...)``)
    stay: they are the object's behaviour, which the checker cannot build."""

    def __init__(self, self_name: str, taken: set[str], facts: LoopFacts) -> None:
        super().__init__()
        self.self_name = self_name
        self.kinds: dict[str, Kind] = {}
        self.names: dict[str, str] = {}
        self.taken = taken
        self.facts = facts
        self.constructions: list[cst.BaseStatement] = []
        self.sizes: set[str] = set()
        self._called: set[int] = set()
        owner = facts.context.enclosing_class(facts.function) if facts.function is not None else None
        self._attributes = owner.attributes if owner is not None else {}
        self._reassigned = owner.reassigned if owner is not None else set()

    @classmethod
    def for_function(cls, facts: LoopFacts, statements: Sequence[cst.CSTNode]) -> "_AttributesAsInputs | None":
        function = facts.function
        if function is None or facts.context.enclosing_class(function) is None:
            return None
        # (the object of a method: not a static method's first argument, nor a class method's class)
        self_name = _method_self(facts.loop, facts.context)
        if self_name is None:
            return None
        taken = {n for s in statements for n in names_used(s)}
        return cls(self_name, taken | set(facts.context.bindings), facts)

    def _fresh(self, stem: str) -> str:
        local = stem.replace("__", "_")
        while local in self.taken:
            local += "_"
        self.taken.add(local)
        return local

    def visit_Call(self, node: cst.Call) -> None:
        self._called.add(id(node.func))

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if not (isinstance(original.value, cst.Name) and original.value.value == self.self_name):
            return updated
        attribute = original.attr.value
        if attribute.startswith("__"):
            return updated
        if id(original) in self._called:
            local = self.names.get(attribute) or self._layer(attribute)
            return cst.Name(local) if local else updated
        local = self.names.get(attribute)
        if local is None:
            local = self._fresh(f"{self.self_name}_{attribute}")
            self.names[attribute] = local
            self.kinds[local] = Kind.ANY
        return cst.Name(local)

    def _layer(self, attribute: str) -> str | None:
        """Build ``self.<attribute>`` in the kernel when it is a batch-transparent layer."""
        found = self._attributes.get(attribute)
        if found is None or found.constructor is None or found.call is None or attribute in self._reassigned:
            return None
        row = callees.layer(found.constructor)
        if row is None or row.batching is not Batching.LAYER:
            return None
        local = self._fresh(f"{self.self_name}_{attribute}")
        arguments = []
        for position, argument in enumerate(found.call.args):
            if argument.star:
                return None
            key: int | str = argument.keyword.value if argument.keyword is not None else position
            if key in row.size_args:
                size = self._fresh(f"{local}_size{len(self.sizes)}")
                self.sizes.add(size)
                arguments.append(argument.with_changes(value=cst.Name(size)))
            elif _literal(argument.value):
                arguments.append(argument)
            else:
                return None  # a setting computed in __init__: the layer cannot be rebuilt
        context = self.facts.context
        constructor, _ = context.spelling(found.constructor)
        seed, _ = context.spelling("torch.manual_seed")
        self.constructions.append(cst.SimpleStatementLine([cst.Expr(cst.Call(seed, [cst.Arg(cst.Integer("0"))]))]))
        self.constructions.append(cst.SimpleStatementLine([cst.Assign(
            [cst.AssignTarget(cst.Name(local))], found.call.with_changes(func=constructor, args=arguments))]))
        self.names[attribute] = local
        return local


def _literal(node: cst.BaseExpression) -> bool:
    """A number, string, True/False/None, or a tuple/list of those."""
    if isinstance(node, (cst.Integer, cst.Float, cst.SimpleString)):
        return True
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        return _literal(node.expression)
    if isinstance(node, cst.Name):
        return node.value in ("True", "False", "None")
    if isinstance(node, (cst.Tuple, cst.List)):
        return all(_literal(e.value) for e in node.elements)
    return False


def _text(module: cst.Module, node: cst.CSTNode) -> str:
    if isinstance(node, cst.BaseSmallStatement):
        node = cst.SimpleStatementLine(body=[node])
    return statement_code(module, node)
