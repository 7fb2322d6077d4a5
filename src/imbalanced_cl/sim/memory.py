"""A size check before compute: the peak memory a simulation config needs, estimated from its sizes alone, against
the memory a machine has, so a run that cannot fit is refused in one line before anything is allocated."""
from __future__ import annotations

import os

import torch

# The float64 QR that draws the d1 x d1 Haar dictionary (sim/data.py haar_dictionary) holds about four d1 x d1
# matrices at once: the Gaussian draw, LAPACK's working copy, Q and R (then Q times the sign fix). At large d1 this
# one transient is the peak: 4 * 8 * d1^2 bytes.
QR_COPIES = 4

# Per replicate, the float32 weights W and their start W0, the gradient and its update (m x d1 each), and the
# dictionary M (d1 x d) in float32.
WEIGHT_COPIES = 4

# The pairs of one replicate in a training chunk: U_X, U_Y (n_pairs x L x d1 each), the raw noise they are built from
# (as many again), and the (n_pairs, L, m) activations and their gradients (auto_chunk's count, doubled).
CHUNK_BYTES = 64 * 2 ** 20      # the bound on one chunk's data on the CPU when cfg.chunk is 0 (auto_chunk)


def sizes(cfg) -> dict:
    """The largest d, d1 and m a config trains (its own, or those of its grid: ds with d1 = c1 d or d1_over_d d, and
    m = d^C_m; d_grid at sweep_d1), with n_pairs, L, R and chunk: what the estimate depends on."""
    ds = [cfg.d] + list(getattr(cfg, "ds", ()) or ()) + list(getattr(cfg, "d_grid", ()) or ())
    d = max(ds)
    d1 = [cfg.d1, getattr(cfg, "sweep_d1", 0) or 0]
    if getattr(cfg, "c1", None):
        d1.append(round(cfg.c1 * d))
    if getattr(cfg, "d1_over_d", None):
        d1.append(cfg.d1_over_d * d)
    m = [cfg.m] + ([round(d ** cfg.C_m)] if getattr(cfg, "C_m", None) else [])
    return {"d": d, "d1": max(d1), "m": max(m), "n_pairs": cfg.n_pairs, "L": cfg.L, "R": cfg.R,
            "chunk": getattr(cfg, "chunk", 0)}


def peak_bytes(d: int, d1: int, m: int, n_pairs: int, L: int, R: int, chunk: int = 0) -> dict:
    """Estimated peak bytes of training at these sizes, by part: the dictionary's QR, the weights of all R
    replicates, one chunk's pairs and activations; and their sum ("total"). An estimate, within a factor of about 2."""
    qr = QR_COPIES * 8 * d1 * d1
    weights = R * WEIGHT_COPIES * 4 * (m * d1 + d1 * d)
    per_rep = 4 * n_pairs * L * (2 * d1 + 4 * m)        # replicate_bytes's count on the CPU
    reps = min(R, chunk or max(1, CHUNK_BYTES // per_rep))
    data = 2 * reps * per_rep
    return {"dictionary": qr, "weights": weights, "data": data, "total": qr + weights + data}


def available_bytes() -> int:
    """The memory this machine can give a run now (MemAvailable), or its physical memory where that is unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def human(n: float) -> str:
    """Bytes as '3.2 GiB'."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def size_problem(cfg, available: int | None = None, where: str = "the machine") -> str:
    """'' when the config's estimated peak fits `available` bytes (default: available_bytes()); else one line with
    the sizes, the estimate and its largest part, and the memory there is."""
    if not all(hasattr(cfg, k) for k in ("d", "d1", "m", "n_pairs", "L", "R")):
        return ""      # not a simulation config (real images, census): no estimate
    s = sizes(cfg)
    est = peak_bytes(**s)
    have = available_bytes() if available is None else available
    if est["total"] <= have:
        return ""
    part = max(("dictionary", "weights", "data"), key=lambda k: est[k])
    what = {"dictionary": f"the {s['d1']} x {s['d1']} dictionary's float64 QR",
            "weights": f"the weights of {s['R']} replicates", "data": "one chunk of pairs and activations"}[part]
    return (f"sizes d={s['d']}, d1={s['d1']}, m={s['m']}, n_pairs={s['n_pairs']}, L={s['L']}, R={s['R']} need about "
            f"{human(est['total'])} at their peak ({human(est[part])} for {what}), more than the "
            f"{human(have)} {where} has; smaller sizes, or --force to run anyway")


def fits(cfg, available: int | None = None) -> bool:
    """Whether the config's estimated peak fits (size_problem is '')."""
    return not size_problem(cfg, available)


GPU_MEMORY_SHARE = 0.5       # of the GPU memory free at the start: the rest is left to held-out pairs and measurements


def replicate_bytes(cfg, on_gpu: bool = False) -> int:
    """Bytes one replicate's step holds at once: float32 U_X, U_Y and the (n, L, m) temporaries; on a GPU also the
    raw draws, the tokens before attention and the attention weights, which are made there."""
    per_token = 2 * cfg.d1 + 4 * cfg.m
    if on_gpu:
        per_token += 4 * cfg.d1 + 8 * cfg.d + 2 * cfg.L
    return 4 * cfg.n_pairs * cfg.L * per_token


def auto_chunk(cfg, device=None) -> int:
    """Replicates per chunk when cfg.chunk is 0: on the CPU as many as fit CHUNK_BYTES, on a GPU as many as fit
    GPU_MEMORY_SHARE of its free memory.

    On the CPU speed is flat in the chunk size once a chunk holds more than a few replicates
    (benchmarks/train_speed.py), and a small chunk bounds memory. A GPU is fed only by wide batches: one chunk of
    every replicate is what keeps it busy (benchmarks/paper_projection.py).
    """
    device = torch.device(device) if device is not None else torch.device("cpu")
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return max(1, int(free * GPU_MEMORY_SHARE) // replicate_bytes(cfg, on_gpu=True))
    return max(1, CHUNK_BYTES // replicate_bytes(cfg))
