"""Notebook 10's figures: the premise map as heat maps with the cells that meet every premise outlined, the star
cells, the pruned arms side by side (Algorithm 1's mask and the oracle masks), convergence and T1 per cell, and the
closed forms along d (Stage-1 rates against the lambda range, neurons needed for a lucky minority neuron)."""
from __future__ import annotations

import math

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.patches import Rectangle

from ...claims.premise_map import (ARM_TEXT, ARMS, LAMBDAS, CellResult, Conclusion, PremiseMapConfig, arm_ok, case_id,
                                  eq33_t1, judged_arm, lambda_value)
from ...claims.premise_map.verdicts import CLAIM, GAIN
from ...verdict import Verdict
from ..pages.premise_matrix import MatrixTable
from ..pages.render import esc, header_cells, row


def _counts(res: CellResult) -> tuple[int, int, list[str]]:
    """(required premises met, required premises, short names of the failed ones); predictions never count."""
    req = [p for p in res.premises.values() if p.required and not p.prediction]
    failed = [p.short for p in req if not p.holds]
    return len(req) - len(failed), len(req), failed


def map_figure(results: list[CellResult], cfg: PremiseMapConfig, marks: dict | None = None):
    """One heat map per ratio: rows d, columns lambda; colour = share of required premises met, text = the failed
    premises and the cell's verdict; a thick outline where every premise holds. `marks` maps a label to
    (d, lambda name, ratio) for the notebooks' defaults and App. A.2 (drawn as a corner marker where on the grid)."""
    plane = [r for r in results if r.cell.axis == "plane"]
    ratios = sorted({r.cell.ratio for r in plane})
    ds = sorted({r.cell.d for r in plane})
    lams = [lam for lam in LAMBDAS if any(r.cell.lam_name == lam for r in plane)]
    fig, axes = plt.subplots(1, len(ratios), figsize=(4.6 * len(ratios) + 0.8, 1.3 * len(ds) + 1.6), squeeze=False)
    for ax, ratio in zip(axes[0], ratios, strict=True):
        grid = np.full((len(ds), len(lams)), np.nan)
        for r in plane:
            if r.cell.ratio == ratio:
                _draw_cell(ax, grid, r, ds.index(r.cell.d), lams.index(r.cell.lam_name), cfg)
        im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1, aspect="auto")
        _draw_marks(ax, marks or {}, ratio, ds, lams)
        ax.set_xticks(range(len(lams)), lams)
        ax.set_yticks(range(len(ds)), [f"d={d}" for d in ds])
        ax.set_xlabel("weight decay λ (book's, or bottom / mid / top of [d^-1.49, d^-1.01])")
        ax.set_title(f"ε_min/ε_max = {ratio:g}")
    fig.colorbar(im, ax=axes[0].tolist(), label="share of required premises met", shrink=0.8)
    fig.suptitle("Premise map: where Theorems 3.1 and 3.2 apply (outlined: every premise holds)", fontsize="medium")
    return fig


def _draw_cell(ax, grid: np.ndarray, r: CellResult, i: int, j: int, cfg: PremiseMapConfig) -> None:
    """One cell of a heat map at row i, column j: its share met (into grid), its text, its outline if all hold."""
    ok, n, failed = _counts(r)
    grid[i, j] = ok / n
    verdict = judged_arm(r, 'alg1', cfg).verdict
    text = ("all premises" if not failed
            else "fails: " + "\n".join(failed[:3]) + ("…" if len(failed) > 3 else ""))
    where = "recorded\n" if r.source == "recorded" else "" if r.ran else "no record: closed forms only\n"
    ax.text(j, i, f"{where}{ok}/{n} met\n{text}\n[{verdict}]", ha="center", va="center", fontsize="x-small")
    if not failed and r.ran:
        ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, lw=3, ec="black"))


def _draw_marks(ax, marks: dict, ratio: float, ds: list, lams: list) -> None:
    """The labelled corner markers (notebook defaults, App. A.2) that fall on this ratio's grid."""
    for label, (d, lam, rr) in marks.items():
        if rr == ratio and d in ds and lam in lams:
            ax.plot(lams.index(lam) - 0.42, ds.index(d) - 0.38, marker="*", ms=9, color="navy")
            ax.annotate(label, (lams.index(lam) - 0.42, ds.index(d) - 0.38), xytext=(4, -2),
                        textcoords="offset points", fontsize="x-small", color="navy")


