"""The regime page's runs: one training per arm, and the side-by-side summary of the measured quantities."""
from __future__ import annotations

from ... import stats
from ...sim import regime
from ...sim.metrics import feature_share
from ...sim.train import Run, train
from ..pruning.metrics import aligned_counts, amplitude_ratio, max_cosine, minority_index
from .config import ARMS, RegimeConfig


def run_arms(cfg: RegimeConfig) -> dict[str, Run]:
    """One training per arm (R replicates batched in each)."""
    return {name: train(cfg.sim(**change)) for name, change in ARMS.items()}


def summary(runs: dict[str, Run], cfg: RegimeConfig) -> list[dict]:
    """One row per (quantity, arm): mean and 95% interval over replicates; first, how many replicates are alive.
    An arm whose every replicate is dead (regime.measure: the population gradient is exactly 0) is not measured."""
    out = []
    J = minority_index(cfg)
    for name, run in runs.items():
        reg = regime.measure(run)
        values = {
            "feature-span share (→ 1, Thm 3.1)": feature_share(run.W, run.M).mean(-1),
            "training InfoNCE": reg.loss_train,
            "held-out InfoNCE": reg.loss_heldout,
            "||g_K − g_pop|| / ||w|| (Lemma B.1)": reg.grad_dev,
            f"neurons with cos(w, M_j*) ≥ {cfg.cos_threshold:g}":
                aligned_counts(run.W, run.M, cfg.cos_threshold)[:, J].mean(-1),
            "best minority cosine max_i cos(w_i, M_j*)": max_cosine(run.W, run.M)[:, J].mean(-1),
            "A_min / A_maj": amplitude_ratio(run.W, run.M, run.cfg),
        }
        alive = (~reg.dead).sum().item()
        out.append({"quantity": "replicates alive (population gradient ≠ 0)", "arm": name, "count": alive,
                    "of": int(reg.dead.numel())})
        for quantity, x in values.items():
            if reg.all_dead:     # frozen values of a network that no longer learns are not measurements
                out.append({"quantity": quantity, "arm": name, "dead": True})
                continue
            m, lo, hi = stats.ci(x.double())
            out.append({"quantity": quantity, "arm": name, "mean": m, "lo": lo, "hi": hi})
    return out


def _cell(r: dict) -> str:
    """One cell of the table: 'mean [lo, hi]', a count, or why there is no measurement."""
    if r.get("dead"):
        return "— (dead network: not measured)"
    if "count" in r:
        return f"{r['count']} of {r['of']}"
    return f"{r['mean']:.3g} [{r['lo']:.3g}, {r['hi']:.3g}]"


def table(rows: list[dict]) -> str:
    """Markdown: quantities down, arms across, 'mean [lo, hi]' in each cell."""
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    qs = list(dict.fromkeys(r["quantity"] for r in rows))
    cell = {(r["quantity"], r["arm"]): _cell(r) for r in rows}
    lines = ["| quantity | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
    lines += [f"| {q} | " + " | ".join(cell[(q, a)] for a in arms) + " |" for q in qs]
    return "\n".join(lines)
