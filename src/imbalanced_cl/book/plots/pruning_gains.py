"""Notebook 04's figures and printed summaries, step by step, so that each of its cells reads: measure (claims/),
draw and print (here). They draw with the figure kinds of plots/pruning.py and compute nothing the verdict rows read:
every number comes from the notebook's measurements (`meas`) and their typed reading (`pruning.read`)."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ...claims import pruning as pa
from ...claims.pruning import control as pc
from ..pages.render import numbers
from .pruning import (CELL_COLORS, MINORITY, band, bands_over_steps, ci_table, feature_scatter, loglog_reference,
                      per_alpha)


def setup_text(cfg, J: list, alphas: list[float]) -> str:
    """The run's sizes and what Theorem 3.2 predicts at them (Remark 1's bound in neurons, m/d, App. F.4's T)."""
    return "\n".join([
        f"d={cfg.d}, d1={cfg.d1}, m={cfg.m}, R={cfg.R}, eps_min/eps_max={cfg.eps_min / cfg.eps_max:g}, minority "
        f"feature(s) {J}, alpha grid {alphas}, main alpha {cfg.alpha_main}",
        f"Remark 1 bound in neurons: alpha*m = {[round(a * cfg.m, 1) for a in alphas]}",
        f"Theorem 3.2(a,b): minority excess about d = {cfg.d} times the others'; Theorem 3.2(d): at least "
        f"m/d = {cfg.m / cfg.d:g} neurons with N_i = {{j*}}",
        f"Theorem 3.2 proof (F.4), C_z = 1: steps after T4 to converge at alpha_main = "
        f"{pa.t5_elapsed(cfg, cfg.alpha_main):.0f}; branches here last {cfg.prune_steps}"])


def pending_text(res, sweep: str, what: str) -> str:
    """One line for a step that needs a sweep still pending (a campaign unit not recorded yet), "" when it is at
    hand: what waits, and for which unit."""
    return f"{what}: {pa.pending_why(sweep)}" if res.waits(sweep) else ""


def vanilla_figure(vanilla: dict):
    """Step 1: the vanilla run's training InfoNCE over steps (mean and 95% band over replicates)."""
    ax = band(plt.subplots(figsize=(6, 3.2))[1], vanilla["steps"], vanilla["loss"], "k")
    ax.set_xlabel("step")
    ax.set_ylabel("InfoNCE (training set)")
    ax.set_title("vanilla training")
    return ax


def vanilla_text(v: dict, cfg) -> str:
    """Step 1 in numbers: the loss at the branch point, how sparse the data are, the lucky neurons at init."""
    return "\n".join([
        "loss at T_a: {:.3f} [{:.3f}, {:.3f}]".format(*v["loss_end"])
        + f" ; relative change over the last 20% of vanilla training: {v['loss_change']:.3%}",
        f"fraction of pairs containing the minority feature: {v['freq_minority']:.3f}; a majority feature: "
        f"{v['freq_majority']:.3f}",
        f"lucky at init (Def. B.1, gamma={cfg.lucky_gamma}): any feature {v['lucky_any']}, "
        f"minority feature {v['lucky_minority']} neurons per replicate"])


def premises_text(prem, cfg) -> str:
    """Theorem 3.2's premises on the run, with the numbers behind each: convergence at the branch point, App. F.4's
    T against the branch, Remark 1's bounds per replicate."""
    c = prem.convergence
    return "\n".join([
        f"convergence at T_a = {c.step}: InfoNCE {c.loss:.3f} (worst replicate) against {c.loss_max:.3f} = "
        f"{cfg.converge_loss_frac:g} ln K; l'_p {c.pos_prob:.3g} against {c.lp_min:.3g}; change over the last "
        f"{cfg.converge_window} steps {c.change:.3g} against {c.change_max:g} -> {'met' if c.holds else 'NOT met'}",
        f"App. F.4's T at alpha_main = {cfg.alpha_main:g}: {prem.T:.0f} steps; the branches run {cfg.prune_steps} "
        f"-> {'met' if cfg.prune_steps >= prem.T else 'NOT met'}",
        f"Remark 1's bound per replicate, strict |M*_j*|: {prem.strict.int().tolist()}, extended (j* in N_i at T_a): "
        f"{prem.extended.int().tolist()}; alpha_main m = {round(cfg.alpha_main * cfg.m)}"])


