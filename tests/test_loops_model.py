"""The loop model (``codemods/loops``): domains, facts and lifts, without the checker.

These pin what the engine *proposes*; whether a proposal is right is the checker's verdict, which
the rule tests (corpus cases) exercise end to end.
"""

from __future__ import annotations

from dataclasses import replace
import textwrap

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper

from torchfix.codemods.apply import apply_edits
from torchfix.codemods.loops import ladder
from torchfix.codemods.loops.domain import loop_domain
from torchfix.codemods.loops.facts import StepKind, comprehension_facts, loop_facts
from torchfix.codemods.loops.module import ModuleContext
from torchfix.codemods.loops.rewrite import CannotRewrite, Options, lift_loop
from torchfix.equivalence.kernel import Kind


def _context(source: str) -> ModuleContext:
    return ModuleContext.of(MetadataWrapper(cst.parse_module(textwrap.dedent(source))))


def _first_loop_facts(source: str):  # noqa: ANN202
    context = _context(source)
    loop = context.nodes.of_type(cst.For)[0]
    return loop_facts(loop, context)


def _rungs(source: str):  # noqa: ANN202
    """The candidates the ladder finds for the first loop of ``source``, and why none, if none."""
    facts = _first_loop_facts(source)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    return found, failure


def _lifted(source: str, options: Options = Options()) -> str:
    facts = _first_loop_facts(source)
    assert facts is not None
    rewrite = lift_loop(facts, options)
    return apply_edits(facts.context.module, rewrite.edits).code


# ----------------------------------------------------------------------------- domains


def _header_facts(header: str, imports: str = ""):  # noqa: ANN202
    """The facts of a loop with ``header`` in ``f(x, y)``, after ``b, d = x.shape``."""
    facts = _first_loop_facts(f"{imports}\ndef f(x, y):\n    b, d = x.shape\n    {header}\n        pass\n")
    assert facts is not None
    return facts


@pytest.mark.parametrize(
    ("header", "index", "walked", "measures"),
    [
        ("for i in range(len(x)):", "i", [], ("x", 0)),
        ("for i in range(0, x.size(0)):", "i", [], ("x", 0)),
        ("for i in range(x.shape[1]):", "i", [], ("x", 1)),
        ("for i in range(x.size()[0]):", "i", [], ("x", 0)),
        ("for i in range(b):", "i", [], ("x", 0)),  # b, d = x.shape
        ("for r in x:", None, [("r", "x")], None),
        ("for i, r in enumerate(x):", "i", [("r", "x")], None),
        ("for a, c in zip(x, y):", None, [("a", "x"), ("c", "y")], None),
        ("for i, (a, c) in enumerate(zip(x, y)):", "i", [("a", "x"), ("c", "y")], None),
    ],
    ids=["len", "range-0-size", "shape-1", "size-subscript", "unpacked-size", "direct", "enumerate", "zip", "enumerate-zip"],
)
def test_the_spellings_of_a_batch_loop_are_one_domain(header, index, walked, measures) -> None:
    facts = _header_facts(header)
    domain = facts.domain
    assert domain.index == index
    assert [(w.element, w.name) for w in domain.walked] == walked
    assert domain.measures == measures


@pytest.mark.parametrize(
    ("header", "keepdim"),
    [
        ("for r in x.unbind():", False),
        ("for r in th.unbind(x, dim=0):", False),
        ("for r in th.chunk(x, x.size(0), dim=0):", True),
        ("for r in x.chunk(len(x)):", True),
        ("for r in x.chunk(b, 0):", True),  # b, d = x.shape
        ("for r in th.chunk(x, chunks=x.shape[0]):", True),
    ],
    ids=["unbind-method", "unbind-function", "chunk-size", "chunk-len", "chunk-unpacked-size", "chunk-keyword"],
)
def test_rows_unbound_or_chunked_one_by_one_walk_the_tensor(header: str, keepdim: bool) -> None:
    facts = _header_facts(header, "import torch as th")
    assert [(w.element, w.name, w.keepdim) for w in facts.domain.walked] == [("r", "x", keepdim)]


@pytest.mark.parametrize("header", [
    "for r in x.chunk(2):",  # two blocks of rows
    "for r in x.chunk(len(y)):",  # as many chunks as `y` has rows: not one row each
    "for r in th.chunk(x, x.size(1), dim=1):",  # columns
    "for r in x.chunk(x.size(0), 1):",
    "for r in th.split(x, 1):",  # one empty chunk of an empty `x`, where `chunk` raises
    "for r in x.unbind(1):",
    "for r in chunk(x, x.size(0)):",  # some other `chunk`
])
def test_other_chunks_are_walked_as_written(header: str) -> None:
    facts = _first_loop_facts(f"""
        import torch as th
        from mylib import chunk
        def f(x, y):
            {header}
                pass
        """)
    assert facts is not None
    assert [w.name for w in facts.domain.walked] == [None] and not facts.domain.walked[0].keepdim


@pytest.mark.parametrize("source", [
    "for i in range(0, n, 2):\n    pass\n",
    "for i in range(n - 1, 0, -1):\n    pass\n",
    "for k, v in d.items():\n    pass\n",
    "for i in reversed(range(n)):\n    pass\n",
    "async def g():\n    async for i in x:\n        pass\n",
    "for i in range(n):\n    pass\nelse:\n    pass\n",
], ids=["step", "descending", "dict-items", "reversed", "async", "for-else"])
def test_other_iterations_are_not_a_domain(source: str) -> None:
    loops = _context(source).nodes.of_type(cst.For)
    assert loops and all(loop_domain(loop) is None for loop in loops)


# ----------------------------------------------------------------------------- facts


def test_the_body_is_classified_statement_by_statement() -> None:
    facts = _first_loop_facts("""
        def f(x, w, out, items):
            total = 0
            for i in range(len(x)):
                if x[i].sum() == 0:
                    continue
                a = x[i] @ w
                out[i] = a.relu()
                total += a.sum()
                items.append(a)
                print(a)
        """)
    assert facts is not None
    assert [s.kind for s in facts.steps] == [
        StepKind.GUARD, StepKind.TEMP, StepKind.STORE, StepKind.ACCUMULATE, StepKind.APPEND, StepKind.OTHER,
    ]
    assert facts.per_sample == {"i", "a"}


@pytest.mark.parametrize(
    ("body", "blocker"),
    [
        ("h = torch.tanh(h * w + x[i])", "read before the body assigns it"),  # h from the previous step
        ("out[i] = out[i - 1] + x[i]", "at another position"),
        ("if x[i] > 0:\n    break", "leave early"),
        ("total += x[i]\nout[i] = total", "read inside the loop"),
    ],
    ids=["temporary-recurrence", "prefix-sum", "break", "accumulator-read"],
)
def test_recurrences_and_early_exits_block_the_lift(body: str, blocker: str) -> None:
    source = "def f(x, w, out, h, total):\n    for i in range(1, len(x)):\n" + textwrap.indent(body, " " * 8) + "\n"
    facts = _first_loop_facts(source)
    assert facts is not None
    assert any(blocker in b for b in facts.blockers), facts.blockers


def test_a_loop_variable_reused_by_a_later_loop_is_not_read_after() -> None:
    facts = _first_loop_facts("""
        def f(x, out):
            for i in range(len(x)):
                out[i] = x[i]
            for i in range(3):
                print(i)
            return out
        """)
    assert facts is not None and not facts.used_after("i") and facts.used_after("out")


# ----------------------------------------------------------------------------- lifts


def test_temporaries_stores_and_pinned_ranks() -> None:
    code = _lifted("""
        import torch
        import torch.nn.functional as F
        def f(x: torch.Tensor, w: torch.Tensor):
            b, d = x.shape
            out = torch.zeros(b)
            for i in range(b):
                a = F.relu(x[i] * 2)
                out[i] = (a - a.mean()).sum()
            return out
        """)
    assert "a = F.relu(x * 2)" in code
    assert "out[:] = (a - a.mean(1, keepdim=True)).sum(1)" in code  # a default-device allocation stays
    assert "for i" not in code


def test_the_allocation_is_kept_on_the_defensive_rung() -> None:
    code = _lifted("""
        import torch
        def f(x: torch.Tensor):
            n, d = x.shape
            out = torch.zeros(n)
            for i in range(n):
                out[i] = x[i].norm()
            return out
        """, Options(replace_allocation=False))
    assert "out = torch.zeros(n)\n    out[:] = x.norm(dim=1)" in code


def test_a_count_of_unknown_sign_is_clamped_on_its_rung() -> None:
    code = _lifted("""
        import torch
        def f(x: torch.Tensor, n: int, out: torch.Tensor):
            for i in range(n):
                out[i] = x[i] * 2.0 + 1.0
            return out
        """, Options(clamp=True, hypotheses=(("x", 2),)))
    assert "out[:max(n, 0)] = x[:max(n, 0)] * 2.0 + 1.0" in code


def test_a_guard_becomes_a_mask_applied_before_the_rest() -> None:
    code = _lifted("""
        import torch
        import torch.nn.functional as F
        def f(logits: torch.Tensor, labels: torch.Tensor):
            b = logits.size(0)
            loss = 0.0
            for i in range(b):
                if labels[i] < 0:
                    continue
                p = F.log_softmax(logits[i], dim=0)
                loss = loss - p[labels[i]]
            return loss
        """, Options(hypotheses=(("labels", 1), ("logits", 2))))
    assert "keep = ~(labels[:b] < 0)" in code
    assert "p = F.log_softmax(logits[keep], dim=1)" in code  # the skipped rows never computed
    assert "labels[:b][keep]" in code


