"""Linear probe on frozen features and the long-tail metrics of Table 2: accuracy, per-class accuracy, Δ20,
many/medium/few.

Table 2 (L342-352) follows SDCLR: a linear classifier on frozen backbone features, trained on a balanced train
set, evaluated per class on the balanced test set. Δ20 = mean accuracy of the top-20% classes by training
frequency minus that of the bottom 20%. The probe here is multinomial logistic regression on standardised
features fitted to convergence with L-BFGS (deterministic; SDCLR uses SGD lr 30 for 30 epochs instead).
"""
from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F

from .resnet import mode as conv_mode
from .speed import StepOptions, autocast, safe, to_format


# 7 arguments: the network, the images and their normalisation, then how to run it (batch, conv mode, device, layout)
def extract_features(backbone, split, normalize, batch: int = 512, conv: str = "dense",
                     device: torch.device | str = "cpu", opts: StepOptions | None = None) -> torch.Tensor:
    """Frozen backbone features (N, D) of a datasets.Split, eval-mode BN, convs in mode `conv` (dense / masked).

    Runs under torch.inference_mode in opts' layout (and bf16 autocast on CUDA when opts asks for it); the
    features are computed once and the probe is fitted on them (no image passes during the probe's iterations)."""
    opts = safe(backbone, opts or StepOptions(), device)    # the layout prepare() gave the backbone
    was = backbone.training
    backbone.eval()
    out = []
    with torch.inference_mode(), conv_mode(backbone, conv), autocast(device, opts):
        for s in range(0, len(split), batch):
            x = split.get(np.arange(s, min(s + batch, len(split)))).to(device)
            out.append(backbone(to_format(normalize(x), opts)).float().cpu())
    backbone.train(was)
    return torch.cat(out)


# 7 arguments: the features and labels, then the regression's settings (penalty, iterations, classes, seed)
def linear_probe(xtr: torch.Tensor, ytr, xte: torch.Tensor, l2: float = 1e-4, max_iter: int = 200,
                 num_classes: int | None = None, seed: int = 0) -> np.ndarray:
    """Fit softmax regression on standardised train features with L-BFGS; return predicted test labels."""
    ytr = torch.as_tensor(np.asarray(ytr), dtype=torch.long)
    C = int(num_classes or int(ytr.max()) + 1)
    mu, sd = xtr.mean(0, keepdim=True), xtr.std(0, keepdim=True).clamp_min(1e-6)
    a, b = ((xtr - mu) / sd).double(), ((xte - mu) / sd).double()
    g = torch.Generator().manual_seed(seed)
    W = (0.01 * torch.randn(a.shape[1], C, generator=g, dtype=torch.float64)).requires_grad_()
    bias = torch.zeros(C, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([W, bias], lr=1.0, max_iter=max_iter, tolerance_grad=1e-7, tolerance_change=1e-10,
                            history_size=20, line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = F.cross_entropy(a @ W + bias, ytr) + 0.5 * l2 * (W * W).sum()
        loss.backward()
        return loss

    opt.step(closure)
    with torch.no_grad():
        return (b @ W + bias).argmax(1).numpy()


def per_class_accuracy(pred, y, num_classes: int) -> np.ndarray:
    """Accuracy (%) of each class; NaN for a class absent from y."""
    pred, y = np.asarray(pred), np.asarray(y)
    out = np.full(num_classes, np.nan)
    for c in range(num_classes):
        m = y == c
        if m.any():
            out[c] = 100.0 * np.mean(pred[m] == c)
    return out


def frequency_order(train_counts) -> np.ndarray:
    """Class indices sorted by training frequency, most frequent first (ties: lower index first)."""
    counts = np.asarray(train_counts)
    return np.lexsort((np.arange(len(counts)), -counts))


def delta20(per_class_acc, train_counts, frac: float = 0.2) -> float:
    """Δ20: mean accuracy of the top `frac` classes by training frequency minus the bottom `frac` (Table 2)."""
    acc = np.asarray(per_class_acc, dtype=float)
    order = frequency_order(train_counts)
    k = max(1, int(round(frac * len(acc))))
    return float(np.nanmean(acc[order[:k]]) - np.nanmean(acc[order[-k:]]))


def group_accuracy(per_class_acc, train_counts, scheme: str = "thirds") -> dict:
    """Many / medium / few accuracy: by thirds of the classes sorted by frequency, or by ImageNet-LT's thresholds
    (many > 100 training images, few < 20; Liu et al., 2019). An empty group gives NaN."""
    acc = np.asarray(per_class_acc, dtype=float)
    counts = np.asarray(train_counts)
    if scheme == "thirds":
        parts = np.array_split(frequency_order(counts), 3)
        groups = {"many": parts[0], "medium": parts[1], "few": parts[2]}
    elif scheme == "thresholds":
        idx = np.arange(len(counts))
        groups = {"many": idx[counts > 100], "medium": idx[(counts <= 100) & (counts >= 20)],
                  "few": idx[counts < 20]}
    else:
        raise ValueError(f"scheme must be 'thirds' or 'thresholds', got {scheme!r}")
    return {k: (float(np.nanmean(acc[v])) if len(v) else math.nan) for k, v in groups.items()}


def evaluate(pred, y, train_counts, scheme: str = "thirds") -> dict:
    """All Table-2 metrics of one probe: acc, per_class, delta20, many, medium, few (percent)."""
    C = len(train_counts)
    pc = per_class_accuracy(pred, y, C)
    return {"acc": float(100.0 * np.mean(np.asarray(pred) == np.asarray(y))), "per_class": pc.tolist(),
            "delta20": delta20(pc, train_counts), **group_accuracy(pc, train_counts, scheme)}