def ratio_figure(curves: dict, cfg):
    """Step 2: A_j*/A_maj over the steps, control and every branch, from the branch point on (dotted)."""
    return bands_over_steps(curves, mark=cfg.vanilla_steps, xmin=0.5 * cfg.vanilla_steps,
                            ylabel=r"$A_{j^*}/A_{maj}$",
                            title="minority amplitude relative to majority, before and after the branch")


def oracle_table(oracles: dict):
    """Step 2b: per arm, the neurons pruned and the change of A_j*/A_maj over the control (mean [95%])."""
    return ci_table({name: {"neurons pruned": o["size"], "change of A_j*/A_maj over the control": o["gain"]}
                     for name, o in oracles.items()}, first="arm")


def _run_name(k) -> str:
    """A run of the feature tables by name: the vanilla checkpoint, the control, or a branch's alpha."""
    return k if isinstance(k, str) else ("control" if k == 0 else f"alpha={k:g}")


def feature_table(tables: dict, alphas: list[float]):
    """Step 2: per run, each statistic of the minority feature beside the mean majority one (means over replicates;
    the figure below draws their intervals)."""
    return ci_table({_run_name(k): {f"{s}, {who}": v for s in pa.FEATURE_STATS
                                    for who, v in zip(("j*", "majority"), tables[k][s], strict=True)}
                     for k in ["vanilla T_a", 0.0] + alphas}, mean_only=True, first="run")


def feature_figure(tables: dict, alphas: list[float], cfg):
    """Step 2: aligned neurons, best cosine and single-feature neurons per alpha, minority against majority."""
    fig, axes = plt.subplots(1, 3, figsize=(12, 3.4))
    for ax, s in zip(axes, pa.FEATURE_STATS[:3], strict=True):
        per_alpha(ax, [0.0] + alphas, pa.by_run(tables, [0.0] + alphas, s), xlabel="alpha (0 = control)",
                  title=s if s != "aligned" else f"aligned (cos >= {cfg.cos_threshold:g})")
    axes[2].axhline(cfg.m / cfg.d, color=MINORITY, ls="--", lw=1, label="m/d (Thm 3.2(d))")
    axes[0].legend()
    axes[2].legend()
    fig.tight_layout()
    return fig


def excess_figure(exc, alphas: list[float]):
    """Step 3: the excess growth rates over the control per alpha, and the minority's on log-log axes (slope 1)."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    per_alpha(axes[0], alphas, {"minority j*": exc.minority, "majority (mean)": exc.majority}, logx=True,
              zero=True, ylabel="excess growth rate per step", title="excess rate over the control")
    loglog_reference(axes[1], alphas, exc.minority, 1.0, "minority excess (where > 0)", "slope 1 (Thm 3.2(a))")
    axes[0].legend()
    axes[1].set_xlabel("alpha")
    axes[1].set_title("log-log: excess vs alpha")
    fig.tight_layout()
    return fig


def excess_text(exc) -> str:
    """Step 3's fitted log-log slope of the minority excess on alpha (predicted 1)."""
    return ("log-log slope of the minority excess vs alpha (replicates with >= 2 positive points): "
            "{:.3f} [{:.3f}, {:.3f}]".format(*exc.slope))


def excess_table(exc, alphas: list[float], cfg):
    """Step 3 at alpha_main: the minority and majority excess and their ratio (predicted about d)."""
    k = exc.k_main
    return ci_table({f"alpha={alphas[k]:g}": {"minority excess": exc.minority[:, k], "majority excess":
                     exc.majority[:, k], f"ratio (predicted about d = {cfg.d})": exc.ratio_main}})


def mechanism_table(mech: dict):
    """Step 4: 1 - l'_p of the minority feature on pairs with and without it, and the difference of the rises."""
    gaps = {**mech["gaps"], "rise with j* minus rise without": mech["gap_diff"]}
    return ci_table({k: {"1 - l'_p, minority feature j*": v} for k, v in gaps.items()}, first="pairs")


