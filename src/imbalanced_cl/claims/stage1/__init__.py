"""Stage 1 (Lemma 3.1, Lemma C.1, Theorem C.1): growth rates along features, non-feature decay, and T1.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import Stage1Config  # noqa: F401
from .metrics import effective_kappa, feature_energy, fit_window, measured_rates, perp_history, perp_ratio  # noqa: F401
from .protocol import (TRAJECTORIES, measure_main, measure_push, measure_sweeps, pushed_rates,  # noqa: F401
                       rate_results, sparsity_table, t1_curves, t1_fits, t1_report, t1_sweep)
from .verdicts import MAIN_RUN_ROWS, verdict_rows  # noqa: F401
