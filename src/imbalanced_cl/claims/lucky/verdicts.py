"""Notebook 02's verdict rows: the census bounds of Lemma B.2, T2 - T1, Lemma 3.2 and the workshop figure."""
from __future__ import annotations

import math

import torch

from ... import stats
from ... import rules
from ... import verdict as V
from ..census.grid import paper_exponents
from ..premise_rows import from_push
from .config import LuckyConfig


# The trained rows (T2 - T1, Lemma 3.2) depend on the population gradient and on λ; the census rows are counts at
# initialisation: they depend on m = d^C_m (true by construction), never on the training gradient.
TRAINED = ("k_poly", "no_memorisation", "lambda_range")
CENSUS = ("m_poly",)
# The rows read off measure_t2's trainings: what Lemma B.1's push re-measures (with_push)
PUSHED = ("t2_minus_t1", "lemma32_lucky_level", "lemma32_ordinary_bound", "top_hit_majority", "top_hit_minority")


def _untested(id: str, claim: str, source: str, predicted: str, why: str) -> "V.Verdict":
    nan = float("nan")
    return V.row(
        claim=claim,
        source=source,
        predicted=predicted,
        measured=nan,
        lo=nan,
        hi=nan,
        judged=(V.UNTESTED, why),
        id=id,
        depends=TRAINED,
    )


def _census(r: "V.Verdict", id: str, cfg: LuckyConfig) -> "V.Verdict":
    """A census row with its id and its one premise (m = d^C_m: the census_premise row)."""
    r.id, r.depends = id, CENSUS
    return r


def census_premise(cfg: LuckyConfig) -> "V.Verdict":
    """The census's premise row: m = d^C_m at every d of the census, true by construction (Lemma B.2)."""
    return V.row(
        claim=f"regime: m = d^C_m neurons in the census (C_m = {cfg.C_m:g} at every d)",
        source="Lemma B.2",
        predicted="m = d^C_m",
        measured=cfg.C_m,
        lo=cfg.C_m,
        hi=cfg.C_m,
        judged=(V.HOLDS, "holds by construction: the census draws m = d^C_m neurons at each d"),
        kind="premise",
        id="m_poly",
        quantity="positive",
        band_words="holds by construction",
    )


