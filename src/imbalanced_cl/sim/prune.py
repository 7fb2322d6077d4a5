"""Algorithm 1's magnitude masks, and the random / static controls: which neurons (or weights) the forward pass drops.

Schedule (train.py): the mask is recomputed every `prune_every` steps from `prune_start`. With the default
sampling="fresh", every step draws K new pairs (online SGD, the population regime of Lemma B.1), so the paper's
"at each iteration" (L150) is prune_every = 1, and "each epoch" (L64) has no fixed meaning; with sampling="fixed"
one step is full-batch gradient descent on one training set, one epoch, and prune_every = 1 is both. prune_every > 1
gives coarser schedules.
"""
from __future__ import annotations

import torch

from .data import STREAM_MASK, generator


def n_pruned(alpha: float, count: int) -> int:
    """How many units a ratio alpha removes out of `count`: round(alpha * count), at most count - 1.

    Python's round (halves to even) is used; the cap keeps alpha < 1 from pruning every unit
    (alpha = 0.99 of m = 50 would otherwise round to 50).
    """
    return min(int(round(alpha * count)), max(count - 1, 0))


def neuron_mask(W: torch.Tensor, alpha: float) -> torch.Tensor:
    """Keep-mask (R, m): drop the round(alpha*m) neurons with the smallest ||w_i|| (ties: lower index first)."""
    R, m, _ = W.shape
    k = n_pruned(alpha, m)
    keep = torch.ones(R, m, dtype=W.dtype, device=W.device)
    if k == 0:
        return keep
    order = torch.argsort(W.norm(dim=-1), dim=-1, stable=True)
    keep.scatter_(1, order[:, :k], 0.0)
    return keep


def weight_mask(W: torch.Tensor, alpha: float) -> torch.Tensor:
    """Keep-mask (R, m, d1): drop the round(alpha*m*d1) smallest |w_ik| per replicate (ties: lower index)."""
    R, m, d1 = W.shape
    k = n_pruned(alpha, m * d1)
    keep = torch.ones(R, m * d1, dtype=W.dtype, device=W.device)
    if k:
        order = torch.argsort(W.abs().reshape(R, -1), dim=-1, stable=True)
        keep.scatter_(1, order[:, :k], 0.0)
    return keep.view(R, m, d1)


def mask_for(W: torch.Tensor, alpha: float, unit: str) -> torch.Tensor:
    """The keep-mask for Algorithm 1 with pruning unit 'neuron' or 'weight'."""
    return neuron_mask(W, alpha) if unit == "neuron" else weight_mask(W, alpha)


