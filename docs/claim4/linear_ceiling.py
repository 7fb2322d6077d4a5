"""The b = 0 encoder's ceiling and weight-decay equilibria (issue 63):
python docs/claim4/linear_ceiling.py d K [m [views=identical sigma_xi=0.01 ...]]

On the reduced model (reduced.py): logits sum_j beta_j a_Xj a_Yj with one beta for the majority features and one for
the minority. Prints: the loss and l'_p along an isotropic beta; the best loss over (beta_maj, beta_min) (the
lambda = 0 ceiling); whether any (beta_maj, beta_min) on a grid meets both convergence criteria (loss <= 0.5 ln K,
l'_p >= 1 - 0.5/tau = 0.5 at tau = 1); the fixed point -dl/dbeta_j = lambda at the map's lambdas, and the steps the
reduced dynamics take from beta = m sigma0^2 / tau to within 2% of it, against Theorem 3.1's window.
"""
import math
import sys
import time

import torch

sys.path.insert(0, "docs/claim4")
from reduced import cell_cfg, classes, coords, expand, loss_grad

from imbalanced_cl.claims.premise_map.config import lambda_value, window

torch.set_num_threads(1)


def fixed_point(cfg, ax, ay, lam, beta0=0.5, iters=150):
    """Solve -dl/dbeta_j = lam per class by damped iteration in log beta; (beta_maj, beta_min, loss, l'_p)."""
    maj, mino = classes(cfg)
    lb = torch.tensor([math.log(beta0), math.log(beta0)], dtype=torch.float64)
    for _ in range(iters):
        b = expand(math.exp(lb[0]), math.exp(lb[1]), cfg)
        loss, g, pp = loss_grad(b, ax, ay)
        rate = torch.tensor([-float(g[maj].mean()) - lam, -float(g[mino].mean()) - lam])
        lb = lb + 2.0 * rate.clamp(-1, 1)
        lb = lb.clamp(-12, 8)
    return math.exp(lb[0]), math.exp(lb[1]), loss, pp


def steps_to(cfg, ax, ay, lam, s0sq, target, tol=0.02, t_max=20000):
    """Steps of the reduced dynamics from s0sq until the loss is within tol (relative) of `target`."""
    beta = torch.full((cfg.d,), s0sq / cfg.tau, dtype=torch.float64)
    for t in range(t_max):
        loss, g, _ = loss_grad(beta, ax, ay)
        if abs(loss - target) <= tol * target:
            return t
        beta = beta * (1 - cfg.lr * lam - cfg.lr * g) ** 2
    return math.inf


def main(d, K, m, **changes):
    t0 = time.time()
    cfg = cell_cfg(d, K=K, **changes)
    batches = max(1, min(4, 2048 // K))
    ax, ay = coords(cfg, batches=batches)
    lnK = math.log(K)
    print(f"d={d} K={K} m={m} {changes} ({batches} batches x 2 replicates)")
    iso = []
    for beta in (0.3, 1, 2, 3, 5, 10, 30, 1e4):
        loss, _, pp = loss_grad(torch.full((d,), float(beta), dtype=torch.float64), ax, ay)
        iso.append(f"{beta:g}: {loss / lnK:.3f}/{pp:.3f}")
    print("  isotropic beta: loss/lnK / l'_p  " + "  ".join(iso))
    # lambda = 0 ceiling over (beta_maj, beta_min)
    lb = torch.tensor([1.0, 1.0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([lb], max_iter=60, line_search_fn="strong_wolfe")
    maj, mino = classes(cfg)

    def closure():
        opt.zero_grad()
        b = torch.zeros(d, dtype=torch.float64)
        b = b.index_put((torch.tensor(maj),), lb[0].exp().expand(len(maj)))
        b = b.index_put((torch.tensor(mino),), lb[1].exp().expand(len(mino)))
        lg = (ax * b) @ ay.transpose(-1, -2)
        loss = -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)).mean()
        loss.backward()
        return loss
    opt.step(closure)
    bm, bn = float(lb[0].detach().exp()), float(lb[1].detach().exp())
    loss, _, pp = loss_grad(expand(bm, bn, cfg), ax, ay)
    print(f"  lambda=0 ceiling: loss {loss / lnK:.3f} ln K, l'_p {pp:.3f} at beta maj {bm:.3g} min {bn:.3g}")
    # both criteria on a grid of (beta_maj, beta_min)
    grid = [0.5 * 1.6 ** k for k in range(10)]
    best = None
    for x in grid:
        for y in grid:
            loss, _, pp = loss_grad(expand(x, y, cfg), ax, ay)
            if loss <= 0.5 * lnK and (best is None or pp > best[2]):
                best = (x, y, pp, loss)
    lp_inf = loss_grad(torch.full((d,), 1e4, dtype=torch.float64), ax, ay)[2]
    print(f"  l'_p as beta -> inf: {lp_inf:.3f}; best l'_p with loss <= 0.5 ln K on the grid: "
          + ("none" if best is None else f"{best[2]:.3f} (loss {best[3] / lnK:.3f} at {best[0]:.3g}, {best[1]:.3g})"))
    t4 = window(d, cfg.lr)[1]
    for name in ("zero", "book", "bottom", "mid", "top"):
        lam = 0.0 if name == "zero" else lambda_value(name, d, 1e-3)
        bm, bn, loss, pp = fixed_point(cfg, ax, ay, lam)
        t = steps_to(cfg, ax, ay, lam, m * cfg.sigma0 ** 2, loss) if name != "zero" else math.nan
        print(f"  lambda {name} = {lam:.4g}: fixed point loss {loss / lnK:.3f} ln K, l'_p {pp:.3f}, beta maj {bm:.3g} "
              f"min {bn:.3g}; reduced steps from m sigma0^2 to within 2%: {t} (window ends {t4:.0f})", flush=True)
    print(f"  ({time.time() - t0:.0f}s)")


if __name__ == "__main__":
    extra = dict(kv.split("=") for kv in sys.argv[4:])
    extra = {k: (v if k == "views" else float(v)) for k, v in extra.items()}
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 50, **extra)
