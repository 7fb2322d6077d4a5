"""What keying a GPU's draws to the replicate costs: one step's raw numbers at notebooks 04's and 01's paper sizes,
drawn four ways on one device, in one run (issue 48, items 1 and 2).

- per replicate: each replicate's own torch.Generator stream, a fill per replicate and tensor (the CPU's path);
- batched Philox: the whole chunk in one vectorised Philox4x32-10 call per tensor (sim/data.batched_draws), written as
  torch operations (philox.py): a replicate's numbers do not depend on its chunk;
- fused Philox: the same numbers in one Triton kernel per tensor (sim/philox_fused.py; a GPU's path where Triton is
  installed, issue 48 item 2); "-" where Triton is not;
- one stream: the whole chunk filled from one torch.Generator (a GPU's path before issue 48, whose numbers depended
  on the chunk): torch's own kernel, the floor a draw of these numbers can reach on this device.
Ratios are taken within this run; a loaded machine moves the times, less the ratios. Then, on the `meta` device (shapes
only, nothing computed), it counts the kernels the batched draw launches and the bytes they move at full size: an
unfused draw on a GPU is bound by those bytes, where one stream or a fused kernel moves only its output.
Run: .venv/bin/python benchmarks/draw_cost.py [--quick] [--device cpu|cuda]
"""
from __future__ import annotations

import argparse
import time

import torch

from torch.utils._python_dispatch import TorchDispatchMode

from benchmarks.paper_projection import CONFIGS
from imbalanced_cl.book.build.profiles import params
from imbalanced_cl.sim import data as D
from imbalanced_cl.sim import philox_fused as PF
from imbalanced_cl.sim.config import SimConfig

NOTEBOOKS = ("04_pruning_gains", "01_stage1_growth")
HBM = 3.35e12          # bytes/s, H100 SXM's HBM3 (nominal): what an unfused draw's traffic is divided by


def paper_size(nb: str) -> SimConfig:
    """A notebook's main training at the paper profile (its own R, K, L, d, d1, m: issue 48's sizes)."""
    cfg = CONFIGS[nb](**{k: tuple(v) if isinstance(v, list) else v for k, v in params("paper", nb).items()})
    return SimConfig(R=cfg.R, n_pairs=cfg.n_pairs, L=cfg.L, d=cfg.d, d1=cfg.d1, m=cfg.m)


class Traffic(TorchDispatchMode):
    """Counts the kernels (every op but views and allocations) run under it, and the bytes they read and write."""

    def __init__(self):
        super().__init__()
        self.kernels, self.bytes = 0, 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if func.is_view or func.__name__.startswith(("empty", "arange")):
            return out        # a view moves nothing; an allocation is no kernel; arange writes one row, left out
        flat = [*torch.utils._pytree.tree_leaves((args, kwargs)), *torch.utils._pytree.tree_leaves(out)]
        self.kernels += 1
        self.bytes += sum(t.numel() * t.element_size() for t in flat if isinstance(t, torch.Tensor))
        return out


def meta_traffic(cfg: SimConfig) -> tuple[int, int, int]:
    """(kernels, bytes moved, output bytes) of one step's batched draw at `cfg`, counted on the meta device."""
    plan = D.draw_plan(cfg, cfg.n_pairs)
    with Traffic() as t:
        out = D.batched_draws(cfg.seed, plan, list(range(cfg.R)), D.STREAM_TRAIN, 1, "meta")
    return t.kernels, t.bytes, sum(o.numel() * o.element_size() for o in out)


def one_stream(seed: int, plan: list, replicates: list, where) -> list[torch.Tensor]:
    """The chunk's numbers filled from a single torch.Generator: one kernel per tensor, torch's own generator."""
    gen = torch.Generator(device=where).manual_seed(seed)
    return [D._fill(torch.empty((len(replicates), *shape), device=where), kind, gen) for kind, shape in plan]


def per_replicate(seed: int, plan: list, replicates: list, where) -> list[torch.Tensor]:
    """The chunk's numbers from each replicate's own torch.Generator stream (data.raw_draws's per-replicate path)."""
    out = [torch.empty((len(replicates), *shape), device=where) for _, shape in plan]
    for k, r in enumerate(replicates):
        gen = D.generator(seed, r, D.STREAM_TRAIN, 1, where)
        for buf, (kind, _) in zip(out, plan, strict=True):
            D._fill(buf[k], kind, gen)
    return out


