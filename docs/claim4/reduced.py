"""Helpers of the issue-63 scripts over the tested module claims/premise_map/ceiling.py (the b = 0 encoder reduced
to one logit scale per feature; see its docstring): the map's cells, and the reduced dynamics with their beta."""
import torch

from imbalanced_cl.claims.premise_map import PremiseMapConfig
from imbalanced_cl.claims.premise_map import ceiling as C

torch.set_num_threads(1)


def cell_cfg(d, ratio=0.8, lam="mid", K=512, **changes):
    """The map's plane cell at (d, lam, ratio), with K and any SimConfig changes."""
    c = PremiseMapConfig().cell("plane", d, lam, ratio, K=K).cfg
    return c.replace(**changes) if changes else c


def coords(cfg, batches=8, R=2):
    """Feature coordinates a_X, a_Y (B R, K, d) of `batches` batches of K pairs (ceiling.feature_coords)."""
    return C.feature_coords(cfg, batches=batches, replicates=R)


loss_grad = C.scale_loss


def classes(cfg):
    """Index of the majority and the minority features."""
    d, n = cfg.d, cfg.n_minority
    return list(range(d - n)), list(range(d - n, d))


def expand(bm, bn, cfg):
    """A beta vector with bm on the majority features and bn on the minority ones (ceiling.group_beta)."""
    return C.group_beta(cfg, bm, bn)


def dynamics(cfg, ax, ay, lam, steps, s0sq, every=50):
    """Integrate s_j <- s_j (1 - eta lam - eta dl/dbeta_j) from s_j^2 = s0sq; yields (t, loss, l'_p, beta)."""
    beta = torch.full((cfg.d,), s0sq / cfg.tau, dtype=torch.float64)
    for t in range(steps + 1):
        loss, g, pp = C.scale_loss(beta, ax, ay)
        if t % every == 0:
            yield t, loss, pp, beta.clone()
        beta = beta * (1 - cfg.lr * lam - cfg.lr * g) ** 2
