"""What an image dataset is, for every loader of notebook 06: a Split (uint8 images or lazily decoded files),
an ImageData (train, test, classes, where the pixels came from), DatasetMissing, and where data lives.

datasets.py (the loaders) and jpeg_pack.py (the offline CIFAR-10 pack) both build on it, so neither needs the other
for these (issue 26).
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch


class DatasetMissing(FileNotFoundError):
    """A dataset is not on disk and cannot be fetched; the message says where we looked and how to get it."""


@dataclass
class Split:
    """Images of one split: uint8 (N, C, H, W) in memory, or file paths decoded on demand."""

    labels: np.ndarray                      # int64 (N,)
    images: torch.Tensor | None = None      # uint8 (N, C, H, W) when in memory
    files: list[str] | None = None          # image paths when lazy (ImageNet-LT)
    image_size: int = 32
    channels: int = 3

    def __len__(self) -> int:
        return len(self.labels)

    def get(self, idx) -> torch.Tensor:
        """uint8 images (B, C, H, W) at the given indices."""
        idx = np.asarray(idx)
        if self.images is not None:
            return self.images[torch.as_tensor(idx, dtype=torch.long)]
        return torch.stack([_load_image(self.files[i], self.image_size) for i in idx])

    def subset(self, idx) -> "Split":
        """The images at `idx` as a new Split (a copy in memory, or a shorter file list)."""
        idx = np.asarray(idx, dtype=np.int64)
        if self.images is not None:
            return Split(self.labels[idx], self.images[torch.as_tensor(idx)], None, self.image_size, self.channels)
        return Split(self.labels[idx], None, [self.files[i] for i in idx], self.image_size, self.channels)


@dataclass
class ImageData:
    """A dataset: train and test splits, class names, and a note on where the pixels came from."""

    name: str
    train: Split
    test: Split
    classes: list[str]
    source: str                              # e.g. "JPEG re-encoded CIFAR-10 (../shared/data/cifar10-jpeg.npz)"
    mean: tuple = field(default=(0.4914, 0.4822, 0.4465))
    std: tuple = field(default=(0.2470, 0.2435, 0.2616))

    @property
    def num_classes(self) -> int:
        """Number of classes C."""
        return len(self.classes)


def default_data_dir() -> Path:
    """$IMBALANCED_CL_DATA, else ~/.cache/imbalanced_cl/data."""
    env = os.environ.get("IMBALANCED_CL_DATA")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "imbalanced_cl" / "data"


def hwc_split(x: np.ndarray, y: np.ndarray) -> Split:
    """A Split from images stored (N, H, W, C), as the JPEG pack decodes them, and their labels."""
    img = torch.from_numpy(np.ascontiguousarray(x.transpose(0, 3, 1, 2)))
    return Split(np.asarray(y, dtype=np.int64), img, None, x.shape[1], x.shape[3])


def _load_image(path: str, size: int) -> torch.Tensor:
    """Decode one image, resize its shorter side to `size` and centre-crop to size x size (uint8 CHW)."""
    from PIL import Image
    with Image.open(path) as im:
        im = im.convert("RGB")
        w, h = im.size
        s = size / min(w, h)
        im = im.resize((max(size, round(w * s)), max(size, round(h * s))), Image.BILINEAR)
        w, h = im.size
        left, top = (w - size) // 2, (h - size) // 2
        im = im.crop((left, top, left + size, top + size))
        return torch.from_numpy(np.asarray(im).transpose(2, 0, 1).copy())
