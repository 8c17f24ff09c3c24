"""The ranks (and bool dtypes) a function's straight-line code pins at a loop (``codemods.loops.ranks``)."""

from __future__ import annotations

import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.loops.facts import loop_facts
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.ranks import rank_of


def _context(source: str) -> ModuleContext:
    return ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))


@pytest.mark.parametrize(
    ("expression", "rank"),
    [
        ("x.view(-1)", 1),
        ("x.reshape(b, -1)", 2),
        ("x.view((b, 3, 4))", 3),
        ("x.view(shape)", None),  # a name may hold a shape tuple
        ("x.view(torch.float16)", None),  # a dtype view keeps the rank, which is not pinned
        ("x.flatten()", 1),
        ("x.expand(b, b)", 2),
        ("torch.zeros(b, 4)", 2),
        ("torch.zeros(b)", 1),
        ("torch.zeros(shape)", None),
        ("torch.full((b, 2), 0.5)", 2),
        ("np.zeros((b, 4))", 2),
        ("np.zeros(b, np.float32)", 1),  # NumPy's second argument is the dtype
        ("torch.arange(b)", 1),
        ("torch.eye(b)", 2),
        ("torch.zeros_like(m)", 2),
        ("m.sum(1)", 1),
        ("m.sum(dim=1, keepdim=True)", 2),
        ("m.sum()", 0),
        ("m.sum((0, 1))", 0),
        ("m.max(1)", None),  # a (values, indices) pair in torch
        ("m.norm(2)", None),  # the 2 is p, not a dimension
        ("m.t()", 2),
        ("m.unsqueeze(0)", 3),
        ("m[:, 0]", 1),
        ("m[None]", 3),
        ("m[idx]", None),
        ("m[0, 0, 0]", None),  # three indices of a matrix raise
        ("m + v", 2),
        ("v * 2 - 1", 1),
        ("m @ v", None),
        ("v.eq(m)", 2),
        ("torch.where(v > 0, m, 0.0)", 2),
        ("torch.where(v > 0)", None),  # a tuple of index arrays
        ("m.float().cpu().numpy()", 2),
        ("m.data", 2),
        ("math.exp(v)", None),
        ("unknown + v", None),
        ("F.linear(v, m)", None),  # not a broadcast: the rank of its input
        ("m.sum(dim=())", None),  # torch reduces every dimension, NumPy none
        ("torch.median(m, 1)", None),  # a (values, indices) pair
        ("np.linspace(v, v, 5)", None),  # of arrays: one more dimension than they have
        ("torch.zeros_like(m)", 2),
        ("np.zeros_like(m, shape=(2,))", None),
    ],
)
def test_rank_of(expression: str, rank: int | None) -> None:
    context = _context("import math\nimport numpy as np\nimport torch\nimport torch.nn.functional as F\n")
    node = cst.parse_expression(expression)
    found = rank_of(node, {"m": 2, "v": 1}, lambda n: _qualified(context, n), frozenset({"b"}))
    assert (found[0] if found is not None and found[1] else None) == rank


def _qualified(context: ModuleContext, node: cst.CSTNode) -> str | None:
    # a parsed expression is not in the module: spell the qualified name from its dotted text
    from torchfix.codemods.analysis import dotted

    text = dotted(node) if isinstance(node, (cst.Name, cst.Attribute)) else None
    if not text:
        return None
    head, _, rest = text.partition(".")
    root = context.bindings.get(head)
    if root is None:
        return None
    return f"{root}.{rest}" if rest else root


def _shapes(source: str):  # noqa: ANN202 - the first loop's shape facts
    context = _context(source)
    loops = [n for n in context.nodes.of_type(cst.For) if not isinstance(context.parents.get(context.parents.get(n)), cst.For)]
    facts = loop_facts(loops[-1], context)
    assert facts is not None
    return facts.shapes


