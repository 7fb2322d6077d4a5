"""Which parameters set each notebook's run time: one table, shown in the parameter help (`papermill
--help-notebook`, through the generated parameters cells) and in the README.

A reader who lowers `R`, `d` or `d1` in notebook 01 and finds its T1 sweep still at full size needs to know that the
sweep has parameters of its own; the help of every field named here ends with COST_NOTE, and a notebook's whole
list is what `drivers(cls)` returns.
"""
from __future__ import annotations

from dataclasses import dataclass

COST_NOTE = "[sets the run time]"


@dataclass(frozen=True)
class Cost:
    """The fields of one config class that set its notebook's run time, and where most of it goes."""

    notebook: str       # the notebook's file name without .ipynb
    fields: tuple       # field names, the largest effect first
    where: str          # one sentence: what dominates the time at the default profile


COSTS = {
    "Stage1Config": Cost("01_stage1_growth",
                         ("d_grid", "d1_grid", "sweep_R", "sweep_d1", "horizon", "R", "d1", "steps"),
                         "the T1 sweep (every point of d_grid and d1_grid, sweep_R replicates, horizon × T1 steps) "
                         "takes most of the time; R, d, d1 and steps size only the main run"),
    "LuckyConfig": Cost("02_lucky_neurons", ("census_ds", "census_neurons", "census_R", "lemma_m", "lemma_steps",
                                             "train_eps_max", "fig_steps", "R", "steps"),
                        "the census (census_ds × census_neurons × census_R) and the Lemma 3.2 run (lemma_m neurons, "
                        "lemma_steps) are most of it"),
    "ScalingConfig": Cost("03_Ni_scaling", ("ds", "ratios", "steps", "R", "d1", "n_pairs"),
                          "one training per point of ds × ratios, each of `steps` steps; the largest d dominates"),
    "PruningConfig": Cost("04_pruning_gains", ("vanilla_steps", "prune_steps", "alpha_grid", "eps_min_grid",
                                               "mask_control", "record_sweeps", "R", "n_pairs", "d1"),
                          "the vanilla run, then one branch per alpha_grid value and per eps_min_grid value, and "
                          "the mask control's four cells; the grids named in record_sweeps are read from the "
                          "campaign (kind pruning_sweep), not trained"),
    "AppendixConfig": Cost("05_appendix_figures", ("repeats", "eps_12", "eps_34", "steps", "d1", "n_pairs", "pruning"),
                           "one training per (grid point, repeat), twice when `pruning` is on; the paper's 100 "
                           "repeats are the paper profile"),
    "LTConfig": Cost("06_lt_benchmarks", ("epochs", "seeds", "rhos", "methods", "width", "n_max", "batch_size"),
                     "pre-training, one run per (ρ, method, seed), epochs long: four fifths of the time"),
    "ExplorerConfig": Cost("07_explorer", ("steps", "gallery_eps_min", "gallery_nsr", "gallery_alpha", "R", "d1"),
                           "one small training per gallery cell"),
    "ScaleConfig": Cost("08_scale", ("ds", "R", "ratios", "C_m", "c1", "t3_cap", "n_pairs"),
                        "the largest d of `ds` (m = d^C_m neurons, d1 = c1 d, steps in units of tau_d) dominates"),
    "DecouplingConfig": Cost("09_feature_decoupling",
                             ("steps", "contrast_steps", "ratios", "kinds", "R", "d1", "n_pairs"),
                             "the 3 × 3 grid (kinds × ratios) of `steps` steps, and the sensitivity run of "
                             "contrast_steps"),
    "PremiseMapConfig": Cost("10_premise_map", ("ds", "star_m_over_d", "star_K", "lambdas", "ratios", "R", "n_pairs"),
                             "one trained cell per (d, λ, ρ) of the plane and per star value; the m/d = 500 star "
                             "cell would be most of it, so like record_ds it is read from the campaign "
                             "(record_star), not trained"),
    "RegimeConfig": Cost("regime", ("steps", "R", "n_pairs", "d1"), "three trainings of notebook 04's model"),
}


def drivers(cls: type) -> tuple:
    """The fields of config class `cls` that set its notebook's run time (empty when the table does not name it)."""
    c = COSTS.get(cls.__name__)
    return c.fields if c else ()


def markdown_table() -> str:
    """The README's table: notebook, the parameters that set its run time, where the time goes."""
    lines = ["| notebook | parameters that set its run time | where the time goes |", "|---|---|---|"]
    for c in COSTS.values():
        lines.append(f"| {c.notebook} | {', '.join(f'`{f}`' for f in c.fields)} | {c.where} |")
    return "\n".join(lines)
