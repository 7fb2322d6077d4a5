"""Benchmark: the SimCLR step on CIFAR-sized images, eager against optimised, and the paper profile's GPU cost.

    .venv/bin/python benchmarks/lt_step.py [--width 8] [--batch 256] [--steps 6] [--threads 2] [--method simclr]

One run times, on the same uint8 batch and alternating so that a load change on a shared machine hits all alike:
- eager: the step as it was (contiguous tensors, float32), one process on --threads threads;
- optimised step: lt/speed.py's step (channels-last; torch.compile with --compile, which notebook 06 uses on CUDA
  only; bf16 autocast on CUDA), the same process and threads;
- optimised, parallel (CPU): what notebook 06 does with its independent runs: one process per core, one thread
  each, every process stepping at once; its images/s count all processes. A step is what notebook 06's pre-training
does: two kornia views, forward of both branches, NT-Xent, backward, SGD. The compile time of the optimised step
is reported apart (it is paid once per process and graph). Random uint8 images stand in for CIFAR (the cost does
not depend on the pixels). Printed: the three images/s, `speed-up: N.NNx` (parallel optimised over eager,
medians over the timed steps of the whole step), the single-process speed-ups, CPU-seconds per step, the
augmentation's share, and a projection of the `paper` profile's GPU-hours for Table 2 from a FLOP count and an
assumed H100 utilisation (an estimate, not a measurement; on a CUDA machine the measured throughput is used as
well).
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import time

import torch

# NVIDIA H100 SXM, dense (no sparsity) peak rates in FLOP/s (the H100 datasheet).
H100_PEAK = {"bf16": 989e12, "tf32": 494e12}
MFU_BAND = (0.05, 0.10, 0.20)   # assumed share of the bf16 peak a ResNet-18 step on 32 px images reaches: low/mid/high


def step_flops(width: int, size: int, batch: int, in_channels: int = 3) -> float:
    """FLOPs (multiply-adds x 2) of one training step of 2*batch views, forward and backward, counted by
    torch.utils.flop_counter on the real network (convolutions and matrix products; BatchNorm etc. not counted)."""
    from torch.utils.flop_counter import FlopCounterMode

    from imbalanced_cl.lt.simclr import SimCLRNet, nt_xent, stem_for
    net = SimCLRNet(width, in_channels, 128, stem_for(size))
    x = torch.randn(2, in_channels, size, size)
    with FlopCounterMode(display=False) as fc:
        z1, z2 = net(x, x)
        nt_xent(z1, z2, 0.2).backward()
    return fc.get_total_flops() / 2 * batch      # counted for 1 image per view; linear in the batch


def table2_runs(profile: str = "paper") -> list[dict]:
    """The pre-training runs of a profile's notebook 06 (CIFAR-10-LT), plus CIFAR-100-LT at the same settings."""
    from imbalanced_cl.lt.config import LTConfig
    from imbalanced_cl.lt.datasets import long_tailed_counts
    from imbalanced_cl.book.build.profiles import params
    cfg = LTConfig.from_namespace(params(profile, "06_lt_benchmarks"))
    runs = []
    for ds, n_max, classes in (("cifar10", cfg.n_max, 10), ("cifar100", 450, 100)):
        for rho in cfg.rhos:
            n = sum(long_tailed_counts(n_max, rho, classes))
            for _ in cfg.seeds:
                for m in cfg.methods:
                    if m != "random":
                        runs.append({"dataset": ds, "rho": rho, "steps": cfg.epochs * (n // cfg.batch_size),
                                     "width": cfg.width, "batch": cfg.batch_size})
    return runs


def project(measured_images_per_s: float | None = None) -> list[str]:
    """Lines projecting the paper profile's Table-2 GPU-hours on one H100."""
    runs = table2_runs()
    w, b = runs[0]["width"], runs[0]["batch"]
    f = step_flops(w, 32, b)
    total = {ds: sum(r["steps"] for r in runs if r["dataset"] == ds) * f for ds in ("cifar10", "cifar100")}
    n10 = sum(r["dataset"] == "cifar10" for r in runs)
    lo, mid, hi = (total["cifar10"] / (H100_PEAK["bf16"] * u) / 3600 for u in reversed(MFU_BAND))
    lines = [f"paper profile, Table 2 CIFAR-10-LT ({n10} pre-training runs: width {w}, batch {b}, "
             f"{f / b / 2 / 1e9:.2f} GFLOP per view forward+backward, {total['cifar10'] / 1e18:.1f} EFLOP in all): "
             f"ESTIMATE {mid:.0f} H100 GPU-hours (range {lo:.0f}-{hi:.0f}) at {MFU_BAND[1]:.0%} of the bf16 peak "
             f"(range {MFU_BAND[2]:.0%}-{MFU_BAND[0]:.0%}); CIFAR-100-LT at the same settings adds "
             f"{total['cifar100'] / total['cifar10'] * mid:.0f}; a FLOP estimate, not a measurement"]
    if measured_images_per_s:
        hours = total["cifar10"] / (f / b) / measured_images_per_s / 3600
        lines.append(f"paper profile, Table 2 CIFAR-10-LT at the throughput measured here: {hours:.1f} GPU-hours")
    return lines


def _worker(conn, width, batch, size, method, opts) -> None:
    """A child process on one thread: build the optimised step, then run one step per message, reply its seconds."""
    torch.set_num_threads(1)
    step = _make_step(width, batch, size, method, opts, torch.device("cpu"))
    step()                                         # warm-up
    conn.send("ready")
    while conn.recv():
        conn.send(step())


def _make_step(width, batch, size, method, opts, dev):
    """A closure running one full pre-training step (views, forward, loss, backward, SGD); returns its timings."""
    from imbalanced_cl.lt import sdclr, speed
    from imbalanced_cl.lt.augment import SimCLRAugment
    from imbalanced_cl.lt.simclr import SimCLRNet, forward_backward
    torch.manual_seed(0)
    aug = SimCLRAugment(size, 3, (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)).to(dev)
    x = torch.randint(0, 256, (batch, 3, size, size), dtype=torch.uint8, device=dev)
    net = SimCLRNet(width, 3, 128, dual_bn=method == "sdclr").to(dev)
    opts = speed.safe(net, opts, dev)              # width < 8 runs contiguous on a CPU (lt/speed.py)
    net = speed.prepare(net, opts)
    if method != "simclr":
        sdclr.global_magnitude_masks(net.backbone, 0.9)
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    fast = speed.compiled(net.backbone, opts)
    modes = sdclr.BRANCH_MODES[method]
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)

    def step():
        sync()
        c0, t0 = time.process_time(), time.perf_counter()
        v1, v2 = speed.to_format(aug(x), opts), speed.to_format(aug(x), opts)
        sync()
        t1 = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        forward_backward(net, v1, v2, modes, 0.2, dev, opts, fast)
        opt.step()
        sync()
        return t1 - t0, time.perf_counter() - t0, time.process_time() - c0
    step.compiled = fast is not None
    return step


