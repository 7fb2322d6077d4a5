"""Philox4x32-10 fused into one GPU kernel (Triton): the words of philox.philox4x32, turned into uniforms or normals
in registers and written once, one launch per plan entry for a whole batch of replicates (issue 48, item 2).

Written as torch operations (philox.py), a batched draw runs about 2,000 kernels a step at notebook 04's paper size and
moves some 230 times the bytes it writes; fused, it moves only its output. The counter and key are those of
data.batched_draws, and the rounds are Triton's own (triton.language.random.philox_impl: Random123's constants), so a
replicate's numbers are still a function of (seed, replicate, purpose, step, plan entry, position) alone: the words and
uniforms are exactly those of the torch-op path; normals agree within float32 rounding (the GPU's log, cos and sin).

Triton comes with torch's CUDA builds; without it (the CPU build) `available()` is False and nothing here runs. Tests
run the kernel on the CPU under Triton's interpreter (TRITON_INTERPRET=1), where Triton is installed.
"""
from __future__ import annotations

import torch

try:                                  # the CPU build of torch has no Triton: the torch-op path is used there
    import triton
    import triton.language as tl
    from triton.language.random import philox_impl
except ImportError:                   # pragma: no cover - depends on the installed torch build
    triton = None

BLOCK = 1024                          # Philox blocks (4 numbers each) per program
DEVICES = ("cuda",)                   # device types the fused kernel runs on (tests add "cpu" under the interpreter)


def available(device: torch.device) -> bool:
    """Whether the fused kernel runs on `device`: Triton is importable and the device type is in DEVICES."""
    return triton is not None and torch.device(device).type in DEVICES


if triton is not None:
    @triton.jit
    def _draw_kernel(out_ptr, reps_ptr, n, c1, c2, k0, k1, NORMAL: tl.constexpr, BLOCK: tl.constexpr):
        """Numbers 4b..4b+3 of row `program_id(1)` for the blocks b of this program: Philox at counter
        (b, c1, c2, replicate) under key (k0, k1), then uniforms (top 24 bits times 2^-24) or Box-Muller normals."""
        row = tl.program_id(1)
        b = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        wide = tl.zeros([BLOCK], dtype=tl.int64)                 # int64 first: an argument may come as i32 or i64
        rep = tl.load(reps_ptr + row)
        w0, w1, w2, w3 = philox_impl(b.to(tl.uint32), (wide + c1).to(tl.uint32), (wide + c2).to(tl.uint32),
                                     (wide + rep).to(tl.uint32), (wide + k0).to(tl.uint32), (wide + k1).to(tl.uint32),
                                     10)
        u0 = (w0 >> 8).to(tl.float32) * 5.9604644775390625e-08   # 2^-24: exact in float32 (philox.uniform)
        u1 = (w1 >> 8).to(tl.float32) * 5.9604644775390625e-08
        u2 = (w2 >> 8).to(tl.float32) * 5.9604644775390625e-08
        u3 = (w3 >> 8).to(tl.float32) * 5.9604644775390625e-08
        if NORMAL:                    # philox.normal: z = sqrt(-2 ln(1 - u_a)) (cos 2 pi u_b, sin 2 pi u_b)
            ra = tl.sqrt(-2.0 * tl.log(1.0 - u0))
            rb = tl.sqrt(-2.0 * tl.log(1.0 - u2))
            aa = 6.283185307179586 * u1
            ab = 6.283185307179586 * u3
            u0, u1, u2, u3 = ra * tl.cos(aa), ra * tl.sin(aa), rb * tl.cos(ab), rb * tl.sin(ab)
        at = 4 * b
        base = out_ptr + row.to(tl.int64) * n
        tl.store(base + at, u0, mask=at < n)
        tl.store(base + at + 1, u1, mask=at + 1 < n)
        tl.store(base + at + 2, u2, mask=at + 2 < n)
        tl.store(base + at + 3, u3, mask=at + 3 < n)


def draw(kind: str, n: int, c1: int, c2: int, reps: torch.Tensor, k0: int, k1: int) -> torch.Tensor:
    """(len(reps), n) float32 numbers of one plan entry, drawn in one launch: uniforms ("u") or normals ("n").

    reps is the int64 column of replicate indices on the device (data._replicate_column); c1, c2, k0 and k1 are the
    counter's words 1 and 2 and the key, each below 2^32 (data.batched_draws checks them).
    """
    out = torch.empty((reps.shape[0], n), device=reps.device)
    blocks = -(-n // 4)
    if n and reps.shape[0]:
        grid = (triton.cdiv(blocks, BLOCK), reps.shape[0])
        _draw_kernel[grid](out, reps, n, c1, c2, k0, k1, NORMAL=kind == "n", BLOCK=BLOCK)
    return out
