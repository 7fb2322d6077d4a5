"""Tests of imbalanced_cl.lt: LT counts, Δ20 and groups, probe, SDCLR masks, ratio 0 = SimCLR, pipeline, errors."""
import math

import numpy as np
import pytest
import torch

from imbalanced_cl.validate import ParameterError
from imbalanced_cl.lt import datasets as D
from imbalanced_cl.lt import experiment as E
from imbalanced_cl.lt import verdicts as LV
from imbalanced_cl.lt import probe as P
from imbalanced_cl.lt import sdclr
from imbalanced_cl.lt.config import LTConfig
from imbalanced_cl.lt.resnet import ResNet18, masked_convs
from imbalanced_cl.lt.simclr import SimCLRNet, nt_xent


def test_lt_counts_cifar10_rho100_exact():
    counts = D.long_tailed_counts(4500, 100, 10)
    assert counts == [4500, 2697, 1617, 969, 581, 348, 208, 125, 75, 45]
    assert sum(counts) == 11165
    # every count is floor(n_max * rho^(-c/(C-1))) evaluated exactly with fractions of powers
    for c, n in enumerate(counts):
        x = 4500 * 100 ** (-c / 9)
        assert n == math.floor(x + 1e-9) and n <= x + 1e-9 < n + 1


def test_lt_indices_follow_counts_and_seed():
    labels = np.repeat(np.arange(10), 5000)
    a = D.long_tailed_indices(labels, 4500, 100, seed=0)
    b = D.long_tailed_indices(labels, 4500, 100, seed=0)
    c = D.long_tailed_indices(labels, 4500, 100, seed=1)
    assert np.bincount(labels[a]).tolist() == D.long_tailed_counts(4500, 100, 10)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    with pytest.raises(ValueError, match="class 0 has 5000"):
        D.long_tailed_indices(labels, 6000, 10, seed=0)


def test_delta20_and_groups_hand_made():
    counts = [10, 500, 50, 5, 1000, 20, 200, 2, 100, 1]
    acc = [40, 80, 60, 35, 90, 55, 70, 30, 65, 10]
    # head (top 20% by frequency) = classes 4, 1 -> 85; tail = classes 9, 7 -> 20
    assert P.delta20(acc, counts) == pytest.approx(65.0)
    thirds = P.group_accuracy(acc, counts, "thirds")      # order 4,1,6,8 | 2,5,0 | 3,7,9
    assert thirds["many"] == pytest.approx((90 + 80 + 70 + 65) / 4)
    assert thirds["medium"] == pytest.approx((60 + 55 + 40) / 3)
    assert thirds["few"] == pytest.approx((35 + 30 + 10) / 3)
    thr = P.group_accuracy(acc, counts, "thresholds")     # >100: 1,4,6; 20..100: 2,5,8; <20: 0,3,7,9
    assert thr["many"] == pytest.approx((80 + 90 + 70) / 3)
    assert thr["medium"] == pytest.approx((60 + 55 + 65) / 3)
    assert thr["few"] == pytest.approx((40 + 35 + 30 + 10) / 4)
    m = P.evaluate([0, 0, 1, 2, 2, 2], [0, 1, 1, 2, 2, 0], [3, 2, 1])
    assert m["acc"] == pytest.approx(100 * 4 / 6)
    assert m["per_class"] == pytest.approx([50.0, 50.0, 100.0])


def test_probe_separable_features():
    g = torch.Generator().manual_seed(0)
    centres = 6.0 * torch.randn(5, 20, generator=g)
    y = torch.arange(5).repeat_interleave(60)
    x = centres[y] + torch.randn(300, 20, generator=g)
    yt = torch.arange(5).repeat_interleave(40)
    xt = centres[yt] + torch.randn(200, 20, generator=g)
    pred = P.linear_probe(x, y.numpy(), xt, num_classes=5)
    assert np.mean(pred == yt.numpy()) > 0.97
    # and it is not trivially right: with shuffled train labels it is near chance
    pred_bad = P.linear_probe(x, y[torch.randperm(300, generator=g)].numpy(), xt, num_classes=5)
    assert np.mean(pred_bad == yt.numpy()) < 0.6


