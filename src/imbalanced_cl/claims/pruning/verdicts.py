"""Notebook 04's verdict rows: Theorem 3.2's premises measured on this run (convergence at the branch point, the
paper's T, Remark 1's bounds), 16 rows on the paper's claims (Thm 3.2, Thm F.1, Remarks 1-3), the two oracle-mask
rows (Theorem 3.2 as a conditional statement), then the random-mask control's."""
from __future__ import annotations

import math

import torch

from ... import stats
from ...rules import judge_at_least, judge_factor, judge_positive, judge_share, judge_target
from ...verdict import FAILS, HOLDS, UNTESTED, row
from .config import PruningConfig
from .metrics import main_index
from .results import Results

# The premises each row depends on, by id (premises.CONDITIONS). Theorem 3.1's rows need its regime; Theorem 3.2's
# (and Remarks 1-3, which rest on it) also need a converged network pruned from T4 for the paper's T steps, and
# Remark 1's bound α m ≤ |M*_j*|. Where a premise has no row in the table, it is "not checked here" and gates nothing.
THM31 = ("k_poly", "no_memorisation", "lambda_range", "step_window", "convergence")
THM32 = THM31 + ("prune_from_t4", "alpha_bound")


# What a row shows, named in its label after the statement (the number, with its unit)
GAIN = "change in A_j*/A_maj, pruned − control"
EXCESS = "minority excess growth rate of log|<w, M_j*>| over the control, per step"
RATIO_SLOPE = "log-log slope of A_j*/A_maj on eps_min/eps_max"

# The oracle arms judged as rows (fields of results.Oracles): (field, row id, the pruned set in words)
ORACLE_ROWS = (("lucky", "gain_oracle_lucky", "P = M*_j* (Def. B.1)"),
               ("dominant", "gain_oracle_dominant", "minority-dominant at T_a"))


# The rows that need a sweep measured apart (config.SWEEPS, record_sweeps): while it is pending they are not tested
NEEDS = {"excess_rate_alpha_slope": "alpha_grid", "gain_top_alpha": "alpha_grid", "majority_intact": "alpha_grid",
         "degrade_threshold": "alpha_grid", "excess_rate_eps_slope": "eps_grid", "ratio_slope_vanilla": "eps_grid",
         "ratio_slope_pruned": "eps_grid", "slope_difference": "eps_grid"}
SWEEP_WORDS = {"alpha_grid": "the alpha grid", "eps_grid": "the eps_min grid"}


def pending_why(sweep: str) -> str:
    """Why a row that needs a pending sweep is not tested, naming the campaign unit that measures it."""
    return f"pending: needs {SWEEP_WORDS[sweep]} (campaign unit pruning_sweep/{sweep}), not recorded yet"


def _nan3() -> tuple:
    return (float("nan"),) * 3


def premise_rows(res: Results, cfg: PruningConfig) -> list:
    """Theorem 3.2's premises measured on this run, as premise rows (kind "premise", id = the premise's id): the
    vanilla run converged at the branch point, the branch ran for App. F.4's T at alpha_main, and alpha_main m
    within Remark 1's strict and extended bounds in every replicate. Empty when the run did not measure them."""
    if res.premises is None:
        return []
    p, out = res.premises, []
    c = p.convergence
    out.append(
        row(
            claim="regime: the vanilla run converged at the branch point (InfoNCE well below ln K, l'_p near "
            "1 − Θ(1/τ), the loss flat): the worst replicate's InfoNCE, in nats",
            source="Thm 3.1 eq. (11); App. F",
            predicted=f"InfoNCE ≤ {c.loss_max:.3g}, l'_p ≥ {c.lp_min:.3g}, change ≤ {c.change_max:g}",
            measured=c.loss,
            lo=c.loss,
            hi=c.loss,
            judged=(
                HOLDS if c.holds else FAILS,
                f"worst replicate: InfoNCE {c.loss:.3g} (ln K = {c.ln_k:.3g}), l'_p {c.pos_prob:.3g}, change "
                f"{c.change:.3g} over the last {cfg.converge_window} steps",
            ),
            kind="premise",
            id="convergence",
            # the loss shown; l'_p and the plateau too
            quantity="positive",
            band_lo=0.0,
            band_hi=c.loss_max,
        )
    )
    T = p.T
    out.append(
        row(
            claim=f"regime: pruned for App. F.4's T at alpha={cfg.alpha_main:g} (C_z = {cfg.C_z:g}): the "
            "branch's length, in steps",
            source="Thm F.1; App. F.4",
            predicted=f"branch ≥ T = {T:.4g} steps",
            measured=float(cfg.prune_steps),
            lo=float(cfg.prune_steps),
            hi=float(cfg.prune_steps),
            judged=(HOLDS if cfg.prune_steps >= T else FAILS, f"branch {cfg.prune_steps} steps against T = {T:.4g}"),
            kind="premise",
            id="prune_from_t4",
            quantity="count",
            band_lo=T,
            band_hi=math.inf,
        )
    )
    k = round(cfg.alpha_main * cfg.m)
    for pid, name, bound in (("alpha_bound", "|M*_j*| (Def. B.1 on the initial weights; strict)", p.strict),
                             ("alpha_bound_extended", "the neurons with j* ∈ N_i at T_a (extended)", p.extended)):
        ok = bool((bound >= k).all()) and k >= 1
        out.append(
            row(
                claim=f"regime: alpha_main m = {k} within Remark 1's bound, {name}, every replicate: the "
                f"smallest bound over replicates, in neurons",
                source="Remark 1",
                predicted="α·m ≤ the bound in every replicate",
                measured=float(bound.min()),
                lo=float(bound.min()),
                hi=float(bound.max()),
                judged=(
                    HOLDS if ok else FAILS,
                    f"bound per replicate {[int(b) for b in bound.tolist()]} against α·m = {k}",
                ),
                kind="premise",
                id=pid,
                quantity="count",
                band_lo=float(k),
                band_hi=math.inf,
            )
        )  # the smallest bound shown
    return out


