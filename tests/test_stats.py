"""stats.py's intervals: t quantiles, Wilson and the bootstrap come from scipy.stats, checked against closed forms
worked by hand and against textbook tables (issue 28, item 5: the old table stopped at df = 30 and used 1.96)."""
from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.stats as sps
import torch

from imbalanced_cl import stats

Z975 = 1.959963984540054  # the normal 97.5% quantile (Abramowitz & Stegun, table 26.5)


def test_t_quantile_closed_forms():
    """df = 1 is Cauchy, tan(pi (p - 1/2)); df = 2 is (2p - 1) / sqrt(2 p (1 - p)); df -> infinity is the normal."""
    p = 0.975
    assert stats.t975(1) == pytest.approx(math.tan(math.pi * (p - 0.5)), rel=1e-12)   # 12.7062
    assert stats.t975(2) == pytest.approx((2 * p - 1) / math.sqrt(2 * p * (1 - p)), rel=1e-12)  # 4.3027
    assert stats.t975(10**9) == pytest.approx(Z975, rel=1e-8)
    assert math.isnan(stats.t975(0))


@pytest.mark.parametrize("df, table", [(30, 2.0423), (31, 2.0395), (39, 2.0227), (60, 2.0003), (99, 1.9842)])
def test_t_quantile_beyond_df_30_matches_printed_tables(df, table):
    """The old table fell back to 1.96 past df = 30: 4% too narrow at R = 32 (df 31)."""
    assert stats.t975(df) == pytest.approx(table, abs=6e-5)


def test_mean_ci_at_32_replicates_uses_t_with_31_degrees_of_freedom():
    x = torch.arange(32, dtype=torch.float64)
    m, lo, hi = stats.mean_ci(x)
    half = 2.0395 * float(x.std()) / math.sqrt(32)
    assert float(m) == pytest.approx(15.5) and float(hi - m) == pytest.approx(half, rel=3e-5)
    assert float(m - lo) == pytest.approx(float(hi - m))


def test_mean_ci_matches_scipy_at_every_replicate_count_and_skips_nans():
    """Every R the profiles use (2 to 100) gets scipy's t interval; NaNs are dropped; one value has no interval."""
    rng = np.random.default_rng(0)
    for R in range(2, 101):
        x = rng.normal(size=R)
        lo, hi = sps.t.interval(0.95, R - 1, loc=x.mean(), scale=sps.sem(x))
        m, lo_, hi_ = stats.mean_ci(torch.tensor(np.append(x, np.nan)))
        assert (float(lo_), float(hi_)) == pytest.approx((lo, hi), rel=1e-10, abs=1e-12), R
    m, lo, hi = stats.mean_ci(torch.tensor([[1.0, 2.0], [float("nan"), 4.0]]))
    assert m.tolist() == [1.0, 3.0] and math.isnan(float(lo[0])) and float(hi[1]) > 3.0


