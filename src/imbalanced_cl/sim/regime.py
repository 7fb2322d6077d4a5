"""The theorems' regime, measured on a trained run: is this run in the setting the paper analyses?

What is measured here; claims/premise_rows.py judges it, and every claim notebook reports these premises as rows of
their own (kind "premise"), with numbers:
  * the feature-span share ||M M^T w_i||^2 / ||w_i||^2 at the end, which Theorem 3.1's beta bound sends to 1;
  * Lemma B.1 (L519): the empirical gradient of K pairs tracks the population gradient, ||g_K - g_pop|| / ||w||,
    with g_pop averaged over many held-out batches of K pairs (the loss has in-batch negatives, so its population
    gradient is an expectation over batches of K, not one giant batch);
  * training InfoNCE against held-out InfoNCE (a run that fits the noise of its pairs has a gap), for
    sampling="fixed" only: under "fresh" every step draws new pairs, no pair is seen twice, and the row could not
    fail, so it reads "not tested" and says why;
  * the run's steps against Theorem 3.1's window T in [d^1.01/eta, d^1.99/eta] (L277);
  * lambda against the proof's range [d^-1.49, d^-1.01] (L1266), sigma_xi^2 against Assumption 3.3's
    Theta(sqrt(log d)/d) (this book follows App. A.2's sigma, so the ratio is reported, not enforced).
A replicate whose population gradient is exactly 0 is dead (every neuron's BReLU gate closed on every token; `dead`):
its rows are "not tested" and say so, never measured as if the network were alive.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import torch

from .config import SimConfig
from .encoder import bias_at
from .metrics import feature_share
from .train import Run, gradient


@dataclass
class Regime:
    """Per-replicate premises of one run (tensors of shape (R,)) and the run's fixed settings."""

    share: torch.Tensor        # mean over neurons of the feature-span share at the end
    grad_dev: torch.Tensor     # ||g_K - g_pop|| / ||w||  (Frobenius norms over all neurons)
    grad_rel: torch.Tensor     # ||g_K - g_pop|| / ||g_pop||
    loss_train: torch.Tensor   # InfoNCE on the pairs the last step trained on
    loss_heldout: torch.Tensor  # InfoNCE on held-out pairs of the same size
    steps: int
    window: tuple              # (T3, T4) of Theorem 3.1
    lam_range: tuple           # (d^-1.49, d^-1.01)
    sigma_ratio: float         # sigma_xi^2 / (sqrt(log d) / d)
    sampling: str
    dead: torch.Tensor | None = None   # (R,) bool: the population gradient is exactly 0 (no neuron is active)

    @property
    def all_dead(self) -> bool:
        """Whether every replicate is dead (then no premise can be measured)."""
        return self.dead is not None and bool(self.dead.all())


def theorem_window(cfg: SimConfig) -> tuple[float, float]:
    """Theorem 3.1's training window [d^1.01/eta, d^1.99/eta] (L277)."""
    return cfg.d ** 1.01 / cfg.lr, cfg.d ** 1.99 / cfg.lr


def lambda_range(cfg: SimConfig) -> tuple[float, float]:
    """The weight-decay range of the proof, [d^-1.49, d^-1.01] (L1266)."""
    return cfg.d ** -1.49, cfg.d ** -1.01


def sigma_ratio(cfg: SimConfig) -> float:
    """sigma_xi^2 over Assumption 3.3's scale sqrt(log d) / d (1 = on the assumed scale, up to a constant)."""
    return cfg.sigma_xi ** 2 / (math.sqrt(math.log(cfg.d)) / cfg.d)


def population_gradient(run: Run, b: torch.Tensor, batches: int) -> torch.Tensor:
    """g_pop (R, m, d1): the mean gradient over `batches` held-out batches of K pairs at the run's final weights."""
    g = torch.zeros_like(run.W)
    for k in range(batches):
        g += gradient(run.W, b, run.heldout(extra=1000 + k), run.cfg)[0]
    return g / batches


def measure(run: Run, batches: int | None = None) -> Regime:
    """The regime of a run at its final weights (see the module docstring); batches defaults to cfg.pop_batches."""
    cfg = run.cfg
    batches = batches or cfg.pop_batches
    b = bias_at(cfg, run.W, run.step, run.T1)
    g_train, loss_train, _ = gradient(run.W, b, run.pairs, cfg)
    g_pop = population_gradient(run, b, batches)
    held = run.heldout()
    loss_held = gradient(run.W, b, held, cfg)[1]
    diff = (g_train - g_pop).flatten(1).norm(dim=1)
    pop = g_pop.flatten(1).norm(dim=1)
    return Regime(share=feature_share(run.W, run.M).mean(-1), grad_dev=diff / run.W.flatten(1).norm(dim=1),
                  grad_rel=diff / pop, loss_train=loss_train, loss_heldout=loss_held,
                  steps=run.step, window=theorem_window(cfg), lam_range=lambda_range(cfg),
                  sigma_ratio=sigma_ratio(cfg), sampling=cfg.sampling, dead=pop == 0)


def of_config(cfg: SimConfig, steps: int) -> Regime:
    """The config-level premises only (window, lambda, sigma), for notebooks whose runs mix configurations."""
    nan = torch.full((1,), float("nan"))
    return Regime(share=nan, grad_dev=nan, grad_rel=nan, loss_train=nan, loss_heldout=nan, steps=steps,
                  window=theorem_window(cfg), lam_range=lambda_range(cfg), sigma_ratio=sigma_ratio(cfg),
                  sampling=cfg.sampling)
