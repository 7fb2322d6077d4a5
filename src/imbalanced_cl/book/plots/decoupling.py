"""Figures and tables of notebook 09 (feature decoupling): curves over training per pair type, and the minority view."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ... import stats
from ...claims import decoupling as DC

COLOURS = {"identical": "C3", "random_mask": "C0", "paper": "C2"}


def band(ax, x, samples, label: str, colour: str, ls: str = "-"):
    """Mean over replicates (the last dim of `samples`) against x, with its 95% t-interval as a shaded band."""
    mean, lo, hi = stats.mean_ci(samples, dim=-1)
    ax.plot(x, mean, color=colour, ls=ls, label=label)
    ax.fill_between(x, lo, hi, color=colour, alpha=0.2)


def _steps(ax, ylabel: str, title: str):
    ax.set(xscale="symlog", xlim=(0, None), xlabel="step", ylabel=ylabel, title=title)
    ax.legend()


def share(res, cfg):
    """Figure 1: the feature share of the balanced cells through training, with d/d1 and the verdict threshold."""
    _, ax = plt.subplots(figsize=(6.5, 3.8))
    for kind in cfg.kinds:
        band(ax, res.share_steps, res.share_hist[:, res.cell(kind, 1.0)], DC.LABELS[kind], COLOURS[kind])
    ax.axhline(cfg.d / cfg.d1, color="k", ls=":", label="random start, $d/d_1$")
    ax.axhline(cfg.share_min, color="k", ls="--", lw=0.8, label="threshold share_min")
    _steps(ax, r"$\|M^\top W^\top\|_F^2/\|W\|_F^2$", "feature share, balanced data")
    return ax


def _series_pair(res, cfg, keys: tuple[str, str]):
    """Two panels side by side, one band per pair type in each: the checkpoint series res.series(key, kind)."""
    _, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for kind in cfg.kinds:
        for ax, key in zip(axes, keys, strict=True):
            band(ax, res.steps, res.series(key, kind), DC.LABELS[kind], COLOURS[kind])
    return axes


def representation(res, cfg):
    """Figure 2: cos(f(x), f(xi)) and cos(f(x), f(Mz)) of the balanced cells at the checkpoints."""
    axes = _series_pair(res, cfg, ("align", "removal"))
    axes[0].axhline(cfg.align_high, color="k", ls="--", lw=0.8, label="align_high (Thm 3.2)")
    axes[0].axhline(cfg.noise_align_max, color="k", ls=":", lw=0.8, label="noise_align_max")
    axes[1].axhline(cfg.removal_min, color="k", ls="--", lw=0.8, label="removal_min (Thm 3.4)")
    _steps(axes[0], r"$\cos(f(x), f(\xi))$", "noise alignment")
    _steps(axes[1], r"$\cos(f(x), f(Mz))$", "noise removal")
    plt.tight_layout()
    return axes


def probe(res, cfg):
    """Figure 3: singleton coverage and the probe's normalised MSE at the checkpoints, with the raw-input probe."""
    axes = _series_pair(res, cfg, ("coverage", "probe"))
    raw = stats.mean_ci(res.raw_probe[res.cell(cfg.kinds[0], 1.0)].mean(-1))[0]
    axes[0].axhline(cfg.coverage_min, color="k", ls="--", lw=0.8, label="coverage_min")
    axes[1].axhline(float(raw), color="k", ls=":", label="probe on the raw input x")
    axes[1].axhline(cfg.probe_max, color="k", ls="--", lw=0.8, label="probe_max")
    _steps(axes[0], "atoms with a singleton neuron", "coverage (Thm 3.4)")
    _steps(axes[1], r"probe MSE / $E[z_j^2]$", "linear probe (Cor. 3.3/3.5)")
    plt.tight_layout()
    return axes


def minority(res, cfg):
    """Figure 4: probe MSE and coverage of the minority (solid, band) and majority (dashed) features vs the ratio."""
    _, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    ratios = sorted(cfg.ratios)
    for kind in cfg.kinds:
        cs = [res.cell(kind, r) for r in ratios]
        for ax, values in ((axes[0], res.probe[-1, cs]), (axes[1], (res.singles[-1, cs] > 0).float())):
            major, minor = DC.split_mean(values, res.minority)          # (ratios, R) each
            band(ax, ratios, minor, f"{DC.LABELS[kind]}, minority", COLOURS[kind])
            band(ax, ratios, major, f"{DC.LABELS[kind]}, majority", COLOURS[kind], ls="--")
    axes[0].axhline(cfg.probe_max, color="k", ls=":", lw=0.8)
    for ax, ylabel, title in ((axes[0], r"probe MSE / $E[z_j^2]$", "probe error"),
                              (axes[1], "atoms with a singleton neuron", "coverage")):
        ax.set(xscale="log", xlabel=r"$\epsilon_{\min}/\epsilon_{\max}$", ylabel=ylabel, title=title)
    axes[0].legend()
    plt.tight_layout()
    return axes


def _ci(t: tuple, digits: int = 3) -> str:
    return f"{t[0]:.{digits}f} [{t[1]:.{digits}f}, {t[2]:.{digits}f}]"


def view_table(vc: dict) -> str:
    """Markdown: rho and the linear-stage rate on the atoms and on the noise, per pair type."""
    lines = ["| pair type | ρ on atoms | ρ on noise | rate on atoms | rate on noise |", "|---|---|---|---|---|"]
    for kind, v in vc.items():
        lines.append(f"| {DC.LABELS[kind]} | {v['rho_F']:.4f} | {v['rho_perp']:.4f} | {v['rate_F']:.4f} | "
                     f"{v['rate_perp']:.4f} |")
    return "\n".join(lines)


def comparison_table(tables: dict, diffs: dict) -> str:
    """Markdown: the last step's measurements per setting and pair type, then identical minus RandomMask (paired)."""
    cols = ("share", "align", "removal", "coverage", "probe")
    lines = ["| setting | pair type | " + " | ".join(cols) + " |", "|---|---|" + "---|" * len(cols)]
    for name, table in tables.items():
        for kind, vals in table.items():
            lines.append(f"| {name} | {DC.LABELS[kind]} | " + " | ".join(_ci(vals[c], 2) for c in cols) + " |")
        if name in diffs:
            lines.append(f"| {name} | identical − RandomMask (paired) | "
                         + " | ".join(_ci(diffs[name][c], 2) for c in cols) + " |")
    return "\n".join(lines)


def imbalance_table(rows: list[dict]) -> str:
    """Markdown: majority and minority probe MSE and their paired gap, per pair type and ratio."""
    lines = ["| pair type | ε_min/ε_max | probe, majority | probe, minority | minority − majority | "
             "coverage, minority |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {DC.LABELS[r['kind']]} | {r['ratio']:g} | {_ci(r['probe_major'])} | {_ci(r['probe_minor'])} | "
                     f"{_ci(r['probe_gap'])} | {_ci(r['cover_minor'], 2)} |")
    return "\n".join(lines)
