"""benchmarks/book_profile.py: the attribution rule on hand-made stacks, frame naming, parameter injection, sampling."""
from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import nbformat

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import book_profile as BP

CELL = ("__main__", "<cell 4>")
PROTOCOL = ("imbalanced_cl.claims.pruning.protocol", "run_branches")
TRAIN = ("imbalanced_cl.sim.train", "train")
CHUNK = ("imbalanced_cl.sim.train", "_train_chunk")
BATCH = ("imbalanced_cl.sim.train", "_batch")
STEP = ("imbalanced_cl.sim.train", "step")
GRADIENT = ("imbalanced_cl.sim.train", "gradient")
MAKE_PAIRS = ("imbalanced_cl.sim.data", "make_pairs")
FILL = ("imbalanced_cl.sim.data", "make_pairs.<locals>.fill")
ENCODER = ("imbalanced_cl.sim.encoder", "embed")
TORCH = ("torch.functional", "einsum")
HELDOUT = ("imbalanced_cl.sim.train", "Run.heldout")
REGIME = ("imbalanced_cl.sim.regime", "measure")
POP = ("imbalanced_cl.sim.regime", "population_gradient")
METRIC = ("imbalanced_cl.claims.pruning.metrics", "amplitude_ratio")


def test_one_stack_per_category():
    assert BP.categorise([CELL, PROTOCOL, TRAIN, CHUNK, BATCH, MAKE_PAIRS, FILL]) == BP.DRAW
    assert BP.categorise([CELL, PROTOCOL, TRAIN, CHUNK, STEP, GRADIENT, ENCODER, TORCH]) == BP.TRAIN
    assert BP.categorise([CELL, ("imbalanced_cl.claims.lucky.protocol", "census_grid"),
                          ("imbalanced_cl.claims.census.grid", "count")]) == BP.MEASURE
    assert BP.categorise([CELL, REGIME, POP, GRADIENT, ENCODER]) == BP.REGIME
    assert BP.categorise([CELL, ("imbalanced_cl.lt.experiment", "run"), ("imbalanced_cl.lt.simclr", "step"),
                          TORCH]) == BP.LT
    assert BP.categorise([CELL, ("imbalanced_cl.book.plots.common", "trajectories"),
                          ("matplotlib.axes", "plot")]) == BP.OTHER
    assert BP.categorise([]) == BP.OTHER


def test_outermost_measurement_or_regime_frame_decides():
    # Held-out pairs drawn for a measurement are measurement, not drawing pairs (an innermost-wins rule says DRAW).
    assert BP.categorise([CELL, METRIC, HELDOUT, MAKE_PAIRS, FILL]) == BP.MEASURE
    # The population gradient draws held-out pairs and takes gradients: all of it is the regime rows.
    assert BP.categorise([CELL, REGIME, POP, HELDOUT, MAKE_PAIRS, FILL]) == BP.REGIME
    assert BP.categorise([CELL, REGIME, POP, GRADIENT]) == BP.REGIME
    # Regime outside a measurement: regime; a measurement outside the regime code: measurement (outermost wins;
    # reversed, each would give the other).
    assert BP.categorise([CELL, REGIME, ("imbalanced_cl.sim.metrics", "feature_share")]) == BP.REGIME
    assert BP.categorise([CELL, METRIC, REGIME, POP]) == BP.MEASURE


def test_innermost_of_draw_train_lt_decides():
    # Drawing pairs inside the training loop counts as drawing pairs, a step inside real-image code as training.
    assert BP.categorise([CELL, TRAIN, CHUNK, BATCH, MAKE_PAIRS]) == BP.DRAW
    assert BP.categorise([CELL, ("imbalanced_cl.lt.experiment", "run"), TRAIN, STEP]) == BP.TRAIN
    assert BP.categorise([CELL, TRAIN, ("imbalanced_cl.lt.speed", "x")]) == BP.LT


def test_training_loop_check_is_training():
    # _train_chunk calls sim.metrics.feature_share for T1 every step: part of the loop, not a measurement.
    assert BP.categorise([CELL, TRAIN, CHUNK, ("imbalanced_cl.sim.metrics", "feature_share")]) == BP.TRAIN
    # The same function called by a notebook or a metrics module is a measurement.
    assert BP.categorise([CELL, ("imbalanced_cl.sim.metrics", "feature_share")]) == BP.MEASURE