def mechanism_figure(mech: dict, J: list, cfg):
    """Step 4: per (replicate, feature), the share of pruned neurons against the rise of 1 - l'_p (left) and against
    the excess growth (right); the minority features as red stars."""
    share = "share of pruned neurons whose dominant feature is j"
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    feature_scatter(axes[0], mech["share_pruned"], mech["rise_excess"], J, share,
                    "rise of 1-l'_p: pairs with j minus without")
    if mech["excess_growth"] is not None:
        feature_scatter(axes[1], mech["share_pruned"], mech["excess_growth"], J, share,
                        "excess growth rate along M_j (branch - control)")
    axes[0].set_title(f"at the branch point, alpha={cfg.alpha_main:g}")
    axes[0].legend()
    axes[1].set_title(f"first {cfg.rate_window} steps of the branch")
    fig.tight_layout()
    return fig


def mechanism_text(mech: dict) -> str:
    """Step 4's correlations of the pruned share with the rise of 1 - l'_p and with the excess growth."""
    return (f"correlation with the pruned share across (replicate, feature): rise of 1-l'_p {mech['corr_rise']:.3f}, "
            f"excess growth {mech['corr_growth']:.3f}")


CENSUS = ("minority_aligned", "minority_dominant", "dead", "lucky_init", "lucky_init_minority")


def census_table(cen: dict, alphas: list[float]):
    """Step 4: who the magnitude mask removes at the branch point, per alpha (shares of the pruned neurons)."""
    return ci_table({f"alpha={a:g}": {"pruned": int(cen[a]["pruned"][0].sum()), **{s: cen[a][s] for s in CENSUS}}
                     for a in alphas}, mean_only=True, first="mask")


def census_text(cen: dict, alphas: list[float], cfg) -> str:
    """Step 4 per replicate: the minority-aligned neurons, and the mean norm rank of the minority-dominant ones."""
    c = cen[alphas[0]]
    ranks = numbers(c["minority_dominant_rank"].tolist(), "no minority-dominant neuron in that replicate")
    return (f"minority-aligned neurons per replicate (cos >= {cfg.cos_threshold}): "
            f"{c['minority_aligned_count'].tolist()}\nmean norm rank of minority-dominant neurons (0 = smallest, "
            f"1 = largest): {ranks}")


def degradation_figure(deg, alphas: list[float], cfg):
    """Step 5: the majority amplitude and aligned count per alpha, relative to the control, against 1 - degrade_tol
    and Remark 1's bound |M_j*|/m."""
    rel = {"majority amplitude A_maj": deg.A_maj / deg.A_maj0.unsqueeze(-1),
           "majority aligned count": deg.N_maj / deg.N_maj0.unsqueeze(-1)}
    ax = per_alpha(plt.subplots(figsize=(6, 3.4))[1], alphas, rel, logx=True, ylabel="pruned / control",
                   colors={"majority aligned count": "C2"})
    ax.axhline(1 - cfg.degrade_tol, color="grey", ls="--", lw=1, label="1 - degrade_tol")
    ax.axvline(float(deg.bound.mean()), color=MINORITY, ls=":", label="Remark 1 bound |M_j*|/m")
    ax.legend()
    return ax


def degradation_text(deg, cfg) -> str:
    """Step 5 per replicate: the first alpha that degrades the majority, and Remark 1's bound."""
    return (f"first alpha with a drop > {cfg.degrade_tol:.0%}, per replicate: amplitude "
            f"{numbers(deg.thr_A.tolist(), 'none in the grid')}, aligned count "
            f"{numbers(deg.thr_N.tolist(), 'none in the grid')}\nRemark 1 bound |M_j*|/m per replicate "
            f"(minority-aligned neurons at T_a / m): {deg.bound.tolist()}")


