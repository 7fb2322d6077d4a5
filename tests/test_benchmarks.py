"""benchmarks/train_speed.py's matmul ceiling: the step's products, read off the profiler, are the FLOPs that
runtime.step_flops counts by formula (which benchmarks/paper_projection.py divides by a rate)."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import train_speed as TS
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.runtime import step_flops


def test_a_steps_products_are_the_flops_that_step_flops_counts():
    R, K, L, d1, m = 2, 16, 2, 24, 5
    cfg = SimConfig(d=6, d1=d1, m=m, L=L, n_pairs=K, R=R, steps=4, t1_max=1, progress=False, record_every=10 ** 6,
                    sampling="fixed")
    shapes = TS.step_matmuls(cfg)
    assert shapes[(R, K * L, d1, m)] == 2                      # <w_i, u^(r)> for every token of X and of Y
    assert shapes[(R, K, m, K)] >= 1                           # the K x K logits
    flops = sum(2 * b * n * k * c * count for (b, n, k, c), count in shapes.items())
    assert flops == step_flops(cfg, R, linear=False)
    seconds, replayed = TS.matmul_ceiling(shapes, repeats=1)
    assert replayed == flops and seconds > 0
