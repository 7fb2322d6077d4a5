"""The cost of the paper profile, measured at the paper's sizes: each notebook's training loop, in one run.

For each simulation notebook 01-05 it times train() itself (pairs drawn, bias, stage clock, history: the whole loop)
at the size of that notebook's largest paper-profile training, on the GPU where there is one, and prints the loop's
FLOP rate against the step's own matmul ceiling (its five products replayed alone at their shapes, same device, same
run), then the paper profile's projected time: counted FLOPs (runtime.step_flops, token-level BReLU throughout: an
upper bound) over that notebook's loop rate. Without a GPU it measures the CPU and says that the GPU figure is a
projection, and from what.
Issue 48's sizes, 04 and 01, go first, so a run cut by its time limit has them; on a GPU where the fused draw runs
(sim/philox_fused.py), --compare-draws also times their loop with the per-replicate draws, in the same run.
Run: .venv/bin/python benchmarks/paper_projection.py [--quick] [--device cpu|cuda] [--json FILE] [--only NB ...]
     [--compare-draws]
"""
from __future__ import annotations

import argparse
import json
import time

import torch

from imbalanced_cl.book.build.profiles import params
from imbalanced_cl.claims.appendix import AppendixConfig
from imbalanced_cl.claims.lucky import LuckyConfig
from imbalanced_cl.claims.pruning import PruningConfig
from imbalanced_cl.claims.scaling import ScalingConfig
from imbalanced_cl.claims.stage1 import Stage1Config
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.runtime import step_flops
from imbalanced_cl.sim.train import train

H100_FP32 = 67e12    # H100 SXM, FP32 non-tensor (nominal)


def trainings(nb: str, cfg) -> list[tuple[SimConfig, int]]:
    """(config, steps) of every training a notebook's protocol runs: what its config declares (workload())."""
    return cfg.workload()


CONFIGS = {"04_pruning_gains": PruningConfig, "01_stage1_growth": Stage1Config, "02_lucky_neurons": LuckyConfig,
           "03_Ni_scaling": ScalingConfig, "05_appendix_figures": AppendixConfig}
COMPARED = ("04_pruning_gains", "01_stage1_growth")     # issue 48's sizes: the loop against its ceiling, both draws


def counted_flops(nb: str, profile: str) -> float:
    """Training FLOPs of one notebook at a profile (token-level BReLU steps throughout: an upper bound)."""
    cfg = CONFIGS[nb](**{k: tuple(v) if isinstance(v, list) else v for k, v in params(profile, nb).items()})
    return sum(steps * step_flops(c, c.R, linear=False) for c, steps in trainings(nb, cfg))


def ceiling(cfg: SimConfig, device: str, reps: int = 3) -> float:
    """FLOP/s of the step's own five matrix products replayed alone at their shapes on `device` (token-level BReLU):
    the rate a loop that did nothing but its products would reach, the step's matmul ceiling."""
    R, n, L, d1, m = cfg.R, cfg.n_pairs, cfg.L, cfg.d1, cfg.m
    U, Wt = torch.randn(R, n * L, d1, device=device), torch.randn(R, d1, m, device=device)
    F, E = torch.randn(R, n, m, device=device), torch.randn(R, n, n, device=device)
    A = torch.randn(R, m, n * L, device=device)
    products = [lambda: torch.bmm(U, Wt), lambda: torch.bmm(U, Wt),             # <w_i, u^(r)> of X and of Y
                lambda: torch.bmm(F, F.transpose(1, 2)), lambda: torch.bmm(E, F),  # logits, softmax @ f(Y)
                lambda: torch.bmm(A, U)]                                          # the chain rule to W (eq. 21)
    for p in products:
        p()
    t = _timed(lambda: [p() for _ in range(reps) for p in products], device)
    return reps * step_flops(cfg, R, linear=False) / t


def _timed(fn, device: str) -> float:
    """Wall seconds of fn() on `device` (waiting for a GPU to finish)."""
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    fn()
    if device == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t


def loop_rate(cfg: SimConfig, device: str, steps: int) -> float:
    """Achieved FLOP/s of train() itself at `cfg` on `device`, pairs drawn as configured, past T1 from the first step
    (token-level BReLU, the dearer path): draws, bias, clock and history included, start-up excluded."""
    run_cfg = cfg.replace(t1_max=1, progress=False, device=device, record_every=10)
    train(run_cfg.replace(steps=2))                       # warm-up: allocator, kernels, dictionaries
    short = _timed(lambda: train(run_cfg.replace(steps=2)), device)
    long = _timed(lambda: train(run_cfg.replace(steps=2 + steps)), device)
    return steps * step_flops(cfg, cfg.R, linear=False) / max(long - short, 1e-9)


