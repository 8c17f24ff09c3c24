"""codemods/evidence.py: what a name may hold, from what binds it and what uses it (issue 17)."""

from __future__ import annotations

import textwrap
import warnings

import libcst as cst
import numpy as np
import pytest
import torch

from torchfix.codemods.analysis import module_facts, module_nodes
from torchfix.codemods.evidence import (
    ATTRIBUTE_KINDS,
    TENSOR_ONLY_ATTRIBUTES,
    TENSOR_ONLY_CALLS,
    TORCH_TENSOR_INPUT,
    ScopeEvidence,
    expression_kinds,
    name_kinds,
)
from torchfix.equivalence.kernel import UNKNOWN_KINDS, Kind

T, ND, LST, I, FL, B, NS, D, IT = (
    Kind.TENSOR, Kind.NDARRAY, Kind.LIST, Kind.INT, Kind.FLOAT, Kind.BOOL, Kind.NUMPY_SCALAR, Kind.DICT, Kind.ITERATOR,
)

#: one value of each kind the checker builds
SAMPLES = {
    T: torch.zeros(2), ND: np.zeros(2), NS: np.float64(1.0), LST: [1.0], D: {"a": 1.0}, I: 1, FL: 1.0, B: True,
    IT: (v for v in [1.0]),
}


