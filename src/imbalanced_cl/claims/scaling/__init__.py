"""Notebook 03 (claim 3): |N_i| along d and eps_min/eps_max, and the Stage-3 structure of Theorem 3.1
(eqs. 12-14): N_i, single-feature neurons, A_j, F_j, alpha', beta.

The package, in import order (each module imports only those above it):

    config    the config dataclass (the notebook's parameters), its constants and plain containers
    metrics   measurements: pure functions of weights, histories and Runs (no training)
    protocol  what is trained, in which order, and the summaries the notebook shows
    verdicts  verdict_rows(results, cfg) and the rules and reports that judge a finished run

Every public name of these modules is importable from here.
"""
from .config import ScalingConfig  # noqa: F401
from .metrics import (complement_coef, minority_ratio_over_time, ni_exponents, offset_alpha, stage3,  # noqa: F401
                      tracking_slope, tracking_slopes)
from .protocol import (THRESHOLDS, amplitude_course, feature_ratios, mixing, ni_array, ni_fits,  # noqa: F401
                       measure_push, ni_report, offset_coefs, set_overlap, summarise, threshold_sweep, tracking,
                       train_grid)
from .verdicts import bound_row, verdict_rows, with_push  # noqa: F401
