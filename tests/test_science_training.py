"""Training against the paper: T1 by eq. (34), the bias schedule by hand (Lemma F.3, Thm C.1), Algorithm 1 by autograd.

The reference forward below is eq. (4) + eqs. (1)-(3) written out here with torch primitives (no package
function), differentiated by autograd; stage times are recomputed from the recorded history by the paper's
definition; bias values are worked out by hand.
"""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.sim import data, encoder, metrics, theory
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.train import train

# ---------------------------------------------------------------- reference model, written from the paper


def ref_h(W, U, b):
    """eq. (4): h_i(X) = sum_r BReLU_{b_i}(<w_i, u^(r)>), BReLU_b(s) = ReLU(s - b) - ReLU(-s - b)  (L57)."""
    s = torch.einsum("rid,rnld->rnli", W, U)
    bb = b[:, None, None, :]
    return (torch.relu(s - bb) - torch.relu(-s - bb)).sum(2)


def ref_infonce(FX, FY, tau):
    """eqs. (1)-(3): mean over anchors of -log softmax of <f(X_k), f(Y_k')>/tau at k' = k (f(Y) given)."""
    lg = FX @ FY.transpose(-1, -2) / tau
    return -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, dim=-1)).mean(-1)


def ref_grad(W, b, UX, UY, cfg, keep=None):
    """The training gradient by autograd: tau*InfoNCE with StopGrad on f(Y); under a mask, Algorithm 1.

    Literal backward: autograd through theta ⊙ mask. Faithful backward (eq. 5): logits l' from the masked
    model, h(Y) and grad h(X) from the full one, i.e. the gradient of sum_k <h(X_k), [(l'-I) h(Y)]_k> / n with
    l' and h(Y) held fixed.
    """
    scale = 1.0 if cfg.tau_scaled else 1.0 / cfg.tau
    Wv = W.detach().clone().requires_grad_(True)
    km = None if keep is None else (keep.unsqueeze(-1) if keep.dim() == 2 else keep)
    if km is None or cfg.prune_backward == "literal":
        Wm = Wv if km is None else Wv * km
        FX, FY = ref_h(Wm, UX, b), ref_h(Wm, UY, b).detach()     # StopGrad (eq. 2)
        obj = cfg.tau * scale * ref_infonce(FX, FY, cfg.tau).sum()
    else:
        with torch.no_grad():
            Wm = W * km
            Q = torch.softmax(ref_h(Wm, UX, b) @ ref_h(Wm, UY, b).transpose(-1, -2) / cfg.tau, dim=-1)
            hY = ref_h(W, UY, b)
            n = Q.shape[-1]
            C = (Q - torch.eye(n, dtype=Q.dtype)) @ hY / n
        obj = scale * (C * ref_h(Wv, UX, b)).sum()
    (g,) = torch.autograd.grad(obj, Wv)
    return g


def ref_share(W, M):
    """||M M^T w||^2 / ||w||^2 per neuron (eq. 34), for column-orthonormal M."""
    return (W @ M).pow(2).sum(-1) / W.pow(2).sum(-1)


def ref_bias(cfg, W, t, T1):
    """The bias the config documents: 0 up to and including T1 (Lemma F.3), then coef (E|z|/L) sqrt(2 log d/d) ||w||
    x capped ramp."""
    e_abs_z = (cfg.mag_lo + cfg.mag_hi) / 2            # mean of U[mag_lo, mag_hi]
    base = cfg.bias_coef * e_abs_z / cfg.L * math.sqrt(2 * math.log(cfg.d) / cfg.d) * W.norm(dim=-1)
    out = torch.zeros_like(base)
    for r in range(W.shape[0]):
        if cfg.bias == "schedule" and 0 <= int(T1[r]) < t:          # b = 0 for t <= T1 (Lemma F.3)
            out[r] = base[r] * min((1 + cfg.bias_ramp) ** (t - int(T1[r]) - 1), cfg.bias_ramp_max)
    return out


