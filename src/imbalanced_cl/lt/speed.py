"""How the real-image step runs fast: channels-last memory, torch.compile with a fallback to eager, bf16 autocast.

Channels-last is used on a CPU only where it is safe (`safe`): on AVX2-only CPUs (AMD EPYC), torch 2.13.0's oneDNN
backward of a channels-last 1x1 convolution with stride 2 and fewer than 8 input channels corrupts the heap
(segfault, "corrupted double-linked list"; ResNet-18's shortcut at width < 8). A network that has such a
convolution runs contiguous and eagerly on the CPU (inductor would pick channels-last itself); `prepare` refuses
to put it in channels-last there.

None of these changes what is computed on the CPU: channels-last only reorders memory and compile fuses the same
operations, so the optimised step gives the eager step's loss and gradients to float32 rounding
(tests/test_lt_speed.py checks it). On CUDA, bf16 autocast does change the arithmetic (convolutions and matrix
products in bfloat16 with float32 accumulation; BatchNorm, softmax and the loss stay float32); `precision="fp32"`
turns it off. torch.compile is tried once per process; where it is unavailable or fails (no C++ compiler, an
unsupported platform), the step warns once and runs eagerly.
"""
from __future__ import annotations

import contextlib
import dataclasses
import warnings
from dataclasses import dataclass

import torch
from torch import nn

PRECISIONS = ("bf16", "fp32")
# oneDNN (torch 2.13.0+cpu) corrupts the heap in the channels-last backward of a strided 1x1 convolution with fewer
# input channels than this, on AVX2-only CPUs (seen with 2 to 7 channels on AMD EPYC; 8, 9, 12, 16, 32 never crashed
# in 60 steps at 4x4 to 32x32, batches 32 and 256; 3x3 and 7x7 strided convolutions with 1 to 4 channels did not
# crash). tests/test_native_kernels.py runs the case in a child process.
MIN_CHANNELS_LAST_CPU = 8
_COMPILE_BROKEN: list[str] = []          # the first compile failure of this process (then compile is not retried)


@dataclass(frozen=True)
class StepOptions:
    """Speed settings of the pre-training step and of feature extraction (none changes the CPU arithmetic)."""

    channels_last: bool = True       # NHWC activations and weights (oneDNN's fast layout on CPU, tensor cores on CUDA)
    compile: bool = True             # torch.compile the backbone of the training step (fallback: eager)
    precision: str = "bf16"          # CUDA autocast: bf16 | fp32; the CPU always runs float32

    def __post_init__(self):
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")

    @property
    def memory_format(self) -> torch.memory_format:
        """torch.channels_last or torch.contiguous_format."""
        return torch.channels_last if self.channels_last else torch.contiguous_format


EAGER = StepOptions(channels_last=False, compile=False, precision="fp32")   # the reference step


def unsafe_convs(model: nn.Module) -> list[str]:
    """The convolutions of `model` that must not run channels-last on a CPU (strided 1x1, < 8 input channels)."""
    return [f"{name or 'conv'} (1x1, stride {max(m.stride)}, {m.in_channels} input channels)"
            for name, m in model.named_modules()
            if isinstance(m, nn.Conv2d) and tuple(m.kernel_size) == (1, 1) and max(m.stride) > 1
            and m.in_channels < MIN_CHANNELS_LAST_CPU]


def safe(model: nn.Module, opts: StepOptions, device) -> StepOptions:
    """opts, with channels-last and compile off when `model` runs on a CPU and has a convolution oneDNN mishandles.

    The returned options are the ones to pass to `prepare`, `to_format` and the step: the input layout matters
    as much as the weights' (a channels-last input alone selects the channels-last kernel)."""
    if (opts.channels_last or opts.compile) and torch.device(device).type == "cpu" and unsafe_convs(model):
        # compile too: inductor lays convolutions out channels-last by itself (seen crashing the same way)
        return dataclasses.replace(opts, channels_last=False, compile=False)
    return opts


def to_format(x: torch.Tensor, opts: StepOptions) -> torch.Tensor:
    """x (B, C, H, W) in the memory layout of opts (a copy only when the layout differs)."""
    return x.contiguous(memory_format=opts.memory_format)


def prepare(model: nn.Module, opts: StepOptions) -> nn.Module:
    """Move a model's 4-D parameters and buffers (conv weights, masks) to the layout of opts, in place.

    Raises ValueError for channels-last on a CPU model that `safe` would keep contiguous (see the module's note)."""
    param = next(model.parameters(), None)
    if opts.channels_last and param is not None and param.device.type == "cpu" and unsafe_convs(model):
        raise ValueError(f"channels-last on the CPU would run oneDNN's broken kernel for {unsafe_convs(model)[0]}; "
                         "pass the options through speed.safe(model, opts, device) first")
    return model.to(memory_format=opts.memory_format)


def autocast(device: torch.device, opts: StepOptions):
    """bf16 autocast on CUDA when opts.precision is bf16; otherwise a no-op context."""
    if torch.device(device).type == "cuda" and opts.precision == "bf16":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def effective_precision(device: torch.device, opts: StepOptions) -> str:
    """The precision the step actually runs in: bf16 only on CUDA with precision bf16, else fp32."""
    return "bf16" if torch.device(device).type == "cuda" and opts.precision == "bf16" else "fp32"


def compile_status() -> str:
    """'' when torch.compile has not failed in this process, else the reason it was given up."""
    return _COMPILE_BROKEN[0] if _COMPILE_BROKEN else ""


def compiled(module: nn.Module, opts: StepOptions) -> nn.Module | None:
    """torch.compile(module) when opts.compile and compile has not failed before here; None means: run eagerly."""
    if not opts.compile or _COMPILE_BROKEN:
        return None
    if not hasattr(torch, "compile"):
        give_up("torch.compile is not available in this torch build")
        return None
    try:
        return torch.compile(module)
    except Exception as e:                              # wrapping is lazy, so this is rare (unsupported Python)
        give_up(f"{type(e).__name__}: {e}")
        return None


def give_up(reason: str) -> None:
    """Record that compile failed (once per process) and warn that the step runs eagerly from now on."""
    if not _COMPILE_BROKEN:
        _COMPILE_BROKEN.append(reason)
        warnings.warn(f"torch.compile failed ({reason[:300]}); running eagerly", RuntimeWarning, stacklevel=3)