def test_unknown_ranks_ask_for_a_hypothesis() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(x: torch.Tensor, out: torch.Tensor):
            for i in range(x.size(0)):
                out[i] = x[i] - x[i].mean()
            return out
        """)
    assert facts is not None
    with pytest.raises(CannotRewrite) as raised:
        lift_loop(facts, Options())
    assert raised.value.needs_rank == {"x"}
    rung_ranks = [dict(h)["x"] for h in ladder.hypotheses(raised.value.needs_rank)]
    assert rung_ranks == [2, 1, 3]


def test_nested_loops_lift_inner_first() -> None:
    context = _context("""
        import torch
        def pairwise(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
            n, d = a.shape
            m, _ = b.shape
            dist = torch.zeros(n, m)
            for i in range(n):
                for j in range(m):
                    dist[i, j] = ((a[i] - b[j]) ** 2).sum()
            return dist
        """)
    outer = context.nodes.of_type(cst.For)[0]
    facts = ladder.nested(loop_facts(outer, context))
    assert facts is not None
    rewrite = lift_loop(facts, Options(replace_allocation=False))
    assert "dist[:, :m] = ((a[:, None] - b) ** 2).sum(2)" in apply_edits(context.module, rewrite.edits).code


def test_a_stacked_comprehension_is_a_loop_too() -> None:
    context = _context("""
        import torch
        def centre(x: torch.Tensor) -> torch.Tensor:
            n, d = x.shape
            return torch.stack([r - r.mean() for r in x])
        """)
    comprehension = context.nodes.of_type(cst.ListComp)[0]
    facts = comprehension_facts(comprehension, context)
    rewrite = lift_loop(facts, Options())
    assert "return x - x.mean(1, keepdim=True)" in apply_edits(context.module, rewrite.edits).code
    assert rewrite.kernel.old.endswith("_result = torch.stack([r - r.mean() for r in x])\n")


def test_a_walked_name_without_tensor_evidence_is_not_lifted() -> None:
    facts = _first_loop_facts("""
        import torch
        def lengths(seqs: list) -> torch.Tensor:
            out = torch.zeros(len(seqs))
            for i in range(len(seqs)):
                out[i] = seqs[i].sum()
            return out
        """)
    assert facts is not None
    with pytest.raises(CannotRewrite, match=r"`seqs` is not a tensor \(annotated `list`\): batching its samples needs one"):
        lift_loop(facts, Options(hypotheses=(("seqs", 2),)))


def test_a_walked_name_with_no_evidence_either_way_gets_the_annotation_hint() -> None:
    facts = _first_loop_facts("""
        import torch
        def lengths(seqs):
            out = torch.zeros(len(seqs))
            for i in range(len(seqs)):
                out[i] = seqs[i].sum()
            return out
        """)
    assert facts is not None
    with pytest.raises(CannotRewrite, match=r"nothing shows that `seqs` is a tensor .*annotate it `seqs: torch.Tensor`"):
        lift_loop(facts, Options(hypotheses=(("seqs", 2),)))


def test_kernels_replay_the_pure_prelude_and_mark_walked_dimensions() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            b, d = x.shape
            v = w.view(-1)
            out = torch.zeros(b, d)
            for i in range(b):
                out[i] = x[i] * v
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options()).kernel
    assert kernel.old.startswith("b, d = x.shape\nv = w.view(-1)\n")
    specs = {s.name: s for s in kernel.inputs}
    assert set(specs) == {"x", "w"} and specs["x"].batch_dim == 0 and specs["x"].ranks == (2,)


def test_a_rank_pinned_before_the_prelude_is_the_rank_an_input_is_drawn_with() -> None:
    # `target = target.view(-1)` above a store the prelude cannot replay: the prelude starts
    # after the store, where `target` is 1-D on every path; `x = x.view(-1)` inside the prelude pins the rebound `x`,
    # not the `x` the kernel is given, which keeps every rank
    facts = _first_loop_facts("""
        import torch
        def f(target, x, out: torch.Tensor):
            target = target.view(-1)
            out[0] = 0
            x = x.view(-1)
            for i in range(len(out)):
                out[i] = target[i] + x[i] + 1
            return out
        """)
    assert facts is not None
    assert facts.shapes.ranks["target"] == 1 and facts.shapes.ranks["x"] == 1
    kernel = lift_loop(facts, Options()).kernel
    assert "x = x.view(-1)" in kernel.old and "target = target.view(-1)" not in kernel.old
    specs = {s.name: s for s in kernel.inputs}
    assert specs["target"].ranks == (1,)
    assert len(specs["x"].ranks) > 1  # every rank `x[i]` reads


@pytest.mark.parametrize("change", ["t[0] = -5", "u = t; u.fill_(-1)", "log(t)", "t.index_fill_(0, t[:1], 0)"])
def test_the_prelude_stops_where_a_statement_may_change_what_it_bound(change: str) -> None:
    # replaying `t = x.abs()` would show the checker only t >= 0; the loop sees what the
    # statement between made of it (through an alias, or a call torchfix cannot see into, too)
    facts = _first_loop_facts(f"""
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            t = x.abs().long()
            {change}
            out = torch.zeros(len(t))
            for i in range(len(t)):
                out[i] = w[t[i]]
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options(hypotheses=(("w", 1),))).kernel
    assert "x.abs()" not in kernel.old and "t" in {s.name for s in kernel.inputs}


def test_in_place_arithmetic_on_a_value_the_prelude_made_is_replayed() -> None:
    # `dist = d + d.t()` is new: `dist.addmm_(...)` changes nothing else, and the kernel runs it
    # as the function does (the squared distances of a batch, one matrix product)
    facts = _first_loop_facts("""
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            n = x.size(0)
            dist = torch.pow(x, 2).sum(dim=1, keepdim=True).expand(n, n)
            dist = dist + dist.t()
            dist.addmm_(x, x.t(), beta=1, alpha=-2)
            dist.clamp_(min=0)
            out = torch.zeros(n)
            for i in range(n):
                out[i] = dist[i].sum() * w[i]
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options(hypotheses=(("dist", 2), ("w", 1)))).kernel
    assert "dist.addmm_(x, x.t(), beta=1, alpha=-2)\ndist.clamp_(min=0)\n" in kernel.old
    assert "dist" not in {s.name for s in kernel.inputs}


def test_in_place_arithmetic_under_a_with_is_not_replayed() -> None:
    # under `torch.no_grad()` the change leaves no trace in autograd; replayed without the
    # `with`, it would have a backward of its own
    facts = _first_loop_facts("""
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            n = x.size(0)
            with torch.no_grad():
                dist = x * 2
                dist.clamp_(min=0)
                out = torch.zeros(n)
                for i in range(n):
                    out[i] = dist[i].sum() * w[i]
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options(hypotheses=(("dist", 2), ("w", 1)))).kernel
    assert "clamp_" not in kernel.old and "dist" in {s.name for s in kernel.inputs}


