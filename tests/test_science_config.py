"""SimConfig refuses every value outside the range its field documents, and accepts the values at the edge.

The ranges are read from the field comments and the paper (Def. 3.1, Ass. 3.2-3.3, Alg. 1), written out here
as a table: one value just outside and the values just inside each edge.
"""
from __future__ import annotations

import math

import pytest

from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.validate import ParameterError

# field: (values that must be refused, values at the edge that must be accepted)
RANGES = {
    "d": ([2, 3.0, True], [3, 100]),                      # d >= 3, integer, d <= d1 (= 100 by default)
    "d1": ([2, 19, 20.5], [20]),                          # d1 >= d (= 20 by default)
    "L": ([0, 257, 2.0], [1, 256]),
    "eps_max": ([0.0, -1.0, math.inf, math.nan, "1"], [0.3, 5.0]),    # > 0, and >= eps_min = 0.3
    "eps_min": ([0.0, 1.0001, math.nan], [1e-9, 1.0]),    # in (0, eps_max]
    "n_minority": ([-1, 21, 1.0], [0, 20]),               # in [0, d]
    "eps_profile": (["linear", None], ["two_level", "geometric"]),
    "p_scale": ([0.0, -2.0], [1e-9, 50.0]),
    "mag_lo": ([0.0, -0.5], [1e-9, 1.0]),                 # > 0, and <= mag_hi = 1
    "mag_hi": ([0.4999, math.inf], [0.5]),                # >= mag_lo = 0.5
    "sigma_xi": ([-1e-9, math.nan], [0.0, 3.0]),
    "n_pairs": ([1, 0, 64.0], [2]),
    "attention": (["cosine", ""], ["softmax", "mean"]),
    "attn_scale": ([-1e-9], [0.0, 1.0]),
    "m": ([0, 2.5], [1]),
    "sigma0": ([0.0], [1e-9]),
    "bias": (["learned"], ["schedule", "none"]),
    "bias_coef": ([-1e-9], [0.0]),
    "bias_ramp": ([-1e-9, 1.0001], [0.0, 1.0]),
    "bias_ramp_max": ([0.9999], [1.0]),
    "t1_fraction": ([0.0, 1.0001], [1e-9, 1.0]),
    "t1_max": ([-1, 1.5], [0]),
    "tau": ([0.0, -1.0], [1e-9]),
    "tau_scaled": ([1, "True", None], [True, False]),
    "lr": ([0.0, math.nan], [1e-9]),
    "weight_decay": ([-1e-9, 2.0], [0.0, 1.999]),         # lr * weight_decay < 1 with lr = 0.5
    "lambda_rule": (["middle", None, ""], ["value"]),      # bottom | mid | top set weight_decay (test below)
    "steps": ([0, 10.0], [1]),
    "prune_alpha": ([-1e-9, 1.0], [0.0, 0.999]),
    "prune_unit": (["filter"], ["neuron", "weight"]),
    "prune_backward": (["straight"], ["faithful", "literal"]),
    "prune_start": ([-1], [0]),
    "prune_every": ([0], [1]),
    "R": ([0, 1.0], [1]),
    "seed": ([-1, 2 ** 31, 0.0], [0, 2 ** 31 - 1]),
    "record_every": ([0], [1]),
    "chunk": ([-1], [0]),
    "progress": ([0, "no"], [True, False]),
    "sampling": (["online", None], ["fresh", "fixed"]),
    "views": (["augmented"], ["paper", "identical", "random_mask"]),
    "prune_mask": (["gradient"], ["magnitude", "random"]),
    "prune_schedule": (["cyclic"], ["dynamic", "static"]),
    "bias_token_factor": ([1, "True"], [True, False]),
    "regime_share_min": ([-1e-9, 1.0001], [0.0, 1.0]),
    "regime_grad_poly": ([0.0, -1.0], [1e-9]),
    "regime_loss_gap_max": ([0.0], [1e-9]),
    "pop_batches": ([0, 2.0], [1]),
    "device": (["gpu", "cuda:0"], ["auto", "cpu"]),
    "data_device": (["cuda"], ["auto", "cpu", "run"]),
    "bias_onset": (["eq34", None], ["crossing", "eq33", "workshop"]),
    "tf32": ([0, "yes"], [True, False]),
}


@pytest.mark.parametrize("field", sorted(RANGES))
def test_each_field_refuses_values_outside_its_range(field):
    bad, good = RANGES[field]
    for v in bad:
        with pytest.raises(ParameterError) as err:
            SimConfig(**{field: v})
        assert f"parameter {field}={v!r}" in str(err.value) and "allowed" in str(err.value), (field, v)
        if isinstance(good[0], bool):
            assert str(err.value).endswith("allowed True or False"), str(err.value)
    for v in good:
        assert getattr(SimConfig(**{field: v}), field) == v