def census_rows(cen: dict, fits: dict, cfg: LuckyConfig) -> list["V.Verdict"]:
    """Lemma B.2(c, d) exponent bounds per ratio (tol_omega, tol_ni_init) and Pr[B_i] = 1 of L1967 (pr_b_min)."""
    rows, exps, ds = [], paper_exponents(cfg.census()), cen["ds"]
    for rho, (fl, fo, fnr) in fits.items():
        w1, w2, e = exps[rho]["lucky"], exps[rho]["ordinary"], exps[rho]["Ni"]
        if math.isnan(fl.slope):   # no finite expectation to fit: the claim fails if it asks for growth (w1 > 0)
            nan = float("nan")
            rows.append(
                _census(
                    V.row(
                        claim=f"|M_j*| ≥ Ω(d^ω1), ρ={rho}: exponent of d in E|M_j*|",
                        source="Lemma B.2(c), eqs. 31-32",
                        predicted=f"exponent ≥ {w1:.2f}",
                        measured=nan,
                        lo=nan,
                        hi=nan,
                        judged=(
                            V.FAILS if w1 > 0 else V.UNTESTED,
                            "the exact expectation is 0 (a = c1 log d / d ≥ 1) or unresolved on the whole grid",
                        ),
                        band_lo=w1 - cfg.tol_omega,
                        band_hi=math.inf,
                    ),
                    f"lucky_exponent_{V.id_part(rho)}",
                    cfg,
                )
            )
        else:
            lo = fl.lo if not math.isnan(fl.lo) else fl.slope
            hi = fl.hi if not math.isnan(fl.hi) else fl.slope
            verd, rule = rules.judge_bound(lo, hi, w1, True, cfg.tol_omega)
            rows.append(
                _census(
                    V.row(
                        claim=f"|M_j*| ≥ Ω(d^ω1), ρ={rho}: exponent of d in E|M_j*|",
                        source="Lemma B.2(c), eqs. 31-32",
                        predicted=f"exponent ≥ {w1:.2f}",
                        measured=fl.slope,
                        lo=lo,
                        hi=hi,
                        judged=(verd, "fit of exact E|M_j*| over d; " + rule),
                    ),
                    f"lucky_exponent_{V.id_part(rho)}",
                    cfg,
                )
            )
        verd, rule = rules.judge_bound(fo.lo, fo.hi, w2, False, cfg.tol_omega)
        rows.append(
            _census(
                V.row(
                    claim=f"|M_j| ≤ O(d^ω2), ρ={rho}: exponent of d in E|M_j|",
                    source="Lemma B.2(c)",
                    predicted=f"exponent ≤ {w2:.2f}",
                    measured=fo.slope,
                    lo=fo.lo,
                    hi=fo.hi,
                    judged=(verd, "fit of exact E|M_j| over d; " + rule),
                ),
                f"ordinary_exponent_{V.id_part(rho)}",
                cfg,
            )
        )
        verd, rule = rules.judge_bound(fnr.lo, fnr.hi, e, False, cfg.tol_ni_init)
        rows.append(
            _census(
                V.row(
                    claim=f"|N_i| ≤ O(d^(1-ρ²(1-γ))) at init, ρ={rho}: exponent of d in |N_i|",
                    source="Lemma B.2(d)",
                    predicted=f"exponent ≤ {e:.2f}",
                    measured=fnr.slope,
                    lo=fnr.lo,
                    hi=fnr.hi,
                    judged=(verd, "MC slope over replicates; " + rule),
                ),
                f"ni_init_exponent_{V.id_part(rho)}",
                cfg,
            )
        )
    for k, rho in enumerate(cen["rhos"]):
        if rho >= 1.0:
            continue
        # A closed form, not an estimate: the "interval" is the value itself, so the row cannot be inconclusive.
        pB = cen["exact"]["paper_B"][:, k]
        v = float(pB[-1])
        verd, rule = rules.judge_share(v, v, cfg.pr_b_min, f"closed form (1-p2)^(d-1) at d={ds[-1]}")
        rows.append(V.row(claim=f"Pr[B_i] = (1-p2)^(d-1) = 1 (ρ={rho}): its value at the largest d",
                              source="proof of Lemma B.2(c), App. G.3", predicted="1 for all d",
                              measured=v, lo=v, hi=v, judged=(verd, rule + f"; exact Pr[B_i] at d={ds[-1]}: "
                              f"{float(cen['exact']['B'][-1, k]):.3g}; (1-p2)^(d-1) at d={ds[0]}: {float(pB[0]):.3g}"),
                              id=f"pr_b_{V.id_part(rho)}", quantity="fraction"))
    return rows + [census_premise(cfg)]


