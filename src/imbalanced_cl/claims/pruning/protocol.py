"""Notebook 04's protocol (Thm F.1 prunes from T4, after vanilla convergence): the vanilla run, the branches from its
checkpoint, the backward variants, the eps_min sweep, and the summaries the verdict rows read; measure_protocol runs
it all and keeps what was measured (the measurement stage a campaign record keeps, never a Run)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import torch

from ... import stats
from ... import workers as W
from ...sim import regime
from ...sim.prune import mask_for
from ...sim.train import Run, train
from .batch import train_arms, train_branches
from .config import PruningConfig
from .control import run_control
from .metrics import (aligned_counts, amplitude_ratio, amplitude_ratio_history, convergence, degradation,
                      excess_by_alpha, excess_growth, feature_stats, learned_minority, lucky_minority, mask_census,
                      mask_persistence, mechanism_summary, minority_dominant, paper_T, pruned_norm_history,
                      split_mean, vanilla_summary)


def run_branches(cfg: PruningConfig, alphas, base: Run, backward: str = "faithful", **changes) -> dict:
    """Control (alpha = 0) and one branch per alpha, all resumed from the same vanilla checkpoint `base` and trained
    in one batch on the same pairs (train_branches, its replicates in shards on cfg.workers processes)."""
    keys = [0.0] + [float(a) for a in alphas]
    cfgs = [cfg.branch(0.0, **changes)] + [cfg.branch(a, backward, **changes) for a in keys[1:]]
    return dict(zip(keys, train_branches(base, cfgs, cfg.workers), strict=True))


ORACLES = ("oracle: P = M*_j* (Def. B.1)", "oracle: minority-dominant at T_a")


def oracle_sets(base: Run, cfg: PruningConfig) -> dict:
    """The two oracle pruned sets at the branch point, (R, m) bool each: Def. B.1's lucky minority neurons on the
    initial weights (P = M*_j*, Theorem F.1's hypothesis) and the neurons whose largest |cos(w_i, M_j)| is on a
    minority feature at T_a."""
    return dict(zip(ORACLES, (lucky_minority(base.W0, base.M, cfg), minority_dominant(base.W, base.M, cfg)),
                    strict=True))


def run_oracles(cfg: PruningConfig, base: Run, runs: dict) -> dict:
    """Theorem 3.2 as a conditional statement: branches from `base` that prune exactly an oracle set (oracle_sets)
    for the whole branch, beside Algorithm 1's magnitude mask at alpha_main and the control (both from `runs`), on the
    same pairs. Per arm: the run, |P| per replicate (R,) and the change of A_j*/A_maj over the control (R,)."""
    sets = oracle_sets(base, cfg)
    trained = train_arms(base, cfg.branch(0.0), [0.0] * len(sets), list(sets.values()))
    ctl = amplitude_ratio(runs[0.0].W, runs[0.0].M, cfg)
    mag = runs[float(cfg.alpha_main)] if float(cfg.alpha_main) in runs else train(cfg.branch(cfg.alpha_main),
                                                                                   resume=base)
    k = round(cfg.alpha_main * cfg.m)
    out = {f"Algorithm 1 (magnitude, alpha={cfg.alpha_main:g})": (mag, torch.full((len(base.replicates),), float(k)))}
    out.update({name: (r, sets[name].sum(-1).float()) for name, r in zip(sets, trained, strict=True)})
    return {name: {"run": r, "size": size, "gain": amplitude_ratio(r.W, r.M, cfg) - ctl} for name, (r, size) in
            out.items()}


def theorem_premises(base: Run, cfg: PruningConfig) -> dict:
    """Theorem 3.2's premises on the vanilla run at the branch point: "convergence" (pruning.metrics.Convergence with
    cfg's tolerances), "T" (App. F.4's T at alpha_main), and Remark 1's bounds in neurons per replicate (R,):
    "strict" |M*_j*| (Def. B.1 on the initial weights) and "extended" (neurons with j* in N_i at T_a)."""
    h = base.history
    conv = convergence(h.get("steps"), h.get("loss"), h.get("pos_prob"), cfg.n_pairs, cfg.tau, cfg.converge_loss_frac,
                       cfg.converge_lp_c, cfg.converge_change, cfg.converge_window)
    return {"convergence": conv, "T": paper_T(cfg, cfg.alpha_main, cfg.C_z),
            "strict": lucky_minority(base.W0, base.M, cfg).sum(-1).float(),
            "extended": learned_minority(base.W, base.M, cfg).sum(-1).float()}


def feature_tables(runs: dict, base: Run, cfg: PruningConfig) -> dict:
    """feature_stats of every branch (keyed by alpha, 0.0 = control) and of the vanilla model ("vanilla T_a")."""
    out = {a: feature_stats(r, cfg) for a, r in runs.items()}
    out["vanilla T_a"] = feature_stats(base, cfg)
    return out


def census_by_alpha(base: Run, alphas: list, cfg: PruningConfig) -> dict:
    """mask_census of the magnitude mask at the branch point, for every alpha of the grid."""
    return {a: mask_census(base, a, cfg) for a in alphas}


VARIANTS = ("control", "faithful (branch)", "literal (branch)", "Alg. 1 from t=0")   # as the record names them


@dataclass(frozen=True)
class Variants:
    """Step 6's four runs at alpha_main."""

    control: Run        # alpha = 0 from T_a
    faithful: Run       # the alpha_main branch from T_a, faithful backward (eq. 5, full h and grad h)
    literal: Run        # the same branch, literal backward (masked autograd)
    from_start: Run     # Algorithm 1 from t = 0

    def named(self) -> dict[str, Run]:
        """{name: run} in VARIANTS order: the names the record, the tables and the figures use."""
        return dict(zip(VARIANTS, (self.control, self.faithful, self.literal, self.from_start), strict=True))


