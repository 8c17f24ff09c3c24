"""The table of known callees: how each torch / NumPy / nn callee behaves when a loop is batched.

A callee is looked up by qualified name (``torch.nn.functional.softmax``, whatever alias the module
uses) or, for a method call on a value, by method name (``x.softmax(0)`` -> ``softmax``): the
receiver's type is not known statically, so a method row holds only where torch's and NumPy's
methods of that name batch alike, or the row says which library it is about.

Each row is one reviewed fact. ``Batching`` says what the lifter may do with a call whose operands
are per-sample values:

- ``ELEMENTWISE``: applies to every element (broadcasting its tensor arguments); the call on the
  batch is the batch of calls, provided invariant operands do not outrank the samples.
- ``REDUCTION``: reduces along ``dim`` (all dimensions when it is left out); on the batch, ``dim``
  shifts by one and "all dimensions" becomes "all but the first".
- ``ALONG_DIM``: keeps the shape and works along ``dim`` (softmax, cumsum): ``dim`` shifts.
- ``MATMUL``: matrix products; the lifter handles each spelling.
- ``SHAPE``: views and reshapes; dimensions shift, explicit sizes gain the batch size.
- ``CONVERT``: to a Python number (``.item()``, ``float``, ``int``): per-sample Python scalars.
- ``ALLOCATE_LIKE``: a new tensor shaped like its argument (``zeros_like``): element-wise in shape.
- ``ALLOCATE``: a new tensor from sizes; not per-sample unless its sizes are.
- ``RANDOM``: draws random numbers: batching reorders the draws (a trap, never lifted).
- ``EFFECT``: output, logging, optimizer steps: never lifted, never dropped.
- ``LAYER``: an ``nn`` module constructor whose module treats samples independently (``Linear``,
  ``Conv2d``, activations, ``LayerNorm``): one call on the batch is the batch of calls.
- ``STATEFUL_LAYER``: a module whose output depends on the batch or on random draws
  (``BatchNorm*`` in training, ``Dropout``): per-sample calls stay (a trap).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import libcst as cst


class Batching(enum.Enum):
    ELEMENTWISE = "elementwise"
    REDUCTION = "reduction"
    ALONG_DIM = "along-dim"
    MATMUL = "matmul"
    SHAPE = "shape"
    CONVERT = "convert"
    ALLOCATE_LIKE = "allocate-like"
    ALLOCATE = "allocate"
    RANDOM = "random"
    EFFECT = "effect"
    LAYER = "layer"
    STATEFUL_LAYER = "stateful-layer"


@dataclass(frozen=True)
class Callee:
    batching: Batching
    #: where ``dim`` goes when passed positionally (counted among the call's arguments; for a
    #: method, the receiver is not counted); None: keyword only
    dim_position: int | None = None
    #: the keyword of the dimension argument
    dim_keyword: str = "dim"
    #: the dimension used when none is passed (``F.normalize``: 1); None: all dims (reductions)
    #: or "must be passed" (along-dim ops)
    default_dim: int | None = None
    #: the result's dtype kind when evident: "bool", "int", "float", or None (as the input)
    result: str | None = None
    #: a reduction that returns (values, indices) when given ``dim`` (``max``, ``min``)
    pair_with_dim: bool = False
    #: LAYER: the constructor arguments that are sizes (positions and keywords): a kernel builds
    #: the layer with sizes drawn like the other inputs' dimensions
    size_args: tuple[int | str, ...] = ()


def _rows(batching: Batching, names: str, **fields: object) -> dict[str, Callee]:
    callee = Callee(batching, **fields)  # type: ignore[arg-type]
    return {name: callee for name in names.split()}


_ELEMENTWISE_NAMES = (
    "abs absolute exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh sigmoid relu neg negative square sign sgn floor ceil round trunc frac reciprocal "
    "clamp clip clamp_min clamp_max pow float_power erf erfc erfinv lgamma digamma mul multiply add sub subtract "
    "div divide true_divide floor_divide remainder fmod maximum minimum fmax fmin where nan_to_num lerp "
    "hypot atan2 logaddexp xlogy copysign heaviside signbit bitwise_and bitwise_or bitwise_xor bitwise_not "
    "logical_and logical_or logical_xor logical_not deg2rad rad2deg"
)
_COMPARISON_NAMES = "eq ne lt le gt ge greater less greater_equal less_equal not_equal isnan isinf isfinite isposinf isneginf isclose"
_FUNCTIONAL_ELEMENTWISE = (
    "relu relu6 elu selu celu gelu silu mish softplus softsign sigmoid tanh hardtanh hardsigmoid hardswish "
    "leaky_relu logsigmoid tanhshrink softshrink hardshrink threshold"
)

#: ``torch.<name>`` / ``numpy.<name>`` functions
FUNCTIONS: dict[str, Callee] = {}
for _lib in ("torch", "numpy"):
    FUNCTIONS.update({f"{_lib}.{k}": v for k, v in _rows(Batching.ELEMENTWISE, _ELEMENTWISE_NAMES).items()})
    FUNCTIONS.update({f"{_lib}.{k}": v for k, v in _rows(Batching.ELEMENTWISE, _COMPARISON_NAMES, result="bool").items()})
FUNCTIONS.update({f"torch.nn.functional.{k}": v for k, v in _rows(Batching.ELEMENTWISE, _FUNCTIONAL_ELEMENTWISE).items()})
FUNCTIONS.update({f"torch.special.{k}": Callee(Batching.ELEMENTWISE) for k in ("expit", "logit", "erf", "erfc", "xlogy", "log1p", "expm1")})
FUNCTIONS.update({f"math.{k}": Callee(Batching.ELEMENTWISE) for k in ("exp", "log", "sqrt", "sin", "cos", "tanh", "floor", "ceil", "fabs", "pow", "log2", "log10", "log1p", "expm1", "atan2", "hypot")})
# reductions: dim is the second positional argument of the function form
for _lib in ("torch", "numpy"):
    FUNCTIONS.update({f"{_lib}.{k}": v for k, v in _rows(
        Batching.REDUCTION, "sum mean prod std var nansum nanmean amax amin logsumexp median nanmedian",
        dim_position=1, dim_keyword="dim" if _lib == "torch" else "axis").items()})
    FUNCTIONS.update({f"{_lib}.{k}": v for k, v in _rows(
        Batching.REDUCTION, "all any", dim_position=1, dim_keyword="dim" if _lib == "torch" else "axis", result="bool").items()})
    FUNCTIONS.update({f"{_lib}.{k}": v for k, v in _rows(
        Batching.REDUCTION, "argmax argmin count_nonzero", dim_position=1, dim_keyword="dim" if _lib == "torch" else "axis",
        result="int").items()})
FUNCTIONS["torch.max"] = FUNCTIONS["torch.min"] = Callee(Batching.REDUCTION, dim_position=1, pair_with_dim=True)
FUNCTIONS["numpy.max"] = FUNCTIONS["numpy.min"] = Callee(Batching.REDUCTION, dim_position=1, dim_keyword="axis")
FUNCTIONS["torch.norm"] = Callee(Batching.REDUCTION, dim_position=2)
FUNCTIONS["torch.linalg.norm"] = Callee(Batching.REDUCTION, dim_position=2)
FUNCTIONS["torch.linalg.vector_norm"] = Callee(Batching.REDUCTION, dim_position=2)
FUNCTIONS["numpy.linalg.norm"] = Callee(Batching.REDUCTION, dim_position=2, dim_keyword="axis")
# along a dimension
FUNCTIONS.update(_rows(Batching.ALONG_DIM, "torch.softmax torch.log_softmax torch.cumsum torch.cumprod torch.logcumsumexp", dim_position=1))
FUNCTIONS.update(_rows(Batching.ALONG_DIM, "torch.nn.functional.softmax torch.nn.functional.log_softmax torch.nn.functional.softmin", dim_position=1))
FUNCTIONS["torch.nn.functional.normalize"] = Callee(Batching.ALONG_DIM, dim_position=2, default_dim=1)
FUNCTIONS["torch.nn.functional.cosine_similarity"] = Callee(Batching.REDUCTION, dim_position=2, default_dim=1)
FUNCTIONS["torch.cosine_similarity"] = FUNCTIONS["torch.nn.functional.cosine_similarity"]
FUNCTIONS.update(_rows(Batching.ALONG_DIM, "numpy.cumsum numpy.cumprod", dim_position=1, dim_keyword="axis"))
# matrix products
FUNCTIONS.update(_rows(Batching.MATMUL, "torch.matmul torch.mm torch.mv torch.dot torch.inner torch.outer numpy.dot numpy.matmul numpy.inner numpy.outer"))
FUNCTIONS["torch.nn.functional.linear"] = Callee(Batching.ELEMENTWISE)  # acts on the last dim: batch-transparent
# allocation
FUNCTIONS.update(_rows(Batching.ALLOCATE_LIKE, "torch.zeros_like torch.ones_like torch.empty_like torch.full_like numpy.zeros_like numpy.ones_like numpy.empty_like numpy.full_like"))
FUNCTIONS.update(_rows(Batching.ALLOCATE, "torch.zeros torch.ones torch.empty torch.full torch.tensor torch.as_tensor torch.arange torch.linspace torch.eye numpy.zeros numpy.ones numpy.empty numpy.full numpy.array numpy.asarray numpy.arange numpy.linspace numpy.eye"))
# the legacy constructors: of sizes, a new float tensor (of one tensor, that tensor: see kernels._may_be)
FUNCTIONS.update(_rows(Batching.ALLOCATE, "torch.Tensor torch.FloatTensor torch.DoubleTensor"))
# random draws
FUNCTIONS.update(_rows(Batching.RANDOM, " ".join(
    f"torch.{k}" for k in "rand randn randint randperm rand_like randn_like randint_like normal bernoulli multinomial poisson".split()
) + " " + " ".join(f"numpy.random.{k}" for k in "rand randn randint random choice shuffle permutation normal uniform binomial".split())
  + " torch.nn.functional.dropout torch.nn.functional.dropout2d torch.nn.functional.dropout3d torch.nn.functional.alpha_dropout"
  + " torch.nn.functional.gumbel_softmax torch.nn.functional.rrelu"))

#: methods, by name (the receiver's type is not known statically)
METHODS: dict[str, Callee] = {}
METHODS.update(_rows(Batching.ELEMENTWISE, _ELEMENTWISE_NAMES + " relu_ sigmoid_ abs_ float double half long int bool bfloat16 short byte char detach clone contiguous type_as masked_fill"))
METHODS.update(_rows(Batching.ELEMENTWISE, _COMPARISON_NAMES, result="bool"))
for _name in ("float", "double", "half", "bfloat16"):
    METHODS[_name] = Callee(Batching.ELEMENTWISE, result="float")
for _name in ("long", "int", "short", "byte", "char"):
    METHODS[_name] = Callee(Batching.ELEMENTWISE, result="int")
METHODS["bool"] = Callee(Batching.ELEMENTWISE, result="bool")
METHODS.update(_rows(Batching.REDUCTION, "sum mean prod std var nansum nanmean amax amin logsumexp median", dim_position=0))
METHODS.update(_rows(Batching.REDUCTION, "all any", dim_position=0, result="bool"))
METHODS.update(_rows(Batching.REDUCTION, "argmax argmin count_nonzero", dim_position=0, result="int"))
METHODS["max"] = METHODS["min"] = Callee(Batching.REDUCTION, dim_position=0, pair_with_dim=True)
METHODS["norm"] = Callee(Batching.REDUCTION, dim_position=1)
METHODS.update(_rows(Batching.ALONG_DIM, "softmax log_softmax cumsum cumprod logcumsumexp", dim_position=0))
METHODS.update(_rows(Batching.MATMUL, "matmul mm mv dot"))
METHODS.update(_rows(Batching.SHAPE, "view reshape flatten squeeze unsqueeze permute transpose t view_as reshape_as expand expand_as"))
METHODS.update(_rows(Batching.CONVERT, "item tolist numpy"))
METHODS.update(_rows(Batching.ALLOCATE_LIKE, "new_zeros new_ones new_empty new_full new_tensor"))
METHODS.update(_rows(Batching.RANDOM, "uniform_ normal_ random_ bernoulli_ exponential_ cauchy_ log_normal_ geometric_"))
METHODS.update(_rows(Batching.EFFECT, "backward register_hook step zero_grad append extend"))

#: builtins
BUILTINS: dict[str, Callee] = {
    "float": Callee(Batching.CONVERT, result="float"),
    "int": Callee(Batching.CONVERT, result="int"),
    "bool": Callee(Batching.CONVERT, result="bool"),
    "abs": Callee(Batching.ELEMENTWISE),
    "print": Callee(Batching.EFFECT),
}

#: ``torch.nn`` modules: constructors whose modules treat samples independently
LAYERS: dict[str, Callee] = {}
_LAYER_SIZES: dict[str, tuple[int | str, ...]] = {
    "Linear": (0, 1, "in_features", "out_features"),
    "Bilinear": (0, 1, 2, "in1_features", "in2_features", "out_features"),
    **{f"Conv{d}d": (0, 1, "in_channels", "out_channels") for d in (1, 2, 3)},
    **{f"ConvTranspose{d}d": (0, 1, "in_channels", "out_channels") for d in (1, 2, 3)},
    "Embedding": (0, 1, "num_embeddings", "embedding_dim"),
    "LayerNorm": (0, "normalized_shape"),
    "PReLU": (0, "num_parameters"),
}
LAYERS.update({f"torch.nn.{k}": Callee(Batching.LAYER, size_args=_LAYER_SIZES.get(k, ())) for k in (
    "Linear Bilinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d ReLU ReLU6 LeakyReLU "
    "PReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softplus Softsign Hardtanh Hardsigmoid Hardswish LogSigmoid "
    "Tanhshrink Identity LayerNorm Embedding Flatten MaxPool1d MaxPool2d MaxPool3d AvgPool1d AvgPool2d AvgPool3d "
    "AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d Upsample "
    "PixelShuffle"
).split()})
LAYERS.update({f"torch.nn.{k}": Callee(Batching.STATEFUL_LAYER) for k in (
    "BatchNorm1d BatchNorm2d BatchNorm3d SyncBatchNorm InstanceNorm1d InstanceNorm2d InstanceNorm3d GroupNorm "
    "Dropout Dropout1d Dropout2d Dropout3d AlphaDropout FeatureAlphaDropout RReLU LSTM GRU RNN LSTMCell GRUCell "
    "RNNCell MultiheadAttention Transformer TransformerEncoder TransformerDecoder Sequential ModuleList"
).split()})
# Softmax-style layers carry a ``dim``: the module called on the batch would normalise along the
# wrong dimension, so they are not batch-transparent as they stand
LAYERS.update({f"torch.nn.{k}": Callee(Batching.STATEFUL_LAYER) for k in "Softmax LogSoftmax Softmin".split()})


def function(qualified: str) -> Callee | None:
    """The row of a library function (``torch.nn.functional.softmax``), or None."""
    return FUNCTIONS.get(qualified)


def method(name: str) -> Callee | None:
    return METHODS.get(name)


def of_call(func: cst.BaseExpression, qualified: str | None) -> Callee | None:
    """The row of what a call calls: a library function (by its qualified name), a tensor method
    (by its attribute name), or a builtin (a bare name nothing in the module rebinds)."""
    row = function(qualified) if qualified else None
    if row is None and isinstance(func, cst.Attribute):
        row = method(func.attr.value)
    if row is None and isinstance(func, cst.Name) and qualified is None:
        row = BUILTINS.get(func.value)
    return row


def layer(qualified: str) -> Callee | None:
    return LAYERS.get(qualified)
