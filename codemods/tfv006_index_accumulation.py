"""TFV006 index-accumulation: ``hist[idx[i]] += 1``, ``out[idx[i]] += src[i]``, one-hot loops."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import libcst as cst
import libcst.matchers as m
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    BUILTIN_NAMES,
    LoopShape,
    RuleContext,
    all_nodes,
    comments_in,
    enclosing_scope,
    escaping_control_flow,
    loop_proposals,
    loop_shape,
    loop_variable_used_outside,
    names_used,
    sole_small_statement,
    statement_code,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.evidence import Evidence
from torchfix.codemods.loops.facts import pinned_ranks_in
from torchfix.codemods.syntax import SyntaxIndex, simple_loop, single_statement, stores_into_subscript
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV006"

_NUMBER = m.Integer() | m.Float() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _numpy_array(found: Evidence) -> bool:
    """Whether the evidence shows a NumPy array (or a NumPy scalar, whose items cannot be set)."""
    return Kind.NDARRAY in found.kinds and set(found.kinds) <= {Kind.NDARRAY, Kind.NUMPY_SCALAR}


def _flattens(owner: cst.BaseExpression) -> bool:
    """Whether an owner ends in a flattening call: ``.view(-1)``, ``.reshape(-1)``,
    ``.flatten()``, ``.ravel()`` (then maybe ``.long()``, ``.cpu()``...)."""
    node = owner
    while isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute):
        if node.func.attr.value in ("view", "reshape", "flatten", "ravel"):
            return True
        node = node.func.value
    return False


def _receiver(code: str) -> str:
    """``code`` ready for ``.method()`` or ``[...]``: as it is where it is a name, or a chain of
    attributes, calls and subscripts on one; else in parentheses."""
    try:
        node = cst.parse_expression(code)
    except cst.ParserSyntaxError:
        return f"({code})"
    while isinstance(node, (cst.Attribute, cst.Call, cst.Subscript)):
        node = node.value if not isinstance(node, cst.Call) else node.func
    return code if isinstance(node, cst.Name) else f"({code})"


#: methods of an index array that keep its positions: ``for t in labels.view(-1)``
_OWNER_METHODS = {"view": ("-1",), "reshape": ("-1",), "flatten": (), "ravel": (), "long": (), "detach": (),
                  "cpu": (), "contiguous": ()}


def _owner_name(node: cst.BaseExpression) -> str | None:
    """``x`` for an owner the loop walks: ``x`` itself or ``x`` through :data:`_OWNER_METHODS`
    (``x.view(-1)``, ``x.flatten().long()``); None for anything else."""
    while isinstance(node, cst.Call):
        if not isinstance(node.func, cst.Attribute) or node.func.attr.value not in _OWNER_METHODS:
            return None
        wanted = _OWNER_METHODS[node.func.attr.value]
        args = node.args
        if any(a.keyword is not None or a.star for a in args) or len(args) != len(wanted):
            return None
        if any(_code(a.value) != literal for a, literal in zip(args, wanted)):
            return None
        node = node.func.value
    return node.value if isinstance(node, cst.Name) else None


def _loop_variables(shape: LoopShape, elements: Mapping[str, str]) -> list[str]:
    """The names a loop binds: its index (``for i, v in enumerate(...)``, ``range``) and its
    elements."""
    return ([shape.index] if shape.index is not None else []) + list(elements)


@dataclass
class _Match:
    """One recognised accumulation statement.

    ``positions``: per subscript element of the target, ("gather", X) for ``X[i]``, ("arange", i)
    for the loop index itself, ("element", owner) for the loop element of ``for j in owner`` or
    of ``for j, k in zip(owner, other)``, ("element_int", owner) for ``int(j)`` / ``j.long()``.
    ``value``: ("number", code), ("name", code), ("gather", Y) for ``Y[i]`` or ("element", Y)
    for the element of ``Y`` that a ``zip`` walks beside the positions.
    ``owners``: the code of each walked owner and its node (``labels.view(-1)``).
    """

    loop: cst.For
    shape: LoopShape
    target: str
    op: str  # "+=", "-=" or "="
    positions: list[tuple[str, str]]
    value: tuple[str, str]
    #: element variable -> the code of the owner it walks (empty for `for i in range(...)`)
    elements: dict[str, str]
    #: owner code -> the owner (`labels.view(-1)`)
    owners: dict[str, cst.BaseExpression]

    def array_of(self, code: str) -> str:
        """The name of the array behind a position's or value's code: ``labels`` of the owner
        ``labels.view(-1)``; a gathered name is its own."""
        owner = self.owners.get(code)
        return (_owner_name(owner) or code) if owner is not None else code

    @property
    def index_tensors(self) -> list[str]:
        """The names of the arrays that hold positions (``idx`` of ``idx[i]`` or of ``for j in
        idx.view(-1)``)."""
        return [self.array_of(name) for kind, name in self.positions if kind in ("gather", "element", "element_int")]

    @property
    def loop_variables(self) -> list[str]:
        return _loop_variables(self.shape, self.elements)


class IndexAccumulation(Rule):
    code = CODE
    tensor_code_only = True
    name = "index-accumulation"
    summary = "Scatter into a tensor one index at a time in a Python loop: one indexing kernel per element."
    docs = """
    ## What it does
    Finds loops over indices whose whole body is one write into a tensor at a data-dependent
    position:

    - counting: `hist[idx[i]] += 1` (also `+= 1.0`, `+= w` with a loop-invariant `w`, `-= 1`),
      confusion matrices `cm[t[i], p[i]] += 1`;
    - weighted scatter: `out[idx[i]] += src[i]`;
    - one-hot and mask filling: `m[i, labels[i]] = 1`, `mask[idx[i]] = True`;

    for `for i in range(len(idx))` (also `idx.shape[0]`, `idx.size(0)`, `range(n)`,
    `range(0, n)`), `for j in idx` (also `idx.view(-1)`, `.reshape(-1)`, `.flatten()`,
    `.ravel()`, `.long()`), `for i, c in enumerate(labels)` and `for t, p in zip(targets, preds)`
    -- the evaluation scripts'
    confusion matrix, `cm[t.long(), p.long()] += 1` or `cm[int(t), int(p)] += 1` with a position
    converted to an integer, `out[j] += w` with the weight walked beside it. It rewrites them into
    one `torch.bincount`, `index_add_`, `index_put_(..., accumulate=True)` or advanced-index
    assignment; into a NumPy array (the code shows it is one: `np.zeros(...)`), into one
    `np.add.at` / `np.subtract.at`, which is unbuffered: a repeated position counts every time,
    and each addition is cast into the array's dtype as the loop's `+=` casts it.

    ## Why is this bad?
    Every step indexes a tensor from Python: a dispatcher round trip (and on a GPU a kernel
    launch and a sync to read the index) per element. The vectorized forms do all steps in one
    kernel.

    ## Example
    ```python
    for i in range(len(labels)):
        hist[labels[i]] += 1
    for i in range(len(idx)):
        out[idx[i]] += src[i]
    for i in range(n):
        onehot[i, labels[i]] = 1
    ```

    ## Use instead
    ```python
    hist.index_put_((labels.long(),), hist.new_ones(()), accumulate=True)
    out.index_add_(0, idx.long(), src.to(out.dtype))
    onehot[torch.arange(max(n, 0)), labels[:max(n, 0)].long()] = 1
    ```
    Positions are cast to int64 (`.long()`, a no-op on int64): each 0-d element of an int8 or
    int16 index tensor indexes, a whole such tensor does not.
    A `zip` stops at its shortest array; where the code does not show the arrays equally long,
    each is cut to the others' length: `cm.index_put_((t[:len(p)], p[:len(t)]), ...)`.
    The rewrite is faithful, not just close. `accumulate=True` counts repeated indices as the
    loop does -- `out[idx] += src` does not: it adds each repeated position once. Negative
    indices count from the end as in the loop (`torch.bincount` is proposed first and kept only
    where the checker finds no negative index the loop accepts). The tensor is updated in place
    and keeps its dtype (`.to(out.dtype)`: the loop's `+=` adds a weight of a wider dtype in that
    dtype and rounds the sum, the rewrite rounds the weight first -- the same sum within each
    addend's rounding, which is how the checker judges examples with wider weights). A loop over `range(n)`
    reads only the first `n` entries, and none when `n` is negative: hence `[:max(n, 0)]`.

    The rewrites hold where `idx[i]` is one position per step. The checks draw each index tensor
    at the rank the function pins (`labels = labels.view(-1)`, `pred = logits.argmax(1)` of a
    pinned `logits`), else at every rank: where `idx[i]` is a row of positions, the loop writes
    each of them once per step -- a repeated one too -- and `accumulate=True` would count it
    twice, so without a pin the rewrite is rejected with that counterexample.

    ## When it stays silent
    - The loop body is more than the one write, or can leave early (`break`, `continue`,
      `return`, `raise`).
    - The written tensor is read elsewhere in the loop (`x[i] = max(x[i], x[i - 1])`, greedy
      matching, union-find): each step depends on the previous ones.
    - The position is not `idx[i]`, the loop index or the loop element (`hist[idx[i] // 2]`).
    - Nothing shows that the written tensor and the index tensors are tensors (a Python list
      `hist` or `idx` has no `index_put_`): annotate them (`idx: torch.Tensor`).
    - (rejected) Nothing pins an index tensor to one dimension.
    - `= src[i]` with a position that may repeat: which write wins is not defined for the
      vectorized assignment.
    - The loop variable is used after the loop.
    """
    examples = (
        Example(
            """
            import torch

            def histogram(labels: torch.Tensor, k: int) -> torch.Tensor:
                labels = labels.view(-1)
                hist = torch.zeros(k)
                for i in range(len(labels)):
                    hist[labels[i]] += 1
                return hist
            """,
            """
            import torch

            def histogram(labels: torch.Tensor, k: int) -> torch.Tensor:
                labels = labels.view(-1)
                hist = torch.zeros(k)
                hist.index_put_((labels.long(),), hist.new_ones(()), accumulate=True)
                return hist
            """,
            id="histogram",
        ),
        Example(
            """
            import torch

            def running_max(x: torch.Tensor) -> torch.Tensor:
                for i in range(1, len(x)):
                    x[i] = max(x[i], x[i - 1])
                return x
            """,
            None,
            id="recurrence",
        ),
        Example(
            """
            def histogram(labels, k):
                hist = [0] * k
                for i in range(len(labels)):
                    hist[labels[i]] += 1
                return hist
            """,
            None,
            id="python-list",
        ),
    )

    required_bytes = ((b"for ",), (b"[",))

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """`for v in X` / `for i in range(...)` / `for v in X.view(-1)` / `for a, b in zip(...)`
        whose one statement is `name[...] += / -= / = ...`."""
        for loop in index.fors:
            walks = simple_loop(loop) or (
                isinstance(loop, ast.For) and not loop.orelse and isinstance(loop.iter, ast.Call)
                and isinstance(loop.target, (ast.Name, ast.Tuple, ast.List))
            )
            if walks and stores_into_subscript(single_statement(loop.body), (ast.Add, ast.Sub)):
                return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        ranks = pinned_ranks_in(wrapper)
        return loop_proposals(wrapper, self._match, lambda mt, ctx: self._propose(mt, ctx, ranks))

    # ------------------------------------------------------------------ matching

    def _match(self, loop: cst.For) -> _Match | None:
        walked = self._walked(loop)
        small = sole_small_statement(loop.body)
        if walked is None or small is None:
            return None
        shape, walked_owners = walked
        elements = {variable: _code(owner) for variable, owner in walked_owners.items()}
        owners = {_code(owner): owner for owner in walked_owners.values()}
        if isinstance(small, cst.AugAssign):
            if isinstance(small.operator, cst.AddAssign):
                op = "+="
            elif isinstance(small.operator, cst.SubtractAssign):
                op = "-="
            else:
                return None
            target_node, value_node = small.target, small.value
        elif isinstance(small, cst.Assign) and len(small.targets) == 1:
            op = "="
            target_node, value_node = small.targets[0].target, small.value
        else:
            return None
        if not isinstance(target_node, cst.Subscript) or not isinstance(target_node.value, cst.Name):
            return None
        target = target_node.value.value
        loop_vars = _loop_variables(shape, elements)
        if target in loop_vars or target in {_owner_name(owner) for owner in owners.values()}:
            return None
        positions: list[tuple[str, str]] = []
        for element in target_node.slice:
            pos = self._position_of(element, shape, elements, target)
            if pos is None:
                return None
            positions.append(pos)
        if not any(kind in ("gather", "element", "element_int") for kind, _ in positions):
            return None  # `out[i] = ...` is a per-sample loop (TFV001), not a scatter
        value = self._value_of(value_node, shape, elements, target)
        if value is None:
            return None
        if op == "-=" and value[0] != "number":
            return None
        if op == "=" and value[0] in ("gather", "element") and not any(kind == "arange" for kind, _ in positions):
            return None  # repeated positions: which write wins is undefined when vectorized
        used = [name for kind, name in (*positions, value) if kind in ("element", "element_int")]
        if len(set(used)) != len(used) or len(used) != len(elements):
            return None  # every element of a zip used once, as a position or as the value
        if escaping_control_flow(loop.body):
            return None
        if shape.extent is not None and not isinstance(shape.extent, (cst.Name, cst.Integer)):
            return None
        if shape.extent is not None and isinstance(shape.extent, cst.Name) and shape.extent.value in (target, *loop_vars):
            return None
        return _Match(loop, shape, target, op, positions, value, elements, owners)

    def _walked(self, loop: cst.For) -> tuple[LoopShape, dict[str, cst.BaseExpression]] | None:
        """The loop's shape, and each element variable with the owner it walks:
        ``for i in range(...)`` (no element), ``for j in OWNER`` and ``for j, k in zip(OWNER,
        OWNER)`` with each owner a name or a name through :data:`_OWNER_METHODS`."""
        if loop.asynchronous is not None or loop.orelse is not None:
            return None
        shape = loop_shape(loop)
        if shape is not None and shape.index is not None:
            return shape, {}
        target, it = loop.target, loop.iter
        if isinstance(target, cst.Name) and _owner_name(it) is not None:
            return LoopShape(None, target.value, None, None), {target.value: it}
        if (
            isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) == 2
            and m.matches(it, m.Call(func=m.Name("enumerate"), args=[m.Arg(keyword=None, star="")]))
        ):
            # `for i, v in enumerate(OWNER)`: `i` walks positions 0..len(OWNER)-1, `v` the owner
            pair = [e.value.value for e in target.elements if type(e) is cst.Element and isinstance(e.value, cst.Name)]
            owner = it.args[0].value  # type: ignore[attr-defined]
            if len(pair) != 2 or pair[0] == pair[1] or _owner_name(owner) is None:
                return None
            return LoopShape(pair[0], None, None, None), {pair[1]: owner}
        if not (
            isinstance(target, (cst.Tuple, cst.List)) and isinstance(it, cst.Call)
            and m.matches(it.func, m.Name("zip")) and 2 <= len(it.args) == len(target.elements)
        ):
            return None
        names = [e.value.value for e in target.elements if type(e) is cst.Element and isinstance(e.value, cst.Name)]
        if len(names) != len(it.args) or len(set(names)) != len(names):
            return None
        if any(a.keyword is not None or a.star or _owner_name(a.value) is None for a in it.args):
            return None
        if len({_code(a.value) for a in it.args}) != len(it.args):
            return None
        return LoopShape(None, None, None, None), {name: a.value for name, a in zip(names, it.args)}

    def _position_of(
        self, element: cst.SubscriptElement, shape: LoopShape, elements: dict[str, str], target: str
    ) -> tuple[str, str] | None:
        if not isinstance(element.slice, cst.Index) or element.slice.star is not None:
            return None
        expr = element.slice.value
        if isinstance(expr, cst.Name) and expr.value in elements:
            return ("element", elements[expr.value])
        if shape.index is not None:
            if isinstance(expr, cst.Name) and expr.value == shape.index:
                return ("arange", shape.index)
            name = self._gathered(expr, shape.index)
            if name is not None and name != target:
                return ("gather", name)
            if not elements:
                return None
        # `int(j)`, `j.long()`: the position as an integer, whatever the element's dtype
        if m.matches(expr, m.Call(func=m.Name("int"), args=[m.Arg(value=m.Name(), keyword=None, star="")])):
            inner = expr.args[0].value  # type: ignore[attr-defined]
        elif m.matches(expr, m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("long")), args=[])):
            inner = expr.func.value  # type: ignore[attr-defined]
        else:
            return None
        if inner.value in elements:
            return ("element_int", elements[inner.value])
        return None

    def _gathered(self, expr: cst.BaseExpression, index: str) -> str | None:
        """``X`` for ``X[i]`` (X a plain name other than the index)."""
        if (
            isinstance(expr, cst.Subscript)
            and isinstance(expr.value, cst.Name)
            and expr.value.value != index
            and len(expr.slice) == 1
            and isinstance(expr.slice[0].slice, cst.Index)
            and expr.slice[0].slice.star is None
            and m.matches(expr.slice[0].slice.value, m.Name(index))
        ):
            return expr.value.value
        return None

    def _value_of(
        self, expr: cst.BaseExpression, shape: LoopShape, elements: dict[str, str], target: str
    ) -> tuple[str, str] | None:
        loop_vars = _loop_variables(shape, elements)
        if m.matches(expr, _NUMBER):
            return ("number", _code(expr))
        if isinstance(expr, cst.Name):
            if expr.value in elements and (len(elements) > 1 or shape.index is not None):
                # `for t, p, w in zip(...)` / `for i, w in enumerate(ws)`: += w
                return ("element", elements[expr.value])
            if expr.value in (*loop_vars, target) or expr.value in ("True", "False", "None"):
                if expr.value in ("True", "False"):
                    return ("number", expr.value)
                return None
            return ("name", expr.value)
        if shape.index is not None:
            name = self._gathered(expr, shape.index)
            if name is not None and name != target:
                return ("gather", name)
        return None

    # ------------------------------------------------------------------ proposing

    def _skip(self, mt: _Match, ctx: RuleContext, message: str, reason: str) -> Proposal:
        return ctx.proposal(CODE, mt.loop, message, skip_reason=reason)

    def _propose(self, mt: _Match, ctx: RuleContext, ranks: Callable[[cst.For], Mapping[str, int]]) -> Proposal | None:
        loop = mt.loop
        kind = "one-hot assignment" if mt.op == "=" else (
            "weighted scatter" if mt.value[0] in ("gather", "element") else "counting loop")
        message = f"`{mt.target}` is written one index at a time ({kind}): one scatter does it"
        scope = enclosing_scope(loop, ctx.parents)
        evidence = ctx.evidence(scope)
        target = evidence.name(mt.target, at=loop)
        # a NumPy array is scattered into with `np.add.at`; anything else needs a tensor (a NumPy
        # scalar among the kinds is fine: the loop raises on one, as its items cannot be set)
        numpy = ctx.facts.numpy if _numpy_array(target) and ctx.facts.numpy else None
        needs = "one `np.add.at`" if numpy else "one scatter over it"
        valued = [mt.array_of(mt.value[1])] if mt.value[0] in ("gather", "element") else []
        for name in dict.fromkeys([mt.target] + mt.index_tensors + valued):
            found = evidence.name(name, at=loop)
            if not (_numpy_array(found) if numpy else found.tensor):
                if numpy:
                    return self._skip(mt, ctx, message, f"nothing shows that `{name}` is a NumPy array "
                                      f"({found.describe()}): {needs} over it needs one")
                return self._skip(mt, ctx, message, found.missing_tensor(needs))
        if numpy and mt.op == "=" and mt.value[0] != "number":
            return None
        for loop_var in mt.loop_variables:
            if loop_variable_used_outside(loop_var, loop, scope, ctx.parents):
                return self._skip(mt, ctx, message, f"the loop variable `{loop_var}` is used outside the loop")
        if mt.shape.extent is not None:
            extents = ["plain", "max0"]
        elif len(mt.elements) > 1:
            # `zip` stops at the shortest: the whole arrays where the code shows them as long,
            # else each cut to the others' length
            extents = ["full", "zip"]
        else:
            extents = ["full"]
        candidates: list[Candidate] = []
        pinned = ranks(loop)
        for form in (self._numpy_forms(mt) if numpy else self._forms(mt)):
            for extent in extents:
                candidates.append(self._candidate(mt, form, extent, ctx, pinned, numpy))
        return ctx.proposal(CODE, loop, message, tuple(candidates))

    def _numpy_forms(self, mt: _Match) -> list[str]:
        return ["assign"] if mt.op == "=" else ["add_at"]

    def _forms(self, mt: _Match) -> list[str]:
        if mt.op == "=":
            return ["assign"]
        forms = []
        single = len(mt.positions) == 1 and mt.positions[0][0] != "arange"
        if mt.value[0] in ("gather", "element"):
            if single and mt.op == "+=":
                forms.append("index_add")
            forms.append("index_put")
            return forms
        if single and mt.op == "+=" and mt.value == ("number", "1"):
            forms.append("bincount")
        forms.append("index_put")
        return forms

    def _candidate(
        self, mt: _Match, form: str, extent: str, ctx: RuleContext, ranks: Mapping[str, int], numpy: str | None
    ) -> Candidate:
        torch = ctx.torch
        shape = mt.shape
        target = mt.target
        iter_args = mt.loop.iter.args if isinstance(mt.loop.iter, cst.Call) else ()  # type: ignore[attr-defined]
        if shape.extent is not None:
            bound: str | None = _code(shape.extent)
            if extent == "max0":
                bound = f"max({bound}, 0)"
        elif shape.index is not None and mt.elements:
            # `for i, v in enumerate(OWNER)`: `i` walks the owner's positions
            (owner,) = mt.elements.values()
            bound = f"len({owner})"
        elif shape.index is not None:
            bound = _code(iter_args[-1].value)
        else:
            bound = None

        def whole(name: str) -> str:
            sliced = bound is not None and (shape.extent is not None or name != shape.owner)
            return f"{name}[:{bound}]" if sliced else name

        def walked(owner: str) -> str:
            """The whole owner a zip walks, cut to the others' length where ``extent`` says."""
            if extent != "zip":
                return owner
            others = [f"len({o})" for o in dict.fromkeys(mt.elements.values()) if o != owner]
            cut = others[0] if len(others) == 1 else f"min({', '.join(others)})"
            return f"{_receiver(owner)}[:{cut}]"

        def as_int(owner: str) -> str:
            code = _receiver(walked(owner))
            return f"{code}.astype({numpy}.int64)" if numpy else f"{code}.long()"

        def position(code: str) -> str:
            """An index array as torch takes it whole: int64 (a whole int8 or int16 index tensor
            raises where each of its 0-d elements indexes); NumPy takes any integer dtype."""
            if numpy or code.endswith(".long()"):
                return code
            return f"{_receiver(code)}.long()"

        indices = []
        for kind, name in mt.positions:
            if kind == "gather":
                indices.append(position(whole(name)))
            elif kind == "element":
                indices.append(position(walked(name)))
            elif kind == "element_int":
                indices.append(as_int(name))
            else:
                indices.append(f"{numpy or torch}.arange({bound})")
        kind, text = mt.value
        source = whole(text) if kind == "gather" else walked(text) if kind == "element" else text
        source_code = _receiver(source)
        tuple_code = f"({indices[0]},)" if len(indices) == 1 else f"({', '.join(indices)})"
        if form == "assign":
            new = f"{target}[{', '.join(indices)}] = {source}"
            description = "advanced-index assignment"
        elif form == "add_at":
            number = text if kind == "number" else source
            ufunc = "subtract" if mt.op == "-=" else "add"
            new = f"{numpy}.{ufunc}.at({target}, {indices[0] if len(indices) == 1 else tuple_code}, {number})"
            description = f"np.{ufunc}.at (unbuffered: a repeated position counts each time)"
        elif form == "bincount":
            new = f"{target} += {torch}.bincount({indices[0]}, minlength={target}.shape[0])"
            description = "torch.bincount (non-negative indices, 1-D counts)"
        elif form == "index_add":
            new = f"{target}.index_add_(0, {indices[0]}, {source_code}.to({target}.dtype))"
            description = "index_add_"
        else:
            if kind in ("gather", "element"):
                values = f"{source_code}.to({target}.dtype)"
            elif kind == "name" and ctx.evidence(enclosing_scope(mt.loop, ctx.parents)).name(text, at=mt.loop).kinds == (Kind.INT,):
                # a Python int: `hist[j] += w` wraps it into an integer target's dtype (2**33 adds
                # 0 to int32), where `as_tensor(w, dtype=torch.int32)` raises on the overflow
                values = f"{torch}.as_tensor({text}, device={target}.device).to({target}.dtype)"
            elif kind == "name":
                values = f"{torch}.as_tensor({text}, dtype={target}.dtype, device={target}.device)"
            else:
                number = text
                if mt.op == "-=":
                    number = number[1:].lstrip() if number.startswith("-") else f"-{number}"
                values = f"{target}.new_ones(())" if number == "1" else f"{target}.new_full((), {number})"
            new = f"{target}.index_put_({tuple_code}, {values}, accumulate=True)"
            description = "index_put_(..., accumulate=True)"
        if extent == "max0":
            description += ", extent clamped at 0"
        if extent == "zip":
            description += ", each array cut to the shortest as zip does"
        # the array (or name) whose values the new code casts to the target's dtype
        weights = mt.array_of(text) if kind in ("gather", "element") else text if kind == "name" else None
        new_stmt = cst.parse_statement(new + "\n", config=ctx.module.config_for_parsing)
        leading = list(mt.loop.leading_lines) + comments_in(mt.loop.with_changes(leading_lines=()))
        new_stmt = new_stmt.with_changes(leading_lines=leading)
        kernel = Kernel(
            old=statement_code(ctx.module, mt.loop),
            new=statement_code(ctx.module, new_stmt),
            inputs=self._inputs(mt, ctx, ranks, numpy),
            outputs=(),
            modules=ctx.kernel_modules(),
            # the loop adds a float64 weight into a float32 bin in double and rounds the sum, where
            # `.to(out.dtype)` rounds the weight first: the same sum within the rounding of each
            # addend, judged so where the example's weights have another float dtype (the
            # cancellation sweep of `equivalence.edges` tells the two apart otherwise:
            # 1.00000002e20 - 1e20 is 2e12 in double, 0 in float32)
            rounds_addends=(target, weights) if weights is not None and not numpy and form in ("index_add", "index_put") else None,
            note=(
                f"the loop, verbatim; `{target}` is compared after the run (it is written in place); "
                "index arrays of every rank the code shows or allows (a row of positions per step "
                "writes each of them once)"
            ),
        )
        imports = ctx.imports if f"{torch}." in new and not numpy else ()
        return Candidate(description, (Edit(mt.loop, new_stmt),), kernel, imports)

    def _inputs(
        self, mt: _Match, ctx: RuleContext, ranks: Mapping[str, int], numpy: str | None = None
    ) -> tuple[InputSpec, ...]:
        """What the kernel reads. No rank is assumed: a name the function's code pins (``idx =
        labels.view(-1)``) is drawn with that rank, any other with every rank. The rewrites are
        faithful only where each step writes one position (or, for ``+= src[i]``, one row of
        ``out``): with ``idx[i]`` a row of positions the loop writes each of them once -- a
        repeated one too -- where ``accumulate=True`` counts it twice. The checker finds that
        on the ranks the loop accepts."""
        evidence = ctx.evidence(enclosing_scope(mt.loop, ctx.parents))

        def kinds(name: str) -> tuple[Kind, ...]:
            return evidence.name(name, at=mt.loop).kinds if numpy else (Kind.TENSOR,)

        # names the loop reads only through an owner that flattens them (`t.view(-1)`): a 0-d
        # one walks as a 1-D one of one element does, so 0-d adds no behaviour -- and left out,
        # the timing does not take a loop of one step for the usual case
        flattened = {
            base for base in (_owner_name(owner) for owner in mt.owners.values() if _flattens(owner))
            if base and sum(isinstance(n, cst.Name) and n.value == base for n in all_nodes(mt.loop)) == 1
        }

        def pinned(name: str) -> tuple[int, ...]:
            if name in ranks:
                return (ranks[name],)
            return (1, 2, 3) if name in flattened else InputSpec.ranks

        loop_vars = set(mt.loop_variables)
        used = names_used(mt.loop.iter) | names_used(mt.loop.body)
        free = sorted(n for n in used if n not in loop_vars and n not in BUILTIN_NAMES and n not in ctx.module_names)
        index_names = set(mt.index_tensors)
        valued = mt.array_of(mt.value[1]) if mt.value[0] in ("gather", "element") else None
        extent = mt.shape.extent.value if isinstance(mt.shape.extent, cst.Name) else None
        specs = []
        for name in free:
            if name == mt.target:
                specs.append(InputSpec(name, kinds=kinds(name), ranks=pinned(name)))
            elif name in index_names:
                specs.append(InputSpec(name, kinds=kinds(name), ranks=pinned(name), index=True))
            elif name == valued:
                specs.append(InputSpec(name, kinds=kinds(name), ranks=pinned(name)))
            elif name == extent:
                specs.append(InputSpec(name, Kind.INT, count=True))
            elif name == mt.shape.owner:
                # only measured (`len(y)`, `y.size(0)`): what the evidence allows
                specs.append(evidence.name(name, at=mt.loop).spec(ranks=pinned(name) if name in ranks else (1, 2, 3)))
            else:
                # a weight, a scale: what the evidence allows (an `int`/`float`/`bool` annotation among it)
                specs.append(evidence.name(name, at=mt.loop).spec())
        return tuple(specs)