def test_a_parameter_rebound_at_the_top_is_pinned_at_the_loop() -> None:
    shapes = _shapes("""
        import torch
        def f(target, align, out):
            target = target.view(-1)
            align = align.view(-1)
            n = len(target) + int(align.numel()) + target.size(0)
            for i in range(target.size(0)):
                out[i] = target[i] + align[i]
            return out
        """)
    assert shapes.ranks["target"] == 1 and shapes.ranks["align"] == 1
    assert "out" not in shapes.ranks  # an input whose rank nothing pins


def test_an_annotated_binding_binds_as_a_plain_one() -> None:
    """A local's annotation is never evaluated: `out: Tensor = zeros(n, 3)` is `out = zeros(n, 3)`
    to the flow, and forgets nothing else it mentions."""
    shapes = _shapes("""
        from torch import Tensor, zeros
        def f(y: Tensor) -> Tensor:
            y = y.view(-1)
            out: Tensor = zeros(len(y), 3)
            late: Tensor
            for i in range(len(y)):
                out[i] = y[i]
            return out
        """)
    assert shapes.ranks["y"] == 1 and shapes.ranks["out"] == 2


@pytest.mark.parametrize(
    "handing",
    ["scores = self_generator(target)", "scores = self.criterion(out, [target])", "n = target.resize_as(out)",
     "h, w = loss(target).shape", "k = len(target) + helper(x=target)", "self.step()", "alias = target; grow(alias)",
     "with channel_view(out):\n                pass", "if promote(out):\n                pass",
     "scores = sorted(out, key=size_of)", "scores = torch.utils.checkpoint.checkpoint(prep, out)",
     "for _ in range(2):\n                grow(out)", "try:\n                grow(out)\n            finally:\n                pass"],
)
def test_a_call_torchfix_cannot_see_into_pins_nothing_past_it(handing: str) -> None:
    # the callee may run `target.unsqueeze_(1)` on what it is given, on a second name for it, or
    # on what it reaches through `self`, a global, a list
    shapes = _shapes(f"""
        import torch
        def f(self, target, out):
            target = target.view(-1)
            {handing}
            for i in range(target.size(0)):
                out[i] = target[i] + 1
            return out
        """)
    assert "target" not in shapes.ranks


def test_ranks_follow_each_binding_and_forget_what_a_branch_or_loop_rebinds() -> None:
    shapes = _shapes("""
        import torch
        def f(x, y, z, w, flat, out):
            x = x.view(-1)
            x = x.unsqueeze(0)              # the latest binding counts
            y = y.view(-1)
            if flat:
                y = y.view(2, -1)           # rebound on one path only
            for k in range(3):
                z = z.view(-1)              # a loop body may run again: not followed
            w = w.view(-1)
            w = w.tolist()                  # bound to a list: no array rank
            for i in range(len(out)):
                out[i] = x[0, i] + y[i] + z[i] + w[i]
            return out
        """)
    assert shapes.ranks.get("x") == 2
    assert "y" not in shapes.ranks and "z" not in shapes.ranks and "w" not in shapes.ranks


def test_a_shape_unpacking_pins_a_rank_only_where_it_ran_before_the_loop_on_every_path() -> None:
    # `a, b = x.shape` raises for any other rank: past it on every path, `x` is 2-D. In a branch
    # or after the loop it says nothing of the `x` the loop sees (it pinned `x` 2-D once, and a
    # 3-D `x` got `x.sum(1)` for `x[i].sum()`: a wrong patch)
    shapes = _shapes("""
        import torch
        def f(x, y, z, w, flag, out):
            a, b = x.shape
            if flag:
                c, d = y.shape
            h, = w.size()
            for i in range(len(out)):
                out[i] = x[i].sum() + y[i].sum() + z[i].sum() + w[i]
            e, f, g = z.shape
            return out
        """)
    assert shapes.ranks.get("x") == 2 and shapes.ranks.get("w") == 1
    assert "y" not in shapes.ranks and "z" not in shapes.ranks


def test_a_shape_unpacking_into_the_name_itself_pins_nothing() -> None:
    shapes = _shapes("""
        import torch
        def f(x, out):
            x, n = x.shape
            for i in range(len(out)):
                out[i] = x[i]
            return out
        """)
    assert "x" not in shapes.ranks


