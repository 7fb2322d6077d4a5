"""Runs as rows of one batch: rows selected or joined, branches trained together on shared pairs, shards of the
replicates trained in worker processes.

Every replicate draws its own data and initialisation from its own streams (sim.data), so once the rows of a batch
are independent (rows_independent: every replicate past T1) a replicate's numbers do not depend on the rows beside
it: a batch can hold several branches of one checkpoint (they then read each step's pairs from one draw), and the
replicates can be cut into shards that train in separate processes and are joined back, with the same numbers as
one batch.
"""
from __future__ import annotations

import torch

from ... import workers as W
from ...sim import data as D
from ...sim.prune import FixedMasker, Masker, oracle_keep
from ...sim.memory import auto_chunk
from ...sim.train import History, Run, join_time, train
from .config import PruningConfig

PAIR_FIELDS = ("UX", "UY", "S", "ZX", "ZY")


def select(run: Run, idx: list[int], cfg=None, history: bool = True) -> Run:
    """Rows `idx` of a batched run as a Run of its own: weights, data, T1 and (with `history`) its snapshots,
    labelled with `cfg` (default: the run's). Rows may repeat: a checkpoint copied once per branch."""
    h = History(steps=list(run.history.steps) if history else [])
    for name in ("coef", "norm2", "bias", "loss", "pos_prob") if history else ():
        setattr(h, name, [v[idx] for v in getattr(run.history, name)])
    p = run.pairs
    pairs = D.Pairs(*(getattr(p, f)[idx] for f in PAIR_FIELDS))
    return Run(cfg or run.cfg, [run.replicates[i] for i in idx], run.M[idx], run.W[idx], run.T1[idx], run.step, h,
               pairs, run.W0[idx])


def rows_of(run: Run, rows: list[int]) -> Run:
    """select(run, rows), or the run itself when `rows` are all of its rows in order (no copy)."""
    return run if rows == list(range(len(run.replicates))) else select(run, rows)


def shared_sampler(cfg: PruningConfig, base: Run):
    """sampler(t, reps) for train with sampling = "fresh": step t's pairs drawn once per distinct replicate and
    repeated for its copies in the batch (the very pairs notebook 04's branches see, drawn once instead of once
    per cell and alpha)."""
    M = base.M.to(cfg.torch_device)
    pos = {r: i for i, r in enumerate(base.replicates)}

    index = {}     # {batch's replicate list: (its distinct replicates, where each row reads)}, made once per batch:
                   # a fresh index tensor copied to a GPU at every step would make the host wait for the device

    def sample(t: int, reps: list) -> D.Pairs:
        key = tuple(reps)
        if key not in index:
            uniq = list(dict.fromkeys(reps))
            index[key] = (uniq, M[[pos[r] for r in uniq]], torch.tensor([uniq.index(r) for r in reps], device=M.device))
        uniq, M_uniq, idx = index[key]
        P = D.make_pairs(cfg, M_uniq, uniq, extra=t + 1)
        return D.Pairs(*(getattr(P, f)[idx] for f in PAIR_FIELDS))
    return sample


# What a branch may change: its mask. A control (prune_alpha = 0) takes none of these from the batch.
MASK_FIELDS = ("prune_alpha", "prune_mask", "prune_schedule")
PRUNE_FIELDS = MASK_FIELDS + ("prune_start", "prune_every", "prune_unit", "prune_backward")


def _batch_config(cfgs: list):
    """The config a batch of branches trains under (the first pruned one's, or the first); ValueError when two
    branches differ in more than their mask (controls: in more than any pruning setting)."""
    pruned = [c for c in cfgs if c.prune_alpha > 0]
    lead = (pruned or cfgs)[0]
    for c in cfgs:
        fields = MASK_FIELDS if c.prune_alpha > 0 else PRUNE_FIELDS
        if c.replace(**{f: getattr(lead, f) for f in fields}) != lead:
            raise ValueError("branches trained in one batch may differ only in their mask (prune_alpha, prune_mask, "
                             f"prune_schedule): {c} against {lead}")
    return lead


def rows_independent(base: Run, cfg) -> bool:
    """Whether a row's numbers cannot depend on the rows beside it in a batch resumed from `base`.

    One setting of train() is shared by a chunk of rows: while no row of the chunk has reached T1 (eq. 34) the step
    takes the linear path (b = 0 for all: the tokens summed before the product), and from the first T1 on, the
    BReLU path for all (b = 0 still for rows before their T1: the same values, summed in another order, so other
    rounding). Rows are independent of their neighbours when that choice cannot differ: no bias (bias = "none",
    bias_coef = 0), or every replicate of the checkpoint past its T1, as at notebook 04's branch point T_a.
    """
    return cfg.bias == "none" or cfg.bias_coef == 0 or bool((base.T1 >= 0).all())