def apply_mask(W: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """theta_mk = theta ⊙ M (Alg. 1, forward)."""
    return W * (mask.unsqueeze(-1) if mask.dim() == 2 else mask)


# --- the 2x2 mask control (issue 14): magnitude or random units, recomputed every step or fixed once ---

MASK_RULES = ("magnitude", "random")     # which units: the smallest (Algorithm 1) or a uniformly random set
SCHEDULES = ("dynamic", "static")        # recomputed every prune_every steps, or fixed at the first pruned step


def _keep_lowest_rank(rank: torch.Tensor, k: torch.Tensor, dtype) -> torch.Tensor:
    """Keep-mask (N, count) that drops, in row r, the k[r] units of lowest rank (rank: a permutation per row)."""
    return (rank >= k.unsqueeze(-1)).to(dtype)


def magnitude_rank(W: torch.Tensor, unit: str) -> torch.Tensor:
    """Rank of every unit by magnitude, 0 = smallest (ties: lower index first), as neuron_mask / weight_mask drop them:
    (N, m) by ||w_i|| for 'neuron', (N, m*d1) by |w_ik| for 'weight'."""
    score = W.norm(dim=-1) if unit == "neuron" else W.abs().reshape(W.shape[0], -1)
    return torch.argsort(torch.argsort(score, dim=-1, stable=True), dim=-1)


def random_rank(count: int, seed: int, replicates: list, step: int) -> torch.Tensor:
    """A uniformly random rank of `count` units per replicate (N, count), drawn from (seed, replicate, step) alone:
    the same replicate and step always draw the same mask, whatever the batch or chunk it sits in."""
    return torch.stack([torch.randperm(count, generator=generator(seed, r, STREAM_MASK, step)) for r in replicates])


class Masker:
    """The keep-mask of each replicate row at step t, for the four cells (magnitude | random) x (dynamic | static).

    magnitude/dynamic is Algorithm 1 (recomputed from the current weights every `every` steps from `start`);
    a static mask is computed once, at the first pruned step (the branch point when a run resumes from T_a), and
    kept; a random mask drops n_pruned(alpha, count) uniformly random units (same count as Algorithm 1), drawn from
    (seed, replicate, step) — at `start` for a static one. Rows may differ in alpha, rule and schedule, so several
    cells can train in one batch; a row with alpha = 0 keeps every unit (and a batch of them gets no mask at all).
    """

    # 8 arguments: a masker holds one value per replicate row for each of Algorithm 1's mask settings (ratio, rule,
    # schedule) plus the schedule's start and period; from_config builds it from a SimConfig in one line.
    def __init__(self, alpha, random, static, replicates, seed: int, start: int, every: int, unit: str):
        self.alpha = torch.as_tensor(alpha, dtype=torch.float64)   # (N,) pruning ratio per row
        self.random = torch.as_tensor(random, dtype=torch.bool)    # (N,) random units instead of the smallest
        self.static = torch.as_tensor(static, dtype=torch.bool)    # (N,) fixed at the first pruned step
        self.replicates, self.seed, self.start, self.every, self.unit = list(replicates), seed, start, every, unit
        self.mask = None
        self._k = None       # ((count, device), the units each row drops): made once, see _counts

    @classmethod
    def from_config(cls, cfg, replicates) -> "Masker":
        """Every row as the config says: prune_alpha, prune_mask, prune_schedule, prune_start, prune_every,
        prune_unit."""
        n = len(replicates)
        return cls([cfg.prune_alpha] * n, [cfg.prune_mask == "random"] * n, [cfg.prune_schedule == "static"] * n,
                   replicates, cfg.seed, cfg.prune_start, cfg.prune_every, cfg.prune_unit)

    def rows(self, lo: int, hi: int) -> "Masker":
        """The masker of rows lo:hi (a training chunk), with no mask drawn yet."""
        return Masker(self.alpha[lo:hi], self.random[lo:hi], self.static[lo:hi], self.replicates[lo:hi],
                      self.seed, self.start, self.every, self.unit)

    def draw(self, W: torch.Tensor, t: int) -> torch.Tensor:
        """A fresh keep-mask of every row at step t ((N, m) or (N, m, d1)); static random rows draw at `start`."""
        count = W.shape[1] * (1 if self.unit == "neuron" else W.shape[2])
        k = self._counts(count, W.device)
        rank = magnitude_rank(W, self.unit) if not bool(self.random.all()) else None
        if bool(self.random.any()):
            rows = self.random.nonzero().flatten().tolist()
            reps = [self.replicates[i] for i in rows]
            steps = [self.start if bool(self.static[i]) else t for i in rows]
            draws = {s: random_rank(count, self.seed, reps, s) for s in set(steps)}
            rnd = torch.stack([draws[s][j] for j, s in enumerate(steps)]).to(W.device)   # drawn on the CPU
            rank = torch.zeros(W.shape[0], count, dtype=torch.long, device=W.device) if rank is None else rank
            rank[rows] = rnd
        keep = _keep_lowest_rank(rank, k, W.dtype)
        return keep if self.unit == "neuron" else keep.view(W.shape)

    def _counts(self, count: int, device) -> torch.Tensor:
        """Units each row drops out of `count`, on `device`, made once: a copy to a GPU at every step would make
        the host wait for the device."""
        key = (count, str(device))
        if self._k is None or self._k[0] != key:
            self._k = (key, torch.tensor([n_pruned(a, count) for a in self.alpha.tolist()], device=device))
        return self._k[1]

    def at(self, W: torch.Tensor, t: int) -> torch.Tensor | None:
        """The mask in force at step t: None before `start` or when no row prunes; otherwise the current mask,
        with the dynamic rows recomputed every `every` steps."""
        if t < self.start or not bool((self.alpha > 0).any()):
            return None
        if self.mask is None:
            self.mask = self.draw(W, t)
        elif (t - self.start) % self.every == 0 and not bool(self.static.all()):
            self.mask = self._refresh(W, t)
        return self.mask

    def final(self, W: torch.Tensor, t: int) -> torch.Tensor | None:
        """The mask for the evaluation after the last step t: dynamic rows recomputed, static rows kept."""
        if self.mask is not None and not bool(self.static.all()):
            self.mask = self._refresh(W, t)
        return self.mask

    def _refresh(self, W: torch.Tensor, t: int) -> torch.Tensor:
        new = self.draw(W, t)
        if not bool(self.static.any()):
            return new
        keep_old = self.static.to(new.device).view(-1, *([1] * (new.dim() - 1)))
        return torch.where(keep_old, self.mask, new)


# --- oracle masks: a fixed set of neurons chosen by the caller (Theorem F.1 takes P ⊆ M*_j* as its hypothesis) ---

def oracle_keep(chosen: torch.Tensor) -> torch.Tensor:
    """Keep-mask (R, m) that drops exactly the neurons marked True in `chosen` (R, m), whatever their magnitude."""
    return (~chosen.bool()).float()


class FixedMasker:
    """A keep-mask (N, m) given once and kept from step `start` on, times an optional inner Masker's mask (rows the
    inner one leaves at alpha = 0 keep all): the Masker interface (rows, at, final), so that oracle rows (a chosen
    set P, Theorem F.1's hypothesis) and Algorithm 1's rows can train in one batch."""

    def __init__(self, keep: torch.Tensor, start: int = 0, inner: Masker | None = None):
        self.keep, self.start, self.inner = keep, start, inner
        self.prunes = not bool((keep > 0).all())   # False: every neuron kept, no fixed mask at all
        self._on = None                            # the keep-mask on the run's device and dtype, made once

    def rows(self, lo: int, hi: int) -> "FixedMasker":
        """The masker of rows lo:hi (a training chunk)."""
        return FixedMasker(self.keep[lo:hi], self.start, self.inner.rows(lo, hi) if self.inner else None)

    def _with(self, W: torch.Tensor, other: torch.Tensor | None, t: int) -> torch.Tensor | None:
        if t < self.start:
            return other
        if self.prunes and (self._on is None or self._on.device != W.device or self._on.dtype != W.dtype):
            self._on = self.keep.to(device=W.device, dtype=W.dtype)   # not at every step: a GPU copy would stall it
        fixed = self._on if self.prunes else None
        if fixed is None or other is None:
            return fixed if other is None else other
        return fixed * other

    def at(self, W: torch.Tensor, t: int) -> torch.Tensor | None:
        """The mask in force at step t: the fixed one from `start` on, times the inner Masker's (None: no mask)."""
        return self._with(W, self.inner.at(W, t) if self.inner else None, t)

    def final(self, W: torch.Tensor, t: int) -> torch.Tensor | None:
        """The mask for the evaluation after the last step t."""
        return self._with(W, self.inner.final(W, t) if self.inner else None, max(t, self.start))
