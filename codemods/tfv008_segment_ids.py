"""TFV008 segment-ids: ``torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])`` -- the
id of each part repeated over its rows, one fill per part -- is one ``repeat_interleave``."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable

import libcst as cst
from libcst.metadata import MetadataWrapper

from torchfix.codemods.analysis import (
    RuleContext,
    assigned_names,
    comments_in,
    enclosing_scope,
    name_nodes,
    names_used,
    statement_code,
)
from torchfix.codemods.base import Candidate, Edit, Example, Proposal, Rule
from torchfix.codemods.loops.module import ModuleContext, shadowed_builtins
from torchfix.codemods.syntax import SyntaxIndex
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

CODE = "TFV008"


@dataclass(frozen=True)
class _Fills:
    """One matched ``target = torch.cat([torch.full_like(part, index) for ... in enumerate(parts)])``."""

    statement: cst.SimpleStatementLine
    #: the name the result is bound to
    target: str
    #: the concatenation's call
    call: cst.Call
    #: the comprehension's loop: ``i, (src, _)`` over ``enumerate(indices)``
    comprehension: cst.CompFor
    #: the sequence ``enumerate`` walks (a name: the checker builds it)
    sequence: str
    #: what each fill is shaped like (``src``, ``b[:, :1]``), and whether it reads the position
    source: cst.BaseExpression
    reads_index: bool
    #: how many names an item unpacks into (``(src, _)``: 2), or 0 where it is one name
    width: int
    #: the fills' ``dtype=``, where given (then every fill has it, whatever the parts')
    dtype: cst.BaseExpression | None = None


def _dotted(node: cst.BaseExpression) -> bool:
    """Whether ``node`` is a name or a chain of attributes of one (``torch.float32``)."""
    while isinstance(node, cst.Attribute):
        node = node.value
    return isinstance(node, cst.Name)


def _names(target: cst.BaseExpression) -> list[str] | None:
    """The names of a flat tuple target (``(src, _)``), or None for anything else."""
    if not isinstance(target, (cst.Tuple, cst.List)):
        return None
    names = []
    for element in target.elements:
        if not isinstance(element, cst.Element) or not isinstance(element.value, cst.Name):
            return None  # (a starred name takes a list of the rest)
        names.append(element.value.value)
    return names


class SegmentIds(Rule):
    code = CODE
    tensor_code_only = True
    name = "segment-ids"
    summary = "The id of each part of a list filled over its rows one part at a time, then concatenated."
    docs = """
    ## What it does
    Finds `torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)])` -- each part's
    position in the list, repeated over the part's rows -- bound to a name: the batch index of every
    matched prediction in DETR-style losses (`for i, (src, _) in enumerate(indices)`). It rewrites
    it into one `repeat_interleave` of `arange(len(parts))` by the parts' lengths.

    ## Why is this bad?
    One `full_like` per part: an allocation and a fill (a kernel launch each on a GPU) for a
    result one `repeat_interleave` makes, and every part is kept alive until the `cat`.

    ## Example
    ```python
    batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    ```

    ## Use instead
    ```python
    batch_idx_parts = [src for src, _ in indices]
    batch_idx = torch.cat(batch_idx_parts)
    batch_idx = torch.arange(len(batch_idx_parts), device=batch_idx.device).repeat_interleave(
        torch.tensor([len(part) for part in batch_idx_parts], device=batch_idx.device), output_size=len(batch_idx),
    ).view(-1, *[1] * (batch_idx.dim() - 1)).expand_as(batch_idx).to(batch_idx.dtype, copy=True)
    ```
    The concatenation of the parts themselves gives the result's shape, dtype (promoted as `cat`
    promotes the fills) and device, whatever the parts' rank; the ids are cast into that dtype
    once (`i != 0` for bool parts, as `full_like` fills them). `output_size` keeps
    `repeat_interleave` from waiting on a GPU for the total length. The parts are walked once,
    as the comprehension walked them: a generator works the same.

    The fills may be shaped like any expression of the item (`torch.full_like(b[:, :1], i)`:
    one column per box); the parts are then that expression of each item, evaluated once each
    as before. With `dtype=` the ids are cast into it instead.

    ## When it stays silent
    - The fill is not the position itself (`i + 1`, `-1`), `full_like` is given a device (the
      parts may then sit on several devices, which the `cat` of them refuses), or `enumerate`
      starts elsewhere.
    - The fills are not shaped like the item (`torch.full_like(template, i)`).
    - The concatenation is along another dimension, or writes into `out=`.
    - The comprehension filters (`if`), nests, or the sequence is not a plain name.
    - The result is not bound to a name by a statement of its own in a function's body.
    - `len` or `torch` is bound by the module's code (a local `len = ...` would be read before
      it is set).

    ## Limits
    - Parts of mixed dtypes: the checker draws the parts of one list with one dtype. Where a
      list mixes bool parts with integer ones (or float16 parts with float32 ones), `full_like`
      rounds the position into the narrower dtype first (`True` for 2) and the rewrite does not.
    - The parts are read after the whole sequence is walked: a generator that yields one buffer
      and resizes it in place between items (which the comprehension read at once) gives other
      parts. Like TFV003's pieces, each part is taken to be its own tensor.
    - Quantized parts: `.to(dtype)` of the ids into a quantized dtype raises where `full_like`
      fills one; the checker draws no quantized tensors.
    """
    examples = (
        Example(
            """
            import torch

            def batch_index(indices):
                batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
                return batch_idx
            """,
            """
            import torch

            def batch_index(indices):
                batch_idx_parts = [src for src, _ in indices]
                batch_idx = torch.cat(batch_idx_parts)
                batch_idx = torch.arange(len(batch_idx_parts), device=batch_idx.device).repeat_interleave(
                    torch.tensor([len(part) for part in batch_idx_parts], device=batch_idx.device), output_size=len(batch_idx),
                ).view(-1, *[1] * (batch_idx.dim() - 1)).expand_as(batch_idx).to(batch_idx.dtype, copy=True)
                return batch_idx
            """,
            id="detr-batch-index",
        ),
        Example(
            """
            import torch

            def segment_ids(parts):
                ids = torch.cat([torch.full_like(p, i) for i, p in enumerate(parts)], dim=0)
                return ids
            """,
            """
            import torch

            def segment_ids(parts):
                ids_parts = [p for p in parts]
                ids = torch.cat(ids_parts)
                ids = torch.arange(len(ids_parts), device=ids.device).repeat_interleave(
                    torch.tensor([len(part) for part in ids_parts], device=ids.device), output_size=len(ids),
                ).view(-1, *[1] * (ids.dim() - 1)).expand_as(ids).to(ids.dtype, copy=True)
                return ids
            """,
            id="list-of-parts",
        ),
        Example(
            """
            import torch

            def offsets(parts):
                ids = torch.cat([torch.full_like(p, i + 1) for i, p in enumerate(parts)])
                return ids
            """,
            None,
            id="shifted-fill",
        ),
    )

    required_bytes = ((b"full_like",), (b"enumerate",))

    @classmethod
    def might_match_tree(cls, index: SyntaxIndex) -> bool:
        """A call whose first argument is a comprehension over ``enumerate(...)`` of ``*.full_like(...)``."""
        for call in index.calls:
            if not call.args or not isinstance(call.args[0], ast.ListComp):
                continue
            comprehension = call.args[0]
            element = comprehension.elt
            func = element.func if isinstance(element, ast.Call) else None
            if (
                (isinstance(func, ast.Attribute) and func.attr == "full_like" or isinstance(func, ast.Name) and func.id == "full_like")
                and len(comprehension.generators) == 1 and isinstance(comprehension.generators[0].iter, ast.Call)
            ):
                return True
        return False

    def propose(self, wrapper: MetadataWrapper) -> Iterable[Proposal]:
        context = ModuleContext.of(wrapper)
        matches = [found for found in map(lambda call: self._match(call, context), context.nodes.of_type(cst.Call)) if found]
        if not matches:
            return []
        ctx = RuleContext.from_wrapper(wrapper)
        proposals = [self._propose(found, ctx) for found in matches]
        return sorted(proposals, key=lambda p: (p.line, p.column))

    # ------------------------------------------------------------------ matching

    def _match(self, call: cst.CSTNode, context: ModuleContext) -> _Fills | None:
        assert isinstance(call, cst.Call)
        if not self._is(call.func, "torch.cat", context) or not call.args:
            return None
        first, *rest = call.args
        if first.keyword is not None or first.star or not isinstance(first.value, cst.ListComp):
            return None  # (a generator: `torch.cat` takes a sequence only, and raises)
        # along dimension 0 only: `cat(xs, 0)` / `cat(xs, dim=0)`
        if len(rest) > 1 or any(a.star or (a.keyword is not None and a.keyword.value != "dim") for a in rest):
            return None
        if rest and not (isinstance(rest[0].value, cst.Integer) and rest[0].value.evaluated_value == 0):
            return None
        comprehension = first.value
        loop = comprehension.for_in
        if loop.inner_for_in is not None or loop.ifs or loop.asynchronous is not None:
            return None
        walked = loop.iter
        if not (
            isinstance(walked, cst.Call) and isinstance(walked.func, cst.Name) and walked.func.value == "enumerate"
            and "enumerate" not in shadowed_builtins(context)
            and len(walked.args) == 1 and walked.args[0].keyword is None and not walked.args[0].star
            and isinstance(walked.args[0].value, cst.Name)
        ):
            return None
        sequence = walked.args[0].value.value
        outer = loop.target
        if not (isinstance(outer, cst.Tuple) and len(outer.elements) == 2 and all(isinstance(e, cst.Element) for e in outer.elements)):
            return None
        first_name, item = outer.elements[0].value, outer.elements[1].value
        if not isinstance(first_name, cst.Name):
            return None
        index = first_name.value
        if isinstance(item, cst.Name):
            width, names = 0, [index, item.value]
        else:
            inner = _names(item)
            if inner is None or not inner:
                return None
            width, names = len(inner), [index, *inner]
        if names.count(index) != 1 or sequence in names:
            return None
        element = comprehension.elt
        if not (isinstance(element, cst.Call) and self._is(element.func, "torch.full_like", context)):
            return None
        positional = [a for a in element.args if a.keyword is None]
        keywords = {a.keyword.value: a.value for a in element.args if a.keyword is not None}
        if any(a.star for a in element.args) or not positional or len(positional) > 2:
            return None
        source = positional[0].value
        fill = positional[1].value if len(positional) == 2 else keywords.pop("fill_value", None)
        if not (isinstance(fill, cst.Name) and fill.value == index):
            return None  # (`i + 1`, `-1`: not the position)
        dtype = keywords.pop("dtype", None)
        if keywords:
            return None  # (`device=`: the parts may then sit on several devices, which `cat` refuses)
        if dtype is not None and (not _dotted(dtype) or names_used(dtype) & set(names)):
            return None  # (evaluated once after the parts, not once per part)
        read = names_used(source)
        if not read & set(names[1:]) or names_used(source) & {sequence}:
            return None  # (a fill shaped like something else than the item)
        statement = self._statement(call, context)
        if statement is None or "len" in shadowed_builtins(context) or not self._in_a_function(statement, context):
            return None
        assign = statement.body[0]
        assert isinstance(assign, cst.Assign)
        target = assign.targets[0].target.value  # type: ignore[attr-defined]
        if target == sequence:
            return None  # (`indices = torch.cat(...)`: the new lines read it after the first binds it)
        return _Fills(statement, target, call, loop, sequence, source, index in read, width, dtype)

    @staticmethod
    def _is(func: cst.BaseExpression, qualified: str, context: ModuleContext) -> bool:
        """Whether ``func`` is ``qualified`` here, through a name the module never assigns, and
        where ``torch`` -- which the new lines call -- names the module everywhere or nowhere."""
        if context.qualified(func) != qualified:
            return False
        root = func
        while isinstance(root, cst.Attribute):
            root = root.value
        rebound = assigned_names(context.module) | {p.name.value for p in context.nodes.of_type(cst.Param)}  # type: ignore[attr-defined]
        return isinstance(root, cst.Name) and root.value not in rebound and "torch" not in rebound

    @staticmethod
    def _in_a_function(statement: cst.SimpleStatementLine, context: ModuleContext) -> bool:
        """Whether ``statement`` runs in a function's body (a class body or the module would
        keep the parts list as an attribute or a global; an ``Enum`` as a member)."""
        current = context.parents.get(statement)
        while current is not None and not isinstance(current, cst.FunctionDef):
            if isinstance(current, (cst.ClassDef, cst.Module)):
                return False
            current = context.parents.get(current)
        return current is not None

    @staticmethod
    def _statement(call: cst.Call, context: ModuleContext) -> cst.SimpleStatementLine | None:
        """The statement ``name = <call>`` holding ``call``, alone on its line in a block."""
        assign = context.parents.get(call)
        if not (isinstance(assign, cst.Assign) and assign.value is call and len(assign.targets) == 1):
            return None
        if not isinstance(assign.targets[0].target, cst.Name):
            return None
        line = context.parents.get(assign)
        if not (isinstance(line, cst.SimpleStatementLine) and len(line.body) == 1):
            return None
        if not isinstance(context.parents.get(line), (cst.IndentedBlock, cst.Module)):
            return None
        return line

    # ------------------------------------------------------------------ proposing

    def _propose(self, fills: _Fills, ctx: RuleContext) -> Proposal:
        message = "each part's position is filled over its rows one part at a time: one `repeat_interleave` does it"
        torch = ctx.torch
        scope = enclosing_scope(fills.statement, ctx.parents)
        taken = {n.value for n in name_nodes(scope)} | ctx.module_names
        parts = next(n for n in (f"{fills.target}_parts", *(f"{fills.target}_parts{k}" for k in range(1, 100))) if n not in taken)
        target = fills.target
        code = cst.Module(body=[]).code_for_node
        source = code(fills.source)
        if fills.reads_index:
            # the parts as the comprehension walked them, position and all
            listed = f"[{source} for {code(fills.comprehension.target)} in {code(fills.comprehension.iter)}]"
        else:
            # (a comprehension, not `list(...)`: that asks an iterable for its length first)
            item = code(fills.comprehension.target.elements[1].value)  # type: ignore[attr-defined]
            listed = f"[{source} for {item.strip('()')} in {fills.sequence}]"
        dtype = code(fills.dtype) if fills.dtype is not None else f"{target}.dtype"
        lines = [
            f"{parts} = {listed}",
            f"{target} = {torch}.cat({parts})",
        ]
        config = ctx.module.config_for_parsing
        newline, indent = config.default_newline, config.default_indent
        lines.append(
            f"{target} = {torch}.arange(len({parts}), device={target}.device).repeat_interleave({newline}"
            f"{indent}{torch}.tensor([len(part) for part in {parts}], device={target}.device), output_size=len({target}),{newline}"
            f").view(-1, *[1] * ({target}.dim() - 1)).expand_as({target}).to({dtype}, copy=True)"
        )
        statements = [cst.parse_statement(line + newline, config=config) for line in lines]
        leading = list(fills.statement.leading_lines) + comments_in(fills.statement.with_changes(leading_lines=()))
        statements[0] = statements[0].with_changes(leading_lines=leading)
        # the checker builds the sequence from its parts: each item is the part itself, or a tuple
        # holding it at every position (the other names are never read)
        prelude = "" if not fills.width else f"{fills.sequence} = [({fills.sequence}_part,) * {fills.width} for {fills.sequence}_part in {fills.sequence}]\n"
        kernel = Kernel(
            old=prelude + statement_code(ctx.module, fills.statement),
            new=prelude + "".join(statement_code(ctx.module, s) for s in statements),
            inputs=(InputSpec(fills.sequence, Kind.TENSOR, ranks=(1, 2, 3), per_step=True),),
            outputs=(target,),
            modules=ctx.kernel_modules(),
            note=(
                f"the statement, verbatim; `{fills.sequence}` is a list of tensors"
                + (f", each item a tuple holding its tensor at all {fills.width} places" if fills.width else "")
            ),
        )
        description = "one repeat_interleave of the parts' positions by their lengths"
        candidate = Candidate(description, (Edit(fills.statement, cst.FlattenSentinel(statements)),), kernel, imports=ctx.imports)
        return ctx.proposal(CODE, fills.statement, message, (candidate,))
