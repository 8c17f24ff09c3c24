"""The checker: it must refute planted wrong rewrites, accept correct ones, and stay boxed."""

from __future__ import annotations

import pytest
import torch

from torchfix.equivalence.checker import Checker, CheckSettings
from torchfix.equivalence.compare import Tolerance, compare
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome, Verdict

SUM_LOOP = """
total = 0.0
for i in range(len(x)):
    total += x[i].item()
"""


def sum_kernel(new: str) -> Kernel:
    return Kernel(SUM_LOOP, new, (InputSpec("x"),), ("total",), reorders_float_reduction=True)


def test_correct_rewrite_is_verified(checker):
    verdict = checker.check(sum_kernel("total = x.sum(dtype=torch.float64).item()\n"))
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason
    assert verdict.examples >= 8 and verdict.devices == ("cpu",)


def test_off_by_one_is_rejected_with_minimal_counterexample(checker):
    verdict = checker.check(sum_kernel("total = x[1:].sum(dtype=torch.float64).item()\n"))
    assert verdict.outcome is Outcome.REJECTED
    rendered = verdict.counterexample.render()
    # hypothesis shrinks to a single element
    assert "shape [1]" in rendered and "total differs" in rendered


def test_float32_accumulation_is_refuted_against_python_floats(checker):
    """Python sums floats in double precision: a float32 tensor sum is not the same number."""
    verdict = checker.check(sum_kernel("total = x.sum().item() if x.numel() else 0.0\n"))
    assert verdict.outcome is Outcome.REJECTED


def test_python_type_matters(checker):
    kernel = Kernel("y = 0\nfor v in x:\n    y += int(v)\n", "y = float(x.long().sum())\n", (InputSpec("x"),), ("y",))
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED and "Python type" in verdict.counterexample.detail


def test_missing_in_place_write_is_rejected(checker):
    kernel = Kernel(
        "for i in range(len(x)):\n    x[i] = x[i] * 2\n",
        "y = x * 2\n",
        (InputSpec("x", dtypes=("float32",), ranks=(1,)),),
        (),
    )
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED and "input x after the run" in verdict.counterexample.where


def test_duplicate_indices_bug_is_rejected(checker):
    kernel = Kernel(
        "for i in range(len(idx)):\n    out[idx[i]] += 1\n",
        "out[idx] += 1\n",
        (InputSpec("out", dtypes=("int64",), ranks=(1,)), InputSpec("idx", index=True, ranks=(1,))),
        (),
    )
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED


def test_opaque_attribute_use_gives_unverified(checker):
    kernel = Kernel("y = model.weight * x\n", "y = x * model.weight\n", (InputSpec("x"), InputSpec("model", Kind.OPAQUE)), ("y",))
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.UNVERIFIED


def test_opaque_calls_are_uninterpreted_functions(checker):
    """The same calls on the same values agree; a call on other values does not."""
    specs = (InputSpec("x", ranks=(1,)), InputSpec("model", Kind.OPAQUE))
    same = Kernel("y = model(x).sum().item()\n", "y = model(x).sum().item()\n", specs, ("y",))
    assert checker.check(same).outcome is Outcome.VERIFIED
    other = Kernel("y = model(x).sum().item()\n", "y = model(x[:1]).sum().item()\n", specs, ("y",))
    assert checker.check(other).outcome is Outcome.REJECTED


def test_forbidden_builtins_are_not_reachable(checker, tmp_path):
    target = tmp_path / "victim.txt"
    target.write_text("keep")
    kernel = Kernel(f"open({str(target)!r}, 'w').write('gone')\ny = 1\n", "y = 1\n", (), ("y",))
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.SKIPPED and "calls `open`, which is not a known pure callee" in verdict.reason
    assert target.read_text() == "keep"


def test_hang_times_out_and_the_checker_recovers():
    with Checker(CheckSettings(examples=40, timeout=2.0)) as checker:
        hang = Kernel("while True:\n    pass\n", "y = 1\n", (), ("y",))
        verdict = checker.check(hang)
        assert verdict.outcome is Outcome.UNVERIFIED and "timed out" in verdict.reason
        ok = checker.check(sum_kernel("total = x.sum(dtype=torch.float64).item()\n"))
        assert ok.outcome is Outcome.VERIFIED