def star_table(results: list[CellResult], cfg: PremiseMapConfig) -> list[dict]:
    """Rows for the star cells (and the centre cell they vary): label, premises met, failed, gain and verdict."""
    out = []
    for r in results:
        if r.cell.axis == "plane" and not (r.cell.d == cfg.ds[0] and r.cell.lam_name == "mid"
                                           and r.cell.ratio == max(cfg.ratios)):
            continue
        ok, n, failed = _counts(r)
        m, lo, hi = r.gain_ci()
        out.append({"cell": ("centre: " if r.cell.axis == "plane" else f"{r.cell.axis}: ") + r.cell.label,
                    "premises met": f"{ok}/{n}", "failed": ", ".join(failed) or "none",
                    "Algorithm 1's gain in A_j*/A_maj [95%]": f"{m:+.3g} [{lo:+.3g}, {hi:+.3g}]",
                    "verdict": judged_arm(r, 'alg1', cfg).verdict, "seconds": round(r.seconds, 1)})
    return out


def closed_forms_figure(rates: list[dict], cfg: PremiseMapConfig):
    """Left: Stage-1 growth gain*kappa_j of majority and minority features along d, against the lambda range (band)
    and the book's lambda; a minority coefficient grows where its curve lies above lambda. Right: neurons needed for
    one minority lucky neuron (Def. B.1) along d, against the map's m = m_over_d * d."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 3.8))
    ds = sorted({r["d"] for r in rates})
    _growth_panel(a, rates, ds, cfg)
    _neurons_panel(b, rates, ds, cfg)
    fig.tight_layout()
    return fig


def _growth_panel(a, rates: list[dict], ds: list, cfg: PremiseMapConfig) -> None:
    """The left panel: Stage-1 growth of the minority (per ratio) and majority features against the lambda range."""
    first = [next(r for r in rates if r["d"] == d) for d in ds]
    a.fill_between(ds, [r["lambda_bottom"] for r in first], [r["lambda_top"] for r in first], color="0.85",
                   label="λ range [d^-1.49, d^-1.01]")
    a.plot(ds, [r["lambda_book"] for r in first], "k--", lw=1, label=f"book's λ = {cfg.weight_decay:g}")
    for ratio in sorted({r["ratio"] for r in rates}):
        rows = [r for r in rates if r["ratio"] == ratio]
        a.plot([r["d"] for r in rows], [r["growth_min"] for r in rows], "o-", label=f"minority, ρ = {ratio:g}")
    a.plot(ds, [r["growth_max"] for r in first], "s-", color="black", label="majority")
    a.set_xscale("log")
    a.set_yscale("log")
    a.set_xlabel("d")
    a.set_ylabel("Stage-1 growth gain·κ_j per unit η")
    a.legend()
    a.set_title("Does a minority coefficient outgrow the decay?", fontsize="small")


def _neurons_panel(b, rates: list[dict], ds: list, cfg: PremiseMapConfig) -> None:
    """The right panel: neurons needed for one minority lucky neuron per ratio ('none' where none can be), and m."""
    for ratio in sorted({r["ratio"] for r in rates}):
        rows = [r for r in rates if r["ratio"] == ratio]
        y = [r["m_needed"] if math.isfinite(r["m_needed"]) else np.nan for r in rows]
        b.plot([r["d"] for r in rows], y, "o-", label=f"ρ = {ratio:g}")
        for r in rows:
            if not math.isfinite(r["m_needed"]):
                b.annotate("none", (r["d"], 1), fontsize="x-small", rotation=90, ha="center")
    b.plot(ds, [cfg.m_over_d * d for d in ds], "k--", lw=1, label=f"this map: m = {cfg.m_over_d:g} d")
    b.set_xscale("log")
    b.set_yscale("log")
    b.set_xlabel("d")
    b.set_ylabel("m for E|M*_j*| = 1")
    b.set_title("Neurons needed for one minority lucky neuron ('none': Def. B.1's set is empty)", fontsize="small")
    b.legend()


def table(rows: list[dict]):
    """An HTML table of plain rows (a list of dicts with the same keys), for display in the notebook."""
    from IPython.display import HTML
    if not rows:
        return HTML("<p>(no rows)</p>")
    head = header_cells([esc(k) for k in rows[0]], scoped=False)
    body = "".join(row([esc(v) for v in r.values()]) for r in rows)
    return HTML(f'<table class="premise-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>')


def notebook_marks(cfg: PremiseMapConfig, root=None) -> dict:
    """{label: (d, lambda name, ratio)} for the claim notebooks' defaults (01-05) on the map's axes, grouped where
    they coincide ("01-04 defaults"); lambda is "book" when it equals the map's, else the nearest named lambda."""
    from ..build.cells import config_class
    from ..build.profiles import repo_root
    from ..build.runner import toc_notebooks
    at: dict = {}
    for nb in toc_notebooks(root or repo_root()):
        cls = config_class(nb)
        if cls is None or nb.stem[:2] not in ("01", "02", "03", "04", "05"):
            continue
        c = cls()
        if not all(hasattr(c, k) for k in ("d", "weight_decay", "eps_min", "eps_max")):
            continue
        lam = "book" if c.weight_decay == cfg.weight_decay else min(
            LAMBDAS[1:], key=lambda n: abs(math.log(lambda_value(n, c.d, 1.0) / c.weight_decay)))
        at.setdefault((c.d, lam, round(c.eps_min / c.eps_max, 3)), []).append(nb.stem[:2])
    return {f"{'-'.join([ids[0], ids[-1]]) if len(ids) > 1 else ids[0]} default{'s' if len(ids) > 1 else ''}": key
            for key, ids in at.items()}


