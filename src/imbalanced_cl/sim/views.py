"""Two views of one sample: identical copies, Wen & Li's RandomMask (Def. 2.3), or the main paper's pairs
(Assumption 3.4).

Every builder is a pure function of token latents, the dictionary and random numbers already drawn (data._draws),
so the sampler calls the same code for a fixed training set and for fresh pairs every step, on any device, and
the three kinds see the same latents and the same noise. Shapes: latents z (R, n, L, d), dictionary M (R, d1, d),
noise draws (R, n, L, d1), mask uniforms (R, n, 1, d1); tokens come out as (R, n, L, d1).
"""
from __future__ import annotations

import torch

IDENTICAL, RANDOM_MASK, PAPER = "identical", "random_mask", "paper"
KINDS = (IDENTICAL, RANDOM_MASK, PAPER)


def signal(z: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """The sparse signal M z of every token: (R, n, L, d) x (R, d1, d) -> (R, n, L, d1), as one batched matmul."""
    R, n, L, d = z.shape
    return torch.bmm(z.reshape(R, n * L, d), M.transpose(1, 2)).view(R, n, L, M.shape[1])


def noisy_signal(z: torch.Tensor, M: torch.Tensor, sigma_xi: float, xi: torch.Tensor) -> torch.Tensor:
    """Tokens x = M z + sigma xi (eq. 6): one fused batched matmul-add, the same numbers as signal(z, M) +
    sigma * xi."""
    R, n, L, d = z.shape
    return torch.baddbmm(xi.reshape(R, n * L, -1), z.reshape(R, n * L, d), M.transpose(1, 2),
                         beta=sigma_xi).view(R, n, L, M.shape[1])


def random_mask(x: torch.Tensor, D: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """RandomMask (Wen & Li Def. 2.3): x+ = 2 D x, x++ = 2 (I - D) x for a 0/1 diagonal D, so x+ + x++ = 2x."""
    return 2.0 * D * x, 2.0 * (1.0 - D) * x


# 8 arguments: the two latents, the dictionary and the noise of one batch, each a tensor a caller already holds; a
# container for them would be built and unpacked at every step.
def make_views(kind: str, zx: torch.Tensor, zy: torch.Tensor, M: torch.Tensor, sigma_xi: float,
               xi_x: torch.Tensor, xi_y: torch.Tensor, u_mask: torch.Tensor | None = None):
    """Tokens (X, Y) of the two views of each sample, before attention, from standard-normal noise draws.

    - "paper": X = M zx + sigma xi_x, Y = M zy + sigma xi_y: shared support and sign, independent noise
      (the main paper's Assumptions 3.3-3.4).
    - "identical": one sample x = M zx + sigma xi_x and Y = X (no augmentation: Wen & Li's Obj_NA, L171).
    - "random_mask": the same x, then x+ = 2Dx, x++ = 2(I-D)x with D = 1{u_mask < 1/2}: Bernoulli(1/2) per
      coordinate, one D per sample shared by its tokens (Def. 2.3).
    zy and xi_y are used by "paper" only, u_mask by "random_mask" only.
    """
    if kind not in KINDS:
        raise ValueError(f"views={kind!r} is invalid: allowed one of {KINDS}")
    x = noisy_signal(zx, M, sigma_xi, xi_x)
    if kind == IDENTICAL:
        return x, x.clone()
    if kind == RANDOM_MASK:
        if u_mask is None:
            raise ValueError("views='random_mask' needs the mask uniforms u_mask")
        return random_mask(x, (u_mask < 0.5).to(x.dtype))
    return x, noisy_signal(zy, M, sigma_xi, xi_y)


def target_latent(kind: str, zx: torch.Tensor, zy: torch.Tensor) -> torch.Tensor:
    """The latents behind view Y: zy for the main paper's pairs, zx when both views come from one sample."""
    return zy if kind == PAPER else zx
