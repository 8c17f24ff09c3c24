"""Why torchfix leaves segment ids alone: one `full_like` per part then `cat`, vs the parts'
`cat` and one `repeat_interleave`.

    python benchmarks/bench_segment_ids.py [--parts 1 2 4 8 16 32 256 4096] [--device cpu|cuda]

The batch index of DETR-style matched predictions, `torch.cat([torch.full_like(src, i) for i,
(src, _) in enumerate(indices)])`, looks like a loop to vectorize, and the faithful batched form
(any rank, the dtype `cat` promotes to, the parts' device) is the second function below. It was
built as a rule and withdrawn: on a CPU it is slower below about 30 parts -- DETR's lists have
one part per image, 1 to 16 -- and on a GPU its `torch.tensor(lengths, device=...)` is a copy
from pageable host memory, which waits for every kernel queued before it, where the fills are
launched without waiting. This script keeps the measurement that decided it: both forms run on
the same list, interleaved (A B A B ...), and old / new of the medians is printed per list length,
measured side by side in one run.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch


def old_form(indices: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    batch_idx = torch.cat([torch.full_like(src, i) for i, (src, _) in enumerate(indices)])
    return batch_idx


def new_form(indices: list[tuple[torch.Tensor, torch.Tensor]]) -> torch.Tensor:
    batch_idx_parts = [src for src, _ in indices]
    batch_idx = torch.cat(batch_idx_parts)
    batch_idx = torch.arange(len(batch_idx_parts), device=batch_idx.device).repeat_interleave(
        torch.tensor([len(part) for part in batch_idx_parts], device=batch_idx.device), output_size=len(batch_idx),
    ).view(-1, *[1] * (batch_idx.dim() - 1)).expand_as(batch_idx).to(batch_idx.dtype, copy=True)
    return batch_idx


def _indices(parts: int, device: str, generator: torch.Generator) -> list[tuple[torch.Tensor, torch.Tensor]]:
    sizes = torch.randint(0, 20, (parts,), generator=generator).tolist()  # matches per image (DETR: up to ~20)
    return [(torch.randperm(100, generator=generator)[:k].to(device), torch.arange(k).to(device)) for k in sizes]


def _time(fn, indices, sync) -> float:  # noqa: ANN001
    sync()
    start = time.perf_counter()
    fn(indices)
    sync()
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 4, 8, 16, 32, 256, 4096])
    parser.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    parser.add_argument("--budget", type=float, default=1.0, help="seconds per list length")
    args = parser.parse_args()
    sync = torch.cuda.synchronize if args.device == "cuda" else (lambda: None)
    generator = torch.Generator().manual_seed(0)
    print(f"device: {args.device}   torch {torch.__version__}")
    print(f"{'parts':>6} {'old us':>10} {'new us':>10} {'old/new':>8}")
    for parts in args.parts:
        indices = _indices(parts, args.device, generator)
        assert torch.equal(old_form(indices), new_form(indices))
        old_form(indices), new_form(indices)  # warm-up
        olds, news = [], []
        started = time.perf_counter()
        while len(olds) < 5 or (time.perf_counter() - started < args.budget and len(olds) < 2000):
            olds.append(_time(old_form, indices, sync))
            news.append(_time(new_form, indices, sync))
        old, new = statistics.median(olds), statistics.median(news)
        print(f"{parts:>6} {old * 1e6:>10.1f} {new * 1e6:>10.1f} {old / new:>7.2f}x")


if __name__ == "__main__":
    main()