def _parse(argv) -> argparse.Namespace:
    """The command line; --quick means 3 timed steps, and CUDA always times the compiled step."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--width", type=int, default=8, help="ResNet-18 first-stage channels (64: the real one)")
    ap.add_argument("--batch", type=int, default=256, help="images per step (two views each)")
    ap.add_argument("--steps", type=int, default=6, help="timed steps of each kind after the warm-up")
    ap.add_argument("--size", type=int, default=32, help="image side")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (0: the torch default)")
    ap.add_argument("--method", default="simclr", choices=("simclr", "sdclr", "alg1"))
    ap.add_argument("--device", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--compile", action="store_true", help="optimised step with torch.compile (as on CUDA)")
    ap.add_argument("--processes", type=int, default=0, help="parallel single-thread processes (0: one per core)")
    ap.add_argument("--quick", action="store_true", help="3 timed steps (what `make bench` runs)")
    ap.add_argument("--precision", default="bf16", choices=("bf16", "fp32"), help="optimised step on CUDA")
    a = ap.parse_args(argv)
    if a.quick:
        a.steps = 3
    if a.device == "cuda":
        a.compile = True
    return a


def _start_pool(a: argparse.Namespace, dev: torch.device) -> list:
    """On the CPU, one spawned single-thread process per core (or --processes), each with the optimised step:
    [(process, pipe)]; none on CUDA or with one process."""
    from imbalanced_cl.lt import speed
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    procs = a.processes or cores
    pool = []
    if dev.type == "cpu" and procs > 1:
        ctx = multiprocessing.get_context("spawn")
        for _ in range(procs):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker, args=(there, a.width, a.batch, a.size, a.method,
                                                     speed.StepOptions(channels_last=True, compile=a.compile)))
            proc.start()
            pool.append((proc, here))
    return pool


def _parallel_round(pool: list) -> tuple[float, float, float]:
    """One step in every worker at once: (mean views seconds, wall seconds of the round, mean CPU seconds)."""
    t0 = time.perf_counter()
    for _, conn in pool:
        conn.send(True)
    inner = [conn.recv() for _, conn in pool]
    return statistics.mean(i[0] for i in inner), time.perf_counter() - t0, statistics.mean(i[2] for i in inner)


def _warm_up(steps: dict, pool: list) -> dict:
    """Two untimed steps of each kind (kornia's first call, oneDNN primitives, compile of forward and backward), then
    wait for the workers' "ready": {kind: warm-up seconds}."""
    warm = {}
    for k, step in steps.items():
        t0 = time.perf_counter()
        for _ in range(2):
            step()
        warm[k] = time.perf_counter() - t0
    for _, conn in pool:
        conn.recv()                              # "ready": the workers are warm
    return warm


def _timed(steps: dict, pool: list, n: int) -> dict:
    """n rounds of one step of each kind (and one parallel round), alternating; the workers stop after the last.
    {kind: [(views seconds, step seconds, CPU seconds)]}."""
    times = {k: [] for k in (*steps, *(["parallel"] if pool else []))}
    for _ in range(n):
        for k, step in steps.items():
            times[k].append(step())
        if pool:
            times["parallel"].append(_parallel_round(pool))
    for proc, conn in pool:
        conn.send(False)
        proc.join()
    return times


def _medians(times: dict, warm: dict, batch: int, workers: int) -> dict:
    """Per kind, the medians over the timed steps (images/s, step, network, views and CPU seconds); one printed line
    each."""
    out = {}
    for k in times:
        whole = statistics.median(t for _, t, _ in times[k])
        images = batch * (workers if k == "parallel" else 1)
        out[k] = {"images_per_s": images / whole, "step_s": whole,
                  "net_s": statistics.median(t - s for s, t, _ in times[k]),
                  "aug_s": statistics.median(s for s, _, _ in times[k]),
                  "cpu_s": statistics.median(c for _, _, c in times[k])}
        what = (f"{workers} processes x 1 thread stepping at once, {out[k]['cpu_s']:.3f} CPU-s per step in each"
                if k == "parallel" else f"views {out[k]['aug_s']:.3f} s + network {out[k]['net_s']:.3f} s; "
                f"{out[k]['cpu_s']:.3f} CPU-s; warm-up {warm[k]:.1f} s")
        print(f"{k:>9}: {out[k]['images_per_s']:7.0f} images/s  (step {whole:.3f} s: {what})")
    return out


def _speedups(out: dict, how: str, workers: int) -> None:
    """Add the speed-ups to `out` (the best optimised kind over eager, and the single-process ratios) and print them."""
    best = "parallel" if workers else "optimised"
    out["speedup"] = out[best]["images_per_s"] / out["eager"]["images_per_s"]
    out["speedup_step"] = out["eager"]["step_s"] / out["optimised"]["step_s"]
    out["speedup_net"] = out["eager"]["net_s"] / out["optimised"]["net_s"]
    out["speedup_cpu"] = out["eager"]["cpu_s"] / out["optimised"]["cpu_s"]
    print(f"speed-up: {out['speedup']:.2f}x  (images/s, {how}"
          f"{f', {workers} runs in parallel at 1 thread' if workers else ''} vs one eager run on "
          f"{torch.get_num_threads()} threads; target >= 1.7x at width 8, batch 256, 2 threads: "
          f"{'met' if out['speedup'] >= 1.7 else 'NOT met'})")
    print(f"one process: whole step {out['speedup_step']:.2f}x, network alone {out['speedup_net']:.2f}x, CPU-seconds "
          f"per step {out['speedup_cpu']:.2f}x; "
          f"the views take {out['optimised']['aug_s'] / out['optimised']['step_s']:.0%} "
          f"of the optimised step")


def main(argv=None) -> dict:
    """Time eager and optimised steps alternately after their warm-ups; print and return the measurements."""
    a = _parse(argv)
    if a.threads:
        torch.set_num_threads(a.threads)
    from imbalanced_cl.lt import speed

    dev = torch.device(a.device)
    kinds = {"eager": speed.EAGER,
             "optimised": speed.StepOptions(channels_last=True, compile=a.compile, precision=a.precision)}
    steps = {k: _make_step(a.width, a.batch, a.size, a.method, o, dev) for k, o in kinds.items()}
    pool = _start_pool(a, dev)
    print(f"config: ResNet-18 width {a.width}, batch {a.batch} images = {2 * a.batch} views of {a.size}x{a.size}, "
          f"method {a.method}, torch {torch.__version__}, device {a.device}, {torch.get_num_threads()} thread(s), "
          f"{len(pool)} parallel process(es) of 1 thread, {a.steps} timed steps of each kind, alternating, "
          "after warm-up")
    warm = _warm_up(steps, pool)
    compiled = steps["optimised"].compiled and not speed.compile_status()
    out = {"warmup_s": warm, "compiled": compiled, **_medians(_timed(steps, pool, a.steps), warm, a.batch, len(pool))}
    how = "channels-last" + (" + torch.compile" if compiled else "") + \
        (f" + {speed.effective_precision(dev, kinds['optimised'])} autocast" if dev.type == "cuda" else "")
    _speedups(out, how, len(pool))
    measured = out["optimised"]["images_per_s"] if dev.type == "cuda" and a.width == 64 else None
    for line in project(measured):
        print(line)
    return out


if __name__ == "__main__":
    main()
