"""LTConfig: every parameter of notebook 06 (long-tailed real-image benchmarks), validated on construction."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..parts import Composed
from ..validate import ParameterError, check, check_choice, check_float, check_grid, check_int
from .datasets import DATASETS
from .speed import PRECISIONS, StepOptions

METHODS = ("random", "simclr", "sdclr", "alg1")


def _is_str(v: Any) -> bool:
    return isinstance(v, str)


@dataclass(frozen=True)
class LTModel:
    """The encoder and its pre-training: the backbone (width, image_size), SimCLR/SDCLR/Alg. 1 training (epochs,
    batch_size, lr, momentum, weight_decay, warmup_epochs, temperature, proj_dim, crop_scale_lo), pruning
    (prune_ratio, mask_every, dual_bn) and the arithmetic (precision)."""

    ROLE: ClassVar[str] = "model"
    # --- backbone: ResNet-18, CIFAR stem (SDCLR), width = channels of the first stage (64 = ResNet-18) ---
    width: int = 8
    image_size: int = 0               # 0: the dataset's own (32 CIFAR, 8 digits, 224 ImageNet-LT)
    # --- pre-training: SDCLR reference = 2000 epochs, batch 512, SGD lr 0.5, momentum 0.9, wd 1e-4, tau 0.2 ---
    epochs: int = 5
    batch_size: int = 256
    lr: float = 0.25
    momentum: float = 0.9
    weight_decay: float = 1e-4
    warmup_epochs: int = 0
    temperature: float = 0.2
    proj_dim: int = 128
    crop_scale_lo: float = 0.1        # RandomResizedCrop scale (crop_scale_lo, 1)
    # --- pruning: SDCLR ratio 0.9 on CIFAR; one global magnitude threshold over the conv weights ---
    prune_ratio: float = 0.9
    mask_every: str = "epoch"         # "epoch" (SDCLR; the paper's §2) or "step" (Algorithm 1 as written)
    dual_bn: bool = True              # SDCLR: the pruned branch has its own BatchNorms (multi-BN ResNet)
    precision: str = "bf16"           # CUDA autocast: bf16 | fp32 (the CPU always runs float32)

    def validate(self, cfg) -> None:
        """The backbone's size, the optimiser, the pruning settings and the precision."""
        check_int("width", self.width, 1, 512)
        check_int("image_size", self.image_size, 0, 1024)
        check_int("epochs", self.epochs, 1)
        check_int("batch_size", self.batch_size, 2)
        check_float("lr", self.lr, 0.0, lo_open=True)
        check_float("momentum", self.momentum, 0.0, 1.0, hi_open=True)
        check_float("weight_decay", self.weight_decay, 0.0)
        check_int("warmup_epochs", self.warmup_epochs, 0, self.epochs)
        check_float("temperature", self.temperature, 0.0, lo_open=True)
        check_int("proj_dim", self.proj_dim, 1)
        check_float("crop_scale_lo", self.crop_scale_lo, 0.0, 1.0, lo_open=True)
        check_float("prune_ratio", self.prune_ratio, 0.0, 1.0, hi_open=True)
        check_choice("mask_every", self.mask_every, ("epoch", "step"))
        check("dual_bn", self.dual_bn, isinstance(self.dual_bn, bool), "True or False")
        check_choice("precision", self.precision, PRECISIONS)


@dataclass(frozen=True)
class LTProtocol:
    """The benchmark: the data and its exponential LT profile (dataset, rhos, n_max, seeds, cifar10_source), the
    arms (methods), the sizes of the probe and test sets (probe_per_class, test_per_class) and the linear probe
    (probe_l2, probe_iters, group_scheme)."""

    ROLE: ClassVar[str] = "protocol"
    # --- data: the exponential LT profile n_c = floor(n_max * rho^(-c/(C-1))) (SDCLR; Table 2) ---
    dataset: str = "cifar10"          # cifar10 | cifar100 | imagenet-lt | digits
    rhos: tuple = (100,)              # imbalance ratios n_max / n_min (ImageNet-LT: fixed by its split, 256)
    n_max: int = 4500                 # images of the head class (0: the smallest class size of the train split)
    seeds: tuple = (0, 1, 2)          # each seed: its own LT draw, init, data order, augmentations
    methods: tuple = METHODS          # random (untrained backbone), simclr, sdclr, alg1
    probe_per_class: int = 500        # balanced probe-train set per class (0: the whole train split)
    test_per_class: int = 0           # test images per class (0: the whole balanced test split)
    # --- linear probe (frozen features, balanced train set) ---
    probe_l2: float = 1e-4
    probe_iters: int = 200
    group_scheme: str = "auto"        # many/medium/few: "thirds", "thresholds" (ImageNet-LT), "auto"
    cifar10_source: str = "auto"      # auto (original if on disk, else ../shared JPEG pack, else download)
                                      # | jpeg | original

    def validate(self, cfg) -> None:
        """The dataset and its profile, the seeds and arms, the sizes and the probe."""
        check_choice("dataset", self.dataset, DATASETS)
        check_grid("rhos", self.rhos, lambda n, v: check_float(n, v, 1.0))
        if self.dataset == "imagenet-lt":
            check("rhos", self.rhos, tuple(self.rhos) == (256,),
                  "(256,) for imagenet-lt (the split lists fix the profile)")
        check_int("n_max", self.n_max, 0)
        check_grid("seeds", self.seeds, lambda n, v: check_int(n, v, 0, 2**31 - 1))
        check("seeds", self.seeds, len(set(self.seeds)) == len(self.seeds), "distinct seeds")
        check_grid("methods", self.methods, lambda n, v: check_choice(n, v, METHODS))
        check_int("probe_per_class", self.probe_per_class, 0)
        check_int("test_per_class", self.test_per_class, 0)
        check_float("probe_l2", self.probe_l2, 0.0)
        check_int("probe_iters", self.probe_iters, 1)
        check_choice("group_scheme", self.group_scheme, ("auto", "thirds", "thresholds"))
        check_choice("cifar10_source", self.cifar10_source, ("auto", "jpeg", "original"))


