import math, sys, time
sys.path.insert(0, "docs/claim4")
import torch
from reduced import *
# 1. loss of the isotropic linear encoder as a function of the logit scale beta (all features equal)
for d in (10, 20):
    for views, sx in (("paper", 0.05), ("identical", 0.01)):
        cfg = cell_cfg(d, views=views, sigma_xi=sx)
        t0 = time.time()
        ax, ay = coords(cfg, batches=4)
        lnK = math.log(cfg.n_pairs)
        rows = []
        for beta in [0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000]:
            l, g, pp = loss_grad(torch.full((d,), float(beta), dtype=torch.float64), ax, ay)
            rows.append(f"b={beta:g}: {l/lnK:.3f}lnK lp={pp:.3f} -dl/db={-float(g.sum()):.3g}")
        print(f"d={d} views={views} sx={sx} ({time.time()-t0:.1f}s)\n  " + "\n  ".join(rows), flush=True)
