"""A notebook's premise rows, each with its premise's id (premises.CONDITIONS), judged from sim/regime.py's
measurements (sim/ measures; judging lives here, in the verdict layer, so a moved threshold leaves records valid).

Every row gets the id of the condition it checks, so a claim row can depend on it by id (verdict.gate). The settings
(steps, λ, σ_ξ²) are exact numbers judged against their band (verdict.premise_value). Two rows are special:
  * the feature-span share is a prediction of Theorem 3.1 (its β bound), not a premise: it is judged as a claim row
    (kind `share_kind`) and never gates; its interval stays in [0, 1] (stats.mean_ci_in);
  * Lemma B.1's gradient deviation is a positive quantity, so its interval is on the log scale; the row also states
    how its verdict moves with the exponent of poly(d1), which the paper leaves open (the book's choice is
    regime_grad_poly): the verdict at exponent 1/2, and the K at which the bound would be met.
τ = polylog(d) and η = 1/poly(d) are asymptotic statements: one run at one d cannot test them, so their rows report
the value and read "not tested" (a premise that is not tested gates nothing).

Lemma B.1's K = poly(d1) is tested by its effect on each row (push_k, by_effect; premises.ASYMPTOTIC): the row is
re-measured with 4 × K pairs per step, and where it moves by less than its own tolerance the premise is met for that
row; the fixed-exponent row (k_poly) stays, as information.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

from .. import premises as P
from .. import stats
from .. import rules
from .. import verdict as V
from ..sim import regime
from ..sim.config import SimConfig

SENSITIVITY_POLY = 0.5      # the other exponent the gradient row reports (d1^-1/2: the weakest bound a K ~ d1 meets)

# The regime rows a notebook may ask for, by key (premises.REGIME_IDS names the condition each checks)
ROWS = ("share", "gradient", "loss", "window", "lambda", "sigma")

DEAD = ("the network is dead: every neuron's BReLU gate is closed on every token, so the gradient is exactly 0 "
        "and the weights no longer move; nothing about the regime is measured")
FRESH_LOSS = ("not tested under fresh sampling: every step draws new pairs, so no pair is seen twice and nothing can "
              "be memorised (the check could not fail); it applies to sampling='fixed', which the regime page runs")
GRADIENT_SCOPE = ("; what it shows: one batch's deviation from the population gradient at the final weights, "
                  "about K^-1/2 under either sampling; what it cannot show: whether errors add up over steps (a "
                  "fixed set repeats the same error every step), which the share and held-out rows reveal")


def _share_row(reg: regime.Regime, cfg: SimConfig, kind: str) -> V.Verdict:
    """Theorem 3.1's prediction that the weights lie in the feature span, judged as a claim row."""
    m, lo, hi = stats.mean_ci_in(reg.share, "fraction")
    verdict, rule = rules.judge_bound(lo, hi, cfg.regime_share_min, True, 0.0)
    return V.row(
        claim="weight lies in the feature span (share at the end)",
        source="Thm 3.1, β bound (eq. 13)",
        predicted=f"→ 1; holds at ≥ {cfg.regime_share_min:g}",
        measured=m,
        lo=lo,
        hi=hi,
        judged=(verdict, rule + " (95% interval on the logit scale)"),
        n=int(reg.share.numel()),
        kind=kind,
        id="feature_span",
        quantity="fraction",
    )


