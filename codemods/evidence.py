"""What a name can hold: the kinds a kernel input may take, from what the code does with it.

Legacy code is rarely annotated, and a list, a NumPy array and a tensor iterate, index and add
alike: ``int(n * ratios[i])`` is a device sync when ``n`` is a tensor and plain Python arithmetic
when ``sizes`` and ``ratios`` came from ``sorted(...)``. So every name a rewrite reads gets the set
of kinds (``equivalence.kernel.Kind``) that the evidence in its function allows, and the checker
tries each of them. Evidence comes both ways:

* **What binds it.** ``sorted(...)``, ``list(...)``, a list display or comprehension, ``range(...)``
  (a list of ints, as far as the checker is concerned), ``.tolist()``: a list (or a Python number:
  ``.tolist()`` of a 0-d tensor); ``enumerate`` / ``zip`` / ``for`` over such: their elements; a
  dict display or comprehension: a dict; a generator expression: a one-shot iterator; ``np.*`` and
  ``.numpy()``: an ndarray (or a NumPy scalar); ``torch.*`` (but those returning a tuple, a bool, a
  module...), ``F.*``, a tensor method on a tensor: a tensor; ``len``, ``int``, ``.item()``,
  ``.size(0)``: a Python number; an annotation (``torch.Tensor``, ``int``, ``float``, ``list``,
  ``np.ndarray``, ``dict``).
* **What uses it.** A method or attribute only tensors have (``.detach()``, ``.size(...)``,
  ``.unsqueeze``), or being the first argument of a ``torch`` function that takes tensors only
  (``torch.sum(x)``, not ``torch.add``, which takes a Python number too) or of an ``F.*``
  function: a tensor. ``.item()``, ``.shape``, ``.sum()``: a tensor, an ndarray or a NumPy scalar.
  ``.values()`` / ``.items()`` / a string key: a dict. ``.append``: a list. ``len(x)``: something
  sized. A name that is only ever iterated may be a one-shot iterator.

Uses narrow what the bindings allow. The analysis is per function and mostly flow-insensitive,
conservative where that matters: a binding later in the function than the point asked about never
counts, an unconditional assignment at the function's top level hides the bindings before it, and
when the bindings that reach the point disagree about the kind, no use narrows them (a use may
belong to another binding). When nothing is known, every kind in ``UNKNOWN_KINDS`` is allowed.

``name_kinds(name, scope)`` is the whole interface: an :class:`Evidence` with the allowed kinds,
what was found, and the dict keys seen. ``expression_kinds(expr, scope)`` answers the same for an
expression (is ``n * ratios[i]`` a tensor?).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Iterable, Mapping

import libcst as cst
import libcst.matchers as m

from torchfix.codemods.analysis import all_nodes, comprehension_variables, dotted, rebound_elsewhere, within
from torchfix.equivalence.kernel import UNKNOWN_KINDS, InputSpec, Kind, expand_kinds

T, ND, LST, I, FL, B, NS, D, IT = (
    Kind.TENSOR, Kind.NDARRAY, Kind.LIST, Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NUMPY_SCALAR, Kind.DICT, Kind.ITERATOR,
)
NUMBERS = frozenset({I, FL, B})
ARRAYS = frozenset({T, ND, NS})
#: what ``x[k]`` may be applied to (a NumPy scalar takes ``x[()]``)
SUBSCRIPTABLE = frozenset({T, ND, LST, D, NS})
#: what ``x[a, b]`` (several indices at once) may be applied to: an array. A list raises on a
#: tuple index and a NumPy scalar has no such dimensions; a dict keyed by tuples joins the objects
#: with a ``__getitem__`` of their own, which are outside the kinds the checker builds anyway
MULTI_INDEXABLE = frozenset({T, ND})
#: what ``len(x)`` accepts
SIZED = frozenset({T, ND, LST, D})
#: what ``for v in x`` accepts
ITERABLE = frozenset({T, ND, LST, D, IT})
UNKNOWN = frozenset(UNKNOWN_KINDS)

#: methods and attributes torch.Tensor has and no other kind the checker builds has (ndarray,
#: NumPy scalars, lists, dicts, iterators, Python numbers): any use of one shows a tensor.
#: (``size`` is an int attribute of an ndarray: it shows a tensor only when called; NumPy 2 arrays
#: have ``device``.) ``tests/test_evidence.py`` holds the table to the real types.
TENSOR_ONLY_ATTRIBUTES = frozenset(
    {"numel", "dim", "ndimension", "nelement", "detach", "detach_", "cpu", "cuda", "to", "backward",
     "requires_grad", "requires_grad_", "is_cuda", "unsqueeze", "unsqueeze_", "float", "double", "long", "int",
     "half", "bool", "bfloat16", "softmax", "log_softmax", "masked_fill", "masked_fill_", "index_select",
     "new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "element_size", "data_ptr", "grad",
     "grad_fn", "clone", "contiguous", "is_contiguous", "is_floating_point", "type_as", "expand", "expand_as",
     "permute", "narrow", "scatter_add_", "scatter_", "index_add_", "index_put_", "index_fill_", "bincount",
     "topk", "numpy", "add_", "sub_", "mul_", "div_", "zero_", "fill_", "copy_", "clamp", "clamp_", "abs", "exp",
     "log", "sqrt", "sigmoid", "relu", "view_as", "masked_select", "gather", "unbind", "chunk", "split",
     "stride", "storage", "is_leaf", "retain_grad", "register_hook", "pin_memory", "eq", "ne", "lt",
     "le", "gt", "ge", "isnan", "isinf", "isfinite", "logical_not", "norm", "pow", "mm", "matmul",
     "bmm", "t"}
)
#: methods that show a tensor when called (``x.size(0)``; an ndarray's ``size`` is an int)
TENSOR_ONLY_CALLS = frozenset({"size"})
#: attributes some kinds have and others lack: using one leaves only those kinds
ATTRIBUTE_KINDS: dict[str, frozenset[Kind]] = {
    **{name: ARRAYS for name in (
        "item", "tolist", "shape", "dtype", "ndim", "T", "reshape", "sum", "mean", "max", "min", "argmax",
        "argmin", "std", "var", "prod", "cumsum", "flatten", "squeeze", "transpose", "all", "any", "round",
        "nonzero", "clip", "view", "ravel",
    )},
    "astype": frozenset({ND, NS}),
    "sort": frozenset({T, ND, NS, LST}),
    "copy": frozenset({ND, NS, LST, D}),
    "values": frozenset({T, D}),
    "items": frozenset({D}),
    "keys": frozenset({D}),
    "get": frozenset({D}),
    "append": frozenset({LST}),
    "extend": frozenset({LST}),
    "insert": frozenset({LST}),
    "remove": frozenset({LST}),
    "count": frozenset({LST}),
    "pop": frozenset({LST, D}),
}

#: torch functions whose first positional argument must be a tensor: a list, an ndarray, a NumPy
#: scalar or a Python number there raises. ``torch.add`` / ``mul`` / ``pow`` ... are not here:
#: they take a Python number too. ``tests/test_evidence.py`` holds every entry to torch.
TORCH_TENSOR_INPUT = frozenset(
    """abs absolute acos acosh addcdiv addcmul addmm all allclose amax amin angle any argmax argmin argsort
    argwhere asin asinh atan atan2 atanh bernoulli ceil chunk clamp clamp_max clamp_min clip clone conj cos cosh
    count_nonzero cummax cummin cumprod cumsum deg2rad det diag diag_embed diagonal diff digamma dist empty_like
    eq equal erf erfc erfinv exp exp2 expm1 flatten flip fliplr flipud floor fmax fmin fmod frac full_like gather
    ge greater gt heaviside histc hypot index_select inner inverse isclose isfinite isinf isnan isneginf isposinf
    isreal kron kthvalue le lerp less lgamma log log10 log1p log2 log_softmax logaddexp logcumsumexp logdet
    logical_and logical_not logical_or logical_xor logit logsumexp lt masked_fill masked_select matmul max maximum
    mean median min minimum mm mode movedim msort multinomial nan_to_num nanmean nanmedian nanquantile nansum
    narrow ne neg negative nonzero norm not_equal numel ones_like permute positive prod quantile rad2deg rand_like
    randint_like randn_like ravel reciprocal relu repeat_interleave roll rot90 round rsqrt scatter scatter_add
    searchsorted select sgn sigmoid sign signbit sin sinc sinh slice_scatter softmax sort split sqrt square
    squeeze std std_mean sum swapaxes swapdims t take take_along_dim tan tanh tensor_split tile topk trace
    transpose trapezoid tril triu trunc unbind unflatten unique unique_consecutive unsqueeze var var_mean vsplit
    where zeros_like copysign nextafter ldexp""".split()
)
#: torch functions whose result is not one tensor: a Python value, a tuple, a module, a context
#: manager, a function. ``torch.max(x)`` is a tensor, ``torch.max(x, 1)`` a tuple: see
#: :data:`_TORCH_TENSOR_WITH_ONE_ARGUMENT`.
_TORCH_NOT_A_TENSOR = frozenset(
    """is_tensor is_storage is_complex is_floating_point is_nonzero is_grad_enabled is_inference_mode_enabled
    numel equal allclose get_default_dtype device dtype Size Generator manual_seed seed initial_seed
    set_grad_enabled no_grad enable_grad inference_mode set_default_dtype set_printoptions save load compile
    vmap cond sort topk split chunk unbind tensor_split hsplit vsplit dsplit meshgrid broadcast_tensors histogram
    std_mean var_mean aminmax frexp cummax cummin kthvalue mode lu qr svd eig slogdet lobpcg pca_lowrank
    svd_lowrank geqrf triangular_solve lstsq broadcast_shapes result_type promote_types can_cast finfo iinfo
    typename is_same_size get_rng_state set_rng_state use_deterministic_algorithms are_deterministic_algorithms_enabled
    unique_consecutive""".split()
)
_TORCH_TENSOR_WITH_ONE_ARGUMENT = frozenset({"max", "min", "median", "nanmedian", "unique", "nonzero", "where"})
#: submodules whose functions return tensors (but those in :data:`_DECOMPOSITIONS`)
_TENSOR_SUBMODULES = frozenset({"linalg", "fft", "special", "nn.functional"})
_DECOMPOSITIONS = frozenset(
    {"svd", "qr", "eig", "eigh", "slogdet", "lstsq", "lu", "lu_factor", "lu_factor_ex", "inv_ex", "cholesky_ex",
     "solve_ex", "ldl_factor", "ldl_factor_ex", "multi_head_attention_forward"}
)
#: tensor methods whose result is not one tensor
_TENSOR_METHODS_NOT_A_TENSOR = frozenset(
    {"item", "tolist", "numpy", "size", "numel", "dim", "ndimension", "nelement", "element_size", "data_ptr",
     "is_floating_point", "is_contiguous", "is_complex", "equal", "allclose", "sort", "topk", "unbind", "split",
     "chunk", "tensor_split", "stride", "storage", "type", "get_device", "backward", "kthvalue", "mode",
     "aminmax", "cummax", "cummin", "register_hook", "retain_grad", "untyped_storage", "is_set_to", "__len__",
     # tuples of tensors (or named tuples), numbers and flags
     "hsplit", "vsplit", "dsplit", "split_with_sizes", "unsafe_split", "unsafe_chunk", "unsafe_split_with_sizes",
     "frexp", "svd", "slogdet", "histogram", "qr", "lu", "triangular_solve", "geqrf", "dim_order", "is_nonzero",
     "is_same_size", "is_signed", "is_shared", "is_pinned", "is_inference", "is_conj", "is_neg", "has_names",
     "dense_dim", "sparse_dim", "is_coalesced", "q_scale", "q_zero_point", "qscheme", "record_stream",
     # tensors of other layouts, which a dense store or `copy_` rejects, and arrays
     "to_sparse", "to_sparse_coo", "to_sparse_csr", "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc",
     "sparse_mask", "to_mkldnn", "__array__"}
)
#: tensor methods whose result is a tensor without arguments and a tuple with some (`x.max(0)`)
_TENSOR_METHODS_TENSOR_WITH_NO_ARGUMENT = frozenset({"max", "min", "median", "nanmedian", "unique", "unique_consecutive", "nonzero"})
#: ndarray methods whose result is no array: a tuple (`nonzero`), None (`sort`, `fill`: in place),
#: a Python value
_NDARRAY_METHODS_NOT_AN_ARRAY = frozenset({
    "nonzero", "sort", "partition", "fill", "resize", "put", "itemset", "setflags", "tofile", "dump", "dumps",
    "tobytes", "item", "tolist", "__len__",
})
#: NumPy functions whose result is not an array or a NumPy scalar
_NUMPY_NOT_AN_ARRAY = frozenset(
    {"isscalar", "ndim", "size", "shape", "histogram", "unique", "split", "array_split", "meshgrid", "nonzero",
     "load", "save", "savez", "savetxt", "loadtxt", "printoptions", "set_printoptions", "errstate", "seterr",
     "iinfo", "finfo", "dtype", "broadcast_arrays", "linalg", "where"}
)
#: classes no tensor is an instance of: ``isinstance(x, list)`` true means ``x`` is no tensor
_NOT_TENSOR_CLASSES = frozenset(
    {"list", "tuple", "dict", "set", "str", "bytes", "int", "float", "bool", "complex", "collections.Sequence",
     "collections.abc.Sequence", "collections.Mapping", "collections.abc.Mapping", "abc.Sequence", "Sequence",
     "Mapping", "np.ndarray", "numpy.ndarray", "np.generic", "numpy.generic", "np.number", "numpy.number"}
)
#: what ``isinstance(x, C)`` being true shows ``x`` holds, among the kinds the checker builds
#: (a tuple, a set, a string: none of them). The test outranks every use elsewhere in the
#: function: those may sit in the branch for another kind (``x[:, t]`` under a tensor test)
_CLASS_KINDS: dict[str, frozenset[Kind]] = {
    "list": frozenset({LST}), "tuple": frozenset(), "set": frozenset(), "str": frozenset(), "bytes": frozenset(),
    "dict": frozenset({D}), "int": frozenset({I, B}), "float": frozenset({FL}), "bool": frozenset({B}),
    "complex": frozenset(), "np.ndarray": frozenset({ND}), "numpy.ndarray": frozenset({ND}),
}
_TENSOR_ANNOTATIONS = frozenset(
    {"Tensor", "torch.Tensor", "torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor", "torch.IntTensor",
     "torch.BoolTensor", "torch.HalfTensor", "torch.ByteTensor", "torch.cuda.FloatTensor", "torch.cuda.LongTensor"}
)
_ANNOTATION_KINDS: dict[str, frozenset[Kind]] = {
    "int": frozenset({I}),
    # PEP 484: an int is acceptable where a float is annotated
    "float": frozenset({FL, I}),
    "bool": frozenset({B}),
    "list": frozenset({LST}), "List": frozenset({LST}), "typing.List": frozenset({LST}),
    "dict": frozenset({D}), "Dict": frozenset({D}), "typing.Dict": frozenset({D}),
    "np.ndarray": frozenset({ND}), "numpy.ndarray": frozenset({ND}), "ndarray": frozenset({ND}),
    "Iterator": frozenset({IT}), "typing.Iterator": frozenset({IT}), "Generator": frozenset({IT}),
}
#: builtins that iterate their arguments (a use that a one-shot iterator survives once)
_ITERATING_BUILTINS = frozenset(
    {"sum", "list", "tuple", "sorted", "min", "max", "any", "all", "enumerate", "zip", "set", "iter", "map",
     "filter", "dict", "frozenset", "reversed"}
)
_NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
_COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.GeneratorExp, cst.DictComp)


@dataclass(frozen=True)
class Evidence:
    """What the code shows about one name (or expression): the kinds it may hold.

    ``kinds`` is never empty; with nothing known it is every kind of ``UNKNOWN_KINDS``. ``found``
    says, in words, what the kinds rest on (``bound by `sorted(...)` (a list)``); ``keys`` are the
    string keys the code subscripts a dict with.
    """

    name: str
    kinds: tuple[Kind, ...]
    found: tuple[str, ...] = ()
    keys: tuple[str, ...] = ()

    @property
    def tensor(self) -> bool:
        """Positive tensor evidence: a tensor is the only kind the code allows."""
        return self.kinds == (Kind.TENSOR,)

    @property
    def known(self) -> bool:
        return bool(self.found)

    def may_be(self, kind: Kind) -> bool:
        return kind in self.kinds

    def describe(self) -> str:
        """The evidence in words, for a skip message."""
        return "; ".join(self.found) if self.found else "nothing in the code shows what it holds"

    def kinds_text(self) -> str:
        return ", ".join(k.value for k in self.kinds)

    def missing_tensor(self, needs: str) -> str:
        """A skip reason: the rewrite ``needs`` a tensor, and the evidence does not show one.

        It names what was found; it suggests an annotation only where a tensor is one of the
        kinds the code allows (never for a name the code shows to be a list, say)."""
        others = [k for k in self.kinds if k is not Kind.TENSOR]
        if Kind.TENSOR not in self.kinds:
            return f"`{self.name}` is not a tensor ({self.describe()}): {needs} needs one"
        return (
            f"nothing shows that `{self.name}` is a tensor -- it may as well be {_kinds_words(others, 'a')} "
            f"({self.describe()}); {needs} needs a tensor: if it is one, annotate it `{self.name}: torch.Tensor`"
        )

    def not_a_sync(self, conversion: str, method: str) -> str:
        """A skip reason for ``int(expr)`` / ``float(expr)`` whose ``expr`` (this evidence's
        subject) is not shown to be a tensor: then it is no device sync at all."""
        if Kind.TENSOR not in self.kinds:
            return (
                f"`{conversion}` converts a Python value, not a tensor ({self.describe()}): it is no device "
                f"sync, and `.{method}()` would not exist on it"
            )
        others = [k for k in self.kinds if k is not Kind.TENSOR]
        return (
            f"`{conversion}` is a device sync only when `{self.name}` is a tensor, and nothing shows it is -- "
            f"it may as well be {_kinds_words(others, 'a')} ({self.describe()}), which has no `.{method}()`"
        )

    def spec(self, **options: object) -> InputSpec:
        """The kernel input for this name: every kind the evidence allows (OPAQUE stays alone)."""
        return InputSpec(self.name, kinds=self.kinds, keys=self.keys, **options)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- abstract values


@dataclass(frozen=True)
class _Value:
    """What an expression may evaluate to: its kinds (None: unknown; empty: nothing the checker
    builds -- a tuple, a set, a string, a function), what iterating it yields (``elements``), what
    unpacking it yields (``parts``, for tuples), and the evidence in words."""

    kinds: frozenset[Kind] | None
    found: tuple[str, ...] = ()
    elements: "_Value | None" = None
    parts: "tuple[_Value, ...] | None" = None


_UNKNOWN_VALUE = _Value(None)


def _elements(value: _Value) -> _Value:
    """What iterating ``value`` yields: its known elements; a tensor's are tensors, an ndarray's
    ndarrays or NumPy scalars; otherwise unknown."""
    if value.elements is not None:
        return value.elements
    if value.kinds == frozenset({T}):
        return _known({T}, "")
    if value.kinds and value.kinds <= {ND, NS}:
        return _known({ND, NS}, "")
    return _UNKNOWN_VALUE


def _known(kinds: Iterable[Kind], found: str, elements: "_Value | None" = None) -> _Value:
    return _Value(frozenset(kinds), (found,) if found else (), elements)


def _union(values: list[_Value]) -> _Value:
    if not values:
        return _UNKNOWN_VALUE
    if any(v.kinds is None for v in values):
        return _Value(None, tuple(dict.fromkeys(f for v in values for f in v.found)))
    kinds = frozenset().union(*(v.kinds for v in values if v.kinds is not None))
    elements = [v.elements for v in values if v.elements is not None]
    merged = _union(elements) if len(elements) == len(values) else None
    return _Value(kinds, tuple(dict.fromkeys(f for v in values for f in v.found)), merged)


def _code(node: cst.CSTNode) -> str:
    text = cst.Module(body=[]).code_for_node(node)
    return text if len(text) <= 40 else text[:37] + "..."


# ----------------------------------------------------------------------------- the scope's facts


@dataclass
class _Binding:
    """One place that binds the name: the source value, as a path from an expression."""

    node: cst.CSTNode
    #: ("expr", node) / ("element", source) / ("part", i, source) / ("annotation", node) /
    #: ("param", param) / ("unknown", why)
    source: tuple
    #: an unconditional assignment directly in the scope's body (it hides earlier bindings)
    top_level: bool = False


@dataclass
class _Use:
    node: cst.CSTNode
    #: the kinds this use leaves, or None for a use that narrows nothing
    allows: frozenset[Kind] | None
    what: str = ""
    #: a use a one-shot iterator survives (iteration)
    iteration: bool = False
    #: a use that suggests a dict (a string key, ``.values()``)
    dict_like: bool = False
    key: str | None = None


class _Collector(cst.CSTVisitor):
    """Bindings and uses of every name in one scope (nested functions and lambdas are left out;
    comprehension variables shadow the names they bind)."""

    def __init__(self, scope: cst.CSTNode, facts: "ScopeEvidence") -> None:
        self.scope = scope
        self.facts = facts
        self.bindings: dict[str, list[_Binding]] = {}
        self.uses: dict[str, list[_Use]] = {}
        self._stack: list[cst.CSTNode] = []
        self._shadowed: list[set[str]] = []

    # -- traversal

    def on_visit(self, node: cst.CSTNode) -> bool:
        if node is not self.scope and isinstance(node, _NESTED_SCOPES):
            if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
                self._bind(node.name.value, node, ("unknown", "a function or class defined here"))
            return False
        if isinstance(node, _COMPREHENSIONS):
            self._shadowed.append(comprehension_variables(node))
        self._stack.append(node)
        super().on_visit(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        super().on_leave(original_node)
        if self._stack and self._stack[-1] is original_node:
            self._stack.pop()
        if isinstance(original_node, _COMPREHENSIONS):
            self._shadowed.pop()

    def _parent(self, depth: int = 1) -> cst.CSTNode | None:
        return self._stack[-1 - depth] if len(self._stack) > depth else None

    def _is_shadowed(self, name: str) -> bool:
        return any(name in s for s in self._shadowed)

    # -- bindings

    def _bind(self, name: str, node: cst.CSTNode, source: tuple, top_level: bool = False) -> None:
        if self._is_shadowed(name):
            return
        self.bindings.setdefault(name, []).append(_Binding(node, source, top_level))

    def _bind_target(self, target: cst.BaseExpression, node: cst.CSTNode, source: tuple, top_level: bool) -> None:
        if isinstance(target, cst.Name):
            self._bind(target.value, node, source, top_level)
        elif isinstance(target, (cst.Tuple, cst.List)):
            starred = False
            for i, element in enumerate(target.elements):
                if isinstance(element, cst.StarredElement):
                    starred = True
                    self._bind_target(element.value, node, ("unknown", "a starred target"), False)
                else:
                    # past a starred target, a name holds a part counted from the end
                    index = i - len(target.elements) if starred else i
                    self._bind_target(element.value, node, ("part", index, source), False)

    def _top_level(self, node: cst.CSTNode) -> bool:
        body = self.scope.body.body if isinstance(self.scope, cst.FunctionDef) and isinstance(
            self.scope.body, cst.IndentedBlock) else getattr(self.scope, "body", ())
        line = self._parent(1)  # the statement line holding the small statement ``node``
        return isinstance(line, cst.SimpleStatementLine) and any(line is s for s in body)

    def visit_Param(self, node: cst.Param) -> None:
        # nested functions and lambdas are never entered: every parameter seen is the scope's own
        self._bind(node.name.value, node, ("param", node))

    def visit_Assign(self, node: cst.Assign) -> None:
        top = self._top_level(node)
        for target in node.targets:
            self._bind_target(target.target, node, ("expr", node.value), top and isinstance(target.target, cst.Name))

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if isinstance(node.target, cst.Name):
            source = ("annotation", node.annotation.annotation, node.value)
            self._bind(node.target.value, node, source, self._top_level(node) and node.value is not None)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if isinstance(node.target, cst.Name):
            self._bind(node.target.value, node, ("unknown", f"updated by `{_code(node)}`"))

    def visit_For(self, node: cst.For) -> None:
        self._bind_target(node.target, node, ("element", ("expr", node.iter)), False)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if node.asname is not None:
            self._bind_target(node.asname.name, node, ("unknown", "bound by `with ... as`"), False)

    def visit_NamedExpr(self, node: cst.NamedExpr) -> None:
        self._bind_target(node.target, node, ("expr", node.value), False)

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        if node.name is not None and isinstance(node.name.name, cst.Name):
            self._bind(node.name.name.value, node, ("unknown", "an exception"))

    def visit_ImportAlias(self, node: cst.ImportAlias) -> None:
        bound = node.asname.name if node.asname else node.name
        name = dotted(bound) if isinstance(bound, (cst.Name, cst.Attribute)) else None
        if name:
            self._bind(name.split(".")[0], node, ("unknown", "an imported name"))

    def visit_Global(self, node: cst.Global) -> None:
        for item in node.names:
            self._bind(item.name.value, node, ("unknown", "declared global"))

    def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
        for item in node.names:
            self._bind(item.name.value, node, ("unknown", "declared nonlocal"))

    # -- uses

    def _use(self, name: str, use: _Use) -> None:
        if not self._is_shadowed(name):
            self.uses.setdefault(name, []).append(use)

    def visit_Name(self, node: cst.Name) -> None:
        parent = self._parent(1)
        name = node.value
        if isinstance(parent, cst.Attribute) and parent.attr is node:
            return  # `x.name`: an attribute name, not a use of `name`
        if isinstance(parent, (cst.Param, cst.Arg)) and getattr(parent, "keyword", None) is node:
            return
        if isinstance(parent, cst.Attribute) and parent.value is node:
            attr = parent.attr.value
            called = isinstance(self._parent(2), cst.Call) and self._parent(2).func is parent
            if attr == "view" and called and _int_first_argument(self._parent(2)):
                # a shape: ndarray.view (and a NumPy scalar's) takes a dtype, and raises on -1 or 3
                self._use(name, _Use(node, frozenset({T}), "`.view(...)` takes a shape on it (only tensors do)"))
            elif attr in TENSOR_ONLY_ATTRIBUTES or (attr in TENSOR_ONLY_CALLS and called):
                self._use(name, _Use(node, frozenset({T}), f"`.{attr}{'(...)' if called else ''}` is used on it (only tensors have it)"))
            elif attr in ATTRIBUTE_KINDS:
                kinds = ATTRIBUTE_KINDS[attr]
                self._use(name, _Use(
                    node, kinds, f"`.{attr}` is used on it ({_kinds_words(kinds)} have it)",
                    dict_like=attr in ("values", "items", "keys", "get"),
                ))
            else:
                self._use(name, _Use(node, None))
            return
        if isinstance(parent, cst.Subscript) and parent.value is node:
            key = _string_key(parent)
            if key is not None:
                self._use(name, _Use(node, frozenset({D}), f"subscripted with the key {key!r}", dict_like=True, key=key))
                self._elements_keyed(name, key)
            elif len(parent.slice) > 1:
                self._use(name, _Use(node, MULTI_INDEXABLE, "indexed with several indices at once (only arrays take them)"))
            else:
                self._use(name, _Use(node, SUBSCRIPTABLE, "subscripted"))
            return
        if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
            self._use(name, _Use(node, ITERABLE, f"`for ... in {name}` iterates it", iteration=True))
            return
        if isinstance(parent, cst.Arg) and parent.value is node and not parent.star:
            call = self._parent(2)
            if isinstance(call, cst.Call):
                self._use_as_argument(name, node, call, parent)
                return
        if self._is_binding_target(node):
            return
        self._use(name, _Use(node, None))

    def _is_binding_target(self, node: cst.Name) -> bool:
        depth = 1
        while True:
            parent = self._parent(depth)
            if isinstance(parent, (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.For, cst.CompFor,
                                   cst.NamedExpr, cst.AsName, cst.Param, cst.ImportAlias)):
                target = getattr(parent, "target", None) or getattr(parent, "name", None)
                return target is not None and _contains(target, node)
            if not isinstance(parent, (cst.Tuple, cst.List, cst.Element, cst.StarredElement)):
                return False
            depth += 1

    def _elements_keyed(self, variable: str, key: str) -> None:
        """``[x[key] for x in outputs]``: the elements of ``outputs`` are subscripted with a
        string, so they are dicts (or records), and ``outputs`` holds no tensor -- the elements of
        a tensor are tensors, which a string does not index."""
        for node in reversed(self._stack):
            if not isinstance(node, _COMPREHENSIONS):
                continue
            clause: cst.CompFor | None = node.for_in
            while clause is not None:
                if m.matches(clause.target, m.Name(variable)) and isinstance(clause.iter, cst.Name):
                    source = clause.iter.value
                    if not self._is_shadowed(source):
                        self._use(source, _Use(clause.iter, frozenset({LST, IT, ND}), f"its elements are subscripted with the key {key!r}"))
                    return
                clause = clause.inner_for_in

    def _use_as_argument(self, name: str, node: cst.Name, call: cst.Call, arg: cst.Arg) -> None:
        func = call.func
        position = next((i for i, a in enumerate(call.args) if a is arg), -1)
        positional = arg.keyword is None
        target = dotted(func) or ""
        if isinstance(func, cst.Name) and func.value == "len" and position == 0:
            self._use(name, _Use(node, SIZED, "`len(...)` is taken of it"))
            return
        if isinstance(func, cst.Name) and func.value in _ITERATING_BUILTINS and positional:
            self._use(name, _Use(node, ITERABLE, f"iterated by `{func.value}(...)`", iteration=True))
            return
        if isinstance(func, cst.Name) and func.value == "next" and position == 0:
            self._use(name, _Use(node, frozenset({IT}), "`next(...)` is called on it", iteration=True))
            return
        if position == 0 and positional and self.facts.is_tensor_function(target):
            self._use(name, _Use(node, frozenset({T}), f"passed to `{target}(...)` (it takes tensors only)"))
            return
        self._use(name, _Use(node, None))


def _int_first_argument(call: cst.Call) -> bool:
    """Whether ``call``'s first positional argument is an integer literal (``-1``, ``3``)."""
    if not call.args or call.args[0].keyword is not None or call.args[0].star:
        return False
    value = call.args[0].value
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        value = value.expression
    return isinstance(value, cst.Integer)