def test_runaway_allocation_is_contained():
    # a CPU worker runs under RLIMIT_AS, so even an allocation never touched fails (a GPU worker
    # runs without it, CUDA reserving far more address space than it uses: next test)
    with Checker(CheckSettings(examples=5, timeout=20.0, memory_mb=3072, devices=("cpu",))) as checker:
        kernel = Kernel("y = 1\n", "z = torch.empty(2**40, dtype=torch.uint8)\ny = 1\n", (), ("y",))
        verdict = checker.check(kernel)
        if checker._unlimited:
            # a CUDA build of torch maps more than the limit at import, so the worker runs
            # without RLIMIT_AS here (seen on an H100 machine); what it allocates but never
            # touches costs nothing, and what it touches the next test covers
            pytest.skip("this torch does not start under RLIMIT_AS: the worker runs without it")
        assert verdict.outcome in (Outcome.REJECTED, Outcome.UNVERIFIED)


def test_runaway_memory_is_contained_on_every_device_this_machine_has():
    # memory actually used: the parent's watch of the worker's resident memory stops it where no
    # RLIMIT_AS applies (a GPU machine)
    with Checker(CheckSettings(examples=5, timeout=30.0, memory_mb=2048)) as checker:
        kernel = Kernel("y = 1\n", "z = torch.ones(2**34, dtype=torch.uint8)\ny = 1\n", (), ("y",))
        verdict = checker.check(kernel)
        assert verdict.outcome in (Outcome.REJECTED, Outcome.UNVERIFIED), verdict


def test_verdicts_are_cached_by_kernel_content(checker):
    kernel = sum_kernel("total = x.double().sum().item()\n")
    first = checker.check(kernel)
    second = checker.check(Kernel(kernel.old, kernel.new, kernel.inputs, kernel.outputs, kernel.modules, True))
    assert first is second


@pytest.mark.parametrize(
    "old,new,same",
    [
        (1, 1.0, False),
        (True, 1, False),
        (float("nan"), float("nan"), True),
        (torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]), True),
        (torch.tensor([1.0, float("nan")]), torch.tensor([1.0, 2.0]), False),
        (torch.tensor([1, 2]), torch.tensor([1, 2], dtype=torch.int32), False),
        (torch.tensor([1.0]), torch.tensor([[1.0]]), False),
        (torch.tensor([1.0]), torch.tensor([1.0 + 1e-9]), True),
        (torch.tensor([1, 2]), torch.tensor([1, 3]), False),
        ([1.0, 2.0], [1.0, 2.0], True),
    ],
)
def test_compare(old, new, same):
    assert (compare(old, new, "y", Tolerance()) is None) == same


def test_reordered_reduction_widens_tolerance_by_length_and_scale():
    tol = Tolerance(True, 1000, 1e6)
    rtol, atol = tol.for_dtype(torch.float32)
    assert rtol > 1.3e-6 and atol > 1e-5


@pytest.mark.cuda
def test_cuda_leg_verifies_on_the_gpu():
    with Checker(CheckSettings(examples=30, devices=("cpu", "cuda"))) as checker:
        verdict = checker.check(sum_kernel("total = x.sum(dtype=torch.float64).item()\n"))
        assert verdict.outcome is Outcome.VERIFIED and verdict.devices == ("cpu", "cuda")


def test_kernels_may_build_tensors_from_lists_in_a_fresh_worker():
    """torch.tensor([...]) imports lazily through the kernel's builtins; that must work."""
    with Checker(CheckSettings(examples=30)) as fresh:
        kernel = Kernel("y = torch.tensor([v.item() for v in x])\n", "y = torch.tensor(x.tolist())\n", (InputSpec("x", ranks=(1,), dtypes=("float32",)),), ("y",))
        assert fresh.check(kernel).outcome is Outcome.VERIFIED


