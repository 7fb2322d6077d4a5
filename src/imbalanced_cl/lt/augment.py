"""Batched SimCLR views with kornia (torchvision does not import beside this torch; pitfalls.md).

The CIFAR recipe is SDCLR's / SimCLR's: RandomResizedCrop(scale 0.1-1), horizontal flip, ColorJitter(0.4, 0.4,
0.4, 0.1) with p = 0.8, grayscale with p = 0.2, then per-channel normalisation. For one-channel 8x8 digits a
reduced recipe keeps what makes sense there: crop at scale 0.5-1, brightness/contrast jitter, no flip.
"""
from __future__ import annotations

import torch
from torch import nn


class SimCLRAugment(nn.Module):
    """uint8 (B, C, H, W) -> one normalised random view (B, C, H, W) float32; call twice for a pair."""

    def __init__(self, image_size: int, channels: int, mean: tuple, std: tuple, scale_lo: float = 0.1):
        super().__init__()
        import kornia.augmentation as K
        self.channels = channels
        if channels == 3:
            ops = [K.RandomResizedCrop((image_size, image_size), scale=(scale_lo, 1.0)),
                   K.RandomHorizontalFlip(),
                   K.ColorJitter(0.4, 0.4, 0.4, 0.1, p=0.8),
                   K.RandomGrayscale(p=0.2)]
        else:   # 8x8 digits: a flip would change a digit's identity; no hue or saturation in one channel
            ops = [K.RandomResizedCrop((image_size, image_size), scale=(max(scale_lo, 0.5), 1.0)),
                   K.ColorJitter(0.4, 0.4, 0.0, 0.0, p=0.8)]
        self.aug = K.AugmentationSequential(*ops)
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """One random view of every image in the batch."""
        v = self.aug(x.float().div_(255.0))
        return (v - self.mean) / self.std


class Normalize(nn.Module):
    """uint8 (B, C, H, W) -> normalised float32, no augmentation (for probe features)."""

    def __init__(self, mean: tuple, std: tuple):
        super().__init__()
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))

    @torch.no_grad()
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """(x/255 - mean) / std."""
        return (x.float().div_(255.0) - self.mean) / self.std