def _has(value: object, attr: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return hasattr(value, attr)
        except (RuntimeError, ValueError):  # `.imag` of a real tensor, `.mT` of a 1-D one: they exist
            return True


def test_tensor_only_attributes_are_tensor_only():
    for attr in TENSOR_ONLY_ATTRIBUTES | TENSOR_ONLY_CALLS:
        assert _has(torch.zeros(2), attr), attr
    for kind, value in SAMPLES.items():
        if kind is not T:
            assert not [a for a in TENSOR_ONLY_ATTRIBUTES if _has(value, a)], kind
    for value in (np.float32(1), np.int64(1), np.bool_(True)):
        assert not [a for a in TENSOR_ONLY_ATTRIBUTES if _has(value, a)], type(value)


def test_the_attribute_table_says_exactly_which_kinds_have_each_attribute():
    for attr, kinds in ATTRIBUTE_KINDS.items():
        having = {kind for kind, value in SAMPLES.items() if _has(value, attr)}
        assert having == set(kinds), attr


def _calls(first) -> list[tuple]:  # noqa: ANN001
    tensor = torch.rand(2, 2)
    return [(), (tensor,), (0,), (1,), (tensor, tensor), (0, torch.zeros(2, 2, dtype=torch.long)),
            (0, torch.zeros(2, dtype=torch.long)), (tensor > 0.5, 0.0), (tensor > 0.5,), (1, 0), (0, 0, 1),
            (0, torch.zeros(2, 2, dtype=torch.long), tensor), (torch.zeros(2, 2, dtype=torch.long),), (2,),
            ((1, 0),), (0, 1), (0, (2, 1)), (torch.tensor([0, 1]), 0), (tensor, 0.5)]


def test_every_torch_function_said_to_take_tensors_only_rejects_every_other_kind():
    """For each entry: some call works with a tensor first; the same calls fail with a list, an
    ndarray, a NumPy scalar or a Python number first."""
    others = [[1.0, 2.0], np.ones(2), np.float64(1.5), 1.5, 2]

    def runs(name: str, first, rest: tuple) -> bool:  # noqa: ANN001
        try:
            getattr(torch, name)(first, *rest)
            return True
        except Exception:  # noqa: BLE001 - any failure: the call does not take it
            return False

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in sorted(TORCH_TENSOR_INPUT):
            working = [r for r in _calls(None) if any(
                runs(name, t, r) for t in (torch.rand(2, 2), torch.rand(2, 2) + 1, torch.ones(2, 2, dtype=torch.long))
            )]
            assert working, f"torch.{name}: no call found to test it with"
            leaks = [type(o).__name__ for o in others for r in working if runs(name, o, r)]
            assert not leaks, f"torch.{name} takes {leaks[0]} as its first argument"


def _function(source: str, name: str = "f") -> tuple[ScopeEvidence, cst.Module]:
    module = cst.parse_module(textwrap.dedent(source))
    nodes = module_nodes(module)
    scope = next(fn for fn in nodes.of_type(cst.FunctionDef) if fn.name.value == name)
    facts = module_facts(module)
    return ScopeEvidence(scope, {facts.torch or "torch"}, parents=nodes.parents, module=module), module


def kinds(source: str, name: str, function: str = "f") -> tuple[Kind, ...]:
    facts, _ = _function(source, function)
    return facts.name(name).kinds


# ----------------------------------------------------------------------------- not a tensor


@pytest.mark.parametrize(
    "binding,expected",
    [
        ("x = sorted(values)", (LST,)),
        ("x = list(values)", (LST,)),
        ("x = [v * 2 for v in values]", (LST,)),
        ("x = [1.0, 2.0]", (LST,)),
        ("x = [0] * 3", (LST,)),
        ("x = list(values) + [0.0]", (LST,)),
        ("x = {'a': 1.0}", (D,)),
        ("x = {k: v for k, v in pairs}", (D,)),
        ("x = range(n)", (LST,)),
        ("x = t.tolist()", (LST, I, FL, B)),
        ("x = np.asarray(values)", (ND, NS)),
        ("x = t.numpy()", (ND,)),
        ("x = (v for v in values)", (IT,)),
        ("x = len(values)", (I,)),
        ("x = t.item()", (I, FL, B)),
        ("x = t.size(0)", (I,)),
        ("x = t.shape[0]", (I,)),
        ("x = t.copy()[:, :, ::-1]", (ND,)),
        ("x = t[::-2, 0]", (ND,)),
    ],
)
def test_bindings_that_are_not_tensors(binding, expected):
    source = f"import numpy as np\ndef f(values, pairs, n, t):\n    {binding}\n    return x\n"
    assert kinds(source, "x") == expected


def test_a_negative_step_along_one_of_several_dimensions_takes_an_ndarray_only():
    """What the evidence says of `t[:, ::-1]`, held to the real types: a tensor raises on the
    negative step, a list on the tuple of slices; an ndarray takes it."""
    with pytest.raises(ValueError):
        torch.zeros(2, 2)[:, ::-1]
    rows = [[0, 1], [2, 3]]
    with pytest.raises(TypeError):
        rows[:, ::-1]  # type: ignore[call-overload]
    assert np.zeros((2, 2))[:, ::-1].shape == (2, 2)
    assert kinds("def f(t):\n    x = t[:, ::-1]\n    return x\n", "x") == (ND,)
    # one dimension: a list reverses too
    assert ND in kinds("def f(t):\n    x = t[::-1]\n    return x\n", "x") and len(kinds("def f(t):\n    x = t[::-1]\n    return x\n", "x")) > 1


def test_elements_of_enumerate_and_zip_over_lists():
    source = """
    def f(names, ratio_list, model):
        sizes = sorted([p.numel() for p in model.parameters()])
        ratios = sorted(ratio_list)
        total = 0
        for i, n in enumerate(sizes):
            total += int(n * ratios[i])
        for a, b in zip(sizes, ratio_list):
            pass
        return total
    """
    facts, _ = _function(source)
    assert facts.name("i").kinds == (I,)
    assert facts.name("n").kinds == (I,)  # the elements are `.numel()` results
    assert facts.name("a").kinds == (I,)
    assert facts.name("ratios").kinds == (LST,)
    assert "sorted(ratio_list)" in facts.name("ratios").describe()


def test_a_len_only_use_leaves_the_sized_kinds():
    assert kinds("def f(xs):\n    return len(xs)\n", "xs") == (T, ND, LST)


def test_string_keys_and_dict_methods_make_a_dict():
    facts, _ = _function("def f(losses):\n    return losses['total'] / len(losses)\n")
    evidence = facts.name("losses")
    assert evidence.kinds == (D,) and evidence.keys == ("total",)
    assert kinds("def f(losses):\n    return sum(losses.values())\n", "losses") == (T, D)
    assert kinds("def f(d):\n    for k, v in d.items():\n        pass\n", "d") == (D,)


def test_a_name_only_ever_iterated_may_be_a_one_shot_iterator():
    assert IT in kinds("def f(xs):\n    for v in xs:\n        pass\n    return sum(xs)\n", "xs")
    assert IT not in kinds("def f(xs):\n    for v in xs:\n        pass\n    return xs[0]\n", "xs")


# ----------------------------------------------------------------------------- a tensor


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ndef f():\n    x = torch.zeros(3)\n",
        "import torch\ndef f(n):\n    x = torch.tensor([1.0, 2.0])\n",
        "import torch\ndef f(y):\n    x = torch.empty_like(y)\n",
        "import torch\ndef f(y):\n    x = y.new_zeros(3)\n",
        "import torch.nn.functional as F\ndef f(y):\n    x = F.relu(y)\n",
        "import torch\ndef f(x):\n    return torch.sum(x)\n",
        "import torch\ndef f(x):\n    return torch.empty_like(x)\n",
        "import torch.nn.functional as F\ndef f(x):\n    return F.softmax(x, dim=0)\n",
        "def f(x):\n    return x.detach()\n",
        "def f(x):\n    return x.size(0)\n",
        "def f(x):\n    return x.new_zeros(3)\n",
        "import torch\ndef f(x: torch.Tensor):\n    return x\n",
        "import torch as th\ndef f(x: th.Tensor):\n    return x\n",
        "import torch\ndef f(y: torch.Tensor):\n    x = y[0] * 2\n",
    ],
)
def test_tensor_evidence(source):
    facts, _ = _function(source)
    assert facts.name("x").tensor, facts.name("x").describe()