def test_kernels_may_not_import_other_modules(checker):
    kernel = Kernel("import os\ny = 1\n", "y = 1\n", (), ("y",))
    verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.SKIPPED and "imports `os`" in verdict.reason


def test_nan_after_the_first_element_is_found(checker):
    """Python's max skips a NaN that is not first; torch.max propagates it."""
    kernel = Kernel("y = max(v.item() for v in x)\n", "y = x.max().item()\n", (InputSpec("x", ranks=(1,), dtypes=("float32", "float64")),), ("y",))
    assert checker.check(kernel).outcome is Outcome.REJECTED


def test_int64_overflow_is_found(checker):
    kernel = Kernel("y = [int(v) for v in x]\n", "y = x.long().tolist()\n", (InputSpec("x", ranks=(1,), dtypes=("float32",)),), ("y",))
    assert checker.check(kernel).outcome is Outcome.REJECTED


NUMBERS_BESIDE_SAMPLES = "out = torch.stack([x[k] * (k + 0.5) for k in range(len(x))])\n"


@pytest.mark.parametrize(
    ("new", "outcome"),
    [
        # a batch of Python numbers is a float32 tensor: it promotes a float16 (or bfloat16, or
        # int8) sample that the Python number beside it left alone
        ("out = x * (torch.arange(len(x)) + 0.5)\n", Outcome.REJECTED),
        ("out = x * (torch.arange(len(x)) + 0.5).to(torch.result_type(x, 0.0))\n", Outcome.VERIFIED),
    ],
)
def test_narrow_dtypes_of_an_unstated_dtype_are_tried(checker, new, outcome):
    """float16, bfloat16, int8, int16 and uint8 are not drawn in the sample, and dtype coverage
    still tries each of them where the old code takes it."""
    x = InputSpec("x", ranks=(1,))
    verdict = checker.check(Kernel(NUMBERS_BESIDE_SAMPLES, new, (x,), ("out",), may_alias=()))
    assert verdict.outcome is outcome, verdict.reason
    if outcome is Outcome.VERIFIED:
        tried = {s.split(": ")[1].split("[")[0] for s in verdict.signatures}
        assert {"float16", "bfloat16", "int8", "int16", "uint8"} <= tried
    else:
        assert "float16" in verdict.reason or "bfloat16" in verdict.reason or "int" in verdict.reason


def test_a_stated_dtype_is_not_widened_to_narrow_ones(checker):
    x = InputSpec("x", ranks=(1,), dtypes=("float32",))
    verdict = checker.check(Kernel(NUMBERS_BESIDE_SAMPLES, "out = x * (torch.arange(len(x)) + 0.5)\n", (x,), ("out",), may_alias=()))
    assert verdict.outcome is Outcome.VERIFIED, verdict.reason
    assert all("float32" in s for s in verdict.signatures)


def test_a_worker_that_cannot_start_under_the_address_space_limit_is_restarted_without_it(monkeypatch):
    # a CUDA build of torch maps gigabytes of libraries at import and dies under a small
    # RLIMIT_AS before it is ready (seen on an H100 machine with memory_mb=3072): simulated here
    calls = []
    spawn = Checker._spawn

    def failing_under_a_limit(self, address_space_mb):  # noqa: ANN001, ANN202
        calls.append(address_space_mb)
        if address_space_mb:
            raise RuntimeError("the checker worker did not start")
        return spawn(self, address_space_mb)

    monkeypatch.setattr(Checker, "_spawn", failing_under_a_limit)
    with Checker(CheckSettings(examples=5, measure=False), cache_dir=None) as checker:
        verdict = checker.check(Kernel("y = x * 2\n", "y = x + x\n", (InputSpec("x", ranks=(1,), dtypes=("float32",)),), ("y",)))
    assert calls == [8192, 0]
    assert verdict.outcome is Outcome.VERIFIED


