"""How the real-image step runs fast: channels-last memory, torch.compile with a fallback to eager, bf16 autocast.

None of these changes what is computed on the CPU: channels-last only reorders memory and compile fuses the same
operations, so the optimised step gives the eager step's loss and gradients to float32 rounding
(tests/test_lt_speed.py checks it). On CUDA, bf16 autocast does change the arithmetic (convolutions and matrix
products in bfloat16 with float32 accumulation; BatchNorm, softmax and the loss stay float32); `precision="fp32"`
turns it off. torch.compile is tried once per process; where it is unavailable or fails (no C++ compiler, an
unsupported platform), the step warns once and runs eagerly.
"""
from __future__ import annotations

import contextlib
import warnings
from dataclasses import dataclass

import torch
from torch import nn

PRECISIONS = ("bf16", "fp32")
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


def to_format(x: torch.Tensor, opts: StepOptions) -> torch.Tensor:
    """x (B, C, H, W) in the memory layout of opts (a copy only when the layout differs)."""
    return x.contiguous(memory_format=opts.memory_format)


def prepare(model: nn.Module, opts: StepOptions) -> nn.Module:
    """Move a model's 4-D parameters and buffers (conv weights, masks) to the layout of opts, in place."""
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
