"""Same-file pure helpers (``codemods.loops.helpers``): which module functions a mapped loop may
call with the kernel holding their definition, and how the kernel holds them."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.loops.helpers import helpers_called, kernel_text, pure_helper
from torchfix.codemods.loops.module import ModuleContext


def _context(source: str) -> ModuleContext:
    return ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))


_PURE = """
    import torch
    import torch.nn.functional as F


    def area(box: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        '''The area of one (x1, y1, x2, y2) box.'''
        w, h = box[2] - box[0], box[3] - box[1]
        if scale != 1.0:
            w = w * scale
        return F.relu(w) * h.clamp(min=0)


    def ratio(box):
        return area(box) / (box[2] - box[0] + 1e-9)
    """


def test_a_function_of_its_arguments_that_only_computes_is_a_pure_helper() -> None:
    context = _context(_PURE)
    assert pure_helper(context, "area") is not None
    assert pure_helper(context, "ratio") is not None  # it calls a pure helper


def test_the_helpers_a_call_reaches_come_callees_first() -> None:
    context = _context(_PURE)
    call = cst.parse_expression("ratio(x)")
    found = helpers_called(context, call)
    assert found is not None
    assert [h.name.value for h in found] == ["area", "ratio"]


def test_the_kernel_holds_a_helper_without_annotations_or_docstring() -> None:
    context = _context(_PURE)
    helper = pure_helper(context, "area")
    assert helper is not None
    text = kernel_text(context, helper)
    assert text.startswith("def area(box, scale = 1.0):\n") or text.startswith("def area(box, scale=1.0):\n")
    assert "torch.Tensor" not in text and "'''" not in text
    assert "return F.relu(w) * h.clamp(min=0)" in text


@pytest.mark.parametrize(
    ("helper", "why"),
    [
        ("def f(box):\n    return box + torch.randn_like(box)\n", "draws random numbers"),
        ("def f(box):\n    box.clamp_(min=0)\n    return box\n", "writes into its argument in place"),
        ("def f(box):\n    box[0] = 0\n    return box\n", "stores into its argument"),
        ("def f(box):\n    box += 1\n    return box\n", "an augmented assignment writes into a tensor"),
        ("def f(box):\n    print(box)\n    return box\n", "has an effect"),
        ("def f(box):\n    return box.item()\n", "converts to a Python number"),
        ("def f(box):\n    return box * SCALE\n", "reads a module global"),
        ("def f(box):\n    return helper_elsewhere(box)\n", "calls a function the module does not define"),
        ("def f(box):\n    return f(box)\n", "calls itself"),
        ("def f(*boxes):\n    return boxes[0]\n", "takes *args"),
        ("def f(box, k=SCALE):\n    return box * k\n", "has a default that is not a literal"),
        ("@torch.no_grad()\ndef f(box):\n    return box * 2\n", "is decorated"),
        ("def f(box):\n    for k in range(2):\n        box = box * 2\n    return box\n", "loops"),
        ("def f(box):\n    global SCALE\n    SCALE = 3\n    return box\n", "declares a global"),
        ("def f(box):\n    return [b for b in box]\n", "has a comprehension scope"),
        ("def f(box):\n    return box * 2\nf = None\n", "is rebound in the module"),
        ("def f(box):\n    return box * 2\nif flag:\n    def f(box):\n        return box\n", "is defined twice"),
        ("def f(box):\n    return box * 2\nfrom elsewhere import *\n", "a star import may rebind it"),
    ],
)
def test_what_is_not_a_pure_helper(helper: str, why: str) -> None:
    source = "import torch\nSCALE = 2.0\n" + helper
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(source)))
    assert pure_helper(context, "f") is None, why


def test_a_call_to_an_impure_function_of_the_module_means_no_helpers_at_all() -> None:
    context = _context(_PURE + "\n    def noisy(box):\n        return box + torch.rand(1)\n")
    assert helpers_called(context, cst.parse_expression("area(x) + noisy(x)")) is None


#: a loop calling the helper `area`, below a function header (indented as `_PURE`)
_AREAS = """
    {header}
        n, _ = boxes.shape
        out = torch.zeros(n)
        for i in range(n):
            out[i] = area(boxes[i])
        return out
    """


def test_the_kernel_starts_with_the_helper_and_the_checker_policy_vets_it() -> None:
    """The helper's text is kernel code like any other: the static policy reads it, and a
    helper reaching an interpreter internal is refused before anything runs."""
    from rewrite_helper import loop_candidates
    from torchfix.equivalence.policy import vet

    loop = _AREAS.format(header="def areas(boxes: torch.Tensor):")
    found, failure = loop_candidates(_PURE + loop)
    mapped = [c for c in found if "torch.vmap" in c.kernel.new]
    assert mapped, failure
    kernel = mapped[0].kernel
    assert kernel.old.startswith("def area(") and kernel.new.startswith("def area(")
    assert "area" not in {spec.name for spec in kernel.inputs}  # defined, not a stand-in
    assert vet(kernel) is None

    hostile = _PURE.replace("return F.relu(w) * h.clamp(min=0)", "leak = box.__class__\n        return F.relu(w) * h.clamp(min=0)")
    found, failure = loop_candidates(hostile + loop)
    mapped = [c for c in found if "torch.vmap" in c.kernel.new]
    assert mapped, failure
    refusal = vet(mapped[0].kernel)
    assert refusal is not None and "__class__" in refusal.reason


@pytest.mark.parametrize(
    "shadow",
    [
        "def areas(boxes: torch.Tensor, area):",  # a parameter of the name: any callable
        "def areas(boxes: torch.Tensor):\n        from other import area",
        "def areas(boxes: torch.Tensor):\n        area = make_area()",
    ],
)
def test_a_helper_name_the_function_binds_otherwise_is_not_the_helper(shadow: str) -> None:
    """The loop calls whatever the name holds in its function: a parameter or local of the
    helper's name may be a BatchNorm, so no kernel may stand in the module's helper for it."""
    from rewrite_helper import loop_candidates

    found, _ = loop_candidates(_PURE + _AREAS.format(header=shadow))
    assert not any(c.kernel.old.startswith("def area(") for c in found)
    assert all(c.unverifiable for c in found)  # only the rung that says what it assumes


@pytest.mark.parametrize(
    "rebinding",
    [
        'globals()["f"] = other',
        'exec("f = other")',
        'setattr(sys.modules[__name__], "f", other)',
        "match other:\n    case f:\n        pass",
        "def g():\n    global f\n    f = other",
    ],
)
def test_a_module_that_may_rebind_the_helper_without_a_def_has_no_pure_helpers(rebinding: str) -> None:
    source = "import sys\nimport torch\ndef f(box):\n    return box * 2\n" + rebinding + "\n"
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(source)))
    assert pure_helper(context, "f") is None


def test_a_method_named_like_a_builtin_that_rebinds_is_only_a_method() -> None:
    """`model.eval()` and `self.modules()` are everywhere in PyTorch code: they are methods,
    not `eval` or `sys.modules`, and leave the module's names trusted."""
    source = "import torch\ndef f(box):\n    return box * 2\ndef g(model):\n    model.eval()\n    return list(model.modules())\n"
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(source)))
    assert pure_helper(context, "f") is not None
    assert context.bindings.get("torch") == "torch"


