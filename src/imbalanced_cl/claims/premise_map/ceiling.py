"""What bounds the vanilla run's convergence, without training (issue 63): the information floor of InfoNCE at finite
K, and the encoder with b = 0 reduced to one logit scale per feature, whose plateau under weight decay and whose
best loss have closed forms on sampled pairs.

Information. The two views share only the support and the signs of the token-summed latent (Assumption 3.4), so
X -> pattern -> Y, and no critic does better than the one that knows each view's pattern: its InfoNCE is
E[ln(1 + N)], N ~ Bin(K - 1, pi) the negatives that share the anchor's pattern, pi = prod_{j in S} q_j/2 prod_{j not in
S} (1 - q_j). (The bound ln K - I(X;Y) is vacuous at these d: each view reveals its pattern, so I(X;Y) is about the
pattern's entropy, above ln K.)

The encoder with b = 0 is linear: sim(X, Y) = u_X^T W^T W u_Y. When W^T W = sum_j s_j^2 M_j M_j^T (at initialisation for
m >> d; kept by the update, since E[M^T C M] is diagonal under independent signs), the logits are
sum_j beta_j a_Xj a_Yj, with a = M^T sum_r u^(r) and beta_j = s_j^2 / tau, and the StopGrad step of tau InfoNCE,
W <- (1 - eta lambda) W - eta W C, scales each column W M_j by 1 - eta lambda - eta dl/dbeta_j (l the InfoNCE of
these logits, in nats). Hence:
  * the plateau under weight decay is the fixed point -dl/dbeta_j = lambda (tau and the initial scale set only where
    beta starts, s0^2 / tau = m sigma0^2 / tau, and eta only the time);
  * at lambda = 0 it is min_beta l(beta): finite, because a negative whose support holds the anchor's with the same
    signs and larger magnitudes has the larger inner product, and l'_p stays below the share of anchors whose positive
    has the largest logit however large beta grows.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from ...sim import data as D
from ...sim.theory import STREAM_THEORY
from .target import k_estimate, measured_deviations


def _log_binom_pmf(n: int, p: float) -> torch.Tensor:
    """log P(N = k), k = 0..n, for N ~ Bin(n, p), in float64 (p in (0, 1))."""
    k = torch.arange(n + 1, dtype=torch.float64)
    return (torch.lgamma(torch.tensor(n + 1.0, dtype=torch.float64)) - torch.lgamma(k + 1) - torch.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def bayes_floor(cfg, K: int | None = None) -> float:
    """E[ln(1 + N)] in nats: the best InfoNCE any critic reaches with K pairs (the module docstring), summed exactly
    over the patterns grouped by how many features of each frequency they hold."""
    K = cfg.n_pairs if K is None else K
    q = D.sample_prob(cfg).tolist()
    groups: dict[float, int] = {}
    for qj in q:
        groups[qj] = groups.get(qj, 0) + 1
    levels = list(groups.items())
    ln1k = torch.log1p(torch.arange(K, dtype=torch.float64))
    total = 0.0

    def walk(i: int, log_pi: float, log_mass: float) -> None:
        nonlocal total
        if i == len(levels):
            pi = math.exp(log_pi)
            total += math.exp(log_mass) * float((_log_binom_pmf(K - 1, pi).exp() * ln1k).sum()) if pi > 0 else 0.0
            return
        qj, n = levels[i]
        for a in range(n + 1):      # a features of this level in the support, each with one of two signs
            lp = a * math.log(qj / 2) + (n - a) * math.log1p(-qj)
            walk(i + 1, log_pi + lp, log_mass + math.log(math.comb(n, a)) + a * math.log(2) + lp)
    walk(0, 0.0, 0.0)
    return total


def collision_floor(pairs: D.Pairs) -> torch.Tensor:
    """(R,) mean over anchors of ln(1 + the negatives sharing its support and signs), counted on sampled pairs: the
    brute-force estimate of bayes_floor."""
    px, py = torch.sign(pairs.ZX), torch.sign(pairs.ZY)
    same = (px.unsqueeze(2) == py.unsqueeze(1)).all(-1)
    return torch.log1p(same.sum(-1).double() - 1).mean(-1)


def feature_coords(cfg, batches: int = 4, replicates: int = 2) -> tuple[torch.Tensor, torch.Tensor]:
    """a_X, a_Y = M^T sum_r u^(r) of both views, float64 (batches * replicates, K, d), on held-apart pairs (the theory
    stream, sub-streams 10000 + b)."""
    reps = list(range(replicates))
    M = D.make_dictionaries(cfg, reps)
    ax, ay = [], []
    for b in range(batches):
        P = D.make_pairs(cfg, M, reps, purpose=STREAM_THEORY, extra=10_000 + b)
        ax.append(torch.einsum("rnd,rdj->rnj", P.UX.sum(2), M))
        ay.append(torch.einsum("rnd,rdj->rnj", P.UY.sum(2), M))
    return torch.cat(ax).double(), torch.cat(ay).double()


def scale_loss(beta: torch.Tensor, ax: torch.Tensor, ay: torch.Tensor) -> tuple[float, torch.Tensor, float]:
    """InfoNCE (nats, mean over anchors and batches), its gradient in beta (d,) and mean l'_p, for the logits
    sum_j beta_j a_Xj a_Yj (eqs. 1-3 with positives on the diagonal)."""
    beta = beta.detach().clone().requires_grad_(True)
    lg = (ax * beta) @ ay.transpose(-1, -2)
    logp = torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)
    loss = -logp.mean()
    (g,) = torch.autograd.grad(loss, beta)
    return float(loss.detach()), g, float(logp.detach().exp().mean())


def group_beta(cfg, b_major: float, b_minor: float) -> torch.Tensor:
    """A beta vector (d,): b_major on the majority features, b_minor on the n_minority last ones (data.eps_vector)."""
    beta = torch.full((cfg.d,), float(b_major), dtype=torch.float64)
    if cfg.n_minority:
        beta[cfg.d - cfg.n_minority:] = float(b_minor)
    return beta


@dataclass(frozen=True)
class Scale:
    """A point of the reduced model: the logit scales of the majority and minority features, its loss and l'_p."""

    beta_major: float
    beta_minor: float
    loss: float          # InfoNCE, nats
    pos_prob: float      # mean l'_p