@pytest.mark.parametrize("bound", ["dist = x", "dist = x.view(-1, 1)", "dist = x.float()"])
def test_in_place_arithmetic_on_what_may_be_an_argument_ends_the_prelude(bound: str) -> None:
    # the in-place change writes into the caller's tensor (or one it views): the kernel takes
    # `dist` as it reaches the loop, as an input, rather than replay a write into an input
    facts = _first_loop_facts(f"""
        import torch
        def f(x: torch.Tensor, w: torch.Tensor):
            {bound}
            dist.mul_(2)
            out = torch.zeros(len(dist))
            for i in range(len(dist)):
                out[i] = dist[i] * w[i]
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options(hypotheses=(("dist", 1), ("w", 1)))).kernel
    assert "mul_" not in kernel.old and "dist" in {s.name for s in kernel.inputs}


def test_the_prelude_is_read_back_across_an_if_and_no_grad_but_not_an_outer_loop() -> None:
    source = """
        import torch
        def f(x: torch.Tensor, w: torch.Tensor, flag: bool):
            v = w.view(-1)
            for k in range(3):
                t = x.abs()
                if flag:
                    with torch.no_grad():
                        out = torch.zeros(len(t))
                        for i in range(len(t)):
                            out[i] = t[i] * v
            return out
        """
    context = _context(source)
    facts = loop_facts(context.nodes.of_type(cst.For)[1], context)
    assert facts is not None
    # (`v` is 1-D from the line that binds it; `t`'s rank is the ladder's to guess)
    found, failure, _ = ladder.candidates(facts)
    assert found, failure
    kernel = found[0].kernel
    # an earlier step of the outer loop may have changed `v`: it is an input, `t` is replayed
    assert kernel.old.startswith("t = x.abs()\n") and "w.view" not in kernel.old
    assert {s.name for s in kernel.inputs} == {"x", "v"}


def test_inputs_that_share_memory_where_the_prelude_stops_refuse_the_rewrite() -> None:
    # `v` is `buf`, which `out` views: drawn as independent inputs, the loop's read of a row it
    # wrote earlier would be invisible to the checker
    facts = _first_loop_facts("""
        import torch
        def f(y: torch.Tensor):
            buf = torch.zeros(y.numel())
            v = buf
            log("reversing")  # a call torchfix cannot see into: the prelude stops here
            out = buf.view(-1)
            x = y.flatten()
            for i in range(len(x)):
                out[i] = v[len(x) - 1 - i] + x[i]
            return out
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and "`buf` and `v` may share memory" in str(failure)


_SHARED_BEFORE_THE_LOOP = {
    # (`log`: a call torchfix cannot see into, where the prelude stops; a print of a string does
    # not stop it)
    "in-place method": "out = y * 2.0\n    src = out.relu_()\n    log('x')\n    {loop}",
    "out= keyword": "out = y * 2.0\n    src = torch.add(y, 1.0, out=out)\n    log('x')\n    {loop}",
    "elif body": "out = y * 2.0\n    src = out\n    if y is None:\n        return y\n    elif y.numel() > 0:\n        {loop}",
    "for target": "out = y * 2.0\n    bufs.append(out)\n    for src in bufs:\n        pass\n    {loop}",
    "closure": "out = y * 2.0\n    src = out\n    def inner():\n        {loop}\n        return out\n    return inner()",
}


@pytest.mark.parametrize("case", sorted(_SHARED_BEFORE_THE_LOOP))
def test_names_bound_to_one_object_before_the_prelude_stops_refuse_the_rewrite(case: str) -> None:
    body = _SHARED_BEFORE_THE_LOOP[case]
    indent = " " * (body.split("{loop}")[0].rsplit("\n", 1)[-1].count(" "))
    loop = f"for i in range(out.size(0)):\n{indent}    out[i] = src[0] + 1.0"
    source = "import torch\ndef f(y: torch.Tensor, bufs: list):\n    " + body.format(loop=loop) + "\n    return out\n"
    context = _context(source)
    facts = loop_facts(context.nodes.of_type(cst.For)[-1], context)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and "may share memory" in str(failure), (case, failure)


def test_inputs_that_may_share_memory_but_that_nothing_writes_keep_the_rewrite() -> None:
    # `mask` and `gb` both come out of calls of `image` torchfix cannot see into; the loop writes
    # only the fresh `cam`, so whether they share memory changes no value it reads
    facts = _first_loop_facts("""
        import numpy as np
        def f(image, grad_cam, guided):
            mask = grad_cam(image)
            print("guided")
            gb = guided(image)
            cam = np.zeros(gb.shape)
            for i in range(0, gb.shape[0]):
                cam[i, :, :] = mask
            return np.multiply(cam, gb)
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert found, failure


def test_a_with_whose_argument_may_have_an_effect_ends_the_prelude() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(y: torch.Tensor, w: torch.Tensor):
            t = y.flatten()
            with torch.set_grad_enabled(w.add_(1) is None):
                out = torch.zeros(len(t))
                for i in range(len(t)):
                    out[i] = t[i] * 2
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options()).kernel
    assert "y.flatten()" not in kernel.old and "t" in {s.name for s in kernel.inputs}


def test_numpy_comparisons_of_a_per_sample_python_number_are_not_lifted() -> None:
    # NumPy compares `uint64 > -1` exactly, but a Python int with a float32 array in float32
    # (17000051 is 17000052 there): neither the batch of numbers nor its cast does both
    facts = _first_loop_facts("""
        import numpy as np
        def f(a: np.ndarray):
            found = a.cumsum()
            out = np.zeros(len(found), dtype=bool)
            for k in range(len(found)):
                out[k] = found[k] > k - 1
            return out
        """)
    assert facts is not None
    with pytest.raises(CannotRewrite, match="NumPy compares a per-sample Python number"):
        lift_loop(facts, Options(library="numpy", hypotheses=(("found", 1),)))


def test_a_walked_name_the_function_computes_as_an_ndarray_is_lifted_with_numpy() -> None:
    # `found` is no input of the kernel (its prelude computes it), yet the code shows an ndarray:
    # `torch.arange(..., device=found.device)` would not apply to it
    facts = _first_loop_facts("""
        import numpy as np
        import torch
        def f(ranked: np.ndarray):
            found = ranked.cumsum()
            out = np.zeros(len(found))
            for k in range(len(found)):
                out[k] = found[k] / (k + 1.0)
            return out
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert found, failure
    assert all("torch" not in c.kernel.new for c in found)
    assert "found / (np.arange(len(found)) + 1.0).astype(np.result_type(found, 0.0))" in found[0].kernel.new


def test_a_builtin_name_the_function_binds_is_a_kernel_input() -> None:
    # legacy code names its batch `input`: there it is a variable, not the builtin
    facts = _first_loop_facts("""
        import torch
        def f(input: torch.Tensor, w: torch.Tensor):
            out = torch.zeros_like(input)
            for i in range(input.size(0)):
                out[i] = input[i] * w
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options()).kernel
    assert {s.name for s in kernel.inputs} == {"input", "w"}


def test_an_inplace_chain_takes_the_walked_tensor_as_an_input_however_it_was_computed() -> None:
    # `img = imgs[j]` is not replayed: with `img` an input, an example where it has no channels
    # is one the checker can tell (the loop runs no step) and judge only where a grown one runs
    facts = _first_loop_facts("""
        import torch
        def f(imgs: torch.Tensor, j: int):
            img = imgs[j]
            for t, m, s in zip(img, [0.5, 0.5, 0.5], [0.2, 0.2, 0.2]):
                t.sub_(m).div_(s)
            return imgs
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert found, failure
    specs = {s.name: s for s in found[0].kernel.inputs}
    assert set(specs) == {"img"} and specs["img"].batch_dim == 0
    assert "imgs[j]" not in found[0].kernel.old


def test_a_loop_over_a_numpy_array_is_lifted_with_numpy_spellings() -> None:
    facts = _first_loop_facts("""
        import numpy as np
        def f(values: np.ndarray, c: float):
            out = np.zeros(len(values))
            for k in range(len(values)):
                out[k] = np.abs(values[k] - c)
            return out
        """)
    assert facts is not None
    with pytest.raises(CannotRewrite) as refused:
        lift_loop(facts, Options())  # the torch spelling needs a tensor
    assert refused.value.arrays
    found, failure, _ = ladder.candidates(facts)
    assert found and failure is None
    for candidate in found:
        assert "torch" not in candidate.kernel.new and "np.abs(values" in candidate.kernel.new
        walked = next(s for s in candidate.kernel.inputs if s.name == "values")
        assert walked.allowed_kinds() == (Kind.NDARRAY,) and walked.batch_dim == 0


def test_a_walked_name_that_may_be_a_tensor_or_an_array_is_tried_as_both() -> None:
    facts = _first_loop_facts("""
        import numpy as np
        def f(values, c: float):
            out = np.zeros(values.shape[0])
            for k in range(len(values)):
                out[k] = np.abs(values[k] - c)
            return out
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert found and failure is None
    for candidate in found:
        # no torch.vmap rung in a file that never imports torch
        assert "vmap" not in candidate.kernel.new
        walked = next(s for s in candidate.kernel.inputs if s.name == "values")
        assert set(walked.allowed_kinds()) >= {Kind.TENSOR, Kind.NDARRAY} and walked.batch_dim == 0
        assert Kind.LIST not in walked.allowed_kinds()


def test_a_walked_name_that_may_be_a_list_is_not_batched() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(rows):
            out = torch.zeros(len(rows))
            for i in range(len(rows)):
                out[i] = rows[i] * 2
            return out
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and failure is not None and "`rows` is a tensor" in str(failure)


def test_a_guarded_store_runs_only_when_the_loop_would_run(checker) -> None:  # noqa: ANN001
    facts = _first_loop_facts("""
        import torch
        def f(w: torch.Tensor):
            for c in range(1, w.size(0)):
                w[c, 0, :, :] = w[0, 0, :, :]
        """)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    news = [c.kernel.new for c in found]
    plain = "w[1:, 0, :, :] = w[0, 0, :, :]\n"
    guarded = "if w.size(0) > 1:\n    w[1:, 0, :, :] = w[0, 0, :, :]\n"
    assert plain in news and guarded in news and news.index(plain) < news.index(guarded)
    verdicts = {c.kernel.new: checker.check(c.kernel) for c in found if c.kernel.new in (plain, guarded)}
    # an empty `w` has no row 0 to read: the loop runs no step, the plain store raises
    assert verdicts[plain].outcome.value == "rejected"
    assert verdicts[guarded].outcome.value == "verified"


def test_a_trailing_if_of_stores_is_a_guard_that_keeps_rows_then_the_stores() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(t: torch.Tensor, a: torch.Tensor):
            for k in range(len(t)):
                y = a[k] * 2
                if t[k] == 0 and y != 0:
                    t[k] = y
            return t
        """)
    assert facts is not None
    assert [s.kind for s in facts.steps] == [StepKind.TEMP, StepKind.GUARD, StepKind.STORE]
    guard = facts.steps[1]
    assert guard.keeps and isinstance(guard.condition, cst.BooleanOperation)
    assert not facts.blockers  # the test reads the stored row itself only


_OTHER_IFS = {
    "an else binding another target": "if t[k] == 0:\n            t[k] = 1\n        else:\n            t[0] = 2",
    "not the last statement": "if t[k] == 0:\n            t[k] = 1\n        t[k] += 1",
    "leaving the loop": "if t[k] == 0:\n            t[k] = 1\n            break",
}


@pytest.mark.parametrize("branch", list(_OTHER_IFS.values()), ids=list(_OTHER_IFS))
def test_other_ifs_stay_branches(branch: str) -> None:
    facts = _first_loop_facts(
        "import torch\ndef f(t: torch.Tensor):\n    for k in range(len(t)):\n        " + branch + "\n    return t\n"
    )
    assert facts is not None
    assert StepKind.GUARD not in [s.kind for s in facts.steps]
    assert StepKind.BRANCH in [s.kind for s in facts.steps]


def test_a_guarded_store_is_a_masked_store_cast_to_the_target_dtype() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(pairs: torch.Tensor):
            t = pairs[:, 0].clone()
            src = pairs[:, 1]
            for k in range(t.size(0)):
                if t[k] == 0 and not src[k] < 0:
                    t[k] = src[k] + 1
            return t
        """)
    assert facts is not None
    rewrite = lift_loop(facts, Options(hypotheses=(("src", 1), ("t", 1))))
    new = rewrite.kernel.new
    assert "keep = (t == 0) & (~(src[:t.size(0)] < 0))" in new
    assert "t[keep] = (src[:t.size(0)][keep] + 1).to(t.dtype)" in new
    guarded = lift_loop(facts, Options(hypotheses=(("src", 1), ("t", 1)), guard_any=True))
    assert "if keep.any():\n    t[keep] = " in guarded.kernel.new


def test_the_data_of_a_tensor_is_walked_as_the_tensor() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(x: torch.Tensor, out: torch.Tensor):
            for k in range(out.size(0)):
                out[k] = x.data[k] * 2
            return out
        """)
    assert facts is not None
    rewrite = lift_loop(facts, Options())
    assert rewrite.kernel.new == "out[:] = x.data[:out.size(0)] * 2\n"
    assert dict(rewrite.walked).get("x") == 0  # the kernel walks `x`: it needs tensor evidence for `x`


def test_a_row_before_the_first_one_written_is_an_invariant_read() -> None:
    facts = _first_loop_facts("""
        import torch
        def f(w: torch.Tensor):
            for c in range(1, w.size(0)):
                w[c, 0] = w[0, 0]
            return w
        """)
    assert facts is not None and not facts.blockers
    rewrite = lift_loop(facts, Options(replace_allocation=False))
    assert rewrite.kernel.new == "w[1:, 0] = w[0, 0]\n"  # the loop stops at w.size(0): `w[1:]`
    walked = next(s for s in rewrite.kernel.inputs if s.name == "w")
    assert (walked.batch_dim, walked.batch_start) == (0, 1)  # zero iterations while w.size(0) <= 1


@pytest.mark.parametrize("read", ["w[c - 1, 0]", "w[1, 0]", "w[0, c]"])
def test_a_row_the_loop_may_write_is_not_an_invariant_read(read: str) -> None:
    facts = _first_loop_facts(f"import torch\ndef f(w: torch.Tensor):\n    for c in range(1, w.size(0)):\n        w[c, 0] = {read}\n    return w\n")
    assert facts is not None and any("another position" in b for b in facts.blockers)


_CHANNELS = """
import torch
def f(image: torch.Tensor):
    for channel, mean, std in zip(image, [0.5, 0.25, 0.125], [2.0, 4.0, 8.0]):
        channel.mul_(std).add_(mean)
    return image
"""


def test_an_inplace_chain_on_the_channels_is_one_chain_channels_last(checker) -> None:  # noqa: ANN001
    facts = _first_loop_facts(_CHANNELS)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert failure is None and len(found) == 1
    assert found[0].kernel.new == (
        "image[:3].movedim(0, -1).mul_(image.new_tensor([2.0, 4.0, 8.0], dtype=torch.promote_types(image.dtype, torch.float32))[:len(image)])"
        ".add_(image.new_tensor([0.5, 0.25, 0.125])[:len(image)])\n"
    )
    assert checker.check(found[0].kernel).outcome.value == "verified"


def test_the_numbers_of_mul_keep_float32_for_a_half_precision_image(checker) -> None:  # noqa: ANN001
    """`t.mul_(0.229)` multiplies a bfloat16 channel by 0.229 in float32; `t.add_(0.485)` first
    rounds 0.485 to bfloat16. Numbers made in the image's dtype for both change `t * 0.229 + 0.485`
    by several per cent where the two nearly cancel: the checker draws bfloat16 and refutes it."""
    facts = _first_loop_facts(
        "import torch\ndef f(img: torch.Tensor):\n"
        "    for t, m, s in zip(img, [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]):\n        t.mul_(s).add_(m)\n    return img\n"
    )
    assert facts is not None
    (candidate,), _, _ = ladder.candidates(facts)
    assert "mul_(img.new_tensor([0.229, 0.224, 0.225], dtype=torch.promote_types(img.dtype, torch.float32))" in candidate.kernel.new
    assert ".add_(img.new_tensor([0.485, 0.456, 0.406])[:len(img)])" in candidate.kernel.new
    assert checker.check(candidate.kernel).outcome.value == "verified"
    rounded_first = candidate.kernel.new.replace(", dtype=torch.promote_types(img.dtype, torch.float32)", "")
    verdict = checker.check(replace(candidate.kernel, new=rounded_first))
    assert verdict.outcome.value == "rejected" and "bfloat16" in verdict.reason


@pytest.mark.parametrize(
    "wrong",
    [
        # what a reviewer might write: 3-D images of exactly 3 channels only
        "image.mul_(torch.tensor([2.0, 4.0, 8.0]).view(-1, 1, 1)).add_(torch.tensor([0.5, 0.25, 0.125]).view(-1, 1, 1))\n",
        # without `movedim`, the numbers broadcast along the last dimension, not the channels
        "image[:3].mul_(image.new_tensor([2.0, 4.0, 8.0])[:len(image)]).add_(image.new_tensor([0.5, 0.25, 0.125])[:len(image)])\n",
        # without the cut, an image of fewer channels than numbers raises where zip stopped early
        "image[:3].movedim(0, -1).mul_(image.new_tensor([2.0, 4.0, 8.0])).add_(image.new_tensor([0.5, 0.25, 0.125]))\n",
        # the chain's order matters
        "image[:3].movedim(0, -1).add_(image.new_tensor([0.5, 0.25, 0.125])[:len(image)]).mul_(image.new_tensor([2.0, 4.0, 8.0])[:len(image)])\n",
    ],
)
def test_wrong_batched_forms_of_an_inplace_chain_are_refuted(checker, wrong: str) -> None:  # noqa: ANN001
    facts = _first_loop_facts(_CHANNELS)
    assert facts is not None
    found, _, _ = ladder.candidates(facts)
    kernel = replace(found[0].kernel, new=wrong)
    assert checker.check(kernel).outcome.value == "rejected"


@pytest.mark.parametrize(
    ("loop", "reason"),
    [
        ("for c, m in zip(image, [0.5, 0.5]):\n        c.sub_(m).div_(scale)", "neither a number nor one of the zipped numbers"),
        ("for c, m, s in zip(image, [0.5, 0.5], [1.0]):\n        c.sub_(m).div_(s)", "differ in length"),
        ("for c, m in zip(image, stats):\n        c.sub_(m)", "not a list of number literals"),
        ("for c, m in zip(image, [0.5]):\n        c.sub_(m, alpha=2)", "other arguments than numbers"),
    ],
)
def test_an_inplace_chain_outside_what_is_lifted_says_why(loop: str, reason: str) -> None:
    facts = _first_loop_facts(f"import torch\ndef f(image: torch.Tensor, scale, stats):\n    {loop}\n    return image\n")
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and failure is not None and reason in str(failure)


def test_names_bound_only_to_python_numbers_have_rank_zero() -> None:
    """`f = math.ceil(...)`, arithmetic of numbers, and a later `for c in range(...)` all bind
    Python numbers; a name also bound to a tensor, or a parameter, is not pinned."""
    facts = _first_loop_facts(
        """
        import math
        import torch
        def f(w, scale):
            f = math.ceil(w.size(2) / 2)
            c = (2 * f - 1 - f % 2) / (2.0 * f)
            n = len(w) * 3
            t = torch.ones(3)
            t = 2
            s = scale + 1
            for i in range(w.size(2)):
                w[0, 0, i] = i / f - c
            for c in range(1, w.size(0)):
                w[c] = w[0]
        """
    )
    assert facts is not None
    assert {"f", "c", "n"} <= facts.shapes.numbers
    assert not {"t", "s", "scale", "w"} & facts.shapes.numbers
    assert facts.shapes.ranks["f"] == facts.shapes.ranks["c"] == 0


def test_reading_the_stored_tensor_s_shape_or_device_is_no_read_of_its_elements() -> None:
    blocked = _first_loop_facts(
        """
        import torch
        def f(w: torch.Tensor):
            for i in range(w.size(2)):
                w[0, i] = w[1, 0] * w.size(2)
        """
    )
    assert blocked is not None and any("another position" in b for b in blocked.blockers)
    fine = _first_loop_facts(
        """
        import torch
        def f(w: torch.Tensor):
            for i in range(w.size(2)):
                w[0, i] = i / w.size(2) + torch.zeros((), device=w.device)
        """
    )
    assert fine is not None and not any("another position" in b for b in fine.blockers)


def test_an_index_used_as_a_number_takes_the_device_of_the_tensor_the_extent_measures() -> None:
    source = """
    import torch
    def f(w: torch.Tensor):
        for j in range(w.size(1)):
            w[0, j] = j * 0.5
    """
    # (in float64: Python computes `j * 0.5` in double precision)
    assert "torch.arange(w.size(1), device=w.device, dtype=torch.float64)" in _lifted(source)


def test_two_loops_lifted_together_run_only_when_both_would() -> None:
    source = """
    import math
    import torch
    def f(w: torch.Tensor):
        _, _, h, k = w.shape
        for i in range(h):
            for j in range(k):
                w[0, 0, i, j] = math.fabs(i - j)
    """
    context = _context(source)
    loop = context.nodes.of_type(cst.For)[0]
    both = ladder.nested(loop_facts(loop, context))
    assert both is not None
    rewrite = lift_loop(both, Options(guard_empty=True))
    code = apply_edits(context.module, rewrite.edits).code
    assert "if h > 0 and k > 0:" in code, code


# ----------------------------------------------------------------------------- kernels: what they read


def test_an_accumulator_read_inside_a_compound_statement_is_a_free_name():
    from torchfix.codemods.loops.kernels import free_names

    module = cst.parse_module(textwrap.dedent("""
        if n > 0:
            total += v.sum(0)
        for i in range(n):
            t = x[i] * 2
            out[i] = t + acc
            acc = acc + t
    """))
    # `total` and `acc` are read before the statements bind them: their starts come from before
    # (the guarded accumulator's kernel once lacked `total = 0.0`); the temporary `t` is not free
    assert free_names(module.body, {"torch"}) == ["n", "total", "v", "x", "out", "acc"]


def test_a_walked_list_read_only_as_positions_is_drawn_as_integer_indices():
    source = """
        import torch

        def picked(output: torch.Tensor, labels: list):
            loss = 0
            for i in range(len(labels)):
                loss = loss + output[i, labels[i]]
            return loss
    """
    found, failure, _ = ladder.candidates(_first_loop_facts(source))
    assert found, failure
    specs = {s.name: s for s in found[0].kernel.inputs}
    # a bool at a position selects instead of indexing: a different operation, not a kind the code means
    assert specs["labels"].index and specs["labels"].allowed_dtypes() == ("int64", "int32")
    assert not specs["output"].index
    # every candidate's kernel starts `loss` at 0, the guarded one included
    assert all(c.kernel.old.startswith("loss = 0\n") for c in found)


def test_a_comprehension_bound_to_a_name_is_lifted_with_the_next_line_that_consumes_it():
    source = """
        import torch

        def rows_of(x: torch.Tensor):
            rows = [x[i] * 2 for i in range(x.shape[0])]
            rows = torch.stack(rows)
            return rows
    """
    context = _context(source)
    facts = comprehension_facts(context.nodes.of_type(cst.ListComp)[0], context)
    found, failure, _ = ladder.candidates(facts)
    assert found, failure
    new = apply_edits(context.module, found[0].edits).code
    assert "rows = x * 2\n    return rows" in new and "[x[i]" not in new
    # the kernel holds the comprehension's line and its consumer on the old side
    assert "rows = [x[i] * 2" in found[0].kernel.old and "torch.stack(rows)" in found[0].kernel.old


@pytest.mark.parametrize("tail", [
    "rows2 = torch.stack(rows)\n    return rows2, rows",          # read after a consumer that keeps the name
    "rows2 = torch.stack(rows) + torch.cat(rows)\n    return rows2",  # two consumers on one line
    "print(rows)\n    return torch.stack(rows)",                    # the next line is no consumer
])
def test_a_named_comprehension_read_elsewhere_stays_a_list(tail):
    source = f"""
import torch

def rows_of(x: torch.Tensor):
    rows = [x[i] * 2 for i in range(x.shape[0])]
    {tail}
"""
    context = _context(source)
    facts = comprehension_facts(context.nodes.of_type(cst.ListComp)[0], context)
    found, failure, _ = ladder.candidates(facts)
    assert not found and failure is not None


def test_torch_vmap_takes_a_number_made_of_a_loop_invariant():
    from torchfix.codemods.loops.rewrite import vmap_loop

    source = """
        import torch

        def recall(thresholds: torch.Tensor, overlaps: torch.Tensor, num_pos):
            recalls = torch.zeros_like(thresholds)
            for i, t in enumerate(thresholds):
                recalls[i] = (overlaps >= t).float().sum() / float(num_pos)
            return recalls
    """
    rewrite = vmap_loop(_first_loop_facts(source), Options(replace_allocation=False))
    assert "torch.vmap(lambda t: (overlaps >= t).float().sum() / float(num_pos))(thresholds)" in rewrite.kernel.new
    # a number made of the sample itself cannot be taken inside vmap
    per_sample = source.replace("/ float(num_pos)", "/ float(t)")
    with pytest.raises(CannotRewrite, match="cannot run under torch.vmap"):
        vmap_loop(_first_loop_facts(per_sample), Options(replace_allocation=False))


@pytest.mark.parametrize("consumer", [
    "stacked = lambda: torch.stack(items)",                   # runs when called, not here
    "stacked = (torch.stack(items) for _ in range(1))",       # a generator runs when iterated
])
def test_a_consumer_that_runs_later_than_its_line_keeps_the_list(consumer):
    source = f"""
import torch

def doubled_later(x: torch.Tensor):
    items = []
    for i in range(x.shape[0]):
        items.append(x[i] * 2)
    {consumer}
    x.zero_()
    return stacked
"""
    found, failure, _ = ladder.candidates(_first_loop_facts(source))
    assert not found and "other than as" in str(failure)


def test_an_invariant_table_at_per_sample_positions_is_one_advanced_index():
    """`table[labels[i]]` -> `table[labels]`: the positions' own dimensions come first, so each
    sample is one row of the result whatever the ranks."""
    source = """
        import torch

        def looked_up(table: torch.Tensor, scores: torch.Tensor):
            labels = scores.argmax(1)
            rows = []
            for i in range(len(labels)):
                rows.append(table[labels[i], :2])
            return torch.stack(rows)
    """
    found, failure, _ = ladder.candidates(_first_loop_facts(source))
    assert found, failure
    assert "table[labels, :2]" in found[0].kernel.new


def test_a_number_read_from_a_walked_name_is_tried_as_a_vector_first():
    """`int(inds[i])` is one number per sample: `inds` 1-D is tried before the rank shared with
    the other names (`boxes` rows), so mixed ranks are reached."""
    source = """
        import numpy as np

        def rescale(boxes: np.ndarray, inds: np.ndarray, scales: np.ndarray):
            for i in range(boxes.shape[0]):
                boxes[i, :] = boxes[i, :] / scales[int(inds[i])]
            return boxes
    """
    found, failure, _ = ladder.candidates(_first_loop_facts(source))
    assert found, failure
    assumed = [c.description for c in found]
    assert any("`boxes` is 2-D; `inds` is 1-D; `scales` is 1-D" in d for d in assumed), assumed


@pytest.mark.parametrize(
    ("body", "literal"),
    [
        ("out[i] = x[i] * scale[i]", True),
        ("out[i] = x[i] * scale[i - 1] + scale[i]", True),
        # a store into the list, a method of it, the list itself passed on: its items may not be
        # the literal's numbers any more
        ("scale[i] = 2.0\n        out[i] = x[i] * scale[i]", False),
        ("scale.append(1.0)\n        out[i] = x[i] * scale[i]", False),
        ("out[i] = x[i] * helper(scale)[i]", False),
    ],
)
def test_a_literal_number_list_is_one_only_while_the_loop_just_reads_its_items(body: str, literal: bool) -> None:
    facts = _first_loop_facts(
        "import torch\ndef f(x: torch.Tensor, out: torch.Tensor):\n    scale = [1.0, 2.0, 3.0]\n"
        f"    for i in range(3):\n        {body}\n    return out\n"
    )
    assert facts is not None
    assert (facts.number_list(cst.Name("scale")) is not None) is literal


def test_a_number_list_holds_numbers_only() -> None:
    facts = _first_loop_facts(
        "import torch\ndef f(x: torch.Tensor, out: torch.Tensor, m: float):\n    scale = [1.0, m, 3.0]\n"
        "    for i in range(3):\n        out[i] = x[i] * scale[i]\n    return out\n"
    )
    assert facts is not None and facts.number_list(cst.Name("scale")) is None



# ----------------------------------------------------------------------------- sharing precision

_MEAN_AND_STD = """
    import torch
    def stats(dataset, max_load):
        mean = torch.zeros(3)
        std = torch.zeros(3)
        n = min(max_load, len(dataset))
        for k in range(n):
            print(k)
            im = dataset.load(1)
            for j in range(3):
                mean[j] += im[:, j].mean()
                std[j] += im[:, j].std()
        {after}
        return mean, std
"""


def _sharing_failure(after: str) -> str:
    context = _context(_MEAN_AND_STD.format(after=after))
    facts = loop_facts(context.nodes.of_type(cst.For)[-1], context)
    assert facts is not None
    _, failure, _ = ladder.candidates(facts)
    return str(failure)


def test_fresh_tensors_scaled_in_place_share_nothing_with_a_loaded_one() -> None:
    # `mean.div_(n)` copies the number's value into `mean`; `range(n)` and `len(dataset)` make
    # new values: nothing links `mean` or `std` to `im`, which comes from `dataset`
    assert "share memory" not in _sharing_failure("mean.div_(n)\n        std.div_(n)")


@pytest.mark.parametrize(
    "after",
    ["mean.set_(im)", "std.set_(mean)", "dataset.append(mean)"],
    ids=["set_-shares-storage", "set_-between-outputs", "stored-where-im-comes-from"],
)
def test_links_that_do_make_one_object_still_refuse_the_rewrite(after: str) -> None:
    assert "share memory" in _sharing_failure(after)


def test_a_shadowed_builtin_is_not_taken_for_a_new_value() -> None:
    # `abs` is the module's own function here: `abs(dataset)` may be `dataset` itself, which
    # `im` comes from, so `mean` may be it
    source = textwrap.dedent(_MEAN_AND_STD.format(after="")) + "\ndef abs(x):\n    return x\n"
    source = source.replace("mean = torch.zeros(3)", "mean = abs(dataset)")
    context = _context(source)
    facts = loop_facts(context.nodes.of_type(cst.For)[-1], context)
    assert facts is not None
    _, failure, _ = ladder.candidates(facts)
    assert "share memory" in str(failure)


# ----------------------------------------------------------------------------- scatter fills


def test_one_number_stored_at_per_sample_positions_is_one_advanced_index_store() -> None:
    found, failure = _rungs("""
        import torch
        def f(labels: torch.Tensor, k: int):
            labels = labels.reshape(-1)
            out = torch.zeros(len(labels), k)
            for i, c in enumerate(labels):
                out[i, c] = -1.5
            return out
        """)
    assert found, failure
    # the positions' rank is a hypothesis of the rung (the checker tries the others); `labels`
    # rebound to a reshape of itself is still the annotated tensor, so `.long()` makes it int64
    assert "out[torch.arange(len(labels), device=out.device), labels.long()] = -1.5" in found[0].kernel.new
    assert "filled at every position" in found[0].description


@pytest.mark.parametrize(
    "body",
    ["out[c] = 1\n                out[i] = 0", "out[c] = labels[i]", "out[c] = torch.rand(())", "out[c:c + 2] = 1", "out[c] += 1"],
    ids=["second-store", "per-sample-value", "drawn-value", "range-per-sample", "augmented"],
)
def test_stores_whose_order_matters_are_not_scatter_fills(body: str) -> None:
    found, failure = _rungs(f"""
        import torch
        def f(labels: torch.Tensor, out: torch.Tensor):
            labels = labels.reshape(-1)
            for i, c in enumerate(labels):
                {body}
            return out
        """)
    assert not any("filled at every position" in c.description for c in found), (body, failure)


# ----------------------------------------------------------------------------- sizes


def test_a_name_read_only_as_one_of_several_sizes_is_drawn_as_a_count() -> None:
    found, failure = _rungs("""
        import torch
        def f(labels: torch.Tensor, k, scale):
            labels = labels.reshape(-1)
            out = torch.zeros(len(labels), k)
            grid = torch.zeros((k, 2)) * scale
            for i, c in enumerate(labels):
                out[i, c] = 1
            return out, grid
        """)
    assert found, failure
    specs = {s.name: s for s in found[0].kernel.inputs}
    assert specs["k"].kind is Kind.INT and specs["k"].count


def test_a_name_that_may_be_a_shape_is_not_a_count() -> None:
    # `torch.zeros(k)` alone takes a shape tuple as well, and `k * 2` reads it as a value
    found, _ = _rungs("""
        import torch
        def f(labels: torch.Tensor, k):
            labels = labels.reshape(-1)
            out = torch.zeros(len(labels), k)
            extra = k * 2
            for i, c in enumerate(labels):
                out[i, c] = extra
            return out
        """)
    for candidate in found:
        assert not any(s.name == "k" and s.count for s in candidate.kernel.inputs)


# ----------------------------------------------------------------------------- number stores


def test_a_float_of_python_numbers_and_the_index_is_lifted_in_double_precision() -> None:
    # Python computes `j / f - c` in float64 and the store casts; an int64 `arange` divided by a
    # float would compute in float32 and round first
    found, failure = _rungs("""
        import math
        import torch
        def ramp(w: torch.Tensor, f: float, c: float):
            out_channels, height = w.shape
            for j in range(height):
                w[0, j] = 1 - math.fabs(j / f - c)
            return w
        """)
    assert found, failure
    assert "dtype=torch.float64" in found[0].kernel.new


def test_an_index_that_meets_an_array_keeps_its_integer_dtype() -> None:
    found, failure = _rungs("""
        import torch
        def shift(x: torch.Tensor):
            n, d = x.shape
            out = torch.empty_like(x)
            for i in range(n):
                out[i] = x[i] * i
            return out
        """)
    assert found, failure
    assert all("float64" not in c.kernel.new for c in found)


def test_one_number_per_sample_into_a_slot_of_unpinned_rank_is_stored_batch_last() -> None:
    found, failure = _rungs("""
        import torch
        def ramp(w: torch.Tensor):
            for j in range(w.size(2)):
                w[0, 1, j] = j * 0.5
            return w
        """)
    assert found, failure
    assert "w[0, 1, :w.size(2)].movedim(0, -1)[...] = " in found[0].kernel.new
    # a pinned rank keeps the plain store
    pinned = _first_loop_facts("""
        import torch
        def ramp(w: torch.Tensor):
            a, b, c = w.shape
            for j in range(c):
                w[0, 1, j] = j * 0.5
            return w
        """)
    assert pinned is not None
    found, failure, _ = ladder.candidates(pinned)
    assert found and "movedim" not in found[0].kernel.new, failure


_COVERAGE = """
    import torch
    def coverage_at(scores, cutoffs, total):
        hits = torch.zeros_like(cutoffs)
        for k, c in enumerate(cutoffs):
            hits[k] = (scores > c).sum() / float(total)
        return hits
    """


def test_one_number_per_sample_under_vmap_is_stored_batch_last(checker) -> None:  # noqa: ANN001
    # nothing pins a rank: the batched rungs guess, the vmap rung holds for every rank
    found, failure = _rungs(_COVERAGE)
    mapped = [c for c in found if "torch.vmap" in c.kernel.new and "if len(cutoffs) > 0:" in c.kernel.new]
    assert mapped, failure
    assert "hits[:].movedim(0, -1)[...] = torch.vmap(" in mapped[0].kernel.new
    assert checker.check(mapped[0].kernel).outcome.value == "verified"
    # stored without moving the batch axis last, a 3-D `cutoffs` takes each number along the last
    # axis of its slot instead of filling it: refuted
    plain = mapped[0].kernel.new.replace("hits[:].movedim(0, -1)[...] =", "hits[:] =")
    assert plain != mapped[0].kernel.new
    assert checker.check(replace(mapped[0].kernel, new=plain)).outcome.value == "rejected"


@pytest.mark.parametrize(
    ("value", "one"),
    [
        ("(scores > c).float().sum() / float(total)", True),
        ("torch.mean(scores * c) - 1", True),
        ("(scores > c).sum().float()", True),
        ("(scores > c).sum(0)", False),  # a dimension given: what is left has the other ones
        ("(scores > c).sum(dim=0)", False),
        ("(scores > c).sum() + offset", False),  # an invariant of any rank broadcasts it
        ("torch.sum(scores > c, 1)", False),
        ("scores.max(keepdim=True)", False),
    ],
)
def test_one_number_per_sample(value: str, one: bool) -> None:
    from torchfix.codemods.loops.rewrite import _one_number_per_sample

    facts = _first_loop_facts(f"""
        import torch
        def f(scores, cutoffs, total, offset):
            hits = torch.zeros_like(cutoffs)
            for k, c in enumerate(cutoffs):
                hits[k] = {value}
            return hits
        """)
    assert facts is not None
    store = next(s for s in facts.steps if s.kind is StepKind.STORE)
    assert _one_number_per_sample(store.value, facts) is one


def test_a_batch_last_inner_loop_is_proposed_alone() -> None:
    # the outer loop cannot lift a store through a moved view: the inner loop is the proposal
    context = _context("""
        import torch
        def ramp(w: torch.Tensor):
            for i in range(w.size(2)):
                for j in range(w.size(3)):
                    w[0, 0, i, j] = i * 0.5 + j
            return w
        """)
    outer = loop_facts(context.nodes.of_type(cst.For)[0], context)
    assert outer is not None and ladder.nested(outer) is None


@pytest.mark.parametrize(
    ("value", "double"),
    [("i / 3", True), ("math.sqrt(i)", True), ("i * 0.5", True), ("i * k", False), ("i * k - 1", False)],
    ids=["division", "math-call", "float-literal", "int-product", "int-difference"],
)
def test_the_index_is_float64_exactly_where_python_computes_a_float(value: str, double: bool) -> None:
    # an int product stays in int64: float64 would round it past 2**53
    found, failure = _rungs(f"""
        import math
        import torch
        def fill(out: torch.Tensor, k: int):
            n, d = out.shape
            for i in range(n):
                out[i] = {value}
            return out
        """)
    assert found, failure
    assert ("dtype=torch.float64" in found[0].kernel.new) is double, found[0].kernel.new


# ----------------------------------------------------------------------------- review of the scatter fill and number stores


@pytest.mark.parametrize("helper", ["copy", "tensor", "cat"])
def test_a_module_function_named_like_a_library_one_may_return_its_argument(helper: str) -> None:
    # the module's own `copy(buf)` may be `buf`: the loop reads rows it wrote, and the
    # rewrite is refused rather than checked on independent inputs
    context = _context(f"""
        import torch
        def {helper}(a):
            return a
        def shift_right(buf: torch.Tensor):
            out = {helper}(buf)
            (n,) = buf.shape
            for i in range(1, n):
                out[i] = buf[i - 1]
            return out
        """)
    facts = loop_facts(context.nodes.of_type(cst.For)[-1], context)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and "share memory" in str(failure), failure


def test_positions_that_may_be_the_target_are_not_a_scatter_fill() -> None:
    # `zap(t, t)`: the loop reads each position after the earlier writes
    found, _ = _rungs("""
        import numpy as np
        def zap(table: np.ndarray, labels: np.ndarray):
            labels = labels.reshape(-1)
            for c in labels:
                table[c] = 0
            return table
        """)
    assert not any("filled at every position" in c.description for c in found)


def test_torch_scatter_positions_become_int64() -> None:
    # a 0-d int8 position indexes one element; a batch of int8 positions raises (and an ndarray
    # or a list of positions is made a tensor on the target's device)
    found, failure = _rungs("""
        import torch
        def f(labels, k: int):
            labels = labels.flatten()
            out = torch.zeros(len(labels), k)
            for i, c in enumerate(labels):
                out[i, c] = 1
            return out
        """)
    assert found, failure
    assert "torch.as_tensor(labels, dtype=torch.long, device=out.device)] = 1" in found[0].kernel.new


@pytest.mark.parametrize("value", ["i ** (1 / 3)", "math.exp(i / 4)", "(-1) ** (2 * i / n)"], ids=["root", "exp", "complex"])
def test_inexact_python_math_is_stored_only_into_a_float_array(value: str) -> None:
    template = """
        import math
        import torch
        def fill(out: torch.Tensor, n: int):
            {alloc}
            for i in range(out.shape[0]):
                out[i] = {value}
            return out
        """
    unknown = _first_loop_facts(template.format(alloc="pass", value=value))
    assert unknown is not None
    found, failure, _ = ladder.candidates(unknown)
    assert not found and "one unit in the last place" in str(failure), failure
    floats = _first_loop_facts(template.format(alloc="out = torch.zeros(n, 3, dtype=torch.float64)", value=value))
    assert floats is not None
    _, failure, _ = ladder.candidates(floats)
    assert "one unit in the last place" not in str(failure)


def test_big_integers_mixed_with_floats_are_not_lifted() -> None:
    found, failure = _rungs("""
        import torch
        def hashed(out: torch.Tensor):
            n, d = out.shape
            for i in range(n):
                out[i] = (i * 1000000000039 % 1000003) / 1000003
            return out
        """)
    assert not found and "2**24" in str(failure)


def test_a_name_that_holds_a_float_makes_the_index_float64() -> None:
    found, failure = _rungs("""
        import torch
        def grid(out: torch.Tensor, lo: float, width: float):
            lo = float(lo)
            width = float(width)
            n, d = out.shape
            for i in range(n):
                out[i] = lo + i * width
            return out
        """)
    assert found, failure
    assert "dtype=torch.float64" in found[0].kernel.new


def test_a_shallow_copy_by_the_copy_module_may_share_the_tensor() -> None:
    # `copy.copy(t)` of a tensor shares its storage (the module is not a binding torchfix tracks,
    # so this reads as a method `.copy(buf)`: with an argument it is not ndarray's `.copy()`)
    found, failure = _rungs("""
        import copy
        import torch
        def shift_right(buf: torch.Tensor):
            out = copy.copy(buf)
            (n,) = buf.shape
            for i in range(1, n):
                out[i] = buf[i - 1].item()
            return out
        """)
    assert not found and "share memory" in str(failure), failure


def test_a_numpy_function_of_per_sample_numbers_is_not_lifted_in_a_torch_loop() -> None:
    found, failure = _rungs("""
        import numpy as np
        import torch
        def growth(out: torch.Tensor):
            for i in range(len(out)):
                out[i] = np.exp(i / 100)
            return out
        """)
    assert not found and "NumPy function" in str(failure), failure


def test_a_float_array_bound_again_around_the_loop_is_not_shown_float() -> None:
    # the second pass of the `while` stores into `out.long()`
    context = _context("""
        import torch
        def roots(n: int, rounds: int):
            out = torch.zeros(n)
            k = 0
            while k < rounds:
                (m,) = out.shape
                for i in range(m):
                    out[i] = i ** (1 / 3)
                out = out.long()
                k += 1
            return out
        """)
    facts = loop_facts(context.nodes.of_type(cst.For)[0], context)
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and "one unit in the last place" in str(failure), failure


def test_a_number_that_may_be_an_int_or_a_float_is_not_lifted() -> None:
    # `base * i` is exact in ints (base = 2**60 + 1) and float64 in floats: no one dtype does
    # both; `j / f - c` is a float whatever `c` is (an int meets the float as a float)
    template = """
        import torch
        def scaled(out: torch.Tensor, base: float, f: float, c: float):
            n, d = out.shape
            for j in range(n):
                out[j] = {value}
            return out
        """
    found, failure = _rungs(template.format(value="base * j"))
    assert not found and "depending on what `base` holds" in str(failure), failure
    found, failure = _rungs(template.format(value="j / f - c"))
    assert found and "dtype=torch.float64" in found[0].kernel.new, failure


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("int(j * 0.7)", "(torch.arange(n, device=out.device, dtype=torch.float64) * 0.7).long()"),
        ("abs(j * 0.7)", "abs(torch.arange(n, device=out.device, dtype=torch.float64) * 0.7)"),
    ],
    ids=["int-of-a-float", "abs-of-a-float"],
)
def test_a_float_inside_an_int_or_a_builtin_is_computed_in_float64(value: str, expected: str) -> None:
    # Python's `j * 0.7` is 62.99999999999999 at j = 90, float32's 63.0
    found, failure = _rungs(f"""
        import torch
        def fill(out: torch.Tensor):
            n, d = out.shape
            for j in range(n):
                out[j] = {value}
            return out
        """)
    assert found, failure
    assert expected in found[0].kernel.new


