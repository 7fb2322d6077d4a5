"""The band on the row (issue 49, item 2): every row shows the band it is judged against, and no row reads "holds"
with its measured value outside the band it displays."""
from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from imbalanced_cl import rules
from imbalanced_cl import verdict as V
from imbalanced_cl.book.records import results_table
from imbalanced_cl.book.pages import show, tables
from imbalanced_cl.verdict import HOLDS, UNTESTED

INF = math.inf


def _inside(r, x) -> bool:
    return r.band_lo - 1e-12 <= x <= r.band_hi + 1e-12


JUDGES = {
    "target": lambda lo, hi: rules.judge_target(lo, hi, 1.0, 0.1),
    "target_relative": lambda lo, hi: rules.judge_target(lo, hi, 10.0, 0.1, relative=True),
    "positive": lambda lo, hi: rules.judge_positive(lo, hi, "gain", 0.05),
    "negative": lambda lo, hi: rules.judge_positive(lo, hi, "gain", 0.05, direction=-1),
    "bound_at_least": lambda lo, hi: rules.judge_bound(lo, hi, 0.9, True, 0.1),
    "bound_at_most": lambda lo, hi: rules.judge_bound(lo, hi, 0.5, False, 0.1),
    "at_least": lambda lo, hi: rules.judge_at_least(lo, hi, 2.0, "count"),
    "factor": lambda lo, hi: rules.judge_factor(lo, hi, 10.0, 1.5),
    "trend_up": lambda lo, hi: rules.judge_trend(lo, hi, 1, 0.3),
    "trend_down": lambda lo, hi: rules.judge_trend(lo, hi, -1, 0.3),
    "share": lambda lo, hi: rules.judge_share(lo, hi, 0.9),
}
GRID = np.round(np.linspace(-3.0, 16.0, 39), 3)


@pytest.mark.parametrize("name", sorted(JUDGES))
def test_a_rule_holds_exactly_when_the_interval_lies_in_the_band_it_carries(name):
    """Every judge_* states the band it judged against (rules.Rule): over a grid of intervals, "holds" if and only
    if [lo, hi] lies inside that band, so the band a row shows is the one that decided it."""
    for lo, hi in itertools.combinations_with_replacement(GRID, 2):
        verdict, rule = JUDGES[name](lo, hi)
        blo, bhi = rule.band
        assert (verdict == HOLDS) == (blo <= lo and hi <= bhi and not (lo <= 0 <= hi and (blo > 0 or bhi < 0))), \
            (name, lo, hi, verdict, rule.band)


def test_the_band_travels_from_the_rule_to_the_row_and_reads_in_words():
    v, rule = rules.judge_bound(0.812, 0.836, 0.9, True, 0.1)
    r = V.Verdict(
        claim="|M_j*| exponent",
        source="Lemma B.2(c)",
        predicted="exponent ≥ 0.90",
        measured=0.824,
        lo=0.812,
        hi=0.836,
        verdict=v,
        rule="fit; " + rule,
        id="x",
    )
    assert v == HOLDS and (r.band_lo, r.band_hi) == pytest.approx((0.8, INF)) and type(r.rule) is str
    assert V.predicted_with_band(r) == "exponent ≥ 0.90 (holds at ≥ 0.8)"       # the example, no contradiction
    assert V.band_text(V.row("t", "s", "1", 1.0, 0.9, 1.1, rules.judge_target(0.9, 1.1, 1.0, 0.15), id="t")) \
        == "holds within [0.85, 1.15]"
    assert V.band_text(V.row("b", "s", "≤", 0.1, 0.0, 0.2, rules.judge_bound(0.0, 0.2, 0.25, False, 0.0), id="b")) \
        == "holds at ≤ 0.25"
    nb = V.Verdict(
        claim="n",
        source="s",
        predicted="p",
        measured=math.nan,
        lo=math.nan,
        hi=math.nan,
        verdict=UNTESTED,
        rule="no data",
        id="n",
    )
    assert V.band_text(nb) == "" and V.predicted_with_band(nb) == "p"


def _scale_result():
    """Notebook 08 by hand, at d = 20, 40, 80 (two groups, three replicates), every premise met: the alignment's
    shortfall halves per doubling of d (1, 0.5, 0: its gap closes, slope -0.5 per doubling); every other quantity
    sits on its prediction at every d (no gap)."""
    from imbalanced_cl.claims import scale as S
    cfg = S.ScaleConfig(ds=(20, 40, 80), ratios=(1.0, 0.5), R=3)
    R, points = 3, []
    for k, d in enumerate(cfg.ds):
        rep = np.arange(R)
        points.append({"q_max": np.array([0.1]), "T1": np.full((2, R), 5.0), "window": (3, 10),
                       "T2": np.full(R, 10.0), "stage3": True, "lucky_pairs": np.ones((2, R)), "m": 20,
                       "dominant": np.full(R, 10.0), "rate_ratio": 2.0 + 0.01 * (rep - 1),
                       "lucky_frac": np.ones((2, R)),
                       "alignment": cfg.sesoi_alignment * k / 2 * (1 + 0.01 * rep),
                       "Ni": np.stack([np.full(R, 3.0), 3.0 * d ** 0.75 * (1 + 0.001 * rep)]),
                       "share": np.ones(R), "gain": np.full(R, 0.5) + 0.001 * (rep - 1)})
    return S.ScaleResult(cfg, points), cfg


