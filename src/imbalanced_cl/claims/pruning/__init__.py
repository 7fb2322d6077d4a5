"""Notebook 04: does Algorithm 1's magnitude pruning rescue minority features? (Thm 3.2, Thm F.1, Remarks 1-3)

Protocol (Thm F.1 prunes from T4, after vanilla convergence): train vanilla for `vanilla_steps`, then branch
from that checkpoint with the same training set (full-batch GD, so every step is one epoch) into a control
(alpha = 0) and pruned runs. Nothing is fitted to the claim.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from ...sim.prune import mask_for  # noqa: F401 (notebook 04 reads pruning.mask_for)
from .config import SWEEPS, PruningConfig, Share  # noqa: F401
from .metrics import (FEATURE_STATS, Convergence, convergence, learned_minority, lucky_minority, minority_dominant,  # noqa: F401
                      paper_T, aligned_counts, amplitude_ratio, amplitude_ratio_history,
                      amplitudes, by_run, degradation, degradation_of, degradation_threshold, excess_by_alpha,
                      excess_growth, excess_summary, majority_amplitude,
                      excess_growth_per_feature, feature_stats, gap_by_feature, growth_rates, main_index, mask_census,
                      mask_persistence, max_cosine, mechanism, mechanism_summary, minority_index, positive_gap,
                      pruned_norm_history, single_feature_counts, split_mean, t5_elapsed, top_neurons, vanilla_summary)
from .batch import concat, rows_independent, select, shared_sampler, train_arms, train_branches  # noqa: F401
from .control import (CELLS, cell_config, cell_masker, cell_pieces, cell_stats, cells_summary, curve_alphas,  # noqa: F401
                      first_mask,
                      first_mask_on_minority, pruned_norm_ratio, run_cells, run_control, threshold_text)
from .protocol import (ORACLES, SweepPoint, VARIANTS, Variants, census_by_alpha, eps_sweep, feature_tables,  # noqa: F401
                       final_ratios, mask_share, measure_protocol, oracle_sets, point_pieces, run_branches,
                       run_oracles, run_variants, sweep_masks, sweep_summary, theorem_premises, train_points,
                       variant_stats)
from .split import assemble, branch_pieces, control_pieces, measure_main, measure_sweep  # noqa: F401
from .results import (CELL_STATS, ControlCell, Degradation, Excess, FeatureStats, FinalRatios, OracleArm,  # noqa: F401
                      Oracles, Results, Split, Sweep, SweepMask, TheoremPremises, read, where_it_helps)
from .verdicts import (NEEDS, THM31, THM32, control_rows, majority_change_within_bound, oracle_rows,  # noqa: F401
                       pending_why, premise_rows, verdict_rows)