@pytest.mark.parametrize(
    "source",
    [
        "import torch\ndef f(x):\n    return torch.add(x, 1)\n",  # torch.add takes Python numbers too
        "def f(x):\n    return x.size\n",  # an ndarray's size is an int attribute
        "def f(x):\n    return x.device\n",  # NumPy 2 arrays have a device
        "import torch\ndef f():\n    x = torch.max(y, 1)\n",  # a tuple
        "import torch\ndef f(a, b):\n    x = torch.equal(a, b)\n",  # a bool
        "import torch\ndef f():\n    x = torch.nn.Linear(3, 4)\n",  # a module
        "def f(x):\n    return x.item()\n",  # ndarrays and NumPy scalars have .item() too
    ],
)
def test_not_tensor_evidence(source):
    facts, _ = _function(source)
    assert not facts.name("x").tensor, facts.name("x").describe()


def test_item_allows_arrays_and_numpy_scalars_but_not_lists():
    assert kinds("def f(x):\n    return x.item()\n", "x") == (T, ND, NS)


# ----------------------------------------------------------------------------- where it is asked


def test_a_top_level_rebinding_hides_the_earlier_ones_and_later_ones_never_reach():
    source = """
    import torch
    def f(x):
        x = torch.as_tensor(x)
        total = 0.0
        for v in x:
            total += v.item()
        x = x.tolist()
        x.append(1)
        return total
    """
    module = cst.parse_module(textwrap.dedent(source))
    nodes = module_nodes(module)
    scope = nodes.of_type(cst.FunctionDef)[0]
    loop = nodes.of_type(cst.For)[0]
    at_loop = name_kinds("x", scope, at=loop, parents=nodes.parents)
    assert at_loop.tensor, at_loop.describe()
    # asked about the whole function, the list binding counts: no tensor evidence
    assert not name_kinds("x", scope).tensor