def test_every_field_is_covered():
    assert set(RANGES) == set(SimConfig.field_names())


def test_cross_field_messages_name_the_other_field():
    """A range that depends on another field says which value it was checked against."""
    with pytest.raises(ParameterError, match=r"d1=10 .*given d=20.*>= d"):
        SimConfig(d=20, d1=10)
    with pytest.raises(ParameterError, match=r"weight_decay=3.*lr=0.5.*allowed a number with lr \* weight_decay < 1"):
        SimConfig(weight_decay=3.0)
    with pytest.raises(ParameterError, match=r"allowed an integer >= d$"):
        SimConfig(d=20, d1=10)
    assert SimConfig(d=3, d1=3).d1 == 3                         # the smallest model: d1 = d = 3
    with pytest.raises(ParameterError, match=r"eps_min=0.3 .*given eps_max=0.2.*\(0.0, 0.2\]"):
        SimConfig(eps_max=0.2)                                   # eps_min = 0.3 default is now above eps_max
    with pytest.raises(ParameterError, match=r"n_minority=5 .*given d=4.*\[0, 4\]"):
        SimConfig(d=4, n_minority=5)
    with pytest.raises(ParameterError, match=r"mag_hi=0.4 .*given mag_lo=0.5"):
        SimConfig(mag_hi=0.4)
    assert SimConfig(eps_max=1e-9, eps_min=1e-9).eps_max == 1e-9
    assert SimConfig(d=100, d1=100).d1 == 100


def test_replace_and_sim_validate_again_and_keep_fields():
    cfg = SimConfig(d=7, seed=3)
    assert cfg.replace(m=9).m == 9 and cfg.replace(m=9).d == 7
    with pytest.raises(ParameterError, match="m="):
        cfg.replace(m=0)
    assert cfg.sim(R=2) == SimConfig(d=7, seed=3, R=2)
    assert cfg.to_dict()["d"] == 7 and len(cfg.to_dict()) == len(SimConfig.field_names())


def test_from_namespace_takes_fields_refuses_unknown_names_unless_told():
    cfg = SimConfig.from_namespace({"d": 8, "m": 5, "_private": 1, "np": math}, m=6)
    assert (cfg.d, cfg.m) == (8, 6)
    with pytest.raises(ParameterError, match="eps_minn.*for SimConfig.*did you mean eps_min"):
        SimConfig.from_namespace({"eps_minn": 0.1})
    assert SimConfig.from_namespace({"d": 8, "other": 1}, strict=False).d == 8


def test_derived_quantities_by_hand():
    """softmax scale 1/sqrt(d1) unless given; NSR = sigma^2 d1 (App. A.2)."""
    assert SimConfig(d1=64).softmax_scale == pytest.approx(0.125)
    assert SimConfig(d1=64, attn_scale=2.0).softmax_scale == 2.0
    assert SimConfig(d1=500, sigma_xi=0.1).nsr == pytest.approx(5.0)


def test_torch_device():
    """'cpu' is the CPU; 'auto' is CUDA exactly when present; 'cuda' without a GPU is refused, naming the parameter."""
    import torch
    assert SimConfig(device="cpu").torch_device == torch.device("cpu")
    assert SimConfig(device="auto").torch_device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():                           # refused at once, before any compute
        with pytest.raises(ParameterError, match="parameter device='cuda'"):
            SimConfig(device="cuda")


def test_lambda_rule_sets_weight_decay_from_d_by_hand():
    """L1266's range [d^-1.49, d^-1.01]: "mid" at d = 16 is 16^-1.25 = 2^-5, and a sweep over d (replace) follows d."""
    mid = SimConfig(d=16, lambda_rule="mid")
    assert mid.weight_decay == 2.0 ** -5
    assert mid.replace(d=81).weight_decay == pytest.approx(3.0 ** -5, rel=1e-12)     # 81^-1.25 = 3^-5
    assert SimConfig(d=16, lambda_rule="bottom").weight_decay == pytest.approx(16 ** -1.49, rel=1e-12)
    assert SimConfig(d=16, lambda_rule="top").weight_decay == pytest.approx(16 ** -1.01, rel=1e-12)
    assert SimConfig(d=16, weight_decay=0.25).weight_decay == 0.25                  # "value": as given
    assert mid.replace(lambda_rule="value", weight_decay=0.25).weight_decay == 0.25
