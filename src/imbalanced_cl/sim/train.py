"""Training: gradient descent with decoupled weight decay (Alg. 1), R replicates at once, on any device.

Read top to bottom: `gradient` is eq. (21) (eq. (5) under a pruning mask), `step` is one update of Algorithm 1,
`train` is the loop, and `Run` holds what a notebook measures afterwards. With cfg.sampling = "fresh" (the
default) every step draws K new pairs, so the empirical gradient tracks the population gradient that Lemma B.1
(L519) analyses; "fixed" reuses one set of K pairs every step (full-batch GD on a finite set).
"""
from __future__ import annotations

import sys
from contextlib import contextmanager
from dataclasses import dataclass, field

import torch
from tqdm import tqdm

from . import data as D
from .config import SimConfig
from .encoder import bias_at, brelu_and_gate, embed, init_weights
from .memory import auto_chunk
from .metrics import feature_share
from .loss import infonce_and_grad
from .prune import Masker, apply_mask


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
        for name, v in zip(_FIELDS, (t, coef, norm2, bias, loss, pos_prob), strict=True):
            getattr(self, name).append(v)

    def get(self, name: str) -> torch.Tensor:
        """One recorded quantity stacked over time: shape (T, ...)."""
        return torch.tensor(self.steps) if name == "steps" else torch.stack(getattr(self, name))

    def to(self, device) -> "History":
        """The same snapshots with their tensors on `device`."""
        out = History(steps=list(self.steps))
        for name in _FIELDS[1:]:
            setattr(out, name, [v.to(device) for v in getattr(self, name)])
        return out

    @staticmethod
    def concat(parts: list["History"]) -> "History":
        """Join histories of replicate chunks along the replicate dimension."""
        out = History(steps=list(parts[0].steps))
        for name in _FIELDS[1:]:
            setattr(out, name, [torch.cat(v, dim=0) for v in zip(*(getattr(p, name) for p in parts), strict=True)])
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
    # the training set ("fixed"); under "fresh", the batch of step `step`, which no step trained on
    pairs: D.Pairs
    W0: torch.Tensor       # (R, m, d1) initial weights

    def to(self, device) -> "Run":
        """The same run with its tensors on `device` (train returns runs on the CPU, ready for plotting)."""
        return Run(self.cfg, self.replicates, self.M.to(device), self.W.to(device), self.T1.to(device), self.step,
                   self.history.to(device), self.pairs.to(device), self.W0.to(device))

    def heldout(self, n: int | None = None, extra: int = 0) -> D.Pairs:
        """Held-out pairs from the test stream of each replicate (never seen in training, whatever the sampling)."""
        return D.make_pairs(self.cfg, self.M, self.replicates, n, purpose=D.STREAM_TEST, extra=extra)

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


def _h_and_gate(W, U, Usum, b, need_gate=True, linear=None):
    """h (R,n,m) and, when the bias is nonzero, the BReLU gate 1{|s| >= b} (R,n,L,m); with b = 0, h is linear.

    Both products are batched matrix multiplies over (R, n*L, d1) views, with no copies of the data. `linear`
    says whether b = 0 everywhere (None: look at b, which costs a device sync).
    """
    if linear is None:
        linear = not bool((b != 0).any())
    if linear:
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


# 7 arguments: eq. (21)'s inputs (weights, bias, pairs, config) and three optional hot-loop shortcuts (the mask, the
# token sums of a fixed set, whether b = 0) that the training loop passes to skip recomputation.
def gradient(W, b, pairs: D.Pairs, cfg: SimConfig, mask=None, Usum=None, linear=None):
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
    hX, gate = _h_and_gate(W, UX, UXs, b, need_gate=not (literal and weight_mask), linear=linear)
    hY, _ = _h_and_gate(W, UY, UYs, b, need_gate=False, linear=linear)
    if mask is None:
        FX, FY = hX, hY
    elif not weight_mask:  # whole neurons: a pruned neuron's output is simply zero
        FX, FY = hX * mask.unsqueeze(1), hY * mask.unsqueeze(1)
    else:
        Wm = apply_mask(W, mask)
        FX, gate_m = _h_and_gate(Wm, UX, UXs, b, need_gate=literal, linear=linear)
        FY, _ = _h_and_gate(Wm, UY, UYs, b, need_gate=False, linear=linear)
        if literal:
            gate = gate_m
    loss, G, pos_prob = infonce_and_grad(FX, FY, FY if literal else hY, cfg.tau, cfg.tau_scaled)
    g = _wgrad(G, gate, UX, UXs)
    if literal:
        g = apply_mask(g, mask)
    return g, loss, pos_prob