def _wilson(k: int, n: int, z: float = Z975) -> tuple[float, float]:
    """The Wilson score interval written out: (p + z²/2n ± z sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)."""
    p = k / n
    c, h = p + z * z / (2 * n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (c - h) / (1 + z * z / n), (c + h) / (1 + z * z / n)


@pytest.mark.parametrize("k, n", [(0, 10), (9, 10), (2, 2), (50, 60), (1, 1000), (37, 37)])
def test_wilson_interval_closed_form(k, n):
    assert stats.binom_ci(k, n) == pytest.approx(_wilson(k, n), rel=1e-9, abs=1e-12)


def test_wilson_interval_hand_worked_values_and_refusals():
    lo, hi = stats.binom_ci(2, 2)
    assert (lo, hi) == pytest.approx((0.3424, 1.0), abs=5e-5)       # 2 of 2 says little about "every"
    assert stats.binom_ci(0, 10) == pytest.approx((0.0, 0.2775), abs=5e-5)
    assert all(math.isnan(v) for v in stats.binom_ci(0, 0))
    for k, n in ((2.5, 10), (11, 10), (-1, 10)):
        with pytest.raises(ValueError, match="whole counts"):
            stats.binom_ci(k, n)


def _percentile_bootstrap(x, values, boot, seed):
    """The repeats resampled jointly, written out: the 2.5 and 97.5 percentiles of the resampled rank correlation."""
    idx = np.random.default_rng(seed).integers(0, values.shape[-1], size=(boot, values.shape[-1]))
    means = np.nanmean(values[:, :, idx], axis=-1)                   # (n_sigma, n_eps, boot)
    rb = stats.spearman(x, np.moveaxis(means, -1, 0)).mean(-1)
    return tuple(np.percentile(rb, [2.5, 97.5]))


def test_trend_bootstrap_is_the_joint_percentile_bootstrap():
    rng = np.random.default_rng(3)
    eps = tuple(np.linspace(0.05, 0.4, 9))
    values = rng.normal(size=(2, 9, 6)) + 0.3 * np.arange(9)[None, :, None]
    rho, lo, hi, per = stats.trend(eps, values, 500, 7)
    assert (lo, hi) == pytest.approx(_percentile_bootstrap(np.asarray(eps), values, 500, 7))
    assert rho == pytest.approx(per.mean()) and lo <= rho <= hi and per.shape == (2,)
    assert stats.trend(eps, values, 500, 7)[1:3] == (lo, hi)          # seeded


def test_trend_on_a_monotone_curve_and_with_one_repeat():
    eps = (0.1, 0.2, 0.4, 0.8)
    values = np.broadcast_to(np.array([1.0, 2.0, 3.0, 4.0])[None, :, None], (2, 4, 5)) + 0.0
    values = values + np.linspace(0, 0.01, 5)                        # repeats differ, the order never does
    assert stats.trend(eps, values, 200, 0)[:3] == pytest.approx((1.0, 1.0, 1.0))
    rho, lo, hi, _ = stats.trend(eps, values[:, :, :1], 200, 0)
    assert rho == pytest.approx(1.0) and math.isnan(lo) and math.isnan(hi)


# ---------------------------------------------------------------- intervals inside the range of the quantity

@pytest.mark.parametrize("values, quantity", [
    ([1.0, 0.8, 0.5], "cosine_abs"),      # a mean |cos| of 0.767 over 3 replicates (t: [0.14, 1.39])
    ([1.0, 1.0, 0.2], "fraction"),        # a share of 0.733 (t: [-0.41, 1.88])
    ([1.0, 2.0, 1.0], "count"),           # a count of 1.333 (t: [-0.10, 2.77])
    ([0.9, 0.95, 0.7], "cosine"),         # a cosine of 0.85 (t: [0.52, 1.18])
])
def test_bounded_means_get_intervals_inside_their_range(values, quantity):
    m, lo, hi = stats.mean_ci_in(values, quantity)
    _, tlo, thi = (float(v) for v in stats.mean_ci(torch.tensor(values)))
    a, b = stats.RANGES[quantity]
    assert tlo < a or thi > b                                                  # the t-interval leaves the range
    assert a < lo < m < hi < b and m == pytest.approx(np.mean(values))


def test_the_transformed_interval_by_hand():
    """Oracle: the t-interval of the mean on the logit (fraction) and log (count) scale by the delta method,
    worked here from the formulas, not from stats.py."""
    x = np.array([0.6, 0.7, 0.9, 0.8])
    m, s, n = x.mean(), x.std(ddof=1), x.size
    h = sps.t.ppf(0.975, n - 1) * s / math.sqrt(n) / (m * (1 - m))
    z = math.log(m / (1 - m))
    want = (1 / (1 + math.exp(-(z - h))), 1 / (1 + math.exp(-(z + h))))
    assert stats.mean_ci_in(x, "fraction")[1:] == pytest.approx(want, rel=1e-12)
    c = np.array([2.0, 5.0, 3.0])
    k = math.exp(sps.t.ppf(0.975, 2) * c.std(ddof=1) / math.sqrt(3) / c.mean())
    assert stats.mean_ci_in(c, "count")[1:] == pytest.approx((c.mean() / k, c.mean() * k), rel=1e-12)
    # a real quantity keeps the t-interval; every replicate on the edge gives a zero-width interval
    assert stats.mean_ci_in(x, "real") == pytest.approx(tuple(float(v) for v in stats.mean_ci(torch.tensor(x))))
    assert stats.mean_ci_in([1.0, 1.0, 1.0], "fraction") == (1.0, 1.0, 1.0)
    assert stats.mean_ci_in([0.0, 0.0], "count") == (0.0, 0.0, 0.0)


def test_a_value_outside_its_range_is_an_error_and_nans_are_dropped():
    with pytest.raises(ValueError, match="a cosine of 1.2 lies outside its range"):
        stats.mean_ci_in([0.5, 1.2], "cosine")
    with pytest.raises(ValueError, match="unknown quantity"):
        stats.mean_ci_in([0.5], "angle")
    m, lo, hi = stats.mean_ci_in([0.5, float("nan"), 0.7, 0.6], "fraction")
    assert m == pytest.approx(0.6) and 0 < lo < 0.6 < hi < 1
    assert all(math.isnan(v) for v in stats.mean_ci_in([float("nan")], "fraction"))


def test_the_logit_interval_covers_a_beta_mean_about_95_percent_of_the_time():
    """Coverage by simulation: means of 8 draws of Beta(8, 2) (true mean 0.8), 4000 repeats, seeded."""
    rng = np.random.default_rng(1)
    hits = sum(lo <= 0.8 <= hi for lo, hi in (stats.mean_ci_in(rng.beta(8, 2, 8), "fraction")[1:]
                                               for _ in range(4000)))
    assert 0.92 <= hits / 4000 <= 0.975, hits / 4000


# --- hand-made cases from the mutation run of 2026-11-28 (make mutation MUTANTS='imbalanced_cl.stats.*') ---

def test_loglog_fit_uses_exactly_the_positive_finite_points_and_two_are_enough():
    """y = 3 x^2 on x = 1, 2, 4 with a zero, a negative and an infinite point mixed in (each on either side): those
    are dropped one by one and the fit is exact; two points give the line through them, one point gives NaN."""
    x = torch.tensor([1.0, 2.0, 4.0])
    y = 3 * x ** 2
    assert stats.loglog_fit(x, y) == pytest.approx((2.0, math.log(3.0)), rel=1e-12)
    for bad_x, bad_y in ((0.0, 5.0), (-1.0, 5.0), (5.0, 0.0), (5.0, -2.0), (math.inf, 5.0), (5.0, math.inf)):
        got = stats.loglog_fit(torch.cat([x, torch.tensor([bad_x])]), torch.cat([y, torch.tensor([bad_y])]))
        assert got == pytest.approx((2.0, math.log(3.0)), rel=1e-12), (bad_x, bad_y)
    assert stats.loglog_fit(x[:2], y[:2]) == pytest.approx((2.0, math.log(3.0)), rel=1e-12)
    assert all(math.isnan(v) for v in stats.loglog_fit(x[:1], y[:1]))


def test_fit_loglog_drops_non_positive_and_non_finite_points_and_gives_no_interval_from_two():
    """The numpy fit drops the same points; with two points it has a slope and intercept but no interval (n - 2 = 0
    degrees of freedom), and with three exact points a zero-width interval."""
    x, y = np.array([1.0, 2.0, 4.0]), 3 * np.array([1.0, 2.0, 4.0]) ** 2
    for bad_x, bad_y in ((0.0, 5.0), (-1.0, 5.0), (5.0, 0.0), (np.inf, 5.0), (5.0, np.nan)):
        f = stats.fit_loglog(np.append(x, bad_x), np.append(y, bad_y))
        assert (f.slope, f.intercept, f.n) == (pytest.approx(2.0), pytest.approx(math.log(3.0)), 3), (bad_x, bad_y)
        assert f.lo == pytest.approx(2.0) and f.hi == pytest.approx(2.0)
    two = stats.fit_loglog(x[:2], y[:2])
    assert two.slope == pytest.approx(2.0) and math.isnan(two.lo) and math.isnan(two.hi) and two.n == 2


def test_binom_ci_of_one_trial_is_wilsons_interval_not_nan():
    """n = 1, k = 1 (p = 1): Wilson's closed form, centre (p + z^2/2n) / (1 + z^2/n) = (1 + z^2/2) / (1 + z^2) and
    half-width z sqrt(p(1 - p)/n + z^2/4n^2) / (1 + z^2/n) = z sqrt(z^2/4) / (1 + z^2); n = 0 has none (NaN)."""
    z = Z975
    centre = (1 + z * z / 2) / (1 + z * z)
    half = z * math.sqrt(z * z / 4) / (1 + z * z)
    lo, hi = stats.binom_ci(1, 1)
    assert (lo, hi) == pytest.approx((centre - half, centre + half), rel=1e-9)
    assert all(math.isnan(v) for v in stats.binom_ci(0, 0))


def test_trend_has_an_interval_from_two_repeats():
    """Two repeats are enough to resample (the interval is finite), one is not (NaN)."""
    values = np.array([[[1.0, 1.2], [2.0, 2.1], [3.0, 2.9]]])         # one sigma level, eps rising, two repeats
    rho, lo, hi, _ = stats.trend((0.1, 0.2, 0.3), values, boot=200, seed=0)
    assert rho == pytest.approx(1.0) and math.isfinite(lo) and math.isfinite(hi) and lo <= rho <= hi
    one = stats.trend((0.1, 0.2, 0.3), values[:, :, :1], boot=200, seed=0)
    assert math.isnan(one[1]) and math.isnan(one[2])


def test_mean_ci_in_names_the_value_outside_its_range_not_one_on_its_edge():
    """A fraction of 0 or 1 lies inside [0, 1]; the error names the value that does not (1.5 or -0.5)."""
    with pytest.raises(ValueError, match=r"fraction of 1\.5 lies outside"):
        stats.mean_ci_in([0.0, 1.0, 1.5], "fraction")
    with pytest.raises(ValueError, match=r"fraction of -0\.5 lies outside"):
        stats.mean_ci_in([1.0, 0.0, -0.5], "fraction")
    assert stats.mean_ci_in(torch.tensor([0.25, 0.75]), "fraction")[0] == 0.5    # a tensor is read as numbers


def test_fit_loglog_matches_scipys_regression_and_its_t_interval():
    """Against scipy.stats.linregress on the logs (an independent oracle): slope, intercept, and the interval
    slope ± t(n - 2) · stderr; points with the same x (no spread in log x) give NaN."""
    x = np.array([1.0, 2.0, 4.0, 8.0, 16.0])
    y = np.array([2.0, 3.1, 5.2, 7.9, 13.0])
    f = stats.fit_loglog(x, y)
    ref = sps.linregress(np.log(x), np.log(y))
    h = sps.t.ppf(0.975, len(x) - 2) * ref.stderr
    assert (f.slope, f.intercept, f.n) == (pytest.approx(ref.slope, rel=1e-12), pytest.approx(ref.intercept,
                                                                                                rel=1e-12), 5)
    assert (f.lo, f.hi) == pytest.approx((ref.slope - h, ref.slope + h), rel=1e-10)
    assert math.isnan(stats.fit_loglog([3.0, 3.0, 3.0], [1.0, 2.0, 4.0]).slope)


def test_replicate_mean_is_the_t_interval_of_the_finite_slopes():
    """Slopes 1, 2, 3 (a NaN and an inf dropped): mean 2, interval 2 ± t(2) · 1/sqrt(3), intercept the mean of the
    same three replicates' intercepts (the inf-slope replicate's 9.0 is not theirs to lend); one finite slope has no
    interval, none gives NaN and n = 0."""
    f = stats.replicate_mean([1.0, np.nan, 2.0, np.inf, 3.0], [0.5, np.nan, 1.5, 9.0, 1.0])
    h = sps.t.ppf(0.975, 2) / math.sqrt(3)
    assert (f.slope, f.lo, f.hi, f.n) == (2.0, pytest.approx(2 - h, rel=1e-12), pytest.approx(2 + h, rel=1e-12), 3)
    assert f.intercept == pytest.approx(1.0)                       # mean of 0.5, 1.5 and 1.0
    assert stats.replicate_mean([1.0, 3.0], [np.nan, 2.0]).intercept == 2.0       # a non-finite intercept dropped
    one = stats.replicate_mean([np.nan, 4.0])
    assert one.slope == 4.0 and math.isnan(one.lo) and math.isnan(one.hi) and one.n == 1 and math.isnan(one.intercept)
    none = stats.replicate_mean([np.nan])
    assert math.isnan(none.slope) and none.n == 0
    fits = stats.fit_loglog_replicates([1.0, 2.0, 4.0], [[1.0, 2.0, 4.0], [1.0, 4.0, 16.0]])   # slopes 1 and 2
    assert fits.slope == pytest.approx(1.5) and fits.n == 2
    assert (fits.lo, fits.hi) == pytest.approx((1.5 - sps.t.ppf(0.975, 1) * 0.5, 1.5 + sps.t.ppf(0.975, 1) * 0.5))


def _all_floats(f) -> bool:
    """Every field of a SlopeFit but n is a float (NaN where there is nothing to report), never None."""
    return all(isinstance(v, float) for v in (f.slope, f.lo, f.hi, f.intercept)) and isinstance(f.n, int)


def test_degenerate_fits_report_nan_floats_in_every_field():
    """Too few points, all x equal, one point with a slope (two x), no finite slope, one slope: each field that has
    nothing to report is a float NaN (a table or an interval test reads it), never None; what can be computed is."""
    for f, n in ((stats.fit_loglog([1.0], [2.0]), 1), (stats.fit_loglog([3.0, 3.0], [1.0, 2.0]), 2),
                 (stats.fit_loglog([-1.0, 0.0, 2.0], [1.0, 1.0, 0.0]), 0), (stats.replicate_mean([np.nan]), 0)):
        assert _all_floats(f) and all(math.isnan(v) for v in (f.slope, f.lo, f.hi, f.intercept)) and f.n == n
    two = stats.fit_loglog([1.0, 4.0], [3.0, 48.0])                     # y = 3 x^2: slope and intercept, no interval
    assert _all_floats(two) and (two.slope, two.n) == (pytest.approx(2.0), 2)
    assert two.intercept == pytest.approx(math.log(3.0)) and math.isnan(two.lo) and math.isnan(two.hi)
    one = stats.replicate_mean([np.nan, 4.0], [9.0, 1.5])
    assert _all_floats(one) and math.isnan(one.lo) and math.isnan(one.hi) and one.intercept == 1.5
    ints = stats.fit_loglog([1, 2, 4], [3, 12, 48])                    # whole numbers in, floats out
    assert _all_floats(ints) and ints.slope == pytest.approx(2.0)
    assert _all_floats(stats.replicate_mean([1, 3], [0, 2])) and stats.replicate_mean([1, 3], [0, 2]).slope == 2.0


def test_mean_ci_works_column_by_column_in_float64_and_an_empty_column_is_nan():
    """Each column of a (replicates, k) float32 array gets its own mean and t-interval (scipy's, on the same values
    in float64); a column with no finite value has a NaN mean and interval, not 0."""
    nan = float("nan")
    x = torch.tensor([[0.1, nan, 2.0], [0.25, nan, 4.5], [0.7, nan, 9.0], [0.3, nan, nan]], dtype=torch.float32)
    m, lo, hi = stats.mean_ci(x, dim=0)
    assert m.dtype == torch.float64
    for j in (0, 2):
        v = x[:, j].double().numpy()
        v = v[~np.isnan(v)]
        want = sps.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=sps.sem(v))
        assert float(m[j]) == pytest.approx(v.mean(), rel=1e-12)
        assert (float(lo[j]), float(hi[j])) == pytest.approx(want, rel=1e-12)
    assert math.isnan(m[1]) and math.isnan(lo[1]) and math.isnan(hi[1])


