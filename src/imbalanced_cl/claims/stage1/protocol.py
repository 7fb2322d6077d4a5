"""Stage 1 (Lemma 3.1, Lemma C.1, Theorem C.1): growth rates along features, non-feature decay, and T1."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import stats
from ..sim import data, metrics, theory
from ..sim.config import SimConfig
from ..validate import check_float, check_grid, check_int
from ..sim.train import Run, train
from ..verdict import Verdict, judge_target


@dataclass(frozen=True)
class Stage1Config(SimConfig):
    """Notebook 01: one run with a spread of eps_j for the rates, plus a (d, d1) sweep for T1."""

    # notebook 01's model (overrides of SimConfig): a geometric spread of eps_j, recorded every step of Stage 1
    R: int = 8                       # replicates trained together
    d1: int = 200                    # ambient dimension, d1 >= d
    eps_min: float = 0.1             # smallest frequency of the geometric spread
    eps_profile: str = "geometric"   # eps_j log-spaced from eps_max to eps_min, so the rate fit sees many eps values
    steps: int = 60                  # gradient steps (Stage 1 ends near step 40 at this size)
    record_every: int = 1            # history every step: the rate fit needs the whole Stage-1 curve
    fit_start: int = 5               # first step of the rate fit (skip the transient of the random start)
    kappa_samples: int = 20000       # Monte-Carlo pairs for kappa_j
    d_grid: tuple = (10, 20, 40, 80)         # T1 sweep over d at d1 = sweep_d1
    d1_grid: tuple = (50, 100, 200, 400)     # T1 sweep over d1 at d = sweep_d
    sweep_d: int = 10                # d of the sweep over d1
    sweep_d1: int = 400              # d1 of the sweep over d
    sweep_R: int = 4                 # replicates per sweep point
    horizon: float = 3.0             # sweep runs for horizon x the linear-theory T1 (a prediction, not a tuned number)
    tol_slope: float = 0.15  # band 1 ± tol_slope for the log-log slope of rate on eps_j
    tol_ratio: float = 0.10  # band ratio × (1 ± tol_ratio) for the rate ratios
    tol_exponent: float = 0.25  # band claim ± tol_exponent for the exponent of T1 in d1

    def validate(self) -> None:
        """SimConfig's checks plus the sweep grids and tolerances."""
        super().validate()
        check_int("fit_start", self.fit_start, 0, self.steps - 2, given=f"steps={self.steps}")
        check_int("kappa_samples", self.kappa_samples, 100)
        check_grid("d_grid", self.d_grid, lambda n, v: check_int(n, v, 3, self.sweep_d1))
        check_grid("d1_grid", self.d1_grid, lambda n, v: check_int(n, v, self.sweep_d))
        check_int("sweep_d", self.sweep_d, 3)
        check_int("sweep_d1", self.sweep_d1, 3)
        check_int("sweep_R", self.sweep_R, 1)
        check_float("horizon", self.horizon, 1.0)
        for name in ("tol_slope", "tol_ratio", "tol_exponent"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)


def feature_energy(run: Run) -> tuple[torch.Tensor, torch.Tensor]:
    """sqrt(sum_i <w_i, M_j>^2) over time (T, R, d), and the recorded steps (T,)."""
    return run.history.get("coef").pow(2).sum(2).sqrt(), run.history.get("steps")


def fit_window(run: Run, fit_start: int) -> tuple[int, int]:
    """Rate-fit window [fit_start, T1): Stage 1 ends at the earliest replicate's T1 (the bias switches on)."""
    t1 = run.T1[run.T1 >= 0]
    end = int(t1.min()) if t1.numel() else run.step
    return fit_start, end


def measured_rates(run: Run, fit_start: int) -> torch.Tensor:
    """Per-replicate, per-feature log growth rate of the feature energy in Stage 1 (R, d)."""
    E, steps = feature_energy(run)
    lo, hi = fit_window(run, fit_start)
    return metrics.log_slope(E, steps, lo, hi)


