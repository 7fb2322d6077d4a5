"""Loss and l'_p of the isotropic b = 0 encoder along its logit scale beta (issue 63):
python docs/claim4/scale_scan.py"""
import math
import sys
import time

import torch

sys.path.insert(0, "docs/claim4")
from reduced import cell_cfg, coords, loss_grad

for d in (10, 20):
    for views, sx in (("paper", 0.05), ("identical", 0.01)):
        cfg = cell_cfg(d, views=views, sigma_xi=sx)
        t0 = time.time()
        ax, ay = coords(cfg, batches=4)
        lnK = math.log(cfg.n_pairs)
        rows = []
        for beta in [0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000]:
            loss, g, pp = loss_grad(torch.full((d,), float(beta), dtype=torch.float64), ax, ay)
            rows.append(f"b={beta:g}: {loss / lnK:.3f}lnK lp={pp:.3f} -dl/db={-float(g.sum()):.3g}")
        print(f"d={d} views={views} sx={sx} ({time.time() - t0:.1f}s)\n  " + "\n  ".join(rows), flush=True)