class SweepPoint(NamedTuple):
    """One eps_min of Step 7: its config, and the control and alpha_main branch trained there."""

    cfg: PruningConfig
    control: Run
    pruned: Run


def _variant(cfg: PruningConfig, base: Run, which: str) -> Run:
    """One of Step 6's runs: the literal-backward branch from `base`, or Algorithm 1 from t = 0."""
    if which == "literal":
        return train(cfg.branch(cfg.alpha_main, "literal"), resume=base)
    return train(cfg.from_start(cfg.alpha_main))


def run_variants(cfg: PruningConfig, base: Run, runs: dict) -> Variants:
    """Step 6 at alpha_main: the control, the faithful and literal backward branches, and Alg. 1 from t = 0 (the
    last two in worker processes when cfg.workers gives several: whole runs, so the same numbers)."""
    _, (lit, t0) = W.pieces(_variant, [(cfg, base, "literal"), (cfg, base, "t=0")], ["literal", "Alg. 1 from t=0"],
                            cfg.workers, on_cuda=cfg.torch_device.type == "cuda", settings="notebook 04, Step 6")
    faith = runs[cfg.alpha_main] if cfg.alpha_main in runs else train(cfg.branch(cfg.alpha_main), resume=base)
    return Variants(runs[0.0], faith, lit, t0)


def variant_stats(variants: Variants, base: Run, cfg: PruningConfig) -> dict:
    """Per variant, by name: A_j*/A_maj, minority and majority aligned counts (R,), final loss, and (branches only)
    the share of the neurons pruned at T_a still pruned at the end (R,)."""
    out = {}
    for name, r in variants.named().items():
        mi, ma = split_mean(aligned_counts(r.W, r.M, cfg.cos_threshold), cfg)
        out[name] = {"A_j*/A_maj": amplitude_ratio(r.W, r.M, cfg), "minority aligned": mi, "majority aligned": ma,
                     "loss": float(r.history.get("loss")[-1].mean())}
        if r is not variants.from_start:
            out[name]["still pruned"] = mask_persistence(r, cfg, cfg.alpha_main, base.W)
    return out


