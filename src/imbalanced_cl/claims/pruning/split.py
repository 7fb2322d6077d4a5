"""Notebook 04's protocol in parts (issue 64): the part that decides claim 4's rows, which the notebook's own unit
measures, and the sweeps of config.SWEEPS (the rest of alpha_grid, the other eps_min), each a campaign unit of its own
(kind pruning_sweep) where cfg.record_sweeps names it; `assemble` puts the parts back into measure_protocol's stored
form, the sweeps not recorded yet named as pending.

Every part trains from the same seed: the vanilla run again where it needs the branch point (each replicate draws its
data and initialisation from its own streams, so the same checkpoint), and its branches in a batch of their own
(batch.train_branches: a row's numbers do not depend on the rows beside it). So each part measures what the whole run
measures, and the summaries over alpha and eps_min are computed by the functions measure_protocol's own steps call
(excess_summary, degradation_of, cells_summary, sweep_summary); tests/test_pruning_split.py checks the whole stored
form against measure_protocol at a tiny size.
"""
from __future__ import annotations

from ...sim import regime
from ...sim.prune import mask_for
from ...sim.train import Run, train
from .config import SWEEPS, PruningConfig
from .control import CELLS, cell_pieces, cells_summary, curve_alphas, run_cells
from .metrics import (amplitude_ratio, amplitude_ratio_history, degradation_of, excess_growth, excess_summary,
                      feature_stats, majority_amplitude, mechanism_summary, vanilla_summary)
from .protocol import (VARIANTS, SweepPoint, census_by_alpha, mask_share, point_pieces, pruned_norm_history,
                       run_branches, run_oracles, run_variants, sweep_summary, theorem_premises, train_points,
                       variant_stats)


def branch_pieces(cfg: PruningConfig, base: Run, runs: dict, alphas: list) -> dict:
    """What the protocol keeps of the control (0.0) and of each branch of `alphas`, keyed by alpha: the A_j*/A_maj
    curve, feature_stats, the final A_j*/A_maj and majority amplitude, and (branches) the excess growth over the
    control (minority (R,), majority (R,))."""
    keys = [0.0, *alphas]
    return {"curves": {a: amplitude_ratio_history(runs[a]) for a in keys},
            "tables": {a: feature_stats(runs[a], cfg) for a in keys},
            "ratios": {a: amplitude_ratio(runs[a].W, runs[a].M, cfg) for a in keys},
            "A_maj": {a: majority_amplitude(runs[a], cfg) for a in keys},
            "excess": {a: excess_growth(runs[a], runs[0.0], cfg) for a in alphas}}


def control_pieces(cfg: PruningConfig, base: Run, runs: dict, alphas: list) -> dict | None:
    """cell_pieces of the 2x2 mask control's every cell at `alphas` (run_cells: the magnitude/dynamic cell reuses the
    branches in `runs`), keyed by (cell, alpha); None when cfg.mask_control is False or there is no alpha."""
    if not cfg.mask_control or not alphas:
        return None
    return cell_pieces(run_cells(cfg, base, runs, alphas), base, [(c, a) for c in CELLS for a in alphas], cfg)


def points(cfg: PruningConfig, eps: list) -> dict:
    """point_pieces of Step 7 at each eps_min of `eps` ({eps: pieces}), each trained from its own vanilla run."""
    return {e: point_pieces(p, cfg) for e, p in train_points(cfg, eps).items()}


def measure_main(cfg: PruningConfig) -> dict:
    """The part of notebook 04 its own unit measures when cfg.record_sweeps names sweeps measured apart: the vanilla
    run with its premises, summary and regime; the control and the branches of cfg.share() (the alpha_main branch
    alone when alpha_grid is a sweep); the oracle arms; Step 6's variants; the census of the mask at every alpha of
    the grid (no training); the mask control at those branches' ratios; Step 7 at the main eps_min (and at the others
    unless eps_grid is a sweep). assemble() reads it with the recorded sweeps."""
    sh = cfg.share("main")
    base = train(cfg.vanilla())
    runs = run_branches(cfg, sh.alphas, base)                          # {0.0: control, alpha: pruned}
    orc = run_oracles(cfg, base, runs)
    var = run_variants(cfg, base, runs)
    cen = census_by_alpha(base, sorted(float(a) for a in cfg.alpha_grid), cfg)
    named, pruned_at_Ta = var.named(), mask_for(base.W, cfg.alpha_main, "neuron") == 0
    grid = sorted(float(e) for e in cfg.eps_min_grid)
    main = {cfg.eps_min: point_pieces(SweepPoint(cfg, runs[0.0], var.faithful), cfg)} if cfg.eps_min in grid else {}
    return {"vanilla": {"steps": base.history.get("steps"), "loss": base.history.get("loss"),
                        "summary": vanilla_summary(base, cfg)},
            "premises": theorem_premises(base, cfg),
            "oracles": {name: {"size": o["size"], "gain": o["gain"]} for name, o in orc.items()},
            "vanilla_table": feature_stats(base, cfg), "branches": branch_pieces(cfg, base, runs, sh.alphas),
            "mechanism": mechanism_summary(base, runs, cfg), "census": cen, "mask_share": mask_share(cen, base, cfg),
            "variants": variant_stats(var, base, cfg),
            "variant_ratios": {name: amplitude_ratio(r.W, r.M, cfg) for name, r in named.items()},
            "norms": {name: pruned_norm_history(named[name], pruned_at_Ta, cfg)      # the branches first, as recorded
                      for name in (*VARIANTS[1:3], VARIANTS[0])},
            "points": {**main, **points(cfg, sh.eps)},
            "cells": control_pieces(cfg, base, runs, sh.alphas + sh.thresholds),
            "regime": regime.measure(base)}


