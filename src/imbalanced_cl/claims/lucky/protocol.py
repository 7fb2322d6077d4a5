"""Notebook 02's runs: T2 - T1 over eps_max (eq. 60), the Lemma 3.2 run, the workshop's Figure 1, and their printed
reports."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ... import stats
from ...premises import push_pairs
from ...sim import metrics, regime
from ...sim.train import train
from ..census.sets import census_of
from .config import LuckyConfig
from .metrics import detect_t2, lemma32

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
    gap = np.array([[t2 - t1 if (t2 >= 0 and t1 >= 0) else np.nan for t1, t2 in zip(T1s[e], T2s[e], strict=True)]
                    for e in cfg.train_eps_max]).T
    pred = cfg.d * math.log(cfg.d) / (em_arr * cfg.lr * math.log(math.log(cfg.d)))
    fit = stats.fit_loglog_replicates(1 / em_arr, np.where(np.isfinite(gap), gap, np.nan))
    return {"runs": runs, "eps_max": em_arr, "gap": gap, "pred": pred, "fit": fit}


def lemma32_run(cfg: LuckyConfig, runs: dict) -> dict:
    """Lemma 3.2 on a run at eps_max with lemma_m neurons for lemma_steps steps (the t2_grid run when those are m and
    steps): lemma32's measurements at T2, plus 'T1', 'T2' and the lucky / ordinary (i, j) pairs per replicate at init.
    The run itself is not returned: its per-step history is what a record must not keep (at the paper profile it is
    hundreds of MB), and nothing judged reads it."""
    lm, ls = cfg.lemma_m or cfg.m, cfg.lemma_steps or cfg.steps
    base = (runs[cfg.eps_max] if cfg.eps_max in runs and (lm, ls) == (cfg.m, cfg.steps)
            else train(cfg.sim(m=lm, steps=ls)))
    T2 = detect_t2(base, cfg.t2_factor)
    cen = census_of(base.W0 @ base.M, cfg.d, cfg.ratio, cfg.gamma)
    return {**lemma32(base, T2, cfg.gamma), "T1": base.T1, "T2": T2, "m": lm, "steps": ls,
            "pairs": (cen["lucky"].sum((-1, -2)).tolist(), cen["ordinary"].sum((-1, -2)).tolist())}


def measure_t2(cfg: LuckyConfig) -> dict:
    """Notebook 02's trainings and what it reads of them, the runs themselves not kept (a record keeps measurements):
    {"t2": t2_grid less its runs, "lemma32": Lemma 3.2 at T2, "regime": the premises on the largest-eps_max run}."""
    t2 = t2_grid(cfg)
    runs = t2.pop("runs")
    return {"t2": t2, "lemma32": lemma32_run(cfg, runs), "regime": regime.measure(runs[max(runs)])}


def measure_push(cfg: LuckyConfig) -> dict:
    """measure_t2 again with premises.push_pairs(K) pairs a step, all else equal (same seed: the same dictionaries and
    initial weights): what Lemma B.1's effect on the trained rows is read from (verdicts.with_push)."""
    c = cfg.replace(n_pairs=push_pairs(cfg.n_pairs))
    return {"n_pairs": c.n_pairs, **measure_t2(c)}


def lemma32_report(L: dict, cfg: LuckyConfig) -> list[str]:
    """What the Lemma 3.2 run found: its T1 and T2, the lucky and ordinary pairs, the eq. (9) and eq. (10) ratios,
    and how often the luckiest neuron at initialisation is its feature's top neuron at T2 (against chance 1/m)."""
    a, b, minor = L["a_ratio"], L["b_ratio"], L["top_hit_minor"]
    return [f"Lemma 3.2 run: eps_max={cfg.eps_max}, eps_min={cfg.eps_min}, m={L['m']}, {L['steps']} steps; "
            f"T1={L['T1'].tolist()}, T2={L['T2'].tolist()}",
            f"lucky (i, j) pairs per replicate: {L['pairs'][0]} | ordinary pairs: {L['pairs'][1]}",
            f"(a) lucky neurons measured: {a.size}; ratio to the eq. (9) bound: "
            + (f"median {np.median(a):.3g}, min {a.min():.3g}" if a.size else "none"),
            f"(b) features with both lucky and ordinary neurons: {b.size}; max-ordinary / max-lucky: "
            + (f"median {np.median(b):.3g}, max {b.max():.3g}" if b.size else "none"),
            f"luckiest-at-init neuron is the top neuron at T2: majority {_share(L['top_hit_major'])}, "
            f"minority {_share(minor)} (chance 1/m = {L['chance']:.3f})"]


def _share(x) -> str:
    """A mean share for the report, or 'none measured' where no case was (never a bare nan)."""
    m = float(x.mean()) if x.size else float("nan")
    return "none measured" if m != m else f"{m:.2f}"


def workshop_figure(cfg: LuckyConfig) -> dict:
    """Workshop Figure 1 (W132) with and without Algorithm 1 pruning: 'cos2' {run: cos²(w_i, M_j) (R, m, d)},
    'n_major' (the first features are majority), and 'gap', the majority minus minority best-neuron cos² per replicate
    (mean and 95% interval)."""
    fcfg = cfg.sim(m=cfg.fig_m, d=cfg.fig_d, n_minority=cfg.fig_minority, steps=cfg.fig_steps,
                   record_every=max(1, cfg.fig_steps // 20))
    runs = {"vanilla": train(fcfg),
            f"pruned α={cfg.fig_prune_alpha}": train(fcfg.replace(prune_alpha=cfg.fig_prune_alpha))}
    cos2 = {name: metrics.cosine_matrix(run.W, run.M).pow(2) for name, run in runs.items()}
    maj = cfg.fig_d - cfg.fig_minority
    best = cos2["vanilla"].amax(1)                         # (R, d): best neuron per atom
    # a difference of two mean cos² (each in [0, 1]) lies in [-1, 1]: its interval is kept there (Fisher's z scale)
    gap = stats.mean_ci_in(best[:, :maj].mean(-1) - best[:, maj:].mean(-1), "cosine")
    return {"cos2": cos2, "n_major": maj, "gap": gap}


def workshop_report(ws: dict) -> list[str]:
    """Per run: the best neuron's cos² per atom, averaged over majority and over minority atoms and replicates."""
    maj = ws["n_major"]
    return [f"{name}: best cos² per atom, mean over {c.shape[0]} replicates: majority {c.amax(1)[:, :maj].mean():.3f}, "
            f"minority {c.amax(1)[:, maj:].mean():.3f}" for name, c in ws["cos2"].items()]
