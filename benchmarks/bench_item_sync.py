"""TFV004 form 2: `.item()` once per step vs a device accumulator converted once.

    python benchmarks/bench_item_sync.py [--steps 256] [--device cpu|cuda]

Each "step" computes a small loss the way a training step ends (a mean over a batch); the old loop
syncs with `.item()` every step, the new one adds `loss.detach().double()` on the device. On a
GPU the sync is the cost (the host waits for every queued kernel); on the CPU there is no device to
wait for, and the two are within a few microseconds of each other -- this prints both, measured
side by side, so the trade-off is a number, not a claim.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def old_loop(batches: list[torch.Tensor], w: torch.Tensor) -> float:
    running_loss = 0.0
    for xb in batches:
        loss = ((xb @ w) ** 2).mean()
        running_loss += loss.item()
    return running_loss


def new_loop(batches: list[torch.Tensor], w: torch.Tensor) -> float:
    running_loss = 0.0
    for xb in batches:
        loss = ((xb @ w) ** 2).mean()
        running_loss += loss.detach().double()
    running_loss = float(running_loss)
    return running_loss


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=256)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--features", type=int, default=256)
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args()
    torch.set_num_threads(1)
    gen = torch.Generator().manual_seed(0)
    batches = [torch.randn(args.batch, args.features, generator=gen).to(args.device) for _ in range(args.steps)]
    w = torch.randn(args.features, 16, generator=gen).to(args.device)
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    assert abs(old_loop(batches, w) - new_loop(batches, w)) <= 1e-9 * abs(old_loop(batches, w))
    times = {"old": [], "new": []}
    for _ in range(args.repeats):  # interleaved
        for name, fn in (("old", old_loop), ("new", new_loop)):
            sync()
            start = time.perf_counter()
            fn(batches, w)
            sync()
            times[name].append(time.perf_counter() - start)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    print(f"device={args.device} steps={args.steps} batch={args.batch}x{args.features}")
    print(f"  .item() per step:    {old * 1e3:8.2f} ms")
    print(f"  device accumulator:  {new * 1e3:8.2f} ms")
    print(f"  speedup:             {old / new:8.2f}x")


if __name__ == "__main__":
    main()