def ref_mask(W, alpha, unit):
    """Algorithm 1's keep-mask written out: drop round(alpha * count) units (at most count - 1) with the smallest
    ||w_i|| ("neuron") or |w_ik| ("weight") in each replicate; ties go to the lower index."""
    R, m, d1 = W.shape
    out = torch.ones(R, m) if unit == "neuron" else torch.ones(R, m * d1)
    for r in range(R):
        mags = W[r].norm(dim=-1).tolist() if unit == "neuron" else W[r].abs().flatten().tolist()
        k = min(int(round(alpha * len(mags))), len(mags) - 1)
        for i in sorted(range(len(mags)), key=lambda i: (mags[i], i))[:k]:
            out[r, i] = 0.0
    return (out if unit == "neuron" else out.view(R, m, d1)).to(W.dtype)


def reference_train(cfg, trajectory=None, sampler=None):
    """Algorithm 1 written out in float64: mask schedule, gradient by autograd, decoupled decay, T1 by eq. (34).

    The pairs are inputs: with sampling "fixed" one set (train stream, sub-stream 0) every step; with "fresh", step
    t draws K new pairs from sub-stream t + 1 of the train stream (the package's sampler, used only for the data).
    With a list as `trajectory`, appends (t, W_t, b_t, keep_t, UX_t, UY_t) for every step and the final state.
    """
    reps = list(range(cfg.R))
    M = data.make_dictionaries(cfg, reps).double()
    W = encoder.init_weights(cfg, reps).double()
    fixed = data.make_pairs(cfg, M.float(), reps) if cfg.sampling == "fixed" and sampler is None else None

    def pairs_at(t):
        if sampler is not None:
            P = sampler(t, reps)
        else:
            P = fixed if fixed is not None else data.make_pairs(cfg, M.float(), reps, extra=t + 1)
        return P.UX.double(), P.UY.double()

    T1 = torch.full((cfg.R,), -1, dtype=torch.long)
    keep = None
    for t in range(cfg.steps):
        UX, UY = pairs_at(t)
        b = ref_bias(cfg, W, t, T1)
        if cfg.prune_alpha > 0 and t >= cfg.prune_start and (t - cfg.prune_start) % cfg.prune_every == 0:
            keep = ref_mask(W, cfg.prune_alpha, cfg.prune_unit)
        if trajectory is not None:
            trajectory.append((t, W, b, keep, UX, UY))
        g = ref_grad(W, b, UX, UY, cfg, keep)
        W = (1 - cfg.lr * cfg.weight_decay) * W - cfg.lr * g       # decay on the full theta (L155)
        frac = (ref_share(W, M) >= 0.5).double().mean(-1)
        T1 = torch.where((T1 < 0) & (frac >= cfg.t1_fraction), torch.full_like(T1, t + 1), T1)
    if trajectory is not None:   # the final snapshot: mask recomputed from the final weights
        keep = ref_mask(W, cfg.prune_alpha, cfg.prune_unit) if keep is not None else None
        trajectory.append((cfg.steps, W, ref_bias(cfg, W, cfg.steps, T1), keep, *pairs_at(cfg.steps)))
    return W, T1


# ---------------------------------------------------------------- the reference itself is right

def test_reference_gradient_matches_finite_differences():
    """The autograd reference agrees with central differences of tau*InfoNCE (f(Y) fixed), bias on."""
    g = torch.Generator().manual_seed(0)
    UX = torch.randn(1, 5, 2, 6, generator=g, dtype=torch.float64)
    UY = UX + 0.3 * torch.randn(1, 5, 2, 6, generator=g, dtype=torch.float64)
    W = torch.randn(1, 3, 6, generator=g, dtype=torch.float64)
    b = torch.full((1, 3), 0.3, dtype=torch.float64)
    cfg = SimConfig(d=3, d1=6, L=2, m=3, n_pairs=5, tau=0.6, progress=False)
    got = ref_grad(W, b, UX, UY, cfg)
    FY = ref_h(W, UY, b)
    h = 1e-6
    for idx in [(0, 0, 0), (0, 1, 3), (0, 2, 5)]:
        E = torch.zeros_like(W)
        E[idx] = h
        fd = cfg.tau * (ref_infonce(ref_h(W + E, UX, b), FY, cfg.tau)
                        - ref_infonce(ref_h(W - E, UX, b), FY, cfg.tau)) / (2 * h)
        assert float(fd) == pytest.approx(float(got[idx]), rel=1e-6, abs=1e-9)


# ---------------------------------------------------------------- Algorithm 1 loop against the reference

LOOP = dict(d=5, d1=10, m=6, L=3, n_pairs=24, R=2, steps=20, sigma0=0.05, p_scale=3.0, progress=False,
            record_every=5, sampling="fixed")