def oracle_rows(res: Results, cfg: PruningConfig) -> list:
    """Theorem 3.2 as a conditional statement: the gain of each oracle mask (a chosen pruned set) over the control,
    judged against effect_tol; "not tested" where the set is empty in some replicate (nothing to prune). The oracle
    sets satisfy Remark 1's bound by construction, so the rows depend on Theorem 3.2's other premises only."""
    out, deps = [], tuple(d for d in THM32 if d != "alpha_bound")
    for field, rid, what in ORACLE_ROWS:
        claim = f"Pruning exactly {what} raises A_j*/A_maj (Thm 3.2 given its pruned set): {GAIN}"
        src = "Thm 3.2(c), Thm F.1 (P ⊆ M*_j*)"
        o = None if res.oracles is None else getattr(res.oracles, field)
        if o is None or bool((o.size < 1).any()):
            why = "not run" if o is None else (f"the set is empty in {int((o.size < 1).sum())} of "
                                               f"{o.size.numel()} replicates: nothing to prune")
            out.append(
                row(
                    claim=claim,
                    source=src,
                    predicted=f"> {cfg.effect_tol:g}",
                    measured=math.nan,
                    lo=math.nan,
                    hi=math.nan,
                    judged=(UNTESTED, why),
                    id=rid,
                    depends=deps,
                )
            )
            continue
        g = stats.ci(o.gain)
        out.append(row(claim, src, f"> {cfg.effect_tol:g} (pruned - control)", *g,
                       judge_positive(g[1], g[2], "change", cfg.effect_tol), n=int(o.gain.numel()),
                       band=cfg.effect_tol, id=rid, depends=deps))
    return out


