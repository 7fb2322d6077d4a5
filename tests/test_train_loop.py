"""The training loop's machinery around the step: the bias onset, the stage clock that never waits on a GPU, the TF32
flag restored on every exit path, and chunks that shrink when a GPU runs out of memory.

Oracles: closed forms of eq. (33) and the workshop's T1 worked out by hand, the bias schedule read off the recorded
history, the eager clock (which reads every crossing at once) against the lazy one, and whole runs of the same code.
"""
from __future__ import annotations

import math

import pytest
import torch

from imbalanced_cl.sim import memory as MEM
from imbalanced_cl.sim import train as TR
from imbalanced_cl.sim.config import SimConfig
from imbalanced_cl.sim.encoder import bias_at
from imbalanced_cl.validate import ParameterError

SMALL = dict(d=6, d1=30, m=8, L=3, n_pairs=64, R=3, steps=30, record_every=1, sigma0=0.01, p_scale=3.0,
             t1_fraction=0.5, bias_coef=2.0, progress=False)


def test_onset_steps_are_eq33_and_the_workshop_t1_with_unit_constants():
    cfg = SimConfig(d=20, d1=100, lr=0.5)
    by_hand = lambda size: math.ceil(size * math.log(20) / (0.5 * math.log(math.log(20))))   # noqa: E731
    assert cfg.t1_onset_step == -1
    assert cfg.replace(bias_onset="eq33").t1_onset_step == by_hand(100) == 547     # 299.57 / 0.5486
    assert cfg.replace(bias_onset="workshop").t1_onset_step == by_hand(20) == 110      # 59.91 / 0.5486


def test_a_fixed_onset_switches_the_bias_on_after_its_step_whatever_t1_says():
    cfg = SimConfig(d=20, d1=20, lr=20.0, weight_decay=0.0, bias_onset="workshop")    # onset = ceil(59.91 / 21.94) = 3
    onset = cfg.t1_onset_step
    W = torch.ones(2, 3, 20)
    never = torch.full((2,), -1, dtype=torch.long)
    assert onset == 3
    assert bool((bias_at(cfg, W, onset, never) == 0).all())        # b = 0 up to and including T1 (Lemma F.3)
    assert bool((bias_at(cfg, W, onset + 1, never) > 0).all())     # ...and on after it, with no crossing measured


def test_a_run_with_a_fixed_onset_records_zero_bias_until_then_and_still_measures_the_crossing():
    base = SimConfig(**SMALL)
    crossing = TR.train(base)
    cfg = base.replace(lr=2.0)
    fixed = TR.train(cfg.replace(bias_onset="workshop"))
    onset = cfg.replace(bias_onset="workshop").t1_onset_step
    steps = fixed.history.get("steps")
    bias = fixed.history.get("bias")
    assert 0 < onset < cfg.steps - 1
    assert bool((bias[steps <= onset] == 0).all()) and bool((bias[steps > onset] > 0).all())
    assert bool((crossing.T1 > 0).all())                            # T1 by eq. (34) is still measured
    assert bool((fixed.T1 != -1).all())


def test_the_lazy_clock_gives_the_same_t1_and_a_run_within_rounding(monkeypatch):
    """The clock a GPU uses reads each crossing two steps late; the bias starts at T1 + 1, so nothing changes but
    one step's linear path (b = 0 there either way): the same T1, the same weights within float32 rounding."""
    cfg = SimConfig(**SMALL)
    eager = TR.train(cfg)
    monkeypatch.setattr(TR.StageClock, "LAZY_DEVICES", ("cpu", "cuda"))
    lazy = TR.train(cfg)
    assert bool((eager.T1 > 0).all()) and bool((eager.T1 < cfg.steps - 3).all())
    assert torch.equal(lazy.T1, eager.T1)
    torch.testing.assert_close(lazy.W, eager.W, rtol=1e-4, atol=1e-6)
    torch.testing.assert_close(lazy.history.get("bias"), eager.history.get("bias"), rtol=1e-4, atol=1e-7)