def test_a_device_leg_moves_every_input_of_an_example_to_its_device():
    # a regression: examples are dicts, and the CUDA leg once ran them on the CPU unmoved
    from torchfix.equivalence.engine import _to_device

    moved = _to_device({"x": torch.ones(2), "steps": [torch.ones(1), torch.ones(1)], "n": 3}, "meta")
    assert moved["x"].device.type == "meta" and {t.device.type for t in moved["steps"]} == {"meta"} and moved["n"] == 3


def test_snippets_on_a_device_allocate_there_by_default():
    from torchfix.equivalence.execute import base_namespace, run_snippet

    kernel = Kernel("y = torch.zeros(2) + x\n", "y = x\n", (InputSpec("x"),), ("y",))
    code = compile(kernel.old, "<old>", "exec")
    result = run_snippet(code, kernel, base_namespace(kernel), {"x": torch.ones(2, device="meta")})
    assert result.error is None and result.outputs["y"].device.type == "meta"


def test_a_gpu_leg_where_the_old_code_never_runs_does_not_veto_the_cpu_verdict():
    from torchfix.equivalence.kernel import merge_verdicts
    from torchfix.equivalence.kernel import Verdict

    cpu = Verdict(Outcome.VERIFIED, "no counterexample", examples=90, devices=("cpu",))
    gpu = Verdict(Outcome.UNVERIFIED, "found no input on which the old code runs (...); the old code raised TypeError: can't convert cuda:0 device type tensor to numpy", devices=("cuda",))
    merged = merge_verdicts([cpu, gpu])
    assert merged.ok and merged.devices == ("cpu",)
    assert any("not checked on cuda" in note and "numpy" in note for note in merged.notes)
    refuted = Verdict(Outcome.REJECTED, "counterexample: y differs", devices=("cuda",))
    assert merge_verdicts([cpu, refuted]) is refuted
    timed_out = Verdict(Outcome.UNVERIFIED, "the check timed out after 30s", devices=("cuda",))
    assert merge_verdicts([cpu, timed_out]) is timed_out


def test_available_devices_asks_torch_only_where_a_gpu_driver_is_installed(tmp_path, monkeypatch):
    import torch

    from torchfix.equivalence import checker

    monkeypatch.setattr(checker, "_GPU_DRIVER_PATHS", (str(tmp_path / "no-driver"),))
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)  # would say cuda if it were asked
    assert checker.available_devices() == ("cpu",)
    monkeypatch.setattr(checker, "_GPU_DRIVER_PATHS", (str(tmp_path),))
    assert checker.available_devices() == ("cpu", "cuda")


@pytest.mark.parametrize(
    ("old", "new", "outcome"),
    [
        # the old result is the concatenation's own memory; a view of the input is not
        ("y = torch.cat([r for r in x])\n", "y = x.flatten()\n", Outcome.REJECTED),
        ("y = torch.cat([r for r in x])\n", "y = x.flatten().clone()\n", Outcome.VERIFIED),
        # a view of an array both sides computed before the loop (not an input) counts too
        ("w = x * 2\ny = torch.stack([r for r in w])\n", "w = x * 2\ny = w[:]\n", Outcome.REJECTED),
        ("w = x * 2\ny = torch.stack([r for r in w])\n", "w = x * 2\ny = w.clone()\n", Outcome.VERIFIED),
        # where the old result views the input, so may the new one
        ("y = x[:]\n", "y = x.view(x.shape)\n", Outcome.VERIFIED),
    ],
    ids=["view-of-input", "copy-of-input", "view-of-prelude", "copy-of-prelude", "both-views"],
)
def test_a_result_sharing_memory_the_old_one_did_not_is_refuted(checker, old: str, new: str, outcome: Outcome) -> None:
    kernel = Kernel(old, new, (InputSpec("x", ranks=(2,)),), ("y",))
    verdict = checker.check(kernel)
    assert verdict.outcome is outcome, verdict.reason
    if outcome is Outcome.REJECTED:
        assert "memory" in verdict.reason