def test_bindings_that_disagree_are_not_narrowed_by_uses():
    source = """
    import torch
    def f(flag):
        if flag:
            x = [1.0, 2.0]
        else:
            x = torch.ones(2)
        n = x.size(0)
        return n
    """
    facts, _ = _function(source)
    evidence = facts.name("x")
    assert evidence.kinds == (T, LST) and "several ways" in evidence.describe()


def _at_loop(source: str, name: str):  # noqa: ANN202
    module = cst.parse_module(textwrap.dedent(source))
    nodes = module_nodes(module)
    return name_kinds(name, nodes.of_type(cst.FunctionDef)[0], at=nodes.of_type(cst.For)[0], parents=nodes.parents)


_DEFAULTED = """
import torch
def f(gt, thresholds=None):
    if thresholds is None:
        thresholds = torch.arange(0.5, 0.95, 0.05)
    {use}
    for i, t in enumerate(thresholds):
        recalls[i] = (gt >= t).float().sum()
    return recalls
"""


def test_bindings_that_disagree_are_narrowed_by_a_use_every_path_to_the_loop_passes():
    # the parameter may be anything, the default a tensor: `torch.zeros_like` raises on every
    # other kind, so whoever reaches the loop holds a tensor
    evidence = _at_loop(_DEFAULTED.format(use="recalls = torch.zeros_like(thresholds)"), "thresholds")
    assert evidence.tensor, evidence.describe()


@pytest.mark.parametrize(
    "use",
    [
        "recalls = torch.zeros_like(thresholds) if gt is not None else None",  # maybe not evaluated
        "recalls = gt is None or torch.zeros_like(thresholds)",  # short-circuit
        "recalls = lambda: torch.zeros_like(thresholds)",  # never called here
        "recalls = [torch.zeros_like(thresholds) for _ in gt]",  # gt may be empty
        "if gt is not None: recalls = torch.zeros_like(thresholds)",  # a branch
    ],
)
def test_a_use_that_may_not_run_does_not_narrow_bindings_that_disagree(use):
    evidence = _at_loop(_DEFAULTED.format(use=use), "thresholds")
    assert not evidence.tensor and "several ways" in evidence.describe()


def test_a_use_before_the_last_binding_does_not_narrow():
    source = """
    import torch
    def f(gt, thresholds=None):
        recalls = torch.zeros_like(thresholds)
        if gt is None:
            thresholds = [0.5, 0.75]
        for i, t in enumerate(thresholds):
            recalls[i] = t
        return recalls
    """
    assert not _at_loop(source, "thresholds").tensor


def test_nothing_known_is_every_kind():
    evidence = name_kinds("x", cst.parse_module("def f(x):\n    return x\n").body[0])
    assert evidence.kinds == UNKNOWN_KINDS and not evidence.known


# ----------------------------------------------------------------------------- expressions


def _expression(source: str, code: str):  # noqa: ANN202
    module = cst.parse_module(textwrap.dedent(source))
    nodes = module_nodes(module)
    scope = nodes.of_type(cst.FunctionDef)[0]
    expr = next(c.args[0].value for c in nodes.of_type(cst.Call) if module.code_for_node(c.args[0].value) == code)
    return expression_kinds(expr, scope, parents=nodes.parents)


def test_int_of_python_arithmetic_over_lists_is_not_a_device_sync():
    source = """
    def f(names, ratio_list):
        sizes = sorted([len(name) for name in names])
        ratios = sorted(ratio_list)
        total = 0
        for i, n in enumerate(sizes):
            total += int(n * ratios[i])
        return total
    """
    evidence = _expression(source, "n * ratios[i]")
    assert not evidence.tensor and T in evidence.kinds  # the ratios' elements are unknown
    assert "sorted(ratio_list)" in evidence.describe()


def test_arithmetic_with_a_tensor_is_a_tensor_and_with_len_a_number():
    source = """
    import torch
    def f(x: torch.Tensor, scale):
        a = int(x[0] * scale)
        b = int(len(x) * 0.5)
        return a, b
    """
    assert _expression(source, "x[0] * scale").tensor
    assert _expression(source, "len(x) * 0.5").kinds == (FL,)