def test_python_ints_meeting_a_float_outside_a_stored_value_are_refused() -> None:
    # a temporary `c = j * 0.7` is lifted apart from the store: in torch that is float32
    found, failure = _rungs("""
        import torch
        def fill(out: torch.Tensor):
            n, d = out.shape
            for j in range(n):
                c = j * 0.7
                out[j] = c // 1
            return out
        """)
    assert not found and "float32" in str(failure), failure


def test_a_guarded_float64_index_takes_the_guard() -> None:
    found, failure = _rungs("""
        import torch
        def fill(out: torch.Tensor):
            n, d = out.shape
            for j in range(n):
                if j >= 30:
                    continue
                out[j] = j / 3
            return out
        """)
    assert found, failure
    assert "torch.arange(n, device=out.device, dtype=torch.float64)[keep]" in found[0].kernel.new


def test_inexact_math_through_a_temporary_is_seen() -> None:
    found, failure = _rungs("""
        import torch
        def roots(out: torch.Tensor):
            (n,) = out.shape
            for i in range(n):
                r = float(i) ** (1 / 3)
                out[i] = r
            return out
        """)
    assert not found and "one unit in the last place" in str(failure), failure


# ----------------------------------------------------------------------------- several lists, any rank

_TWO_LISTS = """
    import torch
    def spread(x: torch.Tensor):
        n, d = x.shape
        centres = []
        peaks = []
        for i in range(n):
            centres.append(x[i].mean())
            peaks.append(x[i].amax())
        centres = torch.stack(centres)
        {between}
        peaks = torch.stack(peaks)
        return centres, peaks
    """