def _rows_by_notebook() -> dict:
    """Every claim notebook's rows, built from hand-made results (the builders of the existing tests): notebooks
    01-04 with their premise rows (tests/test_verdict_wiring.py), 05, 06, 08, 09 and 10."""
    from tests.test_verdict_wiring import BUILDERS, _table
    out = {nb: list(_table(nb).values()) for nb in BUILDERS}
    from imbalanced_cl.claims import appendix as AP
    from tests.test_appendix import _made_result, tiny_cfg
    out["05_appendix_figures"] = AP.verdict_rows(_made_result(tiny_cfg(repeats=3, boot=20)))
    from imbalanced_cl.lt import verdicts as LV
    from tests.test_lt_verdicts import _results as lt_results
    out["06_lt_benchmarks"] = LV.verdict_rows(lt_results(simclr=73.0, gain=5.0), "cifar10", band=10.0)
    from imbalanced_cl.claims import scale as S
    res, cfg = _scale_result()
    out["08_scale"] = S.verdict_rows(res, cfg)
    from imbalanced_cl.claims import decoupling as DC
    from tests.test_decoupling import _result as dc_result
    res = dc_result({("share", "random_mask"): [0.95, 0.96, 0.97, 0.96],
                     ("align", "random_mask"): [0.1, 0.12, 0.1, 0.11],
                     ("removal", "random_mask"): [0.95, 0.96, 0.95, 0.97],
                     ("singles", "random_mask"): torch.ones(4, 4, dtype=torch.long),
                     ("probe", "random_mask"): [0.1, 0.12, 0.11, 0.1], ("align", "identical"): [0.95, 0.96, 0.97, 0.96],
                     ("probe", "identical"): [0.9, 0.92, 0.91, 0.9]})
    out["09_decoupling"] = DC.verdict_rows(res, DC.DecouplingConfig(ratios=(1.0,)))
    from imbalanced_cl.claims import premise_map as PM
    from tests.test_premise_map import ALL, _arm, _cell, _result
    cell = _cell()
    arms = {a: _arm(a, [0.10, 0.12, 0.11]) for a in ("alg1", "oracle_lucky")}
    res = [_result(cell, ALL, [0.10, 0.12, 0.11], arms=arms)]
    out["10_premise_map"] = PM.verdict_rows(res, [], cell.cfg)
    return out


def _all_rows():
    """Every row of _rows_by_notebook, in one list."""
    return [r for rows in _rows_by_notebook().values() for r in rows]


def _held(rows):
    return [r for r in rows if HOLDS in (r.verdict, r.would_be) and not math.isnan(r.band_lo)]


def test_no_row_reads_holds_with_its_value_outside_the_band_it_shows():
    """Over every claim notebook's rows (each contributes rows that hold): a row that reads "holds" (or would, where
    a premise gates it) has its measured value and its whole interval inside the band it displays."""
    by_nb = _rows_by_notebook()
    assert {nb[:2] for nb in by_nb} == {"01", "02", "03", "04", "05", "06", "08", "09", "10"}
    for nb, rows in by_nb.items():
        assert _held(rows), f"{nb}: no row that holds, so this test would check nothing there"
    held = _held(_all_rows())
    assert len(held) > 30
    for r in held:
        assert _inside(r, r.measured), (r.id, r.measured, r.band_lo, r.band_hi)
        assert V.band_text(r).startswith("holds")
        assert _inside(r, r.lo) and _inside(r, r.hi), (r.id, r.lo, r.hi, r.band_lo, r.band_hi)


def test_the_check_catches_a_row_whose_band_was_widened_after_the_rule():
    """The test above can fail: a row that holds, shown with a band other than its rule's, is caught."""
    r = next(r for r in _rows_by_notebook()["08_scale"] if r.verdict == HOLDS and not math.isnan(r.band_lo))
    moved = V.Verdict(
        claim=r.claim,
        source=r.source,
        predicted=r.predicted,
        measured=r.measured,
        lo=r.lo,
        hi=r.hi,
        verdict=r.verdict,
        band_lo=r.hi + 1.0,
        band_hi=INF,
        id=r.id,
    )
    assert _held([moved]) and not _inside(moved, moved.measured)


