"""A hand-written ResNet-18 with a CIFAR stem and a width multiplier, whose conv layers can be masked.

SDCLR (Jiang et al., 2021) and the paper's Table 2 use a ResNet-18 with the CIFAR stem (3x3 conv, stride 1,
no max-pool). `width` is the channel count of the first stage (64 is the standard ResNet-18; 8 fits a CPU).
Every convolution is a `MaskedConv2d`, so the pruning code (sdclr.py) can switch the whole backbone between
the dense weights, SDCLR's pruned branch and Algorithm 1's masked forward with an unmasked backward. With
dual_bn, every BatchNorm has a second copy used only by SDCLR's pruned branch (SDCLR's multi-BN ResNet), so the
dense network's running statistics are not mixed with those of its pruned copy.
"""
from __future__ import annotations

import contextlib

import torch
import torch.nn.functional as F
from torch import nn

MODES = ("dense", "masked", "pruned", "ste")   # pruned = masked + the second BN


class MaskedConv2d(nn.Conv2d):
    """A Conv2d with a keep-mask buffer and a mode: dense, masked (w*m), or ste (value w*m, gradient to all of w)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.register_buffer("mask", torch.ones_like(self.weight), persistent=True)
        self.mode = "dense"

    def effective_weight(self) -> torch.Tensor:
        """The weight the forward pass uses in the current mode."""
        w = self.weight
        if self.mode in ("masked", "pruned"):   # SDCLR's pruned branch: pruned weights get no gradient from it
            return w * self.mask
        if self.mode == "ste":         # Algorithm 1: forward with theta*M, "release the mask" in the backward
            return w + (w * self.mask - w).detach()
        return w

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Convolve with the effective weight."""
        return F.conv2d(x, self.effective_weight(), self.bias, self.stride, self.padding, self.dilation,
                        self.groups)


class BranchBN(nn.Module):
    """BatchNorm2d, or two of them (dense / pruned branch) when dual; `branch` picks which one runs."""

    def __init__(self, c: int, dual: bool = False):
        super().__init__()
        self.bns = nn.ModuleList([nn.BatchNorm2d(c) for _ in range(2 if dual else 1)])
        self.branch = 0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise with the BN of the current branch."""
        return self.bns[min(self.branch, len(self.bns) - 1)](x)


class BasicBlock(nn.Module):
    """The two-conv residual block of ResNet-18 (He et al., 2016)."""

    def __init__(self, cin: int, cout: int, stride: int, dual_bn: bool = False):
        super().__init__()
        self.conv1 = MaskedConv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = BranchBN(cout, dual_bn)
        self.conv2 = MaskedConv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = BranchBN(cout, dual_bn)
        self.short = None
        if stride != 1 or cin != cout:
            self.short = nn.Sequential(MaskedConv2d(cin, cout, 1, stride, bias=False), BranchBN(cout, dual_bn))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """relu(bn(conv(relu(bn(conv(x))))) + shortcut(x))."""
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.short is None else self.short(x)))


class ResNet18(nn.Module):
    """ResNet-18 backbone returning pooled features of size 8*width (CIFAR stem, or ImageNet stem for big images)."""

    def __init__(self, width: int = 64, in_channels: int = 3, stem: str = "cifar", dual_bn: bool = False):
        super().__init__()
        if stem not in ("cifar", "imagenet"):
            raise ValueError(f"stem must be 'cifar' or 'imagenet', got {stem!r}")
        self.width, self.stem_kind = width, stem
        if stem == "cifar":   # SDCLR / Table 2: 3x3 stride-1 stem, no max-pool
            self.stem = nn.Sequential(MaskedConv2d(in_channels, width, 3, 1, 1, bias=False),
                                      BranchBN(width, dual_bn), nn.ReLU(inplace=True))
        else:                 # ImageNet-LT: the usual 7x7 stride-2 stem with max-pool
            self.stem = nn.Sequential(MaskedConv2d(in_channels, width, 7, 2, 3, bias=False),
                                      BranchBN(width, dual_bn), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1))
        chans = [width, 2 * width, 4 * width, 8 * width]
        layers, cin = [], width
        for i, c in enumerate(chans):
            stride = 1 if i == 0 else 2
            layers += [BasicBlock(cin, c, stride, dual_bn), BasicBlock(c, c, 1, dual_bn)]
            cin = c
        self.layers = nn.Sequential(*layers)
        self.out_dim = chans[-1]
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Pooled features (B, 8*width)."""
        return torch.flatten(F.adaptive_avg_pool2d(self.layers(self.stem(x)), 1), 1)


def masked_convs(model: nn.Module) -> list[MaskedConv2d]:
    """All maskable convolutions of a model, in module order."""
    return [m for m in model.modules() if isinstance(m, MaskedConv2d)]


def set_mode(model: nn.Module, mode: str) -> None:
    """Switch every MaskedConv2d of `model` to `mode` (dense, masked, pruned or ste); `pruned` also selects the
    second BN of dual-BN layers."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
    for m in model.modules():
        if isinstance(m, MaskedConv2d):
            m.mode = mode
        elif isinstance(m, BranchBN):
            m.branch = 1 if mode == "pruned" else 0


@contextlib.contextmanager
def mode(model: nn.Module, m: str):
    """Context manager: run the body with every conv of `model` in mode `m`, then restore dense."""
    set_mode(model, m)
    try:
        yield model
    finally:
        set_mode(model, "dense")