def test_the_flow_enters_with_and_if_blocks_but_not_a_handler_after_its_try() -> None:
    shapes = _shapes("""
        import torch
        def f(a, b, c, out):
            a = a.view(-1)
            with torch.no_grad():
                b = b.reshape(-1)
                if a.numel() > 0:
                    try:
                        c = c.view(-1)
                    except RuntimeError:
                        for i in range(len(out)):
                            out[i] = a[i] + b[i] + c[i]
            return out
        """)
    assert shapes.ranks.get("a") == 1 and shapes.ranks.get("b") == 1
    assert "c" not in shapes.ranks  # the handler may run after a part of the body


@pytest.mark.parametrize(
    "spoiler",
    [
        "t.unsqueeze_(0)",  # an in-place rank change (of `t`, or of an alias of it)
        "u = t; u.resize_(2, 2)",
        "t.data = other",
        "global t",
        "k = (t := t.view(2, -1)).size(1)",  # a walrus in another binding's value
        "torch.matmul(other, other, out=t)",  # torch resizes an `out=` tensor
        "match other:\n                case (t, _):\n                    pass",  # a capture pattern
        "try:\n                pass\n            except ValueError as t:\n                pass",
        "from os import path as t",
        "def t():\n                pass",
    ],
)
def test_code_that_changes_a_rank_behind_the_flow_pins_nothing(spoiler: str) -> None:
    shapes = _shapes(f"""
        import torch
        def f(t, out, other):
            t = t.view(-1)
            {spoiler}
            for i in range(len(out)):
                out[i] = t[i]
            return out
        """)
    assert "t" not in shapes.ranks


def test_a_name_the_loop_itself_binds_is_not_pinned() -> None:
    shapes = _shapes("""
        import torch
        def f(x, n):
            acc = torch.zeros(3)
            for i in range(n):
                acc = acc + x[i]
            return acc
        """)
    assert "acc" not in shapes.ranks  # its rank may change from step to step


def test_bool_arrays_are_told_apart() -> None:
    shapes = _shapes("""
        import torch
        def f(labels, scores, out):
            labels = labels.unsqueeze(1).expand(4, 4)
            same = labels.eq(labels.t())
            other = ~same
            both = same & (labels > 0)
            counts = same.long()
            flags = torch.any(same.view(4, 2, 2), 2)
            votes = torch.any(counts.view(4, 2, 2), 2)
            for i in range(len(out)):
                out[i] = scores[i][same[i]].sum() + other[i].sum() + both[i].sum() + counts[i].sum()
            return out
        """)
    assert {"same", "other", "both", "flags"} <= shapes.bools
    assert "votes" not in shapes.bools  # `any` of an integer array keeps its dtype (uint8 stays uint8)
    assert "counts" not in shapes.bools and "labels" not in shapes.bools
    assert shapes.ranks["same"] == 2 and shapes.ranks["counts"] == 2


@pytest.mark.parametrize(
    "statement",
    [
        "return [torch.cat([a[i].sum().unsqueeze(0) for i in range(n)]) for a in ys]",
        "f = lambda a: torch.cat([a[i].sum().unsqueeze(0) for i in range(n)])",
    ],
    ids=["comprehension-variable", "lambda-parameter"],
)
def test_a_loop_reading_a_variable_of_an_enclosing_comprehension_or_lambda_is_not_lifted(statement: str) -> None:
    # `a` there is not the function's `a` (2-D): the kernel would replay or pin the wrong one
    from torchfix.codemods.loops import ladder
    from torchfix.codemods.loops.facts import comprehension_facts

    context = _context(f"""
        import torch
        def f(x, ys, n: int):
            a = x.view(n, -1)
            {statement}
        """)
    inner = [c for c in context.nodes.of_type(cst.ListComp) if cst.Module([]).code_for_node(c).startswith("[a[i]")][0]
    facts = comprehension_facts(inner, context)
    assert facts is not None and "a variable of a comprehension or lambda around it" in facts.blockers[0]
    found, _, _ = ladder.candidates(facts)
    assert not found


