"""Training: full-batch gradient descent with decoupled weight decay (Alg. 1), R replicates at once.

Read top to bottom: `gradient` is eq. (21) (eq. (5) under a pruning mask), `train` is the loop of
Algorithm 1, and `Run` holds what a notebook measures afterwards.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import torch
from tqdm import tqdm

from . import data as D
from .config import SimConfig
from .encoder import bias_at, brelu_and_gate, embed, init_weights
from .metrics import feature_share
from .loss import infonce_and_grad
from .prune import apply_mask, mask_for


_FIELDS = ("steps", "coef", "norm2", "bias", "loss", "pos_prob")


@dataclass
class History:
    """Snapshots every cfg.record_every steps (never every step): feature coefficients and scalars."""

    steps: list = field(default_factory=list)
    coef: list = field(default_factory=list)      # (R, m, d): <w_i, M_j>
    norm2: list = field(default_factory=list)     # (R, m): ||w_i||^2
    bias: list = field(default_factory=list)      # (R, m): b_i
    loss: list = field(default_factory=list)      # (R,): InfoNCE of the model used in the forward pass
    pos_prob: list = field(default_factory=list)  # (R,): mean positive logit l'_p

    def add(self, t, coef, norm2, bias, loss, pos_prob):
        """Append one snapshot."""
        for name, v in zip(_FIELDS, (t, coef, norm2, bias, loss, pos_prob)):
            getattr(self, name).append(v)

    def get(self, name: str) -> torch.Tensor:
        """One recorded quantity stacked over time: shape (T, ...)."""
        return torch.tensor(self.steps) if name == "steps" else torch.stack(getattr(self, name))

    @staticmethod
    def concat(parts: list["History"]) -> "History":
        """Join histories of replicate chunks along the replicate dimension."""
        out = History(steps=list(parts[0].steps))
        for name in _FIELDS[1:]:
            setattr(out, name, [torch.cat(v, dim=0) for v in zip(*(getattr(p, name) for p in parts))])
        return out


@dataclass
class Run:
    """The result of training: weights, dictionary, data, stage times and history, all with leading dim R."""

    cfg: SimConfig
    replicates: list
    M: torch.Tensor        # (R, d1, d)
    W: torch.Tensor        # (R, m, d1) full (unmasked) weights
    T1: torch.Tensor       # (R,) first step satisfying eq. (34) for t1_fraction of neurons; -1 if never
    step: int              # number of steps taken
    history: History
    pairs: D.Pairs
    W0: torch.Tensor       # (R, m, d1) initial weights

    @property
    def bias(self) -> torch.Tensor:
        """Current per-neuron bias (R, m)."""
        return bias_at(self.cfg, self.W, self.step, self.T1)

    def coef(self) -> torch.Tensor:
        """Current <w_i, M_j>, shape (R, m, d)."""
        return self.W @ self.M

    def features(self, pairs: D.Pairs):
        """Embeddings f(X), f(Y) of some pairs under the current weights and bias, each (R, n, m)."""
        b = self.bias
        return embed(self.W, pairs.UX, b)[0], embed(self.W, pairs.UY, b)[0]


def _summed(U: torch.Tensor) -> torch.Tensor:
    return U.sum(dim=2)


def _h_and_gate(W, U, Usum, b, need_gate=True):
    """h (R,n,m) and, when the bias is nonzero, the BReLU gate 1{|s| >= b} (R,n,L,m); with b = 0, h is linear.

    Both products are batched matrix multiplies over (R, n*L, d1) views, with no copies of the data.
    """
    if not bool((b != 0).any()):
        return torch.bmm(Usum, W.transpose(1, 2)), None
    R, n, L, d1 = U.shape
    s = torch.bmm(U.view(R, n * L, d1), W.transpose(1, 2)).view(R, n, L, -1)   # <w_i, u^(r)>
    act, gate = brelu_and_gate(s, b[:, None, None, :], need_gate)
    return act.sum(dim=2), gate


def _wgrad(G, gate, U, Usum):
    """Chain rule to the weights: sum_k G_ki sum_r 1{|<w_i,u_r>| >= b_i} u_r  (eq. 21)."""
    if gate is None:
        return torch.bmm(G.transpose(1, 2), Usum)
    R, n, L, d1 = U.shape
    A = (G.unsqueeze(2) * gate).view(R, n * L, -1)
    return torch.bmm(A.transpose(1, 2), U.view(R, n * L, d1))


def gradient(W, b, pairs: D.Pairs, cfg: SimConfig, mask=None, Usum=None):
    """Gradient of tau*InfoNCE (eq. 21) w.r.t. W, or Algorithm 1's gradient (eq. 5) under a keep-mask.

    Faithful backward (default): the logits l'_p, l'_s come from the masked model while h_i(Y) and
    grad h_i(X) come from the full model, as eq. (5) and the proof (eqs. 184-189) do, so pruned neurons
    keep receiving gradient. Literal backward: autograd through theta ⊙ mask, so pruned units get none.
    Returns (g (R,m,d1), loss (R,), mean l'_p (R,)).
    """
    UX, UY = pairs.UX.contiguous(), pairs.UY.contiguous()
    UXs, UYs = Usum if Usum is not None else (_summed(UX), _summed(UY))
    literal = mask is not None and cfg.prune_backward == "literal"
    weight_mask = mask is not None and mask.dim() == 3
    hX, gate = _h_and_gate(W, UX, UXs, b, need_gate=not (literal and weight_mask))
    hY, _ = _h_and_gate(W, UY, UYs, b, need_gate=False)
    if mask is None:
        FX, FY = hX, hY
    elif not weight_mask:  # whole neurons: a pruned neuron's output is simply zero
        FX, FY = hX * mask.unsqueeze(1), hY * mask.unsqueeze(1)
    else:
        Wm = apply_mask(W, mask)
        FX, gate_m = _h_and_gate(Wm, UX, UXs, b, need_gate=literal)
        FY, _ = _h_and_gate(Wm, UY, UYs, b, need_gate=False)
        if literal:
            gate = gate_m
    loss, G, pos_prob = infonce_and_grad(FX, FY, FY if literal else hY, cfg.tau, cfg.tau_scaled)
    g = _wgrad(G, gate, UX, UXs)
    if literal:
        g = apply_mask(g, mask)
    return g, loss, pos_prob


def step_flops(cfg: SimConfig, R: int, linear: bool) -> float:
    """Floating-point operations of one training step (forward X and Y, backward, logits)."""
    tokens = cfg.n_pairs * (1 if linear else cfg.L)
    matmuls = 3 * 2 * R * cfg.m * cfg.d1 * tokens
    return matmuls + 2 * 2 * R * cfg.n_pairs ** 2 * cfg.m


def _train_chunk(cfg: SimConfig, reps: list, resume: Run | None, bar, pairs_at=None) -> Run:
    if resume is None:
        M = D.make_dictionaries(cfg, reps)
        W = init_weights(cfg, reps)
        pairs = D.make_pairs(cfg, M, reps) if pairs_at is None else pairs_at(M, reps, 0)
        T1 = torch.full((len(reps),), -1, dtype=torch.long)
        start, W0 = 0, W.clone()
    else:
        M, W, pairs, T1, start = resume.M, resume.W.clone(), resume.pairs, resume.T1.clone(), resume.step
        W0 = resume.W0
    hist = History()
    Usum = (_summed(pairs.UX), _summed(pairs.UY))
    decay = 1.0 - cfg.lr * cfg.weight_decay
    mask = None
    for t in range(start, cfg.steps):
        if pairs_at is not None and (new := pairs_at(M, reps, t)) is not pairs:   # a pair source may renew the data
            pairs, Usum = new, (_summed(new.UX), _summed(new.UY))
        b = bias_at(cfg, W, t, T1)
        if cfg.prune_alpha > 0 and t >= cfg.prune_start:
            if mask is None or (t - cfg.prune_start) % cfg.prune_every == 0:
                mask = mask_for(W, cfg.prune_alpha, cfg.prune_unit)
        g, loss, pp = gradient(W, b, pairs, cfg, mask, Usum)
        if (t - start) % cfg.record_every == 0:
            hist.add(t, W @ M, W.pow(2).sum(-1), b, loss, pp)
        W = decay * W - cfg.lr * g  # theta <- (1 - eta lambda) theta - eta g  (Alg. 1 step 7)
        if bool((T1 < 0).any()):
            frac = (feature_share(W, M) >= 0.5).float().mean(-1)
            hit = (T1 < 0) & ((frac >= cfg.t1_fraction) | (cfg.t1_max > 0 and t + 1 >= cfg.t1_max))
            T1 = torch.where(hit, torch.full_like(T1, t + 1), T1)
        bar.update(1)
    b = bias_at(cfg, W, cfg.steps, T1)
    if mask is not None:  # only ever set when prune_alpha > 0
        mask = mask_for(W, cfg.prune_alpha, cfg.prune_unit)
    _, loss, pp = gradient(W, b, pairs, cfg, mask, Usum)
    if not hist.steps or hist.steps[-1] != cfg.steps:
        hist.add(cfg.steps, W @ M, W.pow(2).sum(-1), b, loss, pp)
    return Run(cfg, reps, M, W, T1, cfg.steps, hist, pairs, W0)


CHUNK_BYTES = 64 * 2 ** 20


def auto_chunk(cfg: SimConfig) -> int:
    """Replicates per chunk when cfg.chunk is 0: as many as fit CHUNK_BYTES of data and activations.

    This bounds memory (issue budget: 4 GiB at the default profile); speed is flat in the chunk size once
    a chunk holds more than a few replicates (measured with benchmarks/train_speed.py).
    """
    per_rep = 4 * cfg.n_pairs * cfg.L * (2 * cfg.d1 + 4 * cfg.m)   # float32 U_X, U_Y and the (n, L, m) temporaries
    return max(1, CHUNK_BYTES // per_rep)


def _slice_run(run: Run, lo: int, hi: int) -> Run:
    p = run.pairs
    pairs = D.Pairs(p.UX[lo:hi], p.UY[lo:hi], p.S[lo:hi], p.ZX[lo:hi], p.ZY[lo:hi])
    return Run(run.cfg, run.replicates[lo:hi], run.M[lo:hi], run.W[lo:hi], run.T1[lo:hi], run.step,
               History(), pairs, run.W0[lo:hi])


def train(cfg: SimConfig, replicates=None, resume: Run | None = None, pairs_at=None) -> Run:
    """Train cfg.R replicates (or the given replicate indices) for cfg.steps steps in total.

    `pairs_at(M, reps, t)`, when given, returns the Pairs of step t for replicate indices `reps` (whose
    dictionaries are M): a fresh draw every step, or pairs built per replicate by other rules. By default
    the pairs are one fixed set, D.make_pairs(cfg, M, reps).

    With `resume`, continue from that run's weights, data and T1 (same data stream) up to cfg.steps:
    this is how a pruned branch starts from a vanilla checkpoint. Replicates are trained in chunks of
    cfg.chunk to bound memory; each replicate's numbers do not depend on the chunking.
    """
    reps = list(range(cfg.R)) if replicates is None else list(replicates)
    if resume is not None:
        reps = list(resume.replicates)
    size = cfg.chunk or auto_chunk(cfg)
    bounds = [(lo, min(lo + size, len(reps))) for lo in range(0, len(reps), size)]
    start = resume.step if resume is not None else 0
    runs = []
    with tqdm(total=(cfg.steps - start) * len(bounds), disable=not cfg.progress, desc="train",
              mininterval=2.0, leave=False) as bar:
        for lo, hi in bounds:
            part = _slice_run(resume, lo, hi) if resume is not None else None
            runs.append(_train_chunk(cfg, reps[lo:hi], part, bar, pairs_at))
    if len(runs) == 1:
        out = runs[0]
    else:
        cat = lambda name: torch.cat([getattr(r, name) for r in runs])
        pairs = D.Pairs(*(torch.cat([getattr(r.pairs, f) for r in runs]) for f in ("UX", "UY", "S", "ZX", "ZY")))
        out = Run(cfg, reps, cat("M"), cat("W"), cat("T1"), cfg.steps,
                  History.concat([r.history for r in runs]), pairs, cat("W0"))
    if resume is not None:  # prepend the earlier history so plots show the whole trajectory
        out.history = _join_time(resume.history, out.history)
    return out


def _join_time(a: History, b: History) -> History:
    """History `a` followed by the snapshots of `b` taken at steps `a` does not have."""
    seen = set(a.steps)
    keep = [k for k, s in enumerate(b.steps) if s not in seen]
    out = History()
    for name in _FIELDS:
        setattr(out, name, list(getattr(a, name)) + [getattr(b, name)[k] for k in keep])
    return out
