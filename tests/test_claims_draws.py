"""claims.draws: common random numbers. The oracle is sim.data.make_pairs, which draws and builds for one config."""
from __future__ import annotations

import pytest
import torch

from imbalanced_cl.claims import draws
from imbalanced_cl.sim import data as D
from imbalanced_cl.sim.config import SimConfig

CFG = SimConfig(d=5, d1=12, m=4, L=3, n_pairs=8, R=3, steps=2, progress=False)


def test_raw_numbers_built_for_each_config_are_what_make_pairs_gives_it():
    cfgs = [CFG, CFG.replace(eps_min=0.2), CFG.replace(views="identical")]
    plan = draws.common_plan(cfgs, CFG.n_pairs)
    reps = [2, 0]
    u = draws.raw(CFG, plan, reps, extra=7)
    M = D.make_dictionaries(CFG, reps)
    for c in cfgs:
        built, alone = D.pairs_from_draws(c, M, u), D.make_pairs(c, M, reps, extra=7)
        for f in ("UX", "UY", "S", "ZX", "ZY"):
            assert torch.equal(getattr(built, f), getattr(alone, f)), (c.eps_min, c.views, f)


def test_the_held_out_stream_is_another_stream():
    plan = draws.common_plan([CFG], CFG.n_pairs)
    train, test = draws.raw(CFG, plan, [0], 1), draws.raw(CFG, plan, [0], 1, purpose=D.STREAM_TEST)
    assert not torch.equal(train[-1], test[-1])
    M = D.make_dictionaries(CFG, [0])
    assert torch.equal(D.pairs_from_draws(CFG, M, test).UX, D.make_pairs(CFG, M, [0], purpose=D.STREAM_TEST,
                                                                            extra=1).UX)


def test_the_random_mask_plan_extends_the_others_and_a_longer_one_holds_them():
    plan = draws.common_plan([CFG, CFG.replace(views="random_mask")], CFG.n_pairs)
    assert plan == D.draw_plan(CFG.replace(views="random_mask"), CFG.n_pairs)
    assert len(plan) == len(D.draw_plan(CFG, CFG.n_pairs)) + 1


@pytest.mark.parametrize("change", [{"d1": 16}, {"L": 2}, {"d": 6}])
def test_configs_that_draw_other_numbers_cannot_share(change):
    with pytest.raises(ValueError, match="cannot share one draw"):
        draws.common_plan([CFG, CFG.replace(**change)], CFG.n_pairs)
