import math, sys, time
sys.path.insert(0, "docs/claim4")
import torch
from reduced import *
from imbalanced_cl.sim.train import train
# reduced b=0 dynamics vs the project's training with bias="none", at the map's plane cells (m=50, sigma0=1e-3)
d, lam_name = int(sys.argv[1]), sys.argv[2]
steps = int(sys.argv[3])
c = cell_cfg(d, lam=lam_name)
lam = c.weight_decay
cfg = c.sim(steps=steps, bias="none", R=2, record_every=50, progress=False)
ax, ay = coords(cfg, batches=4)
lnK = math.log(cfg.n_pairs)
s0sq = cfg.m * cfg.sigma0 ** 2
red = {t: (l, pp, b) for t, l, pp, b in dynamics(cfg, ax, ay, lam, steps, s0sq, every=50)}
t0 = time.time()
run = train(cfg)
h = run.history
print(f"d={d} lam={lam_name}={lam:.4g} K={cfg.n_pairs} m={cfg.m} train {time.time()-t0:.0f}s")
for k, t in enumerate(h.steps):
    l, pp, b = red.get(t, (math.nan, math.nan, None))
    W = h.coef[k]  # (R, m, d): <w_i, M_j>
    s2 = W.pow(2).sum(1).mean(0)  # (d,) ||W M_j||^2
    bs = "" if b is None else f"beta_red maj {float(b[0]):.3g} min {float(b[-1]):.3g}"
    print(f"t={t}: train {float(h.loss[k].mean())/lnK:.3f}lnK lp {float(h.pos_prob[k].mean()):.3f} "
          f"s2 maj {float(s2[0]):.3g} min {float(s2[-1]):.3g} | reduced {l/lnK:.3f}lnK lp {pp:.3f} {bs}", flush=True)
