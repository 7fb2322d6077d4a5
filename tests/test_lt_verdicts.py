"""Notebook 06's verdict rows on hand-made results: like with like (the SimCLR baseline premise) and t-intervals."""
from __future__ import annotations

import pytest

from imbalanced_cl.lt import experiment as E
from imbalanced_cl.verdict import HOLDS, NOT_COMPARABLE


def _results(simclr, gain):
    out = []
    for seed, noise in enumerate((-0.1, 0.0, 0.1)):
        out.append({"rho": 100, "seed": seed, "method": "simclr", "acc": simclr + noise, "delta20": 5.0})
        for m in ("sdclr", "alg1"):
            out.append({"rho": 100, "seed": seed, "method": m, "acc": simclr + gain + 2 * noise, "delta20": 4.0})
    return out


def test_gain_rows_are_not_comparable_when_our_baseline_is_far_from_the_papers():
    rows = E.verdict_rows(_results(simclr=38.6, gain=5.0), "cifar10", band=10.0)   # Table 2 SimCLR: 74.24
    gain = [r for r in rows if "accuracy gain" in r.claim]
    assert gain and all(r.verdict == NOT_COMPARABLE for r in gain)
    assert "off by -35.6" in gain[0].premise


def test_gain_rows_are_judged_with_a_t_interval_when_the_baseline_is_close():
    rows = E.verdict_rows(_results(simclr=73.0, gain=5.0), "cifar10", band=10.0)
    gain = [r for r in rows if "accuracy gain" in r.claim]
    assert all(r.verdict == HOLDS for r in gain)
    # paired differences 4.9, 5.0, 5.1: mean 5, sd 0.1, t(2) = 4.303 -> half-width 4.303 * 0.1 / sqrt(3)
    assert gain[0].hi - gain[0].measured == pytest.approx(4.303 * 0.1 / 3 ** 0.5, rel=1e-3)
