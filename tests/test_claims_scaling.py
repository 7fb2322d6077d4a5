"""Notebook 03's claim module on hand-made grids with known scaling: exponents, ratios, overlaps, verdict rows."""
import math

import numpy as np
import pytest

from imbalanced_cl import stats
from imbalanced_cl.claims import scaling
from imbalanced_cl.verdict import FAILS, HOLDS, INCONCLUSIVE, PARTLY, UNTESTED

R, M = 3, 8


def _point(d, rho, r_noise):
    """Measurements of one grid point built so that |N_i| = 2 d^0.5 (final) and 1 (init), A_min/A_maj = rho,
    F_min/F_maj = rho^2, with the last 2 features minority; replicates differ by a common factor only."""
    minority = np.arange(d) >= d - 2
    A = np.where(minority, rho, 1.0)[None, :] * r_noise[:, None]
    alpha = np.full((R, M, d), 0.5)
    alpha[:, 0, 0] = np.nan                                   # j in N_i: not an off-set coefficient
    return {"Ni_final": 2.0 * d ** 0.5 * r_noise, "Ni_init": np.ones(R), "precision": np.full(R, 0.5),
            "recall": np.array([0.2, 0.4, 0.6]), "minority": minority, "A": A, "F": A ** 2,
            "single_per_feat": np.where(minority, 1.0, 3.0)[None, :].repeat(R, 0),
            "neurons_per_feat": np.where(minority, 4.0, 5.0)[None, :].repeat(R, 0),
            "pure_per_feat": np.where(minority, 1.0, 3.0)[None, :].repeat(R, 0),
            "alpha_p_scaled": alpha, "beta_scaled": np.full((R, M, 5), 2.0)}


@pytest.fixture
def grid():
    cfg = scaling.ScalingConfig(ds=(10, 20, 40), ratios=(1.0, 0.5), m=M, progress=False)
    noise = np.array([0.9, 1.0, 1.1])
    return cfg, {(d, r): _point(d, r, noise) for d in cfg.ds for r in cfg.ratios}


def test_ni_fits_recover_the_built_exponents(grid):
    cfg, res = grid
    fits = scaling.ni_fits(res, cfg)
    for r in cfg.ratios:
        assert fits["Ni_final"][r].slope == pytest.approx(0.5) and fits["Ni_init"][r].slope == pytest.approx(0.0)
    assert scaling.ni_array(res, cfg).shape == (R, 2, 3)
    assert "claim ≤ 0.75" in scaling.ni_report(fits)[1]


def test_feature_ratios_take_minority_over_majority(grid):
    cfg, res = grid
    fr = scaling.feature_ratios(res, cfg)
    assert fr["fitA"].slope == pytest.approx(1.0) and fr["fitF"].slope == pytest.approx(2.0)
    assert np.allclose(fr["single"][20], 1.0)                 # the minority count, not the majority 3
    # the bound m d^(-1/rho^2): 8/d <= 1 only for d >= 8 at rho = 1; at rho = 0.5, 8 d^-4 is tiny
    assert fr["single_ok"].all() and fr["single_ok"].size == 3 * 2 * R


def test_overlap_mixing_and_offsets(grid):
    cfg, res = grid
    ov = scaling.set_overlap(res)
    assert ov["precision"][0] == pytest.approx(0.5) and ov["recall"][0] == pytest.approx(0.4)
    assert ov["recall"][1] < 0.4 < ov["recall"][2]
    mix = scaling.mixing(res, cfg)
    assert mix["dmax"] == 40 and np.allclose(mix["pure"], [[3, 1], [3, 1]]) and np.allclose(mix["mixed"], [[2, 3], [2, 3]])
    ap, be = scaling.offset_coefs(res)
    assert ap.size == sum(R * M * d - R for d, _ in res)      # one NaN (j in N_i) per replicate dropped
    assert np.isfinite(ap).all() and (be == 2.0).all()


def _fit(s, lo, hi):
    return stats.SlopeFit(s, lo, hi, 0.0, 3)


def _results(**kw):
    base = {"fits": {"Ni_final": {1.0: _fit(0.05, -0.1, 0.2), 0.5: _fit(1.2, 1.0, 1.4), 0.3: _fit(0.5, math.nan, math.nan)}},
            "overlap": {"precision": (0.7, 0.6, 0.8)},
            "track": {"final (dominant set)": _fit(0.1, -0.1, 0.3), "init (Def. B.1)": _fit(0.95, 0.8, 1.1)},
            "ratios": {"fitA": _fit(0.95, 0.8, 1.1), "fitF": _fit(2.0, 1.0, 3.0), "single_ok": np.array([True] * 9 + [False])},
            "offset": (np.array([0.1, 0.2, 2.0]), np.array([0.5, 0.5]))}
    return {**base, **kw}


def test_verdict_rows_on_hand_made_results():
    cfg = scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False)
    rows = scaling.verdict_rows(_results(), cfg)
    # |N_i| bounds e = 0, 0.75, 0.91 with band (-inf, e + 0.1]: [-0.1, 0.2] straddles 0.1; [1.0, 1.4] lies above 0.85
    assert [r.verdict for r in rows] == [INCONCLUSIVE, FAILS, UNTESTED,
                                         PARTLY,                      # precision judged on its lower end 0.6
                                         FAILS, HOLDS,                # tracking slopes 0.1 and 0.95 against 1
                                         HOLDS, INCONCLUSIVE,         # A slope 0.95; F interval too wide
                                         HOLDS, PARTLY, HOLDS]        # 9/10 single; 2/3 alpha'; 2/2 beta
    assert rows[8].measured == pytest.approx(0.9) and (rows[8].lo, rows[8].hi) == pytest.approx(stats.binom_ci(9, 10))
    assert rows[1].predicted == "exponent ≤ 0.75"


def test_verdict_tolerances_come_from_the_config():
    loose = scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False, tol_ni=0.5, precision_levels=(0.6, 0.5))
    rows = scaling.verdict_rows(_results(), loose)
    assert rows[1].verdict == INCONCLUSIVE and "≤ 1.25" in rows[1].rule   # [1.0, 1.4] straddles 0.75 + 0.5
    assert scaling.verdict_rows(_results(), loose.replace(tol_ni=0.7))[1].verdict == HOLDS   # inside (-inf, 1.45]
    assert rows[3].verdict == HOLDS
    tight = scaling.verdict_rows(_results(), scaling.ScalingConfig(ratios=(1.0, 0.5, 0.3), progress=False, tol_A=0.01))
    assert tight[6].verdict == INCONCLUSIVE and "1 ± 0.01" in tight[6].rule   # A slope [0.8, 1.1] straddles 1 ± 0.01


@pytest.mark.parametrize("kw", [{"tol_A": -0.2}, {"tol_F": 0}, {"tol_tracking": (0.2, 0.5)}, {"precision_levels": (0.4, 0.5)},
                                {"precision_levels": (1.2, 0.5)}, {"tol_ni": 0.0}, {"tol_ni": (0.3, 0.1)}])
def test_bad_tolerances_name_the_parameter(kw):
    from imbalanced_cl.validate import ParameterError
    with pytest.raises(ParameterError, match=list(kw)[0]):
        scaling.ScalingConfig(progress=False, **kw)
