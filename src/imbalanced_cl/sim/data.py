"""Sparse-coding data (Assumptions 3.1-3.4): dictionary, feature frequencies, positive pairs, R replicates.

Every replicate r owns its random numbers, keyed to (seed, r, purpose, extra), so replicate r draws the same
dictionary, initialisation and data whether it runs alone or inside a batch of 32: on the CPU from its own
torch.Generator, on a GPU from a counter-based generator (sim/philox.py) that draws a whole batch in one call.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from . import philox as P
from . import philox_fused as PF
from . import views as V
from ..validate import check_int
from .config import SimConfig

# Purposes of the per-replicate random streams (never reorder: seeds would change).
STREAM_DICT, STREAM_INIT, STREAM_TRAIN, STREAM_TEST = 0, 1, 2, 3
STREAM_MASK = 4  # random pruning masks (prune.random_rank)


def generator(seed: int, replicate: int, purpose: int, extra: int = 0, device="cpu") -> torch.Generator:
    """A torch Generator for one replicate and one purpose, independent of every other stream (on `device`)."""
    state = np.random.SeedSequence([seed, replicate, purpose, extra]).generate_state(2, dtype=np.uint64)
    return torch.Generator(device=device).manual_seed(int(state[0] % (2**63 - 1)))


# Device types on which a batch of replicates is drawn in one Philox call (tests add "cpu" and "meta"): a GPU, where the
# call is fused into one Triton kernel per plan entry (sim/philox_fused.py; issue 48, item 2). Unfused, written as torch
# operations, the batched call moves about 230 times the bytes it writes (2071 kernels and 89 GB a step at notebook
# 04's paper size, at least 27 ms on an H100), so without Triton a GPU draws replicate by replicate from its own
# torch.Generator streams: as independent of the chunking, at one launch per replicate and tensor.
BATCHED_DRAWS: tuple[str, ...] = ("cuda",) if PF.triton is not None else ()
SLAB_BLOCKS = 2 ** 24    # Philox blocks (4 numbers each) per pass: bounds its int64 words in memory (~1.4 GiB at most)
# What each field of a batched draw's Philox counter and key can hold (batched_draws): larger values are refused.
_LIMITS = {"seed": 2 ** 64 - 1, "replicate": P.MASK32, "purpose": 2 ** 16 - 1, "extra": P.MASK32}


def raw_draws(seed: int, plan: list, replicates: list, purpose: int, extra: int, where) -> list[torch.Tensor]:
    """The raw numbers of `plan` for every replicate, stacked (len(replicates), ...), drawn on `where`.

    Replicate r's numbers depend on (seed, r, purpose, extra) and the plan alone, never on the batch or chunk it sits
    in, on every device. On the CPU each replicate draws from its own torch.Generator stream (generator(); the
    numbers every CPU record was made with). On a device in BATCHED_DRAWS (a GPU where Triton is installed, as with
    torch's CUDA builds) the whole batch is drawn in one fused call by Philox4x32-10 (batched_draws): the same law,
    other numbers than the per-replicate streams', the same on every chunking. A GPU without Triton draws replicate
    by replicate from its own torch.Generator streams.
    """
    where = torch.device(where)
    if where.type in BATCHED_DRAWS:
        return batched_draws(seed, plan, replicates, purpose, extra, where)
    out = [torch.empty((len(replicates), *shape), device=where) for _, shape in plan]   # filled in place: no copy
    for k, r in enumerate(replicates):
        gen = generator(seed, r, purpose, extra, where)
        for buf, (kind, _) in zip(out, plan, strict=True):
            _fill(buf[k], kind, gen)
    return out


def batched_draws(seed: int, plan: list, replicates: list, purpose: int, extra: int, where) -> list[torch.Tensor]:
    """The raw numbers of `plan` for a batch of replicates in one vectorised call: Philox4x32-10 under the key `seed`.

    Number i of plan entry j for replicate r sits at lane i mod 4 of the block at counter (i // 4, purpose * 2^16 + j,
    extra, r): a function of (seed, r, purpose, extra, j, i) alone, so chunk 1, 2 and R draw the same numbers, and a
    plan that extends another (RandomMask's uniforms come last) leaves the shared entries unchanged. "u" entries are
    24-bit uniforms on [0, 1), "n" entries Box-Muller normals (philox.uniform, philox.normal).
    """
    for name, value in (("seed", seed), ("purpose", purpose), ("extra", extra),
                        *(("replicate", r) for r in replicates)):
        check_int(name, value, 0, _LIMITS[name])
    check_int("len(plan)", len(plan), 0, 2 ** 16 - 1)
    where = torch.device(where)
    reps = _replicate_column(tuple(replicates), where)
    k0, k1 = seed & P.MASK32, seed >> 32
    out = []
    for j, (kind, shape) in enumerate(plan):
        n = math.prod(shape)
        blocks = -(-n // 4)
        check_int(f"blocks of plan entry {j}", blocks, 0, P.MASK32)
        if PF.available(where):         # one fused launch: the same words, written once (philox_fused)
            out.append(PF.draw(kind, n, (purpose << 16) | j, extra, reps, k0, k1).view(len(replicates), *shape))
            continue
        buf = torch.empty((len(replicates), blocks, 4), device=where)
        per_pass = max(1, SLAB_BLOCKS // max(1, len(replicates)))
        for lo in range(0, blocks, per_pass):
            hi = min(blocks, lo + per_pass)
            words = P.philox4x32(torch.arange(lo, hi, device=where), (purpose << 16) | j, extra, reps, k0, k1)
            words = torch.stack(torch.broadcast_tensors(*words), dim=-1)       # (R, hi - lo, 4)
            buf[:, lo:hi] = P.uniform(words) if kind == "u" else P.normal(words)
        flat = buf.view(len(replicates), 4 * blocks)
        out.append((flat if 4 * blocks == n else flat[:, :n].contiguous()).view(len(replicates), *shape))
    return out


_REPLICATES: dict = {}


def _replicate_column(replicates: tuple, device) -> torch.Tensor:
    """The replicate indices as an int64 column (R, 1) on `device`, kept once per (list, device): a fresh copy to a GPU
    at every step would make the host wait for the device (a copy from pageable memory)."""
    key = (replicates, str(device))
    if key not in _REPLICATES:
        if len(_REPLICATES) > 256:      # a long process that trains many replicate lists: start the cache afresh
            _REPLICATES.clear()
        _REPLICATES[key] = torch.tensor(replicates, dtype=torch.int64).view(-1, 1).to(device)
    return _REPLICATES[key]


def eps_vector(cfg: SimConfig) -> torch.Tensor:
    """Per-feature frequencies eps_j (Def. 3.1); minority features are the last ones."""
    if cfg.eps_profile == "geometric":
        return torch.logspace(math.log10(cfg.eps_max), math.log10(cfg.eps_min), cfg.d, dtype=torch.float64)
    eps = torch.full((cfg.d,), cfg.eps_max, dtype=torch.float64)
    if cfg.n_minority:
        eps[cfg.d - cfg.n_minority:] = cfg.eps_min
    return eps


def draw_device(cfg: SimConfig, run_device) -> torch.device:
    """Where a run's random numbers are drawn: on the CPU for data_device = "cpu" (the CPU's numbers on every device,
    copied over), else on the run's own device ("auto", "run": on a GPU its own generator, the same law)."""
    return torch.device("cpu") if cfg.data_device == "cpu" else torch.device(run_device)


def token_prob(cfg: SimConfig) -> torch.Tensor:
    """p_j = Pr(z_j^(l) != 0) = min(1, p_scale * eps_j * loglog d / d)  (Def. 3.1)."""
    return (cfg.p_scale * eps_vector(cfg) * math.log(math.log(cfg.d)) / cfg.d).clamp(max=1.0)


_TOKEN_PROB: dict = {}


def _token_prob_on(cfg: SimConfig, device) -> torch.Tensor:
    """token_prob as float32 on `device`, kept once per (config, device): a fresh copy to a GPU at every step would
    make the host wait for the device (a copy from pageable memory)."""
    key = (cfg.p_scale, cfg.eps_max, cfg.eps_min, cfg.n_minority, cfg.eps_profile, cfg.d, str(device))
    if key not in _TOKEN_PROB:
        _TOKEN_PROB[key] = token_prob(cfg).float().to(device)
    return _TOKEN_PROB[key]


def sample_prob(cfg: SimConfig) -> torch.Tensor:
    """q_j = Pr(feature j is in a sample's support) = 1 - (1 - p_j)^L."""
    return 1.0 - (1.0 - token_prob(cfg)) ** cfg.L


def haar_dictionary(d1: int, d: int, gen: torch.Generator) -> torch.Tensor:
    """First d columns of a Haar-random orthogonal d1 x d1 matrix: column-orthonormal, delocalised."""
    q, r = torch.linalg.qr(torch.randn(d1, d1, generator=gen, dtype=torch.float64))
    q = q * torch.sign(torch.diagonal(r)).unsqueeze(0)  # sign fix makes Q exactly Haar
    return q[:, :d].float()


def _first_token(p: torch.Tensor, L: int, u: torch.Tensor) -> torch.Tensor:
    """Index of the first active token given at least one: a truncated geometric draw."""
    p = p.clamp(min=1e-12, max=1.0)
    total = 1.0 - (1.0 - p) ** L
    # Inverse CDF of P(k) ∝ (1-p)^k p, k = 0..L-1.
    logq = torch.log1p(-p.clamp(max=1.0 - 1e-7))
    k = torch.floor(torch.log1p(-u * total) / logq)
    return k.clamp(0, L - 1).long()


def draw_plan(cfg: SimConfig, n: int) -> list[tuple[str, tuple]]:
    """The raw random numbers of n pairs of one replicate, in their fixed order: (kind, shape) per draw.

    The order is fixed (support, signs, then per view: first token, later tokens, magnitudes; then per view:
    noise; last, RandomMask's uniforms when cfg.views asks for them), so a replicate's data do not depend on
    batching or on this code's layout, and every pair builder sees the same latents and noise.
    """
    d, L, d1 = cfg.d, cfg.L, cfg.d1
    plan = [("u", (n, d)), ("u", (n, d))]
    for _ in range(2):
        plan += [("u", (n, d)), ("u", (n, L, d)), ("u", (n, L, d))]
    plan += [("n", (n, L, d1)), ("n", (n, L, d1))]
    if cfg.views == V.RANDOM_MASK:
        plan.append(("u", (n, 1, d1)))
    return plan


def _fill(out: torch.Tensor, kind: str, gen: torch.Generator) -> torch.Tensor:
    """Fill `out` in place from gen: uniform [0, 1) ("u") or standard normal ("n"); the numbers torch.rand or
    torch.randn would return for a new tensor of out's shape (a contiguous fill in the same order)."""
    return out.uniform_(0.0, 1.0, generator=gen) if kind == "u" else out.normal_(0.0, 1.0, generator=gen)


def _draws(cfg: SimConfig, n: int, gen: torch.Generator) -> list[torch.Tensor]:
    """The raw random numbers of n pairs of one replicate, drawn from its own stream on gen's device (draw_plan)."""
    return [_fill(torch.empty(shape, device=gen.device), kind, gen) for kind, shape in draw_plan(cfg, n)]


def latents_from(cfg: SimConfig, u_S, u_sign, views_u):
    """Support S (..., n, d), shared signs, and the two views' token latents zx, zy (..., n, L, d) from uniforms.

    Assumption 3.4: both views share support and sign of the token-summed latent; token placement and magnitudes
    are drawn independently per view. Within a view, each feature in the support sits on tokens i.i.d.
    Bernoulli(p_j), conditioned on at least one token (so Pr(z_j^(l) != 0) = p_j, Def. 3.1).
    """
    p = _token_prob_on(cfg, u_S.device)
    q = 1.0 - (1.0 - p) ** cfg.L
    S = u_S < q
    sign = torch.where(u_sign < 0.5, -1.0, 1.0)
    tok = torch.arange(cfg.L, device=u_S.device).view(cfg.L, 1)
    views = []
    for u_first, u_later, u_mag in views_u:
        first = _first_token(p.expand_as(u_first), cfg.L, u_first).unsqueeze(-2)     # (..., n, 1, d)
        on = (tok == first) | ((tok > first) & (u_later < p))
        mag = cfg.mag_lo + (cfg.mag_hi - cfg.mag_lo) * u_mag
        views.append(on * S.unsqueeze(-2) * sign.unsqueeze(-2) * mag)
    return S, sign, views[0], views[1]


def sample_latents(cfg: SimConfig, n: int, gen: torch.Generator):
    """Support S (n,d), shared signs (n,d), and the two views' token latents zx, zy (n,L,d) of one replicate."""
    u = _draws(cfg, n, gen)
    return latents_from(cfg, u[0], u[1], [u[2:5], u[5:8]])


def attention(X: torch.Tensor, cfg: SimConfig) -> torch.Tensor:
    """Frozen identity attention (W_Q = W_K = W_V = I): u^(r) = sum_l softmax_l(s <x_l, x_r>) x_l."""
    if cfg.attention == "mean":
        return X.mean(dim=-2, keepdim=True).expand_as(X).contiguous()
    A = torch.softmax(cfg.softmax_scale * X @ X.transpose(-1, -2), dim=-1)
    return A @ X


@dataclass
class Pairs:
    """A set of positive pairs after the frozen attention: tensors with a leading replicate dim R."""

    UX: torch.Tensor   # (R, n, L, d1) attention outputs of the anchors X
    UY: torch.Tensor   # (R, n, L, d1) attention outputs of the positives Y
    S: torch.Tensor    # (R, n, d) bool support of each pair
    ZX: torch.Tensor   # (R, n, d) token-summed latent of X
    ZY: torch.Tensor   # (R, n, d) token-summed latent of Y

    @property
    def n(self) -> int:
        """Number of pairs."""
        return self.UX.shape[1]

    def to(self, device) -> "Pairs":
        """The same pairs on `device`."""
        return Pairs(self.UX.to(device), self.UY.to(device), self.S.to(device), self.ZX.to(device), self.ZY.to(device))

    def realised_frequency(self) -> torch.Tensor:
        """Fraction of samples that contain each feature, per replicate (R, d)."""
        return self.S.float().mean(dim=1)


def pairs_from_draws(cfg: SimConfig, M: torch.Tensor, u: list[torch.Tensor]) -> Pairs:
    """Pairs for R replicates at once from their stacked draws (each (R, ...)): x = M z + xi (eq. 6), then attention.

    cfg.views builds the two views (sim/views.py); with "paper" the noise of the two views is independent
    (Assumption 3.3) and only support and signs are shared.
    """
    S, _, zx, zy = latents_from(cfg, u[0], u[1], [u[2:5], u[5:8]])
    X, Y = V.make_views(cfg.views, zx, zy, M, cfg.sigma_xi, u[8], u[9], u[10] if len(u) > 10 else None)
    return Pairs(attention(X, cfg), attention(Y, cfg), S, zx.sum(-2), V.target_latent(cfg.views, zx, zy).sum(-2))


def sample_pairs_one(cfg: SimConfig, M: torch.Tensor, n: int, gen: torch.Generator):
    """n positive pairs for one replicate (UX, UY, S, ZX, ZY); see pairs_from_draws."""
    p = pairs_from_draws(cfg, M.unsqueeze(0), [t.unsqueeze(0) for t in _draws(cfg, n, gen)])
    return p.UX[0], p.UY[0], p.S[0], p.ZX[0], p.ZY[0]


def make_dictionaries(cfg: SimConfig, replicates, device=None) -> torch.Tensor:
    """Dictionary M (R, d1, d) for the given replicate indices, drawn on the CPU and moved to `device`."""
    M = torch.stack([haar_dictionary(cfg.d1, cfg.d, generator(cfg.seed, r, STREAM_DICT)) for r in replicates])
    return M.to(device) if device is not None else M


def make_pairs(cfg: SimConfig, M: torch.Tensor, replicates, n: int | None = None,
               purpose: int = STREAM_TRAIN, extra: int = 0) -> Pairs:
    """Positive pairs for each replicate (train stream by default; STREAM_TEST for held-out pairs).

    `extra` selects a sub-stream: the fixed training set is extra = 0, and with sampling = "fresh" step t draws
    extra = t + 1, so a branch resumed at step t sees the same pairs as its control. Random numbers are drawn on
    M's device (draw_device; data_device = "cpu" draws on the CPU whatever the device; raw_draws says how each device
    draws), then the pairs are built for all replicates at once on M's device.
    """
    n = cfg.n_pairs if n is None else n
    out = raw_draws(cfg.seed, draw_plan(cfg, n), list(replicates), purpose, extra, draw_device(cfg, M.device))
    return pairs_from_draws(cfg, M, [t.to(M.device) for t in out])
