"""The interactive explorer: a small model trained on the fly at one slider setting, and a static gallery.

A *point* is one setting of the five sliders (eps_min, NSR, pruning ratio alpha, d, m). `ExplorerConfig`
holds everything else (a small SimConfig: short training, few pairs) plus the gallery grids and the slider
ranges. `result(cfg, point)` trains once and measures the neuron x feature alignment
|cos(w_i, M_j)| (App. A.2, Experiments 1-2) and, per feature, how many neurons are aligned above the
threshold. The live notebook (book/plots/explorer.live) and the static gallery of the published book (`gallery(cfg)`)
call the same functions, so the HTML shows exactly what the sliders would show at those settings.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from .config import ExplorerConfig, Point  # noqa: F401
from .metrics import Result, mask_effect, neuron_order  # noqa: F401
from .protocol import gallery, literal_contrast, result  # noqa: F401