def test_names_unpacked_from_a_tensor_are_tensors():
    source = "import torch\ndef f(x, pair):\n    b, j = x.view(-1, 2).long().t()\n    c, d = pair\n    return b, j, c, d\n"
    assert kinds(source, "b") == (T,) and kinds(source, "j") == (T,)
    assert T in kinds(source, "c") and LST in kinds(source, "c")  # `pair` may be anything


def test_items_of_a_list_of_lists_are_not_believed_after_an_inner_list_may_change():
    source = ("import torch\ndef f(y: torch.Tensor, vals: list):\n    outer = [[y, y]]\n    for inner in outer:\n"
              "        inner[1] = vals\n    _, w = outer[0]\n    return w\n")
    assert kinds(source, "w") != (T,)
    nested = ("import torch\ndef f(y: torch.Tensor, vals: list):\n    outer = [([y, y],)]\n    for (inner,) in outer:\n"
              "        inner[1] = vals\n    _, w = outer[0][0]\n    return w\n")
    assert kinds(nested, "w") != (T,)


def test_a_reading_builtin_the_module_shadows_is_a_call_like_any_other():
    source = ("import torch\ndef print(box, vals):\n    box[1] = vals\ndef f(y: torch.Tensor, vals: list):\n"
              "    pair = [y, y]\n    print(pair, vals)\n    _, w = pair\n    return w\n")
    assert kinds(source, "w", "f") != (T,)
    assert kinds(source.replace("    print(pair, vals)\n", "    n = len(pair)\n"), "w", "f") == (T,)


def test_a_name_past_a_starred_target_holds_a_part_counted_from_the_end():
    source = "import torch\ndef f(y: torch.Tensor, vals: list):\n    head, *_, w = (y, y, y, vals)\n    return head, w\n"
    assert kinds(source, "w") == (LST,) and kinds(source, "head") == (T,)
    spread = "import torch\ndef f(y: torch.Tensor, extra: list):\n    seq = [*extra, y]\n    w = seq[0]\n    a, b = (y, *extra)\n    return w, b\n"
    assert kinds(spread, "w") != (T,) and kinds(spread, "b") != (T,)


@pytest.mark.parametrize("change", [
    "pair[1] = vals", "pair[0], pair[1] = y, vals", "pair[1:] = [vals]", "pair.append(vals)", "pair += [vals]",
    "fill(pair)", "other = pair", "box = [pair]",
    # a second review's: targets of loops, comprehensions and `with`, another name, closures
    "for pair[1] in [vals]: pass", "_ = [0 for pair[1] in [vals]]", "with ctx(vals) as pair[1]: pass",
    "dest = pair if flip else spare; dest[1] = vals", "max(pair, [])[1] = vals", "exec('pair[1] = vals')",
    "views = [pair for _ in range(2)]", "slot = lambda: pair",
])
def test_a_list_display_whose_items_may_change_says_nothing_of_them(change: str):
    source = f"import torch\ndef f(y: torch.Tensor, vals: list):\n    pair = [y, y]\n    {change}\n    _, w = pair\n    for v in pair:\n        pass\n    return w, v\n"
    assert kinds(source, "w") != (T,) and kinds(source, "v") != (T,)
    unchanged = source.replace(change, "n = len(pair) + pair[0].numel()")
    assert kinds(source.replace("pair = [y, y]", "pair = other = [y, y]").replace(change, "other[1] = vals"), "w") != (T,)
    assert kinds(unchanged, "w") == (T,) and kinds(unchanged, "v") == (T,)


