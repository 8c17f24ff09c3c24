"""The static line of defence: a kernel is vetted before anything runs, and refused unless every
name, attribute and call in it is known to be harmless.

``vet(kernel)`` parses the old and the new snippet with :mod:`ast` (nothing is imported or run)
and returns None, or a :class:`Refusal` whose ``reason`` names the offending callee, e.g.
"the old code calls `torch.os.system`, which is not a known pure callee". The checker calls it in
the parent before a kernel is sent to the worker, and the worker calls it again before it runs
one: a refused kernel is never executed.

The table of known-pure callees below is data: one reviewed row per callee, grouped. It imports
nothing heavy (no torch), so the codemods floor can read it too (``KNOWN_CALLEES``, ``BUILTINS``,
``VALUE_ATTRIBUTES``); the run-time side (``equivalence.execute``) builds the kernel's builtins and
module proxies from the same rows.

Why this is sound (the argument the rules below implement)
-----------------------------------------------------------
A kernel can only do harm through a callable or an attribute that reaches outside the values it
computes (a file, a process, the environment, the interpreter's internals). Every value a kernel
holds comes from one of:

1. the generated inputs (tensors, arrays, numbers, lists of those: built by the checker);
2. opaque stand-ins (``Kind.OPAQUE`` inputs, and bindings outside torch/numpy/math): built by the
   checker, they mediate every attribute and call at run time and can only return tensors;
3. literals (numbers, strings without ``__``, containers of those);
4. builtins -- only the allow-list :data:`BUILTINS`, statically (a read of any other builtin name
   is refused) and at run time (the kernel's ``__builtins__`` holds nothing else);
5. module-rooted attribute chains (``torch.nn.functional.relu``) -- every such chain must resolve
   to a row of :data:`KNOWN_CALLEES`; a chain that stops at a module (``t = torch.nn``) is refused,
   so a module never becomes a value and its unlisted attributes (``torch.os``, ``torch.save``,
   ``np.load``, ``torch._C``) are unreachable;
6. results of calls to 2-5, of attributes allowed by 7, and of functions and lambdas the kernel
   defines itself (whose bodies are vetted by the same rules);
7. attributes of any other value -- only names in :data:`VALUE_ATTRIBUTES`, a list of tensor /
   ndarray / list / dict / number methods and data attributes chosen so that none of them reaches
   a file, a process or an interpreter internal on *any* value of kinds 1-6 (no ``tofile``,
   ``dump``, ``save``, ``storage``, ``untyped_storage``, ``ctypes``, ``format``, ``register_hook``,
   ``grad_fn``, no name starting with ``_``).

By induction over the kernel's evaluation, every value is of one of these kinds, and none of
them can reach an effect: rows and builtins are pure by review, allowed attributes are pure by
review, stand-ins are the checker's own. No dunder attribute, no dunder name (``__builtins__``,
``__import__``) and no string constant containing ``__`` appears (string-keyed attribute access
needs ``getattr``/``vars``/``format``, which are refused anyway). Statements that would break the
induction are refused: ``import`` of anything but a table module or row (and ``typing`` names),
``global``/``nonlocal``, ``class`` (metaclasses, dunder methods), ``del`` of a module binding,
any assignment to a module binding's name, and ``async`` code.

What the static line does not promise: it does not bound time or memory (a kernel may loop
forever or allocate too much -- the worker's limits and the parent's deadline handle that), and
the rows trust torch/numpy/math to be what they claim. The dynamic line (``equivalence.sandbox``)
covers what review may have missed.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Iterable, Iterator

# ----------------------------------------------------------------------------- the table

#: modules whose listed attributes (and only those) a kernel may reach. A chain may pass through
#: a module, never stop at one.
TABLE_MODULES: frozenset[str] = frozenset(
    {
        "torch", "torch.nn", "torch.nn.functional", "torch.linalg", "torch.special", "torch.fft",
        "numpy", "numpy.linalg", "math",
    }
)


def _rows(module: str, names: str) -> tuple[str, ...]:
    return tuple(f"{module}.{name}" for name in names.split())


#: known-pure callees and values, by group: (group, qualified names). A row is a function, a
#: class or a constant that computes on its arguments only -- no file, process, environment, RNG
#: or global-state effect. Add a row only after reading what the callee does.
KNOWN_CALLEES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("torch: types and constants", _rows("torch", """
        Tensor Size device dtype finfo iinfo float16 float32 float64 bfloat16 half float double
        int8 int16 int32 int64 uint8 short int long bool complex64 complex128 cfloat cdouble
        inf nan pi e newaxis strided contiguous_format channels_last preserve_format
        get_default_dtype is_tensor is_floating_point is_complex is_nonzero numel result_type
        promote_types can_cast no_grad enable_grad set_grad_enabled inference_mode
    """)),
    ("torch: creation", _rows("torch", """
        tensor as_tensor asarray from_numpy zeros ones empty full zeros_like ones_like
        empty_like full_like arange linspace logspace eye tril_indices triu_indices
        scalar_tensor complex polar FloatTensor DoubleTensor
    """)),
    ("torch: shape and joining", _rows("torch", """
        cat concat concatenate stack hstack vstack dstack column_stack row_stack split chunk
        tensor_split hsplit vsplit dsplit unbind reshape flatten unflatten squeeze unsqueeze
        transpose swapaxes swapdims permute movedim moveaxis t adjoint narrow narrow_copy
        select index_select masked_select take take_along_dim gather flip fliplr flipud roll
        rot90 tile repeat_interleave broadcast_to broadcast_tensors broadcast_shapes
        atleast_1d atleast_2d atleast_3d diag diag_embed diagflat diagonal tril triu
        block_diag cartesian_prod combinations meshgrid ravel view_as_real view_as_complex
        clone detach squeeze_copy unsqueeze_copy
    """)),
    ("torch: indexing and scatter", _rows("torch", """
        where nonzero argwhere scatter scatter_add scatter_reduce index_add index_copy
        index_fill index_put index_reduce masked_fill masked_scatter bincount histc
        bucketize searchsorted unique unique_consecutive count_nonzero diagonal_scatter
        select_scatter slice_scatter
    """)),
    ("torch: pointwise math", _rows("torch", """
        abs absolute neg negative positive add sub subtract mul multiply div divide
        true_divide floor_divide remainder fmod pow float_power square sqrt rsqrt exp exp2
        expm1 log log2 log10 log1p logaddexp logaddexp2 sin cos tan asin acos atan atan2
        arcsin arccos arctan arctan2 sinh cosh tanh asinh acosh atanh arcsinh arccosh
        arctanh sigmoid logit relu hardshrink erf erfc erfinv lgamma digamma polygamma
        mvlgamma i0 sinc sign sgn signbit copysign ceil floor round trunc fix frac clamp
        clip clamp_min clamp_max reciprocal lerp hypot heaviside nextafter ldexp frexp xlogy
        nan_to_num isnan isinf isfinite isposinf isneginf isreal isclose allclose equal
        eq ne lt le gt ge greater greater_equal less less_equal not_equal maximum minimum
        fmax fmin logical_and logical_or logical_xor logical_not bitwise_and bitwise_or
        bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift gcd lcm deg2rad
        rad2deg angle real imag conj conj_physical resolve_conj resolve_neg addcmul addcdiv
        softmax log_softmax
    """)),
    ("torch: reductions and scans", _rows("torch", """
        sum nansum prod mean nanmean median nanmedian mode var std var_mean std_mean max min
        amax amin aminmax argmax argmin all any norm dist logsumexp cumsum cumprod cummax
        cummin logcumsumexp diff sort argsort msort topk kthvalue quantile nanquantile
        trace corrcoef cov histogram renorm
    """)),
    ("torch: linear algebra", _rows("torch", """
        matmul mm bmm mv dot vdot inner outer ger addmm addmv addbmm baddbmm addr einsum
        tensordot kron cross cdist det logdet slogdet inverse pinverse matrix_power
        matrix_exp cholesky chain_matmul
    """)),
    ("torch: function transforms", _rows("torch", "vmap")),
    # torch's global generator only (no file, no device state beyond it): TFV003 seeds old and new
    # alike (``torch.manual_seed(0)`` before each snippet) so that random pieces keep their order
    ("torch: random numbers", _rows("torch", """
        manual_seed rand randn randint randperm rand_like randn_like randint_like normal
        bernoulli multinomial poisson Generator
    """)),
    ("torch.linalg", _rows("torch.linalg", """
        norm vector_norm matrix_norm det slogdet inv pinv solve lstsq cholesky qr svd svdvals
        eig eigh eigvals eigvalsh matrix_rank matrix_power matrix_exp cross multi_dot vecdot
        diagonal cond tensorinv tensorsolve vander lu lu_factor lu_solve solve_triangular
    """)),
    ("torch.special", _rows("torch.special", """
        expit logit erf erfc erfinv gammaln digamma polygamma xlogy xlog1py i0 i0e i1 i1e
        ndtr ndtri log_ndtr sinc round softmax log_softmax logsumexp entr exp2 expm1 log1p
    """)),
    ("torch.fft", _rows("torch.fft", """
        fft ifft rfft irfft fft2 ifft2 rfft2 irfft2 fftn ifftn rfftn irfftn fftfreq rfftfreq
        fftshift ifftshift
    """)),
    ("torch.nn.functional", _rows("torch.nn.functional", """
        relu relu6 elu selu celu gelu silu mish leaky_relu hardtanh hardswish hardsigmoid
        sigmoid tanh softplus softsign softshrink hardshrink tanhshrink logsigmoid threshold
        glu prelu softmax softmin log_softmax normalize cosine_similarity pairwise_distance
        pdist one_hot pad linear bilinear conv1d conv2d conv3d conv_transpose1d
        conv_transpose2d conv_transpose3d avg_pool1d avg_pool2d avg_pool3d max_pool1d
        max_pool2d max_pool3d adaptive_avg_pool1d adaptive_avg_pool2d adaptive_max_pool1d
        adaptive_max_pool2d lp_pool1d lp_pool2d layer_norm group_norm rms_norm
        local_response_norm embedding embedding_bag unfold fold interpolate pixel_shuffle
        pixel_unshuffle mse_loss l1_loss smooth_l1_loss huber_loss cross_entropy nll_loss
        binary_cross_entropy binary_cross_entropy_with_logits kl_div margin_ranking_loss
        hinge_embedding_loss cosine_embedding_loss soft_margin_loss poisson_nll_loss
        gaussian_nll_loss triplet_margin_loss multi_margin_loss multilabel_margin_loss
        multilabel_soft_margin_loss
    """)),
    # constructors of layers that compute on their inputs only (no RNG at call time, no running
    # statistics); building one draws its initial weights from torch's RNG, which the lead's
    # rules handle (old and new must build them alike)
    ("torch.nn layers", _rows("torch.nn", """
        Linear Bilinear Identity Flatten Unflatten Conv1d Conv2d Conv3d ConvTranspose1d
        ConvTranspose2d ConvTranspose3d Embedding EmbeddingBag LayerNorm GroupNorm RMSNorm
        ReLU ReLU6 LeakyReLU PReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softplus
        Softsign Softmax LogSoftmax Softmin Hardtanh Hardswish Hardsigmoid MaxPool1d
        MaxPool2d AvgPool1d AvgPool2d AdaptiveAvgPool1d AdaptiveAvgPool2d CosineSimilarity
        PairwiseDistance Sequential ModuleList
    """)),
    ("numpy: types and constants", _rows("numpy", """
        ndarray dtype float16 float32 float64 int8 int16 int32 int64 uint8 bool_ complex64
        complex128 intp newaxis inf nan pi e finfo iinfo result_type promote_types can_cast
        isscalar ndim shape size
    """)),
    ("numpy: creation, shape and joining", _rows("numpy", """
        array asarray ascontiguousarray copy zeros ones empty full zeros_like ones_like
        empty_like full_like arange linspace logspace eye identity diag diagflat tri tril
        triu concatenate append stack hstack vstack dstack column_stack split array_split hsplit
        vsplit reshape ravel squeeze expand_dims transpose swapaxes moveaxis flip fliplr
        flipud roll rot90 tile repeat broadcast_to broadcast_arrays atleast_1d atleast_2d
        atleast_3d meshgrid take take_along_axis where nonzero argwhere flatnonzero
        bincount unique searchsorted digitize histogram clip
    """)),
    ("numpy: math and reductions", _rows("numpy", """
        abs absolute negative positive add subtract multiply divide true_divide
        floor_divide mod remainder fmod power float_power square sqrt cbrt exp exp2 expm1
        log log2 log10 log1p logaddexp logaddexp2 sin cos tan arcsin arccos arctan arctan2
        sinh cosh tanh arcsinh arccosh arctanh sign signbit copysign ceil floor round
        around rint trunc fix reciprocal hypot heaviside nextafter ldexp frexp nan_to_num
        isnan isinf isfinite isposinf isneginf isclose allclose array_equal equal
        not_equal less less_equal greater greater_equal maximum minimum fmax fmin
        logical_and logical_or logical_xor logical_not bitwise_and bitwise_or bitwise_xor
        invert gcd lcm deg2rad rad2deg degrees radians real imag conj conjugate sum nansum
        prod mean nanmean median nanmedian average var std nanvar nanstd max min amax amin
        nanmax nanmin argmax argmin all any ptp cumsum cumprod diff sort argsort
        percentile quantile count_nonzero trace dot vdot inner outer matmul einsum
        tensordot kron cross
    """)),
    ("numpy.linalg", _rows("numpy.linalg", "norm det slogdet inv pinv solve lstsq cholesky qr svd eig eigh eigvals eigvalsh matrix_rank matrix_power multi_dot")),
    ("math", _rows("math", """
        pi e tau inf nan sqrt exp exp2 expm1 log log2 log10 log1p pow sin cos tan asin acos
        atan atan2 sinh cosh tanh asinh acosh atanh erf erfc gamma lgamma ceil floor trunc
        fabs fmod remainder copysign hypot dist isfinite isinf isnan isclose fsum prod
        factorial comb perm gcd lcm isqrt modf frexp ldexp nextafter ulp degrees radians cbrt
    """)),
)

#: every row, for look-ups
CALLEES: frozenset[str] = frozenset(name for _, names in KNOWN_CALLEES for name in names)

#: the builtins a kernel may name (statically) and find in its ``__builtins__`` (at run time)
BUILTINS: tuple[str, ...] = (
    # numbers and containers
    "abs", "all", "any", "bool", "complex", "dict", "divmod", "enumerate", "filter", "float",
    "frozenset", "int", "iter", "len", "list", "map", "max", "min", "next", "pow", "range",
    "reversed", "round", "set", "slice", "sorted", "sum", "tuple", "zip",
    # introspection that reveals no more than the value itself
    "isinstance", "issubclass", "callable", "hash",
    # text of values (their own repr; ``format`` and ``str.format`` are refused: format
    # strings reach attributes by name)
    "str", "repr", "chr", "ord", "bin", "hex", "oct", "ascii",
    # constants
    "True", "False", "None", "NotImplemented", "Ellipsis",
    # exceptions a loop body may catch or raise
    "Exception", "ArithmeticError", "AssertionError", "FloatingPointError", "IndexError",
    "KeyError", "LookupError", "NotImplementedError", "OverflowError", "RuntimeError",
    "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
)

#: ``from typing import X`` names a kernel may bind (``python -m torchfix.equivalence`` runs whole
#: files, whose annotations name them); ``get_type_hints`` and friends evaluate strings: not here
TYPING_NAMES: frozenset[str] = frozenset(
    "Any Optional Union List Dict Tuple Set FrozenSet Sequence Iterable Iterator Mapping Callable Type cast".split()
)

#: attributes a kernel may read or call on a value that is not a module (tensors, arrays, lists,
#: dicts, numbers, dtypes, finfo, layers): pure methods and data attributes only. Each name was
#: checked to be harmless on every kind of value a kernel can hold (see the module docstring).
VALUE_ATTRIBUTES: frozenset[str] = frozenset(
    """
    H T mT mH shape dtype device ndim data grad requires_grad is_leaf layout itemsize nbytes
    real imag size dim ndimension numel nelement element_size stride storage_offset
    is_contiguous is_floating_point is_complex is_signed is_cuda is_cpu is_meta is_sparse
    is_nonzero is_same_size get_device item tolist numpy cpu to contiguous clone detach
    detach_ requires_grad_ float double half bfloat16 int long short char byte bool
    type_as view view_as reshape reshape_as expand expand_as flatten unflatten ravel squeeze
    squeeze_ unsqueeze unsqueeze_ transpose transpose_ t t_ permute movedim moveaxis swapaxes
    swapdims narrow select unbind split chunk tensor_split flip fliplr flipud roll rot90 repeat
    repeat_interleave tile broadcast_to diag diagonal diag_embed tril tril_ triu triu_ unfold
    index_select masked_select take take_along_dim gather nonzero argwhere where
    new_tensor new_zeros new_ones new_full new_empty
    abs abs_ absolute neg neg_ negative add add_ sub sub_ subtract mul mul_ multiply div div_
    divide true_divide floor_divide floor_divide_ remainder remainder_ fmod fmod_ pow pow_
    float_power square square_ sqrt sqrt_ rsqrt rsqrt_ exp exp_ exp2 expm1 log log_ log2 log10
    log1p sin cos tan asin acos atan atan2 arcsin arccos arctan arctan2 sinh cosh tanh tanh_
    sigmoid sigmoid_ logit relu relu_ erf erfc erfinv lgamma digamma sign sign_ sgn signbit
    ceil ceil_ floor floor_ round round_ trunc trunc_ frac clamp clamp_ clip clip_ clamp_min
    clamp_min_ clamp_max clamp_max_ reciprocal reciprocal_ lerp lerp_ hypot nan_to_num
    nan_to_num_ isnan isinf isfinite isposinf isneginf isclose allclose equal eq eq_ ne ne_
    lt lt_ le le_ gt gt_ ge ge_ greater greater_equal less less_equal not_equal maximum
    minimum fmax fmin logical_and logical_or logical_xor logical_not logical_not_
    bitwise_and bitwise_or bitwise_xor bitwise_not addcmul addcmul_ addcdiv addcdiv_
    sum nansum prod mean nanmean median nanmedian mode var std max min amax amin aminmax
    argmax argmin all any norm logsumexp cumsum cumsum_ cumprod cumprod_ cummax cummin diff
    sort argsort msort topk kthvalue quantile unique unique_consecutive count_nonzero bincount
    histc softmax log_softmax
    matmul mm bmm mv dot vdot inner outer addmm addmm_ addmv addmv_ addr addr_ addbmm addbmm_
    baddbmm baddbmm_ cross det inverse pinverse
    fill_ zero_ copy_ masked_fill masked_fill_ masked_scatter masked_scatter_ index_add
    index_add_ index_copy index_copy_ index_fill index_fill_ index_put index_put_
    index_reduce index_reduce_ scatter scatter_ scatter_add scatter_add_ scatter_reduce
    scatter_reduce_ put_ fill_diagonal_
    uniform_ normal_ bernoulli bernoulli_ random_ exponential_ multinomial manual_seed
    astype copy flat fill reshape astype sum cumsum ptp conj conjugate
    accumulate reduce reduceat at
    append extend insert pop remove index count clear reverse sort
    keys values items get setdefault update
    is_integer bit_length as_integer_ratio conjugate numerator denominator
    eps tiny max min bits resolution smallest_normal is_floating_point is_signed itemsize
    indices
    weight bias in_features out_features in1_features in2_features in_channels out_channels
    kernel_size padding dilation groups num_embeddings embedding_dim normalized_shape
    elementwise_affine negative_slope dim
    """.split()
)

#: named here because they are the obvious ones a reviewer looks for: never value attributes
NEVER_ATTRIBUTES: frozenset[str] = frozenset(
    """
    tofile dump dumps save load storage untyped_storage from_file share_memory_ pin_memory
    ctypes format format_map register_hook register_post_accumulate_grad_hook grad_fn
    apply_ map_ map2_ data_ptr set_ record_stream backward retain_grad tobytes
    """.split()
)
assert not NEVER_ATTRIBUTES & VALUE_ATTRIBUTES


def is_known_callee(qualified: str) -> bool:
    """Whether ``torch.where`` / ``numpy.save`` ... is a row of the table."""
    return qualified in CALLEES


def allowed_module_attribute(module: str, attr: str) -> bool:
    """Whether ``module.attr`` may be reached from a kernel: a row, or a table module on the way."""
    full = f"{module}.{attr}"
    return full in CALLEES or full in TABLE_MODULES


def binding_kind(dotted: str) -> str:
    """What a ``Kernel.modules`` binding is: "module" (a table module), "row" (a table row),
    "opaque" (outside torch/numpy/math: the checker binds a stand-in) or "refused"."""
    if dotted in TABLE_MODULES:
        return "module"
    if dotted in CALLEES:
        return "row"
    if dotted.split(".")[0] not in ("torch", "numpy", "math"):
        return "opaque"
    return "refused"


# ----------------------------------------------------------------------------- vetting


@dataclass(frozen=True)
class Refusal:
    """Why a kernel is not run (a sentence naming the offending callee, attribute or statement)."""

    reason: str
    #: "old" or "new": the snippet at fault, and its line (1-based)
    snippet: str = ""
    line: int = 0

    def __str__(self) -> str:
        return self.reason


class _Refused(Exception):
    def __init__(self, node: ast.AST | None, message: str) -> None:
        super().__init__(message)
        self.line = getattr(node, "lineno", 0)
        self.message = message


def _assigned_names(tree: ast.AST) -> set[str]:
    """Every name the snippet binds (targets, loop and comprehension variables, parameters,
    function names, except-as names, import aliases, walrus targets)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                names.add((alias.asname or alias.name).split(".")[0])
        elif isinstance(node, ast.MatchAs) and node.name:
            names.add(node.name)
    return names