def per_replicate_rate(cfg: SimConfig, device: str, steps: int) -> float:
    """loop_rate with the GPU's per-replicate torch.Generator draws (the path without Triton), the fused draw held
    off."""
    from imbalanced_cl.sim import data
    held, data.BATCHED_DRAWS = data.BATCHED_DRAWS, ()
    try:
        return loop_rate(cfg, device, steps)
    finally:
        data.BATCHED_DRAWS = held


def largest(nb: str, cfg) -> SimConfig:
    """The training of a notebook's protocol that holds most of its counted FLOPs: the size its rate is taken at."""
    return max(trainings(nb, cfg), key=lambda cs: cs[1] * step_flops(cs[0], cs[0].R, linear=False))[0]


def hms(s: float) -> str:
    """Seconds as h:mm:ss."""
    s = int(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def main() -> None:
    """Measure each notebook's loop at its paper size, against the step's ceiling, and project the paper profile."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer timed steps")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", choices=("cpu", "cuda"))
    ap.add_argument("--json", help="write the measurements to this file")
    ap.add_argument("--only", nargs="+", choices=list(CONFIGS), metavar="NB", help="these notebooks only")
    ap.add_argument("--compare-draws", action="store_true",
                    help=f"also time {' and '.join(COMPARED)}'s loop with per-replicate draws")
    args = ap.parse_args()
    dev = args.device
    steps = 2 if args.quick else (10 if dev == "cuda" else 4)
    name = torch.cuda.get_device_name(0) if dev == "cuda" else "this CPU"
    print(f"device {dev} ({name}); each notebook's loop timed at its paper size over {steps} steps "
          f"(difference of a {2 + steps}-step and a 2-step run)")
    print(f"{'notebook':20s} {'size (R, K, d1, m)':>22s} {'loop TFLOP/s':>12s} {'ceiling':>8s} {'loop/ceil':>9s} "
          f"{'paper TFLOP':>11s} {'projected':>9s}")
    out, total = {}, 0.0
    for nb in [nb for nb in CONFIGS if not args.only or nb in args.only]:
        cfg = CONFIGS[nb](**{k: tuple(v) if isinstance(v, list) else v for k, v in params("paper", nb).items()})
        size = largest(nb, cfg)
        rate, ceil = loop_rate(size, dev, steps), ceiling(size, dev)
        flops = counted_flops(nb, "paper")
        total += flops / rate
        out[nb] = {"R": size.R, "K": size.n_pairs, "d1": size.d1, "m": size.m, "loop_flops": rate,
                   "ceiling_flops": ceil, "paper_flops": flops, "projected_s": flops / rate}
        print(f"{nb:20s} {str((size.R, size.n_pairs, size.d1, size.m)):>22s} {rate / 1e12:12.3f} "
              f"{ceil / 1e12:8.3f} {rate / ceil:9.0%} {flops / 1e12:11.1f} {hms(flops / rate):>9s}", flush=True)
        if args.compare_draws and nb in COMPARED:
            slow = per_replicate_rate(size, dev, steps)
            out[nb]["loop_flops_per_replicate_draws"] = slow
            print(f"{'  per-replicate draws':20s} {'':>22s} {slow / 1e12:12.3f} {'':>8s} {slow / ceil:9.0%}   "
                  f"(the configured draws are {rate / slow:.2f}x faster)", flush=True)
        if args.json:      # after every notebook: a run cut by a time limit keeps what it measured
            with open(args.json, "w") as f:
                json.dump({"device": dev, "name": name, "steps": steps, "notebooks": out, "total_s": total}, f,
                          indent=1)
    word = "measured" if dev == "cuda" else "measured on this CPU"
    print(f"notebooks 01-05 at the paper profile on {name}: {hms(total)} ({word}, counted FLOPs / each notebook's "
          f"loop rate; target on one H100/H200 <= 0:30:00)")
    if dev != "cuda":
        eff = sum(v["loop_flops"] / v["ceiling_flops"] for v in out.values()) / len(out)
        gpu = sum(v["paper_flops"] for v in out.values()) / (eff * H100_FP32)
        print(f"no GPU here, so only a projection: {hms(gpu)} on one H100 (counted FLOPs over its FP32 nominal rate "
              f"{H100_FP32 / 1e12:.0f} TFLOP/s times this CPU's mean loop/ceiling {eff:.0%}); run this on a GPU to "
              f"measure it")


if __name__ == "__main__":
    main()