@pytest.mark.parametrize("kw", [
    dict(bias="none"),
    dict(bias="none", sampling="fresh"),
    dict(bias="none", sampling="fresh", prune_alpha=0.4, prune_every=3, prune_start=2),
    dict(bias="none", tau=0.5, tau_scaled=False, weight_decay=0.05),
    dict(bias="none", prune_alpha=0.4, prune_every=1, prune_start=0),
    dict(bias="none", prune_alpha=0.4, prune_every=7, prune_start=4),
    dict(bias="none", prune_alpha=0.4, prune_every=1000, prune_start=3),
    dict(bias="none", prune_alpha=0.3, prune_unit="weight", prune_backward="literal", prune_start=3),
    dict(bias="none", prune_alpha=0.4, prune_backward="literal", prune_every=1000, prune_start=3),
], ids=["vanilla", "fresh", "fresh-pruned", "tau-unscaled-decay", "prune-every-step", "prune-every-7-from-4",
        "prune-once-at-3", "weight-literal", "neuron-literal-once"])
def test_training_loop_matches_algorithm1_by_autograd(kw):
    cfg = SimConfig(**{**LOOP, **kw})
    W_ref, _ = reference_train(cfg)
    torch.testing.assert_close(train(cfg).W.double(), W_ref, rtol=2e-4, atol=1e-6)


@pytest.mark.parametrize("sampling", ["fixed", "fresh"])
def test_training_loop_with_bias_schedule_matches_reference(sampling):
    """Stage 1 without bias, then the documented schedule from T1 (eq. 34) on: weights and T1 agree."""
    cfg = SimConfig(**{**LOOP, "steps": 40, "sigma0": 0.01, "t1_fraction": 0.5, "bias_coef": 2.0,
                       "bias_ramp": 0.05, "bias_ramp_max": 1.2, "sampling": sampling})
    W_ref, T1_ref = reference_train(cfg)
    run = train(cfg)
    assert bool((T1_ref > 0).all()) and torch.equal(run.T1, T1_ref)
    torch.testing.assert_close(run.W.double(), W_ref, rtol=2e-4, atol=1e-6)


# ---------------------------------------------------------------- T1: eq. (34) on the recorded history

T1RUN = dict(d=6, d1=40, m=10, L=3, n_pairs=96, R=3, steps=40, record_every=1, sigma0=0.01, p_scale=3.0,
             progress=False)


def _t1_from_history(run, frac_needed, threshold=0.5):
    """First recorded step t >= 1 at which a fraction >= frac_needed of neurons has share >= threshold; -1 if none."""
    h = run.history
    share = h.get("coef").double().pow(2).sum(-1) / h.get("norm2").double()     # (T, R, m), eq. (34)
    steps = h.get("steps")
    out = []
    for r in range(share.shape[1]):
        ok = [int(s) for s, f in zip(steps, (share[:, r] >= threshold).double().mean(-1), strict=True)
              if s >= 1 and f >= frac_needed]
        out.append(ok[0] if ok else -1)
    return torch.tensor(out)


@pytest.mark.parametrize("frac", [0.5, 0.9])
def test_t1_is_first_step_with_half_the_weight_in_feature_span(frac):
    """run.T1 is the first step where a fraction t1_fraction of neurons has ||MM^T w||^2 >= ||w||^2 / 2 (eq. 34)."""
    run = train(SimConfig(**T1RUN, t1_fraction=frac))
    want = _t1_from_history(run, frac)
    assert bool((want > 0).all()), want                     # the run does cross 1/2
    later = _t1_from_history(run, frac, threshold=0.9)
    assert bool((later != want).all())                      # a different threshold would give other steps
    assert torch.equal(run.T1, want)


def test_t1_forced_at_t1_max_and_never_without_it():
    """A run whose share stays below 1/2 has T1 = -1, unless t1_max forces it at that step."""
    base = SimConfig(**{**T1RUN, "steps": 6, "sigma0": 0.5, "lr": 0.01})   # 6 tiny steps: share stays ~ d/d1
    run = train(base)
    assert bool((_t1_from_history(run, base.t1_fraction) < 0).all())
    assert torch.equal(run.T1, torch.full((3,), -1))
    assert torch.equal(train(base.replace(t1_max=4)).T1, torch.full((3,), 4))