# 7 arguments: gradient's, passed through unchanged (see gradient).
def step(W, b, pairs: D.Pairs, cfg: SimConfig, mask=None, Usum=None, linear=None):
    """One update of Algorithm 1: theta <- (1 - eta lambda) theta - eta g (step 7; decay on the full theta, L155).

    Returns (new W, loss (R,), mean l'_p (R,)). Pure tensor code with no host round trip when `linear` is given,
    so it runs unchanged on any device (a test runs it on the `meta` device).
    """
    g, loss, pp = gradient(W, b, pairs, cfg, mask, Usum, linear)
    return (1.0 - cfg.lr * cfg.weight_decay) * W - cfg.lr * g, loss, pp


class StageClock:
    """T1 of every replicate (eq. (34)) and whether the bias is zero at step t, kept without waiting on a GPU.

    T1 is the first step after which t1_fraction of the neurons have half their weight in the feature span (eq. (34));
    the bias starts at T1 + 1 (bias_at, Lemma F.3), or at the fixed step of cfg.bias_onset. While b = 0 everywhere
    h is linear in the token sums, and the step takes its cheaper linear path.
    On the CPU the clock reads each crossing at once, as it always has (reading costs nothing there). On a GPU a
    read would make the host wait for the device at every step, so the clock copies the crossing state of step t to
    pinned memory without waiting and reads it two steps later: a crossing after step t first changes the bias at
    step t + 2, so that read is never too late, and the host stays a step ahead of the device.
    """

    LAZY_DEVICES = ("cuda",)     # device types on which reading a flag would stall the host (tests add "cpu")

    def __init__(self, cfg: SimConfig, T1: torch.Tensor):
        self.cfg, self.T1 = cfg, T1
        self.lazy = T1.device.type in self.LAZY_DEVICES
        self.started = bool((T1 >= 0).any())      # one read at the start (a resumed run may be past T1)
        self.done = bool((T1 >= 0).all())         # every replicate has its T1: nothing left to measure
        self._pending = []                        # GPU: [(step, pinned (any, all) flags, event)] not read yet

    def linear(self, t: int) -> bool:
        """Whether b = 0 for every replicate at step t, so that the step may take its linear path."""
        cfg = self.cfg
        if cfg.bias == "none" or cfg.bias_coef == 0:
            return True
        if cfg.bias_onset != "crossing":
            return t <= cfg.t1_onset_step
        if self.lazy:
            self._read(upto=t - 2)
        return not self.started

    def after(self, W: torch.Tensor, M: torch.Tensor, t: int) -> None:
        """Record T1 = t + 1 for the replicates whose neurons cross eq. (34) after step t (or t1_max forces it)."""
        if self.done:
            return
        frac = (feature_share(W, M) >= 0.5).float().mean(-1)
        forced = self.cfg.t1_max > 0 and t + 1 >= self.cfg.t1_max
        hit = (self.T1 < 0) & ((frac >= self.cfg.t1_fraction) | forced)
        self.T1 = torch.where(hit, torch.full_like(self.T1, t + 1), self.T1)
        if not self.lazy:
            self.started = self.started or bool(hit.any())
            self.done = bool((self.T1 >= 0).all())
            return
        flags = torch.stack([(self.T1 >= 0).any(), (self.T1 >= 0).all()])
        if flags.device.type == "cuda":     # copy without waiting; the event says when the copy has landed
            host = torch.empty(2, dtype=torch.bool, pin_memory=True)
            host.copy_(flags, non_blocking=True)
            event = torch.cuda.Event()
            event.record()
        else:
            host, event = flags.clone(), None
        self._pending.append((t, host, event))
        self._read(upto=t - 2)

    def _read(self, upto: int) -> None:
        """Take in the flags recorded at steps <= upto (waiting only for work queued two steps ago)."""
        while self._pending and self._pending[0][0] <= upto:
            _, host, event = self._pending.pop(0)
            if event is not None:
                event.synchronize()
            self.started = self.started or bool(host[0])
            self.done = self.done or bool(host[1])


