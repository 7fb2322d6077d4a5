"""Reduced b = 0 model against the project's training: python docs/claim4/check_reduced.py d lam steps [k=v ...]
(k=v: SimConfig changes, e.g. bias=schedule sigma0=0.01 m=50 n_pairs=512 weight_decay=0)."""
import math
import sys
import time


sys.path.insert(0, "docs/claim4")
from reduced import cell_cfg, coords, dynamics

from imbalanced_cl.sim.train import train

d, lam_name, steps = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
changes = {}
for kv in sys.argv[4:]:
    k, v = kv.split("=")
    changes[k] = v if k in ("bias", "bias_onset", "views") else float(v) if "." in v or "e" in v else int(v)
K = changes.pop("n_pairs", 512)
c = cell_cfg(d, lam=lam_name, K=K)
changes.setdefault("bias", "none")
cfg = c.sim(steps=steps, R=2, record_every=50, progress=False, **changes)
lam = cfg.weight_decay
ax, ay = coords(cfg, batches=4)
lnK = math.log(cfg.n_pairs)
s0sq = cfg.m * cfg.sigma0 ** 2
red = {t: (loss, pp, b) for t, loss, pp, b in dynamics(cfg, ax, ay, lam, steps, s0sq, every=50)}
t0 = time.time()
run = train(cfg)
h = run.history
print(f"d={d} lam={lam:.4g} K={cfg.n_pairs} m={cfg.m} sigma0={cfg.sigma0} {changes} T1={run.T1.tolist()} "
      f"train {time.time() - t0:.0f}s")
for k, t in enumerate(h.steps):
    loss, pp, b = red.get(t, (math.nan, math.nan, None))
    s2 = h.coef[k].pow(2).sum(1).mean(0)
    bias = float(h.bias[k].mean() / h.norm2[k].sqrt().mean())
    bs = "" if b is None else f"beta maj {float(b[0]):.3g} min {float(b[-1]):.3g}"
    print(f"t={t}: train {float(h.loss[k].mean()) / lnK:.3f}lnK lp {float(h.pos_prob[k].mean()):.3f} "
          f"s2 maj {float(s2[0]):.3g} min {float(s2[-1]):.3g} b/|w| {bias:.3f} | reduced {loss / lnK:.3f}lnK "
          f"lp {pp:.3f} {bs}", flush=True)