def test_stage_time_counts_a_share_of_exactly_one_half():
    """metrics.stage_time: eq. (34) is '>=': a share of exactly 1/2 counts; 0.49 does not."""
    share = torch.tensor([[[0.2, 0.49, 0.3]], [[0.5, 0.49, 0.9]], [[0.6, 0.49, 0.95]]])   # (T=3, R=1, m=3)
    got = metrics.stage_time(share, torch.tensor([0, 7, 14]))
    assert got.tolist() == [[7, -1, 7]]


def test_t1_linear_matches_closed_form():
    """With one kappa for all features, share(t) = 1/2 solves d e^{2rt} = (d1-d) (1-eta lambda)^{2t}:
    t = log((d1-d)/d) / (2r - 2 log(1-eta lambda)), r = log(1 - eta lambda + eta (1-1/n) kappa)."""
    cfg = SimConfig(d=8, d1=64, lr=0.5, weight_decay=0.01, n_pairs=100, progress=False)
    kappa = torch.full((8,), 0.02, dtype=torch.float64)
    r = math.log(1 - 0.5 * 0.01 + 0.5 * (1 - 1 / 100) * 0.02)
    want = math.log((64 - 8) / 8) / (2 * r - 2 * math.log(1 - 0.5 * 0.01))
    assert theory.t1_linear(cfg, kappa) == pytest.approx(want, rel=1e-6)


# ---------------------------------------------------------------- the bias schedule by hand

BIAS = dict(d=16, d1=20, L=2, mag_lo=0.2, mag_hi=1.0, bias_coef=1.5, m=2, R=2, progress=False)


def _bias_weights():
    W = torch.zeros(2, 2, 20)
    W[:, 0, 0], W[:, 0, 1] = 3.0, 4.0          # ||w_0|| = 5
    W[:, 1, 7] = 1.0                           # ||w_1|| = 1
    return W


def test_bias_value_by_hand():
    """b = bias_coef * (E|z|/L) * sqrt(2 log d / d) * ||w||: 1.5 * (0.6/2) * 0.588705 * 5 = 1.3245863 at d = 16."""
    cfg = SimConfig(**BIAS)
    b = encoder.bias_at(cfg, _bias_weights(), 11, torch.tensor([10, 3]))
    torch.testing.assert_close(b, torch.tensor([[1.3245863, 0.2649173], [1.3245863, 0.2649173]]))


def test_bias_without_token_factor_by_hand():
    """bias_token_factor=False (the regime page's ablation): a = 1, so b = 1.5 * 0.588705 * 5 = 4.4152876."""
    cfg = SimConfig(**BIAS, bias_token_factor=False)
    b = encoder.bias_at(cfg, _bias_weights(), 11, torch.tensor([10, 3]))
    torch.testing.assert_close(b, torch.tensor([[4.4152876, 0.8830575], [4.4152876, 0.8830575]]))


def test_bias_ramp_and_cap_by_hand():
    """From T1 + 1 the bias grows by (1 + ramp) per step up to the cap: x1, x1.1, x1.21, then 1.25 for ever."""
    cfg = SimConfig(**BIAS, bias_ramp=0.1, bias_ramp_max=1.25)
    W, T1 = _bias_weights(), torch.tensor([4, 4])
    for t, factor in [(5, 1.0), (6, 1.1), (7, 1.21), (8, 1.25), (50, 1.25)]:
        b = encoder.bias_at(cfg, W, t, T1)
        torch.testing.assert_close(b[0], torch.tensor([1.3245863, 0.2649173]) * factor), t


def test_bias_factor_is_the_sampled_mean_magnitude_over_l():
    """The E|z|/L factor: b / (coef sqrt(2 log d/d) ||w||) equals the mean |z| the sampler draws, divided by L."""
    cfg = SimConfig(**{**BIAS, "p_scale": 3.0})
    _, _, zx, _ = data.sample_latents(cfg, 20000, data.generator(0, 0, data.STREAM_TRAIN))
    mags = zx[zx != 0].abs().double()
    factor = (encoder.bias_at(cfg, _bias_weights(), 3, torch.tensor([0, 0]))[0, 1]
              / (1.5 * math.sqrt(2 * math.log(16) / 16)))
    assert float(factor) == pytest.approx(float(mags.mean()) / cfg.L,
                                          abs=4 * float(mags.std()) / math.sqrt(mags.numel()) / cfg.L)