@contextmanager
def matmul_precision(tf32: bool):
    """Allow TF32 in CUDA matmuls or not, and put the flag back on every exit path (an interrupted run included)."""
    before = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = tf32
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = before


def _batch(cfg: SimConfig, M, reps: list, t: int, fixed: D.Pairs | None, sampler=None) -> D.Pairs:
    """The pairs of step t: the fixed training set, K fresh pairs from sub-stream t + 1 of the train stream,
    or what a caller's sampler(t, reps) returns."""
    if fixed is not None:
        return fixed
    if sampler is not None:
        return sampler(t, reps).to(M.device)
    return D.make_pairs(cfg, M, reps, extra=t + 1)


def _train_chunk(cfg: SimConfig, reps: list, resume: Run | None, bar, masker: Masker, sampler=None) -> Run:
    dev = cfg.torch_device
    if resume is None:
        M = D.make_dictionaries(cfg, reps, dev)
        W = init_weights(cfg, reps).to(dev)
        T1 = torch.full((len(reps),), -1, dtype=torch.long, device=dev)
        start, W0 = 0, W.clone()
    else:
        M, W, T1, start = resume.M.to(dev), resume.W.to(dev).clone(), resume.T1.to(dev).clone(), resume.step
        W0 = resume.W0.to(dev)
    if sampler is not None:      # a caller-made stream (e.g. App. A.2 batches grid points as replicates)
        fixed = None
    elif cfg.sampling == "fixed":
        fixed = resume.pairs.to(dev) if resume is not None else D.make_pairs(cfg, M, reps)
    else:
        fixed = None
    Usum = (_summed(fixed.UX), _summed(fixed.UY)) if fixed is not None else None
    hist = History()
    clock = StageClock(cfg, T1)
    for t in range(start, cfg.steps):
        # data: the pairs of step t (fresh, fixed, or a caller's sampler)
        pairs = _batch(cfg, M, reps, t, fixed, sampler)
        # schedule: the bias (0 up to T1, Lemma F.3) and Algorithm 1's mask (None before prune_start)
        b = bias_at(cfg, W, t, clock.T1)
        mask = masker.at(W, t)
        # update: eq. (21) (eq. (5) under a mask), decoupled weight decay
        W_new, loss, pp = step(W, b, pairs, cfg, mask, Usum, clock.linear(t))
        # record: snapshots stay on the device until the run ends
        if (t - start) % cfg.record_every == 0:
            hist.add(t, W @ M, W.pow(2).sum(-1), b, loss, pp)
        W = W_new
        # stage clock: T1 at the first step where eq. (34) holds for t1_fraction of the neurons
        clock.after(W, M, t)
        bar.update(1)
    T1 = clock.T1
    b = bias_at(cfg, W, cfg.steps, T1)
    mask = masker.final(W, cfg.steps)  # None unless a mask was in force
    pairs = _batch(cfg, M, reps, cfg.steps, fixed, sampler)
    _, loss, pp = gradient(W, b, pairs, cfg, mask, Usum)
    if not hist.steps or hist.steps[-1] != cfg.steps:
        hist.add(cfg.steps, W @ M, W.pow(2).sum(-1), b, loss, pp)
    return Run(cfg, reps, M, W, T1, cfg.steps, hist, pairs, W0)


def _slice_run(run: Run, lo: int, hi: int) -> Run:
    p = run.pairs
    pairs = D.Pairs(p.UX[lo:hi], p.UY[lo:hi], p.S[lo:hi], p.ZX[lo:hi], p.ZY[lo:hi])
    return Run(run.cfg, run.replicates[lo:hi], run.M[lo:hi], run.W[lo:hi], run.T1[lo:hi], run.step,
               History(), pairs, run.W0[lo:hi])