def test_every_judged_row_shows_a_band():
    rows = _all_rows()
    missing = [r.id for r in rows if r.verdict != UNTESTED and not V.band_text(r)]
    assert not missing


def test_the_band_is_shown_in_the_notebook_table_show_and_the_csv(tmp_path):
    v, rule = rules.judge_bound(0.812, 0.836, 0.9, True, 0.1)
    row = V.Verdict(
        claim="|M_j*| exponent",
        source="Lemma B.2(c)",
        predicted="exponent ≥ 0.90",
        measured=0.824,
        lo=0.812,
        hi=0.836,
        verdict=v,
        rule=rule,
        id="x",
        band_lo=0.8,
    )
    open_ = V.row("gain", "Thm", "> 0.02", 0.1, 0.05, 0.15, rules.judge_positive(0.05, 0.15, "gain", 0.02), id="g")
    table = tables.VerdictTable("02_lucky_neurons", [row, open_])
    js = table.to_json()
    assert js[0]["band"] == "holds at ≥ 0.8" and js[0]["band_hi"] is None        # valid JSON: no Infinity
    assert "exponent ≥ 0.90 (holds at ≥ 0.8)" in table._repr_html_()
    assert "(holds at ≥ 0.8)" in repr(table)
    assert V.predicted_with_band(V.from_json(js[1])) == "> 0.02 (holds at ≥ 0.02)"      # read back: still open
    from tests.test_show import _executed
    text = show.render(_executed(tmp_path, js), width=160)
    assert "> 0.02 (holds at ≥ 0.02)" in text and "(holds at ≥" in text       # the first wraps in its column
    assert "band" in results_table.FIELDS
    csv = results_table.to_csv([{k: {**js[0], "notebook": "02"}.get(k, "") for k in results_table.FIELDS}])
    assert "holds at ≥ 0.8" in csv


# What each row's measured value is, written from the code that computes it (not read back from the labels): the
# label must name it after the statement, with its unit where it has one (issue 49: "every row's label names the
# number it shows"). Keys are row ids or id prefixes (a parameter in the id: ρ, the dataset, the cell).
SHOWS = {
    "01": {"rate_slope": "log-log slope", "rate_vs_linear": "ratio", "rate_ratio": "rate ratio",
           "perp_decay": "||P⊥w(T1)|| / decay-only", "t1_d1_": "exponent of d1"},
    "02": {"lucky_exponent_": "exponent of d in E|M_j*|", "ordinary_exponent_": "exponent of d in E|M_j|",
           "ni_init_exponent_": "exponent of d in |N_i|", "pr_b_": "value at the largest d",
           "t2_minus_t1": "log-log slope of T2 - T1", "lemma32_lucky_level": "share of lucky pairs",
           "lemma32_ordinary_bound": "share of features", "top_hit_": "share of features",
           "workshop_fig1_gap": "majority − minority best cos²", "m_poly": "C_m"},
    "03": {"ni_exponent_": "exponent of d in |N_i|", "dominant_set_precision": "precision",
           "ni_tracking_": "slope of the exponent on 1 − ρ²", "a_j_slope": "log-log slope of A_j",
           "f_j_slope": "log-log slope of F_j", "singleton_neurons": "share of (d, ρ, replicate) cells",
           "offset_": "share of entries", "null_below_band__": "share of untrained entries below 1"},
    "04": {"excess_rate_positive": "excess growth rate", "excess_rate_alpha_slope": "log-log slope of the excess rate",
           "excess_rate_eps_slope": "log-log slope of the excess rate", "excess_ratio_d": "ratio of the minority",
           "ratio_slope_": "log-log slope of A_j*/A_maj", "gain_": "change in A_j*/A_maj, pruned − control",
           "aligned_neurons_gain": "change in their count", "singleton_after_pruning": "their count",
           "lp_gap_mechanism": "rise with j* minus without", "mask_share": "share of the mask",
           "majority_intact": "relative change of A_maj", "degrade_threshold": "the first alpha",
           "slope_difference": "control minus pruned", "alg1_from_t0": "change in A_j*/A_maj, pruned − vanilla",
           "control_magnitude_vs_random": "magnitude − random", "control_dynamic_vs_static": "dynamic − static",
           "convergence": "InfoNCE, in nats", "prune_from_t4": "length, in steps", "alpha_bound": "in neurons"},
    "05": {"fig": "Spearman ρ"},
    "06": {"sdclr_acc_": "accuracy gain in percentage points", "alg1_acc_": "accuracy gain in percentage points",
           "sdclr_delta20_": "Δ20 reduction in percentage points",
           "alg1_delta20_": "Δ20 reduction in percentage points",
           "baseline_reproduced__": "ours minus the paper's, in percentage points"},
    "08": {k: "slope per doubling of d, in tolerance units" for k in ("rate_ratio", "lucky_fraction", "alignment",
                                                                     "ni_", "mask_share", "pruning_gain")}
          | {k: "share of d's that meet it" for k in ("sparse_data", "stage_reached__", "convergence", "lucky_exist",
                                                     "alpha_bound_extended")},
    "09": {"random_mask_share": "share", "paper_share": "share", "_align": "cos(f(x), f(ξ))",
           "_removal": "cos(f(x), f(Mz))", "_coverage": "share of atoms", "_probe": "normalised MSE",
           "probe_gap_": "MSE without minus with", "stage_reached__": "how far its mean moved",
           "companion_bias__": "share of replicates that meet it"},
    "10": {"gain_": "gain in A_j*/A_maj, pruned − control", "claim4_map": "Algorithm 1's gain in A_j*/A_maj",
           "_map": "share of cells where it holds", "__map": "share of cells run that meet it",
           **{f"{cid}__": what for cid, what in (("lambda_range", "weight decay λ"), ("noise_scale", "σ_ξ²"),
                                                 ("minority_growth", "net rate gain"), ("lucky_exist", "lucky neurons"),
                                                 ("step_window", "T4, in steps"), ("k_poly", "||g_K − g_pop||"),
                                                 ("convergence", "InfoNCE at T4"), ("prune_from_t4", "in steps"),
                                                 ("alpha_bound", "α·m, in neurons"))}},
    # the premise rows every notebook of the model shows (claims/premise_rows.py)
    "premise": {"k_poly": "||g_K − g_pop|| / ||w||", "no_memorisation": "relative gap", "step_window": "steps",
                "lambda_range": "weight decay λ", "noise_scale": "ratio σ_ξ²", "feature_span": "share",
                "tau_polylog": "temperature τ", "eta_poly": "learning rate η"},
}


