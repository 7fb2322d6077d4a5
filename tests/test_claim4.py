"""Claim 4's premises and oracle masks against independent hand computations: Def. B.1's lucky and learned minority
sets on a hand-made weight set, App. F.4's T by hand, the convergence premise on hand-made histories, a fixed
(oracle) mask that drops exactly its set, oracle arms trained beside Algorithm 1, and the bias onset giving distinct
T1 in a tiny run."""
import math

import pytest
import torch

from imbalanced_cl.claims import pruning as pa
from imbalanced_cl.sim.prune import FixedMasker, Masker, oracle_keep

# d = 4, eps_min = eps_max (rho = 1), gamma = 0.1: c1 = 2.2, c2 = 1.8 (eq. 28); thresholds on
# u_ij^2 = g_ij^2 / sum_j g^2: a = 2.2 ln 4 / 4 = 0.76246 (lucky: big on j), b = 1.8 ln 4 / 4 = 0.62383 (ordinary:
# j in N_i). Minority j* = 3.
G = torch.tensor([[0.0, 0.0, 0.0, 1.0],    # u^2 = (0, 0, 0, 1): lucky for 3 (and only 3 ordinary)
                  [0.6, 0.0, 0.0, 1.0],    # u^2 = (0.265, 0, 0, 0.735): ordinary on 3, not big: j* in N_i, not lucky
                  [0.3, 0.0, 0.0, 1.0],    # u^2 = (0.083, 0, 0, 0.917): lucky for 3
                  [1.0, 0.0, 0.0, 0.3],    # lucky for 0, a majority feature
                  [1.0, 0.0, 0.0, 1.0]])   # u^2 = (0.5, 0, 0, 0.5): neither


def _cfg(**kw):
    base = dict(d=4, d1=6, m=5, eps_min=1.0, eps_max=1.0, n_minority=1, R=2, alpha_grid=(0.2,), alpha_main=0.2,
                eps_min_grid=(1.0,), top_k=1, vanilla_steps=20, prune_steps=10, rate_window=10, record_every=5,
                threshold_alphas=(), lucky_gamma=0.1, progress=False, n_pairs=16)
    return pa.PruningConfig(**{**base, **kw})


def _weights(G):
    """W (2, m, d1) with <w_i, M_j> = G[i, j] for the first d coordinates as the dictionary; two replicates."""
    m = G.shape[0]
    W = torch.zeros(2, m, 6)
    W[:, :, :4] = G
    M = torch.eye(6)[:, :4].unsqueeze(0).repeat(2, 1, 1)
    return W, M


def test_lucky_and_learned_minority_sets_by_hand():
    cfg = _cfg()
    W, M = _weights(G)
    assert pa.lucky_minority(W, M, cfg)[0].tolist() == [True, False, True, False, False]
    assert pa.learned_minority(W, M, cfg)[0].tolist() == [True, True, True, False, False]
    # the minority-dominant neurons: the largest |cos(w_i, M_j)| on j* = 3 (ties go to the first index: neuron 4 -> 0)
    assert pa.minority_dominant(W, M, cfg)[0].tolist() == [True, True, True, False, False]


def test_paper_T_by_hand():
    # d = 10, eps ratio 0.5, eta = 0.5, alpha = 0.1, C_z = 1:
    # (2 - 1) 10 / (0.5 * 0.1 * 0.25 * ln ln 10) = 10 / (0.0125 * 0.834032) = 959.19
    cfg = _cfg(d=10, d1=20, m=20, eps_min=0.5, eps_min_grid=(0.5,))
    assert pa.paper_T(cfg, 0.1) == pytest.approx(959.19, rel=1e-4)
    assert pa.paper_T(cfg, 0.2, C_z=2.0) == pytest.approx(959.19 / 4, rel=1e-4)
    assert pa.paper_T(cfg, 0.0) == math.inf


