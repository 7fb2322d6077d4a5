"""The CPU kernels that crash on some hosts are never reached by the package (issue 25).

Seen on AMD EPYC (AVX2, no AVX-512) with torch 2.13.0+cpu: the channels-last backward of a 1x1 stride-2 convolution
with 2 to 7 input channels corrupts the heap (SIGSEGV, or SIGABRT "corrupted double-linked list"). Intel hosts with
AVX-512 did not crash. Every case runs in a child process (tests/native.py), so a crash fails one test with its
signal and shapes instead of taking the suite down. On an AVX2 host, the child tests below fail when the guard
(lt/speed.safe, used by pretrain and prepare) is removed.
"""
import pytest
import torch
from torch import nn

from imbalanced_cl.book.build.profiles import load_all
from imbalanced_cl.lt import speed
from imbalanced_cl.lt.resnet import ResNet18
from imbalanced_cl.lt.simclr import SimCLRNet
from native import run_child, signal_name

CPU = torch.device("cpu")


def narrowest_width() -> int:
    """The smallest ResNet width that any profile gives notebook 06 (its default is the LTConfig field's)."""
    from imbalanced_cl.lt.config import LTConfig
    widths = {LTConfig().width}
    for prof in load_all().values():
        widths.add((prof or {}).get("06_lt_benchmarks", {}).get("width", LTConfig().width))
    return min(widths)


def test_unsafe_convs_names_the_narrow_strided_shortcuts():
    """Hand-made: at width 4 the shortcuts of stages 2-4 have 4, 8, 16 input channels: only the first is narrow."""
    names = speed.unsafe_convs(ResNet18(width=4))
    assert names == ["layers.2.short.0 (1x1, stride 2, 4 input channels)"]
    assert speed.unsafe_convs(ResNet18(width=8)) == []
    assert speed.unsafe_convs(nn.Conv2d(7, 8, 1, stride=2)) == ["conv (1x1, stride 2, 7 input channels)"]
    assert speed.unsafe_convs(nn.Conv2d(4, 8, 1, stride=1)) == []      # stride 1: the kernel that works
    assert speed.unsafe_convs(nn.Conv2d(4, 8, 3, stride=2)) == []      # 3x3 strided: not seen to crash


def test_safe_turns_channels_last_off_only_on_a_cpu_for_a_narrow_net():
    opts = speed.StepOptions(compile=False)
    assert not speed.safe(SimCLRNet(4, 3, 8), opts, CPU).channels_last
    assert speed.safe(SimCLRNet(8, 3, 8), opts, CPU).channels_last
    assert speed.safe(SimCLRNet(4, 3, 8), opts, "cuda").channels_last     # the bug is oneDNN's (CPU only)
    assert speed.safe(SimCLRNet(4, 3, 8), speed.EAGER, CPU) == speed.EAGER
    assert not speed.safe(SimCLRNet(4, 3, 8), speed.StepOptions(), CPU).compile   # inductor picks NHWC itself
    assert speed.safe(SimCLRNet(8, 3, 8), speed.StepOptions(), CPU).compile
    with pytest.raises(ValueError, match="layers.2.short.0.*speed.safe"):
        speed.prepare(SimCLRNet(4, 3, 8), opts)                        # no path reaches the kernel unguarded


def test_signal_names():
    assert signal_name(-11) == "SIGSEGV" and signal_name(134) == "SIGABRT" and signal_name(1) == "exit 1"


def test_minimal_case_through_the_package_does_not_crash():
    """The issue's minimal case (4 -> 8 channels, 1x1, stride 2), laid out by the package's own rule."""
    run_child("""
        from torch import nn
        from imbalanced_cl.lt import speed
        cpu = torch.device("cpu")
        conv = nn.Conv2d(4, 8, 1, stride=2, bias=False)
        opts = speed.safe(conv, speed.StepOptions(compile=False), cpu)
        speed.prepare(conv, opts)
        x = speed.to_format(torch.randn(64, 4, 8, 8), opts).requires_grad_()
        for _ in range(30):
            conv(x).sum().backward()
        assert not opts.channels_last
    """, "1x1 stride-2 conv, 4 -> 8 channels, batch 64 of 8x8, speed.safe layout")


@pytest.mark.parametrize("method", ["simclr", "sdclr", "alg1"])
def test_pretrain_at_the_narrowest_profile_width_does_not_crash(method):
    """pretrain with its default StepOptions (channels-last asked for) at the narrowest width of any profile,
    on 3-channel 16x16 images and on 1-channel 8x8 digits (notebook 06's ci data): a few dozen steps each."""
    w = narrowest_width()
    assert w < speed.MIN_CHANNELS_LAST_CPU          # else this test guards nothing: the narrow case must be run
    run_child(f"""
        import numpy as np
        from imbalanced_cl.lt import datasets as D
        from imbalanced_cl.lt.config import LTConfig
        from imbalanced_cl.lt.simclr import pretrain
        data = D.load("digits")
        lt = data.train.subset(D.long_tailed_indices(data.train.labels, 100, 10, seed=0))
        cfg = LTConfig(dataset="digits", width={w}, epochs=3, batch_size=64, lr=0.1, progress=False)
        r = pretrain(lt, cfg, "{method}", 0, (data.mean, data.std))
        assert np.isfinite(r.losses).all() and not r.channels_last and not r.compiled
        rgb = D.Split(np.zeros(256, dtype=np.int64), images=torch.randint(0, 256, (256, 3, 16, 16),
                      dtype=torch.uint8, generator=torch.Generator().manual_seed(0)), image_size=16, channels=3)
        r = pretrain(rgb, cfg.replace(epochs=4), "{method}", 0, ((0.5, 0.5, 0.5), (0.25, 0.25, 0.25)))
        assert np.isfinite(r.losses).all() and not r.channels_last and not r.compiled
    """, f"{method} pre-training at width {w} (channels-last asked for; 1x8x8 digits and 3x16x16 images)")