def test_a_shape_unpacked_name_shadowed_by_a_comprehension_pins_nothing() -> None:
    context = _context("""
        import torch
        def f(x, ys):
            n, d = x.shape
            return [torch.cat([x[i].sum().unsqueeze(0) for i in range(n)]) for x in ys]
        """)
    from torchfix.codemods.loops.facts import shape_facts

    function = context.nodes.of_type(cst.FunctionDef)[0]
    assert "x" not in shape_facts(function, context).ranks


@pytest.mark.parametrize(
    ("statement", "floors"),
    [
        ("y = x[i, :, :]", {"x": 3}),
        ("y = x[:, i, ..., 0]", {}),  # `...` takes any number of dimensions
        ("y = x[None, i]", {}),  # `None` takes none
        ("w = np.mean(g, axis=(2, 3))[0, :]", {"g": 4}),
        ("s = g.sum(dim=3)", {"g": 4}),
        ("s = g.sum(axis=-1)", {}),  # counted from the end: any rank of at least one
        ("s = torch.sum(g, dim=1) + h[0]", {"g": 2, "h": 1}),
    ],
)
def test_fewest_dims_are_what_the_code_takes_from_a_name(statement: str, floors: dict[str, int]) -> None:
    from torchfix.codemods.loops.ranks import fewest_dims

    assert fewest_dims([cst.parse_statement(statement)]) == floors


def test_rank_hypotheses_never_go_below_a_floor() -> None:
    from torchfix.codemods.loops.ladder import hypotheses

    found = hypotheses(frozenset({"target", "weights"}), floors={"target": 3})
    assert found == [(("target", 3), ("weights", 2)), (("target", 3), ("weights", 1)), (("target", 3), ("weights", 3))]


@pytest.mark.parametrize(("subscript", "taken"), [("x[i, :, :]", 3), ("x[0]", 1), ("x[..., i]", None), ("x[None, i]", None)])
def test_dims_taken_counts_one_per_element_where_certain(subscript: str, taken: int | None) -> None:
    from torchfix.codemods.loops.ranks import dims_taken

    node = cst.parse_expression(subscript)
    assert isinstance(node, cst.Subscript)
    assert dims_taken(node) == taken


@pytest.mark.parametrize(
    ("between", "pinned"),
    [("images = loader.load()", True), ("images = loader.load(mean)", False), ("alias = mean; images = loader.load()", False),
     ("moved = mean.to(dev); images = loader.load(moved)", False), ("total = mean.sum() + helper()", True),
     ("box = [mean]; images = loader.load()", False), ("same = mean.add_(0); images = loader.load(same)", False)],
    ids=["unreached", "handed", "second-name", "to-may-be-itself", "new-object", "in-a-list", "in-place-returns-itself"],
)
def test_an_array_the_function_made_keeps_its_rank_past_calls_that_cannot_reach_it(between: str, pinned: bool) -> None:
    # `mean = torch.zeros(3)` is the function's own: a call torchfix cannot see into reaches it
    # only once something gave it away
    shapes = _shapes(f"""
        import torch
        def f(loader, dev, out):
            mean = torch.zeros(3)
            {between}
            for c in range(3):
                mean[c] += out[c]
            return mean
        """)
    assert (shapes.ranks.get("mean") == 1) is pinned


def _same_rows(shapes, a: str, b: str) -> bool:  # type: ignore[no-untyped-def]
    return a in shapes.lengths and shapes.lengths.get(a) == shapes.lengths.get(b)


def test_columns_and_copies_of_one_array_have_its_rows() -> None:
    shapes = _shapes("""
        import torch
        import numpy as np
        def f(pairs, scores, out):
            target = pairs[:, 0].clone()
            ids = pairs[:, 1]
            keep = torch.zeros_like(ids)
            flat = np.asarray(scores[:, None]).astype(np.float32)
            cols = pairs[:, [0, 1]]
            other = scores
            for k in range(target.size(0)):
                out[k] = target[k] + ids[k] + keep[k] + flat[k] + cols[k, 0]
            return out
        """)
    for name in ("target", "ids", "keep", "cols"):
        assert _same_rows(shapes, name, "pairs")
    assert _same_rows(shapes, "flat", "scores") and not _same_rows(shapes, "flat", "pairs")
    # (a second name, like a `.copy()`, may be of a dict: a store into it adds a key)
    assert not _same_rows(shapes, "other", "scores")
    assert "out" not in shapes.lengths