def _reads_itself(node: cst.CSTNode, name: str) -> bool:
    """Whether ``node`` reads ``name`` as the name bound before it: it occurs, and no lambda or
    comprehension (which may bind a ``name`` of its own) is in the way."""
    nodes = list(_walk_expression(node))
    if any(isinstance(n, (cst.Lambda, *_COMPREHENSIONS)) for n in nodes):
        return False
    return any(isinstance(n, cst.Name) and n.value == name for n in nodes)


def _walk_expression(node: cst.CSTNode):  # noqa: ANN202 - every node of an expression
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(current.children)


def _contains(root: cst.CSTNode, node: cst.CSTNode) -> bool:
    if root is node:
        return True
    return any(_contains(child, node) for child in root.children)


def _negative_step(element: cst.SubscriptElement) -> bool:
    """``::-1``: a slice whose step is a negative integer literal."""
    piece = element.slice
    step = piece.step if isinstance(piece, cst.Slice) else None
    return isinstance(step, cst.UnaryOperation) and isinstance(step.operator, cst.Minus) and isinstance(step.expression, cst.Integer)


def _string_key(node: cst.Subscript) -> str | None:
    if len(node.slice) != 1 or not isinstance(node.slice[0].slice, cst.Index):
        return None
    value = node.slice[0].slice.value
    if isinstance(value, cst.SimpleString):
        evaluated = value.evaluated_value
        return evaluated if isinstance(evaluated, str) else None
    return None


