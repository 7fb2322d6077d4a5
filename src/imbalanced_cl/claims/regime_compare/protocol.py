"""The regime page's runs: one training per arm, each measured (metrics.measure_arm), and the side-by-side summary of
the measured quantities."""
from __future__ import annotations

from ... import stats
from ...sim.train import Run, train
from .config import ARMS, RegimeConfig
from .metrics import Arm, measure_arm


def run_arms(cfg: RegimeConfig) -> dict[str, Run]:
    """One training per arm (R replicates batched in each)."""
    return {name: train(cfg.sim(**change)) for name, change in ARMS.items()}


def measure_arms(cfg: RegimeConfig) -> dict[str, Arm]:
    """Every arm trained (run_arms) and measured: the page's measurement stage, what a campaign record keeps (the
    runs themselves are dropped)."""
    return {name: measure_arm(run, cfg) for name, run in run_arms(cfg).items()}


def quantities(arm: Arm, cfg: RegimeConfig) -> dict:
    """{quantity: (R,) values} in the table's order: the arm's measured values, with the minority alignment counted
    at the page's threshold (App. A.2: a neuron aligns with j* if cos(w_i, M_j*) >= cos_threshold), averaged over the
    minority features, and the best minority cosine."""
    v, cos = arm.values, arm.cos_minority
    keys = ("feature-span share (→ 1, Thm 3.1)", "training InfoNCE", "held-out InfoNCE",
            "||g_K − g_pop|| / ||w|| (Lemma B.1)")
    return {**{k: v[k] for k in keys},
            f"neurons with cos(w, M_j*) ≥ {cfg.cos_threshold:g}": (cos >= cfg.cos_threshold).sum(1).float().mean(-1),
            "best minority cosine max_i cos(w_i, M_j*)": cos.amax(1).mean(-1),
            "A_min / A_maj": v["A_min / A_maj"]}


def summary(arms: dict[str, Arm], cfg: RegimeConfig) -> list[dict]:
    """One row per (quantity, arm): mean and 95% interval over replicates; first, how many replicates are alive.
    An arm whose every replicate is dead (regime.measure: the population gradient is exactly 0) is not measured."""
    out = []
    for name, arm in arms.items():
        out.append({"quantity": "replicates alive (population gradient ≠ 0)", "arm": name, "count": arm.alive,
                    "of": arm.of})
        for quantity, x in quantities(arm, cfg).items():
            if arm.all_dead:     # frozen values of a network that no longer learns are not measurements
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