def test_bias_is_zero_before_t1_and_without_t1():
    """Lemma F.3: b = 0 in Stage 1 (t <= T1); a replicate that never reached T1 (T1 = -1) has no bias at any t."""
    cfg = SimConfig(**BIAS, bias_ramp=0.1)
    W, T1 = _bias_weights(), torch.tensor([5, -1])
    for t in range(0, 6):
        assert torch.equal(encoder.bias_at(cfg, W, t, T1), torch.zeros(2, 2)), t
    for t in (6, 7, 100):
        b = encoder.bias_at(cfg, W, t, T1)
        assert bool((b[0] > 0).all()) and torch.equal(b[1], torch.zeros(2)), t
    assert torch.equal(encoder.bias_at(cfg.replace(bias="none"), W, 100, T1), torch.zeros(2, 2))


def test_bias_is_zero_at_t1_itself():
    cfg = SimConfig(**BIAS)
    assert torch.equal(encoder.bias_at(cfg, _bias_weights(), 5, torch.tensor([5, 5])), torch.zeros(2, 2))


def test_recorded_bias_is_zero_before_t1_in_a_run():
    """In a training run the recorded bias is 0 at every step before T1 and positive from T1 + 1 on."""
    cfg = SimConfig(**{**T1RUN, "t1_fraction": 0.5})
    run = train(cfg)
    steps, bias = run.history.get("steps"), run.history.get("bias")
    T1 = _t1_from_history(run, 0.5)
    assert bool((T1 > 0).all())
    for r in range(cfg.R):
        assert bool((bias[steps < T1[r], r] == 0).all())
        assert bool((bias[steps > T1[r], r] > 0).all())


# ---------------------------------------------------------------- what a run records, and how it is assembled


@pytest.mark.parametrize("kw", [dict(), dict(sampling="fresh"), dict(prune_alpha=0.4, prune_start=2, prune_every=3),
                                dict(prune_alpha=0.5, prune_every=1000, sigma0=0.05),
                                dict(prune_alpha=0.3, prune_unit="weight", prune_backward="literal", sampling="fresh")],
                         ids=["bias-schedule", "fresh", "neuron-pruned", "mask-once", "weight-literal-fresh"])
def test_history_records_the_state_of_each_step(kw):
    """Each snapshot holds <w_i, M_j>, ||w_i||^2, b_i, the InfoNCE of the forward (masked) model and its mean
    positive softmax l'_p, at the weights of that step; the last one is taken after the last step."""
    cfg = SimConfig(**{**LOOP, "steps": 12, "sigma0": 0.01, "t1_fraction": 0.5, "record_every": 1, **kw})
    traj = []
    reference_train(cfg, traj)
    run = train(cfg)
    h = run.history
    assert h.steps == list(range(cfg.steps + 1))
    M = run.M.double()
    for t, W, b, keep, UX, UY in traj:
        Wm = W if keep is None else W * (keep.unsqueeze(-1) if keep.dim() == 2 else keep)
        lg = ref_h(Wm, UX, b) @ ref_h(Wm, UY, b).transpose(-1, -2) / cfg.tau
        loss = -(torch.diagonal(lg, dim1=-2, dim2=-1) - torch.logsumexp(lg, -1)).mean(-1)
        pos = torch.softmax(lg, -1).diagonal(dim1=-2, dim2=-1).mean(-1)
        close = dict(rtol=2e-4, atol=1e-6)
        torch.testing.assert_close(h.coef[t].double(), W @ M, **close)
        torch.testing.assert_close(h.norm2[t].double(), W.pow(2).sum(-1), **close)
        torch.testing.assert_close(h.bias[t].double(), b, **close)
        torch.testing.assert_close(h.loss[t].double(), loss, **close)
        torch.testing.assert_close(h.pos_prob[t].double(), pos, **close)
    assert bool((h.get("bias")[-1] > 0).all()) or "prune_alpha" in kw   # the schedule run reached T1
    torch.testing.assert_close(run.pairs.UX.double(), traj[-1][4])       # "fresh": run.pairs are the last pairs drawn
    if kw.get("prune_every") == 1000:   # the final snapshot's mask comes from the final weights, not the step-0 mask
        assert not torch.equal(traj[-1][3], traj[0][3])


