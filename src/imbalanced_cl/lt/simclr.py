"""SimCLR pre-training (Chen et al., 2020) with the SDCLR and Algorithm-1 branches, on one CPU/GPU or under torchrun.

`pretrain` runs the loop: seeded init and data order, kornia views, NT-Xent with temperature, SGD with momentum,
cosine schedule, weight decay on every parameter, masks recomputed per epoch (or per step), tqdm per epoch, and
checkpoints. The step runs in the layout and precision of a speed.StepOptions (channels-last, torch.compile of
the backbone with a fallback to eager, bf16 autocast on CUDA); on the CPU it computes what the eager step computes.
When torchrun's environment variables are set (WORLD_SIZE > 1) it initialises torch.distributed,
wraps the two-branch model in DistributedDataParallel, shards each global batch over the ranks and computes
NT-Xent against the negatives gathered from every rank (SDCLR's reference runs: batch 512 over GPUs).
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from . import sdclr, speed
from .augment import SimCLRAugment
from .resnet import ResNet18, set_mode


# ----------------------------------------------------------------------------------------------- distributed
def dist_info() -> tuple[int, int, int]:
    """(rank, world_size, local_rank); initialises torch.distributed from torchrun's env vars when needed."""
    import torch.distributed as dist
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1 and not dist.is_initialized():
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        dist.init_process_group(backend=backend)
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size(), int(os.environ.get("LOCAL_RANK", "0"))
    return 0, 1, 0


def pick_device(device: str = "auto", local_rank: int = 0) -> torch.device:
    """cuda:<local_rank> when available (or asked), else cpu."""
    if device == "cpu" or (device == "auto" and not torch.cuda.is_available()):
        return torch.device("cpu")
    return torch.device(f"cuda:{local_rank}")


# ----------------------------------------------------------------------------------------------- model and loss
class SimCLRNet(nn.Module):
    """Backbone + projection head (SDCLR: 2-layer MLP to 128); forward(x1, x2, modes) encodes the two branches."""

    def __init__(self, width: int, in_channels: int, proj_dim: int = 128, stem: str = "cifar",
                 dual_bn: bool = False):
        super().__init__()
        self.backbone = ResNet18(width, in_channels, stem, dual_bn)
        d = self.backbone.out_dim
        self.head = nn.Sequential(nn.Linear(d, d), nn.ReLU(inplace=True), nn.Linear(d, proj_dim))

    def forward(self, x1: torch.Tensor, x2: torch.Tensor, modes=("dense", "dense"), backbone=None):
        """Projections of view 1 (branch mode modes[0]) and view 2 (modes[1]); convs return to dense after.

        `backbone` is a callable sharing self.backbone's parameters (its torch.compile'd version), or None."""
        out = []
        encode = backbone if backbone is not None else self.backbone
        for x, m in zip((x1, x2), modes):
            set_mode(self.backbone, m)
            out.append(self.head(encode(x)))
        set_mode(self.backbone, "dense")
        return out[0], out[1]