def _gradient_row(reg: regime.Regime, cfg: SimConfig) -> V.Verdict:
    """Lemma B.1: ||g_K - g_pop|| / ||w|| against d1^-p, with the verdict's sensitivity to p."""
    m, lo, hi = stats.mean_ci_in(reg.grad_dev, "positive")
    p = cfg.regime_grad_poly
    bound = cfg.d1 ** -p
    verdict, rule = rules.judge_bound(lo, hi, bound, False, 0.0)
    half = cfg.d1 ** -SENSITIVITY_POLY
    v_half = rules.judge_bound(lo, hi, half, False, 0.0)[0]
    k_need = cfg.n_pairs * (m / bound) ** 2 if m > bound else float(cfg.n_pairs)
    sens = (f"the exponent p of poly(d1) is the book's choice (p = {p:g}); at p = {SENSITIVITY_POLY:g} the bound is "
            f"{half:.3g} and this row {v_half}; at p = {p:g} the bound needs K ≈ {k_need:,.0f} pairs per step "
            f"(now {cfg.n_pairs}; the deviation falls like K^-1/2)")
    return V.row(
        claim=f"regime: K-pair gradient tracks the population gradient ({reg.sampling} pairs): "
        "||g_K − g_pop|| / ||w||",
        source="Lemma B.1",
        predicted=f"||g_K − g_pop|| / ||w|| ≤ d1^-{p:g} = {bound:.3g} (relative to ||g_pop||: "
        f"{float(reg.grad_rel.mean()):.2g})",
        measured=m,
        lo=lo,
        hi=hi,
        judged=(verdict, rule + " (95% interval on the log scale)" + GRADIENT_SCOPE),
        n=int(reg.grad_dev.numel()),
        kind="premise",
        id="k_poly",
        quantity="positive",
        sensitivity=sens,
    )


def _rate_rows(cfg: SimConfig) -> list[V.Verdict]:
    """τ = polylog(d) and η = 1/poly(d): reported with their exponents, "not tested" (asymptotic in d)."""
    why = ("an asymptotic statement about how it scales with d: one run at one d cannot test it, so the value is "
           "reported and gates nothing")
    tau_exp = math.log(cfg.tau) / math.log(math.log(cfg.d)) if cfg.d > 2 else float("nan")
    eta_exp = math.log(1.0 / cfg.lr) / math.log(cfg.d)
    return [
        V.row(
            claim=f"regime: temperature τ = {cfg.tau:g} = (log d)^{tau_exp:.2g}",
            source=P.BY_ID["tau_polylog"].source,
            predicted="τ = polylog(d)",
            measured=cfg.tau,
            lo=cfg.tau,
            hi=cfg.tau,
            judged=(V.UNTESTED, why),
            kind="premise",
            id="tau_polylog",
            quantity="positive",
        ),
        V.row(
            claim=f"regime: learning rate η = {cfg.lr:g} = d^-{eta_exp:.2g}",
            source=P.BY_ID["eta_poly"].source,
            predicted="η = 1/poly(d)",
            measured=cfg.lr,
            lo=cfg.lr,
            hi=cfg.lr,
            judged=(V.UNTESTED, why),
            kind="premise",
            id="eta_poly",
            quantity="positive",
        ),
    ]


def _dead_row(key: str, kind: str) -> V.Verdict:
    """A regime row of a dead network, named by its condition: "not tested", and why (DEAD)."""
    cid = P.REGIME_IDS[key]
    return V.row(f"regime: {P.name(cid)} (the network is dead)", P.condition(cid).source, "an active network",
                 math.nan, math.nan, math.nan, (V.UNTESTED, DEAD), kind=kind, id=cid)


LOSS = ("regime: training InfoNCE equals held-out InfoNCE (no memorised pairs): relative gap, (held-out − training "
        "InfoNCE) / held-out")


def _loss_row(reg: regime.Regime, cfg: SimConfig) -> V.Verdict:
    """No memorised pairs (Lemma B.1's population loss): the relative train/held-out InfoNCE gap, under a fixed set
    of pairs; "not tested" under fresh pairs, where it could not fail (FRESH_LOSS)."""
    source = "Lemma B.1 (population loss)"
    if reg.sampling == "fresh":
        return V.row(LOSS, source, "a check for sampling='fixed'", math.nan, math.nan, math.nan,
                     (V.UNTESTED, FRESH_LOSS), kind="premise", id="no_memorisation")
    gap = (reg.loss_heldout - reg.loss_train) / reg.loss_heldout.abs()
    m, lo, hi = stats.ci(gap.double())
    return V.row(LOSS, source, f"relative gap ≤ {cfg.regime_loss_gap_max:g} (train {float(reg.loss_train.mean()):.3g}, "
                 f"held-out {float(reg.loss_heldout.mean()):.3g})", m, lo, hi,
                 rules.judge_bound(lo, hi, cfg.regime_loss_gap_max, False, 0.0), n=int(reg.share.numel()),
                 kind="premise", id="no_memorisation")


