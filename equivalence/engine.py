"""The in-process check of one kernel: admit signatures, explore with hypothesis, shrink, judge.

This module runs untrusted snippets; call it only inside a boxed worker (``equivalence.worker``).
"""

from __future__ import annotations

import random
import time
import warnings
from dataclasses import dataclass, field
from typing import Any

import torch
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from equivalence.compare import Difference, Tolerance, compare, short
from equivalence.execute import base_namespace, run_snippet
from equivalence.kernel import Counterexample, InputSpec, Kernel, Kind, Outcome, Verdict
from equivalence.values import (
    Signature,
    candidate_signatures,
    describe,
    inputs_strategy,
    render_value,
    sample_nonempty,
)

#: fewer compared examples than this (the old code raising on the rest) is not evidence enough
MIN_EXAMPLES = 8
SIGNATURE_LIMIT = 48
ADMISSION_TRIES = 4


@dataclass(frozen=True)
class EngineSettings:
    examples: int = 60
    seed: int = 0
    device: str = "cpu"


class _Refuted(Exception):
    def __init__(self, counterexample: Counterexample) -> None:
        super().__init__(counterexample.where)
        self.counterexample = counterexample


@dataclass
class _Stats:
    compared: int = 0
    old_raised: int = 0
    signatures_seen: set[str] = field(default_factory=set)


def _to_device(value: Any, device: str) -> Any:
    if device == "cpu":
        return value
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, list):
        return [_to_device(v, device) for v in value]
    return value


def _tolerance(kernel: Kernel, inputs: dict[str, Any]) -> Tolerance:
    if not kernel.reorders_float_reduction:
        return Tolerance()
    length, scale = 1, 0.0
    tensors: list[torch.Tensor] = []
    for value in inputs.values():
        tensors += [v for v in (value if isinstance(value, list) else [value]) if isinstance(v, torch.Tensor)]
    for t in tensors:
        length = max(length, t.numel())
        if t.is_floating_point():
            finite = t.detach().double()[torch.isfinite(t.detach().double())]
            scale = max(scale, float(finite.abs().sum()) if finite.numel() else 0.0)
    return Tolerance(True, length, scale)


def compare_runs(kernel: Kernel, old: Any, new: Any, inputs: dict[str, Any]) -> Difference | None:
    tol = _tolerance(kernel, inputs)
    for name in kernel.outputs:
        diff = compare(old.outputs[name], new.outputs[name], name, tol)
        if diff:
            return diff
    for spec in kernel.inputs:
        if spec.kind is Kind.OPAQUE or spec.name in kernel.outputs:
            continue
        diff = compare(old.inputs_after[spec.name], new.inputs_after[spec.name], f"input {spec.name} after the run", tol)
        if diff:
            return diff
    return None


def _counterexample(inputs: dict[str, Any], diff: Difference, seed_value: int) -> Counterexample:
    rendered = []
    for name, value in inputs.items():
        text = render_value(value)
        if isinstance(value, torch.Tensor):
            text += f"  # shape {list(value.shape)}"
        rendered.append((name, text))
    return Counterexample(tuple(rendered), diff.where, diff.old, diff.new, diff.detail, seed_value)


def admit_signatures(
    kernel: Kernel, old_code: Any, base: dict[str, Any], rng: random.Random, device: str
) -> list[Signature]:
    specs = list(kernel.inputs)
    admitted = []
    for signature in candidate_signatures(specs, SIGNATURE_LIMIT, rng):
        for _ in range(ADMISSION_TRIES):
            inputs = _to_device(sample_nonempty(specs, signature, rng), device)
            if run_snippet(old_code, kernel, base, inputs).error is None:
                admitted.append(signature)
                break
    return admitted


def check_kernel(kernel: Kernel, config: EngineSettings) -> Verdict:
    """Try to refute ``kernel``; a verdict, never an exception (but for bugs in the checker)."""
    started = time.perf_counter()
    try:
        old_code = compile(kernel.old, "<old>", "exec")
        new_code = compile(kernel.new, "<new>", "exec")
    except SyntaxError as exc:
        return Verdict(Outcome.UNVERIFIED, f"kernel does not compile: {exc}")
    base = base_namespace(kernel)
    rng = random.Random(config.seed)
    specs = list(kernel.inputs)
    spec_by_name = {s.name: s for s in specs}
    admitted = admit_signatures(kernel, old_code, base, rng, config.device)
    if not admitted:
        return Verdict(
            Outcome.UNVERIFIED,
            "found no input on which the old code runs (it may depend on names the checker cannot build)",
            devices=(config.device,),
        )
    stats = _Stats()

    @settings(
        max_examples=config.examples,
        deadline=None,
        database=None,
        derandomize=False,
        suppress_health_check=list(HealthCheck),
        phases=[Phase.explicit, Phase.generate, Phase.shrink],
        report_multiple_bugs=False,
    )
    @seed(config.seed)
    @given(st.data())
    def explore(data: st.DataObject) -> None:
        signature = data.draw(st.sampled_from(admitted), label="signature")
        inputs = _to_device(data.draw(inputs_strategy(specs, signature), label="inputs"), config.device)
        old = run_snippet(old_code, kernel, base, inputs)
        if old.error is not None:
            stats.old_raised += 1
            return
        stats.signatures_seen.add(describe(signature, spec_by_name))
        new = run_snippet(new_code, kernel, base, inputs)
        if new.error is not None:
            diff = Difference(
                "the new code's run",
                "ran without error",
                f"raised {type(new.error).__name__}: {str(new.error)[:200]}",
                "the old code accepts this input, the new code raises",
            )
            raise _Refuted(_counterexample(inputs, diff, config.seed))
        diff = compare_runs(kernel, old, new, inputs)
        if diff is not None:
            raise _Refuted(_counterexample(inputs, diff, config.seed))
        stats.compared += 1

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            explore()
        except _Refuted as refuted:
            return Verdict(
                Outcome.REJECTED,
                f"counterexample: {refuted.counterexample.where} differs",
                refuted.counterexample,
                stats.compared,
                (config.device,),
                tuple(sorted(stats.signatures_seen)),
            )
        except HypothesisException as exc:  # pragma: no cover - defensive
            return Verdict(Outcome.UNVERIFIED, f"checker error: {exc}", devices=(config.device,))

    notes = []
    if kernel.reorders_float_reduction:
        notes.append("float tolerance widened by the reduction length: the new code sums in another order")
    if stats.compared < MIN_EXAMPLES:
        return Verdict(
            Outcome.UNVERIFIED,
            f"only {stats.compared} examples compared (the old code raised on {stats.old_raised}): not enough evidence",
            examples=stats.compared,
            devices=(config.device,),
            signatures=tuple(sorted(stats.signatures_seen)),
        )
    elapsed = time.perf_counter() - started
    return Verdict(
        Outcome.VERIFIED,
        f"no counterexample in {stats.compared} examples ({elapsed:.1f}s)",
        None,
        stats.compared,
        (config.device,),
        tuple(sorted(stats.signatures_seen)),
        tuple(notes),
    )


__all__ = ["EngineSettings", "check_kernel", "compare_runs", "short", "InputSpec"]
