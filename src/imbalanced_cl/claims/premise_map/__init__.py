"""Notebook 10: where do the theorems apply? A premise map over d, lambda, eps_min/eps_max, m/d, K, alpha and the
number of minority features, and claim 4 (pruning restores minority features) decided on it.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import (BIAS_ONSETS, LAMBDAS, STAR_AXES, Cell, PremiseMapConfig, bias_fields, eq33_t1,  # noqa: F401
                     lambda_value, window)
from .metrics import (CLOSED, MEASURED, Premise, closed_form, expected_lucky_minority, gain_of_pruning,  # noqa: F401
                      judged, kappa, mask_share, measured, minority_dominant, minority_rates, neurons_needed,
                      rate_table, rule)
from .ceiling import CEILING_K_MAX, LpCeiling, lp_ceilings  # noqa: F401
from .target import Target, measured_deviations, targets  # noqa: F401
from .protocol import ARM_TEXT, ARMS, ORACLES, Arm, CellResult, run_cell, run_map, train_to_convergence  # noqa: F401
from .verdicts import (Conclusion, answer_text, arm_ok, arm_premises, arm_row, binding_premises, cell_rows,  # noqa: F401
                       case_id, combine, conclusion, conflicts, judged_arm, prediction_rows, slug, verdict_rows)