def measure_sweep(cfg: PruningConfig, name: str) -> dict:
    """One sweep of SWEEPS, measured apart (a pruning_sweep unit): "alpha_grid" trains the vanilla run again and, from
    it, the control and the grid's other ratios (branch_pieces), with the mask control's cells at those ratios and at
    threshold_alphas (control_pieces); "eps_grid" trains Step 7 at the other eps_min (points)."""
    if name not in SWEEPS:
        raise ValueError(f"sweep {name!r}: one of {SWEEPS}")
    sh = cfg.share(name)
    if name == "eps_grid":
        return {"points": points(cfg, sh.eps)}
    base = train(cfg.vanilla())
    runs = run_branches(cfg, sh.alphas, base)
    return {"branches": branch_pieces(cfg, base, runs, sh.alphas),
            "cells": control_pieces(cfg, base, runs, sh.alphas + sh.thresholds)}


def assemble(cfg: PruningConfig, main: dict, sweeps: dict) -> dict:
    """measure_protocol's stored form from measure_main and the sweeps at hand ({name: measure_sweep}), plus "alphas"
    (the ratios it holds) and "pending" (the sweeps of cfg.record_sweeps not at hand). With every sweep at hand it
    holds what measure_protocol measures; without one, each summary covers the ratios and eps_min it has, and
    "sweep" is None where it has no eps_min."""
    got = [main, *(sweeps[n] for n in SWEEPS if n in sweeps)]
    br = {f: _merged([part["branches"][f] for part in got if "branches" in part])
          for f in ("curves", "tables", "ratios", "A_maj", "excess")}
    alphas = sorted(br["excess"])
    keys = [0.0, *alphas]
    tables = {**{a: br["tables"][a] for a in keys}, "vanilla T_a": main["vanilla_table"]}
    pts = _merged([part.get("points") for part in got])
    return {"vanilla": main["vanilla"], "premises": main["premises"],
            "curves": {("control" if a == 0 else f"alpha={a:g}"): br["curves"][a] for a in keys},
            "oracles": main["oracles"], "tables": tables,
            "excess": excess_summary(alphas, [br["excess"][a] for a in alphas], cfg),
            "mechanism": main["mechanism"], "census": main["census"],
            "degradation": degradation_of(br["A_maj"], tables, main["census"], alphas, cfg),
            "ratios": {**{a: br["ratios"][a] for a in keys}, **main["variant_ratios"]},
            "mask_share": main["mask_share"], "variants": main["variants"], "norms": main["norms"],
            "sweep": sweep_summary(pts, cfg) if pts else None,
            "control": _control(cfg, _merged([part.get("cells") for part in got]), br),
            "regime": main["regime"], "alphas": alphas, "pending": [n for n in cfg.record_sweeps if n not in sweeps]}


def _merged(dicts: list) -> dict:
    """The dicts' entries in one (None for a part without any); a key two parts share (the control, trained by both
    alpha parts) holds the same numbers in each."""
    return {k: v for d in dicts if d for k, v in d.items()}


def _control(cfg: PruningConfig, cells: dict, br: dict) -> dict | None:
    """cells_summary over the mask control's ratios at hand, in the curve's order (None: the control was not run)."""
    if not cells:
        return None
    grid = [a for a in curve_alphas(sorted(float(a) for a in cfg.alpha_grid), cfg) if (CELLS[0], a) in cells]
    return cells_summary(cells, br["ratios"][0.0], br["A_maj"][0.0], grid, cfg)