def verdict_rows(res: Results, cfg: PruningConfig) -> list:
    """The verdict rows of notebook 04, judged with the tolerances of cfg (tol_slope, tol_factor, degrade_tol,
    effect_tol): Theorem 3.2's premise rows (premise_rows), 16 rows on the paper's claims, the oracle-mask rows
    (oracle_rows), then the 2 rows of the random-mask control (beyond the paper).

    The mask's share on minority-aligned neurons is a prediction (Remark 1, Thm F.1), judged as a row of its own: it
    gates no other row (issue: a prediction used as a premise hides what the other rows measured)."""
    ts = cfg.tol_slope
    al, ex, sw, dg, R = res.alphas, res.excess, res.sweep, res.degradation, res.ratios
    k = ex.k_main
    rows = []

    # 7 arguments: the row's id, words (claim, source, predicted), (m, lo, hi), the judgement and its premises
    def add(id, claim, src, pred, v, judged, depends=THM32, quantity="real"):
        if res.waits(NEEDS.get(id, "")):         # its sweep is a campaign unit not recorded yet
            v, judged = _nan3(), (UNTESTED, pending_why(NEEDS[id]))
        rows.append(row(claim, src, pred, *v, judged, id=id, depends=depends, quantity=quantity))

    change = "> 0 (pruned - control)"
    ek = stats.ci(ex.minority[:, k])
    add("excess_rate_positive", f"Pruning adds growth along the minority feature: {EXCESS}, at alpha={al[k]:g}",
        "Thm 3.2(a), eq. (15)", "> 0", ek, judge_positive(ek[1], ek[2], f"minority excess rate at alpha={al[k]:g}"))
    sa = ex.slope
    add("excess_rate_alpha_slope", "Minority excess rate grows linearly in alpha: log-log slope of the excess rate "
        "on alpha", "Thm 3.2(a), eq. (15)", "log-log slope 1", sa, judge_target(sa[1], sa[2], 1.0, ts))
    se = stats.loglog_slope_ci(sw.xr, sw.exc) if sw is not None else _nan3()
    add("excess_rate_eps_slope", "Minority excess rate grows like eps_j*^2: log-log slope of the excess rate on "
        "eps_j*/eps_max", "Thm 3.2(a), eq. (15)", "log-log slope 2", se, judge_target(se[1], se[2], 2.0, ts))
    rk = stats.ci(ex.ratio_main)
    add("excess_ratio_d", "Minority excess is about d times the excess of other features: ratio of the minority "
        "excess rate to the others'", "Thm 3.2(a,b), eqs. (15)-(16)", f"about d = {cfg.d}", rk,
        judge_factor(rk[1], rk[2], float(cfg.d), cfg.tol_factor))
    sc, sp = ((stats.loglog_slope_ci(sw.xr, sw.ar_ctl), stats.loglog_slope_ci(sw.xr, sw.ar_pr)) if sw is not None
              else (_nan3(), _nan3()))
    add("ratio_slope_vanilla", f"Without pruning, A_j*/A_maj scales like eps_min/eps_max: {RATIO_SLOPE}",
        "Thm 3.1, eq. (13)", "log-log slope 1", sc, judge_target(sc[1], sc[2], 1.0, ts), depends=THM31)
    add("ratio_slope_pruned", f"With pruning, A_j*/A_maj no longer depends on eps_min/eps_max: {RATIO_SLOPE}",
        "Thm 3.2(c), eq. (18)", "log-log slope 0", sp, judge_target(sp[1], sp[2], 0.0, ts))
    d_ar = stats.ci(R.faithful - R.control)
    add("gain_main", f"Pruning (alpha={cfg.alpha_main:g}) raises A_j*/A_maj at eps_min/eps_max = "
        f"{cfg.eps_min / cfg.eps_max:g}: {GAIN}", "Thm 3.2(c), Remark 3", change, d_ar,
        judge_positive(d_ar[1], d_ar[2], "change", cfg.effect_tol))
    d_top = stats.ci(R.by_alpha[al[-1]] - R.control)
    add("gain_top_alpha", f"Pruning raises A_j*/A_maj at the largest alpha of the grid ({al[-1]:g}): {GAIN}",
        "Thm 3.2(c), Remark 3", change, d_top, judge_positive(d_top[1], d_top[2], "change", cfg.effect_tol))
    F, main = res.features, cfg.alpha_main
    d_al = stats.ci(F[main].aligned.minority - F[0.0].aligned.minority) if main in F else _nan3()
    add("aligned_neurons_gain", f"Pruning adds neurons aligned with j* (cos >= {cfg.cos_threshold:g}): change in "
        "their count per minority feature, pruned − control",
        "Thm 3.2, Remark 3; App. A.2 metric", change, d_al, judge_positive(d_al[1], d_al[2], "change"))
    sf = stats.mean_ci_in(F[main].single_feature.minority, "count") if main in F else _nan3()
    add("singleton_after_pruning", "At least m/d neurons with N_i = {j*} after pruning: their count per minority "
        "feature", "Thm 3.2(d)",
        f">= m/d = {cfg.m / cfg.d:g}", sf, judge_at_least(sf[1], sf[2], cfg.m / cfg.d, "single-feature count"),
        quantity="count")
    gd = stats.ci(res.gap_diff)
    add("lp_gap_mechanism", "Under the mask, 1 - l'_p rises more on pairs containing j*: its rise with j* minus "
        "without",
        "Remark 2, Lemma F.2, eq. (181)", "> 0 (rise with j* - rise without)", gd,
        judge_positive(gd[1], gd[2], "difference"))
    sh = stats.mean_ci_in(res.mask_share, "fraction")
    add("mask_share", "The mask removes minority-aligned neurons: share of the mask on minority-aligned neurons",
        "Remark 1, Thm F.1 (P ⊆ M*_j*)", "share 1", sh,
        judge_share(sh[1], sh[2], cfg.mask_share_min, "share of minority-aligned neurons in the mask"),
        quantity="fraction")
    ri = stats.ci(majority_change_within_bound(al, dg.A_maj, dg.A_maj0, dg.bound))
    add("majority_intact", "Majority amplitude intact for alpha within |M_j*|/m: relative change of A_maj, "
        "pruned/control − 1", "Remark 1", "relative change 0", ri,
        judge_target(ri[1], ri[2], 0.0, cfg.degrade_tol))
    th, bound = stats.mean_ci_in(dg.thr_A, "positive"), float(dg.bound.mean())
    th_v = ((UNTESTED, f"no alpha in the grid lowered A_maj by more than {cfg.degrade_tol:.0%}") if math.isnan(th[0])
            else judge_at_least(th[1], th[2], bound, "first degrading alpha"))
    add("degrade_threshold", f"Majority features degrade only beyond alpha = |M_j*|/m: the first alpha that lowers "
        f"A_maj by more than {cfg.degrade_tol:.0%}", "Remark 1 (implicit bound)",
        f">= |M_j*|/m ≈ {bound:.3g}", th, th_v, quantity="positive")
    dsl = (stats.ci(stats.loglog_slopes(sw.xr, sw.ar_ctl) - stats.loglog_slopes(sw.xr, sw.ar_pr)) if sw is not None
           else _nan3())
    add("slope_difference", f"Pruning removes the dependence on eps_min/eps_max: {RATIO_SLOPE}, control minus "
        "pruned", "Thm 3.1 eq. (13) vs Thm 3.2(c)",
        "slope(control) - slope(pruned) = 1", dsl, judge_target(dsl[1], dsl[2], 1.0, ts))
    d_s = stats.ci(R.from_start - R.control)
    # Algorithm 1 as Section 2 runs it (from t = 0) is the paper's practical claim, not Theorem 3.2's setting
    add("alg1_from_t0", "Algorithm 1 from t = 0 raises A_j*/A_maj over vanilla: change in A_j*/A_maj, pruned − "
        "vanilla", "Algorithm 1, Sec. 2 (K3)",
        "> 0 (pruned - vanilla, same steps)", d_s, judge_positive(d_s[1], d_s[2], "change", cfg.effect_tol),
        depends=("k_poly", "no_memorisation", "lambda_range"))
    return premise_rows(res, cfg) + rows + oracle_rows(res, cfg) + control_rows(res.control, al, cfg)


