"""Notebook 03 (claim 3): |N_i| along d and eps_min/eps_max, and the Stage-3 structure of Theorem 3.1
(eqs. 12-14): N_i, single-feature neurons, A_j, F_j, alpha', beta.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import ScalingConfig  # noqa: F401
from .metrics import (complement_coef, minority_ratio_over_time, ni_exponents, offset_alpha, stage3,  # noqa: F401
                      tracking_slope, tracking_slopes)
from .protocol import (THRESHOLDS, amplitude_course, feature_ratios, mixing, ni_array, ni_fits,  # noqa: F401
                       measure_push, ni_report, offset_coefs, set_overlap, summarise, threshold_sweep, tracking,
                       train_grid)
from .verdicts import bound_rows, verdict_rows, with_push  # noqa: F401