def _shows(nb: str, rid: str) -> str | None:
    """The phrase row `rid` of notebook `nb` must name: its own entry (the longest id prefix or suffix that
    matches), else the premise rows'."""
    for table in (SHOWS[nb[:2]], SHOWS["premise"]):
        hits = [k for k in table if rid.startswith(k) or (k.startswith("_") and rid.endswith(k))]
        if hits:
            return table[max(hits, key=len)]
    return None


@pytest.mark.parametrize("nb", ["01", "02", "03", "04", "05", "06", "08", "09", "10"])
def test_every_rows_label_names_the_number_it_shows(nb):
    """Each row of each claim notebook names, in its label, the quantity its measured value is (a slope, a share, a
    change, with the unit where there is one): a reader of "0.95 [0.9, 1.0]" knows what it is without the code."""
    rows = next(rows for name, rows in _rows_by_notebook().items() if name.startswith(nb))
    missing = [r.id for r in rows if _shows(nb, r.id) is None]
    assert not missing, f"rows with no entry in SHOWS: {missing}"
    for r in rows:
        assert _shows(nb, r.id) in r.claim, (r.id, r.claim)


def test_notebook_08s_rows_name_the_slope_of_the_gap_not_the_quantity():
    """The issue's example: the alignment row shows the slope along log2 d of its gap to the prediction, in
    tolerance units (here -0.5 per doubling, beyond [-1, 1] a cos² difference could never leave), and says so."""
    from imbalanced_cl.claims import scale as S
    res, cfg = _scale_result()
    row = {r.id: r for r in S.verdict_rows(res, cfg)}["alignment"]
    assert row.measured == pytest.approx(-0.5, abs=0.01) and row.verdict == HOLDS
    assert row.claim.endswith(S.GAP_LABEL) and "slope per doubling of d, in tolerance units" in S.GAP_LABEL


def test_the_methods_page_explains_the_band_once_with_the_rows_own_words():
    """book/methods.ipynb explains the band once (one paragraph, no second hand-written one), and its example reads
    exactly as a row shows it (verdict.predicted_with_band on the same numbers)."""
    import json

    from imbalanced_cl.paths import repo_root
    cells = json.loads((repo_root() / "book" / "methods.ipynb").read_text())["cells"]
    md = " ".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown").replace("\n", " ")
    assert md.count("**Every row shows its band.**") == 1 and md.count("**The band.**") == 1
    v, rule = rules.judge_bound(0.812, 0.836, 0.9, True, 0.1)
    row = V.Verdict(
        claim="exponent",
        source="s",
        predicted="exponent ≥ 0.90",
        measured=0.824,
        lo=0.812,
        hi=0.836,
        verdict=v,
        rule=rule,
        id="x",
    )
    assert v == HOLDS and f'"{V.predicted_with_band(row)}"' in md
    assert "label ends with the number it shows, with its unit" in md
