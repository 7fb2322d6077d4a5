"""The regime page: the same network trained on one fixed set of K pairs, on fresh pairs every step, and with the
bias's E|z|/L factor removed, measured side by side (share, losses, Lemma B.1, minority alignment, A_min/A_maj).

Every arm shares the dictionary, the initial weights and the held-out pairs of its replicate (data streams are
per replicate), so the arms differ only in how the training pairs are drawn and in the bias factor.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from .. import stats
from ..sim import regime
from ..sim.config import SimConfig
from ..sim.metrics import feature_share
from ..sim.train import Run, train
from ..validate import check_float
from .pruning import aligned_counts, amplitude_ratio, max_cosine, minority_index

# arm name -> the SimConfig fields it changes
ARMS = {"fixed": {"sampling": "fixed"}, "fresh": {"sampling": "fresh"},
        "fresh, bias without the token factor": {"sampling": "fresh", "bias_token_factor": False}}


@dataclass(frozen=True)
class RegimeConfig(SimConfig):
    """The regime page: notebook 04's default model, trained as long as notebook 04's vanilla run."""

    steps: int = 1500                # notebook 04's vanilla_steps
    record_every: int = 50           # history every this many steps (the share over time)
    progress: bool = False           # tqdm progress bar
    cos_threshold: float = 0.3       # a neuron is aligned with the minority feature if cos(w_i, M_j*) >= this (App. A.2)

    def validate(self) -> None:
        """SimConfig's checks plus the alignment threshold."""
        super().validate()
        check_float("cos_threshold", self.cos_threshold, 0.0, 1.0, lo_open=True)


def run_arms(cfg: RegimeConfig) -> dict[str, Run]:
    """One training per arm (R replicates batched in each)."""
    return {name: train(cfg.sim(**change)) for name, change in ARMS.items()}


def share_history(run: Run) -> tuple[torch.Tensor, torch.Tensor]:
    """(steps (T,), mean feature-span share per replicate (T, R)) from the recorded coefficients and norms."""
    coef, norm2 = run.history.get("coef"), run.history.get("norm2")
    return run.history.get("steps"), (coef.pow(2).sum(-1) / norm2.clamp(min=1e-30)).mean(-1)


def summary(runs: dict[str, Run], cfg: RegimeConfig) -> list[dict]:
    """One row per (quantity, arm): mean and 95% interval over replicates."""
    out = []
    J = minority_index(cfg)
    for name, run in runs.items():
        reg = regime.measure(run)
        values = {
            "feature-span share (→ 1, Thm 3.1)": feature_share(run.W, run.M).mean(-1),
            "training InfoNCE": reg.loss_train,
            "held-out InfoNCE": reg.loss_heldout,
            "||g_K − g_pop|| / ||w|| (Lemma B.1)": reg.grad_dev,
            f"neurons with cos(w, M_j*) ≥ {cfg.cos_threshold:g}": aligned_counts(run.W, run.M, cfg.cos_threshold)[:, J].mean(-1),
            "best minority cosine max_i cos(w_i, M_j*)": max_cosine(run.W, run.M)[:, J].mean(-1),
            "A_min / A_maj": amplitude_ratio(run.W, run.M, run.cfg),
        }
        for quantity, x in values.items():
            m, lo, hi = stats.ci(x.double())
            out.append({"quantity": quantity, "arm": name, "mean": m, "lo": lo, "hi": hi})
    return out


def table(rows: list[dict]) -> str:
    """Markdown: quantities down, arms across, 'mean [lo, hi]' in each cell."""
    arms = list(dict.fromkeys(r["arm"] for r in rows))
    qs = list(dict.fromkeys(r["quantity"] for r in rows))
    cell = {(r["quantity"], r["arm"]): f"{r['mean']:.3g} [{r['lo']:.3g}, {r['hi']:.3g}]" for r in rows}
    lines = ["| quantity | " + " | ".join(arms) + " |", "|---|" + "---|" * len(arms)]
    lines += [f"| {q} | " + " | ".join(cell[(q, a)] for a in arms) + " |" for q in qs]
    return "\n".join(lines)


def verdict_changes(fresh: list[dict], fixed: list[dict]) -> list[dict]:
    """Rows of notebooks 01-05 under both regimes, matched by (notebook, claim): measured values and verdicts."""
    key = lambda r: (r["notebook"], r["claim"])
    other = {key(r): r for r in fixed}
    out = []
    for r in fresh:
        if not r["notebook"][:2] in {"01", "02", "03", "04", "05"} or key(r) not in other:
            continue
        f = other[key(r)]
        out.append({"notebook": r["notebook"], "claim": r["claim"], "fresh": r["verdict"], "fixed": f["verdict"],
                    "fresh_measured": r["measured"], "fixed_measured": f["measured"]})
    return out