def test_view_with_a_shape_shows_a_tensor_and_view_with_a_dtype_does_not():
    # the real types: an ndarray's view takes a dtype and raises on a shape
    with pytest.raises(TypeError):
        np.zeros(3).view(-1)
    assert torch.zeros(3).view(-1).shape == (3,)
    shaped = "import torch\nimport numpy as np\ndef f(x):\n    y = x.view(-1)\n    return y\n"
    assert kinds(shaped, "x") == (T,)
    assert kinds(shaped, "y") == (T,)
    assert kinds(shaped.replace("x.view(-1)", "x.view(2, -1)"), "y") == (T,)
    typed = "import torch\nimport numpy as np\ndef f(x):\n    y = x.view(np.float32)\n    return y\n"
    assert T in kinds(typed, "x") and ND in kinds(typed, "x")


_BRANCHED = """
import collections
import torch
def f(x: torch.Tensor, out: torch.Tensor):
    if {test}:
        for k in range(len(x)):
            out[k] = x[k]
    else:
        for k in range(len(x)):
            out[k] = x[k]
"""


@pytest.mark.parametrize(
    "test,then_tensor,else_tensor",
    [
        ("isinstance(x, torch.Tensor)", True, False),  # the else branch: no tensor, annotation or not
        ("not isinstance(x, torch.Tensor)", False, True),
        ("isinstance(x, (list, tuple))", False, True),
        ("isinstance(x, collections.Sequence)", False, True),
        ("isinstance(x, collections.abc.Iterable)", False, True),  # a tensor is iterable: unknown
        ("hasattr(x, 'shape') and x.dim() > 1", False, False),  # some other test of its type
        ("out.dim() > 1", True, True),  # a test about another name
    ],
)
def test_the_code_s_own_type_tests_outrank_what_binds_the_name(test, then_tensor, else_tensor):
    module = cst.parse_module(_BRANCHED.format(test=test))
    nodes = module_nodes(module)
    scope = nodes.of_type(cst.FunctionDef)[0]
    evidence = ScopeEvidence(scope, {"torch"}, parents=nodes.parents, module=module)
    then_loop, else_loop = nodes.of_type(cst.For)
    assert evidence.name("x", at=then_loop).tensor is then_tensor
    assert evidence.name("x", at=else_loop).tensor is else_tensor


def test_a_name_a_sequence_test_holds_for_is_said_to_be_no_tensor():
    module = cst.parse_module(_BRANCHED.format(test="isinstance(x, list)"))
    nodes = module_nodes(module)
    evidence = ScopeEvidence(nodes.of_type(cst.FunctionDef)[0], {"torch"}, parents=nodes.parents, module=module)
    found = evidence.name("x", at=nodes.of_type(cst.For)[0])
    assert T not in found.kinds and "`isinstance(x, list)` is true here" in found.describe()
    assert found.missing_tensor("batching").startswith("`x` is not a tensor")


def test_a_sequence_whose_elements_take_string_keys_holds_no_tensor():
    source = "import torch\ndef f(outputs):\n    return torch.stack([x['val_loss'] for x in outputs]).mean()\n"
    found = _function(source)[0].name("outputs")
    assert T not in found.kinds and "subscripted with the key 'val_loss'" in found.describe()
    assert "annotate" not in found.missing_tensor("batching its samples")
    # an integer index says nothing of the sort
    assert T in _function("def f(outputs):\n    return [x[0] for x in outputs]\n")[0].name("outputs").kinds


def test_several_indices_at_once_show_an_array():
    # a list raises on `x[i, j]` and a NumPy scalar has no such dimensions; `x[i][j]` says less
    source = "def f(x, i):\n    return x[i, 0] + x[:, i].sum()\n"
    assert set(kinds(source, "x")) == {T, ND}
    assert LST in kinds("def f(x, i):\n    return x[i][0]\n", "x")


def test_an_isinstance_branch_outranks_uses_in_the_other_branches():
    # `x[:, t]` sits in the tensor branch; in the list branch, `x` is a list, whatever it says
    source = """
    import torch
    def f(x, t: int):
        if isinstance(x, torch.Tensor):
            out = x[:, t]
        elif isinstance(x, (list, tuple)):
            out = [None] * len(x)
            for i in range(len(x)):
                out[i] = x[i][t]
        return out
    """
    assert _at_loop(source, "x").kinds == (LST,)
    assert _at_loop(source.replace("(list, tuple)", "np.ndarray"), "x").kinds == (ND,)