def batched(seed: int, plan: list, replicates: list, where) -> list[torch.Tensor]:
    """The chunk's numbers from one batched Philox call per tensor, as torch operations (the fused kernel held off)."""
    held, PF.DEVICES = PF.DEVICES, ()
    try:
        return D.batched_draws(seed, plan, replicates, D.STREAM_TRAIN, 1, where)
    finally:
        PF.DEVICES = held


def fused(seed: int, plan: list, replicates: list, where) -> list[torch.Tensor]:
    """The chunk's numbers from one fused Triton kernel per tensor (data.batched_draws where philox_fused runs)."""
    return D.batched_draws(seed, plan, replicates, D.STREAM_TRAIN, 1, where)


def timed(fn, device: str, repeats: int) -> float:
    """Least wall seconds of fn() over `repeats` runs on `device` (waiting for a GPU to finish)."""
    best = float("inf")
    for _ in range(repeats):
        if device == "cuda":
            torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        if device == "cuda":
            torch.cuda.synchronize()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> None:
    """Print, per notebook, one step's draw by each way, and the batched draw's cost against the other two."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="2 replicates at the paper's per-replicate sizes")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    args = ap.parse_args()
    dev = args.device
    repeats = 5 if dev == "cuda" else (2 if args.quick else 1)
    print(f"device {dev}, {torch.get_num_threads()} thread(s); one step's raw draws (data.draw_plan at K pairs), "
          f"least of {repeats} run(s) after a warm-up at 2 replicates")
    ways = [per_replicate, batched, one_stream] + ([fused] if PF.available(dev) else [])
    print(f"{'notebook':18s} {'R, K, L, d, d1':>22s} {'numbers':>8s} {'per rep.':>9s} {'batched':>9s} {'1 stream':>9s} "
          f"{'fused':>9s} {'batched/per rep.':>16s} {'fused/per rep.':>14s} {'fused/1 stream':>14s}")
    for nb in NOTEBOOKS:
        cfg = paper_size(nb)
        R = 2 if args.quick else cfg.R
        plan, reps = D.draw_plan(cfg, cfg.n_pairs), list(range(R))
        numbers = sum(R * torch.Size(shape).numel() for _, shape in plan)
        for way in ways:                                      # warm-up: allocator, kernels (the fused one compiles)
            way(cfg.seed, plan, [0, 1], dev)
        t = {way.__name__: timed(lambda: way(cfg.seed, plan, reps, dev), dev, repeats) for way in ways}
        f = t.get("fused", float("nan"))
        size = str((R, cfg.n_pairs, cfg.L, cfg.d, cfg.d1))
        print(f"{nb:18s} {size:>22s} {numbers / 1e6:7.0f}M {t['per_replicate']:8.4f}s {t['batched']:8.4f}s "
              f"{t['one_stream']:8.4f}s {f:8.4f}s {t['batched'] / t['per_replicate']:16.2f} "
              f"{f / t['per_replicate']:14.2f} {f / t['one_stream']:14.2f}", flush=True)
    print(f"\nthe batched draw unfused, counted on the meta device at the paper's R (a GPU's floor: its bytes over "
          f"{HBM / 1e12:.2f} TB/s)")
    print(f"{'notebook':18s} {'kernels':>8s} {'GB moved':>9s} {'GB output':>9s} {'moved/output':>12s} "
          f"{'GPU floor':>9s} {'output only':>11s} {'per rep. kernels':>16s}")
    for nb in NOTEBOOKS:
        cfg = paper_size(nb)
        kernels, moved, output = meta_traffic(cfg)
        print(f"{nb:18s} {kernels:8d} {moved / 1e9:9.1f} {output / 1e9:9.2f} {moved / output:12.0f} "
              f"{moved / HBM * 1e3:7.1f}ms {output / HBM * 1e3:9.2f}ms "
              f"{cfg.R * len(D.draw_plan(cfg, cfg.n_pairs)):16d}", flush=True)


if __name__ == "__main__":
    main()
