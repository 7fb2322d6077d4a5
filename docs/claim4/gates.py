"""How much of a neuron the bias lets through (issue 63): python docs/claim4/gates.py d lam steps onset

Trains the map's cell (m = 5d, R = 2) with the bias from `onset`, then on held-out pairs: the share of (pair, token)
pre-activations |<w_i, u^(r)>| >= b_i per neuron, the share of neurons dominated by one feature (largest squared
cosine with a feature above 1/2 of the feature-span energy), and the gate share of those and of the others.
"""
import sys

import torch

from imbalanced_cl.claims.premise_map import PremiseMapConfig
from imbalanced_cl.sim.encoder import preactivations
from imbalanced_cl.sim.train import train

torch.set_num_threads(1)
d, lam, steps, onset = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4]
c = PremiseMapConfig().cell("plane", d, lam, 0.8).cfg
run = train(c.sim(steps=steps, R=2, record_every=50, progress=False, bias="schedule", bias_onset=onset))
held = run.heldout(512)
b = run.bias                                                   # (R, m)
s = preactivations(run.W, held.UX)                             # (R, n, L, m)
gate = (s.abs() >= b[:, None, None, :]).float().mean((1, 2))  # (R, m)
coef2 = (run.W @ run.M) ** 2                                   # (R, m, d)
single = coef2.max(-1).values >= 0.5 * coef2.sum(-1)
print(f"d={d} lam={lam} onset={onset} steps={steps}: loss {float(run.history.loss[-1].mean()):.3f} "
      f"(ln K {torch.log(torch.tensor(512.0)):.3f}); gates open {float(gate.mean()):.3f} of (pair, token) per neuron; "
      f"single-feature neurons {float(single.float().mean()):.3f}, their gates {float(gate[single].mean()):.3f}, "
      f"the others' {float(gate[~single].mean()):.3f}; b/||w|| {float((b / run.W.norm(dim=-1)).mean()):.3f}")
