"""Mutation suite: does the checker refute wrong rewrites and accept correct ones, and how fast?

    python benchmarks/mutation_suite.py            # every case (benchmarks/mutants.py)
    python benchmarks/mutation_suite.py --quick    # one wrong + one correct case per template
    python benchmarks/mutation_suite.py --jobs 2 --json out.json

Prints the refutation rate (wrong rewrites rejected), the false-alarm rate (correct rewrites not
verified), and the median / p95 wall time per check (one boxed check, worker already started, no
verdict cache). Exit status 1 when a goal is missed (refutation < 99%, false alarms > 1%).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from mutants import Case, build_cases, quick_cases  # noqa: E402

from torchfix.equivalence.checker import Checker, CheckSettings  # noqa: E402
from torchfix.equivalence.kernel import Outcome  # noqa: E402


def run(cases: list[Case], settings: CheckSettings, jobs: int, progress: bool) -> list[dict]:
    results: list[dict | None] = [None] * len(cases)
    lock = threading.Lock()
    next_index = [0]

    def work() -> None:
        with Checker(settings, cache_dir=None) as checker:
            checker.check(cases[0].kernel)  # start the worker outside the timings
            while True:
                with lock:
                    i = next_index[0]
                    next_index[0] += 1
                if i >= len(cases):
                    return
                case = cases[i]
                checker._cache.clear()
                started = time.perf_counter()
                verdict = checker.check(case.kernel)
                elapsed = time.perf_counter() - started
                ok = verdict.outcome is (Outcome.REJECTED if case.expect == "refute" else Outcome.VERIFIED)
                results[i] = {
                    "id": case.id, "category": case.category, "expect": case.expect,
                    "outcome": verdict.outcome.value, "ok": ok, "seconds": round(elapsed, 3),
                    "reason": verdict.reason, "examples": verdict.examples,
                    "detail": verdict.counterexample.render() if verdict.counterexample and not ok else "",
                }
                if progress:
                    mark = "." if ok else "X"
                    print(mark, end="" if (i + 1) % 80 else "\n", file=sys.stderr, flush=True)

    threads = [threading.Thread(target=work) for _ in range(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if progress:
        print(file=sys.stderr)
    return [r for r in results if r is not None]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


def summarize(results: list[dict]) -> dict:
    wrong = [r for r in results if r["expect"] == "refute"]
    right = [r for r in results if r["expect"] == "verify"]
    times = [r["seconds"] for r in results]
    return {
        "wrong": len(wrong),
        "refuted": sum(r["ok"] for r in wrong),
        "correct": len(right),
        "false_alarms": sum(not r["ok"] for r in right),
        "refutation_rate": sum(r["ok"] for r in wrong) / max(len(wrong), 1),
        "false_alarm_rate": sum(not r["ok"] for r in right) / max(len(right), 1),
        "median_s": statistics.median(times) if times else float("nan"),
        "p95_s": percentile(times, 0.95),
        "max_s": max(times) if times else float("nan"),
        "total_s": sum(times),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one wrong and one correct case per template")
    parser.add_argument("--examples", type=int, default=CheckSettings().examples)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, default=1, help="parallel workers (timings then share the CPU)")
    parser.add_argument("--filter", default="", help="only cases whose id contains this")
    parser.add_argument("--json", help="write every result here")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    cases = build_cases()
    if args.quick:
        cases = quick_cases(cases)
    if args.filter:
        cases = [c for c in cases if args.filter in c.id]
    settings = CheckSettings(examples=args.examples, seed=args.seed, timeout=args.timeout)
    started = time.perf_counter()
    results = run(cases, settings, max(1, args.jobs), not args.no_progress)
    wall = time.perf_counter() - started
    s = summarize(results)

    categories = Counter(r["category"] for r in results if r["expect"] == "refute")
    print(f"cases: {len(results)} ({s['wrong']} wrong rewrites in {len(categories)} categories, {s['correct']} correct alternatives)")
    print(f"settings: examples={args.examples} seed={args.seed} jobs={args.jobs} devices={settings.devices}")
    print(f"refutation rate:  {s['refuted']}/{s['wrong']} = {100 * s['refutation_rate']:.1f}%")
    print(f"false-alarm rate: {s['false_alarms']}/{s['correct']} = {100 * s['false_alarm_rate']:.1f}%")
    print(f"time per check:   median {s['median_s']:.2f}s, p95 {s['p95_s']:.2f}s, max {s['max_s']:.2f}s (wall {wall:.0f}s)")
    for label, expect in (("wrong", "refute"), ("correct", "verify")):
        ts = [r["seconds"] for r in results if r["expect"] == expect]
        if ts:
            print(f"  {label:7s} rewrites: median {statistics.median(ts):.2f}s, p95 {percentile(ts, 0.95):.2f}s")
    for r in results:
        if not r["ok"]:
            print(f"\nMISS {r['id']} [{r['category']}] expected {r['expect']}, got {r['outcome']}: {r['reason']}")
            if r["detail"]:
                print(r["detail"])
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": s, "results": results}, indent=1))
    return 0 if s["refutation_rate"] >= 0.99 and s["false_alarm_rate"] <= 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
