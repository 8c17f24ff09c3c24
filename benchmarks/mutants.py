"""Seeded wrong rewrites and correct alternatives, as verification kernels (data for mutation_suite).

Each template is a piece of slow code of the kind the rules rewrite (a corpus-like loop), with
wrong rewrites -- the mistakes vectorizing by hand tends to make -- and correct alternatives.
Templates x dtype variants x mutants give the families. A mutant is a (category, new code,
variants it applies to) triple; the new code may name ``{dt}`` (the variant's torch dtype) or
``{other}`` (a float dtype other than the variant's).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from torchfix.equivalence.kernel import InputSpec, Kernel, Kind

F_MODULES = (("torch", "torch"), ("F", "torch.nn.functional"))


@dataclass(frozen=True)
class Case:
    id: str
    template: str
    category: str  # the kind of mistake, or "correct" / "correct-reorder"
    expect: str  # "refute" or "verify"
    kernel: Kernel


@dataclass
class Template:
    name: str
    old: str
    specs: object  # callable(dtype) -> tuple[InputSpec, ...]
    outputs: tuple[str, ...]
    variants: tuple[str, ...]
    wrong: list = field(default_factory=list)
    correct: list = field(default_factory=list)
    reorders: bool = False
    gradients: bool = False


def _fmt(code: str, dt: str) -> str:
    other = "torch.float64" if dt != "float64" else "torch.float32"
    return code.replace("{dt}", f"torch.{dt}").replace("{other}", other)


def _rank1(dt, **kw):
    return InputSpec("x", ranks=(1,), dtypes=(dt,), **kw)


def _rank2(dt, name="x"):
    return InputSpec(name, ranks=(2,), dtypes=(dt,))


FLOATS = ("float32", "float64")
ALL_FLOATS = ("float16", "bfloat16", "float32", "float64")

TEMPLATES: list[Template] = [
    Template(
        "item_sum",
        "total = 0.0\nfor i in range(len(x)):\n    total += x[i].item()\n",
        lambda dt: (_rank1(dt),),
        ("total",),
        ALL_FLOATS,
        wrong=[
            ("off-by-one", "total = x[1:].sum(dtype=torch.float64).item()\n"),
            ("off-by-one", "total = x[:-1].sum(dtype=torch.float64).item()\n"),
            ("nan-handling", "total = torch.nansum(x.double()).item()\n"),
            ("python-type", "total = int(x.double().sum().item())\n"),
            ("off-by-one", "total = x.double().sum().item() if len(x) > 1 else 0.0\n"),
        ],
        correct=[
            ("correct-reorder", "total = x.sum(dtype=torch.float64).item()\n"),
            ("correct-reorder", "total = float(x.double().flip(0).sum())\n"),
            ("correct", "total = float(sum(x.tolist()))\n"),
        ],
        reorders=True,
    ),
    Template(
        "masked_item_sum",
        "total = 0.0\nfor i in range(len(x)):\n    if m[i]:\n        total += x[i].item()\n",
        lambda dt: (_rank1(dt), InputSpec("m", ranks=(1,), dtypes=("bool",))),
        ("total",),
        FLOATS,
        wrong=[
            ("dropped-mask", "total = x.double().sum().item()\n"),
            ("nan-handling", "total = (x.double() * m[:len(x)]).sum().item()\n"),
            ("inverted-mask", "total = x[~m[:len(x)]].double().sum().item()\n"),
            ("unsliced-mask", "total = x[m].double().sum().item()\n"),
            ("off-by-one", "total = x[1:][m[1:len(x)]].double().sum().item()\n"),
        ],
        correct=[
            ("correct-reorder", "total = x[m[:len(x)]].double().sum().item()\n"),
            ("correct-reorder", "total = torch.where(m[:len(x)], x.double(), 0.0).sum().item()\n"),
        ],
        reorders=True,
    ),
    Template(
        "rowsum_loop",
        "out = torch.zeros(x.shape[0], dtype=x.dtype)\nfor i in range(x.shape[0]):\n    out[i] = x[i].sum()\n",
        lambda dt: (_rank2(dt),),
        ("out",),
        ALL_FLOATS,
        wrong=[
            ("wrong-axis", "out = x.sum(dim=0)\n"),
            ("keepdim", "out = x.sum(dim=1, keepdim=True)\n"),
            ("wrong-reduction", "out = x.mean(dim=1)\n"),
            ("off-by-one", "out = x[:, 1:].sum(dim=1)\n"),
            ("dtype-promotion", "out = x.sum(dim=1, dtype={other})\n"),
        ],
        correct=[
            ("correct-reorder", "out = x.sum(dim=1)\n"),
            ("correct-reorder", "out = x.sum(dim=-1, keepdim=True).squeeze(-1)\n"),
        ],
        reorders=True,
    ),
    Template(
        "row_scale",
        "out = torch.empty_like(x)\nfor i in range(x.shape[0]):\n    out[i] = x[i] * w[i]\n",
        lambda dt: (_rank2(dt), InputSpec("w", ranks=(1,), dtypes=(dt,))),
        ("out",),
        FLOATS,
        wrong=[
            ("broadcast-wrong-dim", "out = x * w[:x.shape[1]]\n"),
            ("broadcast-wrong-dim", "out = x * w[None, :x.shape[0]]\n"),
            ("unsliced", "out = x * w[:, None]\n"),
            ("dtype-promotion", "out = x * w[:x.shape[0], None].to({other})\n"),
            ("off-by-one", "out = x * w[1:x.shape[0] + 1, None]\n"),
        ],
        correct=[
            ("correct", "out = x * w[:x.shape[0], None]\n"),
            ("correct", "out = x * w[:x.shape[0]].unsqueeze(1)\n"),
            ("correct", "out = torch.mul(x, w[:len(x)].reshape(-1, 1))\n"),
        ],
    ),
    Template(
        "relu_where",
        "out = x.clone()\nfor i in range(len(x)):\n    if x[i] < 0:\n        out[i] = 0.0\n",
        lambda dt: (_rank1(dt),),
        ("out",),
        FLOATS,
        wrong=[
            ("nan-handling", "out = torch.where(x > 0, x, torch.zeros_like(x))\n"),
            ("inverted", "out = x.clamp(max=0)\n"),
            ("dtype-promotion", "out = torch.where(x < 0, 0, x).to({other})\n"),
            ("nan-handling", "out = x.nan_to_num().clamp(min=0)\n"),
            ("missing-write-ok-output", "out = x\nx[x < 0] = 0.0\n"),
        ],
        correct=[
            ("correct", "out = torch.where(x < 0, torch.zeros_like(x), x)\n"),
            ("correct", "out = x.masked_fill(x < 0, 0.0)\n"),
            ("correct", "out = x.clamp(min=0)\n"),
        ],
    ),
    Template(
        "inplace_relu",
        "for i in range(len(x)):\n    if x[i] < 0:\n        x[i] = 0\n",
        lambda dt: (_rank1(dt),),
        (),
        ("float32", "int64"),
        wrong=[
            ("missing-in-place-write", "y = x.clamp(min=0)\n"),
            ("missing-in-place-write", "x = x.clamp(min=0)\n"),
            ("off-by-one", "x[1:][x[1:] < 0] = 0\n"),
            ("inverted", "x[x > 0] = 0\n"),
        ],
        correct=[
            ("correct", "x[x < 0] = 0\n"),
            ("correct", "x.masked_fill_(x < 0, 0)\n"),
            ("correct", "x.clamp_(min=0)\n", ("int64",)),
        ],
    ),
    Template(
        "inplace_scale",
        "for i in range(len(x)):\n    x[i] = x[i] * 2\n",
        lambda dt: (InputSpec("x", ranks=(1, 2), dtypes=(dt,)),),
        (),
        ("float32", "int64"),
        wrong=[
            ("missing-in-place-write", "x = x * 2\n"),
            ("missing-in-place-write", "y = x * 2\n"),
            ("off-by-one", "x[1:] *= 2\n"),
            ("dtype-promotion", "x.mul_(2.5)\n"),
        ],
        correct=[
            ("correct", "x.mul_(2)\n"),
            ("correct", "x *= 2\n"),
            ("correct", "x[:] = x * 2\n"),
        ],
    ),
    Template(
        "histogram",
        "for i in range(len(idx)):\n    hist[idx[i]] += 1\n",
        lambda dt: (InputSpec("hist", ranks=(1,), dtypes=(dt,)), InputSpec("idx", ranks=(1,), index=True)),
        (),
        ("int64", "int32", "float32"),
        wrong=[
            ("duplicate-indices", "hist[idx] += 1\n"),
            ("duplicate-indices", "hist.index_put_((idx,), torch.ones_like(idx, dtype=hist.dtype))\n"),
            ("off-by-one", "hist.index_put_((idx[1:],), torch.ones_like(idx[1:], dtype=hist.dtype), accumulate=True)\n"),
            ("negative-indices", "hist += torch.bincount(idx, minlength=len(hist)).to(hist.dtype)\n"),
            ("missing-in-place-write", "hist = hist.index_put((idx,), torch.ones_like(idx, dtype=hist.dtype), accumulate=True)\n"),
        ],
        correct=[
            # (the positions cast: a whole int16 / int8 index tensor raises, each of its elements indexes)
            ("correct", "hist.index_put_((idx.long(),), torch.ones_like(idx, dtype=hist.dtype), accumulate=True)\n"),
            ("correct", "hist.index_put_((idx.long(),), torch.ones(len(idx), dtype=hist.dtype), accumulate=True)\n"),
        ],
    ),
    Template(
        "scatter_add",
        "for i in range(len(idx)):\n    out[idx[i]] += src[i]\n",
        lambda dt: (
            InputSpec("out", ranks=(1,), dtypes=(dt,)),
            InputSpec("idx", ranks=(1,), index=True),
            InputSpec("src", ranks=(1,), dtypes=(dt,)),
        ),
        (),
        ("float32", "float64", "int64"),
        wrong=[
            ("duplicate-indices", "out[idx] += src[:len(idx)]\n"),
            ("unsliced", "out.index_put_((idx,), src, accumulate=True)\n"),
            ("duplicate-indices", "out.index_put_((idx,), src[:len(idx)])\n"),
            ("off-by-one", "out.index_put_((idx,), src[1:len(idx) + 1], accumulate=True)\n"),
            ("missing-in-place-write", "out = out.index_put((idx,), src[:len(idx)], accumulate=True)\n"),
        ],
        correct=[
            ("correct-reorder", "out.index_put_((idx.long(),), src[:len(idx)], accumulate=True)\n"),
        ],
        reorders=True,
    ),
    Template(
        "matvec",
        "out = torch.stack([(x[i] * w).sum() for i in range(x.shape[0])])\n",
        lambda dt: (_rank2(dt), InputSpec("w", ranks=(1,), dtypes=(dt,))),
        ("out",),
        FLOATS,
        wrong=[
            ("wrong-axis", "out = (x * w).sum(dim=0)\n"),
            ("keepdim", "out = (x * w).sum(dim=1, keepdim=True)\n"),
            ("broadcast-wrong-dim", "out = (x * w[:, None]).sum(dim=1)\n"),
            ("dtype-promotion", "out = (x * w).sum(dim=1, dtype={other})\n"),
            ("off-by-one", "out = (x[:, 1:] * w[1:]).sum(dim=1)\n"),
            ("detach-kills-gradient", "out = (x * w.detach()).sum(dim=1)\n"),
        ],
        correct=[
            ("correct-reorder", "out = (x * w).sum(dim=1)\n"),
            ("correct-reorder", "out = (w * x).sum(-1)\n"),
        ],
        reorders=True,
        gradients=True,
    ),
    Template(
        "tanh_scale_grad",
        "out = torch.stack([torch.tanh(x[i]) * 2 for i in range(len(x))])\n",
        lambda dt: (InputSpec("x", ranks=(1, 2), dtypes=(dt,)),),
        ("out",),
        FLOATS,
        wrong=[
            ("detach-kills-gradient", "out = torch.tanh(x).detach() * 2\n"),
            ("detach-kills-gradient", "out = torch.tanh(x.detach()) * 2\n"),
            ("detach-kills-gradient", "out = torch.tanh(x.data) * 2\n"),
            ("detach-kills-gradient", "out = torch.tanh(x) * 2 + (x.detach() - x)\n"),
            ("off-by-one", "out = torch.tanh(x[1:]) * 2\n"),
        ],
        correct=[
            ("correct", "out = torch.tanh(x) * 2\n"),
            ("correct", "out = 2 * x.tanh()\n"),
        ],
        gradients=True,
    ),
    Template(
        "softmax_rows",
        "out = torch.stack([torch.softmax(r, 0) for r in x])\n",
        lambda dt: (_rank2(dt),),
        ("out",),
        FLOATS,
        wrong=[
            ("wrong-axis", "out = torch.softmax(x, 0)\n"),
            ("detach-kills-gradient", "out = torch.softmax(x.detach(), 1)\n"),
            ("nan-handling", "out = torch.softmax(x.nan_to_num(), 1)\n"),
            ("dtype-promotion", "out = torch.softmax(x, 1, dtype={other})\n"),
        ],
        correct=[
            ("correct", "out = torch.softmax(x, 1)\n"),
            ("correct", "out = F.softmax(x, dim=-1)\n"),
        ],
        gradients=True,
    ),
    Template(
        "running_max",
        "m = x[0]\nfor i in range(1, len(x)):\n    m = torch.maximum(m, x[i])\n",
        lambda dt: (InputSpec("x", ranks=(1, 2), dtypes=(dt,)),),
        ("m",),
        ("float32", "int64"),
        wrong=[
            ("off-by-one", "m = x[1:].amax(dim=0)\n"),
            ("keepdim", "m = x.amax(dim=0, keepdim=True)\n"),
            ("wrong-reduction", "m = x.amin(dim=0)\n"),
            ("nan-handling", "m = torch.nan_to_num(x, nan=-float('inf')).amax(dim=0)\n", ("float32",)),
            ("wrong-axis", "m = x.amax(dim=-1)\n"),
        ],
        correct=[
            ("correct", "m = x.amax(dim=0)\n"),
            ("correct", "m = torch.max(x, 0)[0]\n"),
        ],
    ),
    Template(
        "mean_loop",
        "acc = torch.zeros(x.shape[1:], dtype=x.dtype)\nfor i in range(x.shape[0]):\n    acc = acc + x[i]\nmean = acc / x.shape[0]\n",
        lambda dt: (_rank2(dt),),
        ("mean",),
        ALL_FLOATS,
        wrong=[
            ("wrong-axis", "mean = x.mean(dim=1)\n"),
            ("off-by-one", "mean = x.sum(dim=0) / (x.shape[0] - 1)\n"),
            ("keepdim", "mean = x.mean(dim=0, keepdim=True)\n"),
            ("nan-handling", "mean = x.nanmean(dim=0)\n"),
            ("missing-division", "mean = x.sum(dim=0)\n"),
        ],
        correct=[
            ("correct-reorder", "mean = x.sum(dim=0) / x.shape[0]\n"),
            ("correct-reorder", "mean = x.mean(dim=0)\n"),
        ],
        reorders=True,
    ),
    Template(
        "count_above",
        "c = 0\nfor v in x:\n    if v > t:\n        c += 1\n",
        lambda dt: (_rank1(dt), InputSpec("t", Kind.FLOAT)),
        ("c",),
        ("float32", "int64"),
        wrong=[
            ("python-type", "c = (x > t).sum()\n"),
            ("boundary", "c = int((x >= t).sum())\n"),
            ("off-by-one", "c = int((x[1:] > t).sum())\n"),
            ("python-type", "c = float((x > t).sum())\n"),
            ("nan-handling", "c = int((~(x <= t)).sum())\n", ("float32",)),
        ],
        correct=[
            ("correct", "c = int((x > t).sum())\n"),
            ("correct", "c = int(torch.count_nonzero(x > t))\n"),
        ],
    ),
    Template(
        "running_sum",
        "out = torch.empty_like(x)\ns = torch.zeros((), dtype=x.dtype)\nfor i in range(len(x)):\n    s = s + x[i]\n    out[i] = s\n",
        lambda dt: (_rank1(dt),),
        ("out",),
        ("float64", "int32", "int64"),
        wrong=[
            ("dtype-promotion", "out = torch.cumsum(x, 0)\n", ("int32",)),
            ("reversed", "out = torch.cumsum(x.flip(0), 0).to(x.dtype)\n"),
            ("off-by-one", "out = (torch.cumsum(x, 0) - x).to(x.dtype)\n"),
            ("off-by-one", "out = torch.cumsum(x[1:], 0).to(x.dtype)\n"),
        ],
        correct=[
            ("correct", "out = torch.cumsum(x, 0).to(x.dtype)\n"),
            ("correct", "out = x.cumsum(dim=0, dtype=x.dtype)\n"),
        ],
    ),
    Template(
        "one_hot",
        "oh = torch.zeros(len(lab), k, dtype=torch.int64)\nfor i in range(len(lab)):\n    oh[i, lab[i]] = 1\n",
        lambda dt: (InputSpec("lab", ranks=(1,), index=True, dtypes=(dt,)), InputSpec("k", Kind.INT, count=True)),
        ("oh",),
        ("int64", "int32"),
        wrong=[
            ("negative-indices", "oh = F.one_hot(lab.long(), k)\n"),
            ("dtype-promotion", "oh = torch.zeros(len(lab), k)\noh[torch.arange(len(lab)), lab.long()] = 1\n"),
            ("broadcast-wrong-dim", "oh = torch.zeros(len(lab), k, dtype=torch.int64)\noh[:, lab.long()] = 1\n"),
            ("negative-indices", "oh = F.one_hot(lab.long().clamp(min=0), k)\n"),
        ],
        correct=[
            ("correct", "oh = torch.zeros(len(lab), k, dtype=torch.int64)\noh[torch.arange(len(lab)), lab.long()] = 1\n"),
            ("correct", "oh = torch.zeros(len(lab), k, dtype=torch.int64)\noh.index_put_((torch.arange(len(lab)), lab.long()), torch.tensor(1))\n"),
        ],
    ),
    Template(
        "gather_rows",
        "out = torch.stack([x[i, idx[i]] for i in range(len(x))])\n",
        lambda dt: (_rank2(dt), InputSpec("idx", ranks=(1,), index=True)),
        ("out",),
        ("float32", "int64"),
        wrong=[
            ("broadcast-wrong-dim", "out = x[:, idx[:len(x)]]\n"),
            ("wrong-axis", "out = x[idx[:len(x)], torch.arange(len(x))]\n"),
            ("negative-indices", "out = x.gather(1, idx[:len(x), None]).squeeze(1)\n"),
            ("unsliced", "out = x[torch.arange(len(x)), idx]\n"),
        ],
        correct=[
            ("correct", "out = x[torch.arange(len(x)), idx[:len(x)]]\n"),
            ("correct", "out = x.gather(1, (idx[:len(x)] % max(x.shape[1], 1))[:, None]).squeeze(1)\n"),
        ],
    ),
    Template(
        "normalize_rows",
        "out = torch.stack([r / r.norm() for r in x])\n",
        lambda dt: (_rank2(dt),),
        ("out",),
        FLOATS,
        wrong=[
            ("wrong-axis", "out = x / x.norm(dim=0, keepdim=True)\n"),
            ("broadcast-wrong-dim", "out = x / x.norm(dim=1)\n"),
            ("detach-kills-gradient", "out = x / x.norm(dim=1, keepdim=True).detach()\n"),
            ("nan-handling", "out = x / (x.norm(dim=1, keepdim=True) + 1e-12)\n"),
        ],
        correct=[
            ("correct-reorder", "out = x / x.norm(dim=1, keepdim=True)\n"),
            ("correct-reorder", "out = x / torch.linalg.vector_norm(x, dim=-1, keepdim=True)\n"),
        ],
        reorders=True,
        gradients=True,
    ),
    Template(
        "tolist_scale",
        "ys = [v.item() * 2 for v in x]\n",
        lambda dt: (_rank1(dt),),
        ("ys",),
        ("float64", "int64"),
        wrong=[
            ("python-type", "ys = x * 2\n"),
            ("dtype-promotion", "ys = (x.float() * 2).tolist()\n"),
            ("off-by-one", "ys = (x * 2).tolist()[1:]\n"),
            ("python-type", "ys = [v * 2 for v in x]\n"),
        ],
        correct=[
            ("correct", "ys = (x * 2).tolist()\n"),
            ("correct", "ys = [2 * v for v in x.tolist()]\n"),
        ],
    ),
    Template(
        "outer",
        "out = torch.stack([a[i] * b for i in range(len(a))])\n",
        lambda dt: (InputSpec("a", ranks=(1,), dtypes=(dt,)), InputSpec("b", ranks=(1,), dtypes=(dt,))),
        ("out",),
        ("float32", "int64"),
        wrong=[
            ("broadcast-wrong-dim", "out = a[None, :] * b[:, None]\n"),
            ("broadcast-wrong-dim", "out = a * b\n"),
            ("wrong-reduction", "out = (a[:, None] * b).sum(1)\n"),
            ("dtype-promotion", "out = a[:, None] * b.double()\n"),
        ],
        correct=[
            ("correct", "out = a[:, None] * b\n"),
            ("correct", "out = torch.outer(a, b)\n"),
        ],
    ),
    Template(
        "masked_fill_inplace",
        "for i in range(len(x)):\n    if m[i]:\n        x[i] = v\n",
        lambda dt: (_rank1(dt), InputSpec("m", ranks=(1,), dtypes=("bool",)), InputSpec("v", Kind.FLOAT)),
        (),
        FLOATS,
        wrong=[
            ("missing-in-place-write", "x = torch.where(m[:len(x)], v, x)\n"),
            ("unsliced-mask", "x[m] = v\n"),
            ("inverted-mask", "x[~m[:len(x)]] = v\n"),
            ("dropped-mask", "x[:] = v\n"),
        ],
        correct=[
            ("correct", "x[m[:len(x)]] = v\n"),
            ("correct", "x.masked_fill_(m[:len(x)], v)\n"),
        ],
    ),
    Template(
        "trunc_half",
        "out = torch.zeros_like(x)\nfor i in range(len(x)):\n    out[i] = x[i] * 0.5\n",
        lambda dt: (_rank1(dt),),
        ("out",),
        ("int64", "int32"),
        wrong=[
            ("dtype-promotion", "out = x * 0.5\n"),
            ("rounding", "out = x // 2\n"),
            ("rounding", "out = (x * 0.5).round().to(x.dtype)\n"),
            ("dtype-promotion", "out = (x * 0.5).long()\n", ("int32",)),
            # exact, where the old code rounds through float32 (2**24 + 1 is not a float32)
            ("rounding", "out = torch.div(x, 2, rounding_mode='trunc')\n"),
        ],
        correct=[
            ("correct", "out = (x * 0.5).to(x.dtype)\n"),
            ("correct", "out = (x.float() * 0.5).to(x.dtype)\n"),
        ],
    ),
    Template(
        "weighted_loss",
        "loss = torch.zeros((), dtype=x.dtype)\nfor i in range(len(x)):\n    loss = loss + w[i] * (x[i] - y[i]) ** 2\n",
        lambda dt: (
            InputSpec("x", ranks=(1,), dtypes=(dt,)),
            InputSpec("y", ranks=(1,), dtypes=(dt,)),
            InputSpec("w", ranks=(1,), dtypes=(dt,)),
        ),
        ("loss",),
        FLOATS,
        wrong=[
            ("detach-kills-gradient", "n = len(x)\nloss = (w[:n] * (x - y[:n]).detach() ** 2).sum()\n"),
            ("off-by-one", "n = len(x)\nloss = (w[1:n + 1] * (x - y[:n]) ** 2).sum()\n"),
            ("dropped-weight", "n = len(x)\nloss = ((x - y[:n]) ** 2).sum()\n"),
            ("wrong-reduction", "n = len(x)\nloss = (w[:n] * (x - y[:n]) ** 2).mean()\n"),
            ("detach-kills-gradient", "n = len(x)\nloss = (w[:n].detach() * (x - y[:n]) ** 2).sum()\n"),
        ],
        correct=[
            ("correct-reorder", "n = len(x)\nloss = (w[:n] * (x - y[:n]) ** 2).sum()\n"),
            ("correct-reorder", "n = len(x)\nloss = torch.dot(w[:n], (x - y[:n]) ** 2)\n"),
        ],
        reorders=True,
        gradients=True,
    ),
]


def build_cases() -> list[Case]:
    cases: list[Case] = []
    for t in TEMPLATES:
        for dt in t.variants:
            specs = t.specs(dt)
            modules = F_MODULES

            def kernel(new: str) -> Kernel:
                return Kernel(
                    t.old, _fmt(new, dt), specs, t.outputs, modules,
                    reorders_float_reduction=t.reorders, note=f"{t.name}/{dt}", gradients=t.gradients,
                    # each template's inputs are distinct arrays (aliasing has tests of its own)
                    may_alias=(),
                )

            for n, entry in enumerate(t.wrong):
                category, new, only = (entry + (None,))[:3]
                if only and dt not in only:
                    continue
                if category == "detach-kills-gradient" and not t.gradients:
                    continue
                cases.append(Case(f"{t.name}/{dt}/wrong{n}", t.name, category, "refute", kernel(new)))
            for n, entry in enumerate(t.correct):
                category, new, only = (entry + (None,))[:3]
                if only and dt not in only:
                    continue
                cases.append(Case(f"{t.name}/{dt}/ok{n}", t.name, category, "verify", kernel(new)))
    return cases


def quick_cases(cases: list[Case], per_kind: int = 1) -> list[Case]:
    """A small, stable subset: the first wrong and first correct mutant of each template."""
    seen: dict[tuple[str, str], int] = {}
    picked = []
    for case in cases:
        key = (case.template, case.expect)
        if seen.get(key, 0) < per_kind:
            seen[key] = seen.get(key, 0) + 1
            picked.append(case)
    return picked


__all__ = ["Case", "TEMPLATES", "build_cases", "quick_cases", "replace"]