@pytest.mark.parametrize(
    ("call", "kinds"),
    [("math.ceil(x / 2)", {I}), ("m.floor(x)", {I}), ("math.sqrt(x)", {FL}), ("math.fabs(x)", {FL}),
     ("math.isnan(x)", {B})],
    ids=["ceil", "floor-aliased", "sqrt", "fabs", "isnan"],
)
def test_the_math_module_returns_python_numbers_whatever_it_is_given(call: str, kinds: set) -> None:
    source = textwrap.dedent(f"""
        import math
        import math as m
        def f(x):
            y = {call}
            return y
        """)
    module = cst.parse_module(source)
    function = module.body[2]
    assert isinstance(function, cst.FunctionDef)
    evidence = ScopeEvidence(function, math_names=("math", "m"))
    assert set(evidence.name("y").kinds) == kinds
    # without the import `math` is any object the function reads, and `.ceil(...)` any method
    if call.startswith("math.ceil"):
        assert set(ScopeEvidence(function).name("y").kinds) == set(UNKNOWN_KINDS)


def test_min_of_several_arguments_may_be_any_of_them() -> None:
    # `min(k, x.argmax())` is the 0-d tensor when it compares least
    source = textwrap.dedent("""
        import torch
        def f(x: torch.Tensor, k: int):
            c = min(k, x.argmax())
            d = max(k, 0.7)
            return c, d
        """)
    function = cst.parse_module(source).body[1]
    assert isinstance(function, cst.FunctionDef)
    evidence = ScopeEvidence(function)
    assert T in set(evidence.name("c").kinds) and I in set(evidence.name("c").kinds)
    assert set(evidence.name("d").kinds) == {I, FL}


def _entering(source: str, name: str):  # noqa: ANN202
    """The evidence of ``name`` at the last loop of ``f``: anywhere in it, and as it starts."""
    module = cst.parse_module(textwrap.dedent(source))
    nodes = module_nodes(module)
    scope = nodes.of_type(cst.FunctionDef)[0]
    loop = nodes.of_type(cst.For)[-1]
    evidence = ScopeEvidence(scope, {"torch"}, parents=nodes.parents, module=module)
    return evidence.name(name, at=loop), evidence.name(name, at=loop, entering=True)


def test_what_enters_a_loop_is_what_was_bound_before_it_not_what_the_loop_binds():
    inside, entering = _entering(
        """
        def f(ranks, n):
            ap = 0
            if n == 0:
                return ap
            for i in range(n):
                ap = ap + 1.0 / (ranks[i] + 1)
            return ap
        """,
        "ap",
    )
    assert entering.kinds == (I,), entering.describe()
    # in its later steps `ap` holds what the body computed, whatever that is
    assert inside.kinds != (I,)


def test_a_loop_inside_another_loop_carries_its_own_binding_back_to_its_start():
    _, entering = _entering(
        """
        def f(ranks, n):
            ap = 0
            for epoch in range(2):
                for i in range(n):
                    ap = ap + ranks[i]
            return ap
        """,
        "ap",
    )
    assert entering.kinds != (I,)


def test_a_name_rebound_to_a_method_of_itself_keeps_the_kind_it_had():
    source = """
    import numpy as np
    def f(mask):
        rows = np.argwhere(mask)
        rows = rows.flatten()
        return rows
    """
    chained = source.replace("np.argwhere(mask)\n        rows = rows.flatten()", "np.argwhere(mask).flatten()")
    assert chained != source and T not in kinds(chained, "rows")
    assert kinds(source, "rows") == kinds(chained, "rows")
    # a rebinding of its own name anywhere but directly in the body is not followed
    conditional = source.replace("    rows = rows.flatten()", "    if mask.any():\n            rows = rows.flatten()")
    assert T in kinds(conditional, "rows")
    # what a parameter held is what its rebinding reads
    assert kinds("import torch\ndef f(x: torch.Tensor):\n    x = x.reshape(-1)\n    return x\n", "x") == (T,)