def test_each_list_of_a_loop_is_an_output_of_its_own() -> None:
    # both consumers are compared: one `_result` overwritten by the next would hide the first
    found, failure = _rungs(_TWO_LISTS.format(between="pass"))
    assert not found, "a `pass` between the consumers is not another list's consumer"
    found, failure = _rungs(_TWO_LISTS.format(between=""))
    assert found, failure
    kernel = found[0].kernel
    assert set(kernel.outputs) >= {"_result", "_result_2"}
    assert "_result = torch.stack(centres)" in kernel.old and "_result_2 = torch.stack(peaks)" in kernel.old
    assert "_result = x.mean(1)" in kernel.new and "_result_2 = x.amax(1)" in kernel.new


@pytest.mark.parametrize("between", ["x.sub_(centres[:, None])", "print(peaks)", "centres = torch.stack(centres, dim=k())"])
def test_only_other_lists_consumers_may_stand_between(between: str) -> None:
    found, failure = _rungs(_TWO_LISTS.format(between=between))
    assert not found, between


def test_a_list_made_lines_before_the_loop_is_collected_unless_they_read_it() -> None:
    source = """
        import torch
        def rows(x: torch.Tensor, register):
            n, d = x.shape
            items = []
            {between}
            for i in range(n):
                items.append(x[i] * 2)
            return torch.stack(items)
        """
    found, failure = _rungs(source.format(between="scale = 2"))
    assert found, failure
    found, failure = _rungs(source.format(between="register(items)"))
    assert not found and "used elsewhere" in str(failure), failure


