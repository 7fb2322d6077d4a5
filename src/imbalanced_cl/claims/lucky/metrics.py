"""Notebook 02's measurements on a Run: T2 (eq. 61) and Lemma 3.2 (eqs. 9-10) at T2."""
from __future__ import annotations

import numpy as np

from ..census.sets import census_of


def detect_t2(run, factor: float = 0.0) -> np.ndarray:
    """T2 per replicate (eq. 61): first recorded step t >= T1 at which some neuron has
    ||w_i(t)||^2 >= factor * ||w_i(T1)||^2 (factor 0 means d, the paper's rule). -1 if never.
    Needs a history recorded at every step up to T2 (record_every = 1) for exact times."""
    factor = factor or run.cfg.d
    steps = run.history.get("steps").numpy()
    n2 = run.history.get("norm2").numpy()            # (T, R, m)
    out = np.full(n2.shape[1], -1)
    for r in range(n2.shape[1]):
        T1 = int(run.T1[r])
        if T1 < 0:
            continue
        k1 = int(np.searchsorted(steps, T1))
        if k1 >= len(steps):
            continue
        grow = n2[k1:, r, :] / n2[k1, r, :][None, :]
        hit = np.nonzero((grow >= factor).any(-1))[0]
        if hit.size:
            out[r] = int(steps[k1 + hit[0]])
    return out


def coef_at(run, step: int, r: int) -> np.ndarray:
    """<w_i, M_j> (m, d) of replicate r at the recorded step nearest to `step`."""
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("coef")[k, r].numpy()


def norm2_at(run, step: int, r: int) -> np.ndarray:
    steps = run.history.get("steps").numpy()
    k = int(np.argmin(np.abs(steps - step)))
    return run.history.get("norm2")[k, r].numpy()


def lemma32(run, T2: np.ndarray, gamma: float) -> dict:
    """Lemma 3.2 at T2 for each replicate: (a) lucky i in M_j*: ratio
    |<w_i(T2),M_j>|^2 / (2 eps_j/eps_max ||w_i(T1)||^2) (>= 1 claimed); (b) max over ordinary i' in M_j of
    |<w_i',M_j>| / max over lucky i of |<w_i,M_j>| (O(1) claimed). Also whether the neuron luckiest at init
    (largest u_ij^2) is the feature's top neuron at T2."""
    from ...sim.data import eps_vector
    cfg = run.cfg
    rho = cfg.eps_min / cfg.eps_max
    eps = eps_vector(cfg).numpy()
    g0 = (run.W0 @ run.M)
    cen = census_of(g0, cfg.d, rho, gamma)
    a_ratios, b_ratios, top_hit, top_hit_min = [], [], [], []
    for r in range(g0.shape[0]):
        if T2[r] < 0:
            continue
        cT2 = np.abs(coef_at(run, int(T2[r]), r))
        n1 = norm2_at(run, int(run.T1[r]), r)
        lucky, ordi = cen["lucky"][r].numpy(), cen["ordinary"][r].numpy()
        for i, j in zip(*np.nonzero(lucky), strict=True):
            a_ratios.append(cT2[i, j] ** 2 / (2 * eps[j] / cfg.eps_max * n1[i]))
        for j in range(cfg.d):
            li = np.nonzero(lucky[:, j])[0]
            oi = np.nonzero(ordi[:, j])[0]
            if li.size and oi.size:
                b_ratios.append(cT2[oi, j].max() / cT2[li, j].max())
        u2 = (g0[r] ** 2 / (g0[r] ** 2).sum(-1, keepdim=True)).numpy()
        best0 = u2.argmax(0)                     # luckiest neuron at init, per feature
        bestT2 = cT2.argmax(0)                   # top neuron at T2, per feature
        hit = best0 == bestT2
        mino = np.arange(cfg.d) >= cfg.d - cfg.n_minority   # by position, also when rho = 1
        top_hit.append(hit[~mino].mean())
        if mino.any():
            top_hit_min.append(hit[mino].mean())
    return {"a_ratio": np.array(a_ratios), "b_ratio": np.array(b_ratios), "top_hit_major": np.array(top_hit),
            "top_hit_minor": np.array(top_hit_min), "chance": 1.0 / cfg.m}