# The premises on the run's settings: each one exact number judged against its band (verdict.premise_value)
def _window_row(reg: regime.Regime, cfg: SimConfig) -> V.Verdict:
    """The run's steps inside Theorem 3.1's window [d^1.01/η, d^1.99/η]."""
    t3, t4 = reg.window
    return V.premise_value("step_window", "regime: steps inside Theorem 3.1's window [d^1.01/η, d^1.99/η]", "Thm 3.1",
                           f"[{t3:.0f}, {t4:.0f}]", float(reg.steps),
                           "holds if the run's step count lies in the window", band=(t3, t4), quantity="positive")


def _lambda_row(reg: regime.Regime, cfg: SimConfig) -> V.Verdict:
    """The weight decay λ inside the proof's range [d^-1.49, d^-1.01] (App. E.3)."""
    lo, hi = reg.lam_range
    return V.premise_value("lambda_range", "regime: weight decay λ inside the proof's range [d^-1.49, d^-1.01]",
                           "App. E.3 (proof of Thm E.1)", f"[{lo:.2g}, {hi:.2g}]", cfg.weight_decay,
                           "holds if λ lies in the range", band=(lo, hi), quantity="positive")


def _sigma_row(reg: regime.Regime, cfg: SimConfig) -> V.Verdict:
    """σ_ξ² on Assumption 3.3's scale √(log d)/d, as a ratio: an order-of-magnitude check (constants are free)."""
    return V.premise_value("noise_scale", "regime: noise σ_ξ² on Assumption 3.3's scale √(log d)/d (this book follows "
                           "App. A.2's σ): ratio σ_ξ² / (√(log d)/d)", "Assumption 3.3", "ratio Θ(1)", reg.sigma_ratio,
                           "holds if the ratio lies within 1 ± 0.9 (an order-of-magnitude check; constants are free)",
                           band=(0.1, 1.9), quantity="positive")


PREMISE_ROWS = {"gradient": _gradient_row, "loss": _loss_row, "window": _window_row, "lambda": _lambda_row,
                "sigma": _sigma_row}     # ROWS but the share, which is a prediction


def rows(reg: regime.Regime, cfg: SimConfig, which: tuple = ROWS, share_kind: str = "diagnostic",
         rates: bool = True) -> list[V.Verdict]:
    """The premise rows of `which` (ROWS keys), each with its condition's id (premises.REGIME_IDS); the feature-span
    share as a prediction row of kind `share_kind` ("paper" where it is the notebook's claim, else "diagnostic");
    with rates, the τ and η rows. A dead network's rows are "not tested" and say so, with their ids."""
    if reg.all_dead:
        out = [_dead_row(key, share_kind if key == "share" else "premise") for key in which]
    else:
        out = [_share_row(reg, cfg, share_kind) if key == "share" else PREMISE_ROWS[key](reg, cfg) for key in which]
    return out + (_rate_rows(cfg) if rates else [])


def tolerance(r: V.Verdict) -> float:
    """A row's own tolerance: the half-width of the band it is judged against (both ends finite), else NaN."""
    lo, hi = r.band_lo, r.band_hi
    return (hi - lo) / 2 if math.isfinite(lo) and math.isfinite(hi) and hi > lo else math.nan