def arms_table(results: list[CellResult], cfg: PremiseMapConfig) -> list[dict]:
    """One row per (run cell, arm): pruned neurons per replicate, App. F.4's T against the branch length, Remark 1's
    bounds, the gain in A_j*/A_maj over the control [95%] and its verdict (with the measured one where premises
    fail), and the arm's final loss and l'_p."""
    out = []
    for r in results:
        for name in ARMS:
            a = r.arms.get(name)
            if a is None:
                continue
            m, lo, hi = a.gain_ci()
            v = judged_arm(r, name, cfg)
            out.append({"cell": r.cell.label, "arm": name, "pruned per replicate": ", ".join(f"{x:g}" for x in
                                                                                         a.size.tolist()),
                        "paper's T": "∞" if not math.isfinite(a.T) else f"{a.T:.0f}",
                        "branch": r.extra.get("branch"),
                        "strict / extended bound": f"{'✓' if a.premises['bound'].holds else '✗'} / "
                        f"{'✓' if a.premises['bound_ext'].holds else '✗'}",
                        "gain [95%]": f"{m:+.3g} [{lo:+.3g}, {hi:+.3g}]",
                        "verdict": v.verdict + (f" (measured: {v.would_be})" if v.would_be else ""),
                        "loss / ln K": f"{a.loss / r.extra['ln_K']:.3f}", "l'_p": f"{a.pos_prob:.3g}"})
    return out


def convergence_table(results: list[CellResult], cfg: PremiseMapConfig) -> list[dict]:
    """One row per run cell: the branch point T4 and the convergence premise there (loss against ln K, l'_p, the
    change over the last block), the bias onset step, and T1 measured (the eq. (34) crossing) against eq. (33)'s and
    the workshop's T1 with unit constants."""
    out = []
    for r in results:
        if not r.ran:
            continue
        c, e = r.premises["convergence"], r.extra
        ws = math.ceil(r.cell.d * math.log(r.cell.d) / (r.cell.cfg.lr * math.log(math.log(r.cell.d))))
        onset = ("never" if r.cell.cfg.bias == "none" else "at the crossing" if r.cell.cfg.t1_onset_step < 0
                 else str(r.cell.cfg.t1_onset_step))
        out.append({"cell": r.cell.label, "T4 (branch point)": e["T4"],
                    "loss / ln K at T4": f"{e['loss_T4'] / e['ln_K']:.3f}",
                    "l'_p at T4": f"{e['lp_T4']:.3g}", "converged": "yes" if c.holds else "no",
                    "bias onset": r.cell.bias_onset, "bias const": f"{r.cell.bias_coef:g}",
                    "bias on from step": onset,
                    "T1 measured (eq. (34)), per replicate": ", ".join(str(t) for t in e["T1"]),
                    "eq. (33) T1": eq33_t1(r.cell.d, r.cell.cfg.d1, r.cell.cfg.lr), "workshop T1": ws})
    return out


