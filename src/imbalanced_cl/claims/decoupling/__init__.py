"""Feature decoupling (Wen & Li 2021; notebook 09): what augmentation does to what the learner learns.

One learner (the main paper's encoder with L = 1: Wen & Li's one-layer BReLU network), three ways to build
positive pairs (sim/views.py), trained side by side in the replicate dimension over a grid of pair types x
eps_min/eps_max. Measured on held-out raw samples x = M z + xi (Def. 2.1): the feature share, cos(f(x), f(xi))
(Thm 3.2), cos(f(x), f(Mz)) (Thm 3.4), singleton neurons per atom (Thm 3.4) and a ridge probe of z from f(x)
(Cor. 3.3/3.5). These are companion claims: their verdict rows carry kind = "companion", not the main paper's.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import (AUGMENTED, COMPANION, DecouplingConfig, EXTRA_FIT, EXTRA_TEST, Raw,  # noqa: F401
                     STREAM_DECOUPLING, wen_li_scales)
from .metrics import attend, cosine, coverage, encode, feature_share, measure, ridge_probe, singletons  # noqa: F401
from .protocol import (DecouplingResult, GridSampler, latent_energy, measure_grids, one_view_latents,  # noqa: F401
                       raw_samples, run_grid, run_grids, threads, view_correlations)
from .verdicts import (LABELS, differences, final_table, imbalance_answer, imbalance_table,  # noqa: F401
                       paired_difference, split_mean, verdict_rows)
