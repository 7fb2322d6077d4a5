"""A time estimate before compute: a config's training work (its `workload()`: every training its notebook runs, with
its steps) counted in FLOPs by step_flops, at the loop rate that benchmarks/loop_rates.py measured on a device
(results/bench/loop_rates.json). One step costs overhead + FLOPs / rate. It estimates the training alone: a notebook's
measurements, census and kernel start come on top (at default on the 2-core host each notebook took 2.4-6.8 times
its estimate). It is a forecast, not a limit: nothing is refused for its time."""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

# Above this many seconds the parameter check says how long the run will take (sim/config.from_namespace).
LONG_RUN_S = 600.0

RATES_FILE = Path("results") / "bench" / "loop_rates.json"    # relative to the repository root

# Set by the book runner for its kernels: it printed every notebook's estimate before starting them, so the
# notebooks' own parameter checks stay quiet (the published pages carry results, not run-time forecasts).
ESTIMATED_ENV = "IMBALANCED_CL_ESTIMATED"


@dataclass(frozen=True)
class Rate:
    """The training loop's measured speed on one kind of device: a fixed cost per step and a FLOP rate."""

    device: str             # "cpu" or "cuda"
    flops_per_s: float      # counted FLOPs (step_flops, token-level BReLU) per second, past the fixed cost
    step_overhead_s: float  # seconds per step that do not grow with the step's size (draws, clock, Python)
    threads: int            # torch threads it was measured with (CPU)
    machine: str            # the CPU model or GPU name it was measured on
    measured: str           # the date, and the benchmark that measured it

    def seconds(self, flops: float, steps: int) -> float:
        """Estimated wall seconds of `steps` steps that count `flops` FLOPs in all."""
        return steps * self.step_overhead_s + flops / self.flops_per_s


@dataclass(frozen=True)
class Estimate:
    """The training work of one config and the time it should take at a measured rate."""

    flops: float
    steps: int
    seconds: float
    rate: Rate

    def line(self) -> str:
        """One line: the time, the work and where the rate comes from."""
        r = self.rate
        where = f"{r.machine}, {r.threads} thread{'s' if r.threads != 1 else ''}" if r.device == "cpu" else r.machine
        return (f"about {duration(self.seconds)} of training ({self.flops / 1e12:.3g} TFLOP in {self.steps:,} steps, "
                f"at the loop rate measured on {where}: {r.flops_per_s / 1e9:.3g} GFLOP/s + "
                f"{1e3 * r.step_overhead_s:.2g} ms a step)")


def step_flops(cfg, R: int, linear: bool) -> float:
    """Floating-point operations of one training step (forward X and Y, backward, logits)."""
    tokens = cfg.n_pairs * (1 if linear else cfg.L)
    matmuls = 3 * 2 * R * cfg.m * cfg.d1 * tokens
    return matmuls + 2 * 2 * R * cfg.n_pairs ** 2 * cfg.m


def duration(s: float) -> str:
    """Seconds as '40 s', '12 min', '3.2 h', '34 days' or '21 years'."""
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    if s < 72 * 3600:
        return f"{s / 3600:.1f} h"
    if s < 2 * 365 * 86400:
        return f"{s / 86400:,.0f} days"
    return f"{s / (365 * 86400):,.0f} years"


def rates_path() -> Path | None:
    """The rates file of this checkout, or None where there is no checkout (an installed package)."""
    from ..paths import repo_root
    try:
        return repo_root() / RATES_FILE
    except FileNotFoundError:
        return None


def load_rates(path: Path | None = None) -> dict[str, Rate]:
    """The measured rates by device ("cpu", "cuda"); {} when there is no rates file or it cannot be read."""
    path = path or rates_path()
    try:
        raw = json.loads(Path(path).read_text())
        return {dev: Rate(device=dev, **fields) for dev, fields in raw["rates"].items()}
    except (TypeError, OSError, ValueError, KeyError):
        return {}


def estimate(cfg, rates: dict[str, Rate] | None = None) -> Estimate | None:
    """The training work of `cfg` (its workload()) and its time at the measured rate of its device; None when the
    config declares no workload or no rate was measured for that device."""
    work = cfg.workload() if hasattr(cfg, "workload") else None
    if not work:
        return None
    rate = (load_rates() if rates is None else rates).get(cfg.torch_device.type)
    if rate is None:
        return None
    flops = sum(steps * step_flops(c, c.R, linear=False) for c, steps in work)
    steps = sum(steps for _, steps in work)
    return Estimate(flops, steps, rate.seconds(flops, steps), rate)
