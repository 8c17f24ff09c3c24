"""TFV004 item-accumulator: ``.item()`` (or ``float(t)``, ``int(t)``) accumulated in a loop."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    BUILTIN_NAMES,
    ELEMENTWISE_FUNCTIONAL,
    ELEMENTWISE_METHODS,
    LoopShape,
    RuleContext,
    WholeTensorSubstitution,
    assigned_names,
    comments_in,
    conversion_operand,
    conversions_in,
    dotted,
    elementwise_only,
    enclosing_scope,
    escaping_control_flow,
    find_init,
    infer_dtype_kind,
    is_conversion,
    is_zero,
    literal_kind,
    loop_indexed_tensors,
    loop_shape,
    module_nodes,
    name_nodes,
    names_used,
    sole_small_statement,
    statement_code,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.loops.facts import pinned_ranks_in
from torchfix.codemods.syntax import SyntaxIndex, has_conversion
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV004"



def _conversion_kind(conversion: cst.Call) -> str:
    """What Python type the conversion yields: "float", "int" or "item" (the tensor's own)."""
    if isinstance(conversion.func, cst.Name):
        return conversion.func.value
    return "item"


def _alone(value: cst.BaseExpression, conversion: cst.Call) -> bool:
    """Whether ``value`` is ``conversion`` itself, maybe negated: no arithmetic meets it."""
    while isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        value = value.expression
    return value is conversion


def _as_tensor_takes(kinds: Sequence[Kind]) -> bool:
    """Whether every kind a ``.item()`` operand may hold is one ``torch.as_tensor`` turns into a
    tensor of the same value and dtype, a tensor among them."""
    return Kind.TENSOR in kinds and set(kinds) <= {Kind.TENSOR, Kind.NDARRAY, Kind.NUMPY_SCALAR}


def _parse_expr(code: str) -> cst.BaseExpression:
    return cst.parse_expression(code)


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _elementwise_call(node: cst.Call) -> bool:
    """A call a per-element value may make: a conversion, ``abs``, an element-wise tensor method or
    an element-wise ``torch.nn.functional`` activation."""
    if is_conversion(node):
        return True
    func = node.func
    if isinstance(func, cst.Name) and func.value == "abs":
        return True
    if isinstance(func, cst.Attribute):
        name = func.attr.value
        root = dotted(func.value) or ""
        if name in ELEMENTWISE_METHODS:
            return True
        if (root.endswith("functional") or root == "F") and name in ELEMENTWISE_FUNCTIONAL:
            return True
    return False


def _atom(node: cst.BaseExpression) -> str:
    """Code for ``node`` that can take a ``.method()`` suffix: parenthesized unless it is atomic."""
    text = _code(node)
    if isinstance(node, (cst.Name, cst.Call, cst.Subscript, cst.Attribute)) or getattr(node, "lpar", None):
        return text
    return f"({text})"


class ItemAccumulator(Rule):
    code = CODE
    tensor_code_only = True
    name = "item-accumulator"
    summary = "`.item()` (or `float(t)`, `int(t)`) accumulated in a Python loop: one device sync per step."
    docs = """
    ## What it does
    Finds Python number accumulators fed by `.item()`, `float(tensor)` or `int(tensor)` inside a
    loop, in two forms:

    1. **A reduction over the elements of one tensor** -- `for i in range(len(x)): total += x[i].item()`
       (also `x.shape[0]`, `x.size(0)`, `x.numel()`, `range(0, n)`, `for v in x`, `float(x[i])`,
       `int(x[i])`, `-=`, and element-wise arithmetic around the conversion). It becomes one
       reduction and one `.item()`.
    2. **An accumulator across the steps of an outer loop** -- `running_loss += loss.item()`,
       `correct += (pred == y).sum().item()` in a training or evaluation loop. The sum stays on the
       device and is converted to a Python number once, after the loop.

    ## Why is this bad?
    `.item()` copies one value from the device to the host and waits for every queued kernel: on
    a GPU each call stalls the pipeline, and on the CPU each call still costs a Python round trip
    per element. A reduction does the same work in one kernel.

    ## Example
    ```python
    total = 0.0
    for i in range(len(x)):
        total += x[i].item()

    running_loss = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        running_loss += loss.item()
    ```

    ## Use instead
    ```python
    total = x.sum(dtype=torch.float64).item()

    running_loss = 0.0
    for x, y in loader:
        loss = criterion(model(x), y)
        loss.backward()
        running_loss += loss.detach().double()
    running_loss = float(running_loss)
    ```
    The rewrite is faithful, not just close: a Python `float` accumulates in double precision, so
    the device accumulator is `float64` (`.double()`), and the result keeps the Python type the
    loop produced (`float` stays `float`, `int` stays `int`, also when the loop runs zero times).
    `.detach()` keeps the accumulator from holding on to the autograd graph.

    ## When it stays silent
    - The accumulator is read, or written otherwise, inside the loop (a progress bar or a log line
      that prints it every step). Converting at every read would sync anyway; torchfix leaves such
      loops alone.
    - The loop can leave early in a way that skips the conversion and is caught in the same
      function (`raise` inside a `try`), declares the name `global`/`nonlocal`, or a closure
      reads it.
    - The initial value is not a number literal visible just before the loop (`total = 0.0`).
    - The accumulator starts as an `int` (`total = 0`) but the values are of unknown dtype: the
      result would be an `int` for integer tensors and a `float` otherwise, and no single rewrite
      keeps both. Write `total = 0.0` to make it a float accumulator.
    - For form 1, nothing shows that the iterated name is a tensor (it could be a list or a numpy
      array, on which `x.sum(dtype=...)` fails). A tensor shows by what makes or takes it (a
      `torch.*` call, `torch.sum(x)`), a tensor-only method (`x.size(0)`, `x.numel()`,
      `x.detach()`) or an annotation (`x: torch.Tensor`); `sorted(...)`, `list(...)`, a
      comprehension, `.tolist()` or `np.*` show it is not one, and the skip says so.
    - For form 2, nothing shows that `t` in `int(t)` or `float(t)` -- or in `t.item()` added to a
      float sum -- is a tensor. `int(n * ratios[i])` over Python lists is integer arithmetic, not a
      device sync, and `(n * ratios[i]).long()` would raise on it. (An int sum of `t.item()` needs
      no such evidence: dropping `.item()` and converting once holds for NumPy values too, and the
      checker tries every kind the evidence allows. Nor does `t.item()` in a float sum where `t`
      comes from code torchfix cannot see into, `loss = compute_loss(out, y)`: `.item()` shows it
      is a tensor, a NumPy array or a NumPy scalar, and the value becomes
      `torch.as_tensor(loss).detach().double()` -- the tensor itself when it is one, a CPU tensor
      of the same value when it is not. The kinds the checker builds are float and int tensors,
      ndarrays and NumPy scalars; `np.longdouble`, object arrays, complex values and `np.uint64`
      past int64 are not among them, and `torch.as_tensor` rejects or narrows those.)
    - A float sum of `c.item()` (or `int(c)`) of an integer-or-unknown dtype with arithmetic
      around it (`total += c.item() - 1`): Python's int arithmetic is exact where the float64
      accumulator rounds past 2**53.
    - The loop body does anything but the accumulation (form 1), or the value is not element-wise
      in the loop index.
    Devices without float64 (Apple MPS) cannot run the form-2 rewrite's `.double()`; disable the
    rule there (`--ignore TFV004`).

    ## Cost, and why form 2 is withheld by default
    Form 1 is faster everywhere (`benchmarks/bench_corpus.py`: a median of 88x at n = 256 on one
    CPU thread). Form 2 trades one `.item()` sync per step for two small device operations per
    step. That pays only when the GPU is the bottleneck and the sync stalls the queue: measured on
    an H100 (`python benchmarks/bench_item_sync.py --device cuda`), 1.23x faster with 8192x4096
    batches but 0.80x with 64x256 ones; on a CPU there is nothing to wait for and it is slower. The
    checker times every verified rewrite; form 2 is not faster by construction, so unless its
    kernel (the accumulation alone) measures clearly faster (2x or more at every size) it is
    reported `skipped: ... not measured clearly faster` -- the same way in every run, whatever the
    machine's load -- and emitted only with `--allow-slower`: use that for training loops whose
    steps keep a GPU busy. A form-2 rewrite
    that could not be measured at all (`--no-measure`, or no input the checker can time) is not
    faster by construction either: it is reported `unmeasured` and emitted only with
    `--allow-slower` as well.

    ## Fix safety
    The checker runs old and new code on every kind of value the evidence allows for each name the
    accumulation reads -- tensors, NumPy arrays and scalars, Python lists and numbers -- and the
    rewrite is emitted only if they agree on each kind the old code accepts. Kinds the code shows
    a name cannot hold are not tried, so a wrong static claim of tensor evidence is what remains.
    """
    examples = (
        Example(
            """
            import torch

            def total(x: torch.Tensor) -> float:
                total = 0.0
                for i in range(len(x)):
                    total += x[i].item()
                return total
            """,
            """
            import torch

            def total(x: torch.Tensor) -> float:
                total = x.sum(dtype=torch.float64).item()
                return total
            """,
            id="element-sum",
        ),
        Example(
            """
            import torch

            def train(model, loader, opt):
                running = 0.0
                for x, y in loader:
                    loss = model(x, y)
                    loss.backward()
                    opt.step()
                    running += loss.item()
                    print(running)
                return running
            """,
            None,
            id="read-inside-loop",
        ),
    )

    #: every match is an augmented assignment fed by .item(), float(...) or int(...)
    required_bytes = ((b"+=", b"-="), (b".item()", b"float(", b"int("))

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """Inside a `for` loop, `name += <expression with .item() / float() / int()>` (or -=)."""
        fed = {
            id(aug)
            for aug in index.aug_assigns
            if isinstance(aug.op, (ast.Add, ast.Sub)) and isinstance(aug.target, ast.Name) and has_conversion(aug.value)
        }
        if not fed:
            return False
        return any(id(node) in fed for node in index.nodes_in_loops(ast.AugAssign))

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        module = wrapper.module
        nodes = module_nodes(module)
        loops: list[cst.For] = nodes.of_type(cst.For)  # type: ignore[assignment]
        augs: list[cst.AugAssign] = [
            node
            for node in nodes.of_type(cst.AugAssign)
            if isinstance(node, cst.AugAssign)
            and isinstance(node.operator, (cst.AddAssign, cst.SubtractAssign))
            and isinstance(node.target, cst.Name)
            and conversions_in(node.value)
        ]
        if not augs or not loops:
            return []  # metadata is the expensive part: resolve it only where a match is possible
        ctx = RuleContext.from_wrapper(wrapper)
        self._pinned_ranks = pinned_ranks_in(wrapper)
        claimed: set[int] = set()
        proposals: list[Proposal] = []
        for loop in loops:
            proposal = self._element_reduction(loop, ctx)
            if proposal is not None:
                proposals.append(proposal)
                claimed.add(id(loop))
        by_loop: dict[int, tuple[cst.For, list[cst.AugAssign]]] = {}
        for aug in augs:
            outcome = self._accumulator_loop(aug, ctx)
            if isinstance(outcome, Proposal):
                proposals.append(outcome)
            elif outcome is not None:
                if id(outcome) in claimed:
                    continue
                by_loop.setdefault(id(outcome), (outcome, []))[1].append(aug)
        for loop, group in by_loop.values():
            proposals.extend(self._device_accumulation(loop, group, ctx))
        proposals.sort(key=lambda p: (p.line, p.column))
        return proposals

    # ------------------------------------------------------------------ helpers

    def _block_of(self, stmt: cst.CSTNode, ctx: RuleContext) -> list[cst.BaseStatement] | None:
        parent = ctx.parents.get(stmt)
        if isinstance(parent, (cst.IndentedBlock, cst.Module)):
            return list(parent.body)
        return None

    def _skip(self, node: cst.CSTNode, ctx: RuleContext, message: str, reason: str) -> Proposal:
        return ctx.proposal(CODE, node, message, skip_reason=reason)

    def _free_inputs(self, names: set[str], ctx: RuleContext, exclude: set[str]) -> list[str]:
        return sorted(n for n in names - exclude if n not in BUILTIN_NAMES and n not in ctx.module_names)

    # ------------------------------------------------------------------ form 1

    def _element_reduction(self, loop: cst.For, ctx: RuleContext) -> Proposal | None:
        shape = loop_shape(loop)
        aug = sole_small_statement(loop.body)
        if shape is None or not (
            isinstance(aug, cst.AugAssign)
            and isinstance(aug.operator, (cst.AddAssign, cst.SubtractAssign))
            and isinstance(aug.target, cst.Name)
        ):
            return None
        acc = aug.target.value
        value = aug.value
        conversions = conversions_in(value)
        if not conversions:
            return None
        loop_var = shape.index or shape.element
        assert loop_var is not None
        indexed = loop_indexed_tensors(value, shape)
        if indexed is None or not indexed:
            return None  # the loop variable is used some other way: not an element reduction
        if acc in names_used(value) or acc == loop_var:
            return None
        if not self._elementwise(value, shape):
            return None
        message = f"`{acc}` accumulates `.item()` over the elements of a tensor: one reduction does it"
        evidence = ctx.evidence(enclosing_scope(loop, ctx.parents))
        for name in sorted(indexed):
            found = evidence.name(name, at=loop)
            if not found.tensor:
                return self._skip(loop, ctx, message, found.missing_tensor(f"`{name}.sum(...)`"))
        block = self._block_of(loop, ctx)
        init = find_init(block, loop, acc) if block is not None else None
        float_init = init is not None and literal_kind(init[1]) == "float"
        merge = init is not None and init[2] and is_zero(init[1])
        bare = value is conversions[0] if len(conversions) == 1 else False
        float_result = float_init or any(_conversion_kind(c) == "float" for c in conversions)
        variants = [("", False)]
        if len(indexed) > 1:
            variants.append(("flatten", True))
        extents = [None] if shape.extent is None else ["plain", "max0"]
        candidates = []
        for extent_mode in extents:
            for label, flatten in variants:
                replacement = self._vectorized(
                    value, shape, ctx, bare, float_result, flatten, extent_mode, self._owner_extent(loop)
                )
                description = "one reduction" + (f" ({label} per-sample values)" if label else "")
                if extent_mode == "max0":
                    description += ", extent clamped at 0"
                candidates.append(
                    self._element_candidate(loop, aug, acc, init, merge, replacement, description, shape, indexed, ctx)
                )
        return ctx.proposal(CODE, loop, message, tuple(candidates))

    def _owner_extent(self, loop: cst.For) -> cst.BaseExpression | None:
        """``len(x)`` / ``x.size(0)`` ... as written in ``range(...)``; None for ``for v in x``."""
        if isinstance(loop.iter, cst.Call) and loop.iter.args:
            return loop.iter.args[-1].value
        return None

    def _elementwise(self, value: cst.BaseExpression, shape: LoopShape) -> bool:
        """Only arithmetic, comparisons, conversions and element-wise calls."""
        return elementwise_only(value, _elementwise_call)

    def _vectorized(
        self,
        value: cst.BaseExpression,
        shape: LoopShape,
        ctx: RuleContext,
        bare: bool,
        float_result: bool,
        flatten: bool,
        extent_mode: str | None,
        loop_iter_extent: cst.BaseExpression | None = None,
    ) -> cst.BaseExpression:
        """The per-element expression with ``X[i]`` -> whole (or sliced) ``X``, conversions ->
        tensor casts, then one ``.sum(...)`` and one ``.item()``."""
        torch = ctx.torch
        if shape.extent is not None:
            extent_code = _code(shape.extent)
            bound = f"max({extent_code}, 0)" if extent_mode == "max0" else extent_code
        else:
            bound = _code(loop_iter_extent) if loop_iter_extent is not None else None

        def whole(name: str) -> str:
            # the loop reads only the first `extent` rows of every tensor but the one it measures
            sliced = bound is not None and (shape.extent is not None or name != shape.owner)
            text = f"{name}[:{bound}]" if sliced else name
            return f"{text}.flatten()" if flatten else text

        class _Vectorize(WholeTensorSubstitution):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                if not is_conversion(original):
                    return updated
                operand = conversion_operand(updated)
                kind = _conversion_kind(original)
                text = _atom(operand)
                if kind == "int":
                    return _parse_expr(f"{text}.long()")
                if kind == "float" or (float_result and not bare):
                    return _parse_expr(f"{text}.double()") if not bare else operand
                return operand

        vector = value.visit(_Vectorize(shape, whole))
        text = _atom(vector)
        if float_result:
            return _parse_expr(f"{text}.sum(dtype={torch}.float64).item()")
        return _parse_expr(f"{text}.sum().item()")

    def _element_candidate(
        self,
        loop: cst.For,
        aug: cst.AugAssign,
        acc: str,
        init: tuple[cst.SimpleStatementLine, cst.BaseExpression, bool] | None,
        merge: bool,
        total: cst.BaseExpression,
        description: str,
        shape: LoopShape,
        indexed: set[str],
        ctx: RuleContext,
    ) -> Candidate:
        subtract = isinstance(aug.operator, cst.SubtractAssign)
        leading = list(loop.leading_lines) + comments_in(loop.with_changes(leading_lines=()))
        edits: list[Edit] = []
        if merge and init is not None:
            init_stmt = init[0]
            value = cst.UnaryOperation(cst.Minus(), total) if subtract else total
            new_stmt = init_stmt.with_changes(
                body=[cst.Assign(targets=[cst.AssignTarget(cst.Name(acc))], value=value)],
                leading_lines=list(init_stmt.leading_lines) + leading,
            )
            edits.append(Edit(init_stmt, cst.RemovalSentinel.REMOVE))
            old_code = statement_code(ctx.module, init_stmt) + statement_code(ctx.module, loop)
        else:
            operator = cst.SubtractAssign() if subtract else cst.AddAssign()
            new_stmt = cst.SimpleStatementLine(
                body=[cst.AugAssign(target=cst.Name(acc), operator=operator, value=total)], leading_lines=leading
            )
            old_code = (statement_code(ctx.module, init[0]) if init else "") + statement_code(ctx.module, loop)
        edits.append(Edit(loop, new_stmt))
        new_code = (statement_code(ctx.module, init[0]) if init and not merge else "") + statement_code(ctx.module, new_stmt)
        loop_var = shape.index or shape.element
        used = names_used(loop.iter) | names_used(aug.value)
        exclude = {loop_var or "", acc if init else ""}
        evidence = ctx.evidence(enclosing_scope(loop, ctx.parents))
        inputs = []
        pinned = self._pinned_ranks(loop)
        for name in self._free_inputs(used, ctx, exclude):
            if name in indexed:  # positive tensor evidence was required above
                # every rank unless the function pins one: with `a` a column, `a[i]` is 1-D and
                # keeps its narrower dtype against a 0-d `b[i]` (int8 - int64 wraps in int8),
                # which a batched form of two flattened operands computes in int64
                inputs.append(InputSpec(name, Kind.TENSOR, ranks=(pinned[name],)) if name in pinned else InputSpec(name, Kind.TENSOR))
            elif shape.extent is not None and isinstance(shape.extent, cst.Name) and shape.extent.value == name:
                inputs.append(InputSpec(name, Kind.INT, count=True))
            else:
                # the owner of `len(y)` that is not indexed, a scale factor: what the evidence allows
                inputs.append(evidence.name(name, at=loop).spec())
        if init is None:
            inputs.append(evidence.name(acc, at=loop).spec())
        kernel = Kernel(
            old=old_code,
            new=new_code,
            inputs=tuple(inputs),
            outputs=(acc,),
            modules=ctx.kernel_modules(),
            reorders_float_reduction=True,
            note="the loop and its accumulator, verbatim",
        )
        return Candidate(description, tuple(edits), kernel, ctx.imports)

    # ------------------------------------------------------------------ form 2

    def _accumulator_loop(self, aug: cst.AugAssign, ctx: RuleContext) -> cst.For | Proposal | None:
        """The loop after which ``aug``'s accumulator can be converted once, or a skip."""
        acc = aug.target.value  # type: ignore[union-attr]
        if acc in names_used(aug.value):
            return None
        chain: list[cst.For] = []
        node: cst.CSTNode = aug
        in_try = False
        while node in ctx.parents:
            node = ctx.parents[node]
            if isinstance(node, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.Module)):
                break
            if isinstance(node, cst.For):
                chain.append(node)
        scope = node
        if not chain:
            return None
        chosen: cst.For | None = None
        for loop in chain:
            uses = [n for n in name_nodes(loop) if n.value == acc]
            if len(uses) == 1 and loop.asynchronous is None:
                chosen = loop
            else:
                break
        message = f"`{acc}` accumulates `.item()` once per step: keep it on the device and convert once after the loop"
        first = chain[0]
        # an element loop (the converted value depends on the loop variable itself) is form 1's;
        # a device add per element is no faster than .item() on the CPU
        if any(self._is_element_loop(loop, aug, ctx) for loop in chain):
            return None
        if chosen is None:
            return self._skip(first, ctx, message, f"`{acc}` is read or written elsewhere inside the loop")
        # is the loop inside a try block (whose handler could read a half-converted accumulator)?
        node = chosen
        while node in ctx.parents and node is not scope:
            node = ctx.parents[node]
            if isinstance(node, cst.Try):
                in_try = True
        escapes = escaping_control_flow(chosen.body)
        if "global" in escapes or "nonlocal" in escapes:
            return self._skip(chosen, ctx, message, "the loop declares a name global or nonlocal")
        if in_try and ("raise" in escapes or "return" in escapes):
            return self._skip(chosen, ctx, message, "the loop can raise inside a try block that may read the accumulator")
        all_uses = [n for n in name_nodes(scope) if n.value == acc]
        if any(self._in_nested_scope(n, scope, ctx) for n in all_uses):
            return self._skip(chosen, ctx, message, f"a nested function or comprehension reads `{acc}`")
        if isinstance(scope, cst.Module):
            for fn in self._functions(scope):
                if acc in names_used(fn):
                    return self._skip(chosen, ctx, message, f"a function in this module may read the global `{acc}`")
        block = self._block_of(chosen, ctx)
        init = find_init(block, chosen, acc) if block is not None else None
        if init is None:
            return self._skip(
                chosen, ctx, message, f"no `{acc} = <number>` just before the loop: its starting type is unknown"
            )
        return chosen

    def _is_element_loop(self, loop: cst.For, aug: cst.AugAssign, ctx: RuleContext) -> bool:
        """A loop over a tensor's elements: ``range`` indexing into the converted value, or
        iteration over a name that is evidently a tensor, bound to the converted value."""
        shape = loop_shape(loop)
        if shape is None:
            return False
        operands = set().union(*(names_used(conversion_operand(c)) for c in conversions_in(aug.value)))
        if shape.index is not None:
            return shape.index in operands
        if shape.element in operands and shape.owner:
            return ctx.evidence(enclosing_scope(loop, ctx.parents)).name(shape.owner, at=loop).tensor
        return False

    def _functions(self, module: cst.Module) -> list[cst.FunctionDef]:
        found: list[cst.FunctionDef] = []

        class _Fns(cst.CSTVisitor):
            def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
                found.append(node)

        module.visit(_Fns())
        return found

    def _in_nested_scope(self, node: cst.CSTNode, scope: cst.CSTNode, ctx: RuleContext) -> bool:
        current = node
        while current in ctx.parents and current is not scope:
            current = ctx.parents[current]
            if isinstance(current, (cst.FunctionDef, cst.Lambda, cst.ClassDef, cst.ListComp, cst.GeneratorExp, cst.SetComp, cst.DictComp)) and current is not scope:
                return True
        return False

    def _device_accumulation(self, loop: cst.For, augs: list[cst.AugAssign], ctx: RuleContext) -> list[Proposal]:
        block = self._block_of(loop, ctx)
        assert block is not None
        scope = enclosing_scope(loop, ctx.parents)
        loop_assigned = assigned_names(loop)
        plans = []
        skips: list[Proposal] = []
        for aug in augs:
            acc = aug.target.value  # type: ignore[union-attr]
            init = find_init(block, loop, acc)
            assert init is not None
            plan = self._plan(aug, acc, init, loop, ctx)
            if isinstance(plan, str):
                message = f"`{acc}` accumulates `.item()` once per step: keep it on the device and convert once after the loop"
                skips.append(self._skip(aug, ctx, message, plan))
            else:
                plans.append(plan)
        if not plans:
            return skips
        # one proposal per loop: its accumulators share the loop's rewrite
        replace: dict[int, cst.BaseExpression] = {id(p.aug): p.new_value for p in plans}

        class _Swap(cst.CSTTransformer):
            def leave_AugAssign(self, original: cst.AugAssign, updated: cst.AugAssign) -> cst.AugAssign:
                if id(original) in replace:
                    return updated.with_changes(value=replace[id(original)])
                return updated

        new_loop = loop.visit(_Swap())
        posts = [cst.parse_statement(p.post, config=ctx.module.config_for_parsing) for p in plans]
        assert isinstance(new_loop, cst.For)
        edit = Edit(loop, cst.FlattenSentinel([new_loop, *posts]))
        # the kernel: the inits, then a loop over per-step values of what the accumulations read
        steps: list[str] = []
        invariant: list[str] = []
        accs = {p.acc for p in plans}
        for plan in plans:
            for name in self._free_inputs(names_used(plan.aug.value), ctx, accs):
                (steps if name in loop_assigned else invariant).append(name)
        steps = sorted(set(steps))
        invariant = sorted(set(invariant))
        if not steps:
            return skips
        inits = "".join(statement_code(ctx.module, p.init) for p in plans)
        header = f"for {', '.join(steps)} in zip({', '.join(steps)}):\n" if len(steps) > 1 else f"for {steps[0]} in {steps[0]}:\n"
        old_body = "".join("    " + statement_code(ctx.module, p.aug.deep_clone()) for p in plans)
        new_body = "".join("    " + _code(p.aug.with_changes(value=p.new_value)) + "\n" for p in plans)
        new_posts = "".join(p.post for p in plans)
        called = {
            n.value for p in plans for n in name_nodes(p.aug.value)
            if isinstance(ctx.parents.get(n), cst.Call) and ctx.parents[n].func is n  # type: ignore[attr-defined]
        }
        # every name gets the kinds its evidence allows (issue 17: assuming tensors here let a
        # rewrite of Python-number code through); the checker tries each of them
        evidence = ctx.evidence(scope)
        inputs = [evidence.name(n, at=loop).spec(per_step=True) for n in steps]
        # a called loop-invariant name (a model, a loss function) is an uninterpreted function
        inputs += [InputSpec(n, Kind.OPAQUE) if n in called else evidence.name(n, at=loop).spec() for n in invariant]
        kernel = Kernel(
            old=inits + header + old_body,
            new=inits + header + new_body + new_posts,
            inputs=tuple(inputs),
            outputs=tuple(p.acc for p in plans),
            modules=ctx.kernel_modules(),
            note="the accumulations, over per-step values of what they read; the rest of the loop is untouched",
        )
        names = ", ".join(f"`{p.acc}`" for p in plans)
        message = f"{names} accumulate{'s' if len(plans) == 1 else ''} `.item()` once per step: keep on the device, convert once after the loop"
        imports = ctx.imports if any("isinstance" in p.post or "as_tensor" in _code(p.new_value) for p in plans) else ()
        # not faster by construction: two device operations per step replace one sync, which pays
        # only on a busy GPU -- emitted by default only when measured no slower
        candidate = Candidate(
            "device accumulator, one conversion after the loop", (edit,), kernel, imports, needs_measurement=True
        )
        return [ctx.proposal(CODE, loop, message, (candidate,)), *skips]

    def _plan(
        self, aug: cst.AugAssign, acc: str, init: tuple[cst.SimpleStatementLine, cst.BaseExpression, bool],
        loop: cst.For, ctx: RuleContext,
    ) -> "_Plan | str":
        """The device-accumulator rewrite of one accumulation, or why there is none.

        ``int(t)`` / ``float(t)`` sync the device only when ``t`` is a tensor, and their rewrites
        (``t.long()``, ``t.detach().double()``) exist only on tensors: they need positive tensor
        evidence for ``t``. So does ``t.item()`` in a float sum (``t.detach().double()``). An int
        sum of ``t.item()`` drops the ``.item()`` and converts once after the loop, which holds for
        NumPy values too: the checker tries every kind the evidence allows.
        """
        init_kind = literal_kind(init[1])
        conversions = conversions_in(aug.value)
        evidence = ctx.evidence(enclosing_scope(loop, ctx.parents))
        kinds = []
        for conversion in conversions:
            operand = conversion_operand(conversion)
            kind = _conversion_kind(conversion)
            if kind in ("int", "float"):
                found = evidence.expression(operand, at=loop)
                if not found.tensor:
                    return found.not_a_sync(_code(conversion), "long" if kind == "int" else "double")
            inferred = infer_dtype_kind(operand)
            kinds.append("float" if kind == "float" else "int" if kind == "int" else (
                "int" if inferred in ("int", "bool") else inferred))
        if init_kind == "int" and None in kinds:
            return (
                f"`{acc}` starts as an int but the summed values' dtype is unknown: the result is an int for "
                f"integer tensors and a float otherwise; start from `{acc} = 0.0` if it is a float sum"
            )
        result = "float" if init_kind == "float" or "float" in kinds else "int"
        replace: dict[int, cst.BaseExpression] = {}
        for conversion, kind in zip(conversions, kinds):
            operand = conversion_operand(conversion)
            text = _atom(operand)
            if result == "float":
                found = evidence.expression(operand, at=loop)
                if kind != "float" and not _alone(aug.value, conversion):
                    # `c.item() - 1` of an integer is exact in Python; after `.double()` it rounds
                    # past 2**53
                    return (
                        f"`{_code(conversion)}` may be an integer, and the arithmetic around it is exact on "
                        f"Python ints where the device accumulator's float64 rounds (past 2**53)"
                    )
                cast = ".long().double()" if _conversion_kind(conversion) == "int" else ".double()"
                if found.tensor:
                    replace[id(conversion)] = _parse_expr(f"{text}.detach(){cast}")
                elif _conversion_kind(conversion) == "item" and _as_tensor_takes(found.kinds):
                    # `.item()` says only "tensor, ndarray or NumPy scalar": torch.as_tensor is the
                    # tensor itself (no copy, no sync) and a CPU tensor of the others' value
                    replace[id(conversion)] = _parse_expr(f"{ctx.torch}.as_tensor({_code(operand)}).detach().double()")
                else:
                    return found.missing_tensor(f"`{_code(operand)}.detach().double()`")
            else:
                replace[id(conversion)] = _parse_expr(f"{text}.long()" if _conversion_kind(conversion) == "int" else text)

        class _Swap(cst.CSTTransformer):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                return replace.get(id(original), updated)

        new_value = aug.value.visit(_Swap())
        if init_kind == "float":
            post = f"{acc} = float({acc})\n"
        elif result == "int":
            post = f"{acc} = int({acc})\n"
        else:
            post = f"if isinstance({acc}, {ctx.torch}.Tensor):\n    {acc} = {acc}.item()\n"
        return _Plan(aug, acc, init[0], new_value, post)


@dataclass
class _Plan:
    aug: cst.AugAssign
    acc: str
    init: cst.SimpleStatementLine
    new_value: cst.BaseExpression
    post: str