@pytest.mark.parametrize("ratio", [0.9, 0.37])
def test_sdclr_mask_exact_fraction_one_global_threshold(ratio):
    torch.manual_seed(0)
    net = ResNet18(width=4)
    info = sdclr.global_magnitude_masks(net, ratio)
    convs = masked_convs(net)
    total = sum(c.weight.numel() for c in convs)
    kept = sum(int(c.mask.sum()) for c in convs)
    assert info["total"] == total and kept == info["kept"] == total - round(ratio * total)
    kept_w = torch.cat([c.weight.detach().abs()[c.mask.bool()] for c in convs])
    pruned_w = torch.cat([c.weight.detach().abs()[~c.mask.bool()] for c in convs])
    assert pruned_w.max() <= kept_w.min()                 # one threshold serves every layer
    fractions = [float(c.mask.mean()) for c in convs]
    assert max(fractions) - min(fractions) > 0.05          # global, not the same ratio per layer


def _loss_and_grads(method, ratio, x1, x2):
    torch.manual_seed(0)
    net = SimCLRNet(width=4, in_channels=3, proj_dim=16)
    if method != "simclr":
        sdclr.global_magnitude_masks(net.backbone, ratio)
    z1, z2 = net(x1, x2, sdclr.BRANCH_MODES[method])
    loss = nt_xent(z1, z2, 0.2)
    loss.backward()
    return float(loss.detach()), [p.grad.clone() for p in net.parameters()], net


def test_pruning_ratio_zero_is_simclr():
    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(8, 3, 16, 16, generator=g), torch.randn(8, 3, 16, 16, generator=g)
    l0, g0, _ = _loss_and_grads("simclr", 0.0, x1, x2)
    for method in ("sdclr", "alg1"):
        l, gr, _ = _loss_and_grads(method, 0.0, x1, x2)
        assert l == pytest.approx(l0, rel=1e-6, abs=1e-7)
        for a, b in zip(gr, g0, strict=True):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-7)
    # with a real ratio the loss changes, so the comparison above could fail
    l9, _, _ = _loss_and_grads("sdclr", 0.9, x1, x2)
    assert abs(l9 - l0) > 1e-4


def test_pruning_ratio_zero_is_simclr_with_dual_bn():
    """SDCLR's separate BatchNorms for the pruned branch: same loss and conv gradients as SimCLR at ratio 0, and
    the BN gradients of the two copies add up to SimCLR's."""
    g = torch.Generator().manual_seed(1)
    x1, x2 = torch.randn(8, 3, 16, 16, generator=g), torch.randn(8, 3, 16, 16, generator=g)
    l0, _, ref = _loss_and_grads("simclr", 0.0, x1, x2)
    torch.manual_seed(0)
    net = SimCLRNet(width=4, in_channels=3, proj_dim=16, dual_bn=True)
    sdclr.global_magnitude_masks(net.backbone, 0.0)
    before = net.backbone.stem[1].bns[0].running_mean.clone()
    z1, z2 = net(x1, x2, sdclr.BRANCH_MODES["sdclr"])
    loss = nt_xent(z1, z2, 0.2)
    loss.backward()
    assert float(loss.detach()) == pytest.approx(l0, rel=1e-6, abs=1e-7)
    for a, b in zip(masked_convs(net.backbone), masked_convs(ref.backbone), strict=True):
        torch.testing.assert_close(a.weight.grad, b.weight.grad, rtol=1e-5, atol=1e-7)
    bn2, bn1 = net.backbone.stem[1], ref.backbone.stem[1]
    torch.testing.assert_close(bn2.bns[0].weight.grad + bn2.bns[1].weight.grad, bn1.bns[0].weight.grad,
                               rtol=1e-5, atol=1e-7)
    # the dense BN saw only view 1; the pruned copy only view 2
    assert not torch.allclose(bn2.bns[0].running_mean, bn1.bns[0].running_mean)
    assert not torch.allclose(bn2.bns[0].running_mean, before)