def equilibrium(cfg, ax: torch.Tensor, ay: torch.Tensor, lam: float, iters: int = 150,
                start: float = 0.5) -> Scale:
    """The fixed point -dl/dbeta_j = lam of the reduced dynamics, one scale per frequency (lam = 0: the best loss of
    the encoder with b = 0), by a damped iteration in log beta."""
    minor = torch.zeros(cfg.d, dtype=torch.bool)
    minor[cfg.d - cfg.n_minority:] = True
    lb = [math.log(start), math.log(start)]
    for _ in range(iters):
        _, g, _ = scale_loss(group_beta(cfg, math.exp(lb[0]), math.exp(lb[1])), ax, ay)
        rates = (-float(g[~minor].mean()) - lam, -float(g[minor].mean()) - lam if minor.any() else 0.0)
        lb = [min(8.0, max(-12.0, x + 2.0 * max(-1.0, min(1.0, r)))) for x, r in zip(lb, rates, strict=True)]
    beta = group_beta(cfg, math.exp(lb[0]), math.exp(lb[1]))
    loss, _, pp = scale_loss(beta, ax, ay)
    return Scale(math.exp(lb[0]), math.exp(lb[1]), loss, pp)


def pos_prob_limit(ax: torch.Tensor, ay: torch.Tensor) -> float:
    """l'_p of the isotropic encoder as beta -> inf: the share of anchors whose positive has the largest inner
    product a_X . a_Y among the K (ties split evenly)."""
    return top_share(ax, ay, torch.ones(ax.shape[-1], dtype=ax.dtype))


def trajectory(cfg, ax: torch.Tensor, ay: torch.Tensor, lam: float, steps: int, every: int = 10):
    """The reduced dynamics s_j <- s_j (1 - eta lam - eta dl/dbeta_j) from s_j^2 = m sigma0^2 (Lemma B.2(b)'s
    ||M M^T w||^2 = sigma0^2 d per neuron, summed over the m neurons per feature): [(step, loss, l'_p), ...]."""
    beta = torch.full((cfg.d,), cfg.m * cfg.sigma0 ** 2 / cfg.tau, dtype=torch.float64)
    out = []
    for t in range(steps + 1):
        loss, g, pp = scale_loss(beta, ax, ay)
        if t % every == 0 or t == steps:
            out.append((t, loss, pp))
        beta = beta * (1.0 - cfg.lr * lam - cfg.lr * g) ** 2
    return out


