"""imbalanced_cl: the companion package of 'Theoretical analysis of contrastive learning under imbalanced data'.

A map, in the order the imports run (each layer uses only the layers above it):

    validate, stats, verdict   the base: parameter checks (ParameterError), statistics (intervals, fits),
                               and the verdict rules every claim is judged by
    sim/      the paper's model and its training: config (SimConfig) -> data (sparse-coding pairs) ->
              encoder (eq. 4) -> loss (eqs. 1-3, 21) <- prune (Algorithm 1) -> train (the loop) ->
              metrics (measurements on weights) -> theory (parameter-free predictions)
    claims/   one analysis module per claim notebook, named after the claim: stage1 (01), lucky (02), scaling (03),
              pruning (04; measurements in pruning_metrics, the random-mask control in pruning_control),
              appendix (05; measurements in appendix_metrics, trends and verdicts in appendix_verdicts),
              explorer (07), scale (08: scale_config the grid, scale_point one d, scale_trends the trend rule),
              decoupling (09, beyond the paper; measurements in decoupling_metrics, the grid's verdicts in
              decoupling_verdicts), regime_compare (the regime page); census / census_exact hold Def. B.1, which
              02-04 share, and census_grid runs it on notebook 02's (d, ρ) grid. reexport (the package's
              __init__) lets a claim module name its verdicts module's functions.
              Each has a tested verdict_rows(results, cfg).
              A claim module uses sim/ and the base, never book/.
    book/     the machinery that turns notebooks into a book: runner (papermill + Jupyter Book), cells and params
              (parameters cells generated from the config dataclasses), profiles, tables (verdict tables and
              glue), plots (the figure kinds notebooks share; plots_<name>: one notebook's own figures),
              scoreboard, record (results/<profile>/), stability (other seeds), methods, provenance
    lt/       real images (notebook 06, Table 2): datasets -> augment -> resnet -> simclr / sdclr -> probe -> experiment

Why these names: a reader checking the science opens sim/ (the model) and the claim module of the notebook
in hand; nothing in either is book-keeping.
"""
__version__ = "0.2.0"
