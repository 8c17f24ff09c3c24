"""TFV003 cat-in-loop: ``torch.cat`` / ``np.concatenate`` growing a value inside a loop."""

from __future__ import annotations

import ast
import textwrap
from dataclasses import dataclass, field
from typing import Iterable

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    BUILTIN_NAMES,
    VIEW_METHODS,
    RuleContext,
    assigned_names,
    comments_in,
    dotted,
    enclosing_scope,
    escaping_control_flow,
    is_in_place_method,
    module_facts,
    module_nodes,
    name_nodes,
    names_used,
    statement_code,
    within,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.evidence import ScopeEvidence
from torchfix.codemods.syntax import SyntaxIndex
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV003"

#: concatenations whose repeated growth equals one call on all the pieces (the checker confirms
#: it for each match: ``vstack`` promotes 1-D rows, ``hstack`` switches dims by rank)
_GROWERS = frozenset(
    {f"torch.{f}" for f in ("cat", "concat", "concatenate", "vstack", "hstack", "row_stack", "column_stack", "dstack")}
    | {f"numpy.{f}" for f in ("concatenate", "vstack", "hstack", "row_stack", "column_stack", "dstack")}
)

#: attributes a tensor has: an invariant name used with one of these can be a generated tensor in
#: the kernel; any other attribute (``self.model``, ``net.encoder``) means an object the checker
#: cannot build, and the appended value is abstracted into per-step values instead
_TENSOR_ATTRS = frozenset(
    {"shape", "T", "mT", "dtype", "device", "size", "dim", "numel", "view", "reshape", "squeeze", "unsqueeze",
     "flatten", "float", "double", "long", "int", "half", "bool", "to", "cpu", "cuda", "detach", "clone",
     "contiguous", "sum", "mean", "max", "min", "abs", "exp", "log", "sqrt", "sigmoid", "tanh", "relu",
     "softmax", "log_softmax", "argmax", "argmin", "transpose", "permute", "expand", "expand_as", "repeat",
     "numpy", "tolist", "type_as", "view_as", "reshape_as", "norm", "clamp", "clip", "pow", "mul", "add",
     "sub", "div", "matmul", "mm", "t", "chunk", "split", "narrow", "index_select", "gather", "masked_fill",
     "round", "floor", "ceil", "sign", "neg", "square", "std", "var", "cumsum", "prod", "all", "any",
     "nonzero", "eq", "ne", "lt", "le", "gt", "ge", "isnan", "isfinite", "astype", "ravel", "copy", "item"}
)

#: calls that draw random numbers: the kernel seeds the generators so both snippets draw alike
_RNG_NAMES = frozenset(
    {"rand", "randn", "randint", "randperm", "rand_like", "randn_like", "randint_like", "normal", "bernoulli",
     "multinomial", "poisson", "random", "uniform", "dropout", "choice", "shuffle", "permutation",
     "random_", "normal_", "uniform_", "bernoulli_", "exponential_", "geometric_", "cauchy_", "log_normal_",
     "standard_normal", "integers", "default_rng"}
)


#: calls that return a new array, never one they were given or one they keep
_ALLOCATORS = frozenset(
    {f"numpy.{f}" for f in ("zeros", "ones", "empty", "full", "array", "zeros_like", "ones_like", "empty_like", "full_like", "copy")}
    | {f"torch.{f}" for f in ("zeros", "ones", "empty", "full", "tensor", "zeros_like", "ones_like", "empty_like", "full_like")}
)

#: creation calls whose positional integer arguments are sizes
_CREATION = frozenset({"empty", "zeros", "ones", "full", "new_empty", "new_zeros", "new_ones", "new_full"})


