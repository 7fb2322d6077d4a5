"""Common random numbers: a step's raw numbers drawn once per replicate, and pairs built from them for several configs.

sim.data.make_pairs draws replicate r's raw numbers from its own stream (seed, r, purpose, extra) in a fixed plan
(data.draw_plan), then builds the pairs (data.pairs_from_draws). Configs that differ only in how those numbers
become pairs (their eps_j, their pair builder) read the very same numbers, so a batch that trains several of them can
draw once and build each: the pairs make_pairs would give each config alone, for the price of one draw.
"""
from __future__ import annotations

from ..sim import data as D


def common_plan(cfgs: list, n: int) -> list:
    """The longest of the configs' draw plans for n pairs; ValueError unless every plan is a prefix of it (they then
    read the same numbers: RandomMask's uniforms, drawn last, are the only draws a plan may add)."""
    plans = [D.draw_plan(c, n) for c in cfgs]
    plan = max(plans, key=len)
    if any(p != plan[:len(p)] for p in plans):
        raise ValueError("these configs draw different random numbers: they cannot share one draw")
    return plan


def raw(cfg, plan: list, replicates: list, extra: int, where="cpu", purpose: int = D.STREAM_TRAIN) -> list:
    """The raw numbers of `plan` for every replicate, stacked (len(replicates), ...), drawn on `where` exactly as
    data.make_pairs draws them (data.raw_draws: each replicate's own stream on the CPU, a batched Philox draw keyed
    to each replicate on a GPU)."""
    return D.raw_draws(cfg.seed, plan, list(replicates), purpose, extra, where)