def train_branches(base: Run, cfgs: list, workers: int = 0) -> list[Run]:
    """One run per config, every one resumed from the checkpoint `base` and trained in one batch on the same pairs.

    The configs may differ only in their mask (MASK_FIELDS; a control, prune_alpha = 0, may differ in any pruning
    setting, since it prunes nothing). With sampling = "fresh" step t's pairs are drawn once per replicate
    (shared_sampler) instead of once per branch: the same pairs every branch would draw alone (sub-stream t + 1 of
    its replicate), at a fraction of the cost, since drawing a step's pairs costs more than the step. A control row
    gets a keep-all mask, which multiplies by one: the numbers of an unmasked run. Each run keeps `base`'s history
    before the branch point, as train(..., resume=base) would. With several `workers` (0: workers.plan) the
    replicates train in shards, one per worker process.

    The numbers are those of each branch trained alone from `base` when the rows are independent (rows_independent);
    when they are not (a replicate not yet past T1), each branch is trained alone, as before this batching existed.
    """
    if not rows_independent(base, _batch_config(cfgs)):
        return [train(c, resume=base) for c in cfgs]
    R = len(base.replicates)
    procs = W.plan(workers, R)
    if procs == 1:
        return _branches(base, cfgs)
    # Contiguous shards of the replicates, one per worker process of one thread; each returns its runs of every
    # branch, joined back along the replicate dimension (concat). Same numbers: the rows are independent.
    cuts = [R * k // procs for k in range(procs + 1)]
    shards = [list(range(lo, hi)) for lo, hi in zip(cuts, cuts[1:], strict=False)]
    _, parts = W.pieces(_branches, [(rows_of(base, s), cfgs) for s in shards],
                        [f"branches rows {s[0]}-{s[-1]}" for s in shards], procs, settings="branches")
    return [concat(list(runs)) for runs in zip(*parts, strict=True)]


def _branches(base: Run, cfgs: list) -> list[Run]:
    """train_branches in this process."""
    lead, R, n = _batch_config(cfgs), len(base.replicates), len(cfgs)
    # Row j is replicate j // n in branch j % n, and a training chunk holds whole replicates (all n branches of
    # each), so every chunk draws each of its replicates' pairs once. Memory: at least n rows at a time.
    def rows(f):
        return [f(cfgs[j % n]) for j in range(n * R)]
    masker = Masker(rows(lambda c: c.prune_alpha), rows(lambda c: c.prune_mask == "random"),
                    rows(lambda c: c.prune_schedule == "static"), [base.replicates[j // n] for j in range(n * R)],
                    lead.seed, lead.prune_start, lead.prune_every, lead.prune_unit)
    sampler = shared_sampler(lead, base) if lead.sampling == "fresh" else None
    chunk = max(1, (lead.chunk or auto_chunk(lead, lead.torch_device)) // n) * n
    batch = train(lead.replace(chunk=chunk), resume=select(base, [j // n for j in range(n * R)], history=False),
                  masker=masker, sampler=sampler)
    out = []
    for k, c in enumerate(cfgs):
        run = select(batch, list(range(k, n * R, n)), c)
        run.history = join_time(base.history, run.history)
        out.append(run)
    return out


def train_arms(base: Run, cfg, alphas: list, chosen: list) -> list[Run]:
    """One run per arm, every one resumed from the checkpoint `base` with cfg (its steps and prune_start) and trained
    in one batch on the same pairs. Arm k prunes either by magnitude (Algorithm 1, recomputed every prune_every
    steps) at alphas[k], a ratio or one ratio per replicate (R,), or, where chosen[k] is an (R, m) bool tensor,
    exactly those neurons for the whole branch (an oracle set P; alphas[k] is then ignored). alpha 0 with no set is
    the control. Each run keeps `base`'s history before the branch point."""
    n, R, m = len(alphas), len(base.replicates), base.W.shape[1]
    def per(a):
        return [float(x) for x in a] if isinstance(a, (list, tuple, torch.Tensor)) else [float(a)] * R
    ratios = [per(a) if chosen[k] is None else [0.0] * R for k, a in enumerate(alphas)]
    keep = torch.ones(n * R, m)
    for k, c in enumerate(chosen):
        if c is not None:
            keep[k::n] = oracle_keep(c)          # row j is replicate j // n in arm j % n
    reps = [base.replicates[j // n] for j in range(n * R)]
    inner = Masker([ratios[j % n][j // n] for j in range(n * R)], [False] * (n * R), [False] * (n * R), reps,
                   cfg.seed, cfg.prune_start, cfg.prune_every, "neuron")
    masker = FixedMasker(keep, cfg.prune_start, inner)
    sampler = shared_sampler(cfg, base) if cfg.sampling == "fresh" else None
    chunk = max(1, (cfg.chunk or auto_chunk(cfg)) // n) * n
    batch = train(cfg.replace(chunk=chunk, prune_alpha=0.0), resume=select(base, [j // n for j in range(n * R)],
                                                                           history=False),
                  masker=masker, sampler=sampler)
    out = []
    for k in range(n):
        run = select(batch, list(range(k, n * R, n)), cfg)
        run.history = join_time(base.history, run.history)
        out.append(run)
    return out


def concat(runs: list[Run]) -> Run:
    """Runs of disjoint replicates (shards of one batch, same config and step) joined along the replicate
    dimension, in order: the inverse of select."""
    def cat(name):
        return torch.cat([getattr(r, name) for r in runs])
    pairs = D.Pairs(*(torch.cat([getattr(r.pairs, f) for r in runs]) for f in PAIR_FIELDS))
    return Run(runs[0].cfg, [k for r in runs for k in r.replicates], cat("M"), cat("W"), cat("T1"), runs[0].step,
               History.concat([r.history for r in runs]), pairs, cat("W0"))