def by_effect(rows: list[V.Verdict], pushed: list[V.Verdict], premise: str, ids: tuple,
              tolerances: dict[str, float] | None = None) -> list[V.Verdict]:
    """`rows`, with the asymptotic `premise` tested by its effect on each row of `ids`: `pushed` holds the same rows
    re-measured with the premise's quantity pushed (premises.EFFECTS). The premise is met for a row when the whole
    interval of the change lies within ± the row's tolerance (an equivalence test: half-width √(h² + h'²) from the
    two rows' own intervals); the row's premise text states the change either way. The tolerance is the half-width of
    the row's band, or, for a row whose band has an open end (a share judged "at ≥ 0.9"), the one `tolerances` names
    for its id, fixed before the run. An unknown id, a premise with no effect test, or a row that does not depend on
    it is a VerdictError naming it."""
    tolerances = tolerances or {}
    e = P.EFFECTS.get(premise)
    if e is None or not e.push:
        raise V.VerdictError(f"premise {premise!r} has no effect test (premises.ASYMPTOTIC)")
    before, after = {r.id: r for r in rows}, {r.id: r for r in pushed}
    for i in ids:
        if i not in before or i not in after:
            raise V.VerdictError(f"effect test of {premise}: unknown row id {i!r}")
        if premise not in before[i].depends:
            raise V.VerdictError(f"effect test of {premise}: row {i!r} does not depend on it")
    out = []
    for r in rows:
        if r.id in ids:
            q, tol = after[r.id], tolerances.get(r.id, tolerance(r))
            diff = q.measured - r.measured
            hw = math.hypot((r.hi - r.lo) / 2, (q.hi - q.lo) / 2)
            ok = math.isfinite(tol) and rules.judge_target(diff - hw, diff + hw, 0.0, tol)[0] == V.HOLDS
            text = f"{P.name(premise)} by its effect: " + _moved(e.factor, diff, hw, tol, ok)
            r = replace(r, premise="; ".join(x for x in (r.premise, text) if x),
                        met_by_effect=r.met_by_effect + ((premise,) if ok else ()))
        out.append(r)
    return out


def _moved(factor: float, diff: float, hw: float, tol: float, ok: bool) -> str:
    """How far the push moved a row, against its tolerance, in words."""
    if not (math.isfinite(diff) and math.isfinite(hw)):
        return "the row has no value in one of the two runs (not tested there), so its change cannot be shown"
    held = (f"within its tolerance ±{tol:.3g}: met for this row" if ok else f"not shown within ±{tol:.3g}") \
        if math.isfinite(tol) else "its band has an open end, so no tolerance to hold the change to: not shown"
    return f"with {factor:g} × K pairs the row moved by {diff:+.3g} [{diff - hw:+.3g}, {diff + hw:+.3g}], " + held


def from_push(rows: list[V.Verdict], n_pairs: int, cfg: SimConfig, rebuild: Callable[[SimConfig], list[V.Verdict]],
              ids: tuple, tolerances: dict[str, float] | None = None) -> list[V.Verdict]:
    """Lemma B.1 by its effect (by_effect), the one path every notebook takes: a push measured with `n_pairs` pairs a
    step is refused unless that is the K the effect test asks for (premises.check_push); `rebuild` turns the config at
    that K into the pushed rows (judging what was measured, or measuring it); the rows of `ids` the push has are held
    to their tolerances."""
    P.check_push(n_pairs, P.push_pairs(cfg.n_pairs))
    pushed = rebuild(cfg.replace(n_pairs=n_pairs))
    have = {r.id for r in pushed}
    return by_effect(rows, pushed, "k_poly", tuple(i for i in ids if i in have), tolerances)


def push_k(measure: Callable[[SimConfig], list[V.Verdict]], cfg: SimConfig, rows: list[V.Verdict],
           ids: tuple) -> list[V.Verdict]:
    """Lemma B.1 by its effect (from_push): the rows `ids` re-measured by `measure` at cfg with K × the factor of
    premises.EFFECTS["k_poly"] pairs per step, all else equal (same seed, so the same dictionary and initial
    weights)."""
    return from_push(rows, P.push_pairs(cfg.n_pairs), cfg, measure, ids)
