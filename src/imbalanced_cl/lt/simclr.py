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
        for x, m in zip((x1, x2), modes, strict=True):
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
# 8 arguments: the model, its two views and branch modes, the loss's temperature, then where and how the step runs
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


def stem_for(image_size: int) -> str:
    """The ResNet stem for an image size: SDCLR's CIFAR stem up to 64 pixels, the ImageNet stem above."""
    return "cifar" if image_size <= 64 else "imagenet"


def _resume(path: Path | None, net: nn.Module, opt, res: PretrainResult, dev) -> int:
    """Load a checkpoint into the network, the optimiser, torch's RNG and `res` when `path` exists: the epoch to
    start from (0 when there is none)."""
    if path is None or not path.exists():
        return 0
    st = torch.load(path, map_location=dev, weights_only=False)
    net.load_state_dict(st["net"])
    opt.load_state_dict(st["opt"])
    torch.set_rng_state(st["rng"])
    res.losses, res.kept = st["losses"], st["kept"]
    res.seconds, res.aug_seconds, res.resumed_from = st["seconds"], st["aug_seconds"], st["epoch"]
    return st["epoch"]


def _distributed(net: nn.Module, world: int, dev) -> nn.Module:
    """The model the step runs: the network itself, or under torchrun its DistributedDataParallel wrapper (with
    synchronised BatchNorm on CUDA)."""
    if world == 1:
        return net
    if dev.type == "cuda":
        return nn.parallel.DistributedDataParallel(nn.SyncBatchNorm.convert_sync_batchnorm(net),
                                                   device_ids=[dev.index])
    return nn.parallel.DistributedDataParallel(net)


@dataclass
class _Loop:
    """The parts of one pre-training run that its steps share; `fast` (the compiled backbone) turns None for good
    when compilation fails."""

    images: object              # a datasets.Split
    cfg: object                 # the LTConfig
    seed: int
    net: SimCLRNet
    model: nn.Module            # net, or its DDP wrapper
    opt: torch.optim.Optimizer
    aug: SimCLRAugment
    opts: speed.StepOptions
    dev: torch.device
    modes: tuple                # the two branches' conv modes (sdclr.BRANCH_MODES)
    pruning: bool               # method != "simclr": a branch runs masked (SDCLR, Alg. 1)
    rank: int
    world: int
    fast: object                # speed.compiled's backbone, or None (eager)
    steps: int                  # steps per epoch (the last partial batch is dropped, as SDCLR's loader)

    def step(self, idx, step: int) -> tuple[float, float]:
        """One SGD step on the images at idx, at global step `step`: (its loss, seconds spent augmenting)."""
        cfg = self.cfg
        for g in self.opt.param_groups:
            g["lr"] = _lr_at(step, cfg.epochs * self.steps, cfg.warmup_epochs * self.steps, cfg.lr)
        ta = time.time()
        x = self.images.get(idx).to(self.dev, non_blocking=True)
        v1, v2 = speed.to_format(self.aug(x), self.opts), speed.to_format(self.aug(x), self.opts)
        taug = time.time() - ta
        self.opt.zero_grad(set_to_none=True)
        try:
            loss = forward_backward(self.model, v1, v2, self.modes, cfg.temperature, self.dev, self.opts, self.fast)
        except Exception as e:                      # compile failed (no compiler, unsupported op): go eager
            if self.fast is None:
                raise
            speed.give_up(f"{type(e).__name__}: {e}")
            self.fast = None
            self.opt.zero_grad(set_to_none=True)
            loss = forward_backward(self.model, v1, v2, self.modes, cfg.temperature, self.dev, self.opts, None)
        self.opt.step()                             # SGD weight decay acts on the full theta (Alg. 1, L155)
        return float(loss.detach()), taug

    def epoch(self, epoch: int) -> tuple[float, float, float]:
        """One epoch: (mean NT-Xent, seconds spent augmenting, fraction of conv weights the mask keeps)."""
        cfg, batch = self.cfg, self.cfg.batch_size
        per_rank = batch // self.world
        ep_loss, taug, info = 0.0, 0.0, None
        self.net.train()
        if self.pruning and cfg.mask_every == "epoch":     # SDCLR and Alg. 1 (L64): the mask is refreshed per epoch
            info = sdclr.global_magnitude_masks(self.net.backbone, cfg.prune_ratio)
        order = np.random.default_rng([self.seed, epoch]).permutation(len(self.images))   # same on every rank
        for s in range(self.steps):
            if self.pruning and cfg.mask_every == "step":  # Alg. 1 as written (L150): "at each iteration"
                info = sdclr.global_magnitude_masks(self.net.backbone, cfg.prune_ratio)
            idx = order[s * batch + self.rank * per_rank: s * batch + (self.rank + 1) * per_rank]
            loss, ta = self.step(idx, epoch * self.steps + s)
            ep_loss += loss
            taug += ta
        return ep_loss / self.steps, taug, info["kept"] / info["total"] if self.pruning else 1.0