def control_rows(cs: dict | None, alphas: list, cfg: PruningConfig) -> list:
    """The two verdict rows of the control at alpha_main (paired differences of A_j*/A_maj over replicates), judged
    as directional claims with the smallest effect of interest cfg.effect_tol (rules.judge_positive); marked
    kind="diagnostic" (a control of Remark 2's mechanism, not a claim of the paper). cs: {cell: results.ControlCell};
    None (the control was not run) gives 'not tested'."""
    k = main_index(alphas, cfg)
    specs = [("Magnitude beats random at equal alpha (dynamic masks, alpha={a:g}): difference in A_j*/A_maj, "
              "magnitude − random", "magnitude/dynamic",
              "random/dynamic", "> {tol:g} (magnitude - random)"),
             ("The effect needs a dynamic mask (magnitude masks, alpha={a:g}): difference in A_j*/A_maj, "
              "dynamic − static", "magnitude/dynamic",
              "magnitude/static", "> {tol:g} (dynamic - static)")]
    rows = []
    for (claim, a_cell, b_cell, pred), id in zip(specs, ("control_magnitude_vs_random", "control_dynamic_vs_static"),
                                                 strict=True):
        pred = pred.format(tol=cfg.effect_tol)
        src = "Beyond the paper: random-mask control; Remark 2"
        if cs is None:
            rows.append(
                row(
                    claim=claim.format(a=alphas[k]),
                    source=src,
                    predicted=pred,
                    measured=float("nan"),
                    lo=float("nan"),
                    hi=float("nan"),
                    judged=(UNTESTED, "mask_control=False: the control was not run"),
                    kind="diagnostic",
                    id=id,
                )
            )
            continue
        diff = cs[a_cell].ratio[:, k] - cs[b_cell].ratio[:, k]
        d = stats.ci(diff)
        verdict, rule = judge_positive(d[1], d[2], "paired difference", sesoi=cfg.effect_tol)
        rows.append(row(claim.format(a=alphas[k]), src, pred, *d,
                        (verdict, rule + " (paired over replicates: same checkpoint, data and random draws)"),
                        n=int(diff.numel()), band=cfg.effect_tol, kind="diagnostic", id=id))
    return rows


def majority_change_within_bound(alphas: list, A: torch.Tensor, A0: torch.Tensor, bound: torch.Tensor) -> torch.Tensor:
    """Per replicate, A_maj at the largest grid alpha <= bound over the control's, minus 1 (R,); NaN if none is inside.

    Remark 1: within alpha <= |M_j*|/m every pruned neuron is a minority neuron, so the majority should be intact.
    """
    inside = torch.tensor(alphas).unsqueeze(0) <= bound.unsqueeze(-1) + 1e-9        # (R, k)
    k_in = torch.where(inside.any(-1), inside.float().cumsum(-1).argmax(-1), torch.full(bound.shape, -1))
    return torch.where(k_in >= 0, A.gather(1, k_in.clamp(min=0).unsqueeze(1)).squeeze(1) / A0 - 1.0,
                       torch.full(bound.shape, float("nan")))
