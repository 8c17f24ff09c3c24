"""Running one kernel snippet in a clean namespace.

A kernel reaches this module only after ``equivalence.policy.vet`` accepted it (in the parent and
again in the worker); what follows is the run-time half of the same rules, defence in depth:

- builtins: exactly ``policy.BUILTINS``, plus a guarded ``__import__`` (torch's C code imports
  lazily through the running frame's builtins, so imports cannot simply be absent);
- modules: each binding to a table module is a :class:`ModuleProxy` that hands out only the
  table's rows and sub-modules (``torch.os``, ``torch.save``, ``np.load`` raise AttributeError);
  torch's own code keeps using the real modules;
- every other free name the kernel declares opaque is a stand-in (:class:`Opaque`).
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import importlib
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Iterator

import numpy as np
import torch

from torchfix.equivalence import policy
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

_ALLOWED_ROOTS = ("torch", "numpy", "math")
#: what an ``import`` written in a kernel may name: the bound modules, plus two that only
#: describe code (``python -m torchfix.equivalence`` runs whole source files, which import them)
_IMPORTABLE_ROOTS = _ALLOWED_ROOTS + ("__future__", "typing")
_KERNEL_FILES = frozenset({"<old>", "<new>"})


def _guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    """``__import__`` for kernels: kernel code may import torch, numpy and math only.

    torch's C code imports lazily (``torch.tensor([...])`` imports ``torch.storage``) through the
    builtins of the running frame -- the kernel's -- so imports are not simply forbidden: the
    caller decides. An import made from code that has no file of its own (the kernel's <old> /
    <new>, or anything compiled from a string: ``<string>``) must name a whitelisted module; one
    made by the real modules' own Python code is their business.
    """
    import sys

    caller = sys._getframe(1)
    if not caller.f_code.co_filename.startswith("<"):
        return builtins.__import__(name, globals, locals, fromlist, level)
    if level != 0 or name.split(".")[0] not in _IMPORTABLE_ROOTS:
        raise ImportError("kernels may import torch, numpy and math only")
    module = builtins.__import__(name, globals, locals, fromlist, level)
    if name.split(".")[0] in ("__future__", "typing"):
        return module
    # the kernel gets the same view of the module as through a binding
    dotted = getattr(module, "__name__", "")
    if dotted not in policy.TABLE_MODULES:
        raise ImportError(f"{dotted} is not a known pure module")
    return module_proxy(module, dotted)


SAFE_BUILTINS: dict[str, Any] = {name: getattr(builtins, name) for name in policy.BUILTINS if hasattr(builtins, name)}
SAFE_BUILTINS["__import__"] = _guarded_import


class ModuleProxy:
    """What a kernel sees of a table module: its rows and table sub-modules, nothing else.

    The real module lives only in the closure of the per-module subclass's ``__getattr__`` (see
    :func:`module_proxy`), not in an attribute a kernel could name."""

    __slots__ = ("__dict__",)

    def __setattr__(self, attr: str, value: Any) -> None:
        raise AttributeError("kernels may not assign module attributes")

    def __delattr__(self, attr: str) -> None:
        raise AttributeError("kernels may not delete module attributes")


def module_proxy(module: Any, dotted: str) -> ModuleProxy:
    """A :class:`ModuleProxy` of ``module`` (the table module named ``dotted``)."""

    def lookup(self: ModuleProxy, attr: str) -> Any:
        full = f"{dotted}.{attr}"
        if full in policy.TABLE_MODULES:
            value: Any = module_proxy(importlib.import_module(full), full)
        elif full in policy.CALLEES:
            value = getattr(module, attr)
        else:
            raise AttributeError(f"{full} is not a known pure callee")
        self.__dict__[attr] = value  # later look-ups skip __getattr__
        return value

    view = type("ModuleProxy", (ModuleProxy,), {"__getattr__": lookup, "__repr__": lambda self: f"<module {dotted!r} (kernel view)>", "__slots__": ()})
    return view()


class OpaqueUse(Exception):
    """Raised when a snippet uses a name the checker could not build."""


class Opaque:
    """A stand-in for a name the checker cannot build (a model, a loss, a helper defined elsewhere).

    Old and new code make the same opaque calls in the same order -- a rewrite never touches them
    -- so both get the same *uninterpreted function*: called with a tensor, it returns a tensor of
    the same shape whose values are a deterministic function of the name and the argument's
    contents. Anything else (attributes, calls without a tensor) raises: the old code then has no
    domain there, and a rewrite that depends on it stays unverified.
    """

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        if attr.startswith("__"):
            raise AttributeError(attr)
        raise OpaqueUse(f"{self._name}.{attr}")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        if not tensors:
            raise OpaqueUse(f"{self._name}(...)")
        first = tensors[0].detach()
        digest = hashlib.sha256(self._name.encode())
        for t in tensors:
            digest.update(str(tuple(t.shape)).encode() + str(t.dtype).encode())
            digest.update(repr(t.detach().cpu().double().nan_to_num(0.0, 1e300, -1e300).tolist()).encode())
        seed = int.from_bytes(digest.digest()[:8], "little") % (2**63)
        generator = torch.Generator().manual_seed(seed)
        values = torch.randn(first.shape, generator=generator, dtype=torch.float64)
        dtype = first.dtype if first.is_floating_point() else torch.get_default_dtype()
        return values.to(dtype=dtype, device=first.device)

    def __repr__(self) -> str:
        return f"<opaque {self._name}>"


def resolve_module(dotted: str) -> Any | None:
    """What a kernel binding names, as the kernel may see it: a :class:`ModuleProxy` for a table
    module, the real object for a table row, None for anything else."""
    kind = policy.binding_kind(dotted)
    if kind == "module":
        return module_proxy(importlib.import_module(dotted), dotted)
    if kind != "row":
        return None
    module_name, _, attr = dotted.rpartition(".")
    while module_name not in policy.TABLE_MODULES:  # a row of a row: torch.Tensor.sum
        module_name, _, outer = module_name.rpartition(".")
        attr = f"{outer}.{attr}"
    value: Any = importlib.import_module(module_name)
    try:
        for part in attr.split("."):
            value = getattr(value, part)
    except AttributeError:
        return None
    return value


def base_namespace(kernel: Kernel) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, "__name__": "__torchfix_kernel__"}
    for name, dotted in kernel.modules:
        value = resolve_module(dotted)
        namespace[name] = value if value is not None else Opaque(name)
    for spec in kernel.inputs:
        if spec.kind is Kind.OPAQUE:
            namespace[spec.name] = Opaque(spec.name)
    return namespace


def error_site(exc: BaseException) -> str:
    """Where a snippet's exception was raised, without its message: ``ValueError at line 3 of the
    old code``. Scanned code chooses exception messages (``float(secret)`` quotes the secret), so
    reports carry the exception's type and the kernel line only -- never its text."""
    line, snippet = 0, ""
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        name = frame.f_code.co_filename
        if name in _KERNEL_FILES:
            line, snippet = lineno, name.strip("<>")
    kind = type(exc).__name__
    if not kind.isidentifier():
        kind = "an exception"
    return f"{kind} at line {line} of the {snippet} code" if snippet else kind


