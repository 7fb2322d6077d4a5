"""Scratch for issue 63, item 1: the b = 0 encoder reduced to one logit scale per feature (exploration, not book code).

With b = 0 the encoder is linear, sim(X, Y) = u_X^T W^T W u_Y. If W^T W = sum_j s_j^2 M_j M_j^T (feature span, columns
W M_j orthogonal: true at init for m >> d, and kept by the update since E[M^T C M] is diagonal by sign symmetry), the
logits are sum_j beta_j a_Xj a_Yj with a = M^T sum_r u^(r) and beta_j = s_j^2 / tau, and the StopGrad step
W <- (1 - eta lambda) W - eta W C scales each column: s_j <- s_j (1 - eta lambda - eta dl/dbeta_j).
"""
import sys

import torch

from imbalanced_cl.claims.premise_map import PremiseMapConfig
from imbalanced_cl.sim import data as D

torch.set_num_threads(1)


def cell_cfg(d, ratio=0.8, lam="mid", K=512, **changes):
    """The map's plane cell at (d, lam, ratio), with K and any SimConfig changes."""
    c = PremiseMapConfig().cell("plane", d, lam, ratio, K=K).cfg
    return c.replace(**changes) if changes else c


def coords(cfg, batches=8, R=2):
    """Feature coordinates a_X, a_Y (B, K, d) of `batches` batches of K pairs (theory stream)."""
    reps = list(range(R))
    M = D.make_dictionaries(cfg, reps)
    ax, ay = [], []
    for b in range(batches):
        P = D.make_pairs(cfg, M, reps, purpose=4, extra=10_000 + b)
        ax.append(torch.einsum("rnd,rdj->rnj", P.UX.sum(2), M))
        ay.append(torch.einsum("rnd,rdj->rnj", P.UY.sum(2), M))
    return torch.cat(ax).double(), torch.cat(ay).double()


def loss_grad(beta, ax, ay):
    """InfoNCE (mean), its gradient in beta (d,), and mean l'_p, for logits sum_j beta_j a_Xj a_Yj."""
    beta = beta.clone().requires_grad_(True)
    lg = (ax * beta) @ ay.transpose(-1, -2)
    lp = torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)
    loss = -lp.mean()
    (g,) = torch.autograd.grad(loss, beta)
    return float(loss.detach()), g, float(lp.detach().exp().mean())


def classes(cfg):
    """Index of the majority and the minority features."""
    d, n = cfg.d, cfg.n_minority
    return list(range(d - n)), list(range(d - n, d))


def expand(bm, bn, cfg):
    """A beta vector with bm on the majority features and bn on the minority ones."""
    maj, mino = classes(cfg)
    b = torch.zeros(cfg.d, dtype=torch.float64)
    b[maj], b[mino] = bm, bn
    return b


def dynamics(cfg, ax, ay, lam, steps, s0sq, every=50):
    """Integrate s_j <- s_j (1 - eta lam - eta dl/dbeta_j) from s_j^2 = s0sq; yields (t, loss, l'_p, beta)."""
    beta = torch.full((cfg.d,), s0sq / cfg.tau, dtype=torch.float64)
    for t in range(steps + 1):
        loss, g, pp = loss_grad(beta, ax, ay)
        if t % every == 0:
            yield t, loss, pp, beta.clone()
        beta = beta * (1 - cfg.lr * lam - cfg.lr * g) ** 2


if __name__ == "__main__":
    print(sys.argv)