def test_rows_unpacked_from_an_array_of_known_rank_are_arrays_with_as_many_rows() -> None:
    shapes = _shapes("""
        import torch
        def f(target, grid, out):
            b, j, k = target.view(-1, 3).long().t()
            p, q = grid.view(2, -1, 4)
            u, v = target  # nothing pins `target`'s rank
            for s in range(len(b)):
                out[b[s], j[s], k[s]] = p[s, 0] + q[s, 0] + u[s] + v[s]
            return out
        """)
    assert {n: shapes.ranks.get(n) for n in "bjkpquv"} == {"b": 1, "j": 1, "k": 1, "p": 2, "q": 2, "u": None, "v": None}
    assert _same_rows(shapes, "j", "b") and _same_rows(shapes, "k", "b") and _same_rows(shapes, "q", "p")
    assert not _same_rows(shapes, "p", "b")


@pytest.mark.parametrize(
    "value",
    ["pairs[1:, 0]", "pairs[0]", "pairs[:, idx, :, idy]", "pairs.view(-1)", "pairs.sum(0)", "pairs.t()",
     "pairs * weights", "pairs[::2]", "torch.cat([pairs, pairs])", "np.repeat(pairs, 2)", "pairs.T",
     "(pairs := pairs[:, 0])", "pairs.copy()", "pairs", "pairs[:, 0, :, idx]", "pairs[:, 0, None, idx]",
     "np.ones_like(pairs, shape=2)", "np.array(pairs, ndmin=2)", "torch.clone(weights)"],
)
def test_what_may_have_other_rows_has_no_length_fact(value: str) -> None:
    shapes = _shapes(f"""
        import torch
        import numpy as np
        def f(pairs, weights, idx, idy, out):
            ids = {value}
            for k in range(len(out)):
                out[k] = ids[k]
            return out
        """)
    assert not _same_rows(shapes, "ids", "pairs")


@pytest.mark.parametrize(
    "between",
    ["labels.append(3)", "n = labels.pop()", "alias = labels\n            alias += [1]", "del labels[0]",
     "labels[2:] = []", "box = [labels]\n            box[0].extend([1])", "grow(labels)", "self.step()",
     "ids = labels[:2]", "labels = labels[:2]", "with keep(labels):\n                pass",
     "alias = labels\n            alias.t_()", "labels.transpose_(0, 1)"],
)
def test_anything_that_may_resize_a_container_forgets_its_length(between: str) -> None:
    shapes = _shapes(f"""
        import torch
        def f(self, labels, out):
            ids = labels[:]
            {between}
            for k in range(len(out)):
                out[k] = ids[k] + labels[k]
            return out
        """)
    assert not _same_rows(shapes, "ids", "labels")


def test_a_length_fact_holds_past_code_that_cannot_resize() -> None:
    shapes = _shapes("""
        import torch
        def f(pairs, w, out):
            ids = pairs[:, 1]
            scale = torch.sqrt(w).sum() + len(ids)
            pairs[0, 0] = 1
            ids += 1
            for k in range(len(out)):
                out[k] = pairs[k, 0] + ids[k] * scale
            return out
        """)
    assert not _same_rows(shapes, "ids", "pairs")  # (`ids += 1` extends a list in place)
    shapes = _shapes("""
        import torch
        def f(pairs, w, out):
            ids = pairs[:, 1]
            scale = torch.sqrt(w).sum() + len(ids)
            hits = torch.zeros(3)
            hits[0] = 1
            for k in range(len(out)):
                out[k] = pairs[k, 0] + ids[k] * scale + hits[k]
            return out
        """)
    assert _same_rows(shapes, "ids", "pairs")
    # a store into what may be a dict (`log`, a parameter) runs a `__setitem__` given `ids`
    shapes = _shapes("""
        import torch
        def f(pairs, log, out):
            ids = pairs[:, 1]
            log["ids"] = ids
            for k in range(len(out)):
                out[k] = pairs[k, 0] + ids[k]
            return out
        """)
    assert not _same_rows(shapes, "ids", "pairs")


