"""Two views of one sample: identical copies, Wen & Li's RandomMask (Def. 2.3), or the main paper's pairs (Assumption 3.4).

Every builder is a pure function of token latents, the dictionary and a random generator, so the data
sampler calls the same code whether it draws a fixed training set once or fresh pairs every step.
Shapes: latents z (..., n, L, d), dictionary M (..., d1, d) with the same leading dims (or none),
tokens (..., n, L, d1). Noise is i.i.d. N(0, sigma_xi^2) per coordinate (Def. 2.1; Assumption 3.3).
"""
from __future__ import annotations

import torch

IDENTICAL, RANDOM_MASK, PAPER = "identical", "random_mask", "paper"
KINDS = (IDENTICAL, RANDOM_MASK, PAPER)


def signal(z: torch.Tensor, M: torch.Tensor) -> torch.Tensor:
    """The sparse signal M z of every token: (..., n, L, d) x (..., d1, d) -> (..., n, L, d1)."""
    if M.dim() == 2:
        return z @ M.T
    return torch.einsum("...nld,...ed->...nle", z, M)


def noise(shape, sigma_xi: float, gen: torch.Generator) -> torch.Tensor:
    """Dense noise xi ~ N(0, sigma_xi^2 I) of the given shape (Def. 2.1)."""
    return sigma_xi * torch.randn(*shape, generator=gen)


def mask_draw(shape, gen: torch.Generator) -> torch.Tensor:
    """D = diag(Bernoulli(1/2)) per sample: shape (..., n, 1, d1) of 0/1, shared by the sample's tokens (Def. 2.3)."""
    return (torch.rand(*shape, generator=gen) < 0.5).float()


def random_mask(x: torch.Tensor, D: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """RandomMask (Wen & Li Def. 2.3): x+ = 2 D x, x++ = 2 (I - D) x, so x+ + x++ = 2x."""
    return 2.0 * D * x, 2.0 * (1.0 - D) * x


def make_views(kind: str, zx: torch.Tensor, zy: torch.Tensor, M: torch.Tensor, sigma_xi: float,
               gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Tokens of the two views (X, Y) of each sample, before attention.

    - "identical": one sample x = M zx + xi and Y = X (no augmentation; Wen & Li's Obj_NA, L171).
    - "random_mask": one sample x = M zx + xi, then x+ = 2Dx, x++ = 2(I-D)x (Wen & Li Def. 2.3).
    - "paper": X = M zx + xi_X, Y = M zy + xi_Y with independent noise; zx, zy share support and sign
      (the main paper's Assumption 3.4). Draws xi_X then xi_Y, the order data.sample_pairs_one always used.
    zy is used only by "paper". Random numbers come from `gen` alone.
    """
    if kind not in KINDS:
        raise ValueError(f"views={kind!r} is invalid: allowed one of {KINDS}")
    sx = signal(zx, M)
    x = sx + noise(sx.shape, sigma_xi, gen)
    if kind == IDENTICAL:
        return x, x.clone()
    if kind == RANDOM_MASK:
        return random_mask(x, mask_draw(x.shape[:-2] + (1, x.shape[-1]), gen))
    sy = signal(zy, M)
    return x, sy + noise(sy.shape, sigma_xi, gen)


def target_latent(kind: str, zx: torch.Tensor, zy: torch.Tensor) -> torch.Tensor:
    """The latents behind view Y: zy for the main paper's pairs, zx when both views come from one sample."""
    return zy if kind == PAPER else zx