def effective_kappa(rate: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """Invert the linear update: (exp(rate) - 1 + eta lambda) / (eta gain) = kappa_j  (eq. 7 without O~ terms)."""
    return (torch.expm1(rate) + cfg.lr * cfg.weight_decay) / (cfg.lr * theory.gain(cfg))


def perp_history(run: Run) -> torch.Tensor:
    """||P_perp w_i|| over the recorded steps (T, R, m): the part of each neuron outside span(M) (eq. 8)."""
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    return (norm2 - coef.pow(2).sum(-1)).clamp(min=0).sqrt()


def perp_ratio(run: Run, cfg: SimConfig, at: torch.Tensor) -> torch.Tensor:
    """||P_perp w(t)|| / (||P_perp w(0)|| (1 - eta lambda)^t) at step `at` per replicate, mean over neurons (R,).

    NaN for a replicate whose `at` is negative (T1 never reached): there is no Stage-1 end to compare at.
    """
    steps = run.history.get("steps")
    perp = perp_history(run)  # (T, R, m)
    k = torch.searchsorted(steps, at.clamp(min=0)).clamp(max=len(steps) - 1)  # first record at or after `at`
    r = torch.arange(perp.shape[1])
    pred = theory.perp_decay(cfg, steps[k]).float()
    ratio = (perp[k, r] / (perp[0] * pred[:, None])).mean(-1)
    return torch.where(at >= 0, ratio, torch.full_like(ratio, float("nan")))


def t1_sweep(cfg: Stage1Config, axis: str) -> dict:
    """Measured T1 (R per point) and the three predictions over d_grid (axis='d') or d1_grid (axis='d1')."""
    grid = cfg.d_grid if axis == "d" else cfg.d1_grid
    rows = {"x": [], "T1": [], "linear": [], "main": [], "workshop": []}
    for v in grid:
        d, d1 = (v, cfg.sweep_d1) if axis == "d" else (cfg.sweep_d, v)
        base = cfg.sim(d=d, d1=d1, R=cfg.sweep_R, bias="none", n_minority=0, eps_profile="two_level",
                       progress=False, record_every=10**6, steps=1, prune_alpha=0.0)
        kappa = theory.kappa_mc(base, n=cfg.kappa_samples // 4)
        t_lin = theory.t1_linear(base, kappa)
        steps = int(min(max(cfg.horizon * t_lin, 10), 10**5))
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


def sparsity_table(run: Run, cfg: SimConfig) -> list[str]:
    """Lines of text: each feature's eps_j, the model's q_j = 1 - (1 - p_j)^L and the realised fraction of samples
    containing it (mean and 95% interval over replicates), then the mean number of features per sample."""
    eps = data.eps_vector(cfg).float()
    freq = run.pairs.realised_frequency()               # (R, d)
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


def verdict_rows(results: dict, cfg: Stage1Config) -> list[Verdict]:
    """Notebook 01's verdicts from rate_results(...) merged with t1_fits(...); tolerances from cfg (tol_*)."""
    def row(claim, source, predicted, target, m, lo, hi, tol, relative=False):
        v, rule = judge_target(lo, hi, target, tol, relative=relative)
        return Verdict(claim, source, predicted, m, lo, hi, v, rule)

    ratio = cfg.eps_max / cfg.eps_min
    return [
        row("Stage-1 rate/η+λ ∝ ε_j (log-log slope)", "Lemma 3.1, eq. (7)", "1", 1.0, *results["slope"], cfg.tol_slope),
        row("Measured rate equals the parameter-free linear prediction", "eq. (7) with κ_j by Monte Carlo",
            "ratio 1", 1.0, *results["ratio"], cfg.tol_ratio, relative=True),
        row("Majority/minority rate ratio equals ε_max/ε_min", "Lemma 3.1, eq. (7)", f"{ratio:.3g}",
            ratio, *results["maj_min"], cfg.tol_ratio, relative=True),
        row("Non-feature part only decays, ||P⊥w(T1)|| / decay-only", "eq. (8), Lemma C.1(c)", "ratio 1",
            1.0, *results["perp"], cfg.tol_ratio, relative=True),
        row("T1 grows linearly in d1 (exponent of d1)", "eq. (33)", "1", 1.0, *results["d1"], cfg.tol_exponent),
        row("T1 does not depend on d1 (exponent of d1)", "workshop W351", "0", 0.0, *results["d1"], cfg.tol_exponent),
    ]