def test_a_store_into_what_may_not_be_an_array_forgets_the_rank_it_hands_over() -> None:
    shapes = _shapes("""
        import torch
        def f(x, log, out):
            x = x.view(-1).float()
            log["x"] = x
            for i in range(len(out)):
                out[i] = x[i] * 2
            return out
        """)
    assert "x" not in shapes.ranks


def test_clones_of_two_arrays_are_not_of_one_length() -> None:
    shapes = _shapes("""
        import torch
        def f(x, y, out):
            a = torch.clone(x)
            z = torch.clone(y)
            for i in range(len(out)):
                out[i] = a[i] + z[i]
            return out
        """)
    assert _same_rows(shapes, "a", "x") and _same_rows(shapes, "z", "y") and not _same_rows(shapes, "a", "z")


@pytest.mark.parametrize(
    ("between", "kept"),
    [("", True), ("x = x[:2]", False), ("n = 3", False), ("x.resize_(2)", False), ("alias = x\n            alias.t_()", False),
     ("y = model(x)", True), ("print(x.shape)", True), ("x.mul_(2)", True), ("x = x.view(n, -1)", True),
     ("x = x.float()[:, 0]", True), ("x = x.view(-1, n)", False), ("x = x.view(2, n)", False),
     ("x = x[:, pick(x)]", False),  # (`pick` may transpose `x` in place before the index reads it)
     ("hits = torch.zeros(5)\n            hits[1:] = 1\n            hits += 1", True), ("ids = list(x)\n            ids[1:] = []", False)],
)
def test_a_size_measures_its_array_only_until_either_is_bound_again_or_resized(between: str, kept: bool) -> None:
    # (a call torchfix cannot see into that resizes its argument in place is the documented limit)
    shapes = _shapes(f"""
        import torch
        def f(x, model, out):
            n = len(x)
            {between}
            for i in range(n):
                out[i] = x[i] * 2
            return out
        """)
    assert ("n" in shapes.measures) is kept


def test_a_conversion_pins_the_dtype_the_loop_reads() -> None:
    shapes = _shapes("""
        import numpy as np
        def f(dist, probs, scores, out, k):
            order = np.argsort(dist).astype(np.int32)
            table = dist.astype("float16")
            flags = (dist > 0).astype(np.bool_)
            half = scores.half()
            ids = scores.long()  # (after `.half()`, which may convert what a name holds in place)
            loose = dist.astype(int)
            for i in range(len(out)):
                out[i] = table[order[i, :k]].sum() + flags[i].sum() + ids[i] + half[i] + loose[i]
            return out
        """)
    assert dict(shapes.dtypes) == {"order": "int32", "table": "float16", "flags": "bool", "ids": "int64", "half": "float16"}


@pytest.mark.parametrize(
    ("between", "kept"),
    [("for i in range(3):\n                weights[i, 0] = 1.5", True),
     ("for i in range(3):\n                weights[i, 0] = helper(i)", True),
     ("for i in range(3):\n                weights = weights * 0.5", False),
     ("helper(weights)", False),
     ("weights.data = weights.data.astype(np.float64)", False),
     ("alias = weights; helper(alias)", False),
     ("for i in range(3):\n                helper(weights[i])", True)],
    ids=["store-in-a-loop", "store-beside-an-unknown-call", "rebound-in-a-loop", "handed", "data-assigned", "second-name",
         "items-handed"],
)
def test_a_converted_dtype_holds_until_the_array_may_be_converted_again(between: str, kept: bool) -> None:
    # `np.float32(...)` arrays the function made with `astype` (a copy) are its own: an item
    # store casts the value, not the array, and a call torchfix cannot see into reaches the array
    # only once something gave it away (an item of it is a new NumPy scalar)
    shapes = _shapes(f"""
        import numpy as np
        def f(dist, helper, out):
            weights = np.zeros_like(dist).astype(np.float32)
            {between}
            for c in range(3):
                out[c] = weights[c].sum()
            return out
        """)
    assert (shapes.dtypes.get("weights") == "float32") is kept


