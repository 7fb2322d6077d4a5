"""l'_p of the b = 0 encoder as its logit scale grows (issue 63), at large K, anchors in chunks:
python docs/claim4/lp_limit.py d K [replicates]

The share of anchors whose positive has the largest inner product a_X . a_Y among the K (ties split), and the loss
and l'_p of the isotropic encoder at a few beta, on one batch of K pairs per replicate (the theory stream).
"""
import math
import sys
import time

import torch

from imbalanced_cl.claims.premise_map import PremiseMapConfig
from imbalanced_cl.claims.premise_map import ceiling as C

torch.set_num_threads(1)
d, K = int(sys.argv[1]), int(sys.argv[2])
R = int(sys.argv[3]) if len(sys.argv) > 3 else 1
t0 = time.time()
cfg = PremiseMapConfig().cell("plane", d, "bottom", 0.8, K=K).cfg
ax, ay = C.feature_coords(cfg, batches=1, replicates=R)
ax, ay = ax.float(), ay.float()
wins, n = 0.0, 0
betas = (1.0, 2.0, 3.0, 5.0, 10.0)
loss = {b: 0.0 for b in betas}
pp = {b: 0.0 for b in betas}
for r in range(R):
    for lo in range(0, K, 512):
        lg = ax[r, lo:lo + 512] @ ay[r].T                          # (chunk, K)
        pos = lg[torch.arange(lg.shape[0]), torch.arange(lo, lo + lg.shape[0])]
        top = lg.max(-1).values
        wins += float(((pos == top).double() / (lg == top[:, None]).sum(-1).double()).sum())
        for b in betas:
            lp = b * pos - torch.logsumexp(b * lg, -1)
            loss[b] += float(-lp.sum())
            pp[b] += float(lp.exp().sum())
        n += lg.shape[0]
lnK = math.log(K)
print(f"d={d} K={K} R={R}: l'_p as beta -> inf {wins / n:.3f}; isotropic beta: "
      + "  ".join(f"{b:g}: {loss[b] / n / lnK:.3f} ln K / l'_p {pp[b] / n:.3f}" for b in betas)
      + f"  ({time.time() - t0:.0f}s)", flush=True)
