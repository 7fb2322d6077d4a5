"""Appendix A.2 (Figures 1-4): one training per (eps_min, sigma, repeat, pruning), all four metrics from it.

The four figures of App. A.2 (L449-477) share grid points: Figures 1-2 use sigma in {1,3,5}/100 with
eps_min in 0.1..1.0, Figure 3 sigma in {5,7.5,10}/100 and Figure 4 sigma in {3,5,7.5}/100, both with
eps_min in 0.05..0.5. `grid_points` takes the union so every shared point is trained exactly once, and
`run_appendix` trains every (point, repeat) of one pruning arm in batched calls to `train.train`
(replicate dimension = points x repeats). Seeds: the dictionary M and the initialisation W0 depend on
the repeat only (a paired design: within a repeat every eps_min and sigma sees the same network and
feature space), the training stream depends on (repeat, point), and the 5,000 test pairs of a point
use one fixed test seed shared by every repeat and arm (App. A.2: "a fixed test seed").

The metrics themselves are in metrics.py.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import AppendixConfig, FIGURES, IMPROVES, METRICS, grid_points  # noqa: F401
from .metrics import (align_count, align_max, eval_metrics, minority_alignment, normalised, ridge_errors,  # noqa: F401
                      ridge_fit, ridge_mse)
from .protocol import (AppendixMeasures, AppendixResult, TRAINING_LOG, appendix_result,  # noqa: F401
                       flops_per_training, measure_appendix, point_code, reg_target, run_appendix)
from .verdicts import FIG_CLAIMS, diagnostic_report, trend_report, verdict_rows  # noqa: F401