def test_a_conversion_that_may_return_its_receiver_is_not_the_function_s_own() -> None:
    # `t.float()` is `t` itself for a float32 `t`: whoever else holds `t` may convert it later
    shapes = _shapes("""
        def f(t, helper, out):
            scores = t.float()
            helper(t)
            for c in range(3):
                out[c] = scores[c].sum()
            return out
        """)
    assert "scores" not in shapes.dtypes


@pytest.mark.parametrize(
    ("between", "kept"),
    [("n = scores.shape[0]", True),
     ("model.half()", False),
     ("model.to(torch.float16)", False),
     ("other = model.weight.double()", False)],
    ids=["a-size", "module-half", "module-to", "another-conversion"],
)
def test_a_converted_tensor_forgets_its_dtype_where_something_may_convert_it_in_place(between: str, kept: bool) -> None:
    # `t.float()` of a float32 parameter is the parameter itself: `model.half()` converts it in
    # place, and the callee table takes `.half()` for a pure conversion of its receiver
    shapes = _shapes(f"""
        import torch
        def f(model, out):
            scores = model.scale.float()
            {between}
            for c in range(3):
                out[c] = scores[c] / 3.0
            return out
        """)
    assert (shapes.dtypes.get("scores") == "float32") is kept


@pytest.mark.parametrize(
    "spoiler",
    ["setattr(order, 'dtype', np.bool_)", "scope = locals()", "order.__setattr__('dtype', np.bool_)"],
    ids=["setattr", "locals", "dunder-setattr"],
)
def test_a_function_that_writes_attributes_reflectively_pins_nothing(spoiler: str) -> None:
    # a closure defined before the conversion reaches the array through its cell: a call of it
    # never mentions the array, so only the function's own code can say it is safe
    shapes = _shapes(f"""
        import numpy as np
        def f(dist, out):
            def spoil():
                {spoiler}
            order = np.argsort(dist).astype(np.int8)
            spoil()
            for c in range(3):
                out[c] = dist[c, order[c]]
            return out
        """)
    assert "order" not in shapes.dtypes and "order" not in shapes.ranks


def test_an_order_along_one_axis_has_its_array_s_rank() -> None:
    shapes = _shapes("""
        import numpy as np
        import torch
        def f(dist, k, out):
            n, m = dist.shape
            flat = np.argsort(dist, axis=None)
            last = np.argsort(dist)
            rows = np.argsort(dist, axis=-1)
            cols = torch.argsort(torch.from_numpy(dist), dim=0, descending=True)
            some = np.argsort(dist, axis=k)
            for i in range(3):
                out[i] = flat[i] + last[i, 0] + rows[i, 0] + cols[i, 0] + some[i]
            return out
        """)
    assert shapes.ranks["last"] == shapes.ranks["rows"] == shapes.ranks["cols"] == 2
    assert "flat" not in shapes.ranks and "some" not in shapes.ranks  # flattened; an axis of unknown value


def test_a_bool_array_the_prelude_makes_is_not_a_bool_input() -> None:
    """`m = m.view(-1) > 0` before the loop is replayed by the kernel: its input `m` is the value
    before that line, of any dtype -- the bool the flow pins at the loop is the line's result."""
    from rewrite_helper import loop_candidates

    found, failure = loop_candidates("""
        import torch

        def f(x: torch.Tensor, m: torch.Tensor, out: torch.Tensor):
            m = m.view(-1) > 0
            for i in range(len(out)):
                out[i] = torch.where(m[i], x[i], 0.0)
            return out
        """)
    assert found, failure
    kernel = found[0].kernel
    assert kernel.old.startswith("m = m.view(-1) > 0")
    (spec,) = [s for s in kernel.inputs if s.name == "m"]
    assert spec.dtypes != ("bool",) and "float32" in spec.allowed_dtypes()