def nt_xent(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """NT-Xent (SimCLR): each of the 2n anchors against its positive and the other 2N-2 views (N over all ranks)."""
    import torch.distributed as dist
    z1, z2 = F.normalize(z1, dim=1), F.normalize(z2, dim=1)
    n = z1.shape[0]
    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        import warnings
        from torch.distributed.nn.functional import all_gather   # differentiable gather
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            g1, g2 = torch.cat(all_gather(z1)), torch.cat(all_gather(z2))
        offset = dist.get_rank() * n
    else:
        g1, g2, offset = z1, z2, 0
    N = g1.shape[0]
    cand = torch.cat([g1, g2])                       # (2N, p)
    anchors = torch.cat([z1, z2])                    # (2n, p)
    logits = anchors @ cand.T / temperature
    i = torch.arange(n, device=z1.device)
    self_idx = torch.cat([offset + i, N + offset + i])
    pos_idx = torch.cat([N + offset + i, offset + i])
    logits[torch.arange(2 * n, device=z1.device), self_idx] = float("-inf")
    return F.cross_entropy(logits, pos_idx)


# ----------------------------------------------------------------------------------------------- training
def forward_backward(model, v1: torch.Tensor, v2: torch.Tensor, modes, temperature: float, device,
                     opts: speed.StepOptions, backbone=None) -> torch.Tensor:
    """NT-Xent of the two branches and its gradients (accumulated into the parameters); returns the loss.

    `model` is a SimCLRNet (or its DDP wrapper); the views are already in opts' layout. The loss is computed in
    float32 even under bf16 autocast (the logits of eq. NT-Xent divide by a temperature of 0.2)."""
    with speed.autocast(device, opts):
        z1, z2 = model(v1, v2, modes, backbone=backbone)
    loss = nt_xent(z1.float(), z2.float(), temperature)
    loss.backward()
    return loss


@dataclass
class PretrainResult:
    """A pre-trained network with its per-epoch history."""

    net: SimCLRNet
    losses: list = field(default_factory=list)        # mean NT-Xent per epoch
    kept: list = field(default_factory=list)          # fraction of conv weights kept by the mask, per epoch
    seconds: float = 0.0
    views_per_s: float = 0.0
    aug_seconds: float = 0.0
    resumed_from: int = 0
    precision: str = "fp32"                           # what the step ran in (bf16 only under CUDA autocast)
    compiled: bool = False                            # whether the compiled backbone ran to the end
    channels_last: bool = False                       # the layout the step ran in (speed.safe may turn it off)


def _lr_at(step: int, total: int, warmup: int, base: float) -> float:
    if step < warmup:
        return base * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return 0.5 * base * (1 + math.cos(math.pi * t))


def _save(path: Path, state: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)


def pretrain(images, *, method: str, seed: int, width: int, in_channels: int, image_size: int,
             mean: tuple, std: tuple, epochs: int, batch_size: int, lr: float, momentum: float = 0.9,
             weight_decay: float = 1e-4, temperature: float = 0.2, proj_dim: int = 128, prune_ratio: float = 0.9,
             mask_every: str = "epoch", warmup_epochs: int = 0, crop_scale_lo: float = 0.1, stem: str = "cifar",
             dual_bn: bool = True, opts: speed.StepOptions | None = None,
             device: str = "auto", ckpt_path: str | Path | None = None, ckpt_every: int = 0,
             progress: bool = True, desc: str = "") -> PretrainResult:
    """Pre-train a SimCLRNet with `method` in {simclr, sdclr, alg1} on the uint8 images (a datasets.Split).

    `opts` (default speed.StepOptions()) sets channels-last, compile and the CUDA precision; the result does not
    depend on the first two beyond float32 rounding."""
    opts = opts or speed.StepOptions()
    if method not in sdclr.BRANCH_MODES:
        raise ValueError(f"method must be one of {tuple(sdclr.BRANCH_MODES)}, got {method!r}")
    rank, world, local_rank = dist_info()
    dev = pick_device(device, local_rank)
    torch.manual_seed(seed)                              # init, then kornia's random views
    net = SimCLRNet(width, in_channels, proj_dim, stem, dual_bn and method == "sdclr").to(dev)
    opts = speed.safe(net, opts, dev)                    # contiguous where oneDNN's channels-last kernel is broken
    net = speed.prepare(net, opts)
    aug = SimCLRAugment(image_size, in_channels, mean, std, crop_scale_lo).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=lr, momentum=momentum, weight_decay=weight_decay)
    n = len(images)
    per_rank = batch_size // world
    steps_per_epoch = n // batch_size                   # drop the last partial batch (as SDCLR's loader)
    if steps_per_epoch < 1:
        raise ValueError(f"batch_size={batch_size} exceeds the {n} training images")
    total_steps, warm = epochs * steps_per_epoch, warmup_epochs * steps_per_epoch
    res = PretrainResult(net)
    start_epoch = 0
    ckpt_path = Path(ckpt_path) if ckpt_path else None
    if ckpt_path is not None and ckpt_path.exists():
        st = torch.load(ckpt_path, map_location=dev, weights_only=False)
        net.load_state_dict(st["net"])
        opt.load_state_dict(st["opt"])
        torch.set_rng_state(st["rng"])
        start_epoch, res.losses, res.kept = st["epoch"], st["losses"], st["kept"]
        res.seconds, res.aug_seconds, res.resumed_from = st["seconds"], st["aug_seconds"], st["epoch"]
    model = net
    if world > 1:
        if dev.type == "cuda":
            net_sync = nn.SyncBatchNorm.convert_sync_batchnorm(net)
            model = nn.parallel.DistributedDataParallel(net_sync, device_ids=[dev.index])
        else:
            model = nn.parallel.DistributedDataParallel(net)
    modes = sdclr.BRANCH_MODES[method]
    fast = speed.compiled(net.backbone, opts)            # None: eager
    res.precision = speed.effective_precision(dev, opts)
    res.channels_last = opts.channels_last
    pruning = method != "simclr"
    bar = None
    if progress and rank == 0:
        from tqdm.auto import tqdm
        bar = tqdm(total=epochs, initial=start_epoch, desc=desc or method, leave=False)
    step = start_epoch * steps_per_epoch
    for epoch in range(start_epoch, epochs):
        t0, taug, ep_loss = time.time(), 0.0, 0.0
        net.train()
        if pruning and mask_every == "epoch":          # SDCLR and Alg. 1 (L64): the mask is refreshed per epoch
            info = sdclr.global_magnitude_masks(net.backbone, prune_ratio)
        order = np.random.default_rng([seed, epoch]).permutation(n)   # same on every rank
        for s in range(steps_per_epoch):
            if pruning and mask_every == "step":       # Alg. 1 as written (L150): "at each iteration"
                info = sdclr.global_magnitude_masks(net.backbone, prune_ratio)
            idx = order[s * batch_size + rank * per_rank: s * batch_size + (rank + 1) * per_rank]
            for g in opt.param_groups:
                g["lr"] = _lr_at(step, total_steps, warm, lr)
            ta = time.time()
            x = images.get(idx).to(dev, non_blocking=True)
            v1, v2 = speed.to_format(aug(x), opts), speed.to_format(aug(x), opts)
            taug += time.time() - ta
            opt.zero_grad(set_to_none=True)
            try:
                loss = forward_backward(model, v1, v2, modes, temperature, dev, opts, fast)
            except Exception as e:                      # compile failed (no compiler, unsupported op): go eager
                if fast is None:
                    raise
                speed.give_up(f"{type(e).__name__}: {e}")
                fast = None
                opt.zero_grad(set_to_none=True)
                loss = forward_backward(model, v1, v2, modes, temperature, dev, opts, None)
            opt.step()                                  # SGD weight decay acts on the full theta (Alg. 1, L155)
            ep_loss += float(loss.detach())
            step += 1
        res.losses.append(ep_loss / steps_per_epoch)
        res.kept.append(info["kept"] / info["total"] if pruning else 1.0)
        res.seconds += time.time() - t0
        res.aug_seconds += taug
        if bar is not None:
            bar.set_postfix(loss=f"{res.losses[-1]:.3f}")
            bar.update(1)
        last = epoch + 1 == epochs
        if ckpt_path is not None and rank == 0 and ((ckpt_every and (epoch + 1) % ckpt_every == 0) or last):
            _save(ckpt_path, {"net": net.state_dict(), "opt": opt.state_dict(), "rng": torch.get_rng_state(),
                              "epoch": epoch + 1, "losses": res.losses, "kept": res.kept,
                              "seconds": res.seconds, "aug_seconds": res.aug_seconds})
    if bar is not None:
        bar.close()
    res.compiled = fast is not None
    # the masks left in the convs (and in checkpoints) are those of the last step: Alg. 1 is evaluated with them
    done = (epochs - start_epoch) * steps_per_epoch * batch_size * 2
    trained = res.seconds if res.resumed_from == 0 else max(res.seconds, 1e-9)
    res.views_per_s = done / trained if trained > 0 and done else 0.0
    return res
