"""Figures and tables of the regime page: the feature-span share through training, and verdicts under both regimes."""
from __future__ import annotations

import matplotlib.pyplot as plt

from ... import stats
from ..pages.render import md_table


def share_over_time(curves: dict, ax=None):
    """One line per arm: the mean feature-span share over replicates against the step, with a 95% band."""
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 3.8))
    for name, (steps, share) in curves.items():
        m, lo, hi = stats.mean_ci(share, dim=1)
        ax.plot(steps, m, label=name)
        ax.fill_between(steps, lo, hi, alpha=0.2)
    ax.axhline(1.0, color="k", lw=0.8, ls=":")
    ax.set(xlabel="step", ylabel=r"$\|MM^\top w_i\|^2/\|w_i\|^2$ (mean over neurons)",
           title="share in the feature span")
    ax.legend()
    return ax


def _num(x) -> str:
    """A measured value for the table; a row with no finite measurement (stored as null or NaN) shows a dash."""
    return "–" if x is None or x != x else f"{x:.3g}"


def verdict_table(rows: list[dict], n_fixed: int) -> str:
    """Markdown: each verdict row of notebooks 01-05 under fresh and fixed pairs, changes marked."""
    if not n_fixed:
        return ("*No fixed-pairs record yet (results/default-fixed/ is empty): the comparison of verdicts is not "
                "available in this build.*")
    changed = sum(r["fresh"] != r["fixed"] for r in rows)
    cells = [[r["notebook"][:2], r["claim"], f"{r['fresh']} ({_num(r['fresh_measured'])})",
              f"{r['fixed']} ({_num(r['fixed_measured'])})" + (" ⟵" if r["fresh"] != r["fixed"] else "")]
             for r in rows]
    return (f"**{changed} of {len(rows)} rows change their verdict with the regime.**\n\n"
            + md_table(["notebook", "claim", "fresh pairs", "fixed set"], cells))