def train(cfg: SimConfig, replicates=None, resume: Run | None = None, sampler=None,
          masker: Masker | None = None) -> Run:
    """Train cfg.R replicates (or the given replicate indices) for cfg.steps steps in total.

    With `resume`, continue from that run's weights, data and T1 (same data stream) up to cfg.steps:
    this is how a pruned branch starts from a vanilla checkpoint (with "fresh" sampling the branch and its control
    draw the same pairs at every step: step t's pairs depend on (seed, replicate, t) only). `sampler(t, reps)`,
    if given, supplies step t's pairs for the replicate indices `reps` instead. The pruning mask is the one cfg
    describes (prune.Masker.from_config), unless `masker` gives one per replicate row (several mask cells or ratios
    trained in one batch).

    Replicates are trained in chunks of cfg.chunk (0: auto_chunk) to bound memory; a chunk that does not fit a GPU is
    halved, with one line. What holds on each device: a replicate's random numbers depend on (seed, replicate,
    purpose, step) alone, never on its chunk. Its dictionary, initial weights and masks come from its own CPU
    torch.Generator on every device; its pairs are drawn on the run's device (data.raw_draws), from its own
    torch.Generator on the CPU and, on a GPU, in one batched Philox call for the chunk, keyed to each replicate: the
    same law with other numbers (data_device = "cpu" gives a GPU the CPU's numbers). The same seed gives the same
    numbers, bit for bit, on one machine at one chunking; another chunking draws the same raw numbers, supports and
    latents, and gives pairs and weights equal within float32 rounding (the batched products then have another width,
    and a BLAS may round them otherwise), so the chunks a process used go into its provenance (chunks_used).
    """
    reps = list(range(cfg.R)) if replicates is None else list(replicates)
    if resume is not None:
        reps = list(resume.replicates)
    start = resume.step if resume is not None else 0
    masker = masker or Masker.from_config(cfg, reps)
    size = cfg.chunk or auto_chunk(cfg, cfg.torch_device)
    while True:
        try:
            runs = _train_chunks(cfg, reps, resume, masker, sampler, start, size)
            break
        except torch.cuda.OutOfMemoryError:
            if size == 1:
                raise
            size = max(1, size // 2)      # a replicate's draws do not depend on its chunk: start again, same numbers
            torch.cuda.empty_cache()
            print(f"train: a chunk did not fit the GPU's memory; trying again with {size} replicates per chunk",
                  file=sys.stderr, flush=True)
    _CHUNKS_USED.add(min(size, len(reps)))
    if len(runs) == 1:
        out = runs[0]
    else:
        def cat(name):
            return torch.cat([getattr(r, name) for r in runs])
        pairs = D.Pairs(*(torch.cat([getattr(r.pairs, f) for r in runs]) for f in ("UX", "UY", "S", "ZX", "ZY")))
        out = Run(cfg, reps, cat("M"), cat("W"), cat("T1"), cfg.steps,
                  History.concat([r.history for r in runs]), pairs, cat("W0"))
    if resume is not None:  # prepend the earlier history so plots show the whole trajectory
        out.history = join_time(resume.history, out.history)
    return out


_CHUNKS_USED: set = set()


def chunks_used() -> list[int]:
    """The replicates per chunk that train() has used in this process, ascending (provenance: see train())."""
    return sorted(_CHUNKS_USED)


def _train_chunks(cfg: SimConfig, reps: list, resume: Run | None, masker: Masker, sampler, start: int,
                  size: int) -> list[Run]:
    """Train the replicates in chunks of `size`, each chunk's run moved to the CPU once it ends."""
    bounds = [(lo, min(lo + size, len(reps))) for lo in range(0, len(reps), size)]
    runs = []
    with matmul_precision(cfg.tf32), tqdm(total=(cfg.steps - start) * len(bounds), disable=not cfg.progress,
                                           desc="train", mininterval=2.0, leave=False) as bar:
        for lo, hi in bounds:   # exact float32 unless cfg.tf32 (the theory checks need it)
            part = _slice_run(resume, lo, hi) if resume is not None else None
            runs.append(_train_chunk(cfg, reps[lo:hi], part, bar, masker.rows(lo, hi), sampler).to("cpu"))
    return runs


def join_time(a: History, b: History) -> History:
    """History `a` followed by the snapshots of `b` taken at steps `a` does not have."""
    seen = set(a.steps)
    keep = [k for k, s in enumerate(b.steps) if s not in seen]
    out = History()
    for name in _FIELDS:
        setattr(out, name, list(getattr(a, name)) + [getattr(b, name)[k] for k in keep])
    return out