def test_convergence_premise_on_hand_made_histories():
    steps = torch.tensor([0, 50, 100, 150])
    loss = torch.tensor([[4.6, 4.6], [3.0, 3.0], [1.0, 1.1], [1.0, 1.105]])
    pp = torch.tensor([[0.01, 0.01], [0.1, 0.1], [0.5, 0.5], [0.6, 0.55]])
    K, ln_k = 100, math.log(100)
    c = pa.convergence(steps, loss, pp, K, 1.0, 0.5, 0.5, 0.02, 50)
    # worst final loss 1.105 <= 0.5 ln 100 = 2.303; worst l'_p 0.55 >= 1 - 0.5; change |1.105 - 1.1| / 1.1 = 0.0045
    assert c.loss == pytest.approx(1.105) and c.loss_max == pytest.approx(0.5 * ln_k)
    assert c.pos_prob == pytest.approx(0.55) and c.change == pytest.approx(0.005 / 1.1, rel=1e-4) and c.holds
    late = pa.convergence(steps, loss, pp, K, 1.0, 0.5, 0.5, 0.02, 100)      # against step 50: |1 - 3| / 3
    assert late.change == pytest.approx(2 / 3, rel=1e-4) and not late.holds and late.loss <= late.loss_max
    assert not pa.convergence(steps, loss, pp, K, 1.0, 0.5, 0.4, 0.02, 50).holds    # l'_p 0.55 < 1 - 0.4
    assert pa.convergence(steps, loss, pp, K, 0.5, 0.5, 0.4, 0.02, 50).holds         # 1 - 0.4 / 0.5 = 0.2 <= 0.55
    assert not pa.convergence(steps, loss, pp, K, 1.0, 0.2, 0.5, 0.02, 50).holds    # 1.105 > 0.2 ln 100 = 0.921

    short = pa.convergence(steps, loss, pp, K, 1.0, 0.5, 0.5, 0.02, 500)
    assert short.change == math.inf and not short.holds
    flat_at_ln_k = torch.full((4, 2), ln_k)                                   # the untrained plateau is flat
    c0 = pa.convergence(steps, flat_at_ln_k, torch.full((4, 2), 0.01), K, 1.0, 0.5, 0.5, 0.02, 50)
    assert c0.flat and not c0.holds


def test_fixed_mask_drops_exactly_its_set_and_composes_with_algorithm_1():
    chosen = torch.tensor([[True, False, True, False, False], [False, False, False, False, True]])
    keep = oracle_keep(chosen)
    assert keep.tolist() == [[0, 1, 0, 1, 1], [1, 1, 1, 1, 0]]
    W = torch.arange(1.0, 11.0).view(2, 5, 1).repeat(1, 1, 3)              # norms increase with the index
    fm = FixedMasker(keep, start=3)
    assert fm.at(W, 2) is None and torch.equal(fm.at(W, 3), keep) and torch.equal(fm.final(W, 9), keep)
    assert torch.equal(fm.rows(1, 2).at(W[1:], 5), keep[1:])
    # an inner Algorithm 1 row (alpha = 0.2: the smallest neuron) times the fixed set of the other row
    inner = Masker([0.2, 0.0], [False, False], [False, False], [0, 1], 0, 3, 1, "neuron")
    both = FixedMasker(torch.stack([torch.ones(5), keep[1]]), 3, inner).at(W, 3)
    assert both.tolist() == [[0, 1, 1, 1, 1], [1, 1, 1, 1, 0]]
    assert FixedMasker(torch.ones(2, 5)).at(W, 0) is None                  # an empty set: no mask at all


def test_oracle_arms_train_beside_the_control_and_prune_exactly_their_set():
    """train_arms: the control arm is the control of run_branches (same pairs, same numbers: one code path), an oracle
    arm with an empty set in a replicate equals the control there, and a pruned neuron is the one chosen."""
    from imbalanced_cl.sim.train import train
    cfg = _cfg(d=5, d1=10, m=6, eps_min=0.5, eps_min_grid=(0.5,), alpha_grid=(0.2,))
    base = train(cfg.vanilla())
    chosen = torch.zeros(2, 6, dtype=torch.bool)
    chosen[0, 2] = True                                                     # replicate 1: empty set
    ctl, orc = pa.train_arms(base, cfg.branch(0.0), [0.0, 0.0], [None, chosen])
    again = pa.train_arms(base, cfg.branch(0.0), [0.0], [None])[0]
    assert torch.equal(ctl.W, again.W)                                      # same path run twice
    assert torch.equal(orc.W[1], ctl.W[1]) and not torch.equal(orc.W[0], ctl.W[0])
    assert ctl.step == orc.step == cfg.vanilla_steps + cfg.prune_steps


