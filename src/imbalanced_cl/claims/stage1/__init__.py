"""Stage 1 (Lemma 3.1, Lemma C.1, Theorem C.1): growth rates along features, non-feature decay, and T1.

The package, in import order (each module imports only those above it):

    config    the config dataclass (the notebook's parameters), its constants and plain containers
    metrics   measurements: pure functions of weights, histories and Runs (no training)
    protocol  what is trained, in which order, and the summaries the notebook shows
    verdicts  verdict_rows(results, cfg) and the rules and reports that judge a finished run

Every public name of these modules is importable from here.
"""
from .config import Stage1Config  # noqa: F401
from .metrics import effective_kappa, feature_energy, fit_window, measured_rates, perp_history, perp_ratio  # noqa: F401
from .protocol import (TRAJECTORIES, measure_main, measure_push, measure_sweeps, pushed_rates,  # noqa: F401
                       rate_results, sparsity_table, t1_curves, t1_fits, t1_report, t1_sweep)
from .verdicts import MAIN_RUN_ROWS, verdict_rows  # noqa: F401
