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
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.facts import pinned_ranks
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.syntax import SyntaxIndex, simple_loop, single_statement, stores_into_subscript
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV006"

_NUMBER = m.Integer() | m.Float() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer() | m.Float())


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


@dataclass
class _Match:
    """One recognised accumulation statement.

    ``positions``: per subscript element of the target, ("gather", X) for ``X[i]``, ("arange", i)
    for the loop index itself, ("element", owner) for the loop element of ``for j in owner``.
    ``value``: ("number", code), ("name", code) or ("gather", Y) for ``Y[i]``.
    """

    loop: cst.For
    shape: LoopShape
    target: str
    op: str  # "+=", "-=" or "="
    positions: list[tuple[str, str]]
    value: tuple[str, str]

    @property
    def index_tensors(self) -> list[str]:
        return [name for kind, name in self.positions if kind in ("gather", "element")]


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
    `range(0, n)`) and `for j in idx`. It rewrites them into one `torch.bincount`,
    `index_add_`, `index_put_(..., accumulate=True)` or advanced-index assignment.

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
    hist.index_put_((labels,), hist.new_ones(()), accumulate=True)
    out.index_add_(0, idx, src.to(out.dtype))
    onehot[torch.arange(max(n, 0)), labels[:max(n, 0)]] = 1
    ```
    The rewrite is faithful, not just close. `accumulate=True` counts repeated indices as the
    loop does -- `out[idx] += src` does not: it adds each repeated position once. Negative
    indices count from the end as in the loop (`torch.bincount` is proposed first and kept only
    where the checker finds no negative index the loop accepts). The tensor is updated in place
    and keeps its dtype (`.to(out.dtype)` is the cast the loop's `+=` does). A loop over `range(n)`
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
                hist.index_put_((labels,), hist.new_ones(()), accumulate=True)
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
        """`for v in X` / `for i in range(...)` whose one statement is `name[...] += / -= / = ...`."""
        for loop in index.fors:
            if not simple_loop(loop):
                continue
            if stores_into_subscript(single_statement(loop.body), (ast.Add, ast.Sub)):
                return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        def ranks(loop: cst.For) -> Mapping[str, int]:
            # (the module's loop model, built where a loop matched: once per module, and shared)
            return pinned_ranks(loop, ModuleContext.of(wrapper))

        return loop_proposals(wrapper, self._match, lambda mt, ctx: self._propose(mt, ctx, ranks))

    # ------------------------------------------------------------------ matching

    def _match(self, loop: cst.For) -> _Match | None:
        shape = loop_shape(loop)
        small = sole_small_statement(loop.body)
        if shape is None or small is None:
            return None
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
        loop_var = shape.index or shape.element
        if target == loop_var or target == shape.owner and shape.element is not None:
            return None
        positions: list[tuple[str, str]] = []
        for element in target_node.slice:
            pos = self._position_of(element, shape, target)
            if pos is None:
                return None
            positions.append(pos)
        if not any(kind in ("gather", "element") for kind, _ in positions):
            return None  # `out[i] = ...` is a per-sample loop (TFV001), not a scatter
        value = self._value_of(value_node, shape, target)
        if value is None:
            return None
        if op == "-=" and value[0] != "number":
            return None
        if op == "=" and value[0] == "gather" and not any(kind == "arange" for kind, _ in positions):
            return None  # repeated positions: which write wins is undefined when vectorized
        if escaping_control_flow(loop.body):
            return None
        if shape.extent is not None and not isinstance(shape.extent, (cst.Name, cst.Integer)):
            return None
        if shape.extent is not None and isinstance(shape.extent, cst.Name) and shape.extent.value in (target, loop_var):
            return None
        return _Match(loop, shape, target, op, positions, value)

    def _position_of(self, element: cst.SubscriptElement, shape: LoopShape, target: str) -> tuple[str, str] | None:
        if not isinstance(element.slice, cst.Index) or element.slice.star is not None:
            return None
        expr = element.slice.value
        if shape.index is not None:
            if isinstance(expr, cst.Name) and expr.value == shape.index:
                return ("arange", shape.index)
            name = self._gathered(expr, shape.index)
            if name is not None and name != target:
                return ("gather", name)
            return None
        if isinstance(expr, cst.Name) and expr.value == shape.element and shape.owner != target:
            return ("element", shape.owner or "")
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

    def _value_of(self, expr: cst.BaseExpression, shape: LoopShape, target: str) -> tuple[str, str] | None:
        loop_var = shape.index or shape.element
        if m.matches(expr, _NUMBER):
            return ("number", _code(expr))
        if isinstance(expr, cst.Name):
            if expr.value in (loop_var, target) or expr.value in ("True", "False", "None"):
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
            "weighted scatter" if mt.value[0] == "gather" else "counting loop")
        message = f"`{mt.target}` is written one index at a time ({kind}): one scatter does it"
        scope = enclosing_scope(loop, ctx.parents)
        evidence = ctx.evidence(scope)
        vectorized = [mt.target] + mt.index_tensors + ([mt.value[1]] if mt.value[0] == "gather" else [])
        for name in dict.fromkeys(vectorized):
            found = evidence.name(name, at=loop)
            if not found.tensor:
                return self._skip(mt, ctx, message, found.missing_tensor("one scatter over it"))
        loop_var = mt.shape.index or mt.shape.element or ""
        if loop_variable_used_outside(loop_var, loop, scope, ctx.parents):
            return self._skip(mt, ctx, message, f"the loop variable `{loop_var}` is used outside the loop")
        extents = ["full"] if mt.shape.extent is None else ["plain", "max0"]
        candidates: list[Candidate] = []
        for form in self._forms(mt):
            for extent in extents:
                candidates.append(self._candidate(mt, form, extent, ctx, ranks(loop)))
        return ctx.proposal(CODE, loop, message, tuple(candidates))

    def _forms(self, mt: _Match) -> list[str]:
        if mt.op == "=":
            return ["assign"]
        forms = []
        single = len(mt.positions) == 1 and mt.positions[0][0] != "arange"
        if mt.value[0] == "gather":
            if single and mt.op == "+=":
                forms.append("index_add")
            forms.append("index_put")
            return forms
        if single and mt.op == "+=" and mt.value == ("number", "1"):
            forms.append("bincount")
        forms.append("index_put")
        return forms

    def _candidate(self, mt: _Match, form: str, extent: str, ctx: RuleContext, ranks: Mapping[str, int]) -> Candidate:
        torch = ctx.torch
        shape = mt.shape
        target = mt.target
        iter_args = mt.loop.iter.args if isinstance(mt.loop.iter, cst.Call) else ()  # type: ignore[attr-defined]
        if shape.extent is not None:
            bound: str | None = _code(shape.extent)
            if extent == "max0":
                bound = f"max({bound}, 0)"
        elif shape.index is not None:
            bound = _code(iter_args[-1].value)
        else:
            bound = None

        def whole(name: str) -> str:
            sliced = bound is not None and (shape.extent is not None or name != shape.owner)
            return f"{name}[:{bound}]" if sliced else name

        indices = []
        for kind, name in mt.positions:
            if kind == "gather":
                indices.append(whole(name))
            elif kind == "element":
                indices.append(name)
            else:
                indices.append(f"{torch}.arange({bound})")
        kind, text = mt.value
        if form == "assign":
            value = whole(text) if kind == "gather" else text
            new = f"{target}[{', '.join(indices)}] = {value}"
            description = "advanced-index assignment"
        elif form == "bincount":
            new = f"{target} += {torch}.bincount({indices[0]}, minlength={target}.shape[0])"
            description = "torch.bincount (non-negative indices, 1-D counts)"
        elif form == "index_add":
            new = f"{target}.index_add_(0, {indices[0]}, {whole(text)}.to({target}.dtype))"
            description = "index_add_"
        else:
            if kind == "gather":
                values = f"{whole(text)}.to({target}.dtype)"
            elif kind == "name":
                values = f"{torch}.as_tensor({text}, dtype={target}.dtype, device={target}.device)"
            else:
                number = text
                if mt.op == "-=":
                    number = number[1:].lstrip() if number.startswith("-") else f"-{number}"
                values = f"{target}.new_ones(())" if number == "1" else f"{target}.new_full((), {number})"
            tuple_code = f"({indices[0]},)" if len(indices) == 1 else f"({', '.join(indices)})"
            new = f"{target}.index_put_({tuple_code}, {values}, accumulate=True)"
            description = "index_put_(..., accumulate=True)"
        if extent == "max0":
            description += ", extent clamped at 0"
        new_stmt = cst.parse_statement(new + "\n", config=ctx.module.config_for_parsing)
        leading = list(mt.loop.leading_lines) + comments_in(mt.loop.with_changes(leading_lines=()))
        new_stmt = new_stmt.with_changes(leading_lines=leading)
        kernel = Kernel(
            old=statement_code(ctx.module, mt.loop),
            new=statement_code(ctx.module, new_stmt),
            inputs=self._inputs(mt, ctx, ranks),
            outputs=(),
            modules=ctx.kernel_modules(),
            note=(
                f"the loop, verbatim; `{target}` is compared after the run (it is written in place); "
                "index tensors of every rank the code shows or allows (a row of positions per step "
                "writes each of them once)"
            ),
        )
        imports = ctx.imports if f"{torch}." in new else ()
        return Candidate(description, (Edit(mt.loop, new_stmt),), kernel, imports)

    def _inputs(self, mt: _Match, ctx: RuleContext, ranks: Mapping[str, int]) -> tuple[InputSpec, ...]:
        """What the kernel reads. No rank is assumed: a name the function's code pins (``idx =
        labels.view(-1)``) is drawn with that rank, any other with every rank. The rewrites are
        faithful only where each step writes one position (or, for ``+= src[i]``, one row of
        ``out``): with ``idx[i]`` a row of positions the loop writes each of them once -- a
        repeated one too -- where ``accumulate=True`` counts it twice. The checker finds that
        on the ranks the loop accepts."""

        def pinned(name: str) -> tuple[int, ...]:
            return (ranks[name],) if name in ranks else InputSpec.ranks

        loop_var = mt.shape.index or mt.shape.element
        used = names_used(mt.loop.iter) | names_used(mt.loop.body)
        free = sorted(n for n in used if n != loop_var and n not in BUILTIN_NAMES and n not in ctx.module_names)
        index_names = set(mt.index_tensors)
        gathered = mt.value[1] if mt.value[0] == "gather" else None
        extent = mt.shape.extent.value if isinstance(mt.shape.extent, cst.Name) else None
        specs = []
        for name in free:
            if name == mt.target:
                specs.append(InputSpec(name, Kind.TENSOR, ranks=pinned(name)))
            elif name in index_names:
                specs.append(InputSpec(name, Kind.TENSOR, ranks=pinned(name), index=True))
            elif name == gathered:
                specs.append(InputSpec(name, Kind.TENSOR, ranks=pinned(name)))
            elif name == extent:
                specs.append(InputSpec(name, Kind.INT, count=True))
            elif name == mt.shape.owner:
                # only measured (`len(y)`, `y.size(0)`): what the evidence allows
                found = ctx.evidence(enclosing_scope(mt.loop, ctx.parents)).name(name, at=mt.loop)
                specs.append(found.spec(ranks=pinned(name) if name in ranks else (1, 2, 3)))
            else:
                # a weight, a scale: what the evidence allows (an `int`/`float`/`bool` annotation among it)
                specs.append(ctx.evidence(enclosing_scope(mt.loop, ctx.parents)).name(name, at=mt.loop).spec())
        return tuple(specs)