def map_leaves(value: Any, leaf: Callable[[Any], Any]) -> Any:
    """``value`` with ``leaf`` applied to everything but the lists, tuples and dicts holding it."""
    if isinstance(value, list):
        return [map_leaves(v, leaf) for v in value]
    if isinstance(value, tuple):
        return tuple(map_leaves(v, leaf) for v in value)
    if isinstance(value, dict):
        return {k: map_leaves(v, leaf) for k, v in value.items()}
    return leaf(value)


def leaves(value: Any) -> Iterator[Any]:
    """Everything but the lists, tuples and dicts holding it, in order (:func:`map_leaves`'s)."""
    if isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    else:
        yield value


def clone(value: Any) -> Any:
    return map_leaves(value, _clone_leaf)


def _clone_leaf(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        out = value.detach().clone()
        out.requires_grad_(value.requires_grad)
        return out
    return copy.copy(value)


def per_object(inputs: dict[str, Any], function: Callable[[Any], Any]) -> dict[str, Any]:
    """``function`` of each input, called once per distinct object: two names given one object
    (the aliasing sweep's ``f(x, x)``) get one result, so they stay one object."""
    results: dict[int, Any] = {}
    for value in inputs.values():
        if id(value) not in results:
            results[id(value)] = function(value)
    return {name: results[id(value)] for name, value in inputs.items()}


def clone_example(inputs: dict[str, Any]) -> dict[str, Any]:
    """Clones of an example's inputs, one clone per distinct object (:func:`per_object`)."""
    return per_object(inputs, clone)


@dataclass
class RunResult:
    outputs: dict[str, Any]
    inputs_after: dict[str, Any]
    error: BaseException | None = None
    #: the arrays the snippet itself bound (what its lines computed before or beside the outputs)
    arrays: dict[str, Any] = field(default_factory=dict)
    #: the NumPy floating-point errors the run signalled ("divide by zero", "overflow", "invalid
    #: value"): a warning by default, an exception under ``np.seterr(all="raise")``
    float_errors: frozenset[str] = frozenset()
    #: the loops and branches (by number) that ran, where the engine compiled the snippet
    #: counting them (:func:`torchfix.equivalence.engine.counting_steps`)
    steps: frozenset[int] = frozenset()
    #: the leaves that the inputs named in ``run_snippet(computed=...)`` were computed from
    leaves: dict[str, Any] = field(default_factory=dict)


#: the list a snippet compiled by ``counting_steps`` appends to at every loop step and branch
#: taken (a dunder name: a vetted kernel cannot spell it)
STEPS = "__torchfix_steps__"

_UNBOUND = object()


class Unbound:
    def __repr__(self) -> str:
        return "<unbound>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Unbound)

    def __hash__(self) -> int:
        return 0


def is_device_failure(exc: BaseException) -> bool:
    """A CUDA error (a device-side assert, an illegal address): it leaves the process's CUDA
    context unusable, so it says nothing about the example and everything about the worker."""
    return type(exc).__name__ == "AcceleratorError" or "CUDA error" in str(exc)


def input_device(inputs: dict[str, Any]) -> torch.device | None:
    """The device of an example's tensors (the first found; None without tensors)."""
    for value in inputs.values():
        if isinstance(value, torch.Tensor):
            return value.device
        if isinstance(value, list) and value and isinstance(value[0], torch.Tensor):
            return value[0].device
    return None


def exec_on_device(code: Any, namespace: dict[str, Any], device: torch.device | None) -> None:
    """``exec`` with ``device`` as the factory default when it is not the CPU: code written for one
    device allocates with defaults (``torch.zeros(k)``) and, moved to a GPU, runs with the GPU as
    its default device -- the CUDA leg runs it so."""
    if device is not None and device.type != "cpu":
        with device:
            exec(code, namespace)  # noqa: S102 - the whole point: a boxed, restricted run
    else:
        exec(code, namespace)  # noqa: S102


def run_snippet(
    code: Any, kernel: Kernel, base: dict[str, Any], inputs: dict[str, Any], computed: Collection[str] = (),
) -> RunResult:
    """Execute a compiled snippet on clones of ``inputs``; never raises for the snippet's errors.
    ``computed``: inputs (tensors, or lists of them, that require grad) given to the snippet as
    computed tensors, a differentiable copy of each clone (``leaf.clone()``), as a model's output
    is: torch lets a snippet write into those in place, where it refuses any write into a leaf
    that requires grad. The clones themselves, the leaves, are in ``RunResult.leaves``."""
    namespace = dict(base)
    own_inputs = clone_example(inputs)
    leaves: dict[str, Any] = {}
    copies: dict[int, Any] = {}  # (two names given one object get one copy: the sharing stays)
    for name in computed:
        value = leaves[name] = own_inputs[name]
        if id(value) not in copies:
            copies[id(value)] = map_leaves(value, lambda item: _computed_from(item, copies))
        own_inputs[name] = copies[id(value)]
    namespace.update(own_inputs)
    steps: list[int] = []
    namespace[STEPS] = steps
    signalled: set[str] = set()
    try:
        # recorded, not raised: a batched form that computes both branches of a `where` may divide
        # by zero where the loop never did -- a warning by default, an error under np.seterr
        with np.errstate(divide="call", over="call", invalid="call", under="ignore", call=_recorder(signalled)):
            exec_on_device(code, namespace, input_device(inputs))
    except Exception as exc:  # the old code's domain excludes this input; for new code: a bug
        if is_device_failure(exc):
            raise  # not the snippet's verdict: the device is unusable now (the worker restarts)
        return RunResult({}, own_inputs, exc, leaves=leaves)
    outputs = {name: namespace.get(name, Unbound()) for name in kernel.outputs}
    arrays = {
        name: value for name, value in namespace.items()
        if isinstance(value, (torch.Tensor, np.ndarray)) and name not in base and name not in own_inputs and name != STEPS
    }
    return RunResult(outputs, own_inputs, None, arrays, frozenset(signalled), frozenset(steps), leaves)


def _computed_from(value: Any, copies: dict[int, Any]) -> Any:
    """A tensor that requires grad as a differentiable copy of it, one per tensor."""
    if isinstance(value, torch.Tensor) and value.requires_grad:
        if id(value) not in copies:
            copies[id(value)] = value.clone()
        return copies[id(value)]
    return value


def _recorder(signalled: set[str]) -> Callable[[str, int], None]:
    def record(error: str, flag: int) -> None:
        signalled.add(error)

    return record


def tensor_inputs(specs: tuple[InputSpec, ...]) -> list[str]:
    return [s.name for s in specs if s.kind in (Kind.TENSOR, Kind.ANY)]
