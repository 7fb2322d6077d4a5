"""Notebook 03's runs and summaries: the (d, rho) grid trained to Stage 3, the fits of |N_i|, the feature ratios, the
mixing and threshold diagnostics."""
from __future__ import annotations

from functools import partial

import numpy as np
import torch

from ... import stats
from ...premises import push_pairs
from ...sim import regime
from ...sim.metrics import dominant_sets
from ...sim.train import train
from .config import ScalingConfig
from .metrics import stage3, tracking_slope

# ---- notebook 03 from a trained grid: measurements, report lines and verdict rows ----

THRESHOLDS = (0.3, 0.7, 0.9)   # other dominant-set thresholds (besides ni_rel) of the diagnostic in section 6


def train_grid(cfg: ScalingConfig, log=partial(print, flush=True)) -> dict:
    """Train R replicates at every (d, rho) of the grid for `steps` steps and measure them with stage3:
    {(d, rho): measurements}. One line per grid point goes to `log` (None for silence)."""
    res = {}
    for d in cfg.ds:
        for rho in cfg.ratios:
            run = train(cfg.sim(d=d, eps_min=rho * cfg.eps_max))
            v = res[(d, rho)] = stage3(run, cfg.ni_rel, cfg.gamma)
            v["regime"] = regime.measure(run)      # the premises of Theorem 3.1 at this grid point
            if log:
                log(f"d={d:3d} rho={rho:.2f}: loss {v['loss']:.3f}, |N_i| final {v['Ni_final'].mean():.2f}, "
                    f"init {v['Ni_init'].mean():.2f}")
    return res


def ni_array(res: dict, cfg: ScalingConfig, key: str = "Ni_final") -> np.ndarray:
    """Mean |N_i| per replicate over the grid, (R, len(ratios), len(ds)); key 'Ni_final' or 'Ni_init'."""
    return np.stack([np.stack([res[(d, r)][key] for d in cfg.ds], -1) for r in cfg.ratios], 1)


def ni_fits(res: dict, cfg: ScalingConfig) -> dict:
    """Per ratio, the exponent of |N_i| in d (log-log slope per replicate, mean and 95% interval):
    {'Ni_final' | 'Ni_init': {rho: SlopeFit}}."""
    D = np.array(cfg.ds, float)
    return {key: {r: stats.fit_loglog_replicates(D, ni_array(res, cfg, key)[:, k]) for k, r in enumerate(cfg.ratios)}
            for key in ("Ni_final", "Ni_init")}


def ni_report(fits: dict) -> list[str]:
    """One line per ratio: the fitted exponents, final and initial, against the bound 1 - rho^2 of eq. (14)."""
    out = []
    for r, f in fits["Ni_final"].items():
        i = fits["Ni_init"][r]
        out.append(f"rho={r}: exponent final {f.slope:.2f} [{f.lo:.2f}, {f.hi:.2f}], "
                   f"init {i.slope:.2f} [{i.lo:.2f}, {i.hi:.2f}], claim ≤ {1 - r ** 2:.2f}")
    return out


def set_overlap(res: dict) -> dict:
    """Precision and recall of the final dominant sets against the Def. B.1 sets at initialisation, averaged over
    the grid per replicate, then mean and 95% interval over replicates: {'precision' | 'recall': (m, lo, hi)}."""
    out = {}
    for key in ("precision", "recall"):
        x = np.stack([v[key] for v in res.values()]).mean(0)
        out[key] = stats.mean_ci_in(x, "fraction")      # a share: its interval stays in [0, 1]
    return out


def tracking(res: dict, cfg: ScalingConfig) -> dict:
    """tracking_slope of the final and of the initial |N_i|: {label: SlopeFit}."""
    D = np.array(cfg.ds, float)
    return {"final (dominant set)": tracking_slope(D, cfg.ratios, ni_array(res, cfg, "Ni_final")),
            "init (Def. B.1)": tracking_slope(D, cfg.ratios, ni_array(res, cfg, "Ni_init"))}


def feature_ratios(res: dict, cfg: ScalingConfig) -> dict:
    """Single-feature neurons and amplitude ratios against rho (Thm 3.1, eqs. 12-13), per d: 'single' (neurons with
    N_i = {j} per minority feature), 'A' (A_min/A_maj) and 'F' (F_min/F_maj), each {d: (R, len(ratios))}; 'fitA' and
    'fitF', their log-log slopes on rho pooled over d; 'single_ok', per (d, rho, replicate) whether the count reaches
    m d^(-1/rho^2) (the Omega constant taken as 1)."""
    P = np.array(cfg.ratios, float)
    out = {"single": {}, "A": {}, "F": {}}

    def minority_over_majority(v, key):
        return v[key][:, v["minority"]].mean(-1) / v[key][:, ~v["minority"]].mean(-1)

    for d in cfg.ds:
        out["single"][d] = np.stack([res[(d, r)]["single_per_feat"][:, res[(d, r)]["minority"]].mean(-1) for r in P], 1)
        out["A"][d] = np.stack([minority_over_majority(res[(d, r)], "A") for r in P], 1)
        out["F"][d] = np.stack([minority_over_majority(res[(d, r)], "F") for r in P], 1)
    out["fitA"] = stats.fit_loglog_replicates(P, np.concatenate([out["A"][d] for d in cfg.ds], 0))
    out["fitF"] = stats.fit_loglog_replicates(P, np.concatenate([out["F"][d] for d in cfg.ds], 0))
    out["single_ok"] = np.concatenate([out["single"][d][:, k] >= cfg.m * d ** (-1 / r ** 2)
                                       for d in cfg.ds for k, r in enumerate(P)])
    return out