def test_a_whole_sample_reduction_of_unpinned_rank_flattens_each_sample_after_the_guesses() -> None:
    found, failure = _rungs("""
        import torch
        def means(x):
            out = []
            for i in range(x.size(0)):
                out.append(x[i].mean())
            return torch.stack(out)
        """)
    assert found, failure
    news = [c.kernel.new for c in found]
    any_rank = [k for k, new in enumerate(news) if "x[..., None].flatten(1).mean(1)" in new]
    guessed = [k for k, new in enumerate(news) if "x.mean(1)" in new]
    assert any_rank and guessed and max(guessed) < min(any_rank), news
    assert "assumes" not in found[any_rank[0]].description


@pytest.mark.parametrize("shape, dims", [("n, d = x.shape", "1"), ("n, h, w = x.shape", "dim=(1, 2)")])
def test_a_whole_sample_reduction_keeps_its_keyword_arguments_after_the_dimensions(shape: str, dims: str) -> None:
    # `.sum(dtype=...)` once crashed the rule: the dimensions were appended after the keyword
    found, failure = _rungs(f"""
        import torch
        def sums(x: torch.Tensor):
            {shape}
            out = []
            for i in range(n):
                out.append(x[i].sum(dtype=torch.float64))
            return torch.stack(out)
        """)
    assert found, failure
    assert f"x.sum({dims}, dtype=torch.float64)" in found[0].kernel.new, found[0].kernel.new


