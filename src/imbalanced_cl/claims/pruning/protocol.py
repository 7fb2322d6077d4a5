"""Notebook 04's protocol (Thm F.1 prunes from T4, after vanilla convergence): the vanilla run, the branches from its checkpoint,
the backward variants, the eps_min sweep, and the summaries the verdict rows read."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from ... import stats
from ...sim import data as D
from ...sim.prune import Masker
from ...sim.train import History, Run, _join_time, auto_chunk, train
from .config import PruningConfig
from .metrics import (aligned_counts, amplitude_ratio, excess_growth, feature_stats, mask_census, mask_persistence,
                      split_mean)


def select(run: Run, idx: list[int], cfg=None, history: bool = True) -> Run:
    """Rows `idx` of a batched run as a Run of its own: weights, data, T1 and (with `history`) its snapshots,
    labelled with `cfg` (default: the run's). Rows may repeat: a checkpoint copied once per branch."""
    h = History(steps=list(run.history.steps) if history else [])
    for name in ("coef", "norm2", "bias", "loss", "pos_prob") if history else ():
        setattr(h, name, [v[idx] for v in getattr(run.history, name)])
    p = run.pairs
    pairs = D.Pairs(p.UX[idx], p.UY[idx], p.S[idx], p.ZX[idx], p.ZY[idx])
    return Run(cfg or run.cfg, [run.replicates[i] for i in idx], run.M[idx], run.W[idx], run.T1[idx], run.step, h,
               pairs, run.W0[idx])


def shared_sampler(cfg: PruningConfig, base: Run):
    """sampler(t, reps) for train with sampling = "fresh": step t's pairs drawn once per distinct replicate and
    repeated for its copies in the batch (the very pairs notebook 04's branches see, drawn once instead of once
    per cell and alpha)."""
    M = base.M.to(cfg.torch_device)
    pos = {r: i for i, r in enumerate(base.replicates)}

    def sample(t: int, reps: list) -> D.Pairs:
        uniq = list(dict.fromkeys(reps))
        P = D.make_pairs(cfg, M[[pos[r] for r in uniq]], uniq, extra=t + 1)
        idx = torch.tensor([uniq.index(r) for r in reps], device=P.UX.device)
        return D.Pairs(*(getattr(P, f)[idx] for f in ("UX", "UY", "S", "ZX", "ZY")))
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


def train_branches(base: Run, cfgs: list) -> list[Run]:
    """One run per config, every one resumed from the checkpoint `base` and trained in one batch on the same pairs.

    The configs may differ only in their mask (MASK_FIELDS; a control, prune_alpha = 0, may differ in any pruning
    setting, since it prunes nothing). With sampling = "fresh" step t's pairs are drawn once per replicate
    (shared_sampler) instead of once per branch: the same pairs every branch would draw alone (sub-stream t + 1 of
    its replicate), at a fraction of the cost, since drawing a step's pairs costs more than the step. A control row
    gets a keep-all mask, which multiplies by one: the numbers of an unmasked run. Each run keeps `base`'s history
    before the branch point, as train(..., resume=base) would.
    """
    lead, R, n = _batch_config(cfgs), len(base.replicates), len(cfgs)
    # Row j is replicate j // n in branch j % n, and a training chunk holds whole replicates (all n branches of
    # each), so every chunk draws each of its replicates' pairs once. Memory: at least n rows at a time.
    rows = lambda f: [f(cfgs[j % n]) for j in range(n * R)]
    masker = Masker(rows(lambda c: c.prune_alpha), rows(lambda c: c.prune_mask == "random"),
                    rows(lambda c: c.prune_schedule == "static"), [base.replicates[j // n] for j in range(n * R)],
                    lead.seed, lead.prune_start, lead.prune_every, lead.prune_unit)
    sampler = shared_sampler(lead, base) if lead.sampling == "fresh" else None
    chunk = max(1, (lead.chunk or auto_chunk(lead)) // n) * n
    batch = train(lead.replace(chunk=chunk), resume=select(base, [j // n for j in range(n * R)], history=False),
                  masker=masker, sampler=sampler)
    out = []
    for k, c in enumerate(cfgs):
        run = select(batch, list(range(k, n * R, n)), c)
        run.history = _join_time(base.history, run.history)
        out.append(run)
    return out


def run_branches(cfg: PruningConfig, alphas, base: Run, backward: str = "faithful", **changes) -> dict:
    """Control (alpha = 0) and one branch per alpha, all resumed from the same vanilla checkpoint `base` and trained
    in one batch on the same pairs (train_branches)."""
    keys = [0.0] + [float(a) for a in alphas]
    cfgs = [cfg.branch(0.0, **changes)] + [cfg.branch(a, backward, **changes) for a in keys[1:]]
    return dict(zip(keys, train_branches(base, cfgs)))


def feature_tables(runs: dict, base: Run, cfg: PruningConfig) -> dict:
    """feature_stats of every branch (keyed by alpha, 0.0 = control) and of the vanilla model ("vanilla T_a")."""
    out = {a: feature_stats(r, cfg) for a, r in runs.items()}
    out["vanilla T_a"] = feature_stats(base, cfg)
    return out


def census_by_alpha(base: Run, alphas: list, cfg: PruningConfig) -> dict:
    """mask_census of the magnitude mask at the branch point, for every alpha of the grid."""
    return {a: mask_census(base, a, cfg) for a in alphas}


VARIANTS = ("control", "faithful (branch)", "literal (branch)", "Alg. 1 from t=0")


def run_variants(cfg: PruningConfig, base: Run, runs: dict) -> dict:
    """Step 6 at alpha_main: the control, the faithful and literal backward branches, and Alg. 1 from t = 0."""
    lit = train(cfg.branch(cfg.alpha_main, "literal"), resume=base)
    faith = runs[cfg.alpha_main] if cfg.alpha_main in runs else train(cfg.branch(cfg.alpha_main), resume=base)
    return dict(zip(VARIANTS, (runs[0.0], faith, lit, train(cfg.from_start(cfg.alpha_main)))))


def variant_stats(variants: dict, base: Run, cfg: PruningConfig) -> dict:
    """Per variant: A_j*/A_maj, minority and majority aligned counts (R,), final loss, and (branches only) the
    share of the neurons pruned at T_a still pruned at the end (R,)."""
    out = {}
    for name, r in variants.items():
        mi, ma = split_mean(aligned_counts(r.W, r.M, cfg.cos_threshold), cfg)
        out[name] = {"A_j*/A_maj": amplitude_ratio(r.W, r.M, cfg), "minority aligned": mi, "majority aligned": ma,
                     "loss": float(r.history.get("loss")[-1].mean())}
        if name != "Alg. 1 from t=0":
            out[name]["still pruned"] = mask_persistence(r, cfg, cfg.alpha_main, base.W)
    return out


def eps_sweep(cfg: PruningConfig, base: Run, control: Run, pruned: Run) -> dict:
    """Step 7: control and alpha_main branch at every eps_min of the grid (the main eps_min reuses the runs given).

    Returns runs {eps: (cfg, control, pruned)}, xr = eps / eps_max (k,), A_j*/A_maj of control and pruned
    (R, k), the minority excess rate (R, k) and their log-log slopes against xr (mean, lo, hi).
    """
    grid = sorted(float(e) for e in cfg.eps_min_grid)
    runs = {}
    for e in grid:
        c = cfg.replace(eps_min=e)
        if e == cfg.eps_min:
            runs[e] = (c, control, pruned)
        else:
            branches = run_branches(c, [cfg.alpha_main], train(c.vanilla()))
            runs[e] = (c, branches[0.0], branches[float(cfg.alpha_main)])
    ratio = lambda k: torch.stack([amplitude_ratio(runs[e][k].W, runs[e][k].M, runs[e][0]) for e in grid], 1)
    xr = torch.tensor(grid) / cfg.eps_max
    ar_ctl, ar_pr = ratio(1), ratio(2)
    exc = torch.stack([excess_growth(runs[e][2], runs[e][1], runs[e][0])[0] for e in grid], 1)
    return {"eps": grid, "runs": runs, "xr": xr, "ar_ctl": ar_ctl, "ar_pr": ar_pr, "exc": exc,
            "slope_ctl": stats.loglog_slope_ci(xr, ar_ctl), "slope_pr": stats.loglog_slope_ci(xr, ar_pr),
            "slope_exc": stats.loglog_slope_ci(xr, exc)}


def final_ratios(runs: dict, variants: dict, cfg: PruningConfig) -> dict:
    """A_j*/A_maj at the end of every branch (keyed by alpha, 0.0 = control) and of the variants (by name): (R,)."""
    out = {a: amplitude_ratio(r.W, r.M, cfg) for a, r in runs.items()}
    out.update({name: amplitude_ratio(r.W, r.M, cfg) for name, r in variants.items()})
    return out


def _effect_word(lo: float, hi: float) -> str:
    return "helps" if lo > 0 else "hurts" if hi < 0 else "no clear effect"


def where_it_helps(ratios: dict, census: dict, sweep: dict, cfg: PruningConfig) -> dict:
    """Per alpha, then per eps_min: change of A_j*/A_maj over the control (R,), its reading, and the mean share of
    the mask on minority-dominant neurons (per eps_min: the mask on the control's final weights)."""
    out = {}
    for a in sorted(k for k in ratios if isinstance(k, float) and k > 0):
        d = ratios[a] - ratios[0.0]
        c = stats.ci(d)
        out[f"alpha grid: alpha={a:g} (eps ratio {cfg.eps_min / cfg.eps_max:g})"] = {
            "change of A_j*/A_maj": d, "reading": _effect_word(c[1], c[2]),
            "mask on minority-dominant": stats.ci(census[a]["minority_dominant"])[0]}
    for e, (c_e, ctl, pr) in sweep["runs"].items():
        d = amplitude_ratio(pr.W, pr.M, c_e) - amplitude_ratio(ctl.W, ctl.M, c_e)
        cen, c = mask_census(ctl, cfg.alpha_main, c_e), stats.ci(d)
        out[f"eps sweep: eps ratio {e / cfg.eps_max:g} (alpha={cfg.alpha_main:g})"] = {
            "change of A_j*/A_maj": d, "reading": _effect_word(c[1], c[2]),
            "mask on minority-dominant": stats.ci(cen["minority_dominant"])[0],
            "minority-dominant norm rank": stats.ci(cen["minority_dominant_rank"])[0]}
    return out


@dataclass
class Results:
    """What notebook 04's verdict rows read: per-replicate tensors, (R,) or (R, k) over the sorted alpha grid."""

    alphas: list              # the sorted alpha grid
    features: dict            # feature_tables: {0.0 | alpha: {stat: (minority (R,), majority (R,))}}
    excess: dict              # excess_by_alpha
    gap_diff: torch.Tensor    # mechanism_summary: rise of 1 - l'_p with j* minus without (R,)
    mask_share: torch.Tensor  # share of the alpha_main mask at T_a on minority-aligned neurons (R,)
    degradation: dict         # degradation
    ratios: dict              # final_ratios
    sweep: dict               # eps_sweep: xr (k,), ar_ctl, ar_pr, exc (R, k)
    control: dict | None = None  # control.cell_stats of the 2x2 mask control (None: not run)


def mask_share(census: dict, base: Run, cfg: PruningConfig) -> torch.Tensor:
    """Share of the alpha_main mask at the branch point that sits on minority-aligned neurons (R,)."""
    cen = census[cfg.alpha_main] if cfg.alpha_main in census else mask_census(base, cfg.alpha_main, cfg)
    return cen["minority_aligned"]
