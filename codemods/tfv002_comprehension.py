"""TFV002 comprehension-over-tensor: list comprehensions and generators over tensor elements."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable

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
    conversion_operand,
    conversions_in,
    dotted,
    element_of,
    elementwise_only,
    enclosing_scope,
    infer_dtype_kind,
    is_conversion,
    loop_indexed_tensors,
    loop_shape,
    module_nodes,
    names_used,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.loops.facts import pinned_ranks_in
from torchfix.codemods.syntax import SyntaxIndex, has_conversion, is_range_call
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV002"

#: methods that return their receiver's storage (a view or the tensor itself) for some inputs
_NON_ALLOCATING = frozenset({"float", "double", "long", "int", "half", "bool", "detach", "cpu", "flatten"})
_REDUCTIONS = ("sum", "max", "min", "any", "all")


def _code(node: cst.CSTNode) -> str:
    return cst.Module(body=[]).code_for_node(node)


def _atom_text(text: str, node: cst.BaseExpression) -> str:
    if isinstance(node, (cst.Name, cst.Call, cst.Subscript, cst.Attribute)) or getattr(node, "lpar", None):
        return text
    return f"({text})"


def _atom(node: cst.BaseExpression) -> str:
    """Code for ``node`` that can take a ``.method()`` suffix: parenthesized unless it is atomic."""
    return _atom_text(_code(node), node)


def _elementwise_call(node: cst.Call) -> bool:
    """A call an element of the comprehension may make: a conversion, one-argument ``abs``, an
    element-wise tensor method (not a bare ``math`` / ``random`` function of the same name) or an
    element-wise ``torch.nn.functional`` activation."""
    if is_conversion(node):
        return True
    func = node.func
    if isinstance(func, cst.Name) and func.value == "abs" and len(node.args) == 1:
        return True
    if isinstance(func, cst.Attribute):
        name = func.attr.value
        root = dotted(func.value) or ""
        if name in ELEMENTWISE_METHODS and not (root and "." not in root and root in ("math", "random")):
            return True
        if (root.endswith("functional") or root == "F") and name in ELEMENTWISE_FUNCTIONAL:
            return True
    return False


def _py_kind(expr: cst.BaseExpression) -> str | None:
    """The Python type ("float", "int", "bool") the per-element expression yields, when evident."""
    if isinstance(expr, cst.Float):
        return "float"
    if isinstance(expr, cst.Integer):
        return "int"
    if isinstance(expr, (cst.Comparison,)) or (isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, cst.Not)):
        return "bool"
    if isinstance(expr, cst.UnaryOperation) and isinstance(expr.operator, (cst.Minus, cst.Plus)):
        inner = _py_kind(expr.expression)
        return "int" if inner == "bool" else inner
    if isinstance(expr, cst.Call):
        if isinstance(expr.func, cst.Name) and expr.func.value in ("float", "int") and is_conversion(expr):
            return expr.func.value
        if isinstance(expr.func, cst.Name) and expr.func.value == "abs" and len(expr.args) == 1:
            inner = _py_kind(expr.args[0].value)
            return "int" if inner == "bool" else inner
        if is_conversion(expr):
            return infer_dtype_kind(conversion_operand(expr))
        return None
    if isinstance(expr, cst.BinaryOperation):
        if isinstance(expr.operator, cst.Divide):
            return "float"
        if isinstance(expr.operator, cst.Power):
            return None
        left, right = _py_kind(expr.left), _py_kind(expr.right)
        if "float" in (left, right):
            return "float"
        if left in ("int", "bool") and right in ("int", "bool"):
            return "int"
    return None


@dataclass
class _Match:
    """A comprehension over the first dimension of a tensor, and what wraps it."""

    target: cst.BaseExpression  # the node the edit replaces (the wrapper call or the comprehension)
    comp: cst.ListComp | cst.GeneratorExp
    shape: LoopShape
    var: str
    #: "list", "tensor", "numpy" or one of _REDUCTIONS
    form: str
    #: torch.tensor's dtype= / device= arguments (code), sum's start value (code)
    dtype: str | None = None
    device: str | None = None
    start: str | None = None
    start_float: bool = False


class ComprehensionOverTensor(Rule):
    code = CODE
    tensor_code_only = True
    name = "comprehension-over-tensor"
    summary = "A list comprehension or generator that walks a tensor one element at a time."
    docs = """
    ## What it does
    Finds comprehensions and generator expressions that visit the elements of a tensor one at a
    time and convert each one to a Python number (`.item()`, `float(v)`, `int(v)`):

    1. **A list of numbers** -- `[v.item() for v in t]`, `[float(x[i]) for i in range(len(x))]`
       (also `x.shape[0]`, `x.size(0)`, `range(0, n)`, `range(n)`). It becomes one `.tolist()`.
    2. **A tensor or array built back from those numbers** -- `torch.tensor([v.item() * 2 for v in t])`,
       `np.array([...])`. It becomes one tensor expression with the cast and the device that
       `torch.tensor` would have given (`dtype=` and `device=` arguments are carried over).
    3. **A reduction over them** -- `sum(...)`, `max(...)`, `min(...)`, `any(...)`, `all(...)` over
       a generator or a list comprehension. It becomes one reduction and one `.item()`.

    The element expression may use arithmetic, comparisons, `abs` and element-wise tensor methods
    (`abs`, `exp`, `clamp`, `float`, ...), plus loop-invariant names.

    ## Why is this bad?
    Every `.item()` copies one value from the device and waits for the queued kernels; indexing a
    tensor in Python builds a new tensor object per element. A comprehension over 10 000 elements
    makes 10 000 of each, where one vectorized expression (or one `.tolist()`) makes one.

    ## Example
    ```python
    values = [v.item() for v in scores]
    scaled = torch.tensor([x[i].item() * 0.5 for i in range(len(x))])
    best = max(v.item() for v in scores)
    total = sum((v.item() for v in scores), 0.0)
    ```

    ## Use instead
    ```python
    values = scores.flatten().tolist()
    scaled = torch.tensor((x.flatten() * 0.5).tolist())
    best = max(scores.flatten().tolist())
    total = scores.sum(dtype=torch.float64).item()
    ```
    The rewrite is faithful, not just close: a list of `.item()` values of an `[N, 1]` tensor is
    a flat list, so the rewrite flattens (`t.tolist()` alone is kept only where the checker shows
    the tensor is 1-D); `torch.tensor` of Python floats is a tensor of the default float dtype on
    the default device whatever the input was, and the default device may be a GPU's
    (`torch.set_default_device`), so the rewrite rebuilds the list with the same call, or casts
    and moves the batch where the call names a `device=`;
    Python's `sum` of an empty float tensor's elements is the int `0` and `max` of floats with a
    NaN depends on the NaN's position, so where a tensor reduction cannot match Python's answer
    the rewrite keeps Python's reduction over one `.tolist()` (one device transfer instead of one
    per element). Start a float sum at `0.0` (`sum(..., 0.0)`) to get a single
    `t.sum(dtype=torch.float64).item()`.

    ## When it stays silent
    - Nothing shows that the iterated name is a tensor (it could be a list of tensors -- possibly
      of different shapes -- or a numpy array). Annotate it (`t: torch.Tensor`) or use a tensor
      method on it (`t.size(0)`, `t.numel()`).
    - The element expression calls anything that is not element-wise: a model, a random number
      generator, `print`, a helper defined elsewhere.
    - The comprehension has an `if` filter, more than one `for` clause, or a tuple target.
    - The comprehension yields tensors rather than Python numbers (`[v * 2 for v in t]`).
    - `torch.tensor(...)` has other arguments than `dtype=` and `device=` (`requires_grad=True`),
      `np.array(...)` has any argument beyond the list, `max`/`min` have `key=` or `default=`.
    """
    examples = (
        Example(
            """
            import torch

            def values(t: torch.Tensor) -> list:
                return [v.item() for v in t]
            """,
            """
            import torch

            def values(t: torch.Tensor) -> list:
                return t.flatten().tolist()
            """,
            id="item-list",
        ),
        Example(
            """
            import torch

            def total(x: torch.Tensor) -> float:
                return sum((x[i].item() for i in range(len(x))), 0.0)
            """,
            """
            import torch

            def total(x: torch.Tensor) -> float:
                return x.sum(dtype=torch.float64).item()
            """,
            id="float-sum",
        ),
        Example(
            """
            import torch

            def noisy(t: torch.Tensor) -> list:
                return [(v + torch.randn(())).item() for v in t]
            """,
            None,
            id="rng-per-element",
        ),
    )

    #: every match is a comprehension (`for`) with a conversion or an any()/all() call
    required_bytes = ((b"for",), (b".item()", b"float(", b"int(", b"any(", b"all("))

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """A one-clause comprehension over a name or `range(...)` whose element converts
        (`.item()`, `float()`, `int()`), or that `any`/`all` consume."""
        reduced = set()
        for call in index.calls:
            if isinstance(call.func, ast.Name) and call.func.id in ("any", "all") and call.args:
                reduced.add(id(call.args[0]))
        for comp in index.comprehensions:
            if len(comp.generators) != 1:
                continue
            clause = comp.generators[0]
            if clause.ifs or clause.is_async or not isinstance(clause.target, ast.Name):
                continue
            if not (isinstance(clause.iter, ast.Name) or is_range_call(clause.iter)):
                continue
            if id(comp) in reduced or has_conversion(comp.elt):
                return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        module = wrapper.module
        ctx = RuleContext.from_wrapper(wrapper)
        nodes = module_nodes(module)
        self._pinned_ranks = pinned_ranks_in(wrapper)
        calls: list[cst.Call] = nodes.of_type(cst.Call)  # type: ignore[assignment]
        comps: list[cst.ListComp] = nodes.of_type(cst.ListComp)  # type: ignore[assignment]
        proposals: list[Proposal] = []
        claimed: set[int] = set()
        for call in calls:
            match = self._wrapper_match(call, ctx)
            if match is None:
                continue
            proposal = self._propose(match, ctx)
            if proposal is not None:
                proposals.append(proposal)
                claimed.add(id(match.comp))
        for comp in comps:
            if id(comp) in claimed:
                continue
            match = self._comp_match(comp, comp, "list")
            if match is None:
                continue
            proposal = self._propose(match, ctx)
            if proposal is not None:
                proposals.append(proposal)
        # an edit inside another edit's target would be lost: keep the outermost
        kept = [p for p in proposals if not any(q is not p and self._inside(p, q, ctx) for q in proposals)]
        kept.sort(key=lambda p: (p.line, p.column))
        return kept

    # ------------------------------------------------------------------ matching

    def _inside(self, inner: Proposal, outer: Proposal, ctx: RuleContext) -> bool:
        a = getattr(inner, "_target", None)
        b = getattr(outer, "_target", None)
        if a is None or b is None:
            return False
        node = a
        while node in ctx.parents:
            node = ctx.parents[node]
            if node is b:
                return True
        return False

    def _wrapper_match(self, call: cst.Call, ctx: RuleContext) -> _Match | None:
        name = dotted(call.func)
        if name is None or not call.args:
            return None
        first = call.args[0]
        if first.keyword is not None or first.star or not isinstance(first.value, (cst.ListComp, cst.GeneratorExp)):
            return None
        comp = first.value
        rest = call.args[1:]
        if name == f"{ctx.torch}.tensor" and isinstance(comp, cst.ListComp):
            kwargs: dict[str, str] = {}
            for arg in rest:
                if arg.keyword is None or arg.keyword.value not in ("dtype", "device") or arg.star:
                    return None
                kwargs[arg.keyword.value] = _code(arg.value)
            match = self._comp_match(call, comp, "tensor")
            if match is not None:
                match.dtype, match.device = kwargs.get("dtype"), kwargs.get("device")
            return match
        if ctx.facts.numpy and name in (f"{ctx.facts.numpy}.array", f"{ctx.facts.numpy}.asarray"):
            if rest or not isinstance(comp, cst.ListComp):
                return None
            return self._comp_match(call, comp, "numpy")
        if isinstance(call.func, cst.Name) and name in _REDUCTIONS and name not in ctx.module_names:
            if name == "sum" and len(rest) == 1 and rest[0].keyword in (None,) and not rest[0].star:
                start = rest[0].value
                if not isinstance(start, (cst.Integer, cst.Float)) or float(start.value.replace("_", "")) != 0.0:
                    return None
                match = self._comp_match(call, comp, name)
                if match is not None:
                    match.start, match.start_float = _code(start), isinstance(start, cst.Float)
                return match
            if rest:
                return None
            return self._comp_match(call, comp, name)
        return None

    def _comp_match(self, target: cst.BaseExpression, comp: cst.ListComp | cst.GeneratorExp, form: str) -> _Match | None:
        clause = comp.for_in
        if clause.inner_for_in is not None or clause.ifs or clause.asynchronous is not None:
            return None
        if not isinstance(clause.target, cst.Name):
            return None
        fake = cst.For(target=clause.target, iter=clause.iter, body=cst.IndentedBlock(body=[]))
        shape = loop_shape(fake)
        if shape is None or (shape.owner is None and shape.extent is None):
            return None
        return _Match(target, comp, shape, clause.target.value, form)

    # ------------------------------------------------------------------ analysis

    def _elementwise(self, value: cst.BaseExpression) -> bool:
        """Only arithmetic, comparisons, conversions, ``abs`` and element-wise tensor calls."""
        return elementwise_only(value, _elementwise_call, refused=(cst.BooleanOperation, cst.IfExp))

    def _yields_numbers(self, elt: cst.BaseExpression, form: str) -> bool:
        """Whether each element is a Python number: the outermost operation works on converted
        values (a tensor-valued element is another pattern)."""
        if form in ("any", "all") and isinstance(elt, cst.Comparison):
            return True
        if isinstance(elt, (cst.Integer, cst.Float)):
            return True
        if isinstance(elt, cst.Call):
            if is_conversion(elt):
                return True
            if isinstance(elt.func, cst.Name) and elt.func.value == "abs":
                return self._yields_numbers(elt.args[0].value, form)
            return False
        if isinstance(elt, cst.UnaryOperation):
            return self._yields_numbers(elt.expression, form)
        if isinstance(elt, cst.BinaryOperation):
            return all(
                self._yields_numbers(side, form) or not self._touches_element(side)
                for side in (elt.left, elt.right)
            ) and (self._yields_numbers(elt.left, form) or self._yields_numbers(elt.right, form))
        if isinstance(elt, cst.Comparison):
            parts = [elt.left] + [c.comparator for c in elt.comparisons]
            return all(self._yields_numbers(p, form) or not self._touches_element(p) for p in parts) and any(
                self._yields_numbers(p, form) for p in parts
            )
        return False

    def _touches_element(self, node: cst.BaseExpression) -> bool:
        return bool(self._element_names & names_used(node))

    _element_names: set[str] = set()

    # ------------------------------------------------------------------ proposals

    def _statement(self, node: cst.CSTNode, ctx: RuleContext) -> cst.CSTNode:
        current = node
        while current in ctx.parents:
            if isinstance(current, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
                return current
            current = ctx.parents[current]
        return current

    def _propose(self, match: _Match, ctx: RuleContext) -> Proposal | None:
        comp, shape = match.comp, match.shape
        elt = comp.elt
        indexed = loop_indexed_tensors(elt, shape)
        if not indexed:
            return None
        self._element_names = {match.var}
        if not self._elementwise(elt):
            return None
        if not self._yields_numbers(elt, match.form):
            return None
        if match.form not in ("any", "all") and not conversions_in(elt):
            return None
        if any(c for c in conversions_in(elt) if not (names_used(conversion_operand(c)) & {match.var})):
            return None  # a conversion of something else than the element: not this pattern
        scope = enclosing_scope(match.target, ctx.parents)
        if match.var in assigned_names(elt):
            return None
        if match.form in _REDUCTIONS and self._rebound(match.form, scope, ctx):
            return None  # `sum` / `max` ... rebound: not the builtin
        what = {
            "list": "a list of `.item()` values",
            "tensor": "a tensor rebuilt from `.item()` values",
            "numpy": "an array rebuilt from `.item()` values",
        }.get(match.form, f"`{match.form}` over `.item()` values")
        message = f"{what}, one element at a time: one tensor expression does it"
        line, col = ctx.position(match.target)
        anchor = self._statement(match.target, ctx)
        snippet = _code(match.target)
        for name in sorted(indexed):
            found = ctx.evidence(scope).name(name, at=match.target)
            if not found.tensor:
                proposal = Proposal(
                    CODE, message, line, col, anchor, (), found.missing_tensor(f"`{name}.tolist()` / `{name}.sum()`"),
                    snippet,
                )
                proposal._target = match.target  # type: ignore[attr-defined]
                return proposal
        candidates = self._candidates(match, indexed, ctx)
        proposal = Proposal(CODE, message, line, col, anchor, tuple(candidates), None, snippet)
        proposal._target = match.target  # type: ignore[attr-defined]
        return proposal

    def _rebound(self, name: str, scope: cst.CSTNode, ctx: RuleContext) -> bool:
        """Whether ``name`` is bound in the function or at module level (then it is not the builtin)."""
        top: set[str] = set()
        for stmt in ctx.module.body:
            if isinstance(stmt, (cst.FunctionDef, cst.ClassDef)):
                top.add(stmt.name.value)
            else:
                top |= assigned_names(stmt)
        if isinstance(scope, cst.FunctionDef):
            top |= assigned_names(scope.body) | {p.name.value for p in scope.params.params}
        return name in top


    # ------------------------------------------------------------------ rewriting

    def _vector(
        self, match: _Match, bound: str | None, flatten: bool, sliced_owner: bool, cast_form: bool = False
    ) -> cst.BaseExpression:
        """The element expression with ``X[i]`` / ``v`` -> the whole (sliced) ``X`` and the
        conversions -> tensor casts (``.item()`` keeps the dtype, ``float`` -> ``.double()``,
        ``int`` -> ``.long()``)."""
        shape = match.shape

        def whole(name: str) -> str:
            sliced = bound is not None and (sliced_owner or name != shape.owner)
            text = f"{name}[:{bound}]" if sliced else name
            return f"{text}.flatten()" if flatten else text

        # the cast form of torch.tensor(...) casts anyway: float(v) adds nothing to that cast
        drop_float = cast_form
        # a float-valued element is computed in double precision by Python: keep that precision
        item_cast = ".double()" if match.form != "tensor" and _py_kind(match.comp.elt) == "float" else ""

        class _Vectorize(WholeTensorSubstitution):
            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                if not is_conversion(original):
                    return updated
                operand = conversion_operand(updated)
                if isinstance(original.func, cst.Name) and not (drop_float and original.func.value == "float"):
                    cast = "double" if original.func.value == "float" else "long"
                    return cst.parse_expression(f"{_atom(operand)}.{cast}()")
                if item_cast and isinstance(original.func, cst.Attribute):
                    return cst.parse_expression(f"{_atom(operand)}{item_cast}")
                return operand

        result = match.comp.elt.visit(_Vectorize(shape, whole))
        assert isinstance(result, cst.BaseExpression)
        return result.with_changes(lpar=[], rpar=[]) if isinstance(result, (cst.Name, cst.Call)) else result

    def _scalar(
        self, match: _Match, bound: str | None, flatten: bool, sliced_owner: bool
    ) -> tuple[str, str, str] | None:
        """One transfer, then Python: (iterable code, element code) with every conversion of the
        element read off ``.tolist()``; None when the element is used otherwise."""
        shape = match.shape
        owners = loop_indexed_tensors(match.comp.elt, shape) or set()
        if len(owners) != 1:
            return None
        (owner,) = owners
        used = names_used(match.comp.elt) | names_used(match.comp.for_in.iter)
        var = next(n for n in ("v", "value", "v_", "elem") if n not in used or (shape.element == n))
        ok = True

        def is_element(node: cst.BaseExpression) -> bool:
            if shape.element:
                return isinstance(node, cst.Name) and node.value == shape.element
            return element_of(node, shape.index) is not None

        class _Scalar(cst.CSTTransformer):
            def visit_Call(self, node: cst.Call) -> bool:
                if is_conversion(node) and is_element(conversion_operand(node)):
                    return False
                return True

            def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
                if is_conversion(original) and is_element(conversion_operand(original)):
                    if isinstance(original.func, cst.Name):
                        return updated.with_changes(args=[cst.Arg(cst.Name(var))])
                    return cst.Name(var)
                return updated

            def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
                nonlocal ok
                if original.value in (shape.element, shape.index):
                    ok = False
                return updated

        new_elt = match.comp.elt.visit(_Scalar())
        if not ok:
            return None
        sliced = bound is not None and (sliced_owner or owner != shape.owner)
        text = f"{owner}[:{bound}]" if sliced else owner
        text = f"{text}.flatten()" if flatten else text
        return f"{text}.tolist()", _code(new_elt), var

    def _allocates(self, vector: cst.BaseExpression) -> bool:
        """Whether the vectorized expression certainly makes a new tensor (not a view of an input)."""
        found = False

        class _Find(cst.CSTVisitor):
            def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
                nonlocal found
                found = True

            def visit_Comparison(self, node: cst.Comparison) -> None:
                nonlocal found
                found = True

            def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
                nonlocal found
                found = True

            def visit_Call(self, node: cst.Call) -> None:
                nonlocal found
                if isinstance(node.func, cst.Attribute) and node.func.attr.value not in _NON_ALLOCATING:
                    found = True
                if isinstance(node.func, cst.Name):
                    found = True

        vector.visit(_Find())
        return found

    def _forms(  # type: ignore[no-untyped-def]
        self, match: _Match, vector: cst.BaseExpression, cast_vector: cst.BaseExpression, scalar, ctx: RuleContext
    ) -> list[tuple[str, str]]:
        """(description, replacement code) for one way of reading the elements."""
        torch = ctx.torch
        v = _atom(vector)
        kind = _py_kind(match.comp.elt)
        forms: list[tuple[str, str]] = []
        if match.form == "list":
            forms.append(("one .tolist()", f"{v}.tolist()"))
            if scalar is not None:
                iterable, elt, var = scalar
                if elt != var:
                    forms.append(("one .tolist(), then Python", f"[{elt} for {var} in {iterable}]"))
        elif match.form == "tensor":
            # torch.tensor of Python floats is a tensor of the default float dtype; of ints or
            # bools it is int64 / bool -- but an empty list gives the float dtype, so only a float
            # element (or an explicit dtype=) has a single cast that is always right
            if match.dtype:
                dtype: str | None = match.dtype
            elif kind == "float":
                # whatever module set it (`torch.set_default_dtype` may run anywhere)
                dtype = f"{torch}.get_default_dtype()"
            else:
                dtype = None
            # and on the default device, which the CPU is unless the program moved it
            # (`torch.set_default_device("cuda")`): with no `device=` only the rebuilt list below
            # lands where the old one did on every machine
            if dtype is not None and match.device:
                device = match.device
                c = _atom(cast_vector)
                if not self._allocates(cast_vector):
                    code = f"{c}.detach().to({device}, {dtype}, copy=True)"
                else:
                    code = f"{c}.detach().to({device}, {dtype})"
                forms.append(("one tensor expression", code))
            kwargs = "".join(f", {k}={val}" for k, val in (("dtype", match.dtype), ("device", match.device)) if val)
            forms.append(("one .tolist(), rebuilt once", f"{torch}.tensor({v}.tolist(){kwargs})"))
            if scalar is not None:
                iterable, elt, var = scalar
                inner = iterable if elt == var else f"[{elt} for {var} in {iterable}]"
                forms.append(("one .tolist(), then Python", f"{torch}.tensor({inner}{kwargs})"))
        elif match.form == "numpy":
            np = ctx.facts.numpy
            forms.append(("one .tolist(), rebuilt once", f"{np}.array({v}.tolist())"))
            if scalar is not None:
                iterable, elt, var = scalar
                inner = iterable if elt == var else f"[{elt} for {var} in {iterable}]"
                forms.append(("one .tolist(), then Python", f"{np}.array({inner})"))
        else:
            reduction = match.form
            if reduction == "sum":
                if match.start_float:
                    forms.append(("one reduction", f"{v}.sum(dtype={torch}.float64).item()"))
                else:
                    forms.append(("one reduction", f"{v}.sum().item()"))
            elif reduction in ("any", "all") or kind in ("int", "bool"):
                # Python's max/min of floats depend on where a NaN sits; a tensor reduction
                # propagates it: only integer and bool values reduce on the device
                forms.append(("one reduction", f"{v}.{reduction}().item()"))
            if scalar is not None:
                iterable, elt, var = scalar
                if match.start is not None:
                    inner = iterable if elt == var else f"({elt} for {var} in {iterable})"
                    code = f"{reduction}({inner}, {match.start})"
                else:
                    code = f"{reduction}({iterable})" if elt == var else f"{reduction}({elt} for {var} in {iterable})"
                forms.append(("one .tolist(), Python reduction", code))
        return forms

    def _candidates(self, match: _Match, indexed: set[str], ctx: RuleContext) -> list[Candidate]:
        shape = match.shape
        if shape.extent is not None:
            extent_code = _code(shape.extent)
            bounds = [(extent_code, "", True), (f"max({extent_code}, 0)", ", extent clamped at 0", True)]
        else:
            it = match.comp.for_in.iter
            owner_extent = _code(it.args[-1].value) if isinstance(it, cst.Call) and it.args else None
            bounds = [(owner_extent, "", False)]
        seen: set[str] = set()
        candidates: list[Candidate] = []
        ladder: list[tuple[int, str, str]] = []
        for flatten in (False, True):
            for bound, bound_note, sliced_owner in bounds:
                vector = self._vector(match, bound, flatten, sliced_owner)
                scalar = self._scalar(match, bound, flatten, sliced_owner)
                cast_vector = self._vector(match, bound, flatten, sliced_owner, cast_form=True)
                for rank, (description, code) in enumerate(self._forms(match, vector, cast_vector, scalar, ctx)):
                    note = description + (" of the flattened tensor" if flatten else "") + bound_note
                    ladder.append((rank, note, code))
        # most idiomatic form first, across the flatten and extent variants
        ladder.sort(key=lambda entry: entry[0])
        for _, description, code in ladder:
            if code in seen:
                continue
            seen.add(code)
            candidates.append(self._candidate(match, indexed, description, code, ctx))
        return candidates

    def _candidate(self, match: _Match, indexed: set[str], description: str, code: str, ctx: RuleContext) -> Candidate:
        replacement = cst.parse_expression(code)
        target = match.target
        if getattr(target, "lpar", None):
            replacement = replacement.with_changes(lpar=target.lpar, rpar=target.rpar)
        old_code = f"result = {_code(target.with_changes(lpar=[], rpar=[]))}\n"
        new_code = f"result = {code}\n"
        shape = match.shape
        exclude = {match.var}
        used = names_used(target) | names_used(match.comp.for_in.iter)
        inputs = []
        evidence = ctx.evidence(enclosing_scope(target, ctx.parents))
        pinned = self._pinned_ranks(target)
        for name in sorted(n for n in used - exclude if n not in BUILTIN_NAMES and n not in ctx.module_names):
            if name in indexed:  # positive tensor evidence was required for these
                # every rank unless the function pins one (a column's `a[i]` is 1-D: see TFV004)
                inputs.append(InputSpec(name, Kind.TENSOR, ranks=(pinned[name],)) if name in pinned else InputSpec(name, Kind.TENSOR))
            elif isinstance(shape.extent, cst.Name) and shape.extent.value == name:
                inputs.append(InputSpec(name, Kind.INT, count=True))
            else:
                # the owner of `len(y)` that is not indexed, a scale: what the evidence allows
                inputs.append(evidence.name(name, at=target).spec())
        kernel = Kernel(
            old=old_code,
            new=new_code,
            inputs=tuple(inputs),
            outputs=("result",),
            modules=ctx.kernel_modules(),
            reorders_float_reduction=match.form == "sum",
            note="the expression, verbatim, bound to `result`",
        )
        return Candidate(description, (Edit(target, replacement),), kernel, ctx.imports if ctx.torch in code else ())