def test_a_library_name_the_module_also_binds_otherwise_is_not_the_library() -> None:
    """`relu = fastops.scale` at the top beside a function's `from torch import relu`: in the
    other functions `relu` is fastops' -- neither a helper reading it nor the engine may take
    it for `torch.relu`."""
    source = (
        "import torch\nimport fastops\nrelu = fastops.scale\n"
        "def h(v):\n    return relu(v) + 1\n"
        "def other(y):\n    from torch import relu\n    return relu(y)\n"
    )
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(source)))
    assert "relu" not in context.bindings
    assert pure_helper(context, "h") is None


def test_a_long_chain_of_helpers_is_judged_once_each(monkeypatch) -> None:  # noqa: ANN001
    """Each helper's verdict is memoised: in a chain of 60 helpers, each calling the one before
    twice, every helper is judged once (unmemoised the work doubled per level: a hostile file
    could stall a dry run)."""
    from torchfix.codemods.loops import helpers

    judged: list[str] = []
    judge = helpers._judge
    monkeypatch.setattr(helpers, "_judge", lambda context, name, visiting: judged.append(name) or judge(context, name, visiting))
    lines = ["import torch", "def h0(v):", "    return v * 2"]
    for k in range(1, 60):
        lines += [f"def h{k}(v):", f"    return h{k - 1}(v) + h{k - 1}(v)"]
    context = ModuleContext.of(MetadataWrapper(cst.parse_module("\n".join(lines) + "\n")))
    assert pure_helper(context, "h59") is not None
    assert sorted(judged) == sorted(f"h{k}" for k in range(60))


def test_looking_a_name_up_in_globals_is_no_rebinding() -> None:
    """`self.base = globals()[base_name](...)` (a model registry) reads the module's names."""
    source = "import torch\ndef f(box):\n    return box * 2\ndef build(name):\n    return globals()[name]()\n"
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(source)))
    assert not context.rebinds_by_string
    assert pure_helper(context, "f") is not None
    for writing in ('globals()["f"] = g', "globals().update(f=g)", "del globals()['f']"):
        context = ModuleContext.of(MetadataWrapper(cst.parse_module(source + writing + "\n")))
        assert context.rebinds_by_string, writing


def test_a_star_import_leaves_library_imports_trusted_but_makes_no_helpers() -> None:
    source = "import torch\nfrom .types_ import *\ndef f(box):\n    return box * 2\n"
    context = ModuleContext.of(MetadataWrapper(cst.parse_module(source)))
    assert context.bindings.get("torch") == "torch"
    assert pure_helper(context, "f") is None