def test_record_every_counts_from_the_start_of_each_leg():
    """Snapshots every record_every steps from the first step of the run (or of the resumed leg), plus the last."""
    cfg = SimConfig(**{**LOOP, "steps": 17, "record_every": 5})
    assert train(cfg).history.steps == [0, 5, 10, 15, 17]
    half = train(cfg.replace(steps=7))
    assert train(cfg, resume=half).history.steps == [0, 5, 7, 12, 17]


def test_chunked_run_equals_one_chunk_in_every_field():
    cfg = SimConfig(**{**LOOP, "R": 3, "steps": 8, "record_every": 3, "t1_fraction": 0.5, "sigma0": 0.01})
    one, three = train(cfg), train(cfg.replace(chunk=1))
    assert three.cfg == cfg.replace(chunk=1) and three.replicates == [0, 1, 2] and three.step == 8
    for name in ("M", "W0", "T1"):
        assert torch.equal(getattr(one, name), getattr(three, name)), name
    torch.testing.assert_close(one.W, three.W, rtol=1e-5, atol=1e-7)
    for f in ("UX", "UY", "S", "ZX", "ZY"):
        assert torch.equal(getattr(one.pairs, f), getattr(three.pairs, f)), f
    assert one.history.steps == three.history.steps == [0, 3, 6, 8]
    for name in ("coef", "norm2", "bias", "loss", "pos_prob"):
        torch.testing.assert_close(one.history.get(name), three.history.get(name), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("chunk,sampling", [(0, "fixed"), (1, "fixed"), (0, "fresh"), (1, "fresh")])
def test_resume_continues_from_the_given_state(chunk, sampling):
    """A resumed run starts from the checkpoint's weights and T1, and from its pairs ("fixed") or the stream's pairs
    of steps 10 and 11 ("fresh", sub-streams 11 and 12): two more steps of the reference gradient."""
    first = SimConfig(**{**LOOP, "steps": 10, "lr": 0.1, "bias": "none", "chunk": chunk, "t1_max": 3,
                         "sampling": sampling})
    half = train(first)
    cfg = first.replace(steps=12, lr=0.5)                      # a different rate: retraining from 0 would not match
    out = train(cfg, resume=half)
    W, b = half.W.double(), torch.zeros(cfg.R, cfg.m, dtype=torch.float64)
    for t in (10, 11):
        P = half.pairs if sampling == "fixed" else data.make_pairs(cfg, half.M, half.replicates, extra=t + 1)
        W = (1 - 0.5 * cfg.weight_decay) * W - 0.5 * ref_grad(W, b, P.UX.double(), P.UY.double(), cfg)
    torch.testing.assert_close(out.W.double(), W, rtol=2e-4, atol=1e-6)
    assert torch.equal(half.T1, torch.full((2,), 3))            # forced by t1_max, kept by the resumed leg
    assert torch.equal(out.W0, half.W0) and torch.equal(out.M, half.M) and torch.equal(out.T1, half.T1)
    if sampling == "fixed":
        for f in ("UX", "UY", "S", "ZX", "ZY"):
            assert torch.equal(getattr(out.pairs, f), getattr(half.pairs, f)), f
    assert out.replicates == half.replicates and out.cfg == cfg and out.step == 12


def test_resuming_a_finished_run_changes_nothing():
    cfg = SimConfig(**{**LOOP, "steps": 6})
    full = train(cfg)
    again = train(cfg, resume=full)
    assert torch.equal(again.W, full.W) and again.history.steps == full.history.steps


def test_t1_max_of_one_forces_t1_after_the_first_step():
    base = SimConfig(**{**T1RUN, "steps": 4, "sigma0": 0.5, "lr": 0.01, "t1_max": 1})
    assert torch.equal(train(base).T1, torch.full((3,), 1))


def test_run_features_are_eq4_with_the_current_bias():
    """Run.features: f(X), f(Y) = h(X), h(Y) of eq. (4) at the final weights, with the bias of the final step."""
    cfg = SimConfig(**{**T1RUN, "t1_fraction": 0.5, "steps": 12})
    run = train(cfg)
    assert bool((run.T1 > 0).all())
    b = ref_bias(cfg, run.W.double(), cfg.steps, run.T1)
    assert bool((b > 0).all())
    FX, FY = run.features(run.pairs)
    torch.testing.assert_close(FX.double(), ref_h(run.W.double(), run.pairs.UX.double(), b), rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(FY.double(), ref_h(run.W.double(), run.pairs.UY.double(), b), rtol=1e-4, atol=1e-6)


def test_progress_bar_only_when_asked(capfd):
    cfg = SimConfig(**{**LOOP, "steps": 3})
    train(cfg)
    assert capfd.readouterr().err == ""
    train(cfg.replace(progress=True))
    err = capfd.readouterr().err
    assert "train:" in err and "/3" in err


def test_reference_masks_by_hand():
    """The reference mask itself: norms (5, 1, 2, 1), alpha = 0.5 drop neurons 1 and 3 (tie: both); 3 of 8 entries."""
    W = torch.tensor([[[3.0, 4.0], [1.0, 0.0], [0.0, 2.0], [0.0, -1.0]]])
    assert ref_mask(W, 0.5, "neuron").tolist() == [[1.0, 0.0, 1.0, 0.0]]
    assert ref_mask(W, 0.375, "weight").tolist() == [[[1.0, 1.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]]]   # 3 zeros


def test_a_single_neuron_is_never_pruned():
    """alpha < 1 never removes every unit: with m = 1 and alpha = 0.6 the one neuron stays."""
    from imbalanced_cl.sim import prune
    W = torch.randn(2, 1, 4)
    assert torch.equal(prune.neuron_mask(W, 0.6), torch.ones(2, 1))


def test_embed_without_bias_is_the_linear_token_sum():
    """embed(W, U) with no bias: h_i(X) = sum_r <w_i, u^(r)> (eq. 4 at b = 0), plus the pre-activations."""
    g = torch.Generator().manual_seed(1)
    W = torch.randn(2, 3, 5, generator=g, dtype=torch.float64)
    U = torch.randn(2, 4, 2, 5, generator=g, dtype=torch.float64)
    h, P = encoder.embed(W, U)
    torch.testing.assert_close(h, ref_h(W, U, torch.zeros(2, 3, dtype=torch.float64)))
    torch.testing.assert_close(P[1, 2, 1, 0], W[1, 0] @ U[1, 2, 1])
    hb, _ = encoder.embed(W, U, torch.full((2, 3), 0.4, dtype=torch.float64))
    torch.testing.assert_close(hb, ref_h(W, U, torch.full((2, 3), 0.4, dtype=torch.float64)))


def test_runs_and_pairs_move_between_devices():
    """Run.to / Pairs.to / History.to put every tensor on the device asked for (the meta device needs no GPU)."""
    run = train(SimConfig(**{**LOOP, "steps": 3}))
    moved = run.to("meta")
    tensors = [moved.M, moved.W, moved.T1, moved.W0] + [getattr(moved.pairs, f) for f in ("UX", "UY", "S", "ZX", "ZY")]
    tensors += [v for name in ("coef", "norm2", "bias", "loss", "pos_prob") for v in getattr(moved.history, name)]
    assert all(t.device.type == "meta" for t in tensors)
    assert moved.history.steps == run.history.steps and moved.cfg == run.cfg


def test_heldout_pairs_come_from_the_test_stream():
    """Run.heldout: n pairs (default K) from the test stream; sub-streams differ; the training pairs are not among
    them."""
    run = train(SimConfig(**{**LOOP, "steps": 2}))
    h = run.heldout()
    assert h.UX.shape == run.pairs.UX.shape and run.heldout(n=7).UX.shape[1] == 7
    assert torch.equal(h.UX, run.heldout(extra=0).UX) and not torch.allclose(h.UX, run.heldout(extra=1).UX)
    assert not torch.allclose(h.UX, run.pairs.UX)


def test_a_callers_sampler_supplies_the_pairs_of_each_step():
    """train(sampler=...): step t trains on sampler(t, replicates), e.g. the test stream's sub-stream 50 + t."""
    cfg = SimConfig(**{**LOOP, "steps": 6, "bias": "none", "R": 3, "chunk": 2})

    def sampler(t, reps):
        M = data.make_dictionaries(cfg, reps)
        return data.make_pairs(cfg, M, reps, purpose=data.STREAM_TEST, extra=50 + t)

    W_ref, _ = reference_train(cfg, sampler=sampler)
    run = train(cfg, sampler=sampler)
    torch.testing.assert_close(run.W.double(), W_ref, rtol=2e-4, atol=1e-6)
    assert not torch.allclose(run.W, train(cfg).W)