# Where convergence and Lemma B.1's K exclude each other (issue 63, item 3). The convergence premise asks for
# l'_p >= 1 - c/tau (eq. (11): l'_p = 1 - Theta(1/tau)); the encoder with b = 0 scores a pair by the weighted inner
# product sum_j beta_j a_Xj a_Yj, so however large its scales grow, l'_p tends to the share of anchors whose positive
# has the largest weighted product among the K. More pairs mean more negatives that hold the anchor's support with
# its signs, so that share falls as K grows: at the K Lemma B.1 needs it can lie below the criterion.
BETA_RATIOS = (0.25, 0.5, 1.0, 2.0, 4.0)   # minority / majority logit scale: the weightings the ceiling tries
CEILING_K_MAX = 20_000   # beyond this K the K x K products cost minutes on a laptop core: not computed, said so


def top_share(ax: torch.Tensor, ay: torch.Tensor, weight: torch.Tensor, chunk: int = 512) -> float:
    """l'_p of the logits sum_j weight_j a_Xj a_Yj as their scale grows without bound: the share of anchors whose
    positive has the largest logit among the K (ties split evenly), over (R, K, d) coordinates, anchors in chunks."""
    wins, n = 0.0, 0
    for r in range(ax.shape[0]):
        x, y = ax[r] * weight, ay[r]
        for lo in range(0, x.shape[0], chunk):
            lg = x[lo:lo + chunk] @ y.T                                   # (chunk, K)
            idx = torch.arange(lg.shape[0])
            top = lg.max(-1).values
            pos = lg[idx, idx + lo] == top
            wins += float((pos.double() / (lg == top[:, None]).sum(-1).double()).sum())
            n += lg.shape[0]
    return wins / n


@dataclass(frozen=True)
class LpCeiling:
    """At one d: the K Lemma B.1 needs, the highest l'_p the encoder with b = 0 can reach there (over BETA_RATIOS,
    scale to infinity), what the convergence premise needs, and the best l'_p the map's trained cells reached."""

    d: int
    K: int              # Lemma B.1's K (premise_map.target), the pairs the ceiling is computed on
    K_source: str
    limit: float        # l'_p ceiling of the b = 0 encoder at K
    need: float         # 1 - converge_lp_c / tau
    measured: float     # the largest l'_p at T4 over the map's trained cells at this d (nan: none)
    replicates: int

    @property
    def conflict(self) -> bool:
        """Whether no logit scale of the b = 0 encoder reaches the convergence premise's l'_p at Lemma B.1's K
        (False where the ceiling was not computed)."""
        return self.limit < self.need

    def line(self) -> str:
        """One line with the numbers: the ceiling against the criterion, and what the trained cells reached."""
        seen = ("no cell trained here" if math.isnan(self.measured)
                else f"the map's trained cells reached at most {self.measured:.3f}")
        head = f"d={self.d}, K = {self.K:,} (Lemma B.1: {self.K_source})"
        if math.isnan(self.limit):
            return f"{head}: ceiling not computed (K above {CEILING_K_MAX:,}); {seen}"
        if self.conflict:
            return (f"{head}: the encoder with b = 0 cannot reach l'_p ≥ {self.need:.2f} at any logit scale "
                    f"(ceiling {self.limit:.3f}, {self.replicates} replicates of K pairs); {seen}")
        return (f"{head}: the encoder with b = 0 approaches l'_p {self.limit:.3f} as its logit scale grows, at or "
                f"above the {self.need:.2f} convergence needs: no conflict shown; {seen}")


def lp_ceilings(cfg, results, replicates: int = 2) -> list[LpCeiling]:
    """The ceiling at every d where the map trained a cell, at the K Lemma B.1 needs there (from the deviations the
    map measured), on fresh pairs of the map's plane cell at that d (its largest ratio, the bottom of the lambda
    range: neither moves the pairs' support law beyond eps_min)."""
    devs = measured_deviations(results)
    ratio = max(cfg.ratios)
    out = []
    for d in sorted(devs):
        K_est, source = k_estimate(d, cfg.d1_over_d * d, devs, cfg.regime_grad_poly)   # the target cell's K
        K = max(2, math.ceil(K_est))
        cell = cfg.cell("plane", d, "bottom", ratio, K=K)
        limit = math.nan
        if K <= CEILING_K_MAX:
            ax, ay = feature_coords(cell.cfg, batches=1, replicates=replicates)
            ax, ay = ax.float(), ay.float()
            limit = max(top_share(ax, ay, group_beta(cell.cfg, 1.0, b).float()) for b in BETA_RATIOS)
        lps = [r.extra["lp_T4"] for r in results if r.ran and r.cell.d == d and "lp_T4" in r.extra]
        out.append(LpCeiling(d, K, source, limit,
                             1.0 - cell.converge[1] / cell.cfg.tau, max(lps) if lps else math.nan, replicates))
    return out