def test_each_device_leg_has_the_whole_timeout(monkeypatch) -> None:  # noqa: ANN001
    """A check on the CPU and CUDA may take the timeout twice: with one budget for both, a GPU
    machine under load timed the CUDA leg of one rung out and emitted a later rung, where a
    lighter moment verified the first (as on a Dask cluster, each leg has the whole timeout)."""
    asked: list[float] = []

    def request(self, message, timeout):  # noqa: ANN001, ANN202
        asked.append(timeout)
        return Verdict(Outcome.UNVERIFIED, f"the check timed out after {timeout:.0f}s")

    monkeypatch.setattr(Checker, "_request", request)
    kernel = Kernel("y = x + 1\n", "y = 1 + x\n", (InputSpec("x"),), ("y",))
    for devices in (("cpu",), ("cpu", "cuda")):
        Checker(CheckSettings(timeout=7.0, devices=devices, measure=False), cache_dir=None).check(kernel)
    assert asked == [7.0, 14.0]



def test_a_result_that_requires_grad_where_the_old_one_did_not_is_a_difference() -> None:
    """`targets[i] = s[i].item() * 0.9` stores constants; `targets[:] = s * 0.9` stores a result
    that backpropagates into `s`: the same values, another program once `loss.backward()` runs.
    The gradient leg compared gradients only where the old results had any (a review found the
    leak verified)."""
    old = "t = torch.zeros(len(s), dtype=s.dtype)\nfor i in range(len(s)):\n    t[i] = s[i].item() * 0.9\n"
    spec = (InputSpec("s", ranks=(1,), dtypes=("float32", "float64")),)
    leaking = Kernel(old, "t = torch.zeros(len(s), dtype=s.dtype)\nt[:] = s * 0.9\n", spec, ("t",), gradients=True)
    detached = Kernel(old, "t = torch.zeros(len(s), dtype=s.dtype)\nt[:] = s.detach() * 0.9\n", spec, ("t",), gradients=True)
    with Checker(CheckSettings(examples=40, measure=False), cache_dir=None) as checker:
        verdict = checker.check(leaking)
        assert verdict.outcome is Outcome.REJECTED and "old results are constants" in str(verdict.counterexample)
        assert checker.check(detached).outcome is Outcome.VERIFIED


def test_a_batched_store_that_raises_on_a_leaf_the_loop_left_alone_is_refuted():
    """A guard that rarely fires (`if torch.isnan(w[i])`) writes nothing into an `nn.Parameter` at
    most steps, where a batched store into it raises at every one: a review found the retry on
    computed tensors letting that through, so the new code raising on a leaf stays a difference."""
    old = "for i in range(w.size(0)):\n    if torch.isnan(w[i]):\n        w[i] = 0.0\n"
    spec = (InputSpec("w", ranks=(1,), dtypes=("float32",), batch_dim=0),)
    kernel = Kernel(old, "keep = torch.isnan(w)\nw[keep] = 0.0\n", spec, ("w",), gradients=True)
    with Checker(CheckSettings(examples=40, measure=False), cache_dir=None) as checker:
        verdict = checker.check(kernel)
    assert verdict.outcome is Outcome.REJECTED and "require grad" in verdict.reason, verdict.reason


def test_the_gradient_of_a_loop_that_writes_into_its_input_is_compared_on_computed_tensors():
    """A loop that writes into an input raises on a leaf that requires grad, which left such loops
    with no gradient compared at all; on tensors computed from the leaves (a model's output) both
    codes write, and a batch that cuts the gradient the loop keeps is refuted."""
    old = "for i in range(x.size(0)):\n    x[i] = x[i] * 2.0\n"
    spec = (InputSpec("x", ranks=(1, 2), dtypes=("float32", "float64"), batch_dim=0),)
    faithful = Kernel(old, "x[:] = x * 2.0\n", spec, ("x",), gradients=True)
    detached = Kernel(old, "x[:] = x.detach() * 2.0\n", spec, ("x",), gradients=True)
    with Checker(CheckSettings(examples=40, measure=False), cache_dir=None) as checker:
        assert checker.check(faithful).outcome is Outcome.VERIFIED
        verdict = checker.check(detached)
    assert verdict.outcome is Outcome.REJECTED and "gradient" in str(verdict.counterexample), verdict.reason