def _sweep_point(cfg: PruningConfig, eps_min: float) -> tuple[Run, Run]:
    """Notebook 04's protocol at another eps_min: the vanilla run, then its control and alpha_main branch."""
    c = cfg.replace(eps_min=eps_min, workers=1)        # the eps_min values are the parallel part: no pool inside
    runs = run_branches(c, [cfg.alpha_main], train(c.vanilla()))
    return runs[0.0], runs[float(cfg.alpha_main)]


def eps_sweep(cfg: PruningConfig, base: Run, control: Run, pruned: Run) -> dict:
    """Step 7: control and alpha_main branch at every eps_min of the grid (the main eps_min reuses the runs given).

    Returns runs {eps: SweepPoint(cfg, control, pruned)}, xr = eps / eps_max (k,), A_j*/A_maj of control and pruned
    (R, k), the minority excess rate (R, k) and their log-log slopes against xr (mean, lo, hi).
    """
    grid = sorted(float(e) for e in cfg.eps_min_grid)
    trained = train_points(cfg, [e for e in grid if e != cfg.eps_min])
    runs = {e: trained[e] if e != cfg.eps_min else SweepPoint(cfg, control, pruned) for e in grid}
    out = sweep_summary({e: point_pieces(runs[e], cfg) for e in grid}, cfg)
    return {"eps": out.pop("eps"), "runs": runs, **out}


def train_points(cfg: PruningConfig, eps: list) -> dict:
    """{eps_min: SweepPoint} of Step 7 at each eps_min of `eps`: its vanilla run, control and alpha_main branch, the
    eps_min values in worker processes when cfg.workers gives several."""
    _, trained = W.pieces(_sweep_point, [(cfg, e) for e in eps], [f"eps_min={e:g}" for e in eps], cfg.workers,
                          on_cuda=cfg.torch_device.type == "cuda", settings="notebook 04, Step 7")
    return {e: SweepPoint(cfg.replace(eps_min=e), *t) for e, t in zip(eps, trained, strict=True)}


def point_pieces(point: SweepPoint, cfg: PruningConfig) -> dict:
    """What Step 7 keeps of one eps_min, (R,) each: A_j*/A_maj of the control ("ar_ctl") and of the branch
    ("ar_pr"), the minority excess rate ("exc"), and its mask (sweep_masks' entry, "mask")."""
    c_e, ctl, pr = point
    return {"ar_ctl": amplitude_ratio(ctl.W, ctl.M, c_e), "ar_pr": amplitude_ratio(pr.W, pr.M, c_e),
            "exc": excess_growth(pr, ctl, c_e)[0], "mask": sweep_masks({0: point}, cfg)[0]}


def sweep_summary(pieces: dict, cfg: PruningConfig) -> dict:
    """eps_sweep less its runs, from point_pieces of every eps_min ({eps: pieces}): what a run split into parts
    (split.py) puts back together."""
    grid = sorted(pieces)
    def stacked(name):
        return torch.stack([pieces[e][name] for e in grid], 1)
    xr = torch.tensor(grid) / cfg.eps_max
    ar_ctl, ar_pr, exc = stacked("ar_ctl"), stacked("ar_pr"), stacked("exc")
    return {"eps": grid, "xr": xr, "ar_ctl": ar_ctl, "ar_pr": ar_pr, "exc": exc,
            "slope_ctl": stats.loglog_slope_ci(xr, ar_ctl), "slope_pr": stats.loglog_slope_ci(xr, ar_pr),
            "slope_exc": stats.loglog_slope_ci(xr, exc), "masks": {e: pieces[e]["mask"] for e in grid}}


def sweep_masks(runs: dict, cfg: PruningConfig) -> dict:
    """Per eps_min of the sweep {eps: SweepPoint}: the change of A_j*/A_maj over the control (R,) and
    the alpha_main mask's census on the control's final weights (mask_census: minority-dominant share, norm rank)."""
    out = {}
    for e, (c_e, ctl, pr) in runs.items():
        cen = mask_census(ctl, cfg.alpha_main, c_e)
        out[e] = {"change": amplitude_ratio(pr.W, pr.M, c_e) - amplitude_ratio(ctl.W, ctl.M, c_e),
                  "minority_dominant": cen["minority_dominant"],
                  "minority_dominant_rank": cen["minority_dominant_rank"]}
    return out