def test_frame_key_names_cells_and_heldout_draws():
    def frame(module, name, qualname=None, filename="x.py", **local):
        code = SimpleNamespace(co_name=name, co_qualname=qualname or name, co_filename=filename)
        return SimpleNamespace(f_globals={"__name__": module}, f_code=code, f_locals=local, f_back=None)

    assert BP.frame_key(frame("__main__", "<module>", filename="<cell 3>")) == ("__main__", "<cell 3>")
    assert BP.frame_key(frame("imbalanced_cl.sim.train", "heldout", "Run.heldout")) == HELDOUT
    assert BP.frame_key(frame(BP.DATA, "make_pairs", purpose=BP.STREAM_TRAIN)) == MAKE_PAIRS
    test = BP.frame_key(frame(BP.DATA, "make_pairs", purpose=3))
    assert test == (BP.DATA, BP.HELDOUT_DRAW) and BP.categorise([CELL, test, FILL]) == BP.MEASURE
    from imbalanced_cl.sim import data
    assert data.STREAM_TRAIN == BP.STREAM_TRAIN


def test_parameters_follow_the_parameters_cell():
    nb = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("# title"),
        nbformat.v4.new_code_cell("import os"),
        nbformat.v4.new_code_cell("d: int = 20", metadata={"tags": ["parameters", "hide-cell"]}),
        nbformat.v4.new_code_cell("print(d)"),
    ])
    cells = BP.notebook_cells(nb, {"d": 12, "grid": [6, 12], "mode": "fresh"})
    assert cells == ["import os", "d: int = 20", "d = 12\ngrid = [6, 12]\nmode = 'fresh'", "print(d)"]
    ns = {}
    for c in cells:
        exec(c, ns)
    assert (ns["d"], ns["grid"], ns["mode"]) == (12, [6, 12], "fresh")


def test_sampler_sees_the_main_thread():
    with BP.Sampler(0.002) as s:
        t = time.perf_counter()
        while time.perf_counter() - t < 0.2:
            sum(range(1000))
    assert sum(s.counts.values()) > 3 and set(s.counts) == {BP.OTHER}
    assert BP.shares(s.counts)[BP.OTHER] == 1.0


def test_other_is_named_by_its_own_frame_and_library():
    stack = [("__main__", "run_notebook"), CELL, ("imbalanced_cl.book.plots.common", "trajectories"),
             ("matplotlib.axes._axes", "plot")]
    assert BP.own_frame(stack) == "book.plots.common:trajectories > matplotlib"
    assert BP.own_frame(stack[:2]) == "__main__:<cell 4>"
    assert BP.own_frame([("threading", "run")]).startswith("(outside")


def _res(name, wall, counts):
    import collections
    return {"name": name, "wall": wall, "counts": collections.Counter(counts), "other": collections.Counter(),
            "cpu": collections.Counter(), "error": None, "output_tail": ""}


def test_amdahl_scales_only_draws_and_steps():
    res = _res("nb", 100.0, {BP.DRAW: 50, BP.TRAIN: 30, BP.MEASURE: 10, BP.OTHER: 10})
    # by hand: 100 * (0.2 kept + 0.5 / 2 + 0.3 / 3) = 55
    assert abs(BP.amdahl(res, 2.0, 3.0) - 55.0) < 1e-9
    assert abs(BP.amdahl(res, 1.0, 1.0) - 100.0) < 1e-9


def test_ceilings_are_the_goals_and_the_floors():
    goals, floors = BP.ceilings(2.6, 0.5).values()
    assert abs(goals[0] - 2.0) < 1e-12 and abs(goals[1] - 1.2) < 1e-12        # 2.6 / 1.3, 0.60 / 0.5
    assert abs(floors[0] - 2.6) < 1e-12 and abs(floors[1] - 2.0) < 1e-12      # the RNG floor, the full matmul rate
    assert BP.ceilings(1.1, 0.7)["at the goals s"] == (1.0, 1.0)              # a goal already met slows nothing


def test_markdown_total_row_sums_the_notebooks(tmp_path):
    results = [_res("a", 100.0, {BP.DRAW: 1, BP.OTHER: 1}), _res("b", 50.0, {BP.TRAIN: 1})]
    BP.save(tmp_path / "p.json", results)
    again = BP.load(tmp_path / "p.json")
    assert again == results
    table = BP.markdown_table(again, (2.0, 0.5))
    last = [c.strip() for c in table.splitlines()[-1].strip("|").split("|")]
    # floors: draws 2x, steps 2x -> a: 50 + 25 = 75, b: 25; goals: draws 2/1.3, steps 1.2 -> a: 50 + 32.5, b: 41.67
    assert last[0] == "all" and last[1] == "150.0" and last[-1] == "100" and last[-2] == "124"
