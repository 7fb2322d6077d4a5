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


def _two_rhos():
    """ρ = 10 and ρ = 0.5 (a ρ that is not an integer: its id spells the point), paired seeds 0-2, and a seed of
    sdclr with no SimCLR partner (left out of the pairs)."""
    out = []
    for rho, base in ((10, 79.0), (0.5, 60.0)):
        for seed, noise in enumerate((-0.2, 0.0, 0.2)):
            out.append({"rho": rho, "seed": seed, "method": "simclr", "acc": base + noise, "delta20": 3.0})
            out.append({"rho": rho, "seed": seed, "method": "sdclr", "acc": base + 6 + noise, "delta20": 2.0 - noise})
            out.append({"rho": rho, "seed": seed, "method": "alg1", "acc": base + 1 + 3 * noise, "delta20": 3.5})
    out.append({"rho": 10, "seed": 9, "method": "sdclr", "acc": 0.0, "delta20": 99.0})
    return out


def test_row_ids_spell_the_dataset_and_rho_and_a_rho_without_a_paper_number_fails_its_baseline():
    """Ids in order (per ρ: the baseline premise, then each method and metric), "-" and "." spelt out in them; at
    ρ = 0.5 Table 2 has no row, so the baseline premise is not met."""
    rows = {r.id: r for r in LV.verdict_rows(_two_rhos(), "cifar-10", band=2.5)}
    assert list(rows) == [
        "baseline_reproduced__cifar_10_rho0p5", "sdclr_acc_cifar_10_rho0p5", "sdclr_delta20_cifar_10_rho0p5",
        "alg1_acc_cifar_10_rho0p5", "alg1_delta20_cifar_10_rho0p5",
        "baseline_reproduced__cifar_10_rho10", "sdclr_acc_cifar_10_rho10", "sdclr_delta20_cifar_10_rho10",
        "alg1_acc_cifar_10_rho10", "alg1_delta20_cifar_10_rho10"]
    no_ref = rows["baseline_reproduced__cifar_10_rho0p5"]
    assert no_ref.claim == ("Table 2 has a SimCLR number for cifar-10-LT ρ=0.5 to compare with: ours minus the "
                            "paper's, in percentage points")
    assert no_ref.verdict == FAILS and no_ref.source == "Table 2 (the SimCLR row)"    # no paper number: not met


def test_every_row_of_notebook_06_with_a_table_2_number_reads_as_written_here():
    """Labels, source, prediction and numbers at CIFAR-10-LT ρ = 10 (Table 2: SimCLR 79.25, with pruning 84.92; Δ20
    3.42 and 2.99), from paired differences over the seeds both methods ran."""
    rows = {r.id: r for r in LV.verdict_rows(_two_rhos(), "cifar10", band=2.5)}
    base = rows["baseline_reproduced__cifar10_rho10"]
    assert (base.claim, base.source, base.predicted, base.rule) == (
        "our SimCLR baseline within 2.5 points of the paper's 79.25% (cifar10-LT ρ=10): ours minus the paper's, in "
        "percentage points", "Table 2 (the SimCLR row)", "|ours − paper| ≤ 2.5 points",
        "holds when our SimCLR mean lies within 2.5 points of the paper's")
    assert (base.measured, base.verdict, base.band_lo, base.band_hi) == (pytest.approx(79.0 - 79.25), HOLDS, -2.5, 2.5)
    acc, d20 = rows["sdclr_acc_cifar10_rho10"], rows["sdclr_delta20_cifar10_rho10"]
    assert (acc.claim, acc.source, acc.predicted) == (
        "SDCLR-style pruning vs SimCLR: accuracy gain in percentage points, cifar10-LT ρ=10", "Table 2; §4",
        "> 0 (Table 2: +5.67 pts)")
    assert (d20.claim, d20.predicted) == (
        "SDCLR-style pruning vs SimCLR: Δ20 reduction in percentage points, cifar10-LT ρ=10",
        "> 0 (Table 2: +0.43 pts)")
    # paired over seeds 0-2 only: gains 6, 6, 6; Δ20 reductions 3 − (2 − noise) = 1.2, 1.0, 0.8
    assert (acc.measured, acc.n, acc.verdict, acc.depends) == (pytest.approx(6.0), 3, HOLDS, (base.id,))
    assert (d20.measured, d20.n, d20.verdict) == (pytest.approx(1.0), 3, HOLDS)
    assert rows["alg1_delta20_cifar10_rho10"].measured == pytest.approx(-0.5)
    assert rows["alg1_delta20_cifar10_rho10"].verdict == FAILS
    assert rows["alg1_acc_cifar10_rho10"].claim.startswith("Algorithm 1 (masked features) vs SimCLR: accuracy gain")
    assert rows["sdclr_acc_cifar10_rho0p5"].predicted == "> 0"        # no Table 2 row at ρ = 0.5


def test_a_gain_with_fewer_than_two_paired_seeds_is_not_tested_and_still_depends_on_its_baseline():
    one = [{"rho": 50, "seed": 0, "method": m, "acc": 75.0, "delta20": 4.0} for m in ("simclr", "sdclr", "alg1")]
    rows = {r.id: r for r in LV.verdict_rows(one, "cifar10")}
    gain = rows["sdclr_acc_cifar10_rho50"]
    assert (gain.verdict, gain.rule, gain.depends) == (V.UNTESTED, "fewer than two paired seeds",
                                                     ("baseline_reproduced__cifar10_rho50",))
    assert gain.source == "Table 2; §4" and gain.predicted == "> 0 (Table 2: +8.02 pts)"
    assert rows["baseline_reproduced__cifar10_rho50"].band_hi == 10.0      # the default band: 10 points
    assert rows["baseline_reproduced__cifar10_rho50"].verdict == HOLDS     # 75 vs 75.58
    empty = {r.id: r for r in LV.verdict_rows([{"rho": 10, "seed": 0, "method": "sdclr", "acc": 1.0,
                                                "delta20": 1.0}], "cifar10")}
    assert empty["baseline_reproduced__cifar10_rho10"].verdict == FAILS   # no SimCLR run: nothing to compare