def test_the_small_helpers_against_scipy_and_by_hand():
    """spearman row by row (scipy's spearmanr on each row of a 2-D y); loglog_slopes for R ≠ k (3 replicates of 4
    points, slopes 1, 2, 3 by construction); fit_loglog_replicates keeps the mean intercept (log 2 for Y = 2 x^s);
    mean_ci_in's default quantity is "real" (the t-interval), also for a tensor that carries a gradient; an unknown
    quantity is named in the error."""
    x = np.array([1.0, 2.0, 4.0, 8.0])
    y = np.array([[1.0, 3.0, 2.0, 5.0], [8.0, 4.0, 2.0, 1.0], [2.0, 2.0, 3.0, 1.0]])
    got = stats.spearman(x, y)
    assert got == pytest.approx([sps.spearmanr(x, row).statistic for row in y], abs=1e-12)
    Y = np.stack([2.0 * x ** s for s in (1.0, 2.0, 3.0)])
    assert stats.loglog_slopes(torch.tensor(x), torch.tensor(Y)).tolist() == pytest.approx([1.0, 2.0, 3.0])
    fit = stats.fit_loglog_replicates(x, Y)
    assert fit.slope == pytest.approx(2.0) and fit.intercept == pytest.approx(math.log(2.0))
    v = torch.tensor([1.0, 2.0, 4.0], requires_grad=True)
    want = sps.t.interval(0.95, 2, loc=7 / 3, scale=sps.sem([1.0, 2.0, 4.0]))
    assert stats.mean_ci_in(v) == pytest.approx((7 / 3, *want))
    with pytest.raises(ValueError, match=r"unknown quantity 'bogus'; one of \('real'"):
        stats.in_range(0.5, "bogus")