def test_alg1_updates_pruned_weights_sdclr_branch_does_not():
    g = torch.Generator().manual_seed(2)
    x1, x2 = torch.randn(8, 3, 16, 16, generator=g), torch.randn(8, 3, 16, 16, generator=g)
    _, _, net = _loss_and_grads("alg1", 0.9, x1, x2)
    conv = masked_convs(net.backbone)[3]
    assert conv.weight.grad[~conv.mask.bool()].abs().sum() > 0   # released mask: pruned weights get gradient
    # the SDCLR masked branch alone gives pruned weights no gradient
    torch.manual_seed(0)
    net2 = SimCLRNet(width=4, in_channels=3, proj_dim=16)
    sdclr.global_magnitude_masks(net2.backbone, 0.9)
    z1, z2 = net2(x1, x2, ("masked", "masked"))
    nt_xent(z1, z2, 0.2).backward()
    c2 = masked_convs(net2.backbone)[3]
    assert c2.weight.grad[~c2.mask.bool()].abs().sum() == 0


def test_nt_xent_matches_naive_formula():
    g = torch.Generator().manual_seed(3)
    z1, z2 = torch.randn(5, 7, generator=g), torch.randn(5, 7, generator=g)
    t = 0.3
    z = torch.nn.functional.normalize(torch.cat([z1, z2]), dim=1)
    n, total = 5, 0.0
    for i in range(2 * n):
        j = (i + n) % (2 * n)
        num = torch.exp(z[i] @ z[j] / t)
        den = sum(torch.exp(z[i] @ z[k] / t) for k in range(2 * n) if k != i)
        total += -torch.log(num / den)
    assert float(nt_xent(z1, z2, t)) == pytest.approx(float(total / (2 * n)), rel=1e-5)


def test_pipeline_digits_lt():
    # compile off: test_lt_speed.py checks the compiled step; here the pipeline's bookkeeping is under test
    cfg = LTConfig(dataset="digits", rhos=(10,), n_max=0, seeds=(0,), width=4, epochs=2, batch_size=64,
                   probe_per_class=0, threads=1, workers=1, progress=False, compile=False)
    rows = E.run_grid(cfg, log=lambda *_: None)
    assert [r["method"] for r in rows] == ["random", "simclr", "sdclr", "alg1", "alg1_dense"]
    for r in rows:
        assert 0 <= r["acc"] <= 100 and math.isfinite(r["delta20"])
        assert r["train_counts"] == D.long_tailed_counts(E.effective_n_max(cfg, E.load_data(cfg)), 10, 10)
    assert rows[2]["kept"][-1] == pytest.approx(0.1, abs=1e-3)    # SDCLR kept 10% of conv weights
    verdicts = LV.verdict_rows(rows, "digits")       # the baseline premise for the one ρ, then the four gain rows
    assert [r.kind for r in verdicts] == ["premise"] + ["paper"] * 4
    assert all(r["precision"] == "fp32" and not r["compiled"] for r in rows)