def test_the_lazy_clock_never_takes_the_linear_path_once_a_bias_is_on(monkeypatch):
    """Hand-made crossing: T1 = 5 after step 4; the bias is on from step 6, so linear(t) must be False from t = 6."""
    monkeypatch.setattr(TR.StageClock, "LAZY_DEVICES", ("cpu",))
    cfg = SimConfig(d=4, d1=4, m=2, t1_fraction=1.0)
    M = torch.eye(4)[:, :4]
    clock = TR.StageClock(cfg, torch.full((1,), -1, dtype=torch.long))
    off, on = torch.zeros(1, 2, 4), torch.ones(1, 2, 4)
    seen = []
    for t in range(10):
        seen.append(clock.linear(t))
        W = on if t >= 4 else off + torch.tensor([1.0, 0, 0, 0]) * 0    # zero weights: share 0 (clamped norm)
        clock.after(W, M, t)
    assert int(clock.T1) == 5
    assert seen[:6] == [True] * 6 and not any(seen[6:])
    assert all(float(bias_at(cfg, on, t, clock.T1).abs().sum()) == 0 for t in range(6))


def test_tf32_flag_is_restored_when_training_is_interrupted():
    before = torch.backends.cuda.matmul.allow_tf32
    seen = []

    def sampler(t, reps):
        seen.append(torch.backends.cuda.matmul.allow_tf32)
        raise KeyboardInterrupt

    cfg = SimConfig(**{**SMALL, "tf32": not before})
    with pytest.raises(KeyboardInterrupt):
        TR.train(cfg, sampler=sampler)
    assert seen == [not before]                                     # the run itself saw the flag it asked for
    assert torch.backends.cuda.matmul.allow_tf32 == before          # ...and left it as it found it


def test_a_chunk_that_does_not_fit_is_halved_and_the_numbers_do_not_change(monkeypatch, capsys):
    cfg = SimConfig(**{**SMALL, "R": 4, "steps": 8})
    halves = TR.train(cfg.replace(chunk=2))     # what the retry must give: the same code at two replicates a chunk
    real = TR._train_chunks
    sizes = []

    def tight(cfg_, reps, resume, masker, sampler, start, size):
        sizes.append(size)
        if size > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (test)")
        return real(cfg_, reps, resume, masker, sampler, start, size)

    monkeypatch.setattr(TR, "_train_chunks", tight)
    run = TR.train(cfg.replace(chunk=4))
    assert sizes == [4, 2]
    assert torch.equal(run.W, halves.W) and torch.equal(run.T1, halves.T1)
    err = capsys.readouterr().err
    assert err.count("did not fit") == 1 and "2 replicates per chunk" in err