# ----------------------------------------------------------------------------- scan-speed invariants


def _binding_counts_statement_by_statement(body: cst.CSTNode) -> dict[str, int]:
    """The definition the one-walk count must give: each binding statement of ``body`` (nested
    scopes left out) counts each name bound anywhere inside it once."""
    from torchfix.codemods.analysis import assigned_names, child_nodes, target_names
    from torchfix.codemods.loops.facts import _BINDING_STATEMENTS, _walk

    def bound(node: cst.CSTNode) -> set[str]:
        # what a statement binds, a comprehension's variables included (they shadow the name)
        names = set(assigned_names(node))
        stack = [node]
        while stack:
            current = stack.pop()
            if isinstance(current, cst.CompFor):
                names |= target_names(current.target)
            stack.extend(child_nodes(current))
        return names

    counts: dict[str, int] = {}
    for node in _walk(body):
        if isinstance(node, _BINDING_STATEMENTS):
            for name in bound(node):
                counts[name] = counts.get(name, 0) + 1
    return counts


def test_binding_counts_in_one_walk_are_the_counts_statement_by_statement() -> None:
    from pathlib import Path

    from torchfix.codemods.analysis import module_nodes
    from torchfix.codemods.loops.facts import _nodes_and_binding_counts, _walk

    corpus = Path(__file__).resolve().parent.parent / "corpus"
    functions = 0
    for path in sorted(corpus.rglob("*.py")):
        module = cst.parse_module(path.read_text(encoding="utf-8"))
        for function in module_nodes(module).of_type(cst.FunctionDef):
            nodes, counts = _nodes_and_binding_counts(function.body)
            assert [id(n) for n in nodes] == [id(n) for n in _walk(function.body)], path
            assert counts == _binding_counts_statement_by_statement(function.body), (path, function.name.value)
            functions += 1
    assert functions > 100


def test_a_name_bound_in_a_loop_counts_once_per_binding_statement_around_it() -> None:
    from torchfix.codemods.loops.facts import _nodes_and_binding_counts

    function = cst.parse_module(textwrap.dedent("""
        def f(x):
            n = x.shape[0]
            for i in range(n):
                for j in range(2):
                    y = (z := x)
            def inner():
                n = 2
            with open(p) as handle:
                pass
            rows = [k for k in x]
    """)).body[0]
    _, counts = _nodes_and_binding_counts(function.body)
    # n: its own line only (the nested function's n is another scope); y: its line and two loops;
    # z: the walrus, the line holding it and two loops; k: a comprehension's variable, counted
    # (it shadows the function's name there) once for its line and once for its clause
    assert counts == {"n": 1, "i": 1, "j": 2, "y": 3, "z": 4, "handle": 1, "rows": 1, "k": 2}


def test_a_field_read_by_name_is_no_row_of_an_array() -> None:
    # `roidb[i]['height']`: the samples are records (dicts); no rank hypothesis makes them rows
    found, failure = _rungs("""
        import torch
        def ratios(roidb):
            ratio_list = []
            for i in range(len(roidb)):
                ratio_list.append(roidb[i]['width'] / float(roidb[i]['height']))
            return torch.tensor(ratio_list)
        """)
    assert not found and "reads a field by its name" in str(failure)


def test_another_array_read_at_the_walked_index_is_cut_to_the_walked_length() -> None:
    """`enumerate(weights)` runs `len(weights)` steps whatever `features` holds: the batched form
    reads `features[:len(weights)]`, never all of it (a longer `features` is the usual case)."""
    from rewrite_helper import loop_candidates

    found, failure = loop_candidates(
        """
        import torch
        def class_activation(weights, features):
            k, = weights.shape
            c, h, w = features.shape
            cam = torch.zeros(h, w)
            for i, wt in enumerate(weights):
                cam += wt * features[i]
            return cam
        """
    )
    assert found, failure
    assert all("features[:len(weights)]" in c.kernel.new for c in found)
    assert all("weights[:len" not in c.kernel.new for c in found)  # the walked array is whole


def test_the_samples_of_an_arange_the_header_builds_are_numbers() -> None:
    # `np.arange(...)` is 1-D whatever its arguments: each `t` is one number, which broadcasts
    # against the rows of a 1-D `scores` from the front; one walked expression is walked whole
    # (no `min()` of one length, no `[:len(...)]` of itself)
    code = _lifted("""
        import numpy as np
        def f(scores):
            n, = scores.shape
            hits = np.zeros(11)
            for k, t in enumerate(np.arange(0., 1.1, 0.1)):
                hits[k] = np.sum(scores >= t)
            return hits
        """, Options(library="numpy"))
    assert "hits[:len(np.arange(0., 1.1, 0.1))] = np.sum(scores >= np.arange(0., 1.1, 0.1)[:, None], 1)" in code
    assert "min(" not in code