def _tiny_results(cfg, **kw):
    """The hand-made Results of tests/test_pruning.py with this file's premises and oracles."""
    from tests.test_pruning import _results
    res = _results(cfg)
    for k, v in kw.items():
        setattr(res, k, v)
    return res


def test_notebook_04_premise_and_oracle_rows_by_hand():
    """Convergence, App. F.4's T and Remark 1's bounds become premise rows with their ids; an oracle arm with an
    empty set in one replicate is "not tested"; a clear oracle gain holds; in a table, a failed convergence premise
    makes the oracle row "not comparable" and keeps its verdict, and the mask-share prediction gates nothing."""
    from imbalanced_cl.book.pages.tables import VerdictTable
    from imbalanced_cl.verdict import FAILS, HOLDS, NOT_COMPARABLE, UNTESTED
    cfg = pa.PruningConfig(d=10, d1=20, m=20, R=3, alpha_grid=(0.1, 0.2, 0.4), alpha_main=0.2, eps_min=0.5,
                           eps_min_grid=(0.5,), vanilla_steps=20, prune_steps=10, rate_window=10, record_every=5,
                           threshold_alphas=(), top_k=1, progress=False)
    conv = pa.Convergence(5.0, 6.2, 3.1, 0.01, 0.5, 0.0, 0.02, 20)        # flat at 0.8 ln K: not converged
    prem = pa.TheoremPremises(convergence=conv, T=pa.paper_T(cfg, 0.2), strict=torch.tensor([4.0, 5.0, 3.0]),
                              extended=torch.tensor([6.0, 6.0, 6.0]))
    oracles = pa.Oracles(magnitude=pa.OracleArm(size=torch.full((3,), 4.0), gain=torch.zeros(3)),
                         lucky=pa.OracleArm(size=torch.tensor([1.0, 0.0, 2.0]), gain=torch.zeros(3)),
                         dominant=pa.OracleArm(size=torch.tensor([3.0, 4.0, 3.0]),
                                               gain=torch.tensor([0.3, 0.32, 0.31])))
    rows = pa.verdict_rows(_tiny_results(cfg, premises=prem, oracles=oracles), cfg)
    by = {r.id: r for r in rows}
    assert [r.id for r in rows if r.kind == "premise"] == ["convergence", "prune_from_t4", "alpha_bound",
                                                            "alpha_bound_extended"]
    assert by["convergence"].verdict == FAILS and by["convergence"].kind == "premise"
    assert by["prune_from_t4"].verdict == FAILS                     # 10 steps < T = 959.19 / 2 at alpha = 0.2
    assert by["alpha_bound"].verdict == FAILS                       # alpha m = 4 > |M*_j*| = 3 in replicate 3
    assert by["alpha_bound_extended"].verdict == HOLDS               # 4 <= 6 in every replicate
    assert by["gain_oracle_lucky"].verdict == UNTESTED and "empty in 1 of 3" in by["gain_oracle_lucky"].rule
    assert by["gain_oracle_dominant"].verdict == HOLDS and by["gain_oracle_dominant"].measured == pytest.approx(0.31)
    assert "alpha_bound" not in by["gain_oracle_dominant"].depends   # its set is the bound's by construction
    table = {r.id: r for r in VerdictTable("04_pruning_gains", rows).rows}
    assert table["gain_oracle_dominant"].verdict == NOT_COMPARABLE and table["gain_oracle_dominant"].would_be == HOLDS
    assert table["gain_main"].verdict == NOT_COMPARABLE and table["gain_main"].would_be == HOLDS
    assert table["alg1_from_t0"].verdict == by["alg1_from_t0"].verdict    # depends on none of these premises
    assert not any("mask_share" in r.depends for r in rows)