@dataclass(frozen=True)
class LTJudging:
    """Notebook 06's premise, fixed before the run: baseline_band."""

    ROLE: ClassVar[str] = "judging"
    baseline_band: float = 10.0       # premise: our SimCLR accuracy within this many points of Table 2's SimCLR,
                                      # else "not comparable"

    def validate(self, cfg) -> None:
        """The band is positive."""
        check_float("baseline_band", self.baseline_band, 0.0, lo_open=True)


@dataclass(frozen=True)
class LTRun:
    """Where things are and how to run, none of which changes a result beyond float32 rounding: the paths (data_dir,
    imagenet_root, imagenet_lists, ckpt_dir, results_dir), download, device, threads, workers, the speed settings
    (compile, channels_last), ckpt_every and progress."""

    ROLE: ClassVar[str] = "run"
    # --- where things are, and how to run ---
    data_dir: str = ""                # "" -> $IMBALANCED_CL_DATA or ~/.cache/imbalanced_cl/data
    download: bool = True             # fetch the original CIFAR release when it is not on disk
    imagenet_root: str = ""           # ILSVRC-2012 root holding train/ and val/
    imagenet_lists: str = ""          # folder of ImageNet_LT_{train,test}.txt ("" -> imagenet_root)
    device: str = "auto"              # auto | cpu | cuda
    threads: int = 0                  # torch CPU threads per run (0: torch's default; with workers > 1: cores/workers)
    workers: int = 0                  # runs in parallel, one process each (0: one per CPU core on the CPU, 1 on CUDA)
    # --- speed (lt/speed.py): none of these changes the CPU arithmetic beyond float32 rounding ---
    compile: bool = True              # torch.compile the training backbone on CUDA (on the CPU it does not pay);
                                      # eager if it fails
    channels_last: bool = True        # NHWC memory layout for images, activations and conv weights
    ckpt_dir: str = ""                # checkpoints (resumed when present); "" -> none
    ckpt_every: int = 0               # also checkpoint every this many epochs (0: only at the end)
    results_dir: str = ""             # per-run metrics as JSON, reused when present (torchrun runs land here)
    progress: bool = True             # a progress bar over the runs and epochs

    def validate(self, cfg) -> None:
        """The paths are strings, the device is there, the counts are in range."""
        for name in ("data_dir", "imagenet_root", "imagenet_lists", "ckpt_dir", "results_dir"):
            check(name, getattr(self, name), _is_str(getattr(self, name)), "a string (a path, or '')")
        check("download", self.download, isinstance(self.download, bool), "True or False")
        check_choice("device", self.device, ("auto", "cpu", "cuda"))
        if self.device == "cuda":       # refused before any compute, in one line, as the simulation's config does
            import torch
            if not torch.cuda.is_available():
                raise ParameterError("parameter device='cuda' is invalid here: no CUDA device is available; "
                                     "allowed 'auto' or 'cpu'")
        check_int("threads", self.threads, 0, 1024)
        check_int("workers", self.workers, 0, 1024)
        check("compile", self.compile, isinstance(self.compile, bool), "True or False")
        check("channels_last", self.channels_last, isinstance(self.channels_last, bool), "True or False")
        check_int("ckpt_every", self.ckpt_every, 0)
        check("progress", self.progress, isinstance(self.progress, bool), "True or False")


class LTConfig(Composed):
    """Data (LT profile), backbone, SimCLR/SDCLR/Alg. 1 pre-training, linear probe, and bookkeeping."""

    PARTS = {"encoder": LTModel, "protocol": LTProtocol, "judging": LTJudging, "run_options": LTRun}

    def step_options(self, device) -> StepOptions:
        """The speed settings on `device` as a speed.StepOptions: compile only on CUDA (on a CPU its compile time,
        minutes per graph, exceeds what it saves at these widths; benchmarks/lt_step.py --compile measures it)."""
        cuda = str(device).startswith("cuda")
        return StepOptions(self.channels_last, self.compile and cuda, self.precision)

    @property
    def scheme(self) -> str:
        """The many/medium/few grouping actually used."""
        if self.group_scheme != "auto":
            return self.group_scheme
        return "thresholds" if self.dataset == "imagenet-lt" else "thirds"


__all__ = ["LTConfig", "METHODS", "ParameterError"]
