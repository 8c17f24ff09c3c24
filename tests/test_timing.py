"""What a rewrite buys: the timing stage (``equivalence.timing``) and the "measured slower" gate.

The timing tests assert what was measured (which sizes, which device, which inputs), never how
fast anything is: speed is the benchmarks' business. The gate is tested with fake verdicts.
"""

from __future__ import annotations

import dataclasses
import json
import time

import pytest
import torch
from test_app_fakes import AssignOne, FakeChecker, by_new_code, variant, verified

from torchfix.equivalence.cache import verdict_from_json, verdict_to_json
from torchfix.equivalence.kernel import InputSpec, Kernel, Kind, Outcome, Timing, Verdict
from torchfix.equivalence.timing import (
    SIZES,
    NotMeasured,
    _clock,
    _one_cpu_thread,
    _predict,
    _settle_edges,
    _time_pair,
    measure_kernel,
    scaled_inputs,
    timing_signatures,
)
from torchfix.pipeline import process_source
from torchfix.report import Summary, record_json

HIST = Kernel(
    old="for v in idx:\n    hist[v] += 1\n",
    new="hist.index_put_((idx.long(),), torch.ones_like(idx, dtype=hist.dtype), accumulate=True)\n",
    inputs=(InputSpec("hist", ranks=(1,), dtypes=("float32",)), InputSpec("idx", ranks=(1,), index=True, nonnegative=True)),
    outputs=("hist",),
)


def test_a_verified_kernel_is_timed_at_each_size_on_fresh_inputs_of_that_size() -> None:
    timings = measure_kernel(HIST, "cpu")
    assert [t.size for t in timings] == list(SIZES)
    for t in timings:
        assert t.device == "cpu" and t.old_seconds > 0 and t.new_seconds > 0 and t.runs >= 1
        assert t.signature == "hist: float32[rank 1], idx: int64[rank 1]"


def test_inputs_scale_the_loop_extent_and_keep_other_dimensions_small() -> None:
    specs = [
        InputSpec("x", ranks=(2,)),
        InputSpec("w", ranks=(1,)),
        InputSpec("n", Kind.INT, count=True),
        InputSpec("losses", ranks=(0,), per_step=True),
    ]
    (signature, *_) = timing_signatures(specs)
    inputs = scaled_inputs(specs, signature, 300, {"x": "batch", "w": "small"}, 0, "cpu")
    assert inputs["x"].shape == (300, 8) and inputs["x"].dtype.is_floating_point
    assert inputs["w"].shape == (8,)
    assert inputs["n"] == 300
    assert len(inputs["losses"]) == 300 and inputs["losses"][0].shape == ()


def test_the_search_finds_the_layout_the_old_code_accepts() -> None:
    # w must match x's row width, not the batch: only the "w small" layout runs
    kernel = Kernel(
        old="out = torch.empty(x.size(0))\nfor i in range(x.size(0)):\n    out[i] = torch.dot(x[i], w)\n",
        new="out = x @ w\n",
        inputs=(InputSpec("x"), InputSpec("w")),
        outputs=("out",),
    )
    timings = measure_kernel(kernel, "cpu", sizes=(64,))
    assert timings[0].signature == "w: float32[rank 1], x: float32[rank 2]" or "x: float32[rank 2]" in timings[0].signature


def test_kernels_that_call_stand_ins_are_not_timed() -> None:
    kernel = Kernel(old="y = model(x)\n", new="y = model(x)\n", inputs=(InputSpec("x"), InputSpec("model", Kind.OPAQUE)), outputs=("y",))
    with pytest.raises(NotMeasured, match="stand-in"):
        measure_kernel(kernel, "cpu")


def test_a_kernel_the_old_code_never_accepts_at_scale_is_not_timed() -> None:
    kernel = Kernel(old="assert x.numel() < 3\ny = x\n", new="y = x\n", inputs=(InputSpec("x", ranks=(1,)),), outputs=("y",))
    with pytest.raises(NotMeasured, match="no input of size"):
        measure_kernel(kernel, "cpu")


