"""Resumable campaigns: a profile or a named grid split into independent units, fanned out on Dask, each recorded once.

    units    what a unit is (kind, name, parameters, code version) and the registry of unit kinds
    kinds    the built-in kinds: `notebook` (one notebook at a profile) and `scale_point` (one point of notebook 08)
    premise_cells  notebook 10's `premise_cell` kind (one cell of the premise map), its `target_cell` kind (a cell
             built from the premises' own requirements) and the reading of their records
    target_cells  notebook 10's target lines: a recorded target cell's measurements, or its unit and projected time
    pruning_sweeps  notebook 04's `pruning_sweep` kind (its alpha or eps_min grid apart from the part that decides
             claim 4's rows) and the reading of its records
    record   the atomic JSON record of one unit under results/campaign/<profile>/<kind>/, and the scan of a folder
    lock     a per-unit lock file, so that two campaigns on one folder never run the same unit
    engine   the fan-out on a Dask LocalCluster (or a SLURMCluster), with a budget, progress and a clean Ctrl-C
    checkpoint  a long unit's grid points (or batches) kept on disk while it runs, so a stopped unit resumes
    status   coverage: units done, pending (with their checkpointed points), stale, corrupt; the time left
    seeds    the same units under another base seed, and `campaign stability`
    cli      `python -m imbalanced_cl campaign run|status|stability`

This is the book-machinery layer: it may import book/, claims/, sim/ and lt/; nothing there imports it.
"""
