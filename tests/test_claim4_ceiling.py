"""Issue 63: what bounds convergence without training. The information floor of InfoNCE at finite K (by hand at K = 2,
and against a brute-force count of pattern collisions and an oracle critic's InfoNCE on the project's own pairs), and
the b = 0 encoder reduced to one logit scale per feature: its gradient is the training step's own, column by column,
and its weight-decay equilibrium is where a b = 0 training run levels off."""
import math

import pytest
import torch

from imbalanced_cl.claims.premise_map import ceiling as C
from imbalanced_cl.sim import data as D
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.loss import infonce
from imbalanced_cl.sim.train import gradient, train
from imbalanced_cl.verdict import NOT_COMPARABLE


def _tiny(**kw):
    base = dict(d=5, d1=20, L=2, m=20, n_pairs=32, eps_min=0.5, n_minority=2, R=2, progress=False)
    return SimConfig(**{**base, **kw})


def test_the_information_floor_at_two_pairs_by_hand():
    # K = 2: N ~ Bin(1, pi), E ln(1 + N) = ln 2 E[pi] = ln 2 sum_patterns pi^2 = ln 2 prod_j ((1 - q_j)^2 + q_j^2 / 2)
    cfg = _tiny()
    q = D.sample_prob(cfg).tolist()
    assert len(set(q)) == 2                                 # two frequency levels: majority and minority
    assert C.bayes_floor(cfg, K=2) == pytest.approx(math.log(2) * math.prod((1 - x) ** 2 + x ** 2 / 2 for x in q))
    assert C.bayes_floor(cfg, K=2) < C.bayes_floor(cfg, K=32) < math.log(32)


def test_the_information_floor_against_a_brute_force_count_and_an_oracle_critic():
    cfg = _tiny()
    M = D.make_dictionaries(cfg, [0, 1])
    counts, oracle = [], []
    for b in range(150):
        P = D.make_pairs(cfg, M, [0, 1], extra=b + 1)
        counts.append(C.collision_floor(P))
        # an oracle critic: one-hot of each view's support and signs, logits 40 on a match, 0 elsewhere
        code = (torch.sign(P.ZX) + 1) @ (3.0 ** torch.arange(cfg.d))
        codey = (torch.sign(P.ZY) + 1) @ (3.0 ** torch.arange(cfg.d))
        FX = torch.nn.functional.one_hot(code.long(), 3 ** cfg.d).float() * math.sqrt(40.0)
        FY = torch.nn.functional.one_hot(codey.long(), 3 ** cfg.d).float() * math.sqrt(40.0)
        oracle.append(infonce(FX, FY, 1.0))
    exact = C.bayes_floor(cfg)
    count, crit = torch.cat(counts), torch.cat(oracle)
    # 300 batches of 32 anchors: the standard error of the mean is about 0.01 nats
    se = float(count.std() / math.sqrt(len(count)))
    assert float(count.mean()) == pytest.approx(exact, abs=4 * se)
    assert float(crit.mean()) == pytest.approx(float(count.mean()), abs=1e-6)   # e^-40 per non-match: nothing


def test_the_infinite_scale_positive_probability_by_hand():
    ax = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]], dtype=torch.float64)
    assert C.pos_prob_limit(ax, 2 * ax) == 1.0                  # every positive has the largest product
    # anchor 0 = (1, 0): its negative (2, 1) holds its support with a larger magnitude and wins; anchor 1's positive
    # (2, 1) has the largest product with (1, 0); the tie case splits: anchor (0, 1) against (0, 1) and (0, 1)
    assert C.pos_prob_limit(torch.tensor([[[1.0, 0], [1, 0]]]), torch.tensor([[[1.0, 0], [2, 1]]])) == 0.5
    assert C.pos_prob_limit(torch.tensor([[[0.0, 1], [0, 1]]]), torch.tensor([[[0.0, 1], [0, 1]]])) == 0.5


def test_the_reduced_gradient_is_the_training_steps_own_column_by_column():
    # W = diag(s) M^T: W^T W = sum_j s_j^2 M_j M_j^T. The step's gradient g = W C (tau InfoNCE, StopGrad) scales column
    # W M_j = s_j e_j by (M^T C M)_jj, which must be dl/dbeta_j of the reduced logits at beta_j = s_j^2 / tau
    cfg = _tiny(m=5, tau=2.0, sigma_xi=0.1)
    M = D.make_dictionaries(cfg, [0, 1])
    P = D.make_pairs(cfg, M, [0, 1], extra=7)
    s = torch.tensor([0.5, 1.0, 1.5, 2.0, 0.7])
    W = torch.diag(s).unsqueeze(0) @ M.transpose(1, 2)                     # (R, m = d, d1)
    g, loss, pp = gradient(W, torch.zeros(2, cfg.d), P, cfg)
    col = torch.einsum("rid,rdj->rij", g, M)                               # g M_j, (R, m, d)
    per_col = torch.diagonal(col, dim1=-2, dim2=-1) / s                    # (e_j . g M_j) / s_j = (M^T C M)_jj
    for r in range(2):
        ax = torch.einsum("nd,dj->nj", P.UX[r].sum(1), M[r]).double().unsqueeze(0)
        ay = torch.einsum("nd,dj->nj", P.UY[r].sum(1), M[r]).double().unsqueeze(0)
        red_loss, red_g, red_pp = C.scale_loss((s ** 2 / cfg.tau).double(), ax, ay)
        assert red_loss == pytest.approx(float(loss[r]), rel=1e-4) and red_pp == pytest.approx(float(pp[r]), rel=1e-4)
        assert torch.allclose(per_col[r].double(), red_g, rtol=1e-3, atol=1e-6)