def test_sizes_whose_old_call_is_predicted_too_long_are_skipped() -> None:
    # quadratic in n: 65k steps at 256 take milliseconds, so with a 50 ms cap neither 4096 nor
    # the 1024 probe (predicted cubic from one size) may run
    kernel = Kernel(
        old="s = 0\nfor i in range(n):\n    for j in range(n):\n        s += 1\n",
        new="s = max(n, 0) ** 2\n",
        inputs=(InputSpec("n", Kind.INT, count=True),),
        outputs=("s",),
    )
    timings = measure_kernel(kernel, "cpu", max_call_seconds=0.05)
    assert [t.size for t in timings] == [256]


def test_growth_is_fitted_from_two_sizes_and_assumed_cubic_from_one() -> None:
    assert _predict([(100, 1.0)], 200) == pytest.approx(8.0)
    assert _predict([(100, 1.0), (400, 4.0)], 1600) == pytest.approx(16.0)  # linear
    assert _predict([(100, 1.0), (400, 16.0)], 1600) == pytest.approx(256.0)  # quadratic


def _timed(*speedups: float, device: str = "cpu") -> Verdict:
    sizes = (256, 4096)
    return dataclasses.replace(
        verified(), timings=tuple(Timing(device, n, s * 1e-3, 1e-3, 5, "x: float32[rank 1]") for n, s in zip(sizes, speedups))
    )


def test_the_speed_class_is_the_deciding_device_against_the_band() -> None:
    from torchfix.equivalence.kernel import SpeedClass

    assert _timed(0.3, 0.45).speed_class() is SpeedClass.CLEARLY_SLOWER
    assert _timed(0.4, 0.8).speed_class() is SpeedClass.IN_BAND, "clearly slower at the largest size, or not"
    # the smallest size is the noisiest: a ratio moving about the edge there moves nothing
    assert {_timed(small, 0.23).speed_class() for small in (0.40, 0.51, 0.67)} == {SpeedClass.CLEARLY_SLOWER}
    assert _timed(0.97, 1.03).speed_class() is SpeedClass.IN_BAND
    assert _timed(2.0, 30.0).speed_class() is SpeedClass.CLEARLY_FASTER
    assert _timed(1.9, 30.0).speed_class() is SpeedClass.IN_BAND
    assert verified().speed_class() is SpeedClass.NOT_MEASURED, "not measured is not slower"
    both = dataclasses.replace(_timed(0.4, 0.4), timings=_timed(0.4, 0.4).timings + _timed(3.0, 4.0, device="cuda").timings)
    assert both.speed_class() is SpeedClass.CLEARLY_FASTER, "the GPU decides when it was measured"
    assert _timed(0.9, 0.93).speed_class() is not SpeedClass.CLEARLY_SLOWER


@pytest.mark.parametrize("gated", [False, True], ids=["faster-by-construction", "speed-gated"])
def test_near_one_x_the_decision_does_not_depend_on_the_noise(gated) -> None:
    # the same rewrite timed on a quiet and on a loaded machine: 0.9x .. 1.1x. The diff is the
    # same every time; only the figures in the message move
    from test_app_unmeasured import GATED

    rule = GATED if gated else AssignOne
    outputs, outcomes = set(), set()
    for ratio in (0.8, 0.93, 0.97, 1.0, 1.04, 1.1, 1.3):
        checker = FakeChecker(lambda kernel, r=ratio: _timed(r, r * 1.05))
        result = process_source(SRC, "m.py", [rule], lambda: checker)
        outputs.add(result.new)
        outcomes.add(result.records[0].outcome)
    assert len(outputs) == 1 and len(outcomes) == 1
    if gated:  # not faster by construction, and not shown clearly faster: withheld, every time
        assert outputs == {None} and outcomes == {"skipped"}
        assert "not measured clearly faster" in result.records[0].reason and "1.30x at n=256" in result.records[0].reason
    else:  # a Python loop removed: emitted, every time
        assert outputs == {SRC.replace(b"x = 1", b"x = 2")} and outcomes == {"verified"}