# 8 arguments: the images, the settings every run shares (cfg), what tells this run from the others (method, seed,
# the data's normalisation), then bookkeeping, keyword-only (the step's layout, the checkpoint, the progress label).
def pretrain(images, cfg, method: str, seed: int, norm: tuple, *, opts: speed.StepOptions | None = None,
             ckpt_path: str | Path | None = None, desc: str = "") -> PretrainResult:
    """Pre-train a SimCLRNet with `method` in {simclr, sdclr, alg1} on the uint8 images (a datasets.Split).

    `cfg` (an LTConfig) gives the network (width, proj_dim, dual_bn; the stem follows the image size), the optimiser
    and schedule (epochs, batch_size, lr, momentum, weight_decay, warmup_epochs), the loss (temperature), the
    augmentation (crop_scale_lo, image_size: 0 is the images' own), the mask (prune_ratio, mask_every), the device,
    ckpt_every and progress; `norm` is the data's (mean, std). `opts` (default speed.StepOptions()) sets
    channels-last, compile and the CUDA precision; the result does not depend on the first two beyond float32
    rounding."""
    opts = opts or speed.StepOptions()
    if method not in sdclr.BRANCH_MODES:
        raise ValueError(f"method must be one of {tuple(sdclr.BRANCH_MODES)}, got {method!r}")
    rank, world, local_rank = dist_info()
    dev = pick_device(cfg.device, local_rank)
    size = cfg.image_size or images.image_size
    torch.manual_seed(seed)                              # init, then kornia's random views
    net = SimCLRNet(cfg.width, images.channels, cfg.proj_dim, stem_for(size), cfg.dual_bn and method == "sdclr")
    net = net.to(dev)
    opts = speed.safe(net, opts, dev)                    # contiguous where oneDNN's channels-last kernel is broken
    net = speed.prepare(net, opts)
    aug = SimCLRAugment(size, images.channels, *norm, cfg.crop_scale_lo).to(dev)
    opt = torch.optim.SGD(net.parameters(), lr=cfg.lr, momentum=cfg.momentum, weight_decay=cfg.weight_decay)
    steps = len(images) // cfg.batch_size               # drop the last partial batch (as SDCLR's loader)
    if steps < 1:
        raise ValueError(f"batch_size={cfg.batch_size} exceeds the {len(images)} training images")
    res = PretrainResult(net)
    ckpt_path = Path(ckpt_path) if ckpt_path else None
    start_epoch = _resume(ckpt_path, net, opt, res, dev)
    loop = _Loop(images=images, cfg=cfg, seed=seed, net=net, model=_distributed(net, world, dev), opt=opt, aug=aug,
                 opts=opts, dev=dev, modes=sdclr.BRANCH_MODES[method], pruning=method != "simclr",
                 rank=rank, world=world, fast=speed.compiled(net.backbone, opts), steps=steps)   # fast None: eager
    res.precision = speed.effective_precision(dev, opts)
    res.channels_last = opts.channels_last
    bar = _progress_bar(cfg, rank, start_epoch, desc or method)
    for epoch in range(start_epoch, cfg.epochs):
        t0 = time.time()
        loss, taug, kept = loop.epoch(epoch)
        res.losses.append(loss)
        res.kept.append(kept)
        res.seconds += time.time() - t0
        res.aug_seconds += taug
        if bar is not None:
            bar.set_postfix(loss=f"{res.losses[-1]:.3f}")
            bar.update(1)
        if ckpt_path is not None and rank == 0 and _checkpoint_due(cfg, epoch):
            _save(ckpt_path, {"net": net.state_dict(), "opt": opt.state_dict(), "rng": torch.get_rng_state(),
                              "epoch": epoch + 1, "losses": res.losses, "kept": res.kept,
                              "seconds": res.seconds, "aug_seconds": res.aug_seconds})
    if bar is not None:
        bar.close()
    res.compiled = loop.fast is not None
    # the masks left in the convs (and in checkpoints) are those of the last step: Alg. 1 is evaluated with them
    res.views_per_s = _views_per_s(res, cfg, start_epoch, steps)
    return res


def _progress_bar(cfg, rank: int, start_epoch: int, desc: str):
    """A progress bar over the epochs, on the first process when cfg.progress asks for one; else None."""
    if cfg.progress and rank == 0:
        from tqdm.auto import tqdm
        return tqdm(total=cfg.epochs, initial=start_epoch, desc=desc, leave=False)
    return None


def _checkpoint_due(cfg, epoch: int) -> bool:
    """Whether a checkpoint is written after `epoch` (0-based): every cfg.ckpt_every epochs, and after the last."""
    last = epoch + 1 == cfg.epochs
    return bool((cfg.ckpt_every and (epoch + 1) % cfg.ckpt_every == 0) or last)


def _views_per_s(res: PretrainResult, cfg, start_epoch: int, steps: int) -> float:
    """Training throughput: augmented views (two per image) of the epochs run here per second of training."""
    done = (cfg.epochs - start_epoch) * steps * cfg.batch_size * 2
    trained = res.seconds if res.resumed_from == 0 else max(res.seconds, 1e-9)
    return done / trained if trained > 0 and done else 0.0