def test_the_weight_decay_equilibrium_is_where_a_b0_run_levels_off():
    cfg = SimConfig(d=6, d1=30, m=60, n_pairs=128, L=4, eps_min=0.8, n_minority=1, bias="none", weight_decay=0.05,
                    steps=300, R=2, record_every=25, progress=False, sigma0=0.01)
    ax, ay = C.feature_coords(cfg, batches=8)
    eq = C.equilibrium(cfg, ax, ay, cfg.weight_decay)
    zero = C.equilibrium(cfg, ax, ay, 0.0)
    assert zero.loss < eq.loss < math.log(cfg.n_pairs)           # weight decay holds the loss up
    assert zero.beta_major > eq.beta_major                       # ... by holding the logit scale down
    h = train(cfg).history
    late = torch.stack([h.loss[k] for k, t in enumerate(h.steps) if t >= 100]).mean()
    assert float(late) == pytest.approx(eq.loss, rel=0.03)        # the run's plateau, to 3%
    traj = C.trajectory(cfg, ax, ay, cfg.weight_decay, 300, every=25)
    assert traj[-1][1] == pytest.approx(eq.loss, rel=1e-3)       # the reduced dynamics end at the fixed point


def test_the_chunked_weighted_top_share_is_the_one_pass_limit_and_the_large_scale_softmax():
    """top_share (anchors in chunks of 3, a weight per feature) against pos_prob_limit on the weighted coordinates,
    and against l'_p of the softmax itself at a large logit scale (the limit it stands for; no ties on random data)."""
    g = torch.Generator().manual_seed(0)
    ax, ay = torch.randn(2, 11, 4, generator=g, dtype=torch.float64), torch.randn(2, 11, 4, generator=g,
                                                                              dtype=torch.float64)
    w = torch.tensor([1.0, 1.0, 0.25, 4.0], dtype=torch.float64)
    share = C.top_share(ax, ay, w, chunk=3)
    assert share == pytest.approx(C.pos_prob_limit(ax * w, ay))
    lg = 400.0 * (ax * w) @ ay.transpose(-1, -2)
    lp = torch.diagonal(torch.softmax(lg, -1), dim1=-2, dim2=-1).mean()
    assert share == pytest.approx(float(lp), abs=1e-6) and 0.0 < share < 1.0


def test_more_pairs_lower_the_ceiling_on_the_projects_pairs():
    """The mechanism behind the conflict: more negatives hold the anchor's support and signs, so the l'_p ceiling at
    K = 512 lies below the one at K = 32 (d = 10, the map's plane cell; 2 replicates)."""
    from imbalanced_cl.claims.premise_map import PremiseMapConfig
    cfg = PremiseMapConfig(ds=(10,), ratios=(0.8,), R=2, progress=False)
    share = {}
    for K in (32, 512):
        cell = cfg.cell("plane", 10, "bottom", 0.8, K=K)
        ax, ay = C.feature_coords(cell.cfg, batches=1, replicates=2)
        share[K] = C.top_share(ax.float(), ay.float(), torch.ones(10))
    assert share[512] < share[32] - 0.1, share


def _ceiling(d, limit, need=0.5, measured=0.1):
    return C.LpCeiling(d, 1000, "hand-made", limit, need, measured, 2)


def test_a_ceiling_conflicts_only_below_the_criterion_and_never_when_not_computed():
    assert _ceiling(10, 0.105).conflict and not _ceiling(40, 0.503).conflict
    assert not _ceiling(80, math.nan).conflict
    assert "cannot reach l'_p ≥ 0.50" in _ceiling(10, 0.105).line()
    assert "no conflict shown" in _ceiling(40, 0.503).line() and "not computed" in _ceiling(80, math.nan).line()


def test_the_map_answers_c_naming_d_and_the_two_premises_only_where_a_ceiling_conflicts():
    """The claim-4 wiring: with no cell meeting every premise, a ceiling below convergence's l'_p at Lemma B.1's K
    turns (b) into (c), and the deciding fact names the d and both premises; a ceiling above it leaves (b)."""
    from tests.test_premise_map import ALL, _cell, _result
    from imbalanced_cl.claims import premise_map as PM
    cell = _cell()
    res = [_result(cell, {**ALL, "convergence": False, "lemma_b1": False}, [0.0, 0.0])]
    assert PM.conclusion(res, [], cell.cfg).kind == "b"
    assert PM.conclusion(res, [], cell.cfg, (_ceiling(40, 0.503),)).kind == "b"
    c = PM.conclusion(res, [], cell.cfg, (_ceiling(10, 0.105), _ceiling(20, 0.303), _ceiling(40, 0.503)))
    assert c.kind == "c" and c.verdict == NOT_COMPARABLE
    assert c.fact == "convergence and Lemma B.1's K at d = 10, 20 (l'_p ≤ 0.105, 0.303 against 0.50)"
    assert "d=40" not in c.text.split("beyond this map's reach")[0]      # only conflicting d's are named as such
    row = PM.verdict_rows(res, [], cell.cfg, (_ceiling(10, 0.105),))[-1]
    assert row.id == "claim4_map" and row.verdict == NOT_COMPARABLE and "answer (c)" in row.rule, row.rule
    # a cell meeting every premise answers (a) whatever a ceiling says elsewhere
    good = [_result(cell, ALL, [0.10, 0.12, 0.11])]
    assert PM.conclusion(good, [], cell.cfg, (_ceiling(10, 0.105),)).kind == "a"
