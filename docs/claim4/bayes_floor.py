"""The Bayes floor of InfoNCE at finite K for the paper's pairs (issue 63): python docs/claim4/bayes_floor.py

The two views share only the support and signs of the token-summed latent (Assumption 3.4); with noise small enough
that each view reveals its pattern, the best critic is a function of the pattern, and the best InfoNCE with K - 1
negatives is E[ln(1 + N)], N ~ Bin(K - 1, pi(pattern)) the negatives with the anchor's pattern. pi depends only on
how many majority and minority features the support holds, so the sum runs over O(d^2) groups. A Monte-Carlo check
counts pattern collisions in the project's own sampled batches.
"""
import math
import sys

import torch
from scipy import stats

sys.path.insert(0, "docs/claim4")
from reduced import cell_cfg

from imbalanced_cl.sim import data as D

torch.set_num_threads(1)


def floor_exact(q_maj, q_min, n_maj, n_min, K):
    """E[ln(1 + N)] over patterns; q: per-feature support probabilities; signs equiprobable."""
    total = 0.0
    ks = torch.arange(K, dtype=torch.float64)
    for a in range(n_maj + 1):
        for b in range(n_min + 1):
            # probability of one given pattern with a majority and b minority features (support and signs)
            pi = (q_maj / 2) ** a * (1 - q_maj) ** (n_maj - a) * (q_min / 2) ** b * (1 - q_min) ** (n_min - b)
            # number of patterns of this shape: C(n_maj, a) C(n_min, b) 2^(a+b); their total probability:
            mass = math.comb(n_maj, a) * math.comb(n_min, b) * 2 ** (a + b) * pi
            pmf = torch.from_numpy(stats.binom.pmf(ks.numpy(), K - 1, pi))
            total += mass * float((pmf * torch.log1p(ks)).sum())
    return total


def floor_mc(cfg, batches=4):
    """The same from sampled batches: for each anchor, ln(1 + number of negatives with its support and signs)."""
    reps = [0, 1]
    M = D.make_dictionaries(cfg, reps)
    out = []
    for b in range(batches):
        P = D.make_pairs(cfg, M, reps, purpose=4, extra=20_000 + b)
        pat = torch.sign(P.ZX)                       # (R, K, d): support and sign of X
        paty = torch.sign(P.ZY)
        assert torch.equal(pat, paty)                # Assumption 3.4: the views share them
        same = (pat.unsqueeze(2) == paty.unsqueeze(1)).all(-1).float()      # (R, K, K)
        n = same.sum(-1) - 1                          # negatives with the anchor's pattern
        out.append(torch.log1p(n).mean())
    return float(torch.stack(out).mean())


if __name__ == "__main__":
    for d, K in ((10, 512), (10, 1588), (20, 512), (20, 2482), (40, 512), (40, 8292), (80, 512)):
        cfg = cell_cfg(d, K=K)
        q = D.sample_prob(cfg)
        qa, qb = float(q[0]), float(q[-1])
        ex = floor_exact(qa, qb, d - cfg.n_minority, cfg.n_minority, K)
        mc = floor_mc(cfg, batches=2) if K <= 2500 else float("nan")
        print(f"d={d} K={K}: Bayes floor {ex:.4f} nats = {ex / math.log(K):.4f} ln K (MC {mc:.4f}); "
              f"q maj {qa:.3f} min {qb:.3f}", flush=True)