def verdict_rows(results: dict, cfg: LuckyConfig) -> list["V.Verdict"]:
    """Notebook 02's verdicts. results: 'census' (run_census), 'census_fits' (census_fits), 't2' (t2_grid),
    'lemma32' (lemma32_run) and 'workshop' (workshop_figure).
    Tolerances from cfg (tol_*, pr_b_min, forall_min, lemma_C)."""
    rows = census_rows(results["census"], results["census_fits"], cfg)
    f = results["t2"]["fit"]
    verd, rule = rules.judge_target(f.lo, f.hi, 1.0, cfg.tol_t2)
    rows.append(
        V.row(
            claim="T2 - T1 ∝ 1/eps_max: log-log slope of T2 - T1 on 1/eps_max",
            source="Thm D.1, eq. (60)",
            predicted="slope 1",
            measured=f.slope,
            lo=f.lo,
            hi=f.hi,
            judged=(verd, rule + f"; T2 rule: ||w||² ≥ {cfg.t2_factor or cfg.d}·||w(T1)||² (eq. 61)"),
            id="t2_minus_t1",
            depends=TRAINED,
        )
    )
    L = results["lemma32"]
    a, b = L["a_ratio"], L["b_ratio"]
    rows.append(V.count_row("lucky neurons reach |<w,M_j>|² ≥ 2(eps_j/eps_max)||w(T1)||² at T2: share of lucky pairs",
                            "Lemma 3.2(a), eq. (9)", "fraction 1", float((a >= 1).sum()), a.size, cfg.forall_min,
                            f"; {a.size} lucky (i,j) pairs",
                            id="lemma32_lucky_level", depends=TRAINED)
                if a.size else
                _untested("lemma32_lucky_level", "lucky neurons reach the eq. (9) level at T2", "Lemma 3.2(a), eq. (9)",
                          "fraction 1", "no lucky neuron at this (d, m, ρ)"))
    rows.append(V.count_row(f"ordinary ≤ C · lucky at T2 (C = {cfg.lemma_C:g}): share of features",
                            "Lemma 3.2(b), eq. (10)",
                            "fraction 1", float((b <= cfg.lemma_C).sum()), b.size, cfg.forall_min,
                            id="lemma32_ordinary_bound", depends=TRAINED) if b.size else
                _untested("lemma32_ordinary_bound", "ordinary ≤ C · lucky at T2", "Lemma 3.2(b), eq. (10)",
                          "fraction 1", "no feature with a lucky neuron"))
    for name, arr in (("majority", L["top_hit_major"]), ("minority", L["top_hit_minor"])):
        if arr.size >= 2:
            mu, lo, hi = stats.mean_ci_in(torch.tensor(arr, dtype=torch.float64), "fraction")
            verd, rule = rules.judge_positive(lo - L["chance"], hi - L["chance"], "excess over chance 1/m")
            rule = rules.Rule(rule, (L["chance"], math.inf))  # the band on the share shown: above chance
            rows.append(
                V.row(
                    claim=f"the luckiest-at-init neuron is the {name} feature's top neuron at T2: share of features",
                    source="Remark 2; Thm D.1(c)",
                    predicted="well above chance",
                    measured=mu,
                    lo=lo,
                    hi=hi,
                    judged=(verd, rule + " (share of features; 95% interval on the logit scale)"),
                    id=f"top_hit_{name}",
                    depends=TRAINED,
                    quantity="fraction",
                )
            )
    mu, lo, hi = results["workshop"]["gap"]
    verd, rule = rules.judge_positive(lo, hi, "majority − minority best cos²")
    rows.append(
        V.row(
            claim="majority atoms are learned better than minority ones (Fig. 1): majority − minority best cos²",
            source="workshop §4, Fig. 1",
            predicted="majority best cos² > minority",
            measured=mu,
            lo=lo,
            hi=hi,
            judged=(verd, rule + " (95% interval on Fisher's z scale)"),
            id="workshop_fig1_gap",
            quantity="cosine",
        )
    )
    return rows


def with_push(rows: list["V.Verdict"], results: dict, push: dict | None, cfg: LuckyConfig) -> list["V.Verdict"]:
    """`rows` with Lemma B.1 tested by its effect on the trained rows (premise_rows.by_effect): `push` is measure_push's
    output, the same trainings with 4 × K pairs a step, judged by the same rules. A row that moves less than its own
    tolerance (T2 - T1: tol_t2; the shares, whose bands have an open end: tol_share) meets K = poly(d1) for that row;
    the k_poly row stays, as information. push None (a record made before notebook 02 measured its push) leaves the
    rows gated by the k_poly row, as before."""
    if push is None:
        return rows
    have = {r.id for r in rows}
    shares = {i: cfg.tol_share for i in PUSHED if i != "t2_minus_t1"}   # open-ended bands: "at ≥ 0.9", "above chance"
    def rebuild(c):
        return verdict_rows({**results, "t2": push["t2"], "lemma32": push["lemma32"]}, c)
    return from_push(rows, push["n_pairs"], cfg, rebuild, tuple(i for i in PUSHED if i in have), shares)
