"""The cost of the paper profile: each notebook's counted training FLOPs divided by a measured rate, in one run.

Prints the device, the achieved FLOP rate of the training step against the same machine's matmul rate, and for
each simulation notebook the projected wall time of its `paper` profile on this machine and, from H100 nominal
rates, on one H100 (a projection: the step's efficiency measured here is assumed there). Where CUDA is present,
it measures the rate there instead. Counted FLOPs are those of train.step_flops (matmuls and logits); data
generation is not counted (on a GPU use data_device = "run", which draws the pairs on the GPU).
Run: .venv/bin/python benchmarks/paper_projection.py [--quick]
"""
from __future__ import annotations

import argparse
import time

import torch

from imbalanced_cl.book.profiles import params
from imbalanced_cl.claims.appendix import AppendixConfig, grid_points
from imbalanced_cl.claims.lucky import LuckyConfig
from imbalanced_cl.claims.pruning import PruningConfig
from imbalanced_cl.claims.scaling import ScalingConfig
from imbalanced_cl.claims.stage1 import Stage1Config
from imbalanced_cl.sim import theory
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import step_flops, train

H100_FP32 = 67e12    # H100 SXM, FP32 non-tensor (nominal)


def trainings(nb: str, cfg) -> list[tuple[SimConfig, int]]:
    """(config, steps) of every training a notebook's protocol runs (read off the notebook's code)."""
    if nb == "01_stage1_growth":
        out = [(cfg.sim(), cfg.steps)]
        for axis, grid in (("d", cfg.d_grid), ("d1", cfg.d1_grid)):
            for v in grid:
                d, d1 = (v, cfg.sweep_d1) if axis == "d" else (cfg.sweep_d, v)
                base = cfg.sim(d=d, d1=d1, R=cfg.sweep_R, bias="none", n_minority=0, eps_profile="two_level")
                t_lin = theory.t1_linear(base, theory.kappa_mc(base, n=2000))
                out.append((base, int(min(max(cfg.horizon * t_lin, 10), 10 ** 5))))
        return out
    if nb == "02_lucky_neurons":
        out = [(cfg.sim(eps_max=em, eps_min=em * cfg.ratio), cfg.steps) for em in cfg.train_eps_max]
        out.append((cfg.sim(m=cfg.lemma_m or cfg.m), cfg.lemma_steps or cfg.steps))
        fig = cfg.sim(m=cfg.fig_m, d=cfg.fig_d, n_minority=cfg.fig_minority)
        return out + [(fig, cfg.fig_steps)] * 2
    if nb == "03_Ni_scaling":
        return [(cfg.sim(d=d, eps_min=r * cfg.eps_max), cfg.steps) for r in cfg.ratios for d in cfg.ds]
    if nb == "04_pruning_gains":
        n_branch = len(cfg.alpha_grid) + 1 + 1          # control, each alpha, the literal backward
        out = [(cfg.vanilla(), cfg.vanilla_steps), (cfg.sim(), cfg.prune_steps * n_branch),
               (cfg.sim(), cfg.vanilla_steps + cfg.prune_steps)]                     # Algorithm 1 from t = 0
        for e in cfg.eps_min_grid:
            if e != cfg.eps_min:
                out += [(cfg.vanilla(eps_min=e), cfg.vanilla_steps), (cfg.sim(eps_min=e), 2 * cfg.prune_steps)]
        return out
    if nb == "05_appendix_figures":
        n = len(grid_points(cfg)) * cfg.repeats * len(cfg.arms)
        return [(cfg.sim(R=n), cfg.steps)]
    raise KeyError(nb)


CONFIGS = {"01_stage1_growth": Stage1Config, "02_lucky_neurons": LuckyConfig, "03_Ni_scaling": ScalingConfig,
           "04_pruning_gains": PruningConfig, "05_appendix_figures": AppendixConfig}


def counted_flops(nb: str, profile: str) -> float:
    """Training FLOPs of one notebook at a profile (token-level BReLU steps throughout: an upper bound)."""
    cfg = CONFIGS[nb](**{k: tuple(v) if isinstance(v, list) else v for k, v in params(profile, nb).items()})
    return sum(steps * step_flops(c, c.R, linear=False) for c, steps in trainings(nb, cfg))


def matmul_rate(device: str, n: int = 2048, reps: int = 5) -> float:
    """Float32 FLOP/s of a large square matmul on `device`, now."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    if device == "cuda":
        torch.cuda.synchronize()
    return 2 * n ** 3 * reps / (time.perf_counter() - t)


def step_rate(device: str, steps: int) -> float:
    """Achieved FLOP/s of the training step at notebook 04's default size, after T1 (token-level BReLU)."""
    cfg = PruningConfig().sim(steps=steps, t1_max=1, sampling="fixed", progress=False, device=device)
    train(cfg.replace(steps=2))
    t = time.perf_counter()
    train(cfg)
    return steps * step_flops(cfg, cfg.R, linear=False) / (time.perf_counter() - t)


def hms(s: float) -> str:
    """Seconds as h:mm:ss."""
    s = int(s)
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def main() -> None:
    """Print rates and the per-notebook paper-profile projection."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer timed steps")
    steps = 10 if ap.parse_args().quick else 40
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    rates = {}
    for dev in devices:
        mm, st = matmul_rate(dev), step_rate(dev, steps)
        rates[dev] = st
        print(f"device {dev}: training step {st / 1e9:.1f} GFLOP/s = {st / mm:.0%} of the same-run matmul rate "
              f"({mm / 1e9:.1f} GFLOP/s; target >= 60% on the CPU)")
    eff = rates["cpu"] / matmul_rate("cpu")
    gpu_rate = rates.get("cuda", eff * H100_FP32)
    gpu_word = "measured" if "cuda" in rates else f"projected: H100 FP32 nominal x the CPU's step efficiency {eff:.0%}"
    gpu_name = "this GPU" if "cuda" in rates else "one H100"   # measured on whichever GPU is here (an H200, say)
    print(f"{'notebook':22s} {'paper TFLOP':>11s} {'CPU (this machine)':>19s} {gpu_name:>10s}  ({gpu_word})")
    total = 0.0
    for nb in CONFIGS:
        f = counted_flops(nb, "paper")
        total += f / gpu_rate
        print(f"{nb:22s} {f / 1e12:11.1f} {hms(f / rates['cpu']):>19s} {hms(f / gpu_rate):>10s}")
    print(f"notebooks 01-05 at the paper profile on {gpu_name}: {hms(total)} ({gpu_word}; target <= 0:30:00)")


if __name__ == "__main__":
    main()