def test_a_gpu_chunk_holds_every_replicate_of_notebook_04_at_paper_size(monkeypatch):
    """On an 80 GB GPU with 40 GB free, the paper size of notebook 04 (R = 16) trains in one chunk, not one replicate
    per chunk as the CPU's 64 MiB budget would have it."""
    cfg = SimConfig(R=16, d=50, d1=250, m=200, n_pairs=2048)
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda device=None: (40 * 2 ** 30, 80 * 2 ** 30))
    assert MEM.auto_chunk(cfg, "cpu") == 1
    assert MEM.auto_chunk(cfg, "cuda") >= 16


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_device_cuda_without_cuda_is_refused_before_any_compute():
    with pytest.raises(ParameterError, match="device='cuda' is invalid here: no CUDA device"):
        SimConfig(device="cuda")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_the_lazy_clock_finds_the_cpus_t1_and_weights():
    """The GPU loop (lazy clock, pairs drawn on the CPU and copied) against the CPU loop: the same T1 by eq. (34) and
    the same weights within float32 rounding, through the bias onset."""
    cfg = SimConfig(**SMALL, data_device="cpu")
    cpu, gpu = TR.train(cfg.replace(device="cpu")), TR.train(cfg.replace(device="cuda"))
    assert bool((cpu.T1 > 0).all()) and torch.equal(gpu.T1, cpu.T1)
    torch.testing.assert_close(gpu.W, cpu.W, rtol=1e-3, atol=1e-6)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_the_default_draws_there_and_repeats_exactly():
    cfg = SimConfig(**SMALL, device="cuda")
    a, b = TR.train(cfg), TR.train(cfg)
    assert torch.equal(a.W, b.W) and torch.equal(a.T1, b.T1)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_on_a_gpu_chunks_draw_the_same_pairs_and_the_cpus_batched_uniforms(monkeypatch):
    """Issue 48 on CUDA: chunk 1 and chunk R draw the very same raw numbers, hence the same supports and latents; the
    pairs and weights agree within float32 rounding, since the views' batched products (x = M z + xi) have another
    width and cuBLAS may round them otherwise (an H200 on 2026-11-28: UX 6e-8 apart, W 3e-8, T1 equal). The batched
    draw's uniforms are integer work and one exact conversion, so the CPU's batched draw (forced) gives the very same
    uniforms, and its normals within float32 rounding (log, cos and sin may round otherwise there)."""
    from imbalanced_cl.sim import data
    cfg = SimConfig(**{**SMALL, "R": 4}, device="cuda")
    plan = data.draw_plan(cfg, cfg.n_pairs)
    wide, alone = data.raw_draws(0, plan, [0, 1, 2, 3], 2, 1, "cuda"), data.raw_draws(0, plan, [2], 2, 1, "cuda")
    assert all(torch.equal(a[2:3], b) for a, b in zip(wide, alone, strict=True))
    whole, single = TR.train(cfg.replace(chunk=4)), TR.train(cfg.replace(chunk=1))
    assert torch.equal(whole.pairs.S, single.pairs.S) and torch.equal(whole.pairs.ZX, single.pairs.ZX)
    assert torch.equal(whole.T1, single.T1)
    torch.testing.assert_close(single.pairs.UX, whole.pairs.UX, rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(single.W, whole.W, rtol=1e-5, atol=1e-7)
    plan = [("u", (3, 1001)), ("n", (1001,))]
    gpu = [t.cpu() for t in data.raw_draws(0, plan, [0, 5], data.STREAM_TRAIN, 9, "cuda")]
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cpu = data.raw_draws(0, plan, [0, 5], data.STREAM_TRAIN, 9, "cpu")
    assert torch.equal(gpu[0], cpu[0])
    torch.testing.assert_close(gpu[1], cpu[1], rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------- a GPU draws a batch in one call

def test_a_batch_stream_repeats_itself_and_follows_the_papers_law(monkeypatch):
    """The GPU's way of drawing (one batched Philox call), run on the CPU: the same batch and step give the same pairs,
    another step other pairs, and each feature sits in a sample's support with probability q_j = 1 - (1 - p_j)^L
    (Def. 3.1), within four binomial standard errors."""
    from imbalanced_cl.sim import data
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cfg = SimConfig(d=8, d1=24, L=3, n_pairs=4000, p_scale=3.0)
    M = data.make_dictionaries(cfg, [0, 1, 2])
    a, b = data.make_pairs(cfg, M, [0, 1, 2], extra=5), data.make_pairs(cfg, M, [0, 1, 2], extra=5)
    c = data.make_pairs(cfg, M, [0, 1, 2], extra=6)
    assert torch.equal(a.UX, b.UX) and torch.equal(a.S, b.S) and not torch.equal(a.UX, c.UX)
    assert not torch.equal(a.S[0], a.S[1])                          # replicates of a batch are not copies
    q = data.sample_prob(cfg).float()
    freq = a.S.float().mean(dim=(0, 1))
    se = (q * (1 - q) / (3 * cfg.n_pairs)).sqrt()
    assert bool(((freq - q).abs() < 4 * se).all()), (freq, q)
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cuda",))           # the CPU's own streams: other numbers
    assert not torch.equal(data.make_pairs(cfg, M, [0, 1, 2], extra=5).UX, a.UX)


def test_a_batched_draw_gives_each_replicate_its_own_numbers_whatever_its_batch(monkeypatch):
    """Issue 48: the GPU's batched draw, forced on the CPU, keys a replicate's numbers to (seed, replicate, purpose,
    extra) alone: replicate r drawn alone, inside [0, 1, 2, 3] or inside [3, 1] reads the very same numbers."""
    from imbalanced_cl.sim import data
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cfg = SimConfig(**SMALL)
    plan = data.draw_plan(cfg, 20)
    whole = data.raw_draws(cfg.seed, plan, [0, 1, 2, 3], data.STREAM_TRAIN, 5, "cpu")
    alone = [data.raw_draws(cfg.seed, plan, [r], data.STREAM_TRAIN, 5, "cpu") for r in range(4)]
    mixed = data.raw_draws(cfg.seed, plan, [3, 1], data.STREAM_TRAIN, 5, "cpu")
    for k in range(len(plan)):
        for r in range(4):
            assert torch.equal(whole[k][r], alone[r][k][0]), (k, r)
        assert torch.equal(mixed[k][0], whole[k][3]) and torch.equal(mixed[k][1], whole[k][1]), k
    assert not torch.equal(whole[0][0], whole[0][1])                # replicates of a batch are not copies


@pytest.mark.parametrize("chunk", [1, 2])
def test_batched_draws_train_the_same_numbers_at_chunk_1_2_and_r(monkeypatch, chunk):
    """Issue 48: under the GPU's batched draw (forced on the CPU) a run in chunks of 1 or 2 replicates sees the very
    same pairs as one chunk of all R = 4, and reaches the same weights and T1 (within float32 rounding: only the
    batch width of the products differs). On the code before issue 48 W differed by up to 2e-3."""
    from imbalanced_cl.sim import data
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cfg = SimConfig(**{**SMALL, "R": 4})
    whole, part = TR.train(cfg.replace(chunk=4)), TR.train(cfg.replace(chunk=chunk))
    assert torch.equal(part.pairs.UX, whole.pairs.UX) and torch.equal(part.pairs.S, whole.pairs.S)
    assert torch.equal(part.heldout(20).UY, whole.heldout(20).UY)
    assert torch.equal(part.T1, whole.T1) and bool((whole.T1 > 0).all())
    torch.testing.assert_close(part.W, whole.W, rtol=1e-5, atol=1e-7)


def test_a_halved_chunk_keeps_the_numbers_under_batched_draws(monkeypatch, capsys):
    """A chunk that does not fit (an out-of-memory error, simulated) is halved with one line, and under the GPU's
    batched draw the run gives the numbers the unhalved chunk gives: the same pairs, T1 and weights within rounding;
    the provenance names the chunk that ran."""
    from imbalanced_cl.sim import data
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cfg = SimConfig(**{**SMALL, "R": 4, "steps": 12})
    fits = TR.train(cfg.replace(chunk=4))
    real = TR._train_chunks

    def tight(cfg_, reps, resume, masker, sampler, start, size):
        if size > 2:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory (test)")
        return real(cfg_, reps, resume, masker, sampler, start, size)

    monkeypatch.setattr(TR, "_train_chunks", tight)
    monkeypatch.setattr(TR, "_CHUNKS_USED", set())
    run = TR.train(cfg.replace(chunk=4))
    assert capsys.readouterr().err.count("did not fit") == 1
    assert torch.equal(run.pairs.UX, fits.pairs.UX) and torch.equal(run.T1, fits.T1)
    torch.testing.assert_close(run.W, fits.W, rtol=1e-5, atol=1e-7)
    from imbalanced_cl.book.records import provenance
    assert TR.chunks_used() == [2] and provenance.record({})["chunks"] == [2]     # the chunk that ran, not the asked


def test_branches_and_controls_still_share_their_pairs_under_batch_streams(monkeypatch):
    """Resumed from one checkpoint with the same replicates, a pruned branch and its control train on the same pairs
    (step t's pairs depend on the seed, the replicate list and t): so an unpruned 'branch' equals the control."""
    from imbalanced_cl.sim import data
    monkeypatch.setattr(data, "BATCHED_DRAWS", ("cpu", "cuda"))
    cfg = SimConfig(**{**SMALL, "steps": 6})
    base = TR.train(cfg)
    longer = cfg.replace(steps=12)
    a, b = TR.train(longer, resume=base), TR.train(longer, resume=base)
    assert torch.equal(a.W, b.W) and torch.equal(a.pairs.UX, b.pairs.UX)
    assert not torch.equal(TR.train(longer.replace(prune_alpha=0.25, prune_start=6), resume=base).W, a.W)
