"""Running one kernel snippet in a clean namespace.

The namespace holds the whitelisted modules the kernel names (torch and its submodules, numpy,
math), the inputs, and restricted builtins: no ``open``, no ``__import__``, no ``exec``/``eval``.
Every other free name is an opaque stand-in, so a snippet never reaches the scanned project's code
or the file system through a name it did not get from us.
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import importlib
from dataclasses import dataclass
from typing import Any

import torch

from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

_ALLOWED_ROOTS = ("torch", "numpy", "math")
#: what an ``import`` written in a kernel may name: the bound modules, plus two that only
#: describe code (``python -m torchfix.equivalence`` runs whole source files, which import them)
_IMPORTABLE_ROOTS = _ALLOWED_ROOTS + ("__future__", "typing")
_FORBIDDEN_BUILTINS = frozenset(
    {
        "open", "exec", "eval", "compile", "input", "breakpoint", "exit", "quit",
        "help", "globals", "locals", "vars", "memoryview", "copyright", "credits", "license",
    }
)
_KERNEL_FILES = frozenset({"<old>", "<new>"})


def _guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
    """``__import__`` for kernels: kernel code may import torch, numpy and math only.

    torch's C code imports lazily (``torch.tensor([...])`` imports ``torch.storage``) through the
    builtins of the running frame -- the kernel's -- so imports are not simply forbidden: the
    caller decides. An import written in a kernel (the frame's file is <old> or <new>) must name a
    whitelisted module; one made by torch's own Python code is torch's business.
    """
    import sys

    caller = sys._getframe(1)
    if caller.f_code.co_filename in _KERNEL_FILES and level == 0 and name.split(".")[0] not in _IMPORTABLE_ROOTS:
        raise ImportError(f"kernels may not import {name!r}")
    return builtins.__import__(name, globals, locals, fromlist, level)


SAFE_BUILTINS: dict[str, Any] = {
    name: getattr(builtins, name) for name in dir(builtins) if name not in _FORBIDDEN_BUILTINS
}
SAFE_BUILTINS["__import__"] = _guarded_import


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
    if dotted.split(".")[0] not in _ALLOWED_ROOTS:
        return None
    try:
        return importlib.import_module(dotted)
    except ImportError:
        # "torch.nn.functional.relu" style bindings (from-imports of functions)
        module_name, _, attr = dotted.rpartition(".")
        try:
            return getattr(importlib.import_module(module_name), attr)
        except (ImportError, AttributeError):
            return None


def base_namespace(kernel: Kernel) -> dict[str, Any]:
    namespace: dict[str, Any] = {"__builtins__": SAFE_BUILTINS, "__name__": "__torchfix_kernel__"}
    for name, dotted in kernel.modules:
        value = resolve_module(dotted)
        namespace[name] = value if value is not None else Opaque(name)
    for spec in kernel.inputs:
        if spec.kind is Kind.OPAQUE:
            namespace[spec.name] = Opaque(spec.name)
    return namespace


def clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        out = value.detach().clone()
        out.requires_grad_(value.requires_grad)
        return out
    if isinstance(value, list):
        return [clone(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clone(v) for v in value)
    if isinstance(value, dict):
        return {k: clone(v) for k, v in value.items()}
    return copy.copy(value)


@dataclass
class RunResult:
    outputs: dict[str, Any]
    inputs_after: dict[str, Any]
    error: BaseException | None = None


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


def run_snippet(code: Any, kernel: Kernel, base: dict[str, Any], inputs: dict[str, Any]) -> RunResult:
    """Execute a compiled snippet on clones of ``inputs``; never raises for the snippet's errors."""
    namespace = dict(base)
    own_inputs = {name: clone(v) for name, v in inputs.items()}
    namespace.update(own_inputs)
    try:
        exec_on_device(code, namespace, input_device(inputs))
    except Exception as exc:  # the old code's domain excludes this input; for new code: a bug
        if is_device_failure(exc):
            raise  # not the snippet's verdict: the device is unusable now (the worker restarts)
        return RunResult({}, own_inputs, exc)
    outputs = {name: namespace.get(name, Unbound()) for name in kernel.outputs}
    return RunResult(outputs, own_inputs, None)


def tensor_inputs(specs: tuple[InputSpec, ...]) -> list[str]:
    return [s.name for s in specs if s.kind in (Kind.TENSOR, Kind.ANY)]
