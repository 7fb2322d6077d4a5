"""Notebook 02 (claim 2): lucky neurons. T2 (eq. 61) and Lemma 3.2 (eqs. 9-10) on trained runs, the workshop's
Figure 1, and the notebook's verdict rows; the census on a (d, eps ratio) grid (Def. B.1, Lemma B.2) is in
census/grid.py (its names are importable from here too).

LuckyConfig extends SimConfig with the census grid (census.grid.CensusConfig), the training grid and the
verdict tolerances; bad values raise ParameterError naming the parameter and its allowed range.

Its modules, in import order, are mapped in docs/architecture.md ("Inside a claim package"); every public
name is importable from here.
"""
from ..census.grid import CensusConfig, census_fits, mc_census_multi, paper_exponents, run_census  # noqa: F401 (notebook 02)
from .config import LuckyConfig  # noqa: F401
from .metrics import coef_at, detect_t2, lemma32, norm2_at  # noqa: F401
from .protocol import (lemma32_report, lemma32_run, measure_push, measure_t2, t2_grid,  # noqa: F401
                       workshop_figure, workshop_report)
from .verdicts import PUSHED, census_rows, verdict_rows, with_push  # noqa: F401