def test_checkpoint_resume(tmp_path):
    from imbalanced_cl.lt.simclr import pretrain
    from imbalanced_cl.lt.speed import StepOptions
    data = D.load("digits")
    lt = data.train.subset(D.long_tailed_indices(data.train.labels, 100, 10, seed=0))
    cfg = LTConfig(dataset="digits", width=2, epochs=1, batch_size=64, lr=0.1, progress=False)
    run = (lt, "sdclr", 0, (data.mean, data.std))
    kw = dict(ckpt_path=tmp_path / "run.pt", opts=StepOptions(compile=False))
    def at(epochs):
        return (run[0], cfg.replace(epochs=epochs), *run[1:])
    first = pretrain(*at(1), **kw)
    assert (tmp_path / "run.pt").exists() and first.resumed_from == 0 and len(first.losses) == 1
    again = pretrain(*at(2), **kw)                        # resumes after epoch 1 and trains one more
    assert again.resumed_from == 1 and len(again.losses) == 2 and again.losses[0] == first.losses[0]
    done = pretrain(*at(2), **kw)                         # nothing left to train: same weights
    for a, b in zip(done.net.state_dict().values(), again.net.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b)


def test_missing_dataset_gives_clear_error(tmp_path):
    with pytest.raises(D.DatasetMissing) as e:
        D.load("cifar100", data_dir=tmp_path, download=False)
    msg = str(e.value)
    assert str(tmp_path) in msg and "cifar-100-python.tar.gz" in msg
    with pytest.raises(D.DatasetMissing) as e:
        D.load("cifar10", data_dir=tmp_path, download=False, cifar10_source="original")
    assert str(tmp_path) in str(e.value) and "cifar-10-python" in str(e.value)
    missing = tmp_path / "no-imagenet"
    with pytest.raises(D.DatasetMissing) as e:
        D.load("imagenet-lt", imagenet_root=str(missing))
    assert str(missing) in str(e.value) and "ImageNet_LT_train.txt" in str(e.value)
    missing.mkdir()
    with pytest.raises(D.DatasetMissing, match="split list"):
        D.load("imagenet-lt", imagenet_root=str(missing))


def test_config_validation():
    with pytest.raises(ParameterError, match="prune_ratio"):
        LTConfig(prune_ratio=1.0)
    with pytest.raises(ParameterError, match="dataset"):
        LTConfig(dataset="mnist")
    with pytest.raises(ParameterError, match="rhos"):
        LTConfig(dataset="imagenet-lt", rhos=(100,))
    cfg = LTConfig.from_namespace({"rhos": [10, 100], "seeds": [0, 1], "unrelated": 3}, strict=False)
    assert cfg.rhos == (10, 100) and cfg.to_dict()["seeds"] == (0, 1)


def test_a_stopped_grid_resumes_from_the_runs_its_memo_kept(tmp_path, monkeypatch):
    """In a campaign unit each finished run is kept (campaign.checkpoint.Memo), so notebook 06's one stage resumes
    after a stop: with one run's file gone, only that run is trained again, and the rows come back in grid order,
    the kept ones exactly."""
    from imbalanced_cl.campaign.checkpoint import Memo
    cfg = LTConfig(dataset="digits", rhos=(10,), n_max=0, seeds=(0,), methods=("random", "simclr"), width=2, epochs=1,
                   batch_size=64, probe_per_class=0, threads=1, workers=1, progress=False, compile=False)
    first = E.run_grid(cfg, log=lambda *_: None, memo=Memo(tmp_path, None))
    assert sorted(p.name for p in tmp_path.glob("run-*.pkl")) == sorted(
        f"run-{E.run_key(cfg, 10, m, 0)}.pkl" for m in ("random", "simclr"))
    (tmp_path / f"run-{E.run_key(cfg, 10, 'simclr', 0)}.pkl").unlink()      # stopped inside its second run
    calls, real = [], E.run_one
    monkeypatch.setattr(E, "run_one", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    again = E.run_grid(cfg, log=lambda *_: None, memo=Memo(tmp_path, None))
    assert calls == ["simclr"] and [r["method"] for r in again] == [r["method"] for r in first]
    assert again[0]["acc"] == first[0]["acc"] and again[0]["per_class"] == first[0]["per_class"]
    assert E.run_grid(cfg, log=lambda *_: None, memo=Memo(tmp_path, None)) and calls == ["simclr"]   # all kept now