SRC = b"import torch\n\n\ndef f():\n    x = 1\n    return x\n"


def test_a_timing_near_a_band_edge_is_measured_twice_more_and_the_median_kept() -> None:
    """One noisy run near an edge would flip the emitted diff: the deciding timings within
    EDGE_MARGIN of an edge are re-measured, and the run with the median speedup stands."""
    far = Timing("cpu", 256, 40.0, 1.0)  # 40x: far from both edges, not re-measured
    near_slow = Timing("cpu", 4096, 0.56, 1.0)  # 0.56x at the largest size: near CLEARLY_SLOWER
    asked: list[int] = []
    reruns = iter([(0.30, 1.0, 5), (0.40, 1.0, 5)])

    def again(n: int) -> tuple[float, float, int]:
        asked.append(n)
        return next(reruns)

    settled = _settle_edges([far, near_slow], again)
    assert asked == [4096, 4096]
    assert settled[0] is far and settled[1].speedup == pytest.approx(0.40)
    # the slow edge is read at the largest size only: 0.55x at n=256 is left as measured
    small_near = Timing("cpu", 256, 0.55, 1.0)
    assert _settle_edges([small_near, Timing("cpu", 4096, 40.0, 1.0)], again)[0] is small_near
    # every size decides CLEARLY_FASTER: 2.2x at n=256 is measured again (a failing re-run keeps it)

    def broken(n: int) -> tuple[float, float, int]:
        raise RuntimeError("out of memory")

    near_fast = Timing("cpu", 256, 2.2, 1.0)
    assert _settle_edges([near_fast, Timing("cpu", 4096, 40.0, 1.0)], broken)[0] is near_fast


@pytest.mark.skipif(_clock("cpu") is not time.thread_time, reason="thread CPU time is coarse on this platform")
def test_cpu_timings_do_not_count_time_the_timing_thread_is_not_running() -> None:
    """A loaded machine deschedules the checker unevenly during old and new calls; what a CPU
    timing counts is the thread's own CPU time, so a call that waits (here: sleeps 20 ms) costs
    next to nothing, where the wall clock charges it in full."""
    sleeps = compile("time.sleep(0.02)\n", "<old>", "exec")
    works = compile("sum(range(20000))\n", "<new>", "exec")
    base = {"time": time, "__builtins__": __builtins__}
    old_cpu, new_cpu, _ = _time_pair(sleeps, works, base, {}, lambda: None, _clock("cpu"))
    old_wall, _, _ = _time_pair(sleeps, works, base, {}, lambda: None, time.perf_counter)
    assert old_wall >= 0.02 and old_cpu < 0.005
    assert new_cpu > 0
    assert _clock("cuda") is time.perf_counter  # the GPU's work is waited for, not run, by the thread


def test_cpu_timings_run_torch_on_the_timing_thread_alone() -> None:
    """Work on another intra-op thread would escape the thread's CPU time: while timing, torch
    runs on one thread, and the caller's setting comes back after."""
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with _one_cpu_thread("cpu"):
            assert torch.get_num_threads() == 1
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_rewrite_measured_slower_is_not_emitted_by_default() -> None:
    checker = FakeChecker(lambda kernel: _timed(0.4, 0.45))
    result = process_source(SRC, "m.py", [AssignOne], lambda: checker)
    assert not result.changed
    (record,) = result.records
    assert record.outcome == "skipped" and not record.emitted
    assert "measured clearly slower" in record.reason and "0.40x at n=256" in record.reason and "--allow-slower" in record.reason
    assert record.verdict is not None and record.verdict.timings, "the measurement goes to the report"
    from torchfix.report import record_lines

    # checked, then withheld: a reviewer sees it without -v (only unchecked skips are hidden)
    assert any("measured clearly slower" in line for line in record_lines(result, show_skipped=False))


