"""imbalanced_cl: the companion package of 'Theoretical analysis of contrastive learning under imbalanced data'.

A map, top to bottom (each layer imports only itself and the layers below; tests/test_layers.py checks it, and
docs/architecture.md draws it):

    __main__, lt/__main__, benchmarks/   entry points: may import anything
    campaign/ resumable campaigns of recorded units: Dask fan-out, locks, coverage (its notebook kind runs book/)
    book/     the machinery that turns notebooks into a book: runner (papermill + Jupyter Book), cells and params
              (parameters cells generated from the config dataclasses), profiles, tables and glued (verdict tables
              and glue), plots (the figure kinds notebooks share; plots_<name>: one notebook's own figures),
              scoreboard, answers, record (results/<profile>/), stability (other seeds), methods, provenance
    claims/   one sub-package per claim notebook, named after the claim: stage1 (01), lucky (02), scaling (03),
              pruning (04), appendix (05), explorer (07), scale (08), decoupling (09), premise_map (10),
              regime_compare (the regime page); census/ holds Def. B.1 (sets, exact, grid), shared by 02-04 and 08.
              Each has the same inner shape: config (the dataclass) -> metrics (measurements, no training) ->
              protocol (what is trained, in which order) -> verdicts (a tested verdict_rows(results, cfg)); its
              __init__ re-exports every public name. A claim uses sim/ and the base, never book/.
    lt/       real images (notebook 06, Table 2): images -> jpeg_pack -> datasets; augment, resnet -> sdclr,
              speed -> simclr (pre-training) -> probe -> experiment. Never book/ or claims/.
    sim/      the paper's model and its training: config (SimConfig), views, data (sparse-coding pairs), encoder
              (eq. 4), loss (eqs. 1-3, 21), prune (Algorithm 1), train (the loop), metrics (measurements on weights),
              theory (parameter-free predictions), regime (the premises on a run). Never lt/, claims/ or book/.
    verdict   the verdict rules every claim is judged by
    stats, validate, paths   the base: statistics (intervals, fits), parameter checks (ParameterError), the root

Why these names: a reader checking the science opens sim/ (the model) and the claim package of the notebook
in hand; nothing in either is book-keeping.
"""
__version__ = "0.2.0"