def _rebinding(tree: ast.AST, name: str) -> ast.AST | None:
    """The node that binds ``name`` other than by an import (an assignment, a parameter, ...)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return node
        if isinstance(node, ast.arg) and node.arg == name:
            return node
        if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            return node
        if isinstance(node, ast.MatchAs) and node.name == name:
            return node
    return None


def _chain(node: ast.Attribute) -> tuple[ast.expr, list[str]]:
    """``a.b.c`` -> (the root expression ``a``, ["b", "c"])."""
    attrs: list[str] = []
    current: ast.expr = node
    while isinstance(current, ast.Attribute):
        attrs.append(current.attr)
        current = current.value
    return current, attrs[::-1]


class _Vetter:
    def __init__(self, bindings: dict[str, str], inputs: set[str], opaque: set[str], refused: dict[str, str] | None = None) -> None:
        #: name -> dotted target, for bindings to table modules and rows
        self.bindings = bindings
        #: name -> dotted target, for bindings outside the table (a read of one is refused)
        self.refused_bindings = refused or {}
        self.inputs = inputs
        self.opaque = opaque
        self.builtins = frozenset(BUILTINS)
        import builtins as _builtins

        self.all_builtins = frozenset(dir(_builtins))

    # -- entry
    def vet(self, source: str) -> None:
        try:
            tree = ast.parse(source)
        except SyntaxError as exc:
            raise _Refused(None, f"does not parse (SyntaxError at line {exc.lineno})") from None
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                self._import(node)
            elif isinstance(node, ast.ImportFrom):
                self._import_from(node)
        self.assigned = _assigned_names(tree)
        for name in self.bindings:
            culprit = _rebinding(tree, name)
            if culprit is not None:
                raise _Refused(culprit, f"rebinds `{name}`, the name of the bound module `{self.bindings[name]}`")
        # a stand-in name the kernel assigns holds whatever it assigned: an ordinary value
        self.opaque -= self.assigned
        self._visit(tree, called=False)

    # -- walking
    def _visit(self, node: ast.AST, called: bool) -> None:
        if isinstance(node, ast.Call):
            self._callee(node.func)
            for child in [*node.args, *node.keywords]:
                self._visit(child, called=False)
            return
        if isinstance(node, ast.Attribute):
            self._attribute(node, called)
            return
        if isinstance(node, ast.Name):
            self._name(node, called)
            return
        self._statement(node)
        for child in ast.iter_child_nodes(node):
            self._visit(child, called=False)

    def _statement(self, node: ast.AST) -> None:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            raise _Refused(node, f"declares `{type(node).__name__.lower()} {', '.join(node.names)}`")
        if isinstance(node, ast.ClassDef):
            raise _Refused(node, f"defines a class (`{node.name}`)")
        if isinstance(node, (ast.AsyncFunctionDef, ast.Await, ast.AsyncFor, ast.AsyncWith)):
            raise _Refused(node, "contains async code")
        if isinstance(node, (ast.FunctionDef, ast.Lambda)):
            if isinstance(node, ast.FunctionDef) and node.name.startswith("__"):
                raise _Refused(node, f"defines the dunder function `{node.name}`")
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]:
                if arg is not None and arg.arg.startswith("__"):
                    raise _Refused(node, f"uses the dunder name `{arg.arg}`")
        if isinstance(node, ast.Delete):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id in self.bindings:
                    raise _Refused(node, f"deletes the bound module `{target.id}`")
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            text = node.value if isinstance(node.value, str) else node.value.decode("latin-1")
            if "__" in text:
                raise _Refused(node, "contains a string with a dunder (`__`) in it")
        if isinstance(node, ast.ExceptHandler) and node.name and node.name.startswith("__"):
            raise _Refused(node, f"uses the dunder name `{node.name}`")

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in TABLE_MODULES:
                raise _Refused(node, f"imports `{alias.name}`, which is not a known pure module")
            name = alias.asname or alias.name.split(".")[0]
            target = alias.name if alias.asname else alias.name.split(".")[0]
            if self.bindings.setdefault(name, target) != target:
                raise _Refused(node, f"imports `{alias.name}` as `{name}`, the name of the bound module `{self.bindings[name]}`")

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            raise _Refused(node, "contains a relative import")
        for alias in node.names:
            if module == "__future__":
                continue
            if module == "typing" and alias.name in TYPING_NAMES:
                continue
            full = f"{module}.{alias.name}"
            if alias.name == "*" or not (full in CALLEES or full in TABLE_MODULES):
                raise _Refused(node, f"imports `{full}`, which is not a known pure callee")
            name = alias.asname or alias.name
            if self.bindings.setdefault(name, full) != full:
                raise _Refused(node, f"imports `{full}` as `{name}`, the name of the bound `{self.bindings[name]}`")

    def _name(self, node: ast.Name, called: bool) -> None:
        name = node.id
        if name.startswith("__"):
            raise _Refused(node, f"uses the dunder name `{name}`")
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            return
        if name in self.bindings:
            if self.bindings[name] in TABLE_MODULES:
                raise _Refused(node, f"uses the module `{self.bindings[name]}` as a value")
            return
        if name in self.inputs or name in self.opaque or name in self.assigned or name in self.builtins:
            return
        if name in self.refused_bindings:
            verb = "calls" if called else "uses"
            raise _Refused(node, f"{verb} `{name}`, bound to `{self.refused_bindings[name]}`, which is not a known pure callee")
        if name in self.all_builtins:
            verb = "calls" if called else "uses"
            raise _Refused(node, f"{verb} `{name}`, which is not a known pure callee")
        # any other free name is unbound at run time (a NameError: no domain there)

    def _callee(self, func: ast.expr) -> None:
        if isinstance(func, ast.Name):
            self._name(func, called=True)
        elif isinstance(func, ast.Attribute):
            self._attribute(func, called=True)
        else:
            # a call of a value computed by the kernel (``torch.vmap(f)(x)``, ``fs[0](x)``):
            # the value is safe by induction, its own expression is vetted here
            self._visit(func, called=False)

    def _attribute(self, node: ast.Attribute, called: bool) -> None:
        root, attrs = _chain(node)
        for attr in attrs:
            if attr.startswith("_"):
                raise _Refused(node, f"uses the attribute `{attr}` (names starting with `_` are refused)")
        if isinstance(root, ast.Name) and root.id in self.opaque and root.id not in self.bindings:
            return  # a stand-in: it mediates every attribute at run time
        if isinstance(root, ast.Name) and root.id in self.bindings:
            if isinstance(node.ctx, (ast.Store, ast.Del)):
                raise _Refused(node, f"assigns to an attribute of the bound module `{self.bindings[root.id]}`")
            self._module_chain(node, self.bindings[root.id], attrs, called)
            return
        self._visit(root, called=False)  # what is evaluated first is reported first
        for attr in attrs:
            if attr not in VALUE_ATTRIBUTES:
                verb = "calls" if called and attr == attrs[-1] else "uses"
                raise _Refused(node, f"{verb} the attribute `.{attr}`, which is not a known pure tensor/array attribute")

    def _module_chain(self, node: ast.Attribute, base: str, attrs: list[str], called: bool) -> None:
        verb = "calls" if called else "uses"
        if base in CALLEES:  # a binding of a row (``zeros`` -> torch.zeros): value attributes only
            rest = attrs
        else:
            dotted = base
            rest = []
            for k, attr in enumerate(attrs):
                dotted = f"{dotted}.{attr}"
                if dotted in CALLEES:
                    rest = attrs[k + 1:]
                    break
                if dotted not in TABLE_MODULES:
                    full = ".".join([base, *attrs])
                    raise _Refused(node, f"{verb} `{full}`, which is not a known pure callee")
            else:
                raise _Refused(node, f"uses the module `{dotted}` as a value")
        for attr in rest:
            if attr not in VALUE_ATTRIBUTES:
                full = ".".join([base, *attrs])
                raise _Refused(node, f"{verb} `{full}`, which is not a known pure callee")


def _bindings(modules: Iterable[tuple[str, str]]) -> tuple[dict[str, str], set[str], dict[str, str]]:
    bound: dict[str, str] = {}
    opaque: set[str] = set()
    refused: dict[str, str] = {}
    for name, dotted in modules:
        kind = binding_kind(dotted)
        if kind == "opaque":
            opaque.add(name)
        elif kind == "refused":
            refused[name] = dotted
        else:
            bound[name] = dotted
    return bound, opaque, refused


def vet_snippets(old: str, new: str, modules: Iterable[tuple[str, str]], inputs: Iterable[str], opaque: Iterable[str]) -> Refusal | None:
    """``vet`` on the parts of a kernel (for callers that hold no ``Kernel``)."""
    # a rule binds the file's module imports whether or not the kernel uses them: a binding
    # outside the table refuses the kernel only where the kernel reads it (at run time the name
    # is a stand-in, never the module)
    bound, opaque_bindings, refused = _bindings(modules)
    inputs = set(inputs)
    clash = sorted(inputs & (set(bound) | opaque_bindings))
    if clash:
        return Refusal(f"the kernel reads an input named `{clash[0]}`, which is also a module binding")
    for label, source in (("old", old), ("new", new)):
        vetter = _Vetter(dict(bound), set(inputs), set(opaque) | opaque_bindings, refused)
        try:
            vetter.vet(source)
        except _Refused as exc:
            where = f" (line {exc.line})" if exc.line else ""
            return Refusal(f"the {label} code {exc.message}{where}", label, exc.line)
    return None


def vet(kernel: object) -> Refusal | None:
    """None if ``kernel`` (an ``equivalence.kernel.Kernel``) may run, else why not."""
    inputs = getattr(kernel, "inputs")
    names = {spec.name for spec in inputs}
    opaque = {spec.name for spec in inputs if getattr(spec.kind, "value", spec.kind) == "opaque"}
    return vet_snippets(getattr(kernel, "old"), getattr(kernel, "new"), getattr(kernel, "modules"), names, opaque)


def refused_names() -> Iterator[str]:
    """The builtins a kernel may not use (for documentation and tests)."""
    import builtins as _builtins

    allowed = set(BUILTINS)
    return (name for name in sorted(dir(_builtins)) if name not in allowed and not name.startswith("_"))


__all__ = [
    "BUILTINS", "CALLEES", "KNOWN_CALLEES", "NEVER_ATTRIBUTES", "Refusal", "TABLE_MODULES", "TYPING_NAMES",
    "VALUE_ATTRIBUTES", "allowed_module_attribute", "binding_kind", "is_known_callee", "vet", "vet_snippets",
]
