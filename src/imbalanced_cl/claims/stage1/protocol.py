"""Notebook 01's runs and summaries: the rates against eps_j, the T1 sweeps and their fits, the printed reports;
and its measurement stages (measure_main, measure_sweeps, measure_push), what a campaign record keeps."""
from __future__ import annotations

import torch

from ... import stats
from ...premises import check_push, push_pairs
from ...sim import data, regime, theory
from ...sim.config import SimConfig
from ...sim.train import Run, train
from .config import Stage1Config
from .metrics import measured_rates, perp_history, perp_ratio


def t1_sweep(cfg: Stage1Config, axis: str) -> dict:
    """Measured T1 (R per point) and the three predictions over d_grid (axis='d') or d1_grid (axis='d1')."""
    grid = cfg.d_grid if axis == "d" else cfg.d1_grid
    rows = {"x": [], "T1": [], "linear": [], "main": [], "workshop": []}
    for v in grid:
        base = cfg.sweep_base(axis, v)
        kappa = theory.kappa_mc(base, n=cfg.kappa_samples // 4)
        t_lin = theory.t1_linear(base, kappa)
        steps = cfg.sweep_steps(t_lin)
        run = train(base.replace(steps=steps, progress=cfg.progress))
        T1 = run.T1.double()
        T1[T1 < 0] = float("nan")  # not reached within the horizon
        rows["x"].append(v)
        rows["T1"].append(T1)
        rows["linear"].append(t_lin)
        rows["main"].append(theory.t1_main(base))
        rows["workshop"].append(theory.t1_workshop(base))
    rows["T1"] = torch.stack(rows["T1"], dim=1)  # (R, grid)
    return rows


def _ci(x: torch.Tensor) -> tuple[float, float, float]:
    return tuple(float(v) for v in stats.mean_ci(x))


def sparsity_table(freq: torch.Tensor, cfg: SimConfig) -> list[str]:
    """Lines of text: each feature's eps_j, the model's q_j = 1 - (1 - p_j)^L and the realised fraction of samples
    containing it, freq (R, d) (mean and 95% interval over replicates), then the mean number of features per sample."""
    eps = data.eps_vector(cfg).float()
    f_mean, f_lo, f_hi = stats.mean_ci(freq)
    q = data.sample_prob(cfg).float()
    lines = ["feature  eps_j   q_j (model)  realised [95% CI]"]
    lines += [f"{j:5d}  {eps[j]:.3f}   {q[j]:.3f}        {f_mean[j]:.3f} [{f_lo[j]:.3f}, {f_hi[j]:.3f}]"
              for j in range(cfg.d)]
    return lines + [f"mean features per sample: {freq.sum(1).mean():.2f} of d = {cfg.d}"]


def rate_results(run: Run, cfg: Stage1Config) -> dict:
    """Stage-1 growth rates against eps_j (eq. 7) and the non-feature decay at T1 (eq. 8), from one run.

    y = rate/eta + lambda per replicate and feature (R, d), which eq. (7) says is proportional to eps_j;
    y_pred, the same from the parameter-free linear theory (kappa_j by Monte Carlo); y_paper, the slope-1 line
    of eq. (7) with its unknown constant C_z set by the median of y/eps. Intervals are 95% over replicates:
    slope (log-log slope of y on eps), ratio (measured/predicted rate, mean over features), maj_min (rate ratio
    of the most to the least frequent feature) and perp (||P_perp w(T1)|| over the decay-only prediction).
    """
    eps = data.eps_vector(cfg).float()
    rates = measured_rates(run, cfg.fit_start)                           # (R, d) per-step log growth
    kappa = theory.kappa_mc(cfg, n=cfg.kappa_samples)                    # (d,)
    pred_rate = theory.stage1_rate(cfg, kappa).float()
    y = rates / cfg.lr + cfg.weight_decay                                # measured rate/eta + lambda
    y_pred = pred_rate / cfg.lr + cfg.weight_decay
    y_mean = stats.mean_ci(y)[0]
    maj = y[:, eps >= eps.max() - 1e-9].mean(1)
    mnr = y[:, eps <= eps.min() + 1e-9].mean(1)
    return {"eps": eps, "y": y, "y_pred": y_pred, "y_paper": float((y_mean / eps).median()) * eps,
            "slope": stats.loglog_slope_ci(eps, y), "slope_pred": stats.loglog_fit(eps, y_pred)[0],
            "ratio": _ci((rates / pred_rate).mean(1)), "maj_min": _ci(maj / mnr),
            "perp": _ci(perp_ratio(run, cfg, run.T1))}


def t1_curves(sw: dict) -> dict:
    """The three T1 predictions of a sweep as {label: (y, style)}: the linear theory at its own level, the main
    paper's eq. (33) and the workshop's W351 drawn through the first measured mean (their constants are unknown)."""
    t0 = float(stats.mean_ci(sw["T1"])[0][0])
    curves = {"linear theory (no fitted constant)": (torch.tensor(sw["linear"]), "k-")}
    for key, style in (("main", "C3--"), ("workshop", "C2-.")):
        f = torch.tensor(sw[key])
        curves[f"{key} formula (shape)"] = (f / f[0] * t0, style)
    return curves


def t1_fits(sweeps: dict) -> dict:
    """Log-log exponents of T1 in each swept variable: measured (mean and 95% interval over replicates) and those
    of the three predictions, as fits[name], fits[name + '_main' | '_workshop' | '_linear']."""
    fits = {}
    for name, sw in sweeps.items():
        x = torch.tensor(sw["x"], dtype=torch.float64)
        fits[name] = stats.loglog_slope_ci(x.float(), sw["T1"].float())
        for key in ("main", "workshop", "linear"):
            fits[f"{name}_{key}"] = stats.loglog_fit(x, torch.tensor(sw[key]))[0]
    return fits


def t1_report(fits: dict) -> list[str]:
    """One line per swept variable: the measured T1 exponent against the three predicted ones."""
    out = []
    for name in ("d1", "d"):
        s, lo, hi = fits[name]
        out.append(f"T1 ~ {name}^a: measured a = {s:.2f} [{lo:.2f}, {hi:.2f}]; main paper {fits[name + '_main']:.2f}, "
                   f"workshop {fits[name + '_workshop']:.2f}, linear theory {fits[name + '_linear']:.2f}")
    return out


# --- the measurement stages: what a campaign unit of notebook 01 keeps (campaign/stages.py), never a Run ---

TRAJECTORIES = 6    # neurons of replicate 0 whose feature coefficients the notebook draws


def measure_main(cfg: Stage1Config) -> dict:
    """The main run and what notebook 01 reads of it: the realised feature frequencies "freq" (R, d), the recorded
    "steps" (T,), replicate 0's first neurons along the most and least frequent feature, "major" and "minor" (T, 6),
    the mean ||P_perp w_i|| of replicate 0 "perp" (T,), "T1" (R,), the rates of eq. (7) "rates" (rate_results) and the
    premises "regime" (sim/regime.py: Lemma B.1, losses, λ, σ)."""
    run = train(cfg)
    coef = run.history.get("coef")                     # (T, R, m, d): read here, never kept
    return {"freq": run.pairs.realised_frequency(), "steps": run.history.get("steps"),
            "major": coef[:, 0, :TRAJECTORIES, 0].clone(), "minor": coef[:, 0, :TRAJECTORIES, cfg.d - 1].clone(),
            "perp": perp_history(run)[:, 0].mean(-1), "T1": run.T1, "rates": rate_results(run, cfg),
            "regime": regime.measure(run)}


def measure_sweeps(cfg: Stage1Config) -> dict:
    """The T1 sweeps over d1 (at sweep_d) and over d (at sweep_d1): {"d1" | "d": t1_sweep}."""
    return {"d1": t1_sweep(cfg, "d1"), "d": t1_sweep(cfg, "d")}


def measure_push(cfg: Stage1Config) -> dict:
    """The main run again with premises.push_pairs(K) pairs per step, all else equal (same seed: same dictionary and
    initial weights): {"n_pairs": that K, "rates": its rate_results}, Lemma B.1 tested by its effect on the rows."""
    c = cfg.replace(n_pairs=push_pairs(cfg.n_pairs))
    return {"n_pairs": c.n_pairs, "rates": rate_results(train(c), c)}


def pushed_rates(push: dict, c: Stage1Config) -> dict:
    """The push's rates for c, the config the effect test asks for (premise_rows.push_k); a push measured at another K
    raises (premises.check_push)."""
    check_push(push["n_pairs"], c.n_pairs)
    return push["rates"]