@pytest.mark.parametrize(
    "binding,returned",
    [
        ("y = torch.as_tensor(v).hsplit(2)", tuple),
        ("y = torch.as_tensor(v).frexp()", tuple),
        ("y = torch.as_tensor(v).nanmedian(0)", tuple),
        ("y = torch.as_tensor(v).unique_consecutive(return_counts=True)", tuple),
        ("y = np.asarray(v).nonzero()", tuple),
        ("y = np.asarray(v).sort()", type(None)),
    ],
)
def test_methods_that_return_no_array_are_not_taken_for_one(binding: str, returned: type) -> None:
    """A tuple (or None) from a method of a tensor or an ndarray is no array; the rebinding of a
    name to it (`x = x.hsplit(2)`) keeps nothing of what the name was."""
    v = [[3.0, 1.0], [2.0, 5.0]]
    namespace = {"torch": torch, "np": np, "v": v}
    exec(binding, namespace)  # noqa: S102 - our own one-liners: the table's claim checked against the libraries
    assert isinstance(namespace["y"], returned)
    source = f"import numpy as np\nimport torch\ndef f(v):\n    {binding}\n    return y\n"
    assert not set(kinds(source, "y")) <= {T, ND, NS}
    rebound = f"import numpy as np\nimport torch\ndef f(v):\n    y = v\n    {binding.replace('(v)', '(y)')}\n    return y\n"
    assert not set(kinds(rebound, "y")) <= {T, ND, NS}


@pytest.mark.parametrize("method", ["stride()", "storage()", "to_sparse()", "sparse_mask(x > 0)", "__array__()"])
def test_a_rebinding_reads_the_name_it_rebinds_as_what_it_was_before(method: str) -> None:
    """`x = x.stride()`: the `.stride()` use narrows the `x` before the line, not the tuple it
    binds; and a sparse tensor or an ndarray is no dense tensor."""
    source = f"import torch\ndef f(x: torch.Tensor):\n    x = x.{method}\n    n = len(x)\n    return x\n"
    assert kinds(source, "x") != (T,)


def test_an_isinstance_test_says_nothing_past_a_rebinding_in_its_branch() -> None:
    source = """
    import torch
    def f(s, w, out):
        if isinstance(s, float):
            s = w.abs().max()
            for i in range(len(out)):
                out[i] = out[i] * s
        return out
    """
    assert _at_loop(source, "s").kinds != (FL,)
    assert T in _at_loop(source, "s").kinds


def test_an_annotated_binding_holds_what_its_value_is_where_the_value_shows_it() -> None:
    # Python never checks an annotation: `w.abs().max()` is an array (or a NumPy scalar)
    assert FL not in kinds("def f(w):\n    scale: float = w.abs().max()\n    return scale\n", "scale")
    assert kinds("def f(w):\n    scale: float = helper(w)\n    return scale\n", "scale") == (I, FL)


@pytest.mark.parametrize(
    ("source", "name", "function"),
    [
        ("def f(x, s):\n    n = 2\n    def g():\n        nonlocal n\n        n = s\n    g()\n    return x * n\n", "n", "f"),
        ("scale = 1.0\ndef g(v):\n    global scale\n    scale = v\ndef f(x):\n    return x * scale\n", "scale", "f"),
    ],
    ids=["nonlocal", "global-elsewhere"],
)
def test_a_name_another_function_rebinds_may_hold_anything(source: str, name: str, function: str) -> None:
    found = _function(source, function)[0].name(name)
    assert set(found.kinds) == set(UNKNOWN_KINDS) and "rebound in another function" in found.describe()
