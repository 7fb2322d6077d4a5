"""Counter-based random numbers: Philox4x32-10 (Salmon et al., SC 2011) in vectorised torch integer ops, any device.

A counter-based generator is a keyed bijection of a 128-bit counter: the four 32-bit words it gives at a counter depend
on (key, counter) alone, never on what else is drawn beside them or in which call. sim/data.py makes the counter
(position, purpose and tensor, step, replicate), so a batch of replicates drawn in one call gives each replicate the
numbers it would draw alone (issue 48: a GPU's numbers no longer depend on the chunk a replicate trains in).

Words are held in int64 tensors (or Python ints) with values in [0, 2^32): torch has no full unsigned arithmetic on
every device, and no intermediate here exceeds 2^48, so int64 holds every step exactly (no overflow, no sign).
"""
from __future__ import annotations

import math

import torch

MASK32 = 0xFFFFFFFF
M0, M1 = 0xD2511F53, 0xCD9E8D57    # the round multipliers (Random123's PHILOX_M4x32_0 and _1)
W0, W1 = 0x9E3779B9, 0xBB67AE85    # the key schedule's Weyl increments (golden ratio, sqrt(3) - 1, times 2^32)
ROUNDS = 10                         # Philox4x32-10, the variant Random123, cuRAND and torch's CUDA generator use
TWO_PI = 2.0 * math.pi


def mulhilo(a, m: int):
    """(hi, lo): the high and low 32-bit words of a * m, for 32-bit words a (int64 tensor or int) and a constant m.

    m is split into 16-bit halves, so each partial product stays below 2^48 and int64 never overflows; the exact high
    word of a product of two 32-bit words is below 2^32, so hi needs no mask.
    """
    p_lo, p_hi = a * (m & 0xFFFF), a * (m >> 16)
    s = p_lo + ((p_hi & 0xFFFF) << 16)       # a * m = (p_hi >> 16) 2^32 + s, with s < 2^49
    return (p_hi >> 16) + (s >> 32), s & MASK32


def philox4x32(c0, c1, c2, c3, k0: int, k1: int, rounds: int = ROUNDS):
    """Philox4x32-`rounds` of the counter (c0, c1, c2, c3) under the key (k0, k1): four 32-bit words.

    Each counter word is an int64 tensor or an int (they broadcast together); the key is two ints. One round
    multiplies words 0 and 2 by M0 and M1 and mixes the high halves with words 1, 3 and the key (Random123's
    philox4x32round); the key advances by (W0, W1) between rounds.
    """
    for i in range(rounds):
        if i:
            k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
        hi0, lo0 = mulhilo(c0, M0)
        hi1, lo1 = mulhilo(c2, M1)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def uniform(words: torch.Tensor) -> torch.Tensor:
    """float32 uniforms on [0, 1) from 32-bit words: the top 24 bits times 2^-24 (exact in float32), as torch.rand."""
    return (words >> 8).to(torch.float32) * 2.0 ** -24


def normal(words: torch.Tensor) -> torch.Tensor:
    """float32 standard normals from 32-bit words (last dim 4): Box-Muller on the uniform pairs (0, 1) and (2, 3).

    z = sqrt(-2 ln(1 - u_a)) (cos 2 pi u_b, sin 2 pi u_b) are two independent N(0, 1) (Box & Muller 1958); 1 - u_a lies
    in [2^-24, 1], so the log is finite and |z| <= sqrt(48 ln 2) = 5.77.
    """
    u = uniform(words)
    radius = torch.sqrt(-2.0 * torch.log(1.0 - u[..., 0::2]))
    angle = TWO_PI * u[..., 1::2]
    return torch.stack((radius * torch.cos(angle), radius * torch.sin(angle)), dim=-1).flatten(-2)