def offset_coefs(res: dict, untrained: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """All sqrt(d) |alpha'_ij| / ||w_i|| (j not in N_i) and sqrt(d1) |beta_ij| / ||w_i|| over the grid (eq. 13),
    of the trained weights, or of the untrained ones (the null baseline) when `untrained`."""
    suffix = "_init" if untrained else ""
    ap = np.concatenate([v["alpha_p_scaled" + suffix][np.isfinite(v["alpha_p_scaled" + suffix])].ravel()
                         for v in res.values()])
    be = np.concatenate([v["beta_scaled" + suffix].ravel() for v in res.values()])
    return ap, be


def mixing(res: dict, cfg: ScalingConfig) -> dict:
    """At the largest d, per ratio: mean neurons per feature whose dominant set holds it alone ('pure') or with
    others ('mixed'), for majority and minority features, (len(ratios), 2); and the pure neurons per minority
    feature against d, {rho: [per d]}."""
    dmax = max(cfg.ds)
    pure, mixed = np.zeros((len(cfg.ratios), 2)), np.zeros((len(cfg.ratios), 2))
    for k, r in enumerate(cfg.ratios):
        v = res[(dmax, r)]
        for c, mask in enumerate((~v["minority"], v["minority"])):
            pure[k, c] = v["pure_per_feat"][:, mask].mean()
            mixed[k, c] = v["neurons_per_feat"][:, mask].mean() - pure[k, c]
    by_d = {r: [res[(d, r)]["pure_per_feat"][:, res[(d, r)]["minority"]].mean() for d in cfg.ds] for r in cfg.ratios}
    return {"pure": pure, "mixed": mixed, "pure_minority_by_d": by_d, "dmax": dmax}


def threshold_sweep(res: dict, cfg: ScalingConfig) -> dict:
    """The dominant-set threshold diagnostic: for ni_rel and THRESHOLDS, recompute |N_i| from the same final
    weights (no retraining): {rel: (tracking SlopeFit, mean |N_i| over the grid)}."""
    D = np.array(cfg.ds, float)
    out = {}
    for rel in sorted({*THRESHOLDS, cfg.ni_rel}):
        Ni = np.stack([np.stack([dominant_sets(torch.tensor(res[(d, r)]["coef"]), rel).sum(-1).double().mean(-1).numpy()
                                 for d in cfg.ds], -1) for r in cfg.ratios], 1)
        out[rel] = (tracking_slope(D, cfg.ratios, Ni), Ni.mean())
    return out


def amplitude_course(res: dict, cfg: ScalingConfig) -> dict:
    """A_min/A_maj through training at the largest d: {rho: (steps, (R, T) per replicate, (mean at the last step,
    mean half-way))}."""
    out = {}
    for r in cfg.ratios:
        v = res[(max(cfg.ds), r)]
        Y = torch.tensor(v["A_ratio_t"]).T
        mean = stats.mean_ci(Y, dim=0)[0]
        out[r] = (v["steps_t"], Y, (float(mean[-1]), float(mean[len(mean) // 2])))
    return out


def summarise(res: dict, cfg: ScalingConfig) -> dict:
    """What verdict_rows reads, from one grid's final weights (`res`, train_grid's output): the |N_i| fits, the set
    overlap, the tracking slopes, the feature ratios and the offset coefficients, trained and untrained."""
    return {"fits": ni_fits(res, cfg), "overlap": set_overlap(res), "track": tracking(res, cfg),
            "ratios": feature_ratios(res, cfg), "offset": offset_coefs(res),
            "offset_null": offset_coefs(res, untrained=True)}


def measure_push(cfg: ScalingConfig, run_grid=None) -> dict:
    """The whole grid again with premises.push_pairs(K) pairs per step, all else equal (same seed: the same
    dictionaries and initial weights): {"n_pairs": that K, "grid": its train_grid output}, what Lemma B.1's effect on
    the rows is read from (verdicts.with_push). `run_grid(fn, cfg, axes, prefix=...)` runs the grid point by point
    (the notebook passes campaign.checkpoint.grid, so a unit keeps each point apart from the main grid's); None
    trains it in one call."""
    c = cfg.replace(n_pairs=push_pairs(cfg.n_pairs))
    grid = train_grid(c) if run_grid is None else run_grid(train_grid, c, ("ds", "ratios"), prefix="push_")
    return {"n_pairs": c.n_pairs, "grid": grid}