_PLURAL = {T: "tensors", ND: "ndarrays", NS: "NumPy scalars", LST: "lists", D: "dicts", IT: "iterators",
           I: "ints", FL: "floats", B: "bools"}
_SINGULAR = {T: "a tensor", ND: "a NumPy array", NS: "a NumPy scalar", LST: "a Python list", D: "a dict",
             IT: "a one-shot iterator", I: "an int", FL: "a float", B: "a bool"}


def _kinds_words(kinds: Collection[Kind], article: str = "") -> str:
    words = _SINGULAR if article else _PLURAL
    ordered = [words[k] for k in expand_kinds(tuple(kinds)) if k in words]
    joiner = " or " if article else " and "
    return ", ".join(ordered[:-1]) + joiner + ordered[-1] if len(ordered) > 1 else (ordered[0] if ordered else "nothing")


# ----------------------------------------------------------------------------- the analysis


class ScopeEvidence:
    """The evidence about every name of one function (or module), collected in one walk.

    ``torch_names``: what the module binds torch to; ``numpy_names``: numpy; ``functional_names``:
    torch.nn.functional; ``tensor_annotations``: extra spellings of ``torch.Tensor`` (``th.Tensor``).
    ``parents`` (node -> parent) lets a query say *where* it asks (``at``); without it every
    binding in the scope counts. ``module``: where names the function does not bind are looked up.
    """

    def __init__(
        self,
        scope: cst.CSTNode,
        torch_names: Collection[str] = ("torch",),
        numpy_names: Collection[str] = ("np", "numpy"),
        functional_names: Collection[str] = ("F",),
        tensor_annotations: Collection[str] = (),
        parents: Mapping[cst.CSTNode, cst.CSTNode] | None = None,
        module: cst.Module | None = None,
        math_names: Collection[str] = (),
    ) -> None:
        self.scope = scope
        self.torch_names = frozenset(torch_names)
        self.math_names = frozenset(math_names)
        self.numpy_names = frozenset(numpy_names)
        self.functional_names = frozenset(functional_names)
        self.tensor_annotations = _TENSOR_ANNOTATIONS | frozenset(tensor_annotations) | {
            f"{t}.Tensor" for t in self.torch_names
        }
        self.parents = parents
        self.module = module
        collector = _Collector(scope, self)
        scope.visit(collector)
        self._bindings = collector.bindings
        self._uses = collector.uses
        self._body = self._body_statements()
        self._resolving: set[str] = set()
        #: the answers of :meth:`name`, by (name, id of `at`, entering): every rung of a loop's
        #: ladder asks them again, and the scope's code does not change under them
        self._answers: dict[tuple[str, int, bool], tuple[Evidence, cst.CSTNode | None]] = {}
        #: name -> the values it held before the binding being evaluated (`x = x.flatten()`)
        self._previous: dict[str, list[_Value]] = {}
        #: name -> whether the scope may change the items of its container (one walk per name)
        self._changed_containers: dict[str, bool] = {}
        self._module_evidence: ScopeEvidence | None = None
        #: names another scope rebinds: a nested function's `nonlocal n` (of a function's names),
        #: any function's `global scale` (of the module's) -- no binding here says what they hold
        self._rebound_elsewhere = rebound_elsewhere(scope)

    # -- public queries

    def name(self, name: str, at: cst.CSTNode | None = None, entering: bool = False) -> Evidence:
        """The kinds ``name`` may hold at ``at`` (anywhere in the scope when None), narrowed by
        the ``isinstance`` tests of the branches ``at`` sits in. With ``entering``, the value
        that enters ``at`` (a loop's input): what ``at`` itself binds does not reach its entry,
        unless a loop around ``at`` carries it back."""
        if self._resolving:
            # (asked while another name resolves: a cycle may cut this answer short, so it is
            # not kept)
            return self._answer(name, at, entering)
        key = (name, id(at), entering)
        found = self._answers.get(key)
        if found is None:
            # `at` is kept beside the answer: its id stays its own while the entry lives
            found = self._answers[key] = (self._answer(name, at, entering), at)
        return found[0]

    def _answer(self, name: str, at: cst.CSTNode | None, entering: bool) -> Evidence:
        value, keys = self._name_value(name, at, entering)
        return _evidence(name, self._under_tests(name, value, at), keys)

    def _under_tests(self, name: str, value: _Value, at: cst.CSTNode | None) -> _Value:
        """``value`` where every ``if`` around ``at`` took the branch ``at`` is in. The code's own
        type tests outrank what binds the name: in ``elif isinstance(x, Sequence):`` after
        ``if isinstance(x, torch.Tensor):``, ``x`` is no tensor, whatever its annotation says."""
        if at is None or self.parents is None:
            return value
        bindings = [b.node for b in self._bindings.get(name, []) if b.source[0] != "param"]
        child, parent = at, self.parents.get(at)
        while parent is not None and parent is not self.scope:
            if any(within(node, child, self.parents) for node in bindings):
                # `if isinstance(s, float): s = w.abs().max()`: what the test said of `s` holds
                # no more where the branch binds it again, nor does a test further out
                break
            if isinstance(parent, cst.If) and child is not parent.test:
                value = self._tested(name, value, parent.test, holds=child is parent.body)
            child, parent = parent, self.parents.get(parent)
        return value

    def _tested(self, name: str, value: _Value, test: cst.BaseExpression, holds: bool) -> _Value:
        """``value`` in a branch where ``test`` is ``holds``."""
        while isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
            test, holds = test.expression, not holds
        checks = [
            call for call in _walk_expression(test)
            if isinstance(call, cst.Call) and dotted(call.func) in ("isinstance", "type", "hasattr", "callable")
            and call.args and m.matches(call.args[0].value, m.Name(name))
        ]
        if not checks:
            return value
        said = f"`{_code(test)}` is {'true' if holds else 'false'} here"
        kinds = set(UNKNOWN) if value.kinds is None else set(value.kinds)
        call = checks[0]
        if call is test and dotted(call.func) == "isinstance" and len(call.args) == 2:
            classes = call.args[1].value
            names = [dotted(e.value) for e in classes.elements] if isinstance(classes, cst.Tuple) else [dotted(classes)]
            tensor_class = [c in self.tensor_annotations for c in names]
            generic = [c in {"Tensor", *(f"{t}.Tensor" for t in self.torch_names)} for c in names]
            if holds and all(tensor_class):
                narrowed = kinds & {T} or {T}
            elif holds and all(c in _CLASS_KINDS for c in names):
                narrowed = set().union(*(_CLASS_KINDS[c] for c in names))  # type: ignore[arg-type]
                return _Value(frozenset(narrowed), value.found + (said,), value.elements, value.parts)
            elif holds and all(c in _NOT_TENSOR_CLASSES for c in names):
                narrowed = kinds - {T}
            elif not holds and any(generic):
                narrowed = kinds - {T}
            elif not holds:
                return value
            else:
                narrowed = set(UNKNOWN)  # an instance of a class a tensor may be (Iterable, object, ...)
            if not narrowed and T not in (value.kinds or ()):
                narrowed = set(UNKNOWN)  # nothing left of what binds it: the test alone speaks
            elif not narrowed:
                narrowed = set(UNKNOWN) - {T}  # no tensor, then: anything else the code may hold
            return _Value(frozenset(narrowed), value.found + (said,), value.elements, value.parts)
        # any other test of the name's type: the kinds are what the test leaves, unknown here
        return _Value(None if T in kinds else value.kinds, value.found + (said,), value.elements, value.parts)

    def expression(self, expr: cst.BaseExpression, at: cst.CSTNode | None = None) -> Evidence:
        """The kinds ``expr`` may evaluate to (``n * ratios[i]``), with the evidence."""
        return _evidence(_code(expr), self._expr(expr, at, frozenset()), ())

    def is_tensor_function(self, target: str) -> bool:
        """Whether ``target`` (a dotted callee) takes only a tensor as its first argument."""
        root, _, rest = target.partition(".")
        if root in self.torch_names and rest in TORCH_TENSOR_INPUT:
            return True
        if root in self.functional_names and rest and "." not in rest:
            return True
        return root in self.torch_names and rest.startswith("nn.functional.") and rest.count(".") == 2

    # -- names

    def _top_index(self, node: cst.CSTNode | None) -> int | None:
        """The index of the scope-body statement holding ``node`` (None when unknown)."""
        if node is None or self.parents is None:
            return None
        current = node
        while True:
            for i, stmt in enumerate(self._body):
                if stmt is current:
                    return i
            parent = self.parents.get(current)
            if parent is None or parent is self.scope:
                return None
            current = parent

    def _body_statements(self) -> list[cst.CSTNode]:
        body = getattr(self.scope, "body", None)
        if isinstance(body, cst.IndentedBlock):
            return list(body.body)
        if isinstance(body, (list, tuple)):
            return list(body)
        return []

    def _reaching(self, name: str, at: cst.CSTNode | None, entering: bool = False) -> tuple[list[_Binding], int]:
        """The bindings of ``name`` that may reach ``at``, and the statement index from which uses
        describe the value there (-1: from the start)."""
        bindings = self._bindings.get(name, [])
        if entering and at is not None and not self._in_a_loop(at):
            # `ap = 0` before `for ...: ap = ap + x`: the loop's own binding reaches only its later
            # steps; the value entering it is what was bound before (when something was)
            outside = [b for b in bindings if not within(b.node, at, self.parents)]
            if outside:
                bindings = outside
        at_index = self._top_index(at)
        if at_index is None:
            return bindings, -1
        return self._live(bindings, at_index, inclusive=True)

    def _live(self, bindings: list[_Binding], index: int, inclusive: bool) -> tuple[list[_Binding], int]:
        """Of ``bindings``, those that may hold as the body's statement ``index`` runs (also those
        inside it, and those whose statement is unknown, when ``inclusive``), and the index of the
        last unconditional one before it (-1: none), which hides the earlier ones."""
        # a parameter is bound before the first statement
        indexed = [(b, -1 if b.source[0] == "param" else self._top_index(b.node)) for b in bindings]
        # a binding in a later top-level statement never flows back (the body is straight-line)
        reaching = [(b, i) for b, i in indexed if (i is None and inclusive) or (i is not None and (i <= index if inclusive else i < index))]
        kill = max((i for b, i in reaching if b.top_level and i is not None and i < index), default=-1)
        return [b for b, i in reaching if i is None or i >= kill or kill < 0], kill

    def _uses_for(self, name: str, at: cst.CSTNode | None, start: int) -> list[_Use]:
        uses = self._uses.get(name, [])
        at_index = self._top_index(at)
        if at_index is None:
            return uses
        later_bindings = sorted(
            i for b in self._bindings.get(name, []) if (i := self._top_index(b.node)) is not None and i > at_index
        )
        stop = later_bindings[0] if later_bindings else None
        # `x = x.stride()`: what the binding that starts the range reads of `x` is the earlier `x`
        starting = [b.node for b in self._bindings.get(name, []) if start >= 0 and self._top_index(b.node) == start]
        kept = []
        for use in uses:
            index = self._top_index(use.node)
            if index is None:
                continue
            if index < start or (stop is not None and index >= stop):
                continue  # the use reads another binding's value
            if index == start and self.parents is not None and any(within(use.node, node, self.parents) for node in starting):
                continue
            kept.append(use)
        return kept

    def _container_changed(self, name: str) -> bool:
        """Whether the scope may change the items of the container bound to ``name``, or let
        anything else change them: every use of the name but the ones that only read it --
        iterated (``for v in pair``), unpacked (``a, b = pair``), an item read (``pair[0]``, in
        no target), given to a builtin that reads it (``len``, ``zip``, ``sorted`` ...) -- may,
        as does ``exec``, ``eval``, ``locals``, ``vars`` or ``globals`` anywhere in it (a review
        found stores through loop and ``with`` targets, chained assignments and closures that a
        list of the changing uses missed). Without parents, anything may."""
        if name not in self._changed_containers:
            self._changed_containers[name] = self._changes_container(name)
        return self._changed_containers[name]

    def _changes_container(self, name: str) -> bool:
        if self.parents is None:
            return True
        for node in all_nodes(self.scope):
            if isinstance(node, cst.Name) and node.value in ("exec", "eval", "locals", "vars", "globals"):
                return True
            if not (isinstance(node, cst.Name) and node.value == name):
                continue
            parent = self.parents.get(node)
            if isinstance(parent, cst.AssignTarget) and len(getattr(self.parents.get(parent), "targets", ())) > 1:
                return True  # `pair = other = [y, y]`: another name for it
            if isinstance(parent, (cst.AssignTarget, cst.Param)) or (
                isinstance(parent, (cst.Element, cst.Tuple, cst.List)) and self._binding_target(node)
            ):
                continue  # a binding of the name, not a use of the container
            if isinstance(parent, (cst.For, cst.CompFor)) and parent.iter is node:
                continue
            if isinstance(parent, cst.Assign) and parent.value is node and all(
                isinstance(t.target, (cst.Tuple, cst.List)) for t in parent.targets
            ):
                continue
            if isinstance(parent, cst.Subscript) and parent.value is node and not self._in_a_target(parent):
                continue
            if isinstance(parent, cst.Arg) and not parent.star and parent.keyword is None:
                call = self.parents.get(parent)
                outer = self._outer()
                if (isinstance(call, cst.Call) and m.matches(call.func, m.Name()) and call.func.value in _READING_BUILTINS
                        and call.func.value not in self._bindings
                        and (outer is None or call.func.value not in outer._bindings)):
                    continue
            return True
        return False

    def _binding_target(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` sits in the target of an assignment (``a, pair = ...``)."""
        current = self.parents.get(node) if self.parents is not None else None
        while isinstance(current, (cst.Element, cst.Tuple, cst.List, cst.StarredElement)):
            current = self.parents.get(current)  # type: ignore[union-attr]
        return isinstance(current, cst.AssignTarget)

    def _in_a_target(self, node: cst.CSTNode) -> bool:
        """Whether ``node`` is written to or bound: in an assignment, augmented assignment,
        ``del``, loop, comprehension or ``with`` target (whatever holds it on the way there)."""
        child, current = node, self.parents.get(node) if self.parents is not None else None
        while current is not None and not isinstance(current, (cst.BaseSmallStatement, cst.BaseCompoundStatement)):
            if isinstance(current, (cst.AssignTarget, cst.AsName)):
                return True
            if isinstance(current, cst.CompFor) and current.target is child:
                return True
            child, current = current, self.parents.get(current)  # type: ignore[union-attr]
        if isinstance(current, cst.AugAssign) and current.target is child:
            return True
        if isinstance(current, cst.For) and current.target is child:
            return True
        if isinstance(current, cst.Del):
            return True
        return False

    def _in_a_loop(self, node: cst.CSTNode) -> bool:
        """Whether a loop of this scope runs ``node`` more than once (or parents are unknown)."""
        if self.parents is None:
            return True
        current = self.parents.get(node)
        while current is not None and current is not self.scope:
            if isinstance(current, (cst.For, cst.While, *_COMPREHENSIONS)):
                return True
            current = self.parents.get(current)
        return False

    def _name_value(self, name: str, at: cst.CSTNode | None, entering: bool = False) -> tuple[_Value, tuple[str, ...]]:
        if name in self._resolving:
            return _UNKNOWN_VALUE, ()
        if name in self._rebound_elsewhere:
            how = "`global`" if isinstance(self.scope, cst.Module) else "`nonlocal`"
            return _Value(None, (f"`{name}` is rebound in another function ({how})",)), ()
        self._resolving.add(name)
        try:
            bindings, start = self._reaching(name, at, entering)
            uniform = True
            if not bindings:
                outer = self._outer()
                if outer is not None and name in outer._bindings:
                    return outer._name_value(name, None)
                value = _Value(None, (f"`{name}` is not bound in this function",)) if self._bindings or self._uses else _UNKNOWN_VALUE
            else:
                values = [self._binding_value(b, name) for b in bindings]
                value = _union(values)
                uniform = len({v.kinds for v in values}) == 1
                if (value.elements is not None or value.parts is not None) and (
                    self._container_changed(name) or _may_hold_containers(value)
                ):
                    # a list whose items may be replaced (`pair[1] = vals`, `pair.append(v)`, given
                    # to a call or to another name) holds what its display said no longer
                    value = _Value(value.kinds, value.found)
            uses = self._uses_for(name, at, start)
            keys = tuple(dict.fromkeys(u.key for u in uses if u.key))
            if bindings and not uniform:
                # bound several ways: only a use every path to ``at`` passes after the last
                # binding says what the value is there (`torch.zeros_like(x)` raises on the others)
                passed = self._dominating_uses(name, bindings, at)
                if passed:
                    return _narrow(name, value, passed), keys
                return _with_found(value, f"`{name}` is bound several ways here"), keys
            return _narrow(name, value, uses), keys
        finally:
            self._resolving.discard(name)

    def _dominating_uses(self, name: str, bindings: list[_Binding], at: cst.CSTNode | None) -> list[_Use]:
        """The uses of ``name`` that run, unconditionally, on every path to ``at`` after each of
        ``bindings``: in a simple statement of the scope's body that comes after every binding's
        statement and before ``at``'s, and not under a conditional expression, a short-circuit
        operand, a lambda or a comprehension. Reaching ``at`` means such a use ran without
        raising on the value ``at`` sees."""
        at_index = self._top_index(at)
        if at_index is None or self.parents is None:
            return []
        last = -1
        for binding in bindings:
            index = -1 if binding.source[0] == "param" else self._top_index(binding.node)
            if index is None:
                return []
            last = max(last, index)
        passed = []
        for use in self._uses.get(name, []):
            index = self._top_index(use.node)
            if index is None or not last < index < at_index or not isinstance(self._body[index], cst.SimpleStatementLine):
                continue
            if self._unconditional(use.node, self._body[index]):
                passed.append(use)
        return passed

    def _unconditional(self, node: cst.CSTNode, statement: cst.CSTNode) -> bool:
        child, current = node, self.parents.get(node) if self.parents is not None else None
        while current is not None and current is not statement:
            if isinstance(current, (cst.IfExp, cst.Lambda, *_COMPREHENSIONS)):
                return False
            if isinstance(current, cst.BooleanOperation) and child is current.right:
                return False
            child, current = current, self.parents.get(current)  # type: ignore[union-attr]
        return current is statement

    def _outer(self) -> "ScopeEvidence | None":
        if self.module is None or self.scope is self.module:
            return None
        if self._module_evidence is None:
            self._module_evidence = ScopeEvidence(
                self.module, self.torch_names, self.numpy_names, self.functional_names,
                tuple(self.tensor_annotations), None, self.module,
            )
        return self._module_evidence

    def _binding_value(self, binding: _Binding, name: str) -> _Value:
        before = _UNKNOWN_VALUE
        if binding.top_level and binding.source[0] == "expr" and _reads_itself(binding.source[1], name):
            # `rows = rows.flatten()` directly in the body: the `rows` it reads is the one bound
            # before; anywhere else, what a binding reads of its own name stays unknown
            index = self._top_index(binding.node)
            if index is not None:
                before = self._value_before(name, index)
        self._previous.setdefault(name, []).append(before)
        try:
            return self._source(binding.source, binding.node, name)
        finally:
            self._previous[name].pop()

    def _value_before(self, name: str, index: int) -> _Value:
        """The kinds ``name`` holds as the body's statement ``index`` starts (its bindings in
        earlier statements; the last unconditional one hides those before it)."""
        reaching, _ = self._live(self._bindings.get(name, []), index, inclusive=False)
        if not reaching:
            return _UNKNOWN_VALUE
        return _union([self._binding_value(b, name) for b in reaching])

    def _source(self, source: tuple, at: cst.CSTNode, name: str) -> _Value:
        tag = source[0]
        if tag == "expr":
            return self._expr(source[1], at, frozenset({name}))
        if tag == "element":
            inner = self._source(source[1], at, name)
            element = _elements(inner)
            where = f"iterates over `{_code(source[1][1])}`" if source[1][0] == "expr" else "iterates over it"
            return _Value(element.kinds, (f"`{name}` {where}",) + inner.found + element.found, element.elements, element.parts)
        if tag == "part":
            inner = self._source(source[2], at, name)
            if inner.parts is not None and -len(inner.parts) <= source[1] < len(inner.parts):
                part = inner.parts[source[1]]
                return _Value(part.kinds, inner.found + part.found, part.elements, part.parts)
            if inner.parts is None:
                # unpacking iterates: `b, c = x.t()` binds rows of a tensor, which are tensors
                element = _elements(inner)
                if element.kinds is not None:
                    return _Value(element.kinds, (f"`{name}` is unpacked from it",) + inner.found + element.found,
                                  element.elements, element.parts)
            return _Value(None, inner.found)
        if tag == "annotation":
            # `scale: float = w.abs().max()` holds what its value is (Python never checks the
            # annotation); the annotation speaks only where nothing shows what the value is
            if source[2] is not None:
                bound = self._expr(source[2], at, frozenset({name}))
                if bound.kinds is not None:
                    return bound
            return self._annotation(source[1])
        if tag == "param":
            param: cst.Param = source[1]
            if param.annotation is not None:
                return self._annotation(param.annotation.annotation)
            return _Value(None)
        return _Value(None)

    def _annotation(self, node: cst.BaseExpression) -> _Value:
        text = dotted(node) or ""
        if isinstance(node, cst.Subscript):
            text = dotted(node.value) or ""
        if isinstance(node, cst.SimpleString):
            text = str(node.evaluated_value or "")
        if text in self.tensor_annotations:
            return _known({T}, f"annotated `{text}`")
        if text in _ANNOTATION_KINDS:
            return _known(_ANNOTATION_KINDS[text], f"annotated `{text}`")
        return _Value(None)

    # -- expressions

    def _expr(self, node: cst.BaseExpression, at: cst.CSTNode | None, shadowed: frozenset[str]) -> _Value:
        if isinstance(node, cst.Name):
            if node.value in ("True", "False"):
                return _known({B}, "")
            if node.value == "None":
                return _known((), "")
            if node.value in shadowed:
                previous = self._previous.get(node.value)
                return previous[-1] if previous else _UNKNOWN_VALUE
            value, _ = self._name_value(node.value, at)
            return value
        if isinstance(node, cst.Integer):
            return _known({I}, "")
        if isinstance(node, cst.Float):
            return _known({FL}, "")
        if isinstance(node, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString, cst.Lambda)):
            return _known((), "")
        if isinstance(node, (cst.List, cst.ListComp)):
            # (a starred item spreads items nothing here knows: `[*extra, y]`)
            elements = self._comprehension_elements(node, at, shadowed) if isinstance(node, cst.ListComp) else _union(
                [self._expr(e.value, at, shadowed) for e in node.elements]
            ) if node.elements and not any(isinstance(e, cst.StarredElement) for e in node.elements) else None
            return _known({LST}, f"`{_code(node)}` is a list", elements)
        if isinstance(node, (cst.Dict, cst.DictComp)):
            return _known({D}, f"`{_code(node)}` is a dict")
        if isinstance(node, (cst.Set, cst.SetComp)):
            return _known((), f"`{_code(node)}` is a set")
        if isinstance(node, cst.GeneratorExp):
            return _known({IT}, f"`{_code(node)}` is a generator", self._comprehension_elements(node, at, shadowed))
        if isinstance(node, cst.Tuple):
            if any(isinstance(e, cst.StarredElement) for e in node.elements):
                return _Value(frozenset())  # `(y, *extra)`: neither its parts nor its items are known
            parts = tuple(self._expr(e.value, at, shadowed) for e in node.elements)
            return _Value(frozenset(), (), _union(list(parts)), parts)
        if isinstance(node, cst.UnaryOperation):
            if isinstance(node.operator, cst.Not):
                inner = self._expr(node.expression, at, shadowed)
                return inner if inner.kinds == frozenset({T}) else _known({B}, "")
            return self._expr(node.expression, at, shadowed)
        if isinstance(node, cst.BinaryOperation):
            return _arithmetic(self._expr(node.left, at, shadowed), self._expr(node.right, at, shadowed), node)
        if isinstance(node, cst.Comparison):
            operands = [self._expr(node.left, at, shadowed)] + [
                self._expr(c.comparator, at, shadowed) for c in node.comparisons
            ]
            found = tuple(dict.fromkeys(f for v in operands for f in v.found))
            if any(v.kinds == frozenset({T}) for v in operands):
                return _Value(frozenset({T}), found)
            if all(v.kinds is not None and v.kinds <= NUMBERS for v in operands):
                return _Value(frozenset({B}), found)
            return _Value(None, found)
        if isinstance(node, cst.BooleanOperation):
            return _union([self._expr(node.left, at, shadowed), self._expr(node.right, at, shadowed)])
        if isinstance(node, cst.IfExp):
            return _union([self._expr(node.body, at, shadowed), self._expr(node.orelse, at, shadowed)])
        if isinstance(node, cst.Subscript):
            return self._subscript(node, at, shadowed)
        if isinstance(node, cst.Attribute):
            receiver = self._expr(node.value, at, shadowed)
            attr = node.attr.value
            if attr == "shape":
                return _Value(frozenset(), (), _known({I}, ""))
            if attr in ("T", "mT", "data", "grad") and receiver.kinds == frozenset({T}):
                return receiver
            return _Value(None)
        if isinstance(node, cst.Call):
            return self._call(node, at, shadowed)
        return _Value(None)

    def _comprehension_elements(self, node: cst.BaseExpression, at: cst.CSTNode | None, shadowed: frozenset[str]) -> _Value:
        names = comprehension_variables(node)  # type: ignore[arg-type]
        return self._expr(node.elt, at, shadowed | frozenset(names))  # type: ignore[attr-defined]

    def _subscript(self, node: cst.Subscript, at: cst.CSTNode | None, shadowed: frozenset[str]) -> _Value:
        receiver = self._expr(node.value, at, shadowed)
        sliced = any(isinstance(e.slice, cst.Slice) for e in node.slice)
        if receiver.kinds == frozenset({T}):
            return _known({T}, f"`{_code(node)}` indexes a tensor")
        if receiver.kinds and receiver.kinds <= {ND, NS}:
            return _known({ND, NS}, f"`{_code(node)}` indexes an ndarray")
        if len(node.slice) > 1 and any(_negative_step(e) for e in node.slice):
            # a tensor raises on a negative step, a list on a tuple of slices
            return _known({ND}, f"`{_code(node)}` slices with a negative step along one of several dimensions (an ndarray)")
        if receiver.kinds == frozenset({LST}):
            if sliced:
                return _known({LST}, f"`{_code(node)}` slices a list", receiver.elements)
            element = receiver.elements or _UNKNOWN_VALUE
            return _Value(element.kinds, tuple(dict.fromkeys(
                (f"`{_code(node)}` is an element of a list",) + receiver.found + element.found
            )), element.elements, element.parts)
        if receiver.kinds == frozenset() and receiver.elements is not None:  # a tuple, `x.shape`
            return receiver.elements
        return _Value(None, receiver.found)

    def _call(self, node: cst.Call, at: cst.CSTNode | None, shadowed: frozenset[str]) -> _Value:
        func = node.func
        args = [a for a in node.args if not a.star]
        first = self._expr(args[0].value, at, shadowed) if args and args[0].keyword is None else None
        text = _code(node)
        if isinstance(func, cst.Name) and func.value not in shadowed and func.value not in self._bindings:
            builtin = func.value
            if builtin in ("sorted", "list"):
                elements = _elements(first) if first is not None else None
                return _known({LST}, f"`{text}` is a list", elements)
            if builtin == "range":
                return _known({LST}, f"`{text}` is a range (checked as a list of ints)", _known({I}, ""))
            if builtin in ("len", "int", "round", "hash", "ord") and (builtin != "round" or len(args) == 1):
                return _known({I}, f"`{text}` is an int")
            if builtin == "float":
                return _known({FL}, f"`{text}` is a float")
            if builtin in ("bool", "isinstance", "callable", "hasattr", "any", "all", "issubclass"):
                return _known({B}, "")
            if builtin in ("dict",):
                return _known({D}, f"`{text}` is a dict")
            if builtin in ("tuple", "set", "frozenset", "str", "repr", "type", "print"):
                return _known((), "")
            if builtin == "enumerate" and first is not None:
                index = _known({I}, "an `enumerate` index is an int")
                element = _Value(frozenset(), (), None, (index, _elements(first)))
                return _Value(frozenset({IT}), first.found, element)
            if builtin == "zip":
                values = [self._expr(a.value, at, shadowed) for a in args]
                parts = tuple(_with_found_all(_elements(v), v.found) for v in values)
                return _Value(frozenset({IT}), (), _Value(frozenset(), (), None, parts))
            if builtin in ("iter", "reversed") and first is not None:
                return _Value(frozenset({IT}), first.found, _elements(first))
            if builtin in ("min", "max") and len(args) > 1:
                # one of the arguments, whichever compares least: what any of them may be
                values = [self._expr(a.value, at, shadowed) for a in args if a.keyword is None]
                if all(v.kinds is not None for v in values) and values:
                    return _union(values)
                return _Value(None)
            if builtin in ("sum", "min", "max", "abs") and first is not None:
                inner = first.elements if builtin != "abs" and len(args) == 1 else first
                if inner is not None and inner.kinds is not None and (inner.kinds <= NUMBERS or inner.kinds == {T}):
                    kinds = inner.kinds | ({I} if builtin == "sum" and inner.kinds <= NUMBERS else set())
                    return _Value(frozenset(kinds), inner.found)
            return _Value(None)
        target = dotted(func) or ""
        root, _, rest = target.partition(".")
        if root in self.torch_names and rest and root not in shadowed:
            return self._torch_result(rest, node, args, text)
        if root in self.functional_names and rest and "." not in rest and root not in shadowed:
            if any(a.keyword and a.keyword.value == "return_indices" for a in node.args):
                return _Value(None)
            return _known({T}, f"`{text}` returns a tensor")
        if root in self.math_names and rest and "." not in rest and root not in shadowed:
            # the math module's functions return Python numbers whatever they are given
            if rest in MATH_INTS:
                return _known({I}, f"`{text}` is an int")
            if rest in _MATH_BOOLS:
                return _known({B}, "")
            return _known({FL}, f"`{text}` is a float") if rest in _MATH_FLOATS else _Value(None)
        if root in self.numpy_names and rest and root not in shadowed:
            if rest.split(".")[0] in _NUMPY_NOT_AN_ARRAY:
                return _Value(None)
            if rest.startswith("random."):
                return _known({ND, NS, FL, I}, f"`{text}` is NumPy's")
            return _known({ND, NS}, f"`{text}` is an ndarray or a NumPy scalar")
        if isinstance(func, cst.Attribute):
            return self._method_result(func, node, args, at, shadowed, text)
        return _Value(None)

    def _torch_result(self, rest: str, node: cst.Call, args: list[cst.Arg], text: str) -> _Value:
        module, _, function = rest.rpartition(".")
        if module:
            if module not in _TENSOR_SUBMODULES or function in _DECOMPOSITIONS:
                return _Value(None)
            if any(a.keyword and a.keyword.value == "return_indices" for a in node.args):
                return _Value(None)
            return _known({T}, f"`{text}` returns a tensor")
        if function in _TORCH_TENSOR_WITH_ONE_ARGUMENT:
            if len(node.args) == 1 and node.args[0].keyword is None:
                return _known({T}, f"`{text}` returns a tensor")
            if function == "where" and len(node.args) == 3:
                return _known({T}, f"`{text}` returns a tensor")
            if function in ("max", "min") and len(node.args) == 2 and node.args[1].keyword is None and not isinstance(
                node.args[1].value, (cst.Integer, cst.UnaryOperation)
            ):
                return _Value(None)  # torch.max(a, b) is a tensor, torch.max(x, 1) a tuple: unknown
            return _Value(None)
        if function in _TORCH_NOT_A_TENSOR or not function or function[0] == "_":
            return _Value(None)
        if function in ("Tensor", "FloatTensor", "LongTensor", "DoubleTensor", "IntTensor", "BoolTensor",
                        "ByteTensor", "HalfTensor") or function[0].islower():
            return _known({T}, f"`{text}` returns a tensor")
        return _Value(None)  # a class: torch.Size, torch.Generator, ...

    def _method_result(
        self, func: cst.Attribute, node: cst.Call, args: list[cst.Arg], at: cst.CSTNode | None,
        shadowed: frozenset[str], text: str,
    ) -> _Value:
        method = func.attr.value
        if method == "item" and not node.args:
            return _known(NUMBERS, f"`{text}` is a Python number")
        if method == "tolist" and not node.args:
            return _known({LST} | NUMBERS, f"`{text}` is a list (or a number)", _Value(None))
        if method == "numpy":
            return _known({ND}, f"`{text}` is an ndarray")
        if method in ("numel", "dim", "ndimension", "nelement", "element_size", "get_device"):
            return _known({I}, f"`{text}` is an int")
        if method == "size":
            return _known({I}, f"`{text}` is an int") if node.args else _Value(frozenset(), (), _known({I}, ""))
        if (method in TENSOR_ONLY_ATTRIBUTES and method not in _TENSOR_METHODS_NOT_A_TENSOR) or (
            method == "view" and _int_first_argument(node)
        ):
            # only a tensor has the method (an ndarray's `.view` takes a dtype, and raises on `-1`):
            # wherever the old code runs, this is a tensor's result
            return _known({T}, f"`.{method}(...)` is a tensor method", _known({T}, ""))
        receiver = self._expr(func.value, at, shadowed)
        if method in ("values", "keys", "items") and receiver.kinds == frozenset({D}):
            return _Value(frozenset(), receiver.found, _Value(None))
        if receiver.kinds == frozenset({T}):
            if method in _TENSOR_METHODS_NOT_A_TENSOR:
                return _Value(None)
            if method in _TENSOR_METHODS_TENSOR_WITH_NO_ARGUMENT and node.args:
                return _Value(None)
            return _known({T}, f"`{text}` is a tensor method's result", _known({T}, ""))
        if receiver.kinds is not None and receiver.kinds and receiver.kinds <= {ND, NS} and method in ATTRIBUTE_KINDS:
            if method in _NDARRAY_METHODS_NOT_AN_ARRAY:
                return _Value(None)
            return _known({ND, NS}, f"`{text}` is an ndarray method's result")
        if ATTRIBUTE_KINDS.get(method) == ARRAYS and method not in _NDARRAY_METHODS_NOT_AN_ARRAY and method not in (
            _TENSOR_METHODS_NOT_A_TENSOR
        ) and not (method in _TENSOR_METHODS_TENSOR_WITH_NO_ARGUMENT and node.args):
            # `.sum()`, `.argmax()` of something unknown: an array (or a NumPy scalar) if it runs
            return _known(ARRAYS, "")
        return _Value(None)


#: the math module's functions by what they return (``math.ceil`` of a float is an int)
MATH_INTS = frozenset({"ceil", "floor", "trunc", "comb", "perm", "factorial", "gcd", "lcm", "isqrt"})
_MATH_BOOLS = frozenset({"isnan", "isinf", "isfinite", "isclose"})
_MATH_FLOATS = frozenset({
    "sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "fabs", "sin", "cos", "tan", "asin",
    "acos", "atan", "atan2", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "hypot", "degrees", "radians",
    "erf", "erfc", "gamma", "lgamma", "fmod", "fsum", "copysign", "ldexp", "remainder", "cbrt", "dist", "nextafter", "ulp",
})


def _arithmetic(left: _Value, right: _Value, node: cst.BinaryOperation) -> _Value:
    """The kinds of ``left <op> right``: a tensor operand makes a tensor (when the old code runs at
    all); two Python numbers make a Python number; an ndarray and a number an ndarray."""
    kinds = [left.kinds, right.kinds]
    found = tuple(dict.fromkeys(left.found + right.found))
    if any(k == frozenset({T}) for k in kinds):
        return _Value(frozenset({T}), found)
    lists = [k == frozenset({LST}) for k in kinds]
    repeats = isinstance(node.operator, cst.Multiply) and any(lists) and all(
        k is not None and k and (k == {LST} or k <= {I, B}) for k in kinds
    )
    if repeats or (isinstance(node.operator, cst.Add) and all(lists)):
        elements = _union([v.elements or _UNKNOWN_VALUE for v, is_list in zip((left, right), lists) if is_list])
        return _Value(frozenset({LST}), (f"`{_code(node)}` is a list",), elements)
    if all(k is not None and k and k <= NUMBERS for k in kinds):
        if isinstance(node.operator, cst.Divide) or any(k == {FL} for k in kinds):
            return _Value(frozenset({FL}), found)
        if all(k <= {I, B} for k in kinds if k is not None):
            return _Value(frozenset({I}), found)
        return _Value(frozenset({I, FL}), found)
    if all(k is not None and k and k <= NUMBERS | {ND, NS} for k in kinds) and any(k & {ND, NS} for k in kinds if k):
        return _Value(frozenset({ND, NS}), found)
    return _Value(None, found)


def _with_found_all(value: _Value, found: tuple[str, ...]) -> _Value:
    return _Value(value.kinds, tuple(dict.fromkeys(found + value.found)), value.elements, value.parts)


def _with_found(value: _Value, text: str) -> _Value:
    return _Value(value.kinds, value.found + (text,), value.elements, value.parts)


def _may_hold_containers(value: _Value) -> bool:
    """Whether an item of ``value`` may be a list or a dict, or anything: an item read, iterated
    or unpacked out of it may then be changed, and the container with it (``for inner in
    outer: inner[1] = vals``), where no use names the container."""
    items = [value.elements] if value.elements is not None else []
    items += list(value.parts or ())
    # (a tuple among them holds what its own items hold: `[([y, y],)]`)
    return any(item.kinds is None or bool(item.kinds & {LST, D}) or _may_hold_containers(item) for item in items)


#: builtins that read a container given to them and change none of its items
_READING_BUILTINS = frozenset({"len", "enumerate", "zip", "sorted", "reversed", "list", "tuple", "sum", "any", "all",
                               "iter", "print", "isinstance"})


def _narrow(name: str, value: _Value, uses: list[_Use]) -> _Value:
    """``value`` narrowed by every use that says something; kinds a use suggests (a dict by its
    string keys, a one-shot iterator by being only iterated) join an unknown value first."""
    kinds = set(UNKNOWN) if value.kinds is None else set(value.kinds)
    found = list(value.found)
    if value.kinds is None:
        if any(u.dict_like for u in uses):
            kinds.add(D)
        if uses and all(u.iteration for u in uses):
            kinds.add(IT)
            found.append(f"`{name}` is only ever iterated")
            # what iterating it leaves is said by that already
            uses = [_Use(u.node, u.allows, "", u.iteration, u.dict_like, u.key) for u in uses]
    narrowed = set(kinds)
    for use in uses:
        if use.allows is None:
            continue
        if narrowed & use.allows:
            if not narrowed <= use.allows and use.what:
                found.append(use.what)
            narrowed &= use.allows
        else:
            found.append(f"{use.what}, which contradicts the rest")
    known = value.kinds is not None or narrowed != kinds or bool(found)
    return _Value(frozenset(narrowed) if known else None, tuple(dict.fromkeys(found)), value.elements, value.parts)


def _evidence(name: str, value: _Value, keys: tuple[str, ...]) -> Evidence:
    if value.kinds is None:
        kinds = UNKNOWN_KINDS
    elif not value.kinds:
        # a tuple, a set, a string, a function: nothing the checker builds; every kind is tried
        kinds = UNKNOWN_KINDS
    else:
        kinds = expand_kinds(tuple(value.kinds))
    if keys and Kind.DICT not in kinds:
        keys = ()
    return Evidence(name, kinds, tuple(f for f in value.found if f), keys)


# ----------------------------------------------------------------------------- the interface


def name_kinds(name: str, scope: cst.CSTNode, *, at: cst.CSTNode | None = None, **options: Any) -> Evidence:
    """The kinds ``name`` may hold in ``scope`` (a FunctionDef or the Module), and why.

    ``at``: the node the question is about (the loop being rewritten); with ``parents``, bindings
    that cannot reach it are left out (see the module docstring). ``options``: the keyword
    arguments of :class:`ScopeEvidence` (``torch_names``, ``numpy_names``, ``functional_names``,
    ``tensor_annotations``, ``parents``; ``module``: where to look for a name the function does
    not bind). A rule that asks about several names builds one ScopeEvidence and asks it.
    """
    return ScopeEvidence(scope, **options).name(name, at)


def expression_kinds(expr: cst.BaseExpression, scope: cst.CSTNode, *, at: cst.CSTNode | None = None, **options: Any) -> Evidence:
    """The kinds ``expr`` may evaluate to in ``scope``: ``.tensor`` is positive tensor evidence
    (what ``int(expr)`` needs to be a device sync). ``at`` and ``options`` as for :func:`name_kinds`."""
    return ScopeEvidence(scope, **options).expression(expr, at)


__all__ = [
    "ATTRIBUTE_KINDS", "Evidence", "ScopeEvidence", "TENSOR_ONLY_ATTRIBUTES", "TENSOR_ONLY_CALLS",
    "TORCH_TENSOR_INPUT", "expression_kinds", "name_kinds",
]
