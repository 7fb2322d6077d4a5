"""benchmarks/notebook_costs.py and benchmarks/draw_cost.py: the training clock, the costs outside training, and the
kernel and byte counts on the meta device, each against a hand-made case."""
from __future__ import annotations

import collections
import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks import draw_cost as DC
from benchmarks import notebook_costs as NC
from imbalanced_cl.sim import train as TR
from imbalanced_cl.sim.config import SimConfig


def test_the_training_clock_times_trains_loop_once_and_puts_it_back():
    """Two trainings (a resume inside nothing else) are both counted, the clock is at most the wall time around them,
    and _train_chunks is the module's own again afterwards."""
    import time
    real = TR._train_chunks
    cfg = SimConfig(d=4, d1=12, m=4, L=2, n_pairs=16, R=2, steps=5, progress=False)
    t = time.perf_counter()
    with NC.training_clock() as clock:
        TR.train(cfg)
        TR.train(cfg.replace(steps=8), resume=TR.train(cfg))
    wall = time.perf_counter() - t
    assert 0 < clock["s"] <= wall and TR._train_chunks is real


def test_the_top_costs_outside_training_rank_the_kernel_beside_the_sampled_places():
    """End to end 10 s, in-process 6 s of 100 samples: the kernel costs 4 s; figures rendered under matplotlib (40
    samples) and under PIL (10) merge into 3 s; a function with 8 samples costs 0.48 s, a cell with 5 samples 0.3 s:
    the top three are the kernel, the figures and the function, largest first."""
    res = {"wall": 6.0, "counts": collections.Counter({"training step": 37, "other": 63}),
           "outside": collections.Counter({"benchmarks.book_profile:flush_figures > matplotlib": 40,
                                           "benchmarks.book_profile:flush_figures > PIL": 10,
                                           "claims.census.exact:_other_squares > torch": 8, "__main__:<cell 3>": 5})}
    top = NC.top_costs(10.0, res)
    assert [w for w, _ in top] == [NC.KERNEL, NC.FIGURES, "claims.census.exact:_other_squares"]
    assert [round(s, 6) for _, s in top] == [4.0, 3.0, 0.48]
    assert NC.label("__main__:<cell 3>") == "cell 3"


def test_the_traffic_counter_counts_kernels_and_bytes_on_meta():
    """On meta: a + b of two (1000,) float32 tensors is one kernel moving 3 x 4000 bytes; a view and an allocation
    are no kernels; an int64 multiply of a (5, 1) by a (1, 7) reads 40 + 56 bytes and writes 280."""
    a, b = torch.empty(1000, device="meta"), torch.empty(1000, device="meta")
    with DC.Traffic() as t:
        (a + b).view(10, 100)
        torch.empty(50, device="meta")
    assert (t.kernels, t.bytes) == (1, 12000)
    x, y = torch.empty(5, 1, dtype=torch.int64, device="meta"), torch.empty(1, 7, dtype=torch.int64, device="meta")
    with DC.Traffic() as t:
        x * y
    assert (t.kernels, t.bytes) == (1, 40 + 56 + 280)