class _GeneralizeSizes(cst.CSTTransformer):
    """``torch.empty(0, 128)`` -> ``torch.empty(0, _torchfix_size0)``: positive integer sizes of a
    creation call become kernel inputs, so the generated pieces (sizes up to a handful) can match
    them; a proof for every size covers the literal one. Zero sizes stay: they make the start empty."""

    def __init__(self) -> None:
        super().__init__()
        self.names: list[str] = []
        #: names already used as sizes (``torch.empty(0, dim)``): ints, for the kernel
        self.size_names: set[str] = set()

    def _size(self, node: cst.BaseExpression) -> cst.BaseExpression:
        if isinstance(node, cst.Name):
            self.size_names.add(node.value)
        if isinstance(node, cst.Integer) and node.evaluated_value > 0:
            name = f"_torchfix_size{len(self.names)}"
            self.names.append(name)
            return cst.Name(name)
        if isinstance(node, (cst.Tuple, cst.List)):
            return node.with_changes(
                elements=[e.with_changes(value=self._size(e.value)) if isinstance(e, cst.Element) else e for e in node.elements]
            )
        return node

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.Call:
        func = updated.func
        last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
        if last not in _CREATION:
            return updated
        positional = [a for a in updated.args if a.keyword is None and not a.star]
        if last in ("full", "new_full"):
            positional = positional[:1]
        chosen = {id(a) for a in positional}
        return updated.with_changes(
            args=[a.with_changes(value=self._size(a.value)) if id(a) in chosen else a for a in updated.args]
        )


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _root_name(expr: cst.BaseExpression) -> str | None:
    """``buf`` for ``buf``, ``buf[0]``, ``buf.data``, ``buf[:, 1].view(-1)``."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, (cst.Subscript, cst.Attribute)):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            expr = expr.func
        else:
            return None


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


def _with_view_roots(names: set[str], scope: cst.CSTNode) -> set[str]:
    """``names`` and every name one of them may be a view of: ``obs = buf[0]`` makes ``obs``
    change when ``buf`` is changed in place (``.float()`` / ``.to()`` of a value already of that
    dtype or device hand back the value itself, so they count as views too)."""
    found, pending = set(names), list(names)
    while pending:
        name = pending.pop()
        for assign in m.findall(scope, m.Assign(targets=[m.AssignTarget(target=m.Name(name))])):
            value = assign.value  # type: ignore[attr-defined]
            while True:
                if isinstance(value, (cst.Subscript, cst.Attribute)):
                    value = value.value
                elif isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in VIEW_METHODS:
                    value = value.func.value
                else:
                    break
            if isinstance(value, cst.Name) and value.value not in found:
                found.add(value.value)
                pending.append(value.value)
    return found


def _only_returned(statement: cst.CSTNode, name: str) -> bool:
    """Whether ``name`` appears in ``statement`` only as ``return name`` (an early exit, as in
    ``if not items: return out``): the path that reaches the loop leaves it as it was."""
    returned = {id(r.value) for r in m.findall(statement, m.Return(value=m.Name(name)))}  # type: ignore[union-attr]
    return all(id(n) in returned for n in name_nodes(statement) if n.value == name)


def _count(node: cst.CSTNode, name: str) -> int:
    return sum(1 for n in name_nodes(node) if n.value == name)


def _uses_rng(nodes: Iterable[cst.CSTNode]) -> bool:
    found = False

    class _Rng(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            nonlocal found
            func = node.func
            last = func.attr.value if isinstance(func, cst.Attribute) else func.value if isinstance(func, cst.Name) else ""
            if last in _RNG_NAMES:
                found = True

    for node in nodes:
        node.visit(_Rng())
    return found


@dataclass
class _Growth:
    """What one growth call concatenates besides the growing value, and its other arguments."""

    parts: list[cst.BaseExpression]
    options: tuple[cst.Arg, ...]
    append: bool


@dataclass
class _Match:
    """One growth site: ``unit`` is the statement replaced by the append (the cat statement, or the
    whole ``if out is None: ... else: ...`` statement for the ``None``-initial form)."""

    name: str
    unit: cst.BaseStatement
    call: cst.Call
    parts: list[cst.BaseExpression]
    none_form: bool
    #: the call's arguments other than what it concatenates (``dim=0``, ``axis=1``)
    options: tuple[cst.Arg, ...] = ()
    #: ``np.append(name, piece[, axis])``: the final call is ``np.concatenate`` with that axis
    #: (``None`` without one: ``np.append`` flattens, as ``concatenate(..., axis=None)`` does)
    append: bool = False


@dataclass
class _Plan:
    #: every growth site of the name in the loop, in source order (``if``/``else`` branches may
    #: each grow it): one list collects the pieces of all of them, in the order they run
    sites: list[_Match]
    loop: cst.For | cst.While
    init: cst.SimpleStatementLine | None
    parts_name: str = ""

    @property
    def match(self) -> _Match:
        return self.sites[0]


@dataclass
class _Context(RuleContext):
    #: what each module-level name is bound to (the first binding of a name wins)
    bindings: dict[str, str] = field(default_factory=dict)
    #: names taken in a scope (by id): the parts list must not clash with any of them
    taken: dict[int, set[str]] = field(default_factory=dict)


class CatInLoop(Rule):
    code = CODE
    tensor_code_only = True
    name = "cat-in-loop"
    summary = "`torch.cat` / `np.concatenate` growing a value inside a loop: O(n^2) copying."
    docs = """
    ## What it does
    Finds a tensor (or numpy array) grown by concatenation once per step of a loop --
    `out = torch.cat([out, y], dim=0)`, also with a tuple, a positional dim, `torch.concat`,
    `torch.vstack` / `hstack`, `np.concatenate(..., axis=0)`, `np.append(out, y)` (with or
    without `axis=`), `import torch as th`, and the `None`-initial form

    ```python
    out = None
    for ...:
        if out is None:
            out = y
        else:
            out = torch.cat([out, y])
    ```

    and rewrites it to collect the pieces in a list and concatenate once, after the loop.

    ## Why is this bad?
    Every `torch.cat` allocates a new tensor and copies everything grown so far: after `n` steps
    the loop has copied `n^2 / 2` rows instead of `n`, and allocated `n` ever larger buffers. A
    list append is O(1), and one concatenation at the end copies each row once.

    ## Example
    ```python
    feats = torch.empty(0, 128)
    for x in loader:
        feats = torch.cat([feats, model(x)], dim=0)
    ```

    ## Use instead
    ```python
    feats = torch.empty(0, 128)
    feats_parts = []
    for x in loader:
        feats_parts.append(model(x))
    feats = torch.cat([feats, *feats_parts], dim=0)
    ```
    The initial value stays the first piece of the final concatenation, so the result is the same
    also when the loop runs zero times, and has the dtype torch's type promotion gives the
    step-by-step version (an empty `float32` start with `int64` pieces stays `float32`). The
    call's own arguments (`dim=`, `axis=`) are kept. For the `None`-initial form the result is
    `out_parts[0] if len(out_parts) == 1 else torch.cat(out_parts) if out_parts else None`: a
    lone piece is what the loop left, never concatenated (so of any rank, along any
    dimension). The list is named `<name>_parts` (with a number added if that name is taken).

    `np.append(out, y, axis=k)` is `np.concatenate((out, y), axis=k)`; without an axis it
    flattens both, so the final call is `np.concatenate([out, *out_parts], axis=None)`. (Where a
    piece is a Python float and the start is `float32`, the two differ -- `np.append` makes the
    float a `float64` array, `np.concatenate` treats it as weak -- and the checker refutes the
    rewrite.) A name grown at several places of one loop (`if`/`else` branches) collects into one
    list, in the order the steps run. A piece built fresh each step (`row = np.zeros((1, 5))`),
    filled in place, then appended, is not "changed in place later".

    ## When it stays silent
    - Anything else in the loop reads or writes the growing value: `out.shape[0]`, `len(out)`,
      passing it to a function, a sliding window `h = torch.cat([h[1:], y])`, or a recurrence
      that reads it in the appended piece.
    - The loop can `return` / `yield` (skipping the final concatenation), declares names
      `global` / `nonlocal`, has an `else:` clause, or the concatenation sits inside a `try`
      (an error that the loop used to catch at one step would now surface after the loop).
    - The concatenation sits in a `with` block inside the loop (`with torch.no_grad():`): the
      final concatenation would run outside that context.
    - The appended value may be changed in place later in the loop (`buf.copy_(...)`,
      `buf[...] = ...`, `buf += ...`, `fill(buf)`): the list would hold the changed buffer, where
      the concatenation copied it at the time.
    - The call's other arguments change from step to step or make calls.
    - A nested function reads the growing name, or (at module level) any function of the module
      does, or the name is declared `global` / `nonlocal`.
    With the `None`-initial form and exactly one step, the old code leaves the piece itself in
    `out` while the new code leaves a copy: equal values, but no longer the same object.
    The pieces must be new tensors each step, as model outputs and expressions are; a callee that
    hands back the same buffer every time (a CUDA-graph replay's static output) would leave the
    list holding that buffer n times -- clone such outputs, or suppress the rule there.
    """
    examples = (
        Example(
            """
            import torch

            def collect(x: torch.Tensor) -> torch.Tensor:
                out = torch.empty(0, x.shape[1])
                for i in range(len(x)):
                    out = torch.cat([out, x[i:i + 1] * 2], dim=0)
                return out
            """,
            """
            import torch

            def collect(x: torch.Tensor) -> torch.Tensor:
                out = torch.empty(0, x.shape[1])
                out_parts = []
                for i in range(len(x)):
                    out_parts.append(x[i:i + 1] * 2)
                out = torch.cat([out, *out_parts], dim=0)
                return out
            """,
            id="grow-rows",
        ),
        Example(
            """
            import torch

            def collect(chunks, limit):
                out = torch.empty(0, 4)
                for y in chunks:
                    out = torch.cat([out, y])
                    if out.shape[0] >= limit:
                        break
                return out
            """,
            None,
            id="read-inside-loop",
        ),
    )

    required_bytes = ((b"cat", b"stack", b"append"),)

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """Inside a loop, `name = F([name, piece, ...], ...)` (or its `if name is None` form), or
        `name = np.append(name, piece)`."""
        for assign in index.nodes_in_loops(ast.Assign):
            assert isinstance(assign, ast.Assign)
            if len(assign.targets) != 1 or not isinstance(assign.targets[0], ast.Name):
                continue
            name = assign.targets[0].id
            value = assign.value
            calls = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            for call in calls:
                if not isinstance(call, ast.Call) or not call.args:
                    continue
                seq = call.args[0]
                if isinstance(call.func, ast.Attribute) and call.func.attr == "append" and isinstance(seq, ast.Name) and seq.id == name:
                    return True  # np.append(name, piece)
                if isinstance(seq, (ast.List, ast.Tuple)) and len(seq.elts) >= 2:
                    first = seq.elts[0]
                    if isinstance(first, ast.Name) and first.id == name:
                        return True
        return False

    # ------------------------------------------------------------------ driver

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        module = wrapper.module
        facts = module_facts(module)
        bindings: dict[str, str] = {}
        for name, target in facts.bindings:
            bindings.setdefault(name, target)
        if not bindings:
            return []
        assigns: list[cst.SimpleStatementLine] = [
            node
            for node in module_nodes(module).of_type(cst.SimpleStatementLine)
            if isinstance(node, cst.SimpleStatementLine)
            and len(node.body) == 1
            and isinstance(node.body[0], cst.Assign)
            and isinstance(node.body[0].value, (cst.Call, cst.IfExp))
        ]
        if not assigns:
            return []
        ctx = _Context.from_wrapper(wrapper, facts, bindings=bindings)
        sites_of: dict[str, list[_Match]] = {}
        for match in (self._match(stmt, ctx) for stmt in assigns):
            if match is not None:
                sites_of.setdefault(match.name, []).append(match)
        skips: dict[tuple[int, int, str | None], Proposal] = {}
        plans: dict[tuple[str, int], _Plan] = {}
        for match in (match for sites in sites_of.values() for match in sites):
            outcome = self._plan(match, sites_of[match.name], ctx)
            if isinstance(outcome, Proposal):
                skips.setdefault((outcome.line, outcome.column, outcome.skip_reason), outcome)
            elif outcome is not None:
                # the sites of one name in one loop share one list
                plan = plans.setdefault((match.name, id(outcome.loop)), outcome)
                if plan is not outcome:
                    plan.sites.append(match)
        groups: dict[int, list[_Plan]] = {}
        for plan in plans.values():
            inside = [s for s in sites_of[plan.match.name] if within(s.unit, plan.loop, ctx.parents)]
            if len(inside) != len(plan.sites):
                # a site the others cannot collect with (skipped above) keeps the loop as it is:
                # collecting the rest would reorder the pieces
                skip = self._skip(plan.loop, ctx, self._message(plan.match), f"`{plan.match.name}` grows at a place that cannot be collected")
                skips.setdefault((skip.line, skip.column, skip.skip_reason), skip)
                continue
            if len({(_code(s.call.func), tuple(_code(a) for a in s.options)) for s in plan.sites}) > 1:
                skip = self._skip(plan.loop, ctx, self._message(plan.match), f"`{plan.match.name}` grows by different calls in the loop")
                skips.setdefault((skip.line, skip.column, skip.skip_reason), skip)
                continue
            groups.setdefault(id(plan.loop), []).append(plan)
        proposals = list(skips.values()) + [self._proposal(group, ctx) for group in groups.values()]
        proposals.sort(key=lambda p: (p.line, p.column))
        return proposals

    # ------------------------------------------------------------------ helpers

    def _skip(self, node: cst.CSTNode, ctx: _Context, message: str, reason: str) -> Proposal:
        return ctx.proposal(CODE, node, message, skip_reason=reason)

    def _resolve(self, func: cst.BaseExpression, ctx: _Context) -> str | None:
        name = dotted(func)
        if not name:
            return None
        head, _, rest = name.partition(".")
        target = ctx.bindings.get(head)
        if target is None:
            return None
        return f"{target}.{rest}" if rest else target

    def _modules(self, ctx: _Context) -> tuple[tuple[str, str], ...]:
        return tuple(dict.fromkeys((n, t) for n, t in ctx.facts.bindings))

    def _message(self, match: _Match) -> str:
        func = dotted(match.call.func) or "torch.cat"
        return (
            f"`{match.name}` grows by `{func}` once per step: O(n^2) copying; "
            f"collect the pieces in a list and concatenate once after the loop"
        )

    # ------------------------------------------------------------------ matching

    def _grow_parts(self, name: str, call: cst.BaseExpression, ctx: _Context) -> _Growth | None:
        """The pieces of ``F([name, *pieces], ...)`` with F a concatenation, or of
        ``np.append(name, piece[, axis])``; else None."""
        if not isinstance(call, cst.Call) or not call.args:
            return None
        resolved = self._resolve(call.func, ctx)
        if resolved == "numpy.append":
            return self._append_parts(name, call)
        if resolved not in _GROWERS:
            return None
        first, rest = call.args[0], call.args[1:]
        if first.keyword is not None or first.star or any(a.star for a in rest):
            return None
        if any(a.keyword is not None and a.keyword.value == "out" for a in rest):
            return None
        seq = first.value
        if not isinstance(seq, (cst.List, cst.Tuple)) or len(seq.elements) < 2:
            return None
        if any(not isinstance(e, cst.Element) for e in seq.elements):
            return None
        if not m.matches(seq.elements[0].value, m.Name(name)):
            return None
        return _Growth([e.value for e in seq.elements[1:]], tuple(rest), False)

    @staticmethod
    def _append_parts(name: str, call: cst.Call) -> _Growth | None:
        """``np.append(name, piece)`` / ``np.append(name, piece, axis)``: one piece. The final call
        is spelled ``np.concatenate`` from the same module, so the callee must be an attribute."""
        if not isinstance(call.func, cst.Attribute) or any(a.star for a in call.args):
            return None
        positional = [a for a in call.args if a.keyword is None]
        keywords = [a for a in call.args if a.keyword is not None]
        if len(positional) not in (2, 3) or any(a.keyword.value != "axis" for a in keywords):  # type: ignore[union-attr]
            return None
        if len(positional) + len(keywords) > 3:
            return None
        if not m.matches(positional[0].value, m.Name(name)):
            return None
        return _Growth([positional[1].value], tuple([*positional[2:], *keywords]), True)

    def _match(self, stmt: cst.SimpleStatementLine, ctx: _Context) -> _Match | None:
        assign = stmt.body[0]
        if not (isinstance(assign, cst.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0].target, cst.Name)):
            return None
        name = assign.targets[0].target.value
        value = assign.value
        if isinstance(value, cst.IfExp):
            # `name = F([name, E]) if name is not None else E` (or the `is None` spelling)
            test = value.test
            if not (isinstance(test, cst.Comparison) and self._is_none_test(test, name)):
                return None
            is_not = isinstance(test.comparisons[0].operator, cst.IsNot)
            call, first = (value.body, value.orelse) if is_not else (value.orelse, value.body)
            growth = self._grow_parts(name, call, ctx)
            # (np.append flattens what it grows, but not the first piece of the None form)
            if growth is None or growth.append or len(growth.parts) != 1 or _code(first) != _code(growth.parts[0]):
                return None
            if _count(stmt, name) != 3:
                return None
            return _Match(name, stmt, call, growth.parts, True, growth.options)  # type: ignore[arg-type]
        growth = self._grow_parts(name, value, ctx)
        # the growing value must appear only as the target and the first piece
        if growth is None or _count(stmt, name) != 2:
            return None
        call = value
        assert isinstance(call, cst.Call)
        parts = growth.parts
        # the None-initial form: `if name is None: name = E else: name = F([name, E])`
        block = ctx.parents.get(stmt)
        owner = ctx.parents.get(block) if isinstance(block, cst.IndentedBlock) else None
        if_node = ctx.parents.get(owner) if isinstance(owner, cst.Else) else owner
        if isinstance(if_node, cst.If) and isinstance(block, cst.IndentedBlock) and len(block.body) == 1:
            form = not growth.append and self._none_form(if_node, stmt, name, parts)
            if form:
                return _Match(name, if_node, call, parts, True, growth.options)
            if self._tests_none(if_node, name):
                return None  # some other shape of None handling: leave it alone
        return _Match(name, stmt, call, parts, False, growth.options, growth.append)

    def _is_none_test(self, test: cst.BaseExpression, name: str) -> bool:
        return m.matches(
            test,
            m.Comparison(left=m.Name(name), comparisons=[m.ComparisonTarget(operator=m.Is() | m.IsNot(), comparator=m.Name("None"))]),
        )

    def _tests_none(self, node: cst.If, name: str) -> bool:
        return self._is_none_test(node.test, name)

    def _none_form(self, node: cst.If, stmt: cst.SimpleStatementLine, name: str, parts: list[cst.BaseExpression]) -> bool:
        if not self._tests_none(node, name) or not isinstance(node.orelse, cst.Else):
            return False
        is_not = isinstance(node.test.comparisons[0].operator, cst.IsNot)  # type: ignore[attr-defined]
        grow_block, first_block = (node.body, node.orelse.body) if is_not else (node.orelse.body, node.body)
        if not (isinstance(grow_block, cst.IndentedBlock) and isinstance(first_block, cst.IndentedBlock)):
            return False
        if len(grow_block.body) != 1 or grow_block.body[0] is not stmt or len(first_block.body) != 1 or len(parts) != 1:
            return False
        first = first_block.body[0]
        if not (
            isinstance(first, cst.SimpleStatementLine)
            and len(first.body) == 1
            and m.matches(first.body[0], m.Assign(targets=[m.AssignTarget(target=m.Name(name))]))
        ):
            return False
        value = first.body[0].value  # type: ignore[attr-defined]
        return _code(value) == _code(parts[0]) and name not in names_used(value)

    # ------------------------------------------------------------------ preconditions

    def _plan(self, match: _Match, sites: list[_Match], ctx: _Context) -> _Plan | Proposal | None:
        """The loop that ``match`` (one of the growth ``sites`` of its name in the module) can
        collect over: the outermost one in which the name appears only in growth sites."""
        name, unit = match.name, match.unit
        chain: list[cst.CSTNode] = []
        node: cst.CSTNode = unit
        while node in ctx.parents:
            node = ctx.parents[node]
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
                break
            chain.append(node)
        scope = node
        loops = [n for n in chain if isinstance(n, (cst.For, cst.While))]
        if not loops:
            return None
        message = self._message(match)
        chosen: cst.For | cst.While | None = None
        for loop in loops:
            own = sum(_count(site.unit, name) for site in sites if within(site.unit, loop, ctx.parents))
            if _count(loop, name) == own and not any(site.none_form for site in sites if site is not match and within(site.unit, loop, ctx.parents)):
                chosen = loop
            else:
                break
        if chosen is None:
            return self._skip(loops[0], ctx, message, f"`{name}` is read or written elsewhere inside the loop")
        if isinstance(chosen, cst.For) and chosen.asynchronous is not None:
            return self._skip(chosen, ctx, message, "an `async for` loop")
        if chosen.orelse is not None:
            return self._skip(chosen, ctx, message, "the loop has an `else:` clause")
        escapes = set(escaping_control_flow(chosen.body))
        for word in ("return", "yield", "await", "global", "nonlocal"):
            if word in escapes:
                return self._skip(chosen, ctx, message, f"`{word}` inside the loop: the concatenation after the loop could be skipped")
        inside = chain[: chain.index(chosen)]
        if any(isinstance(n, cst.Try) for n in chain):
            return self._skip(
                chosen, ctx, message,
                "the concatenation sits inside a `try`: an error caught at one step would surface after the loop instead",
            )
        if any(isinstance(n, cst.With) for n in inside):
            return self._skip(
                chosen, ctx, message,
                "the concatenation sits in a `with` block inside the loop; the final concatenation would run outside it",
            )
        for decl in m.findall(scope, m.Global() | m.Nonlocal()):
            if any(n.name.value == name for n in decl.names):  # type: ignore[attr-defined]
                word = "global" if isinstance(decl, cst.Global) else "nonlocal"
                return self._skip(
                    chosen, ctx, message, f"`{name}` is declared {word}: code elsewhere may read it while the loop runs"
                )
        if any(n.value == name for n in self._nested_scope_names(scope, ctx)):
            return self._skip(chosen, ctx, message, f"a nested function or comprehension reads `{name}`")
        if isinstance(scope, cst.Module) and any(name in names_used(fn) for fn in self._functions(scope)):
            return self._skip(chosen, ctx, message, f"a function in this module may read the global `{name}`")
        loop_assigned = assigned_names(chosen)
        rest = match.options
        if any(names_used(a.value) & loop_assigned for a in rest):
            return self._skip(chosen, ctx, message, "the concatenation's other arguments change from step to step")
        if any(m.findall(a.value, m.Call()) for a in rest):
            return self._skip(chosen, ctx, message, "the concatenation's other arguments make calls")
        read = set().union(*(names_used(p) for p in match.parts))
        read = {n for n in read if not self._fresh_each_step(chosen, match, n, ctx)}
        mutated = (self._mutated_roots(chosen) - ctx.module_names) & _with_view_roots(read, scope)
        if mutated:
            which = ", ".join(f"`{n}`" for n in sorted(mutated))
            return self._skip(
                chosen, ctx, message,
                f"{which} may be changed in place inside the loop: a list would keep the changed value, "
                f"where the concatenation copied it at the time",
            )
        init = self._find_init(chosen, name, ctx)
        if match.none_form and (init is None or not m.matches(init.body[0].value, m.Name("None"))):  # type: ignore[attr-defined]
            return self._skip(chosen, ctx, message, f"no `{name} = None` just before the loop")
        return _Plan([match], chosen, init)

    def _fresh_each_step(self, loop: cst.For | cst.While, match: _Match, name: str, ctx: _Context) -> bool:
        """Whether ``name`` is a new array each step, filled in place before it is grown into the
        value and untouched after: ``piece = np.zeros((1, 5))``, ``piece[0, :4] = box``, then
        the growth, all in the loop's own body. The list then holds each step's piece as the
        concatenation copied it."""
        block = ctx.parents.get(match.unit)
        if not isinstance(block, cst.IndentedBlock) or ctx.parents.get(block) is not loop:
            return False
        body = list(block.body)
        site = next(k for k, statement in enumerate(body) if statement is match.unit)
        mentions = [k for k, statement in enumerate(body) if name in names_used(statement) or name in assigned_names(statement)]
        if not mentions or mentions[-1] != site or _count(match.unit, name) != 1:
            return False
        first = body[mentions[0]]
        if not (isinstance(first, cst.SimpleStatementLine) and len(first.body) == 1
                and m.matches(first.body[0], m.Assign(targets=[m.AssignTarget(target=m.Name(name))], value=m.Call()))):
            return False
        allocation = first.body[0].value  # type: ignore[attr-defined]
        if self._resolve(allocation.func, ctx) not in _ALLOCATORS:
            return False
        if any(a.keyword is not None and a.keyword.value == "copy" for a in allocation.args):
            return False  # np.array(buf, copy=False) may hand back `buf` itself
        for k in mentions[1:-1]:
            statement = body[k]
            if not (isinstance(statement, cst.SimpleStatementLine) and len(statement.body) == 1):
                return False
            store = statement.body[0]
            targets = [t.target for t in store.targets] if isinstance(store, cst.Assign) else [store.target] if isinstance(store, cst.AugAssign) else []
            if len(targets) != 1 or not m.matches(targets[0], m.Subscript(value=m.Name(name))):
                return False
            if name in names_used(store.value) or any(name in names_used(e) for e in targets[0].slice):  # type: ignore[attr-defined]
                return False
        return True

    def _nested_scope_names(self, scope: cst.CSTNode, ctx: _Context) -> list[cst.Name]:
        found: list[cst.Name] = []
        nested = (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)

        class _Nested(cst.CSTVisitor):
            def on_visit(self, node: cst.CSTNode) -> bool:
                if node is not scope and isinstance(node, nested):
                    found.extend(name_nodes(node))
                    return False
                return True

        scope.visit(_Nested())
        return found

    def _functions(self, module: cst.Module) -> list[cst.FunctionDef]:
        return [n for n in m.findall(module, m.FunctionDef()) if isinstance(n, cst.FunctionDef)]

    def _mutated_roots(self, loop: cst.CSTNode) -> set[str]:
        """Names whose object the loop may change in place: in-place methods, item or attribute
        assignment, augmented assignment, ``out=`` arguments, and bare calls passing the name."""
        roots: set[str] = set()

        class _Mutations(cst.CSTVisitor):
            def visit_Call(self, node: cst.Call) -> None:
                func = node.func
                if isinstance(func, cst.Attribute):
                    attr = func.attr.value
                    if is_in_place_method(attr):
                        root = _root_name(func.value)
                        if root:
                            roots.add(root)
                for arg in node.args:
                    if arg.keyword is not None and arg.keyword.value == "out":
                        root = _root_name(arg.value)
                        if root:
                            roots.add(root)

            def visit_Expr(self, node: cst.Expr) -> None:
                # a call whose result is dropped is called for its effect: it may fill its arguments
                call = node.value
                if isinstance(call, cst.Call) and not (isinstance(call.func, cst.Name) and call.func.value in BUILTIN_NAMES):
                    for arg in call.args:
                        root = _root_name(arg.value)
                        if root:
                            roots.add(root)

            def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
                if isinstance(node.target, (cst.Subscript, cst.Attribute)):
                    root = _root_name(node.target)
                    if root:
                        roots.add(root)

            def visit_AugAssign(self, node: cst.AugAssign) -> None:
                root = _root_name(node.target)
                if root:
                    roots.add(root)

        loop.visit(_Mutations())
        return roots

    def _find_init(self, loop: cst.CSTNode, name: str, ctx: _Context) -> cst.SimpleStatementLine | None:
        """The ``name = ...`` statement that sets ``name`` last before ``loop``, looking back in the
        loop's block and, out of ``with`` blocks, in the enclosing ones; None when something in
        between touches ``name`` or there is no such statement."""
        node: cst.CSTNode = loop
        while True:
            block = ctx.parents.get(node)
            if not isinstance(block, (cst.IndentedBlock, cst.Module)):
                return None
            body = list(block.body)
            index = next(i for i, s in enumerate(body) if s is node)
            for stmt in reversed(body[:index]):
                if (
                    isinstance(stmt, cst.SimpleStatementLine)
                    and len(stmt.body) == 1
                    and m.matches(stmt.body[0], m.Assign(targets=[m.AssignTarget(target=m.Name(name))]))
                ):
                    return stmt if name not in names_used(stmt.body[0].value) else None  # type: ignore[attr-defined]
                if name in assigned_names(stmt) or (name in names_used(stmt) and not _only_returned(stmt, name)):
                    return None
            owner = ctx.parents.get(block)
            if not isinstance(owner, cst.With) or any(name in names_used(item) for item in owner.items):
                return None
            node = owner

    # ------------------------------------------------------------------ the rewrite

    def _fresh(self, base: str, scope: cst.CSTNode, ctx: _Context) -> str:
        """``base``, or ``base2``, ``base3``... : a name nothing in the scope uses (attribute names
        and nested scopes included, to stay on the safe side; at module level, the whole module)."""
        taken = ctx.taken.get(id(scope))
        if taken is None:
            taken = {n.value for n in m.findall(scope, m.Name()) if isinstance(n, cst.Name)}
            if isinstance(scope, cst.FunctionDef):
                taken |= {n for n, _ in ctx.facts.bindings}
            ctx.taken[id(scope)] = taken
        candidate, k = base, 2
        while candidate in taken or candidate in BUILTIN_NAMES:
            candidate, k = f"{base}{k}", k + 1
        taken.add(candidate)
        return candidate

    def _final_value(self, plan: _Plan) -> cst.BaseExpression:
        call, parts_name = plan.match.call, plan.parts_name
        first = call.args[0]
        if plan.match.none_form:
            # one piece was never concatenated: the loop left that piece itself (of any rank,
            # whatever the dimension), which a concatenation of one piece would copy or refuse
            new_first = first.with_changes(value=cst.Name(parts_name))
            new_call = call.with_changes(args=[new_first, *call.args[1:]])
            several = cst.IfExp(test=cst.Name(parts_name), body=new_call, orelse=cst.Name("None"))
            one = cst.Comparison(
                cst.Call(cst.Name("len"), [cst.Arg(cst.Name(parts_name))]),
                [cst.ComparisonTarget(cst.Equal(), cst.Integer("1"))],
            )
            first_piece = cst.Subscript(cst.Name(parts_name), [cst.SubscriptElement(cst.Index(cst.Integer("0")))])
            return cst.IfExp(test=one, body=first_piece, orelse=several)
        elements = [
            cst.Element(cst.Name(plan.match.name), comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
            cst.StarredElement(cst.Name(parts_name)),
        ]
        if plan.match.append:
            # np.append(a, v, axis) is np.concatenate((a, v), axis); without an axis it flattens
            # both, as np.concatenate(..., axis=None) does
            axis = plan.match.options[0].value if plan.match.options else cst.Name("None")
            func = call.func.with_changes(attr=cst.Name("concatenate"))  # type: ignore[attr-defined]
            return cst.Call(func, [cst.Arg(cst.List(elements)), cst.Arg(axis, keyword=cst.Name("axis"), equal=_EQUAL)])
        seq = first.value
        new_seq = cst.List(elements) if isinstance(seq, cst.List) else cst.Tuple(elements)
        return call.with_changes(args=[first.with_changes(value=new_seq), *call.args[1:]])

    @staticmethod
    def _append_code(parts_name: str, parts: list[cst.BaseExpression]) -> str:
        if len(parts) == 1:
            return f"{parts_name}.append({_code(parts[0])})"
        return f"{parts_name}.extend(({', '.join(_code(p) for p in parts)}))"

    def _proposal(self, plans: list[_Plan], ctx: _Context) -> Proposal:
        loop = plans[0].loop
        plans.sort(key=lambda p: ctx.position(p.match.unit))
        config = ctx.module.config_for_parsing
        for plan in plans:
            plan.parts_name = self._fresh(f"{plan.match.name}_parts", enclosing_scope(loop, ctx.parents), ctx)
        replace: dict[int, cst.BaseStatement] = {}
        for plan in plans:
            for site in plan.sites:
                unit = site.unit
                stmt = cst.parse_statement(self._append_code(plan.parts_name, site.parts) + "\n", config=config)
                assert isinstance(stmt, cst.SimpleStatementLine)
                if isinstance(unit, cst.SimpleStatementLine):
                    # the same line, so a trailing comment stays where it was
                    replace[id(unit)] = unit.with_changes(body=stmt.body)
                else:
                    comments = comments_in(unit.with_changes(leading_lines=()))
                    replace[id(unit)] = stmt.with_changes(leading_lines=[*unit.leading_lines, *comments])

        class _Swap(cst.CSTTransformer):
            def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
                return replace.get(id(original), updated)

        new_loop = loop.visit(_Swap())
        assert isinstance(new_loop, (cst.For, cst.While))
        starts = [cst.parse_statement(f"{p.parts_name} = []\n", config=config) for p in plans]
        starts[0] = starts[0].with_changes(leading_lines=loop.leading_lines)
        finals = [
            cst.parse_statement(f"{p.match.name} = {_code(self._final_value(p))}\n", config=config) for p in plans
        ]
        edit = Edit(loop, cst.FlattenSentinel([*starts, new_loop.with_changes(leading_lines=()), *finals]))
        candidate = Candidate(
            "collect the pieces in a list, concatenate once after the loop",
            (edit,),
            self._kernel(plans, starts, finals, ctx),
        )
        names = ", ".join(f"`{p.match.name}`" for p in plans)
        message = self._message(plans[0].match) if len(plans) == 1 else (
            f"{names} grow by concatenation once per step: O(n^2) copying; collect the pieces in lists and "
            f"concatenate once after the loop"
        )
        return ctx.proposal(CODE, loop, message, (candidate,))

    # ------------------------------------------------------------------ the proof obligation

    def _kernel(
        self, plans: list[_Plan], starts: list[cst.BaseStatement], finals: list[cst.BaseStatement], ctx: _Context
    ) -> Kernel:
        """Inits verbatim, then a loop over per-step values of what the concatenations read, with
        the concatenation statements verbatim (old) against the appends and the final
        concatenation (new). The rest of the loop body is untouched by the rewrite and left out."""
        loop = plans[0].loop
        loop_assigned = assigned_names(loop)
        grown = {p.match.name for p in plans}
        abstracted: dict[str, str] = {}
        notes = ["the inits and the concatenations, over per-step values of what they read; the rest of the loop is untouched"]
        sites = sorted((site for plan in plans for site in plan.sites), key=lambda site: ctx.position(site.unit))
        for site in sites:
            for part in site.parts:
                if self._needs_abstraction(part, loop_assigned, ctx):
                    abstracted.setdefault(_code(part), f"{site.name}_piece{len(abstracted)}")
        if abstracted:
            notes.append("pieces that use objects the checker cannot build are abstracted into per-step values")

        class _Abstract(cst.CSTTransformer):
            def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode) -> cst.CSTNode:  # type: ignore[override]
                # by code, so both spellings of the piece in the None-initial form are abstracted
                name = abstracted.get(_code(original)) if isinstance(original, cst.BaseExpression) else None
                return cst.Name(name) if name else updated

        def kernel_code(node: cst.CSTNode) -> str:
            return statement_code(ctx.module, node.visit(_Abstract()))

        sizes = _GeneralizeSizes()
        inits = "".join(statement_code(ctx.module, p.init.visit(sizes)) for p in plans if p.init is not None)
        if sizes.names:
            notes.append("positive sizes in the inits are kernel inputs: the proof covers every size")
        # every site once per step, in source order (branches included): the proof is about the
        # growth, whatever decides which site a step reaches
        old_body = "".join(kernel_code(site.unit) for site in sites)
        parts_names = {plan.match.name: plan.parts_name for plan in plans}
        new_body = ""
        for site in sites:
            parts = [cst.Name(abstracted[_code(x)]) if _code(x) in abstracted else x for x in site.parts]
            new_body += self._append_code(parts_names[site.name], parts) + "\n"
        read: set[str] = set()
        pieces: set[str] = set(abstracted.values())
        bare: set[str] = set()
        index_like: set[str] = set()
        called: set[str] = set()
        used_by_parts: set[str] = set()
        for site in sites:
            read |= names_used(site.unit.visit(_Abstract()))
            used_by_parts |= names_used(site.unit.visit(_Abstract()))
            for node in name_nodes(site.unit):
                parent = ctx.parents.get(node)
                if isinstance(parent, cst.Call) and parent.func is node:
                    called.add(node.value)
            for part in site.parts:
                if isinstance(part, cst.Name):
                    bare.add(part.value)
                for sub in m.findall(part, m.Subscript()):
                    index_like |= set().union(*(names_used(e.slice) for e in sub.slice))  # type: ignore[attr-defined]
        for plan in plans:
            if plan.init is not None:
                read |= names_used(plan.init.body[0].value)  # type: ignore[attr-defined]
        init_names = set().union(*(names_used(p.init) for p in plans if p.init is not None)) if any(p.init for p in plans) else set()
        free = sorted(n for n in read if n not in BUILTIN_NAMES and n not in ctx.module_names and n != "None")
        with_init = {p.match.name for p in plans if p.init is not None}
        steps = sorted((n for n in free if (n in loop_assigned and n not in grown) or n in pieces))
        # what a concatenation takes: torch.cat tensors only; np.concatenate ndarrays (and tensors)
        numpy_growth = any((self._resolve(p.match.call.func, ctx) or "").startswith("numpy.") for p in plans)
        concatenated = (Kind.TENSOR, Kind.NDARRAY) if numpy_growth else (Kind.TENSOR,)
        appended = any(p.match.append and not p.match.options for p in plans)
        none_form = any(p.match.none_form for p in plans)
        evidence = ScopeEvidence(
            enclosing_scope(loop, ctx.parents), {ctx.facts.torch or "torch"},
            {ctx.facts.numpy} if ctx.facts.numpy else {"np", "numpy"},
            {ctx.facts.functional} if ctx.facts.functional else (), parents=ctx.parents, module=ctx.module,
        )
        inputs: list[InputSpec] = []
        for n in steps:
            if n in pieces or n in bare:
                # concatenated, so at least 1-D; np.append flattens a piece, so any rank, and a
                # Python or NumPy number too (which promotes otherwise than in np.concatenate)
                if appended:
                    inputs.append(InputSpec(n, kinds=(*concatenated, Kind.NUMPY_SCALAR, Kind.INT, Kind.FLOAT), ranks=(0, 1, 2, 3), per_step=True))
                elif none_form:
                    # a lone piece is never concatenated: it may have any rank
                    inputs.append(InputSpec(n, kinds=concatenated, ranks=(0, 1, 2, 3), per_step=True))
                else:
                    inputs.append(InputSpec(n, kinds=concatenated, ranks=(1, 2, 3), per_step=True))
            elif n in index_like:
                inputs.append(InputSpec(n, Kind.ANY, index=True, per_step=True))
            else:
                # read inside a piece (`f(x)`): what the evidence allows
                inputs.append(evidence.name(n, at=loop).spec(per_step=True))
        for n in free:
            if n in steps:
                continue
            if n in grown:
                if n not in with_init:
                    inputs.append(InputSpec(n, kinds=concatenated, ranks=(1, 2, 3)))
            elif n in called:
                inputs.append(InputSpec(n, Kind.OPAQUE))
            elif n in sizes.size_names and n not in used_by_parts:
                inputs.append(InputSpec(n, Kind.INT, count=True))
            else:
                inputs.append(evidence.name(n, at=loop).spec(count=n in init_names))
        inputs += [InputSpec(n, Kind.INT, count=True) for n in sizes.names]
        if steps:
            header = f"for {', '.join(steps)} in zip({', '.join(steps)}):\n" if len(steps) > 1 else f"for {steps[0]} in {steps[0]}:\n"
        else:
            header = "for _ in range(_torchfix_steps):\n"
            inputs.append(InputSpec("_torchfix_steps", Kind.INT, count=True))
        prefix = ""
        if _uses_rng(site.unit for site in sites):
            torch_name = ctx.facts.torch or "torch"
            prefix = f"{torch_name}.manual_seed(0)\n" if ctx.facts.torch else ""
            if ctx.facts.numpy:
                prefix += f"{ctx.facts.numpy}.random.seed(0)\n"
            notes.append("the random generators are seeded alike: the pieces draw in the same order")
        starts_code = "".join(statement_code(ctx.module, s) for s in starts)
        finals_code = "".join(statement_code(ctx.module, f) for f in finals)
        old = prefix + inits + header + textwrap.indent(old_body, "    ")
        new = prefix + inits + starts_code + header + textwrap.indent(new_body, "    ") + finals_code
        return Kernel(
            old=old,
            new=new,
            inputs=tuple(inputs),
            outputs=tuple(p.match.name for p in plans),
            modules=self._modules(ctx),
            note="; ".join(notes),
        )

    def _needs_abstraction(self, part: cst.BaseExpression, loop_assigned: set[str], ctx: _Context) -> bool:
        """A piece reads an object the checker cannot build: an attribute a tensor lacks
        (``self.model(x)``, ``batch.x``) or a string key (``batch["image"]``)."""
        for sub in m.findall(part, m.Subscript()):
            assert isinstance(sub, cst.Subscript)
            if any(
                isinstance(e.slice, cst.Index)
                and isinstance(e.slice.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString))
                for e in sub.slice
            ):
                return True
        for node in m.findall(part, m.Attribute()):
            assert isinstance(node, cst.Attribute)
            base = node.value
            if isinstance(base, cst.Name) and base.value not in ctx.module_names:
                if node.attr.value not in _TENSOR_ATTRS:
                    return True
            elif isinstance(base, cst.Attribute) and dotted(base) and dotted(base).split(".")[0] not in ctx.module_names:  # type: ignore[union-attr]
                return True
        return False
