"""Notebook 02 (claim 2): lucky neurons. T2 (eq. 61) and Lemma 3.2 (eqs. 9-10) on trained runs, the workshop's
Figure 1, and the notebook's verdict rows; the census on a (d, eps ratio) grid (Def. B.1, Lemma B.2) is in census_grid.

LuckyConfig extends SimConfig with the census grid (see census_grid.CensusConfig), the training grid and the
verdict tolerances; bad values raise ParameterError naming the parameter and its allowed range.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np
import torch

from .. import stats
from .. import verdict as V
from ..sim import metrics
from ..sim.config import SimConfig
from ..sim.train import train
from ..validate import check_float, check_grid, check_int

from .census import census_of
# the census grid lives in census_grid; these names stay importable from here (notebook 02 and its tests use them)
from .census_grid import CensusConfig, census_fits, mc_census_multi, paper_exponents, run_census  # noqa: F401


@dataclass(frozen=True)
class LuckyConfig(SimConfig):
    """Notebook 02: census grid (see census_grid.CensusConfig), training grid over eps_max, workshop figure, tolerances."""

    # notebook 02's model (overrides of SimConfig)
    m: int = 100                     # neurons of the training runs
    eps_min: float = 0.8             # minority frequency (the lucky-neuron regime needs a ratio near 1, brief §6.1)
    n_minority: int = 10             # how many features are minority (the last ones)
    record_every: int = 1            # history every step (T2 detection needs it)
    progress: bool = False           # tqdm progress bar
    census_ds: tuple = (10, 30, 100, 300, 1000, 3000, 10000)
    census_ratios: tuple = (1.0, 0.8, 0.6, 0.5)
    gamma: float = 0.1
    C_m: float = 2.0
    census_neurons: int = 20000
    census_max_elems: int = 2000000
    census_R: int = 4
    exact_samples: int = 4000
    train_eps_max: tuple = (0.5, 1.0, 2.0)   # eps_max grid for T2 - T1 (eps_min = eps_max * eps_min/eps_max of the base)
    t2_factor: float = 0.0    # T2 = first step with max_i ||w_i||^2 >= t2_factor ||w_i(T1)||^2 (eq. 61); 0 means d
    lemma_C: float = 3.0      # the O(1) constant of eq. (10) used to judge it
    lemma_m: int = 1000          # neurons in the Lemma 3.2 run (0: m); lucky pairs are rare, so more neurons, more cases
    lemma_steps: int = 150      # steps of the Lemma 3.2 run (0: steps); it must reach T2
    fig_m: int = 30           # workshop Figure 1 (W132): m = 30, d = 9, 5 majority + 4 minority
    fig_d: int = 9
    fig_minority: int = 4
    fig_neurons: int = 13
    fig_steps: int = 1500
    fig_prune_alpha: float = 0.2
    rse_max: float = 0.3      # exact lucky-count expectations with a larger relative standard error are not fitted
    tol_omega: float = 0.1    # |M_j*| and |M_j| exponent bounds (Lemma B.2(c)) are relaxed by this much
    tol_ni_init: float = 0.1  # the |N_i| exponent bound at initialisation (Lemma B.2(d)) is relaxed by this much
    pr_b_min: float = 0.9     # (1-p2)^(d-1) at the largest d (L1967 sets it to 1): holds at or above this
    forall_min: float = 0.9   # a "for every lucky pair" statement holds if the Wilson interval of its share is ≥ this
    tol_t2: float = 0.2       # band 1 ± tol_t2 for the slope of T2 - T1 on 1/eps_max (eq. 60)

    def validate(self) -> None:
        super().validate()
        check_float("rse_max", self.rse_max, 0.0, lo_open=True)
        for name in ("tol_omega", "tol_ni_init", "tol_t2"):
            check_float(name, getattr(self, name), 0.0, lo_open=True)
        for name in ("pr_b_min", "forall_min"):
            check_float(name, getattr(self, name), 0.0, 1.0, lo_open=True)
        CensusConfig(**{k: getattr(self, k) for k in CensusConfig.__dataclass_fields__})
        check_grid("train_eps_max", self.train_eps_max, lambda n, v: check_float(n, v, 0.0, lo_open=True))
        check_float("t2_factor", self.t2_factor, 0.0)
        check_float("lemma_C", self.lemma_C, 1.0)
        check_int("lemma_m", self.lemma_m, 0)
        check_int("lemma_steps", self.lemma_steps, 0)
        check_int("fig_m", self.fig_m, 1)
        check_int("fig_d", self.fig_d, 3)
        check_int("fig_minority", self.fig_minority, 0, self.fig_d)
        check_int("fig_neurons", self.fig_neurons, 1, self.fig_m)
        check_int("fig_steps", self.fig_steps, 1)
        check_float("fig_prune_alpha", self.fig_prune_alpha, 0.0, 1.0, hi_open=True)

    def census(self) -> CensusConfig:
        """The census part as a CensusConfig."""
        return CensusConfig(**{k: getattr(self, k) for k in CensusConfig.__dataclass_fields__})

    @property
    def ratio(self) -> float:
        return self.eps_min / self.eps_max


def detect_t2(run, factor: float = 0.0) -> np.ndarray:
    """T2 per replicate (eq. 61): first recorded step t >= T1 at which some neuron has
    ||w_i(t)||^2 >= factor * ||w_i(T1)||^2 (factor 0 means d, the paper's rule). -1 if never.
    Needs a history recorded at every step up to T2 (record_every = 1) for exact times."""
    factor = factor or run.cfg.d
    steps = run.history.get("steps").numpy()
    n2 = run.history.get("norm2").numpy()            # (T, R, m)
    out = np.full(n2.shape[1], -1)
    for r in range(n2.shape[1]):
        T1 = int(run.T1[r])
        if T1 < 0:
            continue
        k1 = int(np.searchsorted(steps, T1))
        if k1 >= len(steps):
            continue
        grow = n2[k1:, r, :] / n2[k1, r, :][None, :]
        hit = np.nonzero((grow >= factor).any(-1))[0]
        if hit.size:
            out[r] = int(steps[k1 + hit[0]])
    return out


def coef_at(run, step: int, r: int) -> np.ndarray:
    """<w_i, M_j> (m, d) of replicate r at the recorded step nearest to `step`."""
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("coef")[k, r].numpy()


def norm2_at(run, step: int, r: int) -> np.ndarray:
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("norm2")[k, r].numpy()


def lemma32(run, T2: np.ndarray, gamma: float) -> dict:
    """Lemma 3.2 at T2 for each replicate: (a) lucky i in M_j*: ratio |<w_i(T2),M_j>|^2 / (2 eps_j/eps_max ||w_i(T1)||^2)
    (>= 1 claimed); (b) max over ordinary i' in M_j of |<w_i',M_j>| / max over lucky i of |<w_i,M_j>| (O(1) claimed).
    Also whether the neuron luckiest at init (largest u_ij^2) is the feature's top neuron at T2."""
    from ..sim.data import eps_vector
    cfg = run.cfg
    rho = cfg.eps_min / cfg.eps_max
    eps = eps_vector(cfg).numpy()
    g0 = (run.W0 @ run.M)
    cen = census_of(g0, cfg.d, rho, gamma)
    a_ratios, b_ratios, top_hit, top_hit_min = [], [], [], []
    for r in range(g0.shape[0]):
        if T2[r] < 0:
            continue
        cT2 = np.abs(coef_at(run, int(T2[r]), r))
        n1 = norm2_at(run, int(run.T1[r]), r)
        lucky, ordi = cen["lucky"][r].numpy(), cen["ordinary"][r].numpy()
        for i, j in zip(*np.nonzero(lucky)):
            a_ratios.append(cT2[i, j] ** 2 / (2 * eps[j] / cfg.eps_max * n1[i]))
        for j in range(cfg.d):
            li = np.nonzero(lucky[:, j])[0]
            oi = np.nonzero(ordi[:, j])[0]
            if li.size and oi.size:
                b_ratios.append(cT2[oi, j].max() / cT2[li, j].max())
        u2 = (g0[r] ** 2 / (g0[r] ** 2).sum(-1, keepdim=True)).numpy()
        best0 = u2.argmax(0)                     # luckiest neuron at init, per feature
        bestT2 = cT2.argmax(0)                   # top neuron at T2, per feature
        hit = best0 == bestT2
        mino = np.arange(cfg.d) >= cfg.d - cfg.n_minority   # by position, also when rho = 1
        top_hit.append(hit[~mino].mean())
        if mino.any():
            top_hit_min.append(hit[mino].mean())
    return {"a_ratio": np.array(a_ratios), "b_ratio": np.array(b_ratios), "top_hit_major": np.array(top_hit),
            "top_hit_minor": np.array(top_hit_min), "chance": 1.0 / cfg.m}


# ---- notebook 02 from trained runs: T2 - T1, Lemma 3.2, workshop Figure 1, and the verdict rows ----

def t2_grid(cfg: LuckyConfig, log=partial(print, flush=True)) -> dict:
    """T2 - T1 against eps_max (eq. 60). For each eps_max in train_eps_max (eps_min/eps_max kept at the base ratio),
    train R replicates recording every step, then T1 (eq. 34) and T2 (eq. 61). Returns the runs, 'gap' T2 - T1
    (R, len(grid); NaN where T1 or T2 was not reached), 'pred' the eq. (60) scale with constant 1, and 'fit' the
    log-log slope of the gap on 1/eps_max (per replicate, mean and 95% interval). One line per run goes to `log`."""
    runs, T1s, T2s = {}, {}, {}
    for em in cfg.train_eps_max:
        runs[em] = run = train(cfg.sim(eps_max=em, eps_min=em * cfg.ratio))
        T1s[em], T2s[em] = run.T1.numpy(), detect_t2(run, cfg.t2_factor)
        if log:
            log(f"eps_max={em}: T1={T1s[em].tolist()} T2={T2s[em].tolist()} "
                f"final loss={float(run.history.get('loss')[-1].mean()):.3f}")
    em_arr = np.array(cfg.train_eps_max, float)
    gap = np.array([[t2 - t1 if (t2 >= 0 and t1 >= 0) else np.nan for t1, t2 in zip(T1s[e], T2s[e])]
                    for e in cfg.train_eps_max]).T
    pred = cfg.d * math.log(cfg.d) / (em_arr * cfg.lr * math.log(math.log(cfg.d)))
    fit = stats.fit_loglog_replicates(1 / em_arr, np.where(np.isfinite(gap), gap, np.nan))
    return {"runs": runs, "eps_max": em_arr, "gap": gap, "pred": pred, "fit": fit}


def lemma32_run(cfg: LuckyConfig, runs: dict) -> dict:
    """Lemma 3.2 on a run at eps_max with lemma_m neurons for lemma_steps steps (the t2_grid run when those are m and
    steps): lemma32's measurements at T2, plus 'run', 'T2' and the lucky / ordinary (i, j) pairs per replicate at init."""
    lm, ls = cfg.lemma_m or cfg.m, cfg.lemma_steps or cfg.steps
    base = runs[cfg.eps_max] if cfg.eps_max in runs and (lm, ls) == (cfg.m, cfg.steps) else train(cfg.sim(m=lm, steps=ls))
    T2 = detect_t2(base, cfg.t2_factor)
    cen = census_of(base.W0 @ base.M, cfg.d, cfg.ratio, cfg.gamma)
    return {**lemma32(base, T2, cfg.gamma), "run": base, "T2": T2, "m": lm, "steps": ls,
            "pairs": (cen["lucky"].sum((-1, -2)).tolist(), cen["ordinary"].sum((-1, -2)).tolist())}


def lemma32_report(L: dict, cfg: LuckyConfig) -> list[str]:
    """What the Lemma 3.2 run found: its T1 and T2, the lucky and ordinary pairs, the eq. (9) and eq. (10) ratios,
    and how often the luckiest neuron at initialisation is its feature's top neuron at T2 (against chance 1/m)."""
    a, b, minor = L["a_ratio"], L["b_ratio"], L["top_hit_minor"]
    return [f"Lemma 3.2 run: eps_max={cfg.eps_max}, eps_min={cfg.eps_min}, m={L['m']}, {L['steps']} steps; "
            f"T1={L['run'].T1.tolist()}, T2={L['T2'].tolist()}",
            f"lucky (i, j) pairs per replicate: {L['pairs'][0]} | ordinary pairs: {L['pairs'][1]}",
            f"(a) lucky neurons measured: {a.size}; ratio to the eq. (9) bound: "
            + (f"median {np.median(a):.3g}, min {a.min():.3g}" if a.size else "none"),
            f"(b) features with both lucky and ordinary neurons: {b.size}; max-ordinary / max-lucky: "
            + (f"median {np.median(b):.3g}, max {b.max():.3g}" if b.size else "none"),
            f"luckiest-at-init neuron is the top neuron at T2: majority {L['top_hit_major'].mean():.2f}, "
            f"minority {minor.mean() if minor.size else float('nan'):.2f} (chance 1/m = {L['chance']:.3f})"]


def workshop_figure(cfg: LuckyConfig) -> dict:
    """Workshop Figure 1 (W132) with and without Algorithm 1 pruning: 'cos2' {run: cos²(w_i, M_j) (R, m, d)},
    'n_major' (the first features are majority), and 'gap', the majority minus minority best-neuron cos² per replicate
    (mean and 95% interval)."""
    fcfg = cfg.sim(m=cfg.fig_m, d=cfg.fig_d, n_minority=cfg.fig_minority, steps=cfg.fig_steps,
                   record_every=max(1, cfg.fig_steps // 20))
    runs = {"vanilla": train(fcfg), f"pruned α={cfg.fig_prune_alpha}": train(fcfg.replace(prune_alpha=cfg.fig_prune_alpha))}
    cos2 = {name: metrics.cosine_matrix(run.W, run.M).pow(2) for name, run in runs.items()}
    maj = cfg.fig_d - cfg.fig_minority
    best = cos2["vanilla"].amax(1)                         # (R, d): best neuron per atom
    gap = tuple(float(x) for x in stats.mean_ci(best[:, :maj].mean(-1) - best[:, maj:].mean(-1)))
    return {"cos2": cos2, "n_major": maj, "gap": gap}


def workshop_report(ws: dict) -> list[str]:
    """Per run: the best neuron's cos² per atom, averaged over majority and over minority atoms and replicates."""
    maj = ws["n_major"]
    return [f"{name}: best cos² per atom, mean over {c.shape[0]} replicates: majority {c.amax(1)[:, :maj].mean():.3f}, "
            f"minority {c.amax(1)[:, maj:].mean():.3f}" for name, c in ws["cos2"].items()]


def _untested(claim: str, source: str, predicted: str, why: str) -> "V.Verdict":
    nan = float("nan")
    return V.Verdict(claim, source, predicted, nan, nan, nan, V.UNTESTED, why)


def census_rows(cen: dict, fits: dict, cfg: LuckyConfig) -> list["V.Verdict"]:
    """Lemma B.2(c, d) exponent bounds per ratio (tol_omega, tol_ni_init) and Pr[B_i] = 1 of L1967 (pr_b_min)."""
    rows, exps, ds = [], paper_exponents(cfg.census()), cen["ds"]
    for rho, (fl, fo, fnr) in fits.items():
        w1, w2, e = exps[rho]["lucky"], exps[rho]["ordinary"], exps[rho]["Ni"]
        if math.isnan(fl.slope):   # no finite expectation to fit: the claim fails if it asks for growth (w1 > 0)
            nan = float("nan")
            rows.append(V.Verdict(f"|M_j*| ≥ Ω(d^ω1), ρ={rho}", "Lemma B.2(c), eqs. 31-32", f"exponent ≥ {w1:.2f}",
                                  nan, nan, nan, V.FAILS if w1 > 0 else V.UNTESTED,
                                  "the exact expectation is 0 (a = c1 log d / d ≥ 1) or unresolved on the whole grid"))
        else:
            lo = fl.lo if not math.isnan(fl.lo) else fl.slope
            hi = fl.hi if not math.isnan(fl.hi) else fl.slope
            verd, rule = V.judge_bound(lo, hi, w1, True, cfg.tol_omega)
            rows.append(V.Verdict(f"|M_j*| ≥ Ω(d^ω1), ρ={rho}", "Lemma B.2(c), eqs. 31-32", f"exponent ≥ {w1:.2f}",
                                  fl.slope, lo, hi, verd, "fit of exact E|M_j*| over d; " + rule))
        verd, rule = V.judge_bound(fo.lo, fo.hi, w2, False, cfg.tol_omega)
        rows.append(V.Verdict(f"|M_j| ≤ O(d^ω2), ρ={rho}", "Lemma B.2(c)", f"exponent ≤ {w2:.2f}", fo.slope,
                              fo.lo, fo.hi, verd, "fit of exact E|M_j| over d; " + rule))
        verd, rule = V.judge_bound(fnr.lo, fnr.hi, e, False, cfg.tol_ni_init)
        rows.append(V.Verdict(f"|N_i| ≤ O(d^(1-ρ²(1-γ))) at init, ρ={rho}", "Lemma B.2(d)", f"exponent ≤ {e:.2f}",
                              fnr.slope, fnr.lo, fnr.hi, verd, "MC slope over replicates; " + rule))
    for k, rho in enumerate(cen["rhos"]):
        if rho >= 1.0:
            continue
        # A closed form, not an estimate: the "interval" is the value itself, so the row cannot be inconclusive.
        pB = cen["exact"]["paper_B"][:, k]
        v = float(pB[-1])
        verd, rule = V.judge_share(v, v, cfg.pr_b_min, f"closed form (1-p2)^(d-1) at d={ds[-1]}")
        rows.append(V.Verdict(f"Pr[B_i] = (1-p2)^(d-1) = 1 (ρ={rho})", "proof of Lemma B.2(c), L1967", "1 for all d",
                              v, v, v, verd, rule + f"; exact Pr[B_i] at d={ds[-1]}: "
                              f"{float(cen['exact']['B'][-1, k]):.3g}; (1-p2)^(d-1) at d={ds[0]}: {float(pB[0]):.3g}"))
    return rows


def verdict_rows(results: dict, cfg: LuckyConfig) -> list["V.Verdict"]:
    """Notebook 02's verdicts. results: 'census' (run_census), 'census_fits' (census_fits), 't2' (t2_grid),
    'lemma32' (lemma32_run) and 'workshop' (workshop_figure).
    Tolerances from cfg (tol_*, pr_b_min, forall_min, lemma_C)."""
    rows = census_rows(results["census"], results["census_fits"], cfg)
    f = results["t2"]["fit"]
    verd, rule = V.judge_target(f.lo, f.hi, 1.0, cfg.tol_t2)
    rows.append(V.Verdict("T2 - T1 ∝ 1/eps_max", "Thm D.1, eq. (60)", "slope 1", f.slope, f.lo, f.hi, verd,
                          rule + f"; T2 rule: ||w||² ≥ {cfg.t2_factor or cfg.d}·||w(T1)||² (eq. 61)"))
    L = results["lemma32"]
    a, b = L["a_ratio"], L["b_ratio"]
    rows.append(V.count_row("lucky neurons reach |<w,M_j>|² ≥ 2(eps_j/eps_max)||w(T1)||² at T2", "Lemma 3.2(a), eq. (9)",
                            "fraction 1", float((a >= 1).sum()), a.size, cfg.forall_min, f"; {a.size} lucky (i,j) pairs")
                if a.size else
                _untested("lucky neurons reach the eq. (9) level at T2", "Lemma 3.2(a), eq. (9)", "fraction 1",
                          "no lucky neuron at this (d, m, ρ)"))
    rows.append(V.count_row(f"ordinary ≤ C · lucky at T2 (C = {cfg.lemma_C:g})", "Lemma 3.2(b), eq. (10)",
                            "fraction 1", float((b <= cfg.lemma_C).sum()), b.size, cfg.forall_min) if b.size else
                _untested("ordinary ≤ C · lucky at T2", "Lemma 3.2(b), eq. (10)", "fraction 1",
                          "no feature with a lucky neuron"))
    for name, arr in (("majority", L["top_hit_major"]), ("minority", L["top_hit_minor"])):
        if arr.size >= 2:
            mu, lo, hi = (float(x) for x in stats.mean_ci(torch.tensor(arr)))
            verd, rule = V.judge_positive(lo - L["chance"], hi - L["chance"], "excess over chance 1/m")
            rows.append(V.Verdict(f"the luckiest-at-init neuron is the {name} feature's top neuron at T2",
                                  "Remark 2; Thm D.1(c)", "well above chance", mu, lo, hi, verd, rule))
    mu, lo, hi = results["workshop"]["gap"]
    verd, rule = V.judge_positive(lo, hi, "majority − minority best cos²")
    rows.append(V.Verdict("majority atoms are learned better than minority ones (Fig. 1)", "workshop §4, Fig. 1",
                          "majority best cos² > minority", mu, lo, hi, verd, rule))
    return rows