def final_ratios(runs: dict, variants: Variants, cfg: PruningConfig) -> dict:
    """A_j*/A_maj at the end of every branch (keyed by alpha, 0.0 = control) and of the variants (by name): (R,)."""
    out = {a: amplitude_ratio(r.W, r.M, cfg) for a, r in runs.items()}
    out.update({name: amplitude_ratio(r.W, r.M, cfg) for name, r in variants.named().items()})
    return out


def mask_share(census: dict, base: Run, cfg: PruningConfig) -> torch.Tensor:
    """Share of the alpha_main mask at the branch point that sits on minority-aligned neurons (R,)."""
    cen = census[cfg.alpha_main] if cfg.alpha_main in census else mask_census(base, cfg.alpha_main, cfg)
    return cen["minority_aligned"]


def measure_protocol(cfg: PruningConfig) -> dict:
    """Every training of notebook 04 (Steps 1-8) and what its cells, figures and verdict rows read of them, the runs
    themselves not kept (a record keeps measurements). This dict is the stored form, kept as records have it;
    results.read turns it into the typed Results the verdict rows read. Keys, in the notebook's order:

    vanilla   "steps" (T,) and "loss" (T, R) of the vanilla run, vanilla_summary as "summary"
    premises  theorem_premises at the branch point
    curves    {label: (steps (T,), A_j*/A_maj (T, R))} of the control and every branch
    oracles   run_oracles less its runs: {arm: {"size" (R,), "gain" (R,)}}
    tables    feature_tables;  excess: excess_by_alpha;  mechanism: mechanism_summary;  census: census_by_alpha
    degradation, ratios (final_ratios), mask_share, variants (variant_stats), norms ({variant: pruned_norm_history})
    sweep     eps_sweep less its runs (their masks in "masks");  control: run_control (None when not run)
    regime    sim/regime.py's premises on the vanilla run
    """
    alphas = sorted(float(a) for a in cfg.alpha_grid)
    base = train(cfg.vanilla())
    runs = run_branches(cfg, alphas, base)                                   # {0.0: control, alpha: pruned}
    orc = run_oracles(cfg, base, runs)
    tables = feature_tables(runs, base, cfg)
    cen = census_by_alpha(base, alphas, cfg)
    var = run_variants(cfg, base, runs)
    pruned_at_Ta = mask_for(base.W, cfg.alpha_main, "neuron") == 0
    sweep = eps_sweep(cfg, base, runs[0.0], var.faithful)
    named = var.named()
    sweep.pop("runs")
    return {"vanilla": {"steps": base.history.get("steps"), "loss": base.history.get("loss"),
                        "summary": vanilla_summary(base, cfg)},
            "premises": theorem_premises(base, cfg),
            "curves": {("control" if a == 0 else f"alpha={a:g}"): amplitude_ratio_history(r) for a, r in runs.items()},
            "oracles": {name: {"size": o["size"], "gain": o["gain"]} for name, o in orc.items()},
            "tables": tables, "excess": excess_by_alpha(runs, alphas, cfg),
            "mechanism": mechanism_summary(base, runs, cfg), "census": cen,
            "degradation": degradation(runs, tables, cen, alphas, cfg), "ratios": final_ratios(runs, var, cfg),
            "mask_share": mask_share(cen, base, cfg), "variants": variant_stats(var, base, cfg),
            "norms": {name: pruned_norm_history(named[name], pruned_at_Ta, cfg)   # the branches first, as recorded
                      for name in (*VARIANTS[1:3], VARIANTS[0])},
            "sweep": sweep, "control": run_control(cfg, base, runs, alphas), "regime": regime.measure(base)}