def norms_figure(norms: dict):
    """Step 6: the mean norm of the neurons pruned at T_a over the branch, faithful and literal backward and control."""
    ax = plt.subplots(figsize=(6, 3.4))[1]
    for name, col in (("faithful (branch)", "C1"), ("literal (branch)", "C4"), ("control", "k")):
        band(ax, *norms[name], col, name)
    ax.set_xlabel("step")
    ax.set_ylabel("mean ||w_i|| of neurons pruned at T_a")
    ax.legend()
    return ax


def sweep_figure(sw, cfg):
    """Step 7: A_j*/A_maj against eps_min/eps_max with and without pruning (slopes 1 and 0), and the minority excess
    rate against eps_j*."""
    pruned = f"pruned, alpha={cfg.alpha_main:g}"
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.6))
    per_alpha(axes[0], sw.xr, {"control (no pruning)": sw.ar_ctl, pruned: sw.ar_pr}, logx=True,
              colors={"control (no pruning)": "k", pruned: "C1"}, xlabel="eps_min / eps_max", ylabel="A_j*/A_maj")
    axes[0].plot(sw.xr, sw.xr, "k:", lw=1, label="slope 1 (Thm 3.1)")
    axes[0].axhline(1, color="C1", ls=":", lw=1, label="slope 0 (Thm 3.2(c))")
    axes[0].set_yscale("log")
    axes[0].legend()
    per_alpha(axes[1], sw.xr, {"minority excess": sw.exc}, colors={"minority excess": MINORITY},
              logx=True, zero=True, xlabel="eps_j* / eps_max", ylabel="excess growth rate per step")
    axes[1].legend()
    fig.tight_layout()
    return fig


def sweep_text(sw) -> str:
    """Step 7's slopes: A_j*/A_maj on the eps ratio, control and pruned, and the minority excess on eps_j*."""
    return ("A_j*/A_maj vs eps ratio, log-log slope: control {:.3f} [{:.3f}, {:.3f}]".format(*sw.slope_ctl)
            + ", pruned {:.3f} [{:.3f}, {:.3f}]".format(*sw.slope_pr)
            + "\nminority excess vs eps_j*, log-log slope (positive points only): {:.3f} [{:.3f}, {:.3f}]"
            .format(*sw.slope_exc))


def control_table(control: dict, k: int, alpha: float):
    """Step 8 at alpha_main: each cell of the 2x2 mask control, every statistic (mean [95%])."""
    return ci_table({c: {s: v[:, k] for s, v in control[c].items() if v.dim() == 2} for c in pc.CELLS},
                    first=f"cell (alpha = {alpha:g})")


def control_figure(cs: dict, A: list[float]):
    """Step 8 per alpha: the change over the control, the minority-aligned neurons, and the first mask's share on
    minority-aligned neurons, one curve per cell."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    shown = {"change over control": "change", "minority-aligned neurons": "minority_aligned",
             "first mask on minority-aligned": "first_mask_minority"}
    for ax, (s, field) in zip(axes, shown.items(), strict=True):
        per_alpha(ax, A, {c: getattr(cs[c], field) for c in pc.CELLS}, colors=CELL_COLORS, logx=True,
                  dodge=0.05, zero=field == "change", title=s)
    axes[0].set_ylabel("A_j*/A_maj (pruned - control)")
    axes[0].legend()
    fig.tight_layout()
    return fig


def threshold_figure(cs: dict, A: list[float], cfg):
    """Step 8: the majority degradation 1 - A_maj / A_maj(control) against alpha per cell, against degrade_tol."""
    ax = per_alpha(plt.subplots(figsize=(6.4, 3.6))[1], A, {c: cs[c].degradation for c in pc.CELLS},
                   colors=CELL_COLORS, logx=True, dodge=0.05, zero=True, ylabel="1 - A_maj / A_maj(control)",
                   title="pruning-ratio threshold curve")
    ax.axhline(cfg.degrade_tol, color="grey", ls="--", lw=1, label="degrade_tol")
    ax.legend()
    return ax


def threshold_table(cs: dict):
    """Step 8: per cell, the first alpha whose degradation passes degrade_tol, per replicate."""
    return ci_table({c: {"first alpha with degradation > degrade_tol, per replicate":
                         pc.threshold_text(cs[c].first_degrading)} for c in pc.CELLS}, first="cell")