def test_allow_slower_emits_it() -> None:
    checker = FakeChecker(lambda kernel: _timed(0.4, 0.45))
    result = process_source(SRC, "m.py", [AssignOne], lambda: checker, allow_slower=True)
    assert result.changed and result.records[0].outcome == "verified"


def test_a_slower_rung_lets_the_ladder_climb_to_a_faster_verified_one() -> None:
    rule = variant(AssignOne, ladder=("2", "3"))
    checker = FakeChecker(by_new_code({"x = 2": _timed(0.4, 0.45), "x = 3": _timed(20.0, 90.0)}))
    result = process_source(SRC, "m.py", [rule], lambda: checker)
    assert result.new == SRC.replace(b"x = 1", b"x = 3")
    assert result.records[0].outcome == "verified"


def test_speedups_reach_the_summary_and_the_json_report() -> None:
    checker = FakeChecker(lambda kernel: _timed(37.0, 120.0))
    result = process_source(SRC, "m.py", [AssignOne], lambda: checker)
    summary = Summary()
    summary.add(result)
    lines = summary.speed_lines()
    assert lines[0].startswith("measured speedup of 1 rewrite(s) on cpu at n=256: median 37x")
    (entry,) = record_json(result)
    assert entry["speedup"] == [{"device": "cpu", "n": 256, "speedup": 37.0}, {"device": "cpu", "n": 4096, "speedup": 120.0}]
    assert entry["verdict"]["timings"][1]["old_seconds"] == pytest.approx(0.12)
    json.dumps(entry)


def test_timings_survive_the_persistent_cache() -> None:
    verdict = dataclasses.replace(_timed(2.0, 3.0), timing_note="")
    again = verdict_from_json(json.loads(json.dumps(verdict_to_json(verdict))))
    assert again == verdict and again.outcome is Outcome.VERIFIED


def test_the_boxed_checker_attaches_timings_to_verified_verdicts() -> None:
    from torchfix.equivalence.checker import Checker, CheckSettings

    with Checker(CheckSettings(examples=10), cache_dir=None) as checker:
        verdict = checker.check(HIST)
    assert verdict.ok
    assert [(t.device, t.size) for t in verdict.timings] == [("cpu", n) for n in SIZES]
    assert "at n=256" in verdict.speed_text()


def test_allow_slower_and_measure_are_configuration_keys(tmp_path) -> None:  # noqa: ANN001
    from torchfix.config import ConfigError, parse_config

    config = parse_config({"allow-slower": True, "measure": False}, tmp_path / "pyproject.toml")
    assert config.allow_slower is True and config.measure is False
    with pytest.raises(ConfigError, match="expected bool"):
        parse_config({"measure": "yes"}, tmp_path / "pyproject.toml")


def test_a_binding_the_kernel_never_names_does_not_stop_the_timing() -> None:
    """`from torch.utils.data import DataLoader` beside the loop is bound as a stand-in (the
    checker does not build it); a kernel that never names it is timed all the same."""
    modules = (("torch", "torch"), ("DataLoader", "torch.utils.data.DataLoader"))
    kernel = Kernel(
        old="total = 0.0\nfor v in vs:\n    total += v.item()\n",
        new="total = 0.0\nfor v in vs:\n    total += v.detach().double()\ntotal = float(total)\n",
        inputs=(InputSpec("vs", per_step=True),), outputs=("total",), modules=modules,
    )
    assert measure_kernel(kernel, "cpu", sizes=(16,))
    calls_it = dataclasses.replace(kernel, new=kernel.new + "loader = DataLoader(vs)\n")
    with pytest.raises(NotMeasured, match="stand-in"):
        measure_kernel(calls_it, "cpu", sizes=(16,))