def ceiling_table(ceilings) -> list[dict]:
    """One row per d the map trained: the K Lemma B.1 needs there, the l'_p ceiling of the encoder with b = 0 at that
    K (claims/premise_map/ceiling.py), what convergence needs, the best l'_p the trained cells reached, and whether
    the two premises exclude each other."""
    def num(x):
        return "not computed" if math.isnan(x) else f"{x:.3f}"
    return [{"d": c.d, "K Lemma B.1 needs": f"{c.K:,}", "l'_p ceiling at that K (b = 0, any scale)": num(c.limit),
             "convergence needs l'_p": f"≥ {c.need:.2f}",
             "best l'_p at T4, trained cells": "none trained" if math.isnan(c.measured) else f"{c.measured:.3f}",
             "premises conflict": "not known" if math.isnan(c.limit) else "yes" if c.conflict else "no"}
            for c in ceilings]


def arms_figure(results: list[CellResult], cfg: PremiseMapConfig):
    """The gain in A_j*/A_maj over the control per run cell (rows) and arm (colours), mean and 95% interval:
    Algorithm 1's magnitude mask beside the two oracle masks; hollow markers where a premise fails."""
    ran = [r for r in results if r.ran]
    fig, ax = plt.subplots(figsize=(7.5, 0.42 * len(ran) + 1.4))
    seen = set()
    for k, name in enumerate(ARMS):
        for i, r in enumerate(ran):
            a = r.arms.get(name)
            if a is None:
                continue
            m, lo, hi = a.gain_ci()
            y = i + (k - 2) * 0.14
            ok = r.required_ok() and arm_ok(a)
            ax.errorbar(m, y, xerr=[[max(m - lo, 0)], [max(hi - m, 0)]], fmt="o", color=f"C{k}", ms=4,
                        mfc=f"C{k}" if ok else "white", label=None if name in seen else name)
            seen.add(name)
    ax.axvline(0, color="grey", lw=0.8)
    ax.axvline(cfg.effect_tol, color="grey", ls=":", lw=0.8)
    ax.set_yticks(range(len(ran)), [r.cell.label for r in ran])
    ax.invert_yaxis()
    ax.set_xlabel("gain in A_j*/A_maj over the control (pruned − control)")
    ax.legend(loc="best")
    ax.set_title("pruned arms per cell\n(hollow: a premise of the cell or the arm fails)")
    fig.tight_layout()
    return fig


def arm_case(r: Verdict) -> tuple[str, str] | None:
    """(cell case, arm) of an arm's gain row (id "gain_<arm>_<case>"); None for any other row."""
    for arm in sorted(ARMS, key=len, reverse=True):           # "alg1_strict" before "alg1"
        if r.id.startswith(f"gain_{arm}_"):
            return r.id.removeprefix(f"gain_{arm}_"), arm
    return None


def verdict_table(rows: list[Verdict], results: list[CellResult], conc: Conclusion) -> MatrixTable:
    """The notebook's verdict table: the map's own rows (the predictions, claim 4 decided on the map) as table rows,
    each cell's gain per arm as one cell × arm matrix, and the premise rows as one cell × premise matrix, each
    premise by its short name (the table of premises above names them in full). The claim-4 row shows what decided
    it; its full rule is the conclusion's reasoning, on the page above it."""
    labels = {p.cid: p.short for r in results for p in r.premises.values()}
    labels |= {q.cid: q.short for r in results for a in r.arms.values() for q in a.premises.values()}
    labels |= {case_id(r): r.cell.label for r in results} | {"map": "the map as a whole"}
    rule = f"answer ({conc.kind}), decided by: {conc.fact}. The conclusion above gives the reasoning, with numbers"
    return MatrixTable("10_premise_map", rows, labels=labels, matrix=arm_case, statement=f"{CLAIM}: {GAIN}",
                       rules={"claim4_map": rule}, columns=ARM_TEXT)


def conclusion_html(conc: Conclusion):
    """The conclusion as the page shows it: the answer and what decided it in one sentence, its reasoning (every
    number) folded below."""
    from IPython.display import HTML
    return HTML(f"<p><b>Answer ({esc(conc.kind)}); claim 4 on the map: {esc(conc.verdict)}.</b> Decided by: "
                f"{esc(conc.fact)}.</p><details><summary>Why, with the numbers</summary><p>{esc(conc.text)}</p>"
                f"<p>In plain words: {esc(conc.answer)}</p></details>")
