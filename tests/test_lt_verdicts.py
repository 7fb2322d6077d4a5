"""Notebook 06's verdict rows on hand-made results: like with like (the SimCLR baseline premise) and t-intervals."""
from __future__ import annotations

import pytest

from imbalanced_cl.lt import verdicts as LV
from imbalanced_cl import verdict as V
from imbalanced_cl.verdict import FAILS, HOLDS, NOT_COMPARABLE


def _results(simclr, gain):
    out = []
    for seed, noise in enumerate((-0.1, 0.0, 0.1)):
        out.append({"rho": 100, "seed": seed, "method": "simclr", "acc": simclr + noise, "delta20": 5.0})
        for m in ("sdclr", "alg1"):
            out.append({"rho": 100, "seed": seed, "method": m, "acc": simclr + gain + 2 * noise, "delta20": 4.0})
    return out


def test_gain_rows_are_not_comparable_when_our_baseline_is_far_from_the_papers():
    rows = V.gate(LV.verdict_rows(_results(simclr=38.6, gain=5.0), "cifar10", band=10.0), "06")   # Table 2: 74.24
    base = [r for r in rows if r.kind == "premise"]
    assert [r.id for r in base] == ["baseline_reproduced__cifar10_rho100"] and base[0].verdict == FAILS
    assert base[0].measured == pytest.approx(38.6 - 74.24) and (base[0].band_lo, base[0].band_hi) == (-10, 10)
    gain = [r for r in rows if "accuracy gain" in r.claim]
    assert gain and all(r.verdict == NOT_COMPARABLE and r.unmet == (base[0].id,) for r in gain)
    assert "measured -35.6" in gain[0].premise and all(r.would_be == HOLDS for r in gain)


def test_gain_rows_are_not_comparable_without_a_paper_number():
    """digits-LT has no Table 2 row: the baseline premise cannot be met, so no gain is compared with the paper."""
    rows = V.gate(LV.verdict_rows(_results(simclr=73.0, gain=5.0), "digits", band=10.0), "06")
    base = [r for r in rows if r.kind == "premise"]
    assert base[0].verdict == FAILS and "to compare with" in base[0].claim
    assert all(r.verdict == NOT_COMPARABLE for r in rows if r.kind != "premise")


def test_gain_rows_are_judged_with_a_t_interval_when_the_baseline_is_close():
    rows = V.gate(LV.verdict_rows(_results(simclr=73.0, gain=5.0), "cifar10", band=10.0), "06")
    assert [r.verdict for r in rows if r.kind == "premise"] == [HOLDS]
    gain = [r for r in rows if "accuracy gain" in r.claim]
    assert all(r.verdict == HOLDS for r in gain)
    # paired differences 4.9, 5.0, 5.1: mean 5, sd 0.1, t(2) = 4.303 -> half-width 4.303 * 0.1 / sqrt(3)
    assert gain[0].hi - gain[0].measured == pytest.approx(4.303 * 0.1 / 3 ** 0.5, rel=1e-3)


def test_profile_table_sums_phases_and_counts_a_shared_pretraining_once():
    from imbalanced_cl.book.plots import lt as plots_lt
    base = {"setup_s": 1.0, "embed_s": 2.0, "probe_s": 3.0, "eval_s": 0.5}
    rows = [{"method": "random", "pretrain_s": 0.0, "aug_share": 0.0, **base},
            {"method": "alg1", "pretrain_s": 100.0, "aug_share": 0.1, **base},
            {"method": "alg1_dense", "pretrain_s": 100.0, "aug_share": 0.1, **base, "shares_pretrain": True}]
    t = plots_lt.profile_table(rows, load_s=4.0, grid_s=50.0)
    # aug 10, step 90 (alg1 once), setup 2 (not the dense readout), embed 6, probe 9, eval 1.5, load 4: total 122.5
    assert "| pre-training: augmentation (kornia views) | 10.0 | 8.2% |" in t
    assert "| pre-training: forward, backward, SGD | 90.0 | 73.5% |" in t
    assert "| **total** | 122.5 | 100% |" in t and "50 s of wall time" in t


def test_scale_table_states_this_runs_settings():
    from types import SimpleNamespace

    import numpy as np

    from imbalanced_cl.book.plots import lt as plots_lt
    from imbalanced_cl.lt.config import LTConfig
    cfg = LTConfig(width=4, epochs=7, rhos=(10,), seeds=(0, 1), n_max=100, probe_per_class=20)
    data = SimpleNamespace(source="a stub", num_classes=10,
                           train=SimpleNamespace(labels=np.repeat(np.arange(10), 100), channels=3))
    t = plots_lt.scale_table(cfg, data)
    n = sum(int(100 * 10 ** (-c / 9) + 1e-9) for c in range(10))      # the LT profile, by hand
    assert f"{n:,} images at $\\rho=10$" in t and "ResNet-18 of width 4" in t and "7 epochs" in t
    assert ("2 seed(s)" in t and "20 balanced images per class" in t
            and "| data | original CIFAR-10 binaries | a stub |" in t)
