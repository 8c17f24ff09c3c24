"""Two Python functions -> one verification kernel (for ``python -m torchfix.equivalence``).

The function sources are *parsed* here (to read the parameters) and never run in this process:
each snippet carries its whole source file, which the sandboxed worker executes -- after the
static vetting every kernel gets (``equivalence.policy``: imports of torch, numpy, math and a few
``typing`` names only, known-pure callees only, no classes, no dunders) -- then calls the function:

    from __future__ import annotations
    _tf_args = (x, w)          # the generated inputs, captured before the module's globals
    <the file's source>
    result = f(*_tf_args)

Parameters annotated ``int``/``float``/``bool`` get values of that type; ``torch.Tensor``
(``Tensor``) ones get tensors, ``np.ndarray`` ones arrays; unannotated ones (or other annotations)
get Kind.ANY -- Python numbers, arrays or lists, as the old function's own domain decides. Arrays
are drawn of ranks 0-3, and of the ranks the function's own code shows a parameter needs past
them (``x[:, :, :, 0]``, ``n, c, h, w = x.shape``: 4): a checker that drew no 4-D input would
find no input on which image code runs.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torchfix.equivalence.kernel import InputSpec, Kernel, Kind


class UsageError(Exception):
    """Bad command-line input: a missing file or function, mismatched parameters."""


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    keyword_only: bool = False


def _kind(annotation: ast.expr | None) -> Kind:
    if annotation is None:
        return Kind.ANY
    text = ast.unparse(annotation).strip("'\"")
    if text == "int":
        return Kind.INT
    if text == "float":
        return Kind.FLOAT
    if text == "bool":
        return Kind.BOOL
    if text in ("torch.Tensor", "Tensor", "torch.FloatTensor", "torch.LongTensor"):
        return Kind.TENSOR
    if text in ("np.ndarray", "numpy.ndarray", "ndarray"):
        return Kind.NDARRAY
    return Kind.ANY


#: the ranks every array parameter is drawn with, and the highest a parameter's own code may add
_DEFAULT_RANKS = (0, 1, 2, 3)
_MAX_RANK = 6


def _shape_owner(value: ast.expr) -> str | None:
    """``x`` of ``x.shape`` / ``x.size()``, else None."""
    if isinstance(value, ast.Attribute) and value.attr == "shape" and isinstance(value.value, ast.Name):
        return value.value.id
    if (
        isinstance(value, ast.Call) and not value.args and not value.keywords
        and isinstance(value.func, ast.Attribute) and value.func.attr == "size" and isinstance(value.func.value, ast.Name)
    ):
        return value.func.value.id
    return None


def rank_hints(func: ast.FunctionDef) -> dict[str, tuple[int, ...]]:
    """Ranks past :data:`_DEFAULT_RANKS` that the function's code shows a name needs: as many
    dimensions as a subscript of it indexes (``x[:, :, :, 0]``: 4; ``None`` adds an axis and
    ``...`` says nothing), or as unpacking its shape names (``n, c, h, w = x.shape``). Only
    added to what is drawn, never taken from it: a name the function rebinds may hold another
    rank at the subscript, and the old code's own domain still decides."""
    needs: dict[str, set[int]] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            elements = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(e, ast.Constant) and e.value is Ellipsis for e in elements):
                continue
            used = sum(1 for e in elements if not (isinstance(e, ast.Constant) and e.value is None))
            needs.setdefault(node.value.id, set()).add(used)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], (ast.Tuple, ast.List)):
            owner = _shape_owner(node.value)
            names = node.targets[0].elts
            if owner is not None and not any(isinstance(e, ast.Starred) for e in names):
                needs.setdefault(owner, set()).add(len(names))
    hints = {name: tuple(sorted(r for r in ranks if max(_DEFAULT_RANKS) < r <= _MAX_RANK)) for name, ranks in needs.items()}
    return {name: ranks for name, ranks in hints.items() if ranks}


def find_function(source: str, name: str, label: str) -> ast.FunctionDef:
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise UsageError(f"{label}: syntax error: {exc}") from None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            if isinstance(node, ast.AsyncFunctionDef):
                raise UsageError(f"{label}: {name} is async; only plain functions can be checked")
            return node  # the last definition wins at run time; the first is fine for parameters
    raise UsageError(f"{label}: no top-level function named {name!r}")


def parameters(func: ast.FunctionDef, label: str) -> list[Param]:
    args = func.args
    if args.vararg or args.kwarg:
        raise UsageError(f"{label}: *args / **kwargs parameters are not supported")
    params = [Param(a.arg, _kind(a.annotation)) for a in args.posonlyargs + args.args]
    params += [Param(a.arg, _kind(a.annotation), keyword_only=True) for a in args.kwonlyargs]
    return params


def _strip_future(source: str) -> str:
    """Drop ``from __future__`` imports (the snippet puts ``annotations`` first itself)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "__future__":
            for i in range(node.lineno - 1, node.end_lineno or node.lineno):
                lines[i] = "\n"
    return "".join(lines)


def _snippet(source: str, func: str, params: list[Param]) -> str:
    positional = [p.name for p in params if not p.keyword_only]
    keyword = [p.name for p in params if p.keyword_only]
    args = "(" + "".join(f"{n}, " for n in positional) + ")"
    kwargs = "{" + ", ".join(f"{n!r}: {n}" for n in keyword) + "}"
    return (
        "from __future__ import annotations\n"
        f"_tf_args, _tf_kwargs = {args}, {kwargs}\n"
        + _strip_future(source).rstrip("\n")
        + f"\nresult = {func}(*_tf_args, **_tf_kwargs)\n"
    )


def kernel_from_functions(
    old_source: str, old_name: str, new_source: str, new_name: str,
    gradients: bool = True, old_label: str = "old", new_label: str = "new",
) -> Kernel:
    old_func = find_function(old_source, old_name, old_label)
    new_func = find_function(new_source, new_name, new_label)
    params = parameters(old_func, old_label)
    new_params = parameters(new_func, new_label)
    if [p.name for p in new_params if p.keyword_only] != [p.name for p in params if p.keyword_only] or len(
        new_params
    ) != len(params):
        raise UsageError(
            f"{old_label}:{old_name}({', '.join(p.name for p in params)}) and "
            f"{new_label}:{new_name}({', '.join(p.name for p in new_params)}) take different parameters"
        )
    for p in params:
        if p.name in ("result", "_tf_args", "_tf_kwargs"):
            raise UsageError(f"parameter name {p.name!r} is reserved")
    hints = rank_hints(old_func)
    inputs = tuple(InputSpec(p.name, p.kind, ranks=_DEFAULT_RANKS + hints.get(p.name, ())) for p in params)
    return Kernel(
        _snippet(old_source, old_name, params),
        _snippet(new_source, new_name, params),
        inputs,
        ("result",),
        reorders_float_reduction=False,
        note=f"{old_label}:{old_name} vs {new_label}:{new_name}",
        gradients=gradients,
    )