def test_a_guard_run_only_when_some_sample_passes_is_also_run_only_when_the_loop_runs() -> None:
    code = _lifted("""
        import torch
        def f(scores: torch.Tensor, ys: torch.Tensor, eos):
            for i in range(scores.size(0)):
                if ys[i] == eos:
                    scores[i] = -1e20
            return scores
        """, Options(hypotheses=(("ys", 1),), guard_any=True, guard_empty=True))
    assert textwrap.dedent("""\
        if scores.size(0) > 0:
            keep = ys[:scores.size(0)] == eos
            if keep.any():
                scores[keep] = -1e20
        """) in textwrap.dedent(code.split("def f(scores: torch.Tensor, ys: torch.Tensor, eos):\n", 1)[1])


@pytest.mark.parametrize(
    ("body", "held"),
    [("out[i] = x[i] * 2", False), ("out[i] = x[i] * (n // 2)", True)],
    ids=["range-only", "arithmetic"],
)
def test_a_loop_count_read_as_a_number_is_drawn_in_every_integer_holder(body: str, held: bool) -> None:
    # `range(n)` takes a NumPy int or a 0-d integer tensor too; where only `range` reads it, what
    # holds it changes nothing, and elsewhere it does (`n // 2` of a uint8 tensor wraps round)
    found, failure = _rungs(f"""
        import torch
        def f(x: torch.Tensor, out: torch.Tensor, n):
            for i in range(n):
                {body}
            return out
        """)
    assert found, failure
    spec = next(s for s in found[0].kernel.inputs if s.name == "n")
    assert spec.count
    if held:
        assert set(spec.allowed_kinds()) == {Kind.INT, Kind.NUMPY_SCALAR, Kind.TENSOR} and spec.ranks == (0,)
    else:
        assert spec.allowed_kinds() == (Kind.INT,)


@pytest.mark.parametrize(
    "elsewhere",
    ["self.act, self.scale = nn.Softmax(dim=0), 2.0", "setattr(self, 'act', nn.Softmax(dim=0))",
     "self.add_module('act', nn.Softmax(dim=0))", "setattr(self, name, nn.Softmax(dim=0))", "vars(self).update(act=None)"],
    ids=["tuple-target", "setattr", "add_module", "setattr-computed-name", "vars"],
)
def test_a_layer_set_anywhere_else_in_the_module_is_reassigned(elsewhere: str) -> None:
    context = _context(f"""
        import torch
        from torch import nn
        class Block(nn.Module):
            def __init__(self):
                super().__init__()
                self.act = nn.ReLU()
        class Soft(Block):
            def __init__(self, name='act'):
                super().__init__()
                {elsewhere}
        """)
    assert "act" in context.class_info("Block").reassigned


def test_an_accumulation_keeps_its_spelling() -> None:
    # `acc = acc + e` makes a new value, `acc += e` writes into a tensor `acc` (which something
    # else may hold, and whose dtype the sum must fit): the batched sum is added the same way
    for spelled, expected in (("acc = acc + x[i] * w", "acc = acc + (x[:n] * w).sum(0)\n"), ("acc += x[i] * w", "acc += (x[:n] * w).sum(0)\n")):
        facts = _first_loop_facts(f"""
            import torch
            def f(x: torch.Tensor, w: torch.Tensor, n: int):
                acc = torch.zeros(3)
                for i in range(n):
                    {spelled}
                return acc
            """)
        assert facts is not None
        kernel = lift_loop(facts, Options(hypotheses=(("x", 2),))).kernel
        assert kernel.new.endswith(expected), kernel.new


def test_a_shifted_read_folds_its_bound() -> None:
    # `x[i + 1]` over `range(n - 1)` reads rows 1 .. n - 1: `x[1:n]`, not `x[1:(n - 1) + 1]`
    facts = _first_loop_facts("""
        import torch
        def f(x: torch.Tensor, n: int):
            out = torch.zeros(n)
            for i in range(n - 1):
                out[i] = x[i + 1] - x[i]
            return out
        """)
    assert facts is not None
    kernel = lift_loop(facts, Options(hypotheses=(("x", 1),))).kernel
    assert "x[1:n] - x[:n - 1]" in kernel.new, kernel.new


_BEAM_STEP = """
    import torch
    class Beam:
        def step(self, probs):
            if len(self.history) < 3:
                for k in range(len(probs)):
                    probs[k][self.stop] = -1e20
            {after}
    """


@pytest.mark.parametrize("after", ["self.scores = probs.view(-1)", "self.scores = probs.view(-1).contiguous()",
                                   "self.history.append(probs[0])"])
def test_an_object_that_holds_a_view_of_the_written_array_refuses_the_rewrite(after: str) -> None:
    # (the attributes the kernel reads are drawn apart from `probs`: the function links `self` to it)
    facts = _first_loop_facts(_BEAM_STEP.format(after=after))
    assert facts is not None
    found, failure, _ = ladder.candidates(facts)
    assert not found and "may share memory" in str(failure), failure


@pytest.mark.parametrize("old, kept", [
    ("y[0] = self.eos + self.scale * x[0]\n", False),
    ("y[0] = self.net(x)[0]\n", True),                     # the object's behaviour: not data
    ("self.eos = 2\ny[0] = self.eos\n", True),             # an attribute rebound
    ("self.buf[0] = 1\ny[0] = self.buf[1]\n", True),       # an attribute written into
    ("y[0] = helper(self)\n", True),                       # the object passed on
    ("y[0] = self.__dict__['eos']\n", True),
])
def test_the_attributes_a_kernel_reads_become_inputs_only_where_self_is_read_for_nothing_else(old: str, kept: bool) -> None:
    from torchfix.codemods.loops.kernels import _attributes_as_inputs
    from torchfix.equivalence.kernel import InputSpec, Kernel

    specs = (InputSpec("self", Kind.ANY), InputSpec("x"), InputSpec("y"))
    kernel = Kernel(old, old, specs, (), may_alias=(("self", "y"), ("x", "y")))
    found = _attributes_as_inputs(kernel, "self", set())
    if kept:
        assert found is kernel
        return
    names = [s.name for s in found.inputs]
    assert names == ["self_eos", "self_scale", "x", "y"] and "self." not in found.old + found.new
    # an attribute may be what the object may be, and another attribute
    assert set(found.may_alias) == {("x", "y"), ("self_eos", "y"), ("self_scale", "y"), ("self_eos", "self_scale")}


@pytest.mark.parametrize("line, fresh", [
    ("out = target.clone()", True),
    ("out = torch.zeros(n)", True),
    ("out = x.new_zeros(n)", True),
    ("out = window(1)", False),                          # a call torchfix cannot see into
    ("out = torch.zeros(1).expand(n)", False),           # a view of a new array may overlap itself
    ("out = x.clone().view(-1)", False),
    ("out = x * 1", False),                              # (only an allocation or a copy counts)
    ("out = target[1:]", False),
    ("out = torch.zeros(n, out=target[1:])", False),     # gives back the view it was given
    ("out = target.copy()", False),                      # a list's copy is shallow
])
def test_only_an_allocation_or_a_copy_right_before_the_loop_is_made_just_before(line: str, fresh: bool) -> None:
    from torchfix.codemods.loops.kernels import _made_just_before

    source = f"import torch\ndef f(x, target, n):\n    {line}\n    for i in range(n):\n        out[i] = 1\n"
    context = _context(source)
    loop = context.nodes.of_type(cst.For)[0]
    assert _made_just_before("out", loop, context) is fresh


@pytest.mark.parametrize("line, escaped", [
    ("keep(row)", {"row"}),
    ("holder.remember(self, row[:-1])", {"self", "row"}),
    ("stash(*args)", {"args"}),
    ("partial(stash, self)(row)", {"stash", "self", "row"}),
    ("setattr(self, 'b', row)", {"self", "row"}),
    ("fn = lambda: row", {"row"}),
    ("raise ValueError(row[:-1])", {"row"}),             # an exception keeps its arguments
    ("globals()['LAST'] = row[:-1]", {"row"}),           # a store the links do not follow
    ("HOLDER.last = row[:-1]", {"row"}),                 # into a global
    ("self.last = row[:-1]", set()),                     # (the links follow the object)
    ("n = len(row) + row.size(0)", set()),               # builtins and tensor methods keep nothing
    ("out = torch.relu(row)", set()),
])
def test_names_handed_to_code_torchfix_cannot_see_into_escape(line: str, escaped: set) -> None:
    from torchfix.codemods.loops.kernels import _origins

    context = _context(f"import torch\ndef f(self, row, holder, args):\n    {line}\n")
    function = context.nodes.of_type(cst.FunctionDef)[0]
    assert _origins(function, context).escaped == escaped


@pytest.mark.parametrize("decorator, an_object", [("", True), ("@staticmethod", False), ("@classmethod", False),
                                                   ("@builtins.staticmethod", False)])
def test_only_a_method_s_object_has_its_attributes_drawn_as_inputs(decorator: str, an_object: bool) -> None:
    # a static method's first argument is an argument like any other (`x.data` of a tensor shares
    # its storage), a class method's is the class: neither is the object the engine may take apart
    from torchfix.codemods.loops.kernels import _AttributesAsInputs

    source = f"""
    import torch
    class Box:
        {decorator}
        def scale_rows(x, out):
            for i in range(out.size(0)):
                out[i] = x.data[i] * 2
            return out
    """
    facts = _first_loop_facts(source)
    assert facts is not None
    found = _AttributesAsInputs.for_function(facts, [facts.loop])
    assert (found is not None) is an_object


def test_a_method_made_static_by_a_later_assignment_has_no_object() -> None:
    from torchfix.codemods.loops.kernels import _AttributesAsInputs

    source = """
    import torch
    class Box:
        def scale_rows(x, out):
            for i in range(out.size(0)):
                out[i] = x.data[i] * 2
            return out
        scale_rows = staticmethod(scale_rows)
    """
    facts = _first_loop_facts(source)
    assert facts is not None and _AttributesAsInputs.for_function(facts, [facts.loop]) is None
